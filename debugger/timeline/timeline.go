// Package timeline turns a run's events into bars on one time axis: one bar
// per unit of work (a step, a map item, an agent round, a tool call, a
// repair pass, a verdict), each with when it started and ended, how much of
// it went to model calls and to tool calls, how long it was held at a stop,
// and whether it failed; and the run's spend, by step and by model. It is
// plain data that front ends draw: the workbench's Timeline and Spend views,
// `stepwise inspect --timeline`, and the HTML report.
//
// A Timeline is fed one engine event at a time, whether they arrive live
// from a running engine or are read back from the run store
// (workspace.RunEvents): the same events make the same bars. It is not safe
// for concurrent use: a front end applies events where it reads bars.
package timeline

import (
	"slices"
	"time"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/path"
	"github.com/stepwise-dev/stepwise/plans"
)

// SpanKind says what a span of a bar's time went to.
type SpanKind uint8

// The kinds of span.
const (
	SpanModel SpanKind = iota // a model call: an agent round, a repair, a verdict
	SpanTool                  // a tool call, less the time a called plan was held
	SpanHeld                  // a thread held at a stop
)

// Span is a stretch of time within a bar.
type Span struct {
	Kind       SpanKind
	Start, End time.Time
}

// Bar is one unit of work on the time axis.
type Bar struct {
	// Path is the unit's path (DESIGN.md section 2); Parent is the path of
	// the bar it sits under, empty for a top-level step.
	Path, Parent string
	// Label is what a row shows: the path's last segment, and the tool for
	// a step ("E1 map", "do.3", "agent.2", "search").
	Label string
	Kind  path.Kind
	// Depth is how many bars the bar sits under.
	Depth int
	// Start is when the unit began; End when it ended, zero while it runs.
	Start, End time.Time
	// Model and Tool are the time model calls and tool calls took at and
	// below the unit, summed over concurrent items (so they may exceed
	// the bar's own length).
	Model, Tool time.Duration
	// Held is how much of the unit's time its threads were held at stops:
	// its end event's figure for a step or a tool call, the holds at and
	// below it within its time for an item, a round or a called plan.
	Held time.Duration
	// HeldSince is when an ask that waits for its answer began to wait;
	// zero once answered, and for any other unit. Its hold's length
	// comes with the step's end: until then the bar is held up to now.
	HeldSince time.Time
	// Failed says the unit, or for an item, a round or a called plan a
	// unit within it, failed or was cut short.
	Failed bool
	// Aborted says the run's abort cut the unit short (its step ended
	// aborted, or it still ran when the run was aborted) and nothing in it
	// failed of its own: it is Failed too, drawn as the run tree draws it,
	// with its own mark.
	Aborted bool
	// Spans are the model calls, tool calls and holds at and below the
	// unit in the order they ended, with overlapping spans of one kind
	// merged, so that a row can shade each stretch of its bar.
	Spans []Span
}

// Open reports whether the unit is still running.
func (b Bar) Open() bool { return b.End.IsZero() }

// bar is a Bar with its place in the tree.
type bar struct {
	Bar
	parent   *bar
	children []*bar
	// item orders map items by their index among their siblings.
	item int
	// pos is the bar's place in tree order, as the order was last built.
	pos int
	// own says the unit's start and end come from events of its own (a
	// step's, a tool call's); the others (items of a list body, rounds,
	// called plans) span their children and calls.
	own bool
	// open says the unit runs: it began and has not ended.
	open bool
	// running counts the children that run, for a bar without events of
	// its own, which ends when the last of them does.
	running int
	// called says a round's, a repair's or a verdict's model call ended.
	called bool
	// failedOwn says the unit, or one within it, failed of its own, not
	// cut short by the run's abort.
	failedOwn bool
	// heldSeen says held events at or below a bar with events of its own
	// said when it was held (held), which its end event says only how
	// long (hold).
	heldSeen bool
	// modelBefore is the model time the bar had when its tool call
	// began; modelCalls counts the model calls at and below the bar,
	// callsBefore how many it had then.
	modelBefore             time.Duration
	modelCalls, callsBefore int
	// holds are the holds at and below the unit, whose held time they
	// are when no end event of its own says it.
	holds engine.Holds
	// heldNow is when the earliest hold going on now at or below the
	// unit began (Holding); zero when none is.
	heldNow time.Time
}

