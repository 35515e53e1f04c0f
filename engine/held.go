package engine

import (
	"sync"
	"time"
)

// holdClock measures how long the threads of one unit of work (a step, an
// item, a round, a tool call, a plan) were held at stops: the time at
// least one of them was, each stretch counted once however many threads
// were held in it. A thread is held while the hook holds it at one of its
// stops for a person (Stop.Hold); a thread of the unit that runs on meanwhile (a concurrent item's
// model call) is not held, so only the waits of the unit's own threads
// count. The clocks exist only while a hook is installed: without one
// nothing is ever held.
type holdClock struct {
	parent *holdClock

	mu sync.Mutex
	// holding counts the unit's threads held now; since is when the
	// first of them was.
	holding int
	since   time.Time
	total   time.Duration
}

// hold says a thread of the unit (and so of every unit above it) is held
// from at.
func (h *holdClock) hold(at time.Time) {
	for c := h; c != nil; c = c.parent {
		c.mu.Lock()
		if c.holding == 0 {
			c.since = at
		}
		c.holding++
		c.mu.Unlock()
	}
}

// release says the thread hold held goes on from at.
func (h *holdClock) release(at time.Time) {
	for c := h; c != nil; c = c.parent {
		c.mu.Lock()
		c.holding--
		if c.holding == 0 {
			c.total += at.Sub(c.since)
		}
		c.mu.Unlock()
	}
}

// heldBy is how long the unit's threads were held up to at.
func (h *holdClock) heldBy(at time.Time) time.Duration {
	if h == nil {
		return 0
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	d := h.total
	if h.holding > 0 {
		d += at.Sub(h.since)
	}
	return d
}

// Holds is the union of the holds (Held events) at and below one unit's
// path: the stretches some thread of the unit was held at a stop, each
// counted once however many threads were held in it. A front end keeps
// one a unit and asks it how much of the unit's wall time was held, which
// is what the engine's hold clocks put in a step's or a tool call's end
// event, and what an item, a round or a called plan, without an end event
// of its own, has no other record of. The zero value holds nothing.
type Holds struct {
	// spans are the holds, in order of start, none overlapping another.
	spans []holdSpan
}

type holdSpan struct{ start, end time.Time }

// Add adds the hold p reports, which ended at end (the Held event's time).
func (h *Holds) Add(end time.Time, p Held) {
	s := holdSpan{end.Add(-time.Duration(p.Ms * float64(time.Millisecond))), end}
	if !s.start.Before(s.end) {
		return
	}
	// Holds arrive about in the order they end, so the place of the new
	// one is found from the end, and it merges with its neighbours.
	i := len(h.spans)
	for i > 0 && h.spans[i-1].start.After(s.start) {
		i--
	}
	j := i
	for j < len(h.spans) && !h.spans[j].start.After(s.end) {
		s.end = later(s.end, h.spans[j].end)
		j++
	}
	if i > 0 && !h.spans[i-1].end.Before(s.start) {
		i--
		s.start = h.spans[i].start
		s.end = later(s.end, h.spans[i].end)
	}
	if i == len(h.spans) {
		h.spans = append(h.spans, s)
		return
	}
	h.spans = append(h.spans[:i+1], h.spans[j:]...)
	h.spans[i] = s
}

// First is when the earliest hold began; zero when there is none.
func (h *Holds) First() time.Time {
	if len(h.spans) == 0 {
		return time.Time{}
	}
	return h.spans[0].start
}

// Within is how much of the stretch from start to end the holds cover; a
// zero end means up to the latest hold. It is never more than the stretch.
func (h *Holds) Within(start, end time.Time) time.Duration {
	var d time.Duration
	for _, s := range h.spans {
		from, to := s.start, s.end
		if from.Before(start) {
			from = start
		}
		if !end.IsZero() && to.After(end) {
			to = end
		}
		if to.After(from) {
			d += to.Sub(from)
		}
	}
	return d
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// HeldNow is where threads of a run are held now, each path of a stop with
// when a front end first saw the hold there: the hold's Held event comes
// only as it ends, so a live view times a hold still going from then.
type HeldNow map[string]time.Time

// Update is h after a look at the threads held now at paths, at now: a
// hold seen before keeps when it was first seen, a new one is seen now,
// and one no longer held is gone.
func (h HeldNow) Update(paths []string, now time.Time) HeldNow {
	next := make(HeldNow, len(paths))
	for _, p := range paths {
		since, ok := h[p]
		if !ok {
			since = now
		}
		next[p] = since
	}
	return next
}
