package main

import (
	"bufio"
	"bytes"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/store/storetest"
	"github.com/stepwise-dev/stepwise/plans"
)

// runProjectFiles is a project for stepwise run: a script provider, a priced
// model, a user exec tool and plans for every way a run ends.
var runProjectFiles = map[string]string{
	"config.toml": `
[providers.script]
type = "script"
file = ".stepwise/replies.yaml"

[models]
default = { provider = "script", model = "scripted" }

[pricing.scripted]
input = 2.0
output = 4.0
`,
	"replies.yaml": `
replies:
  - match: solver
    role: solver
    reply: { text: "Two issues, both fine.", usage: { input_tokens: 1000, output_tokens: 100 } }
  - match: judge_it
    role: judge
    reply: { json: { verdict: true, reason: "there are two" }, usage: { input_tokens: 50, output_tokens: 5 } }
`,
	"tools/shout.yaml": `
name: shout
description: Upper-cases a word.
kind: exec
command: tr
args: ["a-z", "A-Z"]
output: text
input_schema: { type: object, properties: {} }
`,
	"tools/nap.yaml": `
name: nap
description: Sleeps, then prints its argument as JSON.
kind: exec
command: sh
args: ["-c", "sleep {{input.seconds}}; echo '{\"slept\": {{input.seconds}}}'"]
output: json
timeout_secs: 60
input_schema: { type: object, required: [seconds], properties: { seconds: { type: integer } } }
`,
	"plans/report.yaml": `
identifier: report
name: Report
description: Lists two issues and counts them.
input_schema:
  type: object
  required: [team]
  properties:
    team: { type: string, description: The team to report on }
    limit: { type: integer, default: 2 }
steps:
  - id: E0
    tool_name: builtin__reshape
    input: { shape: { team: "{{input.team}}", issues: [{ id: A-1 }, { id: A-2 }], limit: "{{input.limit}}" } }
output:
  team: "{{E0.team}}"
  count: "{{E0.issues.length}}"
  limit: "{{E0.limit}}"
`,
	"plans/narrate.yaml": `
identifier: narrate
name: Narrate
description: A solver plan.
steps:
  - id: E0
    tool_name: builtin__reshape
    input: { shape: { issues: [{ id: A-1 }, { id: A-2 }] } }
solver:
  query_to_answer: "Summarize {{E0.issues.length}} issues."
  data: { issues: "{{E0.issues}}" }
`,
	"plans/assert.yaml": `
identifier: assert
name: Assert
description: An error exit that fires on a verdict.
steps:
  - id: E0
    tool_name: builtin__reshape
    input: { shape: { issues: [{ id: A-1 }, { id: A-2 }] } }
  - id: judge_it
    tool_name: exit
    input: { infer: "More than one issue?", status: error, message: "Too many issues." }
`,
	"plans/broken_run.yaml": `
identifier: broken_run
name: Broken
description: Fails at its second step.
steps:
  - id: E0
    tool_name: builtin__reshape
    input: { shape: { issues: [] } }
  - id: E1
    tool_name: builtin__reshape
    input: { shape: { first: "{{E0.issues.0.id}}" } }
`,
	"plans/slow.yaml": `
identifier: slow
name: Slow
description: A quick step, then a long one.
steps:
  - id: quick
    tool_name: user__nap
    input: { seconds: 0 }
  - id: long
    tool_name: user__nap
    input: { seconds: 30 }
`,
}

// runProject writes the run project into a fresh directory and makes it the
// working directory, with its own data dir.
func runProject(t *testing.T) string {
	t.Helper()
	writeProject(t, runProjectFiles)
	wd, _ := os.Getwd()
	return wd
}

// writeProject writes files under .stepwise of a fresh project and makes
// it the working directory, with its own data dir.
func writeProject(t testing.TB, files map[string]string) {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		path := filepath.Join(dir, ".stepwise", name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	isolate(t, dir)
}

func TestRunOutputPlan(t *testing.T) {
	runProject(t)
	out, errOut, code := runCLI(t, "run", "report", `{"team":"core"}`, "--input", "limit=5")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, out)
	}
	if got["team"] != "core" || got["count"] != 2.0 || got["limit"] != 5.0 {
		t.Errorf("output %v", got)
	}
	if !strings.Contains(errOut, "→ E0 builtin__reshape") {
		t.Errorf("stderr lacks progress:\n%s", errOut)
	}
	// The schema says team is a string: the flag's text is taken as typed.
	out, errOut, code = runCLI(t, "run", "report", "--input", "team=1.10")
	if code != 0 || !strings.Contains(out, `"team": "1.10"`) {
		t.Errorf("exit %d, stdout:\n%s%s", code, out, errOut)
	}
}

func TestRunEnvelope(t *testing.T) {
	runProject(t)
	out, errOut, code := runCLI(t, "run", "narrate", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var env struct {
		Answer        *string        `json:"answer"`
		Output        any            `json:"output"`
		Plan          string         `json:"plan"`
		StepsExecuted int            `json:"steps_executed"`
		RunID         string         `json:"run_id"`
		Usage         map[string]any `json:"usage"`
	}
	if err := json.Unmarshal([]byte(out), &env); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// E0 and the solver ran: the finish counts as a step, as the run's
	// record shows one.
	if env.Answer == nil || *env.Answer != "Two issues, both fine." || env.Output != nil || env.Plan != "narrate" || env.StepsExecuted != 2 || len(env.RunID) != 16 {
		t.Errorf("envelope %+v", env)
	}
	if env.Usage["calls"] != 1.0 || env.Usage["cost_usd"] != 1000*2.0/1e6+100*4.0/1e6 {
		t.Errorf("usage %v", env.Usage)
	}
	byStep := env.Usage["by_step"].([]any)
	if len(byStep) != 1 || byStep[0].(map[string]any)["path"] != "solver" {
		t.Errorf("by_step %v", byStep)
	}
}

func TestRunStreamsTheAnswer(t *testing.T) {
	runProject(t)
	out, errOut, code := runCLI(t, "run", "narrate")
	if code != 0 || out != "Two issues, both fine.\n" {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "usage: 1 model call, 1.0k input + 100 output tokens, $0.0024") {
		t.Errorf("no usage line:\n%s", errOut)
	}
}

func TestRunExitCodes(t *testing.T) {
	runProject(t)
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr []string
	}{
		{"an error exit is an assertion", []string{"run", "assert"}, 4, []string{"✗ exit error at judge_it: Too many issues. (there are two)"}},
		{"missing inputs", []string{"run", "report"}, 3, []string{`plan 'report' needs inputs:`, `missing property 'team'`, "input schema:", `"required": [`}},
		{"mistyped inputs", []string{"run", "report", `{"team":7}`}, 3, []string{`"team": got number, want string`}},
		{"a flag for a string input stays text", []string{"run", "report", "--input", "team=007"}, 0, []string{"→ E0"}},
		{"a failing step", []string{"run", "broken_run"}, 1, []string{"Error: plan failed at step E1 (builtin__reshape): empty data at 'E0.issues.0.id': 'E0.issues' is an empty list"}},
		{"inputs that are not JSON", []string{"run", "report", "{team"}, 2, []string{"the inputs are not JSON"}},
		{"inputs that are not an object", []string{"run", "report", "[1]"}, 2, []string{"the inputs must be a JSON object of input names and values, not a list"}},
		{"no such plan", []string{"run", "nothing"}, 1, []string{"nothing: no such file, and no plan with that identifier"}},
		{"a bad events format", []string{"run", "report", "--events", "xml"}, 2, []string{"--events takes jsonl"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errOut, code := runCLI(t, tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d\n%s", code, tt.code, errOut)
			}
			for _, want := range tt.stderr {
				if !strings.Contains(errOut, want) {
					t.Errorf("stderr lacks %q:\n%s", want, errOut)
				}
			}
		})
	}
}

