package inspector_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stepwise-dev/stepwise/debugger/workspace"
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/chat"
	"github.com/stepwise-dev/stepwise/tui/inspector"
	"github.com/stepwise-dev/stepwise/tui/live"
	"github.com/stepwise-dev/stepwise/tui/live/livetest"
)

// longReply is prose long enough to wrap many times, with what breaks
// naive wrapping: wide characters, a word longer than a line, blank lines.
var longReply = strings.Repeat("The tracker lists the open issues by label; 漢字 mixed in, and a very-long-identifier-that-cannot-break-anywhere-at-all-in-forty-columns. ", 12) +
	"\n\nSecond paragraph.\n" + strings.Repeat("word ", 60)

// streamingReplies stream round 1's reasoning and text in pieces before a
// tool call; round 2 answers.
func streamingReplies() string {
	indent := func(s string) string { return "        " + strings.ReplaceAll(s, "\n", "\n        ") }
	return fmt.Sprintf(`
replies:
  - match: E1
    reply:
      reasoning: "First I list them, then I count them, then I answer."
      text: |-
%s
      tool_calls: [ { name: builtin__reshape, arguments: { shape: { n: 1 } } } ]
      delay_ms: 20
  - match: E1
    reply: { json: { count: 3 } }
`, indent(longReply))
}

// TestStreaming applies a real run's events one at a time, as the
// workbench does, and shows the round after each: the page laid out
// incrementally is the page laid out from scratch, and the cursor follows
// the reply's end until the user moves it.
func TestStreaming(t *testing.T) {
	p, ws := project(t, agentPlan, streamingReplies())
	rec := &livetest.Events{}
	if _, err := ws.Run(t.Context(), p, nil, workspace.RunOptions{Sinks: []engine.Sink{rec}}); err != nil {
		t.Fatal(err)
	}
	tr := live.New(p)
	follow := newModel(40, 12, true)
	tall := newModel(40, 400, true)
	tall.Blur() // no cursor mark, so pages compare
	deltas := 0
	moved := -1
	for _, e := range rec.All() {
		tr.Apply(e)
		if e.Path != "E1/agent.1" {
			continue
		}
		if _, ok := e.Payload.(chat.Delta); ok {
			deltas++
		}
		n, _ := tr.Node("E1/agent.1")
		follow.Show(n, nil)
		tall.Show(n, nil)
		fresh := newModel(40, 400, true)
		fresh.Blur()
		fresh.Show(n, nil)
		fresh.SelectTab(tall.Tab())
		if got, want := tall.View(), fresh.View(); got != want {
			t.Fatalf("after %d deltas the page laid out as it streamed differs from one laid out at once:\n%s\nwant:\n%s", deltas, body(tall), body(fresh))
		}
		switch {
		case deltas == 4:
			// The user reads back: the cursor stays where they put it.
			press(&follow, keyUp, keyUp)
			moved = follow.Cursor()
		case moved >= 0:
			if follow.Cursor() != moved {
				t.Fatalf("the cursor moved from %d to %d while the user read back", moved, follow.Cursor())
			}
		default:
			if follow.Cursor() != follow.Len()-1 {
				t.Fatalf("after %d deltas the cursor is on line %d of %d, not following the end", deltas, follow.Cursor(), follow.Len())
			}
		}
	}
	if deltas < 6 {
		t.Fatalf("the reply came in %d deltas; the test needs it streamed", deltas)
	}
	inOrder(t, body(tall), "Reply  finish tool_calls", "First I list them", "The tracker lists", "Second paragraph.", "word word")
	if tall.Tab() != inspector.TabModel {
		t.Errorf("the round shows %s", tall.Tab())
	}
}

// TestShowUnchanged: showing a node again with nothing new costs no
// layout, which allocations would give away.
func TestShowUnchanged(t *testing.T) {
	tr := run(t, agentPlan, agentReplies)
	m := newModel(80, 30, true)
	n, _ := tr.Node("E1/agent.2")
	m.Show(n, nil)
	if allocs := testing.AllocsPerRun(100, func() { m.Show(n, nil) }); allocs != 0 {
		t.Errorf("Show of an unchanged node allocates %.0f times", allocs)
	}
}
