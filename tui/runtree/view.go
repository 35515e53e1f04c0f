package runtree

import (
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/tui/common"
	"github.com/stepwise-dev/stepwise/tui/format"
	"github.com/stepwise-dev/stepwise/tui/live"
	"github.com/stepwise-dev/stepwise/tui/tree"
)

// The marks in a row's two-cell gutter: a breakpoint in the first cell
// (common.BreakMark's glyph); the stop, or else the selection, in the
// second. The selection also shows in reverse video or bold, but the mark
// keeps it plain in any theme.
const (
	markStop   = "▶"
	markCursor = "›"
)

// countGap is the cells between a running map's tool and its count of
// items; minCountedLabel the fewest its id and tool keep before the count
// gives way to them.
const (
	countGap        = 2
	minCountedLabel = 12
)

// minName is the fewest cells of its name a row keeps, enough to tell
// it from its siblings, before it gives up its time and then narrows
// its guide lines.
const minName = 8

// heldMark follows the duration of a row whose threads were held at
// stops for part of it.
const heldMark = "⏸"

// The fold markers, drawn in a row's junction.
const (
	foldOpen   = "▾"
	foldClosed = "▸"
)

// StatusGlyph is the mark a status is drawn with, aborted saying the unit
// failed because the run was aborted (■, as the runs list marks an
// aborted run). Each status has its own shape, so the tree reads the same
// without colour.
func StatusGlyph(s live.Status, aborted bool) string {
	if aborted {
		return "■"
	}
	switch s {
	case live.Running:
		return "◐"
	case live.OK:
		return "✓"
	case live.Failed:
		return "✗"
	case live.Skipped:
		return "↷"
	case live.Exited:
		return "⏏"
	}
	return "○"
}

// The right-hand columns, their widths in cells and the gap before each.
// A pane too narrow for them all drops tokens first, then cost, so that
// the tree keeps at least minTree cells, and the duration last, which
// keeps it while the tree has minTimedTree: time (and the held mark) is
// what a run is watched for first, and even the split at 80 columns has
// room for it; a pane of 50 columns (the tree's share of 120) has room for
// time and cost. The time comes last, at the row's end, after tokens and
// cost, so that a row without model calls lends their empty cells to its
// names, and the times of every row line up at the right.
const (
	durationWidth = 6  // 340ms, 12.3s, 2m03s, 1h02m
	heldWidth     = 2  // a space and the held mark, after the duration
	tokensWidth   = 10 // 208 tok, 12.3k tok, 310k tok
	costWidth     = 8  // $0.0042, <$0.0001, $1234.50
	columnGap     = 2
	minTree       = 30
	minTimedTree  = 20
)

// columns says which right-hand columns fit in a body width. held is the
// held mark's own cells after the duration, so that the durations of held
// and unheld rows line up and the mark never touches a time.
type columns struct {
	duration, held, tokens, cost bool
	// room is the cells the columns may take beside a tree of minTree
	// cells.
	room int
}

func columnsFor(width int) columns {
	room, timed := width-minTree, width-minTimedTree
	d := columnGap + durationWidth
	c := d + columnGap + costWidth
	t := c + columnGap + tokensWidth
	return columns{duration: timed >= d, held: timed >= d+heldWidth, cost: room >= c, tokens: room >= t, room: room}
}

// shownFor leaves out the columns that no row in view has a figure for
// (a run of tools alone has no tokens or cost, a run never held no held
// mark): the names get their cells. The held mark's cells, when a row
// needs them, come before the tokens', then the cost's.
func (c columns) shownFor(rows []live.Row) columns {
	var tokens, cost, held bool
	for _, r := range rows {
		tokens = tokens || r.Spend.Calls > 0
		cost = cost || r.Spend.Cost() != nil
		held = held || r.HeldNow || r.Held >= time.Millisecond
	}
	c.tokens = c.tokens && tokens
	c.cost = c.cost && cost
	c.held = c.held && held
	if c.held && c.width() > c.room {
		c.tokens = false
	}
	if c.held && c.width() > c.room {
		c.cost = false
	}
	return c
}

