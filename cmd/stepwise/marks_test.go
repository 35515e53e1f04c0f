package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/tui/format"
)

// marksProjectFiles is the replay project with a tool that fails, and
// plans that fail and that hold a map item.
var marksProjectFiles = map[string]string{
	".stepwise/tools/fail.yaml": `name: fail
description: Notes that it ran to ran.log, then exits 1.
kind: exec
command: sh
args: ["-c", "echo ran >> ran.log; echo 'no such issue' >&2; exit 1"]
output: text
input_schema: { type: object, properties: {} }
`,
	".stepwise/tools/nap.yaml": `name: nap
description: Sleeps for a tenth of a second.
kind: exec
command: sh
args: ["-c", "sleep 0.1; echo '{}'"]
output: json
input_schema: { type: object, properties: {} }
`,
	".stepwise/plans/failing.yaml": `identifier: failing
name: Failing
description: Notes, then fails.
steps:
  - id: E0
    tool_name: user__note
    input: { text: "before" }
  - id: E1
    tool_name: user__fail
    input: {}
`,
	".stepwise/plans/asking.yaml": `identifier: asking
name: Asking
description: Asks whether to go on.
steps:
  - id: E0
    tool_name: builtin__reshape
    input: { shape: { n: 1 } }
  - id: Q
    tool_name: ask
    input:
      prompt: "Go?"
      output_schema: { type: object, required: [go], properties: { go: { type: boolean, description: Go } } }
output: { go: "{{Q.answer.go}}" }
`,
	".stepwise/plans/items.yaml": `identifier: items
name: Items
description: Two items that nap side by side.
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
	".stepwise/tools/wait.yaml": `name: wait
description: Sleeps for as many seconds as it is given.
kind: exec
command: sh
args: ["-c", "sleep \"$1\"; echo '{}'", "wait", "{{input.secs}}"]
output: json
input_schema: { type: object, required: [secs], properties: { secs: { type: string } } }
`,
	".stepwise/plans/noted.yaml": `identifier: noted
name: Noted
description: Notes each item, then counts, then says the count.
steps:
  - id: E1
    tool_name: map
    input:
      over: [a, b]
      do:
        - id: A
          tool_name: user__note
          input: { text: "{{item}}" }
  - id: E2
    tool_name: builtin__reshape
    input: { shape: { n: 1 } }
  - id: E3
    tool_name: builtin__reshape
    input: { shape: { n: "{{E2.n}}" } }
`,
	".stepwise/plans/branchy.yaml": `identifier: branchy
name: Branchy
description: Takes a branch that calls a plan that notes, then notes.
steps:
  - id: E1
    tool_name: decide
    input:
      if: { value: 1, op: eq, to: 1 }
      then:
        - id: A
          tool_name: plan__noted
          input: {}
  - id: E2
    tool_name: user__note
    input: { text: "after" }
`,
	".stepwise/plans/uneven.yaml": `identifier: uneven
name: Uneven
description: Two items side by side, the first slower, each a wait and a card.
steps:
  - id: E1
    tool_name: map
    input:
      over: ["0.3", "0"]
      concurrency: 2
      do:
        - id: A
          tool_name: user__wait
          input: { secs: "{{item}}" }
        - id: B
          tool_name: builtin__reshape
          input: { shape: { i: "{{index}}" } }
`,
}

// marksProject writes the project into a fresh directory and makes it the
// working directory.
func marksProject(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, files := range []map[string]string{replayProjectFiles, marksProjectFiles} {
		for name, text := range files {
			file := filepath.Join(dir, name)
			if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	isolate(t, dir)
	return dir
}

var sessionRunLine = regexp.MustCompile(`(?m)^run ([0-9a-f]+) `)

// sessionRun is the id of the run a debug session recorded, from what it
// wrote to stderr.
func sessionRun(t *testing.T, stderr string) string {
	t.Helper()
	m := sessionRunLine.FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("the session named no recorded run:\n%s", stderr)
	}
	return m[1]
}

// inspectJSONOf is stepwise inspect --json of run id.
func inspectJSONOf(t *testing.T, id string) inspectJSON {
	t.Helper()
	out, errOut, code := runCLI(t, "inspect", id, "--json")
	if code != 0 {
		t.Fatalf("inspect %s: exit %d\n%s", id, code, errOut)
	}
	var env inspectJSON
	if err := json.Unmarshal([]byte(out), &env); err != nil {
		t.Fatal(err)
	}
	for i, dec := range env.Decisions {
		if len(dec.Value) > 0 {
			env.Decisions[i].Value = canonicalJSON(t, dec.Value)
		}
	}
	return env
}

// canonicalJSON is raw compact, its keys sorted, so that two texts of one
// value compare equal.
func canonicalJSON(t *testing.T, raw json.RawMessage) json.RawMessage {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func stepOf(t *testing.T, env inspectJSON, path string) stepJSON {
	t.Helper()
	for _, s := range env.StepList {
		if s.Path == path {
			return s
		}
	}
	t.Fatalf("run %s has no step %s", env.ID, path)
	return stepJSON{}
}

// TestDebugMarksDecisions injects a step's result and replaces a round's
// reply through stepwise debug --json: the record marks both (inspect,
// the runs list, diff), and a replay reproduces the run, the replaced
// reply made again, without a divergence; so does a replay of the replay.
func TestDebugMarksDecisions(t *testing.T) {
	dir := marksProject(t)
	stdin := strings.Join([]string{
		`inject {"noted": "by hand"}`,
		`continue`,
		`replace {"text": "{\"found\": \"a replaced reply\"}"}`,
		`continue`,
	}, "\n") + "\n"
	out, errOut, code := debugCLI(t, stdin, "probe", "--break", "E0 step", "--break", "E2/agent.1 reply", "--json")
	if code != 0 {
		t.Fatalf("debug: exit %d\n%s\n%s", code, out, errOut)
	}
	id := sessionRun(t, errOut)
	env := inspectJSONOf(t, id)
	if s := stepOf(t, env, "E0"); s.Status != "skipped" || s.Decided != "inject" || s.Reused != "" {
		t.Errorf("E0 is %s, decided %q, reused %q; want skipped, decided by inject", s.Status, s.Decided, s.Reused)
	}
	if s := stepOf(t, env, "E3"); s.Decided != "" || s.Reused != "" {
		t.Errorf("E3 ran, but is marked decided %q, reused %q", s.Decided, s.Reused)
	}
	injected, replaced := json.RawMessage(`{"noted":"by hand"}`), json.RawMessage(`{"text":"{\"found\": \"a replaced reply\"}"}`)
	want := []decisionJSON{{Path: "E0", Stop: "step", Action: "inject", Value: injected}, {Path: "E2/agent.1", Stop: "reply", Action: "replace", Value: replaced}}
	if !reflect.DeepEqual(env.Decisions, want) {
		t.Errorf("decisions %+v, want %+v", env.Decisions, want)
	}
	out, _, _ = runCLI(t, "inspect", id)
	if !strings.Contains(out, "skipped") || !strings.Contains(out, "✎ inject") || !strings.Contains(out, "decided by hand (2)") ||
		!strings.Contains(out, "✎ E2/agent.1  replace at its reply stop") {
		t.Errorf("inspect does not mark the decisions:\n%s", out)
	}
	out, _, _ = runCLI(t, "runs", "--json")
	var list struct{ Runs []runJSON }
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list.Runs) != 1 || list.Runs[0].Decided != 2 {
		t.Errorf("runs --json: %v\n%s", err, out)
	}
	if out, _, _ = runCLI(t, "runs"); !strings.Contains(out, "ok ✎") {
		t.Errorf("the runs list does not mark the run:\n%s", out)
	}

	// With the replies spent, a model call that reached the script fails.
	os.WriteFile(filepath.Join(dir, "replies.yaml"), []byte("replies: []\n"), 0o644)
	notes, _ := os.ReadFile(filepath.Join(dir, "notes.log"))
	replayOf := func(id string) replayJSON {
		t.Helper()
		out, errOut, code := runCLI(t, "replay", id, "--json")
		var rep replayJSON
		if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 || !rep.Identical || rep.Divergence != nil {
			t.Fatalf("replay of %s: exit %d, %v\n%s\n%s", id, code, err, out, errOut)
		}
		return rep
	}
	rep := replayOf(id)
	if after, _ := os.ReadFile(filepath.Join(dir, "notes.log")); string(after) != string(notes) {
		t.Errorf("the replay ran a tool: notes.log went from %q to %q", notes, after)
	}
	// The replay's record marks what it reused, and lists both of the
	// person's decisions as made again by the replay, never as decided by
	// hand: nobody decided anything in it. The reply it replaced is held
	// there, so that it replays in turn.
	again := inspectJSONOf(t, rep.RunID)
	if s := stepOf(t, again, "E0"); s.Reused != "replay" || s.Decided != "" {
		t.Errorf("the replay's E0: decided %q, reused %q; want reused from the replay", s.Decided, s.Reused)
	}
	wantAgain := []decisionJSON{{Path: "E0", Stop: "step", Action: "inject", Value: injected, Origin: "replay"}, {Path: "E2/agent.1", Stop: "reply", Action: "replace", Value: replaced, Origin: "replay"}}
	if !reflect.DeepEqual(again.Decisions, wantAgain) {
		t.Errorf("the replay's decisions %+v, want %+v", again.Decisions, wantAgain)
	}
	out, _, _ = runCLI(t, "inspect", rep.RunID)
	if strings.Contains(out, "decided by hand") || strings.Contains(out, "✎") || !strings.Contains(out, "made again by the replay (2)") ||
		!strings.Contains(out, "↺ E2/agent.1  replace at its reply stop") || !strings.Contains(out, "↺ E0  inject at its step stop") {
		t.Errorf("inspect of the replay does not list what it made again, replayed:\n%s", out)
	}
	out, _, _ = runCLI(t, "runs", "--json")
	var both struct{ Runs []runJSON }
	if err := json.Unmarshal([]byte(out), &both); err != nil || len(both.Runs) != 2 || both.Runs[0].ID != rep.RunID || both.Runs[0].Decided != 0 {
		t.Errorf("runs --json: the replay is not the newest run, or counts decisions by hand: %v\n%s", err, out)
	}
	replayOf(rep.RunID)

	// diff marks each run's steps: decided by hand in A, replayed in B,
	// the agent step E2 by the decision on its round's reply. Nothing
	// differs, so the table lists no step.
	out, errOut, code = runCLI(t, "diff", id, rep.RunID, "--json")
	var diff diffJSON
	if err := json.Unmarshal([]byte(out), &diff); code != 0 || err != nil {
		t.Fatalf("diff --json: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	marks := map[string][2]string{}
	for _, d := range diff.Steps {
		if d.Differs {
			t.Errorf("%s differs: %+v", d.Path, d)
		}
		marks[d.Path] = [2]string{format.Mark(d.DecidedA, d.ReusedA), format.Mark(d.DecidedB, d.ReusedB)}
	}
	wantMarks := map[string][2]string{"E0": {"✎", "↺"}, "E1": {"", "↺"}, "E2": {"✎", "↺"}, "E3": {"", "↺"}}
	if !reflect.DeepEqual(marks, wantMarks) {
		t.Errorf("diff marks %v, want %v", marks, wantMarks)
	}
	out, errOut, code = runCLI(t, "diff", id, rep.RunID)
	if code != 0 || !strings.HasSuffix(out, "\nno step differs: 4 steps the same\n") || strings.Contains(out, "PATH") {
		t.Errorf("diff: exit %d\n%s%s", code, out, errOut)
	}
}

// TestDiffMarksAToolCallDecided injects a tool call's result at its tool
// stop through stepwise debug --json: diff marks the agent step the call
// is a unit of, in the run and in its replay.
func TestDiffMarksAToolCallDecided(t *testing.T) {
	marksProject(t)
	out, errOut, code := debugCLI(t, "inject {\"noted\": \"by hand\"}\ncontinue\n", "probe", "--continue", "--break", "E2/agent.1/* tool", "--json")
	if code != 0 {
		t.Fatalf("debug: exit %d\n%s\n%s", code, out, errOut)
	}
	id := sessionRun(t, errOut)
	env := inspectJSONOf(t, id)
	if len(env.Decisions) != 1 || env.Decisions[0].Stop != "tool" || env.Decisions[0].Action != "inject" {
		t.Fatalf("decisions %+v, want one inject at a tool stop", env.Decisions)
	}
	out, errOut, code = runCLI(t, "replay", id, "--json")
	var rep replayJSON
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 || !rep.Identical {
		t.Fatalf("replay: exit %d, %v\n%s\n%s", code, err, out, errOut)
	}
	out, errOut, code = runCLI(t, "diff", id, rep.RunID, "--json")
	var diff diffJSON
	if err := json.Unmarshal([]byte(out), &diff); code != 0 || err != nil {
		t.Fatalf("diff --json: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	for _, d := range diff.Steps {
		a, b := format.Mark(d.DecidedA, d.ReusedA), format.Mark(d.DecidedB, d.ReusedB)
		if d.Path == "E2" && (d.DecidedA != "inject" || b != "↺") {
			t.Errorf("E2, whose tool call was injected, is marked %q in A (%q) and %q in B; want ✎ inject and ↺", a, d.DecidedA, b)
		}
		if d.Path == "E1" && a != "" {
			t.Errorf("E1 ran in A, but is marked %q", a)
		}
	}
}

// TestDebugMarksAnAnswer answers an ask through stepwise debug --json:
// the ask step is marked decided by the answer, and the run replays.
func TestDebugMarksAnAnswer(t *testing.T) {
	marksProject(t)
	out, errOut, code := debugCLI(t, "continue\nanswer {\"go\": true}\ncontinue\n", "asking", "--break", "E0 step", "--json")
	if code != 0 || !strings.Contains(out, `"output":{"go":true}`) {
		t.Fatalf("debug: exit %d\n%s\n%s", code, out, errOut)
	}
	id := sessionRun(t, errOut)
	env := inspectJSONOf(t, id)
	if s := stepOf(t, env, "Q"); s.Decided != "answer" {
		t.Errorf("the ask step is marked decided %q, want answer", s.Decided)
	}
	if s := stepOf(t, env, "E0"); s.Decided != "" {
		t.Errorf("E0 ran, but is marked decided %q", s.Decided)
	}
	out, errOut, code = runCLI(t, "replay", id, "--json")
	var rep replayJSON
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 || !rep.Identical {
		t.Fatalf("replay: exit %d, %v\n%s\n%s", code, err, out, errOut)
	}
	// The replay answered the ask from the record: listed, with the
	// replay's mark, and not as decided by hand.
	again := inspectJSONOf(t, rep.RunID)
	if s := stepOf(t, again, "Q"); s.Decided != "" || s.Reused != "replay" {
		t.Errorf("the replay's ask step is marked decided %q, reused %q; want reused replay", s.Decided, s.Reused)
	}
	if want := []decisionJSON{{Path: "Q", Stop: "ask", Action: "answer", Value: json.RawMessage(`{"go":true}`), Origin: "replay"}}; !reflect.DeepEqual(again.Decisions, want) {
		t.Errorf("the replay's decisions %+v, want %+v", again.Decisions, want)
	}
}

// TestDebugReplaysAFailure records a run whose exec tool exits 1 through
// stepwise debug --json, and replays it: the step fails with the recorded
// error, the tool not run again, and the replay's run fails as the
// recorded one did.
func TestDebugReplaysAFailure(t *testing.T) {
	dir := marksProject(t)
	out, errOut, code := debugCLI(t, "continue\ncontinue\ncontinue\n", "failing", "--json")
	if code != exitFailure {
		t.Fatalf("debug: exit %d, want %d\n%s\n%s", code, exitFailure, out, errOut)
	}
	id := sessionRun(t, errOut)
	recorded := inspectJSONOf(t, id)
	failed := stepOf(t, recorded, "E1")
	if failed.Status != "failed" || !strings.Contains(failed.Error, "exited with status 1: no such issue") {
		t.Fatalf("the recorded E1: %s %q", failed.Status, failed.Error)
	}
	out, errOut, code = runCLI(t, "replay", id, "--json")
	var rep replayJSON
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 || !rep.Identical || rep.FailedAt != "E1" {
		t.Fatalf("replay: exit %d, %v\n%s\n%s", code, err, out, errOut)
	}
	if ran, _ := os.ReadFile(filepath.Join(dir, "ran.log")); string(ran) != "ran\n" {
		t.Errorf("the failing tool ran %d times, want once", strings.Count(string(ran), "ran"))
	}
	replayed := inspectJSONOf(t, rep.RunID)
	if replayed.Status != recorded.Status || replayed.Cause != recorded.Cause {
		t.Errorf("the replay ended %s (%s), the recorded run %s (%s)", replayed.Status, replayed.Cause, recorded.Status, recorded.Cause)
	}
	if s := stepOf(t, replayed, "E1"); s.Status != "failed" || s.Error != failed.Error || s.Reused != "replay" {
		t.Errorf("the replay's E1: %s %q reused %q; want failed as recorded, from the replay", s.Status, s.Error, s.Reused)
	}
	if !strings.Contains(runOut(t, "replay", id), "reproduced the run up to its failure at E1") {
		t.Error("replay does not say it reproduced the failure")
	}
}

// runOut is what a command printed on stdout.
func runOut(t *testing.T, args ...string) string {
	t.Helper()
	out, _, _ := runCLI(t, args...)
	return out
}

// TestDebugHeldTime holds a map item at its step stop for a measured time,
// the driver's next command written only after it: the item's step shows
// that hold as held time, its own time (the rest) shorter than it, and the
// map shows its wall time, no less than its slowest item's, with the
// time held beside it.
func TestDebugHeldTime(t *testing.T) {
	marksProject(t)
	const hold = 400 * time.Millisecond
	in, feed := io.Pipe()
	go func() {
		// The first stop is the map's step stop; the next the item's.
		feed.Write([]byte("continue\n"))
		time.Sleep(hold)
		feed.Write([]byte("continue\ncontinue\ncontinue\n"))
		feed.Close()
	}()
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"debug", "items", "--continue", "--break", "E1 step", "--break", "E1/do.0/A step", "--json"}, in, &out, &errOut)
	if code != 0 {
		t.Fatalf("debug: exit %d\n%s\n%s", code, out.String(), errOut.String())
	}
	env := inspectJSONOf(t, sessionRun(t, errOut.String()))
	held := stepOf(t, env, "E1/do.0/A")
	floor := float64(hold.Milliseconds()) * 0.9
	if held.HeldMs < floor || held.Ms < held.HeldMs || held.Ms-held.HeldMs >= held.HeldMs {
		t.Errorf("E1/do.0/A took %.1fms, %.1fms of it held; want %v held, its own time shorter", held.Ms, held.HeldMs, hold)
	}
	parent := stepOf(t, env, "E1")
	for _, item := range []string{"E1/do.0/A", "E1/do.1/A"} {
		if s := stepOf(t, env, item); parent.Ms < s.Ms {
			t.Errorf("E1 took %.1fms, less than its item %s (%.1fms)", parent.Ms, item, s.Ms)
		}
	}
	if parent.HeldMs < held.HeldMs || env.HeldMs < int64(floor) {
		t.Errorf("E1 shows %.1fms held and the run %dms, want at least its item's %.1fms", parent.HeldMs, env.HeldMs, held.HeldMs)
	}
	if out := runOut(t, "inspect", env.ID); !regexp.MustCompile(`E1/do\.0/A .* \(\d+ms of it held\)`).MatchString(out) {
		t.Errorf("inspect does not show the time held:\n%s", out)
	}
	if out := runOut(t, "runs"); !regexp.MustCompile(`\(\d+ms held\)`).MatchString(out) {
		t.Errorf("the runs list does not show the time held:\n%s", out)
	}
}

// replayOfRun replays run id through stepwise replay --json, and fails
// the test unless the replay reproduced it.
func replayOfRun(t *testing.T, id string) replayJSON {
	t.Helper()
	out, errOut, code := runCLI(t, "replay", id, "--json")
	var rep replayJSON
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 || !rep.Identical || rep.Divergence != nil {
		t.Fatalf("replay of %s: exit %d, %v\n%s\n%s", id, code, err, out, errOut)
	}
	return rep
}

// TestReplayMakesAnInjectAgain injects an agent step's result at its step
// stop through stepwise debug, a map item's in the demo's triage_queue
// and a top-level one in probe: the replay does not run the agent, whose
// rounds the record does not have, but makes the inject again, and its
// record lists it as the replay's.
func TestReplayMakesAnInjectAgain(t *testing.T) {
	for _, c := range []struct {
		name, plan, inputs, at, inject string
		project                        func(t *testing.T)
	}{
		{"a map item's agent step", "triage_queue", `{"on_call":"Priya"}`, "assess/do.3/verdict",
			`{"output":{"severity":"sev4","component":"ci","duplicate_of":"","summary":"Injected."},"iterations":0,"tools_called":[],"final":true}`, demoProject},
		{"a top-level agent step", "probe", "{}", "E2",
			`{"output":{"found":"by hand"},"iterations":0,"tools_called":[],"final":true}`, func(t *testing.T) { marksProject(t) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.project(t)
			stdin := "continue\ninject " + c.inject + "\ncontinue\ncontinue\n"
			out, errOut, code := debugCLI(t, stdin, c.plan, c.inputs, "--break", c.at+" step")
			if code != 0 {
				t.Fatalf("debug: exit %d\n%s\n%s", code, out, errOut)
			}
			id := sessionRun(t, errOut)
			if s := stepOf(t, inspectJSONOf(t, id), c.at); s.Decided != "inject" {
				t.Fatalf("%s is marked decided %q, want inject", c.at, s.Decided)
			}
			rep := replayOfRun(t, id)
			again := inspectJSONOf(t, rep.RunID)
			want := []decisionJSON{{Path: c.at, Stop: "step", Action: "inject", Value: canonicalJSON(t, json.RawMessage(c.inject)), Origin: "replay"}}
			if !reflect.DeepEqual(again.Decisions, want) {
				t.Errorf("the replay's decisions %+v, want %+v", again.Decisions, want)
			}
			if s := stepOf(t, again, c.at); s.Reused != "replay" || s.Status != "skipped" {
				t.Errorf("the replay's %s is %s, reused %q; want skipped, reused by the replay", c.at, s.Status, s.Reused)
			}
		})
	}
}

// TestReplayKeepsTheStopOfADecision replaces a failing step's error with
// a value at its error stop: the replay gives the step that value without
// running its tool, and its record says the decision it made again was a
// replace at the error stop, as the recorded one was, not an inject at
// the step stop it answered the step at.
func TestReplayKeepsTheStopOfADecision(t *testing.T) {
	dir := marksProject(t)
	out, errOut, code := debugCLI(t, "continue\nreplace \"no issue after all\"\ncontinue\n", "failing", "--json")
	if code != 0 {
		t.Fatalf("debug: exit %d\n%s\n%s", code, out, errOut)
	}
	id := sessionRun(t, errOut)
	want := []decisionJSON{{Path: "E1", Stop: "error", Action: "replace", Value: json.RawMessage(`"no issue after all"`)}}
	if got := inspectJSONOf(t, id).Decisions; !reflect.DeepEqual(got, want) {
		t.Fatalf("the run's decisions %+v, want %+v", got, want)
	}
	rep := replayOfRun(t, id)
	if ran, _ := os.ReadFile(filepath.Join(dir, "ran.log")); string(ran) != "ran\n" {
		t.Errorf("the failing tool ran %d times, want once", strings.Count(string(ran), "ran"))
	}
	want[0].Origin = "replay"
	if got := inspectJSONOf(t, rep.RunID).Decisions; !reflect.DeepEqual(got, want) {
		t.Errorf("the replay's decisions %+v, want %+v", got, want)
	}
	if out := runOut(t, "inspect", rep.RunID); !strings.Contains(out, "↺ E1  replace at its error stop") {
		t.Errorf("inspect of the replay does not say the replace was made again at the error stop:\n%s", out)
	}
	replayOfRun(t, rep.RunID)
}

// TestStepsInPlanOrder runs a map whose first item is the slower, so that
// the second item's last step starts before the first's: inspect (text
// and --json) and diff (text and --json) list the steps in plan order,
// item by item, each item's steps in its body's order.
func TestStepsInPlanOrder(t *testing.T) {
	marksProject(t)
	runID := func() string {
		t.Helper()
		out, errOut, code := runCLI(t, "run", "uneven", "--json")
		var env struct {
			RunID string `json:"run_id"`
		}
		if err := json.Unmarshal([]byte(out), &env); code != 0 || err != nil {
			t.Fatalf("run: exit %d, %v\n%s%s", code, err, out, errOut)
		}
		return env.RunID
	}
	a, b := runID(), runID()
	want := []string{"E1", "E1/do.0/A", "E1/do.0/B", "E1/do.1/A", "E1/do.1/B"}
	var got []string
	for _, s := range inspectJSONOf(t, a).StepList {
		got = append(got, s.Path)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("inspect --json lists %q, want %q", got, want)
	}
	if out := runOut(t, "inspect", a); !inOrder(out, want) {
		t.Errorf("inspect does not list the steps in %q's order:\n%s", want, out)
	}
	out, errOut, code := runCLI(t, "diff", a, b, "--json")
	var diff diffJSON
	if err := json.Unmarshal([]byte(out), &diff); code != 0 || err != nil {
		t.Fatalf("diff --json: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	got = nil
	for _, d := range diff.Steps {
		got = append(got, d.Path)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("diff --json lists %q, want %q", got, want)
	}
}

// inOrder reports whether each of paths starts a line of text (after its
// indent), in that order.
func inOrder(text string, paths []string) bool {
	at := 0
	for _, p := range paths {
		i := regexp.MustCompile(`(?m)^ +` + regexp.QuoteMeta(p) + ` `).FindStringIndex(text[at:])
		if i == nil {
			return false
		}
		at += i[1]
	}
	return true
}

// TestDiffTimeLeavesHeldTimeOut holds a map item at its step stop for a
// measured time, then runs the plan again unheld: diff's time column
// compares each step's own time, so the held step does not read as
// slower by the time it was held.
func TestDiffTimeLeavesHeldTimeOut(t *testing.T) {
	marksProject(t)
	const hold = 600 * time.Millisecond
	in, feed := io.Pipe()
	go func() {
		feed.Write([]byte("continue\n"))
		time.Sleep(hold)
		feed.Write([]byte("continue\ncontinue\ncontinue\n"))
		feed.Close()
	}()
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"debug", "items", "--continue", "--break", "E1 step", "--break", "E1/do.0/A step", "--json"}, in, &out, &errOut)
	if code != 0 {
		t.Fatalf("debug: exit %d\n%s\n%s", code, out.String(), errOut.String())
	}
	held := sessionRun(t, errOut.String())
	if s := stepOf(t, inspectJSONOf(t, held), "E1/do.0/A"); s.HeldMs < float64(hold.Milliseconds())*0.9 {
		t.Fatalf("E1/do.0/A was held %.1fms, want %v", s.HeldMs, hold)
	}
	runOut(t, "run", "items")
	list, _, _ := runCLI(t, "runs", "--json")
	var runs struct{ Runs []runJSON }
	if err := json.Unmarshal([]byte(list), &runs); err != nil || len(runs.Runs) != 2 {
		t.Fatalf("runs --json: %v\n%s", err, list)
	}
	diffOut, errText, code := runCLI(t, "diff", held, runs.Runs[0].ID, "--json")
	var diff diffJSON
	if err := json.Unmarshal([]byte(diffOut), &diff); code != 0 || err != nil {
		t.Fatalf("diff --json: exit %d, %v\n%s%s", code, err, diffOut, errText)
	}
	for _, d := range diff.Steps {
		// Unheld, each side naps a tenth of a second: what differs is
		// noise, far less than the hold.
		if math.Abs(d.MsDelta) >= float64(hold.Milliseconds())/2 {
			t.Errorf("%s: ΔTIME %.1fms, with %v of A's held; want its own time compared", d.Path, d.MsDelta, hold)
		}
	}
}

// TestForkAfterAMapReusesItsItems forks a run from the step after a map,
// with a step's result set: the fork's record has the map's item steps,
// reused (the notes they wrote are not written again), so that diff finds
// no item changed; the step set is marked as set by the fork, not as an
// inject at a stop, in inspect (text and --json), the runs list and diff;
// and the fork replays.
func TestForkAfterAMapReusesItsItems(t *testing.T) {
	dir := marksProject(t)
	out, errOut, code := runCLI(t, "run", "noted", "--json")
	var env struct {
		RunID string `json:"run_id"`
	}
	if err := json.Unmarshal([]byte(out), &env); code != 0 || err != nil {
		t.Fatalf("run: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	notes, _ := os.ReadFile(filepath.Join(dir, "notes.log"))
	out, errOut, code = runCLI(t, "fork", env.RunID, "--from", "E3", "--set", `E2={"n": 2}`, "--json")
	var fork struct {
		RunID string `json:"run_id"`
	}
	if err := json.Unmarshal([]byte(out), &fork); code != 0 || err != nil {
		t.Fatalf("fork: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	if !strings.Contains(errOut, ": E1: 2 items, do.0 to do.1\n") {
		t.Errorf("the fork's progress does not say it reused the map's items:\n%s", errOut)
	}
	// Its progress says so as the map ends, as it says a step it reused
	// whole, and says the step set as inspect does.
	for _, want := range []string{"\n⇢ E1: 2 items, do.0 to do.1 reused from run " + env.RunID[:12] + "\n", "\n✎ E2 set by the fork (--set)\n"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("the fork's progress does not say %q:\n%s", want, errOut)
		}
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "notes.log")); string(after) != string(notes) {
		t.Errorf("the fork ran the map's items again: notes.log went from %q to %q", notes, after)
	}
	forked := inspectJSONOf(t, fork.RunID)
	for _, p := range []string{"E1/do.0/A", "E1/do.1/A"} {
		if s := stepOf(t, forked, p); s.Reused != "fork" {
			t.Errorf("the fork's %s is %s, reused %q; want reused by the fork", p, s.Status, s.Reused)
		}
	}
	if s := stepOf(t, forked, "E2"); s.Decided != "set" || s.Reused != "" {
		t.Errorf("the fork's E2 is decided %q, reused %q; want set", s.Decided, s.Reused)
	}
	want := []decisionJSON{{Path: "E2", Stop: "step", Action: "set", Value: json.RawMessage(`{"n":2}`)}}
	if !reflect.DeepEqual(forked.Decisions, want) {
		t.Errorf("the fork's decisions %+v, want %+v", forked.Decisions, want)
	}
	text := runOut(t, "inspect", fork.RunID)
	if !strings.Contains(text, "✎ E2  set by the fork (--set)") || !regexp.MustCompile(`(?m)^  E2 .*✎ set by the fork \(--set\)$`).MatchString(text) || strings.Contains(text, "inject") {
		t.Errorf("inspect does not say E2 was set by the fork:\n%s", text)
	}
	if out := runOut(t, "runs"); !strings.Contains(out, "ok ✎") {
		t.Errorf("the runs list does not mark the fork:\n%s", out)
	}
	out, errOut, code = runCLI(t, "diff", env.RunID, fork.RunID, "--json")
	var diff diffJSON
	if err := json.Unmarshal([]byte(out), &diff); code != 0 || err != nil {
		t.Fatalf("diff --json: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	var differ []string
	for _, d := range diff.Steps {
		if d.Differs {
			differ = append(differ, d.Path)
		}
		if d.Path == "E2" && (d.DecidedB != "set" || format.Mark(d.DecidedB, d.ReusedB) != format.MarkDecided) {
			t.Errorf("diff marks the fork's E2 %q (%q), want %s set", format.Mark(d.DecidedB, d.ReusedB), d.DecidedB, format.MarkDecided)
		}
	}
	if want := []string{"E2", "E3"}; !reflect.DeepEqual(differ, want) {
		t.Errorf("diff finds %q differ, want %q", differ, want)
	}
	replayOfRun(t, fork.RunID)
}

// TestInspectMarksAReplacedReply replaces a round's reply through
// stepwise debug: inspect (text and --json) marks the model call whose
// reply was replaced, and its agent step, as diff marks it; the replay's
// inspect marks both as replayed.
func TestInspectMarksAReplacedReply(t *testing.T) {
	marksProject(t)
	out, errOut, code := debugCLI(t, "replace {\"text\": \"{\\\"found\\\": \\\"a replaced reply\\\"}\"}\ncontinue\n", "probe", "--continue", "--break", "E2/agent.1 reply")
	if code != 0 {
		t.Fatalf("debug: exit %d\n%s\n%s", code, out, errOut)
	}
	id := sessionRun(t, errOut)
	rep := replayOfRun(t, id)
	for _, c := range []struct {
		run, decided, reused, text string
	}{{id, "replace", "", "✎ replace"}, {rep.RunID, "", "replay", "↺ replayed"}} {
		env := inspectJSONOf(t, c.run)
		if s := stepOf(t, env, "E2"); s.Decided != c.decided || s.Reused != c.reused {
			t.Errorf("run %s: E2 is decided %q, reused %q; want %q, %q", c.run, s.Decided, s.Reused, c.decided, c.reused)
		}
		marked := 0
		for _, m := range env.ModelCalls {
			if m.Path == "E2/agent.1" && m.Decided == c.decided && m.Reused == c.reused {
				marked++
			} else if m.Decided != "" || m.Reused != "" {
				t.Errorf("run %s: the model call at %s is marked %q %q, though nobody replaced its reply", c.run, m.Path, m.Decided, m.Reused)
			}
		}
		if marked != 1 {
			t.Errorf("run %s: the model call at E2/agent.1 is not marked decided %q, reused %q: %+v", c.run, c.decided, c.reused, env.ModelCalls)
		}
		text := runOut(t, "inspect", c.run)
		if !regexp.MustCompile(`(?m)^  E2 .*  `+c.text+`$`).MatchString(text) || !regexp.MustCompile(`(?m)^  E2/agent\.1 .*`+c.text+`$`).MatchString(text) {
			t.Errorf("run %s: inspect does not mark E2 and its model call %s:\n%s", c.run, c.text, text)
		}
	}
}

// TestReplayStopShowsTheReplacement replays, under the debugger, a run in
// which a person replaced a round's reply: the replay's stop at that
// reply shows the replacement as its output and its prefill, which is
// what going on gives, and says the record replaced it; going on, the
// replay reproduces the run.
func TestReplayStopShowsTheReplacement(t *testing.T) {
	marksProject(t)
	replacement := `{"found": "a replaced reply"}`
	stdin := "replace {\"text\": " + strconv.Quote(replacement) + "}\ncontinue\n"
	out, errOut, code := debugCLI(t, stdin, "probe", "--continue", "--break", "E2/agent.1 reply")
	if code != 0 {
		t.Fatalf("debug: exit %d\n%s\n%s", code, out, errOut)
	}
	id := sessionRun(t, errOut)
	out, errOut, code = rerunCLI(t, "continue\ncontinue\n", "replay", id, "--debug", "--break", "E2/agent.1 reply", "--json")
	if code != 0 {
		t.Fatalf("replay --debug: exit %d\n%s\n%s", code, out, errOut)
	}
	var stop *debugger.Snapshot
	var finish struct {
		Identical *bool `json:"identical"`
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var st struct {
			debugger.State
			Identical *bool `json:"identical"`
		}
		if err := json.Unmarshal([]byte(line), &st); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		if st.Stop != nil && st.Stop.Path == "E2/agent.1" && st.Stop.Kind == "reply" {
			stop = st.Stop
		}
		if st.Identical != nil {
			finish.Identical = st.Identical
		}
	}
	if stop == nil {
		t.Fatalf("the replay did not stop at E2/agent.1's reply:\n%s", out)
	}
	if got := engine.JSONText(stop.Output); !strings.Contains(got, `"text":`+strconv.Quote(replacement)) || stop.Recorded != "replace" {
		t.Errorf("the stop shows output %s, recorded %q; want the replacement, recorded replace", got, stop.Recorded)
	}
	if got := engine.JSONText(stop.Prefill); got != `{"found":"a replaced reply"}` {
		t.Errorf("the stop's prefill is %s, want the replacement's answer", got)
	}
	if finish.Identical == nil || !*finish.Identical {
		t.Errorf("the replay under the debugger does not match its record:\n%s", out)
	}
	_, errOut, _ = rerunCLI(t, "continue\ncontinue\n", "replay", id, "--debug", "--break", "E2/agent.1 reply")
	// The record line is wrapped at 80 columns off a terminal.
	if !strings.Contains(strings.Join(strings.Fields(errOut), " "), "record the recorded run's replace here is made again: going on gives the output above") || !strings.Contains(errOut, "a replaced reply") {
		t.Errorf("the text stop does not show the replacement nor say the record made it:\n%s", errOut)
	}
}

// TestForkAfterABranchReusesItsSteps forks a run from the step after a
// decide whose branch called a plan: the fork's record has the branch's
// steps and the called plan's, its map's items among them, reused (their
// notes are not written again), so that diff finds no step differs but
// the one that ran again.
func TestForkAfterABranchReusesItsSteps(t *testing.T) {
	dir := marksProject(t)
	out, errOut, code := runCLI(t, "run", "branchy", "--json")
	var env struct {
		RunID string `json:"run_id"`
	}
	if err := json.Unmarshal([]byte(out), &env); code != 0 || err != nil {
		t.Fatalf("run: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	notes, _ := os.ReadFile(filepath.Join(dir, "notes.log"))
	out, errOut, code = runCLI(t, "fork", env.RunID, "--from", "E2", "--json")
	var fork struct {
		RunID string `json:"run_id"`
	}
	if err := json.Unmarshal([]byte(out), &fork); code != 0 || err != nil {
		t.Fatalf("fork: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "notes.log")); string(after) != string(notes)+"after\n" {
		t.Errorf("the fork noted %q, want only E2's note", strings.TrimPrefix(string(after), string(notes)))
	}
	forked := inspectJSONOf(t, fork.RunID)
	for _, p := range []string{"E1/then/A/noted/E1/do.0/A", "E1/then/A/noted/E1/do.1/A", "E1/then/A/noted/E2", "E1/then/A/noted/E3"} {
		if s := stepOf(t, forked, p); s.Reused != "fork" {
			t.Errorf("the fork's %s is %s, reused %q; want reused by the fork", p, s.Status, s.Reused)
		}
	}
	out, errOut, code = runCLI(t, "diff", env.RunID, fork.RunID)
	if code != 0 || !strings.Contains(out, "\nno step differs: ") {
		t.Errorf("diff: exit %d\n%s%s", code, out, errOut)
	}
}
