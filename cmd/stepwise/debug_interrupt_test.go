package main

import (
	"encoding/json"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
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

// runGoing waits until stepwise debug --continue says its run goes, once
// it has claimed ctrl-c (a ctrl-c before the claim ends the command at
// once, which a fixed pause could not rule out on a loaded machine), and
// returns the pid of the stepwise under the pane's shell.
func runGoing(t *testing.T, s *tmuxSession) int {
	t.Helper()
	s.waitFor("running to the first breakpoint, error or ask (ctrl-c pauses)")
	shell := strings.TrimSpace(s.run("display-message", "-p", "-t", "0", "#{pane_pid}"))
	out, err := exec.Command("pgrep", "-P", shell).Output()
	pid, _ := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil || pid == 0 {
		t.Fatalf("no stepwise under the shell %s: %v %q", shell, err, out)
	}
	return pid
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