// timeWidth is the cells the time and its held mark take, gaps included.
func (c columns) timeWidth() int {
	return columns{duration: c.duration, held: c.held}.width()
}

// width is the cells the columns take, gaps included.
func (c columns) width() int {
	w := 0
	if c.duration {
		w += columnGap + durationWidth
	}
	if c.held {
		w += heldWidth
	}
	if c.tokens {
		w += columnGap + tokensWidth
	}
	if c.cost {
		w += columnGap + costWidth
	}
	return w
}

// View draws the pane, border included, at exactly its size. It reads only
// the rows in view from the tree.
func (m Model) View() string {
	h, inner := m.bodyHeight(), max(m.Width-2, 0)
	title := m.title()
	if m.tree == nil {
		hint := " no run yet: " + m.Keys.Run.Help().Key + " runs the plan, " + m.Keys.Debug.Help().Key + " debugs it"
		return common.Frame(m.Theme, m.Width, m.Height, title, "", m.Focused(), []string{m.Theme.Muted.Render(hint)})
	}
	cur, ok := m.cursor()
	if !ok {
		empty := " no steps yet"
		if m.view != nil {
			empty = " no row matches " + m.filter.Query + ": " + m.Keys.Close.Help().Key + " shows every row"
		}
		return common.Frame(m.Theme, m.Width, m.Height, title, "", m.Focused(), []string{m.Theme.Muted.Render(empty)})
	}
	off := m.offset(cur)
	rows := m.rows().Rows(off, h)
	cols := columnsFor(inner).shownFor(rows)
	plain, selected := m.styles(false), m.styles(true)
	lines := make([]string, len(rows))
	var prefix strings.Builder
	for i, r := range rows {
		st := &plain
		if off+i == cur {
			st = &selected
		}
		lines[i] = m.renderRow(&prefix, r, inner, cols, st)
	}
	return common.Frame(m.Theme, m.Width, m.Height, title, common.Position(cur, m.rows().Len()), m.Focused(), lines)
}

// title is "Run", the plan, where a run again comes from and how the run
// stands. A pane too narrow for all of it cuts the origin's run id short
// first, then the middle of the plan's name: where a fork starts and how
// the run stands are what the title is read for.
func (m Model) title() string {
	t := m.Theme
	s := t.PaneTitle("Run", m.Focused())
	if m.tree == nil {
		return s
	}
	tot := m.tree.Totals()
	word := string(tot.Status)
	if tot.RunStatus != "" {
		word = tot.RunStatus.String()
	}
	stands := " " + m.statusStyle(tot.Status).Render(StatusGlyph(tot.Status, tot.RunStatus == engine.StatusAborted)+" "+word)
	if m.stop != "" && !tot.Status.Done() {
		stands = " " + t.Glyph.Render("⏸ held")
	}
	stands += m.filter.Title(t)
	// The frame leaves its width less the corners and a cell each side.
	room := m.Width - 5 - ansi.StringWidth(s) - ansi.StringWidth(stands)
	origin := m.origin.Text(format.ShortIDLength)
	if common.TextWidth(origin) > room-1-common.TextWidth(tot.Plan) {
		origin = m.origin.Text(minOriginID)
	}
	plan := tot.Plan
	if origin != "" {
		plan = common.ElideMiddle(plan, max(room-2-common.TextWidth(origin), minTitlePlan))
		s += " " + t.Strong.Render(plan) + " " + t.Muted.Render(origin)
	} else if plan != "" {
		s += " " + t.Strong.Render(plan)
	}
	return s + stands
}

// minOriginID is the fewest characters of a run id the title cuts the
// origin's to; minTitlePlan the fewest cells it cuts the plan's name to.
const (
	minOriginID  = 5
	minTitlePlan = 8
)

func (m Model) statusStyle(s live.Status) lipgloss.Style {
	t := m.Theme
	switch s {
	case live.Running:
		return t.Glyph
	case live.OK:
		return t.Valid
	case live.Failed:
		return t.Problem
	case live.Exited:
		return t.Note
	}
	return t.Muted
}

