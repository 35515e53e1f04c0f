package debugger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/chat"
	"github.com/stepwise-dev/stepwise/engine/model"
	"github.com/stepwise-dev/stepwise/engine/path"
	"github.com/stepwise-dev/stepwise/engine/record"
	"github.com/stepwise-dev/stepwise/engine/store"
	"github.com/stepwise-dev/stepwise/plans"
)

// Recording is a recorded run as a replay or a fork reads it: what each
// step, tool call, model call and ask of the run gave, by path. It is read
// once from the run store and not changed after, so one Recording may serve
// several replays.
type Recording struct {
	// Run is the run's record as the store gives it.
	Run *record.RunDetail

	inputs map[string]any
	steps  map[string]*recordedStep
	// order lists the step paths in the order they started.
	order []string
	tools map[string]record.ToolCall
	// llm holds the model calls by the path they were made at (a round
	// E1/agent.2, a repair pass, a verdict E1/judge, the solver).
	llm map[string]engine.ModelCalled
	// callsUnder counts the model calls made at each path or below it: a
	// step or tool call the replay answers whole with its recorded result
	// answers that many calls from the record.
	callsUnder map[string]int
	calls      []model.RecordedCall
	asks       map[string]engine.Asked
	// decided holds the decisions a person made, by path and stop: a
	// replay makes the ones no other record carries (a round's reply
	// replaced) again. decidedOrder lists where, in the order they were
	// made.
	decided      map[decisionAt]engine.Decided
	decidedOrder []decisionAt
	// abortedAt is the stop a person aborted the run at, from its end;
	// empty when the run was not aborted at a stop.
	abortedAt string
}

// decisionAt is where a decision was made: a path and the kind of stop.
type decisionAt struct {
	path string
	stop engine.StopKind
}

// recordedStep is a step of the record with the sequence numbers of its
// start and end (0 when it has none), which say what ran before what.
type recordedStep struct {
	record.StepRecord
	startSeq, endSeq uint64
	// ran says something happened at or under the step between its start
	// and its end: one aborted at its step stop, before it ran, starts
	// and ends with nothing between.
	ran bool
}

// LoadRecording reads the run that id names (its id, or a prefix only it
// has) from st.
func LoadRecording(ctx context.Context, st *store.Store, id string) (*Recording, error) {
	d, err := st.Run(ctx, id)
	if err != nil {
		return nil, err
	}
	events, err := st.Events(ctx, d.ID)
	if err != nil {
		return nil, err
	}
	return NewRecording(d, events)
}

// NewRecording indexes a run's record and its events (Store.Run and
// Store.Events).
func NewRecording(d *record.RunDetail, events []record.StoredEvent) (*Recording, error) {
	rec := &Recording{Run: d, inputs: map[string]any{}, steps: map[string]*recordedStep{}, tools: map[string]record.ToolCall{},
		llm: map[string]engine.ModelCalled{}, callsUnder: map[string]int{}, calls: []model.RecordedCall{}, asks: map[string]engine.Asked{}, decided: map[decisionAt]engine.Decided{}}
	if len(d.Inputs) > 0 && string(d.Inputs) != "null" {
		if err := json.Unmarshal(d.Inputs, &rec.inputs); err != nil {
			return nil, fmt.Errorf("run %s: its inputs: %w", d.ID, err)
		}
	}
	for _, s := range d.Steps {
		rec.steps[s.Path] = &recordedStep{StepRecord: s}
		rec.order = append(rec.order, s.Path)
	}
	for _, c := range d.ToolCalls {
		rec.tools[c.Path] = c
	}
	for _, e := range events {
		// A step's own end is not something that ran inside it.
		at := e.Path
		if e.Kind == engine.EventStepEnd {
			at, _, _ = path.Parent(at)
		}
		rec.ranAt(at)
		switch e.Kind {
		case engine.EventStepStart:
			if s, ok := rec.steps[e.Path]; ok && s.startSeq == 0 {
				s.startSeq = e.Seq
			}
		case engine.EventStepEnd:
			if s, ok := rec.steps[e.Path]; ok && s.endSeq == 0 {
				s.endSeq = e.Seq
			}
		case engine.EventModelCall:
			p, err := engine.DecodePayload(e.Kind, e.Payload)
			if err != nil {
				return nil, fmt.Errorf("run %s: the model call at %s: %w", d.ID, e.Path, err)
			}
			c := p.(engine.ModelCalled)
			rec.llm[e.Path] = c
			for p := e.Path; p != ""; p, _, _ = path.Parent(p) {
				rec.callsUnder[p]++
			}
			rec.calls = append(rec.calls, model.RecordedCall{Step: c.Request.Step, Role: c.Role, Reply: c.Reply, Err: c.Error})
		case engine.EventAsk:
			p, err := engine.DecodePayload(e.Kind, e.Payload)
			if err != nil {
				return nil, fmt.Errorf("run %s: the ask at %s: %w", d.ID, e.Path, err)
			}
			rec.asks[e.Path] = p.(engine.Asked)
		case engine.EventDecided:
			p, err := engine.DecodePayload(e.Kind, e.Payload)
			if err != nil {
				return nil, fmt.Errorf("run %s: the decision at %s: %w", d.ID, e.Path, err)
			}
			dec := p.(engine.Decided)
			at := decisionAt{e.Path, dec.Stop}
			if _, ok := rec.decided[at]; !ok {
				rec.decidedOrder = append(rec.decidedOrder, at)
			}
			rec.decided[at] = dec
		case engine.EventRunEnd:
			p, err := engine.DecodePayload(e.Kind, e.Payload)
			if err != nil {
				return nil, fmt.Errorf("run %s: its end: %w", d.ID, err)
			}
			rec.abortedAt = p.(engine.RunEnded).AbortedAt
		}
	}
	return rec, nil
}

