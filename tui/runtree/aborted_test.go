package runtree_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/stepwise-dev/stepwise/debugger/workspace"
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/tui/live"
	"github.com/stepwise-dev/stepwise/tui/live/livetest"
)

// TestFilterAborted runs a map of two items at once through the real
// engine: the first fails while the second is held at its step stop, and
// the second is aborted there. The filter aborted keeps the aborted item (and the map above
// it), failed keeps both items, each drawn failed.
func TestFilterAborted(t *testing.T) {
	dir, ws := livetest.Project(t, map[string]string{"plans/p.yaml": `
identifier: halt
steps:
  - id: E1
    tool_name: map
    input:
      over: [{}, { n: 2 }]
      concurrency: 2
      do:
        tool_name: builtin__reshape
        input: { shape: { n: "{{item.n}}" } }
`})
	plan := livetest.Plan(t, dir, "plans/p.yaml")
	var mu sync.Mutex
	tr := live.New(plan)
	sink := engine.SinkFunc(func(e engine.Event) {
		mu.Lock()
		tr.Apply(e)
		mu.Unlock()
	})
	// Each item waits at its stop for the other: the second is under way
	// when the first fails, and is aborted once it has.
	reached, failed := make(chan struct{}), make(chan struct{})
	hook := func(_ context.Context, st *engine.Stop) engine.Decision {
		switch {
		case st.Kind == engine.StopError && st.Path == "E1/do.0":
			<-reached
			close(failed)
		case st.Kind == engine.StopStep && st.Path == "E1/do.1":
			close(reached)
			<-failed
			return engine.Decision{Action: engine.Abort}
		}
		return engine.Decision{}
	}
	if _, err := ws.Run(context.Background(), plan, nil, workspace.RunOptions{Sinks: []engine.Sink{sink}, Hook: hook}); err != nil {
		t.Fatal(err)
	}
	for query, want := range map[string]string{
		"aborted": "▾ ✗ ⟳ E1 map|└── ■ do.1 builtin__reshape",
		"failed":  "▾ ✗ ⟳ E1 map|├── ✗ do.0 builtin__reshape|└── ■ do.1 builtin__reshape",
	} {
		m := newPane(tr, 48, 12, false)
		m.StartFilter()
		m = typeInto(m, text(query)...)
		m = typeInto(m, keyEnter)
		var got []string
		for _, line := range screen(m)[1:] {
			if strings.HasPrefix(line, "╰") {
				break // the pane's bottom edge
			}
			// The names, without the gutter's marks and the time's column.
			if f := strings.Fields(strings.Trim(line, "│›")); len(f) > 1 {
				got = append(got, strings.TrimLeft(strings.Join(f[:len(f)-1], " "), "›"))
			}
		}
		if strings.Join(got, "|") != want {
			t.Errorf("/%s shows %q, want %q", query, strings.Join(got, "|"), want)
		}
	}
}
