package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/debugger/workspace"
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/chat"
	"github.com/stepwise-dev/stepwise/engine/config"
	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/tui/format"
)

// The exit codes a run adds to the scripting contract.
const (
	exitNeedsInput  = workspace.ExitNeedsInput
	exitAssertion   = workspace.ExitAssertion
	exitInterrupted = workspace.ExitInterrupted
)

func newRunCommand(s *streams) *cobra.Command {
	var (
		inputFlags []string
		asJSON     bool
		events     string
		scriptFile string
		// strictBaseURL is the command line's say on strict_base_url.
		strictBaseURL bool
		maxCost       float64
		approve       []string
		shown         progressFlags
	)
	cmd := &cobra.Command{
		Use:   "run PLAN [INPUT_JSON | @FILE | -]",
		Short: "Run a plan headless",
		Long: "Run PLAN (a file, or the identifier of a plan on the plan paths) to its finish.\n\n" +
			"Inputs come from INPUT_JSON (inline JSON, @FILE, or - for stdin), with --input k=v on top\n" +
			"(values parse as JSON when they can, a=19 is a number, unless the input schema says the input\n" +
			"is a string). stdout carries the deliverable only:\n" +
			"the solver's report, an output plan's JSON, or with --json the run's envelope; progress goes\n" +
			"to stderr. Exit 0 success, 1 failure, 2 a bad command line, 3 missing or invalid inputs,\n" +
			"4 an exit gate fired with status error, 130 interrupted. Every run is recorded in the run\n" +
			"store (stepwise runs, stepwise inspect).",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				return usageError{errors.New("run takes PLAN and optionally INPUT_JSON; see stepwise run --help")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			doc := ""
			if len(args) == 2 {
				doc = args[1]
			}
			req := runRequest{plan: args[0], asJSON: asJSON, events: events, script: scriptFile, strictBaseURL: strictBaseURL, maxCost: maxCost, approve: approve, shown: shown}
			if err := heldValueError(cmd); err != nil {
				return req.refuse(s, args[0], exitUsage, err.Error(), nil, nil)
			}
			if err := shown.check(); err != nil {
				return req.refuse(s, args[0], exitUsage, err.Error(), nil, nil)
			}
			for _, p := range approve {
				if _, err := debugger.ParseCommand("break " + p); err != nil {
					return req.refuse(s, args[0], exitUsage, fmt.Sprintf("--approve %s: %v", p, err), nil, nil)
				}
			}
			if len(approve) > 0 && (!isTerminal(s.in) || !isTerminal(s.err)) {
				return req.refuse(s, args[0], exitUsage, noTerminalForApprovals, nil, nil)
			}
			inputs, err := readInputs(doc, inputFlags, s.in)
			if err != nil {
				return req.refuse(s, args[0], exitUsage, err.Error(), nil, nil)
			}
			req.inputs, req.flagText = inputs, flagText(inputFlags)
			return runPlan(cmd.Context(), s, req)
		},
	}
	cmd.Flags().StringArrayVar(&inputFlags, "input", nil, "set one input, k=v; repeatable, applied over INPUT_JSON")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the run's envelope {answer, output, plan, steps_executed, exit, usage, run_id} on stdout")
	addEvents(cmd, &events)
	cmd.Flags().StringVar(&scriptFile, "script", "", "answer every model call from this replies file instead of the configured providers")
	addMaxCost(cmd, &maxCost)
	cmd.Flags().StringArrayVar(&approve, "approve", nil, "ask on the terminal before every call of a tool that is not read-only whose path matches the pattern: approve, deny or edit its arguments; repeatable")
	cmd.Flags().BoolVar(&strictBaseURL, "strict-base-url", false, "state that the servers at the providers' base_url enforce strict structured output, so strict mode is sent to them")
	shown.add(cmd)
	return cmd
}

