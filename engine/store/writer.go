package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"math/bits"
	"reflect"
	"slices"
	"strings"
	"time"
	"unsafe"

	"github.com/stepwise-dev/stepwise/engine"
)

// chunkRows is how many rows one INSERT statement writes at most: large
// enough that SQLite's per-statement cost vanishes, small enough to stay
// well under its limit on bound parameters. It is a power of two so that
// any smaller chunk is written by statements of the sizes of its binary
// digits: the eight sizes stay prepared, and no batch prepares a
// statement (preparing one for a size used once cost more than 4% of
// recording a large map).
const chunkRows = 128

// writer is the state of a Recorder's writer goroutine; nothing else
// touches it. A batch is streamed into the database a chunk of rows at a
// time, so that recording a large run needs memory for one chunk, not for
// the batch.
type writer struct {
	store *Store
	conn  *sql.Conn
	stmts map[stmtKey]*sql.Stmt
	runs  map[string]*runState

	enc     payloadEncoder
	events  chunk[eventRow]
	steps   spanTable
	tools   spanTable
	touched []*runState
	sorted  []engine.Event // a batch put in order, when it came out of order
	args    []any
	piece   []any // the values of one statement, from args
}

func newWriter(s *Store) *writer {
	return &writer{store: s, stmts: map[stmtKey]*sql.Stmt{}, runs: map[string]*runState{},
		steps: newSpanTable("steps"), tools: newSpanTable("tool_calls")}
}

// spanTable is a table whose rows each hold a start event and its end: a
// step's step_start and step_end, a tool call's tool_start and tool_end.
type spanTable struct {
	name  string
	chunk chunk[spanRow]
	// pending is the row in chunk of each span started there, for its end
	// to complete before the chunk is written.
	pending map[spanKey]int
	// open holds the start's sequence number of every span whose row was
	// written without its end, so that its end completes that row.
	open map[spanKey]uint64
	// openCalls holds the row's sequence number of every step whose row
	// keeps a tool call that had not ended when the row was written
	// (steps only), so that the call's end completes that row.
	openCalls map[spanKey]uint64
	// openSteps holds the start of every step whose row was written
	// without its end or a call (steps only), so that a tool_start coming
	// in a later batch is still recognised as the step's own call.
	openSteps map[spanKey]engine.StepStarted
	// heldCalls holds the tool_end of every call whose step had not ended
	// when the call's row was written (steps only), for the step's end to
	// settle; a Flush or Close writes it whole. The engine emits the two
	// back to back, so it is held for no longer than it takes the next
	// batch to come, unless a stop holds the run in between.
	heldCalls map[spanKey]engine.Event
}

func newSpanTable(name string) spanTable {
	return spanTable{name: name, pending: map[spanKey]int{}, open: map[spanKey]uint64{},
		openCalls: map[spanKey]uint64{}, openSteps: map[spanKey]engine.StepStarted{}, heldCalls: map[spanKey]engine.Event{}}
}

// chunk is the rows of one statement, all of one run, with their payloads
// encoded into one buffer.
type chunk[R any] struct {
	run  *runState
	rows []R
	buf  []byte
}

// span is a payload's place in its chunk's buffer; empty is SQL NULL.
type span struct{ lo, hi int }

type eventRow struct {
	e       *engine.Event
	payload span
}

// spanRow is one span's row, from its start event, its end event, or both.
// seq is its key: the start's number, or the end's when no start was seen.
// A row written for a span whose row exists (an end, a call's end) fills
// in the columns it has and leaves the others as they are.
type spanRow struct {
	seq                uint64
	path               string
	started, hasEnd    bool
	startedAt, endedAt int64 // Unix nanoseconds, 0 when unknown
	endSeq             uint64
	start, end         span
	// startEvent is the span's start while its row is in the chunk, for a
	// tool call to be compared with the step that makes it.
	startEvent *engine.Event

	// The tool call a step made, kept in the step's row (steps only).
	callSeq, callEndSeq        uint64 // 0 when none
	callStartedAt, callEndedAt int64
	// callEnd is the call's tool_end until the step's end says whether
	// the step's result stands for the call's (callMs) or the tool_end is
	// kept whole (callEndPayload).
	callEnd                *engine.Event
	callMs, callEndPayload span
}

