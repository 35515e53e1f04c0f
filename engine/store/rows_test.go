package store

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/record"
	"github.com/stepwise-dev/stepwise/engine/store/storetest"
)

var rowsT0 = time.Date(2025, 3, 1, 10, 15, 0, 0, time.UTC)

func openTestStore(t *testing.T) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// recorder feeds a Recorder and keeps every event it was given, for the
// store's events to be held to.
type recorder struct {
	*Recorder
	given []engine.Event
}

func (r *recorder) Event(e engine.Event) {
	r.given = append(r.given, e)
	r.Recorder.Event(e)
}

// sameEvents holds what the store gives back for a run to what it was
// given: every event, in order, its payload byte for byte what
// encoding/json writes.
func sameEvents(t *testing.T, s *Store, id string, given []engine.Event) {
	t.Helper()
	got, err := s.Events(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(given) {
		t.Fatalf("%d events, want %d", len(got), len(given))
	}
	for i, e := range given {
		want, err := json.Marshal(e.Payload)
		if err != nil {
			t.Fatal(err)
		}
		g := got[i]
		if g.Seq != e.Seq || g.Kind != e.Kind || g.Path != e.Path || !g.Time.Equal(e.Time) || !bytes.Equal(g.Payload, want) {
			t.Errorf("event %d: got %d %s %s %v\n%.300s\nwant %d %s %s %v\n%.300s", i, g.Seq, g.Kind, g.Path, g.Time, g.Payload, e.Seq, e.Kind, e.Path, e.Time, want)
		}
	}
}

func count(t *testing.T, s *Store, query string, args ...any) int {
	t.Helper()
	var n int
	if err := s.db.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestStepCalls records steps that call their tool (step_start,
// tool_start, tool_end, step_end at one path), in one batch or across
// batches, and gives every event back byte for byte, the call listed among
// the tool calls.
func TestStepCalls(t *testing.T) {
	input := map[string]any{"title": "<b>crash</b> & ü", "n": 1.0, "big": 1e21, "tenth": 0.1, "list": []any{"a", nil, true}}
	result := map[string]any{"label": "bug", "score": 0.25}
	cases := []struct {
		name string
		// call emits the step's events at path E1 after run_start.
		call func(r *storetest.Run)
		// split: the events emitted so far are committed before the call's
		// end (1), the step's end (2) or the call's start (3) is given.
		split  int
		result string
	}{
		{name: "a call whose result the step keeps", result: `{"label":"bug","score":0.25}`, call: func(r *storetest.Run) {
			r.StepStart("E1", "tracker__label", input)
			r.ToolCall("E1", "tracker__label", input, result, "", 2.5)
			r.StepEnd("E1", "tracker__label", result, "", 3)
		}},
		{name: "a call that returns nothing", call: func(r *storetest.Run) {
			r.StepStart("E1", "tracker__label", input)
			r.ToolCall("E1", "tracker__label", input, nil, "", 1)
			r.StepEnd("E1", "tracker__label", nil, "", 1)
		}},
		{name: "a text result", result: `"done"`, call: func(r *storetest.Run) {
			r.StepStart("E1", "user__shout", input)
			r.ToolCall("E1", "user__shout", input, "done", "", 1)
			r.StepEnd("E1", "user__shout", "done", "", 1)
		}},
		{name: "a failed call", call: func(r *storetest.Run) {
			r.StepStart("E1", "tracker__label", input)
			r.ToolCall("E1", "tracker__label", input, nil, "tracker: 503", 1)
			r.StepEnd("E1", "tracker__label", nil, "tracker: 503", 1)
		}},
		{name: "a result a stop replaced", result: `{"label":"bug","score":0.25}`, call: func(r *storetest.Run) {
			r.StepStart("E1", "tracker__label", input)
			r.ToolCall("E1", "tracker__label", input, result, "", 1)
			r.StepEnd("E1", "tracker__label", map[string]any{"label": "replaced"}, "", 1)
		}},
		{name: "arguments other than the step's input", result: `{"label":"bug","score":0.25}`, call: func(r *storetest.Run) {
			r.StepStart("E1", "tracker__label", input)
			r.ToolCall("E1", "tracker__label", map[string]any{"title": "other"}, result, "", 1)
			r.StepEnd("E1", "tracker__label", result, "", 1)
		}},
		{name: "a call that ends in a later batch", split: 1, result: `{"label":"bug","score":0.25}`, call: func(r *storetest.Run) {
			r.StepStart("E1", "tracker__label", input)
			r.Emit("E1", engine.EventToolStart, engine.ToolStarted{Tool: "tracker__label", Args: input})
		}},
		{name: "a call that starts in a later batch than its step", split: 3, result: `{"label":"bug","score":0.25}`, call: func(r *storetest.Run) {
			r.StepStart("E1", "tracker__label", input)
		}},
		{name: "a call a Flush wrote before its step ended", split: 2, result: `{"label":"bug","score":0.25}`, call: func(r *storetest.Run) {
			r.StepStart("E1", "tracker__label", input)
			r.ToolCall("E1", "tracker__label", input, result, "", 2.5)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := openTestStore(t)
			rec := &recorder{Recorder: s.Recorder()}
			r := &storetest.Run{ID: "one", Sink: rec, Start: rowsT0}
			r.Begin("p", "p.yaml", nil)
			c.call(r)
			if c.split > 0 {
				rec.Flush()
				switch c.split {
				case 1:
					r.Emit("E1", engine.EventToolEnd, engine.ToolEnded{Tool: "tracker__label", Ms: 2.5, Result: result})
				case 3:
					r.ToolCall("E1", "tracker__label", input, result, "", 2.5)
				}
				r.StepEnd("E1", "tracker__label", result, "", 3)
			}
			r.End(engine.RunEnded{Status: "ok", StepsExecuted: 1})
			if err := rec.Close(); err != nil {
				t.Fatal(err)
			}
			sameEvents(t, s, "one", rec.given)
			// A Flush commits what was given before it: a segment of its own.
			if n := count(t, s, "SELECT count(*) FROM segments"); c.split > 0 && n < 2 {
				t.Errorf("%d segments across a Flush", n)
			}
			d, err := s.Run(context.Background(), "one")
			if err != nil {
				t.Fatal(err)
			}
			if len(d.ToolCalls) != 1 || !d.ToolCalls[0].Ended || d.ToolCalls[0].Tool != d.Steps[0].Tool || string(d.ToolCalls[0].Result) != c.result ||
				d.ToolCalls[0].Ms == 0 || d.ToolCalls[0].StartedAt.IsZero() {
				t.Errorf("the tool calls: %+v", d.ToolCalls)
			}
		})
	}
}

// TestMapItemsShareTheirPayloads records a map of 3,000 items whose body
// is two steps, the first calling its tool, each item's values its own,
// from several goroutines at once as the engine's map items are: the
// store gives back every event byte for byte, and its segments hold less
// than half of the payloads' JSON, the items sharing the heads and tails
// of theirs with the items before them.
func TestMapItemsShareTheirPayloads(t *testing.T) {
	s := openTestStore(t)
	rec := &recorder{Recorder: s.Recorder()}
	r := &storetest.Run{ID: "map", Sink: rec, Start: rowsT0, Tick: 3 * time.Microsecond}
	r.Begin("fan", "fan.yaml", map[string]any{"limit": 3000})
	r.StepStart("E1", "map", map[string]any{"over": "{{input.items}}"})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := g; i < 3000; i += 8 {
				item := "E1/do." + strconv.Itoa(i)
				in := map[string]any{"id": "CHK-" + strconv.Itoa(i), "title": "#" + strconv.Itoa(i) + " checkout times out"}
				out := map[string]any{"id": in["id"], "label": []any{"bug", "checkout"}[i%2], "priority": i % 3}
				r.StepStart(item, "builtin__reshape", in)
				r.ToolCall(item, "builtin__reshape", in, out, "", 0.01*float64(i%7))
				r.StepEnd(item, "builtin__reshape", out, "", 0.02*float64(i%5))
				r.Step(item+"/E11", "user__note", map[string]any{"text": in["title"]}, map[string]any{"noted": true}, 1)
			}
		})
	}
	wg.Wait()
	r.StepEnd("E1", "map", nil, "", 140)
	r.End(engine.RunEnded{Status: "ok", StepsExecuted: 1})
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	sameEvents(t, s, "map", rec.given)
	payloads := 0
	for _, e := range rec.given {
		j, _ := json.Marshal(e.Payload)
		payloads += len(j)
	}
	if n := count(t, s, "SELECT sum(length(data)) FROM segments"); n*2 > payloads {
		t.Errorf("the segments hold %d bytes for %d bytes of payloads", n, payloads)
	}
}

