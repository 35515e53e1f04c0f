package live_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/tui/live"
	"github.com/stepwise-dev/stepwise/tui/live/livetest"
)

// abortPlan maps three items one at a time, then reads the map.
const abortPlan = `
identifier: halt
steps:
  - id: E1
    tool_name: map
    input:
      over: [1, 2, 3]
      concurrency: 1
      do:
        tool_name: builtin__reshape
        input: { shape: { n: "{{item}}" } }
  - id: E2
    tool_name: builtin__reshape
    input: { shape: { count: "{{E1.count}}" } }
`

// abortedAtStop runs planYAML through the real engine, recorded in a
// SQLite store, with a hook that holds a person's while at the step stop
// at stop and aborts there, as the workbench's session does, and returns
// the tree built as the run went and the tree read back from the store.
func abortedAtStop(t *testing.T, planYAML, stop string, while time.Duration) (tree, reopened *live.Tree) {
	t.Helper()
	dir, ws := livetest.Project(t, map[string]string{
		"config.toml":  strings.Replace(livetest.Config, `backend = "memory"`, `backend = "sqlite"`, 1),
		"plans/p.yaml": planYAML})
	plan := livetest.Plan(t, dir, "plans/p.yaml")
	tree, reopened, res, _ := runHeld(t, ws, plan, func(st *engine.Stop) (time.Duration, engine.Decision) {
		if st.Kind != engine.StopStep || st.Path != stop {
			return 0, engine.Decision{}
		}
		return while, engine.Decision{Action: engine.Abort}
	})
	if res.Status != engine.StatusAborted {
		t.Fatalf("run: %+v", res)
	}
	return tree, reopened
}

// TestAbortedItemReadsBackAsLive runs abortPlan through the real engine
// and a hook that holds a person's while at the second item's step stop
// and aborts there, as the workbench's session does: the tree built as the
// run went and the tree read back from the store show the same rows, the
// item and its map aborted (failed, marked aborted) with the same times,
// the first item ok.
func TestAbortedItemReadsBackAsLive(t *testing.T) {
	tree, reopened := abortedAtStop(t, abortPlan, "E1/do.1", 50*time.Millisecond)

	rows := map[string]live.Row{}
	for _, r := range reopened.Rows(0, reopened.Len()) {
		rows[r.Path] = r
	}
	// A live event's time carries the monotonic clock, which a stored one
	// does not: the two may part by nanoseconds, never by a microsecond.
	same := func(a, b time.Duration) bool { return (a - b).Abs() < time.Microsecond }
	for _, r := range tree.Rows(0, tree.Len()) {
		back, ok := rows[r.Path]
		n, _ := tree.Node(r.Path)
		nBack, _ := reopened.Node(r.Path)
		if !ok || back.Status != r.Status || nBack.Aborted != n.Aborted || !same(back.Duration, r.Duration) || !same(back.Held, r.Held) {
			t.Errorf("%s: %s (aborted %t), %v, %v held live; %s (aborted %t), %v, %v held read back",
				r.Path, r.Status, n.Aborted, r.Duration, r.Held, back.Status, nBack.Aborted, back.Duration, back.Held)
		}
	}
	for _, p := range []string{"E1", "E1/do.1"} {
		if n, ok := reopened.Node(p); !ok || n.Status != live.Failed || !n.Aborted {
			t.Errorf("%s reads back %s (aborted %t), want aborted", p, n.Status, n.Aborted)
		}
	}
	if r := rows["E1/do.1"]; r.Held < 50*time.Millisecond || r.Duration < r.Held {
		t.Errorf("E1/do.1 reads back %v, %v of it held; want its hold at its step stop", r.Duration, r.Held)
	}
	if n, _ := reopened.Node("E1/do.0"); n.Status != live.OK || n.Aborted {
		t.Errorf("E1/do.0 reads back %s (aborted %t), want ok", n.Status, n.Aborted)
	}
	if tot := reopened.Totals(); tot.Aborted != 2 || tot.Failed != 0 {
		t.Errorf("the reopened run's totals: %d aborted, %d failed; want 2 aborted, none failed", tot.Aborted, tot.Failed)
	}
}

// TestAbortedItemWithABody aborts a map at the second step of its second
// item's body: the item, which takes its status from its steps, is marked
// aborted as its step is, live and read back, not failed of its own.
func TestAbortedItemWithABody(t *testing.T) {
	tree, reopened := abortedAtStop(t, `
identifier: halt
steps:
  - id: E1
    tool_name: map
    input:
      over: [1, 2]
      concurrency: 1
      do:
        - id: a
          tool_name: builtin__reshape
          input: { shape: { n: "{{item}}" } }
        - id: b
          tool_name: builtin__reshape
          input: { shape: { n: "{{a.n}}" } }
`, "E1/do.1/b", 10*time.Millisecond)
	for _, tr := range []struct {
		name string
		tree *live.Tree
	}{{"live", tree}, {"read back", reopened}} {
		rows := map[string]live.Row{}
		for _, r := range tr.tree.Rows(0, tr.tree.Len()) {
			rows[r.Path] = r
		}
		for p, want := range map[string]bool{"E1": true, "E1/do.1": true, "E1/do.1/b": true, "E1/do.1/a": false, "E1/do.0": false} {
			if r := rows[p]; r.Aborted != want {
				t.Errorf("%s: %s is %s, aborted %t; want aborted %t", tr.name, p, r.Status, r.Aborted, want)
			}
		}
		if n, _ := tr.tree.Node("E1/do.1"); n.Status != live.Failed || !n.Aborted {
			t.Errorf("%s: the item's node is %s, aborted %t", tr.name, n.Status, n.Aborted)
		}
	}
}
