package debugger

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/path"
	"github.com/stepwise-dev/stepwise/plans/template"
)

// State is the answer to every command: where the run is held and why, or
// that it has finished.
type State struct {
	// Reason says why the run stopped, or that it has finished.
	Reason StopReason `json:"reason"`
	Stop   *Snapshot  `json:"stop,omitempty"`
	// Threads lists every thread held at a stop, the stopped one first.
	Threads []Thread `json:"threads,omitempty"`
	// Watches are the watch expressions, evaluated at the stop.
	Watches []WatchValue `json:"watches,omitempty"`
	// Finished is set once the run has ended; Result says how.
	Finished bool           `json:"finished,omitempty"`
	Result   *engine.Result `json:"-"`
	// Status, Error, Output, Answer and StepsExecuted summarise Result
	// for a front end that reads JSON; StepsExecuted is the count stepwise
	// runs and inspect show for the run.
	Status        engine.RunStatus `json:"status,omitempty"`
	Error         string           `json:"error,omitempty"`
	Output        any              `json:"output,omitempty"`
	Answer        string           `json:"answer,omitempty"`
	StepsExecuted int              `json:"steps_executed,omitempty"`
	// RunID is the finished run's id, for inspect, replay and fork.
	RunID string `json:"run_id,omitempty"`
	// Err is why the engine would not start the run (inputs that do not
	// fit its schema, say); Error says it in JSON.
	Err error `json:"-"`
}

// StopReason says why a session holds its run: one of the reasons below,
// or a breakpoint's "breakpoint 1 (E1/do.*)". It is written to JSON as
// that string.
type StopReason string

// The reasons a run is held, other than a breakpoint.
const (
	ReasonEntry    StopReason = "entry"     // the run's first stop, where a held session starts
	ReasonStep     StopReason = "step"      // a step command stepped in
	ReasonNext     StopReason = "next"      // a next command came to the next stop at its depth
	ReasonStepOut  StopReason = "step out"  // an out command left the step
	ReasonError    StopReason = "error"     // break on error
	ReasonSpendCap StopReason = "spend cap" // a model call would pass the spend cap
	ReasonAsk      StopReason = "ask"       // an ask step wants an answer
	ReasonPause    StopReason = "pause"     // a pause command
	ReasonApproval StopReason = "approval"  // the approval policy holds a tool call
	ReasonUntil    StopReason = "until"     // an until command came to its path
	ReasonThread   StopReason = "thread"    // a thread command made this thread's stop current
	ReasonFinished StopReason = "finished"  // the run has ended; nothing is held
)

// breakpointReason is the reason b stopped the run.
func breakpointReason(b *Breakpoint) StopReason {
	return StopReason(fmt.Sprintf("breakpoint %d (%s)", b.ID, b.Pattern))
}

// String returns the reason as JSON writes it.
func (r StopReason) String() string { return string(r) }

// Snapshot is everything a front end shows at a stop.
type Snapshot struct {
	Kind   engine.StopKind `json:"kind"`
	Path   string          `json:"path"`
	Tool   string          `json:"tool,omitempty"`
	Thread string          `json:"thread"`
	Stack  []engine.Frame  `json:"stack"`
	// Input is what is about to happen: a step's rendered input, a model
	// request, a tool call's arguments.
	Input any `json:"input,omitempty"`
	// Output is what just happened: a tool's result, a model's reply.
	Output any    `json:"output,omitempty"`
	Error  string `json:"error,omitempty"`
	// Scope is everything the step's templates can read.
	Scope map[string]any `json:"scope,omitempty"`
	// Readers are the downstream templates that read this step's result,
	// as "reading step: path".
	Readers []string         `json:"readers,omitempty"`
	Ask     *engine.Question `json:"ask,omitempty"`
	// Breakpoint is the breakpoint that stopped the run, if one did.
	Breakpoint *Breakpoint `json:"breakpoint,omitempty"`
	// Schema is what a value injected or replaced here must match, when a
	// schema applies; Prefill is a value to start editing one from (the
	// declared example, what the stop observed, or a skeleton).
	Schema  any `json:"schema,omitempty"`
	Prefill any `json:"prefill,omitempty"`
	// InputSchema is what arguments edited at a tool call must match,
	// when the tool declares one.
	InputSchema any `json:"input_schema,omitempty"`
	// Approval is set when the approval policy holds the call here: going
	// on approves it, and deny and edit are the other answers.
	Approval bool `json:"approval,omitempty"`
	// Recorded names the decision a person made at this stop in the
	// recorded run, on a replay, which going on makes again ("replace";
	// at an ask "answer" or "decline"): Output then shows what it gives,
	// not what the model, the tool or the failure gave now (at an ask, the
	// recorded answer, the ask's default when it was declined).
	Recorded string `json:"recorded,omitempty"`
	// Reused is set at the step stop of a step a fork reuses: going on
	// gives it its recorded result, and nothing runs there. A fork stops
	// at one only where a breakpoint asks.
	Reused bool `json:"reused,omitempty"`
	// Set names the decision Session.Set gave the stop (inject, replace,
	// answer, edit), which the next movement carries out; Input (for an
	// edit) or Output (for the others) then shows its value.
	Set string `json:"set,omitempty"`

	// own is the name the stopped step's result goes by in scope, at its
	// result stop, where print and watches read it (ownResult).
	own string
}

