package common

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

func TestFit(t *testing.T) {
	cases := []struct {
		in    string
		width int
		want  string
	}{
		{"abc", 5, "abc  "},
		{"abcdef", 4, "abc…"},
		{"abc", 3, "abc"},
		{"├─⑂ E1", 4, "├─⑂…"},
		{"\x1b[1mbold\x1b[m", 6, "bold  "},
		{"x", 0, ""},
	}
	for _, tc := range cases {
		if got := ansi.Strip(Fit(tc.in, tc.width)); got != tc.want {
			t.Errorf("Fit(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
		}
	}
}

func TestFrame(t *testing.T) {
	th := NewTheme(true, false)
	for _, size := range [][2]int{{2, 2}, {10, 4}, {40, 10}, {5, 3}} {
		for _, focused := range []bool{false, true} {
			out := Frame(th, size[0], size[1], "Title that is long", "9/99", focused, []string{"a line far longer than the frame is wide", "b"})
			lines := strings.Split(out, "\n")
			if len(lines) != size[1] {
				t.Errorf("%v: %d lines", size, len(lines))
			}
			for _, l := range lines {
				if ansi.StringWidth(l) != size[0] {
					t.Errorf("%v: line %q is %d wide", size, ansi.Strip(l), ansi.StringWidth(l))
				}
			}
			corner := "╭"
			if focused {
				corner = "┏"
			}
			if !strings.HasPrefix(ansi.Strip(out), corner) {
				t.Errorf("%v focused=%v: top-left corner is not %s", size, focused, corner)
			}
		}
	}
}

func TestScroll(t *testing.T) {
	cases := []struct {
		name                        string
		offset, cursor, h, total, w int
	}{
		{"cursor below the view", 0, 12, 10, 50, 3},
		{"cursor above the view", 20, 5, 10, 50, 5},
		{"cursor inside the view", 10, 15, 10, 50, 10},
		{"short content", 5, 2, 10, 4, 0},
		{"past the end", 45, 49, 10, 50, 40},
	}
	for _, tc := range cases {
		if got := (Scroll{tc.offset}).Follow(tc.cursor, tc.h, tc.total).Offset; got != tc.w {
			t.Errorf("%s: offset %d, want %d", tc.name, got, tc.w)
		}
	}
}

// TestList drives a list of 20 lines in a window of 5 through each way of
// moving, from cursor 3 with the window at line 1.
func TestList(t *testing.T) {
	keys := DefaultKeyMap()
	cases := []struct {
		name           string
		do             func(l *List)
		cursor, offset int
	}{
		{"select below the window", func(l *List) { l.Select(9, 5, 20) }, 9, 5},
		{"select past the end", func(l *List) { l.Select(99, 5, 20) }, 19, 15},
		{"select before the start", func(l *List) { l.Select(-4, 5, 20) }, 0, 0},
		{"select in an empty list", func(l *List) { l.Select(2, 5, 0) }, 0, 0},
		{"click a line", func(l *List) { l.ClickAt(4, 5, 20) }, 5, 1},
		{"click below the window", func(l *List) { l.ClickAt(5, 5, 20) }, 3, 1},
		{"click past the last line", func(l *List) { l.ClickAt(2, 5, 2) }, 3, 1},
		{"scroll down takes the cursor", func(l *List) { l.ScrollBy(6, 5, 20) }, 7, 7},
		{"scroll past the end", func(l *List) { l.ScrollBy(60, 5, 20) }, 15, 15},
		{"scroll up keeps the cursor", func(l *List) { l.ScrollBy(-1, 5, 20) }, 3, 0},
		{"down", func(l *List) { l.Move(keys, tea.KeyPressMsg{Code: 'j', Text: "j"}, 5, 20) }, 4, 1},
		{"page down", func(l *List) { l.Move(keys, tea.KeyPressMsg{Code: tea.KeyPgDown}, 5, 20) }, 7, 3},
		{"bottom", func(l *List) { l.Move(keys, tea.KeyPressMsg{Code: tea.KeyEnd}, 5, 20) }, 19, 15},
		{"a key that does not move", func(l *List) { l.Move(keys, tea.KeyPressMsg{Code: 'x', Text: "x"}, 5, 20) }, 3, 1},
		{"follow a shorter window", func(l *List) { l.Follow(2, 20) }, 3, 2},
	}
	for _, tc := range cases {
		l := List{Cursor: 3, Scroll: Scroll{Offset: 1}}
		tc.do(&l)
		if l.Cursor != tc.cursor || l.Scroll.Offset != tc.offset {
			t.Errorf("%s: cursor %d offset %d, want %d %d", tc.name, l.Cursor, l.Scroll.Offset, tc.cursor, tc.offset)
		}
	}
	if first, end := (List{Scroll: Scroll{Offset: 18}}).Visible(5, 20); first != 18 || end != 20 {
		t.Errorf("visible lines %d to %d, want 18 to 20", first, end)
	}
}

func TestColorEnabled(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "NO_COLOR" {
				return v
			}
			return ""
		}
	}
	if !ColorEnabled(env("")) || ColorEnabled(env("1")) {
		t.Error("NO_COLOR not honoured")
	}
}
