package runs

import (
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/record"
	"github.com/stepwise-dev/stepwise/tui/common"
	"github.com/stepwise-dev/stepwise/tui/format"
)

// DiffModel shows two runs compared step by step (debugger.Diff): a line
// for each run, then one row per step path saying what differs: the
// status, the result (how many places differ), the tokens and the time.
// The steps both runs ran alike are counted at the end, and shown dimmed
// on Toggle. Each row carries a mark (≠ differs, + only B ran it, − only A
// did, = the same), so that nothing is told by colour alone. The rows are
// a list, selected, clicked and scrolled as the runs panel's are; Jump
// opens the selected step into its values, each place its results differ
// with A's value beside B's, and Close goes back to the rows.
type DiffModel struct {
	common.Common
	common.Focusable
	common.ListPane[diffRow]

	a, b *record.RunDetail
	// all is every step compared, in debugger.Diff's order; differ and
	// same count its two kinds.
	all            []debugger.StepDiff
	differ, same   int
	countA, countB debugger.RunCounts
	showSame       bool
	// opened is the step shown with its values; nil while the rows are.
	opened *debugger.StepDiff
}

// diffRow is a row of the list: a step compared, or, last, the line that
// counts the steps hidden because they ran alike (or says there is no
// step to compare).
type diffRow struct {
	step    debugger.StepDiff
	summary bool
}

// diffHead is how many lines stand above the rows: a line per run and the
// columns' header.
const diffHead = 3

// NewDiff returns a diff view with no runs yet.
func NewDiff(c common.Common) DiffModel {
	return DiffModel{Common: c, ListPane: common.NewListPane[diffRow](1+diffHead, 2+diffHead)}
}

// SetRuns compares run b against run a, from the top, the same steps
// hidden.
func (m *DiffModel) SetRuns(a, b *record.RunDetail) {
	m.a, m.b = a, b
	m.all = debugger.Diff(a, b)
	m.countA, m.countB = debugger.Count(m.all)
	m.showSame, m.opened = false, nil
	m.differ, m.same = 0, 0
	for _, d := range m.all {
		if d.Same() {
			m.same++
		} else {
			m.differ++
		}
	}
	m.layout()
	m.Select(0)
}

// layout picks the rows to show: the differing steps first, so that a
// long run's few differences are where the view opens.
func (m *DiffModel) layout() {
	var rows []diffRow
	for _, d := range m.all {
		if !d.Same() {
			rows = append(rows, diffRow{step: d})
		}
	}
	if m.showSame {
		for _, d := range m.all {
			if d.Same() {
				rows = append(rows, diffRow{step: d})
			}
		}
	}
	if m.same > 0 && !m.showSame || len(m.all) == 0 {
		rows = append(rows, diffRow{summary: true})
	}
	m.SetItems(rows)
}

// Steps returns the steps compared, in debugger.Diff's order.
func (m DiffModel) Steps() []debugger.StepDiff { return m.all }

// Opened is the step shown with its values, if one is.
func (m DiffModel) Opened() (debugger.StepDiff, bool) {
	if m.opened == nil {
		return debugger.StepDiff{}, false
	}
	return *m.opened, true
}

// SetSize sets the view's outer size, border included.
func (m *DiffModel) SetSize(width, height int) {
	m.Common.SetSize(width, height)
	m.SetListHeight(height)
}

// Update moves the selection on the movement keys, selects the row
// clicked, scrolls on the wheel, shows or hides the same steps on Toggle,
// opens the selected step into its values on Jump (Close goes back), and
// closes on Quit, Close or a click outside.
func (m *DiffModel) Update(msg tea.Msg) (common.Component, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		switch {
		case m.opened != nil && key.Matches(msg, m.Keys.Close):
			m.opened = nil
		case m.opened != nil:
			// The values view has no list to move in.
		case key.Matches(msg, m.Keys.Jump):
			if r, ok := m.Selected(); ok && !r.summary {
				step := r.step
				m.opened = &step
			}
		case key.Matches(msg, m.Keys.Quit, m.Keys.Close):
			return m, common.Close(m)
		case m.Move(m.Keys, msg):
		case key.Matches(msg, m.Keys.Toggle) && m.same > 0:
			m.showSame = !m.showSame
			m.layout()
		}
	case tea.MouseClickMsg, tea.MouseWheelMsg:
		return m, m.PanelMouse(msg, m, m.Width, m.Height)
	}
	return m, nil
}