// out is the bar as a front end sees it, now being the timeline's clock:
// one held now runs to now, held from when its hold began.
func (b *bar) out(now time.Time) Bar {
	if !b.own {
		b.Held = b.holds.Within(b.Start, b.End)
	}
	o := b.Bar
	o.Aborted = b.Aborted && !b.failedOwn
	if !b.heldNow.IsZero() {
		o.End = time.Time{}
		if o.HeldSince.IsZero() || b.heldNow.Before(o.HeldSince) {
			o.HeldSince = b.heldNow
		}
		o.Held = b.holds.Within(o.Start, b.heldNow) + max(now.Sub(b.heldNow), 0)
	}
	return o
}

// Timeline is the bars of one run.
type Timeline struct {
	root   bar
	byPath map[string]*bar
	// order is the bars in tree order, rebuilt when a bar was added.
	order []*bar
	stale bool

	runID, plan string
	start, end  time.Time
	now         time.Time
	status      engine.RunStatus
	tally       *engine.Tally
	usage       *engine.UsageReport
	// spent is the Spend worked out since the last model call, nil when
	// one came after it.
	spent *Spend
	// holding are the paths where a thread is held now, each with when
	// the timeline first saw it held there; heldBars the bars at and
	// above them.
	holding  engine.HeldNow
	heldBars []*bar
}

// New returns an empty timeline, for a run whose events are to come.
func New() *Timeline {
	return &Timeline{byPath: map[string]*bar{}, tally: engine.NewTally()}
}

// FromEvents returns the timeline of a run's events, such as
// workspace.RunEvents reads from the store.
func FromEvents(events []engine.Event) *Timeline {
	t := New()
	for _, e := range events {
		t.Apply(e)
	}
	return t
}

// RunID is the run's id, once its start arrived.
func (t *Timeline) RunID() string { return t.runID }

// Plan is the plan's identifier, once the run's start arrived.
func (t *Timeline) Plan() string { return t.plan }

// Start is when the run started; zero before its first event.
func (t *Timeline) Start() time.Time { return t.start }

// End is when the run ended; zero while it runs.
func (t *Timeline) End() time.Time { return t.end }

// Now is the time of the latest event, where a running bar reaches so far.
func (t *Timeline) Now() time.Time { return t.now }

// Tick moves Now on to now while the run goes, so that the bars still open
// reach the present between events (a model call that takes a minute
// sends none). A time before the latest event, or after the run ended,
// changes nothing.
func (t *Timeline) Tick(now time.Time) {
	if t.end.IsZero() && !t.start.IsZero() && now.After(t.now) {
		t.now = now
	}
}

// Status is how the run ended; empty while it runs.
func (t *Timeline) Status() engine.RunStatus { return t.status }

// Len is how many bars there are.
func (t *Timeline) Len() int { return len(t.byPath) }

// Bars returns up to n bars in tree order from the from-th: each bar, then
// the bars under it, siblings in the order they started (map items by
// index). It hands out only the slice asked for, so a view of a few rows
// of a run of many thousands of units costs a few rows.
func (t *Timeline) Bars(from, n int) []Bar {
	t.index()
	from = max(0, min(from, len(t.order)))
	to := min(len(t.order), from+max(0, n))
	out := make([]Bar, 0, to-from)
	for _, b := range t.order[from:to] {
		out = append(out, b.out(t.now))
	}
	return out
}

// Index returns the place of the bar at p in tree order, or -1.
func (t *Timeline) Index(p string) int {
	b, ok := t.byPath[p]
	if !ok {
		return -1
	}
	t.index()
	return b.pos
}

