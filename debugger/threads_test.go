package debugger

import (
	"context"
	"strings"
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
	// The end of a thread's id, by which the threads pane names it
	// (do.0 for E1/do.0), names it too.
	for _, id := range []string{first, other} {
		short := strings.TrimPrefix(id, "E1/")
		if st, err := s.SwitchThread(short); err != nil || st.Stop.Thread != id {
			t.Fatalf("switch to %s: %v, %s", short, err, where(st))
		}
	}
	st = do(t, s, Command{Decision: engine.Decision{Action: engine.Inject, Value: "injected"}, Move: Continue})
	want := map[string]string{"E1/do.0": `{"results":["injected",{"v":"b"}]}`, "E1/do.1": `{"results":[{"v":"a"},"injected"]}`}[other]
	if got := resultJSON(t, st); got != want {
		t.Errorf("output %s, want %s", got, want)
	}
}

// TestSwitchThreadAwayFromAnAsk: an ask a thread command left is asked
// again once the run goes on, not passed unanswered. Item 0 asks at once;
// item 1 naps a second first, so it is held at its nap's result while item
// 0's ask is shown.
func TestSwitchThreadAwayFromAnAsk(t *testing.T) {
	s := newSessionWith(t, `
identifier: asks
steps:
  - id: E1
    tool_name: map
    input:
      over: [0, 1]
      concurrency: 2
      do:
        - id: N
          tool_name: user__nap
          input: { seconds: "{{item}}" }
        - id: Q
          tool_name: ask
          input:
            prompt: "{{item}}?"
            output_schema: { type: object, required: [ok], properties: { ok: { type: boolean } } }
output: { results: "{{E1.results}}" }
`, "", map[string]string{".stepwise/tools/nap.yaml": `
name: nap
description: Sleeps.
kind: exec
command: sh
args: ["-c", "sleep {{input.seconds}}; echo '{}'"]
output: json
input_schema: { type: object, required: [seconds], properties: { seconds: { type: integer } } }
`})
	st := s.Start(context.Background(), nil)
	if st.Reason != ReasonAsk || st.Stop.Thread != "E1/do.0" {
		t.Fatalf("first stop %s (%s)", where(st), st.Reason)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if st := s.Threads(); len(st) == 3 && st[2].Held {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("item 1 was never held: %+v", s.Threads())
		}
	}
	st, err := s.SwitchThread("E1/do.1")
	if err != nil || where(st) != "result E1/do.1/N" {
		t.Fatalf("switch: %v %s", err, where(st))
	}
	var asked []string
	for i := 0; !st.Finished && i < 10; i++ {
		cmd := Command{Move: Continue}
		if st.Reason == ReasonAsk {
			asked = append(asked, st.Stop.Thread)
			cmd.Decision = engine.Decision{Action: engine.Answer, Value: map[string]any{"ok": st.Stop.Thread == "E1/do.0"}}
		}
		st = do(t, s, cmd)
	}
	got := resultJSON(t, st)
	if strings.Join(asked, " ") != "E1/do.0 E1/do.1" || got != `{"results":[{"answer":{"ok":true},"answered":true},{"answer":{"ok":false},"answered":true}]}` {
		t.Errorf("asked %v, output %s", asked, got)
	}
}
