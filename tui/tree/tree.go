// Package tree is the step tree of the workbench: the plan identifier as the
// root, steps forking off a trunk with box-drawing junctions, control steps
// carrying their glyph in the junction, bodies nested under then/else/do
// heads, and the finish row last.
package tree

import (
	"strconv"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/stepwise-dev/stepwise/debugger/workspace"
	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/tui/common"
)

// document is the plan shown, with its rows and the selection in it.
type document struct {
	doc    workspace.Document
	rows   []Row
	byPath map[string][]int
	cursor int           // the selected row's index in rows
	scroll common.Scroll // in lines shown
	// shown is the indices of the rows the filter or the folds leave;
	// nil while every row shows.
	shown []int
	// folded is the paths of the rows folded, their rows under them
	// hidden; kept by path, so that a plan read again keeps its folds.
	folded map[string]bool
}

// Model is the tree pane of one plan. A workbench with several plans open
// holds one for each, so that switching plans and back keeps the place.
type Model struct {
	common.Common
	d document
	common.Focusable
	// broken says which breakpoints a row's path has, for the mark in the
	// gutter; nil when none is set.
	broken func(path string) common.BreakMark
	// filter is the line typed after /.
	filter common.FilterLine
}

// New lays out the document's tree once; rendering then only draws the
// rows in view, so a plan of thousands of steps costs no more per frame
// than a small one.
func New(c common.Common, doc workspace.Document) Model {
	rows := buildRows(doc)
	return Model{Common: c, d: document{doc: doc, rows: rows, byPath: indexPaths(rows)}}
}

// SetSize sets the pane's outer size, border included.
func (m *Model) SetSize(width, height int) {
	m.Common.SetSize(width, height)
	m.follow()
}

// Replace shows the document read again, keeping the selection on the
// same path where the new plan still has it.
func (m *Model) Replace(doc workspace.Document) {
	old := m.d
	rows := buildRows(doc)
	d := document{doc: doc, rows: rows, byPath: indexPaths(rows), scroll: old.scroll, folded: old.folded}
	if at := d.byPath[old.rows[old.cursor].Path]; len(at) > 0 {
		d.cursor = at[0]
	} else {
		d.cursor = min(old.cursor, len(rows)-1)
	}
	m.d = d
	m.refilter()
}

// SetBreakpoints sets what says which breakpoints a row has.
func (m *Model) SetBreakpoints(match func(path string) common.BreakMark) { m.broken = match }

// Document returns the document shown.
func (m Model) Document() workspace.Document { return m.d.doc }

// Rows returns the rows of the document. The slice is shared; do
// not modify it.
func (m Model) Rows() []Row { return m.d.rows }

// Selected returns the selected row.
func (m Model) Selected() Row {
	d := m.d
	return d.rows[d.cursor]
}

// Offset returns the index of the first row in view.
func (m Model) Offset() int { return m.d.scroll.Offset }

// Select moves the selection to row i, clamped, and scrolls it into view;
// a filter that hides the row is dropped, and the folds above it opened.
func (m *Model) Select(i int) {
	d := &m.d
	i = min(max(i, 0), len(d.rows)-1)
	if _, ok := d.lineOf(i); !ok {
		for a := i; a > 0; {
			a = parentRow(d.rows, a)
			delete(d.folded, d.rows[a].Path)
		}
		d.cursor = i
		m.SetFilter("")
	}
	d.cursor = i
	m.follow()
}

// SelectPath selects the first row with the given path and reports whether
// there is one.
func (m *Model) SelectPath(path string) bool {
	if rows := m.d.byPath[path]; len(rows) > 0 {
		m.Select(rows[0])
		return true
	}
	return false
}

// SelectProblem selects the row a problem belongs to: the row with its path,
// else the row whose line is nearest at or before the problem's line.
func (m *Model) SelectProblem(p plans.Problem) {
	d := m.d
	m.Select(locate(d.rows, d.byPath, p))
}

// ClickAt selects the row drawn at line y of the pane (0 is the top border).
func (m *Model) ClickAt(y int) {
	line := y - 1
	if line < 0 || line >= m.bodyHeight() {
		return
	}
	if i := m.Offset() + line; i < m.d.count() {
		m.Select(m.d.rowAt(i))
	}
}

// Scroll moves the view by delta rows (the mouse wheel), taking the
// selection along when it would leave the view, so it stays visible.
func (m *Model) Scroll(delta int) {
	d := &m.d
	h := m.bodyHeight()
	d.scroll.Offset += delta
	d.scroll = d.scroll.Clamp(h, d.count())
	if cur, ok := d.lineOf(d.cursor); ok && h > 0 && d.count() > 0 {
		d.cursor = d.rowAt(min(max(cur, d.scroll.Offset), d.scroll.Offset+h-1, d.count()-1))
	}
}

func (m Model) bodyHeight() int { return max(m.Height-2, 0) }

func (m *Model) follow() {
	d := &m.d
	cur, _ := d.lineOf(d.cursor)
	d.scroll = d.scroll.Follow(cur, m.bodyHeight(), d.count())
}

