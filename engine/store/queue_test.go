package store

import (
	"context"
	"database/sql"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stepwise-dev/stepwise/engine"
)

// TestQueueBounded holds the writer up on the database's write lock,
// which another connection takes, and gives the Recorder events whose
// payloads are kept apart, as large ones are: Event stops taking them once
// the queue is full, behind a batch being encoded and one being written,
// and the JSON encoded meanwhile is a batch's maxBatchBytes, not that of
// every event taken. Once the lock is let go every event is written.
func TestQueueBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	db, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	lock, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if _, err := lock.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}

	const batchEvents = maxQueuedBlocks * blockEvents
	const events = 3*batchEvents + 1
	big := strings.Repeat("x", apartBytes+1) // one value, shared: only its JSON costs memory
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	rec := s.Recorder()
	var given atomic.Int64
	fed := make(chan struct{})
	go func() {
		defer close(fed)
		for i := range events {
			rec.Event(engine.Event{Seq: uint64(i + 1), Time: time.Now(), RunID: "r", Path: "E1", Kind: engine.EventStepStart,
				Payload: engine.StepStarted{Tool: "t", Input: big}})
			given.Add(1)
		}
	}()
	time.Sleep(500 * time.Millisecond)
	var held runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&held)
	if n := given.Load(); n >= events {
		t.Errorf("Event took all %d events while the writer was held up, want at most %d", n, 3*batchEvents)
	}
	// The writer's batch and the encoder's are maxBatchBytes and a
	// payload each; the queue holds no JSON. Encoding all the encoder
	// took would be batchEvents times a payload, 64 MiB.
	if grown := int64(held.HeapAlloc) - int64(before.HeapAlloc); grown > 16<<20 {
		t.Errorf("the heap grew by %d MiB while the writer was held up, want the JSON of two batches of %d MiB at most", grown>>20, maxBatchBytes>>20)
	}
	if _, err := lock.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	<-fed
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := s.Events(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != events {
		t.Fatalf("%d events written, want %d", len(got), events)
	}
}

// TestInterleavedRunsAreSorted records two runs' events interleaved
// within a queue block: the writer puts them in order, so that each
// run's events fill a segment a batch rather than one segment each. The
// store is locked while they are queued, so that they are written in a
// few batches: the first, taken before the writer found the lock, and
// the ones the encoder took while it waited (one, or two when the
// encoder took the queue again before every event was in it).
func TestInterleavedRunsAreSorted(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	lock, err := s.db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if _, err := lock.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	rec := s.Recorder()
	const n = blockEvents / 2 // within one block
	for i := range n {
		for _, id := range []string{"run-a", "run-b"} {
			rec.Event(engine.Event{Seq: uint64(i + 1), RunID: id, Path: "E1", Kind: engine.EventWarning})
		}
	}
	if _, err := lock.ExecContext(context.Background(), "COMMIT"); err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	var segments int
	if err := s.db.QueryRow("SELECT count(*) FROM segments").Scan(&segments); err != nil {
		t.Fatal(err)
	}
	// Three batches at most, each a segment per run; out of order, the
	// events would take a segment each.
	if segments > 6 {
		t.Errorf("%d segments for two runs of %d events each, want 6 at most", segments, n)
	}
}
