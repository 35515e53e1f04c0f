package engine

import (
	"context"
	"testing"
)

// BenchmarkStopWithoutHook is the cost of a stop when no hook is installed:
// it must stay one nil check.
func BenchmarkStopWithoutHook(b *testing.B) {
	r := &run{Engine: &Engine{}}
	st := Stop{Kind: StopStep, Path: "E1/do.3/E10"}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if d := r.stop(ctx, st); d.Action != Proceed {
			b.Fatal(d)
		}
	}
}

// BenchmarkStopWithHook is the cost of a stop a hook lets pass, four units
// deep (plan, map step, item, body step): the hook call and the hold
// clocks of the units, which time it.
func BenchmarkStopWithHook(b *testing.B) {
	r := &run{Engine: &Engine{hook: func(context.Context, *Stop) Decision { return Decision{} }}}
	var held *holdClock
	for range 4 {
		held = &holdClock{parent: held}
	}
	st := Stop{Kind: StopStep, Path: "E1/do.3/E10", held: held}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if d := r.stop(ctx, st); d.Action != Proceed {
			b.Fatal(d)
		}
	}
}