// Bar returns the bar at p.
func (t *Timeline) Bar(p string) (Bar, bool) {
	b, ok := t.byPath[p]
	if !ok {
		return Bar{}, false
	}
	return b.out(t.now), true
}

func (t *Timeline) index() {
	if !t.stale {
		return
	}
	t.stale = false
	t.order = t.order[:0]
	var walk func(b *bar)
	walk = func(b *bar) {
		for _, c := range b.children {
			c.pos = len(t.order)
			t.order = append(t.order, c)
			walk(c)
		}
	}
	walk(&t.root)
}

// Apply adds one event. Events must arrive in sequence order, as a sink
// receives them.
func (t *Timeline) Apply(e engine.Event) {
	if e.Time.After(t.now) {
		t.now = e.Time
	}
	switch p := e.Payload.(type) {
	case engine.RunStarted:
		t.runID, t.plan, t.start = e.RunID, p.Plan, e.Time
		// A hold seen before the run's first event (its first stop)
		// marks its bars now that they have a start.
		t.markHolding()
	case engine.RunEnded:
		t.holding = nil
		t.markHolding()
		t.end, t.status = e.Time, p.Status
		u := p.Usage
		t.usage, t.spent = &u, nil
		how := endedOK
		switch p.Status {
		case engine.StatusFailed:
			how = endedFailed
		case engine.StatusAborted:
			how = endedAborted
		}
		t.closeAll(&t.root, e.Time, how)
	case engine.StepStarted:
		b := t.at(e.Path, e.Unit, e.Time)
		b.own, b.Label = true, label(e.Path, p.Tool)
		t.begin(b, e.Time)
		if p.Tool == plans.ControlAsk {
			// An ask does nothing but wait for a person.
			b.HeldSince = e.Time
		}
	case engine.StepEnded:
		b := t.at(e.Path, e.Unit, e.Time)
		b.own, b.Label = true, label(e.Path, p.Tool)
		b.HeldSince = time.Time{}
		// A step's time runs from its step stop, before its start event:
		// a hold there is the step's.
		t.startBy(b, e.Time.Add(-millis(p.Ms)))
		if p.HeldMs > 0 {
			t.hold(b, millis(p.HeldMs))
		}
		// An aborted step is drawn as the run's abort draws the bars it
		// leaves open: cut short.
		how := endedOK
		switch p.Status {
		case engine.StepFailed:
			how = endedFailed
		case engine.StepAborted:
			how = endedAborted
		}
		t.closeAll(b, e.Time, how)
		t.finish(b, e.Time, how)
	case engine.ToolStarted:
		b := t.at(e.Path, e.Unit, e.Time)
		b.modelBefore, b.callsBefore = b.Model, b.modelCalls
		if e.Unit != path.KindCall {
			// A step's own dispatch: the step's events make its bar.
			break
		}
		b.own, b.Label = true, path.Last(e.Path)
		t.begin(b, e.Time)
	case engine.ToolEnded:
		b := t.at(e.Path, e.Unit, e.Time)
		// A tool that calls a model (an infer, a prompt tool, a called
		// plan's agents) spent that time on the model.
		ran := millis(p.Ms) - millis(p.HeldMs) - (b.Model - b.modelBefore)
		if p.Tool == "builtin__infer" {
			// An infer's work is its model call: what is left once the
			// model's time is taken out is the call's overhead (more
			// than a millisecond on a loaded machine), no tool time.
			ran = 0
		}
		if !p.Injected && ran > 0 {
			start := e.Time.Add(-millis(p.Ms))
			if e.Unit == path.KindCall {
				// A round's call is held at its tool stop, before it runs.
				start = start.Add(millis(p.HeldMs))
			}
			t.spend(e.Path, SpanTool, start, start.Add(ran))
		}
		if e.Unit != path.KindCall {
			break
		}
		b.own = true
		t.startBy(b, e.Time.Add(-millis(p.Ms)))
		if p.HeldMs > 0 {
			t.hold(b, millis(p.HeldMs))
		}
		how := endedOK
		if p.IsError {
			how = endedFailed
		}
		t.finish(b, e.Time, how)
	case engine.ModelCalled:
		b := t.at(e.Path, e.Unit, e.Time)
		begun := e.Time.Add(-millis(p.Ms))
		if !b.own {
			// A round starts when its call does; its first event may be
			// a delta that came later, or this very event.
			t.startBy(b, begun)
		}
		t.spend(e.Path, SpanModel, begun, e.Time)
		if p.Error == "" {
			t.tally.Add(p.Site, p.Provider, p.Model, p.Usage, p.CostUSD)
			t.spent = nil
		}
		if !b.own && waitsForCall(b.Kind) {
			b.called = true
			how := endedOK
			if p.Aborted {
				// The run's abort cut its call short.
				how = endedAborted
			}
			if b.running == 0 {
				t.finish(b, e.Time, how)
			} else {
				b.mark(how)
			}
		}
	case engine.Held:
		if e.Path != "" {
			t.held(e.Path, e.Unit, e.Time, p)
		}
		if _, ok := t.holding[e.Path]; ok {
			// The hold going on there is over: this event says how long.
			delete(t.holding, e.Path)
			t.markHolding()
		}
	case engine.Decided:
		// A decision ends a hold, which its own event tells.
	default:
		if e.Path == "" {
			break
		}
		// An event of its own (a verdict, an answer, a warning) is part
		// of the unit: one that spans its units reaches it, and one with
		// no events but these is as long as they are.
		b := t.at(e.Path, e.Unit, e.Time)
		if b.Start.IsZero() {
			b.Start = e.Time
		}
		if !b.own && !b.open && e.Time.After(b.End) {
			b.End = e.Time
		}
	}
}

