package timeline

import (
	"cmp"
	"math"
	"slices"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/path"
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
	// tokens, ties by label with numbers counted
	// (do.2 before do.10). The items of a map, reduce or filter share
	// one line of ByStep for each body step, a group (SpendLine.Items):
	// a map of ten thousand items is a line, not ten thousand.
	ByStep, ByModel []SpendLine
}

// SpendLine is the spend of one step, of one body step over the items of
// its map, or of one model.
type SpendLine struct {
	// Label is the step's path, the body step's path with each item
	// index made * for a group (E1/do.*/verdict), or the model as
	// provider/model.
	Label  string
	Calls  int
	Tokens int
	Cost   *float64
	// Items are a group's lines, one an item, most expensive first; nil
	// for a step that ran once, and for a model. A body step that ran for
	// one item only is a line of its own, not a group of one.
	Items []SpendLine
}

// Group reports whether the line adds up the items of a map.
func (l SpendLine) Group() bool { return len(l.Items) > 0 }

// SpendOf reads a usage report (a run's run_end, or a recorded run's
// detail) as a Spend.
func SpendOf(u engine.UsageReport) Spend {
	s := Spend{Calls: u.Calls, Tokens: u.Usage.Total(), Cost: u.CostUSD}
	groups := map[string]int{} // a body step's place in ByStep
	for _, l := range u.ByStep {
		line := SpendLine{Label: l.Path, Calls: l.Calls, Tokens: l.Usage.Total(), Cost: l.CostUSD}
		static := path.Static(l.Path)
		if static == l.Path {
			s.ByStep = append(s.ByStep, line)
			continue
		}
		i, ok := groups[static]
		if !ok {
			groups[static] = len(s.ByStep)
			s.ByStep = append(s.ByStep, SpendLine{Label: static})
			i = len(s.ByStep) - 1
		}
		s.ByStep[i].add(line)
	}
	for i := range s.ByStep {
		g := &s.ByStep[i]
		switch {
		case len(g.Items) == 1:
			*g = g.Items[0]
		case g.Group():
			slices.SortStableFunc(g.Items, moreExpensive)
		}
	}
	for _, l := range u.ByModel {
		s.ByModel = append(s.ByModel, SpendLine{Label: l.Provider + "/" + l.Model, Calls: l.Calls, Tokens: l.Usage.Total(), Cost: l.CostUSD})
	}
	slices.SortStableFunc(s.ByStep, moreExpensive)
	slices.SortStableFunc(s.ByModel, moreExpensive)
	return s
}

// add counts an item's line in the group g. The group's cost is known
// only while every item's is, as a usage line's is only while every call
// in it was priced.
func (g *SpendLine) add(item SpendLine) {
	first := len(g.Items) == 0
	g.Items = append(g.Items, item)
	g.Calls += item.Calls
	g.Tokens += item.Tokens
	switch {
	case item.Cost == nil:
		g.Cost = nil
	case first:
		c := *item.Cost
		g.Cost = &c
	case g.Cost != nil:
		// As the engine's tally: a billionth of a dollar is precision
		// enough, and sums of prices pick up binary noise.
		c := math.Round((*g.Cost+*item.Cost)*1e9) / 1e9
		g.Cost = &c
	}
}

// Spend is the run's spend so far: its usage report once it ended, the
// model calls that ended until then. It is worked out again only when a
// model call or the run's end came since it was last asked for, so that a
// view may ask for it every frame.
func (t *Timeline) Spend() Spend {
	if t.spent != nil {
		return *t.spent
	}
	var s Spend
	if t.usage != nil {
		s = SpendOf(*t.usage)
	} else {
		s = SpendOf(t.tally.Report())
	}
	t.spent = &s
	return s
}

func moreExpensive(a, b SpendLine) int {
	if c := cmp.Compare(costOf(b), costOf(a)); c != 0 {
		return c
	}
	if c := cmp.Compare(b.Tokens, a.Tokens); c != 0 {
		return c
	}
	return path.Compare(a.Label, b.Label)
}

func costOf(l SpendLine) float64 {
	if l.Cost == nil {
		return 0
	}
	return *l.Cost
}
