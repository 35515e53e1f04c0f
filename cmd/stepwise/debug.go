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
	"sync"
	"unicode/utf8"

	"github.com/charmbracelet/x/term"
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
		maxCost    float64
		asJSON     bool
		goOn       bool
	)
	cmd := &cobra.Command{
		Use:   "debug PLAN [INPUT_JSON] [--break PATTERN]... [--json]",
		Short: "Run a plan under the debugger, driven by commands on stdin",
		Long: "Run PLAN held at its first stop (with --continue, running to the first\n" +
			"breakpoint), and read commands from stdin, one a line, while the run is held\n" +
			"and while it goes on:\n\n" +
			commandList() + "\n" +
			"inject, replace, answer, decline and edit decide at the stop, then go on as\n" +
			"next does; approve and deny answer a call held for approval (--approve), then\n" +
			"continue.\n\n" +
			"Lines are taken in order, as a session typed turn by turn: those given before\n" +
			"the first stop is shown are answered there. While the run goes on, pause,\n" +
			"threads, the watch and breakpoint commands are taken at once; the others wait\n" +
			"for the next stop, and the lines after them with them. In a script (stdin not\n" +
			"a terminal) every line after a movement waits for the stop it comes to, but\n" +
			"pause, which holds the run that movement let go at its next stop.\n\n" +
			"ctrl-c pauses a going run as pause does; at a stop, or again before the run\n" +
			"comes to it, it aborts the run. SIGTERM and SIGHUP abort it, held or going.\n" +
			"A run aborted so, or by abort or quit, or by stdin ending, is recorded\n" +
			"aborted, and debug exits 130: the run was stopped, it did not fail.\n\n" +
			"Stops and answers (where, print, stack, threads, breakpoints...) are written\n" +
			"to stderr, with the warnings and the run's summary: stdout gets only the\n" +
			"plan's output, as stepwise run gives it, so that it can be piped on. With\n" +
			"--json, every stop and every answer is one JSON object a line on stdout, for\n" +
			"a program to drive the session, and so is each warning the run gives as it\n" +
			"goes (a step's, a model call's that was retried or fell over), which is\n" +
			"otherwise a line on stderr, as stepwise run writes it.\n\n" +
			"Breakpoints are kept per plan in the project (.stepwise/breakpoints/), so the\n" +
			"next session has them. A breakpoint no path of the plan can match, or whose\n" +
			"condition reads a step the plan does not have, is set with a warning (naming\n" +
			"the nearest pattern that would match); until warns of its pattern so. Break\n" +
			"on error is on (errors off).",
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
			refusal := jsonFlag(asJSON, jsonStream)
			if err := heldValueError(cmd); err != nil {
				return refusal.refuse(s, err)
			}
			inputs, err := readInputs(doc, nil, s.in)
			if err != nil {
				return refusal.refuse(s, usageError{err})
			}
			for _, b := range breaks {
				if _, err := debugger.ParseCommand("break " + b); err != nil {
					return refusal.refuse(s, usageError{fmt.Errorf("--break %s: %w", b, err)})
				}
			}
			for _, p := range approve {
				if _, err := debugger.ParseCommand("break " + p); err != nil {
					return refusal.refuse(s, usageError{fmt.Errorf("--approve %s: %w", p, err)})
				}
			}
			o := workspace.RunOptions{Script: scriptFile, MaxCost: maxCost, Held: !goOn}
			return debugPlan(cmd.Context(), s, args[0], inputs, breaks, approve, o, asJSON)
		},
	}
	cmd.Flags().StringArrayVar(&breaks, "break", nil, "set a breakpoint on a path pattern before the run starts, kept for the plan as break keeps one; repeatable")
	cmd.Flags().StringArrayVar(&approve, "approve", nil, "hold every call of a tool that is not read-only whose path matches the pattern, for approve, deny or edit; repeatable")
	cmd.Flags().BoolVar(&goOn, "continue", false, "run to the first breakpoint, error or ask instead of holding the run at its first stop")
	cmd.Flags().StringVar(&scriptFile, "script", "", "answer every model call from this replies file")
	addMaxCost(cmd, &maxCost)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print every stop and answer as one JSON object on stdout")
	return cmd
}

