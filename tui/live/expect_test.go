package live_test

import (
	"slices"
	"testing"
	"time"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/chat"
	"github.com/stepwise-dev/stepwise/tui/live"
)

// TestExpectedRoundRuns lays out a round at a stop before its call, as the
// workbench does when a run is held at a round: its events then start and
// end it like any round's.
func TestExpectedRoundRuns(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	tr := live.New(nil)
	tr.Apply(engine.Event{Seq: 1, Time: t0, Kind: engine.EventRunStart, Payload: engine.RunStarted{Plan: "p"}})
	tr.Apply(engine.Event{Seq: 2, Time: t0, Path: "E1", Kind: engine.EventStepStart, Payload: engine.StepStarted{Tool: "agent"}})
	if !tr.Expect("E1/agent.1", "agent") {
		t.Fatal("Expect made no node")
	}
	// The stop names the agent's tool; the round's row, as one its
	// events lay out, has none.
	if n, _ := tr.Node("E1/agent.1"); n.Status != live.Pending || n.Kind != live.KindRound || n.Tool != "" {
		t.Fatalf("expected round: %s %s, tool %q", n.Kind, n.Status, n.Tool)
	}
	tr.Apply(engine.Event{Seq: 3, Time: t0.Add(time.Second), Path: "E1/agent.1", Kind: engine.EventModelDelta, Payload: chat.Delta{Text: "{"}})
	if n, _ := tr.Node("E1/agent.1"); n.Status != live.Running {
		t.Fatalf("after its first event the round is %s", n.Status)
	}
	tr.Apply(engine.Event{Seq: 4, Time: t0.Add(2 * time.Second), Path: "E1/agent.1", Kind: engine.EventModelCall, Payload: engine.ModelCalled{Ms: 1000}})
	tr.Apply(engine.Event{Seq: 5, Time: t0.Add(2 * time.Second), Path: "E1", Kind: engine.EventStepEnd, Payload: engine.StepEnded{Tool: "agent", Status: "ok"}})
	if n, _ := tr.Node("E1/agent.1"); n.Status != live.OK {
		t.Errorf("after its step ended the round is %s", n.Status)
	}
}

// TestToolCallsInReplyOrder starts a round's tool calls in the reverse of
// the order its reply asked for them: the rows keep the reply's order.
func TestToolCallsInReplyOrder(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	seq := uint64(0)
	tr := live.New(nil)
	apply := func(path string, kind engine.EventKind, p any) {
		seq++
		tr.Apply(engine.Event{Seq: seq, Time: t0, Path: path, Kind: kind, Payload: p})
	}
	apply("", engine.EventRunStart, engine.RunStarted{Plan: "p"})
	apply("E1", engine.EventStepStart, engine.StepStarted{Tool: "agent"})
	apply("E1/agent.1", engine.EventModelCall, engine.ModelCalled{Reply: chat.Reply{ToolCalls: []chat.ToolCall{
		{Name: "search"}, {Name: "get"}, {Name: "get"}}}})
	for _, call := range []string{"get.2", "get", "search"} {
		apply("E1/agent.1/"+call, engine.EventToolStart, engine.ToolStarted{Tool: "x"})
	}
	var got []string
	for _, r := range tr.Rows(0, tr.Len()) {
		got = append(got, r.Path)
	}
	want := []string{"E1", "E1/agent.1", "E1/agent.1/search", "E1/agent.1/get", "E1/agent.1/get.2"}
	if !slices.Equal(got, want) {
		t.Errorf("rows %v, want %v", got, want)
	}
}
