package live_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/chat"
	"github.com/stepwise-dev/stepwise/engine/path"
	"github.com/stepwise-dev/stepwise/plans"
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

// TestRoundExpectedBeforeTheLastCallEnds lays out an agent's next round
// at its stop while the end of the round before's tool call is still on
// its way, as the workbench does when the thread is held at the next
// round before the batch of events that ends the call has come: the round
// before ends with its call, at its time, not at the stop with no time.
func TestRoundExpectedBeforeTheLastCallEnds(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	tr := live.New(nil)
	tr.Apply(engine.Event{Seq: 1, Time: t0, Kind: engine.EventRunStart, Payload: engine.RunStarted{Plan: "p"}})
	tr.Apply(engine.Event{Seq: 2, Time: t0, Path: "E1", Kind: engine.EventStepStart, Payload: engine.StepStarted{Tool: "agent"}})
	asked := chat.Reply{ToolCalls: []chat.ToolCall{{Name: "search"}}}
	tr.Apply(engine.Event{Seq: 3, Time: t0.Add(300 * time.Millisecond), Path: "E1/agent.1", Kind: engine.EventModelCall, Payload: engine.ModelCalled{Ms: 300, Reply: asked}})
	tr.Apply(engine.Event{Seq: 4, Time: t0.Add(300 * time.Millisecond), Path: "E1/agent.1/search", Unit: path.KindCall, Kind: engine.EventToolStart, Payload: engine.ToolStarted{Tool: "search"}})
	tr.Expect("E1/agent.2", "agent")
	tr.Apply(engine.Event{Seq: 5, Time: t0.Add(310 * time.Millisecond), Path: "E1/agent.1/search", Unit: path.KindCall, Kind: engine.EventToolEnd, Payload: engine.ToolEnded{Tool: "search", Ms: 10}})
	if n, _ := tr.Node("E1/agent.1"); n.Status != live.OK || n.Duration != 310*time.Millisecond {
		t.Errorf("the round before: %s in %v, want ok in 310ms", n.Status, n.Duration)
	}
	if n, _ := tr.Node("E1/agent.2"); n.Status != live.Pending {
		t.Errorf("the round laid out at its stop is %s before its first event", n.Status)
	}
	tr.Apply(engine.Event{Seq: 6, Time: t0.Add(time.Second), Path: "E1/agent.2", Kind: engine.EventModelCall, Payload: engine.ModelCalled{Ms: 500}})
	if n, _ := tr.Node("E1/agent.2"); n.Status != live.OK || n.Duration != 500*time.Millisecond {
		t.Errorf("the next round: %s in %v, want ok in 500ms", n.Status, n.Duration)
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

// TestStepLaidOutAtAStopKeepsItsPlace lays out a called plan's body step
// at a stop before the events of the step that ran before it have been
// applied, as the workbench does when the stop overtakes their batch: the
// rows keep the order the steps ran in.
func TestStepLaidOutAtAStopKeepsItsPlace(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	tr := live.New(nil)
	tr.Apply(engine.Event{Seq: 1, Time: t0, Kind: engine.EventRunStart, Payload: engine.RunStarted{Plan: "p"}})
	item := "post/notes/comments/do.0"
	if !tr.Expect(item+"/posted", "tracker__add_comment") {
		t.Fatal("Expect made no node")
	}
	tr.Apply(engine.Event{Seq: 2, Time: t0, Path: item + "/note", Kind: engine.EventStepStart, Payload: engine.StepStarted{Tool: "user__note"}})
	tr.Apply(engine.Event{Seq: 3, Time: t0, Path: item + "/note", Kind: engine.EventStepEnd, Payload: engine.StepEnded{Tool: "user__note", Status: "ok"}})
	var got []string
	for _, r := range tr.Rows(0, tr.Len()) {
		if strings.HasPrefix(r.Path, item+"/") {
			got = append(got, r.Path)
		}
	}
	if want := []string{item + "/note", item + "/posted"}; !slices.Equal(got, want) {
		t.Errorf("rows %v, want %v", got, want)
	}
}

// TestItemRunsUntilItsBodyHas holds a map item's second step at its stop
// after its first ended: the item is not done until its body is, and is
// once the run ends, whatever it got to.
func TestItemRunsUntilItsBodyHas(t *testing.T) {
	p, report := plans.Load("items.yaml", []byte(`identifier: items
name: Items
description: A map whose body has two steps.
steps:
  - id: E1
    tool_name: map
    input:
      over: [1, 2]
      do:
        - id: A
          tool_name: builtin__reshape
          input: { shape: { n: "{{item}}" } }
        - id: B
          tool_name: builtin__reshape
          input: { shape: { m: "{{A.n}}" } }
`), plans.Stepwise)
	if p == nil {
		t.Fatal(report.Problems)
	}
	t0 := time.Unix(1_700_000_000, 0)
	tr := live.New(p)
	seq := uint64(0)
	apply := func(path string, kind engine.EventKind, payload any) {
		seq++
		tr.Apply(engine.Event{Seq: seq, Time: t0, Path: path, Kind: kind, Payload: payload})
	}
	status := func(path string) live.Status {
		n, ok := tr.Node(path)
		if !ok {
			t.Fatalf("no node %s", path)
		}
		return n.Status
	}
	apply("", engine.EventRunStart, engine.RunStarted{Plan: "items"})
	apply("E1", engine.EventStepStart, engine.StepStarted{Tool: "map"})
	apply("E1/do.0/A", engine.EventStepStart, engine.StepStarted{Tool: "builtin__reshape"})
	apply("E1/do.0/A", engine.EventStepEnd, engine.StepEnded{Tool: "builtin__reshape", Status: "ok"})
	// Held at B's step stop: B has not started.
	if st := status("E1/do.0"); st != live.Running {
		t.Errorf("the item is %s while its step B is still to run, want running", st)
	}
	apply("E1/do.0/B", engine.EventStepStart, engine.StepStarted{Tool: "builtin__reshape"})
	apply("E1/do.0/B", engine.EventStepEnd, engine.StepEnded{Tool: "builtin__reshape", Status: "ok"})
	if st := status("E1/do.0"); st != live.OK {
		t.Errorf("the item is %s once its body ran, want ok", st)
	}
	apply("E1/do.1/A", engine.EventStepStart, engine.StepStarted{Tool: "builtin__reshape"})
	apply("E1/do.1/A", engine.EventStepEnd, engine.StepEnded{Tool: "builtin__reshape", Status: "ok"})
	apply("", engine.EventRunEnd, engine.RunEnded{Status: engine.StatusAborted, Error: "run aborted at E1/do.1/B"})
	if st := status("E1/do.1"); !st.Done() {
		t.Errorf("the item of an aborted run is %s, want it over", st)
	}
}

// TestStepsLaidOutAtTwoStopsKeepTheirOrder holds a called plan's item at
// its first step's stop and then at its second's, the first step's events
// overtaken by the second stop: the second step's row stays below the
// first's, while the stops come, once the events have, and once the run
// has ended.
func TestStepsLaidOutAtTwoStopsKeepTheirOrder(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	tr := live.New(nil)
	tr.Apply(engine.Event{Seq: 1, Time: t0, Kind: engine.EventRunStart, Payload: engine.RunStarted{Plan: "p"}})
	item := "post/then/notes/comments/do.0"
	order := func(when string) {
		t.Helper()
		var got []string
		for _, r := range tr.Rows(0, tr.Len()) {
			if strings.HasPrefix(r.Path, item+"/") {
				got = append(got, r.Path)
			}
		}
		if want := []string{item + "/note", item + "/posted"}; !slices.Equal(got, want) {
			t.Errorf("%s: rows %v, want %v", when, got, want)
		}
	}
	tr.Expect(item+"/note", "user__note")
	tr.Expect(item+"/posted", "tracker__add_comment")
	order("at the second stop")
	tr.Apply(engine.Event{Seq: 2, Time: t0, Path: item + "/note", Kind: engine.EventStepStart, Payload: engine.StepStarted{Tool: "user__note"}})
	tr.Apply(engine.Event{Seq: 3, Time: t0, Path: item + "/note", Kind: engine.EventStepEnd, Payload: engine.StepEnded{Tool: "user__note", Status: "ok"}})
	order("once the first step's events came")
	tr.Apply(engine.Event{Seq: 4, Time: t0.Add(time.Second), Path: item + "/posted", Kind: engine.EventStepStart, Payload: engine.StepStarted{Tool: "tracker__add_comment"}})
	tr.Apply(engine.Event{Seq: 5, Time: t0.Add(time.Second), Path: item + "/posted", Kind: engine.EventStepEnd, Payload: engine.StepEnded{Tool: "tracker__add_comment", Status: "ok"}})
	tr.Apply(engine.Event{Seq: 6, Time: t0.Add(time.Second), Kind: engine.EventRunEnd, Payload: engine.RunEnded{Status: engine.StatusOK}})
	order("once the run ended")
}

// TestAbortedAtItsStop aborts a run held at a map item's step stop, before
// the step started: the step's row ends aborted (failed, with the run's
// error), and so does its item, rather than staying a step not run yet.
func TestAbortedAtItsStop(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	tr := live.New(nil)
	tr.Apply(engine.Event{Seq: 1, Time: t0, Kind: engine.EventRunStart, Payload: engine.RunStarted{Plan: "p"}})
	tr.Apply(engine.Event{Seq: 2, Time: t0, Path: "assess", Kind: engine.EventStepStart, Payload: engine.StepStarted{Tool: "map"}})
	step := "assess/do.0/verdict"
	tr.Expect(step, "agent")
	why := "run aborted at " + step
	tr.Apply(engine.Event{Seq: 3, Time: t0.Add(time.Second), Kind: engine.EventRunEnd, Payload: engine.RunEnded{Status: engine.StatusAborted, Error: why, AbortedAt: step}})
	n, _ := tr.Node(step)
	if n.Status != live.Failed || !n.Aborted || n.Error != why {
		t.Errorf("the step aborted at its stop is %s (aborted %v, error %q)", n.Status, n.Aborted, n.Error)
	}
	if item, _ := tr.Node("assess/do.0"); item.Status != live.Failed {
		t.Errorf("its item is %s, want failed", item.Status)
	}
}

// TestAbortedWithTheRun: a map item held at its step stop while another
// is aborted at its own is aborted with the run, at its stop, and shows
// so: it neither goes back to pending nor says it has not run.
func TestAbortedWithTheRun(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	tr := live.New(nil)
	tr.Apply(engine.Event{Seq: 1, Time: t0, Kind: engine.EventRunStart, Payload: engine.RunStarted{Plan: "p"}})
	tr.Apply(engine.Event{Seq: 2, Time: t0, Path: "assess", Kind: engine.EventStepStart, Payload: engine.StepStarted{Tool: "map"}})
	here, other := "assess/do.0/verdict", "assess/do.1/verdict"
	tr.Expect(here, "agent")
	tr.Expect(other, "agent")
	tr.Holding([]string{here, other}, t0.Add(100*time.Millisecond))
	why := "run aborted at " + here
	tr.Apply(engine.Event{Seq: 3, Time: t0.Add(time.Second), Kind: engine.EventRunEnd, Payload: engine.RunEnded{Status: engine.StatusAborted, Error: why, AbortedAt: here}})
	for _, p := range []string{here, other} {
		n, _ := tr.Node(p)
		if n.Status != live.Failed || !n.Aborted || n.Error != why {
			t.Errorf("%s is %s (aborted %v, error %q), want failed, aborted with the run", p, n.Status, n.Aborted, n.Error)
		}
	}
}