// ranAt notes that something happened at p, inside the steps at and above
// it that have started and not ended.
func (rec *Recording) ranAt(p string) {
	for ; p != ""; p, _, _ = path.Parent(p) {
		if s, ok := rec.steps[p]; ok && s.startSeq != 0 && s.endSeq == 0 {
			s.ran = true
		}
	}
}

// Inputs returns the inputs the run was given (its input schema's defaults
// applied); the map is the caller's.
func (rec *Recording) Inputs() map[string]any {
	out := make(map[string]any, len(rec.inputs))
	for k, v := range rec.inputs {
		out[k] = v
	}
	return out
}

// Calls returns the run's model calls in the order they were made, as a
// replay answers them (model.Options.Replay). The slice is never nil, so
// that a run without model calls still replays.
func (rec *Recording) Calls() []model.RecordedCall { return slices.Clone(rec.calls) }

// Divergence is where a replay parts from its record: the first thing the
// plan does now that the recorded run did not, or did otherwise.
type Divergence struct {
	// Path is where it happened (DESIGN.md section 2); empty for the run
	// as a whole.
	Path string `json:"path"`
	// What names what differs: step (the record has no such step), tool,
	// input, round, request, tool_call, ask, model_call, error,
	// unfinished, missing (the replay did not run a recorded step),
	// status, result, outcome, or aborted (someone aborted the replay
	// under the debugger).
	What string `json:"what"`
	// Message says it in a sentence.
	Message string `json:"message"`
	// Expected is what the record holds, Got what the replay had.
	Expected any `json:"expected,omitempty"`
	Got      any `json:"got,omitempty"`
	// CutShort says that the replay stopped there. A difference found once
	// the replay had run to its end is not.
	CutShort bool `json:"cut_short"`
}

// String is the divergence in one line: "E2: the input differs: ...".
func (d *Divergence) String() string {
	if d.Path == "" {
		return d.Message
	}
	return d.Path + ": " + d.Message
}

// ReplayResult is how a replay went.
type ReplayResult struct {
	// Run is the replay's own run, as the engine reports it.
	Run *engine.Result
	// Of is the id of the recorded run.
	Of string
	// Divergence is the first difference from the record; nil when the
	// replay reproduced it.
	Divergence *Divergence
	// FailedAt is the step where the recorded run failed when the replay
	// reproduced that failure: the step fails with the recorded error,
	// its tool not run again, and the replay's run fails as the recorded
	// one did.
	FailedAt string
	// AbortedAt is the stop a person aborted the recorded run at when the
	// replay reproduced the run up to it: the replay aborts there too,
	// the record having nothing past it to answer with.
	AbortedAt string
	// Steps counts the recorded steps the replay reproduced.
	Steps int
	// ModelCalls counts the model calls answered from the record, none
	// of which reached a model: those the replay made (agent rounds,
	// repairs, verdicts, the solver), answered with their recorded
	// replies, and those made inside the steps and tool calls it answered
	// whole with their recorded results (builtin__infer, a prompt tool).
	ModelCalls int
}

// Identical reports whether the replay reproduced the recorded run.
func (r *ReplayResult) Identical() bool { return r.Divergence == nil }

// Replay runs plan p again as the recorded run ran it: with the recorded
// inputs, every model call answered from the record, and every tool the
// recorded run dispatched answered with the result it recorded, so that no
// model is called and no tool has a side effect. Control steps, plan__
// steps and the finish run for real over the recorded answers; a catalog
// step the record says failed ends the replay there (see
// ReplayResult.FailedAt).
//
// Along the way every step's input, every agent round's request and every
// tool call's arguments are compared with the record; the first that
// differs, or a step, round, call or ask the record does not have, is the
// divergence, and the replay stops there. A replay that reaches its end
// compares each step's status and result, and the run's outcome, with the
// record.
//
// opts are the engine parts the plan runs with: configuration, catalog,
// tool runtime (MCP servers are asked for their tool lists, never called),
// sinks (a store Recorder records the replay as a new run) and a hook,
// consulted after the replay's own at the stops it leaves to run.
// opts.Models is not used. The error is the engine's when the run could
// not start (an *engine.InputError, an *engine.ResolveError).
func Replay(ctx context.Context, rec *Recording, p *plans.Plan, opts engine.Options) (*ReplayResult, error) {
	r, seen, opts := newReplayer(rec, opts)
	res, err := engine.New(opts).Run(ctx, p, rec.Inputs())
	if err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		// An interrupted replay compares nothing: what it did not run,
		// it was not let run.
		r.mu.Lock()
		defer r.mu.Unlock()
		return &ReplayResult{Run: res, Of: rec.Run.ID, ModelCalls: seen.modelCalls() + r.callsAnswered, Divergence: r.divergence, FailedAt: r.failedAt, AbortedAt: r.abortedAt}, nil
	}
	return r.result(res, seen), nil
}

