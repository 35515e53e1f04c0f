package engine

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"time"

	paths "github.com/stepwise-dev/stepwise/engine/path"
	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/plans/template"
)

// StopKind names a point where the engine asks the hook what to do.
type StopKind string

// The stops of DESIGN.md section 2.
const (
	// StopStep: before a step or body call runs, its input rendered.
	StopStep StopKind = "step"
	// StopRound: before an agent round calls the model.
	StopRound StopKind = "round"
	// StopReply: after the model answered.
	StopReply StopKind = "reply"
	// StopTool: before a tool call that an agent round made is dispatched.
	// A plan step's own dispatch stops at StopStep instead: one stop per
	// step, not two.
	StopTool StopKind = "tool"
	// StopResult: after a step returned its value (a tool's result, a
	// control step's value), or after an agent's tool call returned, with
	// its value or its error. A plan step whose call failed stops at
	// StopError instead: one stop per failure.
	StopResult StopKind = "result"
	// StopRepair: before a repair pass, with the refused answer.
	StopRepair StopKind = "repair"
	// StopError: a failure is about to propagate out of a step.
	StopError StopKind = "error"
	// StopAsk: an ask step needs an answer.
	StopAsk StopKind = "ask"
)

// String returns the kind as breakpoints and --json write it.
func (k StopKind) String() string { return string(k) }

// accepted is the one table of the decisions each kind of stop takes
// besides Proceed and Abort, which every stop takes (DESIGN.md section
// 2). The first is what a value given at the stop decides.
var accepted = map[StopKind][]Action{
	StopStep:   {Inject, Edit, Deny, Approve, Fail},
	StopTool:   {Inject, Edit, Deny, Approve},
	StopRound:  {Replace},
	StopReply:  {Replace},
	StopResult: {Replace},
	StopRepair: {Replace},
	StopError:  {Replace},
	StopAsk:    {Answer, Decline},
}

// Accepts lists the actions a stop of this kind takes besides Proceed and
// Abort. The engine treats any other action as Proceed; a front end asks
// here before it offers or sends one.
func (k StopKind) Accepts() []Action { return slices.Clone(accepted[k]) }

// Takes reports whether a stop of this kind takes the action.
func (k StopKind) Takes(a Action) bool {
	return a == Proceed || a == Abort || slices.Contains(accepted[k], a)
}

// ValueAction is the action a value given at a stop of this kind
// decides: an answer at an ask, an inject before a step or tool call, a
// replace of what happened everywhere else.
func (k StopKind) ValueAction() Action { return accepted[k][0] }

// Action is what a hook decides at a stop.
type Action uint8

// The actions. Which ones a stop accepts is StopKind.Accepts; an action a
// stop does not accept is treated as Proceed.
const (
	// Proceed lets the engine go on as it would without a hook. At an
	// error stop it lets the error propagate; at an ask stop it means
	// nobody could be asked.
	Proceed Action = iota
	// Inject skips the step or tool call and uses Decision.Value as its
	// result.
	Inject
	// Replace substitutes Decision.Value for what just happened: a reply,
	// a tool result, a step's output, a repair answer, or the error at an
	// error stop.
	Replace
	// Abort stops the run at once: no further steps, no finish.
	Abort
	// Answer answers an ask with Decision.Value.
	Answer
	// Decline is a person choosing not to answer an ask.
	Decline
	// Edit runs the step or tool call with Decision.Value, a JSON object,
	// as its arguments in place of the ones it was given.
	Edit
	// Deny is a person refusing a tool call: it is not made. An agent's
	// call returns ErrDenied's text to the model as the call's error; a
	// plan step fails with ErrDenied.
	Deny
	// Approve is a person letting a tool call run: the engine goes on as
	// with Proceed, and the decision is recorded as approved. It is not
	// Proceed so that Hooks passes it on and the record can tell a call a
	// person approved from one nobody was asked about.
	Approve
	// Fail skips the step and fails it with Decision.Value, an error or
	// its words: how a replay reproduces a recorded failure without
	// running the tool again. No command gives it.
	Fail
)

var actionNames = [...]string{Proceed: "proceed", Inject: "inject", Replace: "replace", Abort: "abort", Answer: "answer", Decline: "decline",
	Edit: "edit", Deny: "deny", Approve: "approve", Fail: "fail"}

// ErrDenied is the failure of a tool call a person denied: what the model
// reads for an agent's call, and the error a plan step fails with.
var ErrDenied = errors.New("denied by the user")

// String returns the action's name, the debugger verb that decides it.
func (a Action) String() string {
	if int(a) < len(actionNames) {
		return actionNames[a]
	}
	return "action(" + strconv.Itoa(int(a)) + ")"
}

// Decision is a hook's answer at a stop.
type Decision struct {
	Action Action
	Value  any
	// Origin says who decided: a person unless a recorded run's value is
	// reused. The record of the run marks each unit decided by hand with
	// the action, and each reused one with where it came from.
	Origin Origin
	// Again lists the decisions a person made at this unit in the recorded
	// run that a replay makes here again, as the record gave them: their
	// stop, action and value. A replay answers a step or tool call whole
	// at its first stop, so a failure replaced at its error stop is made
	// again at the step stop, and its record still says "replace at its
	// error stop". It stays a replayed decision (Origin), but the record
	// lists each among the run's decisions, with its origin and its value,
	// so that inspect shows what was made again and a replay of the replay
	// makes it again too.
	Again []Decided
	// AbortedAt is, for an Abort, the path of the stop the run was
	// aborted at when that is another thread's: a thread held while a
	// person aborts at another thread's stop is aborted with the run, and
	// its error names where the person aborted, not where it happened to
	// be held. Empty: this stop.
	AbortedAt string
}

