package engine

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stepwise-dev/stepwise/engine/config"
	"github.com/stepwise-dev/stepwise/engine/model"
	paths "github.com/stepwise-dev/stepwise/engine/path"
	"github.com/stepwise-dev/stepwise/engine/tools"
	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/plans/template"
)

// MaxPlanDepth caps how deeply plan__ calls nest.
const MaxPlanDepth = 8

// Options configure an Engine.
type Options struct {
	Config  *config.Config
	Catalog *tools.Catalog
	// Tools dispatches builtin, user and MCP tools. The caller owns it and
	// closes it, so that MCP connections outlive one run when it wants.
	Tools *tools.Runtime
	// Models answers every model call. A script provider's replies are
	// consumed per Models, so give each run its own.
	Models *model.Models
	// Hook is called at every stop; nil runs straight through, and each
	// stop then costs one nil check.
	Hook Hook
	// Sinks receive every event.
	Sinks []Sink
	// Threads is told when each unit of work that runs beside others
	// starts and ends; nil costs one nil check per unit.
	Threads Threads
	// Parent is the run this one replays or forks, for its record.
	Parent string
	// Made says how the run was made, for its record: a plain run when
	// empty.
	Made Made
}

// Made is how a run was made: by a plain run, under the debugger, by a
// replay or by a fork of another run. A run list shows it beside the run.
type Made string

// The ways a run is made.
const (
	MadeRun    Made = "run"
	MadeDebug  Made = "debug"
	MadeReplay Made = "replay"
	MadeFork   Made = "fork"
)

// Engine runs plans. One Engine may run several plans one after another or
// at once; each Run is independent but for the Tools and Models it shares.
type Engine struct {
	parent  string
	made    Made
	cfg     *config.Config
	catalog *tools.Catalog
	tools   *tools.Runtime
	models  *model.Models
	hook    Hook
	threads Threads
	sinks   sinksByKind
}

// New returns an engine over the given parts.
func New(opts Options) *Engine {
	made := opts.Made
	if made == "" {
		made = MadeRun
	}
	return &Engine{parent: opts.Parent, made: made, cfg: opts.Config, catalog: opts.Catalog, tools: opts.Tools, models: opts.Models, hook: opts.Hook, threads: opts.Threads, sinks: newSinksByKind(opts.Sinks)}
}

// Result is how a run ended.
type Result struct {
	RunID string
	Plan  string
	// Status is ok, exited (an exit gate fired; Exit says with which
	// status), failed or aborted.
	Status RunStatus
	// Output is an output-mode plan's rendered output, or a fired exit's.
	Output any
	// Answer is a solver-mode plan's report.
	Answer string
	Exit   *Exit
	// StepsExecuted counts steps, body calls, body steps and the finish
	// that ran: every step a record of the run shows.
	StepsExecuted int
	Usage         UsageReport
	// Err is why a failed or aborted run stopped.
	Err error
	// EmptyData says the run failed because data ran out (an
	// EmptyDataError in an output or silent plan).
	EmptyData bool
}

// RunStatus is how a run ended. It is written to JSON and the store as
// its string.
type RunStatus string

// The run statuses.
const (
	StatusOK      RunStatus = "ok"
	StatusExited  RunStatus = "exited"
	StatusFailed  RunStatus = "failed"
	StatusAborted RunStatus = "aborted"
	// StatusRunning is a recorded run with no end recorded: it is still
	// running, or its process ended before it finished. The engine never
	// ends a run with it; the store reports it.
	StatusRunning RunStatus = "running"
	// StatusRefused is a run the engine refused before any step ran (its
	// plan or its inputs); Run returned the error instead of a Result.
	StatusRefused RunStatus = "refused"
)

// String returns the status as --json and the store write it.
func (s RunStatus) String() string { return string(s) }

// InputError is a run refused before any step ran because its inputs do
// not match the plan's input_schema.
type InputError struct {
	Plan       string
	Violations []plans.Violation
	Schema     any
}

func (e *InputError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "plan '%s' needs inputs:", e.Plan)
	for _, v := range e.Violations {
		b.WriteString("\n  - " + inputViolation(v))
	}
	return b.String()
}

