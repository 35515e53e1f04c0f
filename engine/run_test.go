package engine_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/model"
)

func TestPlanCalls(t *testing.T) {
	p := newProject(t, map[string]string{
		"plans/outer.yaml": `
identifier: outer
steps:
  - id: E0
    tool_name: builtin__reshape
    input: { shape: { secret: outer-only } }
  - id: E1
    tool_name: plan__inner
    input: { word: "hi" }
  - id: E2
    tool_name: map
    input:
      over: [1, 2]
      do: { tool_name: plan__inner, input: { word: "n{{item}}" } }
output:
  one: "{{E1}}"
  many: "{{E2.results}}"
`,
		"plans/inner.yaml": `
identifier: inner
input_schema:
  type: object
  required: [word]
  properties:
    word: { type: string }
    times: { type: integer, default: 2 }
steps:
  - id: E0
    tool_name: builtin__reshape
    input: { shape: { said: "{{input.word}} x{{input.times}}" } }
output:
  said: "{{E0.said}}"
`,
		"plans/ring_a.yaml": `
identifier: ring_a
steps:
  - id: E0
    tool_name: plan__ring_b
    input: {}
`,
		"plans/ring_b.yaml": `
identifier: ring_b
steps:
  - id: E0
    tool_name: plan__ring_a
    input: {}
`,
		"plans/peek.yaml": `
identifier: peek
steps:
  - id: E0
    tool_name: builtin__reshape
    input: { shape: { s: "{{E0.secret}}" } }
`,
	})
	t.Run("own scope and nested paths", func(t *testing.T) {
		o := p.run(t, "plans/outer.yaml", nil, nil)
		wantOK(t, o)
		if got := asJSON(t, o.res.Output); got != `{"many":[{"said":"n1 x2"},{"said":"n2 x2"}],"one":{"said":"hi x2"}}` {
			t.Errorf("output %s", got)
		}
		for _, want := range []string{"E1/inner/E0", "E2/do.0/inner/E0", "E2/do.1/inner/E0"} {
			if !slices.Contains(o.events.paths(engine.EventStepStart), want) {
				t.Errorf("no step at %s: %v", want, o.events.paths(engine.EventStepStart))
			}
		}
	})
	t.Run("cycle", func(t *testing.T) {
		o := p.run(t, "plans/ring_a.yaml", nil, nil)
		wantFailure(t, o, "plan failed at step E0/ring_b/E0 (plan__ring_a): plan cycle: ring_a → ring_b → ring_a")
	})
}

func TestPlanDepthCap(t *testing.T) {
	files := map[string]string{}
	for i := 0; i < 10; i++ {
		next := "builtin__reshape\n    input: { shape: {} }"
		if i < 9 {
			next = "plan__d" + string(rune('0'+i+1)) + "\n    input: {}"
		}
		files["plans/d"+string(rune('0'+i))+".yaml"] = "identifier: d" + string(rune('0'+i)) + "\nsteps:\n  - id: E0\n    tool_name: " + next + "\n"
	}
	p := newProject(t, files)
	o := p.run(t, "plans/d0.yaml", nil, nil)
	if o.res.Status != engine.StatusFailed || !strings.Contains(o.res.Err.Error(), "plan calls nest deeper than 8: d0 → d1 → d2 → d3 → d4 → d5 → d6 → d7 → d8") {
		t.Fatalf("status %s err %v", o.res.Status, o.res.Err)
	}
}

