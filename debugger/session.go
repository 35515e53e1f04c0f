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
	refs   map[string][]plans.Reference // who reads each step's result, by static path
	// tools finds the entry of the tool a call names, an MCP server's
	// among them, for edit's schema check and the approval policy.
	tools toolLookup
	// approvals holds the calls it matches for a person; nil holds none.
	// It is set before the run starts and not changed after.
	approvals *Approvals
	// recorded is what a replay gives a stop when it is let go on, which
	// the session shows there in place of what the plan declares or what
	// happened now; nil outside a replay. Set before the run starts.
	recorded func(*engine.Stop) (recordedOutcome, bool)
	// reuses reports whether a fork gives the step of a stop its recorded
	// result (nil for any other run): nothing runs there, so only a
	// breakpoint stops the run at it.
	reuses func(*engine.Stop) bool

	// bps is the plan's breakpoint table, which the session matches its
	// stops against; hits and conditionErrors are this run's, by
	// breakpoint id.
	bps             *Breakpoints
	hits            map[int]int
	conditionErrors map[int]string
	// rule is a front end's say on the stops its breakpoints make (nil:
	// each stops the run); set before the run starts.
	rule BreakpointRule

	mu    sync.Mutex
	wake  *sync.Cond // held threads wait on it
	pause bool
	// entry holds the run at its first stop, whatever the breakpoints.
	entry bool

	// The stop the run is held at, nil while it runs.
	current *held
	// threads lists every thread held at a stop, the current one included.
	threads []*held
	// chosen is the thread a thread command made current, on its way out
	// of its wait; parked are the threads that were current before, still
	// held at the stop they were shown at.
	chosen *held
	parked []*held
	// live lists the threads that have started and not ended.
	live liveThreads
	// How the run goes on from the current stop: a movement in a thread,
	// and until's pattern, nil when none.
	mode       Movement
	modeThread string
	modeDepth  int
	until      *path.Pattern
	// watches are the template paths every State evaluates.
	watches   []watch
	lastWatch int

	// aborting is set once a command aborted the run: every other thread
	// then aborts at its next stop instead of stopping there, and says it
	// was aborted at abortedAt, the stop the command was given at.
	aborting  bool
	abortedAt string

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
	// again says a thread command left the thread at an ask it is to be
	// asked again, not passed.
	again bool
	// gone is closed when the thread stops waiting for its decision (its
	// run was cancelled), so that a command never blocks on it.
	gone chan struct{}
	// tool is the entry of the tool a call at the stop calls, listed when
	// a catalog or server lists it; gated is set when the approval policy
	// holds the call.
	tool   plans.ToolInfo
	listed bool
	gated  bool
	// set is the decision Set gave the stop, carried out when the run
	// moves on from it without one of its own; nil when none.
	set *engine.Decision
}

// Movement says where the run next stops.
type Movement int

// The movements of DESIGN.md section 7.
const (
	// Continue runs to the next breakpoint, error or ask.
	Continue Movement = iota
	// StepIn stops at the next stop at any depth in the thread it was
	// given in (or a thread it started) while that thread lives, then at
	// the next stop anywhere.
	StepIn
	// Next stops at the next stop at the same depth or shallower.
	Next
	// StepOut stops at the next stop shallower than this one; at the top
	// level, where nothing is shallower, at the next stop at its depth.
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
	s := &Session{plan: plan, catalog: opts.Catalog, shapes: PlanShapes(plan, opts.Catalog), refs: plans.StepReaders(plan), bps: bps,
		tools: toolLookup{opts.Catalog, opts.Tools},
		hits:  map[int]int{}, conditionErrors: map[int]string{}, states: make(chan State, 1), live: newLiveThreads()}
	s.wake = sync.NewCond(&s.mu)
	opts.Hook = engine.Hooks(s.hook, opts.Hook)
	if opts.Made == "" {
		// A replay or a fork under the debugger stays a replay or a fork.
		opts.Made = engine.MadeDebug
	}
	opts.Threads = s
	s.eng = engine.New(opts)
	return s
}

// Table is the breakpoint table the session stops by.
func (s *Session) Table() *Breakpoints {
	return s.bps
}

