package plans

import "slices"

// Reference is one template read of a root: the step (or finish) whose
// template reads it, the dotted path it reads and where it is written.
type Reference struct {
	From string // the reading step's path, or "output" / "solver" for the finish
	Root string // input, a step id, item, index or accumulator
	Path string // the whole dotted path, e.g. E0.values.0.id
	Pos  Pos
}

// References lists every root-anchored template read in the plan, in file
// order: what the workbench shows as "read downstream by" and what the
// debugger lists as the readers of a value it is about to replace.
func References(p *Plan) []Reference {
	var out []Reference
	collect := func(from string, v *Value) {
		v.walkTemplates(func(tv *Value) {
			for ref := range tv.Template().Refs {
				if ref.ItemRead || ref.LoopVar || ref.Root() == "" {
					continue
				}
				out = append(out, Reference{From: from, Root: ref.Root(), Path: ref.String(), Pos: tv.PosAt(ref.Offset)})
			}
		})
	}
	WalkSteps(p, func(s *Step) {
		for _, v := range stepTemplates(s) {
			collect(s.Path, v)
		}
	})
	collect("output", p.Output)
	if so := p.Solver; so != nil {
		collect("solver", so.QueryToAnswer)
		collect("solver", so.SystemPrompt)
		collect("solver", so.Data)
	}
	return out
}

// Readers indexes References by the root they read: Readers(p)["E1"] is
// every template that reads step E1's result, in file order.
func Readers(p *Plan) map[string][]Reference {
	idx := map[string][]Reference{}
	for _, r := range References(p) {
		idx[r.Root] = append(idx[r.Root], r)
	}
	return idx
}

// StepReaders indexes, by a step's static path, every template that reads
// the step's result: those that read it by its id and, when the step is
// the last of a body (its result is then the item's or the branch's, and
// so part of the control step's result), those that read the control step
// around it, and so on outwards. A reference whose Root is not the step's
// own id reads it through that step's result: assess.results carries the
// result of every item's last step.
func StepReaders(p *Plan) map[string][]Reference {
	byRoot := Readers(p)
	out := map[string][]Reference{}
	var walk func(steps []*Step, outer []Reference)
	walk = func(steps []*Step, outer []Reference) {
		for i, s := range steps {
			var refs []Reference
			if s.ID.Value != "" {
				refs = slices.Clone(byRoot[s.ID.Value])
			}
			if i == len(steps)-1 {
				refs = append(refs, outer...)
			}
			if len(refs) > 0 {
				out[s.Path] = refs
			}
			for _, b := range Bodies(s) {
				walk(b.Steps, refs)
			}
		}
	}
	walk(p.Steps, nil)
	return out
}

// stepTemplates lists the values of a step that hold its own templates
// (not those of the steps in its bodies).
func stepTemplates(s *Step) []*Value {
	switch c := s.Control.(type) {
	case nil:
		return []*Value{s.Input}
	case *ExitInput:
		return append(conditionValues(c.Condition), c.Message, c.Output)
	case *DecideInput:
		return conditionValues(c.Condition)
	case *FilterInput:
		return append(conditionValues(c.Condition), c.Over)
	case *MapInput:
		return []*Value{c.Over}
	case *ReduceInput:
		return []*Value{c.Over, c.Initial}
	case *AgentInput:
		return []*Value{c.Prompt, c.SystemPrompt}
	case *AskInput:
		return []*Value{c.Prompt, c.Default}
	}
	return nil
}

func conditionValues(c Condition) []*Value {
	out := []*Value{c.Infer, c.Model}
	if g := c.Gate; g != nil {
		out = append(out, g.Value, g.To)
	}
	return out
}