func TestFinishModes(t *testing.T) {
	replies := `
replies:
  - match: solver
    role: solver
    reply: { text: "All quiet.", usage: { input_tokens: 100, output_tokens: 10 } }
`
	t.Run("solver", func(t *testing.T) {
		p := newProject(t, map[string]string{"replies.yaml": replies, "plans/p.yaml": listPlan + `
solver:
  query_to_answer: "Report on {{E0.issues.length}} issues."
  system_prompt: Be brief.
  data: { issues: "{{E0.issues}}" }
`})
		o := p.run(t, "plans/p.yaml", nil, nil)
		wantOK(t, o)
		if o.res.Answer != "All quiet." {
			t.Errorf("answer %q", o.res.Answer)
		}
		call := o.events.of(engine.EventModelCall)[0].Payload.(engine.ModelCalled)
		if call.Site != "solver" || call.Role != model.RoleSolver {
			t.Errorf("call %+v", call)
		}
		msgs := call.Request.Messages
		if !strings.HasSuffix(msgs[0].Text(), "\n\nBe brief.") || !strings.Contains(msgs[1].Text(), "Report on 3 issues.") || !strings.Contains(msgs[1].Text(), `"tag": "b"`) {
			t.Errorf("solver request %+v", msgs)
		}
		u := o.res.Usage
		if u.Calls != 1 || u.InputTokens != 100 || u.CostUSD == nil || *u.CostUSD != 100*1.0/1e6+10*2.0/1e6 {
			t.Errorf("usage %+v", u)
		}
	})
	t.Run("solver explains empty data", func(t *testing.T) {
		p := newProject(t, map[string]string{"replies.yaml": replies, "plans/p.yaml": listPlan + `
  - id: E1
    tool_name: builtin__reshape
    input: { shape: { first: "{{E0.none.0}}" } }
  - id: E2
    tool_name: builtin__reshape
    input: { shape: {} }
solver:
  query_to_answer: "Report."
  data: { first: "{{E1.first}}" }
`})
		o := p.run(t, "plans/p.yaml", nil, nil)
		wantOK(t, o)
		msg := o.events.of(engine.EventModelCall)[0].Payload.(engine.ModelCalled).Request.Messages[1].Text()
		if !strings.Contains(msg, "Data that ran out") || !strings.Contains(msg, "empty data at 'E0.none.0'") {
			t.Errorf("solver message %q", msg)
		}
		if slices.Contains(o.events.paths(engine.EventStepStart), "E2") {
			t.Error("steps ran past the empty data")
		}
	})
	t.Run("a question about data that ran out", func(t *testing.T) {
		p := newProject(t, map[string]string{"replies.yaml": replies, "plans/p.yaml": listPlan + `
solver:
  query_to_answer: "Report on {{E0.none.0.tag}}."
  data: { all: "{{E0}}" }
`})
		o := p.run(t, "plans/p.yaml", nil, nil)
		wantOK(t, o)
		msg := o.events.of(engine.EventModelCall)[0].Payload.(engine.ModelCalled).Request.Messages[1].Text()
		if !strings.HasPrefix(msg, "Report on {{E0.none.0.tag}}.") || !strings.Contains(msg, "query_to_answer: empty data at 'E0.none.0.tag'") {
			t.Errorf("solver message %q", msg)
		}
	})
	t.Run("solver without data sees every result", func(t *testing.T) {
		p := newProject(t, map[string]string{"replies.yaml": replies, "plans/p.yaml": listPlan + `
  - id: E1
    tool_name: builtin__reshape
    input: { shape: { count: "{{E0.issues.length}}" } }
solver:
  query_to_answer: "Report."
`})
		o := p.run(t, "plans/p.yaml", nil, nil)
		wantOK(t, o)
		start := o.events.of(engine.EventStepStart)
		data := start[len(start)-1].Payload.(engine.StepStarted).Input.(map[string]any)
		keys := slices.Sorted(maps.Keys(data))
		if !slices.Equal(keys, []string{"E0", "E1", "input"}) {
			t.Errorf("the solver sees %v, want the input and every step's result", keys)
		}
		msg := o.events.of(engine.EventModelCall)[0].Payload.(engine.ModelCalled).Request.Messages[1].Text()
		if !strings.Contains(msg, `"count": 3`) || !strings.Contains(msg, `"tag": "b"`) {
			t.Errorf("solver message %q", msg)
		}
	})
	t.Run("solver without query_to_answer is asked to run the plan, as graph asks", func(t *testing.T) {
		p := newProject(t, map[string]string{"replies.yaml": replies, "plans/p.yaml": listPlan + "solver:\n  system_prompt: Be brief.\n"})
		o := p.run(t, "plans/p.yaml", nil, nil)
		wantOK(t, o)
		msg := o.events.of(engine.EventModelCall)[0].Payload.(engine.ModelCalled).Request.Messages[1].Text()
		if !strings.HasPrefix(msg, "Run the 'test plan' plan") || !strings.Contains(msg, `"tag": "b"`) {
			t.Errorf("solver message %q", msg)
		}
	})
	t.Run("output plan fails on empty data", func(t *testing.T) {
		p := newProject(t, map[string]string{"plans/p.yaml": listPlan + `
  - id: E1
    tool_name: builtin__reshape
    input: { shape: { first: "{{E0.none.0}}" } }
output: { x: 1 }
`})
		o := p.run(t, "plans/p.yaml", nil, nil)
		wantFailure(t, o, "plan failed at step E1 (builtin__reshape): empty data at 'E0.none.0': 'E0.none' is an empty list")
		if !o.res.EmptyData {
			t.Error("EmptyData not set")
		}
	})
	t.Run("silent", func(t *testing.T) {
		p := newProject(t, map[string]string{"plans/p.yaml": listPlan})
		o := p.run(t, "plans/p.yaml", nil, nil)
		wantOK(t, o)
		if o.res.Output != nil || o.res.Answer != "" || o.res.StepsExecuted != 1 {
			t.Errorf("result %+v", o.res)
		}
	})
}

