package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// agentRun is one agent scenario run through stepwise run: its envelope,
// and its events as decoded JSON lines.
type agentRun struct {
	code   int
	env    map[string]any
	events []map[string]any
	stderr string
}

// calls returns the llm_call events of the agent's rounds and repairs.
func (r agentRun) calls() []map[string]any {
	var out []map[string]any
	for _, e := range r.events {
		if e["kind"] == "llm_call" {
			out = append(out, e)
		}
	}
	return out
}

// runAgentPlan writes a plan of one agent step E1 (its input extended by
// extra) and a replies file, and runs it through the command line.
func runAgentPlan(t *testing.T, extra, replies string) agentRun {
	t.Helper()
	dir := runProject(t)
	plan := `
identifier: agentic
name: Agentic
description: One agent step.
steps:
  - id: E1
    tool_name: agent
    input:
      prompt: "Count the open issues."
      tools: ["builtin__reshape", "user__shout", "plan__report"]
      output_schema:
        type: object
        additionalProperties: false
        required: [count]
        properties:
          count: { type: integer }
` + extra + `
output: { agent: "{{E1}}" }
`
	os.WriteFile(filepath.Join(dir, ".stepwise", "plans", "agentic.yaml"), []byte(plan), 0o644)
	os.WriteFile(filepath.Join(dir, "script.yaml"), []byte(replies), 0o644)
	out, errOut, code := runCLI(t, "run", "agentic", "--script", "script.yaml", "--json", "--events", "jsonl")
	r := agentRun{code: code, stderr: errOut}
	json.Unmarshal([]byte(out), &r.env)
	lines := bufio.NewScanner(strings.NewReader(errOut))
	lines.Buffer(nil, 1<<20)
	for lines.Scan() {
		var e map[string]any
		if json.Unmarshal(lines.Bytes(), &e) == nil {
			r.events = append(r.events, e)
		}
	}
	return r
}

func (r agentRun) agent(t *testing.T) string {
	t.Helper()
	out, _ := r.env["output"].(map[string]any)
	b, _ := json.Marshal(out["agent"])
	return string(b)
}

// messages returns the messages of round n's request (1-based, repairs
// skipped).
func (r agentRun) messages(n int) []any {
	i := 0
	for _, c := range r.calls() {
		payload := c["payload"].(map[string]any)
		if payload["role"] == "repair" {
			continue
		}
		if i++; i == n {
			return payload["request"].(map[string]any)["messages"].([]any)
		}
	}
	return nil
}

// withoutCacheMarks is messages as the events carry them, with the cache
// marks of their blocks taken out.
func withoutCacheMarks(messages []any) []any {
	for _, m := range messages {
		blocks, _ := m.(map[string]any)["content"].([]any)
		for _, b := range blocks {
			delete(b.(map[string]any), "cache")
		}
	}
	return messages
}