// result is how the replay that ended with res compares with its record:
// the divergence its hook met on the way, or else what comparing its steps
// and outcome with the record finds.
func (r *replayer) result(res *engine.Result, seen *runLog) *ReplayResult {
	out := &ReplayResult{Run: res, Of: r.rec.Run.ID}
	r.mu.Lock()
	out.Divergence, out.FailedAt, out.AbortedAt, out.ModelCalls = r.divergence, r.failedAt, r.abortedAt, seen.modelCalls()+r.callsAnswered
	r.mu.Unlock()
	var abort *engine.AbortError
	switch {
	case out.Divergence != nil:
	case res.Status == engine.StatusAborted && r.rec.Run.Status != engine.StatusAborted && errors.As(res.Err, &abort):
		// Someone aborted the replay (under the debugger): what it did
		// not run, it was not let run, so nothing after compares.
		out.Divergence = &Divergence{Path: abort.Path, What: "aborted", CutShort: true,
			Message: "the replay was aborted here, before it had reproduced the record"}
	default:
		out.Divergence, out.Steps = r.compare(res, seen)
	}
	return out
}

// recordedOutcome is what a replay gives a stop it is let go on from,
// where the record says so, for a session to show.
type recordedOutcome struct {
	value any
	// decision is the action a person took at the stop in the recorded
	// run, which the replay takes again ("replace", at an ask "answer" or
	// "decline"): value is what it gave, in place of what happened now
	// (at an ask, its answer, the default when it was declined).
	decision string
}

// recordedOutcome is what the replay gives st when it is let go on: the
// recorded answer at an ask, or the value a person gave in the recorded
// run at a round, reply, result or error stop (a reply as the engine
// takes it).
func (r *replayer) recordedOutcome(st *engine.Stop) (recordedOutcome, bool) {
	switch st.Kind {
	case engine.StopAsk:
		a, ok := r.rec.asks[st.Path]
		switch {
		case !ok:
			return recordedOutcome{}, false
		case a.Answered:
			return recordedOutcome{value: a.Answer, decision: engine.Answer.String()}, true
		case a.Reason == engine.AskDeclined:
			// Declined, the ask gave its default, which the record has
			// as its answer.
			return recordedOutcome{value: a.Answer, decision: engine.Decline.String()}, true
		}
		return recordedOutcome{}, false
	case engine.StopRound, engine.StopReply, engine.StopResult, engine.StopError:
		d, ok := r.rec.decided[decisionAt{st.Path, st.Kind}]
		if !ok {
			return recordedOutcome{}, false
		}
		out := recordedOutcome{value: d.Value, decision: d.Action}
		if st.Kind == engine.StopRound || st.Kind == engine.StopReply {
			if reply, err := engine.ReplyFrom(d.Value); err == nil {
				out.value = reply
			}
		}
		return out, true
	}
	return recordedOutcome{}, false
}

// newReplayer returns a replay's hook, the log of what the replay ran, and
// opts with both installed and models that answer from the record, its
// run the record's child.
func newReplayer(rec *Recording, opts engine.Options) (*replayer, *runLog, engine.Options) {
	r := &replayer{rec: rec}
	seen := &runLog{ends: map[string]engine.StepEnded{}}
	opts.Models = model.New(opts.Config, model.Options{Replay: rec.Calls()})
	opts.Hook = engine.Hooks(r.hook, opts.Hook)
	opts.Sinks = append(slices.Clip(opts.Sinks), seen)
	opts.Parent, opts.Made = rec.Run.ID, engine.MadeReplay
	return r, seen, opts
}

// replayer is the hook of one replay.
type replayer struct {
	rec *Recording

	mu         sync.Mutex
	divergence *Divergence
	failedAt   string
	// abortedAt is the recorded run's abort, once the replay has come to
	// it and aborted there too.
	abortedAt string
	// callsAnswered counts the recorded model calls inside the steps and
	// tool calls the replay answered whole from the record.
	callsAnswered int
}

// answeredWhole notes that the unit at p was answered with its recorded
// outcome: the model calls made inside it were answered from the record.
func (r *replayer) answeredWhole(p string) {
	r.mu.Lock()
	r.callsAnswered += r.rec.callsUnder[p]
	r.mu.Unlock()
}

