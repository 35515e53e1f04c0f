// Package timeview draws a run's timeline and spend (debugger/timeline):
// the waterfall as plain text for `stepwise inspect --timeline`, and the
// workbench's Timeline and Spend panes. One set of glyphs serves both, so
// that a waterfall pasted from a CI log reads as the workbench shows it.
package timeview

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/stepwise-dev/stepwise/debugger/timeline"
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/path"
	"github.com/stepwise-dev/stepwise/tui/common"
	"github.com/stepwise-dev/stepwise/tui/format"
)

// Glyphs are the characters of a row's cells: model time solid, tool time
// shaded, the rest of a bar (waiting on items, control) a line, time held
// at a stop hatched, and a unit that took no time (an exit) a tick.
var Glyphs = [...]rune{
	timeline.CellNone:    ' ',
	timeline.CellBar:     '─',
	timeline.CellTool:    '▒',
	timeline.CellModel:   '█',
	timeline.CellHeld:    '╱',
	timeline.CellInstant: '│',
}

// Legend says what the glyphs mean.
const Legend = "█ model  ▒ tool  ─ waiting  │ instant  ╱ held  ✗ failed"

// abortedLegend follows the Legend for a run that was aborted.
const abortedLegend = "  ■ aborted"

// paintedLegend is the Legend with each glyph in the colour it has on a
// row, and abortedLegend when aborted.
func paintedLegend(t *common.Theme, aborted bool) string {
	glyph := func(c timeline.Cell) string { return cellStyle(t, c, false).Render(string(Glyphs[c])) }
	legend := glyph(timeline.CellModel) + " model  " + glyph(timeline.CellTool) + " tool  " + glyph(timeline.CellBar) + " waiting  " +
		glyph(timeline.CellInstant) + " instant  " + glyph(timeline.CellHeld) + " held  " + t.Problem.Render("✗") + " failed"
	if aborted {
		legend += "  " + t.Problem.Render("■") + " aborted"
	}
	return legend
}

