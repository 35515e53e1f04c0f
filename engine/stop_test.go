package engine_test

import (
	"slices"
	"testing"

	"github.com/stepwise-dev/stepwise/engine"
)

// TestStopAccepts checks the table of decisions against DESIGN.md
// section 2: what each stop takes, and what a value given there decides.
func TestStopAccepts(t *testing.T) {
	for _, c := range []struct {
		kind    engine.StopKind
		accepts []engine.Action
	}{
		{engine.StopStep, []engine.Action{engine.Inject, engine.Edit, engine.Deny, engine.Approve, engine.Fail}},
		{engine.StopTool, []engine.Action{engine.Inject, engine.Edit, engine.Deny, engine.Approve}},
		{engine.StopRound, []engine.Action{engine.Replace}},
		{engine.StopReply, []engine.Action{engine.Replace}},
		{engine.StopResult, []engine.Action{engine.Replace}},
		{engine.StopRepair, []engine.Action{engine.Replace}},
		{engine.StopError, []engine.Action{engine.Replace}},
		{engine.StopAsk, []engine.Action{engine.Answer, engine.Decline}},
	} {
		if got := c.kind.Accepts(); !slices.Equal(got, c.accepts) {
			t.Errorf("%s stop accepts %v, want %v", c.kind, got, c.accepts)
		}
		if got := c.kind.ValueAction(); got != c.accepts[0] {
			t.Errorf("a value at a %s stop decides %v, want %v", c.kind, got, c.accepts[0])
		}
		for a := engine.Proceed; a <= engine.Fail; a++ {
			want := a == engine.Proceed || a == engine.Abort || slices.Contains(c.accepts, a)
			if c.kind.Takes(a) != want {
				t.Errorf("%s stop takes %v: %v, want %v", c.kind, a, c.kind.Takes(a), want)
			}
		}
	}
	// Accepts hands out a copy: a caller cannot change the table.
	engine.StopAsk.Accepts()[0] = engine.Abort
	if engine.StopAsk.ValueAction() != engine.Answer {
		t.Error("changing what Accepts returned changed the table")
	}
}
