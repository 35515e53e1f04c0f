package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/stepwise-dev/stepwise/engine"
)

// haltPlan maps three items one at a time, the last of which has no n
// (its input fails to render), then reads the map.
const haltPlan = `
identifier: halt
name: Halt
description: Maps three items, the last without n, then reads the map.
steps:
  - id: E0
    tool_name: builtin__reshape
    input: { shape: { items: [{ n: 1 }, { n: 2 }, {}] } }
  - id: E1
    tool_name: map
    input:
      over: "{{E0.items}}"
      concurrency: 1
      do:
        tool_name: builtin__reshape
        input: { shape: { n: "{{item.n}}" } }
  - id: E2
    tool_name: builtin__reshape
    input: { shape: { count: "{{E1.count}}" } }
`

// TestAbortedStepsInTheRecord aborts stepwise debug at an item of a map,
// at its step stop (before it started) and at its error stop: the
// record (stepwise inspect, text and --json) shows the item and the map
// around it aborted, not failed, the item aborted at its step stop with
// the time it was held there, and the run's step count is the same in the
// debug envelope, stepwise runs and inspect; a replay of the run still
// stops at the item, and a fork from it runs it again.
func TestAbortedStepsInTheRecord(t *testing.T) {
	for _, tc := range []struct {
		name, at, stop string
		// steps are the steps the record shows, with how each ended.
		steps map[string]engine.StepStatus
		// input is what the item aborted at its step stop was to run
		// with, as the stop showed it; empty at the error stop.
		input string
	}{
		{"at an item's step stop", "E1/do.1", "step",
			map[string]engine.StepStatus{"E0": engine.StepOK, "E1": engine.StepAborted, "E1/do.0": engine.StepOK, "E1/do.1": engine.StepAborted},
			`{"shape":{"n":2}}`},
		{"at an item's error stop", "E1/do.2", "error",
			map[string]engine.StepStatus{"E0": engine.StepOK, "E1": engine.StepAborted, "E1/do.0": engine.StepOK, "E1/do.1": engine.StepOK, "E1/do.2": engine.StepAborted},
			""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			debugProject(t, map[string]string{"plans/halt.yaml": haltPlan})
			c := startDebug(t, "halt", "--continue", "--break", tc.at+" "+tc.stop)
			st := c.until(func(l map[string]any) bool { return l["reason"] != nil })
			if stop, _ := st["stop"].(map[string]any); stop == nil || stop["path"] != tc.at || stop["kind"] != tc.stop {
				t.Fatalf("stopped at %v, want %s (%s)", st, tc.at, tc.stop)
			}
			c.send("abort")
			out, errOut, code := c.end()
			lines := jsonLines(t, out)
			end := lines[len(lines)-1]
			want := "run aborted at " + tc.at
			if code != exitInterrupted || end["status"] != "aborted" || !strings.HasPrefix(fmt.Sprint(end["error"]), want) {
				t.Fatalf("exit %d, end %v\n%s", code, end, errOut)
			}
			id, _ := end["run_id"].(string)
			steps := len(tc.steps)
			if n, _ := end["steps_executed"].(float64); int(n) != steps {
				t.Errorf("the debug envelope counts %v steps, want %d", end["steps_executed"], steps)
			}

			env := inspectJSONOf(t, id)
			status := map[string]engine.StepStatus{}
			var item stepJSON
			for _, s := range env.StepList {
				status[s.Path] = s.Status
				if s.Path == tc.at {
					item = s
				}
			}
			if fmt.Sprint(status) != fmt.Sprint(tc.steps) {
				t.Errorf("inspect --json step statuses %v, want %v", status, tc.steps)
			}
			if !strings.HasPrefix(item.Error, want) || item.StartedAt == nil {
				t.Errorf("the aborted item in the record: %+v", item)
			}
			var input bytes.Buffer
			json.Compact(&input, item.Input)
			if tc.input != "" && (item.HeldMs <= 0 || item.Ms < item.HeldMs || input.String() != tc.input) {
				t.Errorf("the item aborted at its step stop: held %v of %v ms, input %s", item.HeldMs, item.Ms, item.Input)
			}
			if len(env.Errors) != 0 {
				t.Errorf("an abort is no error of a step: %+v", env.Errors)
			}
			if env.Status != "aborted" || env.Steps != steps || len(env.StepList) != steps {
				t.Errorf("inspect --json: status %s, steps_executed %d, %d steps listed; want aborted, %d", env.Status, env.Steps, len(env.StepList), steps)
			}

			text, errOut, code := runCLI(t, "inspect", id)
			if code != 0 {
				t.Fatalf("inspect: exit %d\n%s", code, errOut)
			}
			for _, line := range []string{fmt.Sprintf(`steps \(%d\)`, steps), `  E1 +aborted `, `  ` + regexp.QuoteMeta(tc.at) + ` +aborted `, `      error  ` + regexp.QuoteMeta(want)} {
				if !regexp.MustCompile(`(?m)^` + line).MatchString(text) {
					t.Errorf("inspect shows no line %q:\n%s", line, text)
				}
			}
			if strings.Contains(text, "failed") {
				t.Errorf("inspect says failed where the run was aborted:\n%s", text)
			}

			out, errOut, code = runCLI(t, "runs", "--json")
			var listing struct{ Runs []runJSON }
			if err := json.Unmarshal([]byte(out), &listing); err != nil || code != 0 || len(listing.Runs) == 0 {
				t.Fatalf("runs: exit %d, %v: %s", code, err, errOut)
			}
			if r := listing.Runs[0]; r.ID != id || r.Status != "aborted" || r.Steps != steps {
				t.Errorf("runs lists %s %s with %d steps, want %s aborted with %d", r.ID, r.Status, r.Steps, id, steps)
			}

			// A replay of the run reproduces it up to where the person
			// stopped it, and aborts there too: at its step stop, where
			// the record has no step to answer with, or at its error
			// stop, once the step failed as recorded.
			out, errOut, code = runCLI(t, "replay", id, "--json")
			var replay struct {
				RunID     string `json:"run_id"`
				Identical bool
				AbortedAt string `json:"aborted_at"`
			}
			if err := json.Unmarshal([]byte(out), &replay); err != nil || code != 0 {
				t.Fatalf("replay: exit %d, %v\n%s%s", code, err, out, errOut)
			}
			if !replay.Identical || replay.AbortedAt != tc.at {
				t.Errorf("the replay: identical %v, aborted at %q; want it to reproduce the run up to its abort at %s\n%s", replay.Identical, replay.AbortedAt, tc.at, out)
			}
			if got := inspectJSONOf(t, replay.RunID); got.Status != "aborted" {
				t.Errorf("the replay's own run ended %s, want aborted as the recorded run was", got.Status)
			}

			// A fork from the item reuses the item before it, never the
			// aborted one: that has no value to reuse, and runs again.
			out, errOut, _ = runCLI(t, "fork", id, "--from", tc.at, "--json")
			var fork struct {
				RunID string `json:"run_id"`
			}
			if err := json.Unmarshal([]byte(out), &fork); err != nil || fork.RunID == "" {
				t.Fatalf("fork: %v\n%s%s", err, out, errOut)
			}
			reused := map[string]string{}
			for _, s := range inspectJSONOf(t, fork.RunID).StepList {
				reused[s.Path] = s.Status.String() + " " + s.Reused
			}
			if reused["E1/do.0"] != "skipped fork" || reused[tc.at] != "ok " && reused[tc.at] != "failed " {
				t.Errorf("the fork from %s: %v; want E1/do.0 reused, %s run again", tc.at, reused, tc.at)
			}
		})
	}
}

