package workspace

import (
	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/plans"
)

// DebugReplay returns a session that replays a recorded run under the
// debugger, stopping where table says (nil: nowhere, as Debug), and what
// tells how it compares with its record once it has ended
// (debugger.DebugReplay). Start
// it with rec.Inputs().
func (w *Workspace) DebugReplay(rec *debugger.Recording, plan *plans.Plan, table *debugger.Breakpoints, o RunOptions) (*debugger.Session, func(*engine.Result) *debugger.ReplayResult, error) {
	opts, err := w.engineOptions(o, false, rec.Run.ID)
	if err != nil {
		return nil, nil, err
	}
	s, ended := debugger.DebugReplay(rec, plan, opts, orQuiet(table))
	if o.Held {
		s.Hold()
	}
	return s, ended, nil
}

// DebugFork returns a session that forks a recorded run under the
// debugger, stopping where table says (nil: nowhere, as Debug), and what
// tells how the fork went once it has ended (debugger.DebugFork). Start
// it with rec.Inputs(). The error is a *debugger.ForkSpecError for a spec
// that does not fit the record or the plan.
func (w *Workspace) DebugFork(rec *debugger.Recording, plan *plans.Plan, spec debugger.ForkSpec, table *debugger.Breakpoints, o RunOptions) (*debugger.Session, func(*engine.Result) *debugger.ForkResult, error) {
	opts, err := w.engineOptions(o, true, rec.Run.ID)
	if err != nil {
		return nil, nil, err
	}
	s, forked, err := debugger.DebugFork(rec, plan, spec, opts, orQuiet(table))
	if err != nil {
		return nil, nil, err
	}
	if o.Held {
		s.Hold()
	}
	return s, forked, nil
}

// orQuiet is table, or for none a table that never stops the run.
func orQuiet(table *debugger.Breakpoints) *debugger.Breakpoints {
	if table == nil {
		table = debugger.NewBreakpoints()
		table.BreakOnError(false)
	}
	return table
}

// HasStep reports whether pattern names a step of plan or of a plan it
// calls (debugger.HasStep over the workspace's catalog): a step a fork can
// set a result at.
func (w *Workspace) HasStep(plan *plans.Plan, pattern string) bool {
	return debugger.HasStep(plan, w.cat(), pattern)
}

// ResultSchema is the schema a value given as the result of the step at
// run-time path p of plan must fit, nil when none applies.
func (w *Workspace) ResultSchema(plan *plans.Plan, p string) any {
	return debugger.ResultSchema(plan, w.cat(), p)
}
