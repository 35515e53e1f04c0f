package common

// BreakMark is what a tree's gutter shows of the breakpoints on a row: a
// disabled one keeps its place in sight (○), so that a key that acts on
// the row's breakpoints never acts on one the user cannot see.
type BreakMark uint8

// The marks, an enabled breakpoint winning over a disabled one.
const (
	NoBreak  BreakMark = iota
	BreakOff           // only disabled breakpoints: ○
	BreakOn            // an enabled one: ●
)

// Glyph is the gutter's glyph of a mark, a space for none.
func (b BreakMark) Glyph() string {
	switch b {
	case BreakOn:
		return "●"
	case BreakOff:
		return "○"
	}
	return " "
}