// Thread is one concurrent unit of work of the run: the plan's own steps
// (main), a map, filter or reduce item, a tool call of an agent round.
type Thread struct {
	ID string `json:"id"`
	// Path and Kind are the stop it is held at, or the last it passed.
	Path    string          `json:"path"`
	Kind    engine.StopKind `json:"kind,omitempty"`
	Tool    string          `json:"tool,omitempty"`    // the stop's tool, as Snapshot.Tool
	Held    bool            `json:"held"`              // waiting at a stop, not running
	Stopped bool            `json:"stopped,omitempty"` // the thread the commands act on
}

// stateLocked builds the State of the current stop; s.mu is held.
func (s *Session) stateLocked() State {
	cur := s.current
	st := cur.stop
	snap := stopSnapshot(st, cur.thread, cur.bp)
	snap.Readers = s.readers(st)
	e := expect(st, s.catalog)
	var recorded recordedOutcome
	if s.recorded != nil {
		var ok bool
		if recorded, ok = s.recorded(st); ok && recorded.decision != "" {
			// Going on gives the record's replacement, not what happened
			// now: the stop shows it, and an edit starts from it.
			shown := *st
			shown.Output = recorded.value
			e = expect(&shown, s.catalog)
			snap.Output, snap.Recorded = recorded.value, recorded.decision
		}
	}
	if e.schema != nil {
		snap.Schema = e.schema.Raw
	}
	snap.Prefill = e.prefill
	if st.Kind == engine.StopAsk && recorded.decision == engine.Answer.String() {
		// An answer is edited from the recorded one, not the ask's
		// default.
		snap.Prefill = recorded.value
	}
	if cur.listed {
		snap.InputSchema = cur.tool.InputSchema
	}
	snap.Approval = cur.gated
	snap.Reused = s.reuses != nil && s.reuses(st)
	if d := cur.set; d != nil {
		snap.Set = d.Action.String()
		if d.Action == engine.Edit {
			snap.Input = d.Value
		} else {
			snap.Output = d.Value
		}
	}
	state := State{Reason: cur.reason, Stop: snap, Threads: []Thread{{ID: cur.thread, Path: st.Path, Kind: st.Kind, Tool: st.Tool, Held: true, Stopped: true}}}
	for _, h := range s.threads {
		if h != cur {
			state.Threads = append(state.Threads, Thread{ID: h.thread, Path: h.stop.Path, Kind: h.stop.Kind, Tool: h.stop.Tool, Held: true})
		}
	}
	state.Watches = s.evalWatches(snap)
	return state
}

// stopSnapshot is what the stop itself holds, as a front end reads it;
// b is the breakpoint that stopped the run there, nil for none.
func stopSnapshot(st *engine.Stop, thread string, b *Breakpoint) *Snapshot {
	snap := &Snapshot{Kind: st.Kind, Path: st.Path, Tool: st.Tool, Thread: thread, Stack: st.Stack, own: ownResult(st),
		Input: st.Input, Output: st.Output, Ask: st.Ask}
	if b != nil {
		c := *b
		snap.Breakpoint = &c
	}
	if st.Err != nil {
		snap.Error = st.Err.Error()
	}
	if st.Scope != nil {
		snap.Scope = st.Scope.Values()
	}
	return snap
}

