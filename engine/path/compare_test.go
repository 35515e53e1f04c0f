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

func TestSortPlanOrder(t *testing.T) {
	for _, c := range []struct {
		name       string
		ran, plain []string
	}{
		{"items interleaved read item by item, each body in its order",
			[]string{"open", "assess", "assess/do.1/verdict", "assess/do.0/verdict", "assess/do.1/card", "assess/do.2/verdict", "assess/do.0/card", "assess/do.2/card", "post"},
			[]string{"open", "assess", "assess/do.0/verdict", "assess/do.0/card", "assess/do.1/verdict", "assess/do.1/card", "assess/do.2/verdict", "assess/do.2/card", "post"}},
		{"items by number, not by text",
			[]string{"E1", "E1/do.10", "E1/do.2", "E1/do.9"},
			[]string{"E1", "E1/do.2", "E1/do.9", "E1/do.10"}},
		{"a step's inner steps before the steps after it, though they end later",
			[]string{"E1", "E2", "E2/triage/E0", "E2/triage/B", "E2/triage/A", "E3"},
			[]string{"E1", "E2", "E2/triage/E0", "E2/triage/B", "E2/triage/A", "E3"}},
		{"a decide's branch under it",
			[]string{"Z", "E1", "E1/then/E10", "A"},
			[]string{"Z", "E1", "E1/then/E10", "A"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := slices.Clone(c.ran)
			SortPlanOrder(got)
			if !slices.Equal(got, c.plain) {
				t.Errorf("SortPlanOrder(%q) = %q, want %q", c.ran, got, c.plain)
			}
		})
	}
}

// BenchmarkSortPlanOrder sorts the steps of a map of 10,000 items, two
// steps each, recorded as concurrent items interleave: each item's first
// step, then the second steps in the opposite order, as inspect and diff
// sort a large run's record.
func BenchmarkSortPlanOrder(b *testing.B) {
	const items = 10000
	ran := []string{"open", "classify"}
	for i := range items {
		ran = append(ran, Item("classify", i)+"/verdict")
	}
	for i := items - 1; i >= 0; i-- {
		ran = append(ran, Item("classify", i)+"/card")
	}
	ran = append(ran, "solver")
	paths := make([]string, len(ran))
	b.ReportAllocs()
	for b.Loop() {
		copy(paths, ran)
		SortPlanOrder(paths)
	}
}
