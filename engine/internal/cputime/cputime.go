// Package cputime measures the CPU time this process has used, for the
// benchmarks that report it beside their wall time: another process's
// load on the machine inflates the wall time a run takes, and much less
// its CPU time, which also counts what the run's other goroutines (a run
// store's encoder and writer, the garbage collector) did on other cores.
package cputime

import "time"

// PerOp is the CPU time used since start (a Process reading), in
// milliseconds per each of n operations, as a benchmark reports it
// (cpu-ms/op).
func PerOp(start time.Duration, n int) float64 {
	return float64(Process()-start) / float64(time.Millisecond) / float64(n)
}
