package plans

import (
	"strings"
	"testing"
	"unicode/utf8"
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
		x := newRuneIndex(s)
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
}
