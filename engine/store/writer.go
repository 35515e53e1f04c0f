package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"slices"
	"strings"
	"time"
	"unsafe"

	"github.com/stepwise-dev/stepwise/engine"
)

// writer is the state of a Recorder's writer goroutine; nothing else
// touches it. A batch is encoded into segments of its runs' events, and
// each is inserted as soon as it is full, so that recording a large run
// needs memory for one segment, not for the batch.
type writer struct {
	store *Store
	// redaction hides secrets in the run rows' texts, which come from the
	// payloads' values, not their JSON.
	redaction *redaction
	conn      *sql.Conn
	// The statements every batch runs, prepared once (statements):
	// preparing one each time cost more than running it.
	begin, commit, insertSegment, insertBlob, insertRunBlob, updateProgress *sql.Stmt
	runs                                                                    map[string]*runState

	seg segment
	// stored is the blob a run was last given in the current batch: a
	// run's inputs are its row's blob and its run_start's piece, and are
	// bound once.
	stored runBlob
	// logged is how many bytes of rows the batch being written holds,
	// about what its commit adds to the write-ahead log (checkpoint.go).
	logged  int
	touched []*runState
	sorted  block // a batch put in order, when it came out of order
}

func newWriter(s *Store, rd *redaction) *writer {
	w := &writer{store: s, redaction: rd, runs: map[string]*runState{}}
	w.seg.reset()
	return w
}

// runState is what the writer knows of one run it records.
type runState struct {
	id      string
	key     int64 // runs.key, 0 until known
	inDB    bool  // its row exists (committed)
	touched bool  // has events in the current batch
	ended   bool

	start     *engine.RunStarted // a run_start in the current batch
	startedAt int64              // unixNanos
	inputs    []byte             // the JSON of its inputs, as the run_start's payload has it
	end       *engine.RunEnded   // a run_end in the current batch
	endedAt   int64

	lastSeq  uint64
	lastTime int64
	// The running totals of the steps ended and the model calls seen, so
	// that a run that never ends still lists its progress and what it
	// spent.
	stepsEnded int
	// decided counts the run's decided events.
	decided       int
	calls, tokens int
	cost          float64
	unpriced      bool
}

// payloadAs reads a payload of type T, given by value or by pointer.
func payloadAs[T any](p any) (T, bool) {
	switch v := p.(type) {
	case T:
		return v, true
	case *T:
		if v != nil {
			return *v, true
		}
	}
	var zero T
	return zero, false
}

// write commits one batch, the blocks the encoder handed on, in one
// transaction: its events in segments, and what they change about their
// runs' rows.
func (w *writer) write(blocks []*block) error {
	if len(blocks) == 0 {
		return nil
	}
	ctx := context.Background()
	if err := w.open(ctx); err != nil {
		return err
	}
	blocks = w.inOrder(blocks)
	defer w.reset()
	w.readRuns(blocks)

	if _, err := w.begin.ExecContext(ctx); err != nil {
		return err
	}
	err := w.apply(ctx, blocks)
	if err == nil {
		_, err = w.commit.ExecContext(ctx)
	}
	if err != nil {
		w.conn.ExecContext(ctx, "ROLLBACK")
		for _, rs := range w.touched {
			if !rs.inDB {
				rs.key = 0 // the row it named was rolled back
			}
		}
		return err
	}
	for _, rs := range w.touched {
		rs.inDB = true
		if rs.end != nil {
			rs.ended = true
		}
	}
	if w.store.committed(w.logged) {
		w.store.checkpoint(ctx)
	}
	return nil
}

// open takes the writer's connection and prepares its statements.
func (w *writer) open(ctx context.Context) error {
	if w.conn != nil {
		return nil
	}
	conn, err := w.store.db.Conn(ctx)
	if err != nil {
		return err
	}
	// The Store's checkpointer checkpoints what this connection commits
	// (checkpoint.go).
	if _, err := conn.ExecContext(ctx, "PRAGMA wal_autocheckpoint = 0"); err != nil {
		conn.Close()
		return err
	}
	for _, st := range w.statements() {
		if *st.stmt, err = conn.PrepareContext(ctx, st.query); err != nil {
			w.closeStatements()
			conn.Close()
			return err
		}
	}
	w.conn = conn
	return nil
}

// statement is one of the statements every batch runs, and its SQL.
type statement struct {
	stmt  **sql.Stmt
	query string
}

