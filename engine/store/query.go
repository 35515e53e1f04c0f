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
)

// RunFilter selects the runs Runs lists.
type RunFilter struct {
	// Project keeps the runs of the project with this root directory only
	// (as RunStarted.Project gives it, matched exactly); empty keeps the
	// runs of every project, and those of none.
	Project string
	// Plan keeps the runs of this plan identifier only; empty keeps all.
	Plan string
	// Limit is the most runs listed; 0 lists every one.
	Limit int
}

// Spend is what a run spent on models.
type Spend struct {
	Calls int
	// Tokens counts every token: input, output and both cache figures.
	Tokens int
	// CostUSD is nil when any call was unpriced: never estimated.
	CostUSD *float64
}

// RunSummary is one run as a listing shows it.
type RunSummary struct {
	ID   string
	Plan string
	// Project is the root directory of the project the run belongs to,
	// empty for a run outside a project or recorded before the store kept
	// projects.
	Project string
	// Status is engine.StatusRunning until the run_end is recorded
	// (see Interrupted), then RunEnded's.
	Status engine.RunStatus
	// Interrupted is set on a running run whose recording process is known
	// to be gone (it died, or closed its Recorder without a run_end): its
	// events stopped, and it will never finish.
	Interrupted bool
	StartedAt   time.Time
	// EndedAt is zero until the run_end is recorded.
	EndedAt time.Time
	// LastEventAt is the time of the last event recorded.
	LastEventAt time.Time
	// Duration runs to EndedAt, or for a run without an end to its last
	// event.
	Duration time.Duration
	// StepsExecuted is the run_end's count; for a run without an end, the
	// steps recorded as ended.
	StepsExecuted int
	Usage         Spend
	Error         string
}

// RunDetail is everything recorded about one run.
type RunDetail struct {
	RunSummary
	// File is the plan file as the run was given it: a relative path is
	// relative to the directory the run was started from.
	File   string
	Hash   string
	Parent string
	Inputs json.RawMessage
	Exit   *engine.Exit
	Output json.RawMessage
	Answer string
	// EmptyData is the run_end's flag: a template read empty data.
	EmptyData   bool
	UsageReport engine.UsageReport
	// UsageFromCalls is set when the run has no run_end, and UsageReport
	// was added up from the model calls recorded before its events stopped.
	UsageFromCalls bool
	// Steps are in the order they started.
	Steps     []StepRecord
	ToolCalls []ToolCall
	// Errors are the steps that failed, in the order they failed: the
	// first is where the failure began.
	Errors   []Notice
	Warnings []Notice
	// ModelCalls are the run's model calls in the order they ended: each
	// agent round, repair pass, verdict, prompt tool and solver.
	ModelCalls []ModelCall
	// Downgrades are the model calls that asked for strict structured
	// output and went without it: Path is the step, Message the
	// downgrade reason.
	Downgrades []Notice
	// LastEvent is the last event recorded, its Payload left out.
	LastEvent StoredEvent
	// Recorder is "host:pid" of the process recording the run while it
	// records it, empty once it ended or its Recorder closed.
	Recorder string
}

// stepStatusUnknown is the status of a step whose end was recorded
// without one.
const stepStatusUnknown engine.StepStatus = "unknown"

// StepRecord is one step, body call or body step of a run.
type StepRecord struct {
	Path string
	Tool string
	// Status is engine.StepRunning (started, no end recorded), or
	// StepEnded's.
	Status engine.StepStatus
	Input  json.RawMessage
	Result json.RawMessage
	Error  string
	// StartedAt is zero for a step whose start was not recorded.
	StartedAt time.Time
	EndedAt   time.Time
	Ms        float64
}

// ToolCall is one dispatch to a tool, from its tool_start and tool_end.
type ToolCall struct {
	Path string
	Tool string
	Args json.RawMessage
	// Ended is false when no tool_end was recorded.
	Ended     bool
	IsError   bool
	Result    json.RawMessage
	Error     string
	StartedAt time.Time
	Ms        float64
}

// Notice is an error or a warning a run reported at a path.
type Notice struct {
	Path    string
	Message string
}

// StoredEvent is an event as the store keeps it, its payload as JSON.
type StoredEvent struct {
	Seq     uint64
	Time    time.Time
	Path    string
	Kind    engine.EventKind
	Payload json.RawMessage
}

// NotFoundError is a run id that matches no run. Recent are the newest
// runs, for the message to offer.
type NotFoundError struct {
	ID     string
	Recent []RunSummary
}

