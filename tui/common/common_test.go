package common

import (
	"strings"
	"testing"

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