// styles are the paints a row is drawn with, worked out once a frame for
// the plain rows and once for the selected one.
type styles struct {
	selected                                    bool
	text, strong, muted, trunk, glyph, brk, stp common.Paint
	item, then, els                             common.Paint
	status                                      map[live.Status]common.Paint
}

func (m Model) styles(selected bool) styles {
	t := m.Theme
	base := t.RowStyle(selected, m.Focused())
	in := func(s lipgloss.Style) common.Paint { return common.PaintOf(s.Inherit(base)) }
	st := styles{
		selected: selected,
		text:     in(t.Text), strong: in(t.Strong), muted: in(t.Muted), trunk: in(t.Trunk),
		glyph: in(t.Glyph), brk: in(t.Problem), stp: in(t.Glyph),
		item: in(t.Do.Bold(true)), then: in(t.Then.Bold(true)), els: in(t.Else.Bold(true)),
		status: map[live.Status]common.Paint{},
	}
	for _, s := range []live.Status{live.Pending, live.Running, live.OK, live.Failed, live.Skipped, live.Exited} {
		st.status[s] = in(m.statusStyle(s))
	}
	return st
}

// renderRow draws one row exactly width cells wide: the gutter, the guide
// lines and junction with the fold marker, the status, the kind glyph, the
// label and tool, and the right-hand columns that fit.
func (m Model) renderRow(prefix *strings.Builder, r live.Row, width int, cols columns, st *styles) string {
	if width <= 0 {
		return ""
	}
	// A row without model calls has nothing in the tokens and cost
	// columns, which come before the time: its names take their cells.
	spent := cols.tokens || cols.cost
	if r.Spend.Calls == 0 {
		spent = false
	}
	room := max(width-cols.width(), 0)
	if !spent {
		room = max(width-cols.timeWidth(), 0)
	}
	// A deep row keeps its status and enough of its name to tell it
	// from its siblings: it gives up its time, then the width of its
	// guide lines, before its name falls under minName cells.
	kindGlyph := tree.Glyph(r.Tool)
	head := 2 + 2 + 2 + lipgloss.Width(kindGlyph) // gutter, fold, status
	if kindGlyph != "" {
		head++
	}
	name := head + min(lipgloss.Width(r.Label), minName)
	if room < name+indentWidth(r.Depth, 4) && cols.width() > 0 {
		cols, room = columns{}, width
	}
	level := 4
	for level > 1 && room < name+indentWidth(r.Depth, level) {
		level /= 2
	}
	l := common.NewLine(room)

	brk, mark := common.NoBreak, " "
	if m.breaks != nil {
		brk = m.breaks(r.Path)
	}
	switch {
	case r.Path == m.stop:
		mark = markStop
	case st.selected:
		mark = markCursor
	}
	brkPaint := st.brk
	if brk == common.BreakOff {
		brkPaint = st.muted
	}
	l.AddWidth(brk.Glyph(), 1, brkPaint)
	l.AddWidth(mark, 1, st.stp)

	// The guide lines of the ancestors and the row's junction.
	prefix.Reset()
	if r.Depth > 0 {
		prefix.WriteString("  ")
		for d := 1; d < r.Depth; d++ {
			if rail(r, d) {
				prefix.WriteString("│")
			} else {
				prefix.WriteString(" ")
			}
			prefix.WriteString(strings.Repeat(" ", level-1))
		}
		if rail(r, r.Depth) {
			prefix.WriteString("├─")
		} else {
			prefix.WriteString("└─")
		}
		l.AddWidth(prefix.String(), indentWidth(r.Depth, level), st.trunk)
	}
	switch {
	case r.HasChildren && r.Collapsed:
		l.AddWidth(foldClosed, 1, st.strong)
	case r.HasChildren:
		l.AddWidth(foldOpen, 1, st.strong)
	case r.Depth > 0:
		l.AddWidth("─", 1, st.trunk)
	default:
		l.AddWidth(" ", 1, st.text)
	}
	l.AddWidth(" ", 1, st.text)

	glyph := StatusGlyph(r.Status, r.Aborted)
	if m := format.Mark(r.Decided, r.Reused); m != "" {
		glyph = m
	}
	l.AddWidth(glyph, 1, st.status[r.Status])
	l.AddWidth(" ", 1, st.text)
	if g := kindGlyph; g != "" {
		l.Add(g, st.glyph)
		l.AddWidth(" ", 1, st.text)
	}
	m.writeLabel(l, r, st)
	l.PadTo(room, st.text)
	if cols.width() == 0 {
		return l.String()
	}

	var b strings.Builder
	b.WriteString(l.String())
	if spent && cols.tokens {
		tok := ""
		if r.Spend.Calls > 0 {
			tok = format.Tokens(r.Spend.Tokens()) + " tok"
		}
		column(&b, tok, tokensWidth, st.muted)
	}
	if spent && cols.cost {
		cost := ""
		if c := r.Spend.Cost(); c != nil {
			cost = format.Cost(*c)
		}
		column(&b, cost, costWidth, st.muted)
	}
	if cols.duration {
		dur := ""
		if r.Status != live.Pending && (r.Status != live.Skipped || r.Duration > 0) {
			// A step skipped without a moment's work (an exit cut it
			// off) has no time to show.
			dur = format.Duration(r.Duration)
		}
		held := r.HeldNow || r.Held >= time.Millisecond
		if held {
			// The wall time, and a mark that says some of it was held:
			// the inspector says how much.
			dur = format.Duration(r.Duration)
		}
		switch {
		case cols.held:
			column(&b, dur, durationWidth, st.text)
			mark := ""
			if held {
				mark = heldMark
			}
			b.WriteString(st.text.Render(" " + mark + strings.Repeat(" ", heldWidth-1-lipgloss.Width(mark))))
		case held:
			// No room for the mark's own cells: it takes the
			// duration's last, after a space where there is one.
			if len(dur)+1 < durationWidth {
				dur += " "
			}
			column(&b, dur+heldMark, durationWidth, st.text)
		default:
			column(&b, dur, durationWidth, st.text)
		}
	}
	return b.String()
}