// readers lists the templates downstream of the stop's step that read
// its result: by the step's own id, and, for the last step of a body,
// through the result of the control step around it (an item's result is
// in its map's results), which the line says. At a round's stop the value
// is a reply (the model's, or one given in its place), and the last reply
// of an agent, one that calls no tool, is the agent step's result: the
// agent's readers read it, which the line says too.
func (s *Session) readers(st *engine.Stop) []string {
	stepPath, asReply := st.Path, false
	if st.Kind == engine.StopRound || st.Kind == engine.StopReply {
		if parent, last, ok := path.Parent(st.Path); ok {
			if _, round := path.RoundNumber(last); round {
				stepPath, asReply = parent, true
			}
		}
	}
	id := path.Last(stepPath)
	// One entry per reading step, with every field it reads once, in the
	// order the plan reads them: a reader of five fields is one reader.
	var from []string
	fields := map[string][]string{}
	for _, r := range s.refs[path.Static(stepPath)] {
		field := r.Path
		if r.Root != id {
			field += " through " + r.Root + "'s result"
		}
		if _, seen := fields[r.From]; !seen {
			from = append(from, r.From)
		}
		if !slices.Contains(fields[r.From], field) {
			fields[r.From] = append(fields[r.From], field)
		}
	}
	out := make([]string, 0, len(from))
	for _, f := range from {
		line := f + ": " + strings.Join(fields[f], ", ")
		if asReply {
			line += " once this reply, calling no tool, is " + id + "'s result"
		}
		out = append(out, line)
	}
	return out
}

// endState is the State once the run has ended.
func (s *Session) endState() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	state := State{Reason: ReasonFinished, Finished: true, Result: s.result}
	switch {
	case s.runErr != nil:
		state.Status, state.Error, state.Err = engine.StatusRefused, s.runErr.Error(), s.runErr
	case s.result != nil:
		state.Status, state.Output, state.Answer, state.RunID = s.result.Status, s.result.Output, s.result.Answer, s.result.RunID
		state.StepsExecuted = s.result.StepsExecuted
		if s.result.Err != nil {
			state.Error = s.result.Err.Error()
		}
	}
	return state
}

// Eval reads a template path (item.id, E0.issues.0, stop.round) against
// the scope at the stop, as a template in the plan would, with the stop
// root a breakpoint condition reads.
func (s *Snapshot) Eval(path string) (any, error) {
	t, err := parsePath(path)
	if err != nil {
		return nil, err
	}
	v, err := t.Render(s.evalScope())
	return v, outOfBody(err)
}

// Render renders a template (text with {{path}} tags) against the scope
// at the stop, as print reads one path: a logpoint's message.
func (s *Snapshot) Render(text string) (string, error) {
	t, err := template.Parse(text)
	if err != nil {
		return "", err
	}
	v, err := t.Render(s.evalScope())
	if err != nil {
		return "", outOfBody(err)
	}
	if str, ok := v.(string); ok {
		return str, nil
	}
	return engine.JSONText(v), nil
}

// walkable is v as a template path walks it: JSON data as it is, and a
// typed value (a round's model request, a model reply) as its JSON reads
// back, made only for those.
func walkable(v any) any {
	switch v.(type) {
	case map[string]any, []any, string, bool, float64, int, int64, json.Number:
		return v
	}
	return plainData(v)
}

// parsePath reads a template path, braces or none, as print and watch
// take it.
func parsePath(p string) (*template.Template, error) {
	return template.Parse("{{" + strings.Trim(p, "{} ") + "}}")
}

// evalScope is what a path is read against at the stop: its scope and
// the stop root, which holds the stop's input and output too.
func (s *Snapshot) evalScope() template.MapScope {
	hits := 0
	if s.Breakpoint != nil {
		hits = s.Breakpoint.Hits
	}
	scope := make(template.MapScope, len(s.Scope)+2)
	stop := stopRoot(s.Kind, s.Path, s.Tool, hits)
	// The stop's own values are read, and set by a front end, at
	// stop.input and stop.output.
	if s.Input != nil {
		stop["input"] = walkable(s.Input)
	}
	if s.Output != nil {
		stop["output"] = walkable(s.Output)
	}
	scope["stop"] = stop
	for k, v := range s.Scope {
		scope[k] = v
	}
	if s.own != "" {
		scope[s.own] = s.Output
	}
	return scope
}

// ownResult is the name a step's result goes by in scope at its result
// stop, where the scope does not hold it yet: the step's id, so that
// print, watches and a condition read {{unowned.count}} at unowned's
// result as a later step would. "" at every other stop, and for a
// step with no id (the one call of a single-call body).
func ownResult(st *engine.Stop) string {
	if st.Kind != engine.StopResult || st.Step == nil || (st.Unit != path.KindStep && st.Unit != path.KindItem) {
		return ""
	}
	return st.Step.ID.Value
}
