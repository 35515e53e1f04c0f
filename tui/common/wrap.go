package common

import (
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// Wrap is the one word wrap of the workbench: it breaks plain text into
// lines at most width cells wide, as WrapRanges does.
func Wrap(text string, width int, breakAfter string) []string {
	var out []string
	WrapRanges(text, breakAfter, func() int { return max(width, 1) }, func(from, to int) {
		out = append(out, text[from:to])
	})
	return out
}

// WrapRanges breaks text into lines and hands emit the byte range of each,
// for a caller that paints the pieces of a line itself. room says how many
// cells the next line has; it is asked before each line, so that a first
// line can be narrower than the rest. A line breaks at a space where it can
// (the space is dropped), after a rune of breakAfter where it can, and
// inside a word where it must; a newline always starts a new line, and an
// empty line is one empty range.
func WrapRanges(text, breakAfter string, room func() int, emit func(from, to int)) {
	for start := 0; ; {
		nl := strings.IndexByte(text[start:], '\n')
		end := len(text)
		if nl >= 0 {
			end = start + nl
		}
		wrapLine(text, start, end, breakAfter, room, emit)
		if nl < 0 {
			return
		}
		start = end + 1
	}
}

// wrapLine is WrapRanges for text[from:to], which holds no newline.
func wrapLine(text string, from, to int, breakAfter string, room func() int, emit func(from, to int)) {
	if from == to {
		emit(from, to)
		return
	}
	for start := from; start < to; {
		limit := room()
		// lastBreak is where the line can end, next where the line after
		// it then starts.
		w, i, lastBreak, next := 0, start, -1, -1
		for i < to {
			r, size, rw := rune(text[i]), 1, 1
			// Printable ASCII is one cell; anything else asks.
			if r < ' ' || r >= 0x7f {
				r, size = utf8.DecodeRuneInString(text[i:])
				rw = ansi.StringWidth(text[i : i+size])
			}
			if w+rw > limit {
				break
			}
			switch {
			case r == ' ':
				lastBreak, next = i, i+1
			case breakAfter != "" && strings.ContainsRune(breakAfter, r):
				lastBreak, next = i+size, i+size
			}
			w += rw
			i += size
		}
		if i >= to {
			emit(start, to)
			return
		}
		brk := i
		switch {
		case text[i] == ' ': // full right before a space: drop the space
			next = i + 1
		case lastBreak > start:
			brk = lastBreak
		default:
			next = i
		}
		if brk == start { // not one rune fits: take one anyway
			_, size := utf8.DecodeRuneInString(text[start:])
			brk, next = start+size, start+size
		}
		emit(start, brk)
		start = next
	}
}
