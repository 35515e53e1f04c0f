package problems

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/tui/common"
)

func newPane(r plans.Report, w, h int) Model {
	m := New(common.New(common.NewTheme(true, false), common.DefaultKeyMap()), r)
	m.SetSize(w, h)
	m.Focus()
	return m
}

var (
	forward = plans.Problem{Code: plans.CodeForwardReference, Message: "references E3, which runs later", Path: "E0", Pos: plans.Pos{File: "p.yaml", Line: 9, Col: 14}}
	planLvl = plans.Problem{Code: plans.CodeMissingField, Message: "a plan needs 'name'", Pos: plans.Pos{File: "p.yaml", Line: 1, Col: 1}}
	note    = plans.Problem{Code: plans.CodeIgnoredField, Message: "'model' is ignored\nwithout 'infer'", Path: "E2/then/E20", Pos: plans.Pos{File: "p.yaml", Line: 30, Col: 7}}
)

func TestSummary(t *testing.T) {
	cases := []struct {
		name string
		r    plans.Report
		want string
	}{
		{"valid", plans.Report{}, "✓ valid"},
		{"valid with a note", plans.Report{Notes: []plans.Problem{note}}, "✓ valid · 1 note"},
		{"one problem", plans.Report{Problems: []plans.Problem{forward}}, "✗ 1 problem"},
		{"problems and notes", plans.Report{Problems: []plans.Problem{forward, planLvl}, Notes: []plans.Problem{note, note}}, "✗ 2 problems · 2 notes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := newPane(tc.r, 80, 6)
			if got := ansi.Strip(m.Summary()); got != tc.want {
				t.Errorf("summary %q, want %q", got, tc.want)
			}
			if v := ansi.Strip(m.View()); !strings.Contains(strings.Split(v, "\n")[0], tc.want) {
				t.Errorf("header does not carry the summary:\n%s", v)
			}
		})
	}
}

// TestLines checks the compiler-style lines: problems first, then notes,
// "line:col step PATH: message", folded onto one line and cut to the pane.
func TestLines(t *testing.T) {
	m := newPane(plans.Report{Problems: []plans.Problem{forward, planLvl}, Notes: []plans.Problem{note}}, 60, 6)
	lines := strings.Split(ansi.Strip(m.View()), "\n")
	want := []string{
		"┃▸✗ 9:14 step E0: references E3, which runs later          ┃",
		"┃ ✗ 1:1 a plan needs 'name'                                ┃",
		"┃ ℹ 30:7 step E2/then/E20: 'model' is ignored without 'inf…┃",
	}
	for i, w := range want {
		if lines[i+1] != w {
			t.Errorf("line %d:\n got %q\nwant %q", i, lines[i+1], w)
		}
	}
}

func TestKeys(t *testing.T) {
	var many plans.Report
	for range 20 {
		many.Problems = append(many.Problems, forward)
	}
	m := newPane(many, 60, 6) // four lines in view
	press := func(msg tea.KeyPressMsg) { m, _ = m.Update(msg) }
	press(tea.KeyPressMsg{Code: 'j', Text: "j"})
	press(tea.KeyPressMsg{Code: tea.KeyDown})
	if m.Cursor() != 2 {
		t.Errorf("cursor %d after two downs", m.Cursor())
	}
	press(tea.KeyPressMsg{Code: tea.KeyPgDown})
	if first, _ := m.Visible(); m.Cursor() != 5 || first != 2 {
		t.Errorf("cursor %d offset %d after pgdown, want 5 2", m.Cursor(), first)
	}
	press(tea.KeyPressMsg{Code: tea.KeyEnd})
	if m.Cursor() != 19 {
		t.Errorf("cursor %d after end", m.Cursor())
	}
	press(tea.KeyPressMsg{Code: tea.KeyHome})
	if first, _ := m.Visible(); m.Cursor() != 0 || first != 0 {
		t.Errorf("cursor %d offset %d after home", m.Cursor(), first)
	}
	if p, ok := m.Selected(); !ok || p != forward {
		t.Errorf("selected %v %v", p, ok)
	}
	if _, ok := newPane(plans.Report{}, 60, 6).Selected(); ok {
		t.Error("an empty list has a selection")
	}
}