// readInputs layers the input document (inline JSON, @file, or - for
// stdin) and the --input flags on top of it.
func readInputs(doc string, flags []string, stdin io.Reader) (map[string]any, error) {
	inputs := map[string]any{}
	var src []byte
	switch {
	case doc == "":
	case doc == "-":
		b, err := io.ReadAll(stdin)
		if err != nil {
			return nil, fmt.Errorf("reading inputs from stdin: %w", err)
		}
		src = b
	case strings.HasPrefix(doc, "@"):
		b, err := os.ReadFile(doc[1:])
		if err != nil {
			return nil, fmt.Errorf("reading inputs: %w", err)
		}
		src = b
	default:
		src = []byte(doc)
	}
	if src != nil {
		var doc any
		if err := json.Unmarshal(src, &doc); err != nil {
			return nil, fmt.Errorf("the inputs are not JSON: %v", err)
		}
		switch d := doc.(type) {
		case map[string]any:
			inputs = d
		case nil:
		default:
			return nil, fmt.Errorf("the inputs must be a JSON object of input names and values, not %s", jsonType(d))
		}
	}
	for _, f := range flags {
		k, v, ok := strings.Cut(f, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--input takes key=value, not '%s'", f)
		}
		var parsed any
		if err := json.Unmarshal([]byte(v), &parsed); err != nil {
			parsed = v
		}
		inputs[k] = parsed
	}
	return inputs, nil
}

// flagText maps each --input key to its value as typed (the last one wins,
// as in readInputs).
func flagText(flags []string) map[string]string {
	out := map[string]string{}
	for _, f := range flags {
		if k, v, ok := strings.Cut(f, "="); ok {
			out[k] = v
		}
	}
	return out
}

// asSchemaSays takes an --input value as the text it was typed as when the
// input schema declares that input a string: --input version=1.10 means
// the string "1.10", not the number 1.1. Anything else keeps its JSON
// reading.
func asSchemaSays(schema *plans.Schema, inputs map[string]any, typed map[string]string) map[string]any {
	if schema == nil || len(typed) == 0 {
		return inputs
	}
	root, _ := schema.Raw.(map[string]any)
	props, _ := root["properties"].(map[string]any)
	for k, text := range typed {
		prop, _ := props[k].(map[string]any)
		if t, _ := prop["type"].(string); t == "string" {
			inputs[k] = text
		}
	}
	return inputs
}

// jsonType names the JSON type of a decoded value.
func jsonType(v any) string {
	switch v.(type) {
	case []any:
		return "a list"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	}
	return "null"
}

type runRequest struct {
	plan   string
	inputs map[string]any
	// flagText is each --input value as typed, by key.
	flagText      map[string]string
	asJSON        bool
	events        string
	script        string
	strictBaseURL bool
	// maxCost is --max-cost, [limits] cost_usd; 0 leaves the configuration's.
	maxCost float64
	// approve are the --approve patterns: the calls they match are asked
	// about on the terminal.
	approve []string
	// shown is how the run is shown as it goes (--quiet,
	// --progress-every).
	shown progressFlags
}

