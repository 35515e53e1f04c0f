package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/stepwise-dev/stepwise/debugger/timeline"
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/chat"
	"github.com/stepwise-dev/stepwise/tui/live"
	"github.com/stepwise-dev/stepwise/tui/live/livetest"
)

// BenchmarkViewLargePlan renders one frame of the 2,000-step plan: the
// tree scrolled to the middle, the detail of the selected step, the
// problems pane, at a large and at the smallest supported size.
func BenchmarkViewLargePlan(b *testing.B) {
	doc := loadDocument(b, largeFile)
	for _, size := range []struct {
		name string
		w, h int
	}{{"200x60", 200, 60}, {"80x24", 80, 24}} {
		b.Run(size.name, func(b *testing.B) {
			m, _ := drive(b, newTestModel(doc), size.w, size.h, keyPgDown)
			m.planPage.tree().Select(len(m.planPage.tree().Rows()) / 2)
			m.sync()
			b.ReportAllocs()
			for b.Loop() {
				_ = m.View()
			}
		})
	}
}

// BenchmarkMoveLargePlan is one j press in the 2,000-step plan: moving the
// selection and laying out the new step's detail.
func BenchmarkMoveLargePlan(b *testing.B) {
	m, _ := drive(b, newTestModel(loadDocument(b, largeFile)), 200, 60)
	b.ReportAllocs()
	for b.Loop() {
		next, _ := m.Update(keyDown)
		m = next.(model)
		if m.planPage.tree().Selected().Index == len(m.planPage.tree().Rows())-1 {
			m.planPage.tree().Select(0)
		}
	}
}

// bigRunModel is the workbench at 160x48 showing a run of 10,000 map items
// and 50,000 events, the selection on the item half-way down and the round
// at the end still streaming.
func bigRunModel(b *testing.B) model {
	b.Helper()
	events := livetest.BigRun(10_000)
	events = events[:len(events)-2]
	tr, tl := live.New(nil), timeline.New()
	for _, e := range events {
		tr.Apply(e)
		tl.Apply(e)
	}
	m, _ := drive(b, newTestModel(loadDocument(b, largeFile)), 160, 48)
	m.runPage.show(&run{tree: tr, timeline: tl, feed: live.NewFeed(), busy: true}, false)
	for _, msg := range m.runPage.takePosted() {
		m.route(msg)
	}
	m.runPage.tree.SelectPath("E1/do.5000")
	m.sync()
	return m
}

// BenchmarkRunFrame10kItems renders one frame of the workbench on a run of
// 10,000 map items and 50,000 events: header, run tree, inspector, status
// line and key hints.
func BenchmarkRunFrame10kItems(b *testing.B) {
	m := bigRunModel(b)
	if !strings.Contains(m.render(), "do.5000") {
		b.Fatal("the selected item is not on screen")
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = m.View()
	}
}

// BenchmarkRunDelta is one streamed delta reaching the workbench: the
// batch applied to the tree and the panes pointed at the selection again,
// without the redraw (BenchmarkRunFrame10kItems times that).
func BenchmarkRunDelta(b *testing.B) {
	m := bigRunModel(b)
	r := m.runPage.run
	delta := live.Batch{Events: []engine.Event{{Seq: 50_001, Time: time.Unix(1_700_000_100, 0), RunID: "r",
		Path: "E1/do.9999/agent.1", Kind: engine.EventModelDelta, Payload: chat.Delta{Text: "x"}}}}
	b.ReportAllocs()
	for b.Loop() {
		next, _ := m.Update(batchMsg{run: r, batch: delta})
		m = next.(model)
	}
}

// BenchmarkWorkbenchFrame50k renders one whole frame of the workbench at
// 120x40 on the run page, over a run of 50,000 rows (a map of 10,000 items
// of four steps) still going, the selection on a step half-way down.
func BenchmarkWorkbenchFrame50k(b *testing.B) {
	tr, tl := live.New(nil), timeline.New()
	for _, e := range livetest.BigMap(10_000, 4) {
		tr.Apply(e)
		tl.Apply(e)
	}
	if tr.Len() != 50_001 {
		b.Fatalf("%d rows", tr.Len())
	}
	m, _ := drive(b, newTestModel(loadDocument(b, largeFile)), 120, 40)
	m.runPage.show(&run{tree: tr, timeline: tl, feed: live.NewFeed(), busy: true}, false)
	for _, msg := range m.runPage.takePosted() {
		m.route(msg)
	}
	m.runPage.tree.SelectPath("E1/do.5000/E3")
	m.sync()
	if v := m.render(); !strings.Contains(v, "do.5000") || !strings.Contains(v, "/50001") {
		b.Fatalf("the selected item is not on screen:\n%s", v)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = m.render()
	}
}