func TestStops(t *testing.T) {
	const plan = listPlan + `
  - id: E1
    tool_name: builtin__reshape
    input: { shape: { n: "{{E0.issues.length}}" } }
  - id: E2
    tool_name: builtin__reshape
    input: { shape: { x: "{{E1.missing}}" } }
  - id: E3
    tool_name: builtin__reshape
    input: { shape: { e1: "{{E1}}", e2: "{{E2}}" } }
output: "{{E3}}"
`
	p := newProject(t, map[string]string{"plans/p.yaml": strings.Replace(plan, `output: "{{E3}}"`, "output: { all: \"{{E3}}\" }", 1)})
	at := func(kind engine.StopKind, path string, d engine.Decision) engine.Hook {
		return func(_ context.Context, s *engine.Stop) engine.Decision {
			if s.Kind == kind && s.Path == path {
				return d
			}
			return engine.Decision{}
		}
	}
	t.Run("inject at a step, replace at an error", func(t *testing.T) {
		hook := func(ctx context.Context, s *engine.Stop) engine.Decision {
			if d := at(engine.StopStep, "E1", engine.Decision{Action: engine.Inject, Value: map[string]any{"n": 99}})(ctx, s); d.Action != engine.Proceed {
				return d
			}
			return at(engine.StopError, "E2", engine.Decision{Action: engine.Replace, Value: map[string]any{"x": "fixed"}})(ctx, s)
		}
		o := p.run(t, "plans/p.yaml", nil, hook)
		wantOK(t, o)
		if got := asJSON(t, o.res.Output); got != `{"all":{"e1":{"n":99},"e2":{"x":"fixed"}}}` {
			t.Errorf("output %s", got)
		}
		var statuses []string
		for _, e := range o.events.of(engine.EventStepEnd) {
			statuses = append(statuses, e.Path+":"+e.Payload.(engine.StepEnded).Status.String())
		}
		if want := []string{"E0:ok", "E1:skipped", "E2:ok", "E3:ok"}; !slices.Equal(statuses, want) {
			t.Errorf("statuses %v, want %v", statuses, want)
		}
	})
	t.Run("edit a step's input, deny a step", func(t *testing.T) {
		edit := at(engine.StopStep, "E1", engine.Decision{Action: engine.Edit, Value: map[string]any{"shape": map[string]any{"missing": "edited"}}})
		o := p.run(t, "plans/p.yaml", nil, edit)
		wantOK(t, o)
		if got := asJSON(t, o.res.Output); got != `{"all":{"e1":{"missing":"edited"},"e2":{"x":"edited"}}}` {
			t.Errorf("output %s", got)
		}
		o = p.run(t, "plans/p.yaml", nil, at(engine.StopStep, "E1", engine.Decision{Action: engine.Deny}))
		wantFailure(t, o, "plan failed at step E1 (builtin__reshape): denied by the user")
		if tools := o.events.paths(engine.EventToolStart); slices.Contains(tools, "E1") {
			t.Errorf("the denied step called its tool: %v", tools)
		}
	})
	t.Run("replace a result", func(t *testing.T) {
		hook := func(ctx context.Context, s *engine.Stop) engine.Decision {
			if d := at(engine.StopResult, "E1", engine.Decision{Action: engine.Replace, Value: map[string]any{"missing": "here"}})(ctx, s); d.Action != engine.Proceed {
				return d
			}
			return engine.Decision{}
		}
		o := p.run(t, "plans/p.yaml", nil, hook)
		wantOK(t, o)
		if got := asJSON(t, o.res.Output); got != `{"all":{"e1":{"missing":"here"},"e2":{"x":"here"}}}` {
			t.Errorf("output %s", got)
		}
	})
	t.Run("a control step's stop shows its input as written", func(t *testing.T) {
		q := newProject(t, map[string]string{"plans/q.yaml": listPlan + `
  - id: E1
    tool_name: map
    input:
      over: "{{E0.issues}}"
      do: { tool_name: builtin__reshape, input: { shape: { n: "{{item.n}}" } } }
output: { all: "{{E1}}" }
`})
		var seen any
		hook := func(_ context.Context, s *engine.Stop) engine.Decision {
			if s.Kind == engine.StopStep && s.Path == "E1" {
				seen = s.Input
			}
			return engine.Decision{}
		}
		wantOK(t, q.run(t, "plans/q.yaml", nil, hook))
		if got := asJSON(t, seen); !strings.Contains(got, `"over":"{{E0.issues}}"`) || !strings.Contains(got, `"n":"{{item.n}}"`) {
			t.Errorf("the map's step stop shows %s", got)
		}
	})
	t.Run("abort", func(t *testing.T) {
		o := p.run(t, "plans/p.yaml", nil, at(engine.StopStep, "E1", engine.Decision{Action: engine.Abort}))
		var abort *engine.AbortError
		if o.res.Status != engine.StatusAborted || !errors.As(o.res.Err, &abort) || abort.Path != "E1" {
			t.Fatalf("status %s err %v", o.res.Status, o.res.Err)
		}
		// The step aborted at its stop starts and ends there, aborted,
		// and no step after it starts.
		if got := o.events.paths(engine.EventStepStart); !slices.Equal(got, []string{"E0", "E1"}) {
			t.Errorf("steps started %v, want E0 and E1", got)
		}
		ends := o.events.of(engine.EventStepEnd)
		if last := ends[len(ends)-1]; last.Path != "E1" || last.Payload.(engine.StepEnded).Status != engine.StepAborted || last.Payload.(engine.StepEnded).Error != "run aborted at E1" {
			t.Errorf("the last step end is %s %+v, want E1 aborted", last.Path, last.Payload)
		}
		if ends := o.events.of(engine.EventRunEnd); len(ends) != 1 || ends[0].Payload.(engine.RunEnded).AbortedAt != "E1" {
			t.Errorf("the run's end does not name E1 as where it was aborted: %+v", ends)
		}
	})
	t.Run("the error stop sees the failure; abort carries it", func(t *testing.T) {
		var seen atomic.Value
		hook := func(_ context.Context, s *engine.Stop) engine.Decision {
			if s.Kind == engine.StopError {
				seen.Store(s.Err.Error())
				return engine.Decision{Action: engine.Abort}
			}
			return engine.Decision{}
		}
		o := p.run(t, "plans/p.yaml", nil, hook)
		var abort *engine.AbortError
		if !errors.As(o.res.Err, &abort) || abort.Cause == nil || seen.Load() != "bad path 'E1.missing' (available: n)" {
			t.Fatalf("err %v, seen %v", o.res.Err, seen.Load())
		}
		// The step aborted at its error stop did not fail: a person
		// stopped the run there.
		ends := o.events.of(engine.EventStepEnd)
		if end := ends[len(ends)-1].Payload.(engine.StepEnded); end.Status != engine.StepAborted || !strings.Contains(end.Error, "run aborted at E2: bad path") {
			t.Errorf("the step aborted at its error stop ended %+v", end)
		}
	})
	t.Run("stack and scope at a nested stop", func(t *testing.T) {
		p := newProject(t, map[string]string{"plans/p.yaml": listPlan + `
  - id: E1
    tool_name: map
    input:
      over: "{{E0.issues}}"
      do:
        - id: A
          tool_name: builtin__reshape
          input: { shape: { n: "{{item.n}}" } }
`})
		var stack []engine.Frame
		var item any
		hook := func(_ context.Context, s *engine.Stop) engine.Decision {
			if s.Kind == engine.StopStep && s.Path == "E1/do.1/A" {
				stack = s.Stack
				item, _ = s.Scope.Lookup("item")
			}
			return engine.Decision{}
		}
		wantOK(t, p.run(t, "plans/p.yaml", nil, hook))
		var paths []string
		for _, f := range stack {
			paths = append(paths, f.Kind.String()+":"+f.Path)
		}
		if want := []string{"plan:", "step:E1", "item:E1/do.1", "step:E1/do.1/A"}; !slices.Equal(paths, want) {
			t.Errorf("stack %v, want %v", paths, want)
		}
		if asJSON(t, item) != `{"n":5,"tag":"b"}` {
			t.Errorf("item %v", item)
		}
	})
}

