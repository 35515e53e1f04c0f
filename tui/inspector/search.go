package inspector

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// hit is one match of the search on a page: bytes from:to of a line.
type hit struct{ line, from, to int }

// findHits finds every match of query in the page's lines, in order. A
// query in lower case matches either case; one with a capital matches
// exactly (smart case).
func findHits(page []line, query string) []hit {
	if query == "" {
		return nil
	}
	fold := lowerSameLen(query) == query
	var out []hit
	for i, l := range page {
		text := l.text
		if fold {
			text = lowerSameLen(text)
		}
		for at := 0; ; {
			j := strings.Index(text[at:], query)
			if j < 0 {
				break
			}
			out = append(out, hit{i, at + j, at + j + len(query)})
			at += j + len(query)
		}
	}
	return out
}

// lowerSameLen lower-cases s rune by rune, keeping each rune whose lower
// case is encoded in a different number of bytes, so that byte offsets in
// the result are offsets in s.
func lowerSameLen(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToLower(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if l := unicode.ToLower(r); r != utf8.RuneError && utf8.RuneLen(l) == size {
			b.WriteRune(l)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}