// hook answers every stop from the record, or stops the run at the first
// divergence, or aborts it where a person aborted the recorded run. Once
// the replay has diverged or aborted, every stop aborts: concurrent map
// items stop where they are.
func (r *replayer) hook(ctx context.Context, st *engine.Stop) engine.Decision {
	r.mu.Lock()
	diverged, abortedAt := r.divergence != nil, r.abortedAt
	if abortedAt == "" && r.abortsHere(st) {
		r.abortedAt = r.rec.abortedAt
		r.mu.Unlock()
		return engine.Decision{Action: engine.Abort, AbortedAt: r.abortedAt, Origin: engine.FromReplay}
	}
	r.mu.Unlock()
	switch {
	case diverged:
		return engine.Decision{Action: engine.Abort}
	case abortedAt != "":
		return engine.Decision{Action: engine.Abort, AbortedAt: abortedAt, Origin: engine.FromReplay}
	}
	var d engine.Decision
	var div *Divergence
	switch st.Kind {
	case engine.StopStep:
		d, div = r.step(st)
	case engine.StopRound:
		d, div = r.round(st)
	case engine.StopReply:
		d = r.reply(st)
	case engine.StopTool:
		d, div = r.tool(st)
	case engine.StopAsk:
		d, div = r.ask(st)
	case engine.StopResult:
		d = r.replaced(st)
	case engine.StopError:
		if dec, ok := r.rec.decided[decisionAt{st.Path, engine.StopError}]; ok {
			// A person replaced this failure with a value: it is the
			// unit's result again.
			d = again(dec)
			break
		}
		div = r.failure(st)
	}
	if div != nil {
		div.CutShort = true
		r.mu.Lock()
		if r.divergence == nil {
			r.divergence = div
		}
		r.mu.Unlock()
		return engine.Decision{Action: engine.Abort}
	}
	return d
}

// cutByAbort reports whether p lies in a step the recorded run's abort
// cut short: one that ended aborted.
func (rec *Recording) cutByAbort(p string) bool {
	for ; p != ""; p, _, _ = path.Parent(p) {
		if s, ok := rec.steps[p]; ok && s.Status == engine.StepAborted {
			return true
		}
	}
	return false
}

// abortsHere reports whether the replay comes to the recorded run's abort
// at st: the stop a person aborted it at (the first at that path past which
// the record has nothing: a step that ran there, a round whose call it
// made, a tool call that it made, each goes on to its later stop at the
// same path, error, reply or result), or a stop inside another unit the
// abort cut short, which the record has nothing of. A replay answers at
// once what took time in the recorded run: such a unit can come further
// before the replay comes to the person's stop, and it is where the
// abort found it, not a divergence.
func (r *replayer) abortsHere(st *engine.Stop) bool {
	rec := r.rec
	if rec.abortedAt == "" {
		return false
	}
	if st.Path != rec.abortedAt {
		_, step := rec.steps[st.Path]
		_, call := rec.llm[st.Path]
		_, tool := rec.tools[st.Path]
		return !step && !call && !tool && rec.cutByAbort(st.Path)
	}
	switch st.Kind {
	case engine.StopStep:
		rs, ok := r.rec.steps[st.Path]
		return !ok || !rs.ran
	case engine.StopRound:
		_, called := r.rec.llm[st.Path]
		return !called
	case engine.StopTool:
		_, called := r.rec.tools[st.Path]
		return !called
	}
	return true
}

// decisionsAt lists the decisions a person made at path in the recorded
// run, at any of its stops, in the order they were made: a stop the
// replay answers whole (a step's, a tool call's) gives the unit its whole
// result, whichever stops the person decided it at, and its record says
// what they decided where.
func (rec *Recording) decisionsAt(path string) []engine.Decided {
	var out []engine.Decided
	for _, at := range rec.decidedOrder {
		if at.path == path {
			out = append(out, rec.decided[at])
		}
	}
	return out
}

// fromRecord is the replay answering a unit whole with what the record
// gives it (action inject or fail, with value), the decisions a person
// made at it in the recorded run made again.
func (r *replayer) fromRecord(p string, action engine.Action, value any) engine.Decision {
	r.answeredWhole(p)
	return engine.Decision{Action: action, Value: value, Origin: engine.FromReplay, Again: r.rec.decisionsAt(p)}
}

