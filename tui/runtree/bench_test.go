package runtree_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/model"
	"github.com/stepwise-dev/stepwise/tui/common"
	"github.com/stepwise-dev/stepwise/tui/live"
	"github.com/stepwise-dev/stepwise/tui/runtree"
)

// bigRun is the events of a run whose map E1 has items agent steps, five
// events an item (start, two streamed deltas, the model call, end), in the
// shape the engine emits for a single-call agent body: 10,000 items make
// 50,000 events. The events are made by hand, as tui/live's benchmarks
// make them: scripting ten thousand replies would time the script
// provider, not the pane.
func bigRun(items int) []engine.Event {
	t0 := time.Unix(1_700_000_000, 0)
	var out []engine.Event
	add := func(path string, kind engine.EventKind, payload any) {
		out = append(out, engine.Event{Seq: uint64(len(out) + 1), Time: t0.Add(time.Duration(len(out)) * time.Millisecond), RunID: "r", Path: path, Kind: kind, Payload: payload})
	}
	cost := 0.0001
	add("", engine.EventRunStart, engine.RunStarted{Plan: "big"})
	add("E1", engine.EventStepStart, engine.StepStarted{Tool: "map"})
	for i := range items {
		item := "E1/do." + strconv.Itoa(i)
		add(item, engine.EventStepStart, engine.StepStarted{Tool: "agent", Input: map[string]any{"prompt": "item"}})
		add(item+"/agent.1", engine.EventModelDelta, model.Delta{Text: `{"count": `})
		add(item+"/agent.1", engine.EventModelDelta, model.Delta{Text: strconv.Itoa(i) + `}`})
		add(item+"/agent.1", engine.EventModelCall, engine.ModelCalled{Site: item, Role: "chat", Usage: model.Usage{InputTokens: 200, OutputTokens: 8}, CostUSD: &cost})
		add(item, engine.EventStepEnd, engine.StepEnded{Tool: "agent", Status: "ok", Result: map[string]any{"count": i}})
	}
	return out[:len(out)-2] // the map and the run still run
}

// bigPane is the pane at 160x48, focused, showing bigRun(10_000) with the
// selection on the item half-way down.
func bigPane(b *testing.B) (runtree.Model, *live.Tree) {
	b.Helper()
	events := bigRun(10_000)
	tr := live.New(nil)
	for _, e := range events {
		tr.Apply(e)
	}
	if len(events) < 49_990 || tr.Len() != 1+10_000*2 {
		b.Fatalf("%d events, %d rows", len(events), tr.Len())
	}
	m := runtree.New(common.New(common.NewTheme(true, true), common.DefaultKeyMap()))
	m.SetSize(160, 48)
	m.Focus()
	m.SetTree(tr)
	if !m.SelectPath("E1/do.5000") {
		b.Fatal("no item 5000")
	}
	if v := m.View(); !strings.Contains(v, "10002/20001") {
		b.Fatalf("the footer does not place the selection:\n%s", v)
	}
	return m, tr
}

// BenchmarkFrame10kItems draws one frame of a run of 10,000 map items and
// 50,000 events, the selection mid-way.
func BenchmarkFrame10kItems(b *testing.B) {
	m, _ := bigPane(b)
	b.ReportAllocs()
	for b.Loop() {
		_ = m.View()
	}
}

// BenchmarkDeltaFrame applies one streamed delta to a round deep in that
// run and draws the frame that shows it: the work of one coalesced batch
// of a single event.
func BenchmarkDeltaFrame(b *testing.B) {
	m, tr := bigPane(b)
	e := engine.Event{Seq: 50_001, Time: time.Unix(1_700_000_100, 0), RunID: "r", Path: "E1/do.9998/agent.1", Kind: engine.EventModelDelta, Payload: model.Delta{Text: "x"}}
	b.ReportAllocs()
	for b.Loop() {
		tr.Apply(e)
		_ = m.View()
	}
}
