package debugger

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/stepwise-dev/stepwise/engine"
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
	plan *plans.Plan
	eng  *engine.Engine
	refs map[string][]plans.Reference // who reads each step's result

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

	states   chan State // stops and the end, to whoever waits
	finished bool
	result   *engine.Result
	runErr   error
}

// held is a thread waiting at a stop.
type held struct {
	stop     *engine.Stop
	thread   string
	reason   string
	bp       *Breakpoint
	decision chan engine.Decision
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
	s := &Session{plan: plan, refs: plans.Readers(plan), breakOnError: true, states: make(chan State, 1)}
	s.wake = sync.NewCond(&s.mu)
	opts.Hook = engine.Hooks(opts.Hook, s.hook)
	s.eng = engine.New(opts)
	return s
}

// Break sets a breakpoint and returns it.
func (s *Session) Break(pattern string, kinds []engine.StopKind, cond *Condition) (*Breakpoint, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, err := newBreakpoint(s.nextID+1, pattern, kinds, cond)
	if err != nil {
		return nil, err
	}
	s.nextID++
	s.breakpoints = append(s.breakpoints, b)
	return b, nil
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

// Do applies a command to the current stop and returns the next State.
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
	s.mode, s.modeThread, s.modeDepth = cmd.Move, cur.thread, len(cur.stop.Stack)
	s.current = nil
	s.mu.Unlock()
	cur.decision <- cmd.Decision
	return <-s.states, nil
}

// hook is the session's engine hook: it decides whether the run stops
// here, and if so holds this thread until a command comes.
func (s *Session) hook(ctx context.Context, st *engine.Stop) engine.Decision {
	thread := threadOf(st)
	s.mu.Lock()
	// All-stop: while another thread is stopped, this one waits here.
	for s.current != nil {
		h := &held{stop: st, thread: thread}
		s.threads = append(s.threads, h)
		s.wake.Wait()
		s.threads = slices.DeleteFunc(s.threads, func(x *held) bool { return x == h })
	}
	reason, bp := s.shouldStop(st, thread)
	if reason == "" {
		s.mu.Unlock()
		return engine.Decision{}
	}
	h := &held{stop: st, thread: thread, reason: reason, bp: bp, decision: make(chan engine.Decision)}
	s.current = h
	s.threads = append(s.threads, h)
	state := s.stateLocked()
	s.mu.Unlock()

	s.states <- state
	var d engine.Decision
	select {
	case d = <-h.decision:
	case <-ctx.Done():
		d = engine.Decision{Action: engine.Abort}
	}
	s.mu.Lock()
	s.threads = slices.DeleteFunc(s.threads, func(x *held) bool { return x == h })
	s.wake.Broadcast()
	s.mu.Unlock()
	return d
}

// shouldStop decides whether the run stops at st, and says why: a
// breakpoint (first match whose condition holds, hits counted), an error
// with break on error, an ask, a pause, or the movement of the last
// command. It is called with s.mu held.
func (s *Session) shouldStop(st *engine.Stop, thread string) (string, *Breakpoint) {
	for _, b := range s.breakpoints {
		if !b.matches(st) {
			continue
		}
		// Hits counts the stops the breakpoint's pattern and kinds match,
		// so that a condition on {{stop.hits}} can pick the third of them.
		b.Hits++
		if b.Condition != nil && !b.Condition.holds(st, b.Hits) {
			continue
		}
		return fmt.Sprintf("breakpoint %d (%s)", b.ID, b.Pattern), b
	}
	switch {
	case st.Kind == engine.StopError && s.breakOnError:
		return "error", nil
	case st.Kind == engine.StopAsk:
		return "ask", nil
	case s.pause:
		s.pause = false
		return "pause", nil
	}
	if s.mode == StepIn {
		// Stepping in follows the work wherever it goes: into a map's
		// first item as much as into a body step.
		return "step", nil
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
			return "next", nil
		}
	case StepOut:
		if depth < s.modeDepth {
			return "step out", nil
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

// threadOf names the thread a stop belongs to: the innermost map or filter
// item around it, or "main".
func threadOf(st *engine.Stop) string {
	for i := len(st.Stack) - 1; i >= 0; i-- {
		if st.Stack[i].Kind == "item" {
			return st.Stack[i].Path
		}
	}
	// Before the stack has an item frame, the stop itself may be one.
	if i := strings.LastIndex(st.Path, "/do."); i >= 0 && !strings.Contains(st.Path[i+1:], "/") {
		return st.Path
	}
	return "main"
}
