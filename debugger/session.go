package debugger

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/path"
	"github.com/stepwise-dev/stepwise/engine/tools"
	"github.com/stepwise-dev/stepwise/plans"
)

// Session is one debugged run: the engine runs the plan with the session
// as its hook, and a front end (the TUI, the line driver, a test) drives it
// with commands. Every command is answered with a State.
//
// Concurrent map items are threads: when one stops, every other one is
// held at its next stop until the run resumes (all-stop), and the State
// lists them.
type Session struct {
	plan    *plans.Plan
	eng     *engine.Engine
	catalog *tools.Catalog
	// shapes are the plan's, which say whether a breakpoint can match.
	shapes *Shapes
	refs   map[string][]plans.Reference // who reads each step's result
	// tools finds the entry of the tool a call names, an MCP server's
	// among them, for edit's schema check and the approval policy.
	tools toolLookup
	// approvals holds the calls it matches for a person; nil holds none.
	// It is set before the run starts and not changed after.
	approvals *Approvals

	// bps is the plan's breakpoint table, which the session matches its
	// stops against; hits and conditionErrors are this run's, by
	// breakpoint id.
	bps             *Breakpoints
	hits            map[int]int
	conditionErrors map[int]string

	mu    sync.Mutex
	wake  *sync.Cond // held threads wait on it
	pause bool

	// The stop the run is held at, nil while it runs.
	current *held
	// threads lists every thread held at a stop, the current one included.
	threads []*held
	// How the run goes on from the current stop.
	mode       Movement
	modeThread string
	modeDepth  int

	// aborting is set once a command aborted the run: every other thread
	// then aborts at its next stop instead of stopping there.
	aborting bool

	states   chan State // stops and the end, to whoever waits
	finished bool
	result   *engine.Result
	runErr   error
}

// held is a thread waiting at a stop.
type held struct {
	stop     *engine.Stop
	thread   string
	reason   StopReason
	bp       *Breakpoint
	decision chan engine.Decision
	// gone is closed when the thread stops waiting for its decision (its
	// run was cancelled), so that a command never blocks on it.
	gone chan struct{}
	// tool is the entry of the tool a call at the stop calls, listed when
	// a catalog or server lists it; gated is set when the approval policy
	// holds the call.
	tool   plans.ToolInfo
	listed bool
	gated  bool
}

// Movement says where the run next stops.
type Movement int

// The movements of DESIGN.md section 7.
const (
	// Continue runs to the next breakpoint, error or ask.
	Continue Movement = iota
	// StepIn stops at the next stop at any depth.
	StepIn
	// Next stops at the next stop at the same depth or shallower.
	Next
	// StepOut stops at the next stop shallower than this one.
	StepOut
)

// New returns a session that will run plan on the engine parts in opts,
// stopping where the breakpoints of bps say (nil: a table of its own, with
// none set and break on error on); the session installs itself as the
// hook, composed before opts.Hook: a stop the session lets go on is
// opts.Hook's to answer (a replay's or a fork's record answers it there).
func New(plan *plans.Plan, opts engine.Options, bps *Breakpoints) *Session {
	if bps == nil {
		bps = NewBreakpoints()
	}
	s := &Session{plan: plan, catalog: opts.Catalog, shapes: PlanShapes(plan, opts.Catalog), refs: plans.Readers(plan), bps: bps,
		tools: toolLookup{opts.Catalog, opts.Tools},
		hits:  map[int]int{}, conditionErrors: map[int]string{}, states: make(chan State, 1)}
	s.wake = sync.NewCond(&s.mu)
	opts.Hook = engine.Hooks(s.hook, opts.Hook)
	s.eng = engine.New(opts)
	return s
}

// Table is the breakpoint table the session stops by.
func (s *Session) Table() *Breakpoints {
	return s.bps
}

// Breakpoints lists the table's breakpoints with this run's hit counts,
// each flagged when no path of the plan can match it.
func (s *Session) Breakpoints() []Breakpoint {
	list := s.bps.List()
	s.shapes.Flag(list)
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range list {
		list[i].Hits, list[i].ConditionError = s.hits[list[i].ID], s.conditionErrors[list[i].ID]
	}
	return list
}

// Pause asks the run to stop at its next stop, whatever it is.
func (s *Session) Pause() {
	s.mu.Lock()
	s.pause = true
	s.mu.Unlock()
}

