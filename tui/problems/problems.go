// Package problems is the validation pane: the plan's problems and notes,
// one compiler-style line each, under a header that sums them up. Enter on
// one is the root's business (it moves the tree), which reads the selection
// here with Selected.
package problems

import (
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/tui/common"
)

// item is one line of the list.
type item struct {
	problem plans.Problem
	note    bool
}

// Model is the problems pane.
type Model struct {
	common.Common
	common.Focusable
	report plans.Report
	common.ListPane[item]
}

// New returns the pane showing report.
func New(c common.Common, report plans.Report) Model {
	m := Model{Common: c, ListPane: common.NewListPane[item](1, 2)}
	m.SetReport(report)
	return m
}

// SetReport shows another report (another plan's), from its first line.
func (m *Model) SetReport(r plans.Report) {
	m.report = r
	items := make([]item, 0, len(r.Problems)+len(r.Notes))
	for _, p := range r.Problems {
		items = append(items, item{problem: p})
	}
	for _, p := range r.Notes {
		items = append(items, item{problem: p, note: true})
	}
	m.SetItems(items)
	m.Select(0)
}

// Selected returns the selected problem or note, if there is any.
func (m Model) Selected() (plans.Problem, bool) {
	it, ok := m.ListPane.Selected()
	return it.problem, ok
}

// SetSize sets the pane's outer size, border included.
func (m *Model) SetSize(width, height int) {
	m.Common.SetSize(width, height)
	m.SetListHeight(height)
}

// Update moves the selection on the movement keys.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return m, nil
	}
	m.Move(m.Keys, k)
	return m, nil
}

// Summary sums the report up: "✓ valid" or "✗ N problems", and the notes.
func (m Model) Summary() string {
	t := m.Theme
	notes := len(m.report.Notes)
	var s string
	if n := len(m.report.Problems); n == 0 {
		s = t.Valid.Render("✓ valid")
	} else {
		s = t.Problem.Render("✗ " + common.Count(n, "problem"))
	}
	if notes > 0 {
		s += t.Muted.Render(" · " + common.Count(notes, "note"))
	}
	return s
}

// View draws the pane, border included, at exactly its size.
func (m Model) View() string {
	t := m.Theme
	inner := max(m.Width-2, 0)
	var lines []string
	if m.Len() == 0 {
		lines = append(lines, t.Muted.Render(" nothing to report"))
	}
	first, end := m.Visible()
	for i := first; i < end; i++ {
		lines = append(lines, m.renderItem(m.Items()[i], inner, i == m.Cursor()))
	}
	title := t.PaneTitle("Problems", m.Focused()) + " " + m.Summary()
	footer := ""
	if m.Overflows() {
		footer = common.Position(m.Cursor(), m.Len())
	}
	return common.Frame(t, m.Width, m.Height, title, footer, m.Focused(), lines)
}

// renderItem draws "✗ line:col step PATH: message" on one line, cut to width.
func (m Model) renderItem(it item, width int, selected bool) string {
	t := m.Theme
	base := t.RowStyle(selected, m.Focused())
	gutter := " "
	if selected {
		gutter = "▸"
	}
	st := func(s lipgloss.Style) lipgloss.Style { return s.Inherit(base) }
	mark, markStyle := "✗", t.Problem
	if it.note {
		mark, markStyle = "ℹ", t.Note
	}
	p := it.problem
	var b strings.Builder
	b.WriteString(st(t.Text).Render(gutter))
	b.WriteString(st(markStyle).Render(mark) + st(t.Text).Render(" "))
	if p.Pos.Line > 0 {
		b.WriteString(st(t.Muted).Render(strconv.Itoa(p.Pos.Line) + ":" + strconv.Itoa(p.Pos.Col) + " "))
	}
	if p.Path != "" {
		b.WriteString(st(t.Strong).Render("step "+p.Path) + st(t.Text).Render(": "))
	}
	b.WriteString(st(t.Text).Render(oneLine(p.Message)))
	line := common.Clip(b.String(), width)
	if selected {
		// Carry the selection's background to the edge of the pane.
		line += st(t.Text).Render(strings.Repeat(" ", max(width-lipgloss.Width(line), 0)))
	}
	return line
}

// oneLine folds a message onto one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