// Unmatched says why no stop of a run of the session's plan is at a path
// pattern matches, and names the nearest pattern that would
// (Shapes.Unmatched): until's pattern is judged as a breakpoint's is. It
// is "" when one is; pattern must compile.
func (s *Session) Unmatched(pattern string) string {
	return s.shapes.Unmatched(pattern, nil)
}

// Breakpoints lists the table's breakpoints with this run's hit counts,
// each flagged when no path of the plan can match it or its condition
// reads a step the plan does not have.
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

// BreakpointRule is a front end's own say on a stop a breakpoint makes,
// after the breakpoint's pattern, kinds and condition let it fire: an
// editor's hit condition (the Nth stop only), its logpoint (print a
// message, never stop). It returns whether the run stops there; passed
// by, the stop is decided as if the breakpoint had not fired (a step in
// progress still stops where it would). It is called on the run's
// goroutines with the session's lock held, so it must not call the
// session.
type BreakpointRule func(b Breakpoint, at *Snapshot) bool

// SetBreakpointRule installs rule; it is called before Start.
func (s *Session) SetBreakpointRule(rule BreakpointRule) {
	s.mu.Lock()
	s.rule = rule
	s.mu.Unlock()
}

// Pause asks the run to stop at its next stop, whatever it is. A run
// that is held or has finished has nothing to pause.
func (s *Session) Pause() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.finished:
		return errors.New("the run has finished")
	case s.current != nil:
		return fmt.Errorf("%w at %s (%s)", ErrHeld, s.current.stop.Path, s.current.stop.Kind)
	}
	s.pause = true
	return nil
}

// ErrHeld is Pause's answer while the run is held at a stop: a front end
// that paused a run it had just let go finds it held already at the stop
// the pause asked for.
var ErrHeld = errors.New("the run is already held")

// Hold makes the run stop at its first stop, whatever the breakpoints say,
// so that breakpoints and settings can be given before anything runs; it
// is called before Start.
func (s *Session) Hold() {
	s.mu.Lock()
	s.entry = true
	s.mu.Unlock()
}

// Holding reports whether the run is to be held at its first stop and
// has not come to it: Hold was called, and no stop has been made.
func (s *Session) Holding() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.entry
}

// Start runs the plan in the background and returns the first State: the
// first stop, or the end.
func (s *Session) Start(ctx context.Context, inputs map[string]any) State {
	s.Launch(ctx, inputs)
	return <-s.states
}

// Launch runs the plan in the background and returns at once, its main
// thread live: Wait returns the first State. A front end that reads
// commands while the run goes to its first stop launches it, so that
// threads lists the run from the start.
func (s *Session) Launch(ctx context.Context, inputs map[string]any) {
	s.ThreadStarted(mainThread)
	go func() {
		res, err := s.eng.Run(ctx, s.plan, inputs)
		s.ThreadEnded(mainThread)
		s.mu.Lock()
		s.finished, s.result, s.runErr = true, res, err
		s.mu.Unlock()
		s.states <- s.endState()
	}()
}

// Command is what a front end tells a stopped run: a decision for the stop
// it is held at (none, inject, replace, answer, decline, abort), then a
// movement.
type Command struct {
	Decision engine.Decision
	Move     Movement
	// Until is a path pattern the run stops at next, wherever it is
	// (until's temporary breakpoint); "" for none.
	Until string
}

// ErrRunning is the answer to a command that needs a held run while the
// run goes on.
var ErrRunning = errors.New("the run is running; pause holds it at its next stop")

// Do applies a command to the current stop and returns the next State. A
// decision the stop does not take (an answer at a step, an inject at a
// reply), or an answer that does not fit the ask's schema, is refused with
// an error, and the run stays where it is.
func (s *Session) Do(cmd Command) (State, error) {
	if err := s.Resume(cmd); err != nil {
		return State{}, err
	}
	return <-s.states, nil
}

