package plans

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	paths "github.com/stepwise-dev/stepwise/engine/path"

	"github.com/stepwise-dev/stepwise/plans/strict"
	"github.com/stepwise-dev/stepwise/plans/suggest"
	"github.com/stepwise-dev/stepwise/plans/template"
)

// WalkSteps calls fn for every step of the plan in file order, body steps
// right after the control step that holds them.
func WalkSteps(p *Plan, fn func(*Step)) {
	var walk func([]*Step)
	walk = func(steps []*Step) {
		for _, s := range steps {
			fn(s)
			for _, b := range Bodies(s) {
				walk(b.Steps)
			}
		}
	}
	walk(p.Steps)
}

// Bodies returns the bodies of a control step (then and else, or do), in
// order; none for other steps.
func Bodies(s *Step) []*Body {
	var out []*Body
	switch c := s.Control.(type) {
	case *DecideInput:
		out = append(out, c.Then, c.Else)
	case *MapInput:
		out = append(out, c.Do)
	case *ReduceInput:
		out = append(out, c.Do)
	}
	return slices.DeleteFunc(out, func(b *Body) bool { return b == nil })
}

// placed is a step with where it sits.
type placed struct {
	step  *Step
	owner *Step // the control step whose body holds it; nil at top level
	field string
}

// check runs the static checks that need the whole plan: step ids, template
// references and their scoping, and the strict-output summary. steps is
// how many steps the plan has, bodies' included.
func check(p *Plan, r *Report, steps int) {
	c := &checker{p: p, r: r, byID: make(map[string]placed, steps), inputs: inputsOf(p)}
	c.collectIDs(p.Steps, nil, "")
	c.references()
	c.strictSummary()
}

type checker struct {
	p       *Plan
	r       *Report
	bodyIDs idSets
	byID    map[string]placed // first step with each id
	// inputs is what input_schema declares, which {{input.<name>}} is
	// checked against.
	inputs declaredInputs
}

func (c *checker) collectIDs(steps []*Step, owner *Step, field string) {
	for _, s := range steps {
		if id := s.ID; id.Set {
			switch {
			case slices.Contains(ReservedRoots, id.Value):
				c.r.problem(CodeReservedID, id.Pos, s.Path, "id '%s' shadows the template root '%s'; reserved roots are %s", id.Value, id.Value, strings.Join(ReservedRoots, ", "))
			case !validStepID(id.Value):
				c.r.problem(CodeInvalidID, id.Pos, s.Path, "id '%s' is not an identifier: use letters, digits and '_', not starting with a digit", id.Value)
			}
			if prev, dup := c.byID[id.Value]; dup {
				c.r.problem(CodeDuplicateID, id.Pos, s.Path, "id '%s' is already used by the step at line %d; ids are unique across the plan, bodies included", id.Value, prev.step.ID.Pos.Line)
			} else {
				c.byID[id.Value] = placed{step: s, owner: owner, field: field}
			}
		}
		switch ctl := s.Control.(type) {
		case *DecideInput:
			if ctl.Then != nil && !ctl.Then.Single {
				c.collectIDs(ctl.Then.Steps, s, "then")
			}
			if ctl.Else != nil && !ctl.Else.Single {
				c.collectIDs(ctl.Else.Steps, s, "else")
			}
		case *MapInput:
			if ctl.Do != nil && !ctl.Do.Single {
				c.collectIDs(ctl.Do.Steps, s, "do")
			}
		case *ReduceInput:
			if ctl.Do != nil && !ctl.Do.Single {
				c.collectIDs(ctl.Do.Steps, s, "do")
			}
		}
	}
}

// scope is what templates at one place may read.
type scope struct {
	self    *Step           // the step whose templates these are; nil for the finish
	visible map[string]bool // top-level step ids that have run
	local   map[string]bool // earlier step ids of the same body; nil at top level
	pseudo  map[string]bool // item, index, accumulator where they exist
	overOf  string          // set while checking over/initial: the control step's name
}

func (c *checker) references() {
	// Sized for every top-level id, so that it is not grown and copied
	// step by step as they are added.
	visible := make(map[string]bool, len(c.p.Steps))
	for _, s := range c.p.Steps {
		c.stepRefs(s, visible, nil, nil)
		if s.ID.Set {
			visible[s.ID.Value] = true
		}
	}
	final := &scope{visible: visible}
	if o := c.p.Output; o != nil {
		c.valueRefs(o, "", final)
	}
	if so := c.p.Solver; so != nil {
		c.valueRefs(so.QueryToAnswer, "", final)
		c.valueRefs(so.SystemPrompt, "", final)
		c.valueRefs(so.Data, "", final)
	}
}

