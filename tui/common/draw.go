package common

import (
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// Ellipsis ends every line cut short.
const Ellipsis = "…"

// Fit makes a (possibly styled) line exactly width cells wide: cut with an
// ellipsis when longer, padded with spaces when shorter.
func Fit(s string, width int) string {
	if width <= 0 {
		return ""
	}
	w := ansi.StringWidth(s)
	switch {
	case w > width:
		return ansi.Truncate(s, width, Ellipsis)
	case w < width:
		return s + strings.Repeat(" ", width-w)
	}
	return s
}

// Clip cuts a line to at most width cells, with an ellipsis, without padding.
func Clip(s string, width int) string {
	if width <= 0 {
		return ""
	}
	if ansi.StringWidth(s) > width {
		return ansi.Truncate(s, width, Ellipsis)
	}
	return s
}

// Block makes lines exactly width by height: each line fitted, missing lines
// blank, extra lines dropped.
func Block(lines []string, width, height int) []string {
	if height <= 0 {
		return nil
	}
	out := make([]string, height)
	for i := range out {
		if i < len(lines) {
			out[i] = Fit(lines[i], width)
		} else {
			out[i] = Fit("", width)
		}
	}
	return out
}

// Screen cuts a whole rendered screen to height lines. Widths need no
// second pass: every pane is drawn through Frame and every other line
// through Fit, which already hold each line to its width.
func Screen(s string, height int) string {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			n++
			if n == height {
				return s[:i]
			}
		}
	}
	return s
}

type borderSet struct{ tl, tr, bl, br, h, v string }

var (
	roundBorder = borderSet{"╭", "╮", "╰", "╯", "─", "│"}
	thickBorder = borderSet{"┏", "┓", "┗", "┛", "━", "┃"}
)

// PaneTitle styles a pane's name for its frame.
func (t *Theme) PaneTitle(name string, focused bool) string {
	if focused {
		return t.TitleOn.Render(name)
	}
	return t.Title.Render(name)
}

// Frame draws a pane: a border around body, with title set into the top edge
// and footer into the bottom one. The focused pane gets a heavy border in the
// accent colour, so focus shows even without colour. The result is exactly
// width by height; body lines are fitted to the inside.
func Frame(t *Theme, width, height int, title, footer string, focused bool, body []string) string {
	if width < 2 || height < 2 {
		return strings.Join(Block(nil, width, height), "\n")
	}
	b, st := roundBorder, t.Border
	if focused {
		b, st = thickBorder, t.BorderOn
	}
	inner := width - 2
	var sb strings.Builder

	// Top edge: ╭─ title ─────╮
	sb.WriteString(st.Render(b.tl))
	if title != "" && inner >= 4 {
		title = Clip(title, inner-3)
		fill := inner - 3 - ansi.StringWidth(title)
		sb.WriteString(st.Render(b.h) + " " + title + " " + st.Render(strings.Repeat(b.h, fill)))
	} else {
		sb.WriteString(st.Render(strings.Repeat(b.h, inner)))
	}
	sb.WriteString(st.Render(b.tr))
	sb.WriteByte('\n')

	left, right := st.Render(b.v), st.Render(b.v)
	for _, l := range Block(body, inner, height-2) {
		sb.WriteString(left + l + right + "\n")
	}

	// Bottom edge: ╰──── footer ─╯
	sb.WriteString(st.Render(b.bl))
	if footer != "" && inner >= 4 {
		footer = Clip(footer, inner-3)
		fill := inner - 3 - ansi.StringWidth(footer)
		sb.WriteString(st.Render(strings.Repeat(b.h, fill)) + " " + footer + " " + st.Render(b.h))
	} else {
		sb.WriteString(st.Render(strings.Repeat(b.h, inner)))
	}
	sb.WriteString(st.Render(b.br))
	return sb.String()
}

// Scroll is the position of a scrolled list: the first visible line and how
// many fit. It is shared by every pane that scrolls, so they all keep their
// selection in view the same way.
type Scroll struct {
	Offset int
}

// Follow moves the window of height lines over total lines so that line
// cursor is inside it, moving as little as possible.
func (s Scroll) Follow(cursor, height, total int) Scroll {
	if cursor < s.Offset {
		s.Offset = cursor
	}
	if height > 0 && cursor >= s.Offset+height {
		s.Offset = cursor - height + 1
	}
	return s.Clamp(height, total)
}

// Clamp keeps the window inside the content: no blank space past the end
// when the content could fill it.
func (s Scroll) Clamp(height, total int) Scroll {
	s.Offset = min(s.Offset, max(total-height, 0))
	s.Offset = max(s.Offset, 0)
	return s
}

// Position renders "cursor/total" for a pane footer, 1-based.
func Position(cursor, total int) string {
	if total == 0 {
		return ""
	}
	return strconv.Itoa(cursor+1) + "/" + strconv.Itoa(total)
}

// Count is n things in words, the noun in the plural unless n is 1:
// "1 run", "3 runs", "0 notes".
func Count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// Line builds one styled line no wider than a limit, measuring the plain
// text it is given rather than the styled result, and cutting the text
// (not the escape codes) when the limit is reached.
type Line struct {
	b     strings.Builder
	width int
	limit int
	cut   bool
}

// NewLine starts a line at most limit cells wide.
func NewLine(limit int) *Line { return &Line{limit: max(limit, 0)} }

// Add appends text in paint p, cut with an ellipsis if it does not fit;
// once the line is cut, further text is dropped.
func (l *Line) Add(text string, p Paint) {
	l.AddWidth(text, -1, p)
}

// AddWidth is Add for text whose width the caller knows (w), saving the
// measurement; w < 0 means unknown.
func (l *Line) AddWidth(text string, w int, p Paint) {
	if l.cut || text == "" {
		return
	}
	if w < 0 {
		w = TextWidth(text)
	}
	if l.width+w > l.limit {
		room := l.limit - l.width
		text = ansi.Truncate(text, room, Ellipsis)
		w = TextWidth(text)
		l.cut = true
	}
	l.b.WriteString(p.Render(text))
	l.width += w
}

// PadTo fills the line with spaces in style st up to width cells, which
// may lie past the limit (the room left for a right-aligned marker).
func (l *Line) PadTo(width int, p Paint) {
	if n := width - l.width; n > 0 {
		l.b.WriteString(p.Render(strings.Repeat(" ", n)))
		l.width = width
	}
}

// Width is the width of the line so far.
func (l *Line) Width() int { return l.width }

// String returns the line.
func (l *Line) String() string { return l.b.String() }

// TextWidth is the width of unstyled text in cells, with a fast path for
// ASCII.
func TextWidth(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return ansi.StringWidth(s)
		}
	}
	return len(s)
}

// Paint is a style reduced to the escape codes before and after its text.
// lipgloss' Render lays out its input on every call, which adds up on hot
// paths that style many short runs (a tree row has half a dozen); a Paint
// is worked out once and then only concatenates. It suits single-line text
// in styles of colour and weight, which is all the tree and lists use.
type Paint struct{ pre, post string }

// PaintOf reduces a style to a Paint.
func PaintOf(s lipgloss.Style) Paint {
	const probe = "x"
	out := s.Render(probe)
	i := strings.Index(out, probe)
	if i < 0 {
		return Paint{}
	}
	return Paint{pre: out[:i], post: out[i+len(probe):]}
}

// Render wraps text in the paint's codes.
func (p Paint) Render(text string) string {
	if p.pre == "" && p.post == "" {
		return text
	}
	return p.pre + text + p.post
}
