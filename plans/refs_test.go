package plans

import (
	"reflect"
	"testing"
)

func TestReaders(t *testing.T) {
	src := head +
		"  - id: E0\n    tool_name: user__x\n    input: {}\n" +
		"  - id: E1\n    tool_name: map\n    input:\n      over: \"{{E0.items}}\"\n      do:\n        - id: E10\n          tool_name: user__y\n          input: {a: \"{{item.id}} {{E0.count}}\"}\n" +
		"  - id: E2\n    tool_name: user__z\n    input: {list: \"{{#E0.items}}{{name}}{{/E0.items}}\"}\n" +
		"output:\n  n: \"{{E0.count}}\"\n  r: \"{{E1.results}}\"\n"
	p, r := Load("plan.yaml", []byte(src), Stepwise)
	if !r.OK() {
		t.Fatalf("problems:%s", formatProblems(r.Problems))
	}
	at := func(line, col int) Pos { return Pos{File: "plan.yaml", Line: line, Col: col} }
	got := Readers(p)
	want := map[string][]Reference{
		"E0": {
			{From: "E1", Root: "E0", Path: "E0.items", Pos: at(11, 14)},
			{From: "E1/do.*/E10", Root: "E0", Path: "E0.count", Pos: at(15, 35)},
			{From: "E2", Root: "E0", Path: "E0.items", Pos: at(18, 20)},
			{From: "output", Root: "E0", Path: "E0.count", Pos: at(20, 7)},
		},
		"item": {{From: "E1/do.*/E10", Root: "item", Path: "item.id", Pos: at(15, 23)}},
		"E1":   {{From: "output", Root: "E1", Path: "E1.results", Pos: at(21, 7)}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Readers =\n%v\nwant\n%v", got, want)
	}
}

// TestStepReaders lists who reads each step's result, the last step of a
// body read through the result of the control step around it.
func TestStepReaders(t *testing.T) {
	src := head +
		"  - id: E0\n    tool_name: user__x\n    input: {}\n" +
		"  - id: E1\n    tool_name: map\n    input:\n      over: \"{{E0.items}}\"\n      do:\n" +
		"        - id: E10\n          tool_name: user__y\n          input: {a: \"{{item.id}}\"}\n" +
		"        - id: E11\n          tool_name: user__y\n          input: {a: \"{{E10.a}}\"}\n" +
		"  - id: E2\n    tool_name: map\n    input:\n      over: \"{{E0.items}}\"\n      do:\n        tool_name: user__z\n        input: {}\n" +
		"output:\n  r: \"{{E1.results}}\"\n  s: \"{{E2.results}}\"\n"
	p, r := Load("plan.yaml", []byte(src), Stepwise)
	if !r.OK() {
		t.Fatalf("problems:%s", formatProblems(r.Problems))
	}
	got := map[string][]string{}
	for step, refs := range StepReaders(p) {
		for _, ref := range refs {
			got[step] = append(got[step], ref.From+" reads "+ref.Path)
		}
	}
	want := map[string][]string{
		"E0":          {"E1 reads E0.items", "E2 reads E0.items"},
		"E1":          {"output reads E1.results"},
		"E1/do.*/E10": {"E1/do.*/E11 reads E10.a"},
		"E1/do.*/E11": {"output reads E1.results"},
		"E2":          {"output reads E2.results"},
		"E2/do.*":     {"output reads E2.results"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("StepReaders =\n%v\nwant\n%v", got, want)
	}
}
