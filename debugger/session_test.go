package debugger

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/chat"
	"github.com/stepwise-dev/stepwise/engine/config"
	"github.com/stepwise-dev/stepwise/engine/model"
	"github.com/stepwise-dev/stepwise/engine/path"
	"github.com/stepwise-dev/stepwise/engine/tools"
	"github.com/stepwise-dev/stepwise/plans"
)

// newSession writes a project (a script provider answering from replies)
// with the plan and returns a session over it.
func newSession(t *testing.T, plan, replies string) *Session {
	t.Helper()
	return newSessionWith(t, plan, replies, nil)
}

// newSessionWith is newSession with more files in the project.
func newSessionWith(t *testing.T, plan, replies string, extra map[string]string) *Session {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		".stepwise/config.toml":  "[providers.s]\ntype = \"script\"\nfile = \"replies.yaml\"\n[models]\ndefault = { provider = \"s\", model = \"m\" }\n[storage]\nbackend = \"memory\"\n",
		"replies.yaml":           "replies:\n" + replies,
		".stepwise/plans/p.yaml": "name: p\ndescription: p\n" + plan,
	}
	for name, text := range extra {
		files[name] = text
	}
	for name, text := range files {
		path := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg, _, err := config.Load(config.Options{Dir: dir, LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	cat := tools.Load(cfg)
	p, report := plans.Load("p.yaml", []byte(files[".stepwise/plans/p.yaml"]), plans.Stepwise)
	if !report.OK() {
		t.Fatal(report.Problems)
	}
	rt := tools.NewRuntime(cfg, cat)
	t.Cleanup(func() { rt.Close() })
	return New(p, engine.Options{Config: cfg, Catalog: cat, Tools: rt, Models: model.New(cfg, model.Options{Backoff: func(int) time.Duration { return 0 }})}, nil)
}

func do(t *testing.T, s *Session, cmd Command) State {
	t.Helper()
	st, err := s.Do(cmd)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func where(st State) string {
	if st.Finished {
		return "finished"
	}
	return string(st.Stop.Kind) + " " + st.Stop.Path
}

func resultJSON(t *testing.T, st State) string {
	t.Helper()
	if !st.Finished || st.Result == nil {
		t.Fatalf("not finished: %s", where(st))
	}
	b, _ := json.Marshal(st.Result.Output)
	return string(b)
}

const chainPlan = `
identifier: chain
steps:
  - id: E0
    tool_name: builtin__reshape
    input: { shape: { n: 1 } }
  - id: E1
    tool_name: map
    input:
      over: [a, b]
      do:
        - id: A
          tool_name: builtin__reshape
          input: { shape: { v: "{{item}}", n: "{{E0.n}}" } }
  - id: E2
    tool_name: builtin__reshape
    input: { shape: { n: "{{E0.n}}", items: "{{E1.count}}" } }
output: { n: "{{E2.n}}", items: "{{E2.items}}" }
`

// TestMovements steps through a plan with each movement and checks where
// each stops.
func TestMovements(t *testing.T) {
	tests := []struct {
		name  string
		moves []Movement
		want  []string
	}{
		{"step in follows the work into the body", []Movement{StepIn, StepIn, StepIn, StepIn},
			[]string{"step E0", "result E0", "step E1", "step E1/do.0/A", "result E1/do.0/A"}},
		{"next stays at the top level, and stops at the map's result", []Movement{Next, Next, Next, Next},
			[]string{"step E0", "result E0", "step E1", "result E1", "step E2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSession(t, chainPlan, "")
			s.Table().Set("E0", []engine.StopKind{engine.StopStep}, nil)
			got := []string{where(s.Start(context.Background(), nil))}
			for _, m := range tt.moves {
				got = append(got, where(do(t, s, Command{Move: m})))
			}
			if strings.Join(got, ", ") != strings.Join(tt.want, ", ") {
				t.Errorf("stops\n got %v\nwant %v", got, tt.want)
			}
		})
	}
}

func TestStepOut(t *testing.T) {
	s := newSession(t, chainPlan, "")
	s.Table().Set("E1/do.0/A", []engine.StopKind{engine.StopStep}, nil)
	st := s.Start(context.Background(), nil)
	if where(st) != "step E1/do.0/A" || st.Stop.Thread != "E1/do.0" {
		t.Fatalf("first stop %s in %s", where(st), st.Stop.Thread)
	}
	// A's result stop is still inside A, and item 1 is another thread:
	// stepping out lands on the map's result.
	if got := where(do(t, s, Command{Move: StepOut})); got != "result E1" {
		t.Errorf("step out went to %s", got)
	}
}

// TestBreakpointInOneItemAndRound sets a breakpoint on E1/do.3/agent.2 and
// checks it stops in exactly that item and round.
func TestBreakpointInOneItemAndRound(t *testing.T) {
	var replies strings.Builder
	for i := 0; i < 5; i++ {
		fmt.Fprintf(&replies, "  - match: \"E1/do.%d\"\n    reply: { tool_calls: [ { name: builtin__reshape, arguments: { shape: {} } } ] }\n", i)
		fmt.Fprintf(&replies, "  - match: \"E1/do.%d\"\n    reply: { json: { ok: true } }\n", i)
	}
	s := newSession(t, `
identifier: agents
steps:
  - id: E1
    tool_name: map
    input:
      over: [0, 1, 2, 3, 4]
      concurrency: 2
      do:
        tool_name: agent
        input:
          prompt: "item {{item}}"
          tools: ["builtin__reshape"]
          output_schema: { type: object, required: [ok], properties: { ok: { type: boolean } } }
`, replies.String())
	bp, err := s.Table().Set("E1/do.3/agent.2", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := s.Start(context.Background(), nil)
	if where(st) != "round E1/do.3/agent.2" || st.Reason != "breakpoint 1 (E1/do.3/agent.2)" {
		t.Fatalf("stopped at %s (%s) %s %s", where(st), st.Reason, st.Status, st.Error)
	}
	req := st.Stop.Input.(chat.Request)
	if req.Messages[1].Text() != "item 3" {
		t.Errorf("the request of the stopped round is %q", req.Messages[1].Text())
	}
	// Without kinds the breakpoint matches the round's reply stop too.
	if st = do(t, s, Command{Move: Continue}); where(st) != "reply E1/do.3/agent.2" {
		t.Fatalf("after continue: %s", where(st))
	}
	st = do(t, s, Command{Move: Continue})
	if !st.Finished || st.Status != engine.StatusOK {
		t.Fatalf("after continue: %s %s %s", where(st), st.Status, st.Error)
	}
	if b := s.Breakpoints()[0]; b.ID != bp.ID || b.Hits != 2 {
		t.Errorf("hits %d", b.Hits)
	}
}

func TestConditions(t *testing.T) {
	s := newSession(t, chainPlan, "")
	cond, err := ParseCondition(`{{item}} eq b`)
	if err != nil {
		t.Fatal(err)
	}
	s.Table().Set("E1/do.*/A", []engine.StopKind{engine.StopStep}, cond)
	st := s.Start(context.Background(), nil)
	if where(st) != "step E1/do.1/A" || st.Stop.Scope["item"] != "b" {
		t.Fatalf("stopped at %s with item %v", where(st), st.Stop.Scope["item"])
	}
	if _, err := ParseCondition("{{stop.round}} bigger 2"); err == nil {
		t.Error("a condition without an op parsed")
	}
	round, _ := ParseCondition("{{stop.hits}} gte 2")
	s2 := newSession(t, chainPlan, "")
	s2.Table().Set("E1/do.*/A", []engine.StopKind{engine.StopStep}, round)
	if st := s2.Start(context.Background(), nil); where(st) != "step E1/do.1/A" {
		t.Errorf("the hits condition stopped at %s", where(st))
	}
}

// TestInjectAndReplace checks that a value injected at a step or replacing
// a tool's result is what downstream steps see.
func TestInjectAndReplace(t *testing.T) {
	s := newSession(t, chainPlan, "")
	s.Table().Set("E0", []engine.StopKind{engine.StopStep}, nil)
	st := s.Start(context.Background(), nil)
	if len(st.Stop.Readers) == 0 || !strings.Contains(strings.Join(st.Stop.Readers, " "), "E2: E0.n") {
		t.Errorf("readers of E0: %v", st.Stop.Readers)
	}
	st = do(t, s, Command{Decision: engine.Decision{Action: engine.Inject, Value: map[string]any{"n": 42}}, Move: Continue})
	if got := resultJSON(t, st); got != `{"items":2,"n":42}` {
		t.Errorf("output %s", got)
	}

	// The last step of a body is the item's result, read through the
	// map's.
	s = newSession(t, chainPlan, "")
	s.Table().Set("E1/do.*/A", []engine.StopKind{engine.StopStep}, nil)
	st = s.Start(context.Background(), nil)
	if got := strings.Join(st.Stop.Readers, ", "); got != "E2: E1.count through E1's result" {
		t.Errorf("readers of %s: %q", st.Stop.Path, got)
	}
	do(t, s, Command{Move: Continue})
	do(t, s, Command{Move: Continue})

	s = newSession(t, chainPlan, "")
	s.Table().Set("E2", []engine.StopKind{engine.StopResult}, nil)
	s.Start(context.Background(), nil)
	st = do(t, s, Command{Decision: engine.Decision{Action: engine.Replace, Value: map[string]any{"n": 7, "items": 0}}, Move: Continue})
	if got := resultJSON(t, st); got != `{"items":0,"n":7}` {
		t.Errorf("output %s", got)
	}
}

func TestBreakOnError(t *testing.T) {
	plan := strings.Replace(chainPlan, `n: "{{E0.n}}", items`, `n: "{{E0.nope}}", items`, 1)
	s := newSession(t, plan, "")
	st := s.Start(context.Background(), nil)
	if st.Reason != "error" || st.Stop.Path != "E2" || !strings.Contains(st.Stop.Error, "bad path 'E0.nope'") {
		t.Fatalf("stopped %s (%s): %s", where(st), st.Reason, st.Stop.Error)
	}
	st = do(t, s, Command{Decision: engine.Decision{Action: engine.Replace, Value: map[string]any{"n": 0, "items": 0}}, Move: Continue})
	if got := resultJSON(t, st); got != `{"items":0,"n":0}` {
		t.Errorf("output %s", got)
	}

	s = newSession(t, plan, "")
	s.Table().BreakOnError(false)
	if st := s.Start(context.Background(), nil); !st.Finished || st.Status != engine.StatusFailed {
		t.Errorf("without break on error: %s %s", where(st), st.Status)
	}
}

// TestAllStop stops one item of a concurrent map and checks that the
// others are held at their next stop until the run goes on.
func TestAllStop(t *testing.T) {
	s := newSession(t, `
identifier: wide
steps:
  - id: E1
    tool_name: map
    input:
      over: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63]
      concurrency: 4
      do:
        tool_name: builtin__reshape
        input: { shape: { v: "{{item}}" } }
output: { count: "{{E1.count}}" }
`, "")
	s.Table().Set("E1/do.2", []engine.StopKind{engine.StopStep}, nil)
	st := s.Start(context.Background(), nil)
	if where(st) != "step E1/do.2" {
		t.Fatalf("stopped at %s", where(st))
	}
	// Items that finished before item 2 stopped are gone, but the workers
	// they freed take later items, which are held at their first stop;
	// the plan's own thread waits in the map. The items are many, so that
	// some are left to be held however late item 2's goroutine comes to
	// its stop (with eight, all seven others had once finished by then).
	var threads []Thread
	var stopped, held []string
	for deadline := time.Now().Add(2 * time.Second); len(held) < 2 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		threads, stopped, held = s.Threads(), nil, nil
		for _, th := range threads {
			if th.Stopped {
				stopped = append(stopped, th.ID)
			}
			if th.Held {
				held = append(held, th.ID)
			}
		}
	}
	if len(threads) < 3 || threads[0].ID != "main" || threads[0].Held || threads[0].Path != "E1" ||
		strings.Join(stopped, " ") != "E1/do.2" || len(held) < 2 {
		t.Fatalf("threads %+v", threads)
	}
	st = do(t, s, Command{Move: Continue})
	if got := resultJSON(t, st); got != `{"count":64}` {
		t.Errorf("output %s", got)
	}
}

func TestAbortAndAsk(t *testing.T) {
	s := newSession(t, chainPlan, "")
	s.Table().Set("E1", nil, nil)
	s.Start(context.Background(), nil)
	st := do(t, s, Command{Decision: engine.Decision{Action: engine.Abort}})
	if !st.Finished || st.Status != engine.StatusAborted {
		t.Errorf("after abort: %s %s", where(st), st.Status)
	}

	s = newSession(t, `
identifier: asks
steps:
  - id: Q
    tool_name: ask
    input:
      prompt: "Go?"
      output_schema: { type: object, required: [go], properties: { go: { type: boolean, description: Go } } }
output: { answer: "{{Q.answer.go}}" }
`, "")
	st = s.Start(context.Background(), nil)
	if st.Reason != "ask" || st.Stop.Ask == nil || st.Stop.Ask.Prompt != "Go?" {
		t.Fatalf("stopped %s (%s)", where(st), st.Reason)
	}
	st = do(t, s, Command{Decision: engine.Decision{Action: engine.Answer, Value: map[string]any{"go": true}}, Move: Continue})
	if got := resultJSON(t, st); got != `{"answer":true}` {
		t.Errorf("output %s", got)
	}
}

// BenchmarkStopWithMissingBreakpoints is the cost the debugger adds to a
// stop that none of 100 breakpoints matches.
func BenchmarkStopWithMissingBreakpoints(b *testing.B) {
	s := &Session{bps: NewBreakpoints(), hits: map[int]int{}, conditionErrors: map[int]string{}, states: make(chan State, 1)}
	for i := 0; i < 100; i++ {
		if _, err := s.bps.Set("E9"+strconv.Itoa(i)+"/do.*/agent.2", nil, nil); err != nil {
			b.Fatal(err)
		}
	}
	st := &engine.Stop{Kind: engine.StopStep, Path: "E1/do.3/agent.2/tracker__get_issue", Stack: []engine.Frame{{Kind: path.KindPlan}, {Path: "E1", Kind: path.KindStep}, {Path: "E1/do.3", Kind: path.KindItem}}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if d := s.hook(ctx, st); d.Action != engine.Proceed {
			b.Fatal(d)
		}
	}
}

// goPlan asks one yes-or-no question and outputs the answer.
const goPlan = `
identifier: asks
steps:
  - id: Q
    tool_name: ask
    input:
      prompt: "Go?"
      output_schema: { type: object, required: [go], properties: { go: { type: boolean, description: Go } } }
output: { answer: "{{Q.answer.go}}" }
`

func TestRefusedDecisions(t *testing.T) {
	s := newSession(t, goPlan, "")
	st := s.Start(context.Background(), nil)
	if _, err := s.Do(Command{Decision: engine.Decision{Action: engine.Inject, Value: 1}}); err == nil || !strings.Contains(err.Error(), "an ask stop does not take inject") {
		t.Errorf("inject at an ask: %v", err)
	}
	if _, err := s.Do(Command{Decision: engine.Decision{Action: engine.Answer, Value: map[string]any{"go": "yes"}}}); err == nil || !strings.Contains(err.Error(), "does not fit the schema that applies here: /go") {
		t.Errorf("a wrong answer: %v", err)
	}
	if threads := s.Threads(); len(threads) != 1 || threads[0].Path != st.Stop.Path {
		t.Errorf("the run moved on: %+v", threads)
	}
	st = do(t, s, Command{Decision: engine.Decision{Action: engine.Answer, Value: map[string]any{"go": false}}})
	if got := resultJSON(t, st); got != `{"answer":false}` {
		t.Errorf("output %s", got)
	}
}

// TestAbortReachesHeldThreads aborts while other items are held: they
// abort too instead of stopping, and the run ends.
func TestAbortReachesHeldThreads(t *testing.T) {
	s := newSession(t, strings.Replace(chainPlan, "over: [a, b]", "over: [a, b, c, d]\n      concurrency: 4", 1), "")
	s.Table().Set("E1/do.*/A", []engine.StopKind{engine.StopStep}, nil)
	s.Start(context.Background(), nil)
	st := do(t, s, Command{Decision: engine.Decision{Action: engine.Abort}})
	if !st.Finished || st.Status != engine.StatusAborted {
		t.Errorf("after abort: %s %s", where(st), st.Status)
	}
}

// TestCancelWhileHeld cancels the run's context while it is held at a
// stop: the run ends as aborted and nothing hangs.
func TestCancelWhileHeld(t *testing.T) {
	s := newSession(t, chainPlan, "")
	s.Table().Set("E1", nil, nil)
	ctx, cancel := context.WithCancel(context.Background())
	s.Start(ctx, nil)
	cancel()
	done := make(chan State)
	go func() { done <- s.Wait() }()
	select {
	case st := <-done:
		if !st.Finished || st.Status != engine.StatusAborted {
			t.Errorf("after cancel: %s %s", where(st), st.Status)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the session hung after its context was cancelled")
	}
	if _, err := s.Do(Command{}); err == nil {
		t.Error("a command after the end was taken")
	}
}

// TestNextOverAnAgent checks the stacks of an agent's stops: next from the
// agent step goes over its rounds, tool calls and repairs to the step
// after it, and step out of a tool call lands back in its round's
// parents.
func TestNextOverAnAgent(t *testing.T) {
	plan := `
identifier: agentic
steps:
  - id: E1
    tool_name: agent
    input:
      prompt: count
      tools: ["builtin__reshape"]
      output_schema: { type: object, required: [n], properties: { n: { type: integer } } }
  - id: E2
    tool_name: builtin__reshape
    input: { shape: { n: "{{E1.output.n}}" } }
output: { n: "{{E2.n}}" }
`
	replies := "  - match: E1\n    reply: { tool_calls: [ { name: builtin__reshape, arguments: { shape: {} } } ] }\n" +
		"  - match: E1\n    reply: { json: { n: wrong } }\n  - match: E1\n    role: repair\n    reply: { json: { n: 5 } }\n"
	s := newSession(t, plan, replies)
	s.Table().Set("E1", []engine.StopKind{engine.StopStep}, nil)
	s.Start(context.Background(), nil)
	if got := where(do(t, s, Command{Move: Next})); got != "result E1" {
		t.Errorf("next over the agent went to %s", got)
	}

	s = newSession(t, plan, replies)
	s.Table().Set("E1/agent.1/builtin__reshape", []engine.StopKind{engine.StopTool}, nil)
	st := s.Start(context.Background(), nil)
	var kinds []string
	for _, f := range st.Stop.Stack {
		kinds = append(kinds, f.Kind.String())
	}
	if strings.Join(kinds, " ") != "plan step round tool" {
		t.Errorf("a tool call's stack: %v", kinds)
	}
	if got := where(do(t, s, Command{Move: StepOut})); got != "round E1/agent.2" {
		t.Errorf("step out of the tool call went to %s", got)
	}
	if got := where(do(t, s, Command{Move: StepIn})); got != "reply E1/agent.2" {
		t.Errorf("step went to %s", got)
	}
	if got := where(do(t, s, Command{Move: StepIn})); got != "repair E1/agent.2/repair" {
		t.Errorf("step went to %s", got)
	}
	if got := where(do(t, s, Command{Move: StepOut})); got != "result E1" {
		t.Errorf("step out of the repair went to %s", got)
	}
}

// TestConditionError sets a breakpoint whose condition reads a root the
// scope lacks: it never stops, and says why.
func TestConditionError(t *testing.T) {
	s := newSession(t, `
identifier: plain
steps:
  - id: E1
    tool_name: builtin__reshape
    input: { shape: { n: 1 } }
output: { n: "{{E1.n}}" }
`, "")
	cond, err := ParseCondition("{{nope.x}} eq 1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Table().Set("E1", []engine.StopKind{engine.StopStep}, cond); err != nil {
		t.Fatal(err)
	}
	if st := s.Start(context.Background(), nil); !st.Finished {
		t.Fatalf("held at %s", where(st))
	}
	if b := s.Breakpoints()[0]; !strings.Contains(b.ConditionError, "nope") {
		t.Errorf("the condition's error is %q", b.ConditionError)
	}
}

// agenticPlan runs an agent step with an output schema, and a step that
// reads its output.
const agenticPlan = `
identifier: agentic
steps:
  - id: E1
    tool_name: agent
    input:
      prompt: count
      output_schema: { type: object, required: [n], properties: { n: { type: integer } } }
  - id: E2
    tool_name: builtin__reshape
    input: { shape: { n: "{{E1.output.n}}" } }
output: { n: "{{E2.n}}" }
`

// TestInjectAtAnAgent checks a value injected for an agent step against
// the shape of an agent's result, its output in the output schema, and
// the skeleton an editor starts from.
func TestInjectAtAnAgent(t *testing.T) {
	s := newSession(t, agenticPlan, "")
	s.Table().Set("E1", []engine.StopKind{engine.StopStep}, nil)
	st := s.Start(context.Background(), nil)
	if st.Stop == nil || st.Stop.Schema == nil || asJSON(st.Stop.Prefill) != `{"final":false,"iterations":0,"output":{"n":0},"tools_called":[]}` {
		t.Fatalf("at the agent: schema %v, prefill %s", st.Stop.Schema, asJSON(st.Stop.Prefill))
	}
	if _, err := s.Do(Command{Decision: engine.Decision{Action: engine.Inject, Value: map[string]any{"output": map[string]any{"n": "five"}}}}); err == nil || !strings.Contains(err.Error(), "/output/n") {
		t.Errorf("a wrong output was taken: %v", err)
	}
	result := map[string]any{"output": map[string]any{"n": 5}, "iterations": 1, "tools_called": []any{}, "final": true}
	st = do(t, s, Command{Decision: engine.Decision{Action: engine.Inject, Value: result}, Move: Continue})
	if !st.Finished || asJSON(st.Output) != `{"n":5}` {
		t.Errorf("the run ended %s with %s", st.Status, asJSON(st.Output))
	}
}

// TestInjectIsChecked checks a value injected at a step against the output
// schema its tool declares, and the prefill a front end starts from.
func TestInjectIsChecked(t *testing.T) {
	s := newSessionWith(t, `
identifier: checked
steps:
  - id: E0
    tool_name: user__card
    input: { id: X-1 }
output: { card: "{{E0}}" }
`, "", map[string]string{".stepwise/tools/card.yaml": `
name: card
description: A card.
kind: reshape
shape: { id: "{{input.id}}", severity: sev3 }
input_schema: { type: object, required: [id], properties: { id: { type: string } } }
output_schema:
  type: object
  required: [id, severity]
  properties:
    id: { type: string }
    severity: { enum: [sev1, sev2, sev3] }
`})
	s.Table().Set("E0", []engine.StopKind{engine.StopStep}, nil)
	st := s.Start(context.Background(), nil)
	if st.Stop.Schema == nil || asJSON(st.Stop.Prefill) != `{"id":"","severity":"sev1"}` {
		t.Errorf("schema %v, prefill %s", st.Stop.Schema, asJSON(st.Stop.Prefill))
	}
	if _, err := s.Do(Command{Decision: engine.Decision{Action: engine.Inject, Value: map[string]any{"id": "X-1", "severity": "loud"}}}); err == nil || !strings.Contains(err.Error(), "/severity") {
		t.Errorf("an injected value off the schema: %v", err)
	}
	st = do(t, s, Command{Decision: engine.Decision{Action: engine.Inject, Value: map[string]any{"id": "X-1", "severity": "sev2"}}, Move: Continue})
	if got := resultJSON(t, st); got != `{"card":{"id":"X-1","severity":"sev2"}}` {
		t.Errorf("output %s", got)
	}
}

func asJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestSpendCapHolds checks that a run past its spend cap holds at the
// stop of its next model call, even with break on error off: an agent
// round at its round stop, where a reply given by hand spends nothing, and
// another model call at its step's error stop, where a value given by hand
// stands for the step's. Going on lets the failure reach the step's error
// stop, and on from there the run fails with the spend.
func TestSpendCapHolds(t *testing.T) {
	plan := `
identifier: capped
steps:
  - id: E1
    tool_name: builtin__infer
    input: { instruction: expensive }
  - id: E2
    tool_name: agent
    input:
      prompt: count
      output_schema: { type: object, required: [n], properties: { n: { type: integer } } }
  - id: E3
    tool_name: builtin__infer
    input: { instruction: cheap }
output: { n: "{{E2.output.n}}", last: "{{E3.text}}" }
`
	replies := `  - match: E1
    reply: { text: spent, usage: { input_tokens: 1000000, output_tokens: 0 } }
  - match: E2
    reply: { json: { n: 1 } }
  - match: E3
    reply: { text: never }
`
	config := map[string]string{".stepwise/config.toml": "[providers.s]\ntype = \"script\"\nfile = \"replies.yaml\"\n[models]\ndefault = { provider = \"s\", model = \"m\" }\n" +
		"[storage]\nbackend = \"memory\"\n[pricing.m]\ninput = 1.0\noutput = 1.0\n[limits]\ncost_usd = 0.5\n"}

	s := newSessionWith(t, plan, replies, config)
	s.Table().BreakOnError(false)
	st := s.Start(context.Background(), nil)
	if st.Reason != "spend cap" || where(st) != "round E2/agent.1" || !strings.Contains(st.Stop.Error, "spend cap reached: the run's priced model calls cost $1.0000, and its cap is $0.50 ") {
		t.Fatalf("held at %s (%s): %s", where(st), st.Reason, st.Stop.Error)
	}
	st = do(t, s, Command{Decision: engine.Decision{Action: engine.Replace, Value: map[string]any{"n": 7}}, Move: Continue})
	if st.Reason != "spend cap" || where(st) != "error E3" {
		t.Fatalf("then held at %s (%s): %s", where(st), st.Reason, st.Stop.Error)
	}
	st = do(t, s, Command{Decision: engine.Decision{Action: engine.Replace, Value: map[string]any{"text": "by hand"}}, Move: Continue})
	if !st.Finished || asJSON(st.Output) != `{"last":"by hand","n":7}` {
		t.Fatalf("the run ended %s %s with %s", st.Status, st.Error, asJSON(st.Output))
	}

	s = newSessionWith(t, plan, replies, config)
	st = s.Start(context.Background(), nil)
	st = do(t, s, Command{Move: Continue})
	if st.Reason != "spend cap" || where(st) != "error E2" {
		t.Fatalf("going on from the round stop held at %s (%s)", where(st), st.Reason)
	}
	st = do(t, s, Command{Move: Continue})
	if !st.Finished || st.Status != engine.StatusFailed || !strings.Contains(st.Error, "step E2 (agent): spend cap reached") {
		t.Errorf("going on from the round stop: %s %s", st.Status, st.Error)
	}
}

// TestAnswerBeforeTheAsk: an answer given at an ask step's step stop, one
// stop early, is refused with what that stop takes and where the question
// comes: tool call actions are not offered at a control step.
func TestAnswerBeforeTheAsk(t *testing.T) {
	s := newSession(t, goPlan, "")
	s.Hold()
	if st := s.Start(context.Background(), nil); st.Stop.Kind != engine.StopStep {
		t.Fatalf("first stop %s", where(st))
	}
	_, err := s.Do(Command{Decision: engine.Decision{Action: engine.Answer, Value: map[string]any{"go": true}}})
	if err == nil || err.Error() != "a step stop does not take answer (it takes inject); the question comes at the ask stop after this one: next goes there" {
		t.Errorf("answer at the ask's step stop: %v", err)
	}
	do(t, s, Command{Decision: engine.Decision{Action: engine.Abort}})
}

// answeringPlan is one agent step that answers at once, as
// answeringReplies has its model reply.
const (
	answeringPlan = `
identifier: answering
steps:
  - id: E1
    tool_name: agent
    input:
      prompt: count
      output_schema: { type: object, required: [n], properties: { n: { type: integer } } }
output: { n: "{{E1.output.n}}" }
`
	answeringReplies = "  - match: E1\n    reply: { json: { n: 1 } }\n"
)

// TestReplaceAnAnswerReply: held at the reply of a round that answers,
// the value to edit is the answer as the output schema describes it, not
// a reply object with the answer escaped in its text; giving it back
// replaces the reply with that answer.
func TestReplaceAnAnswerReply(t *testing.T) {
	s := newSession(t, answeringPlan, answeringReplies)
	if _, err := s.Table().Set("E1/agent.1", []engine.StopKind{engine.StopReply}, nil); err != nil {
		t.Fatal(err)
	}
	st := s.Start(context.Background(), nil)
	if where(st) != "reply E1/agent.1" {
		t.Fatalf("stopped at %s", where(st))
	}
	if got, _ := json.Marshal(st.Stop.Prefill); string(got) != `{"n":1}` {
		t.Errorf("the editor starts from %s, want the answer {\"n\":1}", got)
	}
	if sch, _ := st.Stop.Schema.(map[string]any); sch["required"] == nil {
		t.Errorf("the schema at the reply is %v, want the output schema", st.Stop.Schema)
	}
	st = do(t, s, Command{Decision: engine.Decision{Action: engine.Replace, Value: map[string]any{"n": 7}}, Move: Continue})
	if got := resultJSON(t, st); got != `{"n":7}` {
		t.Errorf("output %s, want the replaced answer", got)
	}
}

// TestReplaceBeforeTheCall: held before a round's model call, the value
// to edit starts from the skeleton of an answer in the output schema.
func TestReplaceBeforeTheCall(t *testing.T) {
	s := newSession(t, answeringPlan, answeringReplies)
	if _, err := s.Table().Set("E1/agent.1", []engine.StopKind{engine.StopRound}, nil); err != nil {
		t.Fatal(err)
	}
	st := s.Start(context.Background(), nil)
	if where(st) != "round E1/agent.1" {
		t.Fatalf("stopped at %s", where(st))
	}
	if got, _ := json.Marshal(st.Stop.Prefill); string(got) != `{"n":0}` || st.Stop.Schema == nil {
		t.Errorf("the editor starts from %s with schema %v, want an answer skeleton {\"n\":0} in the output schema", got, st.Stop.Schema)
	}
	st = do(t, s, Command{Decision: engine.Decision{Action: engine.Replace, Value: map[string]any{"n": 3}}, Move: Continue})
	if got := resultJSON(t, st); got != `{"n":3}` {
		t.Errorf("output %s, want the given answer", got)
	}
}

// TestSetStaysAtTheStop: a value Set gives a stop is checked as a
// decision is, shown at the stop while the run stays held, replaced by a
// later Set, and carried out by the next movement that brings none.
func TestSetStaysAtTheStop(t *testing.T) {
	s := newSession(t, chainPlan, "")
	s.Table().Set("E2", []engine.StopKind{engine.StopResult}, nil)
	s.Start(context.Background(), nil)
	if _, err := s.Set(engine.Decision{Action: engine.Answer, Value: 1}); err == nil || !strings.Contains(err.Error(), "does not take answer") {
		t.Errorf("an answer at a result stop: %v", err)
	}
	if _, err := s.Set(engine.Decision{Action: engine.Abort}); err == nil {
		t.Error("set took an abort, which is no value")
	}
	if _, err := s.Set(engine.Decision{Action: engine.Replace, Value: map[string]any{"n": 5, "items": 1}}); err != nil {
		t.Fatal(err)
	}
	st, err := s.Set(engine.Decision{Action: engine.Replace, Value: map[string]any{"n": 7, "items": 0}})
	if err != nil {
		t.Fatal(err)
	}
	if where(st) != "result E2" || st.Stop.Set != "replace" || asJSON(st.Stop.Output) != `{"items":0,"n":7}` {
		t.Errorf("after set: %s, set %q, output %s", where(st), st.Stop.Set, asJSON(st.Stop.Output))
	}
	if v, err := st.Stop.Eval("E2.n"); err != nil || asJSON(v) != "7" {
		t.Errorf("the step's own result at its stop reads %v (%v), want the value set", v, err)
	}
	again, _ := s.Exec(Instruction{Verb: VerbWhere})
	if again.State.Stop.Set != "replace" {
		t.Errorf("where after set does not show it: %+v", again.State.Stop)
	}
	if got := resultJSON(t, do(t, s, Command{Move: Continue})); got != `{"items":0,"n":7}` {
		t.Errorf("output %s, want the value set", got)
	}
}

// TestReplaceAnAskResult: the result of an ask step, replaced at its
// result stop, is checked as {answer, answered} with the answer in the
// ask's output_schema, as a fork's value for it is.
func TestReplaceAnAskResult(t *testing.T) {
	s := newSession(t, goPlan, "")
	s.Table().Set("Q", []engine.StopKind{engine.StopResult}, nil)
	st := s.Start(context.Background(), nil)
	st = do(t, s, Command{Decision: engine.Decision{Action: engine.Answer, Value: map[string]any{"go": true}}, Move: Continue})
	if st.Stop == nil || st.Stop.Kind != engine.StopResult || st.Stop.Schema == nil {
		t.Fatalf("not at Q's result stop with a schema: %+v", st.Stop)
	}
	for _, bad := range []any{map[string]any{"post": "maybe"}, map[string]any{"answer": map[string]any{"go": "maybe"}, "answered": true}} {
		if _, err := s.Do(Command{Decision: engine.Decision{Action: engine.Replace, Value: bad}}); err == nil || !strings.Contains(err.Error(), "does not fit the schema that applies here") {
			t.Errorf("replace with %s: %v", asJSON(bad), err)
		}
	}
	st = do(t, s, Command{Decision: engine.Decision{Action: engine.Replace, Value: map[string]any{"answer": map[string]any{"go": false}, "answered": true}}, Move: Continue})
	if got := resultJSON(t, st); got != `{"answer":false}` {
		t.Errorf("output %s", got)
	}
	// goPlan lacks a name and description, which the schema does not need.
	plan, _ := plans.Load("asks.yaml", []byte(goPlan), plans.Stepwise)
	if ResultSchema(plan, nil, "Q") == nil {
		t.Error("no result schema for the ask step Q")
	}
}

// pairPlan runs two items side by side, each two steps long, the first
// napping a little in its first step.
const pairPlan = `
identifier: pair
steps:
  - id: E1
    tool_name: map
    input:
      over: [0.3, 0]
      concurrency: 2
      do:
        - id: A
          tool_name: user__nap
          input: { seconds: "{{item}}" }
        - id: B
          tool_name: builtin__reshape
          input: { shape: { w: "{{A.slept}}" } }
output: { count: "{{E1.count}}" }
`

// napTool sleeps for its seconds, then says how long.
var napTool = map[string]string{".stepwise/tools/nap.yaml": `name: nap
description: Naps.
kind: exec
command: sh
args: ["-c", "sleep {{input.seconds}}; echo '{\"slept\": {{input.seconds}}}'"]
output: json
input_schema: { type: object, properties: { seconds: { type: number } } }
`}

// TestStepStaysInItsThread: step from a stop in a map item goes to the
// next stop of that item, though the other item is held at a stop of its
// own meanwhile, and goes on while item 0 naps; once the item has ended,
// to the next stop anywhere.
func TestStepStaysInItsThread(t *testing.T) {
	s := newSessionWith(t, pairPlan, "", napTool)
	s.Table().Set("E1/do.0/A", []engine.StopKind{engine.StopStep}, nil)
	st := s.Start(context.Background(), nil)
	if where(st) != "step E1/do.0/A" {
		t.Fatalf("first stop %s", where(st))
	}
	// Item 1 comes to its first stop while item 0 is held there.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		held := 0
		for _, th := range s.Threads() {
			if th.Held {
				held++
			}
		}
		if held == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("item 1 was never held: %+v", s.Threads())
		}
	}
	var got []string
	for range 4 {
		st := do(t, s, Command{Move: StepIn})
		got = append(got, where(st)+" in "+st.Stop.Thread)
	}
	want := "result E1/do.0/A in E1/do.0, step E1/do.0/B in E1/do.0, result E1/do.0/B in E1/do.0, result E1 in main"
	if strings.Join(got, ", ") != want {
		t.Errorf("steps\n got %s\nwant %s", strings.Join(got, ", "), want)
	}
}

// TestStepOutOfATopLevelStep: a top-level step has nothing shallower, so
// out stops at the next stop at its depth: from its step stop, its result;
// from its result, the next step's stop.
func TestStepOutOfATopLevelStep(t *testing.T) {
	s := newSession(t, chainPlan, "")
	s.Hold()
	st := s.Start(context.Background(), nil)
	var got []string
	for range 3 {
		st = do(t, s, Command{Move: StepOut})
		got = append(got, where(st)+" ("+string(st.Reason)+")")
	}
	if want := "result E0 (step out), step E1 (step out), result E1 (step out)"; strings.Join(got, ", ") != want {
		t.Errorf("out at the top level\n got %s\nwant %s", strings.Join(got, ", "), want)
	}
}

// TestEveryMatchingBreakpointIsHit: a failing step's one stop, its error
// stop, is hit by a result breakpoint and an error breakpoint on it alike;
// the first stops the run.
func TestEveryMatchingBreakpointIsHit(t *testing.T) {
	s := newSessionWith(t, `
identifier: failing
steps:
  - id: F
    tool_name: user__fail
    input: {}
`, "", map[string]string{".stepwise/tools/fail.yaml": "name: fail\ndescription: Fails.\nkind: exec\ncommand: sh\nargs: [\"-c\", \"exit 3\"]\noutput: json\ninput_schema: { type: object, properties: {} }\n"})
	s.Table().Set("F", []engine.StopKind{engine.StopResult}, nil)
	s.Table().Set("F", []engine.StopKind{engine.StopError}, nil)
	st := s.Start(context.Background(), nil)
	if where(st) != "error F" || st.Reason != "breakpoint 1 (F)" {
		t.Fatalf("stopped at %s by %s", where(st), st.Reason)
	}
	var hits []string
	for _, b := range s.Breakpoints() {
		hits = append(hits, fmt.Sprintf("%d %s hits %d", b.ID, b.Spec(), b.Hits))
	}
	if got := strings.Join(hits, ", "); got != "1 F result hits 1, 2 F error hits 1" {
		t.Errorf("hits: %s", got)
	}
}

// TestCancelWhileGoing: a run cancelled while it goes (ctrl-c, SIGTERM)
// fails its call in progress with the cancellation; that failure is no
// stop a person can act on, so the run ends aborted, never held at an
// error stop made of it.
func TestCancelWhileGoing(t *testing.T) {
	s := newSessionWith(t, `
identifier: napping
steps:
  - id: N
    tool_name: user__nap
    input: {}
  - id: After
    tool_name: builtin__reshape
    input: { shape: { ok: true } }
`, "", map[string]string{".stepwise/tools/nap.yaml": "name: nap\ndescription: Naps.\nkind: exec\ncommand: sh\nargs: [\"-c\", \"sleep 5; echo '{}'\"]\noutput: json\ninput_schema: { type: object, properties: {} }\n"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	time.AfterFunc(300*time.Millisecond, cancel)
	done := make(chan State, 1)
	go func() { done <- s.Start(ctx, nil) }()
	select {
	case st := <-done:
		if !st.Finished || st.Status != engine.StatusAborted {
			t.Errorf("cancelled while going, the run came to %s (%s, %s)", where(st), st.Reason, st.Status)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the session hung after its context was cancelled")
	}
}

// TestReadersOfAReply: at a round's stops the value is a reply, which the
// agent's last reply becomes the agent step's result: the stop lists the
// agent's readers, saying so; a step's own stop lists them plainly.
func TestReadersOfAReply(t *testing.T) {
	s := newSession(t, agenticPlan, "  - match: E1\n    reply: { json: { n: 5 } }\n")
	s.Table().Set("E1/agent.1", []engine.StopKind{engine.StopRound, engine.StopReply}, nil)
	s.Table().Set("E1", []engine.StopKind{engine.StopResult}, nil)
	const want = "E2: E1.output.n"
	for _, tc := range []struct{ where, suffix string }{
		{"round E1/agent.1", " once this reply, calling no tool, is E1's result"},
		{"reply E1/agent.1", " once this reply, calling no tool, is E1's result"},
		{"result E1", ""},
	} {
		var st State
		if tc.where == "round E1/agent.1" {
			st = s.Start(context.Background(), nil)
		} else {
			st = do(t, s, Command{Move: Continue})
		}
		if where(st) != tc.where {
			t.Fatalf("held at %s, want %s", where(st), tc.where)
		}
		if got := strings.Join(st.Stop.Readers, "; "); got != want+tc.suffix {
			t.Errorf("readers at %s: %q, want %q", tc.where, got, want+tc.suffix)
		}
	}
}

// TestReadersOnePerStep lists a step that reads several fields of a result
// once, with every field it reads.
func TestReadersOnePerStep(t *testing.T) {
	s := newSessionWith(t, `identifier: readers
steps:
  - id: E0
    tool_name: user__card
    input: { id: X-1 }
  - id: E1
    tool_name: user__card
    input: { id: "{{E0.id}} at {{E0.severity}}, again {{E0.id}}" }
`, "", map[string]string{".stepwise/tools/card.yaml": `
name: card
description: A card.
kind: reshape
shape: { id: "{{input.id}}", severity: sev3 }
input_schema: { type: object, required: [id], properties: { id: { type: string } } }
`})
	s.Table().Set("E0", []engine.StopKind{engine.StopStep}, nil)
	st := s.Start(context.Background(), nil)
	if st.Stop == nil {
		t.Fatalf("no stop at E0: %+v", st)
	}
	if want := []string{"E1: E0.id, E0.severity"}; !slices.Equal(st.Stop.Readers, want) {
		t.Errorf("readers of E0: %q, want %q", st.Stop.Readers, want)
	}
}