func TestRunRefusalsKeepTheirShape(t *testing.T) {
	runProject(t)
	out, errOut, code := runCLI(t, "run", "report", "--json")
	if code != 3 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var env map[string]any
	if err := json.Unmarshal([]byte(out), &env); err != nil {
		t.Fatalf("no envelope on stdout: %v\n%s", err, out)
	}
	if env["error"] != "plan 'report' needs inputs" || env["input_schema"] == nil || len(env["problems"].([]any)) != 1 || env["plan"] != "report" {
		t.Errorf("envelope %v", env)
	}
	_, errOut, code = runCLI(t, "run", "report", "--events", "jsonl")
	if code != 3 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var line map[string]any
	if err := json.Unmarshal([]byte(errOut), &line); err != nil || line["kind"] != "error" {
		t.Errorf("stderr under jsonl is not one JSON line: %v\n%s", err, errOut)
	}
}

func TestRunRefusesAHiddenPlan(t *testing.T) {
	dir := runProject(t)
	os.WriteFile(filepath.Join(dir, ".stepwise", "plans", "hidden.yaml"), []byte(`
identifier: hidden
name: Hidden
description: Needs a server this machine lacks.
requires_servers: [linear]
steps:
  - id: l
    tool_name: linear__list_issues
    input: {}
`), 0o644)
	_, errOut, code := runCLI(t, "run", "hidden")
	if code != 1 || !strings.Contains(errOut, "stepwise: plan 'hidden' cannot run here:") || !strings.Contains(errOut, "needs MCP server 'linear'") || strings.Contains(errOut, "→ l") {
		t.Errorf("exit %d:\n%s", code, errOut)
	}
}

func TestRunLeavesTextAlone(t *testing.T) {
	dir := runProject(t)
	os.WriteFile(filepath.Join(dir, ".stepwise", "plans", "esc.yaml"), []byte(`
identifier: esc
name: Esc
description: Text with <, > and &.
steps:
  - id: E0
    tool_name: builtin__reshape
    input: { shape: { m: "a < b && c > d" } }
output: { m: "{{E0.m}}" }
`), 0o644)
	out, _, code := runCLI(t, "run", "esc")
	if code != 0 || !strings.Contains(out, `"m": "a < b && c > d"`) {
		t.Errorf("exit %d, stdout:\n%s", code, out)
	}
}

func TestRunEventsJSONL(t *testing.T) {
	runProject(t)
	_, errOut, code := runCLI(t, "run", "report", `{"team":"core"}`, "--events", "jsonl")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var kinds []string
	sc := bufio.NewScanner(strings.NewReader(errOut))
	for sc.Scan() {
		line := sc.Text()
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("not JSON: %s", line)
		}
		kinds = append(kinds, ev["kind"].(string))
	}
	if want := "run_start step_start tool_start tool_end step_end usage run_end"; strings.Join(kinds, " ") != want {
		t.Errorf("kinds %v, want %s", kinds, want)
	}
}

func TestRunIsRecorded(t *testing.T) {
	runProject(t)
	out, errOut, code := runCLI(t, "run", "report", `{"team":"core"}`, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var env struct {
		RunID string `json:"run_id"`
	}
	json.Unmarshal([]byte(out), &env)
	out, errOut, code = runCLI(t, "inspect", env.RunID[:8], "--json")
	if code != 0 {
		t.Fatalf("inspect: exit %d: %s", code, errOut)
	}
	for _, want := range []string{env.RunID, `"E0"`, `"builtin__reshape"`, `"core"`} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect lacks %s:\n%s", want, out)
		}
	}
}

