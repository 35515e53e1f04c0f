// Package livetest makes the runs the tests of the live tree and the panes
// that show it read. Small runs are real: a project on disk whose models
// answer from a script, run by the real engine (Project, Run). Large runs
// are made by hand, for the benchmarks of the live tree, its pane and the
// workbench (BigRun): scripting ten thousand model replies would time the
// script provider, not the UI.
package livetest

import (
	"strconv"
	"time"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/chat"
	paths "github.com/stepwise-dev/stepwise/engine/path"
)

// BigRun is the events of a run whose map E1 has items agent steps, five
// events an item (start, two streamed deltas, the model call, end), in the
// shape the engine emits for a single-call agent body: 10,000 items make
// 50,000 events. The map and the run are left running.
func BigRun(items int) []engine.Event {
	t0 := time.Unix(1_700_000_000, 0)
	var out []engine.Event
	add := func(path string, kind engine.EventKind, payload any) {
		out = append(out, engine.Event{Seq: uint64(len(out) + 1), Time: t0.Add(time.Duration(len(out)) * time.Millisecond), RunID: "r", Path: path, Unit: paths.KindOf(path), Kind: kind, Payload: payload})
	}
	cost := 0.0001
	add("", engine.EventRunStart, engine.RunStarted{Plan: "big"})
	add("E1", engine.EventStepStart, engine.StepStarted{Tool: "map"})
	for i := range items {
		item := paths.Item("E1", i)
		add(item, engine.EventStepStart, engine.StepStarted{Tool: "agent", Input: map[string]any{"prompt": "item"}})
		add(paths.Round(item, 1), engine.EventModelDelta, chat.Delta{Text: `{"count": `})
		add(paths.Round(item, 1), engine.EventModelDelta, chat.Delta{Text: strconv.Itoa(i) + `}`})
		add(paths.Round(item, 1), engine.EventModelCall, engine.ModelCalled{Site: item, Role: "chat", Usage: chat.Usage{InputTokens: 200, OutputTokens: 8}, CostUSD: &cost})
		add(item, engine.EventStepEnd, engine.StepEnded{Tool: "agent", Status: "ok", Result: map[string]any{"count": i}})
	}
	return out
}
