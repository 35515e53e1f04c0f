package store_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stepwise-dev/stepwise/engine/record"
	"github.com/stepwise-dev/stepwise/engine/store"
	"github.com/stepwise-dev/stepwise/engine/store/storetest"
)

// TestRemove deletes runs by id and prefix, with their records, and
// nothing when one id does not name a run.
func TestRemove(t *testing.T) {
	s := openStore(t)
	t0 := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	recordRun(t, s, "run-a-0001", t0, storetest.Finished)
	recordRun(t, s, "run-b-0002", t0.Add(time.Minute), storetest.Failed)
	recordRun(t, s, "run-c-0003", t0.Add(2*time.Minute), storetest.Finished)
	ctx := context.Background()

	var nf *record.NotFoundError
	if _, err := s.Remove(ctx, "run-a", "nope"); !errors.As(err, &nf) {
		t.Fatalf("an unknown id: %v", err)
	}
	if ids := runIDs(t, s); len(ids) != 3 {
		t.Fatalf("a refused removal removed runs: %v", ids)
	}
	// run-b named twice, by a prefix and in full, is removed and told
	// once.
	removed, err := s.Remove(ctx, "run-a", "run-b", "run-b-0002")
	if err != nil || !slices.Equal(removed.IDs(), []string{"run-a-0001", "run-b-0002"}) {
		t.Fatalf("removed %v, %v", removed.IDs(), err)
	}
	if ids := runIDs(t, s); !slices.Equal(ids, []string{"run-c-0003"}) {
		t.Errorf("runs left %v", ids)
	}
	if _, err := s.Events(ctx, "run-a-0001"); !errors.As(err, &nf) {
		t.Errorf("the events of a removed run: %v", err)
	}
}

// TestPrune deletes the runs older than a time but for the newest of each
// project, and gives the space back.
func TestPrune(t *testing.T) {
	s := openStore(t)
	t0 := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	for i := range 6 {
		recordRun(t, s, "run-"+string(rune('a'+i)), t0.Add(time.Duration(i)*time.Hour), func(r *storetest.Run) {
			for j := range 200 {
				// Each input is its own number over and over: a segment
				// keeps only what a payload does not share with the one
				// before, at its start and at its end.
				r.Step("E1", "builtin__reshape", map[string]any{"pad": strings.Repeat(strconv.Itoa(j)+" ", 500)}, "ok", 1)
			}
			storetest.Finished(r)
		})
	}
	before := storeBytes(t, s.Path())
	removed, err := s.Prune(context.Background(), t0.Add(4*time.Hour), 3, "")
	if err != nil || !slices.Equal(sorted(removed.IDs()), []string{"run-a", "run-b", "run-c"}) {
		t.Fatalf("removed %v, %v", removed.IDs(), err)
	}
	if ids := runIDs(t, s); !slices.Equal(sorted(ids), []string{"run-d", "run-e", "run-f"}) {
		t.Errorf("runs left %v", ids)
	}
	if after := storeBytes(t, s.Path()); after >= before || removed.Freed != before-after {
		t.Errorf("the store is %d bytes after pruning, %d before, and Prune says it freed %d", after, before, removed.Freed)
	}
}

// TestPruneSaysWhatItKept: the runs old enough that Prune leaves are
// counted, by why it leaves them: the newest of their project it keeps,
// and one a live process is still recording (newest or not, a run among
// those kept counts as kept).
func TestPruneSaysWhatItKept(t *testing.T) {
	s := openStore(t)
	t0 := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	// A run still being recorded, the oldest: its Recorder stays open.
	rec := s.Recorder()
	t.Cleanup(func() { rec.Close() })
	(&storetest.Run{ID: "run-recording", Sink: rec, Project: "/p", Start: t0.Add(-time.Hour)}).Begin("triage", "triage.yaml", nil)
	rec.Flush()
	for i, project := range []string{"/p", "/p", "/p", "/q", "/q"} {
		recordRun(t, s, "run-"+string(rune('a'+i)), t0.Add(time.Duration(i)*time.Minute), func(r *storetest.Run) {
			r.Project = project
			storetest.Finished(r)
		})
	}
	// Every run is older than t0+1h; the newest 2 of /p (run-b, run-c)
	// and of /q (run-d, run-e) are kept, run-recording is left.
	removed, err := s.Prune(context.Background(), t0.Add(time.Hour), 2, "")
	if err != nil || !slices.Equal(removed.IDs(), []string{"run-a"}) || removed.KeptNewest != 4 || removed.KeptRecording != 1 {
		t.Errorf("removed %v, kept %d of the newest and %d being recorded, %v; want run-a, 4 and 1", removed.IDs(), removed.KeptNewest, removed.KeptRecording, err)
	}
	// Of one project, with nothing to delete: what it left is said all
	// the same.
	removed, err = s.Prune(context.Background(), t0.Add(time.Hour), 2, "/q")
	if err != nil || len(removed.Runs) != 0 || removed.KeptNewest != 2 || removed.KeptRecording != 0 {
		t.Errorf("of /q: removed %v, kept %d of the newest and %d being recorded, %v; want none, 2 and 0", removed.IDs(), removed.KeptNewest, removed.KeptRecording, err)
	}
}

