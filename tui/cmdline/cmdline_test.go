package cmdline

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/tui/common"
)

func newLine(width int) Model {
	m := New(common.New(common.NewTheme(true, false), common.DefaultKeyMap()))
	m.SetSize(width, 1)
	m.Open()
	return m
}

var (
	enter = tea.KeyPressMsg{Code: tea.KeyEnter}
	esc   = tea.KeyPressMsg{Code: tea.KeyEscape}
	tab   = tea.KeyPressMsg{Code: tea.KeyTab}
	up    = tea.KeyPressMsg{Code: tea.KeyUp}
	down  = tea.KeyPressMsg{Code: tea.KeyDown}
	back  = tea.KeyPressMsg{Code: tea.KeyBackspace}
)

// typeText types text a key at a time, as a terminal sends it.
func typeText(m Model, text string) Model {
	for _, r := range text {
		k := tea.KeyPressMsg{Code: r, Text: string(r)}
		if r == ' ' {
			k.Code = tea.KeySpace
		}
		m, _ = m.Update(k)
	}
	return m
}

// press sends one key and returns the message its command produced, if
// any.
func press(m Model, k tea.KeyPressMsg) (Model, tea.Msg) {
	m, cmd := m.Update(k)
	if cmd == nil {
		return m, nil
	}
	return m, cmd()
}

// view is the line without styling, checked to be exactly width wide.
func view(t *testing.T, m Model) string {
	t.Helper()
	v := m.View()
	if strings.Contains(v, "\n") {
		t.Fatalf("the line is more than one line: %q", v)
	}
	if w := ansi.StringWidth(v); w != m.Width {
		t.Fatalf("the line is %d wide, not %d: %q", w, m.Width, ansi.Strip(v))
	}
	return ansi.Strip(v)
}

// TestSubmit types lines and presses enter: one that parses goes out as
// the instruction it reads as and closes the line; one that does not stays
// open with its error, until it is edited.
func TestSubmit(t *testing.T) {
	m := newLine(80)
	if !m.Active() || m.Value() != "" {
		t.Fatalf("open: active %v, value %q", m.Active(), m.Value())
	}
	// j, k and space are text here, not movement.
	m = typeText(m, "break E1/do.*/A step if {{item.k}} eq j")
	m, msg := press(m, enter)
	sub, ok := msg.(Submitted)
	if !ok {
		t.Fatalf("enter sent %#v", msg)
	}
	in := sub.Instruction
	if in.Verb != debugger.VerbBreak || in.Pattern != "E1/do.*/A" || len(in.Kinds) != 1 || in.Kinds[0] != engine.StopStep ||
		in.Condition == nil || in.Condition.String() != "{{item.k}} eq j" {
		t.Errorf("submitted %s", in)
	}
	if m.Active() || m.Value() != "" {
		t.Errorf("after submitting: active %v, value %q", m.Active(), m.Value())
	}
	if got := view(t, m); strings.TrimSpace(got) != "" {
		t.Errorf("a closed line draws %q", got)
	}

	m.Open()
	m = typeText(m, "contine")
	m, msg = press(m, enter)
	if _, refused := msg.(Refused); !refused || !m.Active() || m.Err() == nil {
		t.Fatalf("a line that does not parse: msg %v, active %v, err %v", msg, m.Active(), m.Err())
	}
	if got := view(t, m); !strings.HasPrefix(got, ":contine") || !strings.Contains(got, "✗ unknown command 'contine'; did you mean 'continue'?") {
		t.Errorf("the error does not show: %q", got)
	}
	m, _ = press(m, back)
	if m.Err() != nil || strings.Contains(view(t, m), "✗") {
		t.Errorf("the error outlived an edit: %q", view(t, m))
	}
	m = typeText(m, "ue")
	if m, msg = press(m, enter); msg == nil || msg.(Submitted).Instruction.Verb != debugger.VerbContinue {
		t.Errorf("continue sent %#v", msg)
	}

	// Enter on an empty line closes it, and sends nothing.
	m.Open()
	if m, msg = press(m, enter); msg != nil || m.Active() {
		t.Errorf("enter on an empty line: msg %v, active %v", msg, m.Active())
	}
	// Esc closes whatever was typed.
	m.Open()
	m = typeText(m, "next")
	if m, msg = press(m, esc); msg != nil || m.Active() {
		t.Errorf("esc: msg %v, active %v", msg, m.Active())
	}
	if got := m.History(); strings.Join(got, "|") != "break E1/do.*/A step if {{item.k}} eq j|continue" {
		t.Errorf("history %q", got)
	}
	// A closed line takes no keys.
	if m, msg = press(typeText(m, "x"), enter); msg != nil || m.Value() != "" {
		t.Errorf("a closed line took keys: %q %v", m.Value(), msg)
	}
}

// TestHistory walks the history with up and down, back to the line being
// typed.
func TestHistory(t *testing.T) {
	m := newLine(60)
	for _, line := range []string{"break E1", "next", "next", "print item"} {
		m.Open()
		m = typeText(m, line)
		m, _ = press(m, enter)
	}
	if got := strings.Join(m.History(), "|"); got != "break E1|next|print item" {
		t.Errorf("history %q: a repeated line is kept once", got)
	}
	m.Open()
	m = typeText(m, "wh")
	var seen []string
	for range 4 {
		m, _ = press(m, up)
		seen = append(seen, m.Value())
	}
	for range 4 {
		m, _ = press(m, down)
		seen = append(seen, m.Value())
	}
	want := "print item|next|break E1|break E1|next|print item|wh|wh"
	if got := strings.Join(seen, "|"); got != want {
		t.Errorf("walk\n got %s\nwant %s", got, want)
	}
	// A line from the history is submitted as typed.
	m, _ = press(m, up)
	m = typeText(m, ".id")
	if _, msg := press(m, enter); msg.(Submitted).Instruction.Path != "item.id" {
		t.Errorf("submitted %v", msg)
	}
	// OpenWith starts a line with text typed.
	m.OpenWith("new ")
	m = typeText(m, "triage")
	if _, msg := press(m, enter); msg.(Submitted).Instruction.String() != "new triage" {
		t.Errorf("OpenWith: %v", msg)
	}
}

