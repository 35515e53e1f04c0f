package detail

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/stepwise-dev/stepwise/debugger/workspace"
	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/tui/common"
	"github.com/stepwise-dev/stepwise/tui/tree"
)

// builder lays out the detail of one row as styled lines of at most width
// cells.
type builder struct {
	t      *common.Theme
	width  int
	lines  []string
	labelW int // the label column of field lines; labelWidth when 0
}

// labelWidth is the usual width of the label column of field lines.
const labelWidth = 12

// withLabels runs fn with the label column wide enough for labels (within
// half the pane), for sections whose labels are long, like agent controls.
func (b *builder) withLabels(labels []string, fn func()) {
	w := labelWidth
	for _, l := range labels {
		w = max(w, len(l)+2)
	}
	b.labelW = min(w, max(b.width/2, labelWidth))
	fn()
	b.labelW = 0
}

func (b *builder) add(segs []seg, indent, hang string) {
	b.lines = append(b.lines, wrap(segs, b.width, indent, hang)...)
}

func (b *builder) blank() { b.lines = append(b.lines, "") }

// heading starts a section.
func (b *builder) heading(title string) {
	if len(b.lines) > 0 {
		b.blank()
	}
	b.add([]seg{{title, b.t.Heading}}, "", "")
}

// field writes "label      value", the value wrapped under itself.
func (b *builder) field(label string, value ...seg) {
	lw := b.labelW
	if lw == 0 {
		lw = labelWidth
	}
	hang := strings.Repeat(" ", lw)
	if len(label) >= lw {
		// A label wider than its column gets a line of its own.
		b.add([]seg{{label, b.t.Muted}}, "", "")
		b.add(value, hang, hang)
		return
	}
	segs := append([]seg{{label + strings.Repeat(" ", lw-len(label)), b.t.Muted}}, value...)
	b.add(segs, "", hang)
}

func (b *builder) text(s string) seg   { return seg{s, b.t.Text} }
func (b *builder) muted(s string) seg  { return seg{s, b.t.Muted} }
func (b *builder) strong(s string) seg { return seg{s, b.t.Strong} }

// describe writes the detail of row.
func (b *builder) describe(doc workspace.Document, row tree.Row, readers map[string][]plans.Reference) {
	switch row.Kind {
	case tree.KindPlan:
		b.plan(doc, row)
	case tree.KindHead:
		b.head(row)
	case tree.KindFinish:
		b.finish(doc.Plan, row)
	default:
		b.step(row, readers)
	}
}

// plan describes the root row: the plan as a whole.
func (b *builder) plan(doc workspace.Document, row tree.Row) {
	p := doc.Plan
	if p == nil {
		b.add([]seg{b.strong(doc.File), b.text("  "), {"does not load", b.t.Problem}}, "", "")
		b.field("file", b.text(doc.File))
		b.problems(doc.Report.Problems, doc.Report.Notes)
		return
	}
	b.add([]seg{b.strong(doc.Name()), b.text("  "), b.muted(p.Name.Value)}, "", "")
	b.field("file", b.text(doc.File))
	top, all := len(p.Steps), 0
	plans.WalkSteps(p, func(*plans.Step) { all++ })
	steps := strconv.Itoa(top) + " top-level"
	if all != top {
		steps += " · " + strconv.Itoa(all) + " in all"
	}
	b.field("steps", b.text(steps))
	b.field("finish", b.text(p.FinishMode().String()))
	if p.Description.Value != "" {
		b.field("about", b.text(p.Description.Value))
	}
	for i, e := range p.Exemplars {
		label := ""
		if i == 0 {
			label = "exemplars"
		}
		b.field(label, b.text(e.Value))
	}
	if len(p.RequiresServers) > 0 {
		var names []string
		for _, s := range p.RequiresServers {
			names = append(names, s.Value)
		}
		b.field("servers", b.text(strings.Join(names, ", ")))
	}
	b.problems(row.Problems, row.Notes)
	if p.InputSchema != nil {
		b.heading("Input schema")
		b.schema(p.InputSchema)
	}
	b.summary(doc.Report)
}

