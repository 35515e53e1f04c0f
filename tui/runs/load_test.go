package runs_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/record"
	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/tui/live"
	"github.com/stepwise-dev/stepwise/tui/live/livetest"
	"github.com/stepwise-dev/stepwise/tui/runs"
)

// TestLoad reads two recorded runs back into trees: each must show what
// the tree the live run's sink fed showed, row for row and node for node.
func TestLoad(t *testing.T) {
	p := newProject(t)
	okID, okEvents := p.record(t, nil)
	failedID, failedEvents := p.record(t, map[string]any{"n": 2})
	cases := []struct {
		name   string
		id     string
		plan   *plans.Plan
		live   []engine.Event
		want   string
		status engine.RunStatus
		failed int
	}{
		{name: "ok, with its plan", id: okID, plan: p.plan, live: okEvents, status: "ok", want: `
E0 step builtin__reshape ok
E1 step builtin__infer ok calls=1 in=40 out=4
E2 step decide ok
  then step builtin__reshape ok
  else step user__fail skipped
`},
		{name: "failed, with its plan", id: failedID, plan: p.plan, live: failedEvents, status: "failed", failed: 2, want: `
E0 step builtin__reshape ok
E1 step builtin__infer ok calls=1 in=40 out=4
E2 step decide failed
  then step builtin__reshape pending
  else step user__fail failed
`},
		// Without its plan only what ran shows: no branch not taken.
		{name: "failed, without a plan", id: failedID, live: failedEvents, status: "failed", failed: 2, want: `
E0 step builtin__reshape ok
E1 step builtin__infer ok calls=1 in=40 out=4
E2 step decide failed
  else step user__fail failed
`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, events, err := p.ws.RunEvents(context.Background(), tc.id)
			if err != nil {
				t.Fatal(err)
			}
			tr := runs.Build(tc.plan, events)
			if d.ID != tc.id || d.Status != tc.status {
				t.Errorf("detail of run %s %s, want %s %s", d.ID, d.Status, tc.id, tc.status)
			}
			if got := livetest.Dump(tr); got != strings.TrimPrefix(tc.want, "\n") {
				t.Errorf("rows:\n%s\nwant:\n%s", got, strings.TrimPrefix(tc.want, "\n"))
			}
			tt := tr.Totals()
			if tt.RunID != d.ID || tt.Plan != "small" || tt.RunStatus != tc.status || tt.Failed != tc.failed ||
				tt.Spend.Calls != 1 || tt.Spend.Cost() == nil || tt.Elapsed != d.Duration {
				t.Errorf("totals %+v for run %s of %v", tt, d.ID, d.Duration)
			}
			if tc.status == "failed" && !strings.Contains(tt.Error, "'sh' exited with status 3") {
				t.Errorf("the run's error %q", tt.Error)
			}

			// The tree the run's own sink fed, as the workbench built it
			// while the run went on.
			want := live.New(tc.plan)
			for _, e := range tc.live {
				want.Apply(e)
			}
			if livetest.Dump(want) != livetest.Dump(tr) {
				t.Fatalf("the live tree:\n%s\nthe loaded one:\n%s", livetest.Dump(want), livetest.Dump(tr))
			}
			for _, r := range want.Rows(0, want.Len()) {
				w, _ := want.Node(r.Path)
				g, ok := tr.Node(r.Path)
				switch {
				case !ok:
					t.Errorf("%s: not in the loaded tree", r.Path)
				case g.Status != w.Status || g.Tool != w.Tool || g.Kind != w.Kind || g.Error != w.Error || g.Reply != w.Reply:
					t.Errorf("%s: loaded %s %s %s %q %q, live %s %s %s %q %q", r.Path, g.Status, g.Kind, g.Tool, g.Error, g.Reply,
						w.Status, w.Kind, w.Tool, w.Error, w.Reply)
				case asJSON(t, g.Input) != asJSON(t, w.Input) || asJSON(t, g.Result) != asJSON(t, w.Result):
					t.Errorf("%s: loaded input %s result %s, live %s %s", r.Path, asJSON(t, g.Input), asJSON(t, g.Result),
						asJSON(t, w.Input), asJSON(t, w.Result))
				case !g.Start.Equal(w.Start) || !g.End.Equal(w.End) || g.Spend.Usage != w.Spend.Usage:
					t.Errorf("%s: loaded %v to %v spending %+v, live %v to %v spending %+v", r.Path, g.Start, g.End, g.Spend.Usage,
						w.Start, w.End, w.Spend.Usage)
				}
			}
		})
	}
}

func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestLoadUnknownRun(t *testing.T) {
	p := newProject(t)
	p.record(t, nil)
	_, _, err := p.ws.RunEvents(context.Background(), "no-such-run")
	var nf *record.NotFoundError
	if !errors.As(err, &nf) || len(nf.Recent) != 1 {
		t.Errorf("error %v, want the store's not found, offering the one run", err)
	}
}