// TestComplete checks tab: command names first, then what the command
// takes; one candidate completes with a space after it (but a path, which may go on deeper), several complete
// as far as they agree and show beside the line.
func TestComplete(t *testing.T) {
	paths := []string{"E1", "E1/do.0", "E1/do.0/A", "E1/do.1", "E2", "E1"}
	cases := []struct {
		typed, want, aside string
	}{
		{"cont", "continue ", ""},
		{"b E2", "b E2", ""}, // a path may go on deeper: no space after it
		{"break E1/do.", "break E1/do.", "E1/do.0  E1/do.0/A  E1/do.1"},
		{"break E1/do.0/", "break E1/do.0/A", ""},
		{"break E2 ro", "break E2 round ", ""},
		{"break E2 re", "break E2 re", "reply  result  repair"},
		{"break E2 step i", "break E2 step if ", ""},
		{"break E2 if {{x}", "break E2 if {{x}", ""},
		{"goto E", "goto E", "E1  E1/do.0  E1/do.0/A  E1/do.1  E2"},
		{"fork E2", "fork E2", ""},
		{"errors o", "errors o", "on  off"},
		{"help thr", "help thread", "threads  thread"},
		{"print E", "print E", ""},
		{"zzz", "zzz", ""},
		{"d", "d", "disable  decline  deny  debug  diff"},
	}
	for _, tc := range cases {
		t.Run(tc.typed, func(t *testing.T) {
			m := newLine(80)
			m.SetCompletions(paths)
			m = typeText(m, tc.typed)
			m, msg := press(m, tab)
			if msg != nil {
				t.Errorf("tab sent %v", msg)
			}
			if m.Value() != tc.want {
				t.Errorf("completed to %q, want %q", m.Value(), tc.want)
			}
			got := view(t, m)
			if tc.aside != "" && !strings.HasSuffix(got, tc.aside) {
				t.Errorf("the candidates do not show: %q", got)
			}
			if tc.aside == "" && !strings.Contains(got, "enter submit") {
				t.Errorf("the keys do not show: %q", got)
			}
		})
	}
	// In the middle of a line, the word the cursor is in completes and
	// what follows it stays.
	m := newLine(80)
	m.SetCompletions(paths)
	m = typeText(m, "break E1/do.0/ step")
	for range 5 {
		m, _ = m.Update(tea.KeyPressMsg{Code: tea.KeyLeft})
	}
	m, _ = press(m, tab)
	if m.Value() != "break E1/do.0/A step" {
		t.Errorf("completed mid-line to %q", m.Value())
	}
	if m = typeText(m, "!"); m.Value() != "break E1/do.0/A! step" {
		t.Errorf("the cursor is not after the completed word: %q", m.Value())
	}
}

// TestWidths checks the line is one line exactly its width, whatever it
// holds: nothing, a line longer than the screen, an error longer than the
// screen, on a narrow screen and a wide one, with and without colour.
func TestWidths(t *testing.T) {
	long := strings.Repeat("E1/do.3/agent.2/", 12)
	for _, color := range []bool{false, true} {
		for _, w := range []int{1, 8, 20, 40, 80, 160} {
			m := New(common.New(common.NewTheme(true, color), common.DefaultKeyMap()))
			m.SetSize(w, 1)
			view(t, m)
			m.Open()
			view(t, m)
			m = typeText(m, "goto "+long)
			got := view(t, m)
			if w >= 40 && !strings.Contains(got, "agent.2/") {
				t.Errorf("width %d: the end of a long line does not show: %q", w, got)
			}
			m = typeText(m, " x")
			m, _ = press(m, enter)
			got = view(t, m)
			if w >= 80 && !strings.Contains(got, "✗ goto takes one step path") {
				t.Errorf("width %d: the error does not show: %q", w, got)
			}
		}
	}
}

// TestRefusedLineWhole: a refused line shows whole, its verb in view and
// the cursor at its end; a : typed on it untouched starts a fresh line,
// and once recalled from the history a : is text in it.
func TestRefusedLineWhole(t *testing.T) {
	m := newLine(60)
	m = typeText(m, `answer {"post": tru}`)
	m, msg := press(m, enter)
	if _, refused := msg.(Refused); !refused {
		t.Fatalf("enter on a line that does not parse sent %#v", msg)
	}
	if got := view(t, m); !strings.HasPrefix(got, `:answer {"post": tru}`) {
		t.Errorf("the refused line is not whole: %q", got)
	}
	m = typeText(m, ":x")
	if m.Value() != "x" || m.Err() != nil {
		t.Errorf("a : after a refusal left %q (error %v), want a fresh line", m.Value(), m.Err())
	}
	m, _ = press(m, up)
	m = typeText(m, ":x")
	if m.Value() != `answer {"post": tru}:x` {
		t.Errorf("typing on the refused line recalled gives %q", m.Value())
	}
}

// TestPaste checks pasted text lands in the line.
func TestPaste(t *testing.T) {
	m := newLine(80)
	m = typeText(m, "inject ")
	m, _ = m.Update(tea.PasteMsg{Content: `{"n": 1}`})
	_, msg := press(m, enter)
	if sub, ok := msg.(Submitted); !ok || sub.Instruction.String() != `inject {"n":1}` {
		t.Errorf("after a paste: %v", msg)
	}
}
