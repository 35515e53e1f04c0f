package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stepwise-dev/stepwise/engine"
)

// gatedPlan is a plan whose tool calls an approval holds or not: E0 calls a
// read-only builtin, E1 the exec tool user__nap (read-only it does not
// say), and the agent E2 calls nap and reshape in its first round and nap
// in its second.
const gatedPlan = `
identifier: gated
name: Gated
description: Tool calls for approvals.
steps:
  - id: E0
    tool_name: builtin__reshape
    input: { shape: { n: 1 } }
  - id: E1
    tool_name: user__nap
    input: { seconds: 5 }
  - id: E2
    tool_name: agent
    input:
      prompt: "Nap twice."
      tools: ["user__nap", "builtin__reshape"]
      output_schema: { type: object, required: [ok], properties: { ok: { type: boolean } } }
output: { e1: "{{E1}}", calls: "{{E2.tools_called.length}}" }
`

const gatedReplies = `
replies:
  - match: E2
    reply: { tool_calls: [ { name: user__nap, arguments: { seconds: 0 } }, { name: builtin__reshape, arguments: { shape: { m: 2 } } } ] }
  - match: E2
    reply: { tool_calls: [ { name: user__nap, arguments: { seconds: 0 } } ] }
  - match: E2
    reply: { json: { ok: true } }
`

// gatedProject writes the run project with the gated plan and its replies.
func gatedProject(t *testing.T) string {
	t.Helper()
	dir := runProject(t)
	os.WriteFile(filepath.Join(dir, ".stepwise", "plans", "gated.yaml"), []byte(gatedPlan), 0o644)
	os.WriteFile(filepath.Join(dir, "gated.yaml"), []byte(gatedReplies), 0o644)
	return dir
}

// sessionLines names each line --json printed: "stop PATH KIND (REASON)"
// for a stop ("... approval" for one held for approval), "value JSON" for
// a printed value, "error: ..." for a refusal, "end STATUS" for the end,
// which it also returns.
func sessionLines(t *testing.T, out string) ([]string, map[string]any) {
	t.Helper()
	var got []string
	var end map[string]any
	for _, l := range jsonLines(t, out) {
		switch {
		case l["finished"] == true:
			got, end = append(got, "end "+l["status"].(string)), l
		case l["reason"] != nil:
			stop := l["stop"].(map[string]any)
			line := "stop " + stop["path"].(string) + " " + stop["kind"].(string) + " (" + l["reason"].(string) + ")"
			if stop["approval"] == true {
				line += " approval"
			}
			got = append(got, line)
		case l["value"] != nil:
			b, _ := json.Marshal(l["value"])
			got = append(got, "value "+string(b))
		case l["error"] != nil:
			got = append(got, "error: "+l["error"].(string))
		}
	}
	return got, end
}

// TestDebugEdit edits a step's arguments at its stop through stepwise
// debug --json: arguments the tool's input schema refuses are refused with
// the schema's problem and the run stays held, an edit at a control step
// is refused, and a good edit is what the tool runs with.
func TestDebugEdit(t *testing.T) {
	gatedProject(t)
	stdin := strings.Join([]string{
		`edit {"seconds": "five"}`,
		`edit [1]`,
		`edit {"seconds": 0}`,
		`continue`,
		`edit {"seconds": 0}`,
		`continue`,
		`continue`,
	}, "\n") + "\n"
	out, errOut, code := debugCLI(t, stdin, "gated", "--continue", "--script", "gated.yaml", "--break", "E1 step", "--break", "E2 step", "--json")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	want := []string{
		"stop E1 step (breakpoint 1 (E1))",
		"error: the arguments do not fit user__nap's input schema: /seconds: got string, want integer",
		`error: a tool call's arguments are a JSON object, as in {"query": "x"}, not [1]`,
		// edit goes on as next does: to the step's result, at its depth.
		"stop E1 result (next)",
		"stop E2 step (breakpoint 2 (E2))",
		"error: a tool stop, or the step stop of a step that calls a tool, is where a call is edited, approved or denied",
		"end ok",
	}
	if got, _ := sessionLines(t, out); !slices.Equal(got, want) {
		t.Errorf("session lines\n got %q\nwant %q", got, want)
	}
	lines := jsonLines(t, out)
	first := lines[slices.IndexFunc(lines, func(l map[string]any) bool { return l["stop"] != nil })]["stop"].(map[string]any)
	if schema, _ := json.Marshal(first["input_schema"]); !strings.Contains(string(schema), `"seconds":{"type":"integer"}`) {
		t.Errorf("the stop at E1 shows the input schema %s", schema)
	}
	end := lines[len(lines)-1]
	if b, _ := json.Marshal(end["output"]); string(b) != `{"calls":3,"e1":{"slept":0}}` {
		t.Errorf("the output %s: E1 did not run with the edited arguments", b)
	}
}