// failedMark, abortedMark and okMark lead a row's label: a failure, and a
// unit the run's abort cut short, show without colour too; the run tree
// marks them alike.
const (
	failedMark  = "✗ "
	abortedMark = "■ "
	okMark      = "  "
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

// minName is the fewest cells of its name a label keeps before its
// indent gives way.
const minName = 8

// Label is a bar's label cell: its mark, indented by depth, padded to
// width. A label too long loses its middle, as names do in the run tree:
// a tool call's server and its place in its round (.2) both stay, and a
// step's id and its tool are cut as the tree cuts them, each in its
// middle. The last cell stays blank, between the label and the bar.
func Label(b timeline.Bar, width int) string {
	mark := okMark
	switch {
	case b.Aborted:
		mark = abortedMark
	case b.Failed:
		mark = failedMark
	}
	// The depth gives way to the name before the name falls under
	// minName cells, enough to tell it from its siblings.
	free := width - 1 - ansi.StringWidth(mark)
	need := min(ansi.StringWidth(b.Label), minName)
	indent := strings.Repeat(" ", max(min(2*b.Depth, free-need), 0))
	room := free - len(indent)
	name := common.ElideMiddle(b.Label, room)
	if id, tool, ok := strings.Cut(b.Label, " "); ok && name != b.Label {
		// A step's id and its tool are two names: each keeps its ends.
		id, tool = common.ElidePair(id, tool, room+1)
		name = strings.TrimSpace(id + " " + tool)
	}
	s := mark + indent + name
	return s + strings.Repeat(" ", max(width-ansi.StringWidth(s), 0))
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

// TextOptions say what of a run Text draws.
type TextOptions struct {
	// Width is the waterfall's width in columns.
	Width int
	// Rows is the most bars drawn, 0 for all. A run with more is cut:
	// the units outside map items come first, then the items of every
	// map, the failed and then the slowest first, each with the units in
	// it, and each map says how many of its items were left out. A CI
	// log wants the outliers, not the first two hundred items.
	Rows int
	// Step, a path pattern (* within a segment, ** across), draws only
	// the units it matches and the units under them, on the stretch of
	// time they span; empty for the whole run.
	Step string
	// Theme paints the bars and the legend as the workbench does (model,
	// tool, held, failed), for a terminal; nil draws plain text, for a
	// log or a file.
	Theme *common.Theme
}

// Text is the waterfall of a run, one line a bar, under a summary and the
// time axis and over the legend: what `stepwise inspect RUN --timeline`
// prints. It fails only on a Step that is no pattern or matches no unit.
func Text(t *timeline.Timeline, opts TextOptions) (string, error) {
	bars := t.Bars(0, t.Len())
	w := t.Whole()
	summary := Summary(t)
	if opts.Step != "" {
		var err error
		if bars, w, err = subtrees(t, bars, opts.Step); err != nil {
			return "", err
		}
		summary += summarySep + "under " + opts.Step
	}
	forest := plant(bars)
	cut := opts.Rows > 0 && len(bars) > opts.Rows
	if cut {
		pick(forest, opts.Rows)
	} else {
		for _, n := range forest {
			n.showAll()
		}
	}
	var shown []timeline.Bar
	for _, n := range forest {
		n.walk(func(n *textNode) { shown = append(shown, n.bar) })
	}
	lw := labelWidth(shown, opts.Width)
	bw := max(opts.Width-lw, 10)
	var out strings.Builder
	out.WriteString(summary + "\n")
	out.WriteString(strings.TrimRight(strings.Repeat(" ", lw)+Axis(w, t.Start(), bw), " ") + "\n")
	var cells []timeline.Cell
	var paints *cellPaints
	if opts.Theme != nil {
		paints = paintsOf(opts.Theme)
	}
	var draw func(n *textNode)
	draw = func(n *textNode) {
		if paints == nil {
			var row string
			row, cells = Row(w, n.bar, t.Now(), bw, cells)
			out.WriteString(strings.TrimRight(Label(n.bar, lw)+row, " ") + "\n")
		} else {
			cells = w.Cells(cells, n.bar, t.Now(), bw)
			label := Label(n.bar, lw)
			if n.bar.Failed {
				label = opts.Theme.Problem.Render(label)
			}
			out.WriteString(label)
			// As the plain row, without the blank columns after the bar.
			end := len(cells)
			for end > 0 && cells[end-1] == timeline.CellNone {
				end--
			}
			paints.row(&out, cells[:end], n.bar.Failed)
			out.WriteString("\n")
		}
		for _, c := range n.children {
			if c.shown {
				draw(c)
			}
		}
		if left, failed, aborted := n.itemsLeft(); left > 0 {
			note := okMark + strings.Repeat(" ", 2*(n.bar.Depth+1)) + "⋯ " + common.Count(left, "more item")
			if failed > 0 {
				note += ", " + strconv.Itoa(failed) + " failed"
			}
			if aborted > 0 {
				note += ", " + strconv.Itoa(aborted) + " aborted"
			}
			out.WriteString(note + "\n")
		}
	}
	for _, n := range forest {
		if n.shown {
			draw(n)
		}
	}
	if cut {
		fmt.Fprintf(&out, "%d of %d rows shown (a map's failed and slowest items first); --rows 0 shows all\n", len(shown), len(bars))
	}
	aborted := t.Status() == engine.StatusAborted
	switch {
	case paints != nil:
		out.WriteString(paintedLegend(opts.Theme, aborted) + "\n")
	case aborted:
		out.WriteString(Legend + abortedLegend + "\n")
	default:
		out.WriteString(Legend + "\n")
	}
	return out.String(), nil
}

// subtrees keeps the bars step matches and the bars under them, each a
// level as deep as it is under the bar matched, and the window of time
// they span.
func subtrees(t *timeline.Timeline, bars []timeline.Bar, step string) ([]timeline.Bar, timeline.Window, error) {
	pat, err := path.Compile(step)
	if err != nil {
		return nil, timeline.Window{}, fmt.Errorf("--step: %w", err)
	}
	var kept, top []timeline.Bar
	var start, end time.Time
	root := -1 // the depth of the bar matched the bars now kept are under
	for _, b := range bars {
		if root >= 0 && b.Depth > root {
			b.Depth -= root
			kept = append(kept, b)
			continue
		}
		root = -1
		if b.Depth == 0 {
			top = append(top, b)
		}
		if !pat.Match(b.Path) {
			continue
		}
		root = b.Depth
		b.Depth = 0
		kept = append(kept, b)
		bEnd := b.End
		if bEnd.IsZero() {
			bEnd = t.Now()
		}
		if start.IsZero() || b.Start.Before(start) {
			start = b.Start
		}
		end = later(end, bEnd)
	}
	if len(kept) == 0 {
		var names []string
		for _, b := range top {
			names = append(names, b.Path)
		}
		return nil, timeline.Window{}, fmt.Errorf("--step %s matches no unit of run %s; its steps: %s (* matches within a segment, ** across)", step, t.RunID(), strings.Join(names, ", "))
	}
	return kept, timeline.Window{Start: start, Span: max(end.Sub(start), time.Millisecond)}, nil
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// textNode is a bar with the bars under it, and whether Text draws it.
type textNode struct {
	bar      timeline.Bar
	children []*textNode
	shown    bool
}

// plant makes a forest of bars in tree order.
func plant(bars []timeline.Bar) []*textNode {
	var roots, stack []*textNode
	for _, b := range bars {
		n := &textNode{bar: b}
		for len(stack) > 0 && stack[len(stack)-1].bar.Depth >= b.Depth {
			stack = stack[:len(stack)-1]
		}
		if len(stack) == 0 {
			roots = append(roots, n)
		} else {
			up := stack[len(stack)-1]
			up.children = append(up.children, n)
		}
		stack = append(stack, n)
	}
	return roots
}

func (n *textNode) walk(f func(*textNode)) {
	if !n.shown {
		return
	}
	f(n)
	for _, c := range n.children {
		c.walk(f)
	}
}

func (n *textNode) showAll() {
	n.shown = true
	for _, c := range n.children {
		c.showAll()
	}
}

// itemsLeft counts the items under n that are not drawn, and how many of
// them failed and were aborted.
func (n *textNode) itemsLeft() (left, failed, aborted int) {
	for _, c := range n.children {
		if c.bar.Kind == path.KindItem && !c.shown {
			left++
			switch {
			case c.bar.Aborted:
				aborted++
			case c.bar.Failed:
				failed++
			}
		}
	}
	return left, failed, aborted
}

// pick chooses the rows of a waterfall cut to rows: first the units
// outside items, in tree order; then the items, the failed and then the
// slowest first, each with the units in it as far as rows go. The items
// of each map are put in that order too, so that the outliers drawn lead
// their map.
func pick(forest []*textNode, rows int) {
	var items []*textNode
	var skeleton func(n *textNode)
	skeleton = func(n *textNode) {
		outliersFirst(n.children)
		for _, c := range n.children {
			if c.bar.Kind == path.KindItem {
				items = append(items, c)
				continue
			}
			if rows > 0 {
				c.shown = true
				rows--
			}
			skeleton(c)
		}
	}
	// The units --step matched may be items themselves (E1/do.*): they
	// are ranked as the items under a map are.
	outliersFirst(forest)
	for _, n := range forest {
		if n.bar.Kind == path.KindItem {
			items = append(items, n)
			continue
		}
		if rows > 0 {
			n.shown = true
			rows--
		}
		skeleton(n)
	}
	slices.SortStableFunc(items, outlierFirst)
	var take func(n *textNode)
	take = func(n *textNode) {
		if rows == 0 {
			return
		}
		n.shown = true
		rows--
		outliersFirst(n.children)
		for _, c := range n.children {
			take(c)
		}
	}
	for _, n := range items {
		// An item is drawn with the bar above it, the bar it is under.
		take(n)
	}
	for _, n := range forest {
		hideOrphans(n, n.shown)
	}
}

// hideOrphans hides a bar whose parent is hidden: an item of a map whose
// own row was cut is no row of a waterfall.
func hideOrphans(n *textNode, parentShown bool) {
	n.shown = n.shown && parentShown
	for _, c := range n.children {
		hideOrphans(c, n.shown)
	}
}

// outliersFirst orders a map's items failed first, then slowest first,
// then by index. Other units keep their order: a unit's children are a
// map's items or none are.
func outliersFirst(children []*textNode) {
	for _, c := range children {
		if c.bar.Kind != path.KindItem {
			return
		}
	}
	slices.SortStableFunc(children, outlierFirst)
}

// outlierFirst ranks the items that failed of their own first, then the
// slowest: an item the run's abort cut short is one it did not finish.
func outlierFirst(a, b *textNode) int {
	if af, bf := a.bar.Failed && !a.bar.Aborted, b.bar.Failed && !b.bar.Aborted; af != bf {
		if af {
			return -1
		}
		return 1
	}
	return cmp.Compare(took(b.bar), took(a.bar))
}

// took is how long a bar ran; an open bar, still running, counts as the
// slowest.
func took(b timeline.Bar) time.Duration {
	if b.Open() {
		return math.MaxInt64
	}
	return b.End.Sub(b.Start)
}
