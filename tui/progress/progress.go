// Package progress follows a run as it goes, from its events alone: which
// top-level steps are running, how far each map, filter and reduce is
// through its items (done, running, failed, the rate and the time left),
// which round each agent is in and how many tools it called, and what the
// run has spent so far. It draws nothing: `stepwise run` renders it on a
// terminal or as log lines, and a pane could render it too.
//
// A Run is not safe for concurrent use; a renderer that reads it from
// another goroutine than the sink's guards it.
package progress

import (
	"strconv"
	"strings"
	"time"

	"github.com/stepwise-dev/stepwise/engine"
	paths "github.com/stepwise-dev/stepwise/engine/path"
	"github.com/stepwise-dev/stepwise/tui/format"
)

// Run is the progress of one run.
type Run struct {
	// Started is when the run started: its run_start event, or when the
	// Run was made if that event is yet to come.
	Started time.Time
	// Spend is what the run's model calls have cost so far.
	Spend Spend
	// running are the top-level steps under way, in the order they
	// started; byPath indexes them.
	running []*Step
	byPath  map[string]*Step
}

// Spend is what some model calls cost.
type Spend struct {
	Calls int
	// Tokens counts input and output tokens, cached ones included.
	Tokens int
	// CostUSD is the sum of the calls' costs; Priced says whether some
	// call that was answered had a price and every one did, without which
	// the sum understates the cost, or says nothing, and is not told. A
	// call that failed has no price and costs nothing: it leaves the cost
	// as the answered calls make it, and calls that all failed leave it
	// unknown, as the model's price was never seen ("$0" would claim one).
	CostUSD float64
	Priced  bool
	// unpriced is set once an answered call had no price.
	unpriced bool
}

func (s *Spend) add(c engine.ModelCalled) {
	s.Calls++
	s.Tokens += c.Usage.InputTokens + c.Usage.OutputTokens + c.Usage.CacheCreationInputTokens + c.Usage.CacheReadInputTokens
	switch {
	case c.CostUSD != nil:
		s.CostUSD += *c.CostUSD
	case c.Error == "":
		s.unpriced = true
	default:
		return
	}
	s.Priced = !s.unpriced
}

// Step is one top-level step, running or just ended.
type Step struct {
	Path string
	// Tool is the step's tool: map, agent, user__fetch; for the solver,
	// its path.
	Tool    string
	Started time.Time
	// List is the progress through the items of a map, filter or reduce;
	// nil for any other step.
	List *List
	// Agent says the step is an agent: Rounds counts the rounds its model
	// answered, so the one under way is Rounds+1, and Tools the tool calls
	// they made. (The solver is one model call, no agent.)
	Agent         bool
	Rounds, Tools int
	// Spend is what the step's model calls (its items', its rounds')
	// cost.
	Spend Spend
	// End is how the step ended; nil while it runs.
	End *engine.StepEnded
	// lastBodyStep is the id of the last step of a list body (do: [...]),
	// whose end is the end of an item; "" for a single-call body, whose
	// item ends with its own step_end.
	lastBodyStep string
}

// List is the progress of a map, filter or reduce through its items.
type List struct {
	// Total is how many items the list has; -1 until it has rendered.
	Total int
	// Done counts the items that ended, Failed those of them that failed
	// and Cancelled those the run's abort ended (ctrl-c, or a person's
	// abort at a stop).
	Done, Failed, Cancelled int
	// running are the items started and not ended, by index.
	running map[int]bool
	// firstStarted is when the first item started: the rate counts from
	// there, not from the step's start, which may have waited at a stop.
	firstStarted time.Time
}

// Running is how many items have started and not ended.
func (l *List) Running() int { return len(l.running) }

// Rate is how many items end per second, on average since the first one
// started; 0 before any has ended.
func (l *List) Rate(now time.Time) float64 {
	elapsed := now.Sub(l.firstStarted).Seconds()
	if l.Done == 0 || elapsed <= 0 {
		return 0
	}
	return float64(l.Done) / elapsed
}

// ETA is how long the items left will take at the rate so far; ok is
// false while it cannot be told (no item ended yet, or the total is not
// known).
func (l *List) ETA(now time.Time) (left time.Duration, ok bool) {
	rate := l.Rate(now)
	if rate == 0 || l.Total < 0 {
		return 0, false
	}
	return time.Duration(float64(l.Total-l.Done) / rate * float64(time.Second)), true
}

// Count is the items done out of the total: 42/200, or 42/? until the
// list has rendered.
func (l *List) Count() string {
	total := "?"
	if l.Total >= 0 {
		total = Thousands(l.Total)
	}
	return Thousands(l.Done) + "/" + total
}

// Words are the list's figures for a line of progress: the items done
// out of the total, running, failed and cancelled, the rate and the time
// left, each while it can be told (42/200 items, 4 running, 14.6/s, ETA
// 10.8s).
func (l *List) Words(now time.Time) []string {
	words := append([]string{l.Count() + " items", Thousands(l.Running()) + " running"}, l.Notes()...)
	if rate := l.Rate(now); rate >= 1 {
		words = append(words, strconv.FormatFloat(rate, 'f', 1, 64)+"/s")
	} else if rate > 0 {
		words = append(words, strconv.FormatFloat(rate*60, 'f', 1, 64)+"/min")
	}
	if left, ok := l.ETA(now); ok {
		words = append(words, "ETA "+format.Duration(left))
	}
	return words
}

