package runs_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/record"
	"github.com/stepwise-dev/stepwise/tui/common"
	"github.com/stepwise-dev/stepwise/tui/common/commontest"
	"github.com/stepwise-dev/stepwise/tui/runs"
)

var (
	enter = tea.KeyPressMsg{Code: tea.KeyEnter}
	esc   = tea.KeyPressMsg{Code: tea.KeyEscape}
	down  = tea.KeyPressMsg{Code: 'j', Text: "j"}
	up    = tea.KeyPressMsg{Code: 'k', Text: "k"}
	yKey  = tea.KeyPressMsg{Code: 'y', Text: "y"}
	dKey  = tea.KeyPressMsg{Code: 'd', Text: "d"}
	qKey  = tea.KeyPressMsg{Code: 'q', Text: "q"}
	space = tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	end   = tea.KeyPressMsg{Code: tea.KeyEnd}
)

func newPanel(color bool, w, h int, list []record.RunSummary) runs.Model {
	m := runs.New(newCommon(color))
	m.SetSize(w, h)
	m.SetRuns(list)
	m.Focus()
	return m
}

// press sends keys in turn and returns the model, the message of the last
// key's command (nil when it has none) and whether that closed the panel.
func press(m runs.Model, keys ...tea.KeyPressMsg) (runs.Model, tea.Msg, bool) {
	var msg tea.Msg
	closed := false
	for _, k := range keys {
		_, cmd := m.Update(k)
		msg, closed = nil, false
		for _, out := range commontest.Messages(cmd) {
			if _, ok := out.(common.CloseOverlay); ok {
				closed = true
			} else {
				msg = out
			}
		}
	}
	return m, msg, closed
}

// TestPanelKeys lists two real runs (the failed one is the newer, so it is
// first) and checks what each key asks of the root.
func TestPanelKeys(t *testing.T) {
	p := newProject(t)
	okID, failedID := p.recordBoth(t)
	list, err := p.ws.Runs(context.Background(), record.RunFilter{Plan: "small"})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != failedID {
		t.Fatalf("the store lists %+v", list)
	}
	cases := []struct {
		name   string
		keys   []tea.KeyPressMsg
		want   tea.Msg
		closes bool
		marked string
	}{
		{name: "enter opens the selected run", keys: []tea.KeyPressMsg{enter}, want: runs.Open{ID: failedID}, closes: true},
		{name: "y replays it", keys: []tea.KeyPressMsg{down, yKey}, want: runs.Replay{ID: okID}, closes: true},
		{name: "d marks it", keys: []tea.KeyPressMsg{down, dKey}, marked: okID},
		{name: "d on another diffs it against the mark", keys: []tea.KeyPressMsg{down, dKey, up, dKey}, want: runs.Diff{Base: okID, Other: failedID}, closes: true},
		{name: "d on the marked run unmarks it", keys: []tea.KeyPressMsg{dKey, dKey}},
		{name: "esc unmarks", keys: []tea.KeyPressMsg{dKey, esc}},
		{name: "the mark outlives moving", keys: []tea.KeyPressMsg{dKey, down, up, down}, marked: failedID},
		{name: "esc without a mark closes the panel", keys: []tea.KeyPressMsg{esc}, closes: true},
		{name: "q closes it, mark or not", keys: []tea.KeyPressMsg{dKey, qKey}, marked: failedID, closes: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, msg, closed := press(newPanel(false, 90, 8, list), tc.keys...)
			if msg != tc.want || closed != tc.closes {
				t.Errorf("message %#v, closed %v; want %#v, closed %v", msg, closed, tc.want, tc.closes)
			}
			if m.Marked() != tc.marked {
				t.Errorf("marked %q, want %q", m.Marked(), tc.marked)
			}
			v := ansi.Strip(m.View())
			if got := strings.Count(v, "◆"); tc.marked == "" && got != 0 || tc.marked != "" && got != 2 {
				t.Errorf("%d diamonds (want a mark on the row and one in the footer when marked):\n%s", got, v)
			}
		})
	}

	// A refresh keeps the selection and the mark on their runs, though a
	// new run comes first.
	m, _, _ := press(newPanel(false, 90, 8, list), down, dKey)
	newer, _ := p.record(t, nil)
	list, err = p.ws.Runs(context.Background(), record.RunFilter{Plan: "small"})
	if err != nil {
		t.Fatal(err)
	}
	m.SetRuns(list)
	if r, _ := m.Selected(); r.ID != okID || m.Cursor() != 2 || m.Marked() != okID || list[0].ID != newer {
		t.Errorf("after a refresh the selection is %s (at %d) and the mark %s, want both %s", r.ID, m.Cursor(), m.Marked(), okID)
	}
	m.SetRuns(list[:1])
	if r, _ := m.Selected(); r.ID != newer || m.Marked() != "" {
		t.Errorf("with the runs gone the selection is %s and the mark %q", r.ID, m.Marked())
	}
}