// Start runs the plan in the background and returns the first State: the
// first stop, or the end.
func (s *Session) Start(ctx context.Context, inputs map[string]any) State {
	go func() {
		res, err := s.eng.Run(ctx, s.plan, inputs)
		s.mu.Lock()
		s.finished, s.result, s.runErr = true, res, err
		s.mu.Unlock()
		s.states <- s.endState()
	}()
	return <-s.states
}

// Command is what a front end tells a stopped run: a decision for the stop
// it is held at (none, inject, replace, answer, decline, abort), then a
// movement.
type Command struct {
	Decision engine.Decision
	Move     Movement
}

// Do applies a command to the current stop and returns the next State. A
// decision the stop does not take (an answer at a step, an inject at a
// reply), or an answer that does not fit the ask's schema, is refused with
// an error, and the run stays where it is.
func (s *Session) Do(cmd Command) (State, error) {
	s.mu.Lock()
	cur := s.current
	if cur == nil {
		s.mu.Unlock()
		if s.finished {
			return State{}, errors.New("the run has finished")
		}
		return State{}, errors.New("the run is not stopped")
	}
	if err := s.accepts(cur.stop, cmd.Decision); err != nil {
		s.mu.Unlock()
		return State{}, err
	}
	if err := acceptsCall(cur, cmd.Decision); err != nil {
		s.mu.Unlock()
		return State{}, err
	}
	if cur.gated && cmd.Decision.Action == engine.Proceed {
		// Going on from a call held for approval is approving it.
		cmd.Decision.Action = engine.Approve
	}
	s.mode, s.modeThread, s.modeDepth = cmd.Move, cur.thread, len(cur.stop.Stack)
	if cmd.Decision.Action == engine.Abort {
		s.aborting = true
	}
	s.current = nil
	s.mu.Unlock()
	select {
	case cur.decision <- cmd.Decision:
	case <-cur.gone:
	}
	return <-s.states, nil
}

// Wait returns the next State without a command: the end of a run that
// was cancelled while it was held.
func (s *Session) Wait() State {
	return <-s.states
}

// accepts checks a decision against the stop it is for: which actions the
// stop kind takes (DESIGN.md section 2), and a value against the schema
// that applies there.
func (s *Session) accepts(st *engine.Stop, d engine.Decision) error {
	switch d.Action {
	case engine.Proceed, engine.Abort:
		return nil
	}
	if !st.Kind.Takes(d.Action) {
		article := "a"
		if strings.ContainsRune("aeiou", rune(st.Kind[0])) {
			article = "an"
		}
		return fmt.Errorf("%s %s stop does not take %s (it takes %s)", article, st.Kind, d.Action, actionNames(st.Kind.Accepts()))
	}
	if d.Action == engine.Inject || d.Action == engine.Replace || d.Action == engine.Answer {
		if st.Kind == engine.StopRound || st.Kind == engine.StopReply {
			return nil // a model reply, in its own shape
		}
		if problems := expect(st, s.catalog).check(d.Value); problems != "" {
			return fmt.Errorf("the value does not fit the schema that applies here: %s", problems)
		}
	}
	return nil
}

// actionNames lists the actions a person can give, for a refusal: fail is
// a replay's, which no command gives.
func actionNames(as []engine.Action) string {
	var out []string
	for _, a := range as {
		if a != engine.Fail {
			out = append(out, a.String())
		}
	}
	return strings.Join(out, " or ")
}