// summary closes the plan row with the report's counts.
func (b *builder) summary(r plans.Report) {
	b.heading("Validation")
	if len(r.Problems) == 0 {
		b.add([]seg{{"✓ valid", b.t.Valid}, b.muted(" · " + common.Count(len(r.Notes), "note"))}, "", "")
		return
	}
	b.add([]seg{{"✗ " + common.Count(len(r.Problems), "problem"), b.t.Problem}, b.muted(" · " + common.Count(len(r.Notes), "note"))}, "", "")
}

// head describes a then/else/do head: the body and the control step that
// owns it.
func (b *builder) head(row tree.Row) {
	owner := row.Owner
	b.add([]seg{{row.Head, b.t.Strong}, b.muted("  body of " + owner.Path + " (" + owner.ToolName.Value + ")")}, "", "")
	b.field("path", b.text(row.Path))
	b.field("at", b.text("line "+strings.TrimSpace(lineCol(row.Body.Pos))))
	b.problems(row.Problems, row.Notes)
	b.heading("Steps")
	for _, s := range row.Body.Steps {
		id := s.ID.Value
		if id == "" {
			id = "(no id)"
		}
		b.add([]seg{b.strong(id), b.text("  "), b.muted(s.ToolName.Value)}, "  ", "    ")
	}
	switch c := owner.Control.(type) {
	case *plans.DecideInput:
		b.heading("Runs when")
		if row.Head == "else" {
			b.add([]seg{b.muted("the gate of " + owner.Path + " is false:")}, "", "")
		} else {
			b.add([]seg{b.muted("the gate of " + owner.Path + " is true:")}, "", "")
		}
		b.condition("if", c.Condition)
	case *plans.MapInput:
		b.heading("Runs for each item of")
		b.field("over", b.template(c.Over)...)
	case *plans.ReduceInput:
		b.heading("Runs for each item of")
		b.field("over", b.template(c.Over)...)
	}
}

// finish describes the output or solver row.
func (b *builder) finish(p *plans.Plan, row tree.Row) {
	b.add([]seg{b.strong(row.Path), b.muted("  how the plan finishes")}, "", "")
	switch {
	case p.Solver != nil:
		b.field("at", b.text("line "+strings.TrimSpace(lineCol(p.Solver.Pos))))
		b.problems(row.Problems, row.Notes)
		b.heading("Solver")
		b.entry("query_to_answer", p.Solver.QueryToAnswer, 0)
		if p.Solver.SystemPrompt != nil {
			b.entry("system_prompt", p.Solver.SystemPrompt, 0)
		}
		if p.Solver.Data != nil {
			b.entry("data", p.Solver.Data, 0)
		}
	case p.Output != nil:
		b.field("at", b.text("line "+strings.TrimSpace(lineCol(p.Output.Pos()))))
		b.problems(row.Problems, row.Notes)
		b.heading("Output")
		b.value(p.Output, 0)
	}
}

