package runs

import (
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/stepwise-dev/stepwise/engine/record"
	"github.com/stepwise-dev/stepwise/tui/common"
	"github.com/stepwise-dev/stepwise/tui/format"
)

// The messages the panel sends the root, which owns the store and the
// tree: what the user asked to do with which run. Each carries full run
// ids.
type (
	// Open asks to show the run in the tree and the inspector.
	Open struct{ ID string }
	// Replay asks to replay the run.
	Replay struct{ ID string }
	// ReplayDebug asks to replay the run under the debugger.
	ReplayDebug struct{ ID string }
	// Diff asks to compare run Other against run Base, the one marked
	// first.
	Diff struct{ Base, Other string }
)

// Model is the runs panel: the earlier runs of a plan, newest first, one a
// line under a header of columns.
type Model struct {
	common.Common
	// Now is the time the panel reads "today" against, which the root sets
	// (to time.Now() as it opens the panel or refreshes the list), so that
	// the view stays a function of the model.
	Now time.Time

	common.Focusable
	common.ListPane[record.RunSummary]
	// marked is the id of the run marked as the base of a diff, empty for
	// none.
	marked string
	// shift is how many cells the columns after the run id are scrolled
	// left, so that a narrow panel shows what its rows cut off.
	shift int
}

// New returns an empty panel.
func New(c common.Common) Model {
	return Model{Common: c, ListPane: common.NewListPane[record.RunSummary](2, 3)}
}

// SetRuns shows a fresh listing, as store.Runs gives it. The selection and
// the diff mark stay on the runs they were on when those are still listed,
// so that a refresh after a run ends moves nothing under the user.
func (m *Model) SetRuns(list []record.RunSummary) {
	selected := ""
	if r, ok := m.Selected(); ok {
		selected = r.ID
	}
	cursor := 0
	marked := m.marked
	m.marked = ""
	for i, r := range list {
		if r.ID == selected {
			cursor = i
		}
		if r.ID == marked {
			m.marked = marked
		}
	}
	m.SetItems(list)
	m.Select(cursor)
}

// Marked returns the id of the run marked as a diff's base, empty when
// none is. Close clears a mark; with none it closes the panel.
func (m Model) Marked() string { return m.marked }

// SetSize sets the panel's outer size, border included. The columns
// scroll back to their start: a scroll kept from another width would cut
// them mid-value.
func (m *Model) SetSize(width, height int) {
	m.Common.SetSize(width, height)
	m.SetListHeight(height)
	m.shift = 0
}

// Update answers a key: the movement keys move the selection; Jump opens
// the selected run (Open), Replay replays it (Replay), ReplayDebug under the
// debugger (ReplayDebug); Diff marks it as a
// diff's base, or on another run asks for the diff of the two (Diff) and
// clears the mark, or on the marked run clears it; Close clears a mark,
// or with none closes the panel, as Quit does. Open, Replay and Diff
// close it too. A click selects the run under it, or closes the panel
// when it falls outside; the wheel scrolls.
func (m *Model) Update(msg tea.Msg) (common.Component, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		return m, m.key(msg)
	case tea.MouseClickMsg, tea.MouseWheelMsg:
		return m, m.PanelMouse(msg, m, m.Width, m.Height)
	}
	return m, nil
}

