package record

import "testing"

// TestRunIDErrors reads the messages a run id that matches no run, or
// several, gives: they name the runs the user may have meant.
func TestRunIDErrors(t *testing.T) {
	runs := []RunSummary{{ID: "a1b2c3", Plan: "triage"}, {ID: "a1b2d4", Plan: "digest"}}
	tests := []struct {
		err  error
		want string
	}{
		{&NotFoundError{ID: "zz"}, "no run 'zz': no runs are recorded"},
		{&NotFoundError{ID: "zz", Recent: runs}, "no run 'zz'; the most recent: a1b2c3 (triage), a1b2d4 (digest)"},
		{&AmbiguousError{Prefix: "a1", Candidates: runs}, "run id 'a1' is ambiguous; it begins a1b2c3 (triage), a1b2d4 (digest)"},
		{&AmbiguousError{Prefix: "a1", Candidates: runs, More: true}, "run id 'a1' is ambiguous; it begins a1b2c3 (triage), a1b2d4 (digest), ..."},
	}
	for _, tc := range tests {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("got  %q\nwant %q", got, tc.want)
		}
	}
}