// step describes a step or a body call.
func (b *builder) step(row tree.Row, readers map[string][]plans.Reference) {
	s := row.Step
	tool := s.ToolName.Value
	var title []seg
	if g := tree.Glyph(tool); g != "" {
		title = append(title, seg{g + " ", b.t.Glyph})
	}
	if s.ID.Value != "" {
		title = append(title, b.strong(s.ID.Value), b.text("  "), b.muted(tool))
	} else {
		title = append(title, seg{row.Head, b.t.Strong}, b.text("  "), b.strong(tool))
	}
	b.add(title, "", "")
	b.field("path", b.text(s.Path))
	b.field("tool", b.text(tool))
	b.field("at", b.text("line "+strings.TrimSpace(lineCol(s.Pos))))
	if row.Owner != nil {
		b.field("in", b.text(row.Head+" of "+row.Owner.Path+" ("+row.Owner.ToolName.Value+")"))
	}
	if s.Reasoning.Value != "" {
		b.field("reasoning", b.text(s.Reasoning.Value))
	}
	b.problems(row.Problems, row.Notes)

	switch c := s.Control.(type) {
	case *plans.ExitInput:
		b.heading("Gate")
		b.condition("when", c.Condition)
		b.field("status", b.text(c.Status.Value))
		if c.Message != nil {
			b.field("message", b.template(c.Message)...)
		}
	case *plans.DecideInput:
		b.heading("Gate")
		b.condition("if", c.Condition)
	case *plans.FilterInput:
		b.heading("Gate")
		b.condition("where", c.Condition)
		b.heading("Iteration")
		b.field("over", b.template(c.Over)...)
		b.field("concurrency", b.intField(c.Concurrency, 1, "")...)
	case *plans.MapInput:
		b.heading("Iteration")
		b.field("over", b.template(c.Over)...)
		b.field("concurrency", b.intField(c.Concurrency, 1, "")...)
	case *plans.ReduceInput:
		b.heading("Iteration")
		b.field("over", b.template(c.Over)...)
		if c.Initial != nil {
			b.field("initial", b.inline(c.Initial)...)
		} else {
			b.field("initial", b.text("null "), b.muted("(default)"))
		}
	case *plans.AgentInput:
		b.heading("Agent controls")
		b.withLabels([]string{"validation_exhaustion"}, func() { b.agentControls(c) })
		if c.OutputSchema != nil {
			b.heading("Output schema")
			b.schema(c.OutputSchema)
		}
	case *plans.AskInput:
		b.heading("Ask")
		b.withLabels([]string{"when_unanswered"}, func() {
			b.field("prompt", b.template(c.Prompt)...)
			b.field("when_unanswered", b.strField(c.WhenUnanswered, "fail")...)
			if c.Default != nil {
				b.field("default", b.inline(c.Default)...)
			}
		})
		if c.OutputSchema != nil {
			b.heading("Answer schema")
			b.schema(c.OutputSchema)
		}
	}

	if s.Input != nil {
		b.heading("Input")
		b.value(s.Input, 2)
	}
	if refs := readers[s.Path]; s.ID.Value != "" || len(refs) > 0 {
		b.heading("Read downstream by")
		b.readers(s.ID.Value, refs)
	}
}

// readers lists the templates that read a step's result, as
// "E3 (line 40): {{E1.result.id}}".
func (b *builder) readers(id string, refs []plans.Reference) {
	if len(refs) == 0 {
		b.add([]seg{b.muted("nothing reads " + id + "'s result")}, "  ", "    ")
		return
	}
	for _, r := range refs {
		segs := []seg{
			b.strong(r.From),
			b.muted(" (line " + strconv.Itoa(r.Pos.Line) + "): "),
			{"{{" + r.Path + "}}", b.t.Template},
		}
		if r.Root != id {
			// The last step of a body: its result is in the control
			// step's.
			segs = append(segs, b.muted(" through "+r.Root+"'s result"))
		}
		b.add(segs, "  ", "    ")
	}
}

// problems lists a row's problems and notes, compiler style.
func (b *builder) problems(problems, notes []plans.Problem) {
	if len(problems)+len(notes) == 0 {
		return
	}
	b.heading("Problems")
	for _, p := range problems {
		b.add([]seg{{"✗ ", b.t.Problem}, b.muted(lineCol(p.Pos)), b.text(p.Message)}, "", "  ")
	}
	for _, p := range notes {
		b.add([]seg{{"ℹ ", b.t.Note}, b.muted(lineCol(p.Pos)), b.text(p.Message)}, "", "  ")
	}
}

// lineCol renders a position as "line:col " (the file is the pane's).
func lineCol(p plans.Pos) string {
	if p.Line == 0 {
		return ""
	}
	return fmt.Sprintf("%d:%d ", p.Line, p.Col)
}