// hook is the session's engine hook: it decides whether the run stops
// here, and if so holds this thread until a command comes.
func (s *Session) hook(ctx context.Context, st *engine.Stop) engine.Decision {
	thread := threadOf(st)
	// The called tool is looked up before the lock: an MCP server's tool
	// list comes from its connection.
	var tool plans.ToolInfo
	var listed bool
	if isToolCall(st) {
		tool, listed = s.tools.tool(ctx, st.Tool)
	}
	gated := s.approvals.holds(st, listedInfo(tool, listed))
	s.mu.Lock()
	// All-stop: while another thread is stopped, this one waits here.
	for s.current != nil && !s.aborting {
		h := &held{stop: st, thread: thread}
		s.threads = append(s.threads, h)
		s.wake.Wait()
		s.threads = slices.DeleteFunc(s.threads, func(x *held) bool { return x == h })
	}
	if s.aborting {
		s.mu.Unlock()
		return engine.Decision{Action: engine.Abort}
	}
	reason, bp := s.shouldStop(st, thread)
	if reason == "" && gated {
		reason = ReasonApproval
	}
	if reason == "" {
		s.mu.Unlock()
		return engine.Decision{}
	}
	h := &held{stop: st, thread: thread, reason: reason, bp: bp, decision: make(chan engine.Decision), gone: make(chan struct{}),
		tool: tool, listed: listed, gated: gated}
	s.current = h
	s.threads = append(s.threads, h)
	state := s.stateLocked()
	s.mu.Unlock()

	s.states <- state
	var d engine.Decision
	select {
	case d = <-h.decision:
	case <-ctx.Done():
		// Cancelled while held (ctrl-c): the whole run aborts, and no
		// command waits for this thread any more.
		d = engine.Decision{Action: engine.Abort}
		close(h.gone)
	}
	s.mu.Lock()
	if s.current == h {
		s.current = nil
	}
	if d.Action == engine.Abort {
		s.aborting = true
	}
	s.threads = slices.DeleteFunc(s.threads, func(x *held) bool { return x == h })
	s.wake.Broadcast()
	s.mu.Unlock()
	return d
}

// shouldStop decides whether the run stops at st, and says why: a
// breakpoint (first match whose condition holds, hits counted), an error
// with break on error, an ask, a pause, or the movement of the last
// command. It is called with s.mu held.
func (s *Session) shouldStop(st *engine.Stop, thread string) (StopReason, *Breakpoint) {
	fired := s.bps.match(st, func(b *Breakpoint) bool {
		// Hits counts the stops the breakpoint's pattern and kinds match,
		// so that a condition on {{stop.hits}} can pick the third of them.
		s.hits[b.ID]++
		if b.Condition == nil {
			return true
		}
		ok, err := b.Condition.holds(st, s.hits[b.ID])
		delete(s.conditionErrors, b.ID)
		if err != nil {
			s.conditionErrors[b.ID] = err.Error()
		}
		return ok
	})
	if fired != nil {
		b := *fired
		b.Hits, b.ConditionError = s.hits[b.ID], s.conditionErrors[b.ID]
		return breakpointReason(&b), &b
	}
	switch {
	case (st.Kind == engine.StopRound || st.Kind == engine.StopError) && errors.As(st.Err, new(*engine.SpendCapError)):
		// The cap is the user's decision to make, with or without break
		// on error: a reply or a value given here spends nothing.
		return ReasonSpendCap, nil
	case st.Kind == engine.StopError && s.bps.BreaksOnError():
		return ReasonError, nil
	case st.Kind == engine.StopAsk:
		return ReasonAsk, nil
	case s.pause:
		s.pause = false
		return ReasonPause, nil
	}
	if s.mode == StepIn {
		// Stepping in follows the work wherever it goes: into a map's
		// first item as much as into a body step.
		return ReasonStep, nil
	}
	// Next and step out follow the thread the command was given in, and
	// its parents once it is done: stepping out of a map item lands on the
	// step after the map, not in another item.
	if thread != s.modeThread && !encloses(thread, s.modeThread) {
		return "", nil
	}
	depth := len(st.Stack)
	switch s.mode {
	case Next:
		if depth <= s.modeDepth {
			return ReasonNext, nil
		}
	case StepOut:
		if depth < s.modeDepth {
			return ReasonStepOut, nil
		}
	}
	return "", nil
}

// encloses reports whether thread outer is a parent of thread inner: main
// encloses every item, and an item the items of plans its body calls.
func encloses(outer, inner string) bool {
	return outer != inner && (outer == "main" || strings.HasPrefix(inner, outer+"/"))
}

// Threads lists the threads held at a stop now, the stopped one first;
// none while the run runs.
func (s *Session) Threads() []Thread {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.current == nil {
		return nil
	}
	return s.stateLocked().Threads
}

// threadOf names the thread a stop belongs to: the innermost unit of work
// that runs alongside others (a map or filter item, one of an agent
// round's tool calls), or "main".
func threadOf(st *engine.Stop) string {
	for i := len(st.Stack) - 1; i >= 0; i-- {
		if k := st.Stack[i].Kind; k == path.KindItem || k == path.KindCall {
			return st.Stack[i].Path
		}
	}
	// Before the stack has an item frame, the stop itself may be one.
	if st.Unit == path.KindItem {
		return st.Path
	}
	return "main"
}