// TestRemoveGivesBack: how much of the space of runs removed goes back to
// the file system, and why some does not: a small run frees no whole page,
// a payload a run kept shares stays, and while another process reads the
// store the compacted database waits in the log until that process lets
// the store go.
func TestRemoveGivesBack(t *testing.T) {
	ctx := context.Background()
	start := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	// padded records a run whose step input is pad over and over: a
	// payload that goes to blobs, shared by every run of the same pad.
	padded := func(pad string) func(*storetest.Run) {
		return func(r *storetest.Run) {
			r.Step("E1", "builtin__reshape", map[string]any{"pad": strings.Repeat(pad, 100_000)}, "ok", 1)
			storetest.Finished(r)
		}
	}
	// padBytes is the size of the payload, strings.Repeat("ab ",
	// 100_000); its pages hold a little less.
	const padBytes = 300_000
	// stored records runs, by id, into a store it closes and opens again,
	// as runs rm finds it after the commands that recorded them.
	stored := func(t *testing.T, runs map[string]func(*storetest.Run)) *store.Store {
		t.Helper()
		s := openStore(t)
		for id, emit := range runs {
			recordRun(t, s, id, start, emit)
		}
		s.Close()
		s, err := store.Open(s.Path())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}

	t.Run("a small run", func(t *testing.T) {
		s := stored(t, map[string]func(*storetest.Run){"run-a": storetest.Finished, "run-b": storetest.Finished, "run-c": storetest.Finished})
		// The first removal gives back the pages the schema's
		// migrations left free; the next has nothing to give back.
		if removed, err := s.Remove(ctx, "run-a"); err != nil || removed.Freed == 0 {
			t.Fatalf("the first removal: %+v, %v", removed, err)
		}
		before := storeBytes(t, s.Path())
		removed, err := s.Remove(ctx, "run-b")
		if err != nil || removed.Freed != 0 || removed.Pending != 0 || removed.Shared != 0 || storeBytes(t, s.Path()) != before {
			t.Errorf("removing a small run: %+v, %v; the store was %d bytes, is %d", removed, err, before, storeBytes(t, s.Path()))
		}
	})

	t.Run("a payload shared with a run kept", func(t *testing.T) {
		s := stored(t, map[string]func(*storetest.Run){"run-a": padded("ab "), "run-b": padded("ab ")})
		removed, err := s.Remove(ctx, "run-a")
		if err != nil || removed.Shared < padBytes || removed.Freed >= padBytes/2 {
			t.Errorf("removing a run that shares its payload with a run kept: %+v, %v", removed, err)
		}
		// The last run to refer to it takes it along.
		removed, err = s.Remove(ctx, "run-b")
		if err != nil || removed.Shared != 0 || removed.Freed < padBytes*9/10 {
			t.Errorf("removing the last run of a payload: %+v, %v", removed, err)
		}
	})

	t.Run("another process reading the store", func(t *testing.T) {
		s := stored(t, map[string]func(*storetest.Run){"run-a": padded("ab "), "run-b": storetest.Finished})
		reader, err := sql.Open("sqlite", s.Path())
		if err != nil {
			t.Fatal(err)
		}
		defer reader.Close()
		read, err := reader.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var n int
		if err := read.QueryRowContext(ctx, "SELECT count(*) FROM runs").Scan(&n); err != nil {
			t.Fatal(err)
		}
		// A small run first: its deletion frees no page, but the store
		// compacted into the log waits there for the reader too.
		removed, err := s.Remove(ctx, "run-b")
		if err != nil || removed.Pending == 0 {
			t.Fatalf("removing a small run while another connection reads: %+v, %v", removed, err)
		}
		removed, err = s.Remove(ctx, "run-a")
		if err != nil || removed.Freed != 0 || removed.Pending < padBytes*9/10 {
			t.Fatalf("removing a run while another connection reads: %+v, %v", removed, err)
		}
		// Once no one else has the store open, the last connection to
		// close checkpoints the log and the space is back.
		waiting := storeBytes(t, s.Path())
		read.Rollback()
		reader.Close()
		s.Close()
		if after := storeBytes(t, s.Path()); after != waiting-removed.Pending {
			t.Errorf("the store was %d bytes, is %d once closed: %d given back, not the %d pending", waiting, after, waiting-after, removed.Pending)
		}
	})
}

// storeBytes is the size of the store file and its write-ahead log, which
// holds what was committed since the last checkpoint.
func storeBytes(t *testing.T, path string) int64 {
	t.Helper()
	var n int64
	for _, f := range []string{path, path + "-wal"} {
		info, err := os.Stat(f)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		n += info.Size()
	}
	return n
}

func runIDs(t *testing.T, s *store.Store) []string {
	t.Helper()
	runs, err := s.Runs(context.Background(), record.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range runs {
		ids = append(ids, r.ID)
	}
	return ids
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
