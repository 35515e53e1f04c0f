package live_test

import (
	"testing"
	"time"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/chat"
	"github.com/stepwise-dev/stepwise/engine/path"
	"github.com/stepwise-dev/stepwise/tui/live"
)

// TestRoundTimedFromItsCall holds a round's tool call at its stop before
// the round's model call event has been applied (the stop overtakes the
// batch that carries it, so the round's row is laid out as the call's
// parent first): the round still lasts from its call's start, as it does
// read back.
func TestRoundTimedFromItsCall(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	tr := live.New(nil)
	tr.Apply(engine.Event{Seq: 1, Time: t0, Kind: engine.EventRunStart, Payload: engine.RunStarted{Plan: "p"}})
	tr.Apply(engine.Event{Seq: 2, Time: t0, Path: "E1/do.1/verdict", Kind: engine.EventStepStart, Payload: engine.StepStarted{Tool: "agent"}})
	round := "E1/do.1/verdict/agent.1"
	tr.Expect(round+"/get", "get")
	called := t0.Add(300 * time.Millisecond)
	tr.Apply(engine.Event{Seq: 3, Time: called, Path: round, Unit: path.KindRound, Kind: engine.EventModelCall, Payload: engine.ModelCalled{Ms: 300,
		Reply: chat.Reply{ToolCalls: []chat.ToolCall{{Name: "get"}}}}})
	if n, _ := tr.Node(round); n.Status != live.Running || n.Duration != 300*time.Millisecond {
		t.Errorf("once its call is in, the round is %s for %v, want running for 300ms", n.Status, n.Duration)
	}
	ended := called.Add(100 * time.Millisecond)
	tr.Apply(engine.Event{Seq: 4, Time: called, Path: round + "/get", Unit: path.KindCall, Kind: engine.EventToolStart, Payload: engine.ToolStarted{Tool: "get"}})
	tr.Apply(engine.Event{Seq: 5, Time: ended, Path: round + "/get", Unit: path.KindCall, Kind: engine.EventToolEnd, Payload: engine.ToolEnded{Tool: "get", Ms: 100}})
	if n, _ := tr.Node(round); n.Status != live.OK || n.Duration != 400*time.Millisecond {
		t.Errorf("once its tool call ended, the round is %s for %v, want ok for 400ms", n.Status, n.Duration)
	}
}
