package store

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/stepwise-dev/stepwise/engine"
)

// Recorder is the engine.Sink that records runs into a Store. Event only
// queues, and two goroutines of the Recorder's own take it from there: an
// encoder takes everything queued and encodes the payloads as JSON, and a
// writer frames what the encoder hands it into segments and commits it in
// one transaction, so that the engine rarely waits on the database, a
// killed process loses at most the events of the batch being written,
// and encoding a batch overlaps writing the one before it. Neither holds
// up the engine's goroutines, which call Event under the run's lock that
// orders events: encoding there kept a map's items waiting on each other.
//
// What is in flight is bounded: the queue holds maxQueuedBlocks blocks
// of blockEvents events (an engine that outruns the disk waits in Event
// for the encoder to take them), and the encoder hands on a batch as soon
// as it holds maxBatchBytes of JSON, a block as soon as it holds
// blockBytes, and waits for the writer to take it.
//
// A Recorder is meant for one run, whose row the run_start event creates;
// events of other runs are recorded all the same. It is safe for
// concurrent use: the engine calls it from every goroutine that produces
// events (map items run in parallel).
type Recorder struct {
	store *Store
	// redaction hides the configuration's secrets in what is stored; nil
	// when there are none.
	redaction *redaction

	mu sync.Mutex
	// queue holds the events not yet taken by the encoder, in blocks, so
	// that a long queue grows without copying what it holds; the writer
	// hands written blocks back to the store (Store.reuse).
	queue  []*block
	closed bool
	// room is signaled when the encoder takes the queue, for Event calls
	// waiting for room.
	room sync.Cond
	// flushed holds a channel per Flush waiting for the queue as it was
	// to be written; the writer closes them after writing it.
	flushed []chan struct{}

	wake      chan struct{} // holds one token when the encoder has work
	done      chan struct{} // closed when the writer has stopped
	closeOnce sync.Once
	err       error // the first write error; the writer's until done is closed
}

// block is a block of the queue: events, and once the encoder is done
// with it their payloads' JSON one after the other in data, so that
// queuing an event allocates nothing, but for a payload over apartBytes,
// kept apart.
type block struct {
	events []queuedEvent
	data   []byte
	bytes  int // the JSON of its events, in data and apart
	// ordered says whether its events are grouped by run and in
	// sequence order, as the encoder found them: the writer, which needs
	// them so, then compares only the ends of its blocks.
	ordered bool
}

// queuedEvent is an event as the queue holds it.
type queuedEvent struct {
	seq uint64
	// time is unixNanos: a time.Time would be two words more to copy,
	// one of them a pointer the garbage collector is told of.
	time  int64
	runID string
	path  string
	kind  engine.EventKind
	// payload is the payload itself until the encoder has encoded it, and
	// then only for the kinds whose payload the writer reads into their
	// run's row (run_start, run_end, model_call).
	payload any
	lo, hi  int // the payload's JSON is data[lo:hi]; none when they are equal
	// apart is the JSON of a payload over apartBytes, instead.
	apart []byte
	// value is where the payload's value member lies in its JSON, as its
	// encoder said (payloadEncoder.append).
	value cut
}

