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
