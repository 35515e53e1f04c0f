//go:build unix

package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// startModes are the two ways runCommand starts a command: the test binary
// is a supervisor, as the stepwise binary is.
var startModes = []struct {
	name  string
	start func(context.Context, *exec.Cmd) (startedCommand, error)
}{
	{"in its own group", startInGroup},
	{"supervised", startSupervised},
}

// slowWriter takes a while over each write, as a reader starved of CPU
// would.
type slowWriter struct {
	bytes.Buffer
	delay time.Duration
}

func (w *slowWriter) Write(p []byte) (int, error) {
	time.Sleep(w.delay)
	return w.Buffer.Write(p)
}

// TestRunCommandOutput checks that a command's output is read to its end:
// through a reader slower than the grace after exit, from a child that
// writes after its parent exited, and that a descendant holding the pipe
// is the one case that fails, and says so.
func TestRunCommandOutput(t *testing.T) {
	tests := []struct {
		name   string
		script string
		slow   bool
		want   string
		err    error
		exit   int // the command's exit status, when it fails
	}{
		{name: "a reader slower than the grace gets all of it", script: "head -c 300000 /dev/zero | tr '\\0' x", slow: true, want: strings.Repeat("x", 300000)},
		{name: "a child that writes after its parent exits is waited for", script: "(sleep 0.3; echo late) & echo early", want: "early\nlate\n"},
		{name: "a child holding the pipe past the grace fails the call", script: "sleep 30 & echo early", err: errOutputHeld},
		{name: "a failure is the command's", script: "echo partial; exit 3", want: "partial\n", exit: 3},
		{name: "endless output is stopped at the limit", script: "yes", want: "", err: &OutputLimitError{Limit: 1 << 20}},
	}
	for _, mode := range startModes {
		for _, tt := range tests {
			t.Run(mode.name+"/"+tt.name, func(t *testing.T) {
				out := &slowWriter{}
				if tt.slow {
					out.delay = 3 * pipeGrace / 2
				}
				var stderr bytes.Buffer
				err := runCommandWith(context.Background(), mode.start, exec.Command("sh", "-c", tt.script), out, &stderr, 1<<20)
				var exit exitStatus
				switch {
				case tt.err != nil:
					if err == nil || err.Error() != tt.err.Error() {
						t.Errorf("error %v, want %v", err, tt.err)
					}
				case tt.exit != 0:
					if !errors.As(err, &exit) || exit.ExitCode() != tt.exit {
						t.Errorf("error %v, want exit status %d", err, tt.exit)
					}
				case err != nil:
					t.Errorf("error %v", err)
				}
				if got := out.String(); got != tt.want {
					t.Errorf("stdout is %d bytes %.40q, want %d bytes %.40q", len(got), got, len(tt.want), tt.want)
				}
			})
		}
	}
}

// TestRunCommandLeavesNothingRunning checks that what a command left
// running, its output elsewhere, does not outlive the call: in its own
// process group, what stayed in the group is killed as the call ends;
// under the supervisor, everything is gone by the time the call returns,
// even a process in a session of its own.
func TestRunCommandLeavesNothingRunning(t *testing.T) {
	tests := []struct {
		name string
		argv []string
		env  []string
		// onlySupervised: in its own process group, the process is out of
		// reach.
		onlySupervised bool
	}{
		{name: "a background child", argv: []string{"sh", "-c", "sleep 1000 >/dev/null 2>&1 & echo $!"}},
		{name: "an orphaned grandchild", argv: []string{"sh", "-c", "(sleep 1000 >/dev/null 2>&1 & echo $!)"}},
		{name: "a descendant that called setsid", argv: []string{os.Args[0]}, env: []string{serveEnv + "=escape", "GORACE=atexit_sleep_ms=0"}, onlySupervised: true},
	}
	for _, mode := range startModes {
		for _, tt := range tests {
			if tt.onlySupervised && mode.name != "supervised" {
				continue
			}
			t.Run(mode.name+"/"+tt.name, func(t *testing.T) {
				cmd := exec.Command(tt.argv[0], tt.argv[1:]...)
				cmd.Env = append(os.Environ(), tt.env...)
				var out bytes.Buffer
				if err := runCommandWith(context.Background(), mode.start, cmd, &out, &bytes.Buffer{}, 1<<20); err != nil {
					t.Fatal(err)
				}
				pid, err := strconv.Atoi(strings.TrimSpace(out.String()))
				if err != nil {
					t.Fatalf("stdout %q: %v", out.String(), err)
				}
				if mode.name == "supervised" {
					if alive(pid) {
						syscall.Kill(pid, syscall.SIGKILL)
						t.Errorf("process %d was still running when the call returned", pid)
					}
				} else if !waitGone(pid, 5*time.Second) {
					t.Errorf("process %d outlived the call", pid)
				}
			})
		}
	}
}

