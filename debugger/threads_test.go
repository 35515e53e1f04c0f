package debugger

import (
	"context"
	"testing"
	"time"

	"github.com/stepwise-dev/stepwise/engine"
)

// TestSwitchThread holds both items of a map, switches between them (to a
// thread waiting for the run to resume, back to the one first shown, and
// to the other again), injects at the chosen one, and checks the other
// goes on from its stop.
func TestSwitchThread(t *testing.T) {
	s := newSession(t, `
identifier: two
steps:
  - id: E1
    tool_name: map
    input:
      over: [a, b]
      concurrency: 2
      do:
        tool_name: builtin__reshape
        input: { shape: { v: "{{item}}" } }
output: { results: "{{E1.results}}" }
`, "")
	s.Table().Set("E1/do.*", []engine.StopKind{engine.StopStep}, nil)
	st := s.Start(context.Background(), nil)
	first := st.Stop.Thread
	other := map[string]string{"E1/do.0": "E1/do.1", "E1/do.1": "E1/do.0"}[first]
	if other == "" {
		t.Fatalf("first stop %s in %s", where(st), first)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if st := s.Threads(); len(st) == 3 && st[1].Held && st[2].Held {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the other item was never held: %+v", s.Threads())
		}
	}
	for _, id := range []string{other, first, other} {
		st, err := s.SwitchThread(id)
		if err != nil || st.Reason != ReasonThread || st.Stop.Thread != id || st.Stop.Path != id {
			t.Fatalf("switch to %s: %v, %s (%s)", id, err, where(st), st.Reason)
		}
		if st.Threads[0].ID != id || len(st.Threads) != 2 {
			t.Errorf("held threads at %s: %+v", id, st.Threads)
		}
	}
	st = do(t, s, Command{Decision: engine.Decision{Action: engine.Inject, Value: "injected"}, Move: Continue})
	want := map[string]string{"E1/do.0": `{"results":["injected",{"v":"b"}]}`, "E1/do.1": `{"results":[{"v":"a"},"injected"]}`}[other]
	if got := resultJSON(t, st); got != want {
		t.Errorf("output %s, want %s", got, want)
	}
}