// inputViolation phrases a violation of the input schema for the person
// who supplies the inputs: "/project: ..." reads as a field name.
func inputViolation(v plans.Violation) string {
	if v.Location == "" {
		return v.Message
	}
	return fmt.Sprintf("%q: %s", strings.TrimPrefix(v.Location, "/"), v.Message)
}

// ResolveError is a run refused before any step ran because the plan names
// tools or models this project cannot provide.
type ResolveError struct {
	Plan     string
	Problems []plans.Problem
}

func (e *ResolveError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "plan '%s' cannot run here:", e.Plan)
	for _, p := range e.Problems {
		b.WriteString("\n  " + p.String())
	}
	return b.String()
}

// RunError is a run that failed at a step: "plan failed at step E2
// (linear__list_issues): ...".
type RunError struct {
	Step string // the top-level step's path, plan-qualified when nested
	Tool string
	Err  error
}

func (e *RunError) Error() string {
	return fmt.Sprintf("plan failed at step %s (%s): %s", e.Step, e.Tool, e.Err)
}

func (e *RunError) Unwrap() error { return e.Err }

// subPlanError is a plan__ call whose plan failed at one of its steps. It
// reads as where and why ("at step E4/triage/E2 (tool): ..."); the plan
// that made the call says that it failed.
type subPlanError struct{ failure *RunError }

func (e *subPlanError) Error() string {
	return fmt.Sprintf("at step %s (%s): %v", e.failure.Step, e.failure.Tool, e.failure.Err)
}

func (e *subPlanError) Unwrap() error { return e.failure }

// AbortError is a run stopped before its end: by a hook's Abort, or from
// outside (its context cancelled: ctrl-c, a signal, a deadline). Cause is
// the failure on hand when a hook aborted at an error stop, or why the
// context ended; nil otherwise.
type AbortError struct {
	Path  string
	Cause error
}

func (e *AbortError) Error() string {
	msg := "run aborted"
	if e.Path != "" {
		msg += " at " + e.Path
	}
	if e.Cause != nil {
		msg += ": " + e.Cause.Error()
	}
	return msg
}

// Run executes plan p with the given inputs: it applies the input schema's
// defaults, validates the inputs, resolves the plan's tools against the
// catalog, runs the steps and finishes. The error is an *InputError or a
// *ResolveError when the run could not start; everything that happens once
// it has started is in the Result.
func (e *Engine) Run(ctx context.Context, p *plans.Plan, inputs map[string]any) (*Result, error) {
	name := planName(p)
	if inputs == nil {
		inputs = map[string]any{}
	}
	inputs = withDefaults(p.InputSchema, inputs)
	if vs := p.InputSchema.Check(inputs); len(vs) > 0 {
		return nil, &InputError{Plan: name, Violations: vs, Schema: schemaRaw(p.InputSchema)}
	}
	if problems := e.refusals(p); len(problems) > 0 {
		return nil, &ResolveError{Plan: name, Problems: problems}
	}
	r := &run{
		Engine:  e,
		id:      newRunID(),
		ledger:  newLedger(e.cfg),
		started: time.Now(),
	}
	r.emit("", paths.KindRun, EventRunStart, func() any {
		start := RunStarted{Plan: name, File: absolute(p.File), Hash: fileHash(p.File), Inputs: inputs, Parent: e.parent, Made: e.made}
		if e.cfg != nil && e.cfg.Project != nil {
			start.Project = e.cfg.Project.Root
		}
		return start
	})
	if e.hook != nil {
		r.held = &holdClock{}
	}
	f := &frame{run: r, plan: p, calls: []string{p.Identifier.Value}, held: r.held}
	// Every tool call of the run says which run it belongs to: an MCP
	// server shared by several runs can tell their calls apart.
	res := f.execute(tools.WithRunID(ctx, r.id), inputs)
	if res.Status == StatusFailed && res.Exit == nil && ctx.Err() != nil {
		// Stopped from outside (ctrl-c, a deadline): nothing failed, and
		// the message says so rather than blaming the step it was in.
		at := ""
		var re *RunError
		if errors.As(res.Err, &re) {
			at = re.Step
		}
		res.Status, res.Err = StatusAborted, &AbortError{Path: at, Cause: context.Cause(ctx)}
	}
	res.RunID = r.id
	res.Plan = name
	res.StepsExecuted = int(r.steps.Load())
	res.Usage = r.ledger.Report()
	r.emit("", paths.KindRun, EventUsage, func() any { return res.Usage })
	r.emit("", paths.KindRun, EventRunEnd, func() any {
		end := RunEnded{Status: res.Status, Exit: res.Exit, StepsExecuted: res.StepsExecuted, Output: res.Output, Answer: res.Answer, EmptyData: res.EmptyData, Usage: res.Usage,
			HeldMs: ms(r.held.heldBy(time.Now()))}
		if res.Err != nil {
			end.Error = res.Err.Error()
		}
		if abort, ok := errors.AsType[*AbortError](res.Err); ok {
			end.AbortedAt = abort.Path
		}
		return end
	})
	return res, nil
}

