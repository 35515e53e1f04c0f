package main

import (
	"encoding/json"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// lastRunStatus is the status of the newest run the project recorded.
func lastRunStatus(t *testing.T) string {
	t.Helper()
	out, errOut, code := runCLI(t, "runs", "--json")
	var listing struct{ Runs []struct{ Status string } }
	if err := json.Unmarshal([]byte(out), &listing); err != nil || code != 0 || len(listing.Runs) == 0 {
		t.Fatalf("runs --json: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	return listing.Runs[0].Status
}

// runGoing waits until the stepwise under the pane's shell has a process
// of its own (a tool's supervisor, an MCP server): its run is going, and
// it has claimed ctrl-c, which a fixed pause could not tell on a loaded
// machine (a ctrl-c before the claim ends the command at once). It
// returns stepwise's pid.
func runGoing(t *testing.T, s *tmuxSession) int {
	t.Helper()
	shell := strings.TrimSpace(s.run("display-message", "-p", "-t", "0", "#{pane_pid}"))
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, _ := exec.Command("pgrep", "-P", shell).Output()
		if pid, _ := strconv.Atoi(strings.TrimSpace(string(out))); pid != 0 {
			if err := exec.Command("pgrep", "-P", strconv.Itoa(pid)).Run(); err == nil {
				return pid
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("stepwise under the shell %s started no tool in 30s:\n%s", shell, s.screen())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestDebugCtrlCPausesAGoingRun drives stepwise debug --continue on a
// terminal: ctrl-c while the run goes holds it at its next stop, as pause
// does, where threads answers; ctrl-c at that stop ends the process with
// 130, the run recorded aborted.
func TestDebugCtrlCPausesAGoingRun(t *testing.T) {
	demoProject(t)
	s := startStepwise(t, 100, 30, nil, "debug", "triage_queue", `{"on_call":"Priya"}`, "--continue")
	runGoing(t, s)
	s.keys("C-c")
	s.waitFor("pausing at the next stop (ctrl-c again aborts the run)")
	screen := s.waitFor(") by pause")
	if strings.Contains(screen, "context canceled") || strings.Contains(screen, "by error") {
		t.Errorf("ctrl-c made a stop of the cancellation:\n%s", screen)
	}
	s.typed("threads")
	s.keys("Enter")
	if screen := s.waitFor("* "); !strings.Contains(screen, "main  ") {
		t.Errorf("threads at the paused stop:\n%s", screen)
	}
	s.keys("C-c")
	screen = s.waitFor("exit ")
	if !strings.Contains(screen, "run finished: aborted") || !strings.Contains(screen, "exit 130") {
		t.Errorf("ctrl-c at the stop did not end the run with 130:\n%s", screen)
	}
	if got := lastRunStatus(t); got != "aborted" {
		t.Errorf("the run is recorded %s", got)
	}
}

// TestDebugEndsOnSignals: a second ctrl-c before the paused run comes to
// its stop, SIGTERM and SIGHUP each end stepwise debug while its run goes,
// with 130, the run recorded aborted and no stop made of the
// cancellation.
func TestDebugEndsOnSignals(t *testing.T) {
	for _, tc := range []struct {
		name   string
		signal syscall.Signal // 0: ctrl-c twice
	}{{"ctrl-c twice", 0}, {"SIGTERM", syscall.SIGTERM}, {"SIGHUP", syscall.SIGHUP}} {
		t.Run(tc.name, func(t *testing.T) {
			debugProject(t, map[string]string{"plans/napping.yaml": napPlan})
			s := startStepwise(t, 100, 30, nil, "debug", "napping", "--continue")
			// slow naps two seconds: the signals come while it naps.
			pid := runGoing(t, s)
			if tc.signal == 0 {
				s.keys("C-c")
				s.waitFor("pausing at the next stop")
				s.keys("C-c")
			} else {
				if err := syscall.Kill(pid, tc.signal); err != nil {
					t.Fatal(err)
				}
			}
			screen := s.waitFor("exit ")
			if !strings.Contains(screen, "run finished: aborted") || !strings.Contains(screen, "exit 130") || strings.Contains(screen, "stopped at") {
				t.Errorf("the run did not end aborted with 130:\n%s", screen)
			}
			if got := lastRunStatus(t); got != "aborted" {
				t.Errorf("the run is recorded %s", got)
			}
		})
	}
}
