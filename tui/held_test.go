package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/tui/live"
)

// TestHeldTimeLiveAndReopened debugs the fan plan in the workbench, holds
// one map item at its breakpoint a while (its siblings held behind it,
// all-stop) and goes on: the tree shows the item's, and the map's, wall
// time with the held mark, never more held than wall; and the same run
// opened again from its record shows every row with the same figures.
func TestHeldTimeLiveAndReopened(t *testing.T) {
	b := newBenchWithPlan(t, "fan", fanPlan)
	b.press(command("break F1/do.1")...)
	b.press(keyDebug)
	b.until("the run to hold at F1/do.1", func(m model) bool {
		r := m.runPage.run
		return r != nil && r.held() && r.state.Stop.Path == "F1/do.1"
	})
	const hold = 300 * time.Millisecond
	time.Sleep(hold)
	for !b.m.runPage.run.state.Finished {
		b.press(keyContinue)
	}
	wantEnded(t, b, "ok")
	rowsOf := func(tr *live.Tree) map[string]live.Row {
		rows := map[string]live.Row{}
		for _, r := range tr.Rows(0, tr.Len()) {
			rows[r.Path] = r
			if r.Held > r.Duration {
				t.Errorf("%s: %v, %v of it held", r.Path, r.Duration, r.Held)
			}
		}
		return rows
	}
	shown := rowsOf(b.m.runPage.run.tree)
	for _, p := range []string{"F1/do.1", "F1"} {
		if r := shown[p]; r.Held < hold {
			t.Errorf("%s: %v, %v of it held; want %v held", p, r.Duration, r.Held, hold)
		}
	}
	wantScreen(t, b, "⏸")

	id := b.p.waitRecorded(t, "fan", 1)[0].ID
	b.press(command("open " + id)...)
	if got := b.m.runPage.run.stored; got != id {
		t.Fatalf("showing run %q, want %q", got, id)
	}
	reopened := rowsOf(b.m.runPage.run.tree)
	// A live event's time carries the monotonic clock, which a stored one
	// does not: the two may part by nanoseconds, never by a microsecond.
	same := func(a, b time.Duration) bool { return (a - b).Abs() < time.Microsecond }
	for p, r := range shown {
		back, ok := reopened[p]
		if !ok || !same(back.Duration, r.Duration) || !same(back.Held, r.Held) {
			t.Errorf("%s: %v, %v held live; %v, %v reopened", p, r.Duration, r.Held, back.Duration, back.Held)
		}
	}
}

// TestHeldRowMarkedAtOnce debugs the flow plan to a map item's breakpoint:
// while the run is held there, before any held event has come, the item's
// row and its map's show the hold (running, the held mark) rather than
// an item not started.
func TestHeldRowMarkedAtOnce(t *testing.T) {
	b := newBench(t, 120, 40)
	b.debugTo(docFlow, "E1/do.1")
	wantHeld(t, b, "E1/do.1", engine.StopStep, "breakpoint")
	rows := map[string]live.Row{}
	tr := b.m.runPage.run.tree
	for _, r := range tr.Rows(0, tr.Len()) {
		rows[r.Path] = r
	}
	for _, p := range []string{"E1/do.1", "E1"} {
		if r := rows[p]; r.Status != live.Running || !r.HeldNow {
			t.Errorf("%s: %s, held now %v; want running and held", p, r.Status, r.HeldNow)
		}
	}
	if r := rows["E1/do.1"]; !r.HeldHere {
		t.Error("E1/do.1 is not held at its own stop")
	}
	wantScreen(t, b, "◐ do.1")
	for _, line := range strings.Split(b.screen(), "\n") {
		if strings.Contains(line, "do.1  user__lookup") && !strings.Contains(line, "⏸") {
			t.Errorf("the held item's row has no held mark: %q", line)
		}
	}
}

// TestFirstStopMarkedAtOnce debugs the flow plan with no breakpoint: held
// at its first stop, before any clock tick, the first step's row and bar
// show the hold from the moment the run was held, as any other stop does.
func TestFirstStopMarkedAtOnce(t *testing.T) {
	b := newBench(t, 120, 40)
	b.debugTo(docFlow, "")
	r := b.m.runPage.run
	if !r.held() || r.state.Reason != debugger.ReasonEntry {
		t.Fatalf("the run is not held at its first stop: %+v", r.state)
	}
	first := r.state.Stop.Path
	var row live.Row
	for _, x := range r.tree.Rows(0, r.tree.Len()) {
		if x.Path == first {
			row = x
		}
	}
	if row.Status != live.Running || !row.HeldNow || !row.HeldHere {
		t.Errorf("%s: %s, held now %v, held here %v; want running and held at its own stop", first, row.Status, row.HeldNow, row.HeldHere)
	}
	var held bool
	for _, x := range r.timeline.Bars(0, r.timeline.Len()) {
		if x.Path == first {
			held = !x.HeldSince.IsZero()
		}
	}
	if !held {
		t.Errorf("the timeline's bar of %s does not show the hold", first)
	}
}

// TestAbortedHoldOnTheTimeline debugs the flow plan to a map item's
// breakpoint, holds it a while and aborts the run there: the item's bar
// on the live timeline spans the time it was held, as its row says.
func TestAbortedHoldOnTheTimeline(t *testing.T) {
	b := newBench(t, 120, 40)
	b.debugTo(docFlow, "E1/do.1")
	wantHeld(t, b, "E1/do.1", engine.StopStep, "breakpoint")
	const hold = 200 * time.Millisecond
	time.Sleep(hold)
	b.press(keyAbort, keyAbort)
	b.until("the run to end", func(m model) bool { return m.runPage.run.state.Finished && m.runPage.run.eventsDone })
	tl := b.m.runPage.run.timeline
	bar, ok := tl.Bar("E1/do.1")
	if !ok || bar.End.Sub(bar.Start) < hold {
		t.Errorf("the aborted item's bar runs %v (%v to %v); want at least the %v it was held", bar.End.Sub(bar.Start), bar.Start, bar.End, hold)
	}
}