// Resume applies a command to the current stop, as Do does, and returns
// once the run goes on, without waiting for where it goes: Wait returns
// the next State. A front end that reads commands while the run goes
// resumes it, so that a pause given right after the command acts on the
// run the command let go, never on the stop it left.
func (s *Session) Resume(cmd Command) error {
	s.mu.Lock()
	until, cur, err := s.acceptLocked(&cmd)
	if err != nil {
		s.mu.Unlock()
		return err
	}
	if cur.gated && cmd.Decision.Action == engine.Proceed {
		// Going on from a call held for approval is approving it.
		cmd.Decision.Action = engine.Approve
	}
	s.mode, s.modeThread, s.modeDepth, s.until = cmd.Move, cur.thread, len(cur.stop.Stack), until
	if cmd.Move == StepOut && !strings.Contains(cur.stop.Path, "/") {
		// A top-level step has nothing shallower to step out to: out
		// stops at the next stop at its own depth, as next does (from its
		// step stop, its result; from its result, the next step's), as
		// delve's stepout from main stops where main goes on.
		s.modeDepth++
	}
	if cmd.Decision.Action == engine.Abort {
		s.aborting, s.abortedAt = true, cur.stop.Path
	}
	s.current = nil
	parked := s.parked
	s.parked = nil
	for _, p := range parked {
		p.again = p.stop.Kind == engine.StopAsk
	}
	s.mu.Unlock()
	decide(cur, cmd.Decision)
	// The threads a thread command left go on from the stops they were
	// shown at (an ask among them waits to be answered), or abort with the
	// run.
	for _, p := range parked {
		var d engine.Decision
		switch {
		case cmd.Decision.Action == engine.Abort:
			d = engine.Decision{Action: engine.Abort, AbortedAt: cur.stop.Path}
		case p.set != nil:
			d = *p.set
		}
		decide(p, d)
	}
	return nil
}

// Check reports whether Do would take cmd at the current stop, without
// carrying it out: a front end that answers a command before the run
// comes to its next stop refuses it first.
func (s *Session) Check(cmd Command) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, _, err := s.acceptLocked(&cmd)
	return err
}

// acceptLocked checks cmd against the current stop, the one it acts on,
// and returns its until pattern compiled and that stop; a Proceed becomes
// the decision set at the stop. It is called with mu held.
func (s *Session) acceptLocked(cmd *Command) (*path.Pattern, *held, error) {
	var until *path.Pattern
	if cmd.Until != "" {
		p, err := path.Compile(cmd.Until)
		if err != nil {
			return nil, nil, fmt.Errorf("until %s: %w", cmd.Until, err)
		}
		until = &p
	}
	cur := s.current
	if cur == nil {
		if s.finished {
			return nil, nil, errors.New("the run has finished")
		}
		return nil, nil, ErrRunning
	}
	if cmd.Decision.Action == engine.Proceed && cur.set != nil {
		cmd.Decision = *cur.set
	}
	if err := s.check(cur, cmd.Decision); err != nil {
		return nil, nil, err
	}
	return until, cur, nil
}

// Set gives the current stop a decision that changes what happens there
// (an inject, a replace, an answer, an edit of a call's arguments),
// checked as Do checks one, and keeps the run held: the State shows the
// stop with the value taken, so that a front end can show and read it
// before going on. The next command that moves on with no decision of its
// own carries it out; a later Set takes its place.
func (s *Session) Set(d engine.Decision) (State, error) {
	switch d.Action {
	case engine.Inject, engine.Replace, engine.Answer, engine.Edit:
	default:
		return State{}, fmt.Errorf("set takes a value to use at the stop (inject, replace, answer or edit), not %s", d.Action)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := s.current
	switch {
	case cur == nil && s.finished:
		return State{}, errors.New("the run has finished")
	case cur == nil:
		return State{}, ErrRunning
	}
	if err := s.check(cur, d); err != nil {
		return State{}, err
	}
	cur.set = &d
	return s.stateLocked(), nil
}

// check refuses a decision the held stop does not take, or a value that
// does not fit the schema that applies there.
func (s *Session) check(h *held, d engine.Decision) error {
	if err := s.accepts(h.stop, d); err != nil {
		return err
	}
	return acceptsCall(h, d)
}

// decide hands a held thread its decision, unless it has stopped waiting.
func decide(h *held, d engine.Decision) {
	select {
	case h.decision <- d:
	case <-h.gone:
	}
}

// Wait returns the next State without a command: the first one after
// Launch, the next after Resume, or the end of a run that was cancelled
// while it was held.
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
		msg := fmt.Sprintf("%s %s stop does not take %s (it takes %s)", article, st.Kind, d.Action, actionNames(st))
		if d.Action == engine.Answer && st.Kind == engine.StopStep && st.Tool == plans.ControlAsk {
			msg += "; the question comes at the ask stop after this one: next goes there"
		}
		return errors.New(msg)
	}
	if d.Action == engine.Inject || d.Action == engine.Replace || d.Action == engine.Answer {
		if st.Kind == engine.StopRound || st.Kind == engine.StopReply {
			return checkReply(st, d.Value)
		}
		if problems := expect(st, s.catalog).check(d.Value); problems != "" {
			return fmt.Errorf("the value does not fit the schema that applies here: %s", problems)
		}
	}
	return nil
}

