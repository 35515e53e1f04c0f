package inspector

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/stepwise-dev/stepwise/tui/common"
)

// TestStreamLayout feeds texts to a stream in random pieces and checks
// that every step lays out what a fresh stream lays out from the whole
// text, and that no line is wider than the width.
func TestStreamLayout(t *testing.T) {
	texts := map[string]string{
		"prose":     strings.Repeat("one two three four five six seven eight nine ten ", 20),
		"long word": strings.Repeat("x", 95) + " tail " + strings.Repeat("y", 41),
		"wide":      strings.Repeat("漢字かな混じり文 ", 15),
		"newlines":  "a\n\nb\nccc ccc ccc ccc ccc ccc ccc ccc ccc ccc ccc\n\n",
		"controls":  "tab\there, bell\a, escape \x1b[31mred\x1b[m, C1 \u009b2J, and on",
	}
	p := newPaints(common.NewTheme(true, false))
	for name, text := range texts {
		for seed := range uint64(20) {
			r := rand.New(rand.NewPCG(seed, 1))
			width := 5 + r.IntN(40)
			var s stream
			for at := 0; at < len(text); {
				at = min(at+1+r.IntN(12), len(text))
				// Cut only between runes, as deltas are.
				for at < len(text) && !utf8Start(text[at]) {
					at++
				}
				got := s.lay(text[:at], width, 2, p.text)
				var fresh stream
				want := fresh.lay(text[:at], width, 2, p.text)
				if !slices.EqualFunc(got, want, func(a, b line) bool { return a.text == b.text }) {
					t.Fatalf("%s, width %d, at %d: incremental %q, whole %q", name, width, at, texts2(got), texts2(want))
				}
				for _, l := range got {
					if w := ansi.StringWidth(l.text); w > width {
						t.Fatalf("%s: line %q is %d wide, over %d", name, l.text, w, width)
					}
					if strings.ContainsAny(l.text, "\x1b\a\t\u009b") {
						t.Fatalf("%s: a control character reached the screen: %q", name, l.text)
					}
				}
			}
		}
	}
	// A reply that starts over (a retried attempt) is laid out afresh.
	var s stream
	s.lay("first attempt that timed out", 10, 0, p.text)
	got := s.lay("second", 10, 0, p.text)
	if len(got) != 1 || got[0].text != "second" {
		t.Errorf("after a reset: %q", texts2(got))
	}
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

func texts2(ls []line) []string {
	var out []string
	for _, l := range ls {
		out = append(out, l.text)
	}
	return out
}

func TestDiffLines(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		want string // one op a line: "  ", "- " or "+ " and the text
	}{
		{"same", "a\nb", "a\nb", "  a\n  b"},
		{"one changed", "a\nb\nc", "a\nB\nc", "  a\n- b\n+ B\n  c"},
		{"added at the end", "a", "a\nb", "  a\n+ b"},
		{"all new", "", "x\ny", "+ x\n+ y"},
		{"removed in the middle", "a\nb\nc\nd", "a\nd", "  a\n- b\n- c\n  d"},
	}
	split := func(s string) []string {
		if s == "" {
			return nil
		}
		return strings.Split(s, "\n")
	}
	for _, tc := range tests {
		var out []string
		for _, op := range diffLines(split(tc.a), split(tc.b)) {
			out = append(out, [...]string{"  ", "- ", "+ "}[op.kind]+op.text)
		}
		if got := strings.Join(out, "\n"); got != tc.want {
			t.Errorf("%s:\n%s\nwant:\n%s", tc.name, got, tc.want)
		}
	}
}

// TestJSONLines checks the pretty-printed form the views and the repair
// diff share: sorted keys, two-space indent, strings escaped as JSON.
func TestJSONLines(t *testing.T) {
	v, ok := parseJSON(`{"b": [1, true, null], "a": {"x\"y": "line\nbreak\u0007"}, "c": {}, "d": []}`)
	if !ok {
		t.Fatal("not parsed")
	}
	want := `{
  "a": {
    "x\"y": "line\nbreak\u0007"
  },
  "b": [
    1,
    true,
    null
  ],
  "c": {},
  "d": []
}`
	if got := strings.Join(plainLines(v), "\n"); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if _, ok := parseJSON("Let me look."); ok {
		t.Error("prose parsed as JSON")
	}
}