// step checks a step against its record. A catalog tool's step is
// answered with its recorded result, without dispatching; control steps,
// plan__ steps and the solver run, over recorded answers.
func (r *replayer) step(st *engine.Stop) (engine.Decision, *Divergence) {
	rs, ok := r.rec.steps[st.Path]
	if !ok || rs.Status == engine.StepAborted && !rs.ran {
		// A step the recorded run was aborted at, at its step stop, did
		// not run either: there is nothing to replay it with, and the
		// replay stops there, as the recorded run did.
		return engine.Decision{}, &Divergence{Path: st.Path, What: "step", Got: st.Tool,
			Message: fmt.Sprintf("the plan runs step %s (%s), which the recorded run did not run", st.Path, st.Tool)}
	}
	if rs.Tool != st.Tool {
		return engine.Decision{}, &Divergence{Path: st.Path, What: "tool", Expected: rs.Tool, Got: st.Tool,
			Message: fmt.Sprintf("the step calls %s; the recorded run called %s", st.Tool, rs.Tool)}
	}
	// A control step's start records its input as written: it renders its
	// parts as it goes. Every other step's records the rendered input.
	control := st.Step != nil && plans.IsControl(st.Tool)
	input := st.Input
	if control {
		input = st.Step.Input.Literal()
	}
	expected, err := recordedValue(rs.Input)
	if err != nil {
		return engine.Decision{}, recordError(st.Path, "its input", err)
	}
	if control && len(plans.Bodies(st.Step)) > 0 {
		// A body's steps are compared where they run: an edit to a
		// branch is found at the branch, and one to a branch not taken
		// changes nothing that ran.
		input, expected = withoutBodies(input), withoutBodies(expected)
	}
	if edited, ok := r.edited(st); ok {
		// A person edited the call's arguments at this stop: the
		// recorded input is theirs, made again now, not what the plan
		// rendered.
		input = edited
	}
	if !sameData(expected, input) {
		what := "the rendered input differs from the recorded one"
		if control {
			what = "the step's input as written differs from the recorded one"
		}
		return engine.Decision{}, &Divergence{Path: st.Path, What: "input", Expected: expected, Got: plainData(input), Message: what}
	}
	if rs.Status == engine.StepSkipped && st.Step != nil {
		// The step did not run in the recorded run (an agent step, a map,
		// a tool step alike): a person gave its result at a stop or with
		// a fork's --set, or a fork or a replay reused a recorded one. It
		// does not run now either.
		result, err := recordedValue(rs.Result)
		if err != nil {
			return engine.Decision{}, recordError(st.Path, "its result", err)
		}
		return r.fromRecord(st.Path, engine.Inject, result), nil
	}
	if control || st.Step == nil {
		return engine.Decision{}, nil
	}
	if strings.HasPrefix(st.Tool, "plan__") {
		return r.runAsEdited(st), nil
	}
	switch rs.Status {
	case engine.StepOK:
		result, err := recordedValue(rs.Result)
		if err != nil {
			return engine.Decision{}, recordError(st.Path, "its result", err)
		}
		return r.fromRecord(st.Path, engine.Inject, result), nil
	case engine.StepFailed, engine.StepAborted:
		// Running the tool would repeat its side effects: the step fails
		// with the recorded error, as it failed in the recorded run, and
		// the run goes on from there as it did. One aborted after it ran
		// (at its error or result stop) fails with the abort's words: the
		// replay does not abort where a person did.
		r.mu.Lock()
		if r.failedAt == "" {
			r.failedAt = st.Path
		}
		r.mu.Unlock()
		return r.fromRecord(st.Path, engine.Fail, rs.Error), nil
	}
	return engine.Decision{}, unfinished(st.Path, "step")
}

// withoutBodies is a control step's input as written without its bodies
// (then, else, do).
func withoutBodies(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := make(map[string]any, len(m))
	for k, x := range m {
		if k != "then" && k != "else" && k != "do" {
			out[k] = x
		}
	}
	return out
}

// round checks an agent round's request against the recorded one. The
// reply comes from the record through the replay provider, or, for a
// round whose reply a person gave before the call, from their decision.
func (r *replayer) round(st *engine.Stop) (engine.Decision, *Divergence) {
	if d, ok := r.rec.decided[decisionAt{st.Path, engine.StopRound}]; ok {
		return again(d), nil
	}
	call, ok := r.rec.llm[st.Path]
	if !ok {
		return engine.Decision{}, &Divergence{Path: st.Path, What: "round",
			Message: fmt.Sprintf("the plan asks for a model call the recorded run did not make (round %d)", roundOf(st.Path))}
	}
	req, ok := st.Input.(chat.Request)
	if !ok {
		return engine.Decision{}, nil
	}
	return engine.Decision{}, requestDiff(st.Path, call.Request, req)
}

// reply replaces a round's reply as a person replaced it in the recorded
// run: the record of its model call holds what the model said.
func (r *replayer) reply(st *engine.Stop) engine.Decision {
	if d, ok := r.rec.decided[decisionAt{st.Path, engine.StopReply}]; ok {
		return again(d)
	}
	return engine.Decision{}
}

// replaced replaces what a unit gave as a person replaced it at its result
// stop in the recorded run. A step the replay answers from the record
// has the replacement in its recorded result already; a unit that runs
// again (an agent step over its recorded rounds, a control step) needs
// it given.
func (r *replayer) replaced(st *engine.Stop) engine.Decision {
	if d, ok := r.rec.decided[decisionAt{st.Path, engine.StopResult}]; ok {
		return again(d)
	}
	return engine.Decision{}
}

