package runs_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/stepwise-dev/stepwise/engine/record"
	"github.com/stepwise-dev/stepwise/tui/common"
	"github.com/stepwise-dev/stepwise/tui/common/commontest"
	"github.com/stepwise-dev/stepwise/tui/live/livetest"
	"github.com/stepwise-dev/stepwise/tui/runs"
)

// details records the ok run and the failed one and reads both back.
func details(t *testing.T) (a, b *record.RunDetail) {
	t.Helper()
	p := newProject(t)
	okID, failedID := p.recordBoth(t)
	a, err := p.ws.OpenRun(context.Background(), okID)
	if err != nil {
		t.Fatal(err)
	}
	b, err = p.ws.OpenRun(context.Background(), failedID)
	if err != nil {
		t.Fatal(err)
	}
	return a, b
}

func newDiff(color bool, w, h int, a, b *record.RunDetail) runs.DiffModel {
	m := runs.NewDiff(newCommon(color))
	m.SetSize(w, h)
	m.SetRuns(a, b)
	m.Focus()
	return m
}

// TestDiffView compares the ok run (A) with the failed one (B): E0's
// result differs (its input did), E2 failed in B, only A took the then
// branch and only B the else branch; E1 ran alike and is counted, and
// shown dimmed on space.
func TestDiffView(t *testing.T) {
	a, b := details(t)
	m := newDiff(false, 100, 14, a, b)
	lines := strings.Split(ansi.Strip(m.View()), "\n")
	if !strings.Contains(lines[0], "Diff A "+a.ID[:12]+" · B "+b.ID[:12]) {
		t.Errorf("title %q", lines[0])
	}
	if !strings.HasPrefix(lines[1], "┃ A "+a.ID[:12]+"  ✓ ok  4 steps  ") || !strings.HasPrefix(lines[2], "┃ B "+b.ID[:12]+"  ✗ failed  4 steps  ") {
		t.Errorf("run lines:\n%s\n%s", lines[1], lines[2])
	}
	want := [][]string{
		{"step", "status", "result", "tokens", "time"},
		{"≠", "E0", "ok", "1", "change"},
		{"≠", "E2", "ok", "→", "failed", "1", "change"},
		{"−", "E2/then", "ok", "→", "–", "–"},
		{"+", "E2/else", "–", "→", "failed", "–"},
		{"=", "1", "more", "step", "ran", "alike"},
	}
	for i, w := range want {
		// Each row of a step both runs ran ends in the time delta,
		// which the runs' timing decides: only what comes before it is
		// pinned. A step one run alone ran has none.
		got := strings.Fields(strings.TrimPrefix(strings.Trim(lines[3+i], "┃"), "▸"))
		if i > 0 && i < len(want)-1 && w[0] != "−" && w[0] != "+" {
			got = got[:len(got)-1]
		}
		if strings.Join(got, " ") != strings.Join(w, " ") {
			t.Errorf("line %d: %q, want %q", 3+i, strings.Join(got, " "), strings.Join(w, " "))
		}
	}
	if !strings.HasPrefix(lines[4], "┃▸≠ E0") {
		t.Errorf("the first step is not selected: %q", lines[4])
	}
	if !strings.HasSuffix(lines[len(lines)-1], " 4 differ · 1 same · enter shows the values · space shows them ━┛") {
		t.Errorf("footer %q", lines[len(lines)-1])
	}

	m.Update(space)
	lines = strings.Split(ansi.Strip(m.View()), "\n")
	if got := strings.Fields(strings.TrimPrefix(strings.Trim(lines[8], "┃"), "▸")); len(got) < 4 || strings.Join(got[:4], " ") != "= E1 ok same" {
		t.Errorf("after space, line 8 is %q, want E1 shown the same", lines[8])
	}
	if strings.Contains(ansi.Strip(m.View()), "ran alike") || !strings.Contains(lines[len(lines)-1], "space hides them") {
		t.Errorf("after space the count stays:\n%s", strings.Join(lines, "\n"))
	}
}

