// Package breakpoints is the breakpoints panel: every breakpoint of the
// plan, one a row (on or off, id, pattern, kinds, condition, hits, and
// why it can never stop or its condition failed), under
// a line saying whether the run breaks on error. The session owns the
// breakpoints, so the panel changes nothing itself: a key sends an Action
// that the root applies to the session, and the root hands the result
// back with SetBreakpoints.
package breakpoints

import (
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/tui/common"
)

// Action is what the user asked of the panel, for the root to apply to the
// session: turn breakpoint ID on or off (Enable), remove it (Delete), or
// turn break on error on or off (BreakOnError, ID unused).
type Action struct {
	ID           int
	Enable       *bool
	Delete       bool
	BreakOnError *bool
}

// Empty is what the panel says when there are no breakpoints: how to set
// one.
const Empty = "no breakpoints: b on a row of the tree, or :break PATTERN [KIND...] [if VALUE OP TO]"

// Model is the breakpoints panel.
type Model struct {
	common.Common
	common.Focusable
	breakOnError bool
	common.ListPane[debugger.Breakpoint]
}

// New returns an empty panel.
func New(c common.Common) Model {
	return Model{Common: c, ListPane: common.NewListPane[debugger.Breakpoint](2, 3)}
}

// SetBreakpoints shows the session's breakpoints and its break on error
// setting. The selection stays on the breakpoint it was on while that one
// is still there.
func (m *Model) SetBreakpoints(bps []debugger.Breakpoint, breakOnError bool) {
	selected, had := m.Selected()
	cursor := m.Cursor()
	m.breakOnError = breakOnError
	if had {
		for i, b := range bps {
			if b.ID == selected.ID {
				cursor = i
				break
			}
		}
	}
	m.SetItems(bps)
	m.Select(cursor)
}

// Breakpoints returns the breakpoints shown.
func (m Model) Breakpoints() []debugger.Breakpoint { return m.Items() }

// SetSize sets the panel's outer size, border included.
func (m *Model) SetSize(width, height int) {
	m.Common.SetSize(width, height)
	m.SetListHeight(height)
}

// Update moves the selection on the movement keys and the wheel, selects
// the breakpoint clicked, turns Toggle, Delete and BreakError into
// Actions, and closes on Quit, Close or a click outside.
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
	case key.Matches(msg, m.Keys.Quit, m.Keys.Close):
		return common.Close(m)
	case key.Matches(msg, m.Keys.BreakError):
		on := !m.breakOnError
		return common.Send(Action{BreakOnError: &on})
	case key.Matches(msg, m.Keys.Toggle):
		if b, ok := m.Selected(); ok {
			on := !b.Enabled
			return common.Send(Action{ID: b.ID, Enable: &on})
		}
	case key.Matches(msg, m.Keys.Delete):
		if b, ok := m.Selected(); ok {
			return common.Send(Action{ID: b.ID, Delete: true})
		}
	}
	return nil
}

// ShortHelp is the panel's keys: it takes every key but :, which opens
// the command line over it.
func (m *Model) ShortHelp() []key.Binding {
	k := m.Keys
	return []key.Binding{
		common.Short(k.Toggle, "space", "on/off"),
		common.Short(k.Delete, "D", "clear"),
		common.Short(k.BreakError, "x", "break on error"),
		common.Short(k.Command, ":", "command"),
		common.Short(k.Close, "esc", "close"),
	}
}

