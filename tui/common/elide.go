package common

import "github.com/charmbracelet/x/ansi"

// ElideMiddle fits s in w cells by putting Ellipsis in place of its
// middle. Names in a tree say most at their ends: a tool's server comes
// first and what it does last (tracker__add_comment), a tool call's
// place in its round is its suffix (.2), so both ends stay, the end a
// little longer: tracker__add_comment in 13 cells is track…comment.
func ElideMiddle(s string, w int) string {
	sw := TextWidth(s)
	switch {
	case sw <= w:
		return s
	case w <= 0:
		return ""
	case w == 1:
		return Ellipsis
	}
	keep := w - 1
	head := keep * 5 / 12
	return ansi.Truncate(s, head, "") + Ellipsis + ansi.TruncateLeft(s, sw-(keep-head), "")
}

// ElidePair fits two names shown side by side (a step's id and its tool)
// in w cells together, eliding the middle of each as it must. The shorter
// keeps its whole width while it takes no more than half; the longer then
// gets the rest.
func ElidePair(a, b string, w int) (string, string) {
	aw, bw := TextWidth(a), TextWidth(b)
	if aw+bw <= w {
		return a, b
	}
	half := max(w, 0) / 2
	switch {
	case aw <= half:
		return a, ElideMiddle(b, w-aw)
	case bw <= w-half:
		return ElideMiddle(a, w-bw), b
	}
	return ElideMiddle(a, half), ElideMiddle(b, w-half)
}

// Room is how many cells the line has left before its limit.
func (l *Line) Room() int { return max(l.limit-l.width, 0) }
