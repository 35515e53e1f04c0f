package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/record"
	"github.com/stepwise-dev/stepwise/engine/store/storetest"
)

// oldStatement is one statement that writes a store as an older stepwise
// left it.
type oldStatement struct {
	q    string
	args []any
}

// openOld writes a store file with statements, as an older stepwise left
// it, and opens it with this one.
func openOld(t *testing.T, statements []oldStatement) *Store {
	t.Helper()
	path := filepath.Join(t.TempDir(), FileName)
	db, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range statements {
		if _, err := db.Exec(st.q, st.args...); err != nil {
			t.Fatalf("%v\n%s", err, st.q)
		}
	}
	db.Close()
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestMigrateVersion1 opens a store file written with schema version 1, as
// a stepwise of that version left it (one finished run, one whose events
// stopped), and reads it with this one: the runs keep all they said, with
// no project, and new runs are recorded with theirs.
func TestMigrateVersion1(t *testing.T) {
	t0 := time.Date(2025, 3, 1, 10, 15, 0, 0, time.UTC)
	at := func(d time.Duration) int64 { return t0.Add(d).UnixNano() }
	s := openOld(t, []oldStatement{
		{q: fmt.Sprintf("PRAGMA application_id = %d", applicationID)},
		{q: migrations[0].sql},
		{q: "PRAGMA user_version = 1"},
		{`INSERT INTO runs (key, id, plan, file, hash, status, steps_executed, started_at, ended_at, start_seq, end_seq, last_seq, last_event_at)
			VALUES (1, 'old-finished', 'triage', '.stepwise/plans/triage.yaml', 'ab', 'ok', 1, ?1, ?2, 1, 4, 4, ?2)`,
			[]any{at(0), at(30 * time.Millisecond)}},
		{`INSERT INTO events (run, seq, time, path, kind, payload) VALUES
			(1, 1, ?1, '', 'run_start', '{"plan":"triage","file":".stepwise/plans/triage.yaml","hash":"ab","inputs":{"topic":"old"}}'),
			(1, 4, ?2, '', 'run_end', '{"status":"ok","steps_executed":1,"output":{"n":1},"usage":{"calls":0}}')`,
			[]any{at(0), at(30 * time.Millisecond)}},
		{`INSERT INTO steps (run, seq, path, started, started_at, start_payload, end_seq, ended_at, end_payload) VALUES
			(1, 2, 'E1', 1, ?1, '{"tool":"tracker__list_issues","input":{"limit":1}}', 3, ?2,
				'{"tool":"tracker__list_issues","status":"ok","result":{"issues":[]},"ms":10}')`,
			[]any{at(10 * time.Millisecond), at(20 * time.Millisecond)}},
		{`INSERT INTO runs (key, id, plan, file, hash, status, started_at, start_seq, last_seq, last_event_at)
			VALUES (2, 'old-stopped', 'triage', 'triage.yaml', 'ab', 'running', ?1, 1, 1, ?1)`,
			[]any{at(time.Minute)}},
		{`INSERT INTO events (run, seq, time, path, kind, payload) VALUES
			(2, 1, ?1, '', 'run_start', '{"plan":"triage","file":"triage.yaml","hash":"ab","inputs":{}}')`,
			[]any{at(time.Minute)}},
	})
	ctx := context.Background()
	var version int
	if err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil || version != schemaVersion {
		t.Fatalf("user_version %d (%v), want %d", version, err, schemaVersion)
	}

	list, err := s.Runs(ctx, record.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != "old-stopped" || !list[0].Interrupted || list[1].ID != "old-finished" || list[1].Status != "ok" ||
		list[0].Project != "" || list[1].Project != "" {
		t.Errorf("the runs of version 1, newest first, without a project: %+v", list)
	}
	d, err := s.Run(ctx, "old-f")
	if err != nil {
		t.Fatal(err)
	}
	if d.Project != "" || d.File != ".stepwise/plans/triage.yaml" || string(d.Inputs) != `{"topic":"old"}` || string(d.Output) != `{"n":1}` ||
		len(d.Steps) != 1 || d.Steps[0].Status != "ok" || string(d.Steps[0].Result) != `{"issues":[]}` || d.Duration != 30*time.Millisecond {
		t.Errorf("a finished run of version 1: %+v", d)
	}
	if list, err := s.Runs(ctx, record.RunFilter{Project: "/src/a"}); err != nil || len(list) != 0 {
		t.Errorf("runs of version 1 belong to no project: %+v, %v", list, err)
	}

	rec := s.Recorder()
	storetest.Exited(&storetest.Run{ID: "new", Project: "/src/a", Sink: rec, Start: t0.Add(time.Hour)})
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if list, err := s.Runs(ctx, record.RunFilter{Project: "/src/a"}); err != nil || len(list) != 1 || list[0].ID != "new" || list[0].Project != "/src/a" {
		t.Errorf("a run recorded after the migration: %+v, %v", list, err)
	}
	s.Close()

	// Opening it again finds it up to date.
	s, err = Open(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	if list, err := s.Runs(ctx, record.RunFilter{}); err != nil || len(list) != 3 {
		t.Errorf("reopened: %+v, %v", list, err)
	}
	s.Close()
}

// TestMigrateVersion2 opens a store written with schema version 2, whose
// steps that call their tool have a row in steps and another in
// tool_calls and whose payloads are all in their rows, and reads it with
// this one: the run, its steps, its tool call and every event as they
// were; a run recorded after the migration keeps its calls in its steps'
// rows, next to the old.
func TestMigrateVersion2(t *testing.T) {
	t0 := time.Date(2025, 3, 1, 10, 15, 0, 0, time.UTC)
	at := func(ms int) int64 { return t0.Add(time.Duration(ms) * time.Millisecond).UnixNano() }
	s := openOld(t, []oldStatement{
		{q: fmt.Sprintf("PRAGMA application_id = %d", applicationID)},
		{q: migrations[0].sql},
		{q: migrations[1].sql},
		{q: "PRAGMA user_version = 2"},
		{`INSERT INTO runs (key, id, plan, file, project, hash, status, steps_executed, started_at, ended_at, start_seq, end_seq, last_seq, last_event_at)
			VALUES (1, 'old', 'triage', 'triage.yaml', '/src/a', 'ab', 'ok', 1, ?1, ?2, 1, 6, 6, ?2)`, []any{at(0), at(50)}},
		{`INSERT INTO events (run, seq, time, path, kind, payload) VALUES
			(1, 1, ?1, '', 'run_start', '{"plan":"triage","file":"triage.yaml","project":"/src/a","hash":"ab","inputs":{"topic":"old"}}'),
			(1, 6, ?2, '', 'run_end', '{"status":"ok","steps_executed":1,"output":{"n":1},"usage":{"calls":0}}')`, []any{at(0), at(50)}},
		{`INSERT INTO steps (run, seq, path, started, started_at, start_payload, end_seq, ended_at, end_payload) VALUES
			(1, 2, 'E1', 1, ?1, '{"tool":"tracker__list","input":{"limit":1}}', 5, ?2, '{"tool":"tracker__list","status":"ok","result":{"issues":[]},"ms":10}')`,
			[]any{at(10), at(40)}},
		{`INSERT INTO tool_calls (run, seq, path, started, started_at, start_payload, end_seq, ended_at, end_payload) VALUES
			(1, 3, 'E1', 1, ?1, '{"tool":"tracker__list","args":{"limit":1}}', 4, ?2, '{"tool":"tracker__list","ms":9,"is_error":false,"result":{"issues":[]}}')`,
			[]any{at(20), at(30)}},
	})
	ctx := context.Background()
	list, err := s.Runs(ctx, record.RunFilter{Project: "/src/a"})
	if err != nil || len(list) != 1 || list[0].ID != "old" || list[0].Status != "ok" || list[0].StepsExecuted != 1 {
		t.Fatalf("the run of version 2: %+v, %v", list, err)
	}
	d, err := s.Run(ctx, "old")
	if err != nil {
		t.Fatal(err)
	}
	if string(d.Inputs) != `{"topic":"old"}` || string(d.Output) != `{"n":1}` || len(d.Steps) != 1 || string(d.Steps[0].Input) != `{"limit":1}` ||
		string(d.Steps[0].Result) != `{"issues":[]}` || len(d.ToolCalls) != 1 || string(d.ToolCalls[0].Args) != `{"limit":1}` ||
		string(d.ToolCalls[0].Result) != `{"issues":[]}` || d.ToolCalls[0].Ms != 9 {
		t.Errorf("the run of version 2: %+v", d)
	}
	events, err := s.Events(ctx, "old")
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for i, e := range events {
		if e.Seq != uint64(i+1) {
			t.Errorf("event %d has seq %d", i, e.Seq)
		}
		kinds = append(kinds, string(e.Kind))
	}
	if got := fmt.Sprint(kinds); got != "[run_start step_start tool_start tool_end step_end run_end]" {
		t.Errorf("the events of version 2: %s", got)
	}
	if string(events[2].Payload) != `{"tool":"tracker__list","args":{"limit":1}}` || string(events[3].Payload) != `{"tool":"tracker__list","ms":9,"is_error":false,"result":{"issues":[]}}` {
		t.Errorf("the tool call of version 2: %s %s", events[2].Payload, events[3].Payload)
	}

	rec := s.Recorder()
	r := &storetest.Run{ID: "new", Project: "/src/a", Sink: rec, Start: t0.Add(time.Hour)}
	r.Begin("triage", "triage.yaml", nil)
	in, out := map[string]any{"limit": 1}, map[string]any{"issues": []any{}}
	r.StepStart("E1", "tracker__list", in)
	r.ToolCall("E1", "tracker__list", in, out, "", 9)
	r.StepEnd("E1", "tracker__list", out, "", 10)
	r.End(engine.RunEnded{Status: "ok", StepsExecuted: 1})
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if d, err := s.Run(ctx, "new"); err != nil || len(d.ToolCalls) != 1 || string(d.ToolCalls[0].Args) != `{"limit":1}` {
		t.Errorf("a run recorded after the migration: %+v, %v", d, err)
	}
	oldTablesGone(t, s)
}

// oldTablesGone holds a migrated store to the tables of this schema: the
// events, steps and tool calls of schema 4 are in segments now.
func oldTablesGone(t *testing.T, s *Store) {
	t.Helper()
	var tables []string
	rows, err := s.db.Query("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	if got := fmt.Sprint(tables); got != "[blobs run_blobs runs segments]" {
		t.Errorf("the tables after the migration: %s", got)
	}
}

// TestMigrateVersion3 opens a store file written with schema version 3, as
// a stepwise of that version left it (a step that keeps its tool call, a
// result kept in blobs, a call kept in tool_calls), and reads it with this
// one: its events are in segments now, the same events, and new runs are
// recorded next to it; removing it removes its blob.
func TestMigrateVersion3(t *testing.T) {
	t0 := time.Date(2025, 3, 1, 10, 15, 0, 0, time.UTC)
	at := func(d time.Duration) int64 { return t0.Add(d).UnixNano() }
	big := `{"text":"` + strings.Repeat("x", 100) + `"}`
	s := openOld(t, []oldStatement{
		{q: fmt.Sprintf("PRAGMA application_id = %d", applicationID)},
		{q: migrations[0].sql},
		{q: migrations[1].sql},
		{q: migrations[2].sql},
		{q: "PRAGMA user_version = 3"},
		{`INSERT INTO runs (key, id, plan, file, project, hash, status, steps_executed, started_at, ended_at, start_seq, end_seq, last_seq, last_event_at)
			VALUES (1, 'old', 'triage', 'triage.yaml', '/src/a', 'ab', 'ok', 2, ?1, ?2, 1, 10, 10, ?2)`, []any{at(0), at(90)}},
		{`INSERT INTO events (run, seq, time, path, kind, payload) VALUES
			(1, 1, ?1, '', 'run_start', '{"plan":"triage","file":"triage.yaml","project":"/src/a","hash":"ab","inputs":{"topic":"old"}}'),
			(1, 10, ?2, '', 'run_end', '{"status":"ok","steps_executed":2,"output":{"n":1},"usage":{"calls":0}}')`, []any{at(0), at(90)}},
		{`INSERT INTO steps (run, seq, path, started, started_at, start_payload, end_seq, ended_at, end_payload,
				call_seq, call_started_at, call_end_seq, call_ended_at, call_ms) VALUES
			(1, 2, 'E1', 1, ?1, '{"tool":"tracker__list","input":{"limit":1}}', 5, ?2, '{"tool":"tracker__list","status":"ok","result":{"issues":[]},"ms":10}',
				3, ?1, 4, ?2, '9')`, []any{at(10), at(40)}},
		{`INSERT INTO blobs (hash, size, data) VALUES ('h-big', ?1, ?2)`, []any{len(big), `{"tool":"writer__draft","status":"ok","result":` + big + `,"ms":5}`}},
		{`INSERT INTO run_blobs (run, hash) VALUES (1, 'h-big')`, nil},
		{`INSERT INTO steps (run, seq, path, started, started_at, start_payload, end_seq, ended_at, end_payload, end_payload_blob) VALUES
			(1, 6, 'E2', 1, ?1, '{"tool":"writer__draft","input":{}}', 9, ?2, '{"tool":"writer__draft","status":"ok","ms":5}', 'h-big')`,
			[]any{at(50), at(80)}},
		{`INSERT INTO tool_calls (run, seq, path, started, started_at, start_payload, end_seq, ended_at, end_payload) VALUES
			(1, 7, 'E2', 1, ?1, '{"tool":"writer__draft","args":{"n":2}}', 8, ?2, '{"tool":"writer__draft","ms":4,"is_error":true,"error":"busy"}')`,
			[]any{at(60), at(70)}},
	})
	ctx := context.Background()
	oldTablesGone(t, s)
	d, err := s.Run(ctx, "old")
	if err != nil {
		t.Fatal(err)
	}
	if string(d.Inputs) != `{"topic":"old"}` || string(d.Output) != `{"n":1}` || len(d.Steps) != 2 ||
		string(d.Steps[0].Input) != `{"limit":1}` || string(d.Steps[0].Result) != `{"issues":[]}` ||
		d.Steps[1].Path != "E2" || string(d.Steps[1].Result) != big {
		t.Errorf("the run of version 3: %+v", d)
	}
	if len(d.ToolCalls) != 2 || string(d.ToolCalls[0].Result) != `{"issues":[]}` || d.ToolCalls[0].Ms != 9 ||
		string(d.ToolCalls[1].Args) != `{"n":2}` || d.ToolCalls[1].Error != "busy" {
		t.Errorf("the tool calls of version 3: %+v", d.ToolCalls)
	}
	events, err := s.Events(ctx, "old")
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range events {
		kinds = append(kinds, fmt.Sprint(e.Seq, e.Kind))
	}
	if got := fmt.Sprint(kinds); got != "[1run_start 2step_start 3tool_start 4tool_end 5step_end 6step_start 7tool_start 8tool_end 9step_end 10run_end]" {
		t.Errorf("the events of version 3: %s", got)
	}

	rec := s.Recorder()
	r := &storetest.Run{ID: "new", Project: "/src/a", Sink: rec, Start: t0.Add(time.Hour)}
	r.Begin("triage", "triage.yaml", nil)
	in, out := map[string]any{"limit": 1}, map[string]any{"issues": []any{}}
	r.Step("E1", "tracker__list", in, out, 10)
	r.End(engine.RunEnded{Status: "ok", StepsExecuted: 1})
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if d, err := s.Run(ctx, "new"); err != nil || len(d.Steps) != 1 || string(d.Steps[0].Result) != `{"issues":[]}` {
		t.Errorf("a run recorded after the migration: %+v, %v", d, err)
	}
	if _, err := s.Remove(ctx, "old"); err != nil {
		t.Fatal(err)
	}
	var rows int
	if err := s.db.QueryRowContext(ctx, "SELECT (SELECT count(*) FROM blobs) + (SELECT count(*) FROM run_blobs)").Scan(&rows); err != nil || rows != 0 {
		t.Errorf("%d blobs and references to them (%v) left by the removed run", rows, err)
	}
}

// openVersion4 opens a copy of testdata/version4.db, a store schema 4's
// Recorder wrote with 8 KiB pages, migrating it.
func openVersion4(t *testing.T) *Store {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "version4.db"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), FileName)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestMigrateVersion4 opens testdata/version4.db, a store as schema 4's
// Recorder wrote it (the storetest runs, and a run of steps that call
// their tool, each way schema 4 kept such a call, with a result kept in
// blobs), and reads every run of it as schema 4's reader read it, kept in
// testdata/version4.json: the listing, each run's record and every event.
func TestMigrateVersion4(t *testing.T) {
	s := openVersion4(t)
	defer s.Close()
	oldTablesGone(t, s)
	// The pages of the rows the migration rewrote are given back.
	var free int
	if err := s.db.QueryRow("PRAGMA freelist_count").Scan(&free); err != nil || free != 0 {
		t.Errorf("%d free pages after the migration (%v)", free, err)
	}
	want, err := os.ReadFile(filepath.Join("testdata", "version4.json"))
	if err != nil {
		t.Fatal(err)
	}
	var runs map[string]json.RawMessage
	if err := json.Unmarshal(want, &runs); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	got := map[string]any{}
	for id := range runs {
		if id == "runs" {
			list, err := s.Runs(ctx, record.RunFilter{})
			if err != nil {
				t.Fatal(err)
			}
			got[id] = list
			continue
		}
		d, err := s.Run(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		events, err := s.Events(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		got[id] = map[string]any{"detail": d, "events": events}
	}
	// What schema 4 read is compared field by field: fields the record
	// has gained since (a run's made, its inputs in the listing) are left
	// out, every other must read as it did.
	j, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	var gotJSON, wantJSON any
	if err := json.Unmarshal(j, &gotJSON); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(want, &wantJSON); err != nil {
		t.Fatal(err)
	}
	gotJSON = withoutNewFields(gotJSON, wantJSON)
	if !reflect.DeepEqual(gotJSON, wantJSON) {
		g, _ := json.MarshalIndent(gotJSON, "", " ")
		gotLines, wantLines := strings.Split(string(g), "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gotLines), len(wantLines)) {
			if gotLines[i] != wantLines[i] {
				t.Fatalf("line %d of the runs read after the migration differs from what schema 4 read:\ngot  %.200s\nwant %.200s", i+1, gotLines[i], wantLines[i])
			}
		}
		t.Fatalf("the runs read after the migration are %d lines of JSON, schema 4 read %d", len(gotLines), len(wantLines))
	}
}

// withoutNewFields is got less the object members old has no member
// for, at every depth: the fields a record gained since old was written.
func withoutNewFields(got, old any) any {
	switch g := got.(type) {
	case map[string]any:
		o, ok := old.(map[string]any)
		if !ok {
			return got
		}
		for k, v := range g {
			if ov, had := o[k]; had {
				g[k] = withoutNewFields(v, ov)
			} else {
				delete(g, k)
			}
		}
	case []any:
		o, ok := old.([]any)
		if !ok {
			return got
		}
		for i := range min(len(g), len(o)) {
			g[i] = withoutNewFields(g[i], o[i])
		}
	}
	return got
}

// TestPageSize opens a new store, whose pages are the size dsn sets, and a
// store made with 8 KiB pages, which keeps them and records a run.
func TestPageSize(t *testing.T) {
	pageSize := func(s *Store) int {
		t.Helper()
		var n int
		if err := s.db.QueryRow("PRAGMA page_size").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	s, err := Open(filepath.Join(t.TempDir(), FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n := pageSize(s); n != 16384 {
		t.Errorf("a new store has pages of %d bytes, want 16384", n)
	}

	old := openVersion4(t)
	defer old.Close()
	if n := pageSize(old); n != 8192 {
		t.Errorf("a store made with 8 KiB pages has pages of %d bytes after Open, want 8192", n)
	}
	rec := old.Recorder()
	rec.Event(engine.Event{Seq: 1, Time: time.Now(), RunID: "paged", Kind: engine.EventRunStart, Payload: engine.RunStarted{Plan: "p"}})
	rec.Event(engine.Event{Seq: 2, Time: time.Now(), RunID: "paged", Kind: engine.EventRunEnd, Payload: engine.RunEnded{Status: engine.StatusOK}})
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if d, err := old.Run(context.Background(), "paged"); err != nil || d.Status != engine.StatusOK {
		t.Fatalf("the run recorded into it reads as %+v, %v", d, err)
	}
}