func (e *NotFoundError) Error() string {
	if len(e.Recent) == 0 {
		return fmt.Sprintf("no run '%s': no runs are recorded", e.ID)
	}
	return fmt.Sprintf("no run '%s'; the most recent: %s", e.ID, listRuns(e.Recent))
}

// AmbiguousError is a run id prefix that several runs begin with.
type AmbiguousError struct {
	Prefix     string
	Candidates []RunSummary
	// More is set when there are more candidates than listed.
	More bool
}

func (e *AmbiguousError) Error() string {
	more := ""
	if e.More {
		more = ", ..."
	}
	return fmt.Sprintf("run id '%s' is ambiguous; it begins %s%s", e.Prefix, listRuns(e.Candidates), more)
}

func listRuns(runs []RunSummary) string {
	parts := make([]string, len(runs))
	for i, r := range runs {
		parts[i] = fmt.Sprintf("%s (%s)", r.ID, r.Plan)
	}
	return strings.Join(parts, ", ")
}

const summaryColumns = `id, plan, project, status, error, started_at, ended_at, last_event_at, recorder, calls, tokens, cost_usd,
	CASE WHEN status = 'running' THEN steps_ended ELSE coalesce(steps_executed, 0) END`

// Runs lists runs, newest first.
func (s *Store) Runs(ctx context.Context, f RunFilter) ([]RunSummary, error) {
	return s.runs(ctx, s.db, f)
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (s *Store) runs(ctx context.Context, q querier, f RunFilter) ([]RunSummary, error) {
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
	list := []RunSummary{}
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
func (s *Store) scanSummary(row interface{ Scan(...any) error }, extra ...any) (RunSummary, string, error) {
	var r RunSummary
	var started, ended, last sql.NullInt64
	var recorder sql.NullString
	var cost sql.NullFloat64
	dest := append([]any{&r.ID, &r.Plan, &r.Project, &r.Status, &r.Error, &started, &ended, &last, &recorder,
		&r.Usage.Calls, &r.Usage.Tokens, &cost, &r.StepsExecuted}, extra...)
	err := row.Scan(dest...)
	if err != nil {
		return r, "", err
	}
	r.StartedAt, r.EndedAt, r.LastEventAt = fromNanos(started), fromNanos(ended), fromNanos(last)
	if cost.Valid {
		r.Usage.CostUSD = &cost.Float64
	}
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
	var found []RunSummary
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
		return 0, &AmbiguousError{Prefix: id, Candidates: found[:min(len(found), most)], More: len(found) > most}
	}
	recent, err := s.runs(ctx, q, RunFilter{Limit: 5})
	if err != nil {
		return 0, err
	}
	return 0, &NotFoundError{ID: id, Recent: recent}
}

// Run returns everything recorded about the run that id names: its full
// id, or a prefix only one run begins with. An unknown id is a
// *NotFoundError, an ambiguous prefix an *AmbiguousError.
func (s *Store) Run(ctx context.Context, id string) (*RunDetail, error) {
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
	d := &RunDetail{}
	var lastSeq int64
	row := tx.QueryRowContext(ctx, `SELECT `+summaryColumns+`, file, hash, parent, last_seq FROM runs WHERE key = ?`, key)
	d.RunSummary, d.Recorder, err = s.scanSummary(row, &d.File, &d.Hash, &d.Parent, &lastSeq)
	if err != nil {
		return nil, err
	}
	events, err := runEvents(ctx, tx, key)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", d.ID, err)
	}
	if err := d.build(events, uint64(lastSeq)); err != nil {
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
		StructuredOutput *json.RawMessage `json:"structured_output"`
	}
	warningMembers struct {
		Message string `json:"message"`
	}
)

