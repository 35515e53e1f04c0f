package detail

import (
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/stepwise-dev/stepwise/tui/common"
)

// seg is a run of text in one style.
type seg struct {
	text  string
	style lipgloss.Style
}

// wrap lays segments out in lines at most width cells wide, breaking at
// spaces where it can and inside a word where it must. Explicit newlines
// start a new line. The first line starts with indent, the rest with hang.
// Each line is styled on its own, so no style runs across a line break and
// into the pane's border.
func wrap(segs []seg, width int, indent, hang string) []string {
	// Flatten to one string with the style of every byte range, so breaking
	// is done on plain text and styling after.
	var plain strings.Builder
	type run struct {
		start, end int
		style      lipgloss.Style
	}
	runs := make([]run, 0, len(segs))
	for _, s := range segs {
		start := plain.Len()
		plain.WriteString(s.text)
		runs = append(runs, run{start, plain.Len(), s.style})
	}
	text := plain.String()

	style := func(from, to int) string {
		var b strings.Builder
		for _, r := range runs {
			lo, hi := max(r.start, from), min(r.end, to)
			if lo < hi {
				b.WriteString(r.style.Render(text[lo:hi]))
			}
		}
		return b.String()
	}

	var out []string
	prefix := indent
	room := func() int { return max(width-ansi.StringWidth(prefix), 1) }
	// Paths, templates and lists of choices have no spaces
	// to break at: a narrow pane breaks them after their separators,
	// not inside a word.
	common.WrapRanges(text, breakAfter, room, func(from, to int) {
		out = append(out, prefix+style(from, to))
		prefix = hang
	})
	return out
}

// breakAfter is what a line of the detail may end after besides a space.
const breakAfter = "/.|,"

// templateSegs splits a template string into plain text and {{tags}}, so
// tags stand out where they are written.
func templateSegs(s string, text, tag lipgloss.Style) []seg {
	var out []seg
	for s != "" {
		open := strings.Index(s, "{{")
		if open < 0 {
			break
		}
		closeAt := strings.Index(s[open:], "}}")
		if closeAt < 0 {
			break
		}
		end := open + closeAt + 2
		if open > 0 {
			out = append(out, seg{s[:open], text})
		}
		out = append(out, seg{s[open:end], tag})
		s = s[end:]
	}
	if s != "" {
		out = append(out, seg{s, text})
	}
	return out
}