// refusals are the reasons a plan cannot start here: tools the catalog
// cannot resolve, MCP servers it declares in requires_servers that are not
// configured, and model names the configuration does not define (notes
// when validating a portable file, but a run needs them). Refusing before
// the first step spends nothing on a run that cannot finish.
func (e *Engine) refusals(p *plans.Plan) []plans.Problem {
	var out []plans.Problem
	if e.catalog != nil {
		r := e.catalog.Resolve(p)
		out = append(out, r.Problems...)
		for _, n := range r.Notes {
			// Notes for a portable file, but a run here would fail on them.
			if n.Code == plans.CodeMissingServer || n.Code == plans.CodeUnknownModel {
				out = append(out, n)
			}
		}
	}
	return out
}

// planName is what a plan is called in messages: its identifier, or its
// file's name without the extension.
func planName(p *plans.Plan) string {
	if p.Identifier.Value != "" {
		return p.Identifier.Value
	}
	return strings.TrimSuffix(filepath.Base(p.File), filepath.Ext(p.File))
}

func schemaRaw(s *plans.Schema) any {
	if s == nil {
		return nil
	}
	return s.Raw
}

// withDefaults fills in the defaults the input schema declares for
// properties the caller left out, at every depth where the caller gave an
// object. The caller's maps are not changed.
func withDefaults(s *plans.Schema, inputs map[string]any) map[string]any {
	if s == nil {
		return inputs
	}
	filled, _ := defaultsFor(s.Raw, inputs)
	return filled
}

// defaultsFor returns value with schema's defaults filled in, and whether
// it had to change anything (in a copy).
func defaultsFor(schema any, value map[string]any) (map[string]any, bool) {
	root, _ := schema.(map[string]any)
	props, _ := root["properties"].(map[string]any)
	var out map[string]any
	set := func(name string, v any) {
		if out == nil {
			out = make(map[string]any, len(value)+1)
			for k, x := range value {
				out[k] = x
			}
		}
		out[name] = v
	}
	for name, p := range props {
		prop, _ := p.(map[string]any)
		given, ok := value[name]
		if !ok {
			if def, has := prop["default"]; has {
				set(name, def)
			}
			continue
		}
		if obj, isObj := given.(map[string]any); isObj {
			if filled, changed := defaultsFor(prop, obj); changed {
				set(name, filled)
			}
		}
	}
	if out == nil {
		return value, false
	}
	return out, true
}

// absolute is a plan's file as an absolute path, so that a record of the
// run names it whichever directory reads the record.
func absolute(file string) string {
	if abs, err := filepath.Abs(file); err == nil {
		return abs
	}
	return file
}

func fileHash(file string) string {
	src, err := os.ReadFile(file)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(src)
	return hex.EncodeToString(sum[:])
}

func newRunID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// run is the state of one Run shared by every plan it calls.
type run struct {
	*Engine
	id     string
	ledger *ledger
	steps  atomic.Int64

	// emitMu keeps the events a sink reads in sequence order.
	emitMu sync.Mutex
	// seq numbers every event, read or not.
	seq atomic.Uint64

	// askMu serializes questions: two prompts at once are unanswerable.
	askMu sync.Mutex

	// held is the run's hold clock, nil without a hook.
	held *holdClock

	// started is when the run began, on the wall clock and the monotonic
	// one (now).
	started time.Time
}