// TestSupervisedCallsAtOnce runs 50 commands at once under the one
// supervisor: each call must get its own output and its own exit status,
// not another's.
func TestSupervisedCallsAtOnce(t *testing.T) {
	const calls = 50
	var wg sync.WaitGroup
	for i := range calls {
		wg.Go(func() {
			want := fmt.Sprintf("call %d\n", i)
			var out, stderr bytes.Buffer
			cmd := exec.Command("sh", "-c", `printf 'call %s\n' "$1"; printf 'stderr of %s' "$1" >&2; exit "$2"`, "sh", strconv.Itoa(i), strconv.Itoa(i%7))
			err := runCommandWith(context.Background(), startSupervised, cmd, &out, &stderr, 1<<20)
			code := 0
			var exit exitStatus
			if errors.As(err, &exit) {
				code = exit.ExitCode()
			} else if err != nil {
				t.Errorf("call %d: %v", i, err)
			}
			if out.String() != want || code != i%7 || stderr.String() != fmt.Sprintf("stderr of %d", i) {
				t.Errorf("call %d: stdout %q, stderr %q, exit status %d; want %q, %q, %d", i, out.String(), stderr.String(), code, want, fmt.Sprintf("stderr of %d", i), i%7)
			}
		})
	}
	wg.Wait()
}

// TestSupervisedSetsidDescendantsEndWithTheirCall runs two calls at once
// that each leave a process in a session of its own: the one that ends
// first takes its own with it, while the other's lives on until its call
// ends too.
func TestSupervisedSetsidDescendantsEndWithTheirCall(t *testing.T) {
	dir := t.TempDir()
	pidFile, release := filepath.Join(dir, "pid"), filepath.Join(dir, "release")
	escapeEnv := append(os.Environ(), serveEnv+"=escape", "GORACE=atexit_sleep_ms=0")
	// The long call leaves its process, writes its pid, and waits to be
	// released.
	long := exec.Command("sh", "-c", `"$0" > "$1.tmp" && mv "$1.tmp" "$1"; until [ -e "$2" ]; do sleep 0.02; done`, os.Args[0], pidFile, release)
	long.Env = escapeEnv
	longEnded := make(chan error, 1)
	go func() {
		longEnded <- runCommandWith(context.Background(), startSupervised, long, &bytes.Buffer{}, &bytes.Buffer{}, 1<<20)
	}()
	var longPid int
	for deadline := time.Now().Add(10 * time.Second); longPid == 0; time.Sleep(10 * time.Millisecond) {
		if data, err := os.ReadFile(pidFile); err == nil {
			if longPid, err = strconv.Atoi(strings.TrimSpace(string(data))); err != nil {
				t.Fatalf("the long call wrote %q", data)
			}
		}
		select {
		case err := <-longEnded:
			t.Fatalf("the long call ended before it wrote its process's pid: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the long call did not write its process's pid")
		}
	}
	t.Cleanup(func() { syscall.Kill(longPid, syscall.SIGKILL) })

	short := exec.Command(os.Args[0])
	short.Env = escapeEnv
	var out bytes.Buffer
	if err := runCommandWith(context.Background(), startSupervised, short, &out, &bytes.Buffer{}, 1<<20); err != nil {
		t.Fatal(err)
	}
	shortPid, err := strconv.Atoi(strings.TrimSpace(out.String()))
	if err != nil {
		t.Fatalf("the short call printed %q", out.String())
	}
	if alive(shortPid) {
		syscall.Kill(shortPid, syscall.SIGKILL)
		t.Errorf("the short call's process %d was still running when its call returned", shortPid)
	}
	if !alive(longPid) {
		t.Errorf("the long call's process %d was killed when the short call ended", longPid)
	}

	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := <-longEnded; err != nil {
		t.Fatalf("the long call: %v", err)
	}
	if alive(longPid) {
		t.Errorf("the long call's process %d was still running when its call returned", longPid)
	}
}

