package store

import "context"

// A Recorder's writer commits with SQLite's automatic checkpoint turned
// off on its connection, and leaves checkpoints to the checkpointer, a
// goroutine of the Store's own. A checkpoint waits for the disk twice
// (it syncs the log, then the file); made by the writer, as SQLite makes
// it at the commit that passes its threshold, that wait held up the
// writer, and the engine behind it once the queue was full: a third of
// the time recording a 10,000-item map took. WAL mode lets a checkpoint
// run beside a writer.
//
// The log stays bounded all the same: once Recorders have committed
// checkpointBytes since the last checkpoint that moved everything, the
// checkpointer is woken; should it fall behind by maxLoggedBytes, the
// writer that finds it so checkpoints itself before its next batch.
const (
	checkpointBytes = 8 << 20
	maxLoggedBytes  = 64 << 20
)

// committed notes that a Recorder committed n bytes to the log, wakes the
// checkpointer when they are due a checkpoint, and reports whether the
// checkpointer is so far behind that the writer should checkpoint itself.
func (s *Store) committed(n int) (overdue bool) {
	logged := s.logged.Add(int64(n))
	if logged >= checkpointBytes {
		select {
		case s.checkpoints <- struct{}{}:
		default: // already woken
		}
	}
	return logged >= maxLoggedBytes
}

// checkpointer checks the log in whenever it is woken, until the store
// closes (SQLite checkpoints as the last connection closes).
func (s *Store) checkpointer() {
	defer close(s.checkpointerDone)
	for range s.checkpoints {
		s.checkpoint(context.Background())
	}
}

// checkpoint moves what the log holds into the file, without waiting for
// readers or writers (PASSIVE): frames a reader still needs stay in the
// log for the next one. An error is left for the next checkpoint, or the
// one SQLite makes on close, to mend: nothing is lost meanwhile, the log
// only grows.
func (s *Store) checkpoint(ctx context.Context) {
	_, _ = s.checkpointIn(ctx, s.db, "PASSIVE")
}

// checkpointIn makes a checkpoint in mode (PASSIVE, or TRUNCATE to give
// the log's space back too), one at a time: SQLite refuses a checkpoint
// while another runs rather than waiting for it. It reports whether the
// log was moved whole: pages a reader still needs stay in it. q is the
// store's pool, or a connection of it with a busy timeout of its own.
func (s *Store) checkpointIn(ctx context.Context, q querier, mode string) (whole bool, err error) {
	s.checkpointMu.Lock()
	defer s.checkpointMu.Unlock()
	logged := s.logged.Load()
	var busy, frames, moved int
	if err := q.QueryRowContext(ctx, "PRAGMA wal_checkpoint("+mode+")").Scan(&busy, &frames, &moved); err != nil {
		return false, err
	}
	if busy != 0 || moved != frames {
		return false, nil
	}
	s.logged.Add(-logged)
	return true, nil
}
