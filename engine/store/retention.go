package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"
)

// ErrRecording is why a run that a live process is still recording is not
// removed.
type ErrRecording struct{ ID string }

func (e *ErrRecording) Error() string {
	return fmt.Sprintf("run %s is being recorded by a process that is still running; stop it first", e.ID)
}

// ReclaimError is a deletion that was committed, whose space could not be
// given back to the file system: the runs are gone, and the next deletion
// tries again (each compacts the whole store).
type ReclaimError struct{ Err error }

func (e *ReclaimError) Error() string {
	return "the space was not given back: " + e.Err.Error()
}

func (e *ReclaimError) Unwrap() error { return e.Err }

// Removed is what Remove or Prune deleted, and what Prune left.
type Removed struct {
	// Runs are the runs deleted, each once.
	Runs []RemovedRun
	// Freed is how many bytes the store's files (the database and its
	// write-ahead log) shrank by as the space was given back; 0 when
	// they did not: when what the runs held freed no whole page of the
	// file (a page holds several small runs' records), when it is
	// Pending, or when another process wrote to the files meanwhile.
	Freed int64
	// Pending is how many bytes more the files shrink by, from their
	// size as the deletion ended, once no other process has the store
	// open: one was reading it, so the checkpoint that gives the space
	// back could not move the compacted database out of the log (nor
	// what an earlier deletion under such a reader left there); SQLite's
	// checkpoint as the last connection closes does.
	Pending int64
	// Shared is how many bytes of the large payloads the runs referred
	// to stay in the store because runs not deleted refer to them too.
	Shared int64
	// KeptNewest and KeptRecording count the runs Prune left that
	// started before its time: those among the newest of their project
	// it was told to keep, and the others, which a live process is still
	// recording.
	KeptNewest, KeptRecording int
}

// RemovedRun is one run deleted.
type RemovedRun struct {
	ID string
	// Project is the root directory of the run's project; empty for a
	// run outside any project.
	Project string
}

// IDs are the ids of the runs deleted.
func (r Removed) IDs() []string {
	ids := make([]string, len(r.Runs))
	for i, run := range r.Runs {
		ids[i] = run.ID
	}
	return ids
}

// Remove deletes the runs ids name (full ids, or prefixes one run begins
// with), their events, and gives the space back to
// the file system. It removes nothing when one of them is unknown,
// ambiguous or still being recorded, and says which. A run named twice
// (by its id and a prefix of it, say) is deleted, and told, once.
func (s *Store) Remove(ctx context.Context, ids ...string) (Removed, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return Removed{}, err
	}
	defer tx.Rollback()
	var keys []int64
	var runs []RemovedRun
	for _, id := range ids {
		key, err := s.resolve(ctx, tx, id)
		if err != nil {
			return Removed{}, err
		}
		if slices.Contains(keys, key) {
			continue
		}
		run, recorder, err := runIdentity(ctx, tx, key)
		if err != nil {
			return Removed{}, err
		}
		if !s.recorderGone(recorder) {
			return Removed{}, &ErrRecording{ID: run.ID}
		}
		keys, runs = append(keys, key), append(runs, run)
	}
	return s.deleteAndReclaim(ctx, tx, keys, runs)
}

