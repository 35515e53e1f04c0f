package live_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stepwise-dev/stepwise/debugger/timeline"
	"github.com/stepwise-dev/stepwise/debugger/workspace"
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/tui/live"
	"github.com/stepwise-dev/stepwise/tui/live/livetest"
)

// heldPlan has a unit of every kind a person can hold: a map whose items
// run an agent step (its rounds, a round's tool call), a called plan, and
// an ask.
const heldPlan = `
identifier: held
steps:
  - id: E1
    tool_name: map
    input:
      over: [a, b]
      concurrency: 2
      do:
        - id: V
          tool_name: agent
          input:
            prompt: "Judge {{item}}."
            tools: ["builtin__reshape"]
            output_schema: { type: object, required: [ok], properties: { ok: { type: boolean } } }
  - id: E2
    tool_name: plan__inner
    input: {}
  - id: E3
    tool_name: ask
    input:
      prompt: "Go on?"
      output_schema: { type: object, required: [go], properties: { go: { type: boolean } } }
`

const heldReplies = `
replies:
  - match: "E1/do.0/V"
    reply:
      text: "Let me look."
      tool_calls: [ { name: builtin__reshape, arguments: { shape: { n: 0 } } } ]
  - match: "E1/do.0/V"
    reply: { json: { ok: true } }
  - match: "E1/do.1/V"
    reply:
      text: "Let me look."
      tool_calls: [ { name: builtin__reshape, arguments: { shape: { n: 1 } } } ]
  - match: "E1/do.1/V"
    reply: { json: { ok: false } }
`

