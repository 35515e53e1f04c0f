package engine_test

import (
	"context"
	"slices"
	"testing"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/chat"
	"github.com/stepwise-dev/stepwise/engine/path"
)

// runWithSinks runs the plan named file (relative to .stepwise/) with the
// given sinks and no hook.
func (p *project) runWithSinks(t *testing.T, file string, sinks ...engine.Sink) *engine.Result {
	t.Helper()
	res, err := p.runWith(t, context.Background(), file, nil, nil, sinks...)
	if err != nil || res.Status != engine.StatusOK {
		t.Fatalf("run: %v %+v", err, res)
	}
	return res
}

// eventKey is what identifies an event across runs: its number, place and
// kind (times differ).
type eventKey struct {
	Seq  uint64
	Path string
	Kind engine.EventKind
}

func keys(events []engine.Event) []eventKey {
	out := make([]eventKey, len(events))
	for i, e := range events {
		out[i] = eventKey{e.Seq, e.Path, e.Kind}
	}
	return out
}

// TestSelectiveSink: a Selective sink gets exactly the events of its kinds
// that a sink reading everything gets, numbered the same, whether or not a
// sink reading everything is there too; the kinds nobody reads are left
// unbuilt but keep their numbers.
func TestSelectiveSink(t *testing.T) {
	p := newProject(t, map[string]string{
		"plans/p.yaml": `identifier: p
steps:
  - id: E1
    tool_name: builtin__reshape
    input: { shape: { n: 1 } }
  - id: E2
    tool_name: builtin__infer
    input: { instruction: "say hi" }
  - id: E3
    tool_name: builtin__reshape
    input: { shape: { said: "{{E2.text}}" } }
`,
		"replies.yaml": "replies:\n  - match: E2\n    reply: { text: hi }\n  - match: E2\n    reply: { text: hi }\n",
	})
	kinds := []engine.EventKind{engine.EventStepStart, engine.EventModelDelta}
	every, some := &recorded{}, &recorded{}
	p.runWithSinks(t, "plans/p.yaml", every, engine.Selective{Kinds: kinds, Sink: some})
	var want []engine.Event
	for _, e := range every.events {
		if slices.Contains(kinds, e.Kind) {
			want = append(want, e)
		}
	}
	if len(every.of(engine.EventModelDelta)) == 0 || len(want) == len(every.events) {
		t.Fatalf("the plan must make events of the kinds read and of others: %v", keys(every.events))
	}
	if !slices.Equal(keys(some.events), keys(want)) {
		t.Errorf("beside a sink that reads everything, the selective sink got\n%v\nwant\n%v", keys(some.events), keys(want))
	}
	alone := &recorded{}
	p.runWithSinks(t, "plans/p.yaml", engine.Selective{Kinds: kinds, Sink: alone})
	if !slices.Equal(keys(alone.events), keys(want)) {
		t.Errorf("alone, the selective sink got\n%v\nwant\n%v", keys(alone.events), keys(want))
	}
	if got := alone.of(engine.EventModelDelta); len(got) == 0 || got[0].Payload.(chat.Delta).Text != "hi" {
		t.Errorf("model deltas: %+v", got)
	}
}

// wantUnits checks that every event of a run says the kind of unit its
// path is, as the path package reads it back from a record, and that the
// run had events of each of the kinds want lists.
func wantUnits(t *testing.T, events []engine.Event, want ...path.Kind) {
	t.Helper()
	seen := map[path.Kind]bool{}
	for _, e := range events {
		if e.Unit != path.KindOf(e.Path) {
			t.Errorf("%s event at %q says unit %v; the path reads as %v", e.Kind, e.Path, e.Unit, path.KindOf(e.Path))
		}
		seen[e.Unit] = true
	}
	for _, k := range want {
		if !seen[k] {
			t.Errorf("no event about a unit of kind %v", k)
		}
	}
}

// TestEventUnits: map items' body steps and an infer gate's verdict call
// carry their kind of unit.
func TestEventUnits(t *testing.T) {
	p := newProject(t, map[string]string{
		"replies.yaml": "replies:\n  - match: E2\n    role: judge\n    reply: { json: { verdict: true, reason: \"it is\" } }\n",
		"plans/p.yaml": listPlan + `
  - id: E1
    tool_name: map
    input:
      over: "{{E0.issues}}"
      do: { tool_name: builtin__reshape, input: { shape: { n: "{{item.n}}" } } }
  - id: E2
    tool_name: decide
    input:
      infer: "Blocked?"
      then: { tool_name: builtin__reshape, input: { shape: { went: then } } }
`})
	o := p.run(t, "plans/p.yaml", nil, nil)
	wantOK(t, o)
	wantUnits(t, o.events.events, path.KindRun, path.KindStep, path.KindItem, path.KindJudge)
}
