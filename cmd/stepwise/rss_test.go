//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// peakRSSEnv makes the test binary a launcher that measures a command: with
// it set to a file name, the test binary runs the command its arguments
// name and writes the command's peak RSS, in bytes, to that file.
//
// The command cannot be measured from the test process itself. Go starts a
// child with vfork, so the child runs in the parent's memory until its
// exec, and Linux folds that memory's peak into the child's: a child of a
// test process that once held 200 MB reports at least 200 MB, however
// little it uses. The launcher is a fresh process holding nothing.
const peakRSSEnv = "STEPWISE_TEST_PEAK_RSS"

// init runs the launcher before any test machinery starts.
func init() {
	if report := os.Getenv(peakRSSEnv); report != "" {
		os.Exit(launchMeasured(report, os.Args[1:]))
	}
}

// measured is what runMeasured saw of a command.
type measured struct {
	code           int
	stdout, stderr string
	rss            int64 // peak resident set, bytes
}

// runMeasured runs name with args through the launcher, in the test's
// working directory and environment plus env.
func runMeasured(t testing.TB, env []string, name string, args ...string) measured {
	t.Helper()
	report := filepath.Join(t.TempDir(), "rss")
	cmd := exec.Command(os.Args[0], append([]string{name}, args...)...)
	cmd.Env = append(append(os.Environ(), env...), peakRSSEnv+"="+report)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("start the launcher: %v", err)
	}
	text, err := os.ReadFile(report)
	if err != nil {
		t.Fatalf("the launcher reported no peak RSS (%v); stderr:\n%.2000s", err, stderr.String())
	}
	rss, err := strconv.ParseInt(string(text), 10, 64)
	if err != nil {
		t.Fatalf("the launcher's report %q: %v", text, err)
	}
	return measured{code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String(), rss: rss}
}

// launchMeasured is the launcher: it runs args[0] with the rest of args,
// passing its streams through, writes the command's peak RSS to the file
// report, and returns the command's exit code.
func launchMeasured(report string, args []string) int {
	os.Unsetenv(peakRSSEnv)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		fmt.Fprintln(os.Stderr, "launcher:", err)
		return 125
	}
	rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10 // Linux counts KiB
	if err := os.WriteFile(report, []byte(strconv.FormatInt(rss, 10)), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "launcher:", err)
		return 125
	}
	return cmd.ProcessState.ExitCode()
}
