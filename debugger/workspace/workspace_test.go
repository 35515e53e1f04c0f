package workspace_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/debugger/workspace"
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/record"
)

const config = `
[providers.script]
type = "script"
file = ".stepwise/replies.yaml"

[models]
default = { provider = "script", model = "scripted" }

[storage]
backend = %q
`

const greet = `identifier: greet
name: Greet
description: Says hello through a model.
steps:
  - id: E1
    tool_name: builtin__infer
    input: { instruction: "Say hello" }
`

const broken = `identifier: broken
name: Broken
description: Reads a step that does not exist.
steps:
  - id: E1
    tool_name: builtin__reshape
    input: { shape: { n: "{{E9.n}}" } }
`

// open writes a project with the greet and broken plans into a fresh
// directory and opens its workspace, with the machine's own configuration
// kept out.
func open(t *testing.T, backend string) (*workspace.Workspace, string) {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		".stepwise/config.toml":       strings.Replace(config, "%q", `"`+backend+`"`, 1),
		".stepwise/replies.yaml":      "replies:\n  - reply: { text: hello }\n  - reply: { text: hello again }\n",
		".stepwise/plans/greet.yaml":  greet,
		".stepwise/plans/broken.yaml": broken,
		".stepwise/breakpoints/.keep": "",
	}
	for name, text := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return reopen(t, dir), dir
}