// runPlan loads, runs and reports one plan.
func runPlan(ctx context.Context, s *streams, req runRequest) error {
	projects := workspaces{warnings: req.notices(s.err).configWarning}
	defer projects.close()
	ws, v, err := projects.load(req.plan)
	if err != nil {
		return req.refuse(s, req.plan, exitFailure, err.Error(), nil, nil)
	}
	name := v.File
	if v.Plan != nil && v.Plan.Identifier.Value != "" {
		name = v.Plan.Identifier.Value
	}
	if !v.Report.OK() {
		var problems []string
		for _, p := range v.Report.Problems {
			problems = append(problems, p.String())
		}
		return req.refuse(s, name, exitFailure, fmt.Sprintf("%s has problems; fix them and run again", v.File), problems, nil)
	}
	// What the run tells as it goes is written in batches; once it has
	// ended, the batch is flushed and the rest goes straight to stderr.
	progressOut := newLineBatcher(s.err)
	o := req.runOptions(progressOut)
	var approvals *debugger.Approvals
	if len(req.approve) > 0 {
		if approvals, err = ws.Approvals(req.approve); err != nil {
			return req.refuse(s, name, exitUsage, err.Error(), nil, nil)
		}
		for _, u := range approvals.Unheld(ws.Shapes(v.Plan)) {
			req.notices(s.err).warn(warningAbout{Approve: u.Pattern}, u.Warning)
		}
	}
	warnUnpriced(req.notices(s.err), ws, o)
	display := req.watch(s, ws, progressOut, &o, approvals, forkOrigin{})
	// What prints the run's values (its answer, output and envelope)
	// writes them with the configuration's secrets hidden.
	shown := s.hidingSecrets(ws)
	var answer *streamedAnswer
	if !req.asJSON && v.Plan.FinishMode() == plans.FinishSolver {
		answer = solverAnswer(shown, progressOut, req.notices(progressOut), display, &o)
	}
	recorded := ws.Project().Recorded
	res, err := ws.Run(ctx, v.Plan, asSchemaSays(v.Plan.InputSchema, req.inputs, req.flagText), o)
	display.close()
	progressOut.Flush()
	closeErr := projects.close()
	if err != nil {
		return req.refuseRun(s, ws, name, err)
	}
	warnUnrecorded(req.notices(s.err), closeErr)
	answer.end(res)
	if ctx.Err() != nil {
		// Interrupted: the summary says where, and the status says it was
		// not the plan that failed.
		reportRun(shown, v.Plan, res, req, recorded, notRun{})
		return &exitCode{code: exitInterrupted}
	}
	return reportRun(shown, v.Plan, res, req, recorded, notRun{})
}

// runOptions are what the command line adds to a run: a replies file,
// a spend cap, strict mode at the base URLs, and failovers and what
// [storage] keep_days pruned told on out. A failover, which is a warning,
// is told under --quiet too, and so is a pruning that failed; under
// --events jsonl, where no event tells it, as a JSON line, and what
// keep_days pruned as one too, --quiet or not, as the events are.
func (req runRequest) runOptions(out io.Writer) workspace.RunOptions {
	told := req.notices(out)
	o := workspace.RunOptions{Script: req.script, MaxCost: req.maxCost, StrictBaseURL: req.strictBaseURL}
	o.OnFailover = func(from, to string, err error) {
		told.warn(warningAbout{}, failoverText(from, to, err))
	}
	o.OnPrune = told.pruned
	return o
}

// notices tells the run's warnings, and what keep_days pruned, on w: as
// JSON lines under --events jsonl.
func (req runRequest) notices(w io.Writer) notices {
	return notices{w: w, jsonl: req.events == "jsonl", quiet: req.shown.quiet}
}

// watch makes the run o is for seen as it goes on stderr, progressOut:
// under --events jsonl every event is a JSON line, and nothing asks on the
// terminal (a script reads stderr); otherwise the progress display tells
// it (under --quiet there is none, returned nil, and its warnings alone
// are told), and the run's asks are put on the terminal. The calls approvals holds (none when nil) are asked about
// on the terminal either way. fork is where a fork starts; zero for a
// run.
func (req runRequest) watch(s *streams, ws *workspace.Workspace, progressOut *lineBatcher, o *workspace.RunOptions, approvals *debugger.Approvals, fork forkOrigin) *progressDisplay {
	if req.events == "jsonl" {
		o.Sinks = append(o.Sinks, jsonlSink(hideSecrets(progressOut, ws)))
		o.Hook = newTerminal(s, progressOut, nil).hook(approvals, false)
		return nil
	}
	display := newProgressDisplay(s, progressOut, req.shown, true, fork)
	o.Sinks = append(o.Sinks, shownBy(display, progressOut))
	o.Hook = newTerminal(s, progressOut, display).hook(approvals, true)
	return display
}

