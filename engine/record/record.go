// Package record is a recorded run as values: the summaries a listing
// shows, everything recorded about one run, the filter that selects runs,
// and the errors of a run id that matches none or several. engine/store
// reads and writes runs and returns these. It exists apart so that front
// ends list and inspect runs without importing the store.
package record

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/stepwise-dev/stepwise/engine"
)

// RunFilter selects the runs that a store's Runs lists.
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
	// Decided counts the decisions a person made at the run's stops.
	Decided int
	// Held is how long some thread of the run was held at a stop, part
	// of Duration; recorded when the run ended.
	Held time.Duration
	// Parent is the run this one replays or forks; Made says how it was
	// made (run, debug, replay, fork; empty for runs recorded before the
	// store kept it); Inputs are what it ran with (empty likewise, until
	// its detail is read).
	Parent string
	Made   engine.Made
	Inputs json.RawMessage
}

// RunDetail is everything recorded about one run.
type RunDetail struct {
	RunSummary
	// File is the plan file as the run was given it: a relative path is
	// relative to the directory the run was started from.
	File string
	Hash string
	// ParentDeleted says that Parent is no longer in the store: it was
	// deleted (runs rm, runs prune, [storage] keep_days) after this run
	// replayed or forked it.
	ParentDeleted bool
	Exit          *engine.Exit
	Output        json.RawMessage
	Answer        string
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
	// Decisions are the decisions a person made at the run's stops, in
	// the order they were made.
	Decisions []Decision
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
	// Ms is the step's wall time; HeldMs how much of it its threads were
	// held at stops.
	Ms     float64
	HeldMs float64
	// Decided is the action by which a person decided the step's result
	// (engine.StepEnded's); Reused says it is a recorded run's instead.
	Decided string
	Reused  string
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
	HeldMs    float64
	// Decided and Reused say who gave an injected result, as StepRecord's.
	Decided string
	Reused  string
}

// Decision is one decision a person made at a stop, or one a replay made
// again: engine.Decided at Path.
type Decision struct {
	Path   string
	Stop   engine.StopKind
	Action string
	// Value is the value decided, as the store keeps it (redacted); empty
	// for a decision without one (decline, deny, approve).
	Value json.RawMessage
	// Origin is empty for a person's decision, "replay" for one a replay
	// made again (engine.Decided's).
	Origin string
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
	// Aborted says the call was cut short because the run was stopped
	// (engine.ModelCalled's).
	Aborted bool `json:"aborted,omitempty"`
	// Retries say why the attempts that failed before the one that
	// answered failed (engine.ModelCalled's).
	Retries []string `json:"retries,omitempty"`
	// Strict is the strict structured output record, empty when the call
	// did not ask for it: "sent", or the downgrade reason.
	Strict string `json:"strict,omitempty"`
	// Decided is the action by which a person decided at the call's path
	// (its reply replaced); Reused is "replay" for such a decision a
	// replay made again. Both as StepRecord's.
	Decided string `json:"decided,omitempty"`
	Reused  string `json:"reused,omitempty"`
}
