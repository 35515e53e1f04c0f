package report

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/stepwise-dev/stepwise/debugger/timeline"
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/tui/format"
)

// The timeline's layout, in SVG pixels: a column of labels, then the time
// axis; one row per unit.
const (
	timelineWidth = 1200
	labelWidth    = 300
	axisRight     = 16
	rowHeight     = 18
	barHeight     = 12
	axisTop       = 20
	// maxRows is the most units the timeline draws: a page of a map of
	// ten thousand items stays one a browser draws at once; the tree
	// holds them all.
	maxRows = 600
	// labelChars is how many characters of a label fit its column.
	labelChars = 38
)

// waterfall is the run drawn on one time axis: a row per unit in tree order,
// each a bar from its start to its end, its model time, tool time and time
// held shaded within it, a failed unit in the error colour.
type waterfall struct {
	Width, Height int
	Ticks         []tick
	Rows          []timelineRow
	// Omitted counts the units not drawn.
	Omitted int
}

type tick struct {
	X           float64
	Top, Bottom int
	Label       string
}

type timelineRow struct {
	Anchor, Label, Title string
	LabelX, TextY        float64
	Bars                 []rect
	Failed               bool
}

type rect struct {
	X, Y, W, H float64
	// Class is the bar's colour: k-step, k-failed, k-model, k-tool, k-held.
	Class string
}

// drawTimeline lays out the bars of the run's events; anchor finds the
// tree node a row links to.
func drawTimeline(events []engine.Event, anchor func(path string) string) waterfall {
	tl := timeline.FromEvents(events)
	start, end := tl.Start(), tl.End()
	if end.IsZero() {
		end = tl.Now()
	}
	bars := tl.Bars(0, maxRows)
	if start.IsZero() || len(bars) == 0 {
		return waterfall{}
	}
	span := end.Sub(start)
	if span <= 0 {
		span = time.Millisecond
	}
	plot := float64(timelineWidth - labelWidth - axisRight)
	x := func(t time.Time) float64 {
		if t.IsZero() {
			t = end
		}
		return labelWidth + plot*float64(t.Sub(start))/float64(span)
	}
	out := waterfall{Width: timelineWidth, Height: axisTop + rowHeight*len(bars) + 4, Omitted: tl.Len() - len(bars)}
	for _, at := range tickTimes(span) {
		out.Ticks = append(out.Ticks, tick{X: x(start.Add(at)), Top: axisTop - 4, Bottom: out.Height, Label: format.Duration(at)})
	}
	for i, b := range bars {
		top := float64(axisTop + i*rowHeight)
		y := top + (rowHeight-barHeight)/2
		row := timelineRow{Anchor: anchor(b.Path), Label: fitLabel(b.Label, labelChars-2*b.Depth),
			LabelX: 4 + 12*float64(min(b.Depth, 8)), TextY: top + rowHeight - 5, Title: barTitle(b), Failed: b.Failed}
		left, right := x(b.Start), x(b.End)
		base := "k-step"
		if b.Failed {
			base = "k-failed"
		}
		row.Bars = append(row.Bars, rect{X: left, Y: y, W: max(right-left, 1), H: barHeight, Class: base})
		for _, s := range b.Spans {
			if !s.End.After(s.Start) {
				// A stretch of no time shades nothing: a pixel of it
				// on every row would read as work.
				continue
			}
			l, r := x(s.Start), x(s.End)
			row.Bars = append(row.Bars, rect{X: l, Y: y + 2, W: max(r-l, 1), H: barHeight - 4, Class: spanClass(s.Kind)})
		}
		out.Rows = append(out.Rows, row)
	}
	return out
}

func spanClass(k timeline.SpanKind) string {
	switch k {
	case timeline.SpanModel:
		return "k-model"
	case timeline.SpanTool:
		return "k-tool"
	}
	return "k-held"
}

// barTitle is what a row's tooltip says of the unit.
func barTitle(b timeline.Bar) string {
	var parts []string
	took := "running"
	if !b.Open() {
		took = format.Duration(b.End.Sub(b.Start))
	}
	parts = append(parts, b.Path+" "+took)
	if b.Model > 0 {
		model := "model " + format.Duration(b.Model)
		if !b.Open() && b.Model > b.End.Sub(b.Start) {
			// Concurrent items' calls add up past the unit's own time.
			model += " (the calls of its items, added up)"
		}
		parts = append(parts, model)
	}
	if b.Tool > 0 {
		parts = append(parts, "tool "+format.Duration(b.Tool))
	}
	if b.Held > 0 {
		parts = append(parts, "held "+format.Duration(b.Held))
	}
	switch {
	case b.Aborted:
		parts = append(parts, "aborted")
	case b.Failed:
		parts = append(parts, "failed")
	}
	return strings.Join(parts, " · ")
}

// tickSteps are the steps a time axis is marked in, the smallest first.
var tickSteps = []time.Duration{
	time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond,
	50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour,
}

// tickTimes are the marks of a time axis of span: the times since the
// start that are multiples of the smallest step making at most ten.
func tickTimes(span time.Duration) []time.Duration {
	step := tickSteps[len(tickSteps)-1]
	for _, s := range tickSteps {
		if span/s <= 10 {
			step = s
			break
		}
	}
	var out []time.Duration
	for at := time.Duration(0); at <= span; at += step {
		out = append(out, at)
	}
	return out
}

