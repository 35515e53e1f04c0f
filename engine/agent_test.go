package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/chat"
	"github.com/stepwise-dev/stepwise/engine/model"
	"github.com/stepwise-dev/stepwise/engine/path"
)

// agentPlan is a plan of one agent step E1 with the given extra input
// lines (indented for the step's input).
func agentPlan(extra string) string {
	return `
identifier: agentic
steps:
  - id: E1
    tool_name: agent
    input:
      prompt: "Count the open issues."
      tools: ["builtin__reshape", "user__*", "plan__*"]
      output_schema:
        type: object
        additionalProperties: false
        required: [count]
        properties:
          count: { type: integer }
` + extra + `
output:
  result: "{{E1}}"
`
}

// agentTools are the user tools agent tests call.
var agentTools = map[string]string{
	"tools/fails.yaml": `
name: fails
description: Always fails.
kind: exec
command: sh
args: ["-c", "echo 'disk on fire' >&2; exit 3"]
input_schema: { type: object, properties: {} }
`,
	"tools/slow.yaml": `
name: slow
description: Takes three seconds.
kind: exec
command: sleep
args: ["3"]
input_schema: { type: object, properties: {} }
`,
	"plans/sub.yaml": `
identifier: sub
steps:
  - id: S0
    tool_name: builtin__reshape
    input: { shape: { ok: true } }
output: { ok: "{{S0.ok}}" }
`,
}

// runAgent runs agentPlan(extra) with the given replies and returns the
// outcome and the agent's result.
func runAgent(t *testing.T, extra, replies string, hook engine.Hook) (outcome, map[string]any) {
	t.Helper()
	files := map[string]string{"replies.yaml": replies, "plans/p.yaml": agentPlan(extra)}
	for k, v := range agentTools {
		files[k] = v
	}
	o := newProject(t, files).run(t, "plans/p.yaml", nil, hook)
	if o.err != nil {
		t.Fatalf("run did not start: %v", o.err)
	}
	var result map[string]any
	if o.res.Status == engine.StatusOK {
		json.Unmarshal([]byte(asJSON(t, o.res.Output.(map[string]any)["result"])), &result)
	}
	return o, result
}

// toolResults are the texts of a tool message's results, in order.
func toolResults(m chat.Message) []string {
	var out []string
	for _, b := range m.Blocks {
		if b.Type == chat.BlockToolResult {
			out = append(out, b.Text)
		}
	}
	return out
}

// thinkingOf is the text of a message's thinking blocks.
func thinkingOf(m chat.Message) string {
	var b strings.Builder
	for _, t := range m.Thinking() {
		b.WriteString(t.Text)
	}
	return b.String()
}

// requests returns the requests of the agent's rounds (not repairs), in
// order.
func requests(o outcome) []chat.Request {
	var out []chat.Request
	for _, e := range o.events.of(engine.EventModelCall) {
		if call := e.Payload.(engine.ModelCalled); call.Role == model.RoleChat {
			out = append(out, call.Request)
		}
	}
	return out
}

func TestAgentAnswersAtOnce(t *testing.T) {
	o, res := runAgent(t, "", `
replies:
  - match: E1
    reply: { json: { count: 3 } }
`, nil)
	wantOK(t, o)
	if got := asJSONValue(res); got != `{"final":true,"iterations":1,"output":{"count":3},"tools_called":[]}` {
		t.Errorf("result %s", got)
	}
}

