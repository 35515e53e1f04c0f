package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/debugger/workspace"
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/plans"
)

func newDebugCommand(s *streams) *cobra.Command {
	var (
		breaks     []string
		approve    []string
		scriptFile string
		asJSON     bool
	)
	cmd := &cobra.Command{
		Use:   "debug PLAN [INPUT_JSON] [--break PATTERN]... [--approve PATTERN]... [--script FILE] [--json]",
		Short: "Run a plan under the debugger, driven by commands on stdin",
		Long: "Run PLAN stopping at breakpoints, and read commands from stdin, one a line:\n\n" +
			commandList() + "\n" +
			"inject, replace, answer, decline and edit decide at the stop, then go on as next does;\n" +
			"approve and deny answer a call held for approval (--approve), then continue.\n" +
			"Breakpoints are kept per plan in the project (.stepwise/breakpoints/), so the next session\n" +
			"has them. A breakpoint no path of the plan can match is set with a warning naming the\n" +
			"nearest pattern that would. Break on error is on. With --json, every stop and every answer is one JSON object\n" +
			"on stdout, for a program to drive the session.",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				return usageError{errors.New("debug takes PLAN and optionally INPUT_JSON; see stepwise debug --help")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			doc := ""
			if len(args) == 2 {
				doc = args[1]
			}
			inputs, err := readInputs(doc, nil, s.in)
			if err != nil {
				return usageError{err}
			}
			for _, b := range breaks {
				if _, err := debugger.ParseCommand("break " + b); err != nil {
					return usageError{fmt.Errorf("--break %s: %w", b, err)}
				}
			}
			for _, p := range approve {
				if _, err := debugger.ParseCommand("break " + p); err != nil {
					return usageError{fmt.Errorf("--approve %s: %w", p, err)}
				}
			}
			return debugPlan(cmd.Context(), s, args[0], inputs, breaks, approve, scriptFile, asJSON)
		},
	}
	cmd.Flags().StringArrayVar(&breaks, "break", nil, "set a breakpoint on a path pattern before the run starts; repeatable")
	cmd.Flags().StringArrayVar(&approve, "approve", nil, "hold every call of a tool that is not read-only whose path matches the pattern, for approve, deny or edit; repeatable")
	cmd.Flags().StringVar(&scriptFile, "script", "", "answer every model call from this replies file")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print every stop and answer as one JSON object on stdout")
	return cmd
}

// debugPlan runs one plan under a debugger session driven by the lines of
// stdin.
func debugPlan(ctx context.Context, s *streams, planArg string, inputs map[string]any, breaks, approve []string, script string, asJSON bool) error {
	projects := workspaces{warnings: s.err}
	defer projects.close()
	ws, v, err := projects.load(planArg)
	if err != nil {
		return err
	}
	if !v.Report.OK() {
		printValidation(s.err, v, false)
		return &exitCode{code: exitFailure, msg: fmt.Sprintf("%s has problems; fix them and debug again", v.File)}
	}
	table, err := ws.Breakpoints(v)
	if err != nil {
		fmt.Fprintln(s.err, "warning: the kept breakpoints could not be read:", err)
	}
	session, err := ws.Debug(v.Plan, table, workspace.RunOptions{Script: script})
	if err != nil {
		return &exitCode{code: exitFailure, msg: err.Error()}
	}
	if len(approve) > 0 {
		approvals, err := ws.Approvals(approve)
		if err != nil {
			return usageError{err}
		}
		session.Approve(approvals)
	}

	state := drive(ctx, s, session, table, inputs, breaks, asJSON)
	return reportDebugged(ctx, s, &projects, ws, v.Plan, state, asJSON)
}

// reportDebugged reports the end of a debugged run, once the projects are
// closed (their run store has recorded it), as debug reports one.
func reportDebugged(ctx context.Context, s *streams, projects *workspaces, ws *workspace.Workspace, plan *plans.Plan, state debugger.State, asJSON bool) error {
	if closeErr := projects.close(); closeErr != nil {
		fmt.Fprintln(s.err, "warning: the run store did not record everything:", closeErr)
	}
	if ctx.Err() != nil {
		return &exitCode{code: exitInterrupted}
	}
	if state.Result == nil {
		return &exitCode{code: exitFailure, msg: state.Error}
	}
	if asJSON {
		// The end state carried the output; a summary is for people.
		printSummary(s.err, plan, state.Result, ws.Project().Recorded)
		return runExit(state.Result)
	}
	return reportRun(s, plan, state.Result, runRequest{}, ws.Project().Recorded)
}

