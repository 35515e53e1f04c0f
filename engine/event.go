package engine

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/stepwise-dev/stepwise/engine/chat"
	paths "github.com/stepwise-dev/stepwise/engine/path"
)

// EventKind names what an event reports.
type EventKind string

// The event kinds. Each has one payload type, named in its comment.
const (
	EventRunStart   EventKind = "run_start"   // RunStarted
	EventRunEnd     EventKind = "run_end"     // RunEnded
	EventStepStart  EventKind = "step_start"  // StepStarted
	EventStepEnd    EventKind = "step_end"    // StepEnded
	EventToolStart  EventKind = "tool_start"  // ToolStarted
	EventToolEnd    EventKind = "tool_end"    // ToolEnded
	EventModelCall  EventKind = "llm_call"    // ModelCalled: one billable model call completed
	EventModelDelta EventKind = "model_delta" // chat.Delta: a piece of a reply as it streams
	EventRepair     EventKind = "repair"      // Repairing: a structured answer failed its schema
	EventGate       EventKind = "gate"        // GateEvaluated
	EventAsk        EventKind = "ask"         // Asked
	EventWarning    EventKind = "warning"     // Warning
	EventUsage      EventKind = "usage"       // UsageReport, once, when the run ends
	EventDecided    EventKind = "decided"     // Decided: a person decided at a stop
	EventItems      EventKind = "items"       // ItemsListed: a map, filter or reduce rendered its list
	EventHeld       EventKind = "held"        // Held: a thread was held at a stop for a person
)

// Event is a fact about a run: something that happened, at a path. Events
// are never instructions; the hook is how anything steers a run.
type Event struct {
	// Seq numbers the events of one run from 1, in the order they happened.
	Seq  uint64
	Time time.Time
	// RunID is the run the event belongs to.
	RunID string
	// Path is the unit of work the event is about (DESIGN.md section 2);
	// empty for the run itself.
	Path string
	// Unit is the kind of unit of work Path names, as the engine knows it
	// (a tool call, a round, an item), so that no reader has to guess it
	// from the path's spelling. It is not written to JSON: a reader of a
	// record classifies the path with paths.KindOf.
	Unit paths.Kind
	Kind EventKind
	// Payload is the kind's payload type. Sinks must not change it.
	Payload any
}

// MarshalJSON writes the event as one flat object, the line format of
// --events jsonl and of the run store.
func (e Event) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Seq     uint64    `json:"seq"`
		Time    time.Time `json:"time"`
		RunID   string    `json:"run_id"`
		Path    string    `json:"path"`
		Kind    EventKind `json:"kind"`
		Payload any       `json:"payload,omitempty"`
	}{e.Seq, e.Time, e.RunID, e.Path, e.Kind, e.Payload})
}

// Sink receives every event of a run, synchronously and in sequence
// order, from whichever goroutine produced it: a sink that does real work
// queues it and returns.
type Sink interface {
	Event(Event)
}

// Selective is a Sink that reads only the kinds of event it lists. The
// engine builds an event only when some sink reads its kind, and gives a
// Selective sink no other kind: a front end that shows a few kinds spares
// the run the cost of the rest. A Sink that is not Selective reads every
// kind. Events keep their sequence numbers whoever reads them, so a sink
// sees the same numbers whether or not the others are selective.
type Selective struct {
	Kinds []EventKind
	Sink  Sink
}

// Event passes e on.
func (s Selective) Event(e Event) { s.Sink.Event(e) }

// sinksByKind is which sinks read which kind of event.
type sinksByKind struct {
	// every holds the sinks that read every kind, which is all a kind no
	// Selective sink names has.
	every []Sink
	// named holds, for each kind some Selective sink names, the sinks
	// that read it, in the order they were given.
	named map[EventKind][]Sink
}

func newSinksByKind(sinks []Sink) sinksByKind {
	var by sinksByKind
	for _, s := range sinks {
		sel, ok := s.(Selective)
		if !ok {
			by.every = append(by.every, s)
			continue
		}
		for _, kind := range sel.Kinds {
			if by.named == nil {
				by.named = map[EventKind][]Sink{}
			}
			by.named[kind] = nil
		}
	}
	for kind := range by.named {
		for _, s := range sinks {
			if sel, ok := s.(Selective); !ok || slices.Contains(sel.Kinds, kind) {
				by.named[kind] = append(by.named[kind], s)
			}
		}
	}
	return by
}

