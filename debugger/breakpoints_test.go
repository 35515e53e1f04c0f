package debugger

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stepwise-dev/stepwise/engine"
)

func specs(t *Breakpoints) []string {
	var out []string
	for _, b := range t.List() {
		s := b.Spec()
		if !b.Enabled {
			s += " (off)"
		}
		out = append(out, strings.Join([]string{string(rune('0' + b.ID)), s}, " "))
	}
	return out
}

func openTable(t *testing.T, file string) *Breakpoints {
	t.Helper()
	tb, err := OpenBreakpoints(file)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// TestBreakpointsKept checks that a table keeps itself on every change and
// that a table opened on the file later holds the same breakpoints.
func TestBreakpointsKept(t *testing.T) {
	file := filepath.Join(t.TempDir(), "breakpoints", "triage.json")
	a := openTable(t, file)
	if _, err := a.Set("E1/do.*/agent.2", []engine.StopKind{engine.StopRound}, nil); err != nil {
		t.Fatal(err)
	}
	cond, _ := ParseCondition("{{item.id}} eq CHK-103")
	b, _ := a.Set("E2", nil, cond)
	a.Enable(b.ID, false)
	// A condition set on the first keeps the order by id.
	a.SetCondition(1, nil)
	a.SetCondition(1, cond)
	a.SetCondition(1, nil)
	want := []string{"1 E1/do.*/agent.2 round", "2 E2 if {{item.id}} eq CHK-103 (off)"}
	if got := specs(openTable(t, file)); !slices.Equal(got, want) {
		t.Errorf("kept %q, want %q", got, want)
	}
	// A condition comparing with null keeps its null: in the file, it is
	// told apart from a condition that lacks its value.
	null, err := ParseCondition("{{E1.owner}} eq null")
	if err != nil {
		t.Fatal(err)
	}
	a.SetCondition(1, null)
	if got := specs(openTable(t, file)); got[0] != "1 E1/do.*/agent.2 round if {{E1.owner}} eq null" {
		t.Errorf("kept %q", got)
	}
	if data, _ := os.ReadFile(file); !strings.Contains(string(data), `"to": null`) {
		t.Errorf("the file keeps no null for eq null:\n%s", data)
	}
	// A file from before hit counts were left out reads the same.
	os.WriteFile(file, []byte(`[{"id": 4, "pattern": "E3", "hits": 9, "enabled": true}]`), 0o644)
	if got := specs(openTable(t, file)); !slices.Equal(got, []string{"4 E3"}) {
		t.Errorf("read %q", got)
	}
}

// TestBreakpointsMerge has two writers of one plan's breakpoints (a
// workbench and a stepwise debug) change them at once: each keeps what the
// other did, and an id both gave is renumbered in the later one.
func TestBreakpointsMerge(t *testing.T) {
	file := filepath.Join(t.TempDir(), "p.json")
	seed := openTable(t, file)
	seed.Set("E0", nil, nil)
	seed.Set("E1", nil, nil)

	workbench, debug := openTable(t, file), openTable(t, file)
	workbench.Set("E2", nil, nil) // id 3
	workbench.Clear(1)
	// id 3 too, taken by then: the answer is the breakpoint as kept.
	if b, _ := debug.Set("E3", nil, nil); b.ID != 4 || b.Pattern != "E3" {
		t.Errorf("the second writer's break answered %d %s, want 4 E3", b.ID, b.Pattern)
	}
	debug.Enable(2, false)

	want := []string{"2 E1 (off)", "3 E2", "4 E3"}
	if got := specs(debug); !slices.Equal(got, want) {
		t.Errorf("the second writer holds %q, want %q", got, want)
	}
	if got := specs(openTable(t, file)); !slices.Equal(got, want) {
		t.Errorf("the file holds %q, want %q", got, want)
	}
	if err := workbench.Refresh(); err != nil {
		t.Fatal(err)
	}
	if got := specs(workbench); !slices.Equal(got, want) {
		t.Errorf("the first writer, refreshed, holds %q, want %q", got, want)
	}
	// Both writers setting the same breakpoint keep one.
	workbench.Set("E9", nil, nil)
	debug.Set("E9", nil, nil)
	if got := specs(openTable(t, file)); strings.Count(strings.Join(got, ","), "E9") != 1 {
		t.Errorf("the file holds %q", got)
	}
}

// TestBreakpointsTransient: an editor's breakpoints are held by the table
// and never reach its file, whatever the table keeps meanwhile; one whose
// id another writer gives a kept breakpoint is numbered anew, and one the
// other keeps too is the kept one.
func TestBreakpointsTransient(t *testing.T) {
	file := filepath.Join(t.TempDir(), "p.json")
	editor := openTable(t, file)
	editor.Set("E0", nil, nil)
	mine, err := editor.SetTransient("E1", []engine.StopKind{engine.StopRound}, nil)
	if err != nil || !mine.Transient || mine.ID != 2 {
		t.Fatalf("SetTransient gave %+v, %v; want transient breakpoint 2", mine, err)
	}
	if again, _ := editor.SetTransient("E0", nil, nil); again.Transient || again.ID != 1 {
		t.Errorf("a transient set of a kept breakpoint gave %+v, want kept breakpoint 1", again)
	}
	editor.Set("E2", nil, nil) // a kept change writes the file
	if got, want := specs(openTable(t, file)), []string{"1 E0", "3 E2"}; !slices.Equal(got, want) {
		t.Errorf("the file holds %q, want %q", got, want)
	}
	other := openTable(t, file)
	other.Set("E5", nil, nil) // id 4 on disk
	editor.SetTransient("E4", nil, nil)
	// The editor's E4 took 4 too, before the refresh.
	if err := editor.Refresh(); err != nil {
		t.Fatal(err)
	}
	want := []string{"1 E0", "2 E1 round", "3 E2", "4 E5", "5 E4"}
	if got := specs(editor); !slices.Equal(got, want) {
		t.Errorf("refreshed, the editor's table holds %q, want %q", got, want)
	}
	other.Refresh()
	other.Set("E1", []engine.StopKind{engine.StopRound}, nil)
	editor.Refresh()
	for _, b := range editor.List() {
		if b.Spec() == "E1 round" && b.Transient {
			t.Errorf("E1 round, kept by the other writer, is still transient: %+v", b)
		}
	}
	if got := specs(openTable(t, file)); slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, "E4") }) {
		t.Errorf("a transient breakpoint reached the file: %q", got)
	}
}

