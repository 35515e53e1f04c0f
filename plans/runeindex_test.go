package plans

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stepwise-dev/stepwise/plans/yamlpos"
)

// TestRuneIndex holds each count of the index, at every character of a
// string, to the count made from the start.
func TestRuneIndex(t *testing.T) {
	for _, s := range []string{
		"",
		"{{a}}",
		"{{{x}} {{y}}",
		"it's {{a.b}}\nline 'two' é😀 {{c}}\n\n{{",
		strings.Repeat("é{{x}}'\n", 40) + strings.Repeat("ab", 70),
		strings.Repeat("x", runeIndexStep*3),
	} {
		for _, x := range []*runeIndex{newRuneIndex(s), {s: s}} {
			holdRuneIndex(t, x)
		}
	}
}

// holdRuneIndex holds each count of x, at every character of its string,
// to the count made from the start.
func holdRuneIndex(t *testing.T, x *runeIndex) {
	t.Helper()
	s := x.s
	for off := 0; off <= len(s); off++ {
		if off < len(s) && !utf8.RuneStart(s[off]) {
			continue
		}
		before := s[:off]
		// The last "{{" as strings.Count finds them, left to right
		// without overlap: "{{{" holds one, at its start.
		lastTag := -1
		for i := 0; ; {
			j := strings.Index(before[i:], "{{")
			if j < 0 {
				break
			}
			lastTag, i = i+j, i+j+2
		}
		switch {
		case x.runesBefore(off) != utf8.RuneCountInString(before):
			t.Fatalf("%q at %d: %d characters, want %d", s, off, x.runesBefore(off), utf8.RuneCountInString(before))
		case x.newlinesBefore(off) != strings.Count(before, "\n"):
			t.Fatalf("%q at %d: %d newlines", s, off, x.newlinesBefore(off))
		case x.quotesBefore(off) != strings.Count(before, "'"):
			t.Fatalf("%q at %d: %d quotes", s, off, x.quotesBefore(off))
		case x.lastNewlineBefore(off) != strings.LastIndexByte(before, '\n'):
			t.Fatalf("%q at %d: last newline %d", s, off, x.lastNewlineBefore(off))
		case x.tagsBefore(off) != strings.Count(before, "{{"):
			t.Fatalf("%q at %d: %d tags, want %d", s, off, x.tagsBefore(off), strings.Count(before, "{{"))
		case x.lastTagBefore(off) != lastTag:
			t.Fatalf("%q at %d: last tag %d, want %d", s, off, x.lastTagBefore(off), lastTag)
		}
	}
}

// TestLineFrom holds the decoder's sparse index of a long line to counting
// from the line's start, at every column and past the end.
func TestLineFrom(t *testing.T) {
	long := strings.Repeat("aé😀{{x}} ", 3*lineStep)
	src := "short é line\n" + long + "\r\n"
	d := newDecoder("f.yaml", src, &Report{}, Stepwise)
	for _, tc := range []struct {
		line int
		text string
	}{{1, "short é line"}, {2, long}} {
		n := utf8.RuneCountInString(tc.text)
		for col := 1; col <= n+2; col++ {
			if got, want := d.lineFrom(tc.line, col), yamlpos.SkipRunes(tc.text, col-1); got != want {
				t.Fatalf("lineFrom(%d, %d) = %.20q…, want %.20q…", tc.line, col, got, want)
			}
		}
	}
	if len(long) < longLine {
		t.Fatalf("the long line has %d bytes, under longLine (%d): the index is not exercised", len(long), longLine)
	}
}