// members reads the members of an event's payload that its record keeps;
// an event without a payload has none.
func members[T any](e *StoredEvent) (T, error) {
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

func (s *spans) start(e *StoredEvent, m *spanMembers) {
	sp := &span{seq: e.Seq, path: e.Path, start: m, startedAt: e.Time}
	s.list = append(s.list, sp)
	if s.open == nil {
		s.open = map[string]*span{}
	}
	s.open[e.Path] = sp
}

func (s *spans) end(e *StoredEvent, m *spanMembers) *span {
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

// build fills in the record of a run from its events, in sequence order:
// its inputs, outcome and usage (its run_start's and run_end's), its
// steps, tool calls, failures, warnings and model calls.
func (d *RunDetail) build(events []StoredEvent, lastSeq uint64) error {
	var steps, calls spans
	var failed []*span
	var tally *engine.Tally
	var runEnd *StoredEvent
	d.Errors, d.Warnings, d.ModelCalls, d.Downgrades = []Notice{}, []Notice{}, []ModelCall{}, []Notice{}
	for i := range events {
		e := &events[i]
		if e.Seq == lastSeq {
			d.LastEvent = StoredEvent{Seq: e.Seq, Time: e.Time, Path: e.Path, Kind: e.Kind}
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
		case engine.EventWarning:
			m, err := members[warningMembers](e)
			if err != nil {
				return err
			}
			d.Warnings = append(d.Warnings, Notice{Path: e.Path, Message: m.Message})
		case engine.EventModelCall:
			m, err := members[modelCallMembers](e)
			if err != nil {
				return err
			}
			if tally == nil {
				tally = engine.NewTally()
			}
			if err := d.addModelCall(e, &m, tally); err != nil {
				return err
			}
		}
	}
	d.Steps = make([]StepRecord, len(steps.list))
	for i, sp := range steps.list {
		r := StepRecord{Path: sp.path, Tool: sp.tool(), Status: engine.StepRunning, StartedAt: sp.startedAt, EndedAt: sp.endedAt}
		if sp.start != nil {
			r.Input = sp.start.Input
		}
		if sp.end != nil {
			r.Status, r.Result, r.Error, r.Ms = stepStatusUnknown, sp.end.Result, sp.end.Error, sp.end.Ms
			if sp.end.Status != nil {
				r.Status = *sp.end.Status
			}
		}
		d.Steps[i] = r
	}
	for _, sp := range failed {
		d.Errors = append(d.Errors, Notice{Path: sp.path, Message: sp.end.Error})
	}
	d.ToolCalls = make([]ToolCall, len(calls.list))
	for i, sp := range calls.list {
		c := ToolCall{Path: sp.path, Tool: sp.tool(), StartedAt: sp.startedAt}
		if sp.start != nil {
			c.Args = sp.start.Args
		}
		if sp.end != nil {
			c.Ended, c.IsError, c.Result, c.Error, c.Ms = true, sp.end.IsError, sp.end.Result, sp.end.Error, sp.end.Ms
		}
		d.ToolCalls[i] = c
	}
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

// ModelCall is one model call as inspect lists it; the request and reply
// stay in the event.
type ModelCall struct {
	Path         string  `json:"path"`
	Role         string  `json:"role"`
	Provider     string  `json:"provider"`
	Model        string  `json:"model"`
	InputTokens  int     `json:"input_tokens"`
	OutputTokens int     `json:"output_tokens"`
	CachedTokens int     `json:"cached_tokens"` // cache reads and writes
	Ms           float64 `json:"ms"`
	Error        string  `json:"error,omitempty"`
	// Strict is the strict structured output record, empty when the call
	// did not ask for it: "sent", or the downgrade reason.
	Strict string `json:"strict,omitempty"`
}

// strictMembers are a model call's strict structured output record.
type strictMembers struct {
	Sent            *bool   `json:"sent"`
	DowngradeReason *string `json:"downgrade_reason"`
}

// addModelCall lists one model call, adds it to the tally of a run
// without a run_end, and lists it among the downgrades when it asked for
// strict structured output and went without it.
func (d *RunDetail) addModelCall(e *StoredEvent, m *modelCallMembers, tally *engine.Tally) error {
	c := ModelCall{Path: e.Path, Role: m.Role, Provider: m.Provider, Model: m.Model, InputTokens: m.Usage.InputTokens,
		OutputTokens: m.Usage.OutputTokens, CachedTokens: m.Usage.CacheReadInputTokens + m.Usage.CacheCreationInputTokens, Ms: m.Ms, Error: m.Error}
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
			d.Downgrades = append(d.Downgrades, Notice{Path: site, Message: reason})
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
func runEvents(ctx context.Context, q querier, key int64) ([]StoredEvent, error) {
	rows, err := q.QueryContext(ctx, "SELECT data FROM segments WHERE run = ? ORDER BY first_seq", key)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	list := []StoredEvent{}
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
	bySeq := func(a, b StoredEvent) int { return cmp.Compare(a.Seq, b.Seq) }
	if !slices.IsSortedFunc(list, bySeq) {
		slices.SortStableFunc(list, bySeq)
	}
	return list, nil
}

// Events returns every event of the run that id names (as Run resolves
// it), in sequence order.
func (s *Store) Events(ctx context.Context, id string) ([]StoredEvent, error) {
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
