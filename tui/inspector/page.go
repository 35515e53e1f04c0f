package inspector

import (
	"strings"

	"charm.land/lipgloss/v2"

	"github.com/stepwise-dev/stepwise/tui/common"
)

// line is one laid-out line of a tab: its plain text, which search reads,
// and the paint of each run of it, so the line can be drawn again with the
// search hits marked without laying it out again.
type line struct {
	text  string
	spans []span
	// open is the fold key of the JSON object or array that starts on
	// this line, "" when none does; in is the key of the innermost one the
	// line lies inside; shut says the one that opens here is folded.
	open, in string
	shut     bool
}

// span paints text[from:to] of its line.
type span struct {
	from, to int
	paint    common.Paint
}

// render draws the line, with the byte ranges in hits (sorted, disjoint)
// in the hit paint over whatever paint they had.
func (l line) render(hits [][2]int, hit common.Paint) string {
	if len(hits) == 0 && len(l.spans) == 1 && l.spans[0].from == 0 && l.spans[0].to == len(l.text) {
		return l.spans[0].paint.Render(l.text)
	}
	var b strings.Builder
	pos := 0
	// plain draws text[pos:to] in the paints of the spans it crosses.
	plain := func(to int) {
		for _, s := range l.spans {
			lo, hi := max(s.from, pos), min(s.to, to)
			if lo >= hi {
				continue
			}
			if lo > pos {
				b.WriteString(l.text[pos:lo])
			}
			b.WriteString(s.paint.Render(l.text[lo:hi]))
			pos = hi
		}
		if pos < to {
			b.WriteString(l.text[pos:to])
			pos = to
		}
	}
	for _, h := range hits {
		plain(h[0])
		b.WriteString(hit.Render(l.text[h[0]:h[1]]))
		pos = h[1]
	}
	plain(len(l.text))
	return b.String()
}

// seg is a run of text in one paint, the unit pages are built from.
type seg struct {
	text  string
	paint common.Paint
}

// paints are the theme's styles reduced to escape codes, worked out once
// per theme rather than on every line.
type paints struct {
	heading, muted, text, strong, key, literal, problem, valid, note common.Paint
	tab, tabOn, hit, marker                                          common.Paint
}

func newPaints(t *common.Theme) paints {
	return paints{
		heading: common.PaintOf(t.Heading), muted: common.PaintOf(t.Muted), text: common.PaintOf(t.Text),
		strong: common.PaintOf(t.Strong), key: common.PaintOf(t.Key), literal: common.PaintOf(t.Literal),
		problem: common.PaintOf(t.Problem), valid: common.PaintOf(t.Valid), note: common.PaintOf(t.Note),
		tab: common.PaintOf(t.Tab), tabOn: common.PaintOf(t.TabOn),
		// Reverse video, so a match shows without colour too.
		hit:    common.PaintOf(lipgloss.NewStyle().Reverse(true)),
		marker: common.PaintOf(t.Heading),
	}
}

// wrap lays segments out as lines at most width cells wide, breaking at a
// space where it can and inside a word where it must; a newline starts a
// new line. The first line starts with indent, the rest with hang. It
// appends to out and returns it. Text is cleaned of control characters
// on the way (see clean).
func wrap(out []line, segs []seg, width int, indent, hang string) []line {
	var plain strings.Builder
	type run struct {
		start, end int
		paint      common.Paint
	}
	runs := make([]run, 0, len(segs))
	for _, s := range segs {
		start := plain.Len()
		plain.WriteString(clean(s.text))
		runs = append(runs, run{start, plain.Len(), s.paint})
	}
	text := plain.String()
	prefix := indent
	emit := func(from, to int) {
		l := line{text: prefix + text[from:to]}
		shift := len(prefix) - from
		for _, r := range runs {
			lo, hi := max(r.start, from), min(r.end, to)
			if lo < hi {
				l.spans = append(l.spans, span{lo + shift, hi + shift, r.paint})
			}
		}
		out = append(out, l)
		prefix = hang
	}
	room := func() int { return max(width-common.TextWidth(prefix), 1) }
	common.WrapRanges(text, "", room, emit)
	return out
}

// builder lays out one tab's page at a width.
type builder struct {
	p     *paints
	width int
	lines []line
	// folded says whether the JSON container with a fold key is folded;
	// def is what it is when the user has not said.
	folded func(key string, def bool) bool
}

// add wraps segments at indent, continuation lines indented two more.
func (b *builder) add(indent int, segs ...seg) {
	pad := strings.Repeat(" ", indent)
	b.lines = wrap(b.lines, segs, b.width, pad, pad+"  ")
}

// heading starts a section, after a blank line unless it is the first.
func (b *builder) heading(s string, extra ...seg) {
	if len(b.lines) > 0 {
		b.lines = append(b.lines, line{})
	}
	b.add(0, append([]seg{{s, b.p.heading}}, extra...)...)
}

// note is a muted remark at indent.
func (b *builder) note(indent int, s string) { b.add(indent, seg{s, b.p.muted}) }

// field is "label value" at indent, the value wrapping under itself.
func (b *builder) field(indent int, label, value string, p common.Paint) {
	b.add(indent, seg{label + " ", b.p.muted}, seg{value, p})
}

// text writes a block of text at indent, its lines kept and wrapped.
func (b *builder) text(indent int, s string, p common.Paint) {
	pad := strings.Repeat(" ", indent)
	b.lines = wrap(b.lines, []seg{{s, p}}, b.width, pad, pad)
}

// problem writes an error, marked with ✗ so it shows without colour.
func (b *builder) problem(indent int, s string) {
	pad := strings.Repeat(" ", indent)
	b.lines = wrap(b.lines, []seg{{"✗ ", b.p.problem}, {s, b.p.text}}, b.width, pad, pad+"  ")
}
