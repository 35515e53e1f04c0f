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
	refs    map[string][]plans.Reference // who reads each step's result

	mu           sync.Mutex
	wake         *sync.Cond // held threads wait on it
	breakpoints  []*Breakpoint
	nextID       int
	breakOnError bool
	pause        bool

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

// New returns a session that will run plan on the engine parts in opts; the
// session installs itself as the hook, composed after opts.Hook.
func New(plan *plans.Plan, opts engine.Options) *Session {
	s := &Session{plan: plan, catalog: opts.Catalog, refs: plans.Readers(plan), breakOnError: true, states: make(chan State, 1)}
	s.wake = sync.NewCond(&s.mu)
	opts.Hook = engine.Hooks(opts.Hook, s.hook)
	s.eng = engine.New(opts)
	return s
}

// Break sets a breakpoint and returns it. Setting one that is already set
// (the same pattern, kinds and condition) returns that one.
func (s *Session) Break(pattern string, kinds []engine.StopKind, cond *Condition) (*Breakpoint, error) {
	return s.breakAs(0, pattern, kinds, cond)
}

// breakAs sets a breakpoint under id, or the next free id when id is 0 or
// taken.
func (s *Session) breakAs(id int, pattern string, kinds []engine.StopKind, cond *Condition) (*Breakpoint, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, b := range s.breakpoints {
		if b.Pattern == pattern && slices.Equal(b.Kinds, kinds) && sameCondition(b.Condition, cond) {
			return b, nil
		}
	}
	if id <= 0 || s.find(id) != nil {
		id = s.nextID + 1
	}
	b, err := newBreakpoint(id, pattern, kinds, cond)
	if err != nil {
		return nil, err
	}
	s.nextID = max(s.nextID, id)
	s.breakpoints = append(s.breakpoints, b)
	return b, nil
}

func sameCondition(a, b *Condition) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Value == b.Value && a.Op == b.Op && fmt.Sprint(a.To) == fmt.Sprint(b.To)
}

// Clear removes a breakpoint.
func (s *Session) Clear(id int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.breakpoints, func(b *Breakpoint) bool { return b.ID == id })
	if i < 0 {
		return fmt.Errorf("there is no breakpoint %d", id)
	}
	s.breakpoints = slices.Delete(s.breakpoints, i, i+1)
	return nil
}

// SetCondition changes a breakpoint's condition; nil removes it.
func (s *Session) SetCondition(id int, cond *Condition) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.find(id)
	if b == nil {
		return fmt.Errorf("there is no breakpoint %d", id)
	}
	b.Condition = cond
	return nil
}

// Enable turns a breakpoint on or off.
func (s *Session) Enable(id int, on bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.find(id)
	if b == nil {
		return fmt.Errorf("there is no breakpoint %d", id)
	}
	b.Enabled = on
	return nil
}

func (s *Session) find(id int) *Breakpoint {
	for _, b := range s.breakpoints {
		if b.ID == id {
			return b
		}
	}
	return nil
}

// Breakpoints returns copies of the breakpoints.
func (s *Session) Breakpoints() []Breakpoint {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Breakpoint, len(s.breakpoints))
	for i, b := range s.breakpoints {
		out[i] = *b
	}
	return out
}

// BreakOnError sets whether a failure about to propagate stops the run. It
// is on by default.
func (s *Session) BreakOnError(on bool) {
	s.mu.Lock()
	s.breakOnError = on
	s.mu.Unlock()
}

// BreaksOnError reports whether break on error is on.
func (s *Session) BreaksOnError() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.breakOnError
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

func actionNames(as []engine.Action) string {
	var out []string
	for _, a := range as {
		out = append(out, a.String())
	}
	return strings.Join(out, " or ")
}

// hook is the session's engine hook: it decides whether the run stops
// here, and if so holds this thread until a command comes.
func (s *Session) hook(ctx context.Context, st *engine.Stop) engine.Decision {
	thread := threadOf(st)
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
	if reason == "" {
		s.mu.Unlock()
		return engine.Decision{}
	}
	h := &held{stop: st, thread: thread, reason: reason, bp: bp, decision: make(chan engine.Decision), gone: make(chan struct{})}
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
	for _, b := range s.breakpoints {
		if !b.matches(st) {
			continue
		}
		// Hits counts the stops the breakpoint's pattern and kinds match,
		// so that a condition on {{stop.hits}} can pick the third of them.
		b.Hits++
		if b.Condition != nil {
			ok, err := b.Condition.holds(st, b.Hits)
			b.ConditionError = ""
			if err != nil {
				b.ConditionError = err.Error()
			}
			if !ok {
				continue
			}
		}
		return breakpointReason(b), b
	}
	switch {
	case (st.Kind == engine.StopRound || st.Kind == engine.StopError) && errors.As(st.Err, new(*engine.SpendCapError)):
		// The cap is the user's decision to make, with or without break
		// on error: a reply or a value given here spends nothing.
		return ReasonSpendCap, nil
	case st.Kind == engine.StopError && s.breakOnError:
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
