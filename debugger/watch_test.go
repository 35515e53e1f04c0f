package debugger

import (
	"context"
	"strings"
	"testing"

	"github.com/stepwise-dev/stepwise/engine"
)

// TestUnknownRoot checks which watch paths are said to read nothing at
// any stop: those whose first segment names no step of the plan, body
// steps included, and no root of the scope.
func TestUnknownRoot(t *testing.T) {
	s := newSession(t, chainPlan, "")
	for _, tc := range []struct {
		path string
		warn bool
	}{
		{"E0.n", false},
		{"A.v", false}, // a body step's
		{"{{E2}}", false},
		{"input.topic", false},
		{"item", false},
		{"index", false},
		{"accumulator.count", false},
		{"stop.round", false},
		{"nosuch.path", true},
		{"E9", true},
		{"E0..n", false}, // no path: watch refuses it
	} {
		got := UnknownRoot(s.plan, tc.path)
		if (got != "") != tc.warn {
			t.Errorf("UnknownRoot(%q) = %q, want a warning: %v", tc.path, got, tc.warn)
		}
		if tc.warn && !strings.Contains(got, "no step of the plan is named "+strings.SplitN(tc.path, ".", 2)[0]) {
			t.Errorf("UnknownRoot(%q) = %q, which does not name the segment", tc.path, got)
		}
	}
}

// TestBodyRootOutsideABody: item, index and accumulator read at a stop
// outside a body say they are only in scope inside one, not that a step
// is missing, in a watch, in print and in a condition alike.
func TestBodyRootOutsideABody(t *testing.T) {
	s := newSession(t, chainPlan, "")
	cond, err := ParseCondition("{{item.id}} eq x")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Table().Set("E2", []engine.StopKind{engine.StopStep}, cond); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Table().Set("E0", []engine.StopKind{engine.StopStep}, nil); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"item.id", "index", "accumulator.count", "nosuch.x"} {
		if _, err := s.Watch(p); err != nil {
			t.Fatal(err)
		}
	}
	st := s.Start(context.Background(), nil)
	if st.Stop == nil || st.Stop.Path != "E0" {
		t.Fatalf("held at %s, want the first stop E0", where(st))
	}
	want := []string{
		"item is only in scope inside a map, filter or reduce body",
		"index is only in scope inside a map, filter or reduce body",
		"accumulator is only in scope inside a reduce body",
		"missing step 'nosuch'",
	}
	for i, w := range st.Watches {
		if !strings.Contains(w.Error, want[i]) {
			t.Errorf("watch %s reads %q, want %q", w.Path, w.Error, want[i])
		}
	}
	if _, err := st.Stop.Eval("item.id"); err == nil || err.Error() != want[0] {
		t.Errorf("print item.id: %v, want %q", err, want[0])
	}
	if _, err := st.Stop.Render("id {{item.id}}"); err == nil || err.Error() != want[0] {
		t.Errorf("a logpoint's item.id: %v, want %q", err, want[0])
	}
	st = do(t, s, Command{Move: Continue})
	if !st.Finished {
		t.Fatalf("held at %s: the condition cannot hold", where(st))
	}
	if b := s.Breakpoints()[0]; !strings.Contains(b.ConditionError, want[0]) {
		t.Errorf("the condition's error is %q, want %q", b.ConditionError, want[0])
	}
}