// warnUnrecorded warns that the run store did not record everything of
// a run, err saying why (nil: it did).
func warnUnrecorded(told notices, err error) {
	if err != nil {
		told.warn(warningAbout{}, "the run store did not record everything: "+err.Error())
	}
}

// warnUnpriced warns, before a run with o starts, of each model its spend
// cap cannot count: a call of a model with no price costs the cap
// nothing, and a run of such calls alone is never stopped by it. It is
// said under --quiet too: a cap that cannot work is no progress to leave
// out.
func warnUnpriced(told notices, ws *workspace.Workspace, o workspace.RunOptions) {
	usd, unpriced := ws.SpendCap(o)
	from := "[limits] cost_usd"
	if o.MaxCost > 0 {
		from = "--max-cost"
	}
	for _, m := range unpriced {
		text := fmt.Sprintf("the spend cap (%s, %s) cannot count the calls of model %s (%s), which has no price: add [%s] with its input and output prices, in USD per million tokens",
			engine.CapText(usd), from, m.Model, m.Entry, config.PricingKey(m.Model))
		told.warn(warningAbout{Model: m.Model}, text)
	}
}

// refuse reports a run that could not start, the way the run would have
// been reported: the envelope on stdout with --json (complete whatever the
// exit code), one JSON line on stderr with --events jsonl, and otherwise the
// message and its details on stderr.
// refuseRun refuses a run the engine would not start: inputs that do not
// fit the schema (exit 3, with the schema to fill in), a plan that cannot
// run here, or another error.
func (req runRequest) refuseRun(s *streams, ws *workspace.Workspace, name string, err error) error {
	var inputErr *engine.InputError
	if errors.As(err, &inputErr) {
		var problems []string
		for _, line := range strings.Split(inputErr.Error(), "\n")[1:] {
			problems = append(problems, strings.TrimPrefix(line, "  - "))
		}
		return req.refuse(s, name, exitNeedsInput, fmt.Sprintf("plan '%s' needs inputs", inputErr.Plan), problems, inputErr.Schema)
	}
	var resolveErr *engine.ResolveError
	if errors.As(err, &resolveErr) {
		var problems []string
		for _, p := range resolveErr.Problems {
			problems = append(problems, ws.DisplayText(p.String()))
		}
		return req.refuse(s, name, exitFailure, fmt.Sprintf("plan '%s' cannot run here", resolveErr.Plan), problems, nil)
	}
	return req.refuse(s, name, exitFailure, ws.DisplayText(err.Error()), nil, nil)
}

func (req runRequest) refuse(s *streams, plan string, code int, message string, problems []string, inputSchema any) error {
	if req.asJSON {
		env := envelope{Plan: plan, Error: message, Problems: problems, InputSchema: inputSchema, Usage: engine.UsageReport{ByStep: []engine.UsageLine{}, ByModel: []engine.UsageLine{}}}
		if err := writeJSON(s.out, env); err != nil {
			return err
		}
	}
	switch {
	case req.events == "jsonl":
		line := map[string]any{"kind": "error", "plan": plan, "message": message}
		if len(problems) > 0 {
			line["problems"] = problems
		}
		if inputSchema != nil {
			line["input_schema"] = inputSchema
		}
		if err := writeJSONLine(s.err, line); err != nil {
			return err
		}
	default:
		fmt.Fprintln(s.err, "stepwise:", message+map[bool]string{true: ":", false: ""}[len(problems) > 0])
		for _, p := range problems {
			fmt.Fprintln(s.err, "  - "+p)
		}
		if inputSchema != nil {
			js, _ := json.MarshalIndent(inputSchema, "", "  ")
			fmt.Fprintf(s.err, "input schema:\n%s\n", js)
		}
	}
	return &exitCode{code: code}
}