// TestReplayOfAnAbortAmongItems aborts the demo's triage at an item's
// round while the other item, beside it, is held where the run's stop
// found it. A replay answers at once what took time in the recorded run,
// so the other item comes further before the replay reaches the round:
// where the record has nothing of it, the abort had cut it, and the
// replay reproduces the run up to the abort, the same each time.
func TestReplayOfAnAbortAmongItems(t *testing.T) {
	demoProject(t)
	const at = "assess/do.1/verdict/agent.2"
	out, errOut, _ := debugCLI(t, "c\nabort\n", "triage_queue", `{"on_call": "Priya"}`, "--json", "--break", at+" round")
	var id string
	for _, l := range jsonLines(t, out) {
		if l["finished"] == true {
			id, _ = l["run_id"].(string)
			if l["error"] != "run aborted at "+at {
				t.Fatalf("the run ended %v, want aborted at %s\n%s", l, at, errOut)
			}
		}
	}
	for range 3 {
		out, errOut, code := runCLI(t, "replay", id, "--json")
		var replay struct {
			Identical bool
			AbortedAt string `json:"aborted_at"`
		}
		if err := json.Unmarshal([]byte(out), &replay); err != nil || code != 0 || !replay.Identical || replay.AbortedAt != at {
			t.Fatalf("replay: exit %d, %v; want it to reproduce the run up to its abort at %s\n%s%s", code, err, at, out, errOut)
		}
	}
}
