package timeview

import (
	"slices"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/stepwise-dev/stepwise/debugger/timeline"
	"github.com/stepwise-dev/stepwise/tui/common"
	"github.com/stepwise-dev/stepwise/tui/format"
)

// The spend pane draws the run's cost and tokens by step, most expensive
// first, then by model: a bar as long as its share of the dearest line.
// A map's items are one line, their body step's, with its dearest items
// under it; unfolded, it lists every item. The figures always show whole;
// the labels give way, cut in their middle, and then the bars. A long
// spend scrolls, and only the lines in view are drawn, so that a group of
// ten thousand items unfolded costs a frame what a screenful does.

// spendRow is a row of a spend section: a step's, a group's (with count,
// how many items it adds up), an item under a group (drawn indented), or
// a note of how many items more there are (more).
type spendRow struct {
	timeline.SpendLine
	label, count string
	item         bool
	more         int
	// group is the label of the group an item or a note is under.
	group string
}

// indentOf is how far a row's label is indented: an item's under its
// group.
func indentOf(r *spendRow) int {
	if r.item {
		return 2
	}
	return 0
}

// spendEntry is a line of the spend: a line of text, or a section's row.
type spendEntry struct {
	text string
	row  *spendRow
	sec  *spendSection
}

// key is what the selection holds of a row: its section and its label,
// so that it stays on the row as rows come and go while the run goes.
func (e spendEntry) key() string {
	if e.row == nil || e.row.more > 0 {
		return ""
	}
	return e.sec.title + "\x00" + e.row.label
}

// spendSection is one chart of the spend, laid out for a width.
type spendSection struct {
	title  string
	lw, bw int
	cols   int
	widths [3]int
	top    float64
	byCost bool
}

// spendFigures are a row's cost, tokens and calls.
func spendFigures(r *spendRow) [3]string {
	return [3]string{format.Spend(r.Calls, r.Cost), format.Tokens(r.Tokens) + " tok", common.Count(r.Calls, "call")}
}

// topItems is how many of a group's items its line lists under it while
// folded, the dearest first: the outliers are what one looks for.
const topItems = 3

// minSpendBar is the narrowest a spend bar gets while a label is cut to
// make room for it; minSpendLabel the narrowest a label gets.
const (
	minSpendBar   = 6
	minSpendLabel = 10
)

// spendLayout lays the spend out in lines of width cells.
func (m *Model) spendLayout(width int) []spendEntry {
	s := m.tl.Spend()
	t := m.Theme
	var out []spendEntry
	for _, l := range summaryLines(m.tl, width) {
		out = append(out, spendEntry{text: t.Strong.Render(l)})
	}
	if s.Calls == 0 {
		return append(out, spendEntry{text: t.Muted.Render("no model calls yet")})
	}
	for _, part := range []struct {
		title string
		lines []timeline.SpendLine
	}{{"By step, most expensive first", s.ByStep}, {"By model", s.ByModel}} {
		out = append(out, spendEntry{}, spendEntry{text: t.Heading.Render(part.title)})
		rows := m.spendRows(part.lines)
		sec := layoutSection(part.title, part.lines, rows, width)
		out = slices.Grow(out, len(rows))
		for i := range rows {
			out = append(out, spendEntry{row: &rows[i], sec: sec})
		}
	}
	return out
}

// spendRows lays out a section's lines: each group with its item count,
// then its dearest items, indented, or all of them when unfolded.
func (m *Model) spendRows(spend []timeline.SpendLine) []spendRow {
	n := len(spend)
	for _, l := range spend {
		if m.unfolded[l.Label] {
			n += len(l.Items)
		} else if l.Group() {
			n += topItems + 1
		}
	}
	rows := make([]spendRow, 0, n)
	for _, l := range spend {
		if !l.Group() {
			rows = append(rows, spendRow{SpendLine: l, label: l.Label})
			continue
		}
		rows = append(rows, spendRow{SpendLine: l, label: l.Label, count: ItemCount(l)})
		shown := l.Items
		if !m.unfolded[l.Label] {
			shown = l.Items[:min(len(l.Items), topItems)]
		}
		for _, it := range shown {
			rows = append(rows, spendRow{SpendLine: it, label: it.Label, item: true, group: l.Label})
		}
		if more := len(l.Items) - len(shown); more > 0 {
			rows = append(rows, spendRow{more: more, group: l.Label})
		}
	}
	return rows
}

