package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/debugger/workspace"
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/tui/format"
)

// debugFlags are the flags that run a replay or a fork under the
// debugger.
type debugFlags struct {
	on     bool
	breaks []string
	// goOn runs to the first breakpoint instead of holding the run at its
	// first stop, as stepwise debug --continue does.
	goOn bool
}

func (f *debugFlags) add(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&f.on, "debug", false, "run under the debugger, driven by commands on stdin as stepwise debug is")
	cmd.Flags().StringArrayVar(&f.breaks, "break", nil, "with --debug, set a breakpoint on a path pattern before the run starts, kept for the plan as break keeps one; repeatable")
	cmd.Flags().BoolVar(&f.goOn, "continue", false, "with --debug, run to the first breakpoint, error or ask instead of holding the run at its first stop")
}

// check refuses --break without --debug, a --break that does not parse,
// and with --debug, the flags of cmd that say how a run is shown as it
// goes (--events, --quiet, --progress-every): under the debugger the
// stops and answers tell the run, and would leave nothing out, so that
// such a flag would be ignored.
func (f *debugFlags) check(cmd *cobra.Command) error {
	for _, shown := range []string{"events", "quiet", "progress-every"} {
		if f.on && cmd.Flags().Changed(shown) {
			return usageError{fmt.Errorf("--%s does not go with --debug: under the debugger, the stops and answers tell the run (with --json, as JSON lines)", shown)}
		}
	}
	if len(f.breaks) > 0 && !f.on {
		return usageError{errors.New("--break sets a breakpoint of the debugger; add --debug")}
	}
	if f.goOn && !f.on {
		return usageError{errors.New("--continue says where the debugger first stops; add --debug")}
	}
	for _, b := range f.breaks {
		if _, err := debugger.ParseCommand("break " + b); err != nil {
			return usageError{fmt.Errorf("--break %s: %w", b, err)}
		}
	}
	return nil
}

// debugReplay replays one run under the line driver. Once it has ended it
// says how the replay compares with its record, as replay does: the
// finish object carries identical and divergence with --json; otherwise
// the comparison follows the run's own report. The run line then says
// which run the replay is, and of which.
func debugReplay(ctx context.Context, s *streams, id string, flags debugFlags, asJSON bool) error {
	projects := workspaces{warnings: debugNotices(s, asJSON).configWarning}
	defer projects.close()
	r, err := loadRecorded(ctx, &projects, id)
	if err != nil {
		return jsonFlag(asJSON, jsonStream).refuse(s, err)
	}
	s = s.hidingSecrets(r.ws)
	told := debugNotices(s, asJSON)
	table := keptBreakpoints(told, r)
	o := workspace.RunOptions{Held: !flags.goOn, OnPrune: told.pruned}
	warnings := watchWarnings(&o)
	session, ended, err := r.ws.DebugReplay(r.rec, r.doc.Plan, table, o)
	if err != nil {
		return &exitCode{code: exitFailure, msg: "the replay could not start: " + r.ws.DisplayText(err.Error())}
	}
	// The comparison is made once, when the end is shown or else after.
	var out *debugger.ReplayResult
	compare := func(res *engine.Result) *debugger.ReplayResult {
		if out == nil {
			out = ended(res)
		}
		return out
	}
	finish := func(st debugger.State) any {
		if st.Result == nil {
			return st
		}
		c := compare(st.Result)
		return replayEndJSON{State: st, Identical: c.Identical(), Divergence: c.Divergence}
	}
	state := drive(ctx, s, session, warnings, table, r.rec.Inputs(), flags.breaks, asJSON, finish)
	recorded := r.ws.Project().Recorded
	err = reportDebugged(ctx, s, &projects, r.ws, r.doc.Plan, state, asJSON, false)
	if state.Result == nil || ctx.Err() != nil {
		return err
	}
	compare(state.Result)
	if !asJSON {
		printReplay(s.out, r, out)
	}
	if recorded {
		fmt.Fprintf(s.err, "run %s, a replay of %s (stepwise inspect %s)\n", out.Run.RunID, r.rec.Run.ID, format.ShortID(out.Run.RunID))
	}
	if err == nil && !out.Identical() {
		return &exitCode{code: exitFailure}
	}
	return err
}

// replayEndJSON is the finish object of a replay under the debugger with
// --json: the session's end, and how the replay compares with its record,
// as replay --json says it.
type replayEndJSON struct {
	debugger.State
	Identical  bool                 `json:"identical"`
	Divergence *debugger.Divergence `json:"divergence"`
}

// debugFork forks one run under the line driver, with what the command
// line gives the run in o (a replies file, a spend cap).
func debugFork(ctx context.Context, s *streams, id string, spec debugger.ForkSpec, o workspace.RunOptions, flags debugFlags, asJSON bool) error {
	projects := workspaces{warnings: debugNotices(s, asJSON).configWarning}
	defer projects.close()
	r, err := loadRecorded(ctx, &projects, id)
	if err != nil {
		return jsonFlag(asJSON, jsonStream).refuse(s, err)
	}
	s = s.hidingSecrets(r.ws)
	told := debugNotices(s, asJSON)
	table := keptBreakpoints(told, r)
	o.Held, o.OnPrune = !flags.goOn, told.pruned
	warnings := watchWarnings(&o)
	session, forked, err := r.ws.DebugFork(r.rec, r.doc.Plan, spec, table, o)
	if err != nil {
		if msg, ok := forkSpecRefusal(err); ok {
			return jsonFlag(asJSON, jsonStream).refuse(s, usageError{errors.New(msg)})
		}
		return &exitCode{code: exitFailure, msg: "the fork could not start: " + r.ws.DisplayText(err.Error())}
	}
	warnUnpriced(told, r.ws, o)
	if from, err := r.rec.ForkPoint(spec.From); err == nil {
		fmt.Fprintln(s.err, forkOrigin{run: r.rec.Run.ID, from: from})
	}
	state := drive(ctx, s, session, warnings, table, r.rec.Inputs(), flags.breaks, asJSON, nil)
	if state.Result != nil {
		out := forked(state.Result)
		printFork(s.err, out)
		warnUnreached(told, out)
	}
	return reportDebugged(ctx, s, &projects, r.ws, r.doc.Plan, state, asJSON, r.ws.Project().Recorded)
}

// keptBreakpoints is the breakpoint table kept for a recorded run's plan;
// one that cannot be read is a warning told.
func keptBreakpoints(told notices, r *recordedRun) *debugger.Breakpoints {
	table, err := r.ws.Breakpoints(r.doc)
	if err != nil {
		told.warn(warningAbout{}, "the kept breakpoints could not be read: "+err.Error())
	}
	return table
}