func TestEvents(t *testing.T) {
	p := newProject(t, map[string]string{"plans/p.yaml": listPlan})
	o := p.run(t, "plans/p.yaml", map[string]any{"items": []any{}}, nil)
	wantOK(t, o)
	var kinds []engine.EventKind
	for i, e := range o.events.events {
		if e.Seq != uint64(i+1) {
			t.Errorf("event %d has seq %d", i, e.Seq)
		}
		if e.RunID != o.res.RunID {
			t.Errorf("event %d of run %s", i, e.RunID)
		}
		kinds = append(kinds, e.Kind)
	}
	want := []engine.EventKind{engine.EventRunStart, engine.EventStepStart, engine.EventToolStart, engine.EventToolEnd, engine.EventStepEnd, engine.EventUsage, engine.EventRunEnd}
	if !slices.Equal(kinds, want) {
		t.Errorf("kinds %v, want %v", kinds, want)
	}
	start := o.events.events[0].Payload.(engine.RunStarted)
	if start.Plan != "lists" || len(start.Hash) != 64 {
		t.Errorf("run start %+v", start)
	}
}

func TestModelTools(t *testing.T) {
	files := map[string]string{
		"replies.yaml": `
replies:
  - match: plain
    reply: { text: "a gist", usage: { input_tokens: 10, output_tokens: 2 } }
  - match: shaped
    reply: { json: { score: "high" } }
  - match: shaped
    role: repair
    reply: { json: { score: 9 } }
  - match: prompted
    reply: { json: { gist: "short", keywords: [a, b, c] } }
`,
		"tools/summarize.yaml": `
name: summarize
description: Summarize text.
kind: prompt
prompt: "Summarize: {{input.text}}"
input_schema: { type: object, required: [text], properties: { text: { type: string } } }
output_schema:
  type: object
  required: [gist, keywords]
  properties:
    gist: { type: string }
    keywords: { type: array, items: { type: string } }
`,
		"plans/p.yaml": `
identifier: models
steps:
  - id: plain
    tool_name: builtin__infer
    input: { instruction: "Say something." }
  - id: shaped
    tool_name: builtin__infer
    input:
      instruction: "Score it."
      output_schema: { properties: { score: { type: integer } }, required: [score] }
  - id: prompted
    tool_name: user__summarize
    input: { text: "{{plain.text}}" }
output:
  plain: "{{plain.text}}"
  score: "{{shaped.score}}"
  gist: "{{prompted}}"
`,
	}
	t.Run("text, repaired JSON, a prompt tool", func(t *testing.T) {
		o := newProject(t, files).run(t, "plans/p.yaml", nil, nil)
		wantOK(t, o)
		if got := asJSON(t, o.res.Output); got != `{"gist":{"gist":"short","keywords":["a","b","c"]},"plain":"a gist","score":9}` {
			t.Errorf("output %s", got)
		}
		if got := o.events.paths(engine.EventModelCall); !slices.Equal(got, []string{"plain", "shaped", "shaped/repair", "prompted"}) {
			t.Errorf("model calls at %v", got)
		}
		if got := o.events.paths(engine.EventRepair); !slices.Equal(got, []string{"shaped/repair"}) {
			t.Errorf("repair events at %v", got)
		}
		prompt := o.events.of(engine.EventModelCall)[3].Payload.(engine.ModelCalled).Request.Messages[0].Text()
		if prompt != "Summarize: a gist" {
			t.Errorf("prompt %q", prompt)
		}
		// The repair lands on the step that asked for it.
		for _, line := range o.res.Usage.ByStep {
			if line.Path == "shaped" && line.Calls != 2 {
				t.Errorf("shaped has %d calls, want 2 (the answer and its repair)", line.Calls)
			}
		}
	})
	t.Run("the repair stop replaces the repair", func(t *testing.T) {
		hook := func(_ context.Context, s *engine.Stop) engine.Decision {
			if s.Kind == engine.StopRepair && s.Path == "shaped/repair" {
				return engine.Decision{Action: engine.Replace, Value: map[string]any{"score": 3}}
			}
			return engine.Decision{}
		}
		o := newProject(t, files).run(t, "plans/p.yaml", nil, hook)
		wantOK(t, o)
		if got := asJSON(t, o.res.Output); !strings.Contains(got, `"score":3`) {
			t.Errorf("output %s", got)
		}
		if got := o.events.paths(engine.EventModelCall); slices.Contains(got, "shaped/repair") {
			t.Errorf("the repair model was called: %v", got)
		}
	})
}