// of returns the sinks that read kind.
func (by sinksByKind) of(kind EventKind) []Sink {
	if sinks, ok := by.named[kind]; ok {
		return sinks
	}
	return by.every
}

// SinkFunc adapts a function to Sink.
type SinkFunc func(Event)

// Event calls f.
func (f SinkFunc) Event(e Event) { f(e) }

// RunStarted opens a run.
type RunStarted struct {
	Plan string `json:"plan"` // the plan's identifier, or its file's stem
	// File is the plan file, as an absolute path.
	File string `json:"file"`
	// Project is the root directory of the project the run belongs to
	// (absolute), empty outside a project.
	Project string `json:"project,omitempty"`
	// Hash is the SHA-256 of the plan file's bytes, hex.
	Hash   string         `json:"hash"`
	Inputs map[string]any `json:"inputs"`
	// Parent is the run that this one replays or forks, empty otherwise.
	Parent string `json:"parent,omitempty"`
	// Made says how the run was made: run, debug, replay or fork.
	Made Made `json:"made,omitempty"`
}

// AskReason says why an ask went unanswered.
type AskReason string

// The reasons an ask goes unanswered.
const (
	// AskDeclined: a person chose not to answer (the Decline action).
	AskDeclined AskReason = "declined"
	// AskUnavailable: nobody could be asked (no hook, or one that let the
	// run proceed).
	AskUnavailable AskReason = "unavailable"
)

// String returns the reason as JSON writes it.
func (r AskReason) String() string { return string(r) }

// RunEnded closes a run.
type RunEnded struct {
	// Status is ok, exited (an exit gate fired with success), failed
	// (an error exit is failed too, with Exit set) or aborted.
	Status RunStatus `json:"status"`
	Error  string    `json:"error,omitempty"`
	// AbortedAt is, for a run aborted at a stop, the path of that stop:
	// the unit there ends aborted, whether or not it had started.
	AbortedAt     string      `json:"aborted_at,omitempty"`
	Exit          *Exit       `json:"exit,omitempty"`
	StepsExecuted int         `json:"steps_executed"`
	Output        any         `json:"output,omitempty"`
	Answer        string      `json:"answer,omitempty"`
	EmptyData     bool        `json:"empty_data,omitempty"`
	Usage         UsageReport `json:"usage"`
	// HeldMs is how long some thread of the run was held at a stop.
	HeldMs float64 `json:"held_ms,omitempty"`
}

// StepStarted opens a step, a body call or a body step. Input is the
// rendered input, or for a control step what it rendered up front (the
// gate's operands, over).
type StepStarted struct {
	Tool  string `json:"tool"`
	Input any    `json:"input,omitempty"`
}

// StepEnded closes a step.
type StepEnded struct {
	Tool string `json:"tool"`
	// Status is ok, failed or skipped (a stop decision injected the
	// result, which Result then holds).
	Status StepStatus `json:"status"`
	Result any        `json:"result,omitempty"`
	Error  string     `json:"error,omitempty"`
	// Ms is the step's wall time, from its step stop to its end.
	Ms float64 `json:"ms"`
	// HeldMs is how much of Ms the step's threads (its own, its items')
	// were held at stops: Ms less HeldMs is the step's own time when it
	// ran on one thread.
	HeldMs float64 `json:"held_ms,omitempty"`
	// Decided is the action by which a person decided the step (inject,
	// replace, ...): its result is theirs. Reused says instead that it is
	// a recorded run's, reused by a replay or a fork.
	Decided string `json:"decided,omitempty"`
	Reused  string `json:"reused,omitempty"`
}

// ToolStarted opens a dispatch to a tool.
type ToolStarted struct {
	Tool string `json:"tool"`
	Args any    `json:"args"`
}

// ToolEnded closes a dispatch; it always reports the real call, whatever a
// stop decision made of its result afterwards. Injected says the call was
// not made: a stop decision gave Result in its place.
type ToolEnded struct {
	Tool string `json:"tool"`
	// Ms is the call's wall time: a round's tool call's from its tool
	// stop to its end, a step's dispatch from its start to its end.
	Ms       float64 `json:"ms"`
	IsError  bool    `json:"is_error"`
	Result   any     `json:"result,omitempty"`
	Error    string  `json:"error,omitempty"`
	Injected bool    `json:"injected,omitempty"`
	// HeldMs is how much of Ms the call's threads were held at stops:
	// its tool stop's, a called plan's.
	HeldMs float64 `json:"held_ms,omitempty"`
	// Decided and Reused say who gave an injected result, as StepEnded's.
	Decided string `json:"decided,omitempty"`
	Reused  string `json:"reused,omitempty"`
}