// envelope is the --json answer of a run: the scripting contract's
// envelope plus the run's id in the store.
type envelope struct {
	Answer        *string            `json:"answer"`
	Output        any                `json:"output"`
	Plan          string             `json:"plan"`
	StepsExecuted int                `json:"steps_executed"`
	Exit          *engine.Exit       `json:"exit,omitempty"`
	Error         string             `json:"error,omitempty"`
	Problems      []string           `json:"problems,omitempty"`
	InputSchema   any                `json:"input_schema,omitempty"`
	EmptyData     bool               `json:"empty_data,omitempty"`
	Usage         engine.UsageReport `json:"usage"`
	RunID         string             `json:"run_id,omitempty"`
}

// reportRun writes the deliverable, the summary and the exit status. Under
// --events jsonl the summary is left out: stderr carries events only, and
// run_end says everything the summary would.
func reportRun(s *streams, p *plans.Plan, res *engine.Result, req runRequest, recorded bool, given notRun) error {
	if req.asJSON {
		env := envelope{Plan: res.Plan, StepsExecuted: res.StepsExecuted, Exit: res.Exit, EmptyData: res.EmptyData, Usage: res.Usage, RunID: res.RunID}
		if p.FinishMode() == plans.FinishSolver && res.Status == engine.StatusOK {
			env.Answer = &res.Answer
		}
		if res.Output != nil {
			env.Output = res.Output
		}
		if res.Err != nil {
			env.Error = res.Err.Error()
		}
		if err := writeJSON(s.out, env); err != nil {
			return err
		}
	} else if res.Output != nil {
		if err := writeJSON(s.out, res.Output); err != nil {
			return err
		}
	}
	if req.events != "jsonl" {
		printSummary(s.err, p, res, recorded, req.shown.quiet, given)
	}
	return runExit(res)
}

// runExit is the exit status of a finished run: nil for success, 4 for an
// exit gate that fired with status error, 1 for any other failure.
func runExit(res *engine.Result) error {
	if code := workspace.ExitCode(res, nil); code != exitOK {
		return &exitCode{code: code}
	}
	return nil
}

// printSummary tells a person on stderr how the run ended, what it spent
// and where it is recorded; quiet, only how it failed. given are the
// steps of a fork that took their results rather than run.
func printSummary(w io.Writer, p *plans.Plan, res *engine.Result, recorded, quiet bool, given notRun) {
	switch {
	case res.Exit != nil:
		if quiet && res.Exit.Status != "error" {
			break
		}
		mark := "✓"
		if res.Exit.Status == "error" {
			mark = "✗"
		}
		msg := res.Exit.Message
		if res.Exit.Reason != "" {
			msg += " (" + res.Exit.Reason + ")"
		}
		fmt.Fprintf(w, "%s exit %s at %s: %s\n", mark, res.Exit.Status, res.Exit.Step, msg)
	case res.Err != nil:
		fmt.Fprintf(w, "Error: %v\n", res.Err)
	case p.FinishMode() == "silent" && !quiet:
		fmt.Fprintf(w, "✓ plan completed (%s)\n", given.steps(res.StepsExecuted))
	}
	if quiet {
		return
	}
	if res.Usage.Calls > 0 {
		fmt.Fprintln(w, usageLine(res.Usage))
	}
	if recorded {
		fmt.Fprintf(w, "run %s (stepwise inspect %s)\n", res.RunID, format.ShortID(res.RunID))
	}
}

// notRun counts the steps of a fork that took their results rather than
// run: reused from the record, or set with --set. A plain run has none.
type notRun struct {
	reused, set int
}

// steps says how many of a run's steps ran, and how many took their
// results instead: "4 steps ran, 200 reused from the record".
func (n notRun) steps(executed int) string {
	if n.reused == 0 && n.set == 0 {
		return countNoun(executed, "step", "steps")
	}
	text := countNoun(executed-n.reused-n.set, "step", "steps") + " ran"
	if n.reused > 0 {
		text += ", " + strconv.Itoa(n.reused) + " reused from the record"
	}
	if n.set > 0 {
		text += ", " + strconv.Itoa(n.set) + " set"
	}
	return text
}

