package store

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/stepwise-dev/stepwise/engine"
)

// Recorder is the engine.Sink that records runs into a Store. Event
// encodes the payload as JSON, on the engine's goroutine, into the queue,
// and returns: a writer goroutine of the Recorder's own frames everything
// queued into segments and commits it in one transaction, as soon as it is
// queued, so that the engine rarely waits on the database and a killed
// process loses at most the events of the batch it was writing. Encoding
// in Event shares the work of recording between the engine's goroutines
// and the writer, which alone was the bottleneck of a large map, and lets
// the payload values go at once. The queue is bounded (maxQueuedBlocks
// blocks of up to blockEvents events or blockBytes of JSON): an engine
// that outruns the disk waits in Event for the writer to take what is
// queued.
//
// A Recorder is meant for one run, whose row the run_start event creates;
// events of other runs are recorded all the same. It is safe for
// concurrent use: the engine calls it from every goroutine that produces
// events (map items run in parallel).
type Recorder struct {
	store *Store

	mu sync.Mutex
	// queue holds the events not yet taken by the writer, in blocks, so
	// that a long queue grows without copying what it holds; the writer
	// hands drained blocks back to blockPool.
	queue  []*block
	closed bool
	enc    payloadEncoder // Event's, under mu
	// scratch is where Event encodes a payload, under mu. A payload over
	// apartBytes takes it along, and the writer gives back the largest it
	// wrote, so that a run's large payloads grow one buffer, as large as
	// the largest of them, instead of each growing its own.
	scratch []byte
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

// block is a block of the queue: events, their payloads' JSON one after
// the other in data, so that queuing an event allocates nothing, but for
// a payload over apartBytes, kept apart.
type block struct {
	events []queuedEvent
	data   []byte
	bytes  int // the JSON of its events, in data and apart
}

// queuedEvent is an event as the queue holds it.
type queuedEvent struct {
	seq    uint64
	time   time.Time
	runID  string
	path   string
	kind   engine.EventKind
	lo, hi int // the payload's JSON is data[lo:hi]; none when they are equal
	// apart is the JSON of a payload over apartBytes, instead.
	apart []byte
	// payload is the payload itself, kept only for the kinds whose
	// payload the writer reads into their run's row (run_start, run_end,
	// model_call).
	payload any
}

// payload is e's payload JSON, nil for none.
func (b *block) payload(e *queuedEvent) []byte {
	switch {
	case e.apart != nil:
		return e.apart
	case e.lo == e.hi:
		return nil
	}
	return b.data[e.lo:e.hi]
}

// full reports whether b takes no more events.
func (b *block) full() bool {
	return len(b.events) == blockEvents || b.bytes >= blockBytes
}

// blockEvents and blockBytes cap a queue block: its JSON goes past
// blockBytes by its last payload at most, and its data, of blockBytes and
// apartBytes, never grows.
const (
	blockEvents = 256
	blockBytes  = 64 << 10
	apartBytes  = 16 << 10
)

// maxQueuedBlocks bounds the queue: an Event that finds it full waits
// for the writer to take it. 16 blocks (4,096 events, 1 MiB of JSON and
// a payload over it at most each) are
// a batch the writer commits in a few milliseconds, and bound what is
// queued to two such batches, the one queued and the one being written:
// recording a 100,000-item map with 64 raised the peak RSS as much again
// as with 16 (TestRecordingMemory).
const maxQueuedBlocks = 16

// blockPool holds the queue blocks drained and kept for reuse, by every
// Recorder: a Recorder records one run, and a block's arrays are worth
// reusing in the next.
var blockPool = sync.Pool{New: func() any { return &block{events: make([]queuedEvent, 0, blockEvents)} }}

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

// Event encodes e's payload into the queue for the writer and returns, at
// once unless the queue is full (then once the writer has taken it).
// Events given after Close are dropped. The engine does not change a
// payload once it has emitted it, and the payload encoder counts on it:
// a map or slice two payloads share is encoded once.
func (r *Recorder) Event(e engine.Event) {
	r.mu.Lock()
	for !r.closed && len(r.queue) >= maxQueuedBlocks && r.queue[len(r.queue)-1].full() {
		r.room.Wait()
	}
	if r.closed {
		r.mu.Unlock()
		return
	}
	n := len(r.queue)
	if n == 0 || r.queue[n-1].full() {
		r.queue = append(r.queue, blockPool.Get().(*block))
		n++
	}
	b := r.queue[n-1]
	q := queuedEvent{seq: e.Seq, time: e.Time, runID: e.RunID, path: e.Path, kind: e.Kind}
	r.scratch = encodePayload(&r.enc, r.scratch[:0], e.Payload)
	if len(r.scratch) > apartBytes {
		q.apart, r.scratch = r.scratch, nil
	} else {
		q.lo = len(b.data)
		b.data = append(b.data, r.scratch...)
		q.hi = len(b.data)
	}
	b.bytes += len(r.scratch) + len(q.apart)
	switch e.Kind {
	case engine.EventRunStart, engine.EventRunEnd, engine.EventModelCall:
		q.payload = e.Payload
	}
	b.events = append(b.events, q)
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
	var taken []*block
	var spare []byte // the largest payload kept apart that was written
	for {
		<-r.wake
		r.mu.Lock()
		taken, r.queue = r.queue, taken[:0]
		if cap(spare) > cap(r.scratch) {
			r.scratch = spare[:0]
		}
		spare = nil
		flushed := r.flushed
		r.flushed = nil
		closing := r.closed
		r.room.Broadcast()
		r.mu.Unlock()
		if err := w.write(taken); err != nil && r.err == nil {
			r.err = fmt.Errorf("recording into %s: %w", r.store.path, err)
		}
		for i, b := range taken {
			for _, e := range b.events {
				if cap(e.apart) > cap(spare) {
					spare = e.apart
				}
			}
			clear(b.events) // let the payloads go
			b.events, b.data, b.bytes = b.events[:0], b.data[:0], 0
			blockPool.Put(b)
			taken[i] = nil
		}
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