// debugPlan runs one plan under a debugger session driven by the lines of
// stdin, with what the command line gives the run in o (a replies file, a
// spend cap, whether it is held at its first stop).
func debugPlan(ctx context.Context, s *streams, planArg string, inputs map[string]any, breaks, approve []string, o workspace.RunOptions, asJSON bool) error {
	projects := workspaces{warnings: debugNotices(s, asJSON).configWarning}
	defer projects.close()
	ws, v, err := projects.load(planArg)
	if err != nil {
		return jsonFlag(asJSON, jsonStream).refuse(s, err)
	}
	if !v.Report.OK() {
		printValidation(s.err, v, false)
		return &exitCode{code: exitFailure, msg: fmt.Sprintf("%s has problems; fix them and debug again", v.File)}
	}
	s = s.hidingSecrets(ws)
	told := debugNotices(s, asJSON)
	table, err := ws.Breakpoints(v)
	if err != nil {
		told.warn(warningAbout{}, "the kept breakpoints could not be read: "+err.Error())
	}
	o.OnPrune = told.pruned
	warnings := watchWarnings(&o)
	session, err := ws.Debug(v.Plan, table, o)
	if err != nil {
		return &exitCode{code: exitFailure, msg: err.Error()}
	}
	warnUnpriced(told, ws, o)
	if len(approve) > 0 {
		approvals, err := ws.Approvals(approve)
		if err != nil {
			return jsonFlag(asJSON, jsonStream).refuse(s, usageError{err})
		}
		session.Approve(approvals)
		for _, u := range approvals.Unheld(ws.Shapes(v.Plan)) {
			told.warn(warningAbout{Approve: u.Pattern}, u.Warning)
		}
	}

	state := drive(ctx, s, session, warnings, table, inputs, breaks, asJSON, nil)
	return reportDebugged(ctx, s, &projects, ws, v.Plan, state, asJSON, ws.Project().Recorded)
}

// debugged is how a session the line driver drove ended: its end state,
// and whether a person aborted the run (abort, quit, ctrl-c at a stop,
// or stdin ending while it was held), which the process exits 130 for,
// as for ctrl-c: the run did not fail, it was stopped.
type debugged struct {
	debugger.State
	abortedByHand bool
}

// reportDebugged reports the end of a debugged run, once the projects are
// closed (their run store has recorded it), as debug reports one. Its run
// line, which says where the run is recorded, is left to the caller
// unless runLine is set.
func reportDebugged(ctx context.Context, s *streams, projects *workspaces, ws *workspace.Workspace, plan *plans.Plan, state debugged, asJSON, runLine bool) error {
	warnUnrecorded(debugNotices(s, asJSON), projects.close())
	if ctx.Err() != nil && state.Result == nil {
		return &exitCode{code: exitInterrupted}
	}
	// A run stopped by a signal is reported as one aborted by hand is:
	// how it ended, what it spent and where it is recorded.
	err := reportEnd(s, ws, plan, state.State, asJSON, runLine)
	if ctx.Err() != nil || state.abortedByHand && state.Result.Status == engine.StatusAborted {
		return &exitCode{code: exitInterrupted}
	}
	return err
}

// reportEnd reports the end state of a debugged run, and returns the
// error its exit status comes from.
func reportEnd(s *streams, ws *workspace.Workspace, plan *plans.Plan, state debugger.State, asJSON, runLine bool) error {
	if state.Err != nil {
		// Refused as stepwise run refuses it, on stderr: the --json
		// end said so already.
		return runRequest{}.refuseRun(s, ws, plan.Identifier.Value, state.Err)
	}
	if state.Result == nil {
		return &exitCode{code: exitFailure, msg: state.Error}
	}
	if asJSON {
		// The end state carried the output; a summary is for people.
		printSummary(s.err, plan, state.Result, runLine, false, notRun{})
		return runExit(state.Result)
	}
	if res := state.Result; res.Output == nil && res.Answer != "" {
		// stepwise run streams a solver's answer to a terminal; under the
		// debugger it is said once, at the end, where the output of an
		// output plan is.
		fmt.Fprintln(s.out, res.Answer)
	}
	return reportRun(s, plan, state.Result, runRequest{}, runLine, notRun{})
}

