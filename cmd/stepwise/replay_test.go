package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/chat"
)

// noteTool appends a line to notes.log: a side effect a replay must not
// repeat, and a fork repeats only for what runs again.
const noteTool = `name: note
description: Appends a line to notes.log and says what it noted.
kind: exec
command: sh
args:
  - "-c"
  - 'printf "%s\n" "$1" >> notes.log && printf "{\"noted\": \"%s\"}" "$1"'
  - note
  - "{{input.text}}"
output: json
input_schema: { type: object, required: [text], properties: { text: { type: string } } }
`

// replayProjectFiles is a project whose plan notes to a file (a side
// effect a replay must not repeat), infers, and runs an agent that calls
// the note tool.
var replayProjectFiles = map[string]string{
	".stepwise/config.toml": `
[providers.script]
type = "script"
file = "replies.yaml"

[models]
default = { provider = "script", model = "scripted" }
`,
	"replies.yaml": `replies:
  - match: E1
    reply: { text: "three bugs", usage: { input_tokens: 40, output_tokens: 4 } }
  - match: E2
    reply:
      tool_calls: [{ name: user__note, arguments: { text: "agent looked" } }]
  - match: E2
    reply: { json: { found: "a crash" } }
`,
	"fork_replies.yaml": `replies:
  - match: E2
    reply: { json: { found: "a typo" } }
`,
	".stepwise/tools/note.yaml":  noteTool,
	".stepwise/plans/probe.yaml": probePlan,
}

const probePlan = `identifier: probe
name: Probe
description: Notes, infers and investigates.
steps:
  - id: E0
    tool_name: user__note
    input: { text: "start" }
  - id: E1
    tool_name: builtin__infer
    input: { instruction: "Summarize {{E0.noted}}" }
  - id: E2
    tool_name: agent
    input:
      prompt: "Look into {{E1.text}}"
      tools: ["user__note"]
      max_iterations: 3
      output_schema: { type: object, required: [found], properties: { found: { type: string } } }
  - id: E3
    tool_name: user__note
    input: { text: "found {{E2.output.found}}" }
output:
  summary: "{{E1.text}}"
  found: "{{E2.output.found}}"
`

