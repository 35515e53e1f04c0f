package runtree_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/chat"
	"github.com/stepwise-dev/stepwise/tui/common"
	"github.com/stepwise-dev/stepwise/tui/live"
	"github.com/stepwise-dev/stepwise/tui/live/livetest"
	"github.com/stepwise-dev/stepwise/tui/runtree"
)

// bigPane is the pane at 160x48, focused, showing livetest.BigRun(10_000) with the
// selection on the item half-way down.
func bigPane(b *testing.B) (runtree.Model, *live.Tree) {
	b.Helper()
	events := livetest.BigRun(10_000)
	tr := live.New(nil)
	for _, e := range events {
		tr.Apply(e)
	}
	if len(events) < 49_990 || tr.Len() != 1+10_000*2 {
		b.Fatalf("%d events, %d rows", len(events), tr.Len())
	}
	m := runtree.New(common.New(common.NewTheme(true, true), common.DefaultKeyMap()))
	m.SetSize(160, 48)
	m.Focus()
	m.SetTree(tr)
	if !m.SelectPath("E1/do.5000") {
		b.Fatal("no item 5000")
	}
	if v := m.View(); !strings.Contains(v, "10002/20001") {
		b.Fatalf("the footer does not place the selection:\n%s", v)
	}
	return m, tr
}

// BenchmarkFrame10kItems draws one frame of a run of 10,000 map items and
// 50,000 events, the selection mid-way.
func BenchmarkFrame10kItems(b *testing.B) {
	m, _ := bigPane(b)
	b.ReportAllocs()
	for b.Loop() {
		_ = m.View()
	}
}

// BenchmarkDeltaFrame applies one streamed delta to a round deep in that
// run and draws the frame that shows it: the work of one coalesced batch
// of a single event.
func BenchmarkDeltaFrame(b *testing.B) {
	m, tr := bigPane(b)
	e := engine.Event{Seq: 50_001, Time: time.Unix(1_700_000_100, 0), RunID: "r", Path: "E1/do.9998/agent.1", Kind: engine.EventModelDelta, Payload: chat.Delta{Text: "x"}}
	b.ReportAllocs()
	for b.Loop() {
		tr.Apply(e)
		_ = m.View()
	}
}

// BenchmarkRefilter10kItems reads the rows a filter leaves of that run
// again, as the page does on every batch of events while a filter is on,
// and draws the frame.
func BenchmarkRefilter10kItems(b *testing.B) {
	m, _ := bigPane(b)
	m.SetFilter("do.50")
	if v := m.View(); !strings.Contains(v, "do.5000") {
		b.Fatalf("the filter does not show item 5000:\n%s", v)
	}
	b.ReportAllocs()
	for b.Loop() {
		m.Refilter()
		_ = m.View()
	}
}

// BenchmarkFollow10kItems finds the newest row of that run and selects
// it, as the page does on every batch while the selection follows.
func BenchmarkFollow10kItems(b *testing.B) {
	m, _ := bigPane(b)
	b.ReportAllocs()
	for b.Loop() {
		m.SetFollow(true)
	}
}

// BenchmarkRunTreeFrame50k draws one frame of the pane at 120x40 over a
// run of 50,000 rows, the selection mid-way: a map of 10,000 items of four
// steps, and an agent of 25,000 rounds of one tool call.
func BenchmarkRunTreeFrame50k(b *testing.B) {
	for _, sh := range []struct {
		name     string
		events   []engine.Event
		selected string
	}{
		{"map", livetest.BigMap(10_000, 4), "E1/do.5000/E3"},
		{"agent", livetest.BigAgent(25_000), "E1/agent.12500/lookup"},
	} {
		b.Run(sh.name, func(b *testing.B) {
			tr := live.New(nil)
			for _, e := range sh.events {
				tr.Apply(e)
			}
			if tr.Len() != 50_001 {
				b.Fatalf("%d rows", tr.Len())
			}
			m := runtree.New(common.New(common.NewTheme(true, true), common.DefaultKeyMap()))
			m.SetSize(120, 40)
			m.Focus()
			m.SetTree(tr)
			if !m.SelectPath(sh.selected) {
				b.Fatalf("no %s", sh.selected)
			}
			if v := m.View(); !strings.Contains(v, "/50001") {
				b.Fatalf("the footer does not count 50,001 rows:\n%s", v)
			}
			b.ReportAllocs()
			for b.Loop() {
				_ = m.View()
			}
		})
	}
}
