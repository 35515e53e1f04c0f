package debugger

import (
	"strings"
	"testing"
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