func TestReplayForkDiff(t *testing.T) {
	dir := t.TempDir()
	for name, text := range replayProjectFiles {
		file := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	isolate(t, dir)
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	notes := func() string {
		b, _ := os.ReadFile(filepath.Join(dir, "notes.log"))
		return string(b)
	}

	stdout, stderr, code := runCLI(t, "run", "probe", "--json")
	if code != 0 {
		t.Fatalf("run: exit %d\n%s%s", code, stdout, stderr)
	}
	var run struct {
		RunID         string     `json:"run_id"`
		StepsExecuted int        `json:"steps_executed"`
		Usage         chat.Usage `json:"usage"`
	}
	if err := json.Unmarshal([]byte(stdout), &run); err != nil || run.RunID == "" {
		t.Fatalf("run envelope %s: %v", stdout, err)
	}
	written := notes()
	// With the replies spent, any model call would fail.
	write("replies.yaml", "replies: []\n")

	t.Run("replay reproduces the run", func(t *testing.T) {
		stdout, stderr, code := runCLI(t, "replay", run.RunID[:10], "--json")
		if code != 0 {
			t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
		}
		var env replayJSON
		if err := json.Unmarshal([]byte(stdout), &env); err != nil {
			t.Fatal(err)
		}
		if !env.Identical || env.Divergence != nil || env.ReplayOf != run.RunID || env.Plan != "probe" || env.ModelCalls != 3 || env.Steps != 4 || env.RunID == "" || env.RunID == run.RunID {
			t.Errorf("envelope %+v", env)
		}
		if notes() != written {
			t.Errorf("the replay ran a tool: notes.log is %q", notes())
		}
		stdout, stderr, code = runCLI(t, "replay", run.RunID)
		if code != 0 || !strings.HasPrefix(stdout, "✓ replay of run "+run.RunID[:12]+" (probe) matches its record: 4 steps reproduced, 3 model calls answered from the record\n") ||
			!strings.Contains(stderr, ", a replay of "+run.RunID) {
			t.Errorf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
		}
	})

	t.Run("replay finds the edit", func(t *testing.T) {
		write(".stepwise/plans/probe.yaml", strings.Replace(probePlan, "Summarize {{E0.noted}}", "Summarise {{E0.noted}}", 1))
		defer write(".stepwise/plans/probe.yaml", probePlan)
		stdout, stderr, code := runCLI(t, "replay", run.RunID)
		want := "✗ replay of run " + run.RunID[:12] + " (probe) diverges at E1: the rendered input differs from the recorded one\n" +
			"  recorded  {\"instruction\":\"Summarize start\"}\n" +
			"  now       {\"instruction\":\"Summarise start\"}\n" +
			"  the replay stopped there\n"
		if code != 1 || stdout != want {
			t.Errorf("exit %d\nstdout %s\nwant %s\nstderr %s", code, stdout, want, stderr)
		}
		stdout, _, code = runCLI(t, "replay", run.RunID, "--json")
		var env replayJSON
		if err := json.Unmarshal([]byte(stdout), &env); err != nil {
			t.Fatal(err)
		}
		if code != 1 || env.Identical || env.Divergence == nil || env.Divergence.Path != "E1" || env.Divergence.What != "input" || !env.Divergence.CutShort {
			t.Errorf("exit %d, envelope %s", code, stdout)
		}
		// The replay cut short counts the steps it ran as every other
		// command counts them: E0, answered from the record, and E1,
		// aborted at its stop before it started, which its record shows.
		inspected := inspectJSONOf(t, env.RunID)
		listed, _, _ := runCLI(t, "runs", "--json")
		var list struct{ Runs []runJSON }
		if err := json.Unmarshal([]byte(listed), &list); err != nil || len(list.Runs) == 0 || list.Runs[0].ID != env.RunID {
			t.Fatalf("runs --json: %v\n%s", err, listed)
		}
		if env.Steps != 2 || list.Runs[0].Steps != 2 || inspected.Steps != 2 || len(inspected.StepList) != 2 {
			t.Errorf("the replay cut short at E1 counts %d steps, runs %d, inspect %d of %d listed; want 2 (E0, E1) everywhere",
				env.Steps, list.Runs[0].Steps, inspected.Steps, len(inspected.StepList))
		} else if e1 := inspected.StepList[1]; e1.Path != "E1" || e1.Status != engine.StepAborted {
			t.Errorf("the replay's E1 is recorded %s %s, want E1 aborted", e1.Path, e1.Status)
		}
		if notes() != written {
			t.Errorf("the replay ran a tool: notes.log is %q", notes())
		}
	})

	var forkID string
	var forkSteps, forkTokens int
	t.Run("fork from a step with a result set", func(t *testing.T) {
		stdout, stderr, code := runCLI(t, "fork", run.RunID, "--from", "E2", "--set", `E1={"text": "one typo"}`, "--script", "fork_replies.yaml", "--json")
		if code != 0 {
			t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
		}
		var env struct {
			Output        map[string]any `json:"output"`
			RunID         string         `json:"run_id"`
			StepsExecuted int            `json:"steps_executed"`
			Usage         struct {
				Calls int `json:"calls"`
				chat.Usage
			} `json:"usage"`
		}
		if err := json.Unmarshal([]byte(stdout), &env); err != nil {
			t.Fatal(err)
		}
		forkID, forkSteps, forkTokens = env.RunID, env.StepsExecuted, env.Usage.Total()
		if env.Output["summary"] != "one typo" || env.Output["found"] != "a typo" || env.Usage.Calls != 1 {
			t.Errorf("envelope %s", stdout)
		}
		if !strings.HasPrefix(stderr, "fork of run "+run.RunID[:12]+" from E2\n") || !strings.Contains(stderr, "\nran 2 steps, reused 1 of run "+run.RunID[:12]+": E0\nset 1 step with --set: E1\n") {
			t.Errorf("stderr %s", stderr)
		}
		// The progress says E0 was reused from the run, as inspect marks
		// it, not that it was skipped.
		if !strings.Contains(stderr, "\n⇢ E0 reused from run "+run.RunID[:12]+"\n") || strings.Contains(stderr, "E0 skipped") {
			t.Errorf("the progress does not say E0 was reused:\n%s", stderr)
		}
		if added := strings.TrimPrefix(notes(), written); added != "found a typo\n" {
			t.Errorf("the fork noted %q, want E3's note only", added)
		}
	})

	t.Run("diff", func(t *testing.T) {
		if forkID == "" {
			t.Skip("no fork")
		}
		stdout, stderr, code := runCLI(t, "diff", run.RunID, forkID, "--json")
		if code != 0 {
			t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
		}
		type side struct {
			ID     string `json:"id"`
			Steps  int    `json:"steps"`
			Tokens int    `json:"tokens"`
		}
		var env struct {
			A, B  side
			Steps []struct {
				Path        string                 `json:"path"`
				StatusA     string                 `json:"status_a"`
				StatusB     string                 `json:"status_b"`
				ResultA     any                    `json:"result_a"`
				ResultB     any                    `json:"result_b"`
				Changes     []debugger.ValueChange `json:"changes"`
				MsDelta     float64                `json:"ms_delta"`
				TokensDelta int                    `json:"tokens_delta"`
				Differs     bool                   `json:"differs"`
			} `json:"steps"`
			Count int `json:"count"`
		}
		if err := json.Unmarshal([]byte(stdout), &env); err != nil {
			t.Fatal(err)
		}
		var paths []string
		for _, s := range env.Steps {
			paths = append(paths, s.Path)
		}
		if env.Count != 4 || strings.Join(paths, " ") != "E0 E1 E2 E3" {
			t.Fatalf("diff %s", stdout)
		}
		if s := env.Steps[0]; s.StatusA != "ok" || s.StatusB != "skipped" || s.ResultA == nil || !reflect.DeepEqual(s.ResultA, s.ResultB) || len(s.Changes) != 0 || s.Differs {
			t.Errorf("E0 %+v", s)
		}
		for _, s := range env.Steps[1:] {
			if !s.Differs {
				t.Errorf("%s differs, but the diff says it does not: %+v", s.Path, s)
			}
		}
		// The results differ at one key, both values told; no float
		// noise in the time.
		if s := env.Steps[1]; !reflect.DeepEqual(s.Changes, []debugger.ValueChange{{At: "text", A: "three bugs", B: "one typo"}}) || s.TokensDelta != -44 || s.MsDelta != math.Round(s.MsDelta*10)/10 {
			t.Errorf("E1 %+v", s)
		}
		// Each run counts in the diff what its envelope counted.
		if env.A != (side{run.RunID, run.StepsExecuted, run.Usage.Total()}) || env.B != (side{forkID, forkSteps, forkTokens}) {
			t.Errorf("diff counts A %+v B %+v; the envelopes said %d steps %d tokens, %d steps %d tokens",
				env.A, env.B, run.StepsExecuted, run.Usage.Total(), forkSteps, forkTokens)
		}
		stdout, _, _ = runCLI(t, "diff", run.RunID, forkID)
		want := []string{
			fmt.Sprintf("A %s (probe, ok, 4 steps, %d tokens)", run.RunID[:12], run.Usage.Total()),
			fmt.Sprintf("B %s (probe, ok, 4 steps, %d tokens)", forkID[:12], forkTokens),
		}
		// The table lists the steps that differ, E0 not among them, and
		// then how many are the same.
		lines := strings.Split(stdout, "\n")
		if len(lines) < 9 || lines[0] != want[0] || lines[1] != want[1] || !strings.HasPrefix(lines[3], "PATH ") ||
			!strings.HasPrefix(lines[4], "E1 ") || !strings.Contains(lines[4], " 1 change ") || !strings.Contains(lines[4], " -44") ||
			!strings.HasPrefix(lines[5], "E2 ") || !strings.HasPrefix(lines[6], "E3 ") || lines[7] != "1 step the same" {
			t.Errorf("diff table:\n%s", stdout)
		}
		// Below the table, each change: where, A's value, B's.
		if !strings.Contains(stdout, "\nAT ") || !regexp.MustCompile(`\nE1\.text +"three bugs" +"one typo"\n`).MatchString(stdout) {
			t.Errorf("the changes:\n%s", stdout)
		}
	})

	t.Run("refusals", func(t *testing.T) {
		for _, tc := range []struct {
			args []string
			code int
			msg  string
		}{
			{[]string{"fork", run.RunID}, 2, "fork needs --from PATH"},
			{[]string{"fork", run.RunID, "--from", "E9"}, 2, "--from E9: no step of run " + run.RunID + " matches it"},
			{[]string{"fork", run.RunID, "--from", "E1", "--set", "E7=1"}, 2, "--set E7: the plan has no step there"},
			{[]string{"fork", run.RunID, "--from", "E1", "--set", "=1"}, 2, "--set takes PATH=JSON"},
			{[]string{"fork", run.RunID, "--from", "E1", "--set", "E1=notjson"}, 2, `--set E1: the value notjson is not JSON`},
			{[]string{"fork", run.RunID, "--from", "E1", "--set", "E1=notjson"}, 2, `give a string in JSON quotes, e.g. --set 'E1="notjson"'`},
			{[]string{"replay", "0000"}, 1, "no run '0000'"},
			{[]string{"diff", run.RunID}, 2, "takes two RUN ids"},
		} {
			_, stderr, code := runCLI(t, tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.msg) {
				t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, tc.code, tc.msg)
			}
		}
	})
}