// TestDebugApprove holds the calls of a tool that is not read-only through
// stepwise debug --approve --json, with no breakpoint set: the read-only
// calls run unheld, an approval stop says so, and deny, approve and edit
// answer it.
func TestDebugApprove(t *testing.T) {
	gatedProject(t)
	stdin := strings.Join([]string{
		`edit {"seconds": 0}`,
		`continue`,
		`deny`,
		`approve`,
	}, "\n") + "\n"
	out, errOut, code := debugCLI(t, stdin, "gated", "--continue", "--script", "gated.yaml", "--approve", "**/user__nap", "--json")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	want := []string{
		// A plain step is matched by PATH/TOOL too; E0's builtin is read-only.
		"stop E1 step (approval) approval",
		"stop E1 result (next)",
		"stop E2/agent.1/user__nap tool (approval) approval",
		"stop E2/agent.2/user__nap tool (approval) approval",
		"end ok",
	}
	if got, _ := sessionLines(t, out); !slices.Equal(got, want) {
		t.Errorf("session lines\n got %q\nwant %q", got, want)
	}
	// The record has the denied call as the model saw it, and the
	// approved one as it ran.
	calls := recordedCalls(t)
	if c := calls["E2/agent.1/user__nap"]; c["error"] != "denied by the user" || c["result"] != nil {
		t.Errorf("the denied call is recorded as %v", c)
	}
	if c := calls["E2/agent.2/user__nap"]; c["error"] != nil || c["result"] == nil {
		t.Errorf("the approved call is recorded as %v", c)
	}
	// A pattern that does not parse refuses the session before it runs.
	if _, errOut, code := debugCLI(t, "", "gated", "--approve", "E1//x"); code != exitUsage || !strings.Contains(errOut, "--approve E1//x: ") {
		t.Errorf("a bad --approve: exit %d\n%s", code, errOut)
	}
}

// recordedCalls reads the last run's tool calls from stepwise inspect
// --json, by path.
func recordedCalls(t *testing.T) map[string]map[string]any {
	t.Helper()
	out, errOut, code := runCLI(t, "runs", "--json")
	var listing struct{ Runs []struct{ ID string } }
	if json.Unmarshal([]byte(out), &listing); code != 0 || len(listing.Runs) == 0 {
		t.Fatalf("runs: exit %d: %s", code, errOut)
	}
	out, errOut, code = runCLI(t, "inspect", listing.Runs[0].ID, "--json")
	var detail any
	if err := json.Unmarshal([]byte(out), &detail); code != 0 || err != nil {
		t.Fatalf("inspect: exit %d: %v %s", code, err, errOut)
	}
	calls := map[string]map[string]any{}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if p, ok := x["path"].(string); ok && x["tool"] != nil && x["args"] != nil {
				calls[p] = x
			}
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(detail)
	return calls
}

