package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// applicationID marks a SQLite file as a run store ("STPW"), so that Open
// can tell its own empty store from someone else's database.
const applicationID = 0x53545057

// migrations bring the schema from version i to i+1; PRAGMA user_version
// holds how many have been applied. Append to the list, never edit an entry
// that has shipped.
//
// Times are Unix nanoseconds (NULL when unknown); payloads are JSON as the
// engine's payload types marshal.
//
// Every event is kept once, whole. The start and end events of a step or
// a tool call are kept together in its row of steps or tool_calls, not in
// events: a run of a large map is almost all such pairs, and one row in
// place of two is most of what keeps recording it cheap (Events merges
// them back). What those payloads and the run's run_start and run_end say
// (a step's tool, status and error; a run's inputs, output, exit and
// usage) is read from them rather than written twice; runs keeps what
// listing runs needs. Rows refer to their run by its integer key, and a
// step or tool call is keyed by its start's sequence number, so that the
// hot inserts append to their B-trees with integer comparisons.
var migrations = []string{
	`CREATE TABLE runs (
		key            INTEGER PRIMARY KEY,
		id             TEXT NOT NULL UNIQUE,
		plan           TEXT NOT NULL DEFAULT '',
		file           TEXT NOT NULL DEFAULT '',
		hash           TEXT NOT NULL DEFAULT '',
		parent         TEXT NOT NULL DEFAULT '',
		status         TEXT NOT NULL DEFAULT 'running',
		error          TEXT NOT NULL DEFAULT '',
		steps_executed INTEGER,
		calls          INTEGER NOT NULL DEFAULT 0,
		tokens         INTEGER NOT NULL DEFAULT 0,
		cost_usd       REAL,
		started_at     INTEGER,
		ended_at       INTEGER,
		start_seq      INTEGER, -- its run_start event
		end_seq        INTEGER, -- its run_end event
		last_seq       INTEGER NOT NULL DEFAULT 0,
		last_event_at  INTEGER,
		recorder       TEXT -- host:pid while a process records it
	);
	CREATE INDEX runs_by_start ON runs (started_at);
	CREATE INDEX runs_by_plan ON runs (plan, started_at);
	CREATE TABLE events (
		run     INTEGER NOT NULL REFERENCES runs (key) ON DELETE CASCADE,
		seq     INTEGER NOT NULL,
		time    INTEGER,
		path    TEXT NOT NULL,
		kind    TEXT NOT NULL,
		payload TEXT,
		PRIMARY KEY (run, seq)
	) WITHOUT ROWID;
	CREATE TABLE steps (
		run           INTEGER NOT NULL REFERENCES runs (key) ON DELETE CASCADE,
		seq           INTEGER NOT NULL, -- its step_start's; its step_end's when no start was recorded
		path          TEXT NOT NULL,
		started       INTEGER NOT NULL, -- whether seq is a step_start's
		started_at    INTEGER,
		start_payload TEXT,
		end_seq       INTEGER,
		ended_at      INTEGER,
		end_payload   TEXT,
		PRIMARY KEY (run, seq)
	) WITHOUT ROWID;
	CREATE TABLE tool_calls (
		run           INTEGER NOT NULL REFERENCES runs (key) ON DELETE CASCADE,
		seq           INTEGER NOT NULL, -- its tool_start's; its tool_end's when no start was recorded
		path          TEXT NOT NULL,
		started       INTEGER NOT NULL,
		started_at    INTEGER,
		start_payload TEXT,
		end_seq       INTEGER,
		ended_at      INTEGER,
		end_payload   TEXT,
		PRIMARY KEY (run, seq)
	) WITHOUT ROWID;`,
	// 2: the project a run belongs to, its root directory (absolute); one
	// store holds the runs of every project of a data directory. Runs
	// recorded before have none.
	`ALTER TABLE runs ADD COLUMN project TEXT NOT NULL DEFAULT '';
	CREATE INDEX runs_by_project ON runs (project, started_at);`,
	// 3: large payloads move out of the rows, and a step keeps the tool
	// call it made in its own row.
	//
	// A payload over blobBytes is kept whole in blobs, once per content
	// (keyed by its SHA-256), and its row holds the hash in the column's
	// _blob sibling and, in the column itself, the payload without its
	// value members (payloadSummary): what listing queries read. The
	// tables above are WITHOUT ROWID, and SQLite reads a record that
	// overflows its page whole whenever a seek compares against it, so a
	// 100 MB result in them made every later insert and lookup near it
	// read 100 MB. blobs is an ordinary rowid table, read only by hash.
	// run_blobs says which runs refer to a blob, so that removing runs
	// can remove the blobs no run refers to any more.
	//
	// A step that calls its tool (step_start, tool_start with the step's
	// input, tool_end, step_end with the tool's result) is one row: the
	// call's sequence numbers and times are in call_ columns, its start is
	// the step's input, and its end is call_ms with the step's result
	// (call_end_payload holds the whole tool_end when it says more: an
	// error, a result the step did not keep). Before, every such step was
	// written twice, once in steps and once in tool_calls.
	`ALTER TABLE events ADD COLUMN payload_blob TEXT;
	ALTER TABLE steps ADD COLUMN start_payload_blob TEXT;
	ALTER TABLE steps ADD COLUMN end_payload_blob TEXT;
	ALTER TABLE steps ADD COLUMN call_seq INTEGER;
	ALTER TABLE steps ADD COLUMN call_started_at INTEGER;
	ALTER TABLE steps ADD COLUMN call_end_seq INTEGER;
	ALTER TABLE steps ADD COLUMN call_ended_at INTEGER;
	ALTER TABLE steps ADD COLUMN call_ms TEXT; -- the tool_end's ms as it was written, when the step's result is the call's
	ALTER TABLE steps ADD COLUMN call_end_payload TEXT;
	ALTER TABLE steps ADD COLUMN call_end_payload_blob TEXT;
	ALTER TABLE tool_calls ADD COLUMN start_payload_blob TEXT;
	ALTER TABLE tool_calls ADD COLUMN end_payload_blob TEXT;
	CREATE TABLE blobs (
		hash TEXT PRIMARY KEY, -- SHA-256 of data, hex
		size INTEGER NOT NULL,
		data TEXT NOT NULL
	);
	CREATE TABLE run_blobs (
		run  INTEGER NOT NULL REFERENCES runs (key) ON DELETE CASCADE,
		hash TEXT NOT NULL,
		PRIMARY KEY (run, hash)
	) WITHOUT ROWID;
	CREATE INDEX run_blobs_by_hash ON run_blobs (hash);`,
	// 4: events, steps and tool_calls become rowid tables, found by
	// (run, seq) through a unique index. SQLite keeps up to about 2 KiB of
	// a WITHOUT ROWID record in its page (8 KiB pages) and the rest in an
	// overflow page of its own, mostly empty and written twice (to the log,
	// then to the file at the checkpoint); a rowid table keeps a record of
	// up to 8 KiB whole in its page, and appends it at the end of the
	// table. A run passes its values on from step to step, so its rows are
	// as large as those values, and a chain of kilobyte values wrote 8 MB
	// for 5 MB of payloads.
	`CREATE TABLE events_4 (
		run          INTEGER NOT NULL REFERENCES runs (key) ON DELETE CASCADE,
		seq          INTEGER NOT NULL,
		time         INTEGER,
		path         TEXT NOT NULL,
		kind         TEXT NOT NULL,
		payload      TEXT,
		payload_blob TEXT,
		UNIQUE (run, seq)
	);
	INSERT INTO events_4 (run, seq, time, path, kind, payload, payload_blob)
		SELECT run, seq, time, path, kind, payload, payload_blob FROM events;
	DROP TABLE events;
	ALTER TABLE events_4 RENAME TO events;
	CREATE TABLE steps_4 (
		run                   INTEGER NOT NULL REFERENCES runs (key) ON DELETE CASCADE,
		seq                   INTEGER NOT NULL, -- its step_start's; its step_end's when no start was recorded
		path                  TEXT NOT NULL,
		started               INTEGER NOT NULL, -- whether seq is a step_start's
		started_at            INTEGER,
		start_payload         TEXT,
		start_payload_blob    TEXT,
		end_seq               INTEGER,
		ended_at              INTEGER,
		end_payload           TEXT,
		end_payload_blob      TEXT,
		call_seq              INTEGER,
		call_started_at       INTEGER,
		call_end_seq          INTEGER,
		call_ended_at         INTEGER,
		call_ms               TEXT, -- the tool_end's ms as it was written, when the step's result is the call's
		call_end_payload      TEXT,
		call_end_payload_blob TEXT,
		UNIQUE (run, seq)
	);
	INSERT INTO steps_4 (run, seq, path, started, started_at, start_payload, start_payload_blob, end_seq, ended_at, end_payload, end_payload_blob,
			call_seq, call_started_at, call_end_seq, call_ended_at, call_ms, call_end_payload, call_end_payload_blob)
		SELECT run, seq, path, started, started_at, start_payload, start_payload_blob, end_seq, ended_at, end_payload, end_payload_blob,
			call_seq, call_started_at, call_end_seq, call_ended_at, call_ms, call_end_payload, call_end_payload_blob FROM steps;
	DROP TABLE steps;
	ALTER TABLE steps_4 RENAME TO steps;
	CREATE TABLE tool_calls_4 (
		run                INTEGER NOT NULL REFERENCES runs (key) ON DELETE CASCADE,
		seq                INTEGER NOT NULL, -- its tool_start's; its tool_end's when no start was recorded
		path               TEXT NOT NULL,
		started            INTEGER NOT NULL,
		started_at         INTEGER,
		start_payload      TEXT,
		start_payload_blob TEXT,
		end_seq            INTEGER,
		ended_at           INTEGER,
		end_payload        TEXT,
		end_payload_blob   TEXT,
		UNIQUE (run, seq)
	);
	INSERT INTO tool_calls_4 (run, seq, path, started, started_at, start_payload, start_payload_blob, end_seq, ended_at, end_payload, end_payload_blob)
		SELECT run, seq, path, started, started_at, start_payload, start_payload_blob, end_seq, ended_at, end_payload, end_payload_blob FROM tool_calls;
	DROP TABLE tool_calls;
	ALTER TABLE tool_calls_4 RENAME TO tool_calls;`,
}