// statements are the statements every batch runs.
func (w *writer) statements() []statement {
	return []statement{
		{&w.begin, "BEGIN IMMEDIATE"},
		{&w.commit, "COMMIT"},
		{&w.insertSegment, insertSegment},
		{&w.insertBlob, insertBlob},
		{&w.insertRunBlob, insertRunBlob},
		{&w.updateProgress, updateProgress},
	}
}

// closeStatements closes the statements prepared so far.
func (w *writer) closeStatements() {
	for _, st := range w.statements() {
		if *st.stmt != nil {
			(*st.stmt).Close()
			*st.stmt = nil
		}
	}
}

// inOrder returns the blocks as they are when their events are grouped by
// run and in sequence order, as the engine gives them; otherwise one block
// put in that order (callers that interleave runs, or race each other).
func (w *writer) inOrder(blocks []*block) []*block {
	var prev *queuedEvent
	for _, b := range blocks {
		if len(b.events) == 0 {
			continue
		}
		if !b.ordered || prev != nil && eventOrder(prev, &b.events[0]) > 0 {
			return []*block{w.sort(blocks)}
		}
		prev = &b.events[len(b.events)-1]
	}
	return blocks
}

// sort puts the events of blocks in order into w.sorted.
func (w *writer) sort(blocks []*block) *block {
	type ref struct {
		b *block
		e *queuedEvent
	}
	var refs []ref
	for _, b := range blocks {
		for i := range b.events {
			refs = append(refs, ref{b, &b.events[i]})
		}
	}
	slices.SortStableFunc(refs, func(x, y ref) int { return eventOrder(x.e, y.e) })
	s := &w.sorted
	for _, r := range refs {
		e := *r.e
		e.lo = len(s.data)
		s.data = append(s.data, r.b.payload(r.e)...)
		e.hi = len(s.data)
		s.events = append(s.events, e)
	}
	return s
}

func eventOrder(a, b *queuedEvent) int {
	if c := strings.Compare(a.runID, b.runID); c != 0 {
		return c
	}
	switch {
	case a.seq < b.seq:
		return -1
	case a.seq > b.seq:
		return 1
	}
	return 0
}

// runBlob is a blob a run refers to.
type runBlob struct {
	key  int64
	hash string
}

// reset clears the per-batch state, keeping the capacity.
func (w *writer) reset() {
	w.seg.hashed, w.stored, w.logged = hashedPiece{}, runBlob{}, 0
	for _, rs := range w.touched {
		rs.touched, rs.start, rs.inputs, rs.end = false, nil, nil, nil
	}
	w.touched = w.touched[:0]
	clear(w.sorted.events)
	w.sorted.events, w.sorted.data = w.sorted.events[:0], w.sorted.data[:0]
	w.seg.reset()
}

func (w *writer) run(id string) *runState {
	rs, ok := w.runs[id]
	if !ok {
		rs = &runState{id: id}
		w.runs[id] = rs
	}
	if !rs.touched {
		rs.touched = true
		w.touched = append(w.touched, rs)
	}
	return rs
}

// readRuns reads what a batch says about its runs, which the run rows
// written before and after its segments hold.
func (w *writer) readRuns(blocks []*block) {
	// A batch's events are mostly one run's: its state is looked up when
	// the run changes, not for every event.
	var rs *runState
	for _, b := range blocks {
		for i := range b.events {
			e := &b.events[i]
			if rs == nil || rs.id != e.runID {
				rs = w.run(e.runID)
			}
			if e.seq > rs.lastSeq {
				rs.lastSeq, rs.lastTime = e.seq, e.time
			}
			switch e.kind {
			case engine.EventStepEnd:
				rs.stepsEnded++
			case engine.EventDecided:
				// Only a person's decisions mark the run decided by hand;
				// one a replay made again is the replay's.
				if p, ok := payloadAs[engine.Decided](e.payload); ok && p.Origin == "" {
					rs.decided++
				}
			case engine.EventRunStart:
				if p, ok := payloadAs[engine.RunStarted](e.payload); ok {
					rs.start, rs.startedAt, rs.inputs = &p, e.time, e.member(b.payload(e), "inputs")
				}
			case engine.EventRunEnd:
				if p, ok := payloadAs[engine.RunEnded](e.payload); ok {
					rs.end, rs.endedAt = &p, e.time
				}
			case engine.EventModelCall:
				if p, ok := payloadAs[engine.ModelCalled](e.payload); ok {
					rs.calls++
					rs.tokens += tokens(p.Usage.InputTokens, p.Usage.OutputTokens, p.Usage.CacheCreationInputTokens, p.Usage.CacheReadInputTokens)
					if p.CostUSD == nil {
						rs.unpriced = true
					} else {
						rs.cost += *p.CostUSD
					}
				}
			}
		}
	}
}