// TestRunApproveNoTerminal: with stdin a pipe nobody can be asked, so run
// --approve refuses to start, says why and what to do instead, and runs
// nothing.
func TestRunApproveNoTerminal(t *testing.T) {
	gatedProject(t)
	out, errOut, code := runCLI(t, "run", "gated", "--script", "gated.yaml", "--approve", "**/user__nap")
	if code != exitUsage || out != "" || !strings.Contains(errOut, "--approve asks on the terminal") || !strings.Contains(errOut, "stepwise debug PLAN --approve PATTERN") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if listing, _, _ := runCLI(t, "runs", "--json"); strings.Contains(listing, `"plan": "gated"`) {
		t.Errorf("the refused run ran:\n%s", listing)
	}
	_, errOut, code = runCLI(t, "run", "gated", "--approve", "E1//x")
	if code != exitUsage || !strings.Contains(errOut, "--approve E1//x: ") {
		t.Errorf("a bad pattern: exit %d, stderr %q", code, errOut)
	}
}

// TestRunApproveOnTerminal runs the real binary on a terminal (tmux) with
// --approve: it warns of a pattern that can hold no call of the plan,
// asks before each call of user__nap, which is not read-only, and not
// before the read-only builtin's; an edit written after e on its line that
// does not fit the input schema is refused with the schema's problem and
// asked again; deny
// and approve answer the agent's calls.
func TestRunApproveOnTerminal(t *testing.T) {
	dir := gatedProject(t)
	env := childEnv()
	// E9 is no step of the plan: it is said, and the run goes on.
	argv := append(env, os.Args[0], "run", "gated", "--script", "gated.yaml", "--approve", "**/user__nap", "--approve", "E9", "--json")
	// The window stays open after the run, to be read.
	script := "cd " + strings.Join(quoteAll([]string{dir}), "") + " && " + strings.Join(quoteAll(argv), " ") + "; echo \"exit $?\"; sleep 600"
	s := startTmux(t, 200, 60, "sh", "-c", script)

	screen := s.waitFor(`? run user__nap at E1 with {"seconds":5}`)
	if !strings.Contains(screen, "warning: --approve E9: no tool call of the plan is at a path it matches, so it holds none; the nearest that would: E1\n") {
		t.Errorf("the pattern that holds no call is not warned of:\n%s", screen)
	}
	// The progress block stepped aside for the prompt, saying why.
	if !strings.Contains(screen, "⏸ E1 waits for approval of user__nap") || strings.Contains(screen, "▸ ") {
		t.Errorf("held for an approval, the screen does not say what the run waits for, or still shows the block:\n%s", screen)
	}
	// The arguments may follow e on its line; ones that do not fit are
	// asked for again.
	s.typed(`e{"seconds": "five"}`)
	s.keys("Enter")
	s.waitFor("the arguments do not fit user__nap's input schema: /seconds: got string, want integer")
	s.waitFor("arguments (JSON on one line")
	s.typed(`{"seconds": 0}`)
	s.keys("Enter")
	s.waitFor("? run user__nap at E2/agent.1/user__nap")
	s.typed("d")
	s.keys("Enter")
	s.waitFor("? run user__nap at E2/agent.2/user__nap")
	s.typed("a")
	s.keys("Enter")
	screen = s.waitFor("exit 0")
	if !strings.Contains(screen, `"calls": 3`) || !strings.Contains(screen, `"slept": 0`) {
		t.Errorf("the envelope does not show the edited E1 and the agent's three calls:\n%s", screen)
	}
	if strings.Contains(screen, "builtin__reshape at") {
		t.Errorf("a read-only builtin was asked about:\n%s", screen)
	}
	calls := recordedCalls(t)
	if c := calls["E2/agent.1/user__nap"]; c["error"] != "denied by the user" {
		t.Errorf("the denied call is recorded as %v", c)
	}
}