// TestSupervisorEndsAsTheCommand checks that a supervised command ends,
// for runCommand's caller, the way it does in its own process group: the
// same exit status, the same signal, the same reason it could not start.
func TestSupervisorEndsAsTheCommand(t *testing.T) {
	notExecutable := filepath.Join(t.TempDir(), "tool")
	if err := os.WriteFile(notExecutable, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		argv []string
	}{
		{"success", []string{"true"}},
		{"exit status 3", []string{"sh", "-c", "exit 3"}},
		{"exit status 255", []string{"sh", "-c", "exit 255"}},
		{"killed", []string{"sh", "-c", "kill -KILL $$"}},
		{"terminated", []string{"sh", "-c", "kill -TERM $$"}},
		{"a crash", []string{"sh", "-c", "kill -SEGV $$"}},
		{"a signal Go handles itself", []string{"sh", "-c", "kill -USR1 $$"}},
		{"a broken pipe", []string{"sh", "-c", "kill -PIPE $$"}},
		{"not executable", []string{notExecutable}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ends []string
			for _, mode := range startModes {
				err := runCommandWith(context.Background(), mode.start, exec.Command(tt.argv[0], tt.argv[1:]...), &bytes.Buffer{}, &bytes.Buffer{}, 1<<20)
				ends = append(ends, howItEnded(err))
			}
			if ends[0] != ends[1] {
				t.Errorf("in its own group it ended %s; supervised, %s", ends[0], ends[1])
			}
		})
	}
}

// howItEnded says how a command ended, from runCommand's error: its exit
// status or signal, or why it could not start.
func howItEnded(err error) string {
	var exit exitStatus
	if !errors.As(err, &exit) {
		return fmt.Sprintf("with error %v", err)
	}
	return fmt.Sprintf("with %v (exit code %d)", exit, exit.ExitCode())
}

// TestRunCommandUnderLoad runs 200 commands at once beside a CPU hog, 20
// times in their own process group and 20 times supervised: every one of
// them must come back with all it printed. Before output was read to its
// end, a loaded machine lost some.
func TestRunCommandUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns 8,000 processes")
	}
	ctx, stop := context.WithCancel(context.Background())
	var hogs []*exec.Cmd
	defer func() {
		stop()
		for _, hog := range hogs {
			hog.Wait()
		}
	}()
	for range 2 {
		hog := exec.CommandContext(ctx, "sh", "-c", "while :; do :; done")
		if err := hog.Start(); err != nil {
			t.Fatal(err)
		}
		hogs = append(hogs, hog)
	}
	const concurrency = 200
	for _, mode := range startModes {
		for round := range 20 {
			var wg sync.WaitGroup
			failures := make(chan string, concurrency)
			for i := range concurrency {
				wg.Go(func() {
					want := fmt.Sprintf(`{"round":%d,"item":%d}`, round, i)
					var out bytes.Buffer
					err := runCommandWith(ctx, mode.start, exec.Command("printf", "%s", want), &out, &bytes.Buffer{}, 1<<20)
					if err != nil || out.String() != want {
						failures <- fmt.Sprintf("item %d: %q, %v", i, out.String(), err)
					}
				})
			}
			wg.Wait()
			close(failures)
			for f := range failures {
				t.Errorf("%s, round %d: %s", mode.name, round, f)
			}
		}
	}
}

// BenchmarkRunCommand is the cost of running a command that prints a
// line, in its own process group and under the supervisor (the test
// binary: the stepwise binary in production).
func BenchmarkRunCommand(b *testing.B) {
	for _, mode := range startModes {
		b.Run(mode.name, func(b *testing.B) {
			for b.Loop() {
				var out bytes.Buffer
				if err := runCommandWith(b.Context(), mode.start, exec.Command("echo", "hello"), &out, &bytes.Buffer{}, 1<<20); err != nil || out.String() != "hello\n" {
					b.Fatalf("%q, %v", out.String(), err)
				}
			}
		})
	}
}