// member is the JSON of the member name of p, e's payload JSON: its value
// member when the encoder said where that lies, else found in p.
func (e *queuedEvent) member(p []byte, name string) []byte {
	if e.value == unknownValue {
		return member(p, name)
	}
	if e.value == (cut{}) {
		return nil
	}
	return p[e.value.lo:e.value.hi]
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

// full reports whether b, being queued, takes no more events.
func (b *block) full() bool {
	return len(b.events) == blockEvents
}

// encode encodes the payloads of b's events, through enc and scratch,
// with the secrets of rd hidden, and notes whether they are in order,
// until b holds blockBytes of JSON; the events left, if any, it moves to
// a block of their own, which it returns.
func (b *block) encode(s *Store, enc *payloadEncoder, rd *redaction, scratch *[]byte) (rest *block) {
	b.ordered = true
	for i := range b.events {
		if b.bytes >= blockBytes {
			rest = s.block()
			rest.events = append(rest.events, b.events[i:]...)
			clear(b.events[i:])
			b.events = b.events[:i]
			return rest
		}
		e := &b.events[i]
		if i > 0 && eventOrder(&b.events[i-1], e) > 0 {
			b.ordered = false
		}
		*scratch, e.value = encodePayload(enc, (*scratch)[:0], e.payload)
		if rd != nil {
			var hidden bool
			if *scratch, hidden = rd.payload(*scratch); hidden {
				e.value = unknownValue // it has moved
			}
		}
		if len(*scratch) > apartBytes {
			e.apart, *scratch = *scratch, nil
		} else {
			e.lo = len(b.data)
			b.data = append(b.data, *scratch...)
			e.hi = len(b.data)
		}
		b.bytes += len(*scratch) + len(e.apart)
		switch e.kind {
		case engine.EventRunStart, engine.EventRunEnd, engine.EventModelCall, engine.EventDecided:
			// The writer reads these (readRuns): a decided event says
			// whether a person made it.
		default:
			e.payload = nil // let it go
		}
	}
	return nil
}

// blockEvents caps a queue block; blockBytes caps its JSON, which goes
// past it by its last payload at most; a payload over apartBytes is kept
// apart from a block's data, which thus never grows past blockBytes and
// apartBytes.
const (
	blockEvents = 256
	blockBytes  = 64 << 10
	apartBytes  = 16 << 10
)

// maxQueuedBlocks bounds the queue: an Event that finds it full waits
// for the encoder to take it. 16 blocks (4,096 events) are a batch the
// writer commits in a few milliseconds, and bound what is in flight to
// three such batches, the one queued, the one being encoded and the one
// being written: recording a 100,000-item map with 64 raised the peak RSS
// as much again as with 16 (TestRecordingMemory).
const maxQueuedBlocks = 16

// maxBatchBytes is the JSON of a batch the encoder hands on before it has
// encoded all it took, so that large payloads are written a few at a
// time.
const maxBatchBytes = 1 << 20

// maxFreeBlocks is how many written blocks a Store keeps for its
// Recorders to queue events in again: as many as a Recorder has in
// flight, queued, being encoded and being written, under 6 MB in all
// once a large run was recorded. A Recorder records one run, and a
// block's arrays are worth reusing in the next; a sync.Pool, which the
// garbage collector empties, lost a few of them every run.
const maxFreeBlocks = 3 * maxQueuedBlocks

// block is a block to queue events in, one written before if the store
// keeps one.
func (s *Store) block() *block {
	select {
	case b := <-s.freeBlocks:
		return b
	default:
		return &block{events: make([]queuedEvent, 0, blockEvents)}
	}
}

// reuse keeps b, written, for a Recorder to queue events in again, unless
// the store keeps maxFreeBlocks already.
func (s *Store) reuse(b *block) {
	clear(b.events) // let the payloads go
	b.events, b.data, b.bytes = b.events[:0], b.data[:0], 0
	select {
	case s.freeBlocks <- b:
	default:
	}
}

// maxSpareBytes is the largest spare a Store keeps once its Recorders
// have stopped, so that between runs it holds no buffer of a rare huge
// payload alive.
const maxSpareBytes = 4 << 20

// keepSpare keeps buf, once written, as the store's spare, if it is the
// larger.
func (s *Store) keepSpare(buf []byte) {
	select {
	case old := <-s.spare:
		if cap(old) > cap(buf) {
			buf = old
		}
	default:
	}
	select {
	case s.spare <- buf[:0]:
	default: // another Recorder's kept meanwhile
	}
}

// trimSpare lets the store's spare go if it is over maxSpareBytes.
func (s *Store) trimSpare() {
	select {
	case buf := <-s.spare:
		if cap(buf) <= maxSpareBytes {
			s.keepSpare(buf)
		}
	default:
	}
}

// batch is what the encoder hands the writer: blocks encoded, and the
// Flush calls waiting for them to be written.
type batch struct {
	blocks  []*block
	flushed []chan struct{}
}

// errStoreClosed is what a Recorder of a closed Store reports.
var errStoreClosed = errors.New("run store is closed")

// Recorder returns a new Recorder writing into s, which stores each of
// secrets as its reference wherever a payload or the run's row would hold
// it. Close it when the run has ended, to flush what is queued;
// Store.Close closes the ones still open.
func (s *Store) Recorder(secrets ...Secret) *Recorder {
	r := &Recorder{store: s, redaction: newRedaction(secrets), wake: make(chan struct{}, 1), done: make(chan struct{})}
	r.room.L = &r.mu
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		r.closed, r.err = true, fmt.Errorf("recording into %s: %w", s.path, errStoreClosed)
		close(r.done)
		return r
	}
	s.recorders[r] = struct{}{}
	batches := make(chan batch)
	go r.encode(batches)
	go r.write(batches)
	return r
}