func tokens(counts ...int) int {
	n := 0
	for _, c := range counts {
		n += c
	}
	return n
}

// apply writes a batch inside the open transaction: the run rows first
// (the segments refer to them), then the segments, then what the batch
// changed about each run.
func (w *writer) apply(ctx context.Context, blocks []*block) error {
	for _, rs := range w.touched {
		if err := w.writeRunStart(ctx, rs); err != nil {
			return err
		}
	}
	var rs *runState
	for _, b := range blocks {
		for i := range b.events {
			e := &b.events[i]
			if rs == nil || rs.id != e.runID {
				rs = w.runs[e.runID]
			}
			if w.seg.run != rs || w.seg.full() {
				if err := w.flushSegment(ctx); err != nil {
					return err
				}
				w.seg.run = rs
			}
			w.seg.appendEvent(e.seq, e.time, e.kind, e.path, b.payload(e), e.value)
			for _, b := range w.seg.blobs {
				if err := w.storeBlob(ctx, rs.key, b); err != nil {
					return err
				}
			}
		}
	}
	if err := w.flushSegment(ctx); err != nil {
		return err
	}
	for _, rs := range w.touched {
		if err := w.writeProgress(ctx, rs); err != nil {
			return err
		}
	}
	return nil
}

// encodePayload appends a payload's JSON to b; nil stays nil. A payload
// that encoding/json refuses is kept as the reason it could not be
// recorded. value is where its value member lies (payloadEncoder.append),
// unknownValue when encoding/json wrote it.
func encodePayload(enc *payloadEncoder, b []byte, p any) (_ []byte, value cut) {
	if p == nil {
		return nil, cut{}
	}
	b, value, ok := enc.append(b, p)
	if ok {
		return b, value
	}
	j, err := json.Marshal(p)
	if err != nil {
		j, _ = json.Marshal(map[string]string{"unrecorded": err.Error()})
	}
	return append(b, j...), unknownValue
}

// The writes of a batch: a segment, a payload kept in blobs, a run's
// reference to it, and what the batch says of a run still running.
const (
	insertSegment  = "INSERT INTO segments (run, first_seq, last_seq, data) VALUES (?, ?, ?, ?)"
	insertBlob     = "INSERT INTO blobs (hash, size, data) VALUES (?, ?, ?) ON CONFLICT (hash) DO NOTHING"
	insertRunBlob  = "INSERT INTO run_blobs (run, hash) VALUES (?, ?) ON CONFLICT DO NOTHING"
	updateProgress = `UPDATE runs SET last_seq = max(last_seq, ?), last_event_at = ?, steps_ended = ?, decided = ?,
		calls = ?, tokens = ?, cost_usd = ? WHERE key = ?`
)

// storeBlob keeps a piece of a payload in blobs, once per content, as one
// that run key refers to.
func (w *writer) storeBlob(ctx context.Context, key int64, b blobPiece) error {
	if w.stored == (runBlob{key, b.hash}) {
		return nil
	}
	w.stored = runBlob{key, b.hash}
	w.logged += len(b.data)
	if _, err := w.insertBlob.ExecContext(ctx, b.hash, len(b.data), bufferText(b.data)); err != nil {
		return err
	}
	_, err := w.insertRunBlob.ExecContext(ctx, key, b.hash)
	return err
}

// flushSegment inserts the segment being encoded, if it holds events.
func (w *writer) flushSegment(ctx context.Context) error {
	g := &w.seg
	if g.events == 0 {
		return nil
	}
	_, err := w.insertSegment.ExecContext(ctx, g.run.key, int64(g.firstSeq), int64(g.last), g.buf)
	w.logged += len(g.buf)
	g.reset()
	return err
}