// Notes are the counts of the list's items that did not end well: "2
// failed", "8 cancelled".
func (l *List) Notes() []string {
	var notes []string
	if l.Failed > 0 {
		notes = append(notes, Thousands(l.Failed)+" failed")
	}
	if l.Cancelled > 0 {
		notes = append(notes, Thousands(l.Cancelled)+" cancelled")
	}
	return notes
}

// Thousands writes n with a comma between each group of three digits.
func Thousands(n int) string {
	if n < 0 {
		return "-" + Thousands(-n)
	}
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// New is the progress of a run that has not started yet.
func New(now time.Time) *Run {
	return &Run{Started: now, byPath: map[string]*Step{}}
}

// Kinds are the kinds of event a Run reads, for an engine.Selective sink.
var Kinds = []engine.EventKind{engine.EventRunStart, engine.EventStepStart, engine.EventStepEnd, engine.EventItems,
	engine.EventGate, engine.EventModelCall, engine.EventToolStart}

// Running returns the top-level steps under way, in the order they
// started. The slice is the Run's: read it, do not keep it past the next
// event.
func (r *Run) Running() []*Step { return r.running }

// Step returns the top-level step at path while it runs, or nil.
func (r *Run) Step(path string) *Step { return r.byPath[path] }

// Event takes one event of the run in. When it ends a top-level step, it
// returns that step, its End set, and the step is no longer running.
func (r *Run) Event(e engine.Event) (ended *Step) {
	top, rest, _ := strings.Cut(e.Path, "/")
	s := r.byPath[top]
	if s != nil && s.List != nil && rest != "" {
		s.List.itemEvent(e, rest, s.lastBodyStep)
	}
	switch pl := e.Payload.(type) {
	case engine.RunStarted:
		r.Started = e.Time
	case engine.ModelCalled:
		r.Spend.add(pl)
		if s != nil {
			s.Spend.add(pl)
			if parent, _, _ := paths.Parent(e.Path); e.Unit == paths.KindRound && parent == top {
				s.Rounds = max(s.Rounds, roundOf(e.Path))
			}
		}
	case engine.StepStarted:
		if rest != "" || e.Path == "" {
			return nil
		}
		s := &Step{Path: e.Path, Tool: pl.Tool, Started: e.Time}
		switch pl.Tool {
		case "map", "filter", "reduce":
			s.List = &List{Total: -1, running: map[int]bool{}}
			s.lastBodyStep = lastBodyStep(pl)
		case "agent":
			s.Agent = true
		}
		r.running = append(r.running, s)
		r.byPath[e.Path] = s
	case engine.StepEnded:
		if s == nil || rest != "" {
			return nil
		}
		// A copy taken here, not the case's own: one whose address is
		// taken would be moved to the heap for every step's end.
		end := pl
		s.End = &end
		delete(r.byPath, top)
		for i, running := range r.running {
			if running == s {
				r.running = append(r.running[:i], r.running[i+1:]...)
				break
			}
		}
		return s
	case engine.ItemsListed:
		if s != nil && s.List != nil && rest == "" {
			s.List.Total = pl.Count
		}
	case engine.ToolStarted:
		if s != nil && s.Agent && e.Unit == paths.KindCall {
			s.Tools++
		}
	}
	return nil
}

// itemEvent counts an event under an item of the list: rest is its path
// below the list step (do.3, do.3/E10, do.3/judge). An item's first
// event starts it. It ends with its own step_end (a single-call body),
// the end of the last step of a list body (lastBodyStep), a failure of
// one of its body steps, or its verdict (a filter).
func (l *List) itemEvent(e engine.Event, rest, lastBodyStep string) {
	item, below, _ := strings.Cut(rest, "/")
	n, ok := strings.CutPrefix(item, "do.")
	if !ok {
		return
	}
	index, err := strconv.Atoi(n)
	if err != nil {
		return
	}
	ends, failed, cancelled := false, false, false
	switch pl := e.Payload.(type) {
	case engine.StepEnded:
		// Only the item's own step and its body's steps: a failure
		// deeper down reaches the item through one of them.
		own := below == "" || !strings.Contains(below, "/")
		failed = own && pl.Status == engine.StepFailed
		cancelled = own && pl.Status == engine.StepAborted
		ends = failed || cancelled || (below == "" && e.Unit == paths.KindItem) || (below != "" && below == lastBodyStep && own)
	case engine.GateEvaluated:
		ends = below == "" && e.Unit == paths.KindItem
	}
	if !ends {
		if !l.running[index] {
			if l.firstStarted.IsZero() {
				l.firstStarted = e.Time
			}
			l.running[index] = true
		}
		return
	}
	if l.firstStarted.IsZero() {
		l.firstStarted = e.Time
	}
	delete(l.running, index)
	l.Done++
	switch {
	case cancelled:
		l.Cancelled++
	case failed:
		l.Failed++
	}
}

// roundOf reads the round number from a round's path: 2 from E1/agent.2.
func roundOf(p string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(paths.Last(p), "agent."))
	return n
}

// lastBodyStep is the id of the last step of a list step's body when it
// is a list of steps, read from the step's input as written; "" for any
// other step.
func lastBodyStep(pl engine.StepStarted) string {
	in, _ := pl.Input.(map[string]any)
	body, _ := in["do"].([]any)
	if len(body) == 0 {
		return ""
	}
	last, _ := body[len(body)-1].(map[string]any)
	id, _ := last["id"].(string)
	return id
}
