package live

import (
	"sync"
	"testing"

	"github.com/stepwise-dev/stepwise/engine"
)

// TestFeedBatches sends events from many goroutines while a reader takes
// batches, and checks that every event arrives once, in each sender's
// order, and that the last batch is Done.
func TestFeedBatches(t *testing.T) {
	f := NewFeed()
	const senders, each = 8, 500
	var wg sync.WaitGroup
	for s := 0; s < senders; s++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				f.Event(engine.Event{Seq: uint64(s*each + i), Path: string(rune('a' + s))})
			}
		}()
	}
	go func() {
		wg.Wait()
		f.Close()
	}()
	last := map[string]uint64{}
	got := 0
	for {
		b := f.Wait()().(Batch)
		for _, e := range b.Events {
			if prev, seen := last[e.Path]; seen && e.Seq <= prev {
				t.Fatalf("%s: event %d after %d", e.Path, e.Seq, prev)
			}
			last[e.Path] = e.Seq
			got++
		}
		if b.Done {
			break
		}
	}
	if got != senders*each {
		t.Errorf("%d events arrived, want %d", got, senders*each)
	}
	if b := f.Wait()().(Batch); !b.Done || len(b.Events) != 0 {
		t.Errorf("a wait after the end: %+v", b)
	}
}

// TestFeedCoalesces checks that events that arrive while the UI is busy
// come as one batch.
func TestFeedCoalesces(t *testing.T) {
	f := NewFeed()
	for i := 0; i < 100; i++ {
		f.Event(engine.Event{Seq: uint64(i + 1)})
	}
	if b := f.Wait()().(Batch); len(b.Events) != 100 || b.Done {
		t.Errorf("one batch of %d events (done %v), want 100", len(b.Events), b.Done)
	}
}
