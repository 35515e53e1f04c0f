package engine

import (
	"sort"
	"sync"

	"github.com/stepwise-dev/stepwise/engine/config"
	"github.com/stepwise-dev/stepwise/engine/model"
)

// UsageLine is the spend of one step or one model.
type UsageLine struct {
	Path     string `json:"path,omitempty"`
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
	Calls    int    `json:"calls"`
	model.Usage
	// CostUSD is nil, and absent from JSON, when no price is configured
	// for a model the line includes: never estimated.
	CostUSD *float64 `json:"cost_usd,omitempty"`
}

// UsageReport is what a run spent: the scripting contract's usage object.
type UsageReport struct {
	Calls int `json:"calls"`
	model.Usage
	CostUSD *float64    `json:"cost_usd,omitempty"`
	ByStep  []UsageLine `json:"by_step"`
	ByModel []UsageLine `json:"by_model"`
}

// ledger adds up the model calls of a run, nested plans included. It is
// safe for concurrent use: map items call models in parallel.
type ledger struct {
	cfg     *config.Config
	mu      sync.Mutex
	total   UsageLine
	byStep  map[string]*UsageLine
	byModel map[[2]string]*UsageLine
	order   []string // step paths in the order they first spent
}

func newLedger(cfg *config.Config) *ledger {
	return &ledger{cfg: cfg, byStep: map[string]*UsageLine{}, byModel: map[[2]string]*UsageLine{}}
}

// cost prices one call, or returns nil when the model has no price.
func (l *ledger) cost(modelID string, u model.Usage) *float64 {
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

// add records one call at site and returns its cost (nil when unpriced).
func (l *ledger) add(site, provider, modelID string, u model.Usage) *float64 {
	c := l.cost(modelID, u)
	l.mu.Lock()
	defer l.mu.Unlock()
	step, ok := l.byStep[site]
	if !ok {
		step = &UsageLine{Path: site}
		l.byStep[site] = step
		l.order = append(l.order, site)
	}
	key := [2]string{provider, modelID}
	m, ok := l.byModel[key]
	if !ok {
		m = &UsageLine{Provider: provider, Model: modelID}
		l.byModel[key] = m
	}
	for _, line := range []*UsageLine{&l.total, step, m} {
		addLine(line, u, c, line.Calls == 0)
	}
	return c
}

// addLine adds a call to a line. A line's cost is known only while every
// call in it is priced: one unpriced call makes the sum unknown, and an
// unknown cost is absent rather than understated.
func addLine(line *UsageLine, u model.Usage, c *float64, first bool) {
	line.Calls++
	line.Usage = line.Usage.Add(u)
	switch {
	case c == nil:
		line.CostUSD = nil
	case first:
		v := *c
		line.CostUSD = &v
	case line.CostUSD != nil:
		v := *line.CostUSD + *c
		line.CostUSD = &v
	}
}

// report returns the usage so far: by_step most expensive first (by cost,
// then by tokens), by_model by calls.
func (l *ledger) report() UsageReport {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := UsageReport{Calls: l.total.Calls, Usage: l.total.Usage, CostUSD: copyCost(l.total.CostUSD), ByStep: []UsageLine{}, ByModel: []UsageLine{}}
	for _, site := range l.order {
		line := *l.byStep[site]
		line.CostUSD = copyCost(line.CostUSD)
		r.ByStep = append(r.ByStep, line)
	}
	sort.SliceStable(r.ByStep, func(i, j int) bool { return moreExpensive(r.ByStep[i], r.ByStep[j]) })
	for _, m := range l.byModel {
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

func moreExpensive(a, b UsageLine) bool {
	ca, cb := costOf(a), costOf(b)
	if ca != cb {
		return ca > cb
	}
	return tokens(a.Usage) > tokens(b.Usage)
}

func costOf(l UsageLine) float64 {
	if l.CostUSD == nil {
		return 0
	}
	return *l.CostUSD
}

func tokens(u model.Usage) int {
	return u.InputTokens + u.OutputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
}

func copyCost(c *float64) *float64 {
	if c == nil {
		return nil
	}
	v := *c
	return &v
}