// actionNames lists the actions a person can give at st, for a refusal:
// fail is a replay's, which no command gives, and edit, approve and deny
// are for tool calls only.
func actionNames(st *engine.Stop) string {
	var out []string
	for _, a := range st.Kind.Accepts() {
		switch {
		case a == engine.Fail:
		case (a == engine.Edit || a == engine.Approve || a == engine.Deny) && !isToolCall(st):
		default:
			out = append(out, a.String())
		}
	}
	return strings.Join(out, " or ")
}

// hook is the session's engine hook: it decides whether the run stops
// here, and if so holds this thread until a command comes.
func (s *Session) hook(ctx context.Context, st *engine.Stop) engine.Decision {
	thread := threadOf(st)
	// A fork's reused step runs no tool: there is no call to approve, nor
	// a tool to look up (an MCP server would be started for its list).
	reused := s.reuses != nil && s.reuses(st)
	// The called tool is looked up before the lock: an MCP server's tool
	// list comes from its connection.
	var tool plans.ToolInfo
	var listed bool
	if isToolCall(st) && !reused {
		tool, listed = s.tools.tool(ctx, st.Tool)
	}
	gated := !reused && s.approvals.holds(st, listedInfo(tool, listed))
	// The thread's held time runs from the moment it waits, behind
	// another thread's stop or at its own, to its return.
	holding := false
	defer func() {
		if holding {
			st.Release()
		}
	}()
	s.mu.Lock()
	s.live.at(thread, st)
	if ctx.Err() != nil {
		// The run was cancelled (ctrl-c at a going run, SIGTERM): its
		// calls fail with the cancellation, and a stop made of that is
		// none a person could act on. The run aborts here, and every
		// other thread with it.
		if !s.aborting {
			s.aborting, s.abortedAt = true, st.Path
		}
		at := s.abortedAt
		s.mu.Unlock()
		return engine.Decision{Action: engine.Abort, AbortedAt: at}
	}
	// All-stop: while another thread is stopped, this one waits here,
	// unless a thread command chooses it.
	var h *held
	for (s.current != nil || s.chosen != nil) && !s.aborting {
		if h == nil {
			st.Hold()
			holding = true
			h = &held{stop: st, thread: thread}
			s.threads = append(s.threads, h)
			s.live.hold(thread, true)
		}
		if s.chosen == h {
			break
		}
		s.wake.Wait()
	}
	if h != nil && (s.chosen != h || s.aborting) {
		if s.chosen == h {
			s.chosen = nil
		}
		s.threads = slices.DeleteFunc(s.threads, func(x *held) bool { return x == h })
		s.live.hold(thread, false)
		h = nil
	}
	if s.aborting {
		at := s.abortedAt
		s.mu.Unlock()
		return engine.Decision{Action: engine.Abort, AbortedAt: at}
	}
	if h != nil {
		// Chosen by a thread command: it is the current stop now, and
		// the command waits for its State.
		s.chosen = nil
		h.reason = ReasonThread
	} else {
		reason, bp := s.shouldStop(st, thread)
		if reason == "" && gated {
			reason = ReasonApproval
		}
		if reason == "" {
			s.mu.Unlock()
			return engine.Decision{}
		}
		if !holding {
			st.Hold()
			holding = true
		}
		h = &held{stop: st, thread: thread, reason: reason, bp: bp}
		s.threads = append(s.threads, h)
		s.live.hold(thread, true)
	}
	h.tool, h.listed, h.gated = tool, listed, gated
	h.decision, h.gone = make(chan engine.Decision), make(chan struct{})
	s.current = h
	// A stop ends until's run to a path, wherever it is, and is the one a
	// pause asked for, whatever made it.
	s.until, s.pause = nil, false
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
	s.parked = slices.DeleteFunc(s.parked, func(x *held) bool { return x == h })
	if d.Action == engine.Abort && !s.aborting {
		// Cancelled while held: the run was aborted here.
		s.aborting, s.abortedAt = true, st.Path
	}
	s.threads = slices.DeleteFunc(s.threads, func(x *held) bool { return x == h })
	s.live.hold(thread, false)
	s.wake.Broadcast()
	again := h.again && !s.aborting
	s.mu.Unlock()
	if again {
		// An ask a thread command left unanswered is asked again, as if
		// the thread came to it now: going on would answer it with
		// nobody.
		return s.hook(ctx, st)
	}
	return d
}

