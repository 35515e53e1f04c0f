package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/store"
	"github.com/stepwise-dev/stepwise/engine/store/storetest"
	"github.com/stepwise-dev/stepwise/tui/format"
)

// The ids of the example runs recordRuns writes: four of the runs
// project, one of another project that shares a prefix with two of them,
// and one recorded before the store kept projects.
const (
	finishedRun   = "3f9a2c1d4e5b7a80"
	exitedRun     = "3f9a2c77e0b14c21"
	failedRun     = "8b1e40c9d2a7f3e5"
	unfinishedRun = "c0ffee12ab34cd56"
	otherRun      = "3f9a2cbb5d6e7f90"
	legacyRun     = "0a1b2c3d4e5f6071"
)

// testdataDir holds the test projects; runsProject is the root of the one
// the runs and inspect tests run in.
var (
	testdataDir, _ = filepath.Abs("testdata")
	runsProject    = filepath.Join(testdataDir, "runsproject")
)

// otherProject is the root of the project of otherRun, under $HOME.
func otherProject() string { return filepath.Join(os.Getenv("HOME"), "src", "other") }

// dataStore is the path of the run store in the data directory isolate
// has set up.
func dataStore() string {
	return store.DefaultPath(filepath.Join(os.Getenv("XDG_DATA_HOME"), "stepwise"))
}