// drive runs session with inputs under the line driver: it says the kept
// breakpoints of table, sets breaks, then carries out the lines of stdin
// until the run ends, and returns the end. The plan's run, a replay's and
// a fork's are driven alike.
func drive(ctx context.Context, s *streams, session *debugger.Session, table *debugger.Breakpoints, inputs map[string]any, breaks []string, asJSON bool) debugger.State {
	d := &driver{s: s, session: session, asJSON: asJSON}
	// The kept breakpoints are said, as if set now, so that a front end
	// knows their ids, and flagged as a break is when the plan cannot
	// reach them.
	for _, b := range session.Breakpoints() {
		d.answer(breakAnswer(b, true), func(w io.Writer) {
			fmt.Fprintf(w, "breakpoint %d at %s (kept)\n", b.ID, b.Spec())
			if b.Unmatched != "" {
				fmt.Fprintln(w, "warning:", b.Unmatched)
			}
		})
	}
	for _, b := range breaks {
		d.command("break " + b)
	}
	// Lines are read on their own goroutine, so that ctrl-c is heard while
	// the driver waits for the next one.
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(s.in)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	state := session.Start(ctx, inputs)
	d.show(state)
	for !state.Finished {
		if !d.asJSON {
			fmt.Fprint(s.err, "(stepwise) ")
		}
		select {
		case <-ctx.Done():
			// The held thread heard it too and aborts the run.
			state = session.Wait()
		case line, open := <-lines:
			if !open {
				fmt.Fprintln(s.err, "stepwise: stdin closed: the run is aborted")
				state, _ = d.command("abort")
				break
			}
			if next, moved := d.command(line); moved {
				state = next
			}
		}
		if state.Finished || state.Stop != d.last.Stop {
			d.show(state)
		}
	}
	return state
}

// driver reads the line commands of one session.
type driver struct {
	s       *streams
	session *debugger.Session
	asJSON  bool
	last    debugger.State
}

// workbenchOnly are the commands of the shared language that only the
// workbench carries out: they select, open or start things this driver has
// no screen for.
var workbenchOnly = []debugger.Verb{debugger.VerbPause, debugger.VerbRun, debugger.VerbDebug, debugger.VerbGate, debugger.VerbGoto,
	debugger.VerbOpen, debugger.VerbFork, debugger.VerbDiff, debugger.VerbTools, debugger.VerbRuns, debugger.VerbNew}

// command carries out one line: the session carries out its verbs, and
// the driver says what it answered. moved is set, with the new state, when
// the run went on.
func (d *driver) command(line string) (debugger.State, bool) {
	in, err := debugger.ParseCommand(line)
	switch {
	case errors.Is(err, debugger.ErrEmptyLine):
		return debugger.State{}, false
	case err != nil:
		d.fail(err)
		return debugger.State{}, false
	case in.Verb == debugger.VerbHelp:
		d.help(in.Topic)
		return debugger.State{}, false
	case in.Verb == debugger.VerbQuit:
		// Leaving a held run aborts it.
		in = debugger.Instruction{Verb: debugger.VerbAbort}
	case slices.Contains(workbenchOnly, in.Verb):
		d.fail(fmt.Errorf("%s is a workbench command; it is not available here (help lists what is)", in.Verb))
		return debugger.State{}, false
	}
	a, err := d.session.Exec(in)
	if err != nil {
		d.fail(err)
		return debugger.State{}, false
	}
	if a.State == nil {
		d.say(in, a)
	}
	// A warning follows what it is about.
	for _, w := range a.Warnings {
		fmt.Fprintln(d.s.err, "warning:", w)
	}
	if a.State != nil {
		// where shows the state it answered; the loop takes it as the
		// state on show, so that it is not shown again.
		if in.Verb == debugger.VerbWhere {
			d.show(*a.State)
		}
		return *a.State, true
	}
	return debugger.State{}, false
}

// say writes what the session answered to a verb that did not move the
// run.
func (d *driver) say(in debugger.Instruction, a debugger.Answer) {
	switch in.Verb {
	case debugger.VerbBreak:
		b := a.Breakpoint
		d.answer(breakAnswer(*b, false), func(w io.Writer) { fmt.Fprintf(w, "breakpoint %d at %s\n", b.ID, b.Spec()) })
	case debugger.VerbClear, debugger.VerbEnable, debugger.VerbDisable, debugger.VerbCond:
		done := map[debugger.Verb]string{debugger.VerbClear: "cleared", debugger.VerbEnable: "enabled",
			debugger.VerbDisable: "disabled", debugger.VerbCond: "condition set"}[in.Verb]
		if in.Verb == debugger.VerbCond && in.Condition == nil {
			done = "condition removed"
		}
		d.answer(map[string]any{"ok": true, "breakpoint": in.ID}, func(w io.Writer) { fmt.Fprintf(w, "breakpoint %d %s\n", in.ID, done) })
	case debugger.VerbErrors:
		d.answer(map[string]any{"break_on_error": a.BreakOnError}, func(w io.Writer) { fmt.Fprintf(w, "break on error: %v\n", a.BreakOnError) })
	case debugger.VerbBreakpoints:
		d.answer(map[string]any{"breakpoints": a.Breakpoints}, func(w io.Writer) {
			for _, b := range a.Breakpoints {
				fmt.Fprintf(w, "%d  %s  hits %d  enabled %v\n", b.ID, b.Spec(), b.Hits, b.Enabled)
				if b.ConditionError != "" {
					fmt.Fprintf(w, "   the condition could not be evaluated: %s\n", b.ConditionError)
				}
				if b.Unmatched != "" {
					fmt.Fprintf(w, "   %s\n", b.Unmatched)
				}
			}
		})
	case debugger.VerbPrint:
		d.answer(map[string]any{"path": a.Path, "value": a.Value}, func(w io.Writer) {
			b, _ := json.MarshalIndent(a.Value, "", "  ")
			fmt.Fprintf(w, "%s = %s\n", a.Path, b)
		})
	case debugger.VerbStack:
		d.answer(map[string]any{"stack": a.Stack}, func(w io.Writer) {
			for i, f := range slices.Backward(a.Stack) {
				fmt.Fprintf(w, "%d  %-6s %s %s\n", len(a.Stack)-1-i, f.Kind, f.Path, f.Tool)
			}
		})
	case debugger.VerbThreads:
		d.answer(map[string]any{"threads": a.Threads}, func(w io.Writer) {
			for _, t := range a.Threads {
				mark := " "
				if t.Stopped {
					mark = "*"
				}
				fmt.Fprintf(w, "%s %s  at %s %s\n", mark, t.ID, t.Kind, t.Path)
			}
		})
	}
}

