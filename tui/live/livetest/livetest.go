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

// BigMap is the events of a run whose map E1 has items items, each running
// the steps of a body of steps agent steps (E2, E3, ...) one after the
// other, a start and an end each: 10,000 items of four steps show 50,001
// rows. The map and the run are left running.
func BigMap(items, steps int) []engine.Event {
	t0 := time.Unix(1_700_000_000, 0)
	var out []engine.Event
	add := func(path string, kind engine.EventKind, payload any) {
		out = append(out, engine.Event{Seq: uint64(len(out) + 1), Time: t0.Add(time.Duration(len(out)) * time.Millisecond), RunID: "r", Path: path, Unit: paths.KindOf(path), Kind: kind, Payload: payload})
	}
	add("", engine.EventRunStart, engine.RunStarted{Plan: "big"})
	add("E1", engine.EventStepStart, engine.StepStarted{Tool: "map"})
	for i := range items {
		item := paths.Item("E1", i)
		for s := range steps {
			step := paths.Join(item, "E"+strconv.Itoa(s+2))
			add(step, engine.EventStepStart, engine.StepStarted{Tool: "agent"})
			add(step, engine.EventStepEnd, engine.StepEnded{Tool: "agent", Status: "ok", Result: i})
		}
	}
	return out
}

// BigAgent is the events of a run whose agent step E1 went rounds rounds,
// each streaming its reply, asking for one call of tool lookup and getting
// its result: 25,000 rounds show 50,001 rows. The step and the run are
// left running, the last round's call ended.
func BigAgent(rounds int) []engine.Event {
	t0 := time.Unix(1_700_000_000, 0)
	var out []engine.Event
	add := func(path string, unit paths.Kind, kind engine.EventKind, payload any) {
		out = append(out, engine.Event{Seq: uint64(len(out) + 1), Time: t0.Add(time.Duration(len(out)) * time.Millisecond), RunID: "r", Path: path, Unit: unit, Kind: kind, Payload: payload})
	}
	cost := 0.0001
	add("", paths.KindRun, engine.EventRunStart, engine.RunStarted{Plan: "big"})
	add("E1", paths.KindStep, engine.EventStepStart, engine.StepStarted{Tool: "agent"})
	for n := 1; n <= rounds; n++ {
		round := paths.Round("E1", n)
		call := paths.Call(round, "lookup", 1)
		add(round, paths.KindRound, engine.EventModelDelta, chat.Delta{Text: "looking up"})
		add(round, paths.KindRound, engine.EventModelCall, engine.ModelCalled{Site: "E1", Role: "chat", Usage: chat.Usage{InputTokens: 200, OutputTokens: 8}, CostUSD: &cost,
			Reply: chat.Reply{ToolCalls: []chat.ToolCall{{ID: strconv.Itoa(n), Name: "lookup"}}}})
		add(call, paths.KindCall, engine.EventToolStart, engine.ToolStarted{Tool: "lookup", Args: map[string]any{"n": n}})
		add(call, paths.KindCall, engine.EventToolEnd, engine.ToolEnded{Tool: "lookup", Result: n})
	}
	return out
}
