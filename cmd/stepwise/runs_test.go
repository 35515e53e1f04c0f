package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stepwise-dev/stepwise/engine/store"
	"github.com/stepwise-dev/stepwise/engine/store/storetest"
)

// The ids of the example runs recordRuns writes.
const (
	finishedRun   = "3f9a2c1d4e5b7a80"
	exitedRun     = "3f9a2c77e0b14c21"
	failedRun     = "8b1e40c9d2a7f3e5"
	unfinishedRun = "c0ffee12ab34cd56"
)

// recordRuns records one run of each ending into the run store of the
// project in the working directory (which isolate has set up), through
// the Recorder a run would use, and returns the store's path. Times are
// shown in UTC so that the golden files hold on any machine.
func recordRuns(t *testing.T) string {
	t.Helper()
	local := time.Local
	time.Local = time.UTC
	t.Cleanup(func() { time.Local = local })
	proj, err := openProject("", io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	path := store.DefaultPath(proj.cfg.Settings.DataDir)
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	start := time.Date(2025, 3, 1, 10, 15, 0, 0, time.UTC)
	for i, r := range []struct {
		id   string
		emit func(*storetest.Run)
	}{{finishedRun, storetest.Finished}, {exitedRun, storetest.Exited}, {failedRun, storetest.Failed}, {unfinishedRun, storetest.Unfinished}} {
		rec := st.Recorder()
		r.emit(&storetest.Run{ID: r.id, Sink: rec, Start: start.Add(time.Duration(i) * time.Hour), Tick: 40 * time.Millisecond})
		if err := rec.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// placeholders replaces the test's temporary directories in output.
func placeholders(s string) string {
	return strings.ReplaceAll(s, os.Getenv("XDG_DATA_HOME"), "$XDG_DATA_HOME")
}

func TestRuns(t *testing.T) {
	tests := []struct {
		name     string
		record   bool
		env      map[string]string
		args     []string
		wantCode int
	}{
		{"runs", true, nil, []string{"runs"}, 0},
		{"runs json", true, nil, []string{"runs", "--json"}, 0},
		{"runs of a plan, limited", true, nil, []string{"runs", "--plan", "triage", "--limit", "2", "--json"}, 0},
		{"runs of a plan never run", true, nil, []string{"runs", "--plan", "nothing"}, 0},
		{"runs before any run", false, nil, []string{"runs", "--json"}, 0},
		{"runs before any run, text", false, nil, []string{"runs"}, 0},
		{"runs with the memory backend", false, map[string]string{"STEPWISE_STORAGE": "memory"}, []string{"runs", "--json"}, 0},
		{"runs with a negative limit", false, nil, []string{"runs", "--limit", "-1"}, 2},
		{"inspect a finished run", true, nil, []string{"inspect", finishedRun[:12]}, 0},
		{"inspect a finished run json", true, nil, []string{"inspect", "--json", finishedRun}, 0},
		{"inspect an exited run", true, nil, []string{"inspect", exitedRun[:8]}, 0},
		{"inspect a failed run", true, nil, []string{"inspect", failedRun[:4]}, 0},
		{"inspect a failed run json", true, nil, []string{"inspect", "--json", failedRun[:4]}, 0},
		{"inspect an interrupted run", true, nil, []string{"inspect", unfinishedRun}, 0},
		{"inspect an interrupted run json", true, nil, []string{"inspect", "--json", unfinishedRun}, 0},
		{"inspect an unknown run", true, nil, []string{"inspect", "deadbeef"}, 1},
		{"inspect an ambiguous prefix", true, nil, []string{"inspect", "3f9a2c"}, 1},
		{"inspect before any run", false, nil, []string{"inspect", "3f9a2c"}, 1},
		{"inspect without a run", false, nil, []string{"inspect"}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			isolate(t, "testdata/runsproject")
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			if tc.record {
				recordRuns(t)
			}
			stdout, stderr, code := runCLI(t, tc.args...)
			if code != tc.wantCode {
				t.Errorf("exit code %d, want %d\nstderr:\n%s", code, tc.wantCode, stderr)
			}
			name := strings.ReplaceAll(tc.name, " ", "_")
			golden(t, name+".stdout", placeholders(stdout))
			golden(t, name+".stderr", placeholders(stderr))
		})
	}
}

// TestRunsReadsWhileRecording lists a run while its Recorder is still
// open: it is running, not interrupted, and its steps so far are there.
func TestRunsReadsWhileRecording(t *testing.T) {
	isolate(t, "testdata/runsproject")
	path := recordRuns(t)
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rec := st.Recorder()
	defer rec.Close()
	r := &storetest.Run{ID: "feedface00000001", Sink: rec, Start: time.Now()}
	r.Begin("triage", ".stepwise/plans/triage.yaml", map[string]any{"topic": "now"})
	r.Step("E1", "tracker__list_issues", map[string]any{"limit": 1}, map[string]any{"issues": []any{}}, 3)
	deadline := time.Now().Add(10 * time.Second)
	for {
		stdout, stderr, code := runCLI(t, "inspect", "feedface")
		if code == 0 && strings.Contains(stdout, "phase    running: ") && strings.Contains(stdout, "steps (1)") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
		}
		time.Sleep(10 * time.Millisecond)
	}
	stdout, _, _ := runCLI(t, "runs")
	if first := strings.Fields(strings.Split(stdout, "\n")[1]); strings.Join(first[:3], " ") != "feedface0000 triage running" {
		t.Errorf("the newest run first, running:\n%s", stdout)
	}
}

func TestRunStoreThatIsNotOne(t *testing.T) {
	isolate(t, "testdata/runsproject")
	proj, err := openProject("", io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	path := store.DefaultPath(proj.cfg.Settings.DataDir)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Repeat("notes, not a database\n", 50)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runCLI(t, "runs")
	if code != 1 || placeholders(stderr) != "stepwise: $XDG_DATA_HOME/stepwise/stepwise.db is not a stepwise run store: the file is not an SQLite database\n" {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}