// stepRefs checks a step's templates. visible holds the top-level ids that
// have run before it, local the earlier ids of its body; pseudo the
// pseudo-roots of the body it is in.
func (c *checker) stepRefs(s *Step, visible, local, pseudo map[string]bool) {
	here := &scope{self: s, visible: visible, local: local, pseudo: pseudo}
	withItem := func() *scope {
		return &scope{self: s, visible: visible, local: local, pseudo: itemRoots(pseudo, false)}
	}
	over := &scope{self: s, visible: visible, local: local, pseudo: pseudo, overOf: s.ToolName.Value}
	switch ctl := s.Control.(type) {
	case nil:
		c.valueRefs(s.Input, s.Path, here)
	case *ExitInput:
		c.conditionRefs(ctl.Condition, s.Path, here, here)
		c.valueRefs(ctl.Message, s.Path, here)
		c.valueRefs(ctl.Output, s.Path, here)
	case *DecideInput:
		c.conditionRefs(ctl.Condition, s.Path, here, here)
		c.bodyRefs(ctl.Then, visible, pseudo)
		c.bodyRefs(ctl.Else, visible, pseudo)
	case *FilterInput:
		c.valueRefs(ctl.Over, s.Path, over)
		c.conditionRefs(ctl.Condition, s.Path, withItem(), here)
	case *MapInput:
		c.valueRefs(ctl.Over, s.Path, over)
		c.bodyRefs(ctl.Do, visible, itemRoots(pseudo, false))
	case *ReduceInput:
		c.valueRefs(ctl.Over, s.Path, over)
		c.valueRefs(ctl.Initial, s.Path, over)
		c.bodyRefs(ctl.Do, visible, itemRoots(pseudo, true))
	case *AgentInput:
		c.valueRefs(ctl.Prompt, s.Path, here)
		c.valueRefs(ctl.SystemPrompt, s.Path, here)
	case *AskInput:
		c.valueRefs(ctl.Prompt, s.Path, here)
		c.valueRefs(ctl.Default, s.Path, here)
	}
}

// The pseudo-roots there are: those of an item of a map or filter, and
// those of an item of a reduce. Scopes share them, and never change them.
var (
	itemPseudoRoots   = map[string]bool{"item": true, "index": true}
	reducePseudoRoots = map[string]bool{"item": true, "index": true, "accumulator": true}
)

// itemRoots is what item's scope holds inside a place whose pseudo-roots
// are outer (none, or one of the sets above, which hold nothing else):
// item and index, and accumulator in a reduce's body or in a place that has
// it already.
func itemRoots(outer map[string]bool, reduce bool) map[string]bool {
	if reduce || outer["accumulator"] {
		return reducePseudoRoots
	}
	return itemPseudoRoots
}

func (c *checker) conditionRefs(cond Condition, path string, gate, model *scope) {
	if g := cond.Gate; g != nil {
		c.valueRefs(g.Value, path, gate)
		c.valueRefs(g.To, path, gate)
	}
	c.valueRefs(cond.Infer, path, gate)
	c.valueRefs(cond.Model, path, model)
}

// bodyRefs checks a body: its steps see what ran before the control step,
// the pseudo-roots of the body, and the earlier steps of the same body. The
// body's own ids go in a map of their own rather than a copy of visible:
// copying every top-level id for every body made the check quadratic.
func (c *checker) bodyRefs(b *Body, visible, pseudo map[string]bool) {
	if b == nil {
		return
	}
	local := c.bodyIDs.take()
	defer c.bodyIDs.give()
	for _, s := range b.Steps {
		c.stepRefs(s, visible, local, pseudo)
		if s.ID.Set {
			local[s.ID.Value] = true
		}
	}
}

// idSets are the sets of a body's ids for bodyRefs, one for each body
// being checked, kept from one body to the next: a plan has a body for
// every few steps, and a set apiece was a tenth of what checking one
// allocated. Bodies nest only in a plan with problems, but then they do.
type idSets struct {
	sets  []map[string]bool
	depth int
}

// maxKeptIDs is the most ids a set may hold and still be cleared for the
// next body rather than dropped: clearing costs what the set grew to, and
// one large body must not make every later one pay for it.
const maxKeptIDs = 256

// take returns an empty set for a body.
func (s *idSets) take() map[string]bool {
	if s.depth == len(s.sets) {
		s.sets = append(s.sets, map[string]bool{})
	}
	set := s.sets[s.depth]
	if len(set) > maxKeptIDs {
		set = map[string]bool{}
		s.sets[s.depth] = set
	}
	clear(set)
	s.depth++
	return set
}

// give hands back the set take returned last.
func (s *idSets) give() { s.depth-- }

func (c *checker) valueRefs(v *Value, path string, sc *scope) {
	v.walkTemplates(func(tv *Value) {
		for ref := range tv.Template().Refs {
			c.ref(ref, tv, path, sc)
		}
	})
}

