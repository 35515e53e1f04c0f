package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
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
		{"the plan tree marks a body's step for a breakpoint on one item", func(b *bench) {
			b.press(command("break E1/do.1")...)
			b.press(keyBottom)
		}, nil, func(t *testing.T, b *bench) {
			if l := rowLine(b, "user__lookup"); !strings.Contains(l, "●") {
				t.Errorf("the map's body step has no mark: %q", l)
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

// longAskPlan asks a question longer than an 80-column title.
const longAskPlan = `identifier: long_ask
name: Long ask
description: Asks a long question.
steps:
  - id: Q0
    tool_name: ask
    input:
      prompt: "Three issues look like duplicates of CHK-101; should the triage close them all, or keep the newest open for the customer?"
      output_schema: { type: object, required: [close], properties: { close: { type: boolean } } }
      when_unanswered: default
      default: { close: false }
`

// TestAskQuestionWhole checks an ask's question shows whole in the answer
// editor at 80 columns, wrapped above the value, not cut in its title.
func TestAskQuestionWhole(t *testing.T) {
	b := newBenchWithPlan(t, "long_ask", longAskPlan)
	b.update(tea.WindowSizeMsg{Width: 80, Height: 24})
	b.press(keyRun, keySkip)
	wantOverlay(t, b, overlayEditor)
	words := strings.Join(strings.Fields(b.screen()), " ")
	for _, part := range []string{"answer the question at Q0", "Q0 asks: Three issues look like duplicates", "keep the newest open for the customer?", `"close": false`} {
		if !strings.Contains(words, part) {
			t.Errorf("the editor does not show %q:\n%s", part, b.screen())
		}
	}
	checkScreen(t, b.m, 80, 24)
}
