package timeline

import (
	"cmp"
	"slices"

	"github.com/stepwise-dev/stepwise/engine"
)

// Spend is what a run's model calls cost, by step and by model, for a
// chart of horizontal bars.
type Spend struct {
	Calls  int
	Tokens int
	// Cost is nil unless every call was priced: an unknown cost is absent
	// rather than understated, as in the engine's usage report.
	Cost *float64
	// ByStep and ByModel are most expensive first: by cost, then by
	// tokens, ties by label.
	ByStep, ByModel []SpendLine
}

// SpendLine is the spend of one step or one model.
type SpendLine struct {
	// Label is the step's path, or the model as provider/model.
	Label  string
	Calls  int
	Tokens int
	Cost   *float64
}

// SpendOf reads a usage report (a run's run_end, or a recorded run's
// detail) as a Spend.
func SpendOf(u engine.UsageReport) Spend {
	s := Spend{Calls: u.Calls, Tokens: u.Usage.Total(), Cost: u.CostUSD}
	for _, l := range u.ByStep {
		s.ByStep = append(s.ByStep, SpendLine{Label: l.Path, Calls: l.Calls, Tokens: l.Usage.Total(), Cost: l.CostUSD})
	}
	for _, l := range u.ByModel {
		s.ByModel = append(s.ByModel, SpendLine{Label: l.Provider + "/" + l.Model, Calls: l.Calls, Tokens: l.Usage.Total(), Cost: l.CostUSD})
	}
	slices.SortStableFunc(s.ByStep, moreExpensive)
	slices.SortStableFunc(s.ByModel, moreExpensive)
	return s
}

// Spend is the run's spend so far: its usage report once it ended, the
// model calls that ended until then.
func (t *Timeline) Spend() Spend {
	if t.usage != nil {
		return SpendOf(*t.usage)
	}
	return SpendOf(t.tally.Report())
}

func moreExpensive(a, b SpendLine) int {
	if c := cmp.Compare(costOf(b), costOf(a)); c != 0 {
		return c
	}
	if c := cmp.Compare(b.Tokens, a.Tokens); c != 0 {
		return c
	}
	return cmp.Compare(a.Label, b.Label)
}

func costOf(l SpendLine) float64 {
	if l.Cost == nil {
		return 0
	}
	return *l.Cost
}