// TestDiffValues opens differing rows into their values: E0's results
// differ at one key, told with both values side by side; E2 failed in B,
// which has no result; esc goes back to the rows.
func TestDiffValues(t *testing.T) {
	a, b := details(t)
	m := newDiff(false, 100, 14, a, b)
	enter := tea.KeyPressMsg{Code: tea.KeyEnter}
	esc := tea.KeyPressMsg{Code: tea.KeyEscape}
	m.Update(enter)
	opened, ok := m.Opened()
	if !ok || opened.Path != "E0" {
		t.Fatalf("enter opened %v %v, want E0", opened.Path, ok)
	}
	fields := func(line int) string {
		return strings.Join(strings.Fields(strings.Trim(strings.Split(ansi.Strip(m.View()), "\n")[line], "┃")), " ")
	}
	if fields(3) != "E0 ok" || fields(4) != "at A B" || fields(5) != "n 1 2" {
		t.Errorf("E0's values:\n%s", ansi.Strip(m.View()))
	}
	m.Update(esc)
	m.Update(tea.KeyPressMsg{Code: 'j', Text: "j"})
	m.Update(enter)
	if opened, _ := m.Opened(); opened.Path != "E2" || fields(3) != "E2 ok → failed" || !strings.HasPrefix(fields(5), "(all) {") || !strings.HasSuffix(fields(5), " –") {
		t.Errorf("E2's values:\n%s", ansi.Strip(m.View()))
	}
	m.Update(esc)
	if _, ok := m.Opened(); ok || !strings.Contains(ansi.Strip(m.View()), "4 differ") {
		t.Errorf("esc left the values open:\n%s", ansi.Strip(m.View()))
	}
}

// TestDiffAlike compares a run with itself: every step ran alike.
func TestDiffAlike(t *testing.T) {
	a, _ := details(t)
	m := newDiff(false, 80, 8, a, a)
	lines := strings.Split(ansi.Strip(m.View()), "\n")
	if !strings.HasPrefix(lines[4], "┃▸= all 4 steps ran alike") || !strings.Contains(lines[7], " 0 differ · 4 same · space shows them ") {
		t.Errorf("a run against itself:\n%s", strings.Join(lines, "\n"))
	}
	if v := ansi.Strip(runs.NewDiff(newCommon(false)).View()); v != "" {
		t.Errorf("a view of no size drew %q", v)
	}
}

// TestDiffScroll moves through a view that shows two rows at a time: the
// selection moves, and the view follows it.
func TestDiffScroll(t *testing.T) {
	a, b := details(t)
	m := newDiff(false, 90, 7, a, b) // two rows under the head
	row := func(m runs.DiffModel, i int) string {
		f := strings.Fields(strings.Trim(strings.Split(ansi.Strip(m.View()), "\n")[4+i], "┃"))
		return f[0] + " " + f[1]
	}
	j := tea.KeyPressMsg{Code: 'j', Text: "j"}
	if row(m, 0) != "▸≠ E0" {
		t.Fatalf("first row %q", row(m, 0))
	}
	m.Update(j)
	if row(m, 0) != "≠ E0" || row(m, 1) != "▸≠ E2" {
		t.Errorf("after j the rows are %q and %q", row(m, 0), row(m, 1))
	}
	m.Update(j)
	if row(m, 0) != "≠ E2" || row(m, 1) != "▸− E2/then" {
		t.Errorf("after j j the rows are %q and %q", row(m, 0), row(m, 1))
	}
	m.Update(end)
	if row(m, 0) != "+ E2/else" || row(m, 1) != "▸= 1" {
		t.Errorf("at the end the rows are %q and %q", row(m, 0), row(m, 1))
	}
	m.Scroll(-10)
	if row(m, 0) != "≠ E0" {
		t.Errorf("scrolled back up the first row is %q", row(m, 0))
	}
}

// TestDiffSizes holds the view to its box at every size.
func TestDiffSizes(t *testing.T) {
	a, b := details(t)
	for _, color := range []bool{false, true} {
		for _, size := range [][2]int{{0, 0}, {1, 1}, {2, 2}, {12, 3}, {30, 5}, {60, 6}, {100, 14}, {200, 50}} {
			for _, same := range []bool{false, true} {
				m := newDiff(color, size[0], size[1], a, b)
				if same {
					m.Update(space)
				}
				m.Update(end)
				checkSize(t, m.View(), size[0], size[1])
			}
			checkSize(t, runs.NewDiff(newCommon(color)).View(), 0, 0)
			empty := runs.NewDiff(newCommon(color))
			empty.SetSize(size[0], size[1])
			checkSize(t, empty.View(), size[0], size[1])
		}
	}
}

