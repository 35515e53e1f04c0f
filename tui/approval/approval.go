// Package approval is the prompt a gated run puts up at a tool call it
// holds: the call's tool, path and arguments, and the three answers, to
// approve it, deny it or edit its arguments first. It decides nothing
// itself: it tells the root which answer was chosen.
package approval

import (
	"encoding/json"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/tui/common"
)

// Answer is what the prompt tells the root.
type Answer int

// The answers.
const (
	Approve Answer = iota
	Deny
	// Edit asks for the arguments to be edited before the call runs.
	Edit
)

// Chosen is the message the prompt sends when an answer is chosen; it
// closes itself at the same time.
type Chosen struct{ Answer Answer }

// Model is the approval prompt.
type Model struct {
	common.Common
	snap *debugger.Snapshot
	// offset is the first line of the call shown: arguments longer than
	// the prompt scroll, so that the whole call is read before it is
	// approved.
	offset int
}

// New returns a closed prompt.
func New(c common.Common) Model { return Model{Common: c} }

// Open shows the call held at snap.
func (m *Model) Open(snap *debugger.Snapshot) { m.snap, m.offset = snap, 0 }

// SetSize sets the prompt's outer size, border included.
func (m *Model) SetSize(width, height int) { m.Common.SetSize(width, height) }

// ShortHelp is the prompt's answers.
func (m *Model) ShortHelp() []key.Binding {
	return []key.Binding{m.Keys.Approve, m.Keys.Deny, m.Keys.EditArgs, m.Keys.Close}
}

// Update answers the prompt's keys; Close leaves the call held, to be
// answered later (or from the command line).
func (m *Model) Update(msg tea.Msg) (common.Component, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return m, nil
	}
	choose := func(a Answer) tea.Cmd { return common.CloseWith(m, Chosen{a}) }
	switch {
	case key.Matches(k, m.Keys.Approve):
		return m, choose(Approve)
	case key.Matches(k, m.Keys.Deny):
		return m, choose(Deny)
	case key.Matches(k, m.Keys.EditArgs):
		return m, choose(Edit)
	case key.Matches(k, m.Keys.Close):
		return m, common.Close(m)
	}
	lines, room := len(m.callLines()), m.callRoom()
	if delta, ok := m.Keys.Movement(k, max(room-1, 1), lines); ok {
		m.offset = min(max(m.offset+delta, 0), max(lines-room, 0))
	}
	return m, nil
}

// callLines are the call and its arguments, pretty-printed and wrapped to
// the prompt's width: a long string reads whole, its continuation
// indented under its start.
func (m *Model) callLines() []string {
	if m.snap == nil {
		return nil
	}
	inner := max(m.Width-2, 1)
	lines := common.Wrap("run "+m.snap.Tool+" at "+m.snap.Path+" with:", inner, "/_")
	lines = append(lines, "")
	args, _ := json.MarshalIndent(m.snap.Input, "", "  ")
	for _, l := range strings.Split(string(args), "\n") {
		indent := strings.Repeat(" ", len(l)-len(strings.TrimLeft(l, " "))+2)
		for i, w := range common.Wrap(l, max(inner-len(indent), 8), ",/_-") {
			if i > 0 {
				w = indent + w
			}
			lines = append(lines, w)
		}
	}
	return lines
}

// callRoom is the lines the call has: the prompt's body less the answers'
// line.
func (m *Model) callRoom() int { return max(m.Height-3, 0) }

// View draws the prompt: what is called where, with which arguments, and
// the answers.
func (m *Model) View() string {
	t := m.Theme
	inner, room := max(m.Width-2, 0), m.callRoom()
	all := m.callLines()
	offset := min(m.offset, max(len(all)-room, 0))
	lines := all[offset:]
	var answers []string
	for _, b := range m.ShortHelp() {
		answers = append(answers, b.Help().Key+" "+b.Help().Desc)
	}
	lines = common.Block(lines, inner, room)
	lines = append(lines, common.Fit(strings.Join(answers, " · "), inner))
	footer := ""
	if len(all) > room {
		// More than the prompt holds: where it stands, and how to see
		// the rest.
		footer = common.Position(offset+room-1, len(all)) + " · j/k scroll"
	}
	return common.Frame(t, m.Width, m.Height, t.PaneTitle("approve this tool call?", true), footer, true, lines)
}
