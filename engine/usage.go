package engine

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/stepwise-dev/stepwise/engine/chat"
	"github.com/stepwise-dev/stepwise/engine/config"
	"github.com/stepwise-dev/stepwise/engine/path"
)

// UsageLine is the spend of one step or one model.
type UsageLine struct {
	Path     string `json:"path,omitempty"`
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
	Calls    int    `json:"calls"`
	chat.Usage
	// CostUSD is nil, and absent from JSON, when no price is configured
	// for a model the line includes: never estimated.
	CostUSD *float64 `json:"cost_usd,omitempty"`
}

// UsageReport is what a run spent: the scripting contract's usage object.
type UsageReport struct {
	Calls int `json:"calls"`
	chat.Usage
	CostUSD *float64    `json:"cost_usd,omitempty"`
	ByStep  []UsageLine `json:"by_step"`
	ByModel []UsageLine `json:"by_model"`
}

// Tally adds up model calls into a UsageReport: the one set of rules for
// what a run spent, whether counted as the run goes (the engine's ledger)
// or again from a record (the store, for a run that ended before it could
// report). It is safe for concurrent use: map items call models in
// parallel.
type Tally struct {
	mu      sync.Mutex
	total   UsageLine
	byStep  map[string]*UsageLine
	byModel map[[2]string]*UsageLine
	order   []string // step paths in the order they first spent
}

// NewTally returns an empty tally.
func NewTally() *Tally {
	return &Tally{byStep: map[string]*UsageLine{}, byModel: map[[2]string]*UsageLine{}}
}

// Add records one call made at site (a step path, or "solver"); cost is
// nil when the model is not priced.
func (t *Tally) Add(site, provider, modelID string, u chat.Usage, cost *float64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	step, ok := t.byStep[site]
	if !ok {
		step = &UsageLine{Path: site}
		t.byStep[site] = step
		t.order = append(t.order, site)
	}
	key := [2]string{provider, modelID}
	m, ok := t.byModel[key]
	if !ok {
		m = &UsageLine{Provider: provider, Model: modelID}
		t.byModel[key] = m
	}
	for _, line := range []*UsageLine{&t.total, step, m} {
		addLine(line, u, cost)
	}
}

// addLine adds a call to a line. A line's cost is known only while every
// call in it is priced: one unpriced call makes the sum unknown, and an
// unknown cost is absent rather than understated.
func addLine(line *UsageLine, u chat.Usage, c *float64) {
	first := line.Calls == 0
	line.Calls++
	line.Usage = line.Usage.Add(u)
	switch {
	case c == nil:
		line.CostUSD = nil
	case first:
		v := *c
		line.CostUSD = &v
	case line.CostUSD != nil:
		// Sums of prices per million tokens pick up binary noise
		// (0.042905000000000006); a billionth of a dollar is precision
		// enough.
		v := math.Round((*line.CostUSD+*c)*1e9) / 1e9
		line.CostUSD = &v
	}
}

// Report returns the usage so far: by_step most expensive first (by cost,
// then by tokens), by_model by calls.
func (t *Tally) Report() UsageReport {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := UsageReport{Calls: t.total.Calls, Usage: t.total.Usage, CostUSD: copyCost(t.total.CostUSD), ByStep: []UsageLine{}, ByModel: []UsageLine{}}
	for _, site := range t.order {
		line := *t.byStep[site]
		line.CostUSD = copyCost(line.CostUSD)
		r.ByStep = append(r.ByStep, line)
	}
	sort.SliceStable(r.ByStep, func(i, j int) bool { return moreExpensive(r.ByStep[i], r.ByStep[j]) })
	for _, m := range t.byModel {
		line := *m
		line.CostUSD = copyCost(line.CostUSD)
		r.ByModel = append(r.ByModel, line)
	}
	sort.Slice(r.ByModel, func(i, j int) bool {
		a, b := r.ByModel[i], r.ByModel[j]
		if a.Calls != b.Calls {
			return a.Calls > b.Calls
		}
		return a.Provider+"/"+a.Model < b.Provider+"/"+b.Model
	})
	return r
}

