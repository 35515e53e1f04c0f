package inspector

import (
	"strings"
	"unicode/utf8"

	"github.com/stepwise-dev/stepwise/tui/common"
)

// stream is a block of text that grows while a reply streams in, laid out
// incrementally: when the text only grew, the lines before the last are
// kept and only the last is laid out again with what was appended, which
// gives the same lines as laying out the whole text, since breaking is
// greedy from each line's start. A reply of tens of kilobytes thus costs
// each frame what its newest line and the delta cost, not its length.
type stream struct {
	raw    string          // the text as given, up to where it is laid out
	buf    strings.Builder // the same text cleaned for drawing; lines slice it
	width  int
	indent int
	paint  common.Paint
	lines  []line
	starts []int // the offset in buf at which each line starts
}

// lay returns the lines of text at indent and width, as a stream that was
// last given a prefix of text would, reusing what it can.
func (s *stream) lay(text string, width, indent int, p common.Paint) []line {
	grown := width == s.width && indent == s.indent && p == s.paint && s.lines != nil &&
		strings.HasPrefix(text, s.raw) && (len(text) == len(s.raw) || utf8.RuneStart(text[len(s.raw)]))
	if !grown {
		s.raw, s.lines, s.starts = "", nil, nil
		s.buf = strings.Builder{}
		s.width, s.indent, s.paint = width, indent, p
	} else if len(text) == len(s.raw) {
		return s.lines
	}
	s.buf.WriteString(clean(text[len(s.raw):]))
	s.raw = text
	all := s.buf.String()
	from := 0
	if n := len(s.lines); n > 0 {
		from = s.starts[n-1]
		s.lines, s.starts = s.lines[:n-1], s.starts[:n-1]
	}
	pad := strings.Repeat(" ", indent)
	room := func() int { return max(width-indent, 1) }
	common.WrapRanges(all[from:], "", room, func(a, b int) {
		a, b = a+from, b+from
		s.lines = append(s.lines, line{text: pad + all[a:b], spans: []span{{indent, indent + b - a, p}}})
		s.starts = append(s.starts, a)
	})
	return s.lines
}

// clean makes text safe to draw: tabs become spaces, and control
// characters other than newlines, which could move the terminal's cursor
// or restyle the screen, show as a visible mark. Text without any is
// returned as it is.
func clean(s string) string {
	i := 0
	for ; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\n') || c == 0x7f {
			break
		}
	}
	if i == len(s) && !strings.ContainsRune(s, 0x9b) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r == '\t':
			b.WriteString("    ")
		case r == '\n':
			b.WriteByte('\n')
		case r < 0x20 || (r >= 0x7f && r < 0xa0):
			b.WriteRune('�')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
