// Package commontest helps the tests of the workbench's components read
// what their commands say, the way the program would deliver it.
package commontest

import (
	tea "charm.land/bubbletea/v2"

	"github.com/stepwise-dev/stepwise/tui/common"
)

// Messages runs cmd and returns its messages: one, or those of every
// command of a batch, in the batch's order; none for a nil command. A
// close with an answer is the close, then the answer, as the root takes
// them.
func Messages(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	msg := cmd()
	if c, ok := msg.(common.CloseOverlay); ok && c.Then != nil {
		return []tea.Msg{common.CloseOverlay{Overlay: c.Overlay}, c.Then}
	}
	batch, ok := msg.(tea.BatchMsg)
	if !ok {
		return []tea.Msg{msg}
	}
	var out []tea.Msg
	for _, c := range batch {
		out = append(out, Messages(c)...)
	}
	return out
}