// recordRuns records the example runs into the run store of the data
// directory (which isolate has set up), through the Recorder a run would
// use, and returns the store's path. Times are shown in UTC so that the
// golden files hold on any machine.
func recordRuns(t *testing.T) string {
	t.Helper()
	local := time.Local
	time.Local = time.UTC
	t.Cleanup(func() { time.Local = local })
	path := dataStore()
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	start := time.Date(2025, 3, 1, 10, 15, 0, 0, time.UTC)
	for _, r := range []struct {
		id      string
		project string
		start   time.Time
		emit    func(*storetest.Run)
	}{
		{legacyRun, "", start.Add(-25 * time.Hour), storetest.Exited},
		{finishedRun, runsProject, start, storetest.Finished},
		{otherRun, otherProject(), start.Add(30 * time.Minute), storetest.Finished},
		{exitedRun, runsProject, start.Add(time.Hour), storetest.Exited},
		{failedRun, runsProject, start.Add(2 * time.Hour), storetest.Failed},
		{unfinishedRun, runsProject, start.Add(3 * time.Hour), storetest.Unfinished},
	} {
		rec := st.Recorder()
		r.emit(&storetest.Run{ID: r.id, Project: r.project, Sink: rec, Start: r.start, Tick: 40 * time.Millisecond})
		if err := rec.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// placeholders replaces the test's temporary directories and the test
// projects' place in output.
func placeholders(s string) string {
	return strings.NewReplacer(os.Getenv("XDG_DATA_HOME"), "$XDG_DATA_HOME", os.Getenv("HOME"), "$HOME",
		testdataDir, "$TESTDATA").Replace(s)
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
		{"runs of every project", true, nil, []string{"runs", "--all"}, 0},
		{"runs of every project json", true, nil, []string{"runs", "--all", "--json"}, 0},
		{"runs of a plan, limited", true, nil, []string{"runs", "--plan", "triage", "--limit", "2", "--json"}, 0},
		{"runs of a plan in every project", true, nil, []string{"runs", "--all", "--plan", "triage"}, 0},
		{"runs of a plan never run", true, nil, []string{"runs", "--plan", "nothing"}, 0},
		{"runs of a plan never run in any project", true, nil, []string{"runs", "--all", "--plan", "nothing"}, 0},
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
		{"inspect a run of another project", true, nil, []string{"inspect", otherRun[:8]}, 0},
		{"inspect a run of another project json", true, nil, []string{"inspect", "--json", otherRun}, 0},
		{"inspect a run recorded without a project", true, nil, []string{"inspect", legacyRun[:4]}, 0},
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
	r := &storetest.Run{ID: "feedface00000001", Project: runsProject, Sink: rec, Start: time.Now()}
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
	path := dataStore()
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

// TestRunsOfEachProject lists the shared run store from several projects:
// each lists its own runs, --all and a directory outside any project list
// every project's, and inspect finds a run of any project.
func TestRunsOfEachProject(t *testing.T) {
	isolate(t, "testdata/runsproject")
	path := recordRuns(t)
	projectB := filepath.Join(t.TempDir(), "b")
	for _, d := range []string{".stepwise", "sub"} {
		if err := os.MkdirAll(filepath.Join(projectB, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	const runB = "b0b0b0b0b0b0b0b0"
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	rec := st.Recorder()
	storetest.Exited(&storetest.Run{ID: runB, Project: projectB, Sink: rec, Start: time.Date(2025, 3, 2, 9, 0, 0, 0, time.UTC)})
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	st.Close()

	projectA := []string{unfinishedRun, failedRun, exitedRun, finishedRun}
	every := []string{runB, unfinishedRun, failedRun, exitedRun, otherRun, finishedRun, legacyRun}
	tests := []struct {
		name        string
		dir         string
		args        []string
		want        []string // the ids listed, newest first
		withProject bool
		note        string
	}{
		{"project A lists its own runs", runsProject, []string{"runs"}, projectA, false, ""},
		{"project B lists its own run", projectB, []string{"runs"}, []string{runB}, false, ""},
		{"a directory inside project B lists B's", filepath.Join(projectB, "sub"), []string{"runs"}, []string{runB}, false, ""},
		{"project B with --all lists every project's", projectB, []string{"runs", "--all"}, every, true, ""},
		{"project A with --all lists every project's", runsProject, []string{"runs", "--all"}, every, true, ""},
		{"outside a project, every project's", filepath.Join(testdataDir, "outside"), []string{"runs"}, every, true, ""},
		{"a plan project B did not run", projectB, []string{"runs", "--plan", "summarize_all"}, nil, false,
			"no runs of plan 'summarize_all' are recorded in this project; --all lists those of every project\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Chdir(tc.dir)
			for _, asJSON := range []bool{false, true} {
				args := tc.args
				if asJSON {
					args = append(args[:len(args):len(args)], "--json")
				}
				stdout, stderr, code := runCLI(t, args...)
				if code != 0 {
					t.Fatalf("%v: exit %d\n%s", args, code, stderr)
				}
				var got []string
				hasProject := false
				if asJSON {
					var env struct {
						Runs []map[string]any `json:"runs"`
						Note string           `json:"note"`
					}
					if err := json.Unmarshal([]byte(stdout), &env); err != nil {
						t.Fatal(err)
					}
					for _, r := range env.Runs {
						got = append(got, r["id"].(string))
						p, ok := r["project"]
						hasProject = hasProject || ok
						if ok && r["id"] == runB && p != projectB {
							t.Errorf("%v: project %v of %s, want %s", args, p, runB, projectB)
						}
					}
					if env.Note+"\n" != tc.note && (env.Note != "" || tc.note != "") {
						t.Errorf("%v: note %q, want %q", args, env.Note, tc.note)
					}
				} else {
					lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
					if stdout != "" {
						hasProject = strings.HasSuffix(strings.TrimSpace(lines[0]), "PROJECT")
						for _, l := range lines[1:] {
							got = append(got, strings.Fields(l)[0])
						}
					}
					if stderr != tc.note {
						t.Errorf("%v: stderr %q, want %q", args, stderr, tc.note)
					}
				}
				var want []string
				for _, id := range tc.want {
					if asJSON {
						want = append(want, id)
					} else {
						want = append(want, format.ShortID(id))
					}
				}
				if strings.Join(got, " ") != strings.Join(want, " ") {
					t.Errorf("%v lists\n%s\nwant\n%s", args, strings.Join(got, " "), strings.Join(want, " "))
				}
				if hasProject != tc.withProject {
					t.Errorf("%v: with the project %v, want %v\n%s", args, hasProject, tc.withProject, stdout)
				}
			}
		})
	}

	// A run id is global: project B inspects a run of project A, and an
	// ambiguous prefix names the runs of both projects.
	t.Chdir(projectB)
	stdout, stderr, code := runCLI(t, "inspect", finishedRun[:8])
	stdout = placeholders(stdout)
	if code != 0 || !strings.Contains(stdout, "project  $TESTDATA/runsproject\n") ||
		!strings.Contains(stdout, "plan     triage ($TESTDATA/runsproject/.stepwise/plans/triage.yaml)\n") {
		t.Errorf("inspect a run of project A from project B: exit %d\n%s%s", code, stdout, stderr)
	}
	_, stderr, code = runCLI(t, "inspect", "3f9a2c")
	if code != 1 || !strings.Contains(stderr, otherRun) || !strings.Contains(stderr, finishedRun) {
		t.Errorf("an ambiguous prefix across projects: exit %d, %s", code, stderr)
	}
}

// TestRunsInspectTimelineWidthZero: --width 0 is the default spelled out,
// the terminal's width or 100 columns off one, not a usage error.
func TestRunsInspectTimelineWidthZero(t *testing.T) {
	id := retimedRun(t)
	byDefault, _, _ := runCLI(t, "inspect", id, "--timeline")
	out, errOut, code := runCLI(t, "inspect", id, "--timeline", "--width", "0")
	if code != 0 || out != byDefault {
		t.Errorf("--width 0: exit %d, stderr %q; the waterfall differs from the default's:\n%s\n%s", code, errOut, out, byDefault)
	}
}

// TestRunsHelpMarks: every mark and note a runs line can carry is told in
// runs --help.
func TestRunsHelpMarks(t *testing.T) {
	isolate(t, t.TempDir())
	out, _, code := runCLI(t, "runs", "--help")
	// The help is wrapped to the terminal's width: its words are read
	// whatever the line breaks.
	words := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{format.MarkDecided + " after it says a person decided", "interrupted", "MADE says", "replay", "fork", "held) says"} {
		if code != 0 || !strings.Contains(words, want) {
			t.Errorf("runs --help does not explain %q:\n%s", want, out)
		}
	}
}

// TestInspectListsCallsInPlanOrder runs the demo, whose assess map runs
// two items at once, and checks that inspect lists its model calls in plan
// order, as it lists steps and tool calls (item by item, however the items
// interleaved), and its tool calls in aligned columns.
func TestInspectListsCallsInPlanOrder(t *testing.T) {
	demoProject(t)
	out, errOut, code := runCLI(t, "run", "triage_queue", `{"on_call": "Priya"}`, "--json")
	var env struct {
		RunID string `json:"run_id"`
	}
	if err := json.Unmarshal([]byte(out), &env); code != 0 || err != nil {
		t.Fatalf("run: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	out, errOut, code = runCLI(t, "inspect", env.RunID)
	if code != 0 {
		t.Fatalf("inspect: exit %d\n%s", code, errOut)
	}
	section := func(title string) []string {
		_, rest, ok := strings.Cut(out, "\n"+title+" (")
		if !ok {
			t.Fatalf("inspect has no %s:\n%s", title, out)
		}
		rest, _, _ = strings.Cut(rest, "\n\n")
		var rows []string
		for _, l := range strings.Split(rest, "\n")[1:] {
			if !strings.HasPrefix(l, "      ") {
				rows = append(rows, l)
			}
		}
		return rows
	}
	var models []string
	for _, row := range section("model calls") {
		models = append(models, strings.Fields(row)[0])
	}
	want := []string{
		"assess/do.0/verdict/agent.1", "assess/do.0/verdict/agent.2",
		"assess/do.1/verdict/agent.1", "assess/do.1/verdict/agent.2",
		"assess/do.2/verdict/agent.1", "assess/do.2/verdict/agent.2", "assess/do.2/verdict/agent.2/repair",
		"assess/do.3/verdict/agent.1", "assess/do.3/verdict/agent.2",
		"solver",
	}
	if strings.Join(models, " ") != strings.Join(want, " ") {
		t.Errorf("model calls\n got %v\nwant %v", models, want)
	}
	rows := section("tool calls")
	column := -1
	for _, row := range rows {
		at := strings.Index(row, "  ok  ")
		if column == -1 {
			column = at
		}
		if at < 0 || at != column {
			t.Errorf("the tool calls' status is not in one column:\n%s", strings.Join(rows, "\n"))
			break
		}
	}
}

// recordOldRuns records finished runs of project (its root; "" for none)
// into the data directory's store, the first started ago, each a minute
// after the one before.
func recordOldRuns(t *testing.T, project string, ago time.Duration, ids ...string) {
	t.Helper()
	recordInStore(t, func(rec engine.Sink) {
		for i, id := range ids {
			storetest.Finished(&storetest.Run{ID: id, Sink: rec, Project: project, Start: time.Now().Add(-ago + time.Duration(i)*time.Minute)})
		}
	})
}

// TestRunsPruneOutsideAProject: outside a project there is no project
// whose runs to prune, and runs prune deletes none of another's: it is
// refused, saying that --all prunes those of every project, which it
// does.
func TestRunsPruneOutsideAProject(t *testing.T) {
	wd := runProject(t)
	recordOldRuns(t, wd, 72*time.Hour, "old-here")
	t.Chdir(t.TempDir())
	_, errOut, code := runCLI(t, "runs", "prune", "--older-than", "2d")
	if want := "stepwise: runs prune deletes this project's runs, and the working directory is in no project; --all prunes the runs of every project\n"; code != exitUsage || errOut != want {
		t.Errorf("runs prune outside a project: exit %d, want %d; stderr:\n%swant:\n%s", code, exitUsage, errOut, want)
	}
	if out, _, _ := runCLI(t, "runs"); !strings.Contains(out, "old-here") {
		t.Errorf("runs prune outside a project deleted a run of a project; runs:\n%s", out)
	}
	if _, errOut, code := runCLI(t, "runs", "prune", "--all", "--older-than", "2d"); code != 0 || !strings.HasPrefix(errOut, "deleted 1 run older than 2d (") {
		t.Errorf("runs prune --all outside a project: exit %d: %s", code, errOut)
	}
}

// TestRunsPruneAllSaysOtherProjects: runs prune --all says how many of
// the runs it deleted were of other projects, as [storage] keep_days
// does.
func TestRunsPruneAllSaysOtherProjects(t *testing.T) {
	wd := runProject(t)
	recordOldRuns(t, wd, 72*time.Hour, "old-here")
	recordOldRuns(t, filepath.Join(t.TempDir(), "elsewhere"), 72*time.Hour, "old-there")
	recordOldRuns(t, "", 72*time.Hour, "old-nowhere")
	if _, errOut, code := runCLI(t, "runs", "prune", "--all", "--older-than", "2d"); code != 0 || !strings.HasPrefix(errOut, "deleted 3 runs older than 2d, 2 of them of other projects (") {
		t.Errorf("runs prune --all: exit %d: %s", code, errOut)
	}
	recordOldRuns(t, wd, 72*time.Hour, "old-here")
	if _, errOut, code := runCLI(t, "runs", "prune", "--all", "--older-than", "2d"); code != 0 || !strings.HasPrefix(errOut, "deleted 1 run older than 2d, all of this project (") {
		t.Errorf("runs prune --all of this project's run alone: exit %d: %s", code, errOut)
	}
}

// TestRunsPruneSaysWhatItLeft: runs prune says how many runs older than
// its age it left, and why: the newest of their project (--keep), or
// still being recorded; when it left none, nothing of it.
func TestRunsPruneSaysWhatItLeft(t *testing.T) {
	wd := runProject(t)
	recordOldRuns(t, wd, 72*time.Hour, "old-1", "old-2", "old-3")
	_, errOut, code := runCLI(t, "runs", "prune", "--older-than", "2d", "--keep", "5")
	if want := "deleted 0 runs older than 2d; kept 3 of them, among the newest 5 of this project (--keep)\n"; code != 0 || errOut != want {
		t.Errorf("runs prune --keep 5: exit %d\n%swant:\n%s", code, errOut, want)
	}
	// A run older still that this process is recording.
	st, err := store.Open(dataStore())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rec := st.Recorder()
	defer rec.Close()
	(&storetest.Run{ID: "recording", Sink: rec, Project: wd, Start: time.Now().Add(-96 * time.Hour)}).Begin("report", ".stepwise/plans/report.yaml", nil)
	rec.Flush()
	_, errOut, code = runCLI(t, "runs", "prune", "--older-than", "2d", "--keep", "2")
	if code != 0 || !strings.HasPrefix(errOut, "deleted 1 run older than 2d (") || !strings.HasSuffix(errOut, "); kept 3 of them: 2 among the newest 2 of this project (--keep), 1 still being recorded\n") {
		t.Errorf("runs prune --keep 2 with a run being recorded: exit %d\n%s", code, errOut)
	}
	_, errOut, code = runCLI(t, "runs", "prune", "--all", "--older-than", "3d12h")
	if want := "deleted 0 runs older than 84h; kept 1 of them, still being recorded\n"; code != 0 || errOut != want {
		t.Errorf("runs prune --all --older-than 3d12h: exit %d\n%swant:\n%s", code, errOut, want)
	}
	if _, errOut, code := runCLI(t, "runs", "prune", "--older-than", "1w"); code != 0 || errOut != "deleted 0 runs older than 7d\n" {
		t.Errorf("runs prune --older-than 1w, older than every run: exit %d\n%s", code, errOut)
	}
}

// TestRunsPruneCompoundAges: --older-than takes days and weeks together
// with Go's units, in any order Go's own take theirs.
func TestRunsPruneCompoundAges(t *testing.T) {
	wd := runProject(t)
	recordOldRuns(t, wd, 25*time.Hour, "day-old")
	recordOldRuns(t, wd, 27*time.Hour, "older")
	recordOldRuns(t, wd, 10*24*time.Hour, "ten-days-old")
	if _, errOut, code := runCLI(t, "runs", "prune", "--older-than", "1w2d"); code != 0 || !strings.HasPrefix(errOut, "deleted 1 run older than 9d (") {
		t.Errorf("runs prune --older-than 1w2d: exit %d: %s", code, errOut)
	}
	if _, errOut, code := runCLI(t, "runs", "prune", "--older-than", "1d2h"); code != 0 || !strings.HasPrefix(errOut, "deleted 1 run older than 26h (") {
		t.Errorf("runs prune --older-than 1d2h: exit %d: %s", code, errOut)
	}
	out, _, _ := runCLI(t, "runs")
	if !strings.Contains(out, "day-old") || strings.Contains(out, "older") {
		t.Errorf("runs left:\n%s", out)
	}
}

// TestRunsJSONOfAFailure: runs, inspect and diff asked for JSON print the
// failure as JSON on stdout when they cannot give their answer (a run that
// is not recorded, a run store that is not one), as they do when the
// project cannot be opened, and say it on stderr, exit 1.
func TestRunsJSONOfAFailure(t *testing.T) {
	check := func(args ...string) {
		t.Helper()
		name := strings.Join(args, " ")
		stdout, stderr, code := runCLI(t, args...)
		var got failureJSON
		dec := json.NewDecoder(strings.NewReader(stdout))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&got); err != nil || got.Error == "" {
			t.Errorf("%s: stdout is not the failure as JSON (%v):\n%s", name, err, stdout)
		}
		if code != exitFailure || stderr != "stepwise: "+got.Error+"\n" {
			t.Errorf("%s: exit %d, stderr:\n%s", name, code, stderr)
		}
	}
	isolate(t, runsProject)
	recordRuns(t)
	check("inspect", "0123", "--json")
	check("diff", "0123", finishedRun, "--json")
	check("diff", finishedRun, "0123", "--json")

	isolate(t, runsProject)
	path := dataStore()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Repeat("notes, not a database\n", 50)), 0o644); err != nil {
		t.Fatal(err)
	}
	check("runs", "--json")
	check("inspect", finishedRun, "--json")
	check("diff", finishedRun, exitedRun, "--json")
}
