// Package runs is the workbench's look back at earlier runs: the panel
// listing the runs of a plan from the run store, the loading of one of them
// into the same live tree a running plan fills (so the tree and the
// inspector show it as they show a live run, read-only), and the view of
// two runs compared step by step.
package runs

import (
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/tui/live"
)

// Build lays a recorded run's events into the same live tree a running
// plan fills: the plan's steps laid out (plan may be nil, as for a run of
// a plan no longer on disk), then every event applied in order, as the
// live run's sink applied them.
func Build(plan *plans.Plan, events []engine.Event) *live.Tree {
	t := live.New(plan)
	for _, e := range events {
		t.Apply(e)
	}
	return t
}
