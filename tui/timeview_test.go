package tui

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/stepwise-dev/stepwise/debugger/workspace"
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/store"
	"github.com/stepwise-dev/stepwise/tui/live/livetest"
	"github.com/stepwise-dev/stepwise/tui/timeview"
)

var (
	keyTimeline = tea.KeyPressMsg{Code: 'w', Text: "w"}
	keySpend    = tea.KeyPressMsg{Code: '$', Text: "$"}
	keyZoomIn   = tea.KeyPressMsg{Code: '+', Text: "+"}
	keyZoomOut  = tea.KeyPressMsg{Code: '-', Text: "-"}
)

// retimedID is the id of the run retimed records.
const retimedID = "7133700000000002"

// retimed records the events of the run id again as a run of their own,
// with fixed times: each event 100ms after the one before, each model call
// 80ms long, each tool call 60ms, and each step as long as its events
// say. The run's shape is the engine's; only the clock is the test's, so
// that a waterfall can be pinned.
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
		case engine.StepEnded:
			// A step's time is its events' (no step stop held it).
			pl.Ms = 0
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
	m.runPage.toggleChart(timeview.ModeTimeline)
	m.render()
	chart := &m.runPage.chart
	b.ReportAllocs()
	for b.Loop() {
		chart.Select("E1/do.5000")
		_ = chart.View()
	}
}

