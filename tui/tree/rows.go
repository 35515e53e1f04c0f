package tree

import (
	"strings"

	"github.com/stepwise-dev/stepwise/debugger/workspace"
	"github.com/stepwise-dev/stepwise/engine/path"
	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/tui/common"
)

// Kind says what a row of the tree stands for.
type Kind int

// The kinds of row.
const (
	KindPlan   Kind = iota // the root: the plan identifier
	KindStep               // a step, or the single call of a single-call body
	KindHead               // the then, else or do head of a list body
	KindFinish             // the plan's output or solver
)

// Row is one line of the tree. Path is the step path of DESIGN.md section 2
// (plans.Step.Path), so later code can address a row the way events,
// breakpoints and the run store do: "E1", "E1/then", "E1/then/E10",
// "E2/do.*". The root row's path is empty; the finish row's is "output" or
// "solver", the names plans.References gives the finish.
type Row struct {
	Index    int             // position in the tree
	Kind     Kind            //
	Path     string          //
	Step     *plans.Step     // KindStep: the step or body call
	Owner    *plans.Step     // KindHead and body calls: the control step whose body it is
	Head     string          // KindHead and body calls: "then", "else" or "do"
	Body     *plans.Body     // KindHead and body calls: the body
	Line     int             // the line the row's source starts on
	Problems []plans.Problem // the report's problems placed on this row
	Notes    []plans.Problem // the report's notes placed on this row

	prefix []pipe // the box-drawing prefix, junction and glyph included
	depth  int
	// folds says the row has rows under it to fold away: a control
	// step's bodies, a head's steps.
	folds bool
}

// tone is the colour family of a stretch of pipes.
type tone uint8

const (
	toneTrunk tone = iota
	toneThen
	toneElse
	toneDo
	toneGlyph
)

// pipe is a stretch of the prefix drawn in one tone.
type pipe struct {
	text  string
	width int // cells, measured once when the tree is laid out
	tone  tone
}

// node is a row with its children, before the tree is flattened.
type node struct {
	row       Row
	glyph     string
	children  []node
	childTone tone
}

// Glyph returns the glyph a step carries in its junction: the control
// step's mark, ƒ for a plan__ call, or "" for a plain tool call.
func Glyph(tool string) string {
	switch tool {
	case plans.ControlDecide:
		return "⑂"
	case plans.ControlMap:
		return "⟳"
	case plans.ControlReduce:
		return "∑"
	case plans.ControlAgent:
		return "✻"
	case plans.ControlFilter:
		return "▽"
	case plans.ControlAsk:
		return "?"
	case plans.ControlExit:
		return "⎋"
	}
	if strings.HasPrefix(tool, "plan__") {
		return "ƒ"
	}
	return ""
}

// namedBody is a body with the field it is written under.
type namedBody struct {
	field string // then, else or do
	body  *plans.Body
}

// bodiesOf returns a control step's bodies with their field names, in the
// order plans.Bodies gives them.
func bodiesOf(s *plans.Step) []namedBody {
	var out []namedBody
	switch c := s.Control.(type) {
	case *plans.DecideInput:
		out = append(out, namedBody{"then", c.Then}, namedBody{"else", c.Else})
	case *plans.MapInput:
		out = append(out, namedBody{"do", c.Do})
	case *plans.ReduceInput:
		out = append(out, namedBody{"do", c.Do})
	}
	kept := out[:0]
	for _, b := range out {
		if b.body != nil {
			kept = append(kept, b)
		}
	}
	return kept
}

func toneOf(field string) tone {
	switch field {
	case "then":
		return toneThen
	case "else":
		return toneElse
	}
	return toneDo
}

// segment is the path segment of a body field.
func segment(field string) string {
	if field == "do" {
		return path.AnyItem
	}
	return field
}

// buildRows lays out a document as tree rows and places its problems.
func buildRows(doc workspace.Document) []Row {
	root := node{row: Row{Kind: KindPlan, Line: 1}, childTone: toneTrunk}
	if p := doc.Plan; p != nil {
		if p.Pos.Line > 0 {
			root.row.Line = p.Pos.Line
		}
		for _, s := range p.Steps {
			root.children = append(root.children, stepNode(s))
		}
		if mode := p.FinishMode(); mode != plans.FinishSilent {
			line := 0
			if p.Solver != nil {
				line = p.Solver.Pos.Line
			} else if p.Output != nil {
				line = p.Output.Pos().Line
			}
			root.children = append(root.children, node{row: Row{Kind: KindFinish, Path: mode.String(), Line: line}})
		}
	}
	var rows []Row
	rows = append(rows, root.row)
	flatten(root.children, nil, root.childTone, 1, &rows)
	for i := range rows {
		rows[i].Index = i
	}
	placeProblems(rows, doc.Report)
	return rows
}