// View draws the panel, border included, at exactly its size.
func (m Model) View() string {
	t := m.Theme
	inner := max(m.Width-2, 0)
	state := "off"
	if m.breakOnError {
		state = "on"
	}
	head := common.NewLine(inner)
	head.Add(" break on error: ", common.PaintOf(t.Muted))
	head.Add(state, common.PaintOf(t.Strong))
	head.Add(" ("+m.Keys.BreakError.Help().Key+")", common.PaintOf(t.Muted))
	lines := []string{head.String()}

	if m.Len() == 0 {
		for _, l := range common.Wrap(Empty, max(inner-1, 1), "") {
			lines = append(lines, t.Muted.Render(" "+l))
		}
	}
	cols := m.columns(inner)
	first, end := m.Visible()
	for i := first; i < end; i++ {
		lines = append(lines, m.renderRow(m.Items()[i], cols, inner, i == m.Cursor()))
	}
	if b, ok := m.Selected(); ok {
		// A row cuts why its breakpoint never stops, or why its
		// condition failed: the room under the rows says it whole for
		// the selected one.
		var why []string
		for _, problem := range []string{b.Unmatched, b.UnknownSteps, b.ConditionError} {
			if problem != "" {
				why = append(why, common.Wrap("✗ "+strconv.Itoa(b.ID)+" "+b.Pattern+": "+problem, max(inner-2, 8), "/_")...)
			}
		}
		if room := max(m.Height-2, 0) - len(lines) - 1; len(why) > 0 && len(why) <= room {
			lines = append(lines, "")
			for _, l := range why {
				lines = append(lines, " "+t.Problem.Render(l))
			}
		}
	}

	title := t.PaneTitle("Breakpoints", m.Focused())
	if n := m.Len(); n > 0 {
		title += t.Muted.Render(" " + strconv.Itoa(n))
	}
	footer := ""
	if m.Overflows() {
		footer = common.Position(m.Cursor(), m.Len())
	} else if m.Focused() && m.Len() > 0 {
		footer = t.Muted.Render(m.Keys.Toggle.Help().Key + " on/off · " + m.Keys.Delete.Help().Key + " clear")
	}
	return common.Frame(t, m.Width, m.Height, title, footer, m.Focused(), lines)
}

// columns are the widths rows align to: the widest id, and the widest
// pattern up to half the panel.
type columns struct{ id, pattern int }

func (m Model) columns(inner int) columns {
	var c columns
	for _, b := range m.Items() {
		c.id = max(c.id, len(strconv.Itoa(b.ID)))
		c.pattern = max(c.pattern, common.TextWidth(b.Pattern))
	}
	c.pattern = min(c.pattern, max(inner/2, 8))
	return c
}

// renderRow draws "▸● 3  E1/do.*/A  step  if {{item}} eq c      2 hits", cut
// to width. The mark, not colour, says whether the breakpoint is on; a
// breakpoint that is off is drawn muted as well.
func (m Model) renderRow(b debugger.Breakpoint, cols columns, width int, selected bool) string {
	t := m.Theme
	base, text, muted, strong := t.Text, t.Text, t.Muted, t.Strong
	if !b.Enabled {
		text, strong = t.Muted, t.Muted
	}
	gutter := " "
	if selected {
		gutter = "▸"
		base = t.RowStyle(true, m.Focused())
		text, muted, strong = text.Inherit(base), muted.Inherit(base), strong.Inherit(base)
	}
	mark := "●"
	if !b.Enabled {
		mark = "○"
	}
	hits := hitCount(b.Hits)
	// The text stops a cell short of the hit count, which keeps the right
	// edge.
	l := common.NewLine(max(width-common.TextWidth(hits)-1, 0))
	l.Add(gutter+mark+" ", common.PaintOf(strong))
	l.Add(pad(strconv.Itoa(b.ID), cols.id, true)+"  ", common.PaintOf(strong))
	l.Add(pad(common.Clip(b.Pattern, cols.pattern), cols.pattern, false)+" ", common.PaintOf(text))
	for _, k := range b.Kinds {
		l.Add(" "+string(k), common.PaintOf(muted))
	}
	if b.Condition != nil {
		l.Add("  if ", common.PaintOf(muted))
		l.Add(b.Condition.String(), common.PaintOf(text))
	}
	for _, problem := range []string{b.Unmatched, b.UnknownSteps, b.ConditionError} {
		if problem != "" {
			l.Add("  ✗ "+problem, common.PaintOf(m.Theme.Problem.Inherit(base)))
		}
	}
	l.PadTo(width-common.TextWidth(hits), common.PaintOf(base))
	return l.String() + muted.Render(hits)
}

func hitCount(n int) string {
	if n == 1 {
		return "1 hit"
	}
	return strconv.Itoa(n) + " hits"
}

// pad widens s to w cells, on the left for numbers.
func pad(s string, w int, left bool) string {
	gap := strings.Repeat(" ", max(w-common.TextWidth(s), 0))
	if left {
		return gap + s
	}
	return s + gap
}
