package live_test

import (
	"testing"
	"time"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/chat"
	"github.com/stepwise-dev/stepwise/engine/path"
	"github.com/stepwise-dev/stepwise/tui/live"
	"github.com/stepwise-dev/stepwise/tui/live/livetest"
)

func loaded(b *testing.B) *live.Tree {
	b.Helper()
	events := livetest.BigRun(10_000)
	if len(events) < 49_990 {
		b.Fatalf("%d events", len(events))
	}
	tr := live.New(nil)
	for _, e := range events {
		tr.Apply(e)
	}
	if tr.Len() != 1+10_000*2 {
		b.Fatalf("%d rows", tr.Len())
	}
	return tr
}

// BenchmarkApplyDelta applies one streamed delta to a round deep in a run
// of 10,000 map items and 50,000 events.
func BenchmarkApplyDelta(b *testing.B) {
	tr := loaded(b)
	e := engine.Event{Seq: 50_001, Time: time.Unix(1_700_000_100, 0), RunID: "r", Path: "E1/do.9998/agent.1", Kind: engine.EventModelDelta, Payload: chat.Delta{Text: "x"}}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		tr.Apply(e)
	}
}

// BenchmarkApplyRun applies the whole run; ns/op divided by the event
// count is the mean cost of an event, creating nodes included.
func BenchmarkApplyRun(b *testing.B) {
	events := livetest.BigRun(10_000)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		tr := live.New(nil)
		for _, e := range events {
			tr.Apply(e)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(events)), "ns/event")
}

// BenchmarkRows reads the 40 visible rows of that run, at its top, middle
// and end, after everything is applied.
func BenchmarkRows(b *testing.B) {
	tr := loaded(b)
	for _, bc := range []struct {
		name   string
		offset int
	}{{"top", 0}, {"middle", tr.Len() / 2}, {"end", tr.Len() - 40}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if rows := tr.Rows(bc.offset, 40); len(rows) != 40 {
					b.Fatalf("%d rows", len(rows))
				}
			}
		})
	}
}

// shapes50k are the two shapes of a run of 50,000 rows: a map of 10,000
// items of four steps each, and an agent of 25,000 rounds of one tool
// call each.
var shapes50k = []struct {
	name   string
	events func() []engine.Event
}{
	{"map", func() []engine.Event { return livetest.BigMap(10_000, 4) }},
	{"agent", func() []engine.Event { return livetest.BigAgent(25_000) }},
}

// load50k applies events to a new tree, which must then show 50,001 rows.
func load50k(b *testing.B, events []engine.Event) *live.Tree {
	b.Helper()
	tr := live.New(nil)
	for _, e := range events {
		tr.Apply(e)
	}
	if tr.Len() != 50_001 {
		b.Fatalf("%d rows", tr.Len())
	}
	return tr
}

// BenchmarkDeltaAt50kRows applies one streamed delta to a tree of 50,000
// rows: to the reply streaming at the end of the run, and as the first
// delta of a new agent round, which adds its row. The rounds the second
// adds are dropped with the tree every 5,000, so that it stays near
// 50,000 rows.
func BenchmarkDeltaAt50kRows(b *testing.B) {
	t1 := time.Unix(1_800_000_000, 0)
	for _, sh := range shapes50k {
		events := sh.events()
		b.Run(sh.name, func(b *testing.B) {
			tr := load50k(b, events)
			at := "E1/do.9999/E5/agent.1"
			if sh.name == "agent" {
				at = "E1/agent.25001"
			}
			e := engine.Event{Seq: 1e6, Time: t1, RunID: "r", Path: at, Unit: path.KindRound, Kind: engine.EventModelDelta, Payload: chat.Delta{Text: "x"}}
			tr.Apply(e)
			b.ReportAllocs()
			for b.Loop() {
				tr.Apply(e)
			}
		})
	}
	b.Run("agent/new-round", func(b *testing.B) {
		events := livetest.BigAgent(25_000)
		var tr *live.Tree
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if i%5_000 == 0 {
				b.StopTimer()
				tr = load50k(b, events)
				b.StartTimer()
			}
			i++
			tr.Apply(engine.Event{Seq: 1e6, Time: t1, RunID: "r", Path: path.Round("E1", 25_000+i), Unit: path.KindRound, Kind: engine.EventModelDelta, Payload: chat.Delta{Text: "x"}})
		}
	})
}

// BenchmarkStatusEventAt50kRows applies one event that changes a row's
// status in a tree of 50,000 rows: a step of an item mid-way down the map
// starting or ending, and the tool call of the agent's last round starting
// or ending, which ends its round.
func BenchmarkStatusEventAt50kRows(b *testing.B) {
	t1 := time.Unix(1_800_000_000, 0)
	for _, sh := range shapes50k {
		events := sh.events()
		b.Run(sh.name, func(b *testing.B) {
			tr := load50k(b, events)
			pair := [2]engine.Event{
				{Seq: 1e6, Time: t1, RunID: "r", Path: "E1/do.5000/E3", Unit: path.KindStep, Kind: engine.EventStepStart, Payload: engine.StepStarted{Tool: "agent"}},
				{Seq: 1e6, Time: t1, RunID: "r", Path: "E1/do.5000/E3", Unit: path.KindStep, Kind: engine.EventStepEnd, Payload: engine.StepEnded{Tool: "agent", Status: "ok"}},
			}
			if sh.name == "agent" {
				call := path.Call(path.Round("E1", 25_000), "lookup", 1)
				pair = [2]engine.Event{
					{Seq: 1e6, Time: t1, RunID: "r", Path: call, Unit: path.KindCall, Kind: engine.EventToolStart, Payload: engine.ToolStarted{Tool: "lookup"}},
					{Seq: 1e6, Time: t1, RunID: "r", Path: call, Unit: path.KindCall, Kind: engine.EventToolEnd, Payload: engine.ToolEnded{Tool: "lookup"}},
				}
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				tr.Apply(pair[i&1])
				i++
			}
		})
	}
}

// BenchmarkApplyHeldRun applies the run of 10,000 map items in which a
// person held every item at its step stop for half a millisecond before
// it started: each hold reaches the item and the map above it.
func BenchmarkApplyHeldRun(b *testing.B) {
	var events []engine.Event
	for _, e := range livetest.BigRun(10_000) {
		if _, ok := e.Payload.(engine.StepStarted); ok && e.Path != "E1" {
			events = append(events, engine.Event{Time: e.Time, RunID: e.RunID, Path: e.Path, Unit: e.Unit, Kind: engine.EventHeld, Payload: engine.Held{Stop: engine.StopStep, Ms: 0.5}})
		}
		events = append(events, e)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		tr := live.New(nil)
		for _, e := range events {
			tr.Apply(e)
		}
		if rows := tr.Rows(0, 2); len(rows) != 2 || rows[0].Held < 5*time.Second {
			b.Fatalf("the map shows %v held", rows[0].Held)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(events)), "ns/event")
}

// BenchmarkHolding tells a tree of 10,000 map items, as the workbench
// does on every tick of a held run, which threads are held now: two
// items (a map of concurrency 2) and every item (each held at its stop).
func BenchmarkHolding(b *testing.B) {
	tr := loaded(b)
	every := make([]string, 0, 10_000)
	for _, r := range tr.Rows(0, tr.Len()) {
		if r.Kind == live.KindItem {
			every = append(every, r.Path)
		}
	}
	for _, bc := range []struct {
		name string
		held []string
	}{{"two", every[:2]}, {"10k", every}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			now := time.Now()
			for b.Loop() {
				tr.Holding(bc.held, now)
			}
		})
	}
}
