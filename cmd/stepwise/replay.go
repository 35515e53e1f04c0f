package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/debugger/workspace"
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/path"
	"github.com/stepwise-dev/stepwise/engine/record"
	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/tui/format"
)

func newReplayCommand(s *streams) *cobra.Command {
	var (
		asJSON bool
		debug  debugFlags
		shown  progressFlags
	)
	cmd := &cobra.Command{
		Use:   "replay RUN",
		Short: "Run a recorded run again from its record: no model call, no tool side effect",
		Long: "Run the plan of the run RUN names again, as its file reads now, with the run's inputs: every\n" +
			"model call is answered with the reply the run recorded and every tool call with the result it\n" +
			"recorded, so nothing is spent and no tool runs. Each step's input, each agent round's request\n" +
			"and each tool call's arguments are compared with the record, and the first that differs (or a\n" +
			"step, round or call the record does not have) is the divergence: the replay stops there and\n" +
			"says what the record holds and what the plan does now. A replay that reaches its end compares\n" +
			"every step's result. The replay is recorded as a run of its own. Exit 0 when it reproduces the\n" +
			"record, 1 with a divergence (or a failure).\n\n" +
			"With --debug the replay runs under the debugger, driven by commands on stdin as stepwise debug\n" +
			"is: it stops at the plan's breakpoints and those --break sets, and a stop let go on is answered\n" +
			"from the record.",
		Args: exactArgs(1, "one RUN id (or a prefix of it; stepwise runs lists them)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			err := heldValueError(cmd)
			if err == nil {
				err = debug.check(cmd)
			}
			if err == nil {
				err = shown.check()
			}
			switch {
			case err != nil && debug.on:
				return jsonFlag(asJSON, jsonStream).refuse(s, err)
			case err != nil:
				return refuseReplay(s, replayJSON{ReplayOf: args[0]}, asJSON, exitUsage, err.Error())
			case debug.on:
				return debugReplay(cmd.Context(), s, args[0], debug, asJSON)
			}
			return replayRun(cmd.Context(), s, args[0], asJSON, shown)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print {run_id, replay_of, plan, identical, divergence, failed_at, steps, model_calls} on stdout; with --debug, every stop and answer as one JSON object")
	debug.add(cmd)
	shown.add(cmd)
	return cmd
}

func newForkCommand(s *streams) *cobra.Command {
	var (
		from       string
		setFlags   []string
		asJSON     bool
		scriptFile string
		maxCost    float64
		events     string
		debug      debugFlags
		shown      progressFlags
	)
	cmd := &cobra.Command{
		Use:   "fork RUN --from PATH [--set PATH=JSON]... [--debug [--break PATTERN]...]",
		Short: "Run a recorded run again from one of its steps",
		Long: "Run the plan of the run RUN names again, as its file reads now, with the run's inputs, from the\n" +
			"first step whose path matches --from (* within a segment, ** across): the steps that had\n" +
			"finished before it started reuse their recorded results and do not run; it and everything\n" +
			"after run live. --set PATH=JSON gives the steps PATH matches that result instead of running\n" +
			"them; the value must be JSON (a string in quotes: --set 'PATH=\"text\"'), and PATH must name a\n" +
			"step of the plan. A fork from an item of a map or filter (E1/do.3), or from a step inside\n" +
			"one, reuses the recorded results of the other items: only that item runs again, then what\n" +
			"follows the map. The fork is recorded as a run of its own, and reported as stepwise run\n" +
			"reports one, with the same exit codes; --events jsonl writes its events on stderr as run's\n" +
			"does. With --debug the fork runs under the debugger, driven\n" +
			"by commands on stdin as stepwise debug is: it stops at the plan's breakpoints and those\n" +
			"--break sets.",
		Args: exactArgs(1, "one RUN id (or a prefix of it; stepwise runs lists them)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			err := heldValueError(cmd)
			if err == nil {
				err = debug.check(cmd)
			}
			if err == nil {
				err = shown.check()
			}
			spec, specErr := forkSpec(from, setFlags)
			if err == nil {
				err = specErr
			}
			req := runRequest{asJSON: asJSON, events: events, script: scriptFile, maxCost: maxCost, shown: shown}
			switch {
			case err != nil && debug.on:
				return jsonFlag(asJSON, jsonStream).refuse(s, err)
			case err != nil:
				// Refused as run refuses its flags: under --events jsonl,
				// as a JSON line.
				return req.refuse(s, args[0], exitUsage, err.Error(), nil, nil)
			case debug.on:
				return debugFork(cmd.Context(), s, args[0], spec, workspace.RunOptions{Script: scriptFile, MaxCost: maxCost}, debug, asJSON)
			}
			return forkRun(cmd.Context(), s, args[0], spec, req)
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "the step to run again from: a path pattern, matched against the recorded steps in the order they started")
	cmd.Flags().StringArrayVar(&setFlags, "set", nil, "give the steps PATH matches this result instead of running them, PATH=JSON; repeatable")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the fork's envelope {answer, output, plan, steps_executed, exit, usage, run_id} on stdout")
	cmd.Flags().StringVar(&scriptFile, "script", "", "answer the fork's model calls from this replies file instead of the configured providers")
	addEvents(cmd, &events)
	addMaxCost(cmd, &maxCost)
	debug.add(cmd)
	shown.add(cmd)
	return cmd
}

// forkSpec reads fork's --from and --set flags.
func forkSpec(from string, setFlags []string) (debugger.ForkSpec, error) {
	if from == "" {
		return debugger.ForkSpec{}, usageError{errors.New("fork needs --from PATH, the step to run again from")}
	}
	var sets []debugger.ForkSet
	for _, f := range setFlags {
		p, text, ok := strings.Cut(f, "=")
		if !ok || p == "" {
			return debugger.ForkSpec{}, usageError{fmt.Errorf("--set takes PATH=JSON, not '%s'", f)}
		}
		// The value is JSON, always: text taken as a string when it does
		// not parse would hide a typo until the run fails.
		var v any
		if err := json.Unmarshal([]byte(text), &v); err != nil {
			return debugger.ForkSpec{}, usageError{fmt.Errorf("--set %s: the value %s is not JSON (%v); give a string in JSON quotes, e.g. --set '%s=\"%s\"'",
				p, text, err, p, text)}
		}
		sets = append(sets, debugger.ForkSet{Path: p, Value: v})
	}
	return debugger.ForkSpec{From: from, Sets: sets}, nil
}

func newDiffCommand(s *streams) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "diff RUN_A RUN_B",
		Short: "Compare two recorded runs step by step",
		Long: "Compare two recorded runs (ids, or prefixes only one run has) step by step: every path either\n" +
			"run has, in plan order (a map's items by index, each item's steps in its body's order), with each\n" +
			"run's status and how B's own time (held time at stops left out) and tokens differ from A's. Where\n" +
			"the results differ, the places they differ follow the step, key by key and index by index, A's\n" +
			"value beside B's. A step a run did not run shows -. Each run's steps and tokens are counted as\n" +
			"its record counts them (stepwise runs, inspect).",
		Args: exactArgs(2, "two RUN ids (or prefixes of them; stepwise runs lists them)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			form := jsonFlag(asJSON, jsonObject)
			ws, err := openProject(s, form)
			if err != nil {
				return err
			}
			defer ws.Close()
			a, b, steps, err := ws.Diff(cmd.Context(), args[0], args[1])
			if err != nil {
				return form.refuse(s, err)
			}
			countA, countB := debugger.Count(steps)
			if asJSON {
				return writeJSON(s.out, diffJSON{A: diffSide(a, countA), B: diffSide(b, countB), Steps: steps, Count: len(steps)})
			}
			printDiff(s.out, a, b, steps)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print {a, b: {id, plan, status, steps, tokens}, steps: [{path, status_a, status_b, result_a, result_b, changes: [{at, a, b, only}], ms_delta, tokens_a, tokens_b, tokens_delta}], count}")
	return cmd
}

// recordedRun is a recorded run and the plan it ran, as its file reads now,
// with the workspace of the project that file belongs to.
type recordedRun struct {
	rec  *debugger.Recording
	ws   *workspace.Workspace
	doc  workspace.Document
	name string
}

// loadRecorded reads the run id names from the run store of the working
// directory's project, and loads and validates its plan file as it reads
// now.
func loadRecorded(ctx context.Context, projects *workspaces, id string) (*recordedRun, error) {
	here, err := projects.at("")
	if err != nil {
		return nil, err
	}
	rec, err := here.Recording(ctx, id)
	if err != nil {
		return nil, err
	}
	file := planFile(rec.Run)
	if file == "" {
		return nil, fmt.Errorf("run %s does not record its plan file", rec.Run.ID)
	}
	if _, err := os.Stat(file); err != nil {
		return nil, fmt.Errorf("run %s ran %s, which cannot be read now: %v", rec.Run.ID, file, err)
	}
	ws, d, err := projects.load(file)
	if err != nil {
		return nil, err
	}
	r := &recordedRun{rec: rec, ws: ws, doc: d, name: rec.Run.Plan}
	if !d.Report.OK() {
		problems := make([]string, len(d.Report.Problems))
		for i, p := range d.Report.Problems {
			problems[i] = p.String()
		}
		return r, fmt.Errorf("%s has problems; fix them and try again:\n  - %s", d.File, strings.Join(problems, "\n  - "))
	}
	return r, nil
}

// replayJSON is replay's --json answer.
type replayJSON struct {
	// RunID is the replay's own run in the store.
	RunID      string               `json:"run_id,omitempty"`
	ReplayOf   string               `json:"replay_of"`
	Plan       string               `json:"plan"`
	Identical  bool                 `json:"identical"`
	Divergence *debugger.Divergence `json:"divergence"`
	FailedAt   string               `json:"failed_at,omitempty"`
	AbortedAt  string               `json:"aborted_at,omitempty"`
	Steps      int                  `json:"steps"`
	ModelCalls int                  `json:"model_calls"`
	Error      string               `json:"error,omitempty"`
}

// refuseReplay reports a replay that failed, msg saying why, and returns
// its exit status, code: with --json, env carries msg as its error, so
// that the envelope is complete whatever the exit code.
func refuseReplay(s *streams, env replayJSON, asJSON bool, code int, msg string) error {
	if asJSON {
		env.Error = msg
		if err := writeJSON(s.out, env); err != nil {
			return err
		}
	}
	return &exitCode{code: code, msg: msg}
}

// replayRun replays one run and reports how it compares with its record.
func replayRun(ctx context.Context, s *streams, id string, asJSON bool, shown progressFlags) error {
	env := replayJSON{ReplayOf: id}
	fail := func(code int, msg string) error {
		return refuseReplay(s, env, asJSON, code, msg)
	}
	projects := workspaces{warnings: workspace.PrintWarnings(s.err)}
	defer projects.close()
	r, err := loadRecorded(ctx, &projects, id)
	if r != nil {
		env.ReplayOf, env.Plan = r.rec.Run.ID, r.name
	}
	if err != nil {
		return fail(exitFailure, err.Error())
	}
	// A replay tells no step as it starts or ends off a terminal: every
	// one is answered from the record, and its lines would only repeat
	// it; a long one is told as it goes.
	progressOut := newLineBatcher(s.err)
	display := newProgressDisplay(s, progressOut, shown, false, forkOrigin{})
	o := workspace.RunOptions{Sinks: []engine.Sink{shownBy(display, progressOut)}, OnPrune: notices{w: progressOut, quiet: shown.quiet}.pruned}
	out, err := r.ws.Replay(ctx, r.rec, r.doc.Plan, o)
	display.close()
	progressOut.Flush()
	if err != nil {
		return fail(exitFailure, "the replay could not start: "+r.ws.DisplayText(err.Error()))
	}
	env.RunID, env.Identical, env.Divergence, env.FailedAt, env.AbortedAt = out.Run.RunID, out.Identical(), out.Divergence, out.FailedAt, out.AbortedAt
	env.Steps, env.ModelCalls = replaySteps(ctx, s, r, out), out.ModelCalls
	warnUnrecorded(notices{w: s.err}, projects.close())
	if ctx.Err() != nil {
		env.Identical, env.Divergence = false, nil
		return fail(exitInterrupted, "the replay was interrupted")
	}
	if asJSON {
		if err := writeJSON(s.out, env); err != nil {
			return err
		}
	} else {
		printReplay(s.out, r, out)
	}
	if r.ws.Project().Recorded && !shown.quiet {
		fmt.Fprintf(s.err, "run %s, a replay of %s (stepwise inspect %s)\n", out.Run.RunID, r.rec.Run.ID, format.ShortID(out.Run.RunID))
	}
	if !out.Identical() {
		return &exitCode{code: exitFailure}
	}
	return nil
}

// replaySteps counts the steps of the replay's own run as runs, inspect
// and diff count them (debugger.Count over its record), so that a replay
// cut short by a divergence says the steps it ran, as they do. A replay
// not recorded has no record to count: the engine's count is the same
// count, made as it ran.
func replaySteps(ctx context.Context, s *streams, r *recordedRun, out *debugger.ReplayResult) int {
	if !r.ws.Project().Recorded {
		return out.Run.StepsExecuted
	}
	_, _, steps, err := r.ws.Diff(ctx, r.rec.Run.ID, out.Run.RunID)
	if err != nil {
		fmt.Fprintln(s.err, "warning: the replay's record could not be read to count its steps:", err)
		return out.Run.StepsExecuted
	}
	_, replayed := debugger.Count(steps)
	return replayed.Steps
}

// printReplay tells how a replay compares with its record.
func printReplay(w io.Writer, r *recordedRun, out *debugger.ReplayResult) {
	of := fmt.Sprintf("replay of run %s (%s)", format.ShortID(r.rec.Run.ID), r.name)
	calls := countNoun(out.ModelCalls, "model call", "model calls")
	d := out.Divergence
	switch {
	case d == nil && out.AbortedAt != "":
		fmt.Fprintf(w, "✓ %s reproduced the run up to where it was aborted, at %s, and aborted there too (%s answered from the record)\n", of, out.AbortedAt, calls)
	case d == nil && out.FailedAt != "":
		fmt.Fprintf(w, "✓ %s reproduced the run up to its failure at %s (%s answered from the record)\n", of, out.FailedAt, calls)
		if msg := r.rec.Run.Error; msg != "" {
			fmt.Fprintf(w, "  the recorded failure: %s\n", cut(msg, valueWidth))
		}
	case d == nil:
		fmt.Fprintf(w, "✓ %s matches its record: %s reproduced, %s answered from the record\n", of, countNoun(out.Steps, "step", "steps"), calls)
	default:
		where := "at " + d.Path
		if d.Path == "" {
			where = "in its outcome"
		}
		fmt.Fprintf(w, "✗ %s diverges %s: %s\n", of, where, d.Message)
		if d.Expected != nil {
			fmt.Fprintf(w, "  recorded  %s\n", cut(engine.JSONText(d.Expected), valueWidth))
		}
		if d.Got != nil {
			fmt.Fprintf(w, "  now       %s\n", cut(engine.JSONText(d.Got), valueWidth))
		}
		if d.CutShort {
			fmt.Fprintln(w, "  the replay stopped there")
		}
	}
}

// forkRun forks one run and reports the fork as stepwise run reports a
// run.
func forkRun(ctx context.Context, s *streams, id string, spec debugger.ForkSpec, req runRequest) error {
	req.plan = id
	projects := workspaces{warnings: req.notices(s.err).configWarning}
	defer projects.close()
	r, err := loadRecorded(ctx, &projects, id)
	if r != nil {
		req.plan = r.name
	}
	if err != nil {
		return req.refuse(s, req.plan, exitFailure, err.Error(), nil, nil)
	}
	from, err := r.rec.ForkPoint(spec.From)
	if msg, ok := forkSpecRefusal(err); ok {
		return req.refuse(s, req.plan, exitUsage, msg, nil, nil)
	}
	progressOut := newLineBatcher(s.err)
	o := req.runOptions(progressOut)
	warnUnpriced(req.notices(s.err), r.ws, o)
	display := req.watch(s, r.ws, progressOut, &o, nil, forkOrigin{run: r.rec.Run.ID, from: from})
	plan := r.doc.Plan
	var answer *streamedAnswer
	if !req.asJSON && plan.FinishMode() == plans.FinishSolver {
		answer = solverAnswer(s.hidingSecrets(r.ws), progressOut, req.notices(progressOut), display, &o)
	}
	out, err := r.ws.Fork(ctx, r.rec, plan, spec, o)
	display.close()
	progressOut.Flush()
	closeErr := projects.close()
	if err != nil {
		var inputErr *engine.InputError
		if msg, ok := forkSpecRefusal(err); ok {
			return req.refuse(s, req.plan, exitUsage, msg, nil, nil)
		}
		switch {
		case errors.As(err, &inputErr):
			return req.refuse(s, req.plan, exitNeedsInput, fmt.Sprintf("the inputs of run %s no longer fit plan '%s'", r.rec.Run.ID, inputErr.Plan), strings.Split(inputErr.Error(), "\n")[1:], inputErr.Schema)
		}
		return req.refuse(s, req.plan, exitFailure, r.ws.DisplayText(err.Error()), nil, nil)
	}
	warnUnrecorded(req.notices(s.err), closeErr)
	answer.end(out.Run)
	if req.events != "jsonl" && !req.shown.quiet {
		printFork(s.err, out)
	}
	warnUnreached(req.notices(s.err), out)
	err = reportRun(s.hidingSecrets(r.ws), plan, out.Run, req, r.ws.Project().Recorded, notRun{reused: len(out.Reused), set: len(out.Set)})
	if ctx.Err() != nil {
		return &exitCode{code: exitInterrupted}
	}
	return err
}

// forkSpecRefusal says which of fork's flags does not fit, for a
// *debugger.ForkSpecError.
func forkSpecRefusal(err error) (string, bool) {
	var specErr *debugger.ForkSpecError
	if !errors.As(err, &specErr) {
		return "", false
	}
	flag := "--from"
	if specErr.Set {
		flag = "--set"
	}
	return strings.TrimSpace(flag+" "+specErr.Pattern) + ": " + specErr.Reason, true
}

// printFork tells on stderr how many steps a fork ran, what it took from
// the record and what it was given (--set); where it started was told as
// it started. The warnings of a --set it never came to are
// warnUnreached's.
func printFork(w io.Writer, out *debugger.ForkResult) {
	ran := out.Run.StepsExecuted - len(out.Reused) - len(out.Set)
	line := fmt.Sprintf("ran %s, reused %d of run %s", countNoun(ran, "step", "steps"), len(out.Reused), format.ShortID(out.Of))
	if len(out.Reused) > 0 {
		line += ": " + stepsText(out.Reused)
	}
	fmt.Fprintln(w, line)
	if len(out.Set) > 0 {
		fmt.Fprintf(w, "set %s with --set: %s\n", countNoun(len(out.Set), "step", "steps"), stepsText(out.Set))
	}
}

// warnUnreached warns of each --set whose steps the fork never came to,
// after its summary, and under --quiet too.
func warnUnreached(told notices, out *debugger.ForkResult) {
	for _, p := range out.Unreached {
		told.warn(warningAbout{Set: p}, "the fork ran no step there")
	}
}

// stepsText names steps (a fork's reused or set ones, in the order the
// fork reached them) in a line: those outside any map, filter or reduce
// item by path, and the items of each list step (their steps with them)
// by count and span: "E0; E1: 199 items, do.0 to do.199 but do.150".
func stepsText(steps []string) string {
	// group is a step reused, or the items of a list step reused.
	type group struct {
		step    string
		indexes map[int]bool
	}
	var groups []*group
	lists := map[string]*group{}
	for _, p := range steps {
		list, index, ok := outerItem(p)
		if !ok {
			groups = append(groups, &group{step: p})
			continue
		}
		g := lists[list]
		if g == nil {
			g = &group{step: list, indexes: map[int]bool{}}
			lists[list] = g
			groups = append(groups, g)
		}
		g.indexes[index] = true
	}
	parts := make([]string, len(groups))
	for i, g := range groups {
		parts[i] = g.step
		if g.indexes != nil {
			parts[i] += ": " + itemSpan(slices.Sorted(maps.Keys(g.indexes)))
		}
	}
	return strings.Join(parts, "; ")
}

// itemSpan tells a sorted list of item indexes: how many, from which to
// which, and the few between them that are not in it.
func itemSpan(indexes []int) string {
	first, last := indexes[0], indexes[len(indexes)-1]
	text := countNoun(len(indexes), "item", "items")
	if first == last {
		return text + ", do." + strconv.Itoa(first)
	}
	text += ", do." + strconv.Itoa(first) + " to do." + strconv.Itoa(last)
	switch missing := last - first + 1 - len(indexes); {
	case missing == 0:
		return text
	case missing > 3:
		return text + " but " + strconv.Itoa(missing) + " others"
	}
	var but []string
	next := 1
	for n := first + 1; n < last; n++ {
		if indexes[next] == n {
			next++
			continue
		}
		but = append(but, "do."+strconv.Itoa(n))
	}
	return text + " but " + strings.Join(but, ", ")
}

// outerItem finds the outermost map, filter or reduce item p lies in (or
// is): the list step's path and the item's index.
func outerItem(p string) (list string, index int, ok bool) {
	segs := path.Segments(p)
	for i, seg := range segs {
		if n, isItem := path.ItemIndex(seg); isItem && i > 0 {
			return strings.Join(segs[:i], "/"), n, true
		}
	}
	return "", 0, false
}

// diffJSON is diff's --json answer.
type diffJSON struct {
	A     diffRunJSON         `json:"a"`
	B     diffRunJSON         `json:"b"`
	Steps []debugger.StepDiff `json:"steps"`
	Count int                 `json:"count"`
}

// diffRunJSON is one run of a diff: which, how it ended, and what it
// counts.
type diffRunJSON struct {
	ID     string `json:"id"`
	Plan   string `json:"plan"`
	Status string `json:"status"`
	debugger.RunCounts
}

func diffSide(d *record.RunDetail, c debugger.RunCounts) diffRunJSON {
	return diffRunJSON{ID: d.ID, Plan: d.Plan, Status: runStatus(d.RunSummary), RunCounts: c}
}

// printDiff prints a line per run, then one line per step that differs
// (the statuses, how many places the results differ in, and B's time and
// tokens against A's; "only in B" for a step one run alone ran) and how
// many are the same, then the places each differing result of a step both
// ran differs, A's value beside B's.
func printDiff(w io.Writer, a, b *record.RunDetail, steps []debugger.StepDiff) {
	countA, countB := debugger.Count(steps)
	for _, side := range []struct {
		which string
		d     *record.RunDetail
		c     debugger.RunCounts
	}{{"A", a, countA}, {"B", b, countB}} {
		fmt.Fprintf(w, "%s %s (%s, %s, %s, %s tokens)\n", side.which, format.ShortID(side.d.ID), side.d.Plan, runStatus(side.d.RunSummary),
			countNoun(side.c.Steps, "step", "steps"), format.Tokens(side.c.Tokens))
	}
	fmt.Fprintln(w)
	var differing []debugger.StepDiff
	for _, d := range steps {
		if d.Differs {
			differing = append(differing, d)
		}
	}
	if len(differing) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "PATH\tA\tB\tRESULT\tΔTIME\tΔTOKENS")
		for _, d := range differing {
			// A step differs in its status alone, or its result is
			// missing on one side, or it differs in some places.
			result, took, tokens := "same", format.MillisDelta(d.MsDelta), format.Delta(d.TokensDelta)
			switch {
			case d.OnlyIn() != "":
				// One run did not come to the step: nothing to compare.
				result, took, tokens = "only in "+d.OnlyIn(), "-", "-"
			case d.ResultA == nil && d.ResultB == nil:
				result = "-"
			case len(d.Changes) > 0:
				result = countNoun(len(d.Changes), "change", "changes")
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", d.Path, marked(d.StatusA, d.DecidedA, d.ReusedA), marked(d.StatusB, d.DecidedB, d.ReusedB),
				result, took, tokens)
		}
		tw.Flush()
	}
	switch same := len(steps) - len(differing); {
	case len(differing) == 0:
		fmt.Fprintf(w, "no step differs: %s the same\n", countNoun(same, "step", "steps"))
	case same > 0:
		fmt.Fprintf(w, "%s the same\n", countNoun(same, "step", "steps"))
	}
	var changed []debugger.StepDiff
	for _, d := range steps {
		if len(d.Changes) > 0 && d.OnlyIn() == "" {
			changed = append(changed, d)
		}
	}
	if len(changed) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "AT\tA\tB")
	for _, d := range changed {
		for _, c := range d.Changes {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", changePlace(d.Path, c.At), changeValue(c.A, c.Only == "b"), changeValue(c.B, c.Only == "a"))
		}
	}
	tw.Flush()
}

// changePlace names a place in a step's result as a template reads it:
// E1.text, E1 for the whole result.
func changePlace(step, at string) string {
	if at == "" {
		return step
	}
	return step + "." + at
}

// changeValue is one side of a change as JSON, cut to a column's width;
// - where that side has no value.
func changeValue(v any, absent bool) string {
	if absent {
		return "-"
	}
	return cut(engine.JSONText(v), diffValueWidth)
}

// diffValueWidth is how much of each side of a change a line shows.
const diffValueWidth = 50

// marked is a step's status in one run of a diff, with the mark of who
// gave its result when it did not run: "skipped ✎".
func marked(status engine.StepStatus, decided, reused string) string {
	if m := format.Mark(decided, reused); m != "" {
		return status.String() + " " + m
	}
	return orDash(status.String())
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