// TestGraphPromptTools runs prompt tools written the way graph writes them
// (system, caller_output_schema, caller_model) and builtin__infer given an
// input beyond its own, and checks what reaches the model.
func TestGraphPromptTools(t *testing.T) {
	config := testConfig + "\n[models.named.fast]\nprovider = \"script\"\nmodel = \"fast-model\"\n"
	tools := map[string]string{
		"tools/review.yaml": `
name: review
description: Review a diff.
kind: prompt
system: "You review diffs. Keep {{braces}} as written."
prompt: "Review: {{input.diff}}"
`,
		"tools/ask.yaml": `
name: ask
description: graph's builtin__infer as a tool file.
kind: prompt
prompt: "{{input.instruction}}"
caller_output_schema: true
caller_model: true
`,
		"tools/fixed.yaml": `
name: fixed
description: A schema of its own, which wins over the call's.
kind: prompt
prompt: "{{input.instruction}}"
model: fast
caller_output_schema: true
output_schema: { type: object, required: [n], properties: { n: { type: integer } } }
`,
		"tools/pinned.yaml": `
name: pinned
description: Without caller_model the call's model input is only an input.
kind: prompt
prompt: "{{input.instruction}}"
`,
	}
	cases := []struct {
		name    string
		step    string // the input of step S, which calls tool
		tool    string
		reply   string
		model   string   // the model that must answer
		msgs    []string // role: content of each message sent
		output  string   // S's result as JSON
		failure string   // when the step must fail: the run's error
	}{
		{
			name: "system goes first, as written", tool: "user__review", step: `{ diff: "+x" }`,
			reply: `{ text: "fine" }`, model: "scripted",
			msgs:   []string{"system: You review diffs. Keep {{braces}} as written.", "user: Review: +x"},
			output: `{"text":"fine"}`,
		},
		{
			name: "the call's model and output_schema", tool: "user__ask",
			step:  `{ instruction: "Score it.", model: fast, output_schema: { properties: { score: { type: integer } }, required: [score] } }`,
			reply: `{ json: { score: 7 } }`, model: "fast-model",
			msgs:   []string{"user: Score it."},
			output: `{"score":7}`,
		},
		{
			name: "without them, plain text on the chat model", tool: "user__ask", step: `{ instruction: "Say hi." }`,
			reply: `{ text: "hi" }`, model: "scripted",
			msgs:   []string{"user: Say hi."},
			output: `{"text":"hi"}`,
		},
		{
			name: "the file's schema wins over the call's", tool: "user__fixed",
			step:  `{ instruction: "Count.", output_schema: { properties: { other: { type: string } }, required: [other] } }`,
			reply: `{ json: { n: 2 } }`, model: "fast-model",
			msgs:   []string{"user: Count."},
			output: `{"n":2}`,
		},
		{
			name: "a model input without caller_model is ignored", tool: "user__pinned", step: `{ instruction: "Go.", model: fast }`,
			reply: `{ text: "went" }`, model: "scripted",
			msgs:   []string{"user: Go."},
			output: `{"text":"went"}`,
		},
		{
			name: "a bad caller output_schema says so", tool: "user__ask", step: `{ instruction: "Go.", output_schema: [a] }`,
			failure: "plan failed at step S (user__ask): user__ask's 'output_schema' input: must be an object JSON Schema, not a list",
		},
		{
			// graph's builtin__infer takes inputs beyond its own; as in
			// graph, only the rendered instruction reaches the model.
			name: "builtin__infer with an extra input", tool: "builtin__infer",
			step:  `{ instruction: "Sum up {{input.n}}.", data: { n: "{{input.n}}" } }`,
			reply: `{ text: "three" }`, model: "scripted",
			msgs:   []string{"system: You complete one self-contained task. Everything you need is in the user's message. Answer the task directly, without preamble.", "user: Sum up 3."},
			output: `{"text":"three"}`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{"config.toml": config, "replies.yaml": "replies:\n  - match: S\n    reply: " + tc.reply + "\n",
				"plans/p.yaml": "identifier: p\nsteps:\n  - id: S\n    tool_name: " + tc.tool + "\n    input: " + tc.step + "\noutput: { s: \"{{S}}\" }\n"}
			if tc.reply == "" {
				files["replies.yaml"] = "replies: []\n"
			}
			for k, v := range tools {
				files[k] = v
			}
			o := newProject(t, files).run(t, "plans/p.yaml", map[string]any{"n": 3}, nil)
			if tc.failure != "" {
				wantFailure(t, o, tc.failure)
				return
			}
			wantOK(t, o)
			if got := asJSON(t, o.res.Output.(map[string]any)["s"]); got != tc.output {
				t.Errorf("result %s, want %s", got, tc.output)
			}
			call := o.events.of(engine.EventModelCall)[0].Payload.(engine.ModelCalled)
			if call.Model != tc.model {
				t.Errorf("answered by %q, want %q", call.Model, tc.model)
			}
			var msgs []string
			for _, m := range call.Request.Messages {
				msgs = append(msgs, m.Role+": "+m.Text())
			}
			if !slices.Equal(msgs, tc.msgs) {
				t.Errorf("messages %q\nwant %q", msgs, tc.msgs)
			}
		})
	}
}