// TestBreakpointsBadFile checks that a kept file that cannot be read says
// where and how to get past it, and that an edit the file cannot take
// still holds, with a warning.
func TestBreakpointsBadFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "p.json")
	os.WriteFile(file, []byte(`[{"id": 1, "pattern": "E1//x"}]`), 0o644)
	if _, err := OpenBreakpoints(file); err == nil || !strings.Contains(err.Error(), file+": breakpoint 1") {
		t.Errorf("a bad pattern read as %v", err)
	}
	os.WriteFile(file, []byte(`{`), 0o644)
	if _, err := OpenBreakpoints(file); err == nil || !strings.Contains(err.Error(), "remove the file") {
		t.Errorf("broken JSON read as %v", err)
	}
	// A condition kept without its TO, from before one was refused, would
	// never hold; the file is refused saying which and why.
	os.WriteFile(file, []byte(`[{"id": 2, "pattern": "E1", "condition": {"value": "{{E0.n}}", "op": "gt"}, "enabled": true}]`), 0o644)
	if _, err := OpenBreakpoints(file); err == nil || !strings.Contains(err.Error(), file+": breakpoint 2: a condition is VALUE OP [TO] and gt compares VALUE with TO, which is missing") {
		t.Errorf("a kept condition without its value read as %v", err)
	}

	file = filepath.Join(dir, "ok.json")
	tb := openTable(t, file)
	os.WriteFile(file, []byte(`{`), 0o644) // broken behind the table's back
	a, err := tb.Exec(Instruction{Verb: VerbBreak, Pattern: "E1"}, nil)
	if err != nil || a.Breakpoint == nil || len(a.Warnings) != 1 || !strings.Contains(a.Warnings[0], "could not be kept in "+file) {
		t.Errorf("answer %+v, %v", a, err)
	}
	if got := specs(tb); !slices.Equal(got, []string{"1 E1"}) {
		t.Errorf("the table holds %q", got)
	}
}

