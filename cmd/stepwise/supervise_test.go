//go:build linux

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stepwise-dev/stepwise/engine/tools/supervise"
)

// TestKilledRunLeavesNoProcess kills a run with SIGKILL while its exec
// tool runs, having started processes that would outlive it: one in the
// background, one orphaned, one in a session of its own (where setsid is
// installed). None of them, nor the tool, nor its supervisor, may be left
// running after.
func TestKilledRunLeavesNoProcess(t *testing.T) {
	if _, err := os.Stat("/proc/self/exe"); err != nil {
		t.Skip("the supervisor needs /proc")
	}
	dir := runProject(t)
	pidsFile := filepath.Join(dir, "pids")
	if err := syscall.Mkfifo(pidsFile, 0o600); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, ".stepwise", "tools", "spawn.yaml"), []byte(`
name: spawn
description: Starts processes that would outlive it, writes their pids and its own to a file, and waits.
kind: exec
command: sh
args:
  - -c
  - |
    sleep 1000 >/dev/null 2>&1 &
    background=$!
    orphan=$( (sleep 1000 >/dev/null 2>&1 & echo $!) )
    if command -v setsid >/dev/null; then
      escaped=$(setsid -f sh -c 'echo $$; exec sleep 1000 >/dev/null 2>&1')
    fi
    echo $$ $background $orphan $escaped > "$1"
    exec sleep 1000
  - spawn
  - "{{input.file}}"
input_schema:
  type: object
  required: [file]
  properties:
    file: { type: string }
output: text
timeout_secs: 600
`), 0o644)
	os.WriteFile(filepath.Join(dir, ".stepwise", "plans", "spawner.yaml"), []byte(`
identifier: spawner
name: Spawner
description: Runs a tool that leaves processes behind.
input_schema:
  type: object
  required: [file]
  properties:
    file: { type: string }
steps:
  - id: spawn
    tool_name: user__spawn
    input: { file: "{{input.file}}" }
`), 0o644)
	t.Setenv("GORACE", "atexit_sleep_ms=0")
	cmd := exec.Command(os.Args[0], "run", "spawner", "--input", "file="+pidsFile)
	cmd.Env = append(os.Environ(), "STEPWISE_TEST_CLI=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-exited })
	// Reading the fifo waits for the tool to open it, and ends when it has
	// written the pids.
	written := make(chan []byte, 1)
	go func() {
		data, _ := os.ReadFile(pidsFile)
		written <- data
	}()
	var pids []int
	select {
	case data := <-written:
		for _, f := range strings.Fields(string(data)) {
			pid, err := strconv.Atoi(f)
			if err != nil {
				t.Fatalf("the tool wrote %q", data)
			}
			pids = append(pids, pid)
		}
	case <-exited:
		t.Fatalf("the run ended before the tool wrote its pids:\n%s", stderr.String())
	}
	if len(pids) < 3 {
		t.Fatalf("the tool wrote %d pids, want its own and those it started", len(pids))
	}
	cmd.Process.Signal(syscall.SIGKILL)
	<-exited
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := slices.DeleteFunc(slices.Clone(pids), func(pid int) bool { return !running(pid) })
		left = append(left, processesIn(dir, supervise.Subcommand)...)
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			for _, pid := range left {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			t.Fatalf("processes %v (of the tool %v and its supervisor) outlived the run killed with SIGKILL", left, pids)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// running reports whether process pid exists and is not a zombie.
func running(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	return err == nil && !strings.Contains(string(stat), ") Z ")
}