// TestHeldTimeAgrees runs heldPlan through the real engine with a hook
// that holds a person's while at a body step's step stop, a round's round
// stop, another round's reply stop, a round's tool call, a called plan's
// step and an ask, as the workbench's session does (laying out the unit
// at each stop, as the workbench's tree does). Every unit's time is its
// wall time with the held part beside it, never more held than wall, and
// the tree built as the run went, the tree read back from the store, the
// timeline, and the step and tool call records that inspect prints all
// say the same figures.
func TestHeldTimeAgrees(t *testing.T) {
	dir, ws := livetest.Project(t, map[string]string{
		"config.toml":      strings.Replace(livetest.Config, `backend = "memory"`, `backend = "sqlite"`, 1),
		"plans/inner.yaml": innerPlan, "plans/p.yaml": heldPlan, "replies.yaml": heldReplies})
	plan := livetest.Plan(t, dir, "plans/p.yaml")
	const hold = 150 * time.Millisecond
	holdAt := func(st *engine.Stop) bool {
		switch st.Kind {
		case engine.StopStep:
			return st.Path == "E1/do.0/V" || st.Path == "E2/inner/S0"
		case engine.StopRound:
			return st.Path == "E1/do.1/V/agent.1"
		case engine.StopReply:
			return st.Path == "E1/do.0/V/agent.2"
		case engine.StopTool:
			return strings.HasPrefix(st.Path, "E1/do.1/V/agent.1/")
		case engine.StopAsk:
			return true
		}
		return false
	}
	tree, reopened, res, events := runHeld(t, ws, plan, func(st *engine.Stop) (time.Duration, engine.Decision) {
		if !holdAt(st) {
			return 0, engine.Decision{}
		}
		if st.Kind == engine.StopAsk {
			return hold, engine.Decision{Action: engine.Answer, Value: map[string]any{"go": true}}
		}
		return hold, engine.Decision{}
	})
	if res.Status != engine.StatusOK {
		t.Fatalf("run: %+v", res)
	}
	detail, _, err := ws.RunEvents(context.Background(), res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	bars := timeline.FromEvents(events)

	// Every unit, in every view: held no more than wall, and the same
	// figures live and read back.
	for _, tr := range []*live.Tree{tree, reopened} {
		for _, r := range tr.Rows(0, tr.Len()) {
			if r.Held > r.Duration {
				t.Errorf("%s: %v, %v of it held", r.Path, r.Duration, r.Held)
			}
		}
	}
	// A live event's time carries the monotonic clock, which a stored one
	// does not: the two may part by nanoseconds, never by a microsecond.
	same := func(a, b time.Duration) bool { return (a - b).Abs() < time.Microsecond }
	rows := map[string]live.Row{}
	for _, r := range reopened.Rows(0, reopened.Len()) {
		rows[r.Path] = r
	}
	for _, r := range tree.Rows(0, tree.Len()) {
		back, ok := rows[r.Path]
		if !ok || !same(back.Duration, r.Duration) || !same(back.Held, r.Held) {
			t.Errorf("%s: %v, %v held live; %v, %v read back", r.Path, r.Duration, r.Held, back.Duration, back.Held)
		}
		b, ok := bars.Bar(r.Path)
		if !ok {
			continue // a unit that never ran (the output) has no bar
		}
		// A bar starts at the earlier of its start event and its end less
		// its time, the tree's row at the latter: under load the two part
		// by tens of microseconds, which no timeline draws.
		near := func(a, b time.Duration) bool { return (a - b).Abs() < time.Millisecond }
		if wall := b.End.Sub(b.Start); !near(wall, back.Duration) || !same(b.Held, back.Held) {
			t.Errorf("%s: %v, %v held in the tree; %v, %v on the timeline", r.Path, back.Duration, back.Held, wall, b.Held)
		}
	}
	// The steps and tool calls as the store has them, which inspect
	// prints and the inspector's figures must match.
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	for _, st := range detail.Steps {
		if r := rows[st.Path]; r.Duration != ms(st.Ms) || r.Held != ms(st.HeldMs) {
			t.Errorf("step %s: %v, %v held in the tree; %.3fms, %.3fms held recorded", st.Path, r.Duration, r.Held, st.Ms, st.HeldMs)
		}
	}
	for _, c := range detail.ToolCalls {
		r, ok := rows[c.Path]
		if !ok || r.Kind != live.KindTool {
			continue // a step's own dispatch: the step's row says its time
		}
		if r.Duration != ms(c.Ms) || r.Held != ms(c.HeldMs) {
			t.Errorf("tool call %s: %v, %v held in the tree; %.3fms, %.3fms held recorded", c.Path, r.Duration, r.Held, c.Ms, c.HeldMs)
		}
	}

	// Each unit held shows it, and so does every unit around it: an item
	// its body's holds, a round those at its own stops and its calls', a
	// called plan its steps'.
	var call string
	for p := range rows {
		if strings.HasPrefix(p, "E1/do.1/V/agent.1/") {
			call = p
		}
	}
	for _, p := range []string{
		"E1/do.0/V", "E1/do.0", "E1/do.0/V/agent.2", "E1/do.1/V/agent.1", call, "E1/do.1", "E1",
		"E2/inner/S0", "E2/inner", "E2", "E3",
	} {
		if r, ok := rows[p]; !ok || r.Held < hold {
			t.Errorf("%s: %v, %v of it held; want %v held at least", p, r.Duration, r.Held, hold)
		}
	}
	// The map was held while both its items were, each stretch once.
	if e1, d0, d1 := rows["E1"], rows["E1/do.0"], rows["E1/do.1"]; e1.Held < max(d0.Held, d1.Held) || e1.Held > d0.Held+d1.Held || e1.Duration < max(d0.Duration, d1.Duration) {
		t.Errorf("E1: %v, %v held; its items %v, %v held and %v, %v held", e1.Duration, e1.Held, d0.Duration, d0.Held, d1.Duration, d1.Held)
	}
	if detail.Held < rows["E1"].Held+rows["E2"].Held+rows["E3"].Held-time.Millisecond {
		t.Errorf("the run shows %v held, less than its steps'", detail.Held)
	}
}

// runHeld runs plan through the real engine and a hook that lays out the
// unit at each stop, as the workbench's tree does, and holds a person's
// while (the first result of decide, none when zero) before it decides as
// decide says. It returns the tree built as the run went, the tree read
// back from the store, the run's end and its stored events.
func runHeld(t *testing.T, ws *workspace.Workspace, plan *plans.Plan, decide func(*engine.Stop) (time.Duration, engine.Decision)) (tree, reopened *live.Tree, res *engine.Result, events []engine.Event) {
	t.Helper()
	var mu sync.Mutex
	tree = live.New(plan)
	sink := engine.SinkFunc(func(e engine.Event) {
		mu.Lock()
		tree.Apply(e)
		mu.Unlock()
	})
	hook := func(_ context.Context, st *engine.Stop) engine.Decision {
		mu.Lock()
		tree.Expect(st.Path, st.Tool)
		mu.Unlock()
		hold, d := decide(st)
		if hold > 0 {
			st.Hold()
			time.Sleep(hold)
			st.Release()
		}
		return d
	}
	res, err := ws.Run(context.Background(), plan, nil, workspace.RunOptions{Sinks: []engine.Sink{sink}, Hook: hook})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	_, events, err = ws.RunEvents(context.Background(), res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	reopened = live.New(plan)
	for _, e := range events {
		reopened.Apply(e)
	}
	return tree, reopened, res, events
}
