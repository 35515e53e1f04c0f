package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	paths "github.com/stepwise-dev/stepwise/engine/path"
	"github.com/stepwise-dev/stepwise/engine/tools"
	"github.com/stepwise-dev/stepwise/plans"
)

// StepStatus is how a step ended, in StepEnded. It is written to JSON and
// the store as its string.
type StepStatus string

// The step statuses.
const (
	StepOK StepStatus = "ok"
	// StepFailed is a step whose error propagated, or was replaced at an
	// error stop by nothing.
	StepFailed StepStatus = "failed"
	// StepSkipped is a step a stop decision injected a result for.
	StepSkipped StepStatus = "skipped"
	// StepExited is an exit step whose gate fired.
	StepExited StepStatus = "exited"
	// StepAborted is a step that ended because the run was aborted: held
	// at its own stop (before it started, or at its error stop), or
	// holding a body, an item or an agent call that was aborted. A person
	// stopped the run there; nothing failed.
	StepAborted StepStatus = "aborted"
	// StepRunning is a recorded step with no end recorded; the store
	// reports it, the engine never ends a step with it.
	StepRunning StepStatus = "running"
)

// String returns the status as --json and the store write it.
func (s StepStatus) String() string { return string(s) }

// startStep emits the start of the step at path and counts it run
// (Result.StepsExecuted), so that the count is the steps a record of the
// run shows: every one of them started, even one aborted at its own step
// stop, which starts and ends there, aborted.
func (r *run) startStep(path string, unit paths.Kind, started func() any) {
	r.steps.Add(1)
	r.emit(path, unit, EventStepStart, started)
}

// runStep runs one step (top-level, body step or a single body call) at
// path and returns its result. Its errors are bare: the caller says where
// (a plan names the step, a map the item).
//
// unit is the kind of unit path names: a step, or the item that a map's
// single-call body runs as, which its events are about.
func (c cursor) runStep(ctx context.Context, s *plans.Step, path string, unit paths.Kind) (any, error) {
	r := c.f.run
	tool := s.ToolName.Value
	c = c.push(Frame{Path: path, Kind: paths.KindStep, Tool: tool})
	c.unit = unit
	start := r.now()

	var input map[string]any
	var result any
	var err error
	// applied is the decision that gave the step its result, if one did.
	var applied Decision
	control := plans.IsControl(tool)
	if !control {
		input, err = renderInput(s, c.sc)
	}
	// A control step renders its parts as it goes, so what its start
	// records is its input as written.
	started := func() any {
		if control {
			return StepStarted{Tool: tool, Input: s.Input.Literal()}
		}
		return StepStarted{Tool: tool, Input: input}
	}
	if err == nil {
		// A control step's stop shows its input as written, as its start
		// does; its parts are rendered as it runs (an agent's prompt in
		// its first round, a map's body per item).
		var stopInput any = input
		if control {
			stopInput = s.Input.Literal()
		}
		d := r.stop(ctx, Stop{Kind: StopStep, Path: path, Unit: c.unit, Tool: tool, Step: s, Input: stopInput, Scope: c.sc, Stack: c.stack, held: c.held})
		switch d.Action {
		case Abort:
			// The record keeps where the person stopped the run: the step
			// starts with its input as the stop showed it and ends there.
			err := d.abortError(path, nil)
			r.startStep(path, c.unit, started)
			r.emitTimed(path, c.unit, EventStepEnd, func() (any, time.Time) {
				end := StepEnded{Tool: tool, Status: StepAborted, Error: err.Error()}
				now := r.now()
				end.Ms, end.HeldMs = c.times(start, now)
				return end, now
			})
			return nil, err
		case Inject:
			r.startStep(path, c.unit, started)
			r.emitTimed(path, c.unit, EventStepEnd, func() (any, time.Time) {
				end := StepEnded{Tool: tool, Status: StepSkipped, Result: d.Value}
				now := r.now()
				end.Ms, end.HeldMs = c.times(start, now)
				end.Decided, end.Reused = d.marks()
				return end, now
			})
			return d.Value, nil
		case Edit:
			if edited, ok := d.Value.(map[string]any); ok && !control {
				input = edited
			}
		}
		r.startStep(path, c.unit, started)
		switch {
		case d.Action == Fail:
			err, applied = failure(d.Value), d
		case d.Action == Deny && !control:
			// The tool is not called; the step fails as a call that
			// failed would, its error stop and all.
			err, applied = ErrDenied, d
		case control:
			result, err = c.runControl(ctx, s, path)
			if err == nil {
				result, applied, err = c.controlResult(ctx, s, path, result)
			}
		default:
			result, applied, err = c.dispatch(ctx, s, path, tool, input)
			if applied.Action == Proceed && (d.Action == Edit || d.Action == Approve) {
				// The call ran as a person let it, its result its own.
				applied = d
			}
		}
	} else {
		r.startStep(path, c.unit, func() any { return StepStarted{Tool: tool} })
	}

	if err != nil && ownFailure(err) {
		d := r.stop(ctx, Stop{Kind: StopError, Path: path, Unit: c.unit, Tool: tool, Step: s, Input: input, Err: err, Scope: c.sc, Stack: c.stack, held: c.held})
		switch d.Action {
		case Abort:
			err = d.abortError(path, err)
		case Replace:
			result, err, applied = d.Value, nil, d
		}
	}
	r.emitTimed(path, c.unit, EventStepEnd, func() (any, time.Time) {
		end := StepEnded{Tool: tool, Status: StepOK, Result: result}
		now := r.now()
		end.Ms, end.HeldMs = c.times(start, now)
		end.Decided, end.Reused = applied.marks()
		if err != nil {
			// exit and abort are declared only here: errors.As puts them
			// on the heap, an allocation a step that succeeded should not
			// pay.
			var exit *exitSignal
			var abort *AbortError
			switch {
			case errors.As(err, &exit):
				end.Status = StepExited
			case errors.As(err, &abort) || ctx.Err() != nil:
				// A step cut short because the run was stopped from
				// outside (ctrl-c, an editor's stop) ended for the abort
				// too, as the run's end says.
				end.Status, end.Error = StepAborted, stoppedText(ctx, err)
			default:
				end.Status, end.Error = StepFailed, err.Error()
			}
		}
		return end, now
	})
	return result, err
}