// runWarnings are the warnings a debugged run gives as it goes, those
// stepwise run tells on stderr (a step's, a model call's that answered
// after failed attempts, a failover's), kept for the line driver to tell
// between its own lines: the run gives them on its own goroutines, while
// the driver may be writing a stop or waiting at its prompt.
type runWarnings struct {
	mu      sync.Mutex
	pending []runWarning
	// arrived has a value while pending has warnings the driver has not
	// taken; it never blocks the run that gives one.
	arrived chan struct{}
}

// runWarning is one warning of a debugged run, as each of the driver's
// two forms says it: its line as stepwise run writes it, and its --json
// answer, {"path": PATH, "warning": ...} where a step or a model call of
// the run warns, {"model": MODEL, "warning": ...} where a model call fell
// over from MODEL to its fallback.
type runWarning struct {
	line   string
	answer map[string]string
}

// watchWarnings keeps the warnings of the run o is for, as the run gives
// them, in what it returns.
func watchWarnings(o *workspace.RunOptions) *runWarnings {
	w := &runWarnings{arrived: make(chan struct{}, 1)}
	o.Sinks = append(o.Sinks, engine.Selective{Kinds: warningKinds, Sink: engine.SinkFunc(func(e engine.Event) {
		if text := warningText(e); text != "" {
			w.add(runWarning{line: warningLine(e), answer: map[string]string{"path": e.Path, "warning": text}})
		}
	})})
	o.OnFailover = func(from, to string, err error) {
		text := failoverText(from, to, err)
		w.add(runWarning{line: "warning: " + text, answer: map[string]string{"model": from, "warning": text}})
	}
	return w
}

// add keeps a warning the run gives, on the run's goroutine, and wakes
// the driver if it is not woken already.
func (w *runWarnings) add(warning runWarning) {
	w.mu.Lock()
	w.pending = append(w.pending, warning)
	w.mu.Unlock()
	select {
	case w.arrived <- struct{}{}:
	default:
	}
}

// take returns the warnings not taken yet, in the order the run gave
// them.
func (w *runWarnings) take() []runWarning {
	w.mu.Lock()
	defer w.mu.Unlock()
	taken := w.pending
	w.pending = nil
	return taken
}

// drive runs session with inputs under the line driver: it says the kept
// breakpoints of table, sets breaks, then carries out the lines of stdin
// until the run ends, and returns the end. It tells the warnings the run
// gives, which warnings keeps, as they come. The plan's run, a replay's
// and a fork's are driven alike. finish, when set, is what --json writes
// for the end, in place of the end state itself: a replay adds how it
// compares with its record.
func drive(ctx context.Context, s *streams, session *debugger.Session, warnings *runWarnings, table *debugger.Breakpoints, inputs map[string]any, breaks []string, asJSON bool, finish func(debugger.State) any) debugged {
	d := &driver{s: s, session: session, warnings: warnings, asJSON: asJSON, finish: finish, width: stopWidth(s.err)}
	// The kept breakpoints are said, as if set now, so that a front end
	// knows their ids, and flagged as a break is when the plan cannot
	// reach them.
	kept := session.Breakpoints()
	for _, b := range kept {
		d.answer(breakAnswer(b, true), func(w io.Writer) {
			fmt.Fprintf(w, "breakpoint %d at %s (kept%s)\n", b.ID, b.Spec(), map[bool]string{true: "", false: ", disabled"}[b.Enabled])
			for _, warning := range breakWarnings(b) {
				fmt.Fprintln(w, "warning:", warning)
			}
		})
	}
	for _, b := range breaks {
		// A --break the kept breakpoints have already was said with them.
		if in, err := debugger.ParseCommand("break " + b); err == nil {
			spec := debugger.Breakpoint{Pattern: in.Pattern, Kinds: in.Kinds, Condition: in.Condition}.Spec()
			if slices.ContainsFunc(kept, func(k debugger.Breakpoint) bool { return k.Spec() == spec }) {
				continue
			}
		}
		d.command("break " + b)
	}
	return debugged{State: d.drive(ctx, inputs), abortedByHand: d.aborted}
}

