package tui

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/stepwise-dev/stepwise/debugger/timeline"
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/store"
	"github.com/stepwise-dev/stepwise/tui/live/livetest"
	"github.com/stepwise-dev/stepwise/tui/timeview"
)

var (
	keyTimeline = tea.KeyPressMsg{Code: 'w', Text: "w"}
	keySpend    = tea.KeyPressMsg{Code: '$', Text: "$"}
)

// retimedID is the id of the run retimed records.
const retimedID = "7133700000000002"

// retimed records the events of the run id again as a run of their own,
// with fixed times: each event 100ms after the one before, each model call
// 80ms long and each tool call 60ms. The run's shape is the engine's; only
// the clock is the test's, so that a waterfall can be pinned.
func retimed(t *testing.T, p *testProject, id string) {
	t.Helper()
	_, events, err := p.ws.RunEvents(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(store.DefaultPath(filepath.Join(p.dir, "data")))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	rec := st.Recorder()
	for _, e := range events {
		e.RunID, e.Time = retimedID, base.Add(time.Duration(e.Seq-1)*100*time.Millisecond)
		switch pl := e.Payload.(type) {
		case engine.ModelCalled:
			pl.Ms = 80
			e.Payload = pl
		case engine.ToolEnded:
			pl.Ms = 60
			e.Payload = pl
		}
		rec.Event(e)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestTimelineScreens pins the Timeline and Spend panes on an earlier run
// of the flow plan, recorded again with fixed times.
func TestTimelineScreens(t *testing.T) {
	charting := func(mode timeview.Mode) func(m model) bool {
		return func(m model) bool {
			return m.runPage.charting && m.runPage.chart.Mode() == mode && m.runPage.run.stored == retimedID
		}
	}
	for _, tc := range []struct {
		name string
		w, h int
		key  tea.Msg
		mode timeview.Mode
	}{
		{"timeline_80x24", 80, 24, keyTimeline, timeview.ModeTimeline},
		{"timeline_160x48", 160, 48, keyTimeline, timeview.ModeTimeline},
		{"spend_80x24", 80, 24, keySpend, timeview.ModeSpend},
		{"spend_160x48", 160, 48, keySpend, timeview.ModeSpend},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := startScreens(t, tc.w, tc.h)
			r.await("the run to end", ended, keyRun, keySubmit)
			runs := r.p.waitRecorded(t, "flow", 1)
			retimed(t, r.p, runs[0].ID)
			r.await("the retimed run", func(m model) bool { return m.runPage.run.stored == retimedID }, command("open "+retimedID))
			screen := normalise(r.await("the chart", charting(tc.mode), tc.key))
			r.quit()
			golden.RequireEqual(t, screen+"\n")
		})
	}
}

// BenchmarkTimelineFrame10kItems renders one frame of the workbench at
// 160x48 with the Timeline in the detail pane, over a run of 10,000 map
// items (50,000 events) still going, the bar of the item half-way down
// selected.
func BenchmarkTimelineFrame10kItems(b *testing.B) {
	m := bigRunModel(b)
	m.runPage.run.timeline = timeline.FromEvents(livetest.BigRun(10_000)[:50_000-2])
	m.runPage.toggleChart(timeview.ModeTimeline)
	if !strings.Contains(m.render(), "do.5000") {
		b.Fatalf("the selected item's bar is not on screen:\n%s", m.render())
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = m.View()
	}
}

// BenchmarkTimelinePane10kItems renders the Timeline pane alone (80x46)
// over the same run: the part of a frame the waterfall costs.
func BenchmarkTimelinePane10kItems(b *testing.B) {
	m := bigRunModel(b)
	m.runPage.run.timeline = timeline.FromEvents(livetest.BigRun(10_000)[:50_000-2])
	m.runPage.toggleChart(timeview.ModeTimeline)
	m.render()
	chart := &m.runPage.chart
	b.ReportAllocs()
	for b.Loop() {
		chart.Select("E1/do.5000")
		_ = chart.View()
	}
}