// failure is the error a Fail decision fails a step with: its value, an
// error or the error's words.
func failure(v any) error {
	switch x := v.(type) {
	case error:
		return x
	case string:
		return errors.New(x)
	}
	return errors.New(JSONText(v))
}

// ownFailure reports whether err failed the step itself, rather than
// passing through it: a body's failure already had its error stop at the
// step that failed, and exits and aborts are not failures.
func ownFailure(err error) bool {
	var body *bodyError
	var exit *exitSignal
	var abort *AbortError
	return !errors.As(err, &body) && !errors.As(err, &exit) && !errors.As(err, &abort)
}

// renderInput renders a catalog step's input against its scope. A step
// without input gets an empty object.
func renderInput(s *plans.Step, sc *scope) (map[string]any, error) {
	if s.Input == nil {
		return map[string]any{}, nil
	}
	v, err := s.Input.Render(sc)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the input must be a mapping, not %s", jsonKind(v))
	}
	return m, nil
}

// dispatch calls the step's tool, between the tool events, and offers the
// result to the hook when the call returned one; applied is the decision
// that replaced the result, if one did.
func (c cursor) dispatch(ctx context.Context, s *plans.Step, path, tool string, input map[string]any) (result any, applied Decision, err error) {
	r := c.f.run
	start := r.now()
	heldBefore := c.held.heldBy(start)
	r.emitTimed(path, c.unit, EventToolStart, func() (any, time.Time) { return ToolStarted{Tool: tool, Args: input}, start })
	callCtx := ctx
	if s != nil && s.TimeoutSecs.Set {
		callCtx = tools.WithStepTimeout(ctx, s.TimeoutSecs.Value)
	}
	result, err = c.call(callCtx, path, tool, input)
	r.emitTimed(path, c.unit, EventToolEnd, func() (any, time.Time) {
		now := r.now()
		end := ToolEnded{Tool: tool, Ms: ms(now.Sub(start)), HeldMs: ms(c.held.heldBy(now) - heldBefore), IsError: err != nil, Result: result}
		if err != nil {
			end.Error = err.Error()
		}
		return end, now
	})
	if err != nil {
		// A failed call's one stop is the step's error stop, where the
		// failure can be replaced: a result stop before it would show
		// the same failure twice.
		return nil, Decision{}, err
	}
	d := r.stop(ctx, Stop{Kind: StopResult, Path: path, Unit: c.unit, Tool: tool, Step: s, Input: input, Output: result, Scope: c.sc, Stack: c.stack, held: c.held})
	switch d.Action {
	case Abort:
		return nil, Decision{}, d.abortError(path, nil)
	case Replace:
		return d.Value, d, nil
	}
	return result, Decision{}, nil
}

// controlResult offers a control step's result to the hook, as dispatch
// offers a tool's: a decide's branch, a map's results, an agent's answer
// can be read and replaced before the steps after it read them; applied
// is the decision that replaced it, if one did.
func (c cursor) controlResult(ctx context.Context, s *plans.Step, path string, result any) (any, Decision, error) {
	d := c.f.run.stop(ctx, Stop{Kind: StopResult, Path: path, Unit: c.unit, Tool: s.ToolName.Value, Step: s, Input: s.Input.Literal(), Output: result, Scope: c.sc, Stack: c.stack, held: c.held})
	switch d.Action {
	case Abort:
		return nil, Decision{}, d.abortError(path, nil)
	case Replace:
		return d.Value, d, nil
	}
	return result, Decision{}, nil
}

// times is the wall time of the cursor's unit from start to now, and how
// much of it the unit's threads were held at stops, in milliseconds.
func (c cursor) times(start, now time.Time) (wall, held float64) {
	return ms(now.Sub(start)), ms(c.held.heldBy(now))
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// jsonKind names the JSON type of a value for messages.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	if _, ok := toFloat(v); ok {
		return "a number"
	}
	return fmt.Sprintf("%T", v)
}

// stoppedText is the error of a step, a model call or a tool call cut
// short because the run was stopped from outside (ctrl-c, SIGTERM, an
// editor's stop), with the context.Canceled a model call or a client
// library met put in the words of why the run was stopped, as a tool's
// error already is: "round 2: stopped: interrupted (ctrl-c)" where Go
// says "round 2: context canceled".
func stoppedText(ctx context.Context, err error) string {
	text := err.Error()
	cause := context.Cause(ctx)
	if cause == nil || cause == context.Canceled || !errors.Is(err, context.Canceled) {
		return text
	}
	canceled := context.Canceled.Error()
	if i := strings.LastIndex(text, canceled); i >= 0 {
		return text[:i] + "stopped: " + cause.Error() + text[i+len(canceled):]
	}
	return text
}
