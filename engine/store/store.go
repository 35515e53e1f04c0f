// Package store is the run store: every event of every run, with the run's
// record (plan, hash, inputs, outcome, usage), each step's input, result
// and error, and each tool call, kept in one SQLite file per data directory
// (modernc.org/sqlite, no cgo).
//
// A Recorder is the engine.Sink that writes a run as it happens. The engine
// waits on the disk only when it outruns it: events are queued in memory
// (a bounded queue), an encoder goroutine encodes their payloads and a
// writer goroutine commits them in batches as soon as they arrive, so a
// process that dies mid-run (even by SIGKILL) leaves every committed
// event readable. Such a run has no end: it shows as running, and as
// interrupted once the process that recorded it is known to be gone. A run's events are kept in segments, a row for each few
// hundred, and large values once per content in a table of their own.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	sqlite "modernc.org/sqlite"
)

// FileName is the name of the store file in a data directory.
const FileName = "stepwise.db"

// DefaultPath is the store file of a data directory.
func DefaultPath(dataDir string) string {
	return filepath.Join(dataDir, FileName)
}

// Store is an open run store. It is safe for concurrent use; each Recorder
// writes through its own connection, and readers never wait on writers
// (WAL mode).
type Store struct {
	db   *sql.DB
	path string
	// self identifies this process to the runs it records ("host:pid"),
	// so that a reader can tell a run whose process is gone.
	self string
	host string

	mu        sync.Mutex
	recorders map[*Recorder]struct{}
	closed    bool

	// freeBlocks holds written queue blocks for reuse (Store.block).
	freeBlocks chan *block
	// spare is the largest buffer of a payload kept apart that a
	// Recorder wrote, for the next such payload to be encoded into: a
	// Recorder records one run, and the next run's Recorder would grow
	// it again (Recorder.encode).
	spare chan []byte

	// checkpoints wakes the checkpointer (Store.checkpointer), which
	// moves what Recorders committed to the write-ahead log into the
	// file; it is closed when the store closes, and checkpointerDone
	// once the checkpointer has stopped.
	checkpoints      chan struct{}
	checkpointerDone chan struct{}
	checkpointMu     sync.Mutex // held by the checkpoint being made
	// logged is how many bytes Recorders committed to the log since the
	// last checkpoint that moved all of it.
	logged atomic.Int64
}

// ErrNotStore is wrapped by the error Open returns for a file that is not a
// run store (another SQLite database, or not a database at all).
var ErrNotStore = errors.New("not a stepwise run store")

// sqliteNotADB is SQLite's SQLITE_NOTADB result code: the file exists and
// is not a database.
const sqliteNotADB = 26

// Open opens the store at path, creating the file, its directory and the
// schema when they do not exist, and migrating an older schema. A file that
// is not a run store is an error that names it and wraps ErrNotStore.
func Open(path string) (*Store, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("run store %s: %w", path, err)
	}
	if info, err := os.Stat(abs); err == nil && info.IsDir() {
		return nil, fmt.Errorf("run store %s is a directory: %w", path, ErrNotStore)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return nil, fmt.Errorf("run store %s: %w", path, err)
	}
	db, err := sql.Open("sqlite", dsn(abs))
	if err != nil {
		return nil, fmt.Errorf("run store %s: %w", path, err)
	}
	host, _ := os.Hostname()
	s := &Store{db: db, path: path, host: host, self: host + ":" + strconv.Itoa(os.Getpid()), recorders: map[*Recorder]struct{}{},
		freeBlocks: make(chan *block, maxFreeBlocks), spare: make(chan []byte, 1),
		checkpoints: make(chan struct{}, 1), checkpointerDone: make(chan struct{})}
	if err := s.migrate(context.Background()); err != nil {
		db.Close()
		var se *sqlite.Error
		if errors.As(err, &se) && se.Code()&0xff == sqliteNotADB {
			return nil, fmt.Errorf("%s is %w: the file is not an SQLite database", path, ErrNotStore)
		}
		if errors.Is(err, ErrNotStore) {
			return nil, fmt.Errorf("%s is %w", path, err)
		}
		return nil, fmt.Errorf("run store %s: %w", path, err)
	}
	go s.checkpointer()
	return s, nil
}

// busyTimeoutMs is how long a connection waits on a lock before failing.
const busyTimeoutMs = 10_000

// dsn is the connection string: every connection waits on a lock rather
// than failing (busy_timeout), enforces foreign keys, and writes in WAL mode
// with synchronous=NORMAL, which in WAL mode loses no committed transaction
// when the process dies (only, at worst, the last ones on power loss), and
// spares each commit an fsync. Write transactions begin IMMEDIATE so that
// two writers queue on the lock instead of failing to upgrade it.
func dsn(abs string) string {
	q := url.Values{}
	q.Set("_busy_timeout", strconv.Itoa(busyTimeoutMs))
	// 16 KiB pages write a run's segments (tens of kilobytes each) to
	// the log and the file in half the system calls of 8 KiB ones, which
	// cost more than the bytes where calls are slow, at most 16 KiB a
	// commit more. The driver sets it before journal_mode, as it must
	// be: it only applies to a new file, and a store made with other
	// pages keeps them (TestPageSize).
	q.Add("_pragma", "page_size(16384)")
	q.Set("_foreign_keys", "1")
	q.Set("_journal_mode", "WAL")
	q.Set("_synchronous", "NORMAL")
	q.Set("_txlock", "immediate")
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: q.Encode()}
	if !strings.HasPrefix(u.Path, "/") {
		// A Windows path (C:/...) still needs the empty authority.
		u.Path = "/" + u.Path
	}
	return u.String()
}

// Path is the file the store was opened from, as given to Open.
func (s *Store) Path() string { return s.path }

// Close flushes and closes every Recorder still open, then closes the
// database. It returns the first error among them.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	open := make([]*Recorder, 0, len(s.recorders))
	for r := range s.recorders {
		open = append(open, r)
	}
	s.mu.Unlock()
	var first error
	for _, r := range open {
		if err := r.Close(); err != nil && first == nil {
			first = err
		}
	}
	close(s.checkpoints)
	<-s.checkpointerDone
	if err := s.db.Close(); err != nil && first == nil {
		first = err
	}
	return first
}
