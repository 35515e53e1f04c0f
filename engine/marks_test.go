package engine_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stepwise-dev/stepwise/engine"
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
	// Without a hook nothing is held, and nothing is timed as held.
	out = p.run(t, "plans/p.yaml", nil, nil)
	for _, e := range out.events.of(engine.EventStepEnd) {
		if h := e.Payload.(engine.StepEnded).HeldMs; h != 0 {
			t.Errorf("%s shows %.1fms held with no hook", e.Path, h)
		}
	}
}