// edited is the arguments a person gave the call at st in the recorded
// run with edit, or with an approval's edit; ok is false where they
// edited nothing.
func (r *replayer) edited(st *engine.Stop) (args any, ok bool) {
	d, ok := r.rec.decided[decisionAt{st.Path, st.Kind}]
	if !ok || d.Action != engine.Edit.String() {
		return nil, false
	}
	return d.Value, true
}

// runAsEdited lets a unit that runs again in a replay (a called plan)
// run, with the arguments a person edited at its stop in the recorded
// run, if they did.
func (r *replayer) runAsEdited(st *engine.Stop) engine.Decision {
	edited, ok := r.edited(st)
	if !ok {
		return engine.Decision{}
	}
	return engine.Decision{Action: engine.Edit, Value: edited, Origin: engine.FromReplay, Again: r.rec.decisionsAt(st.Path)}
}

// again is a person's recorded replacement made again, at the stop it was
// made at, by the replay: the replay's record lists it with the replay's
// mark and holds its value for a replay of the replay.
func again(d engine.Decided) engine.Decision {
	return engine.Decision{Action: engine.Replace, Value: d.Value, Origin: engine.FromReplay, Again: []engine.Decided{d}}
}

// tool answers an agent's tool call with what the call gave the model in
// the recorded run; a plan__ call runs, over recorded answers.
func (r *replayer) tool(st *engine.Stop) (engine.Decision, *Divergence) {
	args, result, ok, err := r.rec.toolCall(st.Path)
	given := st.Input
	if edited, isEdit := r.edited(st); isEdit {
		// The model asked for other arguments, which a person edited
		// at this stop: the recorded call is made with theirs again.
		given = edited
	}
	switch {
	case err != nil:
		return engine.Decision{}, recordError(st.Path, "its tool call", err)
	case !ok:
		return engine.Decision{}, &Divergence{Path: st.Path, What: "tool_call", Got: plainData(st.Input),
			Message: fmt.Sprintf("the agent calls %s, a call the recorded run did not make", st.Tool)}
	case !sameData(args, given):
		return engine.Decision{}, &Divergence{Path: st.Path, What: "tool_call", Expected: args, Got: plainData(given),
			Message: fmt.Sprintf("the agent calls %s with other arguments than the recorded run", st.Tool)}
	case strings.HasPrefix(st.Tool, "plan__"):
		// A plan runs, as a plan__ step does: its steps are recorded under
		// the call's path, and are answered there.
		return r.runAsEdited(st), nil
	}
	if d, ok := r.rec.decided[decisionAt{st.Path, engine.StopResult}]; ok {
		// A person replaced what the call gave: the model read that.
		result = d.Value
	}
	return r.fromRecord(st.Path, engine.Inject, result), nil
}

// ask answers as the recorded run's ask was answered.
func (r *replayer) ask(st *engine.Stop) (engine.Decision, *Divergence) {
	a, ok := r.rec.asks[st.Path]
	switch {
	case !ok:
		return engine.Decision{}, &Divergence{Path: st.Path, What: "ask", Message: "the plan asks a question the recorded run did not ask"}
	case a.Answered:
		return engine.Decision{Action: engine.Answer, Value: a.Answer, Origin: engine.FromReplay, Again: r.rec.decisionsAt(st.Path)}, nil
	case a.Reason == engine.AskDeclined:
		return engine.Decision{Action: engine.Decline, Origin: engine.FromReplay, Again: r.rec.decisionsAt(st.Path)}, nil
	}
	return engine.Decision{}, nil
}

// failure lets a failure the recorded run had too propagate, and makes any
// other the divergence.
func (r *replayer) failure(st *engine.Stop) *Divergence {
	if st.Err == nil {
		return nil
	}
	rs, ok := r.rec.steps[st.Path]
	if ok && (rs.Status == engine.StepFailed || rs.Status == engine.StepAborted) && rs.Error == st.Err.Error() {
		return nil
	}
	div := &Divergence{Path: st.Path, What: "error", Got: st.Err.Error(), Message: "the step fails: " + st.Err.Error()}
	var me *model.Error
	if errors.As(st.Err, &me) && me.Provider == model.ReplayProviderName {
		div.What, div.Got = "model_call", nil
		div.Message = me.Message
	}
	if ok {
		div.Expected = map[string]any{"status": rs.Status}
		if rs.Error != "" {
			div.Expected = map[string]any{"status": rs.Status, "error": rs.Error}
		}
	}
	return div
}