// Holding says where threads of the run are held now, at the clock's
// now: the paths of their stops. The unit held there, listed even before
// its first event, and every unit above it run to now, held from when the
// timeline first saw the hold, until the Held event that ends it (or the
// run's end) arrives: a hold's events come as it ends. A hold first seen
// is held from now, not from the last tick: a run held at its first stop
// is held before the clock's first tick, and before the timeline has any
// of its events.
func (t *Timeline) Holding(paths []string, now time.Time) {
	t.holding = t.holding.Update(paths, now)
	t.markHolding()
}

// markHolding sets heldNow on the bars at and above the paths held now,
// beginning a unit held before its first event, and clears it on the
// bars no longer held.
func (t *Timeline) markHolding() {
	for _, b := range t.heldBars {
		b.heldNow = time.Time{}
	}
	t.heldBars = t.heldBars[:0]
	for p, since := range t.holding {
		if p == "" || t.start.IsZero() {
			continue
		}
		// No hold began before its run: a clock that is not the events'
		// (a test's) may read earlier.
		if since.Before(t.start) {
			since = t.start
		}
		b := t.at(p, path.KindOf(p), since)
		if b.Start.IsZero() {
			t.begin(b, since)
		}
		for a := b; a != &t.root; a = a.parent {
			switch {
			case a.heldNow.IsZero():
				a.heldNow = since
				t.heldBars = append(t.heldBars, a)
			case since.Before(a.heldNow):
				a.heldNow = since
			}
		}
	}
}

