package tui

import (
	"strings"
	"testing"
)

// rowLine is the tree pane's row that shows text, "" when none does: the
// part of a line of the screen inside the tree's border.
func rowLine(b *bench, text string) string {
	for _, l := range strings.Split(b.screen(), "\n") {
		if parts := strings.Split(l, "┃"); len(parts) > 2 && strings.Contains(parts[1], text) {
			return parts[1]
		}
	}
	return ""
}

// TestBreakpointMarks checks a breakpoint's ● goes on the rows whose own
// path it matches: on the run tree a breakpoint on an agent's round marks
// the round and not the agent's step; on the plan tree, which has no
// rows for rounds, it marks the step; and the selection's ▸ shows beside
// a ● on the same row.
func TestBreakpointMarks(t *testing.T) {
	runCases(t, []benchCase{
		{"the run tree marks the round, not its step", func(b *bench) {
			b.press(command("break E2/agent.2")...)
			b.runToEnd(docFlow)
		}, nil, func(t *testing.T, b *bench) {
			if l := rowLine(b, "agent.2 "); !strings.Contains(l, "●") {
				t.Errorf("the round has no mark: %q", l)
			}
			if l := rowLine(b, "E2  agent"); strings.Contains(l, "●") {
				t.Errorf("the agent's step is marked: %q", l)
			}
		}},
		{"the plan tree marks the step of a round, beside the selection", func(b *bench) {
			b.press(keyBottom, keyUp)
			b.press(command("break E2/agent.2")...)
		}, nil, func(t *testing.T, b *bench) {
			if l := rowLine(b, "E2  agent"); !strings.Contains(l, "●▸") {
				t.Errorf("the selected step shows not both marks: %q", l)
			}
		}},
		{"the plan tree marks an unselected row", func(b *bench) {
			b.press(command("break E0")...)
			b.press(keyBottom)
		}, nil, func(t *testing.T, b *bench) {
			if l := rowLine(b, "E0  builtin__reshape"); !strings.Contains(l, "● ") || strings.Contains(l, "▸") {
				t.Errorf("E0's row: %q", l)
			}
		}},
	})
}