// usageLine is the one-line spend summary on stderr.
func usageLine(u engine.UsageReport) string {
	line := "usage: " + countNoun(u.Calls, "model call", "model calls") + ", " +
		format.Tokens(u.InputTokens) + " input + " + format.Tokens(u.OutputTokens) + " output tokens"
	if cached := u.Cached(); cached > 0 {
		line += " (+" + format.Tokens(cached) + " cached)"
	}
	if u.CostUSD != nil {
		line += ", " + format.Cost(*u.CostUSD)
	}
	return line
}

// jsonlSink writes each event as one JSON line.
func jsonlSink(w io.Writer) engine.Sink {
	return engine.SinkFunc(func(e engine.Event) {
		if e.Kind == engine.EventModelDelta {
			return // token-level deltas would drown the feed; llm_call carries the reply
		}
		_ = writeJSONLine(w, e)
	})
}

// solverAnswer gives the top-level solver's report on stdout. On a
// terminal it streams as it is written, after the progress written before
// it to notes (sink, put first in o's sinks, so that the answer's line has
// ended before the others warn of its call), told warning of a part it
// abandons. Anywhere else (a file, a pipe) stdout carries the deliverable
// only: the final answer, written once the run has ended (end), and no
// text of an attempt that failed and was retried.
func solverAnswer(s *streams, notes *lineBatcher, told notices, display *progressDisplay, o *workspace.RunOptions) *streamedAnswer {
	answer := &streamedAnswer{out: s.out, onTerminal: isTerminal(s.out)}
	if answer.onTerminal {
		o.Sinks = append([]engine.Sink{answer.sink(notes, told, display)}, o.Sinks...)
	}
	return answer
}

// sink writes the solver's deltas to the terminal. The progress block
// closes first: the answer and the block cannot share the screen. When an
// attempt fails after it began to stream, the part already written cannot
// be taken back: it ends with a line break, a warning (told) says it is
// abandoned and why, and the answer starts again. When the solver's call
// has ended, so has its answer, and the line it left open ends: what is
// written next (a warning that the call was retried) starts a line.
func (a *streamedAnswer) sink(notes *lineBatcher, told notices, display *progressDisplay) engine.Sink {
	return engine.Selective{Kinds: []engine.EventKind{engine.EventModelDelta, engine.EventModelCall}, Sink: engine.SinkFunc(func(e engine.Event) {
		if e.Path != "solver" {
			return
		}
		if e.Kind == engine.EventModelCall {
			a.endLine()
			return
		}
		display.answerStreams()
		d, _ := e.Payload.(chat.Delta)
		if d.Reset {
			io.WriteString(a.out, "\n")
			a.midLine = false
			told.warn(warningAbout{}, debugger.AbandonedAnswer(d))
			return
		}
		notes.Flush()
		io.WriteString(a.out, d.Text)
		if d.Text != "" {
			a.midLine = !strings.HasSuffix(d.Text, "\n")
		}
	})}
}

// streamedAnswer is the solver's report as solverAnswer writes it.
type streamedAnswer struct {
	out        io.Writer
	onTerminal bool
	// midLine says the last text streamed did not end its line: an
	// answer without a last line break, or one the run's end cut short.
	midLine bool
}

// endLine ends the line the streamed answer left open, if it did.
func (a *streamedAnswer) endLine() {
	if a.midLine {
		fmt.Fprintln(a.out)
		a.midLine = false
	}
}

// end finishes the answer once the run has ended, so that stdout ends
// with a line break. On a terminal it ends the line the streamed answer
// left open, whole or cut short; elsewhere it writes the answer of a run
// that succeeded, the one --json gives. A nil answer does nothing.
func (a *streamedAnswer) end(res *engine.Result) {
	switch {
	case a == nil:
	case a.onTerminal:
		a.endLine()
	case res.Status == engine.StatusOK && res.Answer != "":
		io.WriteString(a.out, res.Answer)
		if !strings.HasSuffix(res.Answer, "\n") {
			fmt.Fprintln(a.out)
		}
	}
}
