// Package tree is the step tree of the workbench: the plan identifier as the
// root, steps forking off a trunk with box-drawing junctions, control steps
// carrying their glyph in the junction, bodies nested under then/else/do
// heads, and the finish row last. It also owns the choice of plan when the
// workbench holds several, shown as tabs in the header.
package tree

import (
	"strconv"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/tui/common"
)

// document is one plan with its rows and where the user left the selection
// in it, so switching plans and back keeps the place.
type document struct {
	doc    common.Document
	rows   []Row
	byPath map[string][]int
	cursor int
	scroll common.Scroll
}

// Model is the tree pane.
type Model struct {
	common.Common
	docs    []document
	current int
	common.Focusable
	// broken says whether a breakpoint matches a row's path, for the ●
	// in the gutter; nil when none is set.
	broken func(path string) bool
}

// New lays out every document's tree once; rendering then only draws the
// rows in view, so a plan of thousands of steps costs no more per frame than
// a small one.
func New(c common.Common, docs []common.Document) Model {
	m := Model{Common: c}
	for _, d := range docs {
		rows := buildRows(d)
		m.docs = append(m.docs, document{doc: d, rows: rows, byPath: indexPaths(rows)})
	}
	if len(m.docs) == 0 {
		m.docs = []document{{rows: buildRows(common.Document{})}}
	}
	return m
}

// SetSize sets the pane's outer size, border included.
func (m *Model) SetSize(width, height int) {
	m.Common.SetSize(width, height)
	m.follow()
}

// DocumentAt returns document i.
func (m Model) DocumentAt(i int) common.Document { return m.docs[i].doc }

// Replace puts a document read again in place of document i, keeping the
// selection on the same path where the new plan still has it.
func (m *Model) Replace(i int, doc common.Document) {
	old := m.docs[i]
	rows := buildRows(doc)
	d := document{doc: doc, rows: rows, byPath: indexPaths(rows), scroll: old.scroll}
	if at := d.byPath[old.rows[old.cursor].Path]; len(at) > 0 {
		d.cursor = at[0]
	} else {
		d.cursor = min(old.cursor, len(rows)-1)
	}
	m.docs[i] = d
	m.follow()
}

// Add appends a document and returns its index.
func (m *Model) Add(doc common.Document) int {
	rows := buildRows(doc)
	m.docs = append(m.docs, document{doc: doc, rows: rows, byPath: indexPaths(rows)})
	return len(m.docs) - 1
}

// SetBreakpoints sets what says whether a breakpoint matches a row.
func (m *Model) SetBreakpoints(match func(path string) bool) { m.broken = match }

// Document returns the document on show.
func (m Model) Document() common.Document { return m.docs[m.current].doc }

// DocumentIndex returns the index of the document on show.
func (m Model) DocumentIndex() int { return m.current }

// Len returns how many documents the tree holds.
func (m Model) Len() int { return len(m.docs) }

// Rows returns the rows of the document on show. The slice is shared; do
// not modify it.
func (m Model) Rows() []Row { return m.docs[m.current].rows }

// Selected returns the selected row.
func (m Model) Selected() Row {
	d := m.docs[m.current]
	return d.rows[d.cursor]
}

// Offset returns the index of the first row in view.
func (m Model) Offset() int { return m.docs[m.current].scroll.Offset }

// SetDocument shows document i, where its selection was left.
func (m *Model) SetDocument(i int) {
	if i < 0 || i >= len(m.docs) {
		return
	}
	m.current = i
	m.follow()
}

// CycleDocument shows the next (delta 1) or previous (delta -1) document,
// wrapping around.
func (m *Model) CycleDocument(delta int) {
	n := len(m.docs)
	m.SetDocument(((m.current+delta)%n + n) % n)
}

// Select moves the selection to row i, clamped, and scrolls it into view.
func (m *Model) Select(i int) {
	d := &m.docs[m.current]
	d.cursor = min(max(i, 0), len(d.rows)-1)
	m.follow()
}

// SelectPath selects the first row with the given path and reports whether
// there is one.
func (m *Model) SelectPath(path string) bool {
	if rows := m.docs[m.current].byPath[path]; len(rows) > 0 {
		m.Select(rows[0])
		return true
	}
	return false
}

// SelectProblem selects the row a problem belongs to: the row with its path,
// else the row whose line is nearest at or before the problem's line.
func (m *Model) SelectProblem(p plans.Problem) {
	d := m.docs[m.current]
	m.Select(locate(d.rows, d.byPath, p))
}

// ClickAt selects the row drawn at line y of the pane (0 is the top border).
func (m *Model) ClickAt(y int) {
	line := y - 1
	if line < 0 || line >= m.bodyHeight() {
		return
	}
	if i := m.Offset() + line; i < len(m.Rows()) {
		m.Select(i)
	}
}

// Scroll moves the view by delta rows (the mouse wheel), taking the
// selection along when it would leave the view, so it stays visible.
func (m *Model) Scroll(delta int) {
	d := &m.docs[m.current]
	h := m.bodyHeight()
	d.scroll.Offset += delta
	d.scroll = d.scroll.Clamp(h, len(d.rows))
	if h > 0 {
		d.cursor = min(max(d.cursor, d.scroll.Offset), d.scroll.Offset+h-1, len(d.rows)-1)
	}
}

