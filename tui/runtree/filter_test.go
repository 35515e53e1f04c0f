package runtree_test

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/stepwise-dev/stepwise/engine"
	paths "github.com/stepwise-dev/stepwise/engine/path"
	"github.com/stepwise-dev/stepwise/tui/live"
	"github.com/stepwise-dev/stepwise/tui/runtree"
)

func typeInto(m runtree.Model, keys ...tea.KeyPressMsg) runtree.Model {
	for _, k := range keys {
		m, _ = m.Update(k)
	}
	return m
}

func text(s string) []tea.KeyPressMsg {
	var out []tea.KeyPressMsg
	for _, r := range s {
		out = append(out, tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	return out
}

var (
	keyEnter     = tea.KeyPressMsg{Code: tea.KeyEnter}
	keyEsc       = tea.KeyPressMsg{Code: tea.KeyEscape}
	keyBackspace = tea.KeyPressMsg{Code: tea.KeyBackspace}
)

// TestFilter narrows the watched run's tree: the rows left are the
// matches and their ancestors, drawn with guide lines as if the others
// were not there, whatever is collapsed.
func TestFilter(t *testing.T) {
	tr, _ := watchedRun(t, -1)
	cases := []struct {
		query string
		want  []string // the rows, after the gutter
	}{
		{"reshape", []string{
			"▾ ✓ ⟳ E1  map",
			"  ├─▾ ✓ do.0",
			"  │   ├── ✓ A  builtin__reshape",
			"  │   └── ✓ B  builtin__reshape",
			"  ├─▾ ✓ do.1",
			"  │   ├── ✓ A  builtin__reshape",
			"  │   └── ✓ B  builtin__reshape",
			"  └─▾ ✓ do.2",
			"      ├── ✓ A  builtin__reshape",
			"      └── ✓ B  builtin__reshape",
			"▾ ✓ ✻ E2  agent",
			"  └─▾ ✓ agent.1",
			"      └── ✓ builtin__reshape",
			"▾ ✓ ⑂ E3  decide",
			"  ├─▾ ✓ then",
			"  │   └── ✓ T  builtin__reshape",
			"  └── ○ else  builtin__reshape",
			"  ↷ E5  builtin__reshape",
		}},
		{"DO.1/b", []string{"▾ ✓ ⟳ E1  map", "  └─▾ ✓ do.1", "      └── ✓ B  builtin__reshape"}},
		{"exited", []string{"  ⏏ ⎋ E4  exit"}},
		{"ok repair", []string{"▾ ✓ ✻ E2  agent", "  └─▾ ✓ agent.2", "      └── ✓ repair"}},
	}
	for _, tc := range cases {
		t.Run(tc.query, func(t *testing.T) {
			// A collapsed row does not hide its matches.
			tr.SetCollapsed("E1", true)
			defer tr.SetCollapsed("E1", false)
			m := newPane(tr, 48, 30, false)
			m.StartFilter()
			m = typeInto(m, text(tc.query+"x")...)
			m = typeInto(m, keyBackspace, keyEnter)
			if m.Filtering() || m.Filter() != tc.query {
				t.Fatalf("after enter: filtering %v, filter %q", m.Filtering(), m.Filter())
			}
			var got []string
			for _, line := range screen(m)[1 : 1+len(tc.want)+1] {
				// The names, without the time's column: its gap and
				// six cells, at the end of the body.
				body := []rune(strings.Trim(line, "│"))
				line = strings.TrimRight(string(body[:max(len(body)-8, 0)]), " ")
				if r := []rune(line); len(r) > 2 {
					got = append(got, string(r[2:]))
				}
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("/%s shows:\n%s\nwant:\n%s", tc.query, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			if !strings.Contains(screen(m)[0], "/"+tc.query) {
				t.Errorf("the title does not say the filter: %q", screen(m)[0])
			}
			m = typeInto(m, keyEsc)
			if m.Filter() != "" || !strings.Contains(strings.Join(screen(m), "\n"), "E4  exit") || strings.Contains(screen(m)[0], "/") {
				t.Errorf("esc did not clear the filter:\n%s", strings.Join(screen(m), "\n"))
			}
		})
	}
}

// TestFilterNoMatch says what to do when nothing matches.
func TestFilterNoMatch(t *testing.T) {
	tr, _ := watchedRun(t, -1)
	m := newPane(tr, 80, 10, false)
	m.StartFilter()
	m = typeInto(m, text("nosuch")...)
	if got := screen(m)[1]; !strings.Contains(got, "no row matches nosuch: esc shows every row") {
		t.Errorf("an empty filter's pane says %q", got)
	}
	if _, ok := m.Selected(); ok {
		t.Error("a row is selected with none shown")
	}
}

// TestJump goes to the next failed row, the next held one and the
// slowest ones, around the end; the selection stops following.
func TestJump(t *testing.T) {
	tr, _ := watchedRun(t, -1)
	m := newPane(tr, 100, 30, false)
	if m.Jump(runtree.NextFailed) {
		t.Error("the watched run has no failed row, yet Jump found one")
	}
	// Each T goes to a row no faster than the next, never one with rows
	// under it.
	// From the row of least time, the first T goes to the slowest.
	m.SelectPath("E4")
	seen := map[string]bool{}
	var last time.Duration = 1 << 62
	for range 4 {
		if !m.Jump(runtree.Slowest) {
			t.Fatal("no slowest row")
		}
		r, _ := m.Selected()
		if r.HasChildren || r.Duration > last || seen[r.Path] {
			t.Errorf("T went to %s (%v, children %v) after one of %v", r.Path, r.Duration, r.HasChildren, last)
		}
		seen[r.Path], last = true, r.Duration
	}
	m.SelectPath("E4")
	m.Jump(runtree.Slowest)
	if r, _ := m.Selected(); r.Duration < last {
		t.Errorf("T from another row went to %s (%v), not the slowest", r.Path, r.Duration)
	}
	if m.Following() {
		t.Error("a jump left the selection following")
	}
	m.SetStop("E2/agent.1")
	m.SelectPath("E1")
	if !m.Jump(runtree.NextHeld) || selected(t, m) != "E2/agent.1" {
		t.Errorf("H went to %s, want the stop E2/agent.1", selected(t, m))
	}
}

// TestSlowestByOwnTime: T goes by a row's own time; a step that mostly
// waited at a stop is not where the time went.
func TestSlowestByOwnTime(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	tr := live.New(nil)
	ev := func(path string, ms float64, payload any) {
		tr.Apply(engine.Event{RunID: "r", Path: path, Unit: paths.KindStep, Time: at.Add(time.Duration(ms) * time.Millisecond), Payload: payload})
	}
	ev("", 0, engine.RunStarted{Plan: "p"})
	ev("waited", 0, engine.StepStarted{Tool: "ask"})
	ev("waited", 900, engine.StepEnded{Tool: "ask", Status: engine.StepOK, Ms: 900, HeldMs: 880})
	ev("worked", 900, engine.StepStarted{Tool: "user__slow"})
	ev("worked", 1200, engine.StepEnded{Tool: "user__slow", Status: engine.StepOK, Ms: 300})
	m := newPane(tr, 100, 20, false)
	if !m.Jump(runtree.Slowest) {
		t.Fatal("no slowest row")
	}
	if r, _ := m.Selected(); r.Path != "worked" {
		t.Errorf("T went to %s, want worked: waited spent 880ms of its 900ms held", r.Path)
	}
}