// compare holds the replay's steps and outcome against the record, once
// the replay has run to its end. It returns the first difference and how
// many recorded steps the replay reproduced.
func (r *replayer) compare(res *engine.Result, seen *runLog) (*Divergence, int) {
	rec := r.rec
	failedAt, abortedAt := r.failedAt, r.abortedAt
	// Past a recorded failure, or the abort the replay made again, items
	// in flight beside it may not have started, and the steps that
	// enclose it may fail with words of their siblings' cancelling: only
	// the failure itself and the steps both ran before it compare. What
	// the abort cut short, it cut where each happened to be, in the
	// recorded run and in the replay: that it ended aborted in both is
	// all that compares.
	cutAt := abortedAt
	if cutAt == "" {
		cutAt = failedAt
	}
	encloses := func(p string) bool { return cutAt != "" && strings.HasPrefix(cutAt, p+"/") }
	count := 0
	for _, p := range rec.order {
		rs := rec.steps[p]
		got, ran := seen.end(p)
		switch {
		case !ran && cutAt != "":
			continue
		case !ran:
			return &Divergence{Path: p, What: "missing", Expected: rs.Tool,
				Message: fmt.Sprintf("the recorded run ran step %s (%s); the replay did not", p, rs.Tool)}, count
		case encloses(p):
			count++
			continue
		case abortedAt != "" && (rs.Status == engine.StepAborted || got.Status == engine.StepAborted):
			if rs.Status == got.Status {
				count++
			}
			continue
		}
		want := endedAs(rs.Status)
		if want == engine.StepAborted {
			// A replay that did not come to the stop the run was aborted
			// at (one aborted by a signal has none) fails a step recorded
			// aborted with the abort's words.
			want = engine.StepFailed
		}
		if want != endedAs(got.Status) {
			return &Divergence{Path: p, What: "status", Expected: rs.Status, Got: got.Status,
				Message: fmt.Sprintf("the step ended %s; the recorded run's ended %s", got.Status, rs.Status)}, count
		}
		if rs.Error != got.Error {
			return &Divergence{Path: p, What: "error", Expected: rs.Error, Got: got.Error, Message: "the step failed otherwise than in the recorded run"}, count
		}
		expected, err := recordedValue(rs.Result)
		if err != nil {
			return recordError(p, "its result", err), count
		}
		if !sameData(expected, got.Result) {
			return &Divergence{Path: p, What: "result", Expected: expected, Got: plainData(got.Result),
				Message: "the step's result differs from the recorded one"}, count
		}
		count++
	}
	d := rec.Run
	switch {
	case d.Status != res.Status:
		return &Divergence{What: "outcome", Expected: d.Status, Got: res.Status,
			Message: fmt.Sprintf("the replay ended %s; the recorded run ended %s", res.Status, d.Status)}, count
	case cutAt != "":
		return nil, count
	}
	output, err := recordedValue(d.Output)
	if err != nil {
		return recordError("", "its output", err), count
	}
	if !sameData(output, res.Output) {
		return &Divergence{What: "outcome", Expected: output, Got: plainData(res.Output), Message: "the plan's output differs from the recorded one"}, count
	}
	if d.Answer != res.Answer {
		return &Divergence{Path: "solver", What: "outcome", Expected: d.Answer, Got: res.Answer, Message: "the solver's answer differs from the recorded one"}, count
	}
	return nil, count
}

// endedAs reads a step status for comparison: a result injected at a stop
// (skipped) is the step's result as much as one it produced.
func endedAs(s engine.StepStatus) engine.StepStatus {
	if s == engine.StepSkipped {
		return engine.StepOK
	}
	return s
}

func unfinished(path, what string) *Divergence {
	return &Divergence{Path: path, What: "unfinished",
		Message: fmt.Sprintf("the recorded run never finished this %s (it was interrupted), so there is nothing to replay it with", what)}
}

func recordError(path, what string, err error) *Divergence {
	return &Divergence{Path: path, What: "record", Message: fmt.Sprintf("the record of %s cannot be read: %v", what, err)}
}

// toolCall returns the arguments of the agent's tool call at path and
// what it gave the model in the recorded run: its recorded result, or
// "Error: ..." for a call that failed. A call answered at a stop has no
// tool events (a replay's own record is such a run); its arguments are then
// read off the round's reply, and its result off the tool message that
// answered it in the next round's request.
func (rec *Recording) toolCall(callPath string) (args, result any, ok bool, err error) {
	if c, found := rec.tools[callPath]; found {
		if !c.Ended {
			return nil, nil, false, errors.New("the call never ended (the run was interrupted)")
		}
		if args, err = recordedValue(c.Args); err != nil {
			return nil, nil, false, err
		}
		if c.IsError {
			return args, "Error: " + c.Error, true, nil
		}
		result, err = recordedValue(c.Result)
		return args, result, err == nil, err
	}
	roundPath, _, cut := path.Parent(callPath)
	if !cut {
		return nil, nil, false, nil
	}
	round, found := rec.llm[roundPath]
	if !found {
		return nil, nil, false, nil
	}
	stepPath, roundSeg, _ := path.Parent(roundPath)
	n, ok := path.RoundNumber(roundSeg)
	if !ok {
		return nil, nil, false, nil
	}
	var call *chat.ToolCall
	for i, p := range path.Calls(roundPath, len(round.Reply.ToolCalls), func(i int) string { return round.Reply.ToolCalls[i].Name }) {
		if p == callPath {
			call = &round.Reply.ToolCalls[i]
		}
	}
	next, found := rec.llm[path.Round(stepPath, n+1)]
	if call == nil || !found {
		return nil, nil, false, nil
	}
	if args, err = recordedValue(call.Arguments); err != nil {
		return nil, nil, false, err
	}
	for _, m := range next.Request.Messages {
		for _, b := range m.Blocks {
			if b.Type != chat.BlockToolResult || b.ID != call.ID {
				continue
			}
			// The model read the result as JSON text, or as the error's
			// words; given back either way, it reads the same.
			var v any
			if json.Unmarshal([]byte(b.Text), &v) == nil {
				return args, v, true, nil
			}
			return args, b.Text, true, nil
		}
	}
	return nil, nil, false, nil
}

