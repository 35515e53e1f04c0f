package store

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/chat"
	"github.com/stepwise-dev/stepwise/engine/record"
)

// stepStatusUnknown is the status of a step whose end was recorded
// without one.
const stepStatusUnknown engine.StepStatus = "unknown"

const summaryColumns = `id, plan, project, status, error, started_at, ended_at, last_event_at, recorder, calls, tokens, cost_usd,
	CASE WHEN status = 'running' THEN steps_ended ELSE coalesce(steps_executed, 0) END, decided, held_ms, parent, made,
	coalesce((SELECT data FROM blobs WHERE hash = inputs_blob), inputs)`

// Runs lists runs, newest first.
func (s *Store) Runs(ctx context.Context, f record.RunFilter) ([]record.RunSummary, error) {
	return s.runs(ctx, s.db, f)
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (s *Store) runs(ctx context.Context, q querier, f record.RunFilter) ([]record.RunSummary, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = -1
	}
	// Only the conditions a filter sets are written, so that SQLite can
	// search the index of the project or the plan instead of every run.
	var conds []string
	var args []any
	if f.Project != "" {
		conds, args = append(conds, "project = ?"), append(args, f.Project)
	}
	if f.Plan != "" {
		conds, args = append(conds, "plan = ?"), append(args, f.Plan)
	}
	where := ""
	if len(conds) > 0 {
		where = " WHERE " + strings.Join(conds, " AND ")
	}
	rows, err := q.QueryContext(ctx, `SELECT `+summaryColumns+` FROM runs`+where+`
		ORDER BY started_at DESC, id DESC LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	list := []record.RunSummary{}
	for rows.Next() {
		r, _, err := s.scanSummary(rows)
		if err != nil {
			return nil, err
		}
		list = append(list, r)
	}
	return list, rows.Err()
}

// scanSummary reads the summaryColumns, then the extra columns a query
// selected after them into extra, and returns the recorder column too.
func (s *Store) scanSummary(row interface{ Scan(...any) error }, extra ...any) (record.RunSummary, string, error) {
	var r record.RunSummary
	var started, ended, last sql.NullInt64
	var recorder sql.NullString
	var cost, held sql.NullFloat64
	var inputs string
	dest := append([]any{&r.ID, &r.Plan, &r.Project, &r.Status, &r.Error, &started, &ended, &last, &recorder,
		&r.Usage.Calls, &r.Usage.Tokens, &cost, &r.StepsExecuted, &r.Decided, &held, &r.Parent, &r.Made, &inputs}, extra...)
	err := row.Scan(dest...)
	if err != nil {
		return r, "", err
	}
	if inputs != "" {
		r.Inputs = json.RawMessage(inputs)
	}
	r.StartedAt, r.EndedAt, r.LastEventAt = fromNanos(started), fromNanos(ended), fromNanos(last)
	if cost.Valid {
		r.Usage.CostUSD = &cost.Float64
	}
	r.Held = time.Duration(held.Float64 * float64(time.Millisecond))
	end := r.EndedAt
	if end.IsZero() {
		end = r.LastEventAt
	}
	if !r.StartedAt.IsZero() && !end.IsZero() {
		r.Duration = end.Sub(r.StartedAt)
	}
	r.Interrupted = r.Status == engine.StatusRunning && s.recorderGone(recorder.String)
	return r, recorder.String, nil
}

func fromNanos(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return time.Unix(0, n.Int64)
}

// recorderGone reports whether the process that recorded a run is known to
// be gone. A process on another host cannot be asked, so it is not.
func (s *Store) recorderGone(recorder string) bool {
	if recorder == "" {
		return true
	}
	host, pid, ok := strings.Cut(recorder, ":")
	if !ok || host != s.host {
		return false
	}
	var n int
	if _, err := fmt.Sscan(pid, &n); err != nil {
		return false
	}
	return !processAlive(n)
}

// resolve finds the run an id names, the run with that id or the only run
// whose id begins with it, and returns its key.
func (s *Store) resolve(ctx context.Context, q querier, id string) (int64, error) {
	if id == "" {
		return 0, errors.New("no run id given")
	}
	var key int64
	err := q.QueryRowContext(ctx, "SELECT key FROM runs WHERE id = ?", id).Scan(&key)
	if err == nil {
		return key, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return 0, err
	}
	const most = 10
	rows, err := q.QueryContext(ctx, `SELECT `+summaryColumns+` FROM runs WHERE substr(id, 1, length(?1)) = ?1
		ORDER BY started_at DESC, id DESC LIMIT ?2`, id, most+1)
	if err != nil {
		return 0, err
	}
	var found []record.RunSummary
	for rows.Next() {
		r, _, err := s.scanSummary(rows)
		if err != nil {
			rows.Close()
			return 0, err
		}
		found = append(found, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	switch {
	case len(found) == 1:
		return s.resolve(ctx, q, found[0].ID)
	case len(found) > 1:
		return 0, &record.AmbiguousError{Prefix: id, Candidates: found[:min(len(found), most)], More: len(found) > most}
	}
	recent, err := s.runs(ctx, q, record.RunFilter{Limit: 5})
	if err != nil {
		return 0, err
	}
	return 0, &record.NotFoundError{ID: id, Recent: recent}
}

// Run returns everything recorded about the run that id names: its full
// id, or a prefix only one run begins with. An unknown id is a
// *NotFoundError, an ambiguous prefix an *AmbiguousError.
func (s *Store) Run(ctx context.Context, id string) (*record.RunDetail, error) {
	// One read transaction: one snapshot, even while a Recorder writes.
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	key, err := s.resolve(ctx, tx, id)
	if err != nil {
		return nil, err
	}
	d := &record.RunDetail{}
	var lastSeq int64
	row := tx.QueryRowContext(ctx, `SELECT `+summaryColumns+`, file, hash, last_seq FROM runs WHERE key = ?`, key)
	d.RunSummary, d.Recorder, err = s.scanSummary(row, &d.File, &d.Hash, &lastSeq)
	if err != nil {
		return nil, err
	}
	if d.Parent != "" {
		var kept bool
		if err := tx.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM runs WHERE id = ?)", d.Parent).Scan(&kept); err != nil {
			return nil, err
		}
		d.ParentDeleted = !kept
	}
	events, err := runEvents(ctx, tx, key)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", d.ID, err)
	}
	if err := buildDetail(d, events, uint64(lastSeq)); err != nil {
		return nil, fmt.Errorf("run %s: %w", d.ID, err)
	}
	return d, nil
}

// The members of the payloads a run's record is built from; the rest of
// each payload (a model call's request and reply) is skipped.
type (
	runStartMembers struct {
		Inputs json.RawMessage `json:"inputs"`
	}
	runEndMembers struct {
		Exit      json.RawMessage `json:"exit"`
		Output    json.RawMessage `json:"output"`
		Answer    string          `json:"answer"`
		EmptyData bool            `json:"empty_data"`
		Usage     json.RawMessage `json:"usage"`
	}
	// spanMembers are a step's or a tool call's start and end: step_start
	// has tool and input, step_end tool, status, result, error and ms,
	// tool_start tool and args, tool_end tool, ms, is_error, result and
	// error.
	spanMembers struct {
		Tool    string             `json:"tool"`
		Input   json.RawMessage    `json:"input"`
		Args    json.RawMessage    `json:"args"`
		Status  *engine.StepStatus `json:"status"`
		Result  json.RawMessage    `json:"result"`
		Error   string             `json:"error"`
		Ms      float64            `json:"ms"`
		IsError bool               `json:"is_error"`
		HeldMs  float64            `json:"held_ms"`
		Decided string             `json:"decided"`
		Reused  string             `json:"reused"`
	}
	decidedMembers struct {
		Stop   engine.StopKind `json:"stop"`
		Action string          `json:"action"`
		Value  json.RawMessage `json:"value"`
		Origin string          `json:"origin"`
	}
	modelCallMembers struct {
		Site             *string          `json:"site"`
		Role             string           `json:"role"`
		Provider         string           `json:"provider"`
		Model            string           `json:"model"`
		Usage            chat.Usage       `json:"usage"`
		CostUSD          *float64         `json:"cost_usd"`
		Ms               float64          `json:"ms"`
		Error            string           `json:"error"`
		Aborted          bool             `json:"aborted"`
		Retries          []string         `json:"retries"`
		StructuredOutput *json.RawMessage `json:"structured_output"`
	}
	warningMembers struct {
		Message string `json:"message"`
	}
)

// members reads the members of an event's payload that its record keeps;
// an event without a payload has none.
func members[T any](e *record.StoredEvent) (T, error) {
	var m T
	if e.Payload == nil {
		return m, nil
	}
	if err := json.Unmarshal(e.Payload, &m); err != nil {
		return m, fmt.Errorf("event %d (%s at %q): %w", e.Seq, e.Kind, e.Path, err)
	}
	return m, nil
}

// span is a step or a tool call being put together from its start and
// end events; seq orders it: its start's, or its end's when no start was
// recorded.
type span struct {
	seq        uint64
	path       string
	start, end *spanMembers
	startedAt  time.Time
	endedAt    time.Time
}

// spans pairs the start and end events of one kind of span: an end ends
// the span last started at its path, and one with none started is a span
// of its own. A span started again at its path before it ended (a retry)
// is another span.
type spans struct {
	list []*span
	open map[string]*span
}

func (s *spans) start(e *record.StoredEvent, m *spanMembers) {
	sp := &span{seq: e.Seq, path: e.Path, start: m, startedAt: e.Time}
	s.list = append(s.list, sp)
	if s.open == nil {
		s.open = map[string]*span{}
	}
	s.open[e.Path] = sp
}

func (s *spans) end(e *record.StoredEvent, m *spanMembers) *span {
	sp := s.open[e.Path]
	if sp == nil {
		sp = &span{seq: e.Seq, path: e.Path}
		s.list = append(s.list, sp)
	} else {
		delete(s.open, e.Path)
	}
	sp.end, sp.endedAt = m, e.Time
	return sp
}

// tool is a span's tool: its end's, or its start's when the end names none.
func (sp *span) tool() string {
	if sp.end != nil && sp.end.Tool != "" {
		return sp.end.Tool
	}
	if sp.start != nil {
		return sp.start.Tool
	}
	return ""
}

// buildDetail fills in d, the record of a run, from its events, in
// sequence order: its inputs, outcome and usage (its run_start's and
// run_end's), its steps, tool calls, failures, warnings and model calls.
func buildDetail(d *record.RunDetail, events []record.StoredEvent, lastSeq uint64) error {
	var steps, calls spans
	var failed []*span
	var tally *engine.Tally
	var runEnd *record.StoredEvent
	d.Errors, d.Warnings, d.ModelCalls, d.Downgrades, d.Decisions = []record.Notice{}, []record.Notice{}, []record.ModelCall{}, []record.Notice{}, []record.Decision{}
	for i := range events {
		e := &events[i]
		if e.Seq == lastSeq {
			d.LastEvent = record.StoredEvent{Seq: e.Seq, Time: e.Time, Path: e.Path, Kind: e.Kind}
		}
		switch e.Kind {
		case engine.EventRunStart:
			m, err := members[runStartMembers](e)
			if err != nil {
				return err
			}
			d.Inputs = m.Inputs
		case engine.EventRunEnd:
			runEnd = e
		case engine.EventStepStart, engine.EventToolStart:
			m, err := members[spanMembers](e)
			if err != nil {
				return err
			}
			if e.Kind == engine.EventStepStart {
				steps.start(e, &m)
			} else {
				calls.start(e, &m)
			}
		case engine.EventStepEnd, engine.EventToolEnd:
			m, err := members[spanMembers](e)
			if err != nil {
				return err
			}
			if e.Kind == engine.EventToolEnd {
				calls.end(e, &m)
			} else if sp := steps.end(e, &m); m.Status != nil && *m.Status == engine.StepFailed {
				failed = append(failed, sp)
			}
		case engine.EventDecided:
			m, err := members[decidedMembers](e)
			if err != nil {
				return err
			}
			d.Decisions = append(d.Decisions, record.Decision{Path: e.Path, Stop: m.Stop, Action: m.Action, Value: m.Value, Origin: m.Origin})
		case engine.EventWarning:
			m, err := members[warningMembers](e)
			if err != nil {
				return err
			}
			d.Warnings = append(d.Warnings, record.Notice{Path: e.Path, Message: m.Message})
		case engine.EventModelCall:
			m, err := members[modelCallMembers](e)
			if err != nil {
				return err
			}
			if tally == nil {
				tally = engine.NewTally()
			}
			if err := addModelCall(d, e, &m, tally); err != nil {
				return err
			}
		}
	}
	d.Steps = make([]record.StepRecord, len(steps.list))
	for i, sp := range steps.list {
		r := record.StepRecord{Path: sp.path, Tool: sp.tool(), Status: engine.StepRunning, StartedAt: sp.startedAt, EndedAt: sp.endedAt}
		if sp.start != nil {
			r.Input = sp.start.Input
		}
		if sp.end != nil {
			r.Status, r.Result, r.Error, r.Ms, r.HeldMs = stepStatusUnknown, sp.end.Result, sp.end.Error, sp.end.Ms, sp.end.HeldMs
			r.Decided, r.Reused = sp.end.Decided, sp.end.Reused
			if sp.end.Status != nil {
				r.Status = *sp.end.Status
			}
		}
		d.Steps[i] = r
	}
	for _, sp := range failed {
		d.Errors = append(d.Errors, record.Notice{Path: sp.path, Message: sp.end.Error})
	}
	d.ToolCalls = make([]record.ToolCall, len(calls.list))
	for i, sp := range calls.list {
		c := record.ToolCall{Path: sp.path, Tool: sp.tool(), StartedAt: sp.startedAt}
		if sp.start != nil {
			c.Args = sp.start.Args
		}
		if sp.end != nil {
			c.Ended, c.IsError, c.Result, c.Error, c.Ms, c.HeldMs = true, sp.end.IsError, sp.end.Result, sp.end.Error, sp.end.Ms, sp.end.HeldMs
			c.Decided, c.Reused = sp.end.Decided, sp.end.Reused
		}
		d.ToolCalls[i] = c
	}
	markDecided(d)
	if runEnd == nil {
		// The report its run_end would have carried, from the model calls
		// recorded before its events stopped.
		if tally == nil {
			tally = engine.NewTally()
		}
		d.UsageReport, d.UsageFromCalls = tally.Report(), true
		return nil
	}
	m, err := members[runEndMembers](runEnd)
	if err != nil {
		return err
	}
	d.Output, d.Answer, d.EmptyData = m.Output, m.Answer, m.EmptyData
	if m.Exit != nil {
		d.Exit = &engine.Exit{}
		if err := json.Unmarshal(m.Exit, d.Exit); err != nil {
			return fmt.Errorf("its exit: %w", err)
		}
	}
	if m.Usage != nil {
		if err := json.Unmarshal(m.Usage, &d.UsageReport); err != nil {
			return fmt.Errorf("its usage: %w", err)
		}
	}
	return nil
}

// markDecided marks the steps, tool calls and model calls a person
// decided at their own path whose end event does not say so: an ask
// answered, a call whose result was replaced after it ended, a step a
// decision changed without giving its result, a model call whose reply
// was replaced (its record is the model's own reply). A decision at a unit's own path is always
// about that unit, so a new kind of decision is marked without more. One
// a replay made again marks the unit with the replay's origin instead.
func markDecided(d *record.RunDetail) {
	if len(d.Decisions) == 0 {
		return
	}
	at := make(map[string]record.Decision, len(d.Decisions))
	for _, dec := range d.Decisions {
		at[dec.Path] = dec
	}
	mark := func(path string, decided, reused *string) {
		dec, ok := at[path]
		switch {
		case !ok || *decided != "" || *reused != "":
		case dec.Origin != "":
			*reused = dec.Origin
		default:
			*decided = dec.Action
		}
	}
	for i := range d.Steps {
		s := &d.Steps[i]
		mark(s.Path, &s.Decided, &s.Reused)
	}
	for i := range d.ToolCalls {
		c := &d.ToolCalls[i]
		mark(c.Path, &c.Decided, &c.Reused)
	}
	for i := range d.ModelCalls {
		c := &d.ModelCalls[i]
		mark(c.Path, &c.Decided, &c.Reused)
	}
}

// strictMembers are a model call's strict structured output record.
type strictMembers struct {
	Sent            *bool   `json:"sent"`
	DowngradeReason *string `json:"downgrade_reason"`
}

// addModelCall lists one model call in d, adds it to the tally of a run
// without a run_end, and lists it among the downgrades when it asked for
// strict structured output and went without it.
func addModelCall(d *record.RunDetail, e *record.StoredEvent, m *modelCallMembers, tally *engine.Tally) error {
	c := record.ModelCall{Path: e.Path, Role: m.Role, Provider: m.Provider, Model: m.Model, InputTokens: m.Usage.InputTokens,
		OutputTokens: m.Usage.OutputTokens, CachedTokens: m.Usage.Cached(), Ms: m.Ms, Error: m.Error, Aborted: m.Aborted, Retries: m.Retries}
	site := e.Path
	if m.Site != nil {
		site = *m.Site
	}
	if m.StructuredOutput != nil {
		var so strictMembers
		if err := json.Unmarshal(*m.StructuredOutput, &so); err != nil {
			return fmt.Errorf("event %d (%s at %q): its structured_output: %w", e.Seq, e.Kind, e.Path, err)
		}
		reason := ""
		if so.DowngradeReason != nil {
			reason = *so.DowngradeReason
		}
		switch {
		case so.Sent != nil && *so.Sent:
			c.Strict = "sent"
		case so.DowngradeReason != nil:
			c.Strict = reason
		default:
			c.Strict = "not sent"
		}
		if so.Sent != nil && !*so.Sent {
			d.Downgrades = append(d.Downgrades, record.Notice{Path: site, Message: reason})
		}
	}
	d.ModelCalls = append(d.ModelCalls, c)
	var siteName string
	if m.Site != nil {
		siteName = *m.Site
	}
	tally.Add(siteName, m.Provider, m.Model, m.Usage, m.CostUSD)
	return nil
}

// runEvents reads every event of run key from its segments, in sequence
// order, the payloads kept in blobs read back whole.
func runEvents(ctx context.Context, q querier, key int64) ([]record.StoredEvent, error) {
	rows, err := q.QueryContext(ctx, "SELECT data FROM segments WHERE run = ? ORDER BY first_seq", key)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	list := []record.StoredEvent{}
	var pieced []piecedPayload
	for rows.Next() {
		var data []byte
		if err := rows.Scan(&data); err != nil {
			return nil, err
		}
		if list, pieced, err = decodeSegment(data, list, pieced); err != nil {
			return nil, err
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close()
	for _, p := range pieced {
		e := &list[p.event]
		var b strings.Builder
		for j, piece := range p.pieces {
			if j%2 == 0 {
				b.WriteString(piece)
				continue
			}
			var data string
			if err := q.QueryRowContext(ctx, "SELECT data FROM blobs WHERE hash = ?", piece).Scan(&data); err != nil {
				return nil, fmt.Errorf("event %d (%s at %q): its payload's piece %s: %w", e.Seq, e.Kind, e.Path, piece, err)
			}
			b.WriteString(data)
		}
		e.Payload = json.RawMessage(b.String())
	}
	// The engine emits a run's events in sequence order; events given to
	// a Recorder out of order are put back in it here.
	bySeq := func(a, b record.StoredEvent) int { return cmp.Compare(a.Seq, b.Seq) }
	if !slices.IsSortedFunc(list, bySeq) {
		slices.SortStableFunc(list, bySeq)
	}
	return list, nil
}

// Events returns every event of the run that id names (as Run resolves
// it), in sequence order.
func (s *Store) Events(ctx context.Context, id string) ([]record.StoredEvent, error) {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	key, err := s.resolve(ctx, tx, id)
	if err != nil {
		return nil, err
	}
	list, err := runEvents(ctx, tx, key)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", id, err)
	}
	return list, nil
}
