package template

import (
	"maps"
	"slices"
)

// Scope is what a template reads: the roots a root-anchored path may start
// with (plan input, step ids, and inside bodies item, index and accumulator).
// Values are JSON-shaped: nil, bool, string, json.Number, float64, float32,
// the Go integer types, []any and map[string]any. Other types are opaque:
// they are truthy, serialize through encoding/json and have no fields.
type Scope interface {
	// Lookup returns the value of one root and whether the root exists.
	Lookup(root string) (any, bool)
	// Roots returns every root name; it is only called to explain a
	// MissingStepError, so it need not be fast, and need not be sorted.
	Roots() []string
}

// MapScope is a Scope over a plain map from root name to value.
type MapScope map[string]any

// Lookup returns m[root].
func (m MapScope) Lookup(root string) (any, bool) {
	v, ok := m[root]
	return v, ok
}

// Roots returns the keys of m, sorted.
func (m MapScope) Roots() []string {
	return slices.Sorted(maps.Keys(m))
}

// Limited is a Scope that bounds the text rendered against it: a render
// whose text would pass ValueLimit bytes fails with a *TooLongError as
// soon as it would, so that a plan whose values double at each step stops
// at the limit rather than when memory runs out. A limit of 0 or less is
// no bound.
type Limited interface {
	Scope
	ValueLimit() int64
}

// LimitedScope bounds the renders against Scope by Limit.
type LimitedScope struct {
	Scope
	Limit int64
}

// ValueLimit returns l.Limit.
func (l LimitedScope) ValueLimit() int64 { return l.Limit }

// valueLimit is the bound s sets, or 0.
func valueLimit(s Scope) int64 {
	if l, ok := s.(Limited); ok {
		return l.ValueLimit()
	}
	return 0
}