// TestLargePayloadInBlobs records a run whose tool returns 20 MiB (2 under
// the race detector) and a small run after it: the big result lives once
// in blobs, though the call's end and the step's end both hold it, the
// segments hold its hash, the small run's record and every listing read
// nothing of it, and the big run still gives back every byte. Its inputs,
// over blobBytes, are the run_start's piece in blobs, which its row names
// instead of holding them, and its listing still shows them.
func TestLargePayloadInBlobs(t *testing.T) {
	s := openTestStore(t)
	size := 20 << 20
	if raceEnabled {
		size = 2 << 20
	}
	big := strings.Repeat("0123456789abcdef", size/16)
	rec := &recorder{Recorder: s.Recorder()}
	r := &storetest.Run{ID: "big", Sink: rec, Start: rowsT0}
	r.Begin("dump", "dump.yaml", map[string]any{"seed": big[:blobBytes+1]})
	in := map[string]any{"path": "/var/log"}
	r.StepStart("E1", "user__dump", in)
	r.ToolCall("E1", "user__dump", in, big, "", 900)
	r.StepEnd("E1", "user__dump", big, "", 901)
	r.End(engine.RunEnded{Status: "ok", StepsExecuted: 1, Output: map[string]any{"log": big}})
	small := &storetest.Run{ID: "small", Sink: rec, Start: rowsT0.Add(time.Minute)}
	storetest.Finished(small)
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}

	// The result (the step's end's and the call's end's), the run's output
	// and its inputs are three blobs of the big run.
	if n := count(t, s, "SELECT count(*) FROM blobs"); n != 3 {
		t.Errorf("%d blobs, want 3", n)
	}
	if n := count(t, s, "SELECT count(*) FROM run_blobs JOIN runs ON runs.key = run_blobs.run WHERE runs.id = 'big'"); n != 3 {
		t.Errorf("the big run refers to %d blobs, want 3", n)
	}
	if n := count(t, s, "SELECT count(*) FROM blobs WHERE size > ? AND size = length(data)", size); n != 2 {
		t.Errorf("%d blobs of the whole %d bytes, want 2", n, size)
	}
	if n := count(t, s, "SELECT sum(length(data)) FROM segments WHERE run = (SELECT key FROM runs WHERE id = 'big')"); n > 1024 {
		t.Errorf("the big run's segments hold %d bytes", n)
	}
	if n := count(t, s, "SELECT length(inputs) + (SELECT count(*) FROM blobs WHERE hash = inputs_blob) FROM runs WHERE id = 'big'"); n != 1 {
		t.Errorf("the big run's row holds %d bytes of inputs and names no blob of them", n-1)
	}

	ctx := context.Background()
	list, err := s.Runs(ctx, record.RunFilter{})
	if err != nil || len(list) != 2 || list[1].ID != "big" || list[1].Status != "ok" || list[1].StepsExecuted != 1 {
		t.Fatalf("runs: %+v, %v", list, err)
	}
	if want, _ := json.Marshal(map[string]any{"seed": big[:blobBytes+1]}); !bytes.Equal(list[1].Inputs, want) {
		t.Errorf("the big run lists %d bytes of inputs, want %d", len(list[1].Inputs), len(want))
	}
	d, err := s.Run(ctx, "big")
	if err != nil {
		t.Fatal(err)
	}
	wantBig, _ := json.Marshal(big)
	if len(d.Steps) != 1 || d.Steps[0].Status != "ok" || d.Steps[0].Tool != "user__dump" || !bytes.Equal(d.Steps[0].Result, wantBig) ||
		len(d.ToolCalls) != 1 || !bytes.Equal(d.ToolCalls[0].Result, wantBig) || !bytes.Contains(d.Output, wantBig) || len(d.Inputs) < blobBytes {
		t.Errorf("the big run lost its payload: %d steps, %d tool calls, output %d bytes, inputs %d bytes", len(d.Steps), len(d.ToolCalls), len(d.Output), len(d.Inputs))
	}
	var given []engine.Event
	for _, e := range rec.given {
		if e.RunID == "big" {
			given = append(given, e)
		}
	}
	sameEvents(t, s, "big", given)
}