func TestHooksCompose(t *testing.T) {
	if engine.Hooks(nil, nil) != nil {
		t.Error("no hooks must compose to none, so that stops stay a nil check")
	}
	var asked []string
	named := func(name string, d engine.Decision) engine.Hook {
		return func(context.Context, *engine.Stop) engine.Decision {
			asked = append(asked, name)
			return d
		}
	}
	h := engine.Hooks(named("a", engine.Decision{}), nil, named("b", engine.Decision{Action: engine.Abort}), named("c", engine.Decision{}))
	if d := h(context.Background(), &engine.Stop{}); d.Action != engine.Abort || !slices.Equal(asked, []string{"a", "b"}) {
		t.Errorf("decision %v after asking %v", d, asked)
	}
}

func TestCancelledRunIsAborted(t *testing.T) {
	p := newProject(t, map[string]string{
		"tools/nap.yaml": `
name: nap
description: Sleeps.
kind: exec
command: sleep
args: ["30"]
input_schema: { type: object, properties: {} }
`,
		"plans/p.yaml": `
identifier: napping
steps:
  - id: E0
    tool_name: user__nap
    input: {}
`})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	o := p.runContext(t, ctx, "plans/p.yaml", nil, nil)
	if o.res.Status != engine.StatusAborted {
		t.Errorf("status %s, err %v", o.res.Status, o.res.Err)
	}
}