func (m *Model) key(msg tea.KeyPressMsg) tea.Cmd {
	if m.Move(m.Keys, msg) {
		return nil
	}
	switch {
	case key.Matches(msg, m.Keys.Collapse):
		m.shift = max(m.shift-shiftStep, 0)
		return nil
	case key.Matches(msg, m.Keys.Expand):
		m.shift = min(m.shift+shiftStep, m.maxShift())
		return nil
	case key.Matches(msg, m.Keys.Close) && m.marked != "":
		m.marked = ""
		return nil
	case key.Matches(msg, m.Keys.Quit, m.Keys.Close):
		return common.Close(m)
	}
	r, ok := m.Selected()
	if !ok {
		return nil
	}
	switch {
	case key.Matches(msg, m.Keys.Jump):
		return m.closeWith(Open{ID: r.ID})
	case key.Matches(msg, m.Keys.Replay):
		return m.closeWith(Replay{ID: r.ID})
	case key.Matches(msg, m.Keys.ReplayDebug):
		return m.closeWith(ReplayDebug{ID: r.ID})
	case key.Matches(msg, m.Keys.Diff):
		switch m.marked {
		case "":
			m.marked = r.ID
		case r.ID:
			m.marked = ""
		default:
			base := m.marked
			m.marked = ""
			return m.closeWith(Diff{Base: base, Other: r.ID})
		}
	}
	return nil
}

// closeWith closes the panel and asks the root for what was chosen.
func (m *Model) closeWith(msg tea.Msg) tea.Cmd {
	return common.CloseWith(m, msg)
}

// ShortHelp is the panel's keys: it takes every key but :, which opens
// the command line over it.
func (m *Model) ShortHelp() []key.Binding {
	k := m.Keys
	return []key.Binding{
		common.Short(k.Jump, "enter", "open"),
		common.Short(k.Replay, "y", "replay"),
		common.Short(k.ReplayDebug, "Y", "under the debugger"),
		common.Short(k.Diff, "d", "diff"),
		common.Short(k.Command, ":", "command"),
		common.Short(k.Close, "esc", "close"),
	}
}

// The columns of a row, in cells, after the gutter and the mark.
const (
	colStarted = 12 // "Nov 27 14:03"
	colStatus  = 13 // "○ interrupted"
	colMade    = 6  // "replay"
	colTime    = 6
	colHeld    = 6 // of the time, how long it waited at stops
	colSteps   = 5
	colTokens  = 6
	colCost    = 8
	colGap     = "  "
)

// shiftStep is how many cells a sideways key scrolls the columns.
const shiftStep = 8

// frozen is the cells of a row that never scroll sideways: the gutter,
// the diff mark, the run id and the gap after it.
const frozen = 3 + format.ShortIDLength + len(colGap)

// maxShift is how far the columns scroll left before the widest row's end
// shows.
func (m Model) maxShift() int {
	if m.Len() == 0 {
		return 0
	}
	widest := lipgloss.Width(m.header())
	for _, r := range m.Items() {
		widest = max(widest, lipgloss.Width(m.row(r, false)))
	}
	return max(widest-max(m.Width-2, 0), 0)
}

// scrolled is line as the panel shows it width wide: the frozen columns,
// then the rest from shift cells on, cut at the edge.
func (m Model) scrolled(line string, width int) string {
	shift := min(m.shift, m.maxShift())
	return common.Clip(ansi.Cut(line, 0, frozen)+ansi.Cut(line, frozen+shift, lipgloss.Width(line)), width)
}

// View draws the panel, border included, at exactly its size.
func (m Model) View() string {
	t := m.Theme
	inner := max(m.Width-2, 0)
	var lines []string
	if m.Len() == 0 {
		lines = append(lines, t.Muted.Render(" no earlier runs of this plan: "+m.Keys.Run.Help().Key+" runs it"))
	} else {
		lines = append(lines, t.Muted.Render(m.scrolled(m.header(), inner)))
		first, end := m.Visible()
		for i := first; i < end; i++ {
			lines = append(lines, m.renderRun(m.Items()[i], inner, i == m.Cursor()))
		}
	}
	title := t.PaneTitle("Runs", m.Focused())
	if n := m.Len(); n > 0 {
		title += t.Muted.Render(" " + common.Count(n, "run"))
	}
	if m.maxShift() > 0 {
		// The rows are cut: say how to see the rest.
		title += t.Muted.Render(" · " + m.Keys.Collapse.Help().Key + " " + m.Keys.Expand.Help().Key + " scroll")
	}
	footer := ""
	switch {
	case m.marked != "":
		footer = "◆ " + format.ShortID(m.marked) + ": " + m.Keys.Diff.Help().Key + " on another run diffs, " + m.Keys.Close.Help().Key + " unmarks"
	case m.Len() > 0:
		k := m.Keys
		footer = k.Jump.Help().Key + " open · " + k.Replay.Help().Key + "/" + k.ReplayDebug.Help().Key + " replay · " + k.Diff.Help().Key + " diff · " + k.Close.Help().Key + " close"
		if m.Overflows() {
			footer = common.Position(m.Cursor(), m.Len()) + " · " + footer
		}
	}
	return common.Frame(t, m.Width, m.Height, title, footer, m.Focused(), lines)
}

