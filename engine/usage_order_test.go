package engine

import (
	"fmt"
	"testing"

	"github.com/stepwise-dev/stepwise/engine/chat"
)

// Equal figures are ordered by path with item numbers counted, not as
// text: do.2 before do.10.
func TestUsageByStepTiesCountItems(t *testing.T) {
	tally := NewTally()
	cost := 0.01
	for _, i := range []int{10, 2, 1, 0, 11} {
		tally.Add(fmt.Sprintf("E1/do.%d", i), "p", "m", chat.Usage{InputTokens: 5}, &cost)
	}
	var got []string
	for _, l := range tally.Report().ByStep {
		got = append(got, l.Path)
	}
	want := []string{"E1/do.0", "E1/do.1", "E1/do.2", "E1/do.10", "E1/do.11"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("by_step order %v, want %v", got, want)
	}
}
