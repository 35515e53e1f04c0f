// Package runs is the workbench's look back at earlier runs: the panel
// listing the runs of a plan from the run store, the loading of one of them
// into the same live tree a running plan fills (so the tree and the
// inspector show it as they show a live run, read-only), and the view of
// two runs compared step by step.
package runs

import (
	"context"
	"fmt"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/path"
	"github.com/stepwise-dev/stepwise/engine/record"
	"github.com/stepwise-dev/stepwise/engine/store"
	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/tui/live"
)

// Load reads the run that id names (its id, or a prefix only it has) from
// st and builds its tree: the plan's steps laid out (plan may be nil, as
// for a run of a plan no longer on disk), then every recorded event applied
// in order, as the live run's sink applied them. It returns the run's
// record too, for what the tree does not hold (inputs, output, exit).
//
// An unknown id is a *record.NotFoundError, an ambiguous prefix
// a *record.AmbiguousError. A run still being recorded is read as far as
// its events go when Load reads them.
func Load(ctx context.Context, st *store.Store, id string, plan *plans.Plan) (*live.Tree, *record.RunDetail, error) {
	d, err := st.Run(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	events, err := st.Events(ctx, d.ID)
	if err != nil {
		return nil, nil, err
	}
	t := live.New(plan)
	for _, e := range events {
		p, err := engine.DecodePayload(e.Kind, e.Payload)
		if err != nil {
			return nil, nil, fmt.Errorf("run %s: event %d at %q: %w", d.ID, e.Seq, e.Path, err)
		}
		t.Apply(engine.Event{Seq: e.Seq, Time: e.Time, RunID: d.ID, Path: e.Path, Unit: path.KindOf(e.Path), Kind: e.Kind, Payload: p})
	}
	return t, d, nil
}