// TestPanelRows pins the columns of a row, for runs of every status.
func TestPanelRows(t *testing.T) {
	now := time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)
	cost := 0.0123
	tiny := 0.00004
	list := []record.RunSummary{
		{ID: "0123456789abcdef", Status: "ok", StartedAt: time.Date(2026, 11, 29, 14, 3, 22, 0, time.UTC), Duration: 2200 * time.Millisecond, Held: 1900 * time.Millisecond,
			StepsExecuted: 3, Usage: record.Spend{Calls: 2, Tokens: 1240, CostUSD: &cost}, Decided: 1, Made: engine.MadeDebug, Inputs: json.RawMessage(`{"topic":"bugs"}`)},
		{ID: "fedcba9876543210", Status: "failed", StartedAt: time.Date(2026, 11, 27, 14, 3, 0, 0, time.UTC), Duration: 185 * time.Second,
			StepsExecuted: 12, Usage: record.Spend{Calls: 9, Tokens: 45600}, Made: engine.MadeReplay, Parent: "0123456789abcdef"},
		{ID: "short", Status: "running", Interrupted: true, StartedAt: time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC), Duration: 840 * time.Millisecond},
		{ID: "aaaaaaaaaaaaaaaa", Status: "running", StartedAt: time.Date(2026, 11, 29, 14, 59, 0, 0, time.UTC), Duration: time.Minute,
			Usage: record.Spend{Calls: 1, Tokens: 310_500, CostUSD: &tiny}},
		{ID: "bbbbbbbbbbbbbbbb", Status: "exited", StartedAt: time.Date(2026, 11, 29, 1, 0, 0, 0, time.UTC), Duration: 3725 * time.Second},
		{ID: "cccccccccccccccc", Status: "aborted", StartedAt: time.Date(2026, 11, 29, 1, 0, 0, 0, time.UTC)},
	}
	m := newPanel(false, 118, 9, list)
	m.Now = now
	want := []string{
		"┏━ Runs 6 runs ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓",
		"┃   run           started       status           time    held  steps  tokens      cost  made    inputs               ┃",
		"┃▸  0123456789ab  14:03:22      ✓ ok ✎           2.2s    1.9s      3    1.2k   $0.0123  debug   {\"topic\":\"bugs\"}     ┃",
		"┃   fedcba987654  Nov 27 14:03  ✗ failed        3m05s             12   45.6k         -  replay                       ┃",
		"┃   short         2025-03-01    ○ interrupted   840ms              0       0         -  -                            ┃",
		"┃   aaaaaaaaaaaa  14:59:00      ● running       1m00s              0    311k  <$0.0001  -                            ┃",
		"┃   bbbbbbbbbbbb  01:00:00      ⏏ exited        1h02m              0       0         -  -                            ┃",
		"┃   cccccccccccc  01:00:00      ■ aborted           -              0       0         -  -                            ┃",
		"┗━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━ enter open · y/Y replay · d diff · esc close ━┛",
	}
	if got := strings.Split(ansi.Strip(m.View()), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("view:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// With no now set, every run is an earlier one.
	m.Now = time.Time{}
	if v := ansi.Strip(m.View()); !strings.Contains(v, "0123456789ab  Nov 29 ") {
		t.Errorf("without now:\n%s", v)
	}
}

func TestPanelEmpty(t *testing.T) {
	m := newPanel(false, 50, 5, nil)
	lines := strings.Split(ansi.Strip(m.View()), "\n")
	if lines[0] != "┏━ Runs ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓" || lines[1] != "┃ no earlier runs of this plan: r runs it        ┃" {
		t.Errorf("empty panel:\n%s", strings.Join(lines, "\n"))
	}
	for _, k := range []tea.KeyPressMsg{enter, yKey, dKey, down} {
		if m, msg, _ := press(m, k); msg != nil || m.Marked() != "" {
			t.Errorf("%s on no runs sent %#v, marked %q", k, msg, m.Marked())
		}
	}
}

// TestPanelMouseAndScroll checks clicks by line (the header takes the
// first) and the wheel, which takes the selection along.
func TestPanelMouseAndScroll(t *testing.T) {
	var list []record.RunSummary
	for i := range 20 {
		list = append(list, record.RunSummary{ID: string(rune('a'+i)) + "0000", Status: "ok"})
	}
	m := newPanel(false, 60, 7, list) // four runs in view
	m.ClickAt(4)
	if m.Cursor() != 2 {
		t.Errorf("a click on line 4 selected %d, want 2", m.Cursor())
	}
	m.ClickAt(1) // the header
	m.ClickAt(6) // the border
	if m.Cursor() != 2 {
		t.Errorf("clicks off the rows moved the selection to %d", m.Cursor())
	}
	m.Scroll(10)
	if m.Cursor() != 10 {
		t.Errorf("after scrolling 10 the selection is %d, want 10 (the top line)", m.Cursor())
	}
	m.ClickAt(2)
	if r, _ := m.Selected(); r.ID != "k0000" {
		t.Errorf("a click after scrolling selected %s", r.ID)
	}
	m, _, _ = press(m, end)
	lines := strings.Split(ansi.Strip(m.View()), "\n")
	if !strings.Contains(lines[5], "▸  t0000") || !strings.Contains(lines[6], " 20/20 · enter open") {
		t.Errorf("at the end:\n%s", strings.Join(lines, "\n"))
	}
}

// TestPanelSizes holds the view to its box at every size, with colour and
// without, selected, marked and scrolled.
func TestPanelSizes(t *testing.T) {
	p := newProject(t)
	p.recordBoth(t)
	list, err := p.ws.Runs(context.Background(), record.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, color := range []bool{false, true} {
		for _, size := range [][2]int{{0, 0}, {1, 1}, {2, 2}, {10, 3}, {30, 4}, {81, 10}, {140, 40}} {
			m := newPanel(color, size[0], size[1], list)
			m.Now = time.Now()
			m, _, _ = press(m, dKey, down)
			checkSize(t, m.View(), size[0], size[1])
			checkSize(t, newPanel(color, size[0], size[1], nil).View(), size[0], size[1])
		}
	}
}

// checkSize fails unless view is exactly width by height cells.
func checkSize(t *testing.T, view string, width, height int) {
	t.Helper()
	if height == 0 {
		if view != "" {
			t.Errorf("%dx%d: view %q", width, height, view)
		}
		return
	}
	lines := strings.Split(view, "\n")
	if len(lines) != height {
		t.Errorf("%dx%d: %d lines", width, height, len(lines))
	}
	for i, l := range lines {
		if w := ansi.StringWidth(l); w != width {
			t.Errorf("%dx%d: line %d is %d wide: %q", width, height, i, w, ansi.Strip(l))
		}
	}
}

// TestPanelScrollsSideways checks a panel too narrow for its rows says so
// in its title, and that → and ← scroll the columns after the run id, so
// that every column and the whole inputs show at 60 columns.
func TestPanelScrollsSideways(t *testing.T) {
	inputs := `{"max_related":5,"symptom":"checkout timeouts for eu customers after the deploy"}`
	list := []record.RunSummary{{ID: "a0000", Status: "ok", Made: "debug", StepsExecuted: 7, Inputs: json.RawMessage(inputs)}}
	m := newPanel(false, 60, 7, list)
	view := ansi.Strip(m.View())
	if !strings.Contains(view, "←/h →/l scroll") || strings.Contains(view, inputs) {
		t.Fatalf("a narrow panel:\n%s", view)
	}
	right := tea.KeyPressMsg{Code: tea.KeyRight}
	left := tea.KeyPressMsg{Code: tea.KeyLeft}
	var seen strings.Builder
	for range 30 {
		m, _, _ = press(m, right)
		view := ansi.Strip(m.View())
		if !strings.Contains(view, "▸  a0000         ") {
			t.Fatalf("scrolled, the run id does not stay:\n%s", view)
		}
		for _, l := range strings.Split(view, "\n") {
			if ansi.StringWidth(l) != 60 {
				t.Fatalf("a line %d wide: %q", ansi.StringWidth(l), l)
			}
		}
		seen.WriteString(view)
	}
	for _, part := range []string{"debug", `{"max_related":5`, `"symptom":"checkout`, `eu customers after the deploy"}`} {
		if !strings.Contains(seen.String(), part) {
			t.Errorf("scrolled all the way, %q never shows:\n%s", part, seen.String())
		}
	}
	m, _, _ = press(m, repeatKey(left, 30)...)
	if got := ansi.Strip(m.View()); !strings.Contains(got, "started") {
		t.Errorf("scrolled back, the first columns do not show:\n%s", got)
	}
}

func repeatKey(k tea.KeyPressMsg, n int) []tea.KeyPressMsg {
	out := make([]tea.KeyPressMsg, n)
	for i := range out {
		out[i] = k
	}
	return out
}

// TestPanelResizeScrollsBack: a sideways scroll made in a narrow panel
// does not stay once the panel is widened, where it would cut a column
// mid-value; the panel draws as one opened at the new width.
func TestPanelResizeScrollsBack(t *testing.T) {
	inputs := `{"max_related":5,"symptom":"checkout timeouts for eu customers after the deploy"}`
	list := []record.RunSummary{{ID: "a0000", Status: "ok", Made: "debug", StepsExecuted: 7, Inputs: json.RawMessage(inputs)}}
	for _, width := range []int{90, 200} {
		m := newPanel(false, 60, 7, list)
		m, _, _ = press(m, repeatKey(tea.KeyPressMsg{Code: tea.KeyRight}, 3)...)
		m.SetSize(width, 7)
		if got, want := ansi.Strip(m.View()), ansi.Strip(newPanel(false, width, 7, list).View()); got != want {
			t.Errorf("widened to %d after a scroll:\n%s\nwant as opened at that width:\n%s", width, got, want)
		}
	}
}
