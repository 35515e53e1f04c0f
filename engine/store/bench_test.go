package store_test

import (
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/internal/cputime"
	"github.com/stepwise-dev/stepwise/engine/store"
)

// mapRunEvents are the events of a plan whose step E1 maps a body step
// over 10,000 items: per item the body call's step_start and step_end and
// its inline step's, with small map payloads; 40,005 events in all.
func mapRunEvents(items int) []engine.Event {
	t := time.Date(2025, 3, 1, 10, 15, 0, 0, time.UTC)
	var events []engine.Event
	add := func(path string, kind engine.EventKind, payload any) {
		t = t.Add(3 * time.Microsecond)
		events = append(events, engine.Event{Seq: uint64(len(events) + 1), Time: t, Path: path, Kind: kind, Payload: payload})
	}
	add("", engine.EventRunStart, engine.RunStarted{Plan: "label_all", File: ".stepwise/plans/label_all.yaml",
		Hash: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", Inputs: map[string]any{"project": "core", "limit": items}})
	add("E1", engine.EventStepStart, engine.StepStarted{Tool: "map", Input: map[string]any{"over": "{{E0.issues}}"}})
	for i := range items {
		item := "E1/do." + strconv.Itoa(i)
		issue := map[string]any{"id": i, "title": "Issue " + strconv.Itoa(i), "labels": []any{"bug"}}
		add(item, engine.EventStepStart, engine.StepStarted{Tool: "map", Input: map[string]any{"item": issue, "index": i}})
		add(item+"/E10", engine.EventStepStart, engine.StepStarted{Tool: "builtin__reshape", Input: map[string]any{"id": i, "title": issue["title"]}})
		result := map[string]any{"id": i, "label": "bug", "priority": i % 3}
		add(item+"/E10", engine.EventStepEnd, engine.StepEnded{Tool: "builtin__reshape", Status: "ok", Result: result, Ms: 0.02})
		add(item, engine.EventStepEnd, engine.StepEnded{Tool: "map", Status: "ok", Result: result, Ms: 0.03})
	}
	add("E1", engine.EventStepEnd, engine.StepEnded{Tool: "map", Status: "ok", Ms: 140})
	report := engine.UsageReport{ByStep: []engine.UsageLine{}, ByModel: []engine.UsageLine{}}
	add("", engine.EventUsage, report)
	add("", engine.EventRunEnd, engine.RunEnded{Status: "ok", StepsExecuted: 1, Usage: report})
	return events
}

// BenchmarkRecord10kItemMap records the events of a 10,000-item map (as
// the engine would give them, one at a time) and closes the Recorder, which
// waits for the last commit: one op is everything recording adds to such a
// run. feed-ms/op is the part spent in Event, on the engine's goroutine;
// cpu-ms/op the CPU time used on all cores, GC included, which a loaded
// machine does not inflate as it does ns/op.
func BenchmarkRecord10kItemMap(b *testing.B) {
	events := mapRunEvents(10_000)
	s, err := store.Open(filepath.Join(b.TempDir(), store.FileName))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ReportAllocs()
	var feed time.Duration
	b.ResetTimer()
	cpu := cputime.Process()
	for i := 0; i < b.N; i++ {
		id := "bench-" + strconv.Itoa(i)
		rec := s.Recorder()
		start := time.Now()
		for _, e := range events {
			e.RunID = id
			rec.Event(e)
		}
		feed += time.Since(start)
		if err := rec.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(cputime.PerOp(cpu, b.N), "cpu-ms/op")
	b.ReportMetric(float64(feed.Microseconds())/1000/float64(b.N), "feed-ms/op")
	b.ReportMetric(float64(len(events)), "events")
}
