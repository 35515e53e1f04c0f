package engine

import (
	"slices"
	"sync"

	"github.com/stepwise-dev/stepwise/engine/config"
)

// scope is what a step's templates render against: plan input and the
// results of earlier steps, and inside a body the item's pseudo-roots and
// the results of earlier steps of the same body. A body's scope layers over
// its parent's, so an item never sees another item's results, and a body's
// step ids are invisible outside it.
//
// A scope is written only by the goroutine that runs its steps, between
// steps; concurrent map items read their common parent while nobody writes
// it, and each writes only its own layer. The mutex is for the readers that
// are not steps: a hook inspecting a held item while others run.
type scope struct {
	parent *scope

	mu      sync.RWMutex
	results map[string]any // "input" at the plan level, then step ids

	// The pseudo-roots of a body item (map, reduce, filter).
	hasItem     bool
	item        any
	index       int
	hasAcc      bool
	accumulator any

	// valueLimit bounds the text a template renders against the scope:
	// [limits] value_bytes, the same in every layer.
	valueLimit int64
}

// planScope is the scope of a plan run: input and nothing else yet. Its
// renders are bounded by cfg's [limits] value_bytes.
func planScope(input map[string]any, cfg *config.Config) *scope {
	s := &scope{results: map[string]any{"input": input}}
	if cfg != nil {
		s.valueLimit = cfg.Limits.ValueBytes
	}
	return s
}

// itemScope is the scope of one item of a body: item and index, and for a
// reduce the accumulator.
func (s *scope) itemScope(item any, index int) *scope {
	return &scope{parent: s, hasItem: true, item: item, index: index, valueLimit: s.valueLimit}
}

// branchScope is the scope of a decide branch: no pseudo-roots, but its
// steps' results are its own.
func (s *scope) branchScope() *scope {
	return &scope{parent: s, valueLimit: s.valueLimit}
}

// ValueLimit is the most bytes a template may render against s (a
// template.Limited scope).
func (s *scope) ValueLimit() int64 { return s.valueLimit }

func (s *scope) set(id string, result any) {
	s.mu.Lock()
	if s.results == nil {
		s.results = map[string]any{}
	}
	s.results[id] = result
	s.mu.Unlock()
}

// Lookup resolves a root, innermost layer first: a body's pseudo-roots
// shadow an enclosing body's.
func (s *scope) Lookup(root string) (any, bool) {
	for l := s; l != nil; l = l.parent {
		if l.hasItem {
			switch root {
			case "item":
				return l.item, true
			case "index":
				return l.index, true
			case "accumulator":
				if l.hasAcc {
					return l.accumulator, true
				}
			}
		}
		l.mu.RLock()
		v, ok := l.results[root]
		l.mu.RUnlock()
		if ok {
			return v, true
		}
	}
	return nil, false
}

// Roots lists every root visible from s.
func (s *scope) Roots() []string {
	var out []string
	for l := s; l != nil; l = l.parent {
		if l.hasItem {
			out = append(out, "item", "index")
			if l.hasAcc {
				out = append(out, "accumulator")
			}
		}
		l.mu.RLock()
		for k := range l.results {
			out = append(out, k)
		}
		l.mu.RUnlock()
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Values flattens the scope into one map, innermost roots winning: what a
// debugger shows as "everything in scope".
func (s *scope) Values() map[string]any {
	out := map[string]any{}
	for _, root := range s.Roots() {
		v, _ := s.Lookup(root)
		out[root] = v
	}
	return out
}
