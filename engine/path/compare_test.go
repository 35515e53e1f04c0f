package path

import (
	"slices"
	"testing"
)

func TestCompareCountsNumbers(t *testing.T) {
	got := []string{"E1/do.10", "E1/do.2", "E1/do.1", "E1/do.0", "E10", "E2", "E1/do.1/agent.10", "E1/do.1/agent.9", "E1/do.01", "E1"}
	slices.SortFunc(got, Compare)
	want := []string{"E1", "E1/do.0", "E1/do.1", "E1/do.1/agent.9", "E1/do.1/agent.10", "E1/do.01", "E1/do.2", "E1/do.10", "E2", "E10"}
	if !slices.Equal(got, want) {
		t.Errorf("sorted:\n got %q\nwant %q", got, want)
	}
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"do.2", "do.10", -1}, {"do.10", "do.2", 1}, {"do.7", "do.7", 0},
		{"a", "b", -1}, {"do.9x", "do.9", 1}, {"", "", 0}, {"9", "a", -1},
	} {
		if got := Compare(c.a, c.b); got != c.want {
			t.Errorf("Compare(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