// TestRemoveReclaimsBlobs removes runs that share a blob: the blob stays
// while a run refers to it, and goes, its pages given back to the file
// system, with the last.
func TestRemoveReclaimsBlobs(t *testing.T) {
	s := openTestStore(t)
	big := strings.Repeat("x", 4<<20)
	rec := s.Recorder()
	for _, id := range []string{"first", "second", "third"} {
		r := &storetest.Run{ID: id, Sink: rec, Start: rowsT0}
		r.Begin("dump", "dump.yaml", nil)
		r.Step("E1", "user__dump", map[string]any{}, big+id[:1], 1) // first and third share nothing
		r.Step("E2", "user__dump", map[string]any{}, big, 1)        // all three share this
		r.End(engine.RunEnded{Status: "ok", StepsExecuted: 2})
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	size := func() int64 {
		// What the log holds is in the file once checkpointed.
		if whole, err := s.checkpointIn(context.Background(), s.db, "TRUNCATE"); !whole || err != nil {
			t.Fatalf("checkpoint: whole %v, %v", whole, err)
		}
		info, err := os.Stat(s.Path())
		if err != nil {
			t.Fatal(err)
		}
		return info.Size()
	}
	ctx := context.Background()
	if n := count(t, s, "SELECT count(*) FROM blobs"); n != 4 {
		t.Fatalf("%d blobs, want 4", n)
	}
	before := size()
	if _, err := s.Remove(ctx, "first", "second"); err != nil {
		t.Fatal(err)
	}
	if n := count(t, s, "SELECT count(*) FROM blobs"); n != 2 {
		t.Errorf("%d blobs after removing two runs, want the third's 2", n)
	}
	if after := size(); after > before-7<<20 {
		t.Errorf("the store is %d bytes after removing 8 MiB of blobs, was %d", after, before)
	}
	d, err := s.Run(ctx, "third")
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := json.Marshal(big); !bytes.Equal(d.Steps[1].Result, want) {
		t.Errorf("the third run lost the blob it shared: %d bytes", len(d.Steps[1].Result))
	}
	if _, err := s.Prune(ctx, rowsT0.Add(time.Hour), 0, ""); err != nil {
		t.Fatal(err)
	}
	if n := count(t, s, "SELECT count(*) FROM blobs") + count(t, s, "SELECT count(*) FROM run_blobs"); n != 0 {
		t.Errorf("%d blobs or references left with no run", n)
	}
	if after := size(); after > 1<<20 {
		t.Errorf("the empty store is %d bytes", after)
	}
}
