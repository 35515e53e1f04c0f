package store_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/record"
	"github.com/stepwise-dev/stepwise/engine/store"
	"github.com/stepwise-dev/stepwise/engine/store/storetest"
)

var t0 = time.Date(2025, 3, 1, 10, 15, 0, 0, time.UTC)

func openStore(t *testing.T) *store.Store {
	t.Helper()
	s, err := store.Open(filepath.Join(t.TempDir(), "data", store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// recordRun emits one run through its own Recorder and closes it, as a
// command that runs a plan does.
func recordRun(t *testing.T, s *store.Store, id string, start time.Time, emit func(*storetest.Run)) {
	t.Helper()
	rec := s.Recorder()
	emit(&storetest.Run{ID: id, Sink: rec, Start: start})
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	otherDB := filepath.Join(dir, "other.db")
	db, err := sql.Open("sqlite", otherDB)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE notes (body TEXT)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	newer := filepath.Join(dir, "newer.db")
	s, err := store.Open(newer)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	db, _ = sql.Open("sqlite", newer)
	if _, err := db.Exec("PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	db.Close()

	tests := []struct {
		name    string
		path    string
		notDB   bool
		wantErr string
	}{
		{"new file in new directories", filepath.Join(dir, "a", "b", store.FileName), false, ""},
		{"a path with a space, a question mark and a percent sign", filepath.Join(dir, "my runs?%20", store.FileName), false, ""},
		{"an empty file", write("empty.db", nil), false, ""},
		{"a text file", write("notes.txt", []byte(strings.Repeat("not a database\n", 100))), true, "notes.txt is not a stepwise run store: the file is not an SQLite database"},
		{"another application's database", otherDB, true, "other.db is not a stepwise run store: it is an SQLite database with other tables (notes)"},
		{"a directory", dir, true, "is a directory"},
		{"a newer schema", newer, false, "schema version 99 is newer than this stepwise knows"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := store.Open(tc.path)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				s.Close()
				if _, err := os.Stat(tc.path); err != nil {
					t.Fatal(err)
				}
				// Opening again finds the schema in place.
				s, err = store.Open(tc.path)
				if err != nil {
					t.Fatal(err)
				}
				s.Close()
				return
			}
			if err == nil {
				s.Close()
				t.Fatal("opened")
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %q, want it to say %q", err, tc.wantErr)
			}
			if errors.Is(err, store.ErrNotStore) != tc.notDB {
				t.Errorf("errors.Is(ErrNotStore) = %v for %v", !tc.notDB, err)
			}
		})
	}
}

func TestRecordedRuns(t *testing.T) {
	s := openStore(t)
	recordRun(t, s, "run-finished-0001", t0, storetest.Finished)
	recordRun(t, s, "run-exited-0002", t0.Add(time.Minute), storetest.Exited)
	recordRun(t, s, "run-failed-0003", t0.Add(2*time.Minute), storetest.Failed)
	recordRun(t, s, "run-unfinished-0004", t0.Add(3*time.Minute), storetest.Unfinished)
	ctx := context.Background()

	list, err := s.Runs(ctx, record.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range list {
		got = append(got, r.ID+" "+r.Status.String())
	}
	want := []string{"run-unfinished-0004 running", "run-failed-0003 failed", "run-exited-0002 exited", "run-finished-0001 ok"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("runs, newest first:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !list[0].Interrupted || list[1].Interrupted {
		t.Errorf("interrupted: %v, %v; want only the run without an end, whose recorder closed", list[0].Interrupted, list[1].Interrupted)
	}
	if list, _ := s.Runs(ctx, record.RunFilter{Plan: "triage", Limit: 2}); len(list) != 2 || list[0].ID != "run-unfinished-0004" || list[1].ID != "run-exited-0002" {
		t.Errorf("plan triage, limit 2: %+v", list)
	}

	tests := []struct {
		id    string
		check func(t *testing.T, d *record.RunDetail)
	}{
		{"run-finished-0001", func(t *testing.T, d *record.RunDetail) {
			if d.Plan != "triage" || d.File != ".stepwise/plans/triage.yaml" || len(d.Hash) != 64 {
				t.Errorf("plan %q file %q hash %q", d.Plan, d.File, d.Hash)
			}
			if string(d.Inputs) != `{"limit":2,"topic":"flaky tests"}` {
				t.Errorf("inputs %s", d.Inputs)
			}
			if string(d.Output) != `{"issue":7,"labels":["flaky","flaky"]}` {
				t.Errorf("output %s", d.Output)
			}
			if paths := stepPaths(d.Steps); paths != "E1 E2 E3 E3/do.0 E3/do.1" {
				t.Errorf("steps %s", paths)
			}
			e1 := d.Steps[0]
			if e1.Tool != "tracker__list_issues" || e1.Status != "ok" || string(e1.Input) != `{"limit":2}` || !strings.HasPrefix(string(e1.Result), `{"issues":[{"id":7`) || e1.Ms != 12 {
				t.Errorf("E1 %+v", e1)
			}
			if !e1.StartedAt.Equal(t0.Add(time.Millisecond)) {
				t.Errorf("E1 started %v", e1.StartedAt)
			}
			if len(d.ToolCalls) != 1 || d.ToolCalls[0].Path != "E2/agent.1/tracker__get_issue" || !d.ToolCalls[0].Ended || string(d.ToolCalls[0].Args) != `{"id":7}` {
				t.Errorf("tool calls %+v", d.ToolCalls)
			}
			if d.UsageFromCalls || d.UsageReport.Calls != 2 || d.UsageReport.CostUSD == nil || *d.UsageReport.CostUSD != 0.00062 {
				t.Errorf("usage %+v (from calls %v)", d.UsageReport, d.UsageFromCalls)
			}
			if d.Usage.Calls != 2 || d.Usage.Tokens != 2720 || d.StepsExecuted != 3 {
				t.Errorf("summary usage %+v, steps %d", d.Usage, d.StepsExecuted)
			}
			if d.Duration != 16*time.Millisecond || d.EndedAt.IsZero() || d.Recorder != "" {
				t.Errorf("duration %v ended %v recorder %q", d.Duration, d.EndedAt, d.Recorder)
			}
		}},
		{"run-exited-0002", func(t *testing.T, d *record.RunDetail) {
			if d.Exit == nil || d.Exit.Step != "E2" || d.Exit.Message != "nothing to triage" || d.Answer != "nothing to triage" {
				t.Errorf("exit %+v answer %q", d.Exit, d.Answer)
			}
			if d.Steps[1].Result != nil {
				t.Errorf("an exit step with no result: %s", d.Steps[1].Result)
			}
		}},
		{"run-failed-0003", func(t *testing.T, d *record.RunDetail) {
			if paths := stepPaths(d.Steps); paths != "E1 E1/do.0 E1/do.0/E10 E1/do.1 E1/do.1/E10" {
				t.Errorf("steps %s", paths)
			}
			var errs []string
			for _, e := range d.Errors {
				errs = append(errs, e.Path)
			}
			if strings.Join(errs, " ") != "E1/do.1/E10 E1/do.1 E1" {
				t.Errorf("errors in the order they failed: %v", errs)
			}
			if len(d.Warnings) != 1 || d.Warnings[0].Path != "E1/do.1/E10" {
				t.Errorf("warnings %+v", d.Warnings)
			}
			if d.Usage.CostUSD != nil || d.UsageReport.CostUSD != nil || d.Usage.Tokens != 340 {
				t.Errorf("an unpriced model has no cost: %+v", d.Usage)
			}
			if !strings.Contains(d.Error, "model not loaded") {
				t.Errorf("error %q", d.Error)
			}
		}},
		{"run-unfinished-0004", func(t *testing.T, d *record.RunDetail) {
			if d.Status != engine.StatusRunning || !d.Interrupted || !d.EndedAt.IsZero() {
				t.Errorf("status %s interrupted %v ended %v", d.Status, d.Interrupted, d.EndedAt)
			}
			if paths := stepPaths(d.Steps); paths != "E1 E2" || d.Steps[1].Status != "running" || d.Steps[1].Result != nil {
				t.Errorf("steps %s, E2 %+v", paths, d.Steps[1])
			}
			if len(d.ToolCalls) != 1 || d.ToolCalls[0].Ended {
				t.Errorf("a dispatched call that never returned: %+v", d.ToolCalls)
			}
			if !d.UsageFromCalls || d.UsageReport.Calls != 1 || len(d.UsageReport.ByStep) != 1 || d.UsageReport.ByStep[0].Path != "E2" || d.UsageReport.CostUSD == nil {
				t.Errorf("usage from the calls recorded: %+v", d.UsageReport)
			}
			if d.Usage.Calls != 1 || d.Usage.Tokens != 730 || d.StepsExecuted != 1 {
				t.Errorf("summary usage so far %+v, steps %d", d.Usage, d.StepsExecuted)
			}
			if d.LastEvent.Kind != engine.EventToolStart || d.LastEvent.Seq != 6 || d.Duration != 5*time.Millisecond {
				t.Errorf("last event %+v, duration %v", d.LastEvent, d.Duration)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.id, func(t *testing.T) {
			d, err := s.Run(ctx, tc.id)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, d)
			events, err := s.Events(ctx, tc.id)
			if err != nil {
				t.Fatal(err)
			}
			if events[0].Kind != engine.EventRunStart || events[0].Seq != 1 || uint64(len(events)) != events[len(events)-1].Seq {
				t.Errorf("events from run_start, numbered from 1 without gaps: %d events, last %+v", len(events), events[len(events)-1])
			}
		})
	}
}

func stepPaths(steps []record.StepRecord) string {
	var paths []string
	for _, s := range steps {
		paths = append(paths, s.Path)
	}
	return strings.Join(paths, " ")
}

func TestRunIDs(t *testing.T) {
	s := openStore(t)
	for i, id := range []string{"a1b2c3", "a1b2d4", "b7", "b77"} {
		recordRun(t, s, id, t0.Add(time.Duration(i)*time.Minute), storetest.Exited)
	}
	ctx := context.Background()
	tests := []struct {
		id, want, wantErr string
	}{
		{"a1b2c3", "a1b2c3", ""},
		{"a1b2c", "a1b2c3", ""},
		{"b7", "b7", ""}, // an exact id wins over the ids it begins
		{"a1b2", "", "run id 'a1b2' is ambiguous; it begins a1b2d4 (triage), a1b2c3 (triage)"},
		{"zz", "", "no run 'zz'; the most recent: b77 (triage), b7 (triage), a1b2d4 (triage), a1b2c3 (triage)"},
		{"", "", "no run id given"},
	}
	for _, tc := range tests {
		t.Run(tc.id, func(t *testing.T) {
			d, err := s.Run(ctx, tc.id)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d.ID != tc.want {
				t.Errorf("resolved %s, want %s", d.ID, tc.want)
			}
		})
	}
	var nf *record.NotFoundError
	if _, err := s.Events(ctx, "nothing"); !errors.As(err, &nf) || len(nf.Recent) != 4 {
		t.Errorf("Events of an unknown run: %v", err)
	}
	var amb *record.AmbiguousError
	if _, err := s.Run(ctx, "a"); !errors.As(err, &amb) || len(amb.Candidates) != 2 {
		t.Errorf("ambiguous: %v", err)
	}
}

// TestRunsByProject lists the runs of one project of a shared store, and
// finds a run by its id whatever its project.
func TestRunsByProject(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	for i, r := range []struct {
		id, project string
		emit        func(*storetest.Run)
	}{
		{"a-finished", "/src/a", storetest.Finished},
		{"b-failed", "/src/b", storetest.Failed},
		{"a-exited", "/src/a", storetest.Exited},
		{"nowhere", "", storetest.Exited},
		{"ab-exited", "/src/a b", storetest.Exited},
	} {
		rec := s.Recorder()
		r.emit(&storetest.Run{ID: r.id, Project: r.project, Sink: rec, Start: t0.Add(time.Duration(i) * time.Minute)})
		if err := rec.Close(); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name   string
		filter record.RunFilter
		want   string
	}{
		{"every project", record.RunFilter{}, "ab-exited:/src/a b nowhere: a-exited:/src/a b-failed:/src/b a-finished:/src/a"},
		{"one project", record.RunFilter{Project: "/src/a"}, "a-exited:/src/a a-finished:/src/a"},
		{"another project", record.RunFilter{Project: "/src/b"}, "b-failed:/src/b"},
		{"a project without runs", record.RunFilter{Project: "/src/c"}, ""},
		{"a prefix of a project's root is not that project", record.RunFilter{Project: "/src"}, ""},
		{"one project and plan", record.RunFilter{Project: "/src/a", Plan: "triage"}, "a-exited:/src/a a-finished:/src/a"},
		{"one project and a plan it did not run", record.RunFilter{Project: "/src/a", Plan: "summarize_all"}, ""},
		{"one project, limited", record.RunFilter{Project: "/src/a", Limit: 1}, "a-exited:/src/a"},
		{"a plan in every project", record.RunFilter{Plan: "triage", Limit: 3}, "ab-exited:/src/a b nowhere: a-exited:/src/a"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			list, err := s.Runs(ctx, tc.filter)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range list {
				got = append(got, r.ID+":"+r.Project)
			}
			if strings.Join(got, " ") != tc.want {
				t.Errorf("runs %s, want %s", strings.Join(got, " "), tc.want)
			}
		})
	}
	d, err := s.Run(ctx, "b-f")
	if err != nil || d.Project != "/src/b" || d.File != ".stepwise/plans/summarize_all.yaml" {
		t.Errorf("a run of another project, by a prefix of its id: %+v, %v", d, err)
	}
	var amb *record.AmbiguousError
	if _, err := s.Run(ctx, "a"); !errors.As(err, &amb) || len(amb.Candidates) != 3 {
		t.Errorf("a prefix that runs of two projects begin with: %v", err)
	}
}

// TestStepAcrossBatches holds a step's end back until its start is
// committed, so that the end's upsert must keep what the start recorded.
func TestStepAcrossBatches(t *testing.T) {
	s := openStore(t)
	rec := s.Recorder()
	r := &storetest.Run{ID: "split", Sink: rec, Start: t0}
	r.Begin("triage", "triage.yaml", nil)
	r.StepStart("E1", "tracker__list_issues", map[string]any{"limit": 1})
	waitFor(t, func() bool {
		d, err := s.Run(context.Background(), "split")
		return err == nil && len(d.Steps) == 1
	})
	r.StepEnd("E1", "", map[string]any{"issues": []any{}}, "", 3)
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	d, err := s.Run(context.Background(), "split")
	if err != nil {
		t.Fatal(err)
	}
	st := d.Steps[0]
	if st.Tool != "tracker__list_issues" || string(st.Input) != `{"limit":1}` || string(st.Result) != `{"issues":[]}` || st.Status != "ok" || st.StartedAt.IsZero() || st.EndedAt.IsZero() {
		t.Errorf("step recorded across two batches: %+v", st)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestConcurrentItems records a map whose items run on many goroutines at
// once, as the engine runs them; run it with -race.
func TestConcurrentItems(t *testing.T) {
	s := openStore(t)
	rec := s.Recorder()
	r := &storetest.Run{ID: "parallel", Sink: rec, Start: t0, Tick: time.Microsecond}
	r.Begin("fanout", "fanout.yaml", map[string]any{"n": 800})
	r.StepStart("E1", "map", nil)
	const workers, items = 8, 800
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < items; i += workers {
				item := "E1/do." + itoa(i)
				r.StepStart(item, "map", map[string]any{"index": i})
				r.Step(item+"/E10", "builtin__reshape", map[string]any{"index": i}, map[string]any{"double": 2 * i}, 0.1)
				r.StepEnd(item, "map", map[string]any{"double": 2 * i}, "", 0.2)
			}
		})
	}
	wg.Wait()
	r.StepEnd("E1", "map", nil, "", 50)
	r.End(engine.RunEnded{Status: "ok", StepsExecuted: 1})
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	d, err := s.Run(context.Background(), "parallel")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Steps) != 1+2*items {
		t.Fatalf("%d steps, want %d", len(d.Steps), 1+2*items)
	}
	for _, st := range d.Steps {
		if st.Status != "ok" {
			t.Fatalf("step %s: %s", st.Path, st.Status)
		}
	}
	events, err := s.Events(context.Background(), "parallel")
	if err != nil {
		t.Fatal(err)
	}
	if want := 2 + 4*items + 3; len(events) != want {
		t.Errorf("%d events, want %d", len(events), want)
	}
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

func TestStoreCloseFlushesRecorders(t *testing.T) {
	path := filepath.Join(t.TempDir(), store.FileName)
	s, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	rec := s.Recorder()
	storetest.Finished(&storetest.Run{ID: "flushed", Sink: rec, Start: t0})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Events after Close are dropped, not a panic or a hang.
	rec.Event(engine.Event{Seq: 99, RunID: "flushed", Kind: engine.EventWarning})
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Recorder().Close(); err == nil {
		t.Error("a Recorder of a closed store reports it")
	}
	s, err = store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	d, err := s.Run(context.Background(), "flushed")
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != "ok" || len(d.Steps) != 5 {
		t.Errorf("status %s, %d steps", d.Status, len(d.Steps))
	}
}

// TestUnmarshalablePayload keeps an event whose payload encoding/json
// refuses, with the reason.
func TestUnmarshalablePayload(t *testing.T) {
	s := openStore(t)
	rec := s.Recorder()
	r := &storetest.Run{ID: "nan", Sink: rec, Start: t0}
	r.Begin("p", "p.yaml", nil)
	r.Emit("E1", engine.EventWarning, map[string]any{"bad": func() {}})
	r.End(engine.RunEnded{Status: "ok"})
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	events, err := s.Events(context.Background(), "nan")
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 4 || !strings.Contains(string(events[1].Payload), "unrecorded") {
		t.Errorf("events %d, payload %s", len(events), events[1].Payload)
	}
}

// TestStepsAcrossChunks starts more steps than one statement writes before
// ending any, so that most ends complete rows already written, and records
// two runs interleaved through one Recorder.
func TestStepsAcrossChunks(t *testing.T) {
	s := openStore(t)
	rec := s.Recorder()
	a := &storetest.Run{ID: "wide-a", Sink: rec, Start: t0}
	b := &storetest.Run{ID: "wide-b", Sink: rec, Start: t0.Add(time.Second)}
	a.Begin("wide", "wide.yaml", nil)
	b.Begin("wide", "wide.yaml", nil)
	const n = 450
	for i := range n {
		a.StepStart("E1/do."+itoa(i), "builtin__reshape", map[string]any{"i": i})
		b.StepStart("E1/do."+itoa(i), "builtin__reshape", map[string]any{"i": i})
	}
	for i := range n {
		a.StepEnd("E1/do."+itoa(i), "builtin__reshape", map[string]any{"twice": 2 * i}, "", 1)
		b.StepEnd("E1/do."+itoa(i), "builtin__reshape", map[string]any{"twice": 2 * i}, "", 1)
	}
	a.End(engine.RunEnded{Status: "ok"})
	b.End(engine.RunEnded{Status: "ok"})
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"wide-a", "wide-b"} {
		d, err := s.Run(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Steps) != n {
			t.Fatalf("%s: %d steps, want %d", id, len(d.Steps), n)
		}
		for i, st := range d.Steps {
			if st.Path != "E1/do."+itoa(i) || st.Status != "ok" || st.Tool != "builtin__reshape" ||
				string(st.Input) != `{"i":`+itoa(i)+`}` || string(st.Result) != `{"twice":`+itoa(2*i)+`}` {
				t.Fatalf("%s: step %d: %+v (input %s, result %s)", id, i, st, st.Input, st.Result)
			}
		}
		events, err := s.Events(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if len(events) != 2*n+3 {
			t.Errorf("%s: %d events, want %d", id, len(events), 2*n+3)
		}
		for i, e := range events {
			if e.Seq != uint64(i+1) {
				t.Fatalf("%s: event %d has seq %d", id, i, e.Seq)
			}
		}
	}
}
