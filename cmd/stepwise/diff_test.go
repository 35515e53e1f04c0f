package main

import (
	"encoding/json"
	"testing"

	"github.com/stepwise-dev/stepwise/engine/chat"
)

// TestCountsAgree runs a solver plan and reads its steps and tokens back
// from every place that counts them: the run's envelope, the list of
// runs, inspect (its count and its steps) and both sides of a diff. The
// finish is a step in each.
func TestCountsAgree(t *testing.T) {
	runProject(t)
	decode := func(args ...string) map[string]any {
		t.Helper()
		out, errOut, code := runCLI(t, args...)
		var v map[string]any
		if err := json.Unmarshal([]byte(out), &v); code != 0 || err != nil {
			t.Fatalf("%v: exit %d, %v\n%s%s", args, code, err, out, errOut)
		}
		return v
	}
	out, errOut, code := runCLI(t, "run", "narrate", "--json")
	var env struct {
		RunID         string     `json:"run_id"`
		StepsExecuted int        `json:"steps_executed"`
		Usage         chat.Usage `json:"usage"`
	}
	if err := json.Unmarshal([]byte(out), &env); code != 0 || err != nil {
		t.Fatalf("exit %d, %v\n%s%s", code, err, out, errOut)
	}
	steps, tokens := float64(env.StepsExecuted), float64(env.Usage.Total())
	if steps != 2 || tokens != 1100 {
		t.Fatalf("the envelope counts %v steps and %v tokens, want E0 and the solver, 1100 tokens", steps, tokens)
	}
	listed := decode("runs", "--json")["runs"].([]any)[0].(map[string]any)
	inspected := decode("inspect", env.RunID, "--json")
	diff := decode("diff", env.RunID, env.RunID, "--json")
	a, b := diff["a"].(map[string]any), diff["b"].(map[string]any)
	for _, c := range []struct {
		where string
		got   any
		want  float64
	}{
		{"runs: steps", listed["steps"], steps},
		{"runs: tokens", listed["tokens"], tokens},
		{"inspect: steps_executed", inspected["steps_executed"], steps},
		{"inspect: its steps", float64(len(inspected["steps"].([]any))), steps},
		{"diff: A's steps", a["steps"], steps},
		{"diff: A's tokens", a["tokens"], tokens},
		{"diff: B's steps", b["steps"], steps},
		{"diff: B's tokens", b["tokens"], tokens},
		{"diff: its rows", diff["count"], steps},
	} {
		if c.got != c.want {
			t.Errorf("%s is %v, the envelope's %v", c.where, c.got, c.want)
		}
	}
}
