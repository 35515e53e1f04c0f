package live

import (
	"sync"

	tea "charm.land/bubbletea/v2"

	"github.com/stepwise-dev/stepwise/engine"
)

// Feed carries a run's events from the engine to the workbench. The
// engine's goroutines hand events to it as a Sink and never wait; the UI
// takes everything that arrived since it last looked in one Batch, so a
// burst of deltas costs one redraw, not one each.
type Feed struct {
	mu      sync.Mutex
	pending []engine.Event
	closed  bool
	ready   chan struct{} // holds a token while events or the end are waiting
}

// NewFeed returns an empty feed.
func NewFeed() *Feed {
	return &Feed{ready: make(chan struct{}, 1)}
}

// Event queues one event (engine.Sink).
func (f *Feed) Event(e engine.Event) {
	f.mu.Lock()
	if !f.closed {
		f.pending = append(f.pending, e)
	}
	f.mu.Unlock()
	f.signal()
}

// Close says the run has ended: the batch that drains the feed says Done.
func (f *Feed) Close() {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	f.signal()
}

func (f *Feed) signal() {
	select {
	case f.ready <- struct{}{}:
	default: // a wake-up is already waiting; it will take these too
	}
}

// Batch is the events that arrived since the last batch, in order. Done is
// set on the last one, once the run has ended and everything is taken.
type Batch struct {
	Events []engine.Event
	Done   bool
}

// Wait returns the command that delivers the next Batch. The UI calls it
// again after handling each batch, until one is Done.
func (f *Feed) Wait() tea.Cmd {
	return func() tea.Msg {
		<-f.ready
		f.mu.Lock()
		defer f.mu.Unlock()
		b := Batch{Events: f.pending, Done: f.closed}
		f.pending = nil
		if f.closed {
			// Later waits see the end at once.
			f.signal()
		}
		return b
	}
}