// TestSessionSharesTable sets a breakpoint on the table while a session
// that uses it is held: the run stops there, and hits are the session's.
func TestSessionSharesTable(t *testing.T) {
	table := NewBreakpoints()
	table.Set("E0", []engine.StopKind{engine.StopStep}, nil)
	s := newSession(t, chainPlan, "")
	s.bps = table
	st := s.Start(context.Background(), nil)
	if where(st) != "step E0" {
		t.Fatalf("first stop %s", where(st))
	}
	table.Set("E2", []engine.StopKind{engine.StopStep}, nil)
	if st := do(t, s, Command{Move: Continue}); where(st) != "step E2" || st.Stop.Breakpoint.Hits != 1 {
		t.Fatalf("after continue: %s", where(st))
	}
	if hits := table.List()[0].Hits; hits != 0 {
		t.Errorf("the table counts %d hits; hits are a run's", hits)
	}
}

// TestExecPrintsStopRoot checks that print reads the stop root a
// breakpoint condition reads: the round and the hits included.
func TestExecPrintsStopRoot(t *testing.T) {
	replies := "  - reply: { tool_calls: [ { name: builtin__reshape, arguments: { shape: {} } } ] }\n  - reply: { json: { ok: true } }\n"
	s := newSession(t, `
identifier: agents
steps:
  - id: E1
    tool_name: agent
    input:
      prompt: "go"
      tools: ["builtin__reshape"]
      output_schema: { type: object, required: [ok], properties: { ok: { type: boolean } } }
`, replies)
	for _, line := range []string{"break E1/agent.2 round if {{stop.round}} eq 2", "print {{stop.round}}"} {
		in, err := ParseCommand(line)
		if err != nil {
			t.Fatal(err)
		}
		if in.Verb == VerbPrint {
			if st := s.Start(context.Background(), nil); where(st) != "round E1/agent.2" {
				t.Fatalf("stopped at %s (%s)", where(st), st.Error)
			}
		}
		a, err := s.Exec(in)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if in.Verb == VerbPrint && (a.Value != 2 || a.Path != "{{stop.round}}") {
			t.Errorf("%s = %v", line, a.Value)
		}
	}
	in, _ := ParseCommand("print stop.hits")
	if a, err := s.Exec(in); err != nil || a.Value != 1 {
		t.Errorf("print stop.hits = %v, %v", a.Value, err)
	}
	in, _ = ParseCommand("run")
	if _, err := s.Exec(in); err != ErrNotSessionVerb {
		t.Errorf("run: %v", err)
	}
}

// TestConditionNamingNoStep: a condition that reads a step the plan does
// not have is set, with a warning naming the step and the nearest id, on
// break and on cond; one that reads the plan's steps, the reserved roots
// or the stop root is not warned of.
func TestConditionNamingNoStep(t *testing.T) {
	cat := demoCatalog(t)
	e, ok := cat.Plan("triage_queue")
	if !ok {
		t.Fatal("the demo has no triage_queue")
	}
	table := NewBreakpoints()
	for _, tc := range []struct {
		line, warning string
	}{
		{"break queue_empty if {{nope.x}} eq 1", "the condition reads 'nope.x', so it never holds: the plan has no step 'nope'; did you mean 'note'?"},
		{"break queue_empty if {{open_issue.issues}} empty", "the condition reads 'open_issue.issues', so it never holds: the plan has no step 'open_issue'; did you mean 'open_issues'?"},
		{"cond 1 {{assess.count}} gt 1", ""},
		{"cond 1 {{verdikt.output}} empty", "the condition reads 'verdikt.output', so it never holds: the plan has no step 'verdikt'; did you mean 'verdict'?"},
		{"break assess/do.*/verdict if {{item.id}} eq CHK-103", ""},
		{"break assess/do.*/verdict if {{stop.round}} gte 2", ""},
		{"break confirm if {{input.on_call}} eq Priya", ""},
	} {
		in, err := ParseCommand(tc.line)
		if err != nil {
			t.Fatal(err)
		}
		a, err := table.Exec(in, PlanShapes(e.Plan, cat))
		if err != nil {
			t.Fatalf("%s: %v", tc.line, err)
		}
		if got := strings.Join(a.Warnings, "; "); got != tc.warning {
			t.Errorf("%s: warned %q, want %q", tc.line, got, tc.warning)
		}
		if in.Verb == VerbBreak && a.Breakpoint == nil {
			t.Errorf("%s: not set", tc.line)
		}
	}
}