// ShortHelp is the view's keys: it takes every key but :, which opens
// the command line over it; the opened step's values have only their way
// back.
func (m *DiffModel) ShortHelp() []key.Binding {
	k := m.Keys
	if m.opened != nil {
		return []key.Binding{
			common.Short(k.Close, "esc", "back to the steps"),
			common.Short(k.Command, ":", "command"),
		}
	}
	out := []key.Binding{
		common.Short(k.Down, "j/k", "move"),
		common.Short(k.Jump, "enter", "values"),
	}
	if m.same > 0 {
		out = append(out, common.Short(k.Toggle, "space", "same steps"))
	}
	return append(out, common.Short(k.Command, ":", "command"), common.Short(k.Close, "esc", "close"))
}

// View draws the view, border included, at exactly its size.
func (m DiffModel) View() string {
	t := m.Theme
	title := t.PaneTitle("Diff", m.Focused())
	if m.a == nil || m.b == nil {
		return common.Frame(t, m.Width, m.Height, title, "", m.Focused(), []string{t.Muted.Render(" no runs to compare")})
	}
	title += t.Muted.Render(" A " + format.ShortID(m.a.ID) + " · B " + format.ShortID(m.b.ID))
	inner := max(m.Width-2, 0)
	if m.opened != nil {
		return common.Frame(t, m.Width, m.Height, title, m.Keys.Close.Help().Key+" back to the steps", m.Focused(), m.valueLines(inner))
	}
	cols := m.columns(inner)
	lines := []string{m.runLine("A", m.a), m.runLine("B", m.b), t.Muted.Render(cols.header())}
	first, end := m.Visible()
	for i := first; i < end; i++ {
		lines = append(lines, m.renderRow(m.Items()[i], cols, inner, i == m.Cursor()))
	}
	footer := strconv.Itoa(m.differ) + " differ · " + strconv.Itoa(m.same) + " same"
	if m.differ > 0 {
		footer += " · " + m.Keys.Jump.Help().Key + " shows the values"
	}
	switch toggle := m.Keys.Toggle.Help().Key; {
	case m.same > 0 && m.showSame:
		footer += " · " + toggle + " hides them"
	case m.same > 0:
		footer += " · " + toggle + " shows them"
	}
	return common.Frame(t, m.Width, m.Height, title, footer, m.Focused(), lines)
}

// runLine sums one run up: which, its id, how it ended, its steps, time,
// tokens and cost, the steps and tokens counted as the rows count them.
func (m DiffModel) runLine(which string, d *record.RunDetail) string {
	t := m.Theme
	c := m.countA
	if which == "B" {
		c = m.countB
	}
	glyph, word, style := outcome(t, d.Status, d.Interrupted)
	return t.Strong.Render(" "+which+" "+format.ShortID(d.ID)) + t.Text.Render("  ") + style.Render(glyph) +
		t.Text.Render(" "+word+"  "+common.Count(c.Steps, "step")+"  "+format.RunTime(d.Duration)+"  "+
			format.Tokens(c.Tokens)+" tokens  "+format.Spend(d.Usage.Calls, d.Usage.CostUSD))
}

// valueLines draws the opened step: the runs, the step and its statuses,
// then a row per place its results differ, A's value beside B's, each
// cut to its half of the width.
func (m DiffModel) valueLines(inner int) []string {
	t, d := m.Theme, m.opened
	lines := []string{m.runLine("A", m.a), m.runLine("B", m.b),
		t.Strong.Render(" "+d.Path) + t.Text.Render("  "+statusChange(*d))}
	if len(d.Changes) == 0 {
		return append(lines, t.Muted.Render(" the results are the same; the statuses differ"))
	}
	at := 2
	for _, c := range d.Changes {
		at = max(at, common.TextWidth(changePlace(c)))
	}
	at = min(at, inner/3)
	side := max((inner-at-1-2*len(colGap))/2, 4)
	lines = append(lines, t.Muted.Render(" "+padRight("at", at)+colGap+padRight("A", side)+colGap+"B"))
	for _, c := range d.Changes {
		place := changePlace(c)
		lines = append(lines, common.Clip(t.Strong.Render(" "+common.Fit(place, at))+t.Text.Render(colGap)+
			sideValue(t, c.A, c.Only == "b", side)+t.Text.Render(colGap)+sideValue(t, c.B, c.Only == "a", side), inner))
	}
	return lines
}

// changePlace names where in the results a change is: its keys and
// indices, or (all) for the whole result.
func changePlace(c debugger.ValueChange) string {
	if c.At == "" {
		return "(all)"
	}
	return c.At
}

// sideValue is one side of a change as JSON on one line, fitted to width;
// a dimmed – where that side has no value.
func sideValue(t *common.Theme, v any, none bool, width int) string {
	if none {
		return t.Muted.Render(padRight(absent, width))
	}
	return t.Text.Render(padRight(common.Fit(strings.Join(strings.Fields(engine.JSONText(v)), " "), width), width))
}

// diffColumns are the widths of a diff's columns, for one drawing.
type diffColumns struct {
	path, status, result int
}