// driver reads the line commands of one session.
type driver struct {
	s        *streams
	session  *debugger.Session
	warnings *runWarnings
	asJSON   bool
	// finish is what --json writes for the run's end; nil: its State.
	finish func(debugger.State) any
	last   debugger.State
	// moves delivers the State a movement (or the start) came to; going
	// says one is under way, so the run is not held.
	moves chan debugger.State
	going bool
	// entry says the run is to be held at its first stop and has not
	// come to it yet: every line waits for it.
	entry bool
	// waiting are the lines that wait for the run's next stop, in the
	// order they came.
	waiting []string
	// paused says a ctrl-c paused the going run: another before it is
	// held ends the run.
	paused bool
	// terminal says stdin is a terminal, where a person types at a
	// prompt; a script piped in gets none.
	terminal bool
	// moved says the run goes because a line moved it: in a script, the
	// lines after that one are written for the stop it comes to.
	moved bool // width is that of the terminal the stops are written to (stopWidth).
	width int
	// aborted says the driver aborted the run: a person's abort or quit,
	// or stdin ending.
	aborted bool
	// prompted says the prompt is the last thing written, and no line
	// has been typed after it.
	prompted bool
}

// workbenchOnly are the commands of the shared language that only the
// workbench carries out: they select, open or start things this driver has
// no screen for.
var workbenchOnly = []debugger.Verb{debugger.VerbRun, debugger.VerbDebug, debugger.VerbGate, debugger.VerbGoto,
	debugger.VerbOpen, debugger.VerbFork, debugger.VerbDiff, debugger.VerbTools, debugger.VerbRuns, debugger.VerbNew}

// drive starts the run and reads lines until it has ended, and returns
// its end. Lines are carried out in the order they come, as a session
// typed turn by turn reads, however fast a pipe gives them:
//
//   - a run held at its start answers no line before its first stop: the
//     lines given meanwhile are carried out there;
//   - a line that wants a held run (a movement, print, inject...) given
//     while the run goes waits for its next stop, and every line after
//     it waits behind it;
//   - in a script (stdin not a terminal), every line after a movement
//     waits for the stop it comes to, as its writer saw it, but pause,
//     which holds the run the movement let go at its next stop;
//   - otherwise pause, threads, the breakpoint and watch commands are
//     carried out while the run goes: a person at a terminal asks
//     threads of a run that goes on.
//
// ctrl-c on a going run pauses it at its next stop; another before it is
// held, or one at a stop, ends the process as SIGTERM does, the run
// recorded aborted.
func (d *driver) drive(ctx context.Context, inputs map[string]any) debugger.State {
	// Lines are read on their own goroutine, so that ctrl-c and the run's
	// stops are heard while the driver waits for the next one.
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(d.s.in)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	process := interruptsOf(ctx)
	ctrlC, release := process.claim()
	defer release()
	d.terminal = isTerminal(d.s.in)
	d.moves = make(chan debugger.State, 1)
	d.going, d.entry = true, d.session.Holding()
	if !d.entry && d.terminal && !d.asJSON {
		// Nothing else is said until the run comes to a stop, which may
		// be a while: a person knows it goes, and how to hold it.
		fmt.Fprintln(d.s.err, "running to the first breakpoint, error or ask (ctrl-c pauses)")
	}
	d.session.Launch(ctx, inputs)
	go func() { d.moves <- d.session.Wait() }()
	done := ctx.Done()
	// closed says stdin has ended: the run is aborted at its next stop,
	// once the lines waiting for it are carried out.
	closed := false
	for {
		select {
		case st := <-d.moves:
			d.going, d.entry, d.paused, d.moved = false, false, false, false
			// What the run warned of on its way to the stop comes
			// before it.
			d.tellWarnings()
			if st.Finished || st.Stop != d.last.Stop {
				d.show(st)
			}
			if st.Finished {
				return st
			}
		case <-done:
			// A held thread hears it too and aborts the run, whose end
			// the next move delivers.
			done = nil
			if !d.going {
				d.going = true
				go func() { d.moves <- d.session.Wait() }()
			}
			continue
		case <-d.warnings.arrived:
			if !d.tellWarnings() {
				// Told already, before the stop they came before.
				continue
			}
		case <-ctrlC:
			d.interrupt(process)
			d.prompted = false
			continue
		case line, open := <-lines:
			d.prompted = false
			if !open {
				lines, closed = nil, true
				break
			}
			if len(d.waiting) > 0 || d.waits(line) {
				// abort and quit wait their turn too: a script that ends
				// in one means it after the lines before it, at the stop
				// they were written for. A person stops a going run with
				// pause, or ctrl-c.
				d.waiting = append(d.waiting, line)
				continue
			}
			d.command(line)
		}
		// The lines that waited are carried out in order, up to the first
		// that wants a held run while the run goes.
		for len(d.waiting) > 0 && !d.waits(d.waiting[0]) {
			line := d.waiting[0]
			d.waiting = d.waiting[1:]
			d.command(line)
		}
		if closed && !d.going && len(d.waiting) == 0 {
			closed = false
			d.abort()
			continue
		}
		if !d.going && d.terminal && !d.asJSON {
			fmt.Fprint(d.s.err, "(stepwise) ")
			d.prompted = true
		}
	}
}