func asJSONValue(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestAgentToolRounds checks a round of parallel tool calls, their paths,
// reasoning replayed verbatim, and a request prefix that round 2 extends
// byte for byte.
func TestAgentToolRounds(t *testing.T) {
	o, res := runAgent(t, "", `
replies:
  - match: E1
    reply:
      reasoning: "Look twice."
      tool_calls:
        - { name: builtin__reshape, arguments: { shape: { n: 1 } } }
        - { name: builtin__reshape, arguments: { shape: { n: 2 } } }
  - match: E1
    reply: { json: { count: 3 } }
`, nil)
	wantOK(t, o)
	wantUnits(t, o.events.events, path.KindStep, path.KindRound, path.KindCall)
	if got := asJSONValue(res); got != `{"final":true,"iterations":2,"output":{"count":3},"tools_called":[{"round":1,"tool":"builtin__reshape"},{"round":1,"tool":"builtin__reshape"}]}` {
		t.Errorf("result %s", got)
	}
	if got := o.events.paths(engine.EventToolEnd); !slices.Equal(sorted(got), []string{"E1/agent.1/builtin__reshape", "E1/agent.1/builtin__reshape.2"}) {
		t.Errorf("tool calls at %v", got)
	}
	reqs := requests(o)
	if len(reqs) != 2 {
		t.Fatalf("%d rounds", len(reqs))
	}
	// The cache breakpoint at the end of the history moves on with it;
	// everything else of round 1 is the start of round 2, byte for byte.
	first, _ := json.Marshal(reqs[0].Messages)
	second, _ := json.Marshal(reqs[1].Messages)
	if !strings.HasPrefix(string(second), strings.TrimSuffix(string(first), "]")) {
		t.Errorf("round 2 does not extend round 1:\n%s\n%s", first, second)
	}
	for round, want := range [][]int{{0, 1}, {0, 3}} {
		if got := reqs[round].CacheAt; !slices.Equal(got, want) {
			t.Errorf("round %d has cache breakpoints at the ends of messages %v, want %v", round+1, got, want)
		}
	}
	assistant := reqs[1].Messages[2]
	if assistant.Role != "assistant" || thinkingOf(assistant) != "Look twice." || len(assistant.ToolCalls()) != 2 {
		t.Errorf("round 2 replays %+v", assistant)
	}
	tool := reqs[1].Messages[3]
	if results := toolResults(tool); tool.Role != "tool" || len(results) != 2 || results[0] != `{"n":1}` || tool.Blocks[0].ID != assistant.ToolCalls()[0].ID {
		t.Errorf("the tool results %+v", tool)
	}
	for _, m := range reqs[0].Messages {
		if strings.Contains(m.Text(), "8") || strings.Contains(strings.ToLower(m.Text()), "round") {
			t.Errorf("the model is told about its budget: %q", m.Text())
		}
	}
}

// TestAgentInjectedToolCall injects a tool call's result at its stop: the
// call is not made, the model gets the value, and the call's events say
// it was injected, with the value, so the record has what the model saw.
func TestAgentInjectedToolCall(t *testing.T) {
	hook := func(_ context.Context, s *engine.Stop) engine.Decision {
		if s.Kind == engine.StopTool && s.Path == "E1/agent.1/builtin__reshape" {
			return engine.Decision{Action: engine.Inject, Value: map[string]any{"n": 42}}
		}
		return engine.Decision{}
	}
	o, _ := runAgent(t, "", `
replies:
  - match: E1
    reply: { tool_calls: [ { name: builtin__reshape, arguments: { shape: { n: 1 } } } ] }
  - match: E1
    reply: { json: { count: 3 } }
`, hook)
	wantOK(t, o)
	ends := o.events.of(engine.EventToolEnd)
	if len(ends) != 1 || len(o.events.of(engine.EventToolStart)) != 1 {
		t.Fatalf("%d tool ends", len(ends))
	}
	if end := ends[0].Payload.(engine.ToolEnded); !end.Injected || asJSONValue(end.Result) != `{"n":42}` {
		t.Errorf("the injected call ended %+v", end)
	}
	if got := toolResults(requests(o)[1].Messages[3]); !slices.Equal(got, []string{`{"n":42}`}) {
		t.Errorf("the model got %q", got)
	}
}

// TestAgentEditedAndDeniedToolCalls edits one call's arguments and denies
// another at their stops: the edited call runs with the new arguments, the
// denied one is not made and the model reads that a person denied it.
func TestAgentEditedAndDeniedToolCalls(t *testing.T) {
	hook := func(_ context.Context, s *engine.Stop) engine.Decision {
		switch {
		case s.Kind == engine.StopTool && s.Path == "E1/agent.1/builtin__reshape":
			return engine.Decision{Action: engine.Edit, Value: map[string]any{"shape": map[string]any{"n": 7}}}
		case s.Kind == engine.StopTool && s.Path == "E1/agent.1/builtin__reshape.2":
			return engine.Decision{Action: engine.Deny}
		}
		return engine.Decision{}
	}
	o, _ := runAgent(t, "", `
replies:
  - match: E1
    reply: { tool_calls: [ { name: builtin__reshape, arguments: { shape: { n: 1 } } }, { name: builtin__reshape, arguments: { shape: { n: 2 } } } ] }
  - match: E1
    reply: { json: { count: 3 } }
`, hook)
	wantOK(t, o)
	ends := map[string]engine.ToolEnded{}
	for _, e := range o.events.of(engine.EventToolEnd) {
		ends[e.Path] = e.Payload.(engine.ToolEnded)
	}
	if end := ends["E1/agent.1/builtin__reshape"]; end.IsError || asJSONValue(end.Result) != `{"n":7}` {
		t.Errorf("the edited call ended %+v", end)
	}
	if end := ends["E1/agent.1/builtin__reshape.2"]; !end.IsError || end.Error != "denied by the user" || end.Result != nil {
		t.Errorf("the denied call ended %+v", end)
	}
	for _, e := range o.events.of(engine.EventToolStart) {
		if e.Path == "E1/agent.1/builtin__reshape" && asJSONValue(e.Payload.(engine.ToolStarted).Args) != `{"shape":{"n":7}}` {
			t.Errorf("the edited call started with %s", asJSONValue(e.Payload.(engine.ToolStarted).Args))
		}
	}
	if got := toolResults(requests(o)[1].Messages[3]); !slices.Equal(got, []string{`{"n":7}`, "Error: denied by the user"}) {
		t.Errorf("the model got %q", got)
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// TestAgentLastRound checks the answer round: no tools, the schema forced,
// and a plain note that it is the last turn.
func TestAgentLastRound(t *testing.T) {
	callTool := "  - match: E1\n    reply: { tool_calls: [ { name: builtin__reshape, arguments: { shape: {} } } ] }\n"
	t.Run("the forced round answers", func(t *testing.T) {
		o, res := runAgent(t, "      max_iterations: 3\n", "replies:\n"+callTool+callTool+"  - match: E1\n    reply: { json: { count: 1 } }\n", nil)
		wantOK(t, o)
		if res["final"] != true || res["iterations"] != 3.0 {
			t.Errorf("result %v", res)
		}
		reqs := requests(o)
		last := reqs[2]
		if last.MayCallTools() || !slices.EqualFunc(last.Tools, reqs[0].Tools, func(a, b chat.ToolDef) bool { return a.Name == b.Name }) || last.Format == nil || last.Format.Schema == nil {
			t.Errorf("the last round has tools %v (choice %q), format %+v; want the first round's tools with choice none", last.Tools, last.ToolChoice, last.Format)
		}
		if note := last.Messages[len(last.Messages)-1]; note.Role != "user" || !strings.Contains(note.Text(), "last turn") || last.CacheBreakpoint(len(last.Messages)-1) {
			t.Errorf("the last message is %+v", note)
		}
		var names []string
		for _, tool := range reqs[0].Tools {
			names = append(names, tool.Name)
		}
		// Its own plan is not offered: calling it would be a cycle.
		if want := []string{"builtin__reshape", "plan__sub", "user__fails", "user__slow"}; !slices.Equal(names, want) {
			t.Errorf("round 1 tools %v, want %v", names, want)
		}
	})
	t.Run("nothing usable: final false", func(t *testing.T) {
		o, res := runAgent(t, "      max_iterations: 2\n", "replies:\n"+callTool+"  - match: E1\n    reply: { text: \"\" }\n", nil)
		wantOK(t, o)
		if got := asJSONValue(res); got != `{"final":false,"iterations":2,"output":{},"tools_called":[{"round":1,"tool":"builtin__reshape"}]}` {
			t.Errorf("result %s", got)
		}
	})
	t.Run("max_iterations 1 answers from the prompt", func(t *testing.T) {
		o, _ := runAgent(t, "      max_iterations: 1\n", "replies:\n  - match: E1\n    reply: { json: { count: 0 } }\n", nil)
		wantOK(t, o)
		if reqs := requests(o); len(reqs[0].Tools) != 0 {
			t.Errorf("a one-round agent was offered tools")
		}
	})
}

// TestAgentErrors covers seeds/000's "Errors": repair without a round, a
// refused repair costing one, transient errors costing none, tool failures
// returning into the loop, plan_and_execute refused.
func TestAgentErrors(t *testing.T) {
	t.Run("a repair costs no round", func(t *testing.T) {
		o, res := runAgent(t, "", `
replies:
  - match: E1
    reply: { json: { count: "three" } }
  - match: E1
    role: repair
    reply: { json: { count: 3 } }
`, nil)
		wantOK(t, o)
		if res["iterations"] != 1.0 || res["final"] != true {
			t.Errorf("result %v", res)
		}
		wantUnits(t, o.events.events, path.KindRound, path.KindRepair)
		if got := o.events.paths(engine.EventModelCall); !slices.Equal(got, []string{"E1/agent.1", "E1/agent.1/repair"}) {
			t.Errorf("calls at %v", got)
		}
		if line := o.res.Usage.ByStep[0]; line.Path != "E1" || line.Calls != 2 {
			t.Errorf("usage %+v", o.res.Usage.ByStep)
		}
	})
	t.Run("a refused repair goes back to the model and costs a round", func(t *testing.T) {
		o, res := runAgent(t, "", `
replies:
  - match: E1
    reply: { json: { count: "three" } }
  - match: E1
    role: repair
    reply: { text: "not json" }
  - match: E1
    reply: { json: { count: 3 } }
`, nil)
		wantOK(t, o)
		if res["iterations"] != 2.0 {
			t.Errorf("result %v", res)
		}
		refusal := requests(o)[1].Messages[3]
		if refusal.Role != "user" || !strings.Contains(refusal.Text(), "does not match") || !strings.Contains(refusal.Text(), "(rejections: 1, threshold: 6)") {
			t.Errorf("refusal %+v", refusal)
		}
	})
	t.Run("transient errors cost no round", func(t *testing.T) {
		o, res := runAgent(t, "", `
replies:
  - match: E1
    error: { status: 429, message: slow down }
  - match: E1
    error: { status: 503, message: overloaded }
  - match: E1
    reply: { json: { count: 1 } }
`, nil)
		wantOK(t, o)
		if res["iterations"] != 1.0 {
			t.Errorf("result %v", res)
		}
	})
	t.Run("tool failures return into the loop", func(t *testing.T) {
		o, res := runAgent(t, "", `
replies:
  - match: E1
    reply: { tool_calls: [ { name: user__fails, arguments: {} }, { name: plan_and_execute, arguments: { query: x } }, { name: nope, arguments: {} } ] }
  - match: E1
    reply: { json: { count: 0 } }
`, nil)
		wantOK(t, o)
		if res["final"] != true {
			t.Errorf("result %v", res)
		}
		results := requests(o)[1].Messages[3].Blocks
		want := []string{"Error: 'sh' exited with status 3: disk on fire", "Error: plan_and_execute is not available inside an agent step", "Error: there is no tool 'nope' here"}
		if len(results) != len(want) {
			t.Fatalf("%d tool results", len(results))
		}
		for i, w := range want {
			if got := results[i]; !strings.HasPrefix(got.Text, w) || !got.IsError {
				t.Errorf("tool result %d: %+v, want an error starting %q", i, got, w)
			}
		}
	})
	t.Run("a refusal costs a round and is not repaired; a truncated answer is", func(t *testing.T) {
		o, res := runAgent(t, "", `
replies:
  - match: E1
    reply: { text: "I cannot help with that.", finish_reason: refusal }
  - match: E1
    reply: { text: "{\"count\": 1", finish_reason: length }
  - match: E1
    role: repair
    reply: { json: { count: 1 } }
`, nil)
		wantOK(t, o)
		if res["iterations"] != 2.0 || res["final"] != true {
			t.Errorf("result %v", res)
		}
		if got := o.events.paths(engine.EventModelCall); !slices.Equal(got, []string{"E1/agent.1", "E1/agent.2", "E1/agent.2/repair"}) {
			t.Errorf("calls at %v", got)
		}
	})
	t.Run("an empty reply costs a round and leaves no empty message", func(t *testing.T) {
		o, res := runAgent(t, "", `
replies:
  - match: E1
    reply: { text: "" }
  - match: E1
    reply: { reasoning: "Nothing comes to mind." }
  - match: E1
    reply: { json: { count: 2 } }
`, nil)
		wantOK(t, o)
		if res["iterations"] != 3.0 || res["final"] != true {
			t.Errorf("result %v", res)
		}
		var roles []string
		for _, m := range requests(o)[2].Messages {
			roles = append(roles, m.Role)
			if len(m.Blocks) == 0 {
				t.Errorf("a %s message without content was sent", m.Role)
			}
		}
		// The first empty reply said nothing; the second showed thinking,
		// which goes back.
		if got := strings.Join(roles, " "); got != "system user user assistant user" {
			t.Errorf("round 3's conversation is %s", got)
		}
	})
	t.Run("a pattern that matches nothing", func(t *testing.T) {
		files := map[string]string{"plans/p.yaml": strings.Replace(agentPlan(""), `"user__*"`, `"user__nothing*"`, 1)}
		o := newProject(t, files).run(t, "plans/p.yaml", nil, nil)
		if o.err == nil || !strings.Contains(o.err.Error(), "user__nothing*") {
			t.Errorf("err %v: a pattern that matches nothing must refuse the run before it starts", o.err)
		}
	})
}

// TestAgentControls covers the settings of seeds/002.
func TestAgentControls(t *testing.T) {
	wrong := "  - match: E1\n    reply: { json: { count: wrong } }\n  - match: E1\n    role: repair\n    reply: { json: { count: still-wrong } }\n"
	t.Run("validation_exhaustion fail", func(t *testing.T) {
		o, _ := runAgent(t, "      validation_exhaustion: { threshold: 2 }\n", "replies:\n"+wrong+wrong, nil)
		if o.res.Status != engine.StatusFailed || !strings.Contains(o.res.Err.Error(), "VALIDATION_EXHAUSTED: Step 'E1' exhausted its validation-rejection budget (2/2)") {
			t.Fatalf("status %s, err %v", o.res.Status, o.res.Err)
		}
	})
	t.Run("validation_exhaustion default", func(t *testing.T) {
		o, res := runAgent(t, "      validation_exhaustion: { threshold: 2, mode: default, default_output: { count: -1 } }\n", "replies:\n"+wrong+wrong, nil)
		wantOK(t, o)
		if got := asJSONValue(res); got != `{"final":true,"iterations":2,"output":{"count":-1},"settled_by_default":true,"tools_called":[]}` {
			t.Errorf("result %s", got)
		}
		warnings := o.events.of(engine.EventWarning)
		if len(warnings) != 1 || warnings[0].Payload.(engine.Warning).Message != "Step 'E1' settled with its declared default_output after 2 schema rejection(s) (validation_exhaustion.mode: 'default')" {
			t.Errorf("warnings %v", warnings)
		}
	})
	t.Run("max_tool_calls", func(t *testing.T) {
		o, _ := runAgent(t, "      max_tool_calls: 1\n", `
replies:
  - match: E1
    reply: { tool_calls: [ { name: builtin__reshape, arguments: { shape: { a: 1 } } }, { name: builtin__reshape, arguments: { shape: { b: 2 } } } ] }
  - match: E1
    reply: { json: { count: 1 } }
`, nil)
		wantOK(t, o)
		got := toolResults(requests(o)[1].Messages[3])
		if len(got) != 2 || got[0] != `{"a":1}` || got[1] != "You have reached the maximum number of tool calls. Produce your final JSON answer now using only what you have already gathered. No further tool calls will be executed." {
			t.Errorf("tool results %q", got)
		}
	})
	t.Run("max_fan_out", func(t *testing.T) {
		o, _ := runAgent(t, "      max_fan_out: 1\n", `
replies:
  - match: E1
    reply: { tool_calls: [ { name: plan__sub, arguments: {} }, { name: plan__sub, arguments: {} }, { name: builtin__reshape, arguments: { shape: {} } } ] }
  - match: E1
    reply: { json: { count: 1 } }
`, nil)
		wantOK(t, o)
		got := toolResults(requests(o)[1].Messages[3])
		if len(got) != 3 || got[0] != `{"ok":true}` || !strings.HasPrefix(got[1], "You have reached the maximum") || got[2] != `{}` {
			t.Errorf("tool results %q", got)
		}
		if !slices.Contains(o.events.paths(engine.EventStepStart), "E1/agent.1/plan__sub/sub/S0") {
			t.Errorf("the plan's steps are not under the call's path: %v", o.events.paths(engine.EventStepStart))
		}
	})
	t.Run("tool_timeout", func(t *testing.T) {
		o, _ := runAgent(t, "      tool_timeout: 1\n", `
replies:
  - match: E1
    reply: { tool_calls: [ { name: user__slow, arguments: {} } ] }
  - match: E1
    reply: { json: { count: 1 } }
`, nil)
		wantOK(t, o)
		if got := toolResults(requests(o)[1].Messages[3]); !slices.Equal(got, []string{"Error: tool call timed out after 1000ms"}) {
			t.Errorf("tool result %q", got)
		}
	})
	t.Run("llm_timeout_seconds", func(t *testing.T) {
		slow := "  - match: E1\n    reply: { text: late, delay_ms: 3000 }\n"
		o, _ := runAgent(t, "      llm_timeout_seconds: 1\n", "replies:\n"+slow+slow+slow, nil)
		if o.res.Status != engine.StatusFailed || !strings.Contains(o.res.Err.Error(), "round 1: model script/scripted: timed out after 1s (the step's llm_timeout_seconds) (gave up after 3 attempts)") {
			t.Fatalf("status %s, err %v", o.res.Status, o.res.Err)
		}
	})
	t.Run("llm_timeout_seconds from [settings]", func(t *testing.T) {
		slow := "  - match: E1\n    reply: { text: late, delay_ms: 3000 }\n"
		files := map[string]string{"replies.yaml": "replies:\n" + slow + slow + slow, "plans/p.yaml": agentPlan(""),
			"config.toml": "[settings]\nllm_timeout_seconds = 1\n" + testConfig}
		for k, v := range agentTools {
			files[k] = v
		}
		o := newProject(t, files).run(t, "plans/p.yaml", nil, nil)
		if o.res == nil || o.res.Status != engine.StatusFailed || !strings.Contains(o.res.Err.Error(), "round 1: model script/scripted: timed out after 1s ([settings] llm_timeout_seconds) (gave up after 3 attempts)") {
			t.Fatalf("outcome %+v", o)
		}
	})
}

// TestAgentInABody checks that item and index reach the prompt of an
// agent in a map body, and that each item's rounds have their own paths.
func TestAgentInABody(t *testing.T) {
	p := newProject(t, map[string]string{
		"replies.yaml": `
replies:
  - match: "E1/do.*"
    reply: { json: { count: 1 } }
  - match: "E1/do.*"
    reply: { json: { count: 2 } }
`,
		"plans/p.yaml": `
identifier: mapped
steps:
  - id: E1
    tool_name: map
    input:
      over: [alpha, beta]
      do:
        tool_name: agent
        input:
          prompt: "Item {{index}}: {{item}}"
          tools: ["builtin__reshape"]
          output_schema: { type: object, required: [count], properties: { count: { type: integer } } }
output: { all: "{{E1.results}}" }
`,
	})
	o := p.run(t, "plans/p.yaml", nil, nil)
	wantOK(t, o)
	var prompts []string
	for _, e := range o.events.of(engine.EventModelCall) {
		call := e.Payload.(engine.ModelCalled)
		prompts = append(prompts, e.Path+" "+call.Request.Messages[1].Text())
	}
	if !slices.Equal(prompts, []string{"E1/do.0/agent.1 Item 0: alpha", "E1/do.1/agent.1 Item 1: beta"}) {
		t.Errorf("prompts %v", prompts)
	}
}

// TestAgentStrictRecord checks the record of strict structured output for
// every attempt: a round that carries tools goes without, the answer round
// is sent strict.
func TestAgentStrictRecord(t *testing.T) {
	o, res := runAgent(t, "      structured_output: strict\n      max_iterations: 2\n", `
replies:
  - match: E1
    reply: { tool_calls: [ { name: builtin__reshape, arguments: { shape: {} } } ] }
  - match: E1
    reply: { json: { count: 2 } }
`, nil)
	wantOK(t, o)
	if res["final"] != true {
		t.Fatalf("result %v", res)
	}
	var records []string
	for _, e := range o.events.of(engine.EventModelCall) {
		records = append(records, asJSONValue(e.Payload.(engine.ModelCalled).StructuredOutput))
	}
	want := []string{
		`{"requested":true,"sent":false,"provider":"script","downgrade_reason":"unsupported_context_tools"}`,
		`{"requested":true,"sent":true,"provider":"script"}`,
	}
	if !slices.Equal(records, want) {
		t.Errorf("records\n%v\nwant\n%v", records, want)
	}
}

func TestAgentBadArguments(t *testing.T) {
	o, _ := runAgent(t, "", `
replies:
  - match: E1
    reply: { tool_calls: [ { name: builtin__reshape, arguments: {} } ] }
  - match: E1
    reply: { json: { count: 1 } }
`, func(_ context.Context, s *engine.Stop) engine.Decision {
		// The reply as a provider would give it: arguments cut short.
		if s.Kind == engine.StopReply && s.Path == "E1/agent.1" {
			reply := s.Output.(chat.Reply)
			reply.ToolCalls[0].Arguments = json.RawMessage(`{"shape": {"n`)
			return engine.Decision{Action: engine.Replace, Value: reply}
		}
		return engine.Decision{}
	})
	wantOK(t, o)
	if got := toolResults(requests(o)[1].Messages[3]); !slices.Equal(got, []string{"Error: the arguments are not valid JSON; send one JSON object"}) {
		t.Errorf("tool result %q", got)
	}
	ends := o.events.of(engine.EventToolEnd)
	if len(ends) != 1 || ends[0].Path != "E1/agent.1/builtin__reshape" || !ends[0].Payload.(engine.ToolEnded).IsError {
		t.Errorf("tool events %+v", ends)
	}
}

func TestAgentToolsClosedWhenSpent(t *testing.T) {
	o, _ := runAgent(t, "      max_tool_calls: 1\n", `
replies:
  - match: E1
    reply: { tool_calls: [ { name: builtin__reshape, arguments: { shape: {} } } ] }
  - match: E1
    reply: { json: { count: 1 } }
`, nil)
	wantOK(t, o)
	if reqs := requests(o); !reqs[0].MayCallTools() || reqs[1].MayCallTools() || len(reqs[1].Tools) != len(reqs[0].Tools) {
		t.Errorf("tools: round 1 %d (choice %q), round 2 %d (choice %q); want the same tools, and choice none once spent",
			len(reqs[0].Tools), reqs[0].ToolChoice, len(reqs[1].Tools), reqs[1].ToolChoice)
	}
}

// TestAgentToolResultCut cuts a tool result past [limits] model_input_bytes
// in what the model reads, saying so, and keeps it whole in the record.
func TestAgentToolResultCut(t *testing.T) {
	files := map[string]string{
		"config.toml":  testConfig + "\n[limits]\nmodel_input_bytes = 40\n",
		"plans/p.yaml": agentPlan(""),
		"replies.yaml": `
replies:
  - match: E1
    reply: { tool_calls: [ { name: builtin__reshape, arguments: { shape: { text: "ééééééééééééééééééééééééééééééééééééééééééééééééé" } } } ] }
  - match: E1
    reply: { json: { count: 1 } }
`,
	}
	for k, v := range agentTools {
		files[k] = v
	}
	o := newProject(t, files).run(t, "plans/p.yaml", nil, nil)
	wantOK(t, o)
	got := toolResults(requests(o)[1].Messages[3])
	if len(got) != 1 || !strings.HasSuffix(got[0], "\n[truncated: showing 39 of 109 bytes]") || !utf8.ValidString(got[0]) {
		t.Errorf("the model read %q", got)
	}
	warnings := o.events.of(engine.EventWarning)
	if len(warnings) != 1 || warnings[0].Path != "E1" || warnings[0].Payload.(engine.Warning).Message != "round 1: builtin__reshape's result was cut to 39 of its 109 bytes for the model ([limits] model_input_bytes); the record keeps it whole" {
		t.Errorf("warnings %+v", warnings)
	}
	end := o.events.of(engine.EventToolEnd)[0].Payload.(engine.ToolEnded)
	if text, _ := end.Result.(map[string]any)["text"].(string); len(text) != 98 {
		t.Errorf("the record kept %d bytes of the result, want all 98", len(text))
	}
}

// TestStoppedInAModelCall stops a run from outside, with a cause, while
// its agent waits for a model's reply: the model call, the agent step and
// the run say why it was stopped, where the call itself met only a
// cancelled context.
func TestStoppedInAModelCall(t *testing.T) {
	files := map[string]string{"replies.yaml": "replies:\n  - match: E1\n    reply: { text: late, delay_ms: 5000 }\n", "plans/p.yaml": agentPlan("")}
	for k, v := range agentTools {
		files[k] = v
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	stopped := errors.New("terminated (SIGTERM)")
	time.AfterFunc(200*time.Millisecond, func() { cancel(stopped) })
	o := newProject(t, files).runContext(t, ctx, "plans/p.yaml", nil, nil)
	if o.err != nil || o.res.Status != engine.StatusAborted {
		t.Fatalf("status %v, %v", o.res, o.err)
	}
	calls := o.events.of(engine.EventModelCall)
	ends := o.events.of(engine.EventStepEnd)
	if len(calls) != 1 || len(ends) != 1 {
		t.Fatalf("%d model calls and %d step ends, want one of each", len(calls), len(ends))
	}
	call, end := calls[0].Payload.(engine.ModelCalled), ends[0].Payload.(engine.StepEnded)
	if call.Error != "stopped: terminated (SIGTERM)" || !call.Aborted {
		t.Errorf("the model call's error is %q", call.Error)
	}
	if end.Status != engine.StepAborted || end.Error != "round 1: stopped: terminated (SIGTERM)" {
		t.Errorf("the agent step ended %s: %q", end.Status, end.Error)
	}
	if !strings.HasSuffix(o.res.Err.Error(), ": terminated (SIGTERM)") {
		t.Errorf("the run's error is %v, want it to say why it was stopped", o.res.Err)
	}
}
