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
}

// New returns a closed prompt.
func New(c common.Common) Model { return Model{Common: c} }

// Open shows the call held at snap.
func (m *Model) Open(snap *debugger.Snapshot) { m.snap = snap }

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
	return m, nil
}

// View draws the prompt: what is called where, with which arguments, and
// the answers.
func (m *Model) View() string {
	t := m.Theme
	inner, height := max(m.Width-2, 0), max(m.Height-2, 0)
	var lines []string
	if m.snap != nil {
		lines = append(lines, "run "+m.snap.Tool+" at "+m.snap.Path+" with:", "")
		args, _ := json.MarshalIndent(m.snap.Input, "", "  ")
		lines = append(lines, strings.Split(string(args), "\n")...)
	}
	var answers []string
	for _, b := range m.ShortHelp() {
		answers = append(answers, b.Help().Key+" "+b.Help().Desc)
	}
	lines = common.Block(lines, inner, max(height-1, 0))
	lines = append(lines, common.Fit(strings.Join(answers, " · "), inner))
	return common.Frame(t, m.Width, m.Height, t.PaneTitle("approve this tool call?", true), "", true, lines)
}