// TestDiffMouse clicks a row, which selects it, and outside the view,
// which closes it.
func TestDiffMouse(t *testing.T) {
	a, b := details(t)
	m := newDiff(false, 90, 10, a, b)
	m.Update(tea.MouseClickMsg{X: 5, Y: 5, Button: tea.MouseLeft}) // the second row, under the border and the head
	if line := strings.Split(ansi.Strip(m.View()), "\n")[5]; !strings.HasPrefix(line, "┃▸≠ E2 ") {
		t.Errorf("the click did not select E2: %q", line)
	}
	_, cmd := m.Update(tea.MouseClickMsg{X: 95, Y: 5, Button: tea.MouseLeft})
	if msgs := commontest.Messages(cmd); len(msgs) != 1 || msgs[0] != (common.CloseOverlay{Overlay: &m}) {
		t.Errorf("a click outside sent %v, want the diff closed", msgs)
	}
}

// TestDiffMarks shows how each side's step got its result: a step a
// person decided carries ✎ on its side of the status, in the rows and in
// the values opened from one.
func TestDiffMarks(t *testing.T) {
	a, b := details(t)
	decided := *b
	decided.Steps = slices.Clone(b.Steps)
	i := slices.IndexFunc(decided.Steps, func(s record.StepRecord) bool { return s.Path == "E0" })
	decided.Steps[i].Decided = "inject"
	m := newDiff(false, 100, 14, a, &decided)
	row := func(line int) string {
		return strings.Join(strings.Fields(strings.TrimPrefix(strings.Trim(strings.Split(ansi.Strip(m.View()), "\n")[line], "┃"), "▸")), " ")
	}
	if got := row(4); !strings.HasPrefix(got, "≠ E0 ok → ok ✎ 1 change") {
		t.Errorf("E0's row: %q, want B's side marked decided by hand", got)
	}
	m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	if got := row(3); got != "E0 ok → ok ✎" {
		t.Errorf("E0's values are headed %q", got)
	}
}

// TestDiffPlanOrder compares two runs of a map whose first item is the
// slower, so that the second item's last step starts before the first's:
// the workbench's rows are in plan order, item by item, each item's steps
// in its body's order.
func TestDiffPlanOrder(t *testing.T) {
	dir, ws := livetest.Project(t, map[string]string{
		"config.toml": storedConfig,
		"tools/wait.yaml": `name: wait
description: Sleeps for as many seconds as it is given.
kind: exec
command: sh
args: ["-c", "sleep \"$1\"; echo '{}'", "wait", "{{input.secs}}"]
output: json
input_schema: { type: object, required: [secs], properties: { secs: { type: string } } }
`,
		"plans/uneven.yaml": `identifier: uneven
name: Uneven
description: Two items side by side, the first slower, each a wait and a card.
steps:
  - id: E1
    tool_name: map
    input:
      over: ["0.3", "0"]
      concurrency: 2
      do:
        - id: A
          tool_name: user__wait
          input: { secs: "{{item}}" }
        - id: B
          tool_name: builtin__reshape
          input: { shape: { i: "{{index}}" } }
`,
	})
	p := &project{ws: ws, plan: livetest.Plan(t, dir, "plans/uneven.yaml")}
	open := func() *record.RunDetail {
		t.Helper()
		id, _ := p.record(t, nil)
		d, err := ws.OpenRun(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	a, b := open(), open()
	want := []string{"E1", "E1/do.0/A", "E1/do.0/B", "E1/do.1/A", "E1/do.1/B"}
	var ran []string
	for _, s := range a.Steps {
		ran = append(ran, s.Path)
	}
	if slices.Equal(ran, want) {
		t.Fatalf("the record lists the steps in plan order already (%q): nothing to sort", ran)
	}
	var got []string
	for _, d := range newDiff(false, 100, 14, a, b).Steps() {
		got = append(got, d.Path)
	}
	if !slices.Equal(got, want) {
		t.Errorf("the diff's rows are %q, want %q", got, want)
	}
}