// writeRunStart writes the row of a run: its run_start's fields when the
// batch has it, or else a row for its events to belong to, and learns
// its key. Inputs over blobBytes are kept in blobs, as the run_start's
// own payload keeps them (the same piece, stored once), so that the row,
// which every listing reads and each batch's progress rewrites whole,
// stays small.
func (w *writer) writeRunStart(ctx context.Context, rs *runState) error {
	if p := rs.start; p != nil {
		inputs, inputsBlob := rs.inputs, blobPiece{}
		var blobHash any // NULL for inputs in the row
		if len(inputs) > blobBytes {
			inputsBlob, _ = w.seg.pieceOf(inputs)
			inputs, blobHash = nil, inputsBlob.hash
		}
		err := w.conn.QueryRowContext(ctx, `INSERT INTO runs (id, plan, file, project, hash, parent, made, inputs, inputs_blob, status, started_at, recorder)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', ?, ?)
			ON CONFLICT (id) DO UPDATE SET plan = excluded.plan, file = excluded.file, project = excluded.project, hash = excluded.hash,
				parent = excluded.parent, made = excluded.made, inputs = excluded.inputs, inputs_blob = excluded.inputs_blob,
				started_at = excluded.started_at, recorder = excluded.recorder
			RETURNING key`,
			rs.id, w.redaction.text(p.Plan), w.redaction.text(p.File), w.redaction.text(p.Project), p.Hash, p.Parent, string(p.Made),
			bufferText(inputs), blobHash, nanos(rs.startedAt), w.store.self).Scan(&rs.key)
		if err != nil || blobHash == nil {
			return err
		}
		return w.storeBlob(ctx, rs.key, inputsBlob)
	}
	if !rs.inDB {
		// Events of a run whose run_start this Recorder never saw still
		// get a row to belong to.
		_, err := w.conn.ExecContext(ctx, `INSERT INTO runs (id, status, started_at, recorder) VALUES (?, 'running', ?, ?)
			ON CONFLICT (id) DO NOTHING`, rs.id, nanos(rs.lastTime), w.store.self)
		if err != nil {
			return err
		}
	}
	if rs.key == 0 {
		return w.conn.QueryRowContext(ctx, "SELECT key FROM runs WHERE id = ?", rs.id).Scan(&rs.key)
	}
	return nil
}

func (w *writer) writeProgress(ctx context.Context, rs *runState) error {
	if rs.ended {
		// The run_end's report has the last word on what the run spent.
		_, err := w.conn.ExecContext(ctx, `UPDATE runs SET last_seq = max(last_seq, ?), last_event_at = ?, steps_ended = ?, decided = ? WHERE key = ?`,
			int64(rs.lastSeq), nanos(rs.lastTime), rs.stepsEnded, rs.decided, rs.key)
		return err
	}
	var cost any
	if rs.calls > 0 && !rs.unpriced {
		cost = rs.cost
	}
	_, err := w.updateProgress.ExecContext(ctx, int64(rs.lastSeq), nanos(rs.lastTime), rs.stepsEnded, rs.decided, rs.calls, rs.tokens, cost, rs.key)
	if err != nil || rs.end == nil {
		return err
	}
	p := rs.end
	u := p.Usage
	var usageCost any
	if u.CostUSD != nil {
		usageCost = *u.CostUSD
	}
	_, err = w.conn.ExecContext(ctx, `UPDATE runs SET status = ?, error = ?, steps_executed = ?, calls = ?, tokens = ?, cost_usd = ?,
		ended_at = ?, held_ms = ?, recorder = NULL WHERE key = ?`,
		p.Status, w.redaction.text(p.Error), p.StepsExecuted, u.Calls, tokens(u.InputTokens, u.OutputTokens, u.CacheCreationInputTokens, u.CacheReadInputTokens),
		usageCost, nanos(rs.endedAt), p.HeldMs, rs.key)
	return err
}

// finish marks the runs this writer recorded that did not end as no longer
// being recorded (a reader then calls them interrupted), and lets the
// connection go.
func (w *writer) finish() error {
	ctx := context.Background()
	var first error
	for _, rs := range w.runs {
		if rs.ended || !rs.inDB || w.conn == nil {
			continue
		}
		if _, err := w.conn.ExecContext(ctx, "UPDATE runs SET recorder = NULL WHERE key = ? AND recorder = ?", rs.key, w.store.self); err != nil && first == nil {
			first = err
		}
	}
	if w.conn != nil {
		w.closeStatements()
		// The connection goes back to the pool as it came, checkpointing
		// at SQLite's default threshold.
		if _, err := w.conn.ExecContext(ctx, "PRAGMA wal_autocheckpoint = 1000"); err != nil && first == nil {
			first = err
		}
		if err := w.conn.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// bufferText is a payload buffer as a string, without a copy: large
// payloads are as large as what the run passes from step to step, and
// copying them once more cost as much as encoding them. The string lives
// no longer than the insert, whose driver copies each bound value.
func bufferText(buf []byte) string {
	return unsafe.String(unsafe.SliceData(buf), len(buf))
}

// unixNanos is t in Unix nanoseconds, as the queue, the segments and the
// runs' rows keep a time; 0 for the zero time, which they keep as none.
func unixNanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// nanos is a time in Unix nanoseconds as a runs' row keeps it, NULL for
// none.
func nanos(n int64) any {
	if n == 0 {
		return nil
	}
	return n
}