// indentWidth is the cells of the guide lines and junction of a row
// depth deep, each ancestor's level level cells wide.
func indentWidth(depth, level int) int {
	if depth == 0 {
		return 0
	}
	return 2 + level*(depth-1) + 2
}

// rail reports whether the guide line of depth d runs past row r.
func rail(r live.Row, d int) bool {
	return d < 64 && r.Rails&(1<<d) != 0
}

// column writes text right-aligned in a column of width cells, after the
// gap. Every column's text is ASCII, so its length is its width.
func column(b *strings.Builder, text string, width int, p common.Paint) {
	if len(text) > width && lipgloss.Width(text) > width {
		text = text[:width]
	}
	b.WriteString(p.Render(strings.Repeat(" ", columnGap+width-lipgloss.Width(text)) + text))
}

// writeLabel writes the label, in the style of its kind, and the tool
// muted where the label does not already name it. What does not fit
// loses its middle, not its end (common.ElidePair).
func (m Model) writeLabel(l *common.Line, r live.Row, st *styles) {
	room := l.Room()
	// A running map's items done of the total follow its tool, where
	// the names leave room for them: 42/200.
	count := ""
	if r.Items != nil {
		count = r.Items.Count()
		if room-len(count)-countGap < minCountedLabel {
			count = ""
		} else {
			room -= len(count) + countGap
		}
	}
	label, tool := r.Label, ""
	if r.Tool != "" && r.Kind != live.KindTool {
		label, tool = common.ElidePair(label, r.Tool, room)
	} else {
		label = common.ElideMiddle(label, room)
	}
	switch r.Kind {
	case live.KindStep, live.KindPlan:
		l.Add(label, st.strong)
	case live.KindItem:
		l.Add(label, st.item)
	case live.KindHead:
		if label == "else" {
			l.Add(label, st.els)
		} else {
			l.Add(label, st.then)
		}
	default:
		l.Add(label, st.text)
	}
	if tool != "" {
		l.AddWidth("  ", 2, st.text)
		l.Add(tool, st.muted)
	}
	if count != "" {
		l.AddWidth("  ", countGap, st.text)
		l.Add(count, st.text)
	}
}