// ref checks one template reference of the template string tv against the
// scope it renders in. The reference is placed only when it is reported:
// placing a tag inside its string is most of what a reference costs.
func (c *checker) ref(ref template.Ref, tv *Value, path string, sc *scope) {
	root := ref.Root()
	pos := func() Pos { return tv.PosAt(ref.Offset) }
	switch {
	case ref.LoopVar:
		if !ref.InSection {
			c.r.problem(CodeLoopVariableScope, pos(), path, "'%s' is defined only inside a section ({{#list}}…{{/list}})", ref.String())
		}
		return
	case ref.ItemRead:
		return
	case root == "":
		c.r.problem(CodeLoopVariableScope, pos(), path, "{{.}} is the current item of a section and means nothing outside one")
		return
	case root == "input":
		c.inputRef(path, ref.String(), pos)
		return
	case root == "item" || root == "index" || root == "accumulator":
		if sc.pseudo[root] && sc.overOf == "" {
			return
		}
		if sc.overOf != "" && !sc.pseudo[root] {
			c.r.problem(CodePseudoRootScope, pos(), path, "'%s' cannot be read here: this %s's %s exists only per item, after 'over' has rendered", ref.String(), sc.overOf, root)
			return
		}
		if sc.pseudo[root] {
			return
		}
		where := "a map, reduce or filter body"
		if root == "accumulator" {
			where = "a reduce body"
		}
		c.r.problem(CodePseudoRootScope, pos(), path, "'%s' exists only inside %s", root, where)
		return
	case sc.visible[root] || sc.local[root]:
		return
	}
	found, known := c.byID[root]
	target := &found
	switch {
	case !known && ref.InSection:
		c.r.problem(CodeUnknownReference, pos(), path, "references %s, which is not `input` or an earlier step%s; in a section, dotted paths start at a root: read the item's fields with bare keys or a nested section", root, c.availableHint(root, sc))
	case !known:
		c.r.problem(CodeUnknownReference, pos(), path, "references %s, which is not `input` or an earlier step%s", root, c.availableHint(root, sc))
	case sc.self != nil && target.step == sc.self:
		c.r.problem(CodeForwardReference, pos(), path, "references its own result (%s); a step reads only `input` and earlier steps", root)
	case sc.self != nil && target.owner == sc.self:
		// A gate, over or initial reading a step of the same control step's
		// body: "read the owner's result instead" would be a self reference.
		c.r.problem(CodeBodyScope, pos(), path, "references %s, which is inside %s, this very step, and has not run when this renders; a later step can read %s", root, bodyName(target), ownerResult(target))
	case c.hiddenInBody(target, sc):
		c.r.problem(CodeBodyScope, pos(), path, "references %s, which is inside %s and invisible outside it; read %s instead", root, bodyName(target), ownerResult(target))
	case sc.self != nil && strings.HasPrefix(sc.self.Path, target.step.Path+"/"):
		// The target holds the reading step in one of its bodies: it is
		// earlier in the file, but its result does not exist yet.
		c.r.problem(CodeForwardReference, pos(), path, "references %s, the %s step this body belongs to; its result exists only once the whole %s has run, so read it from a later step", root, target.step.ToolName.Value, target.step.ToolName.Value)
	default:
		c.r.problem(CodeForwardReference, pos(), path, "references %s, which is not `input` or an earlier step (%s runs later, at line %d)", root, root, target.step.Pos.Line)
	}
}

// hiddenInBody reports whether target sits in a body the scope is not in.
func (c *checker) hiddenInBody(target *placed, sc *scope) bool {
	if target.owner == nil {
		return false
	}
	if sc.self == nil {
		return true
	}
	prefix := target.owner.Path + "/" + bodySegment(target.field) + "/"
	return !strings.HasPrefix(sc.self.Path, prefix)
}

// bodySegment is the segment of a body's steps under their step: its
// field (then, else), or for do the segment that stands for every item.
func bodySegment(field string) string {
	if field == "do" {
		return paths.AnyItem
	}
	return field
}

func bodyName(p *placed) string {
	if p.field == "do" {
		return fmt.Sprintf("the %s body of %s", p.owner.ToolName.Value, p.owner.ID.Value)
	}
	return fmt.Sprintf("the %s branch of %s", p.field, p.owner.ID.Value)
}

// ownerResult names what a later step reads instead of a body step.
func ownerResult(p *placed) string {
	id := p.owner.ID.Value
	switch p.owner.ToolName.Value {
	case ControlMap:
		return "{{" + id + ".results}}"
	case ControlReduce:
		return "{{" + id + ".result}}"
	}
	return "{{" + id + ".result}}"
}

func (c *checker) availableHint(root string, sc *scope) string {
	names := []string{"input"}
	for id := range sc.visible {
		names = append(names, id)
	}
	for id := range sc.local {
		names = append(names, id)
	}
	for p := range sc.pseudo {
		names = append(names, p)
	}
	sort.Strings(names[1:])
	if s := suggest.Closest(root, names); s != "" {
		return "; did you mean " + s + "?"
	}
	return " (available: " + strings.Join(names, ", ") + ")"
}

// strictSummary adds the one line seeds/002 asks for: how many agent steps
// not asking for strict output could have it.
func (c *checker) strictSummary() {
	notAsking, could := strictSummary(c.p)
	if notAsking == 0 || (could[strict.Anthropic] == 0 && could[strict.OpenAI] == 0) {
		return
	}
	c.r.note(CodeStrictEligible, c.p.Pos, "", "%d of %s not asking for structured_output: strict could use it (Anthropic rules: %d, OpenAI rules: %d); --explain gives the detail",
		max(could[strict.Anthropic], could[strict.OpenAI]), plural(notAsking, "agent step", "agent steps"), could[strict.Anthropic], could[strict.OpenAI])
}
