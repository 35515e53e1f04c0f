package store_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/record"
	"github.com/stepwise-dev/stepwise/engine/store"
)

// TestFlush reads a run back right after Flush: its end is there, with
// the recorder still open.
func TestFlush(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rec := st.Recorder()
	defer rec.Close()
	now := time.Now()
	rec.Event(engine.Event{Seq: 1, Time: now, RunID: "r1", Kind: engine.EventRunStart, Payload: engine.RunStarted{Plan: "p"}})
	rec.Event(engine.Event{Seq: 2, Time: now, RunID: "r1", Kind: engine.EventRunEnd, Payload: engine.RunEnded{Status: "ok"}})
	rec.Flush()
	runs, err := st.Runs(context.Background(), record.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].Status != "ok" {
		t.Fatalf("after Flush the store lists %+v", runs)
	}
	rec.Close()
	rec.Flush() // after Close it returns at once
}
