package debugger_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/record"
)

// mapRun is the record of a run of a 10,000-item map: each item's step
// gave an object with a list in it, and every hundredth item's text is
// changed when changed is set.
func mapRun(b *testing.B, changed bool) *record.RunDetail {
	b.Helper()
	d := &record.RunDetail{}
	d.Steps = append(d.Steps, record.StepRecord{Path: "E1", Tool: "map", Status: engine.StepOK})
	for i := range 10_000 {
		text := fmt.Sprintf("item %d", i)
		if changed && i%100 == 0 {
			text += " (edited)"
		}
		result, err := json.Marshal(map[string]any{"id": i, "text": text, "tags": []any{"a", "b", i % 7}})
		if err != nil {
			b.Fatal(err)
		}
		d.Steps = append(d.Steps, record.StepRecord{Path: fmt.Sprintf("E1/do.%d", i), Tool: "user__note", Status: engine.StepOK, Result: result, Ms: 0.1 * float64(i%10)})
	}
	return d
}

// BenchmarkDiff compares two records of a 10,000-item map whose every
// hundredth result differs at one key: the diff a workbench opens.
func BenchmarkDiff(b *testing.B) {
	a, c := mapRun(b, false), mapRun(b, true)
	b.ReportAllocs()
	for b.Loop() {
		diff := debugger.Diff(a, c)
		if len(diff) != 10_001 || len(diff[1].Changes) != 1 {
			b.Fatalf("%d steps, item 0 changed at %v", len(diff), diff[1].Changes)
		}
	}
}

// TestDiffChanges compares two results place by place: a key changed, a
// key and an index only one side has, a value that turned from a list into
// text, and equal numbers however they were written.
func TestDiffChanges(t *testing.T) {
	run := func(result string) *record.RunDetail {
		return &record.RunDetail{Steps: []record.StepRecord{{Path: "E1", Status: engine.StepOK, Result: json.RawMessage(result)}}}
	}
	diff := debugger.Diff(
		run(`{"n": 1.0, "text": "a", "gone": true, "list": [1, 2, 3], "shape": [1], "same": {"x": [null]}}`),
		run(`{"n": 1, "text": "b", "new": null, "list": [1, 2], "shape": "one", "same": {"x": [null]}}`))
	want := []debugger.ValueChange{
		{At: "gone", A: true, Only: "a"},
		{At: "list.2", A: 3.0, Only: "a"},
		{At: "new", B: nil, Only: "b"},
		{At: "shape", A: []any{1.0}, B: "one"},
		{At: "text", A: "a", B: "b"},
	}
	if len(diff) != 1 || !reflect.DeepEqual(diff[0].Changes, want) || diff[0].Same() {
		t.Errorf("changes %+v\nwant %+v", diff[0].Changes, want)
	}
}
