package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/stepwise-dev/stepwise/engine"
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
// Versions 1 to 4 kept every event once, whole, a step's or a tool call's
// start and end together in its row of steps or tool_calls, the others in
// events; since version 5 a run's events are kept in segments (see there
// and segment.go), and runs keeps what listing runs needs. Rows refer to
// their run by its integer key.
var migrations = []migration{
	{sql: `CREATE TABLE runs (
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
	) WITHOUT ROWID;`},
	// 2: the project a run belongs to, its root directory (absolute); one
	// store holds the runs of every project of a data directory. Runs
	// recorded before have none.
	{sql: `ALTER TABLE runs ADD COLUMN project TEXT NOT NULL DEFAULT '';
	CREATE INDEX runs_by_project ON runs (project, started_at);`},
	// 3: large payloads move out of the rows, and a step keeps the tool
	// call it made in its own row.
	//
	// A payload over blobBytes is kept whole in blobs, once per content
	// (keyed by its SHA-256), and its row holds the hash in the column's
	// _blob sibling and, in the column itself, the payload without its
	// value members: what listing queries read. The
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
	{sql: `ALTER TABLE events ADD COLUMN payload_blob TEXT;
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
	CREATE INDEX run_blobs_by_hash ON run_blobs (hash);`},
	// 4: events, steps and tool_calls become rowid tables, found by
	// (run, seq) through a unique index. SQLite keeps up to about 2 KiB of
	// a WITHOUT ROWID record in its page (8 KiB pages) and the rest in an
	// overflow page of its own, mostly empty and written twice (to the log,
	// then to the file at the checkpoint); a rowid table keeps a record of
	// up to 8 KiB whole in its page, and appends it at the end of the
	// table. A run passes its values on from step to step, so its rows are
	// as large as those values, and a chain of kilobyte values wrote 8 MB
	// for 5 MB of payloads.
	{sql: `CREATE TABLE events_4 (
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
	ALTER TABLE tool_calls_4 RENAME TO tool_calls;`},
	// 5: a run's events are kept in segments, each row as many of its
	// events as a writer's transaction committed (up to segmentEvents or
	// segmentBytes), encoded into one BLOB (segment.go), in place of a row
	// per event, step or tool call: SQLite's cost per row (binding a
	// dozen values, the B-tree insert) was most of what recording a large
	// map cost. A run's record is built from its events when it is read.
	// runs keeps what listing needs, steps_ended the progress of a run
	// still running; start_seq and end_seq are no longer needed, the
	// record being read from all the events.
	//
	// The events the old tables hold are turned into segments by Go code
	// (version4Segments) inside the migration's transaction: the segment
	// is a binary form that SQL cannot write, and writing it with the one
	// encoder the Recorder uses keeps one format and one reader.
	{sql: `CREATE TABLE segments (
		run       INTEGER NOT NULL REFERENCES runs (key) ON DELETE CASCADE,
		first_seq INTEGER NOT NULL,
		last_seq  INTEGER NOT NULL,
		data      BLOB NOT NULL,
		UNIQUE (run, first_seq)
	);
	ALTER TABLE runs ADD COLUMN steps_ended INTEGER NOT NULL DEFAULT 0;
	UPDATE runs SET steps_ended = (SELECT count(*) FROM steps WHERE steps.run = runs.key AND end_seq IS NOT NULL);`,
		convert: version4Segments},
	// 6: what listing marks a run with: how many decisions a person made
	// at its stops (its decided events), and how long some thread of it
	// was held at a stop (its run_end's held_ms). Runs recorded before
	// have neither: their records did not say.
	{sql: `ALTER TABLE runs ADD COLUMN decided INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE runs ADD COLUMN held_ms REAL;`},
	// 7: how a run was made (its run_start's made: run, debug, replay,
	// fork) and its inputs (as JSON), which a runs list shows beside it.
	// Runs recorded before have neither in the row; their detail still
	// has their inputs, read from their run_start.
	{sql: `ALTER TABLE runs ADD COLUMN made TEXT NOT NULL DEFAULT '';
	ALTER TABLE runs ADD COLUMN inputs TEXT NOT NULL DEFAULT '';`},
	// 8: inputs over blobBytes are kept in blobs (the piece the run_start
	// keeps there), named by inputs_blob, and inputs is then empty: a
	// run's row is rewritten whole by every batch that records its
	// progress, and a 10,000-item input made each batch write it again.
	{sql: `ALTER TABLE runs ADD COLUMN inputs_blob TEXT;`},
}