// tellWarnings tells the warnings the run gave since the last were told,
// one a line, and reports whether it gave any. A warning that comes while
// a prompt waits for a line (another thread's, on its way to its stop)
// starts on the line below it, and the prompt is written again after it.
func (d *driver) tellWarnings() bool {
	warnings := d.warnings.take()
	if len(warnings) == 0 {
		return false
	}
	if d.prompted {
		fmt.Fprintln(d.s.err)
		d.prompted = false
	}
	for _, w := range warnings {
		d.answer(w.answer, func(out io.Writer) { fmt.Fprintln(out, w.line) })
	}
	return true
}

// interrupt answers a ctrl-c: a going run is paused at its next stop, as
// pause does; a held run, or one a ctrl-c paused already that has not come
// to its stop, ends with the process.
func (d *driver) interrupt(process *interrupts) {
	if d.going && !d.paused {
		err := d.session.Pause()
		if err == nil || errors.Is(err, debugger.ErrHeld) {
			d.paused = true
			d.answer(map[string]any{"pausing": true, "interrupt": true}, func(w io.Writer) {
				if d.terminal {
					// After the ^C the terminal echoed.
					fmt.Fprintln(w)
				}
				fmt.Fprintln(w, "pausing at the next stop (ctrl-c again aborts the run)")
			})
			return
		}
	}
	if d.terminal && !d.asJSON {
		// After the ^C the terminal echoed, at the prompt: the run's end
		// is said on a line of its own.
		fmt.Fprintln(d.s.err)
	}
	process.end()
}

// waits reports whether line, next in turn, waits for the run's next
// stop: while the run goes to the stop it is to be held at first, a line
// that wants a held run, and in a script any line after a movement but
// pause. A line that does not parse never waits, to be refused at once.
func (d *driver) waits(line string) bool {
	if !d.going {
		return false
	}
	in, err := debugger.ParseCommand(line)
	switch {
	case err != nil:
		return false
	case d.entry:
		return true
	case d.moved && !d.terminal:
		return in.Verb != debugger.VerbPause
	}
	return in.Verb != debugger.VerbHelp && !in.ActsWhileRunning()
}

// abort aborts the held run, stdin having ended.
func (d *driver) abort() {
	fmt.Fprintln(d.s.err, "stepwise: stdin closed: the run is aborted")
	d.command("abort")
}