// layoutSection sizes a section's columns. The figures' columns are as
// wide as the figures of its steps, groups and a group's dearest items
// need: an unfolded group's other items are not measured, since a frame
// draws only the lines in view.
func layoutSection(title string, lines []timeline.SpendLine, rows []spendRow, width int) *spendSection {
	sec := &spendSection{title: title, cols: 3, byCost: true}
	widest, listed := 0, 0
	for i := range rows {
		r := &rows[i]
		if r.more > 0 {
			continue
		}
		if r.item {
			listed++
			if listed > topItems {
				continue
			}
		} else {
			listed = 0
		}
		for c, f := range spendFigures(r) {
			sec.widths[c] = max(sec.widths[c], ansi.StringWidth(f))
		}
		widest = max(widest, ansi.StringWidth(r.label)+ansi.StringWidth(r.count)+indentOf(r))
	}
	// Only a pane too narrow for the figures and a few cells of label
	// leaves the calls out.
	if width-sec.figuresWidth() < minSpendLabel+1 {
		sec.cols = 2
	}
	rest := width - sec.figuresWidth()
	sec.lw = max(min(widest+1, max(rest-minSpendBar, minSpendLabel+1), rest-1), 1)
	sec.bw = max(rest-sec.lw, 1)
	for _, l := range lines {
		sec.byCost = sec.byCost && l.Cost != nil
	}
	for _, l := range lines {
		sec.top = max(sec.top, weight(l, sec.byCost))
	}
	return sec
}

// figuresWidth is how wide the section's columns of figures are, each
// right-aligned to its widest and led by a space.
func (sec *spendSection) figuresWidth() int {
	w := 0
	for c := range sec.cols {
		w += 1 + sec.widths[c]
	}
	return w
}

// spendLine draws entry e, selected or not.
func (m *Model) spendLine(e spendEntry, width int, selected bool) string {
	t := m.Theme
	r, sec := e.row, e.sec
	if r == nil {
		return e.text
	}
	if r.more > 0 {
		return t.Muted.Render(common.ElideMiddle("    and "+common.Count(r.more, "more item")+" · → unfolds", width))
	}
	n := 0
	if sec.top > 0 {
		n = max(int(weight(r.SpendLine, sec.byCost)/sec.top*float64(sec.bw)+0.5), 1)
	}
	barStyle := t.Key
	if r.item {
		barStyle = t.Muted
	}
	// A group's count stays whole: its path gives way.
	indent := strings.Repeat(" ", indentOf(r))
	label := common.Fit(indent+common.ElideMiddle(r.label, sec.lw-1-len(indent)-ansi.StringWidth(r.count))+r.count, sec.lw)
	style := t.RowStyle(selected, m.Focused())
	if r.item && !selected {
		style = t.Muted
	}
	var figs strings.Builder
	f := spendFigures(r)
	for c := range sec.cols {
		figs.WriteString(" " + padLeft(f[c], sec.widths[c]))
	}
	bar := barStyle.Render(strings.Repeat("█", n)) + strings.Repeat(" ", max(sec.bw-n, 0))
	return style.Render(label) + bar + t.Muted.Render(figs.String())
}