// Update moves the selection on the movement keys, folds and unfolds
// (Collapse, Expand, Toggle), and / filters the rows, as the run tree's
// does; the page sends it keys only while the pane has focus.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	switch {
	case !ok:
		return m, nil
	case m.filter.Editing:
		if m.filter.Edit(k) {
			m.refilter()
		}
		return m, nil
	case key.Matches(k, m.Keys.Search):
		m.StartFilter()
		return m, nil
	case key.Matches(k, m.Keys.Close) && m.filter.Query != "":
		m.SetFilter("")
		return m, nil
	}
	d := m.d
	if delta, ok := m.Keys.Movement(k, max(m.bodyHeight()-1, 1), d.count()); ok && d.count() > 0 {
		cur, _ := d.lineOf(d.cursor)
		m.Select(d.rowAt(min(max(cur+delta, 0), d.count()-1)))
		return m, nil
	}
	// Folding works as in the run tree: Collapse on a row folded or with
	// nothing to fold goes to its parent, Expand on an unfolded row to
	// its first child.
	r := d.rows[d.cursor]
	foldable := r.folds && r.Kind != KindPlan
	switch {
	case key.Matches(k, m.Keys.Collapse):
		switch {
		case foldable && !d.folded[r.Path]:
			m.fold(r.Path, true)
		case r.depth > 0:
			m.Select(parentRow(d.rows, d.cursor))
		}
	case key.Matches(k, m.Keys.Expand):
		switch {
		case foldable && d.folded[r.Path]:
			m.fold(r.Path, false)
		case r.folds:
			m.Select(d.cursor + 1)
		}
	case key.Matches(k, m.Keys.Toggle) && foldable:
		m.fold(r.Path, !d.folded[r.Path])
	}
	return m, nil
}

// Folded reports whether the row at path is folded.
func (m Model) Folded(path string) bool { return m.d.folded[path] }

// fold folds or unfolds the row at path; a filter shows its matches
// whatever is folded, so folding drops it.
func (m *Model) fold(path string, folded bool) {
	if m.d.folded == nil {
		m.d.folded = map[string]bool{}
	}
	if folded {
		m.d.folded[path] = true
	} else {
		delete(m.d.folded, path)
	}
	m.SetFilter("")
}

// parentRow is the index of the row row i is under.
func parentRow(rows []Row, i int) int {
	for j := i - 1; j >= 0; j-- {
		if rows[j].depth < rows[i].depth {
			return j
		}
	}
	return 0
}

// View draws the pane, border included, at exactly its size.
func (m Model) View() string {
	d := m.d
	h, inner := m.bodyHeight(), max(m.Width-2, 0)
	end := min(d.scroll.Offset+h, d.count())
	lines := make([]string, 0, h)
	plain, selected := m.rowStyles(false), m.rowStyles(true)
	for i := d.scroll.Offset; i < end; i++ {
		st := plain
		if d.rowAt(i) == d.cursor {
			st = selected
		}
		lines = append(lines, m.renderRow(d, d.rows[d.rowAt(i)], inner, st))
	}
	title := m.Theme.PaneTitle("Steps", m.Focused()) + m.filter.Title(m.Theme)
	if d.count() == 0 {
		empty := " no row matches " + m.filter.Query + ": " + m.Keys.Close.Help().Key + " shows every row"
		return common.Frame(m.Theme, m.Width, m.Height, title, "", m.Focused(), []string{m.Theme.Muted.Render(empty)})
	}
	cur, _ := d.lineOf(d.cursor)
	return common.Frame(m.Theme, m.Width, m.Height, title, common.Position(cur, d.count()), m.Focused(), lines)
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

// renderRow draws one row: a gutter marking breakpoints and the
// selection, the pipes and junction, the label, and the problem marker flush right.
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
	// The gutter: a breakpoint's mark, then the selection's.
	mark := common.NoBreak
	if m.broken != nil && r.Path != "" {
		mark = m.broken(r.Path)
	}
	paint := st.problem
	if mark == common.BreakOff {
		paint = st.muted
	}
	l.Add(mark.Glyph(), paint)
	if st.selected {
		l.Add("▸", st.text)
	} else {
		l.Add(" ", st.text)
	}
	for _, p := range r.prefix {
		l.AddWidth(p.text, p.width, st.tones[p.tone])
	}
	if r.folds && r.Kind != KindPlan {
		mark := "▾ "
		if d.folded[r.Path] {
			mark = "▸ "
		}
		l.Add(mark, st.strong)
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
			l.Add(common.ElideMiddle(tool, l.Room()), st.strong)
			return
		}
		id := r.Step.ID.Value
		if id == "" {
			id = "(no id)"
		}
		// What does not fit loses its middle, not its end, so that a
		// narrow tree still reads tracker__add_comment as track…comment.
		id, tool = common.ElidePair(id, tool, l.Room())
		l.Add(id, st.strong)
		if tool != "" {
			l.Add("  ", st.text)
			l.Add(tool, st.muted)
		}
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