// command carries out one line: the session carries out its verbs, and
// the driver says what it answered. A movement lets the run go before
// command returns, and the State it comes to comes through d.moves.
func (d *driver) command(line string) {
	in, err := debugger.ParseCommand(line)
	switch {
	case errors.Is(err, debugger.ErrEmptyLine):
		return
	case err != nil:
		d.fail(err)
		return
	case in.Verb == debugger.VerbHelp:
		d.help(in.Topic)
		return
	case in.Verb == debugger.VerbQuit:
		// Leaving a held run aborts it.
		in = debugger.Instruction{Verb: debugger.VerbAbort}
	case slices.Contains(workbenchOnly, in.Verb):
		d.fail(fmt.Errorf("%s is a workbench command; it is not available here (help lists what is)", in.Verb))
		return
	}
	if cmd, moves := in.Command(); moves {
		if d.going {
			d.fail(debugger.ErrRunning)
			return
		}
		if err := d.session.Resume(cmd); err != nil {
			d.fail(err)
			return
		}
		d.going, d.moved = true, true
		d.aborted = d.aborted || in.Verb == debugger.VerbAbort
		if in.Verb == debugger.VerbUntil {
			// It runs on, as break sets a breakpoint that cannot stop:
			// the warning says it will not stop where it was meant to.
			if warning := d.session.Unmatched(in.Pattern); warning != "" {
				d.answer(map[string]any{"until": in.Pattern, "warning": warning}, func(w io.Writer) { fmt.Fprintln(w, "warning:", warning) })
			}
		}
		go func() { d.moves <- d.session.Wait() }()
		return
	}
	a, err := d.session.Exec(in)
	if in.Verb == debugger.VerbPause && d.going && errors.Is(err, debugger.ErrHeld) {
		// The run the last movement let go came to its next stop before
		// the pause: it is held where the pause would hold it, and that
		// stop is on its way.
		err = nil
	}
	if err != nil {
		d.fail(err)
		return
	}
	if a.State == nil {
		d.say(in, a)
	}
	// A warning follows what it is about.
	for _, w := range a.Warnings {
		fmt.Fprintln(d.s.err, "warning:", w)
	}
	if a.State != nil {
		// where and thread show the stop they answered with.
		d.show(*a.State)
		return
	}
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
		// The breakpoint as it now stands (as it was, for clear), as
		// break answers with it, and why it can never stop the run, but
		// for one cleared.
		out := map[string]any{"ok": true, "id": in.ID, "breakpoint": a.Breakpoint}
		if b := a.Breakpoint; b != nil && in.Verb != debugger.VerbClear {
			if warnings := breakWarnings(*b); len(warnings) > 0 {
				out["warning"] = strings.Join(warnings, "; ")
			}
		}
		d.answer(out, func(w io.Writer) { fmt.Fprintf(w, "breakpoint %d %s\n", in.ID, done) })
	case debugger.VerbErrors:
		d.answer(map[string]any{"break_on_error": a.BreakOnError}, func(w io.Writer) {
			fmt.Fprintf(w, "break on error is %s\n", map[bool]string{true: "on", false: "off"}[a.BreakOnError])
		})
	case debugger.VerbBreakpoints:
		d.answer(map[string]any{"breakpoints": nonNil(a.Breakpoints)}, func(w io.Writer) {
			if len(a.Breakpoints) == 0 {
				fmt.Fprintln(w, "no breakpoints (break PATTERN sets one)")
			}
			for _, b := range a.Breakpoints {
				state := ""
				if !b.Enabled {
					state = "  disabled"
				}
				fmt.Fprintf(w, "%d  %s  hits %d%s\n", b.ID, b.Spec(), b.Hits, state)
				if b.ConditionError != "" {
					fmt.Fprintf(w, "   the condition could not be evaluated: %s\n", b.ConditionError)
				}
				for _, warning := range breakWarnings(b) {
					fmt.Fprintf(w, "   %s\n", warning)
				}
			}
		})
	case debugger.VerbPrint:
		d.answer(map[string]any{"path": a.Path, "value": a.Value}, func(w io.Writer) {
			b, _ := json.MarshalIndent(a.Value, "", "  ")
			fmt.Fprintf(w, "%s = %s\n", a.Path, b)
		})
	case debugger.VerbStack:
		// Innermost first, as delve's stack and the text below list
		// frames: frame 0 is the stop's own.
		frames := slices.Clone(a.Stack)
		slices.Reverse(frames)
		d.answer(map[string]any{"stack": frames}, func(w io.Writer) {
			for i, f := range frames {
				fmt.Fprintf(w, "%d  %-6s %s\n", i, f.Kind, strings.TrimSpace(f.Path+" "+f.Tool))
			}
		})
	case debugger.VerbThreads:
		d.answer(map[string]any{"threads": nonNil(a.Threads)}, func(w io.Writer) {
			if len(a.Threads) == 0 {
				fmt.Fprintln(w, "no live threads: the run has ended")
			}
			for _, t := range a.Threads {
				mark, state := " ", "running"
				if t.Stopped {
					mark = "*"
				}
				if t.Held {
					state = "held"
				}
				switch {
				case t.Kind != "":
					fmt.Fprintf(w, "%s %s  %s at %s %s\n", mark, t.ID, state, t.Kind, t.Path)
				case t.Path != "":
					fmt.Fprintf(w, "%s %s  %s in %s, no stop passed yet\n", mark, t.ID, state, t.Path)
				default:
					fmt.Fprintf(w, "%s %s  %s, no stop passed yet\n", mark, t.ID, state)
				}
			}
		})
	case debugger.VerbPause:
		d.answer(map[string]any{"pausing": true}, func(w io.Writer) { fmt.Fprintln(w, "pausing at the next stop") })
	case debugger.VerbWatch:
		d.answer(map[string]any{"watch": a.Watch}, func(w io.Writer) { writeWatch(w, *a.Watch, d.width) })
	case debugger.VerbUnwatch:
		d.answer(map[string]any{"ok": true, "watch": in.ID}, func(w io.Writer) { fmt.Fprintf(w, "watch %d removed\n", in.ID) })
	case debugger.VerbWatches:
		d.answer(map[string]any{"watches": nonNil(a.Watches)}, func(w io.Writer) {
			if len(a.Watches) == 0 {
				fmt.Fprintln(w, "no watches (watch PATH sets one)")
			}
			for _, v := range a.Watches {
				writeWatch(w, v, d.width)
			}
		})
	}
}

// breakAnswer is the --json answer that says a breakpoint is set (kept:
// from an earlier session), with a warning when it can never stop the run
// (breakWarnings).
func breakAnswer(b debugger.Breakpoint, kept bool) map[string]any {
	out := map[string]any{"breakpoint": b}
	if kept {
		out["kept"] = true
	}
	if warnings := breakWarnings(b); len(warnings) > 0 {
		out["warning"] = strings.Join(warnings, "; ")
	}
	return out
}

// breakWarnings say why a breakpoint can never stop a run of the plan:
// no path of it matches the pattern, or the condition reads a step it does
// not have.
func breakWarnings(b debugger.Breakpoint) []string {
	var out []string
	for _, w := range []string{b.Unmatched, b.UnknownSteps} {
		if w != "" {
			out = append(out, w)
		}
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

// helpWidth is the width help text is wrapped at.
const helpWidth = 80

// usageColumn is the widest usage that has what it does beside it; a
// longer one has it on the lines below, so that the column leaves room.
const usageColumn = 24

// writeCommands writes each command: its usage and short forms, and what
// it does beside them, wrapped at helpWidth.
func writeCommands(w io.Writer, list []debugger.Syntax) {
	usages := make([]string, len(list))
	width := 0
	for i, s := range list {
		usages[i] = s.Usage()
		if len(s.Aliases) > 0 {
			usages[i] += " (" + strings.Join(s.Aliases, ", ") + ")"
		}
		if len(usages[i]) <= usageColumn {
			width = max(width, len(usages[i]))
		}
	}
	indent := strings.Repeat(" ", width+4)
	for i, s := range list {
		lines := wrapWords(s.Does, helpWidth-len(indent))
		if len(usages[i]) > width {
			fmt.Fprintf(w, "  %s\n", usages[i])
		} else {
			fmt.Fprintf(w, "  %-*s  %s\n", width, usages[i], lines[0])
			lines = lines[1:]
		}
		for _, l := range lines {
			fmt.Fprintf(w, "%s%s\n", indent, l)
		}
	}
}

// wrapWords breaks text into lines of at most width runes, between words;
// a word longer than width has a line of its own.
func wrapWords(text string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		switch {
		case line == "":
			line = word
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) <= width:
			line += " " + word
		default:
			lines = append(lines, line)
			line = word
		}
	}
	return append(lines, line)
}

