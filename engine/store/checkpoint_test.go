package store

import (
	"context"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/store/storetest"
)

// TestCheckpointsKeepTheLogBounded records 80 MB of distinct results,
// more than the write-ahead log may hold before a writer checkpoints
// itself, one 4 MB run at a time. The checkpointer, woken once 8 MB are
// committed, moves the log into the file by itself; the log never grows
// past maxLoggedBytes and a run; every result reads back whole.
func TestCheckpointsKeepTheLogBounded(t *testing.T) {
	s := openTestStore(t)
	const runs, perRun = 20, 4 << 20
	rng := rand.New(rand.NewPCG(1, 2))
	results := make([]string, runs)
	var walPeak int64
	checkpointed := false
	for i := range results {
		b := make([]byte, perRun)
		for j := range b {
			b[j] = 'a' + byte(rng.IntN(26))
		}
		results[i] = string(b)
		rec := s.Recorder()
		r := &storetest.Run{ID: "run-" + strconv.Itoa(i), Sink: rec, Start: rowsT0.Add(time.Duration(i) * time.Minute)}
		r.Begin("big", "big.yaml", nil)
		r.Step("E1", "builtin__reshape", nil, results[i], 1)
		r.End(engine.RunEnded{Status: engine.StatusOK, StepsExecuted: 1})
		if err := rec.Close(); err != nil {
			t.Fatal(err)
		}
		if info, err := os.Stat(s.Path() + "-wal"); err == nil {
			walPeak = max(walPeak, info.Size())
		}
		if i == 2 {
			// 12 MB committed: the checkpointer is due, and nothing else
			// checkpoints yet.
			checkpointed = waitUntil(func() bool { return s.logged.Load() < checkpointBytes })
		}
	}
	if !checkpointed {
		t.Errorf("12 MB committed and no checkpoint made in 10 s: %d bytes still counted in the log", s.logged.Load())
	}
	if limit := int64(maxLoggedBytes + 2*perRun); walPeak > limit {
		t.Errorf("the write-ahead log grew to %d bytes recording %d MB, over %d", walPeak, runs*perRun>>20, limit)
	}
	t.Logf("write-ahead log at most %d bytes", walPeak)
	for i, want := range results {
		run, err := s.Run(context.Background(), "run-"+strconv.Itoa(i))
		if err != nil {
			t.Fatal(err)
		}
		// The results are letters, which JSON quotes and leaves alone.
		if got := string(run.Steps[0].Result); got != strconv.Quote(want) {
			t.Fatalf("run-%d's result reads back as %d bytes of JSON, recorded %d", i, len(got), len(want))
		}
	}
}

// waitUntil polls cond for up to 10 seconds and reports whether it held.
func waitUntil(cond func() bool) bool {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return false
}
