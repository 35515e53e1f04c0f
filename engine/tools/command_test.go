//go:build unix

package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

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
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := &slowWriter{}
			if tt.slow {
				out.delay = 3 * pipeGrace / 2
			}
			var stderr bytes.Buffer
			err := runCommand(exec.CommandContext(context.Background(), "sh", "-c", tt.script), out, &stderr, 1<<20)
			var exit *exec.ExitError
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

// TestRunCommandKillsTheGroup checks that what a command left running in
// the background, its output elsewhere, does not outlive the call.
func TestRunCommandKillsTheGroup(t *testing.T) {
	var out bytes.Buffer
	if err := runCommand(exec.CommandContext(context.Background(), "sh", "-c", "sleep 30 >/dev/null 2>&1 & echo $!"), &out, &bytes.Buffer{}, 1<<20); err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(out.String()))
	if err != nil {
		t.Fatalf("stdout %q: %v", out.String(), err)
	}
	if !waitGone(pid, 5*time.Second) {
		t.Errorf("the background sleep %d outlived the call", pid)
	}
}

// TestRunCommandUnderLoad runs 200 commands at once beside a CPU hog, 20
// times: every one of them must come back with all it printed. Before
// output was read to its end, a loaded machine lost some.
func TestRunCommandUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns 4,000 processes")
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
	const rounds, concurrency = 20, 200
	for round := range rounds {
		var wg sync.WaitGroup
		failures := make(chan string, concurrency)
		for i := range concurrency {
			wg.Go(func() {
				want := fmt.Sprintf(`{"round":%d,"item":%d}`, round, i)
				var out bytes.Buffer
				err := runCommand(exec.CommandContext(ctx, "printf", "%s", want), &out, &bytes.Buffer{}, 1<<20)
				if err != nil || out.String() != want {
					failures <- fmt.Sprintf("item %d: %q, %v", i, out.String(), err)
				}
			})
		}
		wg.Wait()
		close(failures)
		for f := range failures {
			t.Errorf("round %d: %s", round, f)
		}
	}
}