// requestDiff compares an agent round's request with the recorded one:
// what the conversation says, the tools the model may call and the
// response format. The conversation is compared block by block, so that a
// run recorded when each tool result was a message of its own compares
// with one that gives a turn's results in one message; cache breakpoints
// are the provider's business and are not compared. A tool result whose
// recorded text is the error's words ("Error: ...") is read by the replay
// as that text in JSON quotes, since a stop injects values, not words;
// both say the same.
func requestDiff(path string, recorded, got chat.Request) *Divergence {
	differs := func(what string, expected, got any) *Divergence {
		return &Divergence{Path: path, What: "request", Expected: plainData(expected), Got: plainData(got),
			Message: "the round's request to the model differs from the recorded one: " + what}
	}
	eb, gb := conversationBlocks(recorded.Messages), conversationBlocks(got.Messages)
	for i := range min(len(eb), len(gb)) {
		if !sameBlock(eb[i], gb[i]) {
			return differs(fmt.Sprintf("message %d (%s)", gb[i].message+1, gb[i].role), recorded.Messages[eb[i].message], got.Messages[gb[i].message])
		}
	}
	switch {
	case len(eb) != len(gb):
		return differs("the length of the conversation", len(eb), len(gb))
	case !sameData(callableTools(recorded), callableTools(got)):
		return differs("the tools offered", toolNames(callableTools(recorded)), toolNames(callableTools(got)))
	case !sameData(recorded.Format, got.Format):
		return differs("the response format", recorded.Format, got.Format)
	}
	return nil
}

// conversationBlock is one block of a conversation, with the role and the
// index of the message it is in.
type conversationBlock struct {
	role    string
	message int
	block   chat.Block
}

func conversationBlocks(msgs []chat.Message) []conversationBlock {
	var out []conversationBlock
	for i, m := range msgs {
		for _, b := range m.Blocks {
			out = append(out, conversationBlock{role: m.Role, message: i, block: b})
		}
	}
	return out
}

// sameBlock compares two blocks of a conversation for what they say: a
// tool result's error mark goes with its text, so only the text counts.
func sameBlock(e, g conversationBlock) bool {
	eb, gb := e.block, g.block
	if eb.Type == chat.BlockToolResult && gb.Type == chat.BlockToolResult {
		return eb.ID == gb.ID && (eb.Text == gb.Text || gb.Text == quoteJSON(eb.Text))
	}
	return e.role == g.role && eb.Type == gb.Type && eb.Text == gb.Text && eb.Signature == gb.Signature &&
		eb.Data == gb.Data && eb.ID == gb.ID && eb.Name == gb.Name && sameData(eb.Input, gb.Input)
}

// callableTools are the tools a request lets the model call: none when its
// tool choice is none, which is how a run recorded when the last round
// withdrew its tools compares with one that keeps them.
func callableTools(req chat.Request) []chat.ToolDef {
	if !req.MayCallTools() {
		return nil
	}
	return req.Tools
}

func toolNames(defs []chat.ToolDef) []string {
	out := make([]string, len(defs))
	for i, d := range defs {
		out[i] = d.Name
	}
	return out
}

// quoteJSON is s as a JSON string, the way the engine writes a value for a
// model to read.
func quoteJSON(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// recordedValue reads a value of the record as plain JSON data; nil when
// the record holds none.
func recordedValue(raw json.RawMessage) (any, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return v, nil
}

// plainData is v as its JSON reads back: what the record would hold of
// it. A value that has no JSON is itself.
func plainData(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return v
	}
	return out
}

// sameData reports whether two values are the same JSON.
func sameData(a, b any) bool { return reflect.DeepEqual(plainData(a), plainData(b)) }

// runLog is a sink that keeps what a replay's own run did: how each step
// ended, and how many model calls it made.
type runLog struct {
	mu    sync.Mutex
	ends  map[string]engine.StepEnded
	calls int
}

// Event keeps step ends and counts model calls.
func (l *runLog) Event(e engine.Event) {
	switch p := e.Payload.(type) {
	case engine.StepEnded:
		l.mu.Lock()
		l.ends[e.Path] = p
		l.mu.Unlock()
	case engine.ModelCalled:
		l.mu.Lock()
		l.calls++
		l.mu.Unlock()
	}
}

func (l *runLog) end(p string) (engine.StepEnded, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.ends[p]
	return e, ok
}

func (l *runLog) modelCalls() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.calls
}