// now is the time on the run's clock: when it began plus the monotonic
// time since, one clock read where time.Now takes two (the wall clock and
// the monotonic one), for what happens several times a step (events,
// their times and the steps' and calls' durations). A wall clock set
// during the run does not move it, so that its times and durations
// agree.
func (r *run) now() time.Time {
	return r.started.Add(time.Since(r.started))
}

// emit delivers an event to the sinks that read its kind, in sequence
// order. The event is built only when some sink reads it.
func (r *run) emit(path string, unit paths.Kind, kind EventKind, payload func() any) {
	sinks := r.sinks.of(kind)
	if len(sinks) == 0 {
		r.seq.Add(1)
		return
	}
	pl := payload()
	r.emitMu.Lock()
	r.deliver(sinks, Event{Time: r.now(), RunID: r.id, Path: path, Unit: unit, Kind: kind, Payload: pl})
	r.emitMu.Unlock()
}

// emitTimed is emit for an event whose payload reads the clock for its
// own numbers (an end's duration): payload returns the time it read, the
// event's time too, so that a step or call that ends reads the clock once.
// A time read outside the lock that orders events may precede by a few
// microseconds the time of an event of another unit that goes before it.
func (r *run) emitTimed(path string, unit paths.Kind, kind EventKind, payload func() (any, time.Time)) {
	sinks := r.sinks.of(kind)
	if len(sinks) == 0 {
		r.seq.Add(1)
		return
	}
	pl, at := payload()
	r.emitMu.Lock()
	r.deliver(sinks, Event{Time: at, RunID: r.id, Path: path, Unit: unit, Kind: kind, Payload: pl})
	r.emitMu.Unlock()
}

// deliver numbers ev and gives it to sinks, under emitMu.
func (r *run) deliver(sinks []Sink, ev Event) {
	ev.Seq = r.seq.Add(1)
	for _, s := range sinks {
		s.Event(ev)
	}
}

// Threads is told when a unit of work that runs beside others starts and
// ends: each map, filter or reduce item, each tool call of an agent round
// (the units a stop's thread is named after). A debugger lists the live
// ones from it. Events cannot tell it: the items of a list body have no
// event of their own. Both methods may be called from several goroutines
// at once.
type Threads interface {
	ThreadStarted(path string)
	ThreadEnded(path string)
}

// thread tells the Threads observer that the unit at path started, and
// returns what tells it the unit ended.
func (r *run) thread(path string) func() {
	if r.threads == nil {
		return func() {}
	}
	r.threads.ThreadStarted(path)
	return func() { r.threads.ThreadEnded(path) }
}

// reads reports whether some sink reads events of kind.
func (r *run) reads(kind EventKind) bool { return len(r.sinks.of(kind)) > 0 }

// stop consults the hook. With none it is a nil check: the Stop is passed
// by value and copied to the heap only on the way to a hook. A struct given
// as its Input or Output is boxed by the caller before the check, though,
// so a caller that stops with one on every round checks r.hook first.
func (r *run) stop(ctx context.Context, st Stop) Decision {
	if r.hook == nil {
		return Decision{}
	}
	held := st
	held.RunID = r.id
	d := r.hook(ctx, &held)
	if held.holdTotal > 0 {
		r.emit(st.Path, st.Unit, EventHeld, func() any { return Held{Stop: st.Kind, Ms: ms(held.holdTotal)} })
	}
	if d.Action != Proceed && d.Action != Abort && st.Kind.Takes(d.Action) {
		// A person's decision is a fact of the run: its record says what
		// was decided where, and with what, so that a replay reproduces it.
		// One a replay made again says so, so that nobody reads it as
		// decided by hand in this run.
		if decided, _ := d.marks(); decided != "" {
			r.emit(st.Path, st.Unit, EventDecided, func() any {
				return Decided{Stop: st.Kind, Action: decided, Value: d.Value}
			})
		}
		for _, again := range d.Again {
			r.emit(st.Path, st.Unit, EventDecided, func() any {
				again.Origin = d.Origin.String()
				return again
			})
		}
	}
	return d
}

