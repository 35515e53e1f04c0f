package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/stepwise-dev/stepwise/engine"
)

// asJSON is a value as compact JSON with sorted keys, so that results
// compare whatever Go types their numbers have.
func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var back any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(back)
	return string(b)
}

// stepResult returns the result a step ended with, from its step_end event.
func stepResult(t *testing.T, o outcome, path string) string {
	t.Helper()
	for _, e := range o.events.of(engine.EventStepEnd) {
		if e.Path == path {
			return asJSON(t, e.Payload.(engine.StepEnded).Result)
		}
	}
	t.Fatalf("no step_end for %s; ended: %v", path, o.events.paths(engine.EventStepEnd))
	return ""
}

func wantOK(t *testing.T, o outcome) {
	t.Helper()
	if o.err != nil {
		t.Fatalf("run did not start: %v", o.err)
	}
	if o.res.Status != engine.StatusOK {
		t.Fatalf("status %s, err %v", o.res.Status, o.res.Err)
	}
}

func wantFailure(t *testing.T, o outcome, message string) {
	t.Helper()
	if o.err != nil {
		t.Fatalf("run did not start: %v", o.err)
	}
	if o.res.Status != engine.StatusFailed || o.res.Err == nil {
		t.Fatalf("status %s, err %v; want a failure", o.res.Status, o.res.Err)
	}
	if got := o.res.Err.Error(); got != message {
		t.Fatalf("error:\n got %s\nwant %s", got, message)
	}
}

const listPlan = `
identifier: lists
input_schema:
  type: object
  properties:
    items: { type: array, default: [{n: 1, tag: a}, {n: 5, tag: b}, {n: 3, tag: a}] }
steps:
  - id: E0
    tool_name: builtin__reshape
    input: { shape: { issues: "{{input.items}}", none: [] } }
`

