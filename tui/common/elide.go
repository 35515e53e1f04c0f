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

// ElidePair fits two names shown side by side, two cells apart (a
// step's id and its tool), in w cells. The first is the row's own name
// and wins: it stays whole while it fits, losing its middle only where it
// alone does not; the second gets what is left, its middle elided, and is
// dropped (returned empty) where that is under minElided cells.
func ElidePair(a, b string, w int) (string, string) {
	aw, bw := TextWidth(a), TextWidth(b)
	switch {
	case aw+pairGap+bw <= w:
		return a, b
	case w-pairGap-aw >= minElided:
		return a, ElideMiddle(b, w-pairGap-aw)
	}
	return ElideMiddle(a, w), ""
}

// pairGap is the cells between the two names of a pair; minElided the
// fewest cells a name is cut to beside another.
const (
	pairGap   = 2
	minElided = 6
)

// Room is how many cells the line has left before its limit.
func (l *Line) Room() int { return max(l.limit-l.width, 0) }