// frame is one plan being run: the top-level plan, or one called as
// plan__<identifier> by a step.
type frame struct {
	run  *run
	plan *plans.Plan
	// prefix qualifies the paths of this plan's steps: "" at the top,
	// "E4/triage/" for plan triage called by step E4.
	prefix string
	// calls lists the identifiers on the plan call stack, outermost first,
	// for cycle detection and the depth cap.
	calls []string
	// stack is the call stack above this plan, for stops.
	stack []Frame
	// held is the hold clock of the unit that runs this plan: the run's,
	// or the calling step's.
	held *holdClock
}

// cursor is where a step runs: its plan, its scope and the frames above
// it. The stack is kept only while a hook is installed.
type cursor struct {
	f  *frame
	sc *scope
	// unit is the kind of the innermost frame, the unit the events the
	// cursor emits are about; kept when no hook wants the stack.
	unit  paths.Kind
	stack []Frame
	// held is the hold clock of the innermost unit; nil without a hook.
	held *holdClock
}

func (c cursor) push(fr Frame) cursor {
	c.unit = fr.Kind
	if c.f.run.hook == nil {
		return c
	}
	c.stack = append(c.stack[:len(c.stack):len(c.stack)], fr)
	c.held = &holdClock{parent: c.held}
	return c
}

// exitSignal carries a fired exit gate up through bodies to its plan.
type exitSignal struct{ exit *Exit }

func (e *exitSignal) Error() string { return "exit gate " + e.exit.Step + " fired: " + e.exit.Message }

// execute runs the plan's steps and its finish.
func (f *frame) execute(ctx context.Context, inputs map[string]any) *Result {
	res := &Result{}
	c := cursor{f: f, sc: planScope(inputs, f.run.cfg), stack: f.stack, held: f.held}
	c = c.push(Frame{Path: strings.TrimSuffix(f.prefix, "/"), Kind: paths.KindPlan, Tool: planName(f.plan)})
	emptyData, ended := f.runSteps(ctx, c, res)
	if ended {
		return res
	}
	res.Status = StatusOK
	if err := f.finish(ctx, c, res, emptyData); err != nil {
		var abort *AbortError
		if errors.As(err, &abort) {
			res.Status, res.Err = StatusAborted, abort
			return res
		}
		res.Status, res.Err, res.EmptyData = StatusFailed, err, isEmptyData(err)
	}
	return res
}

// runSteps runs the plan's steps in order. ended reports that the run is
// over (an exit fired, a step failed, the hook aborted) and res says how;
// otherwise the finish comes next. In a solver plan, data running out
// stops the steps but not the run: a narrator can explain that nothing was
// found, so emptyData goes to the solver.
func (f *frame) runSteps(ctx context.Context, c cursor, res *Result) (emptyData error, ended bool) {
	for _, s := range f.plan.Steps {
		path := f.prefix + s.ID.Value
		if err := ctx.Err(); err != nil {
			res.Status, res.Err = StatusFailed, fmt.Errorf("run cancelled before step %s: %w", path, context.Cause(ctx))
			return nil, true
		}
		result, err := c.runStep(ctx, s, path, paths.KindStep)
		if err == nil {
			c.sc.set(s.ID.Value, result)
			continue
		}
		var exit *exitSignal
		var abort *AbortError
		switch {
		case errors.As(err, &exit):
			res.Exit, res.Output, res.Status = exit.exit, exit.exit.Output, StatusExited
			if exit.exit.Status == "error" {
				res.Status = StatusFailed
			}
		case errors.As(err, &abort):
			res.Status, res.Err = StatusAborted, abort
		case isEmptyData(err) && f.plan.Solver != nil:
			return &RunError{Step: path, Tool: s.ToolName.Value, Err: err}, false
		default:
			res.Status, res.EmptyData = StatusFailed, isEmptyData(err)
			// A plan__ step that failed inside its plan names the step
			// that failed by its whole path: that step is where this
			// plan failed too.
			if sub, nested := err.(*subPlanError); nested {
				res.Err = sub.failure
			} else {
				res.Err = &RunError{Step: path, Tool: s.ToolName.Value, Err: err}
			}
		}
		return nil, true
	}
	return nil, false
}

func isEmptyData(err error) bool {
	var e *template.EmptyDataError
	return errors.As(err, &e)
}
