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
