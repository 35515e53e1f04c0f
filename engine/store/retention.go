package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// ErrRecording is why a run that a live process is still recording is not
// removed.
type ErrRecording struct{ ID string }

func (e *ErrRecording) Error() string {
	return fmt.Sprintf("run %s is being recorded by a process that is still running; stop it first", e.ID)
}

// Remove deletes the runs ids name (full ids, or prefixes one run begins
// with), their events, and gives the space back to
// the file system. It removes nothing when one of them is unknown,
// ambiguous or still being recorded, and says which.
func (s *Store) Remove(ctx context.Context, ids ...string) (removed []string, err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	var keys []int64
	for _, id := range ids {
		key, err := s.resolve(ctx, tx, id)
		if err != nil {
			return nil, err
		}
		full, recorder, err := runIdentity(ctx, tx, key)
		if err != nil {
			return nil, err
		}
		if !s.recorderGone(recorder) {
			return nil, &ErrRecording{ID: full}
		}
		keys, removed = append(keys, key), append(removed, full)
	}
	if err := deleteRuns(ctx, tx, keys); err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	return removed, s.reclaim(ctx)
}

// Prune deletes the runs that started before olderThan, but for the keep
// most recent runs of each project, and no run still being recorded; it
// gives the space back and returns the ids it removed. project, when not
// empty, limits it to that project's runs.
func (s *Store) Prune(ctx context.Context, olderThan time.Time, keep int, project string) ([]string, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT key, id, recorder FROM (
		SELECT key, id, recorder, started_at,
			row_number() OVER (PARTITION BY project ORDER BY started_at DESC, id DESC) AS newest
		FROM runs WHERE (?1 = '' OR project = ?1))
		WHERE started_at < ?2 AND newest > ?3`, project, olderThan.UnixNano(), keep)
	if err != nil {
		return nil, err
	}
	var keys []int64
	var removed []string
	for rows.Next() {
		var key int64
		var id string
		var recorder sql.NullString
		if err := rows.Scan(&key, &id, &recorder); err != nil {
			rows.Close()
			return nil, err
		}
		if s.recorderGone(recorder.String) {
			keys, removed = append(keys, key), append(removed, id)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		return nil, nil
	}
	if err := deleteRuns(ctx, tx, keys); err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	return removed, s.reclaim(ctx)
}

func runIdentity(ctx context.Context, q querier, key int64) (id, recorder string, err error) {
	var rec sql.NullString
	err = q.QueryRowContext(ctx, "SELECT id, recorder FROM runs WHERE key = ?", key).Scan(&id, &rec)
	return id, rec.String, err
}

// deleteRuns deletes runs by key; their segments and references to blobs
// go with them (ON DELETE CASCADE), and so do the
// blobs no run left refers to.
func deleteRuns(ctx context.Context, tx *sql.Tx, keys []int64) error {
	for _, key := range keys {
		if _, err := tx.ExecContext(ctx, `CREATE TEMP TABLE IF NOT EXISTS released (hash TEXT PRIMARY KEY) WITHOUT ROWID`); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO released SELECT hash FROM run_blobs WHERE run = ?`, key); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM runs WHERE key = ?", key); err != nil {
			return err
		}
	}
	_, err := tx.ExecContext(ctx, `DELETE FROM blobs WHERE hash IN (SELECT hash FROM released)
		AND NOT EXISTS (SELECT 1 FROM run_blobs WHERE run_blobs.hash = blobs.hash)`)
	if err == nil {
		_, err = tx.ExecContext(ctx, "DELETE FROM released")
	}
	return err
}

// reclaim gives the pages deleted runs held back to the file system.
// VACUUM rewrites the database into the write-ahead log; the checkpoint
// copies it back and truncates both the file and the log, without which
// the file keeps its size until a later checkpoint, as it does when a
// reader still needs pages of the log.
func (s *Store) reclaim(ctx context.Context) error {
	if _, err := s.db.ExecContext(ctx, "VACUUM"); err != nil {
		return err
	}
	_, err := s.checkpointIn(ctx, "TRUNCATE")
	return err
}
