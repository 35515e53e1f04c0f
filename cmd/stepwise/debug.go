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
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/model"
	"github.com/stepwise-dev/stepwise/engine/path"
	"github.com/stepwise-dev/stepwise/engine/tools"
)

func newDebugCommand(s *streams) *cobra.Command {
	var (
		breaks     []string
		scriptFile string
		asJSON     bool
	)
	cmd := &cobra.Command{
		Use:   "debug PLAN [INPUT_JSON] [--break PATTERN]... [--script FILE] [--json]",
		Short: "Run a plan under the debugger, driven by commands on stdin",
		Long: "Run PLAN stopping at breakpoints, and read commands from stdin, one a line:\n\n" +
			commandList() + "\n" +
			"inject, replace, answer and decline decide at the stop, then go on as next does.\n" +
			"Breakpoints are kept per plan in the project (.stepwise/breakpoints/), so the next session\n" +
			"has them. Break on error is on. With --json, every stop and every answer is one JSON object\n" +
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
			return debugPlan(cmd.Context(), s, args[0], inputs, breaks, scriptFile, asJSON)
		},
	}
	cmd.Flags().StringArrayVar(&breaks, "break", nil, "set a breakpoint on a path pattern before the run starts; repeatable")
	cmd.Flags().StringVar(&scriptFile, "script", "", "answer every model call from this replies file")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print every stop and answer as one JSON object on stdout")
	return cmd
}