// ModelCalled reports one completed model call. Site is the path of the
// step that made it (or "solver"), the key usage.by_step groups on.
type ModelCalled struct {
	Site     string     `json:"site"`
	Role     string     `json:"role"`
	Provider string     `json:"provider"`
	Model    string     `json:"model"`
	Usage    chat.Usage `json:"usage"`
	CostUSD  *float64   `json:"cost_usd,omitempty"`
	Ms       float64    `json:"ms"`
	// Error is why the call failed; a failed call spent nothing.
	Error string `json:"error,omitempty"`
	// Aborted says the call was cut short because the run was stopped
	// (aborted at a stop, ctrl-c, a signal): its Error says why, and it is
	// no failure of the call's or the model's.
	Aborted bool `json:"aborted,omitempty"`
	// Retries say why each attempt that failed before the one that
	// answered failed, in order, a fallback's included: where a call's
	// time went when a server stalled or refused, which its reply does
	// not show.
	Retries []string `json:"retries,omitempty"`
	// StructuredOutput records, for a call that asked for strict
	// structured output, whether it was sent and why not.
	StructuredOutput *StrictRecord `json:"structured_output,omitempty"`
	// Request and Reply are kept whole, so a run can be inspected and
	// replayed without the model.
	Request chat.Request `json:"request"`
	Reply   chat.Reply   `json:"reply"`
}

// StrictRecord is seeds/002's record of one attempt at strict structured
// output.
type StrictRecord struct {
	Requested       bool   `json:"requested"`
	Sent            bool   `json:"sent"`
	Provider        string `json:"provider"`
	DowngradeReason string `json:"downgrade_reason,omitempty"`
}

// Repairing reports a structured answer that failed its schema, before the
// repair pass.
type Repairing struct {
	Answer     string   `json:"answer"`
	Violations []string `json:"violations"`
}

// GateEvaluated reports the verdict of a gate (exit, decide, one filter
// item).
type GateEvaluated struct {
	Verdict bool   `json:"verdict"`
	Reason  string `json:"reason,omitempty"`
}

// Asked reports how an ask step was answered.
type Asked struct {
	Prompt   string    `json:"prompt"`
	Answered bool      `json:"answered"`
	Reason   AskReason `json:"reason,omitempty"`
	Answer   any       `json:"answer"`
}

// Decided reports a decision a person made at a stop, or one a replay made
// again: the stop's kind, the action (inject, replace, answer, ...; "set"
// for a value a fork's --set gave the step, at its step stop) and the
// value it gave. It is emitted at the stop's path as the decision is
// applied; the end event of a step or tool call it decided carries the
// action too (a replay's, its origin).
type Decided struct {
	Stop   StopKind `json:"stop"`
	Action string   `json:"action"`
	Value  any      `json:"value,omitempty"`
	// Origin is empty for a decision a person made in this run; a replay
	// that made one again (Decision.Again) says "replay".
	Origin string `json:"origin,omitempty"`
}

// ItemsListed reports how many items a map, filter or reduce step has,
// once its over has rendered and before its first item starts: without it
// a reader of the events could count the items that ran, but not those to
// come, and no progress could say how far a long map is.
type ItemsListed struct {
	Count int `json:"count"`
}

// Held reports that the hook held a thread at the stop at the event's path
// for a person, and let it go at the event's time: the hold spans the Ms
// before it. A unit's held time is the union of the holds at and below its
// path within its wall time (Holds), which is what its end event's
// held_ms says for a step or a tool call; an item, a round or a called
// plan has no end event, and its held time comes from these alone.
type Held struct {
	Stop StopKind `json:"stop"`
	Ms   float64  `json:"ms"`
}

// Warning is something a user should know that did not fail the run.
type Warning struct {
	Message string `json:"message"`
}

// Exit is a fired exit gate, as the run's record and the --json envelope
// carry it.
type Exit struct {
	Status  string `json:"status"` // success or error
	Message string `json:"message"`
	Reason  string `json:"reason,omitempty"` // the judge's reason, for an infer gate
	Step    string `json:"step"`             // the exit's path, e.g. E4/then/bail
	Output  any    `json:"-"`                // the exit's rendered output map, if any
}