// TestLiveTimelineGrows runs a plan whose map calls a slow scripted model
// for each of four items, one at a time, with the Timeline on show: while
// the run goes, bars appear and the open ones reach further, and the
// waterfall draws more rows; when it ends, no bar is open.
func TestLiveTimelineGrows(t *testing.T) {
	dir := t.TempDir()
	replies := "replies:\n"
	for range 4 {
		replies += "  - { match: \"E1/do.*\", reply: { text: \"seen\", usage: { input_tokens: 100, output_tokens: 5 }, delay_ms: 150 } }\n"
	}
	files := map[string]string{
		".stepwise/config.toml": fmt.Sprintf(projectConfig, filepath.Join(dir, "data"), "sqlite"),
		"replies.yaml":          replies,
		".stepwise/plans/slowmap.yaml": `identifier: slowmap
name: Slow map
description: Asks a slow model about four items, one at a time.
steps:
  - id: E1
    tool_name: map
    input:
      over: [a, b, c, d]
      concurrency: 1
      do: { tool_name: builtin__infer, input: { instruction: "Look at {{item}}" } }
`,
	}
	for name, text := range files {
		writeTestFile(t, filepath.Join(dir, name), text)
	}
	p := &testProject{dir: dir, planDir: filepath.Join(dir, ".stepwise", "plans"), emitted: &eventCount{}}
	ws, err := workspace.Open(dir, workspace.Options{LookupEnv: livetest.IsolatedEnv(dir), Sinks: []engine.Sink{p.emitted}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	p.ws = ws
	p.docs = []workspace.Document{LoadDocument(ws, filepath.Join(p.planDir, "slowmap.yaml"))}
	b := newBenchOn(t, p, 120, 30)
	b.send(keyRun)
	b.until("the first item to run", func(m model) bool {
		bar, ok := m.runPage.run.timeline.Bar("E1/do.0")
		return ok && bar.Open()
	})
	b.send(keyTimeline)
	tl := b.m.runPage.run.timeline
	firstBars, firstNow, firstScreen := tl.Len(), tl.Now(), b.screen()
	b.until("the third item to run", func(m model) bool {
		bar, ok := m.runPage.run.timeline.Bar("E1/do.2")
		return ok && bar.Open()
	})
	if m, _ := tl.Bar("E1"); !m.Open() || tl.Len() <= firstBars || !tl.Now().After(firstNow.Add(250*time.Millisecond)) {
		t.Errorf("while the map ran: open %v, %d bars then %d, now %v then %v", m.Open(), firstBars, tl.Len(), firstNow, tl.Now())
	}
	if screen := b.screen(); !strings.Contains(screen, "do.2") || strings.Contains(firstScreen, "do.2") {
		t.Errorf("the waterfall did not grow a row for do.2; first:\n%s\nthen:\n%s", firstScreen, screen)
	}
	// The map's row counts its items, and the status line says the
	// rest: two of four done, one running, at what rate.
	if screen := b.screen(); !strings.Contains(lineWith(screen, "E1  map"), "map  2/4") || !strings.Contains(screen, "E1 2/4 items · 1 running · ") || !strings.Contains(screen, "/s · ETA ") {
		t.Errorf("the running map's progress does not show:\n%s", screen)
	}
	b.until("the run to end", ended)
	b.settle()
	for _, bar := range tl.Bars(0, tl.Len()) {
		if bar.Open() {
			t.Errorf("%s is open after the run ended", bar.Path)
		}
	}
	if got := tl.Len(); got != 5 {
		t.Errorf("%d bars, want the map and its four items", got)
	}
}

// TestTimelineSelectsTreeRows shows a finished run's timeline, clicks a
// bar and moves with the keys in it: the run tree selects each bar's row,
// and a row selected in the tree selects its bar.
func TestTimelineSelectsTreeRows(t *testing.T) {
	b := newBench(t, 120, 40)
	b.runToEnd(docFlow)
	b.press(keyTimeline)
	if !b.m.runPage.charting || !strings.Contains(b.screen(), "Timeline") {
		t.Fatalf("w did not show the timeline:\n%s", b.screen())
	}
	// The bar's label, where the timeline draws it: one space before the
	// tool, where the tree leaves two.
	x, y := -1, -1
	for i, line := range strings.Split(b.screen(), "\n") {
		if at := strings.Index(line, "do.1 u"); at >= 0 {
			x, y = len([]rune(line[:at])), i
		}
	}
	if y < 0 {
		t.Fatalf("no bar for do.1:\n%s", b.screen())
	}
	b.press(tea.MouseClickMsg{X: x, Y: y, Button: tea.MouseLeft})
	if got := b.m.runPage.selectedPath(); got != "E1/do.1" || b.m.page.focused() != paneDetail {
		t.Fatalf("a click on do.1's bar selected %q in the tree, focus %v", got, b.m.page.focused())
	}
	b.press(keyDown)
	if got, bar := b.m.runPage.selectedPath(), b.m.runPage.chart.Selected(); got != "E1/do.2" || bar != got {
		t.Errorf("down in the timeline: tree on %q, bar %q; want E1/do.2", got, bar)
	}
	b.press(keyTab, keyHome)
	b.screen()
	if got, bar := b.m.runPage.selectedPath(), b.m.runPage.chart.Selected(); got != "E0" || bar != "E0" {
		t.Errorf("home in the tree: tree on %q, bar %q; want E0", got, bar)
	}
	// + and - zoom the timeline with the tree focused, as its footer
	// says; selecting a row then pans to its bar.
	b.press(keyZoomIn, keyZoomIn, keyZoomIn)
	if got := b.m.runPage.chart.View(); !strings.Contains(got, "· +/- zoom") || strings.Contains(got, "whole run") {
		t.Errorf("+ with the tree focused did not zoom the timeline:\n%s", b.screen())
	}
	b.press(keyEnd, keyArrowUp)
	screen := b.screen()
	_, repairBar, _ := strings.Cut(screen, "│      repair")
	repairBar, _, _ = strings.Cut(repairBar, "\n")
	if b.m.runPage.selectedPath() != "E2/agent.2/repair" || !strings.Contains(repairBar, "█") {
		t.Errorf("selecting the repair pass (%s) did not pan the timeline to its bar:\n%s", b.m.runPage.selectedPath(), screen)
	}
	b.press(keyZoomOut, keyZoomOut, keyZoomOut)
	if !strings.Contains(b.m.runPage.chart.View(), "whole run") {
		t.Errorf("- with the tree focused did not zoom out:\n%s", b.screen())
	}
	b.press(keySpend)
	if b.m.runPage.chart.Mode() != timeview.ModeSpend || !strings.Contains(b.screen(), "By step, most expensive first") {
		t.Errorf("$ did not show the spend:\n%s", b.screen())
	}
	b.press(keySpend)
	if b.m.runPage.charting {
		t.Errorf("$ again did not give the inspector back:\n%s", b.screen())
	}
}

// lineWith is the first line of screen that holds text, or "".
func lineWith(screen, text string) string {
	for _, line := range strings.Split(screen, "\n") {
		if strings.Contains(line, text) {
			return line
		}
	}
	return ""
}

// TestChartHintGoesWithTheView: w with no run says what to do instead;
// once R opens the runs list, that no longer applies and the status line
// says nothing of it. A notice that is no hint stays.
func TestChartHintGoesWithTheView(t *testing.T) {
	b := newBench(t, 120, 40)
	b.press(keyTimeline)
	wantNotice(t, b, "no run to chart")
	b.press(keyRuns)
	wantOverlay(t, b, overlayRuns)
	if b.m.notice.text != "" || strings.Contains(b.screen(), "no run to chart") {
		t.Errorf("the hint stayed on with the runs list open: %q\n%s", b.m.notice.text, b.screen())
	}
	b.press(keyEsc, keyTimeline)
	wantNotice(t, b, "no run to chart")
	b.press(keyTimeline)
	wantNotice(t, b, "no run to chart")
}