// Event queues e for the encoder and returns, at once unless the queue
// is full (then once the encoder has taken it). Events given after Close
// are dropped. The payload is encoded later, on the encoder's goroutine:
// the engine does not change a payload once it has emitted it, and the
// payload encoder counts on it, encoding a map or slice two payloads
// share once.
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
	// The encoder is woken by the event that finds the queue empty: it
	// takes whatever is queued by then, and the queue is not empty again
	// until it has.
	wake := n == 0
	if n == 0 || r.queue[n-1].full() {
		r.queue = append(r.queue, r.store.block())
		n++
	}
	b := r.queue[n-1]
	b.events = append(b.events, queuedEvent{seq: e.Seq, time: unixNanos(e.Time), runID: e.RunID, path: e.Path, kind: e.Kind, payload: e.Payload})
	r.mu.Unlock()
	if wake {
		select {
		case r.wake <- struct{}{}:
		default: // the encoder already has a token (a Flush's)
		}
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

// encode is the encoder goroutine. It takes the whole queue under the
// lock, so Event is never held up by encoding, encodes it and hands it to
// the writer, in batches of up to maxBatchBytes of JSON; after Close, it
// hands on what was queued and stops.
//
// A payload kept apart takes the encoder's scratch with it, and the
// writer gives the largest it wrote to the store as its spare
// (Store.keepSpare), which the encoder takes for its scratch: a run's
// large payloads, and the next run's, grow one buffer, as large as the
// largest of them, instead of each growing its own.
func (r *Recorder) encode(batches chan<- batch) {
	defer close(batches)
	var enc payloadEncoder
	var scratch []byte
	// Kept before batches is closed (deferred calls run last first), and
	// so before the writer trims the spare.
	defer func() { r.store.keepSpare(scratch) }()
	for {
		<-r.wake
		r.mu.Lock()
		taken := r.queue
		r.queue = nil
		flushed := r.flushed
		r.flushed = nil
		closing := r.closed
		r.room.Broadcast()
		r.mu.Unlock()
		start, bytes := 0, 0
		for i := 0; i < len(taken); i++ {
			select {
			case s := <-r.store.spare:
				if cap(s) > cap(scratch) {
					scratch = s[:0]
				}
			default:
			}
			if rest := taken[i].encode(r.store, &enc, r.redaction, &scratch); rest != nil {
				taken = slices.Insert(taken, i+1, rest)
			}
			if bytes += taken[i].bytes; bytes >= maxBatchBytes && i+1 < len(taken) {
				batches <- batch{blocks: taken[start : i+1]}
				start, bytes = i+1, 0
			}
		}
		batches <- batch{blocks: taken[start:], flushed: flushed}
		if closing {
			return
		}
	}
}

// write is the writer goroutine: it writes each batch the encoder hands
// it in one transaction, and once the encoder has stopped, lets go of
// the runs it recorded.
func (r *Recorder) write(batches <-chan batch) {
	defer close(r.done)
	w := newWriter(r.store, r.redaction)
	for bt := range batches {
		if err := w.write(bt.blocks); err != nil && r.err == nil {
			r.err = fmt.Errorf("recording into %s: %w", r.store.path, err)
		}
		var spare []byte
		for _, b := range bt.blocks {
			for _, e := range b.events {
				if cap(e.apart) > cap(spare) {
					spare = e.apart
				}
			}
			r.store.reuse(b)
		}
		if spare != nil {
			r.store.keepSpare(spare)
		}
		for _, ch := range bt.flushed {
			close(ch)
		}
	}
	if err := w.finish(); err != nil && r.err == nil {
		r.err = fmt.Errorf("recording into %s: %w", r.store.path, err)
	}
	r.store.trimSpare()
}
