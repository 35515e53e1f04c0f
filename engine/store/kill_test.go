//go:build unix

package store_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/store"
	"github.com/stepwise-dev/stepwise/engine/store/storetest"
)

// killChildEnv names the store file TestKilledRecorderChild records into;
// unset, that test is skipped.
const killChildEnv = "STEPWISE_STORE_KILL_CHILD"

const killedSteps = 5

// TestKilledRecorderChild is the process TestKilledRecorder kills: it
// records killedSteps steps and the start of one more, says "ready", and
// waits to be killed.
func TestKilledRecorderChild(t *testing.T) {
	path := os.Getenv(killChildEnv)
	if path == "" {
		t.Skip("run by TestKilledRecorder")
	}
	s, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	r := &storetest.Run{ID: "killed-run", Sink: s.Recorder(), Start: time.Now()}
	r.Begin("triage", "triage.yaml", map[string]any{"topic": "crashes"})
	for i := range killedSteps {
		r.Step(fmt.Sprintf("E%d", i+1), "builtin__reshape", map[string]any{"i": i}, map[string]any{"i": i}, 1)
	}
	r.StepStart("E99", "agent", map[string]any{"task": "never finishes"})
	fmt.Println("ready")
	time.Sleep(time.Minute)
	t.Fatal("not killed")
}

// TestKilledRecorder kills a recording process with SIGKILL in the middle
// of a run: what it committed must open and read, the run show as running
// and interrupted, and the step it was in as running.
func TestKilledRecorder(t *testing.T) {
	path := filepath.Join(t.TempDir(), store.FileName)
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledRecorderChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), killChildEnv+"="+path)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if sc.Text() == "ready" {
				ready <- true
				return
			}
		}
		ready <- false
	}()
	select {
	case ok := <-ready:
		if !ok {
			t.Fatal("the child ended without saying ready")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the child never said ready")
	}

	// Wait, through a connection of our own, for the child's writer to
	// commit what it was given; then kill it without warning.
	reader, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		d, err := reader.Run(context.Background(), "killed-run")
		return err == nil && len(d.Steps) == killedSteps+1
	})
	reader.Close()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait() // reaped: its pid no longer answers

	s, err := store.Open(path)
	if err != nil {
		t.Fatalf("the store after the kill: %v", err)
	}
	defer s.Close()
	d, err := s.Run(context.Background(), "killed")
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != engine.StatusRunning || !d.Interrupted || d.Recorder == "" {
		t.Errorf("status %s, interrupted %v, recorder %q", d.Status, d.Interrupted, d.Recorder)
	}
	if len(d.Steps) != killedSteps+1 {
		t.Fatalf("%d steps, want %d", len(d.Steps), killedSteps+1)
	}
	for _, st := range d.Steps[:killedSteps] {
		if st.Status != "ok" || string(st.Result) == "" {
			t.Errorf("step %s: %s, result %s", st.Path, st.Status, st.Result)
		}
	}
	if last := d.Steps[killedSteps]; last.Path != "E99" || last.Status != "running" || string(last.Input) != `{"task":"never finishes"}` {
		t.Errorf("the step it was in: %+v", last)
	}
	events, err := s.Events(context.Background(), d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 2+2*killedSteps {
		t.Errorf("%d events, want %d", len(events), 2+2*killedSteps)
	}
}
