package timeview

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/stepwise-dev/stepwise/debugger/timeline"
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/path"
	"github.com/stepwise-dev/stepwise/tui/common"
	"github.com/stepwise-dev/stepwise/tui/live/livetest"
)

func TestTimelineAxis(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		name  string
		from  time.Duration
		span  time.Duration
		width int
		want  string
	}{
		{"a second and a half over 60 columns", 0, 1500 * time.Millisecond, 60, "╵0ms                ╵500ms              ╵1.0s               "},
		{"ticks past the start when zoomed in", 150 * time.Millisecond, 100 * time.Millisecond, 40, "╵150ms              ╵200ms              "},
		{"whole minutes", 0, 10 * time.Minute, 50, "╵0ms                     ╵5m00s                   "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Axis(timeline.Window{Start: start.Add(tc.from), Span: tc.span}, start, tc.width)
			if got != tc.want || ansi.StringWidth(got) != tc.width {
				t.Errorf("axis\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

// pane is the Timeline pane on a run of items map items, 80 by 20.
func pane(t *testing.T, items int) (*Model, *timeline.Timeline) {
	t.Helper()
	tl := timeline.FromEvents(livetest.BigRun(items))
	m := New(common.New(common.NewTheme(true, false), common.DefaultKeyMap()))
	m.SetSize(80, 20)
	m.Show(tl)
	m.Focus()
	return &m, tl
}

func TestTimelineZoomAndPan(t *testing.T) {
	m, tl := pane(t, 100)
	whole := tl.Whole()
	if w := m.window(); w != whole || m.zoomWords() != "whole run · +/- zoom · ←/→ pan" {
		t.Fatalf("unzoomed window %+v, want the whole run %+v (%s)", w, whole, m.zoomWords())
	}
	press := func(k tea.KeyPressMsg) { *m, _ = m.Update(k) }
	press(tea.KeyPressMsg{Code: '+', Text: "+"})
	w := m.window()
	if w.Span != whole.Span/2 || w.Start != whole.Start.Add(whole.Span/4) {
		t.Errorf("zoomed in about the middle: %v from %v, want %v from %v", w.Span, w.Start.Sub(whole.Start), whole.Span/2, whole.Span/4)
	}
	press(tea.KeyPressMsg{Code: tea.KeyRight})
	if got := m.window().Start.Sub(w.Start); got != w.Span/8 {
		t.Errorf("panned right by %v, want an eighth of the window, %v", got, w.Span/8)
	}
	for range 20 {
		press(tea.KeyPressMsg{Code: tea.KeyRight})
	}
	if end := m.window().Start.Add(m.window().Span); !end.Equal(whole.Start.Add(whole.Span)) {
		t.Errorf("panned past the end of the run: the window ends %v after its start", end.Sub(whole.Start))
	}
	for range 40 {
		press(tea.KeyPressMsg{Code: tea.KeyLeft})
	}
	if m.window().Start != whole.Start {
		t.Errorf("panned before the start of the run: %v", m.window().Start.Sub(whole.Start))
	}
	if !strings.Contains(m.View(), "0ms–") {
		t.Errorf("the footer does not say the part in view:\n%s", m.View())
	}
	for range 3 {
		press(tea.KeyPressMsg{Code: '-', Text: "-"})
	}
	if m.window() != whole {
		t.Errorf("zoomed out past the whole run: %+v", m.window())
	}
	m.Wheel(tea.MouseWheelMsg{Button: tea.MouseWheelUp, Mod: tea.ModCtrl})
	if m.window().Span != whole.Span/2 {
		t.Errorf("ctrl+wheel up zoomed to %v, want %v", m.window().Span, whole.Span/2)
	}

	// With a bar selected, zooming in keeps it in view.
	m.Zoom(0.5)
	m.Select("E1/do.3")
	bar, _ := tl.Bar("E1/do.3")
	for range 4 {
		press(tea.KeyPressMsg{Code: '+', Text: "+"})
	}
	w = m.window()
	if bar.Start.Before(w.Start) || bar.End.After(w.Start.Add(w.Span)) {
		t.Errorf("zoomed in to %v from %v, and do.3 (%v to %v) is out of view", w.Span, w.Start.Sub(whole.Start), bar.Start.Sub(whole.Start), bar.End.Sub(whole.Start))
	}

	// Selecting a bar out of view pans to it; a pan away from it holds
	// while the selection stays, as the run tree selects it every frame.
	inView := func(p string) bool {
		b, _ := tl.Bar(p)
		w := m.window()
		return b.End.After(w.Start) && b.Start.Before(w.Start.Add(w.Span))
	}
	if inView("E1/do.90") {
		t.Fatalf("do.90 is in view already at %v from %v", w.Span, w.Start.Sub(whole.Start))
	}
	m.Select("E1/do.90")
	if !inView("E1/do.90") {
		t.Errorf("selecting do.90 did not pan to it: %v from %v", m.window().Span, m.window().Start.Sub(whole.Start))
	}
	for range 40 {
		press(tea.KeyPressMsg{Code: tea.KeyLeft})
	}
	m.Select("E1/do.90")
	if inView("E1/do.90") {
		t.Errorf("selecting the bar selected already undid a pan")
	}
	m.Blur()
	if got := m.zoomWords(); !strings.HasSuffix(got, " · +/- zoom") {
		t.Errorf("an unfocused pane's footer says %q; the arrows do not pan from the tree", got)
	}
}

func TestTimelineSelectBars(t *testing.T) {
	m, tl := pane(t, 100)
	press := func(k tea.KeyPressMsg) { *m, _ = m.Update(k) }
	press(tea.KeyPressMsg{Code: 'j', Text: "j"})
	// Nothing was selected: down selects the second bar.
	if m.Selected() != "E1/do.0" {
		t.Errorf("after j: %q", m.Selected())
	}
	press(tea.KeyPressMsg{Code: tea.KeyEnd})
	last := tl.Bars(tl.Len()-1, 1)[0].Path
	if m.Selected() != last || !strings.Contains(m.View(), "do.99") {
		t.Errorf("after end: %q, want %q on screen:\n%s", m.Selected(), last, m.View())
	}
	// Line 2 of the pane is the first row under the axis.
	if !m.ClickAt(2) || m.Selected() != tl.Bars(m.scroll.Offset, 1)[0].Path {
		t.Errorf("a click on the first row selected %q", m.Selected())
	}
	if m.ClickAt(1) || m.ClickAt(40) {
		t.Error("a click on the axis or below the rows selected a bar")
	}
	m.Select("E1/do.50")
	if !strings.Contains(m.View(), "do.50 agent") {
		t.Errorf("the selected bar is not in view:\n%s", m.View())
	}
	m.Select("nowhere")
	if m.Selected() != "E1/do.50" {
		t.Errorf("a path with no bar moved the selection to %q", m.Selected())
	}
}

func TestTimelineSpendPane(t *testing.T) {
	m, _ := pane(t, 3)
	m.SetMode(ModeSpend)
	got := ansi.Strip(m.View())
	for _, want := range []string{"Spend", "big · running", "3 calls", "By step, most expensive first", "E1/do.* ×3", "  E1/do.0 ", "By model", "$0.0001", "208 tok"} {
		if !strings.Contains(got, want) {
			t.Errorf("the spend pane does not show %q:\n%s", want, got)
		}
	}
}

// TestTimelineSpendPaneGroupsItems shows the spend of a map of 10,000
// items: one line for the items' step, the dearest three under it and
// a count of the others, not ten thousand lines.
func TestTimelineSpendPaneGroupsItems(t *testing.T) {
	m, _ := pane(t, 10000)
	m.SetSize(100, 20)
	m.SetMode(ModeSpend)
	got := ansi.Strip(m.View())
	for _, want := range []string{"E1/do.* ×10000", "  E1/do.0 ", "  E1/do.1 ", "  E1/do.2 ", "and 9997 more items", "10000 calls"} {
		if !strings.Contains(got, want) {
			t.Errorf("the spend pane does not show %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "E1/do.3 ") || strings.Contains(got, "E1/do.10 ") {
		t.Errorf("the spend pane lists a fourth item:\n%s", got)
	}
}

// TestTimelineSpendPaneNarrow draws the spend in panes from roomy to
// narrow: every figure shows whole, the header breaks between its pieces
// rather than cutting one, and a long label is cut in its middle.
func TestTimelineSpendPaneNarrow(t *testing.T) {
	for _, width := range []int{100, 60, 44, 40} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			m, _ := pane(t, 3)
			m.SetSize(width, 20)
			m.SetMode(ModeSpend)
			got := ansi.Strip(m.View())
			for _, want := range []string{"$0.0003", "$0.0001", "624 tok", "208 tok", "3 calls", "1 call"} {
				if !strings.Contains(got, want) {
					t.Errorf("the spend pane does not show %q whole:\n%s", want, got)
				}
			}
			// The map's line: its step's path, cut in the middle or not,
			// and its count of items whole.
			if !strings.Contains(got, "E1/do.* ×3 ") && !strings.Contains(got, "E1…o.* ×3 ") {
				t.Errorf("the map's label is not its path cut in the middle and its count:\n%s", got)
			}
			for _, line := range strings.Split(got, "\n") {
				if strings.Contains(line, "…") && strings.Index(line, "…") > 8 {
					t.Errorf("a line is cut at its end: %q", line)
				}
			}
		})
	}
}

// TestTimelineTextCut draws a run of 10,000 map items, one of which failed
// and one of which ran five seconds, in 200 rows: the map's row, then the
// failed item, then the slow one, each with its round; the map says how
// many items it left out, and the end how many rows.
func TestTimelineTextCut(t *testing.T) {
	events := livetest.BigRun(10000)
	for i, e := range events {
		switch {
		case e.Path == "E1/do.7000" && e.Kind == engine.EventStepEnd:
			p := e.Payload.(engine.StepEnded)
			p.Status, p.Ms = engine.StepFailed, 1
			events[i].Payload = p
		case e.Path == "E1/do.4242" && e.Kind == engine.EventStepEnd:
			p := e.Payload.(engine.StepEnded)
			p.Ms = 5000
			events[i].Payload = p
		}
	}
	out, err := Text(timeline.FromEvents(events), TextOptions{Width: 100, Rows: 200})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	// The summary, the axis, 200 rows, the map's note, the count and the
	// legend.
	if len(lines) != 205 {
		t.Fatalf("%d lines, want 205:\n%s", len(lines), out)
	}
	for i, want := range map[int]string{2: "  E1 map", 3: "✗   do.7000 agent", 4: "      agent.1", 5: "    do.4242 agent", 6: "      agent.1"} {
		if !strings.HasPrefix(lines[i], want) {
			t.Errorf("line %d is %q, want it to start %q", i, lines[i], want)
		}
	}
	if want := "    ⋯ 9900 more items"; lines[202] != want {
		t.Errorf("the map's note is %q, want %q", lines[202], want)
	}
	if want := "200 of 20001 rows shown"; !strings.HasPrefix(lines[203], want) {
		t.Errorf("the count is %q, want it to start %q", lines[203], want)
	}

	// The items themselves matched by --step are ranked the same way.
	items, err := Text(timeline.FromEvents(events), TextOptions{Width: 100, Rows: 4, Step: "E1/do.*"})
	if err != nil {
		t.Fatal(err)
	}
	lines = strings.Split(items, "\n")
	for i, want := range map[int]string{2: "✗ do.7000 agent", 3: "    agent.1", 4: "  do.4242 agent", 5: "    agent.1", 6: "4 of 20000 rows shown"} {
		if !strings.HasPrefix(lines[i], want) {
			t.Errorf("--step E1/do.*: line %d is %q, want it to start %q", i, lines[i], want)
		}
	}

	all, err := Text(timeline.FromEvents(events), TextOptions{Width: 100})
	if err != nil || strings.Count(all, "\n") != 20001+3 {
		t.Errorf("with no cap, %d lines (%v)", strings.Count(all, "\n"), err)
	}
}

// TestTimelineSpendPaneUnfolds selects rows of the spend of a map of
// 10,000 items in a short pane: right unfolds the map's line into every
// item, end reaches the model's line at the bottom, left on an item folds
// its group back, a click on the note of more items unfolds it, and the
// footer says which lines are in view.
func TestTimelineSpendPaneUnfolds(t *testing.T) {
	m, _ := pane(t, 10000)
	m.SetSize(100, 10)
	m.SetMode(ModeSpend)
	press := func(k tea.KeyPressMsg) { *m, _ = m.Update(k) }
	view := func() string { return ansi.Strip(m.View()) }
	if got := view(); strings.Contains(got, "By model") || !strings.Contains(got, "lines 1–8 of 11") {
		t.Fatalf("the top of the spend:\n%s", got)
	}
	press(tea.KeyPressMsg{Code: 'j', Text: "j"})
	press(tea.KeyPressMsg{Code: tea.KeyRight})
	if got := view(); !strings.Contains(got, "  E1/do.3 ") || !strings.Contains(got, "lines 1–8 of 10007") || strings.Contains(got, "more item") {
		t.Errorf("right on the map's line did not unfold it:\n%s", got)
	}
	press(tea.KeyPressMsg{Code: tea.KeyEnd})
	if got := view(); !strings.Contains(got, "By model") || !strings.Contains(got, "lines 10000–10007 of 10007") || !strings.Contains(got, "  E1/do.9999 ") {
		t.Errorf("end did not reach the bottom:\n%s", got)
	}
	press(tea.KeyPressMsg{Code: tea.KeyHome})
	press(tea.KeyPressMsg{Code: 'j', Text: "j"})
	press(tea.KeyPressMsg{Code: tea.KeyLeft})
	if got := view(); !strings.Contains(got, " of 11 ") || !strings.Contains(got, "and 9997 more items · → unfolds") {
		t.Errorf("left on an item did not fold its group:\n%s", got)
	}
	if !strings.HasSuffix(m.spendSelected, "\x00E1/do.*") {
		t.Errorf("folding from an item selected %q, want the map's line", m.spendSelected)
	}
	note := -1
	for y, line := range strings.Split(view(), "\n") {
		if strings.Contains(line, "more items") {
			note = y
		}
	}
	if !m.ClickAt(note) || !strings.Contains(view(), "of 10007") {
		t.Errorf("a click on the note of more items did not unfold the map:\n%s", view())
	}
	press(tea.KeyPressMsg{Code: tea.KeyHome})
	m.Wheel(tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	if got := view(); strings.Contains(got, "lines 1–") {
		t.Errorf("the wheel did not scroll:\n%s", got)
	}
}

// BenchmarkSpendPaneUnfolded10kItems draws the Spend pane (80x46) with the
// line of a map of 10,000 items unfolded, scrolled half-way down it.
func BenchmarkSpendPaneUnfolded10kItems(b *testing.B) {
	tl := timeline.FromEvents(livetest.BigRun(10000))
	m := New(common.New(common.NewTheme(true, false), common.DefaultKeyMap()))
	m.SetSize(80, 46)
	m.Show(tl)
	m.Focus()
	m.SetMode(ModeSpend)
	m.unfold("E1/do.*", true)
	m.spendScroll.Offset = 5000
	if !strings.Contains(m.View(), "E1/do.") {
		b.Fatalf("no item in view:\n%s", m.View())
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = m.View()
	}
}

// TestTimelineTextLabelsAndInstants draws a run with long tool names deep
// in an agent and a step that took no time: a label too long loses its
// middle, its end (.2) kept, and the instant is a mark of its own.
func TestTimelineTextLabelsAndInstants(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	var events []engine.Event
	add := func(ms int, p string, unit path.Kind, kind engine.EventKind, payload any) {
		events = append(events, engine.Event{Seq: uint64(len(events) + 1), Time: t0.Add(time.Duration(ms) * time.Millisecond), RunID: "r", Path: p, Unit: unit, Kind: kind, Payload: payload})
	}
	add(0, "", path.KindRun, engine.EventRunStart, engine.RunStarted{Plan: "issues"})
	add(0, "agent", path.KindStep, engine.EventStepStart, engine.StepStarted{Tool: "agent"})
	round := path.Round("agent", 1)
	add(400, round, path.KindRound, engine.EventModelCall, engine.ModelCalled{Site: "agent", Role: "chat", Ms: 400})
	for n := 1; n <= 2; n++ {
		call := path.Call(round, "tracker__get_issue_comments_of_a_pull_request", n)
		add(400, call, path.KindCall, engine.EventToolStart, engine.ToolStarted{Tool: "tracker__get_issue"})
		add(600, call, path.KindCall, engine.EventToolEnd, engine.ToolEnded{Tool: "tracker__get_issue", Ms: 200})
	}
	add(1000, "agent", path.KindStep, engine.EventStepEnd, engine.StepEnded{Tool: "agent", Status: engine.StepOK, Ms: 1000})
	add(1000, "stop", path.KindStep, engine.EventStepStart, engine.StepStarted{Tool: "exit"})
	add(1000, "stop", path.KindStep, engine.EventStepEnd, engine.StepEnded{Tool: "exit", Status: engine.StepOK})
	add(1000, "", path.KindRun, engine.EventRunEnd, engine.RunEnded{Status: engine.StatusOK})

	for _, width := range []int{100, 40} {
		out, err := Text(timeline.FromEvents(events), TextOptions{Width: width})
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(out, "\n")
		var calls []string
		for _, l := range lines {
			if strings.HasPrefix(strings.TrimSpace(l), "tr") {
				calls = append(calls, l)
			}
		}
		if len(calls) != 2 || !strings.Contains(calls[1], "…") || !strings.Contains(calls[1], ".2 ") {
			t.Errorf("width %d: the calls' labels do not keep their ends:\n%s", width, out)
		}
		for _, l := range lines {
			if strings.HasPrefix(l, "  stop exit") && !strings.HasSuffix(l, "│") {
				t.Errorf("width %d: the exit is drawn %q, want it to end in the instant mark", width, l)
			}
			if strings.HasPrefix(l, "  ag") && !strings.HasPrefix(l, "  agent") {
				t.Errorf("width %d: the agent's label is cut at its end: %q", width, l)
			}
		}
		if !strings.Contains(out, "│ instant") {
			t.Errorf("width %d: the legend does not say what │ is:\n%s", width, out)
		}
	}
}

// TestTimelineTextPainted draws the waterfall for a terminal: the same
// text as for a log once its colours are taken out, and model time, tool
// time and a failure each in the colour the workbench gives them.
func TestTimelineTextPainted(t *testing.T) {
	events := livetest.BigRun(3)
	for i, e := range events {
		if e.Path == "E1/do.1" && e.Kind == engine.EventStepEnd {
			p := e.Payload.(engine.StepEnded)
			p.Status = engine.StepFailed
			events[i].Payload = p
		}
	}
	theme := common.NewTheme(true, true)
	plain, err := Text(timeline.FromEvents(events), TextOptions{Width: 80})
	if err != nil {
		t.Fatal(err)
	}
	painted, err := Text(timeline.FromEvents(events), TextOptions{Width: 80, Theme: theme})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain, "\x1b[") {
		t.Errorf("the plain waterfall has escapes:\n%q", plain)
	}
	if got := ansi.Strip(painted); got != plain {
		t.Errorf("the painted waterfall reads\n%s\nwant, as the plain one,\n%s", got, plain)
	}
	for what, want := range map[string]string{
		"model time": paintOf(theme.Key).open + "█",
		"a failure":  paintOf(theme.Problem).open + "✗",
		"tool time":  paintOf(theme.Literal).open + "▒",
	} {
		if !strings.Contains(painted, want) {
			t.Errorf("%s is not painted as in the workbench (%q):\n%q", what, want, painted)
		}
	}
}

// TestDeepLabels cuts the labels of deep bars in a narrow label column:
// the indent gives way before a name falls under 8 cells, so that a
// round and a tool call read whole beside their siblings.
func TestDeepLabels(t *testing.T) {
	for _, tc := range []struct {
		label string
		depth int
		width int
		want  string
	}{
		{"agent.1", 4, 14, "agent.1"},
		{"tracker__get_issue", 5, 14, "tr…issue"},
		{"do.0", 6, 12, "do.0"},
	} {
		got := Label(timeline.Bar{Label: tc.label, Depth: tc.depth}, tc.width)
		if !strings.Contains(got, tc.want) || ansi.StringWidth(got) != tc.width {
			t.Errorf("%s %d deep in %d cells: %q; want %q in exactly %d cells", tc.label, tc.depth, tc.width, got, tc.want, tc.width)
		}
	}
}

// TestTimelineTextAborted draws a map whose run was aborted: the items
// the abort cut short are marked ■, as the run tree marks them, the one
// that failed of its own ✗, the note of items left out counts each, and
// the legend says what ■ is.
func TestTimelineTextAborted(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	var events []engine.Event
	add := func(at time.Time, p string, unit path.Kind, kind engine.EventKind, payload any) {
		events = append(events, engine.Event{Seq: uint64(len(events) + 1), Time: at, Path: p, Unit: unit, Kind: kind, Payload: payload})
	}
	add(t0, "", path.KindRun, engine.EventRunStart, engine.RunStarted{Plan: "p"})
	add(t0, "E1", path.KindStep, engine.EventStepStart, engine.StepStarted{Tool: "map"})
	for i := range 4 {
		add(t0, fmt.Sprintf("E1/do.%d/check", i), path.KindStep, engine.EventStepStart, engine.StepStarted{Tool: "user__check"})
	}
	add(t0.Add(time.Second), "E1/do.0/check", path.KindStep, engine.EventStepEnd, engine.StepEnded{Tool: "user__check", Status: engine.StepOK, Ms: 1000})
	add(t0.Add(time.Second), "E1/do.1/check", path.KindStep, engine.EventStepEnd, engine.StepEnded{Tool: "user__check", Status: engine.StepFailed, Ms: 1000})
	aborted := t0.Add(2 * time.Second)
	add(aborted, "E1/do.2/check", path.KindStep, engine.EventStepEnd, engine.StepEnded{Tool: "user__check", Status: engine.StepAborted, Ms: 2000})
	add(aborted, "E1", path.KindStep, engine.EventStepEnd, engine.StepEnded{Tool: "map", Status: engine.StepAborted, Ms: 2000})
	add(aborted, "", path.KindRun, engine.EventRunEnd, engine.RunEnded{Status: engine.StatusAborted})

	out, err := Text(timeline.FromEvents(events), TextOptions{Width: 80})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	for i, want := range map[int]string{2: "■ E1 map", 3: "    do.0", 5: "✗   do.1", 7: "■   do.2", 9: "■   do.3"} {
		if i >= len(lines) || !strings.HasPrefix(lines[i], want) {
			t.Errorf("line %d does not start %q:\n%s", i, want, out)
		}
	}
	if legend := lines[len(lines)-1]; !strings.HasSuffix(legend, "✗ failed  ■ aborted") {
		t.Errorf("the legend is %q, want it to say what ■ is", legend)
	}

	cut, err := Text(timeline.FromEvents(events), TextOptions{Width: 80, Rows: 3})
	if err != nil {
		t.Fatal(err)
	}
	if want := "⋯ 3 more items, 2 aborted\n"; !strings.Contains(cut, want) {
		t.Errorf("the note of items left out does not say %q:\n%s", want, cut)
	}
}
