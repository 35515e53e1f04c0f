// Package timeview draws a run's timeline and spend (debugger/timeline):
// the waterfall as plain text for `stepwise inspect --timeline`, and the
// workbench's Timeline and Spend panes. One set of glyphs serves both, so
// that a waterfall pasted from a CI log reads as the workbench shows it.
package timeview

import (
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/stepwise-dev/stepwise/debugger/timeline"
	"github.com/stepwise-dev/stepwise/tui/common"
	"github.com/stepwise-dev/stepwise/tui/format"
)

// Glyphs are the characters of a row's cells: model time solid, tool time
// shaded, the rest of a bar (waiting on items, control) a line, and time
// held at a stop hatched.
var Glyphs = [...]rune{
	timeline.CellNone:  ' ',
	timeline.CellBar:   '─',
	timeline.CellTool:  '▒',
	timeline.CellModel: '█',
	timeline.CellHeld:  '╱',
}

// Legend says what the glyphs mean.
const Legend = "█ model  ▒ tool  ─ waiting  ╱ held  ✗ failed"

// failedMark and okMark lead a row's label: a failure shows without
// colour too.
const (
	failedMark = "✗ "
	okMark     = "  "
)

// Summary is the run in one line: plan, status, time, calls, tokens, cost.
func Summary(t *timeline.Timeline) string { return strings.Join(summaryParts(t), summarySep) }

// summarySep parts the pieces of a summary.
const summarySep = " · "

// summaryLines is the summary in lines of at most width cells, broken
// between its pieces so that no figure is cut; only a piece wider than a
// line (a long plan name) is, in its middle.
func summaryLines(t *timeline.Timeline, width int) []string {
	var lines []string
	line := ""
	for _, part := range summaryParts(t) {
		part = common.ElideMiddle(part, width)
		switch {
		case line == "":
			line = part
		case ansi.StringWidth(line+summarySep+part) <= width:
			line += summarySep + part
		default:
			lines = append(lines, line)
			line = part
		}
	}
	return append(lines, line)
}

// summaryParts are the pieces of the run's summary.
func summaryParts(t *timeline.Timeline) []string {
	parts := []string{t.Plan()}
	if st := t.Status(); st != "" {
		parts = append(parts, string(st))
	} else {
		parts = append(parts, "running")
	}
	parts = append(parts, format.Duration(t.Whole().Span))
	s := t.Spend()
	if s.Calls > 0 {
		parts = append(parts, common.Count(s.Calls, "call"), format.Tokens(s.Tokens)+" tok")
		if s.Cost != nil {
			parts = append(parts, format.Cost(*s.Cost))
		}
	}
	return parts
}

// labelWidth is how wide the label column is for bars, in a view width
// wide: as wide as the widest label, at most a third of the view.
func labelWidth(bars []timeline.Bar, width int) int {
	w := 12
	for _, b := range bars {
		w = max(w, len(okMark)+2*b.Depth+ansi.StringWidth(b.Label)+1)
	}
	return min(w, max(width/3, 12))
}

// Label is a bar's label cell: its mark, indented by depth, cut or padded
// to width.
func Label(b timeline.Bar, width int) string {
	mark := okMark
	if b.Failed {
		mark = failedMark
	}
	s := mark + strings.Repeat(" ", 2*b.Depth) + b.Label
	if ansi.StringWidth(s) >= width {
		s = ansi.Truncate(s, width-1, "…")
	}
	return s + strings.Repeat(" ", width-ansi.StringWidth(s))
}

// Axis is the time axis over width columns of w: the offsets from the
// run's start at round steps, each label at its tick's column.
func Axis(w timeline.Window, runStart time.Time, width int) string {
	line := []rune(strings.Repeat(" ", width))
	step := tickStep(w.Span, width)
	first := w.Start.Sub(runStart).Truncate(step)
	if first < w.Start.Sub(runStart) {
		first += step
	}
	next := 0 // the first column free for a label
	for off := first; ; off += step {
		c := w.Column(runStart.Add(off), width)
		if c >= width {
			break
		}
		label := []rune("╵" + format.Duration(off))
		if c < next || c+len(label) > width {
			continue
		}
		copy(line[c:], label)
		next = c + len(label) + 1
	}
	return string(line)
}

// tickSteps are the steps a time axis ticks at: round numbers of
// milliseconds and seconds, whole minutes and hours, so that labels read
// 1m00s, 2m00s rather than 3m20s.
var tickSteps = []time.Duration{
	time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond,
	10 * time.Millisecond, 20 * time.Millisecond, 50 * time.Millisecond,
	100 * time.Millisecond, 200 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour,
}

// tickStep is the step that puts ticks some twelve columns apart: the
// first of tickSteps that wide, or whole hours.
func tickStep(span time.Duration, width int) time.Duration {
	want := time.Duration(int64(span) * 12 / int64(max(width, 1)))
	for _, step := range tickSteps {
		if step >= want {
			return step
		}
	}
	return want.Truncate(time.Hour) + time.Hour
}

// Row is the glyphs of a bar's row over width columns of w; cells is a
// buffer to draw in, handed back for the next row.
func Row(w timeline.Window, b timeline.Bar, now time.Time, width int, cells []timeline.Cell) (string, []timeline.Cell) {
	cells = w.Cells(cells, b, now, width)
	var s strings.Builder
	s.Grow(width * 3)
	for _, c := range cells {
		s.WriteRune(Glyphs[c])
	}
	return strings.TrimRight(s.String(), " "), cells
}

// Text is the waterfall of the whole run in width columns, one line a bar,
// under a summary and the time axis and over the legend: what
// `stepwise inspect RUN --timeline` prints.
func Text(t *timeline.Timeline, width int) string {
	bars := t.Bars(0, t.Len())
	lw := labelWidth(bars, width)
	bw := max(width-lw, 10)
	w := t.Whole()
	var out strings.Builder
	out.WriteString(Summary(t) + "\n")
	out.WriteString(strings.TrimRight(strings.Repeat(" ", lw)+Axis(w, t.Start(), bw), " ") + "\n")
	var cells []timeline.Cell
	for _, b := range bars {
		var row string
		row, cells = Row(w, b, t.Now(), bw, cells)
		out.WriteString(strings.TrimRight(Label(b, lw)+row, " ") + "\n")
	}
	out.WriteString(Legend + "\n")
	return out.String()
}
