package store_test

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

// TestCheckpointsKeepTheLogBounded records 80 MB of distinct results, ten
// times what wakes the store's checkpointer, and finds the write-ahead
// log no larger than a few checkpoints' worth: Recorders commit with
// SQLite's own checkpoints turned off and count on the checkpointer.
// Every result reads back whole.
func TestCheckpointsKeepTheLogBounded(t *testing.T) {
	s := openStore(t)
	const runs, perRun = 20, 4 << 20
	rng := rand.New(rand.NewPCG(1, 2))
	results := make([]string, runs)
	var walPeak int64
	for i := range results {
		b := make([]byte, perRun)
		for j := range b {
			b[j] = 'a' + byte(rng.IntN(26))
		}
		results[i] = string(b)
		recordRun(t, s, "run-"+strconv.Itoa(i), t0.Add(time.Duration(i)*time.Minute), func(r *storetest.Run) {
			r.Begin("big", "big.yaml", nil)
			r.Step("E1", "builtin__reshape", nil, results[i], 1)
			r.End(engine.RunEnded{Status: engine.StatusOK, StepsExecuted: 1})
		})
		if info, err := os.Stat(s.Path() + "-wal"); err == nil {
			walPeak = max(walPeak, info.Size())
		}
	}
	if limit := int64(32 << 20); walPeak > limit {
		t.Errorf("the write-ahead log grew to %d bytes recording %d MB, over %d", walPeak, runs*perRun>>20, limit)
	}
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