// debugPlan runs one plan under a debugger session driven by the lines of
// stdin.
func debugPlan(ctx context.Context, s *streams, planArg string, inputs map[string]any, breaks []string, script string, asJSON bool) error {
	projects := projectsByDir{w: s.err}
	proj, file, err := projects.locate(planArg)
	if err != nil {
		return err
	}
	v, err := validatePlan(proj, file)
	if err != nil {
		return err
	}
	if !v.report.OK() {
		printValidation(s.err, v, false)
		return &exitCode{code: exitFailure, msg: fmt.Sprintf("%s has problems; fix them and debug again", v.file)}
	}
	scripts, err := loadScripts(proj.cfg, script)
	if err != nil {
		return &exitCode{code: exitFailure, msg: proj.displayText(err.Error())}
	}
	runtime := tools.NewRuntime(proj.cfg, proj.catalog)
	defer runtime.Close()
	recorder, closeStore, err := openRecorder(proj.cfg)
	if err != nil {
		return err
	}
	var sinks []engine.Sink
	if recorder != nil {
		sinks = append(sinks, recorder)
	}
	session := debugger.New(v.plan, engine.Options{Config: proj.cfg, Catalog: proj.catalog, Tools: runtime,
		Models: model.New(proj.cfg, model.Options{ScriptFile: script, Scripts: scripts}), Sinks: sinks})

	d := &driver{s: s, session: session, asJSON: asJSON}
	if proj.cfg.Project != nil {
		d.keep = debugger.BreakpointFile(proj.cfg.Project.Dir, planName(v))
		if err := session.LoadBreakpoints(d.keep); err != nil {
			fmt.Fprintln(s.err, "warning: the kept breakpoints could not be read:", err)
		}
		// The kept breakpoints are said, as if set now, so that a front
		// end knows their ids.
		for _, b := range session.Breakpoints() {
			d.answer(map[string]any{"breakpoint": b, "kept": true}, func(w io.Writer) { fmt.Fprintf(w, "breakpoint %d at %s (kept)\n", b.ID, b.Spec()) })
		}
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
				state = d.resume(debugger.Command{Decision: engine.Decision{Action: engine.Abort}, Move: debugger.Continue})
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
	closeStore()
	if ctx.Err() != nil {
		return &exitCode{code: exitInterrupted}
	}
	if state.Result == nil {
		return &exitCode{code: exitFailure, msg: state.Error}
	}
	if asJSON {
		// The end state carried the output; a summary is for people.
		printSummary(s.err, v.plan, state.Result, recorder != nil)
		return runExit(state.Result)
	}
	return reportRun(s, v.plan, state.Result, runRequest{}, recorder != nil)
}

func planName(v *validation) string {
	if v.plan.Identifier.Value != "" {
		return v.plan.Identifier.Value
	}
	return strings.TrimSuffix(v.file, ".yaml")
}

// driver reads the line commands of one session.
type driver struct {
	s       *streams
	session *debugger.Session
	asJSON  bool
	keep    string // the file the plan's breakpoints are kept in
	last    debugger.State
}

// workbenchOnly are the commands of the shared language that only the
// workbench carries out: they select, open or start things this driver has
// no screen for.
var workbenchOnly = []debugger.Verb{debugger.VerbPause, debugger.VerbRun, debugger.VerbDebug, debugger.VerbGoto,
	debugger.VerbOpen, debugger.VerbFork, debugger.VerbDiff, debugger.VerbTools, debugger.VerbRuns, debugger.VerbNew}

// command carries out one line. moved is set, with the new state, when the
// run went on.
func (d *driver) command(line string) (debugger.State, bool) {
	in, err := debugger.ParseCommand(line)
	switch {
	case errors.Is(err, debugger.ErrEmptyLine):
		return debugger.State{}, false
	case err != nil:
		d.fail(err)
		return debugger.State{}, false
	}
	if cmd, ok := in.Command(); ok {
		return d.resume(cmd), true
	}
	switch in.Verb {
	case debugger.VerbBreak:
		d.setBreak(in)
	case debugger.VerbClear:
		d.withID(in.ID, d.session.Clear, "cleared")
	case debugger.VerbEnable, debugger.VerbDisable:
		on := in.Verb == debugger.VerbEnable
		d.withID(in.ID, func(id int) error { return d.session.Enable(id, on) }, string(in.Verb)+"d")
	case debugger.VerbCond:
		d.withID(in.ID, func(id int) error { return d.session.SetCondition(id, in.Condition) }, "condition set")
	case debugger.VerbErrors:
		d.session.BreakOnError(in.On)
		d.answer(map[string]any{"break_on_error": in.On}, func(w io.Writer) { fmt.Fprintf(w, "break on error: %v\n", in.On) })
	case debugger.VerbBreakpoints:
		d.answer(map[string]any{"breakpoints": d.session.Breakpoints()}, func(w io.Writer) {
			for _, b := range d.session.Breakpoints() {
				fmt.Fprintf(w, "%d  %s  hits %d  enabled %v\n", b.ID, b.Spec(), b.Hits, b.Enabled)
				if b.ConditionError != "" {
					fmt.Fprintf(w, "   the condition could not be evaluated: %s\n", b.ConditionError)
				}
			}
		})
	case debugger.VerbQuit:
		return d.resume(debugger.Command{Decision: engine.Decision{Action: engine.Abort}, Move: debugger.Continue}), true
	case debugger.VerbPrint:
		d.print(in.Path)
	case debugger.VerbStack:
		d.answer(map[string]any{"stack": d.stop().Stack}, func(w io.Writer) {
			for i := len(d.stop().Stack) - 1; i >= 0; i-- {
				f := d.stop().Stack[i]
				fmt.Fprintf(w, "%d  %-6s %s %s\n", len(d.stop().Stack)-1-i, f.Kind, f.Path, f.Tool)
			}
		})
	case debugger.VerbThreads:
		threads := d.session.Threads()
		d.answer(map[string]any{"threads": threads}, func(w io.Writer) {
			for _, t := range threads {
				mark := " "
				if t.Stopped {
					mark = "*"
				}
				fmt.Fprintf(w, "%s %s  at %s %s\n", mark, t.ID, t.Kind, t.Path)
			}
		})
	case debugger.VerbWhere:
		d.show(d.last)
	case debugger.VerbHelp:
		d.help(in.Topic)
	default:
		d.fail(fmt.Errorf("%s is a workbench command; it is not available here (help lists what is)", in.Verb))
	}
	return debugger.State{}, false
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

func (d *driver) stop() *debugger.Snapshot {
	if d.last.Stop == nil {
		return &debugger.Snapshot{}
	}
	return d.last.Stop
}

func (d *driver) resume(cmd debugger.Command) debugger.State {
	st, err := d.session.Do(cmd)
	if err != nil {
		d.fail(err)
		return d.last
	}
	return st
}

// setBreak sets the breakpoint of a break line.
func (d *driver) setBreak(in debugger.Instruction) {
	b, err := d.session.Break(in.Pattern, in.Kinds, in.Condition)
	if err != nil {
		d.fail(err)
		return
	}
	last := path.Last(in.Pattern)
	for _, k := range in.Kinds {
		roundKind := k == engine.StopRound || k == engine.StopReply
		if roundKind && path.SegmentKind("", last) != path.KindRound && !strings.Contains(last, "*") {
			// A common slip: rounds sit one level below the agent step.
			fmt.Fprintf(d.s.err, "warning: %s stops are at an agent's rounds, %s/agent.N; this pattern names none\n", k, in.Pattern)
			break
		}
	}
	d.keepBreakpoints()
	d.answer(map[string]any{"breakpoint": b}, func(w io.Writer) { fmt.Fprintf(w, "breakpoint %d at %s\n", b.ID, b.Spec()) })
}

func (d *driver) withID(id int, fn func(int) error, done string) {
	if err := fn(id); err != nil {
		d.fail(err)
		return
	}
	d.keepBreakpoints()
	d.answer(map[string]any{"ok": true, "breakpoint": id}, func(w io.Writer) { fmt.Fprintf(w, "breakpoint %d %s\n", id, done) })
}

func (d *driver) keepBreakpoints() {
	if d.keep == "" {
		return
	}
	if err := d.session.SaveBreakpoints(d.keep); err != nil {
		fmt.Fprintln(d.s.err, "warning: the breakpoints could not be kept:", err)
	}
}

// print evaluates a template path (item.id, E0.issues.0) against the
// scope at the stop.
func (d *driver) print(path string) {
	v, err := d.stop().Eval(path)
	if err != nil {
		d.fail(err)
		return
	}
	d.answer(map[string]any{"path": path, "value": v}, func(w io.Writer) {
		b, _ := json.MarshalIndent(v, "", "  ")
		fmt.Fprintf(w, "%s = %s\n", path, b)
	})
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