// shouldStop decides whether the run stops at st, and says why: a
// breakpoint (first match whose condition holds, hits counted), an error
// with break on error, an ask, a pause, or the movement of the last
// command. It is called with s.mu held.
func (s *Session) shouldStop(st *engine.Stop, thread string) (StopReason, *Breakpoint) {
	if s.reuses != nil && s.reuses(st) {
		// A fork's reused step takes its recorded result: the first
		// stop, a pause or a movement waits for what runs again.
		if b := s.fire(st, thread); b != nil {
			return breakpointReason(b), b
		}
		return "", nil
	}
	if s.entry {
		s.entry = false
		if b := s.fire(st, thread); b != nil {
			return breakpointReason(b), b
		}
		return ReasonEntry, nil
	}
	if b := s.fire(st, thread); b != nil {
		return breakpointReason(b), b
	}
	switch {
	case s.until != nil && s.until.Match(st.Path):
		return ReasonUntil, nil
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
		// Stepping in follows the work wherever it goes from the thread
		// it was given in: into a map's first item, a body step, a round's
		// tool call; never into a sibling item while its own lives, as
		// delve's step stays in its goroutine. Once the thread has ended,
		// the next stop anywhere.
		if thread != s.modeThread && s.live.has(s.modeThread) && !encloses(s.modeThread, thread) {
			return "", nil
		}
		return ReasonStep, nil
	}
	// Next and step out follow the thread the command was given in while
	// it lives, then its parents: stepping out of a map item lands on
	// the map's result, not in another item.
	if thread != s.modeThread && (s.live.has(s.modeThread) || !encloses(thread, s.modeThread)) {
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

// fire returns a copy of the first breakpoint that fires at st (its
// pattern and kinds match, its condition holds and the front end's rule
// stops there), counting the hits of each that matches; nil when none
// fires.
func (s *Session) fire(st *engine.Stop, thread string) *Breakpoint {
	firing := false
	fired := s.bps.match(st, func(b *Breakpoint) bool {
		// Hits counts the stops the breakpoint's pattern and kinds match,
		// so that a condition on {{stop.hits}} can pick the third of them;
		// a breakpoint listed after the one that stops the run is hit
		// too, though it does not stop it again.
		s.hits[b.ID]++
		if firing {
			return false
		}
		if b.Condition != nil {
			ok, err := b.Condition.holds(st, s.hits[b.ID])
			delete(s.conditionErrors, b.ID)
			if err != nil {
				s.conditionErrors[b.ID] = err.Error()
			}
			if !ok {
				return false
			}
		}
		if s.rule == nil {
			firing = true
			return true
		}
		c := *b
		c.Hits, c.ConditionError = s.hits[b.ID], s.conditionErrors[b.ID]
		firing = s.rule(c, stopSnapshot(st, thread, &c))
		return firing
	})
	if fired == nil {
		return nil
	}
	b := *fired
	b.Hits, b.ConditionError = s.hits[b.ID], s.conditionErrors[b.ID]
	return &b
}

// encloses reports whether thread outer is a parent of thread inner: main
// encloses every item, and an item the items of plans its body calls.
func encloses(outer, inner string) bool {
	return outer != inner && (outer == "main" || strings.HasPrefix(inner, outer+"/"))
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
	return mainThread
}

// mainThread names the thread of the plan's own steps.
const mainThread = "main"