// TestKilledRunLeavesAReadableStore runs a plan in a child process, kills
// it with SIGKILL during its second step, and reads the store it left.
func TestKilledRunLeavesAReadableStore(t *testing.T) {
	runProject(t)
	cmd := exec.Command(os.Args[0], "run", "slow")
	cmd.Env = append(os.Environ(), "STEPWISE_TEST_CLI=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := bufio.NewScanner(stderr)
	for lines.Scan() {
		if strings.HasPrefix(lines.Text(), "→ long") {
			break
		}
	}
	// The quick step's end was given to the recorder before the long step
	// started; wait until the writer has committed it (it writes as events
	// come, but a loaded machine may take a moment), then kill.
	deadline := time.Now().Add(10 * time.Second)
	for {
		out, _, _ := runCLI(t, "runs", "--json")
		var listing struct {
			Runs []struct {
				ID string `json:"id"`
			} `json:"runs"`
		}
		if json.Unmarshal([]byte(out), &listing) == nil && len(listing.Runs) == 1 {
			if shown, _, _ := runCLI(t, "inspect", listing.Runs[0].ID, "--json"); strings.Contains(shown, `"path": "quick"`) && strings.Contains(shown, `"status": "ok"`) {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the quick step was never committed to the store")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	out, errOut, code := runCLI(t, "runs", "--json")
	if code != 0 {
		t.Fatalf("runs: exit %d: %s", code, errOut)
	}
	var listing struct {
		Runs []struct {
			ID string `json:"id"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &listing); err != nil || len(listing.Runs) != 1 {
		t.Fatalf("runs %v: %s", err, out)
	}
	out, errOut, code = runCLI(t, "inspect", listing.Runs[0].ID)
	if code != 0 {
		t.Fatalf("inspect: exit %d: %s", code, errOut)
	}
	for _, want := range []string{"quick", "interrupted"} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect lacks %q:\n%s", want, out)
		}
	}
}

func TestReadInputs(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "in.json")
	os.WriteFile(file, []byte(`{"team":"core","limit":3}`), 0o644)
	tests := []struct {
		doc   string
		flags []string
		stdin string
		want  string
		err   string
	}{
		{doc: "", want: `{}`},
		{doc: `{"a":1}`, flags: []string{"b=2", "c=x y", `d={"k":true}`}, want: `{"a":1,"b":2,"c":"x y","d":{"k":true}}`},
		{doc: "@" + file, flags: []string{"limit=5"}, want: `{"limit":5,"team":"core"}`},
		{doc: "-", stdin: `{"from":"stdin"}`, want: `{"from":"stdin"}`},
		{doc: "null", want: `{}`},
		{doc: "[1]", err: "the inputs must be a JSON object of input names and values, not a list"},
		{flags: []string{"novalue"}, err: "--input takes key=value, not 'novalue'"},
		{doc: "@" + filepath.Join(dir, "missing.json"), err: "reading inputs:"},
	}
	for _, tt := range tests {
		got, err := readInputs(tt.doc, tt.flags, strings.NewReader(tt.stdin))
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q %v: err %v, want %q", tt.doc, tt.flags, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q %v: %v", tt.doc, tt.flags, err)
			continue
		}
		if b, _ := json.Marshal(got); string(b) != tt.want {
			t.Errorf("%q %v: %s, want %s", tt.doc, tt.flags, b, tt.want)
		}
	}
}

func TestTerminalAsk(t *testing.T) {
	schema := `
type: object
required: [channel, confirm]
properties:
  channel: { enum: [stable, beta], description: Release channel }
  confirm: { type: boolean, description: Really? }
  count: { type: integer }
`
	p, r := plans.Load("ask.yaml", []byte("identifier: a\nname: a\ndescription: a\nsteps:\n  - id: E0\n    tool_name: ask\n    input:\n      prompt: Which?\n      output_schema:\n"+indent(schema, "        ")), plans.Stepwise)
	if !r.OK() {
		t.Fatal(r.Problems)
	}
	q := &engine.Question{Prompt: "Which?", Schema: p.Steps[0].Control.(*plans.AskInput).OutputSchema}
	tests := []struct {
		typed string
		want  string
		ok    bool
	}{
		{"BETA\nyes\n3\n", `{"channel":"beta","confirm":true,"count":3}`, true},
		{"nightly\nstable\nn\n\n", `{"channel":"stable","confirm":false}`, true},
		{"\n", "", false},
		{"a\nb\nc\n", "", false},
	}
	for _, tt := range tests {
		var w strings.Builder
		got, ok := askOnTerminal(bufio.NewScanner(strings.NewReader(tt.typed)), &w, "E0", q)
		if ok != tt.ok {
			t.Errorf("%q: ok %v\n%s", tt.typed, ok, w.String())
			continue
		}
		if b, _ := json.Marshal(got); ok && string(b) != tt.want {
			t.Errorf("%q: %s, want %s", tt.typed, b, tt.want)
		}
	}
}

func indent(s, pad string) string {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		b.WriteString(pad + line + "\n")
	}
	return b.String()
}

// TestKilledRunTakesItsServersAlong kills a run with SIGKILL while its MCP
// server is up, and checks that the server does not outlive it.
func TestKilledRunTakesItsServersAlong(t *testing.T) {
	if _, err := os.Stat("/proc/self/cwd"); err != nil {
		t.Skip("needs /proc to find the server's process")
	}
	dir := runProject(t)
	config, _ := os.ReadFile(filepath.Join(dir, ".stepwise", "config.toml"))
	config = append(config, fmt.Sprintf("\n[mcp.tracker]\ncommand = %q\nargs = [\"__demo-mcp\"]\nenv = { %s = \"1\" }\n", os.Args[0], stubbornEnv)...)
	os.WriteFile(filepath.Join(dir, ".stepwise", "config.toml"), config, 0o644)
	os.WriteFile(filepath.Join(dir, ".stepwise", "plans", "tracked.yaml"), []byte(`
identifier: tracked
name: Tracked
description: Reads the tracker, then takes its time.
steps:
  - id: issues
    tool_name: tracker__list_issues
    input: { limit: 1 }
  - id: long
    tool_name: user__nap
    input: { seconds: 30 }
`), 0o644)
	t.Setenv("GORACE", "atexit_sleep_ms=0")
	cmd := exec.Command(os.Args[0], "run", "tracked")
	cmd.Env = append(os.Environ(), "STEPWISE_TEST_CLI=1")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := bufio.NewScanner(stderr)
	for lines.Scan() && !strings.HasPrefix(lines.Text(), "→ long") {
	}
	servers := processesIn(dir, "__demo-mcp")
	if len(servers) != 1 {
		t.Fatalf("found %d tracker servers running in %s, want 1", len(servers), dir)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for len(processesIn(dir, "__demo-mcp")) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the tracker server (pid %v) outlived the run killed with SIGKILL", servers)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// processesIn lists the pids of live processes whose working directory is
// dir and whose command line holds arg.
func processesIn(dir, arg string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if err != nil || cwd != dir {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		zombie := strings.Contains(string(stat), ") Z ")
		if strings.Contains(string(cmdline), arg) && !zombie {
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestDemoRunsOffline runs every plan of the demo against the tracker the
// binary serves itself and the demo's scripted replies.
func TestDemoRunsOffline(t *testing.T) {
	demoProject(t)
	out, errOut, code := runCLI(t, "run", "issue_timeline", `{"id":"CHK-107"}`)
	if code != 0 {
		t.Fatalf("issue_timeline: exit %d\n%s", code, errOut)
	}
	var timeline map[string]any
	if err := json.Unmarshal([]byte(out), &timeline); err != nil {
		t.Fatal(err)
	}
	if timeline["id"] != "CHK-107" || timeline["comments"] != 2.0 || !strings.Contains(timeline["timeline"].(string), "priya: Fixed: exponential backoff") {
		t.Errorf("issue_timeline output %v", timeline)
	}

	findings := `{"findings":[{"id":"CHK-101","severity":"sev1","component":"payments-gateway","duplicate_of":"","summary":"EU card payments fail."}]}`
	out, errOut, code = runCLI(t, "run", "post_triage_notes", findings, "--json")
	if code != 0 || !strings.Contains(out, `"steps_executed": 4`) {
		t.Fatalf("post_triage_notes: exit %d\n%s\n%s", code, out, errOut)
	}

	out, errOut, code = runCLI(t, "run", "incident_brief", `{"symptom":"checkout timeout"}`)
	if code != 0 || !strings.Contains(out, `"investigation_rounds": 3`) || !strings.Contains(out, `"role": "past_incident"`) {
		t.Errorf("incident_brief: exit %d\n%s\n%s", code, out, errOut)
	}

	out, errOut, code = runCLI(t, "run", "triage_queue", `{"on_call":"Priya"}`, "--json")
	var env struct {
		Answer string `json:"answer"`
		Usage  struct {
			Calls int `json:"calls"`
		} `json:"usage"`
	}
	if err := json.Unmarshal([]byte(out), &env); err != nil || code != 0 {
		t.Fatalf("triage_queue: exit %d, %v\n%s\n%s", code, err, out, errOut)
	}
	// Four agents (one with a repair pass), and the solver's report.
	if !strings.HasPrefix(env.Answer, "Morning. One live incident") || env.Usage.Calls != 10 {
		t.Errorf("triage_queue: answer %q, %d calls", env.Answer, env.Usage.Calls)
	}
}

// TestInterruptedRun stops a run with each signal that stops one: it
// exits 130, and its error says which stopped it, in words.
func TestInterruptedRun(t *testing.T) {
	runProject(t)
	for _, tc := range []struct {
		sig   os.Signal
		cause string
	}{
		{os.Interrupt, "interrupted (ctrl-c)"},
		{syscall.SIGTERM, "terminated (SIGTERM)"},
		{syscall.SIGHUP, "the terminal hung up (SIGHUP)"},
	} {
		cmd := exec.Command(os.Args[0], "run", "slow")
		cmd.Env = append(os.Environ(), cliEnv+"=1", "GORACE=atexit_sleep_ms=0")
		stderr, _ := cmd.StderrPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		var said strings.Builder
		lines := bufio.NewScanner(stderr)
		for lines.Scan() {
			said.WriteString(lines.Text() + "\n")
			if strings.HasPrefix(lines.Text(), "→ long") {
				cmd.Process.Signal(tc.sig)
			}
		}
		err := cmd.Wait()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 130 {
			t.Errorf("%s: exit %v, want 130", tc.sig, err)
		}
		if !strings.Contains(said.String(), "Error: run aborted at long: "+tc.cause+"\n") {
			t.Errorf("%s: stderr:\n%s", tc.sig, said.String())
		}
	}
}

func TestRunRefusesABrokenRepliesFile(t *testing.T) {
	dir := runProject(t)
	os.WriteFile(filepath.Join(dir, ".stepwise", "replies.yaml"), []byte("replies:\n  - match: E1\n    reply: { txt: hi }\n"), 0o644)
	_, errOut, code := runCLI(t, "run", "report", `{"team":"core"}`)
	if code != 1 || !strings.Contains(errOut, "replies.yaml:3:") || strings.Contains(errOut, "→ E0") {
		t.Errorf("exit %d:\n%s", code, errOut)
	}
	out, _, code := runCLI(t, "run", "report", "{bad", "--json")
	if code != 2 || !strings.Contains(out, `"error": "the inputs are not JSON`) {
		t.Errorf("exit %d, stdout:\n%s", code, out)
	}
}

func TestInspectOneStep(t *testing.T) {
	dir := runProject(t)
	os.WriteFile(filepath.Join(dir, ".stepwise", "plans", "many.yaml"), []byte(`
identifier: many
name: Many
description: A map of three.
steps:
  - id: E1
    tool_name: map
    input:
      over: [a, b, c]
      do: { tool_name: builtin__reshape, input: { shape: { v: "{{item}}" } } }
`), 0o644)
	out, errOut, code := runCLI(t, "run", "many", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var env struct {
		RunID string `json:"run_id"`
	}
	json.Unmarshal([]byte(out), &env)
	out, errOut, code = runCLI(t, "inspect", env.RunID, "--step", "E1/do.1", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got struct {
		Steps []struct {
			Path string `json:"path"`
		} `json:"steps"`
	}
	json.Unmarshal([]byte(out), &got)
	if len(got.Steps) != 1 || got.Steps[0].Path != "E1/do.1" {
		t.Errorf("steps %+v\n%s", got.Steps, out)
	}
	if _, errOut, code := runCLI(t, "inspect", env.RunID, "--step", "E1//x"); code != 2 || !strings.Contains(errOut, "--step") {
		t.Errorf("a bad pattern: exit %d: %s", code, errOut)
	}
	if _, errOut, code := runCLI(t, "inspect", env.RunID, "--step", "E9"); code != 2 || !strings.Contains(errOut, "--step E9 matches nothing recorded in run "+env.RunID+"; its steps: E1") {
		t.Errorf("a pattern that matches nothing: exit %d: %s", code, errOut)
	}
}

// TestRunAnAgent runs an agent step through stepwise run: its rounds in the
// events feed, its result in the output, and the strict downgrade of its
// answer round (an optional property, which OpenAI's rules refuse) as a
// finding of inspect. The first round's downgrade, for offering tools, is
// by design and no finding.
func TestRunAnAgent(t *testing.T) {
	dir := runProject(t)
	os.WriteFile(filepath.Join(dir, ".stepwise", "plans", "agentic.yaml"), []byte(`
identifier: agentic
name: Agentic
description: One agent that looks once, then answers.
steps:
  - id: E1
    tool_name: agent
    input:
      prompt: "How many issues are open?"
      tools: ["builtin__reshape"]
      max_iterations: 2
      structured_output: strict
      output_schema:
        type: object
        additionalProperties: false
        required: [count]
        properties:
          count: { type: integer }
          note: { type: string }
output: { agent: "{{E1}}" }
`), 0o644)
	os.WriteFile(filepath.Join(dir, "agent_replies.yaml"), []byte(`
replies:
  - match: E1
    reply: { tool_calls: [ { name: builtin__reshape, arguments: { shape: { open: 2 } } } ], usage: { input_tokens: 300, output_tokens: 20 } }
  - match: E1
    reply: { json: { count: 2 }, usage: { input_tokens: 400, output_tokens: 10 } }
`), 0o644)
	out, errOut, code := runCLI(t, "run", "agentic", "--script", "agent_replies.yaml", "--json", "--events", "jsonl")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, errOut)
	}
	var env struct {
		Output struct {
			Agent map[string]any `json:"agent"`
		} `json:"output"`
		Usage struct {
			ByStep []struct {
				Path  string `json:"path"`
				Calls int    `json:"calls"`
			} `json:"by_step"`
		} `json:"usage"`
		RunID string `json:"run_id"`
	}
	if err := json.Unmarshal([]byte(out), &env); err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(env.Output.Agent); string(b) != `{"final":true,"iterations":2,"output":{"count":2},"tools_called":[{"round":1,"tool":"builtin__reshape"}]}` {
		t.Errorf("agent result %s", b)
	}
	if len(env.Usage.ByStep) != 1 || env.Usage.ByStep[0].Path != "E1" || env.Usage.ByStep[0].Calls != 2 {
		t.Errorf("by_step %+v", env.Usage.ByStep)
	}
	for _, want := range []string{`"path":"E1/agent.1","kind":"llm_call"`, `"path":"E1/agent.1/builtin__reshape","kind":"tool_end"`, `"path":"E1/agent.2","kind":"llm_call"`} {
		if !strings.Contains(errOut, want) {
			t.Errorf("the events lack %s", want)
		}
	}
	out, _, _ = runCLI(t, "inspect", env.RunID)
	if !strings.Contains(out, "structured_output_downgraded: 1 step requested strict structured output but ran without it (E1: gate_ineligible)") {
		t.Errorf("inspect:\n%s", out)
	}
}

// TestRunSpendCap stops a run before its next model call once its priced
// calls have cost the cap, from --max-cost or [limits] cost_usd.
func TestRunSpendCap(t *testing.T) {
	plan := "identifier: twice\nname: Twice\ndescription: Two model calls.\nsteps:\n" +
		"  - id: E1\n    tool_name: builtin__infer\n    input: { instruction: one }\n" +
		"  - id: E2\n    tool_name: builtin__infer\n    input: { instruction: two }\n"
	replies := "replies:\n  - match: E1\n    reply: { text: a, usage: { input_tokens: 1000000, output_tokens: 0 } }\n" +
		"  - match: E2\n    reply: { text: b, usage: { input_tokens: 10, output_tokens: 0 } }\n"
	config := "[providers.s]\ntype = \"script\"\nfile = \".stepwise/replies.yaml\"\n[models]\ndefault = { provider = \"s\", model = \"m\" }\n[pricing.m]\ninput = 1.0\noutput = 1.0\n"
	tests := []struct {
		name   string
		limits string
		args   []string
		code   int
		want   string
	}{
		{name: "no cap", code: 0},
		{name: "--max-cost", args: []string{"--max-cost", "0.5"}, code: 1,
			want: "step E2 (builtin__infer): spend cap reached: the run's priced model calls cost $1.0000, and its cap is $0.50 "},
		{name: "--max-cost in dollars", args: []string{"--max-cost", "$0.5"}, code: 1, want: "and its cap is $0.50 "},
		// The cap is said as given, never rounded as a cost is.
		{name: "a cap below a hundredth of a cent", args: []string{"--max-cost", "0.000001"}, code: 1, want: "and its cap is $0.000001 "},
		{name: "[limits] cost_usd", limits: "[limits]\ncost_usd = 1.0\n", code: 1, want: "spend cap reached"},
		{name: "a cap not reached", limits: "[limits]\ncost_usd = 2.0\n", code: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scratchProject(t, config+tt.limits)
			os.MkdirAll(filepath.Join(".stepwise", "plans"), 0o755)
			os.WriteFile(filepath.Join(".stepwise", "plans", "twice.yaml"), []byte(plan), 0o644)
			os.WriteFile(filepath.Join(".stepwise", "replies.yaml"), []byte(replies), 0o644)
			_, errOut, code := runCLI(t, append([]string{"run", "twice"}, tt.args...)...)
			if code != tt.code || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, want %d; stderr lacks %q:\n%s", code, tt.code, tt.want, errOut)
			}
		})
	}
}

// TestSpendCapDebugAndFork gives debug and fork, with --debug or not,
// the spend cap run has: --max-cost over [limits] cost_usd, read the same
// way, with the same warning of each model the cap cannot count. A fork
// fails at the cap as a run does; under the debugger the run holds at the
// stop of the call instead, where a value given by hand goes on.
func TestSpendCapDebugAndFork(t *testing.T) {
	plan := "identifier: twice\nname: Twice\ndescription: Two model calls.\nsteps:\n" +
		"  - id: E1\n    tool_name: builtin__infer\n    input: { instruction: one }\n" +
		"  - id: E2\n    tool_name: builtin__infer\n    input: { instruction: two }\n"
	replies := "replies:\n  - match: E1\n    reply: { text: a, usage: { input_tokens: 1000000, output_tokens: 0 } }\n" +
		"  - match: E2\n    reply: { text: b, usage: { input_tokens: 10, output_tokens: 0 } }\n"
	config := "[providers.s]\ntype = \"script\"\nfile = \".stepwise/replies.yaml\"\n" +
		"[models]\ndefault = { provider = \"s\", model = \"m\" }\nnamed.free = { provider = \"s\", model = \"free\" }\n[pricing.m]\ninput = 1.0\noutput = 1.0\n"
	scratchProject(t, config)
	os.MkdirAll(filepath.Join(".stepwise", "plans"), 0o755)
	os.WriteFile(filepath.Join(".stepwise", "plans", "twice.yaml"), []byte(plan), 0o644)
	os.WriteFile(filepath.Join(".stepwise", "replies.yaml"), []byte(replies), 0o644)
	out, errOut, code := runCLI(t, "run", "twice", "--json")
	var orig struct {
		RunID string `json:"run_id"`
	}
	if err := json.Unmarshal([]byte(out), &orig); code != 0 || err != nil {
		t.Fatalf("run: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	const warning = "warning: the spend cap ($0.50, %s) cannot count the calls of model free (models.named.free), which has no price: add [pricing.free] with its input and output prices, in USD per million tokens\n"
	const reached = "spend cap reached: the run's priced model calls cost $1.0000, and its cap is $0.50 "
	heldThenGiven := []string{"stop E2 error (spend cap)", "end ok"}
	// warnedFirst reports whether debug --json's stdout opens with the
	// warning want, as a JSON line about its model.
	warnedFirst := func(out, want string) bool {
		first, _, _ := strings.Cut(out, "\n")
		var line struct{ Model, Warning string }
		return json.Unmarshal([]byte(first), &line) == nil && line.Model == "free" && "warning: "+line.Warning+"\n" == want
	}

	t.Run("debug holds at the cap", func(t *testing.T) {
		out, errOut, code := debugCLI(t, `replace {"text": "by hand"}`+"\n", "twice", "--max-cost", "0.5", "--continue", "--json")
		got, _ := sessionLines(t, out)
		if code != 0 || !slices.Equal(got, heldThenGiven) || !warnedFirst(out, fmt.Sprintf(warning, "--max-cost")) {
			t.Errorf("exit %d, session %q, want %q; stdout:\n%s\nstderr:\n%s", code, got, heldThenGiven, out, errOut)
		}
	})
	t.Run("fork fails at the cap", func(t *testing.T) {
		_, errOut, code := runCLI(t, "fork", orig.RunID, "--from", "E1", "--max-cost", "0.5")
		if code != 1 || !strings.HasPrefix(errOut, fmt.Sprintf(warning, "--max-cost")) || !strings.Contains(errOut, "step E2 (builtin__infer): "+reached) {
			t.Errorf("exit %d, stderr:\n%s", code, errOut)
		}
	})
	t.Run("fork --debug holds at the cap", func(t *testing.T) {
		out, errOut, code := rerunCLI(t, `replace {"text": "by hand"}`+"\n", "fork", orig.RunID, "--from", "E1", "--debug", "--continue", "--max-cost", "0.5", "--json")
		got, _ := sessionLines(t, out)
		if code != 0 || !slices.Equal(got, heldThenGiven) || !warnedFirst(out, fmt.Sprintf(warning, "--max-cost")) {
			t.Errorf("exit %d, session %q, want %q; stdout:\n%s\nstderr:\n%s", code, got, heldThenGiven, out, errOut)
		}
	})
	t.Run("fork --debug warns of [limits] cost_usd", func(t *testing.T) {
		os.WriteFile(filepath.Join(".stepwise", "config.toml"), []byte(config+"[limits]\ncost_usd = 0.5\n"), 0o644)
		out, errOut, code := rerunCLI(t, `replace {"text": "by hand"}`+"\n", "fork", orig.RunID, "--from", "E1", "--debug", "--continue", "--json")
		got, _ := sessionLines(t, out)
		if code != 0 || !slices.Equal(got, heldThenGiven) || !warnedFirst(out, fmt.Sprintf(warning, "[limits] cost_usd")) {
			t.Errorf("exit %d, session %q, want %q; stdout:\n%s\nstderr:\n%s", code, got, heldThenGiven, out, errOut)
		}
	})
}

// TestRunSpendCapUnpriced warns, before the run, of each model its spend
// cap cannot count for want of a price, naming the key to add: the cap
// would let a run of such calls spend without end, and say nothing.
func TestRunSpendCapUnpriced(t *testing.T) {
	plan := "identifier: once\nname: Once\ndescription: One model call.\nsteps:\n" +
		"  - id: E1\n    tool_name: builtin__infer\n    input: { instruction: one }\n"
	replies := "replies:\n  - match: E1\n    reply: { text: a, usage: { input_tokens: 1000000, output_tokens: 0 } }\n"
	provider := "[providers.s]\ntype = \"script\"\nfile = \".stepwise/replies.yaml\"\n"
	unpriced := provider + "[models]\ndefault = { provider = \"s\", model = \"m\" }\n"
	const warning = "warning: the spend cap ($0.01, %s) cannot count the calls of model %s (%s), which has no price: add [pricing.%s] with its input and output prices, in USD per million tokens\n"
	tests := []struct {
		name   string
		config string
		args   []string
		want   string // "" for no warning
	}{
		{name: "--max-cost", config: unpriced, args: []string{"--max-cost", "0.01"},
			want: fmt.Sprintf(warning, "--max-cost", "m", "models.default", "m")},
		{name: "[limits] cost_usd", config: unpriced + "[limits]\ncost_usd = 0.01\n",
			want: fmt.Sprintf(warning, "[limits] cost_usd", "m", "models.default", "m")},
		{name: "a cap below a hundredth of a cent", config: unpriced, args: []string{"--max-cost", "0.000001"},
			want: "warning: the spend cap ($0.000001, --max-cost) cannot count the calls of model m (models.default), which has no price: add [pricing.m] with its input and output prices, in USD per million tokens\n"},
		{name: "no cap", config: unpriced},
		{name: "a priced model", config: unpriced + "[pricing.m]\ninput = 1.0\noutput = 1.0\n", args: []string{"--max-cost", "0.01"}},
		{name: "an unpriced fallback", args: []string{"--max-cost", "0.01"},
			config: provider + "[models]\ndefault = { provider = \"s\", model = \"m\", fallbacks = [{ provider = \"s\", model = \"backup\" }] }\n[pricing.m]\ninput = 1.0\noutput = 1.0\n",
			want:   fmt.Sprintf(warning, "--max-cost", "backup", "models.default fallbacks", "backup")},
		{name: "an unpriced fallback a replies file never tries", args: []string{"--max-cost", "0.01", "--script", ".stepwise/replies.yaml"},
			config: provider + "[models]\ndefault = { provider = \"s\", model = \"m\", fallbacks = [{ provider = \"s\", model = \"backup\" }] }\n[pricing.m]\ninput = 1.0\noutput = 1.0\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scratchProject(t, tt.config)
			os.MkdirAll(filepath.Join(".stepwise", "plans"), 0o755)
			os.WriteFile(filepath.Join(".stepwise", "plans", "once.yaml"), []byte(plan), 0o644)
			os.WriteFile(filepath.Join(".stepwise", "replies.yaml"), []byte(replies), 0o644)
			_, errOut, code := runCLI(t, append([]string{"run", "once"}, tt.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if tt.want == "" && strings.Contains(errOut, "spend cap") || !strings.HasPrefix(errOut, tt.want) {
				t.Errorf("stderr:\n%s\nwant it to begin with:\n%s", errOut, tt.want)
			}
			if tt.want == "" {
				return
			}
			// Under --events jsonl, the warning is a JSON line.
			_, errOut, _ = runCLI(t, append([]string{"run", "once", "--events", "jsonl"}, tt.args...)...)
			first, _, _ := strings.Cut(errOut, "\n")
			var line map[string]string
			if err := json.Unmarshal([]byte(first), &line); err != nil || line["kind"] != "warning" || line["warning"]+"\n" != strings.TrimPrefix(tt.want, "warning: ") {
				t.Errorf("the first line of the events is %s", first)
			}
		})
	}
}

// TestRunFailureTellsNoUnknownCost: a step whose only model call failed
// says its tokens, and no cost: "$0" would claim a price the model may not
// have.
func TestRunFailureTellsNoUnknownCost(t *testing.T) {
	scratchProject(t, "[providers.s]\ntype = \"script\"\nfile = \".stepwise/replies.yaml\"\n[models]\ndefault = { provider = \"s\", model = \"m\" }\n")
	os.MkdirAll(filepath.Join(".stepwise", "plans"), 0o755)
	os.WriteFile(filepath.Join(".stepwise", "plans", "once.yaml"), []byte("identifier: once\nname: Once\ndescription: One model call.\nsteps:\n"+
		"  - id: E1\n    tool_name: builtin__infer\n    input: { instruction: one }\n"), 0o644)
	os.WriteFile(filepath.Join(".stepwise", "replies.yaml"), []byte("replies:\n  - match: E1\n    error: { status: 400, message: \"bad request\" }\n"), 0o644)
	_, errOut, code := runCLI(t, "run", "once")
	if code != 1 || !strings.Contains(errOut, "✗ E1 builtin__infer failed after ") || strings.Contains(errOut, "$") {
		t.Errorf("exit %d, stderr:\n%s", code, errOut)
	}
}

// TestRunsRetention deletes runs by id (runs rm) and by age (runs prune,
// and [storage] keep_days before a run is recorded), and says what it
// deleted.
func TestRunsRetention(t *testing.T) {
	wd := runProject(t)
	ids := func() []string {
		t.Helper()
		out, errOut, code := runCLI(t, "runs", "--json", "--limit", "0")
		var listing struct{ Runs []struct{ ID string } }
		if code != 0 || json.Unmarshal([]byte(out), &listing) != nil {
			t.Fatalf("runs: exit %d: %s", code, errOut)
		}
		var list []string
		for _, r := range listing.Runs {
			list = append(list, r.ID)
		}
		return list
	}
	for range 4 {
		if _, errOut, code := runCLI(t, "run", "report", `{"team":"core"}`); code != 0 {
			t.Fatalf("run: exit %d: %s", code, errOut)
		}
	}
	all := ids() // newest first
	if len(all) != 4 {
		t.Fatalf("%d runs recorded", len(all))
	}
	// A run named twice, by a prefix and in full, is deleted and told
	// once.
	_, errOut, code := runCLI(t, "runs", "rm", all[0][:10], all[0])
	if code != 0 || !strings.Contains(errOut, "deleted 1 run: "+all[0]) || strings.Count(errOut, all[0]) != 1 {
		t.Errorf("runs rm of one run named twice: exit %d: %s", code, errOut)
	}
	if _, errOut, code := runCLI(t, "runs", "rm", "no-such-run"); code != 1 || !strings.Contains(errOut, "no run 'no-such-run'") {
		t.Errorf("runs rm of an unknown run: exit %d: %s", code, errOut)
	}
	// One unknown run among known ones: nothing is deleted, and the
	// message says so.
	_, errOut, code = runCLI(t, "runs", "rm", all[3], "no-such-run")
	if code != 1 || !strings.Contains(errOut, "nothing was deleted: no run 'no-such-run'") || !slices.Contains(ids(), all[3]) {
		t.Errorf("runs rm of a known and an unknown run: exit %d: %s", code, errOut)
	}
	if _, errOut, code := runCLI(t, "runs", "prune", "--older-than", "1ns", "--keep", "2"); code != 0 || !strings.Contains(errOut, "deleted 1 run older than 1ns") {
		t.Errorf("runs prune: exit %d: %s", code, errOut)
	}
	if left := ids(); len(left) != 2 || left[0] != all[1] {
		t.Errorf("runs left %v, want the newest two, %s first", left, all[1])
	}
	if _, _, code := runCLI(t, "runs", "prune"); code != 2 {
		t.Errorf("runs prune without --older-than: exit %d, want 2", code)
	}
	// An age is said as it is written, not as 36h0m0s.
	if _, errOut, code := runCLI(t, "runs", "prune", "--older-than", "36h", "--keep", "2"); code != 0 || !strings.Contains(errOut, "deleted 0 runs older than 36h\n") {
		t.Errorf("runs prune --older-than 36h: exit %d\n%s", code, errOut)
	}

	// Runs recorded days ago: one of this project, one of another, one
	// of none.
	recordOld := func(ids ...string) {
		t.Helper()
		recordInStore(t, func(rec engine.Sink) {
			for i, id := range ids {
				project := []string{wd, filepath.Join(t.TempDir(), "elsewhere"), ""}[i%3]
				r := &storetest.Run{ID: id, Sink: rec, Project: project, Start: time.Now().AddDate(0, 0, -3)}
				for j := range 50 {
					// Inputs that differ, so that the run takes pages its
					// deletion gives back.
					r.Step("E1", "builtin__reshape", map[string]any{"pad": strings.Repeat(strconv.Itoa(j)+" ", 500)}, "ok", 1)
				}
				storetest.Finished(r)
			}
		})
	}
	// --older-than takes days.
	recordOld("old-here", "old-there", "old-nowhere")
	_, errOut, code = runCLI(t, "runs", "prune", "--all", "--older-than", "2d")
	if code != 0 || !strings.Contains(errOut, "deleted 3 runs older than 2d, 2 of them of other projects (") || !strings.Contains(errOut, " given back)") {
		t.Errorf("runs prune --older-than 2d: exit %d: %s", code, errOut)
	}

	// keep_days: a run older than that goes before the next is recorded,
	// and stderr says what went, but under --quiet.
	keepDays(t, 2)
	recordOld("old-here", "old-there", "old-nowhere")
	_, errOut, code = runCLI(t, "run", "report", `{"team":"core"}`)
	if code != 0 || !strings.Contains(errOut, "[storage] keep_days = 2: deleted 3 runs older than 2 days, 2 of them of other projects (") {
		t.Fatalf("run with keep_days: exit %d: %s", code, errOut)
	}
	out, _, _ := runCLI(t, "runs", "--all", "--json", "--limit", "0")
	if strings.Contains(out, "old-") || strings.Count(out, `"id"`) != 3 {
		t.Errorf("after a run with keep_days = 2, the runs are:\n%s", out)
	}
	recordOld("old-here")
	_, errOut, code = runCLI(t, "run", "report", `{"team":"core"}`, "--quiet")
	if code != 0 || errOut != "" || slices.Contains(ids(), "old-here") {
		t.Errorf("run --quiet with keep_days: exit %d, stderr %q", code, errOut)
	}

	// Once every run of the project is gone, none is recorded, not yet.
	if _, errOut, code := runCLI(t, append([]string{"runs", "rm"}, ids()...)...); code != 0 {
		t.Fatalf("runs rm: exit %d: %s", code, errOut)
	}
	if _, errOut, _ := runCLI(t, "runs"); errOut != "no runs of this project are recorded; --all lists those of every project\n" {
		t.Errorf("runs after every run was deleted: %q", errOut)
	}
}

// TestRunsRmGivenBack: runs rm says how much space it gave back, and when
// it gave back none, why and how it comes back: the runs were too small to
// free a page of the store, their inputs and results are shared with runs
// kept, or another process was reading the store.
func TestRunsRmGivenBack(t *testing.T) {
	runProject(t)
	rm := func(id string) string {
		t.Helper()
		_, errOut, code := runCLI(t, "runs", "rm", id)
		if code != 0 || !strings.HasPrefix(errOut, "deleted 1 run: "+id+" (") {
			t.Fatalf("runs rm: exit %d: %s", code, errOut)
		}
		return errOut
	}
	small := []string{runReport(t, "core"), runReport(t, "core"), runReport(t, "core")}
	// The first deletion gives back the pages the store's schema left
	// free when it was made.
	if errOut := rm(small[0]); !strings.HasSuffix(errOut, " given back)\n") {
		t.Errorf("the first runs rm: %s", errOut)
	}
	if errOut := rm(small[1]); !strings.HasSuffix(errOut, " (no space given back: the run took up too little of the run store's file to shrink it; the runs recorded next use that room)\n") {
		t.Errorf("runs rm of a small run: %s", errOut)
	}

	big := strings.Repeat("core ", 60_000)
	twins := []string{runReport(t, big), runReport(t, big)}
	if errOut := rm(twins[0]); !strings.Contains(errOut, " (no space given back: ") || !strings.Contains(errOut, " of inputs and results shared with other runs stays until they are deleted too)\n") {
		t.Errorf("runs rm of a run whose inputs another run shares: %s", errOut)
	}
	if errOut := rm(twins[1]); !strings.HasSuffix(errOut, " given back)\n") {
		t.Errorf("runs rm of the last run of its inputs: %s", errOut)
	}

	// Another process reads the store: the space waits for it to let go.
	reading := runReport(t, strings.Repeat("other ", 60_000))
	reader, err := sql.Open("sqlite", dataStore())
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	read, err := reader.Begin()
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := read.QueryRow("SELECT count(*) FROM runs").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if errOut := rm(reading); !strings.Contains(errOut, " (another process was reading the run store: ") || !strings.HasSuffix(errOut, " comes back once no other process has it open)\n") {
		t.Errorf("runs rm while another process reads the store: %s", errOut)
	}
	waiting := storeSize(t)
	read.Rollback()
	reader.Close()
	if given := waiting - storeSize(t); given < 300_000 {
		t.Errorf("once the other process closed the store, %d bytes came back", given)
	}
}

// TestKeepDaysSparesTheParent: [storage] keep_days prunes as a replay or a
// fork starts, but not the run it is of, which inspect and diff read
// after it; the next run prunes that one.
func TestKeepDaysSparesTheParent(t *testing.T) {
	runProject(t)
	parent := runReport(t, "core")
	// The run is made three days old, as if recorded then.
	db, err := sql.Open("sqlite", dataStore())
	if err != nil {
		t.Fatal(err)
	}
	days := (72 * time.Hour).Nanoseconds()
	if _, err := db.Exec("UPDATE runs SET started_at = started_at - ?, ended_at = ended_at - ?", days, days); err != nil {
		t.Fatal(err)
	}
	db.Close()
	keepDays(t, 2)
	for _, args := range [][]string{{"replay", parent}, {"fork", parent, "--from", "E0"}} {
		if _, errOut, code := runCLI(t, args...); code != 0 || strings.Contains(errOut, "keep_days") {
			t.Errorf("%s of a run older than keep_days: exit %d: %s", args[0], code, errOut)
		}
		if _, errOut, code := runCLI(t, "inspect", parent); code != 0 {
			t.Errorf("inspect after a %s: exit %d: %s", args[0], code, errOut)
		}
	}
	if _, errOut, code := runCLI(t, "run", "report", `{"team":"core"}`); code != 0 || !strings.Contains(errOut, "[storage] keep_days = 2: deleted 1 run older than 2 days") {
		t.Errorf("a run after them: exit %d: %s", code, errOut)
	}
}

// runReport runs plan report of runProject's project for team and returns
// the id of its run.
func runReport(t *testing.T, team string) string {
	t.Helper()
	out, errOut, code := runCLI(t, "run", "report", `{"team":"`+team+`"}`, "--json")
	var env struct {
		RunID string `json:"run_id"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &env) != nil {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	return env.RunID
}

// keepDays sets [storage] keep_days in the working directory's project.
func keepDays(t *testing.T, days int) {
	t.Helper()
	name := filepath.Join(".stepwise", "config.toml")
	config, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, fmt.Appendf(config, "\n[storage]\nkeep_days = %d\n", days), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRunsRmSpaceNotGivenBack: a deletion whose space cannot be given back
// (here the process's file size limit stops the store's compaction, as a
// full disk would) has still deleted its runs, and says so with why the
// space did not come back, not that nothing was deleted; [storage]
// keep_days failing so records the run all the same.
func TestRunsRmSpaceNotGivenBack(t *testing.T) {
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skip("bounds the file size with prlimit (util-linux), which is not installed")
	}
	wd := runProject(t)
	// record writes runs, each with an input of its own: kept's is
	// 2 MB, so that compacting the store writes more than the limit
	// below, and deleting a small run writes far less.
	record := func(started time.Time, pads map[string]int) {
		t.Helper()
		recordInStore(t, func(rec engine.Sink) {
			for id, size := range pads {
				r := &storetest.Run{ID: id, Sink: rec, Project: wd, Start: started}
				r.Step("E1", "builtin__reshape", map[string]any{"pad": strings.Repeat(id, size)}, "ok", 1)
				storetest.Finished(r)
			}
		})
	}
	limited := func(args ...string) (string, int) {
		t.Helper()
		cmd := exec.Command(prlimit, append([]string{"--fsize=1000000", stepwiseBinary(t)}, args...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		if _, exited := err.(*exec.ExitError); err != nil && !exited {
			t.Fatal(err)
		}
		return stderr.String(), cmd.ProcessState.ExitCode()
	}
	listed := func() string {
		t.Helper()
		out, errOut, code := runCLI(t, "runs", "--json", "--limit", "0")
		if code != 0 {
			t.Fatalf("runs: exit %d: %s", code, errOut)
		}
		return out
	}
	record(time.Now(), map[string]int{"kept": 2_000_000, "small": 10})
	errOut, code := limited("runs", "rm", "small")
	if code != 0 || !strings.HasPrefix(errOut, "deleted 1 run: small (no space given back: ") || !strings.HasSuffix(errOut, "; the next runs rm or runs prune tries again)\n") {
		t.Errorf("runs rm whose space cannot be given back: exit %d: %s", code, errOut)
	}
	if runs := listed(); strings.Contains(runs, `"small"`) || !strings.Contains(runs, `"kept"`) {
		t.Errorf("after runs rm small, the runs are:\n%s", runs)
	}

	keepDays(t, 2)
	record(time.Now().AddDate(0, 0, -3), map[string]int{"old": 10})
	errOut, code = limited("run", "report", `{"team":"core"}`)
	if code != 0 || !strings.Contains(errOut, "[storage] keep_days = 2: deleted 1 run older than 2 days, all of this project (no space given back: ") {
		t.Errorf("run with keep_days whose space cannot be given back: exit %d: %s", code, errOut)
	}
	if runs := listed(); strings.Contains(runs, `"old"`) || strings.Count(runs, `"id"`) != 2 {
		t.Errorf("after a run with keep_days, the runs are:\n%s", runs)
	}
	// --quiet leaves out what keep_days pruned, not that it went wrong.
	record(time.Now().AddDate(0, 0, -3), map[string]int{"older": 10})
	errOut, code = limited("run", "report", `{"team":"core"}`, "--quiet")
	if code != 0 || !strings.HasPrefix(errOut, "[storage] keep_days = 2: deleted 1 run older than 2 days, all of this project (no space given back: ") {
		t.Errorf("run --quiet with keep_days whose space cannot be given back: exit %d: %s", code, errOut)
	}
}

// storeSize is the size of the run store's file and its write-ahead log.
func storeSize(t *testing.T) int64 {
	t.Helper()
	var size int64
	for _, name := range []string{dataStore(), dataStore() + "-wal"} {
		info, err := os.Stat(name)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		size += info.Size()
	}
	return size
}

// TestInspectParentDeleted: a fork whose parent was deleted says so where
// it names the parent, rather than name a run that cannot be found.
func TestInspectParentDeleted(t *testing.T) {
	runProject(t)
	parent := runReport(t, "core")
	out, errOut, code := runCLI(t, "fork", parent, "--from", "E0", "--json")
	var fork struct {
		RunID string `json:"run_id"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &fork) != nil {
		t.Fatalf("fork: exit %d: %s", code, errOut)
	}
	inspect := func() (text string, deleted bool) {
		t.Helper()
		text, _, _ = runCLI(t, "inspect", fork.RunID)
		out, _, _ := runCLI(t, "inspect", fork.RunID, "--json")
		var env struct {
			Parent        string `json:"parent"`
			ParentDeleted bool   `json:"parent_deleted"`
		}
		if err := json.Unmarshal([]byte(out), &env); err != nil || env.Parent != parent {
			t.Fatalf("inspect --json: %v\n%s", err, out)
		}
		return text, env.ParentDeleted
	}
	if text, deleted := inspect(); !strings.Contains(text, "parent   "+parent+"\n") || deleted {
		t.Errorf("while the parent is kept, inspect says deleted %v:\n%s", deleted, text)
	}
	if _, errOut, code := runCLI(t, "runs", "rm", parent); code != 0 {
		t.Fatalf("runs rm: exit %d: %s", code, errOut)
	}
	if text, deleted := inspect(); !strings.Contains(text, "parent   "+parent+" (deleted since)\n") || !deleted {
		t.Errorf("once the parent is deleted, inspect says deleted %v:\n%s", deleted, text)
	}
}