// breakAnswer is the --json answer that says a breakpoint is set (kept:
// from an earlier session), with a warning when no path of the plan can
// match it.
func breakAnswer(b debugger.Breakpoint, kept bool) map[string]any {
	out := map[string]any{"breakpoint": b}
	if kept {
		out["kept"] = true
	}
	if b.Unmatched != "" {
		out["warning"] = b.Unmatched
	}
	return out
}

// lineCommands are the commands of the shared language this driver
// carries out, for help.
func lineCommands() []debugger.Syntax {
	var out []debugger.Syntax
	for _, s := range debugger.Grammar() {
		if !slices.Contains(workbenchOnly, s.Verb) {
			out = append(out, s)
		}
	}
	return out
}

// commandList is lineCommands as text, for --help.
func commandList() string {
	var b strings.Builder
	writeCommands(&b, lineCommands())
	return b.String()
}

// help lists the commands this driver carries out, or explains one.
func (d *driver) help(topic debugger.Verb) {
	list := lineCommands()
	if topic != "" {
		list = slices.DeleteFunc(debugger.Grammar(), func(s debugger.Syntax) bool { return s.Verb != topic })
	}
	d.answer(map[string]any{"commands": list}, func(w io.Writer) { writeCommands(w, list) })
}

// writeCommands writes one command a line: its usage, its short forms and
// what it does.
func writeCommands(w io.Writer, list []debugger.Syntax) {
	usages := make([]string, len(list))
	width := 0
	for i, s := range list {
		usages[i] = s.Usage()
		if len(s.Aliases) > 0 {
			usages[i] += " (" + strings.Join(s.Aliases, ", ") + ")"
		}
		width = max(width, len(usages[i]))
	}
	for i, s := range list {
		fmt.Fprintf(w, "  %-*s  %s\n", width, usages[i], s.Does)
	}
}

// show prints a state: where the run stopped and why, or how it ended.
func (d *driver) show(st debugger.State) {
	d.last = st
	if d.asJSON {
		writeJSONLine(d.s.out, st)
		return
	}
	if st.Finished {
		fmt.Fprintf(d.s.err, "run finished: %s\n", st.Status)
		return
	}
	snap := st.Stop
	fmt.Fprintf(d.s.err, "stopped at %s (%s) by %s\n", snap.Path, snap.Kind, st.Reason)
	for _, part := range []struct {
		label string
		value any
	}{{"input", snap.Input}, {"output", snap.Output}} {
		if part.value != nil {
			fmt.Fprintf(d.s.err, "  %-7s %s\n", part.label, cut(engine.JSONText(part.value), valueWidth))
		}
	}
	if snap.Error != "" {
		fmt.Fprintf(d.s.err, "  error   %s\n", snap.Error)
	}
	if snap.Ask != nil {
		fmt.Fprintf(d.s.err, "  ask     %s (answer JSON | decline)\n", snap.Ask.Prompt)
	}
	if snap.Approval {
		fmt.Fprintf(d.s.err, "  approve %s? (approve | deny | edit JSON)\n", snap.Tool)
	}
	if snap.Prefill != nil && snap.Schema != nil {
		fmt.Fprintf(d.s.err, "  expects %s\n", cut(engine.JSONText(snap.Prefill), valueWidth))
	}
	if len(snap.Readers) > 0 {
		fmt.Fprintf(d.s.err, "  read by %s\n", strings.Join(snap.Readers, ", "))
	}
	if len(st.Threads) > 1 {
		fmt.Fprintf(d.s.err, "  %d threads held (threads lists them)\n", len(st.Threads)-1)
	}
}

// answer prints the answer to a command: JSON with --json, text otherwise.
func (d *driver) answer(v any, text func(io.Writer)) {
	if d.asJSON {
		writeJSONLine(d.s.out, v)
		return
	}
	text(d.s.err)
}

func (d *driver) fail(err error) {
	d.answer(map[string]any{"error": err.Error()}, func(w io.Writer) { fmt.Fprintln(w, "error:", err) })
}
