//go:build unix

package store_test

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time this process has used, user and system: a
// measure of what recording costs that another process's load on the
// machine does not distort the way it distorts wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
