package breakpoints

import (
	"context"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/debugger/workspace"
	"github.com/stepwise-dev/stepwise/tui/common"
	"github.com/stepwise-dev/stepwise/tui/live/livetest"
)

const plan = `name: loop
description: A map, then a step that reads it.
identifier: loop
steps:
  - id: E1
    tool_name: map
    input:
      over: [a, b, c]
      do:
        - id: A
          tool_name: builtin__reshape
          input: { shape: { v: "{{item}}" } }
  - id: E2
    tool_name: builtin__reshape
    input: { shape: { count: "{{E1.count}}" } }
output: { count: "{{E2.count}}" }
`

// newSession is a debugger session over plan in a fresh project.
func newSession(t *testing.T) *debugger.Session {
	t.Helper()
	dir, ws := livetest.Project(t, map[string]string{"plans/loop.yaml": plan})
	s, err := ws.Debug(livetest.Plan(t, dir, "plans/loop.yaml"), debugger.NewBreakpoints(), workspace.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// setBreaks sets breakpoints from break lines, as both front ends do.
func setBreaks(t *testing.T, s *debugger.Session, lines ...string) {
	t.Helper()
	for _, line := range lines {
		in, err := debugger.ParseCommand(line)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Table().Set(in.Pattern, in.Kinds, in.Condition); err != nil {
			t.Fatal(err)
		}
	}
}

func newPanel(w, h int) Model {
	m := New(common.New(common.NewTheme(true, false), common.DefaultKeyMap()))
	m.SetSize(w, h)
	m.Focus()
	return m
}

func press(m Model, k tea.KeyPressMsg) (Model, *Action) {
	_, cmd := m.Update(k)
	if cmd == nil {
		return m, nil
	}
	a, ok := cmd().(Action)
	if !ok {
		panic("the panel sent something other than an Action")
	}
	return m, &a
}

var (
	space = tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	del   = tea.KeyPressMsg{Code: 'D', Text: "D"}
	x     = tea.KeyPressMsg{Code: 'x', Text: "x"}
	down  = tea.KeyPressMsg{Code: 'j', Text: "j"}
	up    = tea.KeyPressMsg{Code: tea.KeyUp}
	end   = tea.KeyPressMsg{Code: tea.KeyEnd}
	home  = tea.KeyPressMsg{Code: tea.KeyHome}
)

// TestRows runs a real session to its end with three breakpoints, one off,
// and checks the rows: mark, id, pattern, kinds, condition and hits, each
// exactly the panel's width.
func TestRows(t *testing.T) {
	s := newSession(t)
	setBreaks(t, s, "break E1/do.*/A step if {{item}} eq c", "break E2 result", "break E1/do.0/A")
	s.Table().Enable(2, false)
	st := s.Start(context.Background(), nil)
	for !st.Finished {
		var err error
		if st, err = s.Do(debugger.Command{Move: debugger.Continue}); err != nil {
			t.Fatal(err)
		}
	}
	m := newPanel(64, 7)
	m.SetBreakpoints(s.Breakpoints(), s.Table().BreaksOnError())
	view := ansi.Strip(m.View())
	want := []string{
		"┏━ Breakpoints 3 ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓",
		"┃ break on error: on (x)                                       ┃",
		"┃▸● 1  E1/do.*/A  step  if {{item}} eq c                 3 hits┃",
		"┃ ○ 2  E2         result                                 0 hits┃",
		"┃ ● 3  E1/do.0/A                                         2 hits┃",
	}
	lines := strings.Split(view, "\n")
	if len(lines) != 7 {
		t.Fatalf("%d lines:\n%s", len(lines), view)
	}
	for _, l := range lines {
		if ansi.StringWidth(l) != 64 {
			t.Errorf("line %q is %d wide", l, ansi.StringWidth(l))
		}
	}
	for i, w := range want {
		if lines[i] != w {
			t.Errorf("line %d:\n got %q\nwant %q", i, lines[i], w)
		}
	}
	// In colour the text is the same, and so is every width.
	m.Theme = common.NewTheme(false, true)
	colored := m.View()
	if ansi.Strip(colored) != view {
		t.Errorf("in colour:\n%s", ansi.Strip(colored))
	}
	for _, l := range strings.Split(colored, "\n") {
		if ansi.StringWidth(l) != 64 {
			t.Errorf("coloured line %q is %d wide", ansi.Strip(l), ansi.StringWidth(l))
		}
	}
}

// TestKeys checks every key of the panel against a real session: the
// Action each sends, applied to the session and shown again, is what the
// panel then shows.
func TestKeys(t *testing.T) {
	s := newSession(t)
	setBreaks(t, s, "break E1", "break E2", "break E1/do.1/A step")
	m := newPanel(60, 8)
	sync := func() { m.SetBreakpoints(s.Breakpoints(), s.Table().BreaksOnError()) }
	sync()
	apply := func(a *Action) {
		t.Helper()
		if a == nil {
			t.Fatal("no action")
		}
		var err error
		switch {
		case a.Delete:
			err = s.Table().Clear(a.ID)
		case a.Enable != nil:
			err = s.Table().Enable(a.ID, *a.Enable)
		case a.BreakOnError != nil:
			s.Table().BreakOnError(*a.BreakOnError)
		}
		if err != nil {
			t.Fatal(err)
		}
		sync()
	}

	var a *Action
	m, _ = press(m, down)
	if m, a = press(m, space); a == nil || a.ID != 2 || a.Enable == nil || *a.Enable || a.Delete || a.BreakOnError != nil {
		t.Fatalf("space on breakpoint 2: %+v", a)
	}
	apply(a)
	if b, _ := m.Selected(); b.ID != 2 || b.Enabled {
		t.Errorf("after space: %+v", b)
	}
	if !strings.Contains(ansi.Strip(m.View()), "○ 2") {
		t.Errorf("the view does not show 2 off:\n%s", ansi.Strip(m.View()))
	}
	m, a = press(m, space)
	if a == nil || *a.Enable != true {
		t.Fatalf("space again: %+v", a)
	}
	apply(a)

	m, _ = press(m, end)
	if m.Cursor() != 2 {
		t.Errorf("cursor %d after end", m.Cursor())
	}
	m, a = press(m, del)
	if a == nil || !a.Delete || a.ID != 3 {
		t.Fatalf("D on 3: %+v", a)
	}
	apply(a)
	if len(m.Breakpoints()) != 2 || m.Cursor() != 1 {
		t.Errorf("after delete: %d rows, cursor %d", len(m.Breakpoints()), m.Cursor())
	}

	m, a = press(m, x)
	if a == nil || a.BreakOnError == nil || *a.BreakOnError || a.Enable != nil || a.Delete {
		t.Fatalf("x: %+v", a)
	}
	apply(a)
	if !strings.Contains(ansi.Strip(m.View()), "break on error: off") {
		t.Errorf("break on error does not read off:\n%s", ansi.Strip(m.View()))
	}

	m, _ = press(m, up)
	m, _ = press(m, home)
	if b, _ := m.Selected(); b.ID != 1 {
		t.Errorf("selected %d after home", b.ID)
	}
	if _, a = press(m, tea.KeyPressMsg{Code: 'z', Text: "z"}); a != nil {
		t.Errorf("z sent %+v", a)
	}

	// With nothing selected, only break on error acts.
	s2 := newSession(t)
	empty := newPanel(60, 8)
	empty.SetBreakpoints(s2.Breakpoints(), true)
	for _, k := range []tea.KeyPressMsg{space, del, down} {
		if _, a := press(empty, k); a != nil {
			t.Errorf("%s on an empty panel sent %+v", k, a)
		}
	}
	if _, a := press(empty, x); a == nil || *a.BreakOnError {
		t.Errorf("x on an empty panel: %+v", a)
	}
}

// TestEmpty checks the empty panel tells how to set a breakpoint, wrapped
// inside the frame.
func TestEmpty(t *testing.T) {
	m := newPanel(40, 8)
	m.SetBreakpoints(nil, true)
	view := ansi.Strip(m.View())
	flat := strings.Join(strings.Fields(strings.ReplaceAll(view, "┃", "")), " ")
	if !strings.Contains(flat, Empty) {
		t.Errorf("the empty panel does not say %q:\n%s", Empty, view)
	}
	for _, l := range strings.Split(view, "\n") {
		if ansi.StringWidth(l) != 40 {
			t.Errorf("line %q is %d wide", l, ansi.StringWidth(l))
		}
	}
}

// TestScrollAndClick checks a list longer than the panel: the selection
// stays in view, the footer says where it is, a click selects the row
// under it and the wheel takes the selection along.
func TestScrollAndClick(t *testing.T) {
	s := newSession(t)
	for i := range 12 {
		setBreaks(t, s, "break E1/do."+string(rune('a'+i)))
	}
	m := newPanel(50, 7) // four rows in view
	m.SetBreakpoints(s.Breakpoints(), true)
	m, _ = press(m, end)
	view := ansi.Strip(m.View())
	lines := strings.Split(view, "\n")
	if !strings.Contains(lines[5], "12  E1/do.l") || !strings.Contains(lines[6], "12/12") {
		t.Errorf("after end:\n%s", view)
	}
	m.ClickAt(2)
	if m.Cursor() != 8 {
		t.Errorf("a click on the first row in view selected %d", m.Cursor())
	}
	m.ClickAt(1) // the break on error line
	m.ClickAt(6) // the border
	if m.Cursor() != 8 {
		t.Errorf("clicks off the rows moved the cursor to %d", m.Cursor())
	}
	m.Scroll(-100)
	if m.Cursor() != 3 {
		t.Errorf("the wheel left the cursor at %d", m.Cursor())
	}
	// A new list keeps the selection on the same breakpoint.
	s.Table().Clear(1)
	m.SetBreakpoints(s.Breakpoints(), true)
	if b, _ := m.Selected(); b.ID != 4 {
		t.Errorf("after clearing 1 the selection is on %d", b.ID)
	}
}

// TestWhyWhole: a row cuts why its breakpoint never stops; the room under
// the rows says it whole for the selected breakpoint, wrapped.
func TestWhyWhole(t *testing.T) {
	s := newSession(t)
	setBreaks(t, s, "break E1/do.zzz_a_long_pattern_that_matches_nothing")
	m := newPanel(50, 16)
	m.SetBreakpoints(s.Breakpoints(), true)
	bps := m.Breakpoints()
	if len(bps) != 1 || bps[0].Unmatched == "" {
		t.Fatalf("the breakpoint matches: %+v", bps)
	}
	view := ansi.Strip(m.View())
	// Wrapped after a / or _, the text reads the same with its spaces
	// taken out.
	squeeze := func(s string) string { return strings.Join(strings.Fields(strings.ReplaceAll(s, "┃", "")), "") }
	if !strings.Contains(squeeze(view), squeeze(bps[0].Unmatched)) {
		t.Errorf("the panel does not say %q whole:\n%s", bps[0].Unmatched, view)
	}
}