// schemaVersion is the schema version this build writes.
var schemaVersion = len(migrations)

// migrate checks that the file is a run store (or empty) and brings its
// schema up to date, in one IMMEDIATE transaction so that two processes
// opening a new store at once do not both create it.
func (s *Store) migrate(ctx context.Context) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	var app, version int
	if err := conn.QueryRowContext(ctx, "PRAGMA application_id").Scan(&app); err != nil {
		return err
	}
	if err := conn.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return err
	}
	if app == applicationID && version == schemaVersion {
		return nil
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// Read again under the write lock: another process may have migrated.
	if err := tx.QueryRowContext(ctx, "PRAGMA application_id").Scan(&app); err != nil {
		return err
	}
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return err
	}
	switch {
	case app == applicationID:
	case app != 0:
		return fmt.Errorf("%w: it is an SQLite database of another application (application_id %#x)", ErrNotStore, app)
	default:
		tables, err := userTables(ctx, tx)
		if err != nil {
			return err
		}
		if len(tables) > 0 {
			return fmt.Errorf("%w: it is an SQLite database with other tables (%s)", ErrNotStore, strings.Join(tables, ", "))
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id = %d", applicationID)); err != nil {
			return err
		}
	}
	if version > schemaVersion {
		return fmt.Errorf("schema version %d is newer than this stepwise knows (%d); use a newer stepwise", version, schemaVersion)
	}
	for v := version; v < schemaVersion; v++ {
		if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
			return fmt.Errorf("migrating the schema to version %d: %w", v+1, err)
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", schemaVersion)); err != nil {
		return err
	}
	return tx.Commit()
}

// userTables lists the tables of a database, SQLite's own left out.
func userTables(ctx context.Context, tx *sql.Tx) ([]string, error) {
	rows, err := tx.QueryContext(ctx, "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		names = append(names, n)
	}
	return names, rows.Err()
}
