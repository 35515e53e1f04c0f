package store

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stepwise-dev/stepwise/engine"
)

// TestQueueBoundedInBytes holds the writer up on the database's write
// lock, which another connection takes, and gives the Recorder events
// whose payloads fill a block each: Event stops taking them once the queue
// is full, with a batch in the writer's hands, and once the lock is let go
// every event is written.
func TestQueueBoundedInBytes(t *testing.T) {
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

	const events = 4 * maxQueuedBlocks
	big := strings.Repeat("x", blockBytes)
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
	time.Sleep(300 * time.Millisecond)
	// A full queue of a block an event, and the batch the writer took
	// before it met the lock, as large at most.
	if n := given.Load(); n > 2*maxQueuedBlocks {
		t.Errorf("Event took %d events of %d bytes while the writer was held up, want at most %d", n, len(big), 2*maxQueuedBlocks)
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
