package timeline

import "time"

// Cell is what one column of a bar's row shows, in the order a column
// prefers them when several fall in it: a hold over a model call over a
// tool call over the rest of the bar. An instant is a bar of its own.
type Cell uint8

// The cells of a row.
const (
	CellNone    Cell = iota // outside the bar
	CellBar                 // the bar's time outside model and tool calls
	CellTool                // a tool call
	CellModel               // a model call
	CellHeld                // a thread held at a stop
	CellInstant             // a unit that ended as it began (an exit, a set)
)

// Window is the stretch of time a view spreads across its columns: the
// whole run, or a part of it zoomed in on.
type Window struct {
	Start time.Time
	Span  time.Duration
}

// Whole is the window of the whole run: from its start to its end, or to
// the latest event while it runs. A run with no time yet spans a
// millisecond, so that its columns stay apart.
func (t *Timeline) Whole() Window {
	end := t.end
	if end.IsZero() {
		end = t.now
	}
	return Window{Start: t.start, Span: max(end.Sub(t.start), time.Millisecond)}
}

// Column is the column of width that at falls in: below 0 before the
// window, width or more after it.
func (w Window) Column(at time.Time, width int) int {
	if w.Span <= 0 {
		return 0
	}
	d := at.Sub(w.Start)
	c := int(int64(d) * int64(width) / int64(w.Span))
	if d < 0 && int64(d)*int64(width)%int64(w.Span) != 0 {
		c-- // floor, not truncation towards zero
	}
	return c
}

// At is the time at the start of column c of width.
func (w Window) At(c, width int) time.Time {
	if width <= 0 {
		return w.Start
	}
	return w.Start.Add(time.Duration(int64(w.Span) * int64(c) / int64(width)))
}

// Cells fills dst (grown to width) with what each column shows of b; now
// is where a bar that is still open reaches. A bar or a span shorter than
// a column still takes the column it starts in, so that nothing that
// happened in the window is lost from view.
func (w Window) Cells(dst []Cell, b Bar, now time.Time, width int) []Cell {
	dst = append(dst[:0], make([]Cell, width)...)
	end := b.End
	if end.IsZero() {
		end = now
	}
	if !b.Open() && end.Equal(b.Start) {
		// A unit that took no time is a mark, not a moment of waiting.
		w.fill(dst, b.Start, end, CellInstant)
		return dst
	}
	w.fill(dst, b.Start, end, CellBar)
	for _, s := range b.Spans {
		kind := CellTool
		switch s.Kind {
		case SpanModel:
			kind = CellModel
		case SpanHeld:
			kind = CellHeld
		}
		w.fill(dst, s.Start, s.End, kind)
	}
	if b.Open() && !b.HeldSince.IsZero() {
		w.fill(dst, b.HeldSince, now, CellHeld)
	}
	return dst
}

// fill raises the columns from start to end to c, where c comes first.
func (w Window) fill(dst []Cell, start, end time.Time, c Cell) {
	width := len(dst)
	from, to := w.Column(start, width), w.Column(end, width)
	if end.After(w.At(to, width)) {
		to++ // the column end falls in, when it runs into it
	}
	if from == width && !start.After(w.Start.Add(w.Span)) {
		// What happens at the window's very end (the exit that ends a
		// run) is drawn in its last column, not past it.
		from = width - 1
	}
	to = max(to, from+1)
	for i := max(from, 0); i < min(to, width); i++ {
		if c > dst[i] {
			dst[i] = c
		}
	}
}