// spendView draws the lines of the spend in view, and the footer that
// says which they are when there are more.
func (m *Model) spendView(width int) (body []string, footer string) {
	entries := m.spendLayout(width)
	h := m.spendHigh()
	m.spendScroll = m.spendScroll.Clamp(h, len(entries))
	from := m.spendScroll.Offset
	for _, e := range entries[from:min(from+h, len(entries))] {
		body = append(body, m.spendLine(e, width, e.key() != "" && e.key() == m.spendSelected))
	}
	if len(entries) > h {
		footer = m.Theme.Muted.Render("lines " + strconv.Itoa(from+1) + "–" + strconv.Itoa(min(from+h, len(entries))) + " of " + strconv.Itoa(len(entries)))
	}
	return body, footer
}

// spendHigh is how many lines of the spend fit inside the frame.
func (m Model) spendHigh() int { return max(m.Height-2, 1) }

// updateSpend answers the spend's keys: up and down select a row,
// scrolling it into view; right unfolds the selected group, left folds
// it (from any of its items too).
func (m *Model) updateSpend(k tea.KeyPressMsg) {
	keys := m.Keys
	entries := m.spendLayout(m.Width - 2)
	var rows []int // the entries that are rows to select
	cur := -1
	for i, e := range entries {
		if e.key() == "" {
			continue
		}
		if e.key() == m.spendSelected {
			cur = len(rows)
		}
		rows = append(rows, i)
	}
	if len(rows) == 0 {
		return
	}
	switch {
	case key.Matches(k, keys.Expand) && cur >= 0:
		if r := entries[rows[cur]].row; r.Group() {
			m.unfold(r.Label, true)
		}
		return
	case key.Matches(k, keys.Collapse) && cur >= 0:
		r := entries[rows[cur]].row
		switch {
		case r.Group():
			m.unfold(r.Label, false)
		case r.group != "" && m.unfolded[r.group]:
			m.unfold(r.group, false)
			m.spendSelected = entries[rows[cur]].sec.title + "\x00" + r.group
			m.followSpend()
		}
		return
	}
	d, ok := keys.Movement(k, m.spendHigh(), len(rows))
	if !ok {
		return
	}
	next := min(max(cur+d, 0), len(rows)-1)
	if cur < 0 && d > 0 {
		next = min(d-1, len(rows)-1) // nothing selected: down selects the first row
	}
	m.spendSelected = entries[rows[next]].key()
	m.spendScroll = m.spendScroll.Follow(rows[next], m.spendHigh(), len(entries))
}

// unfold folds or unfolds the group labelled group.
func (m *Model) unfold(group string, open bool) {
	if m.unfolded == nil {
		m.unfolded = map[string]bool{}
	}
	m.unfolded[group] = open
}

// followSpend scrolls the selected row into view.
func (m *Model) followSpend() {
	entries := m.spendLayout(m.Width - 2)
	for i, e := range entries {
		if e.key() != "" && e.key() == m.spendSelected {
			m.spendScroll = m.spendScroll.Follow(i, m.spendHigh(), len(entries))
		}
	}
}

// clickSpend selects the row drawn at line y of the pane (0 is the top
// border); a click on a group's note of more items unfolds it.
func (m *Model) clickSpend(y int) bool {
	line := m.spendScroll.Offset + y - 1
	entries := m.spendLayout(m.Width - 2)
	if y < 1 || y > m.spendHigh() || line >= len(entries) {
		return false
	}
	e := entries[line]
	switch {
	case e.row != nil && e.row.more > 0:
		m.unfold(e.row.group, true)
	case e.key() != "":
		m.spendSelected = e.key()
	default:
		return false
	}
	return true
}

// ItemCount is how many items a group adds up, as its label ends:
// E1/do.* ×10000.
func ItemCount(l timeline.SpendLine) string { return " ×" + strconv.Itoa(len(l.Items)) }

// weight is what a spend bar's length shows: the cost where every line is
// priced (byCost), the tokens otherwise, so that no bar compares dollars
// with tokens.
func weight(l timeline.SpendLine, byCost bool) float64 {
	if byCost {
		return *l.Cost
	}
	return float64(l.Tokens)
}

func padLeft(s string, w int) string {
	if n := w - ansi.StringWidth(s); n > 0 {
		return strings.Repeat(" ", n) + s
	}
	return s
}
