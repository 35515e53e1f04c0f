package live_test

import (
	"testing"
	"time"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/chat"
	"github.com/stepwise-dev/stepwise/tui/live"
	"github.com/stepwise-dev/stepwise/tui/live/livetest"
)

func loaded(b *testing.B) *live.Tree {
	b.Helper()
	events := livetest.BigRun(10_000)
	if len(events) < 49_990 {
		b.Fatalf("%d events", len(events))
	}
	tr := live.New(nil)
	for _, e := range events {
		tr.Apply(e)
	}
	if tr.Len() != 1+10_000*2 {
		b.Fatalf("%d rows", tr.Len())
	}
	return tr
}

// BenchmarkApplyDelta applies one streamed delta to a round deep in a run
// of 10,000 map items and 50,000 events.
func BenchmarkApplyDelta(b *testing.B) {
	tr := loaded(b)
	e := engine.Event{Seq: 50_001, Time: time.Unix(1_700_000_100, 0), RunID: "r", Path: "E1/do.9998/agent.1", Kind: engine.EventModelDelta, Payload: chat.Delta{Text: "x"}}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		tr.Apply(e)
	}
}

// BenchmarkApplyRun applies the whole run; ns/op divided by the event
// count is the mean cost of an event, creating nodes included.
func BenchmarkApplyRun(b *testing.B) {
	events := livetest.BigRun(10_000)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		tr := live.New(nil)
		for _, e := range events {
			tr.Apply(e)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(events)), "ns/event")
}

// BenchmarkRows reads the 40 visible rows of that run, at its top, middle
// and end, after everything is applied.
func BenchmarkRows(b *testing.B) {
	tr := loaded(b)
	for _, bc := range []struct {
		name   string
		offset int
	}{{"top", 0}, {"middle", tr.Len() / 2}, {"end", tr.Len() - 40}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if rows := tr.Rows(bc.offset, 40); len(rows) != 40 {
					b.Fatalf("%d rows", len(rows))
				}
			}
		})
	}
}