// at returns the bar at p, adding it and the bars above it that are not
// there yet.
func (t *Timeline) at(p string, kind path.Kind, at time.Time) *bar {
	if b, ok := t.byPath[p]; ok {
		return b
	}
	parent := &t.root
	if up, _, ok := path.Parent(p); ok && up != "" {
		parent = t.at(up, path.KindOf(up), at)
	}
	if kind == path.KindRun {
		kind = path.KindOf(p)
	}
	b := &bar{Bar: Bar{Path: p, Parent: parent.Path, Label: path.Last(p), Kind: kind, Depth: parent.Depth + 1}, parent: parent, item: -1}
	if parent == &t.root {
		b.Parent, b.Depth = "", 0
	}
	if n, ok := path.ItemIndex(path.Last(p)); ok {
		b.item = n
	}
	t.byPath[p] = b
	t.insert(parent, b, at)
	t.stale = true
	if b.Kind != path.KindStep && b.Kind != path.KindCall {
		// An item, a round, a called plan: it begins with its first
		// event, which may be one of a unit under it. Until a unit under
		// it runs, it lasts as long as its events: a filter item is its
		// verdict. A round, a repair or a verdict lasts to its call.
		t.begin(b, at)
		if !waitsForCall(b.Kind) {
			t.finish(b, at, endedOK)
		}
	}
	return b
}

// insert adds b, first seen at at, to its parent's children: items by
// index (concurrent items start out of order), the others in the order
// they began. A unit held now is listed when the hold is seen, which may
// be before the events of units that began before it have come.
func (t *Timeline) insert(parent, b *bar, at time.Time) {
	kids := parent.children
	i := len(kids)
	if b.item < 0 {
		for i > 0 && kids[i-1].item < 0 && kids[i-1].Start.After(at) {
			i--
		}
	} else {
		for i > 0 && kids[i-1].item > b.item {
			i--
		}
	}
	parent.children = slices.Insert(kids, i, b)
}

// begin starts b, and the bars above it without events of their own
// that it opens again (a round that calls a tool after its model call).
func (t *Timeline) begin(b *bar, at time.Time) {
	if b.Start.IsZero() || (b.own && !b.open) {
		b.Start = at
	}
	if b.open {
		return
	}
	b.open, b.End = true, time.Time{}
	if up := b.parent; up != &t.root && !up.own {
		up.running++
		t.begin(up, at)
	}
}

// startBy moves b's start back to at, if it began earlier than its first
// event said, and the starts of the bars above it that span their units.
func (t *Timeline) startBy(b *bar, at time.Time) {
	for ; b != &t.root; b = b.parent {
		if !b.Start.IsZero() && !at.Before(b.Start) {
			return
		}
		b.Start = at
		if b.parent.own {
			return
		}
	}
}

// ending is how a unit ended.
type ending uint8

const (
	endedOK      ending = iota
	endedFailed         // of its own
	endedAborted        // cut short by the run's abort
)

// mark marks b as having ended how.
func (b *bar) mark(how ending) {
	switch how {
	case endedFailed:
		b.Failed, b.failedOwn = true, true
	case endedAborted:
		b.Failed, b.Aborted = true, true
	}
}

// finish ends b at at, and the bar above it when that has no events of its
// own and b was the last of its units to run.
func (t *Timeline) finish(b *bar, at time.Time, how ending) {
	b.mark(how)
	if !b.open {
		if b.End.IsZero() || at.After(b.End) {
			b.End = at
		}
		return
	}
	b.open, b.End = false, at
	up := b.parent
	if up == &t.root || up.own {
		return
	}
	up.running--
	if !waitsForCall(up.Kind) {
		// An item or a called plan failed with a unit in it; a round
		// goes on after a failed tool call, whose error its model reads.
		up.Failed = up.Failed || b.Failed
		up.Aborted = up.Aborted || b.Aborted
		up.failedOwn = up.failedOwn || b.failedOwn
	}
	if up.running == 0 && (up.called || !waitsForCall(up.Kind)) {
		t.finish(up, at, endedOK)
	}
}

// waitsForCall says a bar of the kind ends with its model call, not
// before: a round, a repair pass, a verdict.
func waitsForCall(k path.Kind) bool {
	return k == path.KindRound || k == path.KindRepair || k == path.KindJudge
}

// closeAll ends the bars under b still open when b's unit ended.
func (t *Timeline) closeAll(b *bar, at time.Time, how ending) {
	for _, c := range b.children {
		t.closeOpen(c, at, how)
	}
}

