package main

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// writeLog keeps each Write it is given apart, to count system calls'
// worth of writes.
type writeLog struct {
	mu     sync.Mutex
	writes []string
}

func (w *writeLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes = append(w.writes, string(p))
	return len(p), nil
}

func (w *writeLog) snapshot() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.writes...)
}

func TestLineBatcher(t *testing.T) {
	t.Run("a burst of lines is one write, in order", func(t *testing.T) {
		log := &writeLog{}
		// However slow the machine, no batch is written before Flush.
		l := &lineBatcher{w: log, delay: time.Hour}
		var want strings.Builder
		for i := range 100 {
			fmt.Fprintf(l, "→ S%d builtin__reshape\n", i)
			fmt.Fprintf(&want, "→ S%d builtin__reshape\n", i)
		}
		l.Flush()
		if got := log.snapshot(); len(got) != 1 || got[0] != want.String() {
			t.Errorf("%d writes, want 1 of the 100 lines in order:\n%q", len(got), got)
		}
	})
	t.Run("a line nobody flushes is written after a moment", func(t *testing.T) {
		log := &writeLog{}
		l := newLineBatcher(log)
		fmt.Fprintln(l, "→ S0 user__slow")
		deadline := time.Now().Add(5 * time.Second)
		for len(log.snapshot()) == 0 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		if got := log.snapshot(); len(got) != 1 || got[0] != "→ S0 user__slow\n" {
			t.Errorf("writes %q, want the line alone", got)
		}
		fmt.Fprintln(l, "→ S1 user__slow")
		l.Flush()
		if got := log.snapshot(); len(got) != 2 || got[1] != "→ S1 user__slow\n" {
			t.Errorf("writes %q, want the second line after the first", got)
		}
	})
	t.Run("a full batch is written at once", func(t *testing.T) {
		log := &writeLog{}
		l := &lineBatcher{w: log, delay: time.Hour}
		line := strings.Repeat("x", 1023) + "\n"
		for range lineBatchBytes / len(line) {
			l.Write([]byte(line))
		}
		if got := log.snapshot(); len(got) != 1 || len(got[0]) != lineBatchBytes {
			t.Errorf("%d writes, want one of %d bytes", len(got), lineBatchBytes)
		}
		l.Flush()
		if got := log.snapshot(); len(got) != 1 {
			t.Errorf("flushing an empty batch wrote %q", got[1:])
		}
	})
	t.Run("an empty flush writes nothing", func(t *testing.T) {
		var b bytes.Buffer
		newLineBatcher(&b).Flush()
		if b.Len() != 0 {
			t.Errorf("wrote %q", b.String())
		}
	})
}