// header names the columns, aligned as renderRun aligns them.
func (m Model) header() string {
	return "   " + padRight("run", format.ShortIDLength) + colGap + padRight("started", colStarted) + colGap +
		padRight("status", colStatus) + colGap + pad("time", colTime) + colGap + pad("held", colHeld) + colGap + pad("steps", colSteps) +
		colGap + pad("tokens", colTokens) + colGap + pad("cost", colCost) + colGap + padRight("made", colMade) + colGap + "inputs"
}

// renderRun draws one run width wide, scrolled sideways as the panel is,
// the selection's background carried to the edge.
func (m Model) renderRun(r record.RunSummary, width int, selected bool) string {
	line := m.scrolled(m.row(r, selected), width)
	if selected {
		st := m.Theme.Text.Inherit(m.Theme.RowStyle(selected, m.Focused()))
		line += st.Render(strings.Repeat(" ", max(width-lipgloss.Width(line), 0)))
	}
	return line
}

// row is one run whole: gutter, diff mark, id, start, outcome, time, the
// part of it held at stops, steps, tokens, cost, how it was made and inputs.
func (m Model) row(r record.RunSummary, selected bool) string {
	t := m.Theme
	base := t.RowStyle(selected, m.Focused())
	gutter := " "
	if selected {
		gutter = "▸"
	}
	st := func(s lipgloss.Style) lipgloss.Style { return s.Inherit(base) }
	mark := " "
	if r.ID == m.marked {
		mark = "◆"
	}
	glyph, word, outcomeStyle := outcome(t, r.Status, r.Interrupted)
	if r.Decided > 0 {
		word += " " + format.MarkDecided
	}
	var b strings.Builder
	b.WriteString(st(t.Text).Render(gutter))
	b.WriteString(st(t.Glyph).Render(mark) + st(t.Text).Render(" "))
	b.WriteString(st(t.Strong).Render(padRight(format.ShortID(r.ID), format.ShortIDLength)))
	b.WriteString(st(t.Text).Render(colGap + padRight(format.Started(r.StartedAt, m.Now), colStarted) + colGap))
	b.WriteString(st(outcomeStyle).Render(glyph) + st(t.Text).Render(padRight(" "+word, colStatus-1)+colGap))
	held := ""
	if r.Held >= time.Millisecond {
		held = format.Duration(r.Held)
	}
	b.WriteString(st(t.Text).Render(pad(format.RunTime(r.Duration), colTime) + colGap + pad(held, colHeld) + colGap + pad(strconv.Itoa(r.StepsExecuted), colSteps) +
		colGap + pad(format.Tokens(r.Usage.Tokens), colTokens) + colGap + pad(format.Spend(r.Usage.Calls, r.Usage.CostUSD), colCost) + colGap))
	made := string(r.Made)
	if made == "" {
		made = "-" // recorded before the store kept it
	}
	b.WriteString(st(t.Muted).Render(padRight(made, colMade)))
	if len(r.Inputs) > 0 && string(r.Inputs) != "null" {
		// What the run ran with, as compact JSON: runs of one plan
		// differ most by it.
		b.WriteString(st(t.Text).Render(colGap) + st(t.Muted).Render(string(r.Inputs)))
	}
	return b.String()
}
