package engine_test

import (
	"context"
	"testing"

	"github.com/stepwise-dev/stepwise/engine"
)

// TestStepsExecutedCountsStartedSteps checks that a run counts the steps
// its record shows, each once it starts: a step aborted at its stop
// starts and ends there, aborted, and is one; a solver given its answer
// at its stop started, and is one.
func TestStepsExecutedCountsStartedSteps(t *testing.T) {
	p := newProject(t, map[string]string{
		"plans/two.yaml": `identifier: two
steps:
  - id: E1
    tool_name: builtin__reshape
    input: { shape: { v: 1 } }
  - id: E2
    tool_name: builtin__reshape
    input: { shape: { v: 2 } }
`,
		"plans/solved.yaml": `identifier: solved
steps:
  - id: E1
    tool_name: builtin__reshape
    input: { shape: { v: 1 } }
solver:
  query_to_answer: "Say {{E1.v}}"
`,
	})
	for _, tc := range []struct {
		name, plan, at string
		decision       engine.Decision
		status         engine.RunStatus
		want           int
	}{
		{"a step aborted at its stop", "plans/two.yaml", "E2", engine.Decision{Action: engine.Abort}, engine.StatusAborted, 2},
		{"a solver answered at its stop", "plans/solved.yaml", "solver", engine.Decision{Action: engine.Inject, Value: "one"}, engine.StatusOK, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hook := func(_ context.Context, st *engine.Stop) engine.Decision {
				if st.Kind == engine.StopStep && st.Path == tc.at {
					return tc.decision
				}
				return engine.Decision{}
			}
			out := p.run(t, tc.plan, nil, hook)
			if out.err != nil || out.res.Status != tc.status {
				t.Fatalf("the run ended %s (%v, %v), want %s", out.res.Status, out.err, out.res.Err, tc.status)
			}
			started := len(out.events.of(engine.EventStepStart))
			if out.res.StepsExecuted != tc.want || started != tc.want {
				t.Errorf("steps executed %d, steps started %d; want %d", out.res.StepsExecuted, started, tc.want)
			}
		})
	}
}

// TestDecisionMadeAgain checks that a replay's decision marked Again is
// recorded as a decision with the replay's origin, and that one a replay
// makes without it (answering from the record) is not a decision at all.
func TestDecisionMadeAgain(t *testing.T) {
	p := newProject(t, map[string]string{
		"plans/two.yaml": `identifier: two
steps:
  - id: E1
    tool_name: builtin__reshape
    input: { shape: { v: 1 } }
  - id: E2
    tool_name: builtin__reshape
    input: { shape: { v: 2 } }
`,
	})
	hook := func(_ context.Context, st *engine.Stop) engine.Decision {
		if st.Kind != engine.StopStep {
			return engine.Decision{}
		}
		d := engine.Decision{Action: engine.Inject, Value: map[string]any{"v": st.Path}, Origin: engine.FromReplay}
		if st.Path == "E1" {
			d.Again = []engine.Decided{{Stop: engine.StopStep, Action: "inject", Value: d.Value}}
		}
		return d
	}
	out := p.run(t, "plans/two.yaml", nil, hook)
	if out.err != nil || out.res.Status != engine.StatusOK {
		t.Fatalf("run: %v %v", out.err, out.res.Err)
	}
	decided := out.events.of(engine.EventDecided)
	if len(decided) != 1 || decided[0].Path != "E1" {
		t.Fatalf("decided events %+v, want one, at E1", decided)
	}
	if d := decided[0].Payload.(engine.Decided); d.Origin != "replay" || d.Action != "inject" || engine.JSONText(d.Value) != `{"v":"E1"}` {
		t.Errorf("E1's decision %+v, want inject {\"v\":\"E1\"} with origin replay", d)
	}
	for _, e := range out.events.of(engine.EventStepEnd) {
		if end := e.Payload.(engine.StepEnded); end.Decided != "" || end.Reused != "replay" {
			t.Errorf("%s ended decided %q, reused %q; want reused replay", e.Path, end.Decided, end.Reused)
		}
	}
}
