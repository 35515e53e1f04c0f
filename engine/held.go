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
