package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/debugger/workspace"
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
	cmd.Flags().StringArrayVar(&f.breaks, "break", nil, "with --debug, set a breakpoint on a path pattern before the run starts; repeatable")
	cmd.Flags().BoolVar(&f.goOn, "continue", false, "with --debug, run to the first breakpoint, error or ask instead of holding the run at its first stop")
}

// check refuses --break without --debug, and a --break that does not
// parse.
func (f *debugFlags) check() error {
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

// debugReplay replays one run under the line driver, and says its
// divergence, if it had one, once it has ended.
func debugReplay(ctx context.Context, s *streams, id string, flags debugFlags, asJSON bool) error {
	projects := workspaces{warnings: s.err}
	defer projects.close()
	r, err := loadRecorded(ctx, &projects, id)
	if err != nil {
		return &exitCode{code: exitFailure, msg: err.Error()}
	}
	table := keptBreakpoints(s, r)
	session, diverged, err := r.ws.DebugReplay(r.rec, r.doc.Plan, table, workspace.RunOptions{Held: !flags.goOn})
	if err != nil {
		return &exitCode{code: exitFailure, msg: "the replay could not start: " + r.ws.DisplayText(err.Error())}
	}
	state := drive(ctx, s, session, table, r.rec.Inputs(), flags.breaks, asJSON)
	if d := diverged(); d != nil {
		fmt.Fprintf(s.err, "the replay of run %s diverged: %s\n", r.rec.Run.ID, d)
		if closeErr := projects.close(); closeErr != nil {
			fmt.Fprintln(s.err, "warning: the run store did not record everything:", closeErr)
		}
		return &exitCode{code: exitFailure}
	}
	return reportDebugged(ctx, s, &projects, r.ws, r.doc.Plan, state, asJSON)
}

// debugFork forks one run under the line driver.
func debugFork(ctx context.Context, s *streams, id string, spec debugger.ForkSpec, script string, flags debugFlags, asJSON bool) error {
	projects := workspaces{warnings: s.err}
	defer projects.close()
	r, err := loadRecorded(ctx, &projects, id)
	if err != nil {
		return &exitCode{code: exitFailure, msg: err.Error()}
	}
	table := keptBreakpoints(s, r)
	session, forked, err := r.ws.DebugFork(r.rec, r.doc.Plan, spec, table, workspace.RunOptions{Script: script, Held: !flags.goOn})
	if err != nil {
		if msg, ok := forkSpecRefusal(err); ok {
			return usageError{errors.New(msg)}
		}
		return &exitCode{code: exitFailure, msg: "the fork could not start: " + r.ws.DisplayText(err.Error())}
	}
	state := drive(ctx, s, session, table, r.rec.Inputs(), flags.breaks, asJSON)
	if state.Result != nil {
		printFork(s.err, forked(state.Result))
	}
	return reportDebugged(ctx, s, &projects, r.ws, r.doc.Plan, state, asJSON)
}

// keptBreakpoints is the breakpoint table kept for a recorded run's plan.
func keptBreakpoints(s *streams, r *recordedRun) *debugger.Breakpoints {
	table, err := r.ws.Breakpoints(r.doc)
	if err != nil {
		fmt.Fprintln(s.err, "warning: the kept breakpoints could not be read:", err)
	}
	return table
}