// abortError is the error of the run aborted by d at the stop at path,
// with the failure on hand there (nil when none). A thread aborted with
// the run at another's stop names that stop, and leaves its own failure
// out: it is not why the run was aborted.
func (d Decision) abortError(path string, cause error) *AbortError {
	if d.AbortedAt != "" {
		return &AbortError{Path: d.AbortedAt}
	}
	return &AbortError{Path: path, Cause: cause}
}

// Origin is who made a decision.
type Origin uint8

// The origins of a decision.
const (
	// ByHand is a person at the stop, or a policy acting for one.
	ByHand Origin = iota
	// FromReplay is a replay answering the stop from its record.
	FromReplay
	// FromFork is a fork reusing the recorded result of the run it forks.
	FromFork
	// BySet is a person's value a fork gives a step in place of running
	// it, set before the fork started (stepwise fork --set) rather than
	// at a stop. The record lists it as a decision by hand whose action
	// is "set", so that nobody reads it as an inject at a stop that never
	// happened.
	BySet
)

var originNames = [...]string{ByHand: "hand", FromReplay: "replay", FromFork: "fork", BySet: "set"}

// String returns the origin as the record writes it.
func (o Origin) String() string {
	if int(o) < len(originNames) {
		return originNames[o]
	}
	return "origin(" + strconv.Itoa(int(o)) + ")"
}

// marks is what the end event of a unit says of decision d applied to
// it: the action of a decision by hand, or where a reused value came
// from; both empty for Proceed and Abort.
func (d Decision) marks() (decided, reused string) {
	switch {
	case d.Action == Proceed || d.Action == Abort:
		return "", ""
	case d.Origin == ByHand:
		return d.Action.String(), ""
	case d.Origin == BySet:
		return BySet.String(), ""
	}
	return "", d.Origin.String()
}

// Frame is one level of the call stack at a stop: the plan run, each step,
// item, agent round, tool call or repair pass that encloses the stop.
type Frame struct {
	Path string `json:"path"`
	// Kind is the kind of unit the frame is: a plan, step, item, round,
	// tool call or repair pass.
	Kind paths.Kind `json:"kind"`
	Tool string     `json:"tool,omitempty"`
}

// Stop describes the point a run is held at while the hook decides.
type Stop struct {
	Kind  StopKind
	RunID string
	Path  string
	// Unit is the kind of unit Path names: the step, item, round, tool
	// call or repair pass held there.
	Unit paths.Kind
	// Tool is the step's tool (or control step) or the called tool.
	Tool string
	// Step is the plan step at or around the stop; nil at the finish.
	Step *plans.Step
	// Input is what is about to happen: a step's rendered input, a tool
	// call's arguments.
	Input any
	// Output is what just happened: a tool's result, a step's result.
	Output any
	// Err is the failure at an error stop, an agent tool call's error at
	// a result stop, or at a round stop the *SpendCapError the model call
	// would fail with.
	Err error
	// Scope is what the step's templates render against.
	Scope Scope
	// Stack lists the enclosing frames, outermost first; the last is the
	// frame of the stop itself.
	Stack []Frame
	// Ask is the question at an ask stop.
	Ask *Question

	// held is the hold clock of the unit the stop is in, which measures
	// how long the hook holds it for a person.
	held *holdClock
	// holdSince is when the hook's hold began, while it holds;
	// holdTotal is how long it has held the stop so far.
	holdSince time.Time
	holdTotal time.Duration
}

// Hold says the hook holds the stop's thread for a person from now on
// (at a breakpoint, behind another thread's stop, at a prompt), until
// Release: that stretch is held time, no unit's own. A hook that decides
// at once, whatever it looks up first, holds nothing, so that a unit's
// time is not charged with the hook's own work.
func (s *Stop) Hold() {
	s.holdSince = time.Now()
	s.held.hold(s.holdSince)
}

// Release says the thread Hold held goes on.
func (s *Stop) Release() {
	now := time.Now()
	s.held.release(now)
	s.holdTotal += now.Sub(s.holdSince)
}

// Scope is the template scope at a stop: plan input, earlier results and a
// body's pseudo-roots.
type Scope interface {
	template.Scope
	// Values flattens the scope into one map, innermost roots winning:
	// everything a step can read.
	Values() map[string]any
}

// Question is what an ask step puts to a person.
type Question struct {
	Prompt string
	Schema *plans.Schema
	// Default is the rendered fallback answer; nil without one.
	Default any
}

// MarshalJSON writes the question with its schema as the plan wrote it.
func (q *Question) MarshalJSON() ([]byte, error) {
	var schema any
	if q.Schema != nil {
		schema = q.Schema.Raw
	}
	return json.Marshal(struct {
		Prompt  string `json:"prompt"`
		Schema  any    `json:"schema"`
		Default any    `json:"default,omitempty"`
	}{q.Prompt, schema, q.Default})
}

// Hook is called synchronously at every stop, and the run waits for its
// decision. It may be called from several goroutines at once when map items
// run concurrently; a hook that holds one of them holds only that item.
type Hook func(ctx context.Context, s *Stop) Decision

// Hooks composes hooks: at each stop they are asked in order, and the first
// decision that is not Proceed is the decision. The debugger and a tool
// approval policy can so be installed together.
func Hooks(hooks ...Hook) Hook {
	var live []Hook
	for _, h := range hooks {
		if h != nil {
			live = append(live, h)
		}
	}
	switch len(live) {
	case 0:
		return nil
	case 1:
		return live[0]
	}
	return func(ctx context.Context, s *Stop) Decision {
		for _, h := range live {
			if d := h(ctx, s); d.Action != Proceed {
				return d
			}
		}
		return Decision{}
	}
}