// reopen opens the workspace of the project open wrote into dir.
func reopen(t *testing.T, dir string) *workspace.Workspace {
	t.Helper()
	env := map[string]string{"HOME": filepath.Join(dir, "home"), "XDG_CONFIG_HOME": filepath.Join(dir, "xdg-config"), "XDG_DATA_HOME": filepath.Join(dir, "xdg-data")}
	ws, err := workspace.Open(dir, workspace.Options{LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	ws.ShowPathsFrom(dir)
	return ws
}

func load(t *testing.T, ws *workspace.Workspace, dir, name string) workspace.Document {
	t.Helper()
	d, err := ws.Load(filepath.Join(dir, ".stepwise", "plans", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestLoad checks that a plan is found on the plan paths, and loaded with
// both layers of validation, its problems placed in the file as shown.
func TestLoad(t *testing.T) {
	ws, dir := open(t, "memory")
	if got := len(ws.PlanFiles()); got != 2 {
		t.Errorf("%d plan files", got)
	}
	file, err := ws.Locate("greet")
	if err != nil || filepath.Base(file) != "greet.yaml" {
		t.Errorf("locate greet: %s %v", file, err)
	}
	if _, err := ws.Locate("nope"); err == nil || !strings.Contains(err.Error(), "no plan with that identifier") {
		t.Errorf("locate nope: %v", err)
	}
	d := load(t, ws, dir, "broken")
	if d.Report.OK() || d.Name() != "broken" || d.File != filepath.Join(".stepwise", "plans", "broken.yaml") {
		t.Fatalf("broken loaded as %s (%s) ok=%v", d.Name(), d.File, d.Report.OK())
	}
	if p := d.Report.Problems[0]; p.Pos.File != d.File || !strings.Contains(p.Message, "E9") {
		t.Errorf("problem %s", p)
	}
	if _, err := ws.Load(filepath.Join(dir, "gone.yaml")); err == nil {
		t.Error("a file that is not there loaded")
	}
}

// TestRunRecorded runs a plan twice, each with models of its own (the
// script answers each from its first reply, so the runs agree), and reads
// both back from the store: listed, opened, their events decoded, and
// compared.
func TestRunRecorded(t *testing.T) {
	ws, dir := open(t, "sqlite")
	d := load(t, ws, dir, "greet")
	ctx := context.Background()
	var ids []string
	for range 2 {
		res, err := ws.Run(ctx, d.Plan, nil, workspace.RunOptions{})
		if err != nil || res.Status != engine.StatusOK {
			t.Fatalf("run: %v %+v", err, res)
		}
		ids = append(ids, res.RunID)
	}
	list, err := ws.Runs(ctx, record.RunFilter{Plan: "greet", Project: ws.Project().Root})
	if err != nil || len(list) != 2 || list[0].ID != ids[1] {
		t.Fatalf("runs %+v %v", list, err)
	}
	detail, events, err := ws.RunEvents(ctx, ids[0][:8])
	if err != nil || detail.ID != ids[0] || len(events) == 0 || events[0].Kind != engine.EventRunStart {
		t.Fatalf("run events: %v %d", err, len(events))
	}
	a, b, steps, err := ws.Diff(ctx, ids[0], ids[1])
	if err != nil || a.ID != ids[0] || b.ID != ids[1] || len(steps) != 1 || !steps[0].Same() {
		t.Errorf("diff %+v %v", steps, err)
	}
	var nf *record.NotFoundError
	if _, err := ws.OpenRun(ctx, "zzzz"); !errors.As(err, &nf) {
		t.Errorf("an unknown run: %v", err)
	}

	// A replay answers from the record: the configured replies file is
	// not read, so one broken since does not stop it.
	if err := os.WriteFile(filepath.Join(dir, ".stepwise", "replies.yaml"), []byte("replies: ["), 0o644); err != nil {
		t.Fatal(err)
	}
	later := reopen(t, dir)
	rec, err := later.Recording(ctx, ids[0])
	if err != nil {
		t.Fatal(err)
	}
	if res, err := later.Replay(ctx, rec, d.Plan, workspace.RunOptions{}); err != nil || !res.Identical() {
		t.Errorf("the replay: %v %+v", err, res)
	}
	if _, err := later.Run(ctx, d.Plan, nil, workspace.RunOptions{}); err == nil {
		t.Error("a run read the broken replies file without a word")
	}
}

// TestNothingRecorded checks that a workspace whose runs are kept in memory
// says so when asked for recorded runs.
func TestNothingRecorded(t *testing.T) {
	ws, _ := open(t, "memory")
	var none *workspace.NoStoreError
	if _, err := ws.Runs(context.Background(), record.RunFilter{}); !errors.As(err, &none) || !strings.Contains(none.Reason, "memory") {
		t.Errorf("runs: %v", err)
	}
	if _, err := ws.OpenRun(context.Background(), "abc"); !errors.As(err, &none) || !strings.HasPrefix(err.Error(), "no run 'abc'") {
		t.Errorf("open run: %v", err)
	}
}

// TestStoreThatCannotOpen makes the data directory a file: the first run
// says why it cannot be recorded, and the runs after it go unrecorded.
func TestStoreThatCannotOpen(t *testing.T) {
	ws, dir := open(t, "sqlite")
	data := filepath.Join(dir, "xdg-data", "stepwise")
	if err := os.MkdirAll(filepath.Dir(data), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(data, []byte("not a directory"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := load(t, ws, dir, "greet")
	if err := ws.OpenStore(nil); err == nil {
		t.Fatal("the store opened in a file")
	}
	if res, err := ws.Run(context.Background(), d.Plan, nil, workspace.RunOptions{}); err != nil || res.Status != engine.StatusOK {
		t.Errorf("the run after the store failed: %v", err)
	}
}

// TestRunOptionsAreTheRuns checks that what one run's options say stays
// that run's: a replies file that is not there refuses its run, and the
// next run, without it, answers from the configured script.
func TestRunOptionsAreTheRuns(t *testing.T) {
	ws, dir := open(t, "memory")
	d := load(t, ws, dir, "greet")
	ctx := context.Background()
	if res, err := ws.Run(ctx, d.Plan, nil, workspace.RunOptions{Script: filepath.Join(dir, "missing.yaml"), MaxCost: 0.01}); err == nil || res != nil {
		t.Errorf("a run with a replies file that is not there started: %v", err)
	}
	session, err := ws.Debug(d.Plan, nil, workspace.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st := session.Start(ctx, nil); !st.Finished || st.Status != engine.StatusOK || st.Result.StepsExecuted != 1 {
		t.Fatalf("the next run: %+v", st)
	}
}

// TestBreakpointsPerPlan checks that a plan has one table, kept in the
// project, which a second workspace on the same project reads.
func TestBreakpointsPerPlan(t *testing.T) {
	ws, dir := open(t, "memory")
	d := load(t, ws, dir, "greet")
	table, err := ws.Breakpoints(d)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := ws.Breakpoints(d); again != table {
		t.Error("the plan has two tables")
	}
	a, err := ws.ExecBreakpoints(d.Plan, table, debugger.Instruction{Verb: debugger.VerbBreak, Pattern: "E7"})
	if err != nil || len(a.Warnings) != 1 || !strings.Contains(a.Warnings[0], "no path of the plan matches E7") {
		t.Errorf("break E7: %+v %v", a, err)
	}
	kept, err := os.ReadFile(debugger.BreakpointFile(filepath.Join(dir, ".stepwise"), "greet"))
	if err != nil || !strings.Contains(string(kept), `"pattern": "E7"`) {
		t.Errorf("kept: %s %v", kept, err)
	}
}
