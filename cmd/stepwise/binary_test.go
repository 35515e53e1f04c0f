package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// builtBinary is the stepwise executable that whole-process tests and
// benchmarks run, built once per test process the way a user gets it:
// without the race detector or test instrumentation, whose own time and
// memory would swamp a measurement of the command's.
var builtBinary struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// packageDir and startEnv are the working directory and the environment
// the test process starts with: this package's directory, and the user's
// own HOME and go caches.
var (
	packageDir, _ = os.Getwd()
	startEnv      = os.Environ()
)

// stepwiseBinary builds cmd/stepwise with go build, once.
func stepwiseBinary(tb testing.TB) string {
	tb.Helper()
	builtBinary.once.Do(func() {
		goTool, err := exec.LookPath("go")
		if err != nil {
			builtBinary.err = fmt.Errorf("whole-process tests build stepwise with the go command: %w", err)
			return
		}
		if builtBinary.dir, err = os.MkdirTemp("", "stepwise-bench-"); err != nil {
			builtBinary.err = err
			return
		}
		builtBinary.path = filepath.Join(builtBinary.dir, "stepwise")
		build := exec.Command(goTool, "build", "-o", builtBinary.path, ".")
		// Tests change their working directory and their HOME, which
		// would send go to an empty build and module cache.
		build.Dir, build.Env = packageDir, startEnv
		out, err := build.CombinedOutput()
		if err != nil {
			builtBinary.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if builtBinary.err != nil {
		tb.Fatal(builtBinary.err)
	}
	return builtBinary.path
}

// removeBuiltBinary removes what stepwiseBinary built; TestMain calls it
// once the tests and benchmarks are done.
func removeBuiltBinary() {
	if builtBinary.dir != "" {
		os.RemoveAll(builtBinary.dir)
	}
}