// ledger is a run's tally with the configuration's prices.
type ledger struct {
	*Tally
	cfg *config.Config

	mu    sync.Mutex
	spent float64 // the cost of the priced calls so far, for [limits] cost_usd
}

func newLedger(cfg *config.Config) *ledger {
	return &ledger{Tally: NewTally(), cfg: cfg}
}

// add records one call at site, priced, and returns its cost (nil when the
// model has no price).
func (l *ledger) add(site, provider, modelID string, u chat.Usage) *float64 {
	c := l.cost(modelID, u)
	l.Add(site, provider, modelID, u, c)
	if c != nil {
		l.mu.Lock()
		l.spent += *c
		l.mu.Unlock()
	}
	return c
}

// SpendCapError stops a run before a model call once its priced calls have
// cost its cap. Under the debugger the run holds at the call's stop with
// it instead (an agent round's round stop; the step's error stop for other
// model calls), where a reply or a value given by hand goes on without
// spending.
type SpendCapError struct {
	Spent, Cap float64
}

func (e *SpendCapError) Error() string {
	capText := CapText(e.Cap)
	// The spend is said to four decimals, or to the cap's last digit
	// where the cap is finer ($0.0000 against a cap of $0.000001 would
	// read as nothing spent), and past the cap, as many more as tell the
	// two apart ($0.00102 against $0.001, not $0.0010).
	_, capDigits, _ := strings.Cut(capText, ".")
	digits := max(4, len(capDigits))
	for ; digits < 8 && e.Spent > e.Cap; digits++ {
		if shown, _ := strconv.ParseFloat(strconv.FormatFloat(e.Spent, 'f', digits, 64), 64); shown > e.Cap {
			break
		}
	}
	return fmt.Sprintf("spend cap reached: the run's priced model calls cost $%.*f, and its cap is %s ([limits] cost_usd, or --max-cost); it stopped before its next model call",
		digits, e.Spent, capText)
}

// CapText is a spend cap as it was given, in dollars: every digit it has,
// and at least the cents ($2.50, $0.000001). A cap is a figure a person
// chose, not one measured: rounded as a cost is ($0.0001, <$0.0001) it
// would read as another cap than the one in force.
func CapText(usd float64) string {
	whole, cents, _ := strings.Cut(strconv.FormatFloat(usd, 'f', -1, 64), ".")
	for len(cents) < 2 {
		cents += "0"
	}
	return "$" + whole + "." + cents
}

// overBudget is the *SpendCapError that stops a run before a model call
// once its priced calls have cost [limits] cost_usd or more; nil while they
// have not, and always without a cap. Calls already under way when the cap
// is reached (concurrent map items) still end, so a run may pass its cap
// by what they cost.
func (l *ledger) overBudget() error {
	if l.cfg == nil || l.cfg.Limits.CostUSD <= 0 {
		return nil
	}
	l.mu.Lock()
	spent := l.spent
	l.mu.Unlock()
	if spent < l.cfg.Limits.CostUSD {
		return nil
	}
	return &SpendCapError{Spent: spent, Cap: l.cfg.Limits.CostUSD}
}

// cost prices one call, or returns nil when the model has no price.
func (l *ledger) cost(modelID string, u chat.Usage) *float64 {
	if l.cfg == nil {
		return nil
	}
	r, ok := l.cfg.Price(modelID)
	if !ok {
		return nil
	}
	c := (float64(u.InputTokens)*r.Input + float64(u.OutputTokens)*r.Output +
		float64(u.CacheCreationInputTokens)*r.CacheWrite + float64(u.CacheReadInputTokens)*r.CacheRead) / 1e6
	return &c
}

func moreExpensive(a, b UsageLine) bool {
	ca, cb := costOf(a), costOf(b)
	if ca != cb {
		return ca > cb
	}
	if ta, tb := a.Usage.Total(), b.Usage.Total(); ta != tb {
		return ta > tb
	}
	// Ties in path order, not in the order concurrent items finished,
	// and do.2 before do.10.
	return path.Compare(a.Path, b.Path) < 0
}

func costOf(l UsageLine) float64 {
	if l.CostUSD == nil {
		return 0
	}
	return *l.CostUSD
}

func copyCost(c *float64) *float64 {
	if c == nil {
		return nil
	}
	v := *c
	return &v
}