// closeOpen ends b and the bars under it still open when the unit above
// them ended: a run cut short leaves no unit running.
func (t *Timeline) closeOpen(b *bar, at time.Time, how ending) {
	for _, c := range b.children {
		t.closeOpen(c, at, how)
	}
	if b.open || b.End.IsZero() {
		if b.Start.IsZero() {
			b.Start = at
		}
		b.open, b.running, b.End, b.HeldSince = false, 0, at, time.Time{}
		b.mark(how)
	}
}

// spend adds a span that ended at p's unit to its bar and every bar above
// it.
func (t *Timeline) spend(p string, kind SpanKind, start, end time.Time) {
	b, ok := t.byPath[p]
	if !ok {
		b = t.at(p, path.KindOf(p), start)
	}
	d := end.Sub(start)
	for ; b != nil && b != &t.root; b = b.parent {
		switch kind {
		case SpanModel:
			b.Model += d
			b.modelCalls++
		case SpanTool:
			b.Tool += d
		}
		b.Spans = addSpan(b.Spans, Span{kind, start, end})
	}
}

// held adds a hold at p, which ended at end, to the bars without end
// events of their own at and above it (an item, a round, a called plan):
// each one's threads were held then, and a unit lasts as long as it was
// held at its own stops (a round at its reply stop, after its call). A
// step's or a tool call's end event says how long it was held.
func (t *Timeline) held(p string, kind path.Kind, end time.Time, h engine.Held) {
	start := end.Add(-millis(h.Ms))
	for b := t.at(p, kind, start); b != &t.root; b = b.parent {
		if b.own {
			// A step's or a tool call's end event says how long it was
			// held, and this when: its bar is shaded where each hold
			// was (an item of a map held halfway through the map). One
			// held at its step or tool stop has not started yet: the
			// hold is its bar until its events come, and all of it
			// when they never do (the run was aborted there).
			b.heldSeen = true
			b.Spans = addSpan(b.Spans, Span{SpanHeld, start, end})
			continue
		}
		b.holds.Add(end, h)
		t.startBy(b, start)
		if !b.open && end.After(b.End) {
			b.End = end
		}
		b.Spans = addSpan(b.Spans, Span{SpanHeld, start, end})
	}
}

// hold records that b's threads were held for d, as its end event says.
// Where the held events at and below it said when, its bar is shaded
// there already; a record without them (made before they were) says how
// long, not when: a step holds most often at its step stop, which comes
// right after its start, so the hold is drawn from the bar's start.
func (t *Timeline) hold(b *bar, d time.Duration) {
	b.Held = d
	if b.heldSeen {
		return
	}
	// The hold at its step or tool stop, drawn as it ended, is in d.
	b.Spans = slices.DeleteFunc(b.Spans, func(s Span) bool { return s.Kind == SpanHeld })
	b.Spans = addSpan(b.Spans, Span{SpanHeld, b.Start, b.Start.Add(d)})
}

// addSpan appends s, merged into the latest span of its kind when the two
// overlap or touch: concurrent items' calls then make a few long spans on
// the bars above them rather than one span a call.
func addSpan(spans []Span, s Span) []Span {
	for i := len(spans) - 1; i >= 0 && i >= len(spans)-3; i-- {
		last := &spans[i]
		if last.Kind != s.Kind {
			continue
		}
		if !s.Start.After(last.End) && !s.End.Before(last.Start) {
			if s.Start.Before(last.Start) {
				last.Start = s.Start
			}
			if s.End.After(last.End) {
				last.End = s.End
			}
			return spans
		}
		break
	}
	return append(spans, s)
}

// label is a row's text for a step: its last segment and its tool.
func label(p, tool string) string {
	last := path.Last(p)
	if tool == "" || tool == last {
		return last
	}
	return last + " " + tool
}

func millis(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }
