package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stepwise-dev/stepwise/engine"
	paths "github.com/stepwise-dev/stepwise/engine/path"
)

// TestDecisionMarks decides at every kind of stop that gives a unit its
// result and checks what the record says: a decided event with the value
// for a person's decision, the action on the end event of the unit it
// gave a result, and where a reused value came from instead.
func TestDecisionMarks(t *testing.T) {
	p := newProject(t, map[string]string{
		"tools/fails.yaml": "name: fails\ndescription: Fails.\nkind: exec\ncommand: sh\nargs: [\"-c\", \"exit 1\"]\noutput: text\n" +
			"input_schema: { type: object, properties: {} }\n",
		"replies.yaml": `replies:
  - match: E4
    reply: { tool_calls: [ { name: builtin__reshape, arguments: { shape: { a: 1 } } } ] }
  - match: E4
    reply: { json: { ok: true } }
`,
		"plans/p.yaml": `identifier: p
steps:
  - id: E1
    tool_name: builtin__reshape
    input: { shape: { v: 1 } }
  - id: E2
    tool_name: user__fails
    input: {}
  - id: E3
    tool_name: builtin__reshape
    input: { shape: { v: 3 } }
  - id: E4
    tool_name: agent
    input:
      prompt: "Go"
      tools: ["builtin__reshape"]
      max_iterations: 2
      output_schema: { type: object, required: [ok], properties: { ok: { type: boolean } } }
  - id: E5
    tool_name: user__fails
    input: {}
`,
	})
	hook := func(_ context.Context, st *engine.Stop) engine.Decision {
		switch {
		case st.Kind == engine.StopStep && st.Path == "E1":
			return engine.Decision{Action: engine.Inject, Value: map[string]any{"v": "by hand"}}
		case st.Kind == engine.StopError && st.Path == "E2":
			return engine.Decision{Action: engine.Replace, Value: "mended"}
		case st.Kind == engine.StopStep && st.Path == "E3":
			return engine.Decision{Action: engine.Inject, Value: map[string]any{"v": "kept"}, Origin: engine.FromFork}
		case st.Kind == engine.StopTool:
			return engine.Decision{Action: engine.Inject, Value: map[string]any{"a": "given"}}
		case st.Kind == engine.StopStep && st.Path == "E5":
			return engine.Decision{Action: engine.Fail, Value: "as recorded", Origin: engine.FromReplay}
		}
		return engine.Decision{}
	}
	out := p.run(t, "plans/p.yaml", nil, hook)
	if out.err != nil {
		t.Fatal(out.err)
	}
	var re *engine.RunError
	if out.res.Status != engine.StatusFailed || !errors.As(out.res.Err, &re) || re.Step != "E5" || re.Err.Error() != "as recorded" {
		t.Fatalf("the run ended %s (%v), want failed at E5 with the words given", out.res.Status, out.res.Err)
	}
	ends := map[string]engine.StepEnded{}
	for _, e := range out.events.of(engine.EventStepEnd) {
		ends[e.Path] = e.Payload.(engine.StepEnded)
	}
	for path, want := range map[string][3]string{
		"E1": {"skipped", "inject", ""}, "E2": {"ok", "replace", ""}, "E3": {"skipped", "", "fork"},
		"E4": {"ok", "", ""}, "E5": {"failed", "", "replay"},
	} {
		if e := ends[path]; string(e.Status) != want[0] || e.Decided != want[1] || e.Reused != want[2] {
			t.Errorf("%s ended %s, decided %q, reused %q; want %v", path, e.Status, e.Decided, e.Reused, want)
		}
	}
	calls := out.events.of(engine.EventToolEnd)
	if len(calls) != 2 || calls[1].Path != "E4/agent.1/builtin__reshape" || calls[1].Payload.(engine.ToolEnded).Decided != "inject" {
		t.Errorf("the agent's injected call: %+v", calls)
	}
	var decided []string
	for _, e := range out.events.of(engine.EventDecided) {
		d := e.Payload.(engine.Decided)
		decided = append(decided, e.Path+" "+d.Stop.String()+" "+d.Action+" "+engine.JSONText(d.Value))
	}
	want := []string{`E1 step inject {"v":"by hand"}`, `E2 error replace "mended"`, `E4/agent.1/builtin__reshape tool inject {"a":"given"}`}
	if len(decided) != len(want) {
		t.Fatalf("decided events %q, want %q (none for a reused value)", decided, want)
	}
	for i := range want {
		if decided[i] != want[i] {
			t.Errorf("decided event %d: %s, want %s", i, decided[i], want[i])
		}
	}
}

// TestHeldTime holds one item of a map at its step stop while the other
// item runs on: the held item's step shows the hold as held time, the
// other none (the hook's own time at its stops is not held), and the map
// its wall time with the hold beside it.
func TestHeldTime(t *testing.T) {
	p := newProject(t, map[string]string{
		"tools/nap.yaml": "name: nap\ndescription: Sleeps.\nkind: exec\ncommand: sh\nargs: [\"-c\", \"sleep 0.1; echo '{}'\"]\noutput: json\n" +
			"input_schema: { type: object, properties: {} }\n",
		"plans/p.yaml": `identifier: p
steps:
  - id: E1
    tool_name: map
    input:
      over: [a, b]
      do:
        - id: A
          tool_name: user__nap
          input: {}
`,
	})
	const hold = 400 * time.Millisecond
	hook := func(_ context.Context, st *engine.Stop) engine.Decision {
		if st.Kind == engine.StopStep && st.Path == "E1/do.0/A" {
			st.Hold()
			time.Sleep(hold)
			st.Release()
		} else {
			// A hook's own work, not waiting for anyone, is no hold.
			time.Sleep(5 * time.Millisecond)
		}
		return engine.Decision{}
	}
	out := p.run(t, "plans/p.yaml", nil, hook)
	if out.err != nil || out.res.Status != engine.StatusOK {
		t.Fatalf("run: %v %v", out.err, out.res.Err)
	}
	ends := map[string]engine.StepEnded{}
	for _, e := range out.events.of(engine.EventStepEnd) {
		ends[e.Path] = e.Payload.(engine.StepEnded)
	}
	held, free, parent := ends["E1/do.0/A"], ends["E1/do.1/A"], ends["E1"]
	ms := float64(hold.Milliseconds())
	if held.HeldMs < ms || held.Ms-held.HeldMs > held.HeldMs {
		t.Errorf("the held item took %.1fms, %.1fms of it held; want %v held, less of its own", held.Ms, held.HeldMs, hold)
	}
	// The hook took 5ms at each of its stops, and held none.
	if free.HeldMs != 0 {
		t.Errorf("the item that ran on shows %.3fms held", free.HeldMs)
	}
	if parent.HeldMs < ms || parent.HeldMs > parent.Ms || parent.Ms < held.Ms || parent.Ms < free.Ms {
		t.Errorf("the map took %.1fms, %.1fms of it held; its items %.1fms and %.1fms", parent.Ms, parent.HeldMs, held.Ms, free.Ms)
	}
	run := out.events.of(engine.EventRunEnd)[0].Payload.(engine.RunEnded)
	if run.HeldMs < ms {
		t.Errorf("the run shows %.1fms held, want %v", run.HeldMs, hold)
	}
	// The hold is told where it was, as long as the clocks measured it:
	// the map's held time is the holds within its wall time.
	helds := out.events.of(engine.EventHeld)
	if len(helds) != 1 || helds[0].Path != "E1/do.0/A" {
		t.Fatalf("held events %+v, want one at E1/do.0/A", helds)
	}
	if h := helds[0].Payload.(engine.Held); h.Stop != engine.StopStep || h.Ms != held.HeldMs {
		t.Errorf("the hold says %+v; the step %.3fms held", h, held.HeldMs)
	}
	var holds engine.Holds
	holds.Add(helds[0].Time, helds[0].Payload.(engine.Held))
	var mapEnd time.Time
	for _, e := range out.events.of(engine.EventStepEnd) {
		if e.Path == "E1" {
			mapEnd = e.Time
		}
	}
	within := holds.Within(mapEnd.Add(-time.Duration(parent.Ms*float64(time.Millisecond))), mapEnd)
	if d := within - time.Duration(parent.HeldMs*float64(time.Millisecond)); d.Abs() > time.Millisecond {
		t.Errorf("the holds within the map's time come to %v; it says %.3fms", within, parent.HeldMs)
	}
	// Without a hook nothing is held, and nothing is timed as held.
	out = p.run(t, "plans/p.yaml", nil, nil)
	for _, e := range out.events.of(engine.EventStepEnd) {
		if h := e.Payload.(engine.StepEnded).HeldMs; h != 0 {
			t.Errorf("%s shows %.1fms held with no hook", e.Path, h)
		}
	}
}

// TestHolds: holds of several threads count once where they overlap,
// whatever order they come in, and only within the stretch asked about.
func TestHolds(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	// hold is a hold from ms from to ms to.
	type hold struct{ from, to int }
	tests := []struct {
		name     string
		holds    []hold
		from, to int // the stretch asked about; to 0: up to the last hold
		want     time.Duration
	}{
		{"none", nil, 0, 100, 0},
		{"one", []hold{{10, 30}}, 0, 100, 20 * time.Millisecond},
		{"apart", []hold{{10, 30}, {50, 60}}, 0, 100, 30 * time.Millisecond},
		{"overlapping", []hold{{10, 30}, {20, 40}}, 0, 100, 30 * time.Millisecond},
		{"one inside another", []hold{{10, 50}, {20, 30}}, 0, 100, 40 * time.Millisecond},
		{"out of order", []hold{{50, 60}, {10, 30}, {25, 55}}, 0, 100, 50 * time.Millisecond},
		{"bridging two", []hold{{10, 20}, {40, 50}, {15, 45}}, 0, 100, 40 * time.Millisecond},
		{"touching", []hold{{10, 20}, {20, 30}}, 0, 100, 20 * time.Millisecond},
		{"cut at the stretch", []hold{{10, 30}, {50, 80}}, 20, 60, 20 * time.Millisecond},
		{"before the stretch", []hold{{10, 30}}, 40, 60, 0},
		{"to the last", []hold{{10, 30}}, 20, 0, 10 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h engine.Holds
			for _, x := range tt.holds {
				h.Add(at(x.to), engine.Held{Stop: engine.StopStep, Ms: float64(x.to - x.from)})
			}
			to := time.Time{}
			if tt.to > 0 {
				to = at(tt.to)
			}
			if got := h.Within(at(tt.from), to); got != tt.want {
				t.Errorf("within %d..%d: %v, want %v", tt.from, tt.to, got, tt.want)
			}
			if len(tt.holds) > 0 {
				first := tt.holds[0].from
				for _, x := range tt.holds {
					first = min(first, x.from)
				}
				if !h.First().Equal(at(first)) {
					t.Errorf("first hold at %v, want %v", h.First(), at(first))
				}
			}
		})
	}
}

// TestHeldAtUnitStops holds a step at its step stop, a round's tool call
// at its tool stop and the solver at its stop: each unit's time runs from
// its stop, so its end says it was held that long, never longer than it
// took, and the held event at its path says the same.
func TestHeldAtUnitStops(t *testing.T) {
	p := newProject(t, map[string]string{
		"replies.yaml": `replies:
  - match: E1
    reply:
      tool_calls: [{ name: builtin__reshape, arguments: { shape: { n: 2 } } }]
  - match: E1
    reply: { json: { ok: true } }
  - match: solver
    role: solver
    reply: { text: "Done." }
`,
		"plans/p.yaml": `identifier: p
steps:
  - id: E0
    tool_name: builtin__reshape
    input: { shape: { n: 1 } }
  - id: E1
    tool_name: agent
    input:
      prompt: "Look."
      tools: ["builtin__reshape"]
      output_schema: { type: object, required: [ok], properties: { ok: { type: boolean } } }
solver:
  query_to_answer: "Sum up."
  data: { n: "{{E0.n}}" }
`,
	})
	const hold = 100 * time.Millisecond
	held := map[engine.StopKind]string{engine.StopStep: "E0 solver", engine.StopTool: "E1/agent.1/builtin__reshape"}
	hook := func(_ context.Context, st *engine.Stop) engine.Decision {
		for _, p := range strings.Fields(held[st.Kind]) {
			if p == st.Path {
				st.Hold()
				time.Sleep(hold)
				st.Release()
			}
		}
		return engine.Decision{}
	}
	out := p.run(t, "plans/p.yaml", nil, hook)
	if out.err != nil || out.res.Status != engine.StatusOK {
		t.Fatalf("run: %v %v", out.err, out.res.Err)
	}
	type times struct{ ms, heldMs float64 }
	units := map[string]times{}
	for _, e := range out.events.of(engine.EventStepEnd) {
		end := e.Payload.(engine.StepEnded)
		units[e.Path] = times{end.Ms, end.HeldMs}
	}
	for _, e := range out.events.of(engine.EventToolEnd) {
		if end := e.Payload.(engine.ToolEnded); e.Unit == paths.KindCall {
			units[e.Path] = times{end.Ms, end.HeldMs}
		}
	}
	holds := map[string]float64{}
	for _, e := range out.events.of(engine.EventHeld) {
		holds[e.Path] += e.Payload.(engine.Held).Ms
	}
	for _, path := range []string{"E0", "E1/agent.1/builtin__reshape", "solver"} {
		u := units[path]
		if u.heldMs < float64(hold.Milliseconds()) || u.heldMs > u.ms || u.heldMs != holds[path] {
			t.Errorf("%s took %.3fms, %.3fms of it held; its holds %.3fms, want %v", path, u.ms, u.heldMs, holds[path], hold)
		}
	}
	if e1 := units["E1"]; e1.heldMs != units["E1/agent.1/builtin__reshape"].heldMs {
		t.Errorf("E1 shows %.3fms held, its call %.3fms", e1.heldMs, units["E1/agent.1/builtin__reshape"].heldMs)
	}
}

// TestHeldNow: a hold keeps when it was first seen while it goes on, a new
// one is seen at the look that finds it, and one that ended is forgotten.
func TestHeldNow(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	var h engine.HeldNow
	h = h.Update([]string{"E1/do.0"}, t0)
	h = h.Update([]string{"E1/do.0", "E1/do.1"}, t0.Add(time.Second))
	if len(h) != 2 || !h["E1/do.0"].Equal(t0) || !h["E1/do.1"].Equal(t0.Add(time.Second)) {
		t.Fatalf("after a second look: %v", h)
	}
	h = h.Update([]string{"E1/do.1"}, t0.Add(2*time.Second))
	if _, ok := h["E1/do.0"]; ok || !h["E1/do.1"].Equal(t0.Add(time.Second)) {
		t.Errorf("after do.0's hold ended: %v", h)
	}
}