// fitLabel cuts a label to n characters, keeping its end, which tells
// rows apart (do.17, agent.2).
func fitLabel(s string, n int) string {
	n = max(n, 8)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return "…" + string(r[len(r)-n+1:])
}

// The spend charts' layout, in SVG pixels.
const (
	spendLabelWidth  = 170
	spendBarWidth    = 220
	spendFigureWidth = 200
	// maxSpendRows is the most lines a chart draws; the others are added
	// up in one note.
	maxSpendRows = 25
	// spendLabelChars is how many characters of a label fit its column.
	spendLabelChars = 23
	// topSpendItems is how many of a map's items are drawn under its
	// line, the dearest first.
	topSpendItems = 3
)

// spend is the run's cost (tokens, when a call was unpriced) by step and
// by model, as horizontal bars, most first.
type spend struct {
	Measure         string
	ByStep, ByModel bars
}

type bars struct {
	Title         string
	Width, Height int
	Rows          []spendRow
	// Omitted says what the lines not drawn add up to.
	Omitted string
}

type spendRow struct {
	// Class is the bar's colour: k-spend, or k-spend-item for an item
	// listed under its map's line.
	Anchor, Label, Title, Figure, Class string
	LabelX, TextY, FigureX              float64
	X, Y, W, H                          float64
}

// drawSpend lays out the run's spend; anchor finds the tree node of a
// step.
func drawSpend(u engine.UsageReport, anchor func(path string) string) spend {
	s := timeline.SpendOf(u)
	priced := s.Cost != nil
	out := spend{Measure: "Tokens", ByStep: spendBars("By step", s.ByStep, priced, anchor), ByModel: spendBars("By model", s.ByModel, priced, nil)}
	if priced {
		out.Measure = "Cost in USD"
	} else if s.Calls > 0 {
		out.Measure = "Tokens (a model has no price in [pricing], so no cost is told)"
	}
	return out
}

func spendBars(title string, lines []timeline.SpendLine, priced bool, anchor func(string) string) bars {
	measure := func(l timeline.SpendLine) float64 {
		if priced && l.Cost != nil {
			return *l.Cost
		}
		return float64(l.Tokens)
	}
	drawn := lines[:min(len(lines), maxSpendRows)]
	top := 0.0
	for _, l := range drawn {
		top = max(top, measure(l))
	}
	out := bars{Title: title, Width: spendLabelWidth + spendBarWidth + spendFigureWidth}
	add := func(l timeline.SpendLine, label string, indent float64, class string) {
		y := float64(len(out.Rows) * rowHeight)
		w := 1.0
		if top > 0 {
			w = max(spendBarWidth*measure(l)/top, 1)
		}
		row := spendRow{Label: label, Figure: spendFigure(l, priced), LabelX: indent, TextY: y + rowHeight - 5,
			X: spendLabelWidth, Y: y + (rowHeight-barHeight)/2, W: w, H: barHeight, FigureX: spendLabelWidth + w + 6, Class: class}
		row.Title = l.Label + ": " + row.Figure
		if anchor != nil {
			row.Anchor = anchor(l.Label)
		}
		out.Rows = append(out.Rows, row)
	}
	for _, l := range drawn {
		if !l.Group() {
			add(l, fitLabel(l.Label, spendLabelChars), 0, "k-spend")
			continue
		}
		// A map's items are one line, their body step's, with the
		// dearest few under it: the outliers, each linked to its item.
		count := fmt.Sprintf(" ×%d", len(l.Items))
		add(l, fitLabel(l.Label, spendLabelChars-utf8.RuneCountInString(count))+count, 0, "k-spend")
		out.Rows[len(out.Rows)-1].Title = fmt.Sprintf("%s: %d items, %s; the dearest %s", l.Label, len(l.Items), spendFigure(l, priced), l.Items[0].Label)
		for _, it := range l.Items[:min(len(l.Items), topSpendItems)] {
			add(it, fitLabel(it.Label, spendLabelChars-1), 12, "k-spend-item")
		}
	}
	out.Height = rowHeight*len(out.Rows) + 4
	if rest := lines[len(drawn):]; len(rest) > 0 {
		var sum timeline.SpendLine
		var cost float64
		for _, l := range rest {
			sum.Calls += l.Calls
			sum.Tokens += l.Tokens
			if l.Cost != nil {
				cost += *l.Cost
			}
		}
		if priced {
			sum.Cost = &cost
		}
		out.Omitted = fmt.Sprintf("%d more, not drawn: %s", len(rest), spendFigure(sum, priced))
	}
	return out
}

// spendFigure is a line's cost, tokens and calls.
func spendFigure(l timeline.SpendLine, priced bool) string {
	s := format.Tokens(l.Tokens) + " tok · " + fmt.Sprint(l.Calls) + " call"
	if l.Calls != 1 {
		s += "s"
	}
	if priced {
		s = format.Spend(l.Calls, l.Cost) + " · " + s
	}
	return s
}