func (m Model) bodyHeight() int { return max(m.Height-2, 0) }

func (m *Model) follow() {
	d := &m.docs[m.current]
	d.scroll = d.scroll.Follow(d.cursor, m.bodyHeight(), len(d.rows))
}

// Update moves the selection on the movement keys; the root sends it keys
// only while the pane has focus.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return m, nil
	}
	if delta, ok := m.Keys.Movement(k, max(m.bodyHeight()-1, 1), len(m.Rows())); ok {
		m.Select(m.docs[m.current].cursor + delta)
	}
	return m, nil
}

// View draws the pane, border included, at exactly its size.
func (m Model) View() string {
	d := m.docs[m.current]
	h, inner := m.bodyHeight(), max(m.Width-2, 0)
	end := min(d.scroll.Offset+h, len(d.rows))
	lines := make([]string, 0, h)
	plain, selected := m.rowStyles(false), m.rowStyles(true)
	for i := d.scroll.Offset; i < end; i++ {
		st := plain
		if i == d.cursor {
			st = selected
		}
		lines = append(lines, m.renderRow(d, d.rows[i], inner, st))
	}
	title := m.Theme.PaneTitle("Steps", m.Focused())
	return common.Frame(m.Theme, m.Width, m.Height, title, common.Position(d.cursor, len(d.rows)), m.Focused(), lines)
}

// rowStyles are the styles a row is drawn with, worked out once a frame for
// plain rows and once for the selected one.
type rowStyles struct {
	selected                     bool
	text, strong, muted, problem common.Paint
	tones                        [toneGlyph + 1]common.Paint
	heads                        [toneGlyph + 1]common.Paint
}

func (m Model) rowStyles(selected bool) rowStyles {
	t := m.Theme
	base := t.RowStyle(selected, m.Focused())
	in := func(s lipgloss.Style) common.Paint { return common.PaintOf(s.Inherit(base)) }
	rs := rowStyles{selected: selected, text: in(t.Text), strong: in(t.Strong), muted: in(t.Muted), problem: in(t.Problem)}
	for tn := range rs.tones {
		rs.tones[tn] = in(m.toneStyle(tone(tn)))
		rs.heads[tn] = in(m.toneStyle(tone(tn)).Bold(true))
	}
	return rs
}

// renderRow draws one row: a gutter marking the selection, the pipes and
// junction, the label, and the problem marker flush right.
func (m Model) renderRow(d document, r Row, width int, st rowStyles) string {
	if width <= 0 {
		return ""
	}
	marker := ""
	if n := len(r.Problems); n > 0 {
		marker = "✗" + strconv.Itoa(n)
	}
	room := width
	if marker != "" {
		room = max(width-common.TextWidth(marker)-1, 0)
	}
	l := common.NewLine(room)
	switch {
	case m.broken != nil && r.Path != "" && m.broken(r.Path):
		l.Add("●", st.problem)
	case st.selected:
		l.Add("▸", st.text)
	default:
		l.Add(" ", st.text)
	}
	for _, p := range r.prefix {
		l.AddWidth(p.text, p.width, st.tones[p.tone])
	}
	m.writeLabel(l, d, r, st)
	if marker != "" {
		l.PadTo(width-common.TextWidth(marker), st.text)
		return l.String() + st.problem.Render(marker)
	}
	l.PadTo(width, st.text)
	return l.String()
}

func (m Model) writeLabel(l *common.Line, d document, r Row, st rowStyles) {
	switch r.Kind {
	case KindPlan:
		if p := d.doc.Plan; p != nil {
			l.Add(d.doc.Name(), st.strong)
			if p.Name.Value != "" {
				l.Add("  ", st.text)
				l.Add(p.Name.Value, st.muted)
			}
			return
		}
		name := d.doc.File
		if name == "" {
			name = "no plan"
		}
		l.Add(name, st.strong)
		if d.doc.File != "" {
			l.Add("  ", st.text)
			l.Add("does not load", st.problem)
		}
	case KindHead:
		n := len(r.Body.Steps)
		l.Add(r.Head, st.heads[toneOf(r.Head)])
		l.Add("  ", st.text)
		l.Add(strconv.Itoa(n)+plural(n, " step", " steps"), st.muted)
	case KindStep:
		tool := r.Step.ToolName.Value
		if r.Head != "" {
			// A single-call body: the head, then the call's tool in the
			// place an id would be.
			l.Add(r.Head, st.heads[toneOf(r.Head)])
			l.Add("  ", st.text)
			l.Add(tool, st.strong)
			return
		}
		id := r.Step.ID.Value
		if id == "" {
			id = "(no id)"
		}
		l.Add(id, st.strong)
		l.Add("  ", st.text)
		l.Add(tool, st.muted)
	case KindFinish:
		l.Add(r.Path, st.strong)
		l.Add("  ", st.text)
		l.Add("finish", st.muted)
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func (m Model) toneStyle(tn tone) lipgloss.Style {
	t := m.Theme
	switch tn {
	case toneThen:
		return t.Then
	case toneElse:
		return t.Else
	case toneDo:
		return t.Do
	case toneGlyph:
		return t.Glyph
	}
	return t.Trunk
}
