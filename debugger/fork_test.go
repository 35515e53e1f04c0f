package debugger_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/engine"
)

// forkReplies answer only the model calls after E1: the agent and the
// verdict. A call for E1 would find no reply and fail the fork.
const forkReplies = `replies:
  - match: E2
    reply: { json: { found: "a typo" }, usage: { input_tokens: 200, output_tokens: 8 } }
  - match: E3
    role: judge
    reply: { json: { verdict: false, reason: "typos are not serious" } }
`

func TestFork(t *testing.T) {
	p := newTestProject(t)
	pl := p.plan(t, "chain", chainPlan)
	orig, rec := p.record(t, pl, nil)
	before := p.notes(t)

	writeFile(t, filepath.Join(p.dir, "replies.yaml"), forkReplies)
	opts, ev, done := p.options(t, p.models(), answerAsks)
	spec := debugger.ForkSpec{From: "E2", Sets: []debugger.ForkSet{{Path: "E1", Value: map[string]any{"text": "one typo"}}}}
	out, err := debugger.Fork(context.Background(), rec, pl, spec, opts)
	done()
	if err != nil {
		t.Fatal(err)
	}
	res := out.Run
	if res.Status != engine.StatusOK {
		t.Fatalf("the fork ended %s: %v", res.Status, res.Err)
	}
	if out.From != "E2" || !slices.Equal(out.Reused, []string{"E0"}) || !slices.Equal(out.Set, []string{"E1"}) || len(out.Unreached) != 0 {
		t.Errorf("fork from %s reused %v, set %v (unreached %v); want from E2, E0 reused, E1 set", out.From, out.Reused, out.Set, out.Unreached)
	}
	// Downstream steps see the set value; the model is called for the
	// steps from E2 on only.
	if got := plain(t, res.Output); !sameJSON(t, got, `{"summary":"one typo","found":"a typo","branch":"else","items":3,"ship":true}`) {
		t.Errorf("output %v", got)
	}
	if calls := ev.modelCalls(); !slices.Equal(calls, []string{"E2 s", "E3 s"}) {
		t.Errorf("model calls %v, want the agent's and the verdict's only", calls)
	}
	var prompt string
	for _, e := range ev.list {
		if c, ok := e.Payload.(engine.ModelCalled); ok && c.Site == "E2" {
			prompt = c.Request.Messages[1].Text()
		}
	}
	if prompt != "Look into one typo" {
		t.Errorf("the agent was asked %q", prompt)
	}
	// E0 was reused, not run: its note is not written again; the steps
	// from E2 on ran for real.
	added := strings.TrimPrefix(p.notes(t), before)
	if strings.Contains(added, "start bugs") || !strings.Contains(added, "fine") || !strings.Contains(added, "item a") {
		t.Errorf("the fork wrote %q", added)
	}

	// The fork is a run of its own; diff shows what changed.
	forked, err := p.store.Run(context.Background(), res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	diff := debugger.Diff(rec.Run, forked)
	var paths []string
	byPath := map[string]debugger.StepDiff{}
	for _, d := range diff {
		paths = append(paths, d.Path)
		byPath[d.Path] = d
	}
	want := []string{"E0", "E1", "E2", "E3", "E3/then", "E3/else", "E4", "E4/do.0", "E4/do.1", "E4/do.2", "E5"}
	if !sameSet(paths, want) || paths[0] != "E0" || slices.Index(paths, "E3/else") < slices.Index(paths, "E3") {
		t.Errorf("diff paths %v, want %v in plan order", paths, want)
	}
	if d := byPath["E0"]; d.StatusA != "ok" || d.StatusB != "skipped" || d.ResultA == nil || !reflect.DeepEqual(d.ResultA, d.ResultB) || !d.Same() {
		t.Errorf("E0: %+v, want the same result, reused", d)
	}
	// The results differ at one key: both values are told there.
	if d := byPath["E1"]; d.Same() || d.TokensDelta != -44 || d.TokensA != 44 || d.TokensB != 0 ||
		!reflect.DeepEqual(d.Changes, []debugger.ValueChange{{At: "text", A: "three bugs", B: "one typo"}}) {
		t.Errorf("E1: %+v, want another text and 44 fewer tokens", d)
	}
	if d := byPath["E3/then"]; d.StatusA != "ok" || d.StatusB != "" || d.ResultB != nil || len(d.Changes) != 1 || d.Changes[0].Only != "a" || d.Changes[0].At != "" {
		t.Errorf("E3/then: %+v, want it in A only", d)
	}
	// Each side of the diff counts what its run's end counted.
	countA, countB := debugger.Count(diff)
	if countA != (debugger.RunCounts{Steps: orig.StepsExecuted, Tokens: orig.Usage.Total()}) || countB != (debugger.RunCounts{Steps: res.StepsExecuted, Tokens: res.Usage.Total()}) {
		t.Errorf("the diff counts A %+v, B %+v; the runs counted %d steps, %d tokens and %d steps, %d tokens",
			countA, countB, orig.StepsExecuted, orig.Usage.Total(), res.StepsExecuted, res.Usage.Total())
	}
	if d := byPath["E4/do.1"]; !d.Same() || orig.Status != engine.StatusOK {
		t.Errorf("E4/do.1: %+v, want the same", d)
	}
}

func TestForkSpecs(t *testing.T) {
	p := newTestProject(t)
	pl := p.plan(t, "chain", chainPlan)
	_, rec := p.record(t, pl, nil)
	tests := []struct {
		name string
		spec debugger.ForkSpec
		want string // the error, or "" for a fork that runs
	}{
		{name: "no from", spec: debugger.ForkSpec{}, want: "the fork's start: give the path of a step"},
		{name: "from nothing recorded", spec: debugger.ForkSpec{From: "E9"}, want: "the fork's start E9: no step of run " + rec.Run.ID + " matches it; its steps: E0, E1, E2, E3, E4, E5"},
		{name: "a set the plan does not have", spec: debugger.ForkSpec{From: "E4", Sets: []debugger.ForkSet{{Path: "E3/maybe", Value: 1}}}, want: "the result set at E3/maybe: the plan has no step there"},
		{name: "a bad pattern", spec: debugger.ForkSpec{From: "E4", Sets: []debugger.ForkSet{{Path: "E4//x", Value: 1}}}, want: "the result set at E4//x: path pattern"},
		{name: "from a map item, an item set, a pattern", spec: debugger.ForkSpec{From: "E4/do.*", Sets: []debugger.ForkSet{{Path: "E4/do.2", Value: "set"}, {Path: "E3/else", Value: "never"}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			writeFile(t, filepath.Join(p.dir, "replies.yaml"), "replies: []\n")
			opts, ev, done := p.options(t, p.models(), nil)
			out, err := debugger.Fork(context.Background(), rec, pl, tc.spec, opts)
			done()
			if tc.want != "" {
				var se *debugger.ForkSpecError
				if !errors.As(err, &se) || !strings.HasPrefix(err.Error(), tc.want) {
					t.Fatalf("err = %v, want a ForkSpecError %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// The item fork: every step before the map reused (no model is
			// called, the replies are empty), the map runs, its item 2 set.
			// Two items run at once: either may have started first.
			if out.Run.Status != engine.StatusOK || out.From != "E4/do.0" && out.From != "E4/do.1" {
				t.Fatalf("fork from %s ended %s: %v", out.From, out.Run.Status, out.Run.Err)
			}
			// The other item of the two is a sibling: its recorded result
			// is reused, whenever it ran.
			sibling := map[string]string{"E4/do.0": "E4/do.1", "E4/do.1": "E4/do.0"}[out.From]
			if !sameSet(out.Reused, []string{"E0", "E1", "E2", "E3", sibling}) || !slices.Equal(out.Set, []string{"E4/do.2"}) || !slices.Equal(out.Unreached, []string{"E3/else"}) {
				t.Errorf("reused %v, set %v, unreached %v", out.Reused, out.Set, out.Unreached)
			}
			if calls := ev.modelCalls(); len(calls) != 0 {
				t.Errorf("model calls %v", calls)
			}
			if got := plain(t, out.Run.Output); !sameJSON(t, got, `{"summary":"three bugs","found":"a crash","branch":"then","items":3,"ship":false}`) {
				t.Errorf("output %v", got)
			}
		})
	}
}

// itemsPlan maps five items through two note steps each, then notes the
// count: every step that runs writes a line to notes.log.
const itemsPlan = `identifier: items
name: Items
description: Notes five items, then the count.
steps:
  - id: E1
    tool_name: map
    input:
      over: [1, 2, 3, 4, 5]
      concurrency: 2
      do:
        - id: A
          tool_name: user__note
          input: { text: "item {{item}}" }
        - id: B
          tool_name: user__note
          input: { text: "then {{A.noted}}" }
  - id: E2
    tool_name: user__note
    input: { text: "count {{E1.count}}" }
output: { items: "{{E1.results}}", count: "{{E2.noted}}" }
`

func TestForkMapItem(t *testing.T) {
	p := newTestProject(t)
	pl := p.plan(t, "items", itemsPlan)
	orig, rec := p.record(t, pl, nil)
	tests := []struct {
		name, from string
		// ran lists the notes the fork writes, in no order; reused the
		// steps it takes from the record.
		ran    []string
		reused []string
	}{
		{name: "an item", from: "E1/do.3", ran: []string{"item 4", "then item 4", "count 5"},
			reused: []string{"E1/do.0/A", "E1/do.0/B", "E1/do.1/A", "E1/do.1/B", "E1/do.2/A", "E1/do.2/B", "E1/do.4/A", "E1/do.4/B"}},
		{name: "a step inside an item", from: "E1/do.3/B", ran: []string{"then item 4", "count 5"},
			reused: []string{"E1/do.0/A", "E1/do.0/B", "E1/do.1/A", "E1/do.1/B", "E1/do.2/A", "E1/do.2/B", "E1/do.3/A", "E1/do.4/A", "E1/do.4/B"}},
		// The map runs over its items' recorded results, so that the
		// fork's record has each item step, reused.
		{name: "the step after the map", from: "E2", ran: []string{"count 5"},
			reused: []string{"E1/do.0/A", "E1/do.0/B", "E1/do.1/A", "E1/do.1/B", "E1/do.2/A", "E1/do.2/B", "E1/do.3/A", "E1/do.3/B", "E1/do.4/A", "E1/do.4/B"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := p.notes(t)
			opts, _, done := p.options(t, p.models(), nil)
			out, err := debugger.Fork(context.Background(), rec, pl, debugger.ForkSpec{From: tc.from}, opts)
			done()
			if err != nil {
				t.Fatal(err)
			}
			if out.Run.Status != engine.StatusOK || out.From != tc.from {
				t.Fatalf("the fork from %s ended %s: %v", out.From, out.Run.Status, out.Run.Err)
			}
			added := strings.Split(strings.TrimSuffix(strings.TrimPrefix(p.notes(t), before), "\n"), "\n")
			if !sameSet(added, tc.ran) {
				t.Errorf("the fork wrote %q, want %q: the other items ran again", added, tc.ran)
			}
			if !sameSet(out.Reused, tc.reused) {
				t.Errorf("reused %v, want %v", out.Reused, tc.reused)
			}
			if !reflect.DeepEqual(plain(t, out.Run.Output), plain(t, orig.Output)) {
				t.Errorf("output %v, want the original's %v", out.Run.Output, orig.Output)
			}
		})
	}
	t.Run("a reduce's items read one another", func(t *testing.T) {
		pl := p.plan(t, "fold", `identifier: fold
name: Fold
description: Folds three items.
steps:
  - id: E1
    tool_name: reduce
    input:
      over: [1, 2, 3]
      initial: { noted: "" }
      do: { tool_name: user__note, input: { text: "{{accumulator.noted}}+{{item}}" } }
output: { folded: "{{E1.result.noted}}" }
`)
		_, rec := p.record(t, pl, nil)
		opts, _, done := p.options(t, p.models(), nil)
		out, err := debugger.Fork(context.Background(), rec, pl, debugger.ForkSpec{From: "E1/do.1"}, opts)
		done()
		if err != nil {
			t.Fatal(err)
		}
		if out.Run.Status != engine.StatusOK || !slices.Equal(out.Reused, []string{"E1/do.0"}) {
			t.Errorf("the fork ended %s (%v), reused %v; want the item before the fork point only", out.Run.Status, out.Run.Err, out.Reused)
		}
	})
}

func TestDiffOrder(t *testing.T) {
	p := newTestProject(t)
	_, a := p.record(t, p.plan(t, "broken", brokenPlan), nil)
	_, b := p.record(t, p.plan(t, "chain", chainPlan), nil)
	var paths []string
	for _, d := range debugger.Diff(a.Run, b.Run) {
		paths = append(paths, d.Path)
		if d.Path == "E1" && (d.StatusA != "failed" || d.StatusB != "ok" || d.ResultA != nil || d.Same()) {
			t.Errorf("E1: %+v", d)
		}
	}
	// Plan order, the map's items by index, though two ran at once.
	want := []string{"E0", "E1", "E2", "E3", "E3/then", "E4", "E4/do.0", "E4/do.1", "E4/do.2", "E5"}
	if !slices.Equal(paths, want) {
		t.Errorf("paths %v, want %v", paths, want)
	}
	if d := debugger.Diff(a.Run, a.Run); len(d) != 2 || !d[0].Same() || d[0].MsDelta != 0 || d[0].TokensDelta != 0 {
		t.Errorf("a run against itself: %+v", d)
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func sameJSON(t *testing.T, got any, want string) bool {
	t.Helper()
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(got, w)
}

// TestDebugForkStopsPastWhatItReuses forks from a map item's step under
// the debugger, held at its first stop and stepped in to the end: no stop
// is at a step the fork reuses (an earlier step of the item, a sibling
// item's), since nothing runs there; a breakpoint on one stops there all
// the same.
func TestDebugForkStopsPastWhatItReuses(t *testing.T) {
	p := newTestProject(t)
	pl := p.plan(t, "items", itemsPlan)
	_, rec := p.record(t, pl, nil)
	reused := []string{"E1/do.0/A", "E1/do.0/B", "E1/do.1/A", "E1/do.1/B", "E1/do.2/A", "E1/do.2/B", "E1/do.3/A", "E1/do.4/A", "E1/do.4/B"}

	opts, _, done := p.options(t, p.models(), nil)
	s, forked, err := debugger.DebugFork(rec, pl, debugger.ForkSpec{From: "E1/do.3/B"}, opts, debugger.NewBreakpoints())
	if err != nil {
		t.Fatal(err)
	}
	s.Hold()
	st := s.Start(context.Background(), rec.Inputs())
	// The map that holds the fork point runs again, its reused items
	// aside: the first stop is its.
	if st.Stop == nil || st.Stop.Path != "E1" || st.Stop.Kind != engine.StopStep || st.Reason != debugger.ReasonEntry {
		t.Fatalf("the fork's first stop is %+v, want E1's step stop", st.Stop)
	}
	var stops []string
	for st.Stop != nil && !st.Finished {
		if st.Stop.Kind == engine.StopStep && slices.Contains(reused, st.Stop.Path) || st.Stop.Reused {
			t.Errorf("stepping stopped at %s, which the fork reuses", st.Stop.Path)
		}
		stops = append(stops, st.Stop.Path+" "+string(st.Stop.Kind))
		if st, err = s.Do(debugger.Command{Move: debugger.StepIn}); err != nil {
			t.Fatal(err)
		}
	}
	done()
	if !slices.Contains(stops, "E1/do.3/B step") {
		t.Errorf("stepping in went %v, not through the fork point E1/do.3/B", stops)
	}
	if out := forked(st.Result); !sameSet(out.Reused, reused) || st.Status != engine.StatusOK {
		t.Errorf("the fork ended %s, reused %v; want ok, %v", st.Status, out.Reused, reused)
	}

	opts, _, done = p.options(t, p.models(), nil)
	defer done()
	bps := debugger.NewBreakpoints()
	if _, err := bps.Set("E1/do.0/A", nil, nil); err != nil {
		t.Fatal(err)
	}
	s, _, err = debugger.DebugFork(rec, pl, debugger.ForkSpec{From: "E1/do.3/B"}, opts, bps)
	if err != nil {
		t.Fatal(err)
	}
	st = s.Start(context.Background(), rec.Inputs())
	if st.Stop == nil || st.Stop.Path != "E1/do.0/A" || !strings.HasPrefix(st.Reason.String(), "breakpoint") {
		t.Fatalf("the fork's first stop is %+v (%s), want the breakpoint at E1/do.0/A", st.Stop, st.Reason)
	}
	if !st.Stop.Reused {
		t.Error("the stop at a step the fork reuses does not say so")
	}
	for !st.Finished {
		if st, err = s.Do(debugger.Command{Move: debugger.Continue}); err != nil {
			t.Fatal(err)
		}
	}

	// Gated, a fork holds for approval the calls it makes, not the steps
	// it reuses: their tool does not run.
	opts, _, done = p.options(t, p.models(), nil)
	defer done()
	approvals, err := debugger.NewApprovals([]string{"**/user__note"}, p.cat, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, _, err = debugger.DebugFork(rec, pl, debugger.ForkSpec{From: "E1/do.3/B"}, opts, debugger.NewBreakpoints())
	if err != nil {
		t.Fatal(err)
	}
	s.Approve(approvals)
	var held []string
	for st = s.Start(context.Background(), rec.Inputs()); !st.Finished; {
		held = append(held, st.Stop.Path)
		if st, err = s.Do(debugger.Command{Decision: engine.Decision{Action: engine.Approve}, Move: debugger.Continue}); err != nil {
			t.Fatal(err)
		}
	}
	if want := []string{"E1/do.3/B", "E2"}; !slices.Equal(held, want) || st.Status != engine.StatusOK {
		t.Errorf("the gated fork held %v for approval and ended %s, want %v and ok", held, st.Status, want)
	}
}
