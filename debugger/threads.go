package debugger

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/stepwise-dev/stepwise/engine"
)

// liveThreads is the session's set of live threads, in the order they
// started, as the Threads they list as; the session's mutex guards it.
// They are kept in one slice, so that listing them is one copy: a map of
// 10,000 items lists in well under a millisecond. A thread that ends
// leaves a hole (an empty ID) until holes are half the slice.
type liveThreads struct {
	list  []Thread
	index map[string]int // a live thread's place in list
	holes int
}

func newLiveThreads() liveThreads {
	return liveThreads{index: map[string]int{}}
}

func (l *liveThreads) start(id string) {
	if _, ok := l.index[id]; ok {
		return
	}
	// A thread that has passed no stop is at its own path; the plan's
	// own, at none yet.
	at := id
	if id == mainThread {
		at = ""
	}
	l.index[id] = len(l.list)
	l.list = append(l.list, Thread{ID: id, Path: at})
}

func (l *liveThreads) end(id string) {
	i, ok := l.index[id]
	if !ok {
		return
	}
	delete(l.index, id)
	l.list[i] = Thread{}
	l.holes++
	if l.holes*2 >= len(l.list) {
		l.compact()
	}
}

// compact closes the holes ended threads left.
func (l *liveThreads) compact() {
	kept := l.list[:0]
	for _, t := range l.list {
		if t.ID != "" {
			l.index[t.ID] = len(kept)
			kept = append(kept, t)
		}
	}
	clear(l.list[len(kept):])
	l.list, l.holes = kept, 0
}

func (l *liveThreads) has(id string) bool {
	_, ok := l.index[id]
	return ok
}

// at notes that thread id came to a stop.
func (l *liveThreads) at(id string, st *engine.Stop) {
	if i, ok := l.index[id]; ok {
		l.list[i].Path, l.list[i].Kind, l.list[i].Tool = st.Path, st.Kind, st.Tool
	}
}

// hold notes that thread id waits at its stop, or goes on.
func (l *liveThreads) hold(id string, held bool) {
	if i, ok := l.index[id]; ok {
		l.list[i].Held = held
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
	if s.live.holes > 0 {
		s.live.compact()
	}
	out := slices.Clone(s.live.list)
	if s.current != nil {
		if i, ok := s.live.index[s.current.thread]; ok {
			out[i].Stopped = true
		}
	}
	return out
}

// SwitchThread makes held thread id the current one: the State then
// shows its stop, and the next command decides there. id is a thread's
// whole id, or the end of it the threads pane names it by (do.1 for
// assess/do.1) when one held thread's id ends so. The thread that was
// current stays held at its stop and goes on with the run. A thread that
// runs, or none of that name, is refused with the held ones listed.
func (s *Session) SwitchThread(id string) (State, error) {
	s.mu.Lock()
	cur := s.current
	if cur != nil {
		id = s.heldThreadNamed(id)
	}
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

// heldThreadNamed is the id of the held thread name stands for: name
// itself when a held thread has that id, else the one held thread whose
// id ends in /name; name as given when none or several do. s.mu is held
// and the run is held.
func (s *Session) heldThreadNamed(name string) string {
	candidates := append([]*held{s.current}, s.threads...)
	if slices.ContainsFunc(candidates, func(h *held) bool { return h.thread == name }) {
		return name
	}
	match := ""
	for _, h := range candidates {
		if !strings.HasSuffix(h.thread, "/"+name) || h.thread == match {
			continue
		}
		if match != "" {
			return name
		}
		match = h.thread
	}
	if match == "" {
		return name
	}
	return match
}