const (
	diffTokens = 7
	diffTime   = 8
)

// columns sizes the path, status and result columns to what the rows
// hold, the path column giving way to the others in a narrow view.
func (m DiffModel) columns(inner int) diffColumns {
	c := diffColumns{path: 4, status: 6, result: 6}
	for _, r := range m.Items() {
		d := r.step
		c.path = max(c.path, common.TextWidth(d.Path))
		c.status = max(c.status, common.TextWidth(statusChange(d)))
		c.result = max(c.result, common.TextWidth(resultChange(d)))
	}
	fixed := 3 + 2 + c.status + 2 + c.result + 2 + diffTokens + 2 + diffTime
	c.path = max(min(c.path, inner-fixed), 4)
	return c
}

func (c diffColumns) header() string {
	return "   " + padRight("step", c.path) + colGap + padRight("status", c.status) + colGap +
		padRight("result", c.result) + colGap + pad("tokens", diffTokens) + colGap + pad("time", diffTime)
}

// renderRow draws one row, cut to width: the gutter marking the
// selection, then a step's mark, path, status change, result change and
// the token and time deltas, or the count of the steps that ran alike. A
// step both runs ran alike is drawn dimmed whole.
func (m DiffModel) renderRow(r diffRow, c diffColumns, width int, selected bool) string {
	t := m.Theme
	base := t.RowStyle(selected, m.Focused())
	st := func(s lipgloss.Style) lipgloss.Style { return s.Inherit(base) }
	gutter := " "
	if selected {
		gutter = "▸"
	}
	d := r.step
	var line string
	switch {
	case r.summary && len(m.all) == 0:
		line = st(t.Muted).Render(gutter + "neither run ran a step")
	case r.summary && m.differ == 0:
		line = st(t.Valid).Render(gutter+"= ") + st(t.Text).Render("all "+common.Count(m.same, "step")+" ran alike")
	case r.summary:
		line = st(t.Muted).Render(gutter + "= " + common.Count(m.same, "more step") + " ran alike")
	default:
		mark, markStyle := "≠", t.Problem
		switch {
		case d.Same():
			mark = "="
		case d.StatusA == "":
			mark, markStyle = "+", t.Valid
		case d.StatusB == "":
			mark, markStyle = "−", t.Problem
		}
		tokensText, timeText := "", format.MillisDelta(d.MsDelta)
		if d.TokensDelta != 0 {
			tokensText = format.Delta(d.TokensDelta)
		}
		if d.OnlyIn() != "" {
			// One run did not come to the step: nothing to compare.
			tokensText, timeText = "", ""
		}
		rest := colGap + padRight(statusChange(d), c.status) + colGap + padRight(resultChange(d), c.result) + colGap +
			pad(tokensText, diffTokens) + colGap + pad(timeText, diffTime)
		if d.Same() {
			line = st(t.Muted).Render(gutter + mark + " " + padRight(common.ElideMiddle(d.Path, c.path), c.path) + rest)
		} else {
			line = st(t.Text).Render(gutter) + st(markStyle).Render(mark) + st(t.Text).Render(" ") +
				st(t.Strong).Render(padRight(common.ElideMiddle(d.Path, c.path), c.path)) + st(t.Text).Render(rest)
		}
	}
	line = common.Clip(line, width)
	if selected {
		// Carry the selection's background to the edge of the view.
		line += st(t.Text).Render(strings.Repeat(" ", max(width-lipgloss.Width(line), 0)))
	}
	return line
}

// absent stands for a side that did not run a step, or has no result.
const absent = "–"

// statusChange is "ok → failed" where the statuses differ, one status
// where they do not; a side a person decided, or a replay or a fork
// reused, carries its mark ("ok ✎ → ok").
func statusChange(d debugger.StepDiff) string {
	a := marked(d.StatusA.String(), d.DecidedA, d.ReusedA)
	b := marked(d.StatusB.String(), d.DecidedB, d.ReusedB)
	if a == b {
		return a
	}
	return or(a) + " → " + or(b)
}

// marked is a status with the mark of how the step got its result.
func marked(status, decided, reused string) string {
	if m := format.Mark(decided, reused); m != "" && status != "" {
		return status + " " + m
	}
	return status
}

// resultChange is how many places the results differ at ("2 changes"),
// "same" where they do not, – where neither step has a result or one run
// alone ran the step (its mark, + or −, says which): a result one run
// alone has is no change.
func resultChange(d debugger.StepDiff) string {
	switch {
	case d.OnlyIn() != "", d.ResultA == nil && d.ResultB == nil:
		return absent
	case len(d.Changes) == 0:
		return "same"
	}
	return common.Count(len(d.Changes), "change")
}

func or(s string) string {
	if s == "" {
		return absent
	}
	return s
}
