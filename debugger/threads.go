package debugger

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/stepwise-dev/stepwise/engine"
)

// liveThread is one thread that has started and not ended, with where it
// was last seen. The live threads are linked in the order they started,
// so that listing them sorts nothing and ending one moves nothing: a map
// of 10,000 items lists in one pass.
type liveThread struct {
	id         string
	path       string // its last stop's path; its own until it has one
	kind       engine.StopKind
	held       bool
	prev, next *liveThread
}

// liveThreads is the session's set of live threads; the session's mutex
// guards it.
type liveThreads struct {
	byID map[string]*liveThread
	// first and last are the ends of the list in start order.
	first, last *liveThread
}

func newLiveThreads() liveThreads {
	return liveThreads{byID: map[string]*liveThread{}}
}

func (l *liveThreads) start(id string) {
	if l.byID[id] != nil {
		return
	}
	t := &liveThread{id: id, path: id, prev: l.last}
	if id == mainThread {
		t.path = ""
	}
	if l.last != nil {
		l.last.next = t
	} else {
		l.first = t
	}
	l.last = t
	l.byID[id] = t
}

func (l *liveThreads) end(id string) {
	t := l.byID[id]
	if t == nil {
		return
	}
	delete(l.byID, id)
	if t.prev != nil {
		t.prev.next = t.next
	} else {
		l.first = t.next
	}
	if t.next != nil {
		t.next.prev = t.prev
	} else {
		l.last = t.prev
	}
}

func (l *liveThreads) has(id string) bool { return l.byID[id] != nil }

// at notes that thread id came to a stop.
func (l *liveThreads) at(id string, st *engine.Stop) {
	if t := l.byID[id]; t != nil {
		t.path, t.kind = st.Path, st.Kind
	}
}

// hold notes that thread id waits at its stop, or goes on.
func (l *liveThreads) hold(id string, held bool) {
	if t := l.byID[id]; t != nil {
		t.held = held
	}
}

// ThreadStarted is the engine telling the session that a thread started:
// a map, filter or reduce item, or a tool call of an agent round.
func (s *Session) ThreadStarted(path string) {
	s.mu.Lock()
	s.live.start(path)
	s.mu.Unlock()
}

// ThreadEnded is the engine telling the session that a thread ended.
func (s *Session) ThreadEnded(path string) {
	s.mu.Lock()
	s.live.end(path)
	s.mu.Unlock()
}

// Threads lists every live thread of the run, in the order they started,
// running or held, with where each was last seen: the stop it is held at,
// or the last stop it passed (a thread that has passed none is at its own
// path, with no kind). The thread the commands act on is marked Stopped.
func (s *Session) Threads() []Thread {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := ""
	if s.current != nil {
		cur = s.current.thread
	}
	out := make([]Thread, 0, len(s.live.byID))
	for t := s.live.first; t != nil; t = t.next {
		out = append(out, Thread{ID: t.id, Path: t.path, Kind: t.kind, Held: t.held, Stopped: t.id == cur})
	}
	return out
}

// SwitchThread makes held thread id the current one: the State then
// shows its stop, and the next command decides there. The thread that
// was current stays held at its stop and goes on with the run. A thread
// that runs, or none of that name, is refused with the held ones listed.
func (s *Session) SwitchThread(id string) (State, error) {
	s.mu.Lock()
	cur := s.current
	switch {
	case cur == nil && s.finished:
		s.mu.Unlock()
		return State{}, errors.New("the run has finished")
	case cur == nil:
		s.mu.Unlock()
		return State{}, ErrRunning
	case cur.thread == id:
		st := s.stateLocked()
		s.mu.Unlock()
		return st, nil
	}
	var target *held
	var heldIDs []string
	for _, h := range s.threads {
		heldIDs = append(heldIDs, h.thread)
		if h.thread == id {
			target = h
		}
	}
	if target == nil {
		why := "no thread of the run is named " + id
		if s.live.has(id) {
			why = "thread " + id + " is running, not held at a stop"
		}
		s.mu.Unlock()
		return State{}, fmt.Errorf("%s; the held threads are %s (threads lists them all)", why, strings.Join(heldIDs, ", "))
	}
	s.parked = append(s.parked, cur)
	if target.decision != nil {
		// A thread that was current before: it waits at its stop still.
		s.parked = slices.DeleteFunc(s.parked, func(x *held) bool { return x == target })
		target.reason = ReasonThread
		s.current = target
		st := s.stateLocked()
		s.mu.Unlock()
		return st, nil
	}
	// A thread waiting for the run to resume: it leaves its wait as the
	// current stop, and says so.
	s.current, s.chosen = nil, target
	s.wake.Broadcast()
	s.mu.Unlock()
	return <-s.states, nil
}
