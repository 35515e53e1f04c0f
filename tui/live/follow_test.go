package live_test

import (
	"strings"
	"testing"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/tui/live"
	"github.com/stepwise-dev/stepwise/tui/live/livetest"
)

// TestNewest applies a real run's events one by one: after each start,
// the newest row is the node that started or one under it; while
// anything runs it runs; a collapsed node stands for what runs in it;
// and once the run is over it is the step that started last.
func TestNewest(t *testing.T) {
	plan, events := livetest.Run(t, map[string]string{"plans/p.yaml": `
identifier: mapped
steps:
  - id: E1
    tool_name: map
    input:
      over: [1, 2, 3]
      do:
        - id: A
          tool_name: builtin__reshape
          input: { shape: { x: "{{item}}" } }
        - id: B
          tool_name: builtin__reshape
          input: { shape: {} }
  - id: E2
    tool_name: builtin__reshape
    input: { shape: {} }
`})
	tr := live.New(plan)
	started := 0
	for _, e := range events {
		tr.Apply(e)
		path, ok := tr.Newest()
		if !ok {
			continue
		}
		if n, _ := tr.Node(path); n.Status != live.Running && tr.Totals().Running > 0 {
			t.Fatalf("after %s %s: newest running %s is %s", e.Kind, e.Path, path, n.Status)
		}
		if e.Kind == engine.EventStepStart {
			started++
			if path != e.Path && !strings.HasPrefix(path, e.Path+"/") {
				t.Errorf("after %s starts, the newest running row is %s", e.Path, path)
			}
			if top, _, _ := strings.Cut(e.Path, "/"); top != e.Path {
				tr.SetCollapsed(top, true)
				if got, _ := tr.Newest(); got != top {
					t.Errorf("with %s collapsed, the newest running row is %s", top, got)
				}
				tr.SetCollapsed(top, false)
			}
		}
	}
	if started < 3 {
		t.Fatalf("only %d steps started", started)
	}
	if path, _ := tr.Newest(); path != "E2" {
		t.Errorf("the run is over: the newest row is %s, want E2", path)
	}
}