// migration is one step of the schema: its SQL, then, when set, convert,
// in the same transaction, for what SQL does not do.
type migration struct {
	sql     string
	convert func(ctx context.Context, tx *sql.Tx) error
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
		m := migrations[v]
		_, err := tx.ExecContext(ctx, m.sql)
		if err == nil && m.convert != nil {
			err = m.convert(ctx, tx)
		}
		if err != nil {
			return fmt.Errorf("migrating the schema to version %d: %w", v+1, err)
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", schemaVersion)); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	if version > 0 {
		// A migration rewrites the runs it keeps (version 5 put every
		// run's events into segments), and the pages the old rows held
		// would stay in the file until a prune reclaimed them. Giving
		// them back is worth an open's time once; a store another process
		// holds open cannot be vacuumed now, and keeps them until then.
		s.reclaim(ctx)
	}
	return nil
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

// version4Segments writes the events of every run the tables of schema 4
// hold into segments, then drops those tables. The events are read as
// schema 4's reader read them (version4Events), their payloads whole.
func version4Segments(ctx context.Context, tx *sql.Tx) error {
	var keys []int64
	rows, err := tx.QueryContext(ctx, "SELECT key FROM runs ORDER BY key")
	if err != nil {
		return err
	}
	for rows.Next() {
		var k int64
		if err := rows.Scan(&k); err != nil {
			rows.Close()
			return err
		}
		keys = append(keys, k)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	var seg segment
	for _, key := range keys {
		if err := version4Run(ctx, tx, key, &seg); err != nil {
			return fmt.Errorf("run %d: %w", key, err)
		}
	}
	_, err = tx.ExecContext(ctx, `DROP TABLE events; DROP TABLE steps; DROP TABLE tool_calls;
		ALTER TABLE runs DROP COLUMN start_seq; ALTER TABLE runs DROP COLUMN end_seq;`)
	return err
}

// version4Run writes the events of one run of schema 4 into segments.
func version4Run(ctx context.Context, tx *sql.Tx, key int64, seg *segment) error {
	rows, err := tx.QueryContext(ctx, version4Events+" ORDER BY 1", key)
	if err != nil {
		return err
	}
	defer rows.Close()
	flush := func() error {
		if seg.events == 0 {
			return nil
		}
		_, err := tx.ExecContext(ctx, insertSegment, key, int64(seg.firstSeq), int64(seg.last), seg.buf)
		seg.reset()
		return err
	}
	seg.reset()
	for rows.Next() {
		var seq int64
		var at sql.NullInt64
		var path, kind string
		var payload sql.NullString
		if err := rows.Scan(&seq, &at, &path, &kind, &payload); err != nil {
			return err
		}
		if seg.full() {
			if err := flush(); err != nil {
				return err
			}
		}
		var p []byte
		if payload.Valid {
			p = []byte(payload.String)
		}
		var t int64
		if at.Valid {
			t = at.Int64
		}
		seg.appendEvent(uint64(seq), t, engine.EventKind(kind), path, p, unknownValue)
		for _, b := range seg.blobs {
			if _, err := tx.ExecContext(ctx, insertBlob, b.hash, len(b.data), string(b.data)); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, insertRunBlob, key, b.hash); err != nil {
				return err
			}
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return flush()
}

// version4Events selects every event of run ?1 from the tables of schema
// 4, as its reader did: the events table's, and the start and end events
// the rows of steps and tool_calls hold, among them the tool calls steps
// kept in their rows (the start being the step's input under args, the
// end either whole in call_end_payload or the step's result with
// call_ms). A payload kept in blobs is read whole.
var version4Events = func() string {
	whole := func(column string) string {
		return "coalesce((SELECT data FROM blobs WHERE hash = " + column + "_blob), " + column + ")"
	}
	stepCalls := `SELECT call_seq AS seq, path, 1 AS started, call_started_at AS started_at,
		'{"tool":' || json_quote(start_payload ->> '$.tool') || ',"args":' || (` + whole("start_payload") + ` -> '$.input') || '}' AS start_payload,
		call_end_seq AS end_seq, call_ended_at AS ended_at,
		CASE WHEN call_ms IS NULL THEN ` + whole("call_end_payload") + `
			ELSE '{"tool":' || json_quote(end_payload ->> '$.tool') || ',"ms":' || call_ms || ',"is_error":false' ||
				coalesce(',"result":' || (` + whole("end_payload") + ` -> '$.result'), '') || '}' END AS end_payload
		FROM steps WHERE run = ?1 AND call_seq IS NOT NULL`
	toolCalls := `SELECT seq, path, started, started_at, ` + whole("start_payload") + ` AS start_payload,
		end_seq, ended_at, ` + whole("end_payload") + ` AS end_payload FROM tool_calls WHERE run = ?1
		UNION ALL ` + stepCalls
	return `SELECT seq, time, path, kind, ` + whole("payload") + ` FROM events WHERE run = ?1
	UNION ALL SELECT seq, started_at, path, 'step_start', ` + whole("start_payload") + ` FROM steps WHERE run = ?1 AND started
	UNION ALL SELECT end_seq, ended_at, path, 'step_end', ` + whole("end_payload") + ` FROM steps WHERE run = ?1 AND end_seq IS NOT NULL
	UNION ALL SELECT seq, started_at, path, 'tool_start', start_payload FROM (` + toolCalls + `) WHERE started
	UNION ALL SELECT end_seq, ended_at, path, 'tool_end', end_payload FROM (` + toolCalls + `) WHERE end_seq IS NOT NULL`
}()