func TestNestedInputDefaults(t *testing.T) {
	p := newProject(t, map[string]string{"plans/p.yaml": `
identifier: nested
input_schema:
  type: object
  properties:
    name: { type: string, default: anon }
    cfg:
      type: object
      properties:
        depth: { type: integer, default: 2 }
        tags: { type: array }
steps:
  - id: E0
    tool_name: builtin__reshape
    input: { shape: { all: "{{input}}" } }
output: { got: "{{E0.all}}" }
`})
	given := map[string]any{"cfg": map[string]any{"tags": []any{"a"}}}
	o := p.run(t, "plans/p.yaml", given, nil)
	wantOK(t, o)
	if got := asJSON(t, o.res.Output); got != `{"got":{"cfg":{"depth":2,"tags":["a"]},"name":"anon"}}` {
		t.Errorf("output %s", got)
	}
	if _, touched := given["cfg"].(map[string]any)["depth"]; touched {
		t.Error("the caller's inputs were changed")
	}
}

func TestNestedFailureMessages(t *testing.T) {
	p := newProject(t, map[string]string{
		"plans/leaf.yaml": `
identifier: leaf
steps:
  - id: L0
    tool_name: builtin__reshape
    input: { shape: { x: "{{input.missing}}" } }
`,
		"plans/direct.yaml": `
identifier: direct
steps:
  - id: D0
    tool_name: plan__leaf
    input: {}
`,
		"plans/mapped.yaml": `
identifier: mapped
steps:
  - id: M0
    tool_name: map
    input:
      over: [1]
      do: { tool_name: plan__leaf, input: {} }
`,
	})
	wantFailure(t, p.run(t, "plans/direct.yaml", nil, nil),
		"plan failed at step D0/leaf/L0 (builtin__reshape): empty data at 'input.missing': 'input' is an empty object")
	wantFailure(t, p.run(t, "plans/mapped.yaml", nil, nil),
		"plan failed at step M0 (map): `do` item 0 (plan__leaf): at step M0/do.0/leaf/L0 (builtin__reshape): empty data at 'input.missing': 'input' is an empty object")
}