// Prune deletes the runs that started before olderThan, but for the keep
// most recent runs of each project, and no run still being recorded; it
// gives the space back and says what it removed, and how many runs that
// started before olderThan it left, and why. project, when not empty,
// limits it to that project's runs. The runs of spare (ids) stay whatever
// their age, untold: a replay or fork prunes as it starts, and its parent
// is read by inspect and diff after it.
func (s *Store) Prune(ctx context.Context, olderThan time.Time, keep int, project string, spare ...string) (Removed, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return Removed{}, err
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT key, id, recorder, project, newest <= ?3 FROM (
		SELECT key, id, recorder, project, started_at,
			row_number() OVER (PARTITION BY project ORDER BY started_at DESC, id DESC) AS newest
		FROM runs WHERE (?1 = '' OR project = ?1))
		WHERE started_at < ?2`, project, olderThan.UnixNano(), keep)
	if err != nil {
		return Removed{}, err
	}
	var keys []int64
	var runs []RemovedRun
	var keptNewest, keptRecording int
	for rows.Next() {
		var key int64
		var run RemovedRun
		var recorder sql.NullString
		var newest bool
		if err := rows.Scan(&key, &run.ID, &recorder, &run.Project, &newest); err != nil {
			rows.Close()
			return Removed{}, err
		}
		switch {
		case slices.Contains(spare, run.ID):
		case newest:
			keptNewest++
		case !s.recorderGone(recorder.String):
			keptRecording++
		default:
			keys, runs = append(keys, key), append(runs, run)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return Removed{}, err
	}
	removed := Removed{}
	if len(keys) > 0 {
		removed, err = s.deleteAndReclaim(ctx, tx, keys, runs)
	}
	removed.KeptNewest, removed.KeptRecording = keptNewest, keptRecording
	return removed, err
}

// deleteAndReclaim deletes the runs of keys, which are runs, commits tx
// and gives the space back, measuring how much. A failure once the
// deletion is committed is a *ReclaimError, with the runs removed.
func (s *Store) deleteAndReclaim(ctx context.Context, tx *sql.Tx, keys []int64, runs []RemovedRun) (Removed, error) {
	before := s.filesSize()
	shared, err := deleteRuns(ctx, tx, keys)
	if err != nil {
		return Removed{}, err
	}
	if err := tx.Commit(); err != nil {
		return Removed{}, err
	}
	removed := Removed{Runs: runs, Shared: shared}
	whole, err := s.reclaim(ctx)
	if err != nil {
		return removed, &ReclaimError{Err: err}
	}
	removed.Freed = max(0, before-s.filesSize())
	if !whole {
		// The compacted database waits in the log: the files come down
		// to its size once the log is checkpointed.
		var compacted int64
		if err := s.db.QueryRowContext(ctx, "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()").Scan(&compacted); err != nil {
			return removed, &ReclaimError{Err: err}
		}
		removed.Pending = max(0, s.filesSize()-compacted)
	}
	return removed, nil
}

// filesSize is the size of the database file and its write-ahead log.
func (s *Store) filesSize() int64 {
	var size int64
	for _, name := range []string{s.path, s.path + "-wal"} {
		if info, err := os.Stat(name); err == nil {
			size += info.Size()
		}
	}
	return size
}

func runIdentity(ctx context.Context, q querier, key int64) (run RemovedRun, recorder string, err error) {
	var rec sql.NullString
	err = q.QueryRowContext(ctx, "SELECT id, project, recorder FROM runs WHERE key = ?", key).Scan(&run.ID, &run.Project, &rec)
	return run, rec.String, err
}

// deleteRuns deletes runs by key; their segments and references to blobs
// go with them (ON DELETE CASCADE), and so do the
// blobs no run left refers to. shared is the size of the blobs they
// referred to that other runs still do.
func deleteRuns(ctx context.Context, tx *sql.Tx, keys []int64) (shared int64, err error) {
	for _, key := range keys {
		if _, err := tx.ExecContext(ctx, `CREATE TEMP TABLE IF NOT EXISTS released (hash TEXT PRIMARY KEY) WITHOUT ROWID`); err != nil {
			return 0, err
		}
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO released SELECT hash FROM run_blobs WHERE run = ?`, key); err != nil {
			return 0, err
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM runs WHERE key = ?", key); err != nil {
			return 0, err
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM blobs WHERE hash IN (SELECT hash FROM released)
		AND NOT EXISTS (SELECT 1 FROM run_blobs WHERE run_blobs.hash = blobs.hash)`); err != nil {
		return 0, err
	}
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(sum(size), 0) FROM blobs WHERE hash IN (SELECT hash FROM released)`).Scan(&shared); err != nil {
		return 0, err
	}
	_, err = tx.ExecContext(ctx, "DELETE FROM released")
	return shared, err
}

// reclaim gives the pages deleted runs held back to the file system.
// VACUUM rewrites the database into the write-ahead log; the checkpoint
// copies it back and truncates both the file and the log, without which
// the file keeps its size until a later checkpoint. It reports whether
// the checkpoint moved the log whole: it cannot while another process
// reads the store (it waits the busy timeout for that reader first).
func (s *Store) reclaim(ctx context.Context) (whole bool, err error) {
	if _, err := s.db.ExecContext(ctx, "VACUUM"); err != nil {
		return false, err
	}
	// The checkpoint waits for every reader of the log to let it go. One
	// holding a transaction open (a sqlite3 shell, say) would keep the
	// command waiting the whole busy timeout, saying nothing; a second is
	// time enough for a reader that is reading, and the space of one that
	// is not comes back once it closes (Removed.Pending).
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return false, err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "PRAGMA busy_timeout = 1000"); err != nil {
		return false, err
	}
	// The connection goes back to the pool as the pool's others are.
	defer conn.ExecContext(context.Background(), "PRAGMA busy_timeout = "+strconv.Itoa(busyTimeoutMs))
	return s.checkpointIn(ctx, conn, "TRUNCATE")
}