// condition writes a gate: a comparison, an infer question, or neither.
func (b *builder) condition(name string, c plans.Condition) {
	switch {
	case c.Gate != nil:
		g := c.Gate
		segs := b.template(g.Value)
		segs = append(segs, b.text(" "), seg{g.Op.Value, b.t.Key})
		if g.To != nil {
			segs = append(segs, b.text(" "))
			segs = append(segs, b.inline(g.To)...)
		}
		b.field(name, segs...)
	case c.Infer != nil:
		b.field("infer", b.template(c.Infer)...)
		if c.Model != nil {
			b.field("model", b.template(c.Model)...)
		} else {
			b.field("model", b.text("judge role "), b.muted("(default)"))
		}
	default:
		b.field(name, b.text("always"), b.muted(" (no gate)"))
	}
}

// agentControls lists every agent control with its value, defaults marked.
func (b *builder) agentControls(a *plans.AgentInput) {
	b.field("max_iterations", b.intField(a.MaxIterations, plans.DefaultMaxIterations, "")...)
	if a.Model.Set {
		b.field("model", b.text(a.Model.Value))
	} else {
		b.field("model", b.text("chat role "), b.muted("(default)"))
	}
	if a.Tools != nil {
		var pats []string
		for _, p := range a.Tools.Patterns {
			pats = append(pats, p.Value)
		}
		if len(pats) == 0 {
			b.field("tools", b.text("[]"))
		} else {
			b.field("tools", b.text(strings.Join(pats, ", ")))
		}
	} else {
		b.field("tools", b.text("the whole catalog "), b.muted("(default)"))
	}
	if a.SystemPrompt != nil {
		b.field("system_prompt", b.template(a.SystemPrompt)...)
	}
	if a.StructuredOutput.Set {
		b.field("structured_output", b.text(a.StructuredOutput.Value))
	} else {
		b.field("structured_output", b.text("off "), b.muted("(default)"))
	}
	ve := []seg{b.text("threshold ")}
	var threshold plans.Field[int]
	var mode plans.Field[string]
	if e := a.ValidationExhaustion; e != nil {
		threshold, mode = e.Threshold, e.Mode
	}
	ve = append(ve, b.intField(threshold, plans.DefaultExhaustionThreshold, "")...)
	ve = append(ve, b.text(" · mode "))
	ve = append(ve, b.strField(mode, "fail")...)
	b.field("validation_exhaustion", ve...)
	b.field("llm_timeout_seconds", b.intField(a.LLMTimeoutSeconds, plans.DefaultLLMTimeoutSeconds, "s")...)
	b.field("max_tool_calls", b.intField(a.MaxToolCalls, plans.DefaultMaxToolCalls, "")...)
	if a.MaxFanOut.Set {
		b.field("max_fan_out", b.text(strconv.Itoa(a.MaxFanOut.Value)))
	} else {
		b.field("max_fan_out", b.text("no limit "), b.muted("(default)"))
	}
	b.field("tool_timeout", b.intField(a.ToolTimeout, plans.DefaultToolTimeoutSeconds, "s")...)
}

// intField renders a whole-number control: its value, or its default marked.
func (b *builder) intField(f plans.Field[int], def int, unit string) []seg {
	if f.Set {
		return []seg{b.text(strconv.Itoa(f.Value) + unit)}
	}
	return []seg{b.text(strconv.Itoa(def) + unit + " "), b.muted("(default)")}
}

// strField renders a string control: its value, or its default marked.
func (b *builder) strField(f plans.Field[string], def string) []seg {
	if f.Set {
		return []seg{b.text(f.Value)}
	}
	return []seg{b.text(def + " "), b.muted("(default)")}
}

// template renders a string value as written, tags highlighted; other
// values inline.
func (b *builder) template(v *plans.Value) []seg {
	if v == nil {
		return []seg{b.muted("none")}
	}
	if v.Kind == plans.String {
		return templateSegs(strings.ReplaceAll(v.String, "\t", "    "), b.t.Text, b.t.Template)
	}
	return b.inline(v)
}
