//go:build !unix

package cputime

import "time"

// Process is not measured here: it is always 0, and so is what PerOp
// reports.
func Process() time.Duration { return 0 }
