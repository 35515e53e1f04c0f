package store

import (
	"errors"
	"fmt"
	"sync"

	"github.com/stepwise-dev/stepwise/engine"
)

// Recorder is the engine.Sink that records runs into a Store. Event only
// queues: a writer goroutine of the Recorder's own marshals the payloads
// and commits everything queued in one transaction, as soon as it is
// queued, so that the engine rarely waits on the database and a killed
// process loses at most the events of the batch it was writing. The queue
// is bounded (maxQueuedBlocks): an engine that outruns the disk waits in
// Event for the writer to take what is queued, so that the payloads held
// for writing never outgrow a batch.
//
// A Recorder is meant for one run, whose row the run_start event creates;
// events of other runs are recorded all the same. It is safe for
// concurrent use: the engine calls it from every goroutine that produces
// events (map items run in parallel).
type Recorder struct {
	store *Store

	mu sync.Mutex
	// queue holds the events not yet taken by the writer, in blocks of
	// blockEvents, so that a long queue grows without copying what it
	// holds; the writer hands drained blocks back through free.
	queue  [][]engine.Event
	free   [][]engine.Event
	closed bool
	// room is signaled when the writer takes the queue, for Event calls
	// waiting for room.
	room sync.Cond
	// flushed holds a channel per Flush waiting for the queue as it was
	// to be written; the writer closes them after its next write.
	flushed []chan struct{}

	wake      chan struct{} // holds one token when the writer has work
	done      chan struct{} // closed when the writer has stopped
	closeOnce sync.Once
	err       error // the first write error; the writer's until done is closed
}

// blockEvents is the size of a queue block.
const blockEvents = 256

// maxQueuedBlocks bounds the queue: an Event that finds it full waits
// for the writer to take it. 16 blocks (4,096 events) are a batch the
// writer commits in a few milliseconds, and bound the events (and the
// results their payloads keep alive) to two such batches, the one queued
// and the one being written: recording a 100,000-item map with 64 raised
// the peak RSS as much again as with 16 (TestRecordingMemory).
const maxQueuedBlocks = 16

// maxFreeBlocks bounds the blocks kept for reuse: enough for a full queue
// while the writer writes another.
const maxFreeBlocks = 2 * maxQueuedBlocks

// errStoreClosed is what a Recorder of a closed Store reports.
var errStoreClosed = errors.New("run store is closed")

// Recorder returns a new Recorder writing into s. Close it when the run has
// ended, to flush what is queued; Store.Close closes the ones still open.
func (s *Store) Recorder() *Recorder {
	r := &Recorder{store: s, wake: make(chan struct{}, 1), done: make(chan struct{})}
	r.room.L = &r.mu
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		r.closed, r.err = true, fmt.Errorf("recording into %s: %w", s.path, errStoreClosed)
		close(r.done)
		return r
	}
	s.recorders[r] = struct{}{}
	go r.run()
	return r
}

// Event queues e for the writer and returns, at once unless the queue is
// full (then once the writer has taken it). Events given after Close are
// dropped. The payload is marshaled later, on the writer's goroutine: the
// engine does not change a payload once it has emitted it.
func (r *Recorder) Event(e engine.Event) {
	r.mu.Lock()
	for !r.closed && len(r.queue) >= maxQueuedBlocks && len(r.queue[len(r.queue)-1]) == blockEvents {
		r.room.Wait()
	}
	if r.closed {
		r.mu.Unlock()
		return
	}
	n := len(r.queue)
	if n == 0 || len(r.queue[n-1]) == cap(r.queue[n-1]) {
		var b []engine.Event
		if k := len(r.free); k > 0 {
			b, r.free = r.free[k-1], r.free[:k-1]
		} else {
			b = make([]engine.Event, 0, blockEvents)
		}
		r.queue = append(r.queue, b)
		n++
	}
	r.queue[n-1] = append(r.queue[n-1], e)
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default: // the writer already has a token, and will find e
	}
}

// Flush returns once every event given before it is written, so that a
// reader of the store sees them: the workbench lists a run's outcome as
// soon as the run ends.
func (r *Recorder) Flush() {
	ch := make(chan struct{})
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		<-r.done
		return
	}
	r.flushed = append(r.flushed, ch)
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
	<-ch
}

// Close writes everything queued, stops the writer and returns the first
// error the writer met (events of a batch that failed are lost; later
// batches are still written). Calling it again returns the same error.
func (r *Recorder) Close() error {
	r.closeOnce.Do(func() {
		r.mu.Lock()
		r.closed = true
		r.mu.Unlock()
		select {
		case r.wake <- struct{}{}:
		default:
		}
		<-r.done
		r.store.mu.Lock()
		delete(r.store.recorders, r)
		r.store.mu.Unlock()
	})
	<-r.done
	return r.err
}

// run is the writer goroutine. It takes the whole queue under the lock, so
// Event is never held up by a write, and writes what it took as one batch.
func (r *Recorder) run() {
	defer close(r.done)
	w := newWriter(r.store)
	var taken, drained [][]engine.Event
	for {
		<-r.wake
		r.mu.Lock()
		taken, r.queue = r.queue, taken[:0]
		flushed := r.flushed
		r.flushed = nil
		for _, b := range drained {
			if len(r.free) < maxFreeBlocks {
				r.free = append(r.free, b[:0])
			}
		}
		closing := r.closed
		r.room.Broadcast()
		r.mu.Unlock()
		if err := w.write(taken); err != nil && r.err == nil {
			r.err = fmt.Errorf("recording into %s: %w", r.store.path, err)
		}
		for _, b := range taken {
			clear(b) // let the payloads go
		}
		drained = append(drained[:0], taken...)
		for _, ch := range flushed {
			close(ch)
		}
		if closing {
			if err := w.finish(); err != nil && r.err == nil {
				r.err = fmt.Errorf("recording into %s: %w", r.store.path, err)
			}
			return
		}
	}
}