// runState is what the writer knows of one run it records.
type runState struct {
	id      string
	key     int64 // runs.key, 0 until known
	inDB    bool  // its row exists (committed)
	touched bool  // has events in the current batch
	ended   bool

	start     *engine.RunStarted // a run_start in the current batch
	startSeq  uint64
	startedAt time.Time
	end       *engine.RunEnded // a run_end in the current batch
	endSeq    uint64
	endedAt   time.Time

	lastSeq  uint64
	lastTime time.Time
	// The running totals of the model calls seen, so that a run that never
	// ends still lists what it spent.
	calls, tokens int
	cost          float64
	unpriced      bool
}

type spanKey struct{ run, path string }

type stmtKey struct {
	table string
	rows  int
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

// write commits one batch, the queue blocks the writer took, in one
// transaction; final (a Flush, or Close) writes the calls held too.
func (w *writer) write(blocks [][]engine.Event, final bool) error {
	if len(blocks) == 0 && (!final || len(w.steps.heldCalls) == 0) {
		return nil
	}
	ctx := context.Background()
	if w.conn == nil {
		conn, err := w.store.db.Conn(ctx)
		if err != nil {
			return err
		}
		w.conn = conn
	}
	blocks = w.inOrder(blocks)
	defer w.reset()
	w.readRuns(blocks)

	if _, err := w.conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return err
	}
	err := w.apply(ctx, blocks)
	if err == nil && final {
		err = w.releaseCalls(ctx)
	}
	if err == nil {
		_, err = w.conn.ExecContext(ctx, "COMMIT")
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
	return nil
}

// inOrder returns the blocks as they are when their events are grouped by
// run and in sequence order, as the engine gives them; otherwise one block
// put in that order (callers that interleave runs, or race each other).
func (w *writer) inOrder(blocks [][]engine.Event) [][]engine.Event {
	var prev *engine.Event
	for _, b := range blocks {
		for i := range b {
			if prev != nil && eventOrder(*prev, b[i]) > 0 {
				w.sorted = w.sorted[:0]
				for _, b := range blocks {
					w.sorted = append(w.sorted, b...)
				}
				slices.SortStableFunc(w.sorted, eventOrder)
				return [][]engine.Event{w.sorted}
			}
			prev = &b[i]
		}
	}
	return blocks
}

func eventOrder(a, b engine.Event) int {
	if c := strings.Compare(a.RunID, b.RunID); c != 0 {
		return c
	}
	switch {
	case a.Seq < b.Seq:
		return -1
	case a.Seq > b.Seq:
		return 1
	}
	return 0
}

// reset clears the per-batch state, keeping the capacity.
func (w *writer) reset() {
	for _, rs := range w.touched {
		rs.touched, rs.start, rs.end = false, nil, nil
	}
	w.touched = w.touched[:0]
	clear(w.sorted)
	w.sorted = w.sorted[:0]
	w.events.reset()
	w.steps.chunk.reset()
	clear(w.steps.pending)
	w.tools.chunk.reset()
	clear(w.tools.pending)
}

func (c *chunk[R]) reset() {
	clear(c.rows)
	c.rows, c.buf, c.run = c.rows[:0], c.buf[:0], nil
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
// written before and after its events and steps hold.
func (w *writer) readRuns(blocks [][]engine.Event) {
	for _, b := range blocks {
		for i := range b {
			e := &b[i]
			rs := w.run(e.RunID)
			if e.Seq > rs.lastSeq {
				rs.lastSeq, rs.lastTime = e.Seq, e.Time
			}
			switch e.Kind {
			case engine.EventRunStart:
				if p, ok := payloadAs[engine.RunStarted](e.Payload); ok {
					rs.start, rs.startSeq, rs.startedAt = &p, e.Seq, e.Time
				}
			case engine.EventRunEnd:
				if p, ok := payloadAs[engine.RunEnded](e.Payload); ok {
					rs.end, rs.endSeq, rs.endedAt = &p, e.Seq, e.Time
				}
			case engine.EventModelCall:
				if p, ok := payloadAs[engine.ModelCalled](e.Payload); ok {
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
// (the others refer to them), then the events and steps a chunk at a time,
// then what the batch changed about each run.
func (w *writer) apply(ctx context.Context, blocks [][]engine.Event) error {
	for _, rs := range w.touched {
		if err := w.writeRunStart(ctx, rs); err != nil {
			return err
		}
	}
	for _, b := range blocks {
		for i := range b {
			if err := w.add(ctx, &b[i]); err != nil {
				return err
			}
		}
	}
	if err := w.flushEvents(ctx); err != nil {
		return err
	}
	if err := w.flushSpans(ctx, &w.steps); err != nil {
		return err
	}
	if err := w.flushSpans(ctx, &w.tools); err != nil {
		return err
	}
	for _, rs := range w.touched {
		if err := w.writeProgress(ctx, rs); err != nil {
			return err
		}
	}
	return nil
}

// add puts one event into its chunk: a step or tool event into the row of
// its span (completing the row its start made while that is still in the
// chunk), any other into the events chunk. A full chunk, or one of another
// run, is written first.
func (w *writer) add(ctx context.Context, e *engine.Event) error {
	rs := w.runs[e.RunID]
	switch e.Kind {
	case engine.EventStepStart, engine.EventStepEnd:
		return w.addSpan(ctx, &w.steps, rs, e, e.Kind == engine.EventStepStart)
	case engine.EventToolStart:
		if ok, err := w.startCall(ctx, rs, e); ok || err != nil {
			return err
		}
		return w.addSpan(ctx, &w.tools, rs, e, true)
	case engine.EventToolEnd:
		if ok, err := w.endCall(ctx, rs, e); ok || err != nil {
			return err
		}
		return w.addSpan(ctx, &w.tools, rs, e, false)
	}
	if w.events.run != rs || len(w.events.rows) == chunkRows {
		if err := w.flushEvents(ctx); err != nil {
			return err
		}
		w.events.run = rs
	}
	w.events.rows = append(w.events.rows, eventRow{e: e, payload: w.events.encode(&w.enc, e.Payload)})
	return nil
}

func (w *writer) addSpan(ctx context.Context, t *spanTable, rs *runState, e *engine.Event, start bool) error {
	c := &t.chunk
	if c.run != rs || len(c.rows) == chunkRows {
		if err := w.flushSpans(ctx, t); err != nil {
			return err
		}
		c.run = rs
	}
	k := spanKey{e.RunID, e.Path}
	if start {
		// A span started again (a retry) gets a row of its own.
		t.pending[k] = len(c.rows)
		c.rows = append(c.rows, spanRow{seq: e.Seq, path: e.Path, started: true, startEvent: e,
			startedAt: unixNanos(e.Time), start: c.encode(&w.enc, e.Payload)})
		return nil
	}
	j, ok := t.pending[k]
	if ok {
		delete(t.pending, k)
	} else {
		// Started in an earlier chunk (its row is completed), or never
		// seen to start (the end makes a row of its own).
		seq, started := t.open[k]
		if started {
			delete(t.open, k)
		} else {
			seq = e.Seq
		}
		j = len(c.rows)
		c.rows = append(c.rows, spanRow{seq: seq, path: e.Path, started: started})
	}
	row := &c.rows[j]
	row.hasEnd, row.endSeq, row.endedAt = true, e.Seq, unixNanos(e.Time)
	row.end = c.encode(&w.enc, e.Payload)
	if _, ok := t.heldCalls[k]; ok {
		// Declared here, the copy the row points to is made only for a
		// held call.
		call := t.heldCalls[k]
		delete(t.heldCalls, k)
		row.callEndSeq, row.callEndedAt, row.callEnd = call.Seq, unixNanos(call.Time), &call
	}
	delete(t.openCalls, k)
	delete(t.openSteps, k)
	if row.callEnd != nil {
		w.settleCall(c, row, e)
	}
	return nil
}

// startCall keeps a tool_start in the row of the step that makes it, when
// that row is in the chunk and the call's arguments are the step's input
// (the same value, as the engine gives them): the start is then what the
// step's start says, and is not written again.
func (w *writer) startCall(ctx context.Context, rs *runState, e *engine.Event) (bool, error) {
	t := &w.steps
	c := &t.chunk
	k := spanKey{e.RunID, e.Path}
	call, ok := payloadAs[engine.ToolStarted](e.Payload)
	if !ok {
		return false, nil
	}
	if j, ok := t.pending[k]; ok && c.run == rs {
		row := &c.rows[j]
		if row.startEvent == nil || row.callSeq != 0 || row.hasEnd {
			return false, nil
		}
		step, ok := payloadAs[engine.StepStarted](row.startEvent.Payload)
		if !ok || !ownCall(step, call) {
			return false, nil
		}
		row.callSeq, row.callStartedAt = e.Seq, unixNanos(e.Time)
		return true, nil
	}
	// The step's row went out in an earlier batch: a row completing it
	// keeps the call, as the row of a call that ends late does.
	step, open := t.openSteps[k]
	if !open || !ownCall(step, call) {
		return false, nil
	}
	delete(t.openSteps, k)
	if c.run != rs || len(c.rows) == chunkRows {
		if err := w.flushSpans(ctx, t); err != nil {
			return true, err
		}
		c.run = rs
	}
	t.pending[k] = len(c.rows)
	c.rows = append(c.rows, spanRow{seq: t.open[k], path: e.Path, started: true, callSeq: e.Seq, callStartedAt: unixNanos(e.Time)})
	delete(t.open, k)
	return true, nil
}

// ownCall reports whether call is the one its step makes: its tool, with
// the very input the step started with.
func ownCall(step engine.StepStarted, call engine.ToolStarted) bool {
	return call.Tool == step.Tool && step.Input != nil && sameValue(call.Args, step.Input)
}

// endCall puts a tool_end into the row of the step whose row keeps the
// call's start: the row in the chunk, or a row that completes one written
// before. It reports false for a call kept in tool_calls.
func (w *writer) endCall(ctx context.Context, rs *runState, e *engine.Event) (bool, error) {
	t := &w.steps
	c := &t.chunk
	k := spanKey{e.RunID, e.Path}
	j, ok := t.pending[k]
	if !ok || c.run != rs || c.rows[j].callSeq == 0 || c.rows[j].callEndSeq != 0 {
		seq, open := t.openCalls[k]
		if !open {
			return false, nil
		}
		delete(t.openCalls, k)
		if c.run != rs || len(c.rows) == chunkRows {
			if err := w.flushSpans(ctx, t); err != nil {
				return true, err
			}
			c.run = rs
		}
		// The step has not ended (its row is open), so its end, when it
		// comes, completes this row too.
		j = len(c.rows)
		t.pending[k] = j
		c.rows = append(c.rows, spanRow{seq: seq, path: e.Path, started: true})
	}
	row := &c.rows[j]
	row.callEndSeq, row.callEndedAt, row.callEnd = e.Seq, unixNanos(e.Time), e
	return true, nil
}

// settleCall decides, at the step's end, how its row keeps the call's
// end: as call_ms alone when the tool_end says nothing but its time and
// the result the step ended with, otherwise whole.
func (w *writer) settleCall(c *chunk[spanRow], row *spanRow, stepEnd *engine.Event) {
	if end, ok := derived(row.callEnd, stepEnd); ok {
		row.callMs = c.encodeValue(&w.enc, end.Ms)
	} else {
		row.callEndPayload = c.encode(&w.enc, row.callEnd.Payload)
	}
	row.callEnd = nil
}

// derived returns a call's tool_end and whether it is what call_ms and
// its step's end make of it: it reports the step's tool, no error and the
// very result the step ended with.
func derived(callEnd, stepEnd *engine.Event) (engine.ToolEnded, bool) {
	call, ok := payloadAs[engine.ToolEnded](callEnd.Payload)
	step, fine := payloadAs[engine.StepEnded](stepEnd.Payload)
	return call, ok && fine && call.Tool == step.Tool && !call.IsError && call.Error == "" && !call.Injected &&
		step.Error == "" && sameValue(call.Result, step.Result)
}

// sameValue reports whether a and b are the same value as the engine
// passes it along: the same map or slice, or equal plain values. Values
// that are merely equal in content are not looked into.
func sameValue(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	if va.Type() != vb.Type() {
		return false
	}
	switch va.Kind() {
	case reflect.Map, reflect.Pointer:
		return va.UnsafePointer() == vb.UnsafePointer()
	case reflect.Slice:
		return va.UnsafePointer() == vb.UnsafePointer() && va.Len() == vb.Len()
	}
	return va.Comparable() && va.Equal(vb)
}

// encode appends a payload's JSON to the chunk's buffer. A payload that
// encoding/json refuses is kept as the reason it could not be recorded.
func (c *chunk[R]) encode(enc *payloadEncoder, p any) span {
	lo := len(c.buf)
	if p == nil {
		return span{lo, lo}
	}
	var ok bool
	if c.buf, ok = enc.append(c.buf, p); !ok {
		j, err := json.Marshal(p)
		if err != nil {
			j, _ = json.Marshal(map[string]string{"unrecorded": err.Error()})
		}
		c.buf = append(c.buf, j...)
	}
	return span{lo, len(c.buf)}
}

// releaseCalls writes the tool_ends held for their steps' ends whole,
// into the rows of their steps.
func (w *writer) releaseCalls(ctx context.Context) error {
	t := &w.steps
	c := &t.chunk
	// Written first, the chunk holds back what it holds too.
	if err := w.flushSpans(ctx, t); err != nil {
		return err
	}
	for k, call := range t.heldCalls {
		rs := w.runs[k.run]
		seq, open := t.open[k]
		delete(t.heldCalls, k)
		delete(t.openCalls, k)
		if rs == nil || rs.key == 0 || !open {
			continue
		}
		if c.run != rs || len(c.rows) == chunkRows {
			if err := w.flushSpans(ctx, t); err != nil {
				return err
			}
			c.run = rs
		}
		c.rows = append(c.rows, spanRow{seq: seq, path: k.path, started: true, callEndSeq: call.Seq, callEndedAt: unixNanos(call.Time),
			callEndPayload: c.encode(&w.enc, call.Payload)})
	}
	return w.flushSpans(ctx, t)
}

// encodeValue appends a plain value's JSON to the chunk's buffer.
func (c *chunk[R]) encodeValue(enc *payloadEncoder, v any) span {
	lo := len(c.buf)
	var ok bool
	if c.buf, ok = enc.value(c.buf, v); !ok {
		c.buf = c.buf[:lo]
		return c.encode(enc, v)
	}
	return span{lo, len(c.buf)}
}

// bufferText is a chunk's buffer as a string, without a copy: the
// payloads of a chunk are as large as what the run passes from step to
// step, and copying them once more cost as much as encoding them. The
// strings cut from it live no longer than the chunk's insert, whose driver
// copies each bound value before the buffer is reset for the next chunk.
func bufferText(buf []byte) string {
	return unsafe.String(unsafe.SliceData(buf), len(buf))
}

// textOf is the payload a span holds in s, the chunk's buffer as a string.
func textOf(s string, sp span) any {
	if sp.hi == sp.lo {
		return nil
	}
	return s[sp.lo:sp.hi]
}

func (w *writer) flushEvents(ctx context.Context) error {
	c := &w.events
	if len(c.rows) == 0 {
		return nil
	}
	s := bufferText(c.buf)
	w.args = append(w.args[:0], c.run.key)
	for _, r := range c.rows {
		payload, blob, err := w.payload(ctx, c.run, c.buf, s, r.payload)
		if err != nil {
			c.reset()
			return err
		}
		w.args = append(w.args, int64(r.e.Seq), nanos(r.e.Time), r.e.Path, string(r.e.Kind), payload, blob)
	}
	err := w.exec(ctx, "events", len(c.rows))
	c.reset()
	return err
}

// blobBytes is the largest payload kept in its row. A step's row holds up
// to three payloads, and SQLite keeps a record of up to 8 KiB in its page
// (8 KiB pages), reading the rest from overflow pages whole when a query
// reads the row; above 16 KiB a payload is worth the hash and the second
// insert.
const blobBytes = 16 << 10

// payload is the column values of a payload span of s, the chunk's buffer
// buf as a string: its JSON and a NULL hash, or, for one over blobBytes, its summary and the hash of the
// whole, which it stores in blobs (once per content) for run rs.
func (w *writer) payload(ctx context.Context, rs *runState, buf []byte, s string, sp span) (text, hash any, err error) {
	if sp.hi-sp.lo <= blobBytes {
		return textOf(s, sp), nil, nil
	}
	whole := s[sp.lo:sp.hi]
	sum := sha256.Sum256(buf[sp.lo:sp.hi])
	h := hex.EncodeToString(sum[:])
	if _, err := w.conn.ExecContext(ctx, "INSERT INTO blobs (hash, size, data) VALUES (?, ?, ?) ON CONFLICT (hash) DO NOTHING", h, len(whole), whole); err != nil {
		return nil, nil, err
	}
	if _, err := w.conn.ExecContext(ctx, "INSERT INTO run_blobs (run, hash) VALUES (?, ?) ON CONFLICT DO NOTHING", rs.key, h); err != nil {
		return nil, nil, err
	}
	return payloadSummary(whole), h, nil
}

func (w *writer) flushSpans(ctx context.Context, t *spanTable) error {
	c := &t.chunk
	if len(c.rows) == 0 {
		return nil
	}
	// A call whose step has not ended yet is held for the step's end.
	for i := range c.rows {
		if r := &c.rows[i]; r.callEnd != nil {
			t.heldCalls[spanKey{r.callEnd.RunID, r.path}] = *r.callEnd
			r.callEnd, r.callEndSeq, r.callEndedAt = nil, 0, 0
		}
	}
	s := bufferText(c.buf)
	w.args = append(w.args[:0], c.run.key)
	for _, r := range c.rows {
		start, startBlob, err := w.payload(ctx, c.run, c.buf, s, r.start)
		if err != nil {
			c.reset()
			return err
		}
		end, endBlob, err := w.payload(ctx, c.run, c.buf, s, r.end)
		if err != nil {
			c.reset()
			return err
		}
		var endSeq any
		if r.hasEnd {
			endSeq = int64(r.endSeq)
		}
		w.args = append(w.args, int64(r.seq), r.path, r.started, orNull(r.startedAt), start, startBlob, endSeq, orNull(r.endedAt), end, endBlob)
		if t == &w.steps {
			callEnd, callEndBlob, err := w.payload(ctx, c.run, c.buf, s, r.callEndPayload)
			if err != nil {
				c.reset()
				return err
			}
			w.args = append(w.args, orNull(int64(r.callSeq)), orNull(r.callStartedAt), orNull(int64(r.callEndSeq)), orNull(r.callEndedAt),
				textOf(s, r.callMs), callEnd, callEndBlob)
		}
	}
	// The spans left open are completed by a later chunk's end, and so
	// are the calls they keep.
	for k, j := range t.pending {
		r := &c.rows[j]
		t.open[k] = r.seq
		if r.callSeq != 0 && r.callEndSeq == 0 {
			t.openCalls[k] = r.seq
		}
		if t == &w.steps && r.callSeq == 0 && r.startEvent != nil {
			if step, ok := payloadAs[engine.StepStarted](r.startEvent.Payload); ok {
				t.openSteps[k] = step
			}
		}
	}
	clear(t.pending)
	err := w.exec(ctx, t.name, len(c.rows))
	c.reset()
	return err
}

// orNull is n as a column value, NULL for 0 (unknown).
func orNull(n int64) any {
	if n == 0 {
		return nil
	}
	return n
}

// exec runs the insert of n rows into table with w.args: ?1, the run's
// key, then each row's values. The rows go in pieces of the sizes of n's
// binary digits, largest first, each piece with the key before its rows.
func (w *writer) exec(ctx context.Context, table string, n int) error {
	defer clear(w.args)
	per := (len(w.args) - 1) / n
	for done := 0; done < n; {
		k := 1 << (bits.Len(uint(n-done)) - 1)
		stmt, err := w.stmt(ctx, table, k)
		if err != nil {
			return err
		}
		w.piece = append(append(w.piece[:0], w.args[0]), w.args[1+done*per:1+(done+k)*per]...)
		_, err = stmt.ExecContext(ctx, w.piece...)
		clear(w.piece)
		if err != nil {
			return err
		}
		done += k
	}
	return nil
}

// The multi-row statements; ?1 is the run's key. A span's upsert completes
// the row of a span started in an earlier chunk with what the later rows
// know: its end, its call's end.
const (
	eventsInsert = "INSERT INTO events (run, seq, time, path, kind, payload, payload_blob) VALUES "
	eventsRow    = "(?1, ?, ?, ?, ?, ?, ?)"
	spansInsert  = "INSERT INTO tool_calls (run, seq, path, started, started_at, start_payload, start_payload_blob, end_seq, ended_at, end_payload, end_payload_blob) VALUES "
	spansRow     = "(?1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
	spansUpsert  = ` ON CONFLICT (run, seq) DO UPDATE SET
		end_seq = coalesce(excluded.end_seq, end_seq), ended_at = coalesce(excluded.ended_at, ended_at),
		end_payload = coalesce(excluded.end_payload, end_payload), end_payload_blob = coalesce(excluded.end_payload_blob, end_payload_blob)`
	stepsInsert = `INSERT INTO steps (run, seq, path, started, started_at, start_payload, start_payload_blob, end_seq, ended_at, end_payload, end_payload_blob,
		call_seq, call_started_at, call_end_seq, call_ended_at, call_ms, call_end_payload, call_end_payload_blob) VALUES `
	stepsRow    = "(?1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
	stepsUpsert = spansUpsert + `, call_seq = coalesce(excluded.call_seq, call_seq),
		call_started_at = coalesce(excluded.call_started_at, call_started_at), call_end_seq = coalesce(excluded.call_end_seq, call_end_seq),
		call_ended_at = coalesce(excluded.call_ended_at, call_ended_at), call_ms = coalesce(excluded.call_ms, call_ms),
		call_end_payload = CASE WHEN excluded.call_ms IS NULL THEN coalesce(excluded.call_end_payload, call_end_payload) END,
		call_end_payload_blob = CASE WHEN excluded.call_ms IS NULL THEN coalesce(excluded.call_end_payload_blob, call_end_payload_blob) END`
)

func (w *writer) stmt(ctx context.Context, table string, rows int) (*sql.Stmt, error) {
	k := stmtKey{table, rows}
	if s, ok := w.stmts[k]; ok {
		return s, nil
	}
	q := struct{ head, row, tail string }{eventsInsert, eventsRow, ""}
	switch table {
	case "steps":
		q.head, q.row, q.tail = stepsInsert, stepsRow, stepsUpsert
	case "tool_calls":
		q.head, q.row, q.tail = spansInsert, spansRow, spansUpsert
	}
	var b strings.Builder
	b.WriteString(q.head)
	for i := range rows {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(q.row)
	}
	b.WriteString(q.tail)
	s, err := w.conn.PrepareContext(ctx, b.String())
	if err != nil {
		return nil, err
	}
	w.stmts[k] = s
	return s, nil
}

func (w *writer) writeRunStart(ctx context.Context, rs *runState) error {
	if p := rs.start; p != nil {
		_, err := w.conn.ExecContext(ctx, `INSERT INTO runs (id, plan, file, project, hash, parent, status, started_at, start_seq, recorder)
			VALUES (?, ?, ?, ?, ?, ?, 'running', ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET plan = excluded.plan, file = excluded.file, project = excluded.project, hash = excluded.hash,
				parent = excluded.parent, started_at = excluded.started_at, start_seq = excluded.start_seq, recorder = excluded.recorder`,
			rs.id, p.Plan, p.File, p.Project, p.Hash, p.Parent, nanos(rs.startedAt), int64(rs.startSeq), w.store.self)
		if err != nil {
			return err
		}
	} else if !rs.inDB {
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
		_, err := w.conn.ExecContext(ctx, `UPDATE runs SET last_seq = max(last_seq, ?), last_event_at = ? WHERE key = ?`,
			int64(rs.lastSeq), nanos(rs.lastTime), rs.key)
		return err
	}
	var cost any
	if rs.calls > 0 && !rs.unpriced {
		cost = rs.cost
	}
	_, err := w.conn.ExecContext(ctx, `UPDATE runs SET last_seq = max(last_seq, ?), last_event_at = ?, calls = ?, tokens = ?, cost_usd = ? WHERE key = ?`,
		int64(rs.lastSeq), nanos(rs.lastTime), rs.calls, rs.tokens, cost, rs.key)
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
		ended_at = ?, end_seq = ?, recorder = NULL WHERE key = ?`,
		p.Status, p.Error, p.StepsExecuted, u.Calls, tokens(u.InputTokens, u.OutputTokens, u.CacheCreationInputTokens, u.CacheReadInputTokens),
		usageCost, nanos(rs.endedAt), int64(rs.endSeq), rs.key)
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
	for _, s := range w.stmts {
		s.Close()
	}
	if w.conn != nil {
		if err := w.conn.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// nanos is a time as the store keeps it: Unix nanoseconds, NULL when unset.
func nanos(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixNano()
}

// unixNanos is t in Unix nanoseconds, 0 when unset.
func unixNanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}
