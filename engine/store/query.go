package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/model"
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
	CASE WHEN status = 'running'
		THEN (SELECT count(*) FROM steps WHERE steps.run = runs.key AND steps.end_seq IS NOT NULL)
		ELSE coalesce(steps_executed, 0) END`

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
	var startSeq, endSeq, lastSeq sql.NullInt64
	row := tx.QueryRowContext(ctx, `SELECT `+summaryColumns+`, file, hash, parent, start_seq, end_seq, last_seq
		FROM runs WHERE key = ?`, key)
	d.RunSummary, d.Recorder, err = s.scanSummary(row, &d.File, &d.Hash, &d.Parent, &startSeq, &endSeq, &lastSeq)
	if err != nil {
		return nil, err
	}
	// The run's inputs, outcome and usage are what its run_start and run_end
	// payloads say.
	if startSeq.Valid {
		var inputs sql.NullString
		err := tx.QueryRowContext(ctx, "SELECT "+whole("payload")+" -> '$.inputs' FROM events WHERE run = ? AND seq = ?", key, startSeq.Int64).Scan(&inputs)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, err
		}
		d.Inputs = raw(inputs)
	}
	if endSeq.Valid {
		var exit, output, answer, usage sql.NullString
		var empty sql.NullBool
		err := tx.QueryRowContext(ctx, `SELECT payload -> '$.exit', `+whole("payload")+` -> '$.output', `+whole("payload")+` ->> '$.answer',
			payload ->> '$.empty_data', payload -> '$.usage' FROM events WHERE run = ? AND seq = ?`, key, endSeq.Int64).
			Scan(&exit, &output, &answer, &empty, &usage)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, err
		}
		d.Output, d.Answer, d.EmptyData = raw(output), answer.String, empty.Bool
		if exit.Valid {
			d.Exit = &engine.Exit{}
			if err := json.Unmarshal([]byte(exit.String), d.Exit); err != nil {
				return nil, fmt.Errorf("run %s: its exit: %w", d.ID, err)
			}
		}
		if usage.Valid {
			if err := json.Unmarshal([]byte(usage.String), &d.UsageReport); err != nil {
				return nil, fmt.Errorf("run %s: its usage: %w", d.ID, err)
			}
		}
	} else {
		if d.UsageReport, err = usageFromCalls(ctx, tx, key); err != nil {
			return nil, err
		}
		d.UsageFromCalls = true
	}
	if d.Steps, err = steps(ctx, tx, key); err != nil {
		return nil, err
	}
	if d.Errors, err = failures(ctx, tx, key); err != nil {
		return nil, err
	}
	if d.ToolCalls, err = toolCalls(ctx, tx, key); err != nil {
		return nil, err
	}
	if d.Warnings, err = warnings(ctx, tx, key); err != nil {
		return nil, err
	}
	if d.Downgrades, err = downgrades(ctx, tx, key); err != nil {
		return nil, err
	}
	if d.ModelCalls, err = modelCalls(ctx, tx, key); err != nil {
		return nil, err
	}
	var t sql.NullInt64
	var kind string
	err = tx.QueryRowContext(ctx, `SELECT seq, time, path, kind FROM (`+eventsUnion+`) WHERE seq = ?2`, key, lastSeq.Int64).
		Scan(&d.LastEvent.Seq, &t, &d.LastEvent.Path, &kind)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	d.LastEvent.Time, d.LastEvent.Kind = fromNanos(t), engine.EventKind(kind)
	return d, nil
}

func raw(s sql.NullString) json.RawMessage {
	if !s.Valid {
		return nil
	}
	return json.RawMessage(s.String)
}

// whole is the SQL of a payload column's whole JSON: the column itself, or
// for a payload kept in blobs (its _blob column names it), the blob; the
// column then holds the payload without its valueMembers.
func whole(column string) string {
	return "coalesce((SELECT data FROM blobs WHERE hash = " + column + "_blob), " + column + ")"
}

// stepColumns are a steps row's tool, status and error, which its payloads
// hold.
const stepColumns = `coalesce(nullif(end_payload ->> '$.tool', ''), start_payload ->> '$.tool', '') AS tool,
	CASE WHEN end_seq IS NULL THEN 'running' ELSE coalesce(end_payload ->> '$.status', 'unknown') END AS status,
	coalesce(end_payload ->> '$.error', '') AS error`

// list runs a query over one run's rows and reads each row with scan:
// the one loop every listing of a run's record shares.
func list[T any](ctx context.Context, q querier, query string, run int64, scan func(*sql.Rows) (T, error)) ([]T, error) {
	rows, err := q.QueryContext(ctx, query, run)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

func scanNotice(rows *sql.Rows) (Notice, error) {
	var n Notice
	err := rows.Scan(&n.Path, &n.Message)
	return n, err
}

func steps(ctx context.Context, q querier, run int64) ([]StepRecord, error) {
	return list(ctx, q, `SELECT path, `+stepColumns+`, started_at, ended_at, end_payload ->> '$.ms',
			`+whole("start_payload")+` -> '$.input', `+whole("end_payload")+` -> '$.result'
		FROM steps WHERE run = ? ORDER BY seq`, run, func(rows *sql.Rows) (StepRecord, error) {
		var r StepRecord
		var started, ended sql.NullInt64
		var ms sql.NullFloat64
		var input, result sql.NullString
		err := rows.Scan(&r.Path, &r.Tool, &r.Status, &r.Error, &started, &ended, &ms, &input, &result)
		r.StartedAt, r.EndedAt, r.Ms = fromNanos(started), fromNanos(ended), ms.Float64
		r.Input, r.Result = raw(input), raw(result)
		return r, err
	})
}

func failures(ctx context.Context, q querier, run int64) ([]Notice, error) {
	return list(ctx, q, `SELECT path, coalesce(end_payload ->> '$.error', '') FROM steps
		WHERE run = ? AND end_payload ->> '$.status' = 'failed' ORDER BY end_seq`, run, scanNotice)
}

// stepCalls selects, as tool_calls rows, the tool calls of run ?1 that
// steps keep in their rows: the start is the step's input under args, the
// end either whole in call_end_payload or the step's result with call_ms.
var stepCalls = `SELECT call_seq AS seq, path, 1 AS started, call_started_at AS started_at,
		'{"tool":' || json_quote(start_payload ->> '$.tool') || ',"args":' || (` + whole("start_payload") + ` -> '$.input') || '}' AS start_payload,
		call_end_seq AS end_seq, call_ended_at AS ended_at,
		CASE WHEN call_ms IS NULL THEN ` + whole("call_end_payload") + `
			ELSE '{"tool":' || json_quote(end_payload ->> '$.tool') || ',"ms":' || call_ms || ',"is_error":false' ||
				coalesce(',"result":' || (` + whole("end_payload") + ` -> '$.result'), '') || '}' END AS end_payload
	FROM steps WHERE run = ?1 AND call_seq IS NOT NULL`

func toolCalls(ctx context.Context, q querier, run int64) ([]ToolCall, error) {
	return list(ctx, q, `SELECT path, coalesce(nullif(end_payload ->> '$.tool', ''), start_payload ->> '$.tool', ''),
			start_payload -> '$.args', end_seq IS NOT NULL, coalesce(end_payload ->> '$.is_error', 0),
			end_payload -> '$.result', coalesce(end_payload ->> '$.error', ''), started_at, end_payload ->> '$.ms'
		FROM (`+toolCallsAll+`) ORDER BY seq`, run, func(rows *sql.Rows) (ToolCall, error) {
		var c ToolCall
		var args, result sql.NullString
		var started sql.NullInt64
		var ms sql.NullFloat64
		err := rows.Scan(&c.Path, &c.Tool, &args, &c.Ended, &c.IsError, &result, &c.Error, &started, &ms)
		c.Args, c.Result, c.StartedAt, c.Ms = raw(args), raw(result), fromNanos(started), ms.Float64
		return c, err
	})
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

func modelCalls(ctx context.Context, q querier, run int64) ([]ModelCall, error) {
	return list(ctx, q, `SELECT path, coalesce(payload ->> '$.role', ''), coalesce(payload ->> '$.provider', ''), coalesce(payload ->> '$.model', ''),
			coalesce(payload ->> '$.usage.input_tokens', 0), coalesce(payload ->> '$.usage.output_tokens', 0),
			coalesce(payload ->> '$.usage.cache_read_input_tokens', 0) + coalesce(payload ->> '$.usage.cache_creation_input_tokens', 0),
			coalesce(payload ->> '$.ms', 0), coalesce(payload ->> '$.error', ''),
			CASE WHEN payload -> '$.structured_output' IS NULL THEN ''
				WHEN payload ->> '$.structured_output.sent' THEN 'sent'
				ELSE coalesce(payload ->> '$.structured_output.downgrade_reason', 'not sent') END
		FROM events WHERE run = ? AND kind = 'llm_call' ORDER BY seq`, run, func(rows *sql.Rows) (ModelCall, error) {
		var c ModelCall
		err := rows.Scan(&c.Path, &c.Role, &c.Provider, &c.Model, &c.InputTokens, &c.OutputTokens, &c.CachedTokens, &c.Ms, &c.Error, &c.Strict)
		return c, err
	})
}

// downgrades lists the model calls that asked for strict structured output
// and went without it: the step (the call's site) and the reason.
func downgrades(ctx context.Context, q querier, run int64) ([]Notice, error) {
	return list(ctx, q, `SELECT coalesce(payload ->> '$.site', path), coalesce(payload ->> '$.structured_output.downgrade_reason', '')
		FROM events WHERE run = ? AND kind = 'llm_call' AND payload -> '$.structured_output' IS NOT NULL
		AND payload ->> '$.structured_output.sent' = 0 ORDER BY seq`, run, scanNotice)
}

func warnings(ctx context.Context, q querier, run int64) ([]Notice, error) {
	return list(ctx, q, `SELECT path, coalesce(payload ->> '$.message', '') FROM events
		WHERE run = ? AND kind = 'warning' ORDER BY seq`, run, scanNotice)
}

// usageFromCalls adds up the model calls of a run that has no run_end into
// the report its run_end would have carried: the engine's rules, an
// unpriced call leaving its lines' cost unknown, and the same order
// (by_step most expensive first, by_model by calls). Only the small fields
// of each call are read, not its request and reply.
func usageFromCalls(ctx context.Context, q querier, run int64) (engine.UsageReport, error) {
	rows, err := q.QueryContext(ctx, `SELECT payload ->> '$.site', payload ->> '$.provider', payload ->> '$.model',
			payload -> '$.usage', payload ->> '$.cost_usd'
		FROM events WHERE run = ? AND kind = 'llm_call' ORDER BY seq`, run)
	if err != nil {
		return engine.UsageReport{ByStep: []engine.UsageLine{}, ByModel: []engine.UsageLine{}}, err
	}
	defer rows.Close()
	tally := engine.NewTally()
	for rows.Next() {
		var site, provider, modelID, usage sql.NullString
		var cost sql.NullFloat64
		if err := rows.Scan(&site, &provider, &modelID, &usage, &cost); err != nil {
			return tally.Report(), err
		}
		var u model.Usage
		json.Unmarshal([]byte(usage.String), &u)
		var c *float64
		if cost.Valid {
			c = &cost.Float64
		}
		tally.Add(site.String, provider.String, modelID.String, u, c)
	}
	return tally.Report(), rows.Err()
}

// eventsUnion selects every event of run ?1: the events table's, and the
// start and end events the rows of steps and tool_calls hold, the tool
// calls steps keep among them.
var eventsUnion = `SELECT seq, time, path, kind, ` + whole("payload") + ` FROM events WHERE run = ?1
	UNION ALL SELECT seq, started_at, path, 'step_start', ` + whole("start_payload") + ` FROM steps WHERE run = ?1 AND started
	UNION ALL SELECT end_seq, ended_at, path, 'step_end', ` + whole("end_payload") + ` FROM steps WHERE run = ?1 AND end_seq IS NOT NULL
	UNION ALL SELECT seq, started_at, path, 'tool_start', start_payload FROM (` + toolCallsAll + `) WHERE started
	UNION ALL SELECT end_seq, ended_at, path, 'tool_end', end_payload FROM (` + toolCallsAll + `) WHERE end_seq IS NOT NULL`

// toolCallsAll selects every tool call of run ?1 as tool_calls rows, their
// payloads whole.
var toolCallsAll = `SELECT seq, path, started, started_at, ` + whole("start_payload") + ` AS start_payload,
		end_seq, ended_at, ` + whole("end_payload") + ` AS end_payload FROM tool_calls WHERE run = ?1
	UNION ALL ` + stepCalls

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
	rows, err := tx.QueryContext(ctx, eventsUnion+" ORDER BY 1", key)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	list := []StoredEvent{}
	for rows.Next() {
		var e StoredEvent
		var t sql.NullInt64
		var kind string
		var payload sql.NullString
		if err := rows.Scan(&e.Seq, &t, &e.Path, &kind, &payload); err != nil {
			return nil, err
		}
		e.Time, e.Kind, e.Payload = fromNanos(t), engine.EventKind(kind), raw(payload)
		list = append(list, e)
	}
	return list, rows.Err()
}