// TestAgentThroughRun runs seeds/000's and seeds/002's behaviours through
// stepwise run with the script provider, checking the result and the
// recorded requests.
func TestAgentThroughRun(t *testing.T) {
	toolRound := "  - match: E1\n    reply: { tool_calls: [ { name: builtin__reshape, arguments: { shape: { n: 1 } } } ] }\n"
	answer := "  - match: E1\n    reply: { json: { count: 3 } }\n"
	wrong := "  - match: E1\n    reply: { json: { count: x } }\n  - match: E1\n    role: repair\n    reply: { json: { count: y } }\n"
	tests := []struct {
		name, extra, replies string
		code                 int
		agent                string // the result as JSON; "" when the run fails
		check                func(t *testing.T, r agentRun)
	}{
		{
			name: "the last round lets no tool be called and forces the schema", extra: "      max_iterations: 2\n",
			replies: "replies:\n" + toolRound + answer,
			agent:   `{"final":true,"iterations":2,"output":{"count":3},"tools_called":[{"round":1,"tool":"builtin__reshape"}]}`,
			check: func(t *testing.T, r agentRun) {
				last := r.calls()[1]["payload"].(map[string]any)["request"].(map[string]any)
				if last["tools"] == nil || last["tool_choice"] != "none" || last["format"] == nil {
					t.Errorf("last request %v", last)
				}
				// The cache breakpoint at the end of the history moves on
				// with it; the rest of round 1 starts round 2 byte for byte.
				first, _ := json.Marshal(withoutCacheMarks(r.messages(1)))
				second, _ := json.Marshal(withoutCacheMarks(r.messages(2)))
				if !strings.HasPrefix(string(second), strings.TrimSuffix(string(first), "]")) {
					t.Errorf("round 2 does not extend round 1:\n%s\n%s", first, second)
				}
			},
		},
		{
			name: "nothing usable on the last round is final false", extra: "      max_iterations: 1\n",
			replies: "replies:\n  - match: E1\n    reply: { text: \"no idea\" }\n  - match: E1\n    role: repair\n    reply: { text: \"still no idea\" }\n",
			agent:   `{"final":false,"iterations":1,"output":{},"tools_called":[]}`,
			check: func(t *testing.T, r agentRun) {
				id, _ := r.env["run_id"].(string)
				out, errOut, code := runCLI(t, "inspect", id)
				want := "agent_not_final: 1 agent step spent its rounds without a valid answer and returned final: false, output {} (E1)"
				if code != 0 || !strings.Contains(out, want) {
					t.Errorf("inspect exit %d lacks %q:\n%s%s", code, want, out, errOut)
				}
			},
		},
		{
			name: "a repair costs no round; a refused one costs a round", replies: "replies:\n" + wrong + answer,
			agent: `{"final":true,"iterations":2,"output":{"count":3},"tools_called":[]}`,
			check: func(t *testing.T, r agentRun) {
				var paths []string
				for _, c := range r.calls() {
					paths = append(paths, c["path"].(string))
				}
				if strings.Join(paths, " ") != "E1/agent.1 E1/agent.1/repair E1/agent.2" {
					t.Errorf("calls at %v", paths)
				}
			},
		},
		{
			name: "transient errors cost no round", replies: "replies:\n  - match: E1\n    error: { status: 429, message: slow down }\n" + answer,
			agent: `{"final":true,"iterations":1,"output":{"count":3},"tools_called":[]}`,
			// The retry is recorded with the call that answered, so that
			// where its time went is seen in the events and inspect.
			check: func(t *testing.T, r agentRun) {
				const why = "model script/scripted: 429 slow down"
				if calls := r.calls(); len(calls) != 1 || fmt.Sprint(calls[0]["payload"].(map[string]any)["retries"]) != "["+why+"]" {
					t.Errorf("llm_call events %v", calls)
				}
				id, _ := r.env["run_id"].(string)
				out, errOut, code := runCLI(t, "inspect", id)
				if want := "after 1 failed attempt: " + why; code != 0 || !strings.Contains(out, want) {
					t.Errorf("inspect exit %d lacks %q:\n%s%s", code, want, out, errOut)
				}
			},
		},
		{
			name: "a refused call is listed, and not counted in the usage", replies: "replies:\n  - match: E1\n    error: { status: 400, message: refused }\n",
			code: 1,
			check: func(t *testing.T, r agentRun) {
				id, _ := r.env["run_id"].(string)
				out, errOut, code := runCLI(t, "inspect", id)
				want := "model calls (1; 1 failed, which the usage does not count)"
				if code != 0 || !strings.Contains(out, want) {
					t.Errorf("inspect exit %d lacks %q:\n%s%s", code, want, out, errOut)
				}
			},
		},
		{
			name:    "a failing tool returns into the loop",
			replies: "replies:\n  - match: E1\n    reply: { tool_calls: [ { name: plan_and_execute, arguments: {} }, { name: plan__report, arguments: {} } ] }\n" + answer,
			agent:   `{"final":true,"iterations":2,"output":{"count":3},"tools_called":[{"round":1,"tool":"plan_and_execute"},{"round":1,"tool":"plan__report"}]}`,
			check: func(t *testing.T, r agentRun) {
				results := r.messages(2)[3].(map[string]any)["content"].([]any)
				refused := results[0].(map[string]any)["text"].(string)
				failed := results[1].(map[string]any)["text"].(string)
				if !strings.HasPrefix(refused, "Error: plan_and_execute is not available") || !strings.HasPrefix(failed, "Error: plan 'report' needs inputs") {
					t.Errorf("tool results %q, %q", refused, failed)
				}
			},
		},
		{
			name: "validation_exhaustion fail", extra: "      validation_exhaustion: { threshold: 2 }\n",
			replies: "replies:\n" + wrong + wrong, code: 1,
			check: func(t *testing.T, r agentRun) {
				if !strings.Contains(r.env["error"].(string), "VALIDATION_EXHAUSTED: Step 'E1' exhausted its validation-rejection budget (2/2)") {
					t.Errorf("error %v", r.env["error"])
				}
			},
		},
		{
			name: "validation_exhaustion default", extra: "      validation_exhaustion: { threshold: 1, mode: default, default_output: { count: 0 } }\n",
			replies: "replies:\n" + wrong,
			agent:   `{"final":true,"iterations":1,"output":{"count":0},"settled_by_default":true,"tools_called":[]}`,
		},
		{
			name: "max_tool_calls", extra: "      max_tool_calls: 1\n",
			replies: "replies:\n  - match: E1\n    reply: { tool_calls: [ { name: builtin__reshape, arguments: { shape: {} } }, { name: user__shout, arguments: {} } ] }\n" + answer,
			agent:   `{"final":true,"iterations":2,"output":{"count":3},"tools_called":[{"round":1,"tool":"builtin__reshape"},{"round":1,"tool":"user__shout"}]}`,
			check: func(t *testing.T, r agentRun) {
				results := r.messages(2)[3].(map[string]any)["content"].([]any)
				if got := results[1].(map[string]any)["text"]; got != "You have reached the maximum number of tool calls. Produce your final JSON answer now using only what you have already gathered. No further tool calls will be executed." {
					t.Errorf("second tool result %q", got)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runAgentPlan(t, tt.extra, tt.replies)
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d\n%s", r.code, tt.code, r.stderr)
			}
			if tt.agent != "" {
				if got := r.agent(t); got != tt.agent {
					t.Errorf("agent result %s\nwant %s", got, tt.agent)
				}
			}
			if tt.check != nil {
				tt.check(t, r)
			}
		})
	}
}
