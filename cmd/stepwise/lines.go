package main

import (
	"io"
	"sync"
	"time"
)

// lineDelay is the longest a line of a run's progress waits before it is
// written: short enough that a step which takes a while is seen to start
// at once, long enough that a run of quick steps writes its lines a batch
// at a time rather than one system call each.
const lineDelay = 10 * time.Millisecond

// lineBatchBytes is what a batch may hold before it is written at once.
const lineBatchBytes = 64 << 10

// lineBatcher is the stderr of a running plan: lines are gathered and
// written together lineDelay after the first of them, or sooner when the
// batch fills or Flush is called. Whoever writes to the same stream by
// another way (a prompt, the answer on stdout) flushes first, so that
// nothing is seen out of order. It is safe for concurrent use.
type lineBatcher struct {
	w     io.Writer
	delay time.Duration // lineDelay, but in tests

	mu    sync.Mutex
	batch []byte
	timer *time.Timer // armed while the batch holds something
}

func newLineBatcher(w io.Writer) *lineBatcher { return &lineBatcher{w: w, delay: lineDelay} }

// divert writes the batches to w from now on: a progress block prints
// them above itself.
func (l *lineBatcher) divert(w io.Writer) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.w = w
}

// Write adds p to the batch. It never fails: a write error on stderr
// would leave nowhere to report it, as with an unbatched stream.
func (l *lineBatcher) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.batch = append(l.batch, p...)
	switch {
	case len(l.batch) >= lineBatchBytes:
		l.writeBatch()
	case l.timer == nil:
		l.timer = time.AfterFunc(l.delay, l.Flush)
	}
	return len(p), nil
}

// Flush writes what the batch holds.
func (l *lineBatcher) Flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writeBatch()
}

func (l *lineBatcher) writeBatch() {
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
	if len(l.batch) > 0 {
		_, _ = l.w.Write(l.batch)
		l.batch = l.batch[:0]
	}
}