func stepNode(s *plans.Step) node {
	n := node{row: Row{Kind: KindStep, Path: s.Path, Step: s, Line: s.Pos.Line}, glyph: Glyph(s.ToolName.Value)}
	n.children = bodyNodes(s)
	return n
}

// bodyNodes returns the then/else/do rows under a control step: a
// single-call body is one row, a list body a head with its steps under it.
func bodyNodes(s *plans.Step) []node {
	var out []node
	for _, nb := range bodiesOf(s) {
		b := nb.body
		if b.Single && len(b.Steps) == 1 {
			call := b.Steps[0]
			n := stepNode(call)
			n.row.Owner, n.row.Head, n.row.Body = s, nb.field, b
			out = append(out, n)
			continue
		}
		head := node{
			row:       Row{Kind: KindHead, Path: path.Join(s.Path, segment(nb.field)), Owner: s, Head: nb.field, Body: b, Line: b.Pos.Line},
			childTone: toneOf(nb.field),
		}
		for _, c := range b.Steps {
			head.children = append(head.children, stepNode(c))
		}
		out = append(out, head)
	}
	return out
}

// flatten turns nodes into rows, drawing each row's prefix: the pipes of its
// ancestors, its junction, and its glyph (or a plain dash).
func flatten(nodes []node, ancestors []pipe, t tone, depth int, out *[]Row) {
	for i, n := range nodes {
		last := i == len(nodes)-1
		junction, cont := "├─", "│   "
		if last {
			junction, cont = "└─", "    "
		}
		prefix := make([]pipe, 0, len(ancestors)+3)
		prefix = append(prefix, ancestors...)
		prefix = appendPipe(prefix, pipe{text: junction, tone: t})
		if n.glyph != "" {
			prefix = appendPipe(prefix, pipe{text: n.glyph, tone: toneGlyph})
		} else {
			prefix = appendPipe(prefix, pipe{text: "─", tone: t})
		}
		prefix = appendPipe(prefix, pipe{text: " ", tone: t})
		r := n.row
		r.prefix, r.depth, r.folds = prefix, depth, len(n.children) > 0
		*out = append(*out, r)

		children := make([]pipe, 0, len(ancestors)+1)
		children = append(children, ancestors...)
		children = appendPipe(children, pipe{text: cont, tone: t})
		flatten(n.children, children, n.childTone, depth+1, out)
	}
}

// appendPipe adds p, merging it into the last stretch when the tones match,
// so a row renders with as few styled runs as possible.
func appendPipe(ps []pipe, p pipe) []pipe {
	p.width = common.TextWidth(p.text)
	if n := len(ps); n > 0 && ps[n-1].tone == p.tone {
		ps[n-1].text += p.text
		ps[n-1].width += p.width
		return ps
	}
	return append(ps, p)
}

// placeProblems puts each problem and note on the row locate finds for it,
// the row Enter on it in the problems pane jumps to.
func placeProblems(rows []Row, r plans.Report) {
	byPath := indexPaths(rows)
	for _, p := range r.Problems {
		i := locate(rows, byPath, p)
		rows[i].Problems = append(rows[i].Problems, p)
	}
	for _, p := range r.Notes {
		i := locate(rows, byPath, p)
		rows[i].Notes = append(rows[i].Notes, p)
	}
}

func indexPaths(rows []Row) map[string][]int {
	byPath := make(map[string][]int, len(rows))
	for i, r := range rows {
		if r.Path != "" {
			byPath[r.Path] = append(byPath[r.Path], i)
		}
	}
	return byPath
}

// locate finds the row a problem belongs to: a row with the problem's path
// (the one nearest at or before the problem's line when several share it, as
// duplicate ids do), else the row whose line is nearest at or before the
// problem's line. Problems without a path (plan-level ones, the finish's
// templates) are placed by line alone.
func locate(rows []Row, byPath map[string][]int, p plans.Problem) int {
	if cands := byPath[p.Path]; p.Path != "" && len(cands) > 0 {
		best, found := cands[0], false
		for _, i := range cands {
			if rows[i].Line <= p.Pos.Line && (!found || rows[i].Line >= rows[best].Line) {
				best, found = i, true
			}
		}
		return best
	}
	best, bestLine := 0, 0
	for i, r := range rows {
		// >= prefers the later, deeper row when a head and its first step
		// start on the same line.
		if r.Line > 0 && r.Line <= p.Pos.Line && r.Line >= bestLine {
			best, bestLine = i, r.Line
		}
	}
	return best
}