func TestExit(t *testing.T) {
	tests := []struct {
		name       string
		step       string
		status     engine.RunStatus
		exit       string // the Exit as JSON, "" when none fires
		passResult string
	}{
		{
			name:   "when fires success with output",
			step:   `{ when: { value: "{{E0.issues.length}}", op: eq, to: 3 }, status: success, message: "three: {{E0.issues.0.tag}}", output: { count: "{{E0.issues.length}}" } }`,
			status: engine.StatusExited,
			exit:   `{"message":"three: a","status":"success","step":"E1"}`,
		},
		{
			name:       "when does not fire",
			step:       `{ when: { value: "{{E0.issues}}", op: empty }, status: error, message: never }`,
			status:     engine.StatusOK,
			passResult: `{"passed":true,"verdict":false}`,
		},
		{
			name:   "error exit",
			step:   `{ when: { value: "{{E0.issues.length}}", op: gt, to: 2 }, status: error, message: "too many" }`,
			status: engine.StatusFailed,
			exit:   `{"message":"too many","status":"error","step":"E1"}`,
		},
		{
			name:   "unconditional",
			step:   `{ status: success, message: done }`,
			status: engine.StatusExited,
			exit:   `{"message":"done","status":"success","step":"E1"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProject(t, map[string]string{"plans/p.yaml": listPlan + `
  - id: E1
    tool_name: exit
    input: ` + tt.step + `
  - id: E2
    tool_name: builtin__reshape
    input: { shape: { after: true } }
`})
			o := p.run(t, "plans/p.yaml", nil, nil)
			if o.err != nil {
				t.Fatal(o.err)
			}
			if o.res.Status != tt.status {
				t.Fatalf("status %s (%v), want %s", o.res.Status, o.res.Err, tt.status)
			}
			if tt.exit == "" {
				if o.res.Exit != nil {
					t.Fatalf("exit fired: %+v", o.res.Exit)
				}
				if got := stepResult(t, o, "E1"); got != tt.passResult {
					t.Errorf("E1 result %s, want %s", got, tt.passResult)
				}
				if o.res.StepsExecuted != 3 {
					t.Errorf("steps_executed %d, want 3", o.res.StepsExecuted)
				}
				return
			}
			if got := asJSON(t, o.res.Exit); got != tt.exit {
				t.Errorf("exit %s, want %s", got, tt.exit)
			}
			if slices.Contains(o.events.paths(engine.EventStepStart), "E2") {
				t.Error("E2 ran after the exit fired")
			}
		})
	}
	t.Run("output of a fired exit", func(t *testing.T) {
		p := newProject(t, map[string]string{"plans/p.yaml": listPlan + `
  - id: E1
    tool_name: exit
    input: { status: success, message: m, output: { count: "{{E0.issues.length}}", first: "{{E0.issues.0}}" } }
`})
		o := p.run(t, "plans/p.yaml", nil, nil)
		if got := asJSON(t, o.res.Output); got != `{"count":3,"first":{"n":1,"tag":"a"}}` {
			t.Errorf("output %s", got)
		}
	})
}

func TestInferGates(t *testing.T) {
	p := newProject(t, map[string]string{
		"replies.yaml": `
replies:
  - match: E1
    role: judge
    reply: { json: { verdict: false, reason: "only two are urgent" } }
  - match: E2
    role: judge
    reply: { json: { verdict: true, reason: "it says blocked" } }
  - match: "E3/do.*"
    role: judge
    reply: { json: { verdict: true, reason: "yes" } }
  - match: "E3/do.*"
    role: judge
    reply: { json: { verdict: false, reason: "no" } }
  - match: "E3/do.*"
    role: judge
    reply: { json: { verdict: true, reason: "yes" } }
  - match: E4
    role: judge
    reply: { json: { verdict: true, reason: "it is blocked" } }
`,
		"plans/p.yaml": listPlan + `
  - id: E1
    tool_name: exit
    input: { infer: "Are more than two urgent? {{E0.issues}}", status: error, message: "urgent" }
  - id: E2
    tool_name: decide
    input:
      infer: "Blocked?"
      then: { tool_name: builtin__reshape, input: { shape: { went: then } } }
  - id: E3
    tool_name: filter
    input: { over: "{{E0.issues}}", infer: "Keep {{item.tag}}?" }
  - id: E4
    tool_name: exit
    input: { infer: "Blocked?", status: error, message: "Project appears blocked." }
`})
	o := p.run(t, "plans/p.yaml", nil, nil)
	if o.res.Status != engine.StatusFailed || o.res.Exit == nil {
		t.Fatalf("status %s, exit %v, err %v", o.res.Status, o.res.Exit, o.res.Err)
	}
	if got := asJSON(t, o.res.Exit); got != `{"message":"Project appears blocked.","reason":"it is blocked","status":"error","step":"E4"}` {
		t.Errorf("exit %s", got)
	}
	if got := stepResult(t, o, "E1"); got != `{"passed":true,"reason":"only two are urgent","verdict":false}` {
		t.Errorf("E1 %s", got)
	}
	if got := stepResult(t, o, "E2"); got != `{"branch":"then","reason":"it says blocked","result":{"went":"then"},"verdict":true}` {
		t.Errorf("E2 %s", got)
	}
	if got := stepResult(t, o, "E3"); got != `{"count":2,"dropped":[{"n":5,"tag":"b"}],"dropped_count":1,"items":[{"n":1,"tag":"a"},{"n":3,"tag":"a"}]}` {
		t.Errorf("E3 %s", got)
	}
	calls := o.events.paths(engine.EventModelCall)
	want := []string{"E1/judge", "E2/judge", "E3/do.0/judge", "E3/do.1/judge", "E3/do.2/judge", "E4/judge"}
	if !slices.Equal(calls, want) {
		t.Errorf("model calls at %v, want %v", calls, want)
	}
	if o.res.Usage.Calls != 6 {
		t.Errorf("usage calls %d", o.res.Usage.Calls)
	}
}

func TestDecide(t *testing.T) {
	const steps = `
  - id: E1
    tool_name: decide
    input:
      if: { value: "{{E0.%s}}", op: not_empty }
      then:
        tool_name: builtin__reshape
        input: { shape: { first: "{{E0.%s.0.tag}}" } }
      else:
        - id: E10
          tool_name: builtin__reshape
          input: { shape: { note: "nothing in %s" } }
        - id: E11
          tool_name: builtin__reshape
          input: { shape: { seen: "{{E10.note}}" } }
  - id: E2
    tool_name: builtin__reshape
    input: { shape: { branch: "{{E1.branch}}", result: "{{E1.result}}" } }
`
	t.Run("then, the else never rendered", func(t *testing.T) {
		p := newProject(t, map[string]string{"plans/p.yaml": listPlan + strings.ReplaceAll(steps, "%s", "issues")})
		o := p.run(t, "plans/p.yaml", nil, nil)
		wantOK(t, o)
		if got := stepResult(t, o, "E1"); got != `{"branch":"then","reason":null,"result":{"first":"a"},"verdict":true}` {
			t.Errorf("E1 %s", got)
		}
		if got := o.events.paths(engine.EventStepStart); !slices.Equal(got, []string{"E0", "E1", "E1/then", "E2"}) {
			t.Errorf("steps %v", got)
		}
		if o.res.StepsExecuted != 4 {
			t.Errorf("steps_executed %d", o.res.StepsExecuted)
		}
	})
	t.Run("else, inline with branch dataflow, then never rendered", func(t *testing.T) {
		// then reads none.0.tag, which would be EmptyData if it rendered.
		p := newProject(t, map[string]string{"plans/p.yaml": listPlan + strings.ReplaceAll(steps, "%s", "none")})
		o := p.run(t, "plans/p.yaml", nil, nil)
		wantOK(t, o)
		if got := stepResult(t, o, "E1"); got != `{"branch":"else","reason":null,"result":{"seen":"nothing in none"},"verdict":false}` {
			t.Errorf("E1 %s", got)
		}
		if got := o.events.paths(engine.EventStepStart); !slices.Equal(got, []string{"E0", "E1", "E1/else/E10", "E1/else/E11", "E2"}) {
			t.Errorf("steps %v", got)
		}
	})
	t.Run("false gate without else", func(t *testing.T) {
		p := newProject(t, map[string]string{"plans/p.yaml": listPlan + `
  - id: E1
    tool_name: decide
    input:
      if: { value: "{{E0.none}}", op: not_empty }
      then: { tool_name: builtin__reshape, input: { shape: {} } }
`})
		o := p.run(t, "plans/p.yaml", nil, nil)
		wantOK(t, o)
		if got := stepResult(t, o, "E1"); got != `{"branch":null,"reason":null,"result":null,"verdict":false}` {
			t.Errorf("E1 %s", got)
		}
	})
	t.Run("a failing branch fails the decide", func(t *testing.T) {
		p := newProject(t, map[string]string{"plans/p.yaml": listPlan + `
  - id: E1
    tool_name: decide
    input:
      if: { value: 1, op: eq, to: 1 }
      then:
        - id: E10
          tool_name: builtin__reshape
          input: { shape: { x: "{{E0.issues.0.nope}}" } }
`})
		o := p.run(t, "plans/p.yaml", nil, nil)
		wantFailure(t, o, "plan failed at step E1 (decide): `then` branch, step E10 (builtin__reshape): bad path 'E0.issues.0.nope' (available: n, tag)")
	})
	t.Run("an exit in a branch ends the plan", func(t *testing.T) {
		p := newProject(t, map[string]string{"plans/p.yaml": listPlan + `
  - id: E1
    tool_name: decide
    input:
      if: { value: 1, op: eq, to: 1 }
      then:
        - id: bail
          tool_name: exit
          input: { status: success, message: bailed }
  - id: E2
    tool_name: builtin__reshape
    input: { shape: {} }
`})
		o := p.run(t, "plans/p.yaml", nil, nil)
		if o.res.Status != engine.StatusExited || o.res.Exit.Step != "E1/then/bail" {
			t.Fatalf("status %s exit %+v", o.res.Status, o.res.Exit)
		}
		if slices.Contains(o.events.paths(engine.EventStepStart), "E2") {
			t.Error("E2 ran")
		}
	})
}

func TestMapReduceFilter(t *testing.T) {
	p := newProject(t, map[string]string{"plans/p.yaml": listPlan + `
  - id: E1
    tool_name: map
    input:
      over: "{{E0.issues}}"
      concurrency: 3
      do:
        - id: A
          tool_name: builtin__reshape
          input: { shape: { n: "{{item.n}}", i: "{{index}}" } }
        - id: B
          tool_name: builtin__reshape
          input: { shape: { label: "#{{A.i}}={{A.n}}" } }
  - id: E2
    tool_name: reduce
    input:
      over: "{{E1.results}}"
      initial: { text: "" }
      do:
        tool_name: builtin__reshape
        input: { shape: { text: "{{accumulator.text}}{{item.label}};" } }
  - id: E3
    tool_name: filter
    input: { over: "{{E0.issues}}", where: { value: "{{item.n}}", op: gt, to: 2 } }
  - id: E4
    tool_name: map
    input: { over: "{{E0.none}}", do: { tool_name: builtin__reshape, input: { shape: {} } } }
  - id: E5
    tool_name: reduce
    input: { over: "{{E0.none}}", initial: { sum: 0 }, do: { tool_name: builtin__reshape, input: { shape: {} } } }
  - id: E6
    tool_name: filter
    input: { over: "{{E0.none}}", where: { value: "{{item}}", op: empty } }
`})
	o := p.run(t, "plans/p.yaml", nil, nil)
	wantOK(t, o)
	for path, want := range map[string]string{
		"E1": `{"count":3,"results":[{"label":"#0=1"},{"label":"#1=5"},{"label":"#2=3"}]}`,
		"E2": `{"count":3,"result":{"text":"#0=1;#1=5;#2=3;"}}`,
		"E3": `{"count":2,"dropped":[{"n":1,"tag":"a"}],"dropped_count":1,"items":[{"n":5,"tag":"b"},{"n":3,"tag":"a"}]}`,
		"E4": `{"count":0,"results":[]}`,
		"E5": `{"count":0,"result":{"sum":0}}`,
		"E6": `{"count":0,"dropped":[],"dropped_count":0,"items":[]}`,
	} {
		if got := stepResult(t, o, path); got != want {
			t.Errorf("%s = %s\nwant %s", path, got, want)
		}
	}
	// E0, map + 3×2 body steps, reduce + 3 body calls, filter, two maps and
	// an empty filter: 1+7+4+1+1+1+1.
	if o.res.StepsExecuted != 16 {
		t.Errorf("steps_executed %d, want 16", o.res.StepsExecuted)
	}
	var mapSteps []string
	for _, path := range o.events.paths(engine.EventStepEnd) {
		if strings.HasPrefix(path, "E1/") {
			mapSteps = append(mapSteps, path)
		}
	}
	slices.Sort(mapSteps)
	if want := []string{"E1/do.0/A", "E1/do.0/B", "E1/do.1/A", "E1/do.1/B", "E1/do.2/A", "E1/do.2/B"}; !slices.Equal(mapSteps, want) {
		t.Errorf("map body paths %v", mapSteps)
	}
}

func TestControlFailures(t *testing.T) {
	tests := []struct {
		name, steps, message string
	}{
		{
			name: "map item fails",
			steps: `
  - id: E1
    tool_name: map
    input:
      over: "{{E0.issues}}"
      do: { tool_name: builtin__reshape, input: { shape: { x: "{{item.missing}}" } } }`,
			message: "plan failed at step E1 (map): `do` item 0 (builtin__reshape): bad path 'item.missing' (available: n, tag)",
		},
		{
			name: "map over a non-list",
			steps: `
  - id: E1
    tool_name: map
    input: { over: "{{E0.issues.0}}", do: { tool_name: builtin__reshape, input: { shape: {} } } }`,
			message: "plan failed at step E1 (map): 'over' must render to a list, but it rendered to an object",
		},
		{
			name: "filter gate fails on an item",
			steps: `
  - id: E1
    tool_name: filter
    input: { over: "{{E0.issues}}", where: { value: "{{item.tag}}", op: gt, to: 1 } }`,
			message: `plan failed at step E1 (filter): item 0: op gt orders numbers, but 'value' is a string ("a")`,
		},
		{
			name: "reduce item fails",
			steps: `
  - id: E1
    tool_name: reduce
    input:
      over: "{{E0.issues}}"
      do:
        - id: R
          tool_name: builtin__reshape
          input: { shape: { x: "{{accumulator.x}}" } }`,
			message: "plan failed at step E1 (reduce): `do` item 0, step R (builtin__reshape): empty data at 'accumulator.x': 'accumulator' is null",
		},
		{
			name: "a missing step",
			steps: `
  - id: E1
    tool_name: builtin__reshape
    input: { shape: { x: "{{input.nope}}" } }`,
			message: "plan failed at step E1 (builtin__reshape): bad path 'input.nope' (available: items)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProject(t, map[string]string{"plans/p.yaml": listPlan + tt.steps + "\n"})
			wantFailure(t, p.run(t, "plans/p.yaml", nil, nil), tt.message)
		})
	}
}

// TestMapFailureDrains checks the reference's failure rule: the lowest
// failing index is reported, and items not started when a failure is seen
// never start.
func TestMapFailureDrains(t *testing.T) {
	p := newProject(t, map[string]string{"plans/p.yaml": `
identifier: drains
input_schema:
  type: object
  properties:
    items: { type: array }
steps:
  - id: E1
    tool_name: map
    input:
      over: "{{input.items}}"
      concurrency: 2
      do: { tool_name: builtin__reshape, input: { shape: { x: "{{item.x}}" } } }
`})
	items := []any{}
	for i := 0; i < 50; i++ {
		items = append(items, map[string]any{"x": i})
	}
	items[3] = map[string]any{"y": 3}
	items[4] = map[string]any{"y": 4}
	o := p.run(t, "plans/p.yaml", map[string]any{"items": items}, nil)
	wantFailure(t, o, "plan failed at step E1 (map): `do` item 3 (builtin__reshape): bad path 'item.x' (available: y)")
	started := len(o.events.of(engine.EventStepStart)) - 1
	if started >= 50 {
		t.Errorf("%d items started after item 3 failed; unstarted items must be skipped", started)
	}
}

func TestAsk(t *testing.T) {
	const plan = `
identifier: asks
steps:
  - id: E0
    tool_name: ask
    input:
      prompt: "Which channel?"
      output_schema:
        type: object
        required: [channel]
        properties:
          channel: { enum: [stable, beta], description: Release channel }
      when_unanswered: %s
      default: { channel: beta }
`
	answer := func(a engine.Action, v any) engine.Hook {
		return func(_ context.Context, s *engine.Stop) engine.Decision {
			if s.Kind == engine.StopAsk {
				return engine.Decision{Action: a, Value: v}
			}
			return engine.Decision{}
		}
	}
	tests := []struct {
		name, mode string
		hook       engine.Hook
		result     string
		message    string
	}{
		{name: "nobody to ask, default", mode: "default", result: `{"answer":{"channel":"beta"},"answered":false,"reason":"unavailable"}`},
		{name: "declined, default", mode: "default", hook: answer(engine.Decline, nil), result: `{"answer":{"channel":"beta"},"answered":false,"reason":"declined"}`},
		{name: "answered", mode: "fail", hook: answer(engine.Answer, map[string]any{"channel": "stable"}), result: `{"answer":{"channel":"stable"},"answered":true}`},
		{name: "nobody to ask, fail", mode: "fail",
			message: "plan failed at step E0 (ask): nobody answered (unavailable) and when_unanswered is fail; set when_unanswered: default with a default answer to run without a person"},
		{name: "an answer off the schema", mode: "fail", hook: answer(engine.Answer, map[string]any{"channel": "nightly"}),
			message: "plan failed at step E0 (ask): the answer does not match the output_schema: /channel: value must be one of 'stable', 'beta'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProject(t, map[string]string{"plans/p.yaml": strings.Replace(plan, "%s", tt.mode, 1)})
			o := p.run(t, "plans/p.yaml", nil, tt.hook)
			if tt.message != "" {
				wantFailure(t, o, tt.message)
				return
			}
			wantOK(t, o)
			if got := stepResult(t, o, "E0"); got != tt.result {
				t.Errorf("result %s, want %s", got, tt.result)
			}
		})
	}
}

func TestRefusedBeforeAnyStep(t *testing.T) {
	p := newProject(t, map[string]string{
		"plans/unmodelled.yaml": `
identifier: unmodelled
steps:
  - id: E0
    tool_name: exit
    input: { infer: "Stop?", model: nano, status: success, message: stopped }
`,
		"plans/hidden.yaml": `
identifier: hidden
requires_servers: [linear]
steps:
  - id: E0
    tool_name: linear__list_issues
    input: {}
`,
	})
	for file, want := range map[string]string{
		"plans/hidden.yaml":     "step E0: tool 'linear__list_issues' needs MCP server 'linear', which is not configured under [mcp.linear]",
		"plans/unmodelled.yaml": "step E0: model 'nano' is not a role or a named model in this configuration",
	} {
		o := p.run(t, file, nil, nil)
		var re *engine.ResolveError
		if !errors.As(o.err, &re) || !strings.Contains(re.Error(), want) {
			t.Errorf("%s: err %v, want a ResolveError with %q", file, o.err, want)
		}
		if len(o.events.events) != 0 {
			t.Errorf("%s: a refused run emitted %d events", file, len(o.events.events))
		}
	}
}

func TestInputs(t *testing.T) {
	p := newProject(t, map[string]string{"plans/p.yaml": `
identifier: needs
input_schema:
  type: object
  required: [project]
  properties:
    project: { type: string }
    limit: { type: integer, default: 6 }
steps:
  - id: E0
    tool_name: builtin__reshape
    input: { shape: { p: "{{input.project}}", l: "{{input.limit}}" } }
output:
  got: "{{E0}}"
`})
	o := p.run(t, "plans/p.yaml", nil, nil)
	var ie *engine.InputError
	if !errors.As(o.err, &ie) {
		t.Fatalf("err %v, want an InputError", o.err)
	}
	if !strings.Contains(ie.Error(), "plan 'needs' needs inputs:") || !strings.Contains(ie.Error(), "project") {
		t.Errorf("message %q", ie.Error())
	}
	o = p.run(t, "plans/p.yaml", map[string]any{"project": "X"}, nil)
	wantOK(t, o)
	if got := asJSON(t, o.res.Output); got != `{"got":{"l":6,"p":"X"}}` {
		t.Errorf("output %s", got)
	}
	o = p.run(t, "plans/p.yaml", map[string]any{"project": 3}, nil)
	if !errors.As(o.err, &ie) {
		t.Fatalf("a mistyped input: err %v", o.err)
	}
}