// TestDebugApproveMCP holds an MCP server's calls by their readOnlyHint,
// against the MCP project's reference server (see TestMCPEverything in
// engine/tools): get-sum says it is read-only and runs unheld,
// toggle-simulated-logging says it is not and is held; an edit at a call
// is checked against the input schema the server declares.
func TestDebugApproveMCP(t *testing.T) {
	exe := os.Getenv("STEPWISE_MCP_EVERYTHING")
	if exe == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("STEPWISE_MCP_EVERYTHING is not set; CI must install @modelcontextprotocol/server-everything and point it at mcp-server-everything")
		}
		t.Skip("STEPWISE_MCP_EVERYTHING is not set (the path of @modelcontextprotocol/server-everything's mcp-server-everything)")
	}
	dir := runProject(t)
	config, _ := os.ReadFile(filepath.Join(dir, ".stepwise", "config.toml"))
	config = append(config, []byte("\n[mcp.everything]\ncommand = "+strings.Join(quoteAll([]string{exe}), "")+"\nargs = [\"stdio\"]\n")...)
	os.WriteFile(filepath.Join(dir, ".stepwise", "config.toml"), config, 0o644)
	os.WriteFile(filepath.Join(dir, ".stepwise", "plans", "everything.yaml"), []byte(`
identifier: everything
name: Everything
description: A read-only call and one that is not.
requires_servers: [everything]
steps:
  - id: E0
    tool_name: everything__get-sum
    input: { a: 2, b: 3 }
  - id: E1
    tool_name: everything__toggle-simulated-logging
    input: {}
`), 0o644)
	stdin := strings.Join([]string{
		`edit {"a": "two", "b": 3}`,
		`edit {"a": 20, "b": 3}`,
		`continue`,
		`approve`,
	}, "\n") + "\n"
	out, errOut, code := debugCLI(t, stdin, "everything", "--continue", "--break", "E0 step", "--approve", "**/everything__*", "--json")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	got, _ := sessionLines(t, out)
	want := []string{
		"stop E0 step (breakpoint 1 (E0))",
		"error: the arguments do not fit everything__get-sum's input schema: /a: got string, want number",
		"stop E0 result (next)",
		"stop E1 step (approval) approval",
		"end ok",
	}
	if !slices.Equal(got, want) {
		t.Errorf("session lines\n got %q\nwant %q", got, want)
	}
	if c := recordedCalls(t)["E0"]; c == nil || !strings.Contains(engine.JSONText(c["result"]), "23") {
		t.Errorf("get-sum ran with %v, not the edited arguments", c)
	}
}

// TestToolsShowPlanReadOnly: a plan__ tool is read-only only when its plan
// says so, and tools show says which.
func TestToolsShowPlanReadOnly(t *testing.T) {
	dir := gatedProject(t)
	os.WriteFile(filepath.Join(dir, ".stepwise", "plans", "quiet.yaml"), []byte(`
identifier: quiet
name: Quiet
description: Reads only.
read_only: true
steps:
  - id: E0
    tool_name: builtin__reshape
    input: { shape: { n: 1 } }
`), 0o644)
	for name, want := range map[string]any{"plan__quiet": true, "plan__gated": nil} {
		out, errOut, code := runCLI(t, "tools", "show", "--json", name)
		var shown map[string]any
		if err := json.Unmarshal([]byte(out), &shown); code != 0 || err != nil {
			t.Fatalf("tools show %s: exit %d: %v %s", name, code, err, errOut)
		}
		if shown["readOnly"] != want {
			t.Errorf("tools show %s: readOnly %v, want %v", name, shown["readOnly"], want)
		}
	}
}

// TestAskDefaultTold: off a terminal nobody can answer an ask, and the
// run takes its default: stderr says so, but under --quiet.
func TestAskDefaultTold(t *testing.T) {
	writeProject(t, map[string]string{"plans/confirm.yaml": `identifier: confirm
name: Confirm
description: Asks before it goes on.
steps:
  - id: confirm
    tool_name: ask
    input:
      prompt: "Go on?"
      when_unanswered: default
      default: { go: true }
      output_schema: { type: object, required: [go], properties: { go: { type: boolean } } }
output: { go: "{{confirm.answer.go}}" }
`})
	out, errOut, code := runCLI(t, "run", "confirm")
	if code != 0 || !strings.Contains(out, `"go": true`) || !strings.Contains(errOut, "? confirm: no terminal to ask \"Go on?\" on; took the default {\"go\":true}\n") {
		t.Errorf("exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
	out, errOut, code = runCLI(t, "run", "confirm", "--quiet")
	if code != 0 || !strings.Contains(out, `"go": true`) || errOut != "" {
		t.Errorf("--quiet: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