// show prints a state: where the run stopped and why, or how it ended.
func (d *driver) show(st debugger.State) {
	d.last = st
	switch {
	case d.asJSON && st.Finished && d.finish != nil:
		writeJSONLine(d.s.out, d.finish(st))
		return
	case d.asJSON:
		writeJSONLine(d.s.out, st)
		return
	}
	if st.Finished {
		fmt.Fprintf(d.s.err, "run finished: %s\n", st.Status)
		return
	}
	snap := st.Stop
	w := d.s.err
	fmt.Fprintf(w, "stopped at %s (%s) by %s\n", snap.Path, snap.Kind, st.Reason)
	for _, part := range []struct {
		label string
		value any
	}{{"input", snap.Input}, {"output", snap.Output}} {
		if part.value != nil {
			d.valueLine(part.label, engine.JSONText(part.value))
		}
	}
	if snap.Error != "" {
		d.proseLine("error", snap.Error)
	}
	switch snap.Recorded {
	case "":
	case "decline":
		d.proseLine("record", "the recorded run declined this ask: going on declines it again, and the ask gives its default, the output above")
	case "answer":
		d.proseLine("record", "the recorded run answered this ask: going on gives its answer, the output above")
	default:
		d.proseLine("record", fmt.Sprintf("the recorded run's %s here is made again: going on gives the output above", snap.Recorded))
	}
	if snap.Ask != nil {
		d.proseLine("ask", snap.Ask.Prompt+" (answer JSON | decline)")
	}
	if snap.Approval {
		d.proseLine("approve", snap.Tool+"? (approve | deny | edit JSON)")
	}
	if snap.Kind == engine.StopAsk && snap.Prefill != nil && snap.Schema != nil {
		// Elsewhere the prefill is only where an editor starts (a tool's
		// example output, a skeleton), not a value the stop expects.
		d.valueLine("expects", engine.JSONText(snap.Prefill))
	}
	if len(snap.Readers) > 0 {
		d.valueLine("read by", strings.Join(snap.Readers, "; "))
	}
	switch others := len(st.Threads) - 1; {
	case others == 1:
		fmt.Fprintln(w, "  1 other thread held (threads lists it)")
	case others > 1:
		fmt.Fprintf(w, "  %d other threads held (threads lists them)\n", others)
	}
	for _, v := range st.Watches {
		writeWatch(w, v, d.width)
	}
}

// stopLabel is how wide a stop line's label column is, with its indent:
// "  read by ".
const stopLabel = 10

// valueLine writes a line of a stop: a label and a value, cut at the
// width of the terminal the stops go to.
func (d *driver) valueLine(label, value string) {
	fmt.Fprintf(d.s.err, "  %-7s %s\n", label, cut(value, d.width-stopLabel))
}

// proseLine writes a line of a stop that is read whole (an error, an ask's
// prompt), wrapped at the terminal's width under its label.
func (d *driver) proseLine(label, text string) {
	for i, l := range wrapWords(text, d.width-stopLabel) {
		if i > 0 {
			label = ""
		}
		fmt.Fprintf(d.s.err, "  %-7s %s\n", label, l)
	}
}

// stopWidth is the width of the terminal stream is, or helpWidth when it
// is none (a pipe, a file, a CI log).
func stopWidth(stream any) int {
	if f, ok := terminalFile(stream); ok {
		if w, _, err := term.GetSize(f.Fd()); err == nil && w > 2*stopLabel {
			return w
		}
	}
	return helpWidth
}

// writeWatch writes a watch expression and what it read, one line, its
// value cut to fit width.
func writeWatch(w io.Writer, v debugger.WatchValue, width int) {
	switch {
	case v.Error != "":
		fmt.Fprintf(w, "  watch %d  %s: %s\n", v.ID, v.Path, v.Error)
	case v.Read:
		head := fmt.Sprintf("  watch %d  %s = ", v.ID, v.Path)
		fmt.Fprintf(w, "%s%s\n", head, cut(engine.JSONText(v.Value), max(width-utf8.RuneCountInString(head), stopLabel)))
	default:
		fmt.Fprintf(w, "  watch %d  %s\n", v.ID, v.Path)
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

// nonNil is list, or an empty list for none, so that JSON says [] and
// not null.
func nonNil[T any](list []T) []T {
	if list == nil {
		return []T{}
	}
	return list
}