// TestReplayCountsEveryModelCall: a replay answers from the record the
// model calls of the steps and tool calls it answers whole (a map of
// builtin__infer, an agent's builtin__infer call) as well as those it
// makes again (the agent's rounds), and says it answered all of them.
func TestReplayCountsEveryModelCall(t *testing.T) {
	writeProject(t, map[string]string{
		"config.toml": `
[providers.script]
type = "script"
file = ".stepwise/replies.yaml"

[models]
default = { provider = "script", model = "scripted" }
`,
		"replies.yaml": `replies:
  - match: E1/**
    reply: { text: "ok" }
  - match: E1/**
    reply: { text: "ok" }
  - match: E1/**
    reply: { text: "ok" }
  - match: E2
    reply: { tool_calls: [{ name: builtin__infer, arguments: { instruction: "Sum up." } }] }
  - match: E2/**
    reply: { text: "summed up" }
  - match: E2
    reply: { json: { done: true } }
`,
		"plans/infers.yaml": `identifier: infers
name: Infers
description: Infers in a map and in an agent.
steps:
  - id: E1
    tool_name: map
    input:
      over: [1, 2, 3]
      do: { tool_name: builtin__infer, input: { instruction: "Label {{item}}" } }
  - id: E2
    tool_name: agent
    input:
      prompt: "Sum up."
      tools: ["builtin__infer"]
      output_schema: { type: object, required: [done], properties: { done: { type: boolean } } }
output: { done: "{{E2.output.done}}" }
`,
	})
	out, errOut, code := runCLI(t, "run", "infers", "--json")
	if code != 0 || !strings.Contains(out, `"calls": 6`) {
		t.Fatalf("exit %d, want 6 model calls recorded\n%s\n%s", code, out, errOut)
	}
	id := regexp.MustCompile(`"run_id": "([0-9a-f]+)"`).FindStringSubmatch(out)[1]
	out, errOut, code = runCLI(t, "replay", id)
	if code != 0 || !strings.Contains(out, "6 model calls answered from the record") {
		t.Errorf("exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestForkSummary: a fork from one item of a map of 40 says where it
// starts as it starts, and at its end how many steps ran and which it
// reused, the map's items by count and span rather than one by one.
func TestForkSummary(t *testing.T) {
	writeProject(t, progressProjectFiles(0, false))
	out, errOut, code := runCLI(t, "run", "slow", "--json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	id := regexp.MustCompile(`"run_id": "([0-9a-f]+)"`).FindStringSubmatch(out)[1]
	_, errOut, code = runCLI(t, "fork", id, "--from", "E1/do.7")
	short := id[:12]
	// E1 runs again (it holds the fork point), item 7 in it, and E2.
	if code != 0 || !strings.HasPrefix(errOut, "fork of run "+short+" from E1/do.7\n") ||
		!strings.Contains(errOut, "\nran 3 steps, reused 40 of run "+short+": E0; E1: 39 items, do.0 to do.39 but do.7\n") {
		t.Errorf("exit %d, stderr:\n%s", code, errOut)
	}
}

// TestForkEventsJSONL: fork takes --events jsonl as run does: stderr
// carries the fork's events and nothing else, one JSON object a line (its
// start naming the run it forks, the steps it reuses, the model calls of
// what runs again), with no summary after them; a --set the fork never
// came to is a warning line, and a fork refused is an error line.
func TestForkEventsJSONL(t *testing.T) {
	files := progressProjectFiles(0, false)
	files["plans/halts.yaml"] = "identifier: halts\nname: Halts\ndescription: Fails at its second step, before its third.\nsteps:\n" +
		"  - id: E0\n    tool_name: builtin__reshape\n    input: { shape: { issues: [] } }\n" +
		"  - id: E1\n    tool_name: builtin__reshape\n    input: { shape: { first: \"{{E0.issues.0.id}}\" } }\n" +
		"  - id: E2\n    tool_name: builtin__reshape\n    input: { shape: { done: true } }\n"
	writeProject(t, files)
	runID := func(plan string) string {
		out, errOut, _ := runCLI(t, "run", plan, "--json")
		m := regexp.MustCompile(`"run_id": "([0-9a-f]+)"`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("run %s recorded no run:\n%s%s", plan, out, errOut)
		}
		return m[1]
	}
	events := func(errOut string) []map[string]any {
		var lines []map[string]any
		for _, line := range strings.Split(strings.TrimSuffix(errOut, "\n"), "\n") {
			var l map[string]any
			if err := json.Unmarshal([]byte(line), &l); err != nil {
				t.Fatalf("stderr has a line that is not JSON: %q\n%s", line, errOut)
			}
			lines = append(lines, l)
		}
		return lines
	}

	slow := runID("slow")
	out, errOut, code := runCLI(t, "fork", slow, "--from", "E2", "--events", "jsonl")
	lines := events(errOut)
	start, _ := lines[0]["payload"].(map[string]any)
	if code != 0 || !strings.Contains(out, `"count": 3`) || lines[0]["kind"] != "run_start" || start["parent"] != slow || start["made"] != "fork" {
		t.Fatalf("exit %d, stdout %q; the first event %v", code, out, lines[0])
	}
	if last := lines[len(lines)-1]; last["kind"] != "run_end" {
		t.Errorf("the last line is %v, not run_end", last)
	}
	kinds := map[string]bool{}
	for _, l := range lines {
		payload, _ := l["payload"].(map[string]any)
		kinds[l["kind"].(string)+" "+l["path"].(string)+" "+fmt.Sprint(payload["reused"])] = true
	}
	for _, want := range []string{"step_end E0 fork", "step_end E1/do.0 fork", "llm_call E2/agent.1 <nil>", "step_end E2 <nil>"} {
		if !kinds[want] {
			t.Errorf("no %s event; the events: %v", want, kinds)
		}
	}

	halts := runID("halts")
	_, errOut, code = runCLI(t, "fork", halts, "--from", "E1", "--set", "E2={}", "--events", "jsonl")
	lines = events(errOut)
	if last := lines[len(lines)-1]; code != 1 || last["kind"] != "warning" || last["set"] != "E2" || last["warning"] != "the fork ran no step there" {
		t.Errorf("exit %d; the last line is %v, want the unreached --set's warning", code, last)
	}

	_, errOut, code = runCLI(t, "fork", halts, "--from", "E9", "--events", "jsonl")
	if lines = events(errOut); code != exitUsage || len(lines) != 1 || lines[0]["kind"] != "error" {
		t.Errorf("a refused fork: exit %d, stderr:\n%s", code, errOut)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--events", "xml"}, "stepwise: --events takes jsonl, not 'xml'\n"},
		{[]string{"--events", "jsonl", "--debug"}, "stepwise: --events does not go with --debug: under the debugger, the stops and answers tell the run (with --json, as JSON lines)\n"},
	} {
		_, errOut, code = runCLI(t, append([]string{"fork", halts, "--from", "E1"}, tc.args...)...)
		if code != exitUsage || errOut != tc.want {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, code, errOut, tc.want)
		}
	}
}

// TestRerunWarnsOfTheConfigurationOnce: replay and fork read a run from
// the working directory's project and load its plan file from the same
// project, which is opened once: the configuration's warning is said
// once, not once for each way in.
func TestRerunWarnsOfTheConfigurationOnce(t *testing.T) {
	writeProject(t, map[string]string{
		"config.toml":    "[settings]\nnonsense = 1\n",
		"plans/one.yaml": "identifier: one\nname: One\ndescription: One step.\nsteps:\n  - id: E0\n    tool_name: builtin__reshape\n    input: { shape: { n: 1 } }\noutput: { n: \"{{E0.n}}\" }\n",
	})
	const warning = ".stepwise/config.toml:2:1: warning: settings.nonsense: unknown key\n"
	out, errOut, code := runCLI(t, "run", "one", "--json", "-q")
	if code != 0 || errOut != warning {
		t.Fatalf("run: exit %d, stderr %q", code, errOut)
	}
	id := regexp.MustCompile(`"run_id": "([0-9a-f]+)"`).FindStringSubmatch(out)[1]
	for _, args := range [][]string{{"replay", id, "-q"}, {"fork", id, "--from", "E0", "-q"}} {
		if _, errOut, code := runCLI(t, args...); code != 0 || errOut != warning {
			t.Errorf("%s: exit %d, stderr %q, want %q", args[0], code, errOut, warning)
		}
	}
}

// TestDiffStepsOneRunAloneRan diffs a run an exit cut short with one
// that ran every step: the steps after the exit are only in B, with no
// time or tokens to compare and no value changed, rather than a change
// each.
func TestDiffStepsOneRunAloneRan(t *testing.T) {
	writeProject(t, map[string]string{"plans/gate.yaml": `
identifier: gate
name: Gate
description: Stops early when told to.
input_schema: { type: object, properties: { stop: { type: boolean } } }
steps:
  - id: E0
    tool_name: builtin__reshape
    input: { shape: { n: 1 } }
  - id: X
    tool_name: exit
    input: { when: { value: "{{input.stop}}", op: eq, to: true }, status: success, message: stopped early }
  - id: E1
    tool_name: builtin__reshape
    input: { shape: { n: 2 } }
`})
	ids := make([]string, 2)
	for i, doc := range []string{`{"stop":true}`, `{"stop":false}`} {
		out, errOut, code := runCLI(t, "run", "gate", doc, "--json")
		var env struct {
			RunID string `json:"run_id"`
		}
		if err := json.Unmarshal([]byte(out), &env); err != nil || code != 0 {
			t.Fatalf("run %s: exit %d, %v\n%s", doc, code, err, errOut)
		}
		ids[i] = env.RunID
	}
	out, errOut, code := runCLI(t, "diff", ids[0], ids[1])
	if code != 0 {
		t.Fatalf("diff: exit %d\n%s", code, errOut)
	}
	if !regexp.MustCompile(`\nE1 +- +ok +only in B +- +-\n`).MatchString(out) {
		t.Errorf("E1, which only B ran, is not said so:\n%s", out)
	}
	if _, changes, _ := strings.Cut(out, "\nAT "); strings.Contains(changes, "\nE1 ") {
		t.Errorf("E1's result, which only B has, is listed as a change:\n%s", out)
	}
}
