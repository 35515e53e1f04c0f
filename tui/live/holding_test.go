package live_test

import (
	"testing"
	"time"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/path"
	"github.com/stepwise-dev/stepwise/tui/live"
)

// TestHeldNow holds a map item at its step's stop, before the step's
// first event, and a round at its reply stop, once its call is in: while
// they are held each row runs on the tree's clock, its held share with
// it, before any Held event says so; the Held event then ends the hold
// with what it says.
func TestHeldNow(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	tr := live.New(nil)
	seq := uint64(0)
	apply := func(at time.Time, p string, unit path.Kind, kind engine.EventKind, payload any) {
		seq++
		tr.Apply(engine.Event{Seq: seq, Time: at, Path: p, Unit: unit, Kind: kind, Payload: payload})
	}
	row := func(p string) live.Node {
		t.Helper()
		n, ok := tr.Node(p)
		if !ok {
			t.Fatalf("no node %s", p)
		}
		return n
	}
	apply(t0, "", path.KindRun, engine.EventRunStart, engine.RunStarted{Plan: "p"})
	apply(t0, "E1", path.KindStep, engine.EventStepStart, engine.StepStarted{Tool: "map"})
	step, round := "E1/do.1/A", "E2/agent.2"
	tr.Expect(step, "user__note")
	apply(t0, "E2", path.KindStep, engine.EventStepStart, engine.StepStarted{Tool: "agent"})
	apply(t0.Add(time.Second), round, path.KindRound, engine.EventModelCall, engine.ModelCalled{Ms: 1000})
	tr.Expect(round, "agent")
	tr.Holding([]string{step, round}, t0.Add(time.Second))
	tr.Tick(t0.Add(7 * time.Second))
	for _, tc := range []struct {
		path       string
		wall, held time.Duration
	}{
		{step, 6 * time.Second, 6 * time.Second},
		{"E1/do.1", 6 * time.Second, 6 * time.Second},
		{"E1", 7 * time.Second, 6 * time.Second},
		{round, 7 * time.Second, 6 * time.Second},
	} {
		if n := row(tc.path); n.Status != live.Running || n.Duration != tc.wall || n.Held != tc.held {
			t.Errorf("held now, %s is %s for %v, %v of it held; want running for %v, %v held", tc.path, n.Status, n.Duration, n.Held, tc.wall, tc.held)
		}
	}
	// The step's thread goes on: its Held event says how long it was
	// held, and the step runs from the hold's start.
	released := t0.Add(8 * time.Second)
	tr.Holding([]string{round}, released)
	apply(released, step, path.KindStep, engine.EventHeld, engine.Held{Stop: engine.StopStep, Ms: 7000})
	apply(released, step, path.KindStep, engine.EventStepStart, engine.StepStarted{Tool: "user__note"})
	apply(released.Add(time.Second), step, path.KindStep, engine.EventStepEnd, engine.StepEnded{Tool: "user__note", Status: "ok", Ms: 8000, HeldMs: 7000})
	if n := row(step); n.Status != live.OK || n.Duration != 8*time.Second || n.Held != 7*time.Second {
		t.Errorf("once over, %s is %s for %v, %v of it held; want ok for 8s, 7s held", step, n.Status, n.Duration, n.Held)
	}
	if n := row(round); n.Status != live.Running || n.Duration != 9*time.Second || n.Held != 8*time.Second {
		t.Errorf("still held, %s is %s for %v, %v of it held; want running for 9s, 8s held", round, n.Status, n.Duration, n.Held)
	}
	apply(released.Add(time.Second), round, path.KindRound, engine.EventHeld, engine.Held{Stop: engine.StopReply, Ms: 8000})
	if n := row(round); n.Status != live.OK || n.Duration != 9*time.Second || n.Held != 8*time.Second {
		t.Errorf("released, %s is %s for %v, %v of it held; want ok for 9s, 8s held", round, n.Status, n.Duration, n.Held)
	}
}
