package tui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/debugger/timeline"
	"github.com/stepwise-dev/stepwise/debugger/workspace"
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/record"
	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/tui/format"
	"github.com/stepwise-dev/stepwise/tui/live"
	"github.com/stepwise-dev/stepwise/tui/runs"
	"github.com/stepwise-dev/stepwise/tui/runtree"
)

// The answers of the store and of replays and forks run in the
// background.
type (
	storedMsg struct {
		id   string
		doc  int
		tree *live.Tree
		// timeline is the run's bars, built from the same events.
		timeline *timeline.Timeline
		detail   *record.RunDetail
		err      error
	}
	// replayedMsg ends a replay or a fork: what it found, for the
	// status line.
	replayedMsg struct {
		run     *run
		summary string
		failed  bool
	}
	diffMsg struct {
		base, other *record.RunDetail
		err         error
	}
)

// runsLimit is how many earlier runs the panel lists.
const runsLimit = 200

// openRuns shows the earlier runs of the plan on show.
func (p *runPage) openRuns(plan string) tea.Cmd {
	if !p.recorded() {
		p.notify(noticeError, "no run store: runs are not recorded (see [storage] in the configuration)")
		return nil
	}
	p.refreshRuns(plan)
	p.runsPanel.Select(0) // the newest
	p.post(pushOverlay{p.runsPanel, true})
	p.runsPanel.Focus()
	return nil
}

// recorded reports whether the workbench's runs are recorded in a run
// store.
func (p *runPage) recorded() bool {
	return p.ws != nil && p.ws.Project().Recorded
}

// runsFlushedMsg says the recorder has written what a run emitted.
type runsFlushedMsg struct{}

// flushRuns waits, in the background, for the recorder to write the run
// that just ended, then has the runs panel read the store again.
func (p *runPage) flushRuns() tea.Cmd {
	if !p.recorded() {
		return nil
	}
	ws := p.ws
	return func() tea.Msg {
		ws.Flush()
		return runsFlushedMsg{}
	}
}

// refreshRuns reads the plan's runs from the store into the panel.
func (p *runPage) refreshRuns(plan string) {
	if !p.recorded() {
		return
	}
	list, err := p.ws.Runs(p.ctx, record.RunFilter{Plan: plan, Project: p.ws.Project().Root, Limit: runsLimit})
	var none *workspace.NoStoreError
	if errors.As(err, &none) {
		list, err = nil, nil // nothing recorded yet
	}
	if err != nil {
		p.notify(noticeError, "the run store: "+err.Error())
		return
	}
	p.runsPanel.Now = p.now()
	p.runsPanel.SetRuns(list)
}

// lastInputs is what the plan's newest recorded run of this project ran
// with, to fill its inputs form with in a new session: the run store
// keeps them, as it keeps the runs. nil when no run recorded any.
func (p *runPage) lastInputs(plan string) map[string]any {
	if !p.recorded() {
		return nil
	}
	list, err := p.ws.Runs(p.ctx, record.RunFilter{Plan: plan, Project: p.ws.Project().Root, Limit: runsLimit})
	if err != nil {
		return nil // no store yet, or none to read: the form keeps its defaults
	}
	for _, r := range list {
		var inputs map[string]any
		if len(r.Inputs) > 0 && json.Unmarshal(r.Inputs, &inputs) == nil && len(inputs) > 0 {
			return inputs
		}
	}
	return nil
}

// openStored reads an earlier run back from the store, to show it in the
// run page, read-only, over the plan of document doc.
func (p *runPage) openStored(id string, doc int, plan *plans.Plan) tea.Cmd {
	if p.run.active() {
		p.notify(noticeError, "a run is going; it must end (a aborts it) before another is shown")
		return nil
	}
	ws, ctx := p.ws, p.ctx
	return func() tea.Msg {
		detail, events, err := ws.RunEvents(ctx, id)
		if err != nil {
			return storedMsg{id: id, doc: doc, err: err}
		}
		return storedMsg{id: id, doc: doc, tree: runs.Build(plan, events), timeline: timeline.FromEvents(events), detail: detail}
	}
}

func (p *runPage) onStored(msg storedMsg) {
	if msg.err != nil {
		p.notify(noticeError, msg.err.Error())
		return
	}
	tot := msg.tree.Totals()
	p.show(&run{doc: msg.doc, tree: msg.tree, timeline: msg.timeline, stored: msg.detail.ID, eventsDone: true,
		state: debugger.State{Finished: true, Status: tot.RunStatus, Error: tot.Error}}, true)
	p.notify(noticeInfo, "f forks it from the selected step · y replays it · w shows its timeline · P shows the plan")
}

// replay runs a recorded run again from its record, no model or tool
// called, onto the run page, over the plan of document doc.
func (p *runPage) replay(id string, doc int, d workspace.Document) tea.Cmd {
	return p.rerun(id, doc, d, "replay", func(ctx context.Context, rec *debugger.Recording, r *run) replayedMsg {
		res, err := p.ws.Replay(ctx, rec, r.plan, workspace.RunOptions{Sinks: []engine.Sink{r.feed}})
		switch {
		case err != nil:
			return replayedMsg{r, "the replay could not run: " + err.Error(), true}
		case res.Identical():
			return replayedMsg{r, replayMatches(res), false}
		}
		return replayedMsg{r, "the replay diverged: " + res.Divergence.String(), true}
	})
}

// replayMatches says that a replay reproduced its record: whole, or up
// to where the recorded run was aborted or failed, as it was.
func replayMatches(res *debugger.ReplayResult) string {
	upTo := ""
	switch {
	case res.AbortedAt != "":
		upTo = " up to its abort at " + res.AbortedAt
	case res.FailedAt != "":
		upTo = " up to its failure at " + res.FailedAt
	}
	return fmt.Sprintf("the replay of %s matches the record%s (%d model calls answered from it)", format.ShortID(res.Of), upTo, res.ModelCalls)
}

// forkDraft is a fork of the earlier run on show, waiting for the value
// of its first step.
type forkDraft struct {
	id, from string
	doc      int
	d        workspace.Document
	// table is the breakpoints a fork under the debugger stops at; nil
	// for a plain fork, which stops only where its plan asks.
	table *debugger.Breakpoints
	// recorded is the step's recorded result, which the editor opens on.
	recorded any
}

// fork forks the run on show from a step, over the plan of document doc:
// the editor opens on the step's recorded result first, and the fork
// starts with the value given there (startFork). A step with no result
// recorded, or a row no value can be set at, forks at once. With a table
// the fork runs under the debugger.
func (p *runPage) fork(from string, doc int, d workspace.Document, table *debugger.Breakpoints) tea.Cmd {
	id := p.run.recordID()
	switch {
	case id == "" && p.run.active():
		p.notify(noticeError, "the run is going: it can be forked once it ends")
		return nil
	case id == "" || !p.recorded():
		p.notify(noticeError, "f forks a recorded run: R opens one, then select the step to fork from")
		return nil
	}
	if from == "" {
		p.notify(noticeError, "select the step to fork from")
		return nil
	}
	from = p.enclosingStep(from)
	f := &forkDraft{id: id, from: from, doc: doc, d: d, table: table}
	// An item whose body is a list of steps has a result but no step to
	// set it at: it forks as it is.
	n, ok := p.run.tree.Node(from)
	if !ok || n.Result == nil || d.Plan == nil || !p.ws.HasStep(d.Plan, from) {
		return p.startFork(f, nil)
	}
	f.recorded = n.Result
	p.forking = f
	p.post(pushOverlay{p.editor, false})
	// The value is checked as an inject at the step's stops would be.
	snap := &debugger.Snapshot{Path: from, Prefill: n.Result, Schema: p.ws.ResultSchema(d.Plan, from)}
	return p.editor.Open("fork from "+from+": its result", p.Keys.Submit.Help().Key+" forks with it, as it is or changed", snap)
}

// startFork runs the fork f under a debugger session: the step forked
// from runs again when value is its recorded result (or nil), and takes
// value instead of running when it was changed; the steps before it keep
// their recorded results, the rest run for real and ask their asks. A
// plain fork stops nowhere else; one with a table stops at its
// breakpoints, or at the first stop when none is enabled.
func (p *runPage) startFork(f *forkDraft, value any) tea.Cmd {
	spec := debugger.ForkSpec{From: f.from}
	if value != nil && !sameJSON(value, f.recorded) {
		spec.Sets = []debugger.ForkSet{{Path: f.from, Value: value}}
	}
	r, rec, ok := p.rerunUnderSession(f.id, f.doc, f.d, "fork", f.table != nil)
	if !ok {
		return nil
	}
	r.origin = runtree.Origin{What: "fork", Run: f.id, From: f.from}
	session, forked, err := p.ws.DebugFork(rec, r.plan, spec, f.table, workspace.RunOptions{Sinks: []engine.Sink{r.feed}})
	if err != nil {
		p.notify(noticeError, "the fork cannot start: "+err.Error())
		return nil
	}
	r.forked = forked
	what := "fork of " + format.ShortID(f.id) + " from " + f.from
	if len(spec.Sets) > 0 {
		what += " with its value changed"
	}
	p.notify(noticeInfo, what+" started")
	return p.begin(r, session, f.table, rec.Inputs())
}

// replayUnderDebugger replays the recorded run id under a debugger
// session that stops at the breakpoints of table, or at the first stop
// when none is enabled; a stop let go on is answered from the record.
func (p *runPage) replayUnderDebugger(id string, doc int, d workspace.Document, table *debugger.Breakpoints) tea.Cmd {
	r, rec, ok := p.rerunUnderSession(id, doc, d, "replay", true)
	if !ok {
		return nil
	}
	r.origin = runtree.Origin{What: "replay", Run: id}
	session, replayed, err := p.ws.DebugReplay(rec, r.plan, table, workspace.RunOptions{Sinks: []engine.Sink{r.feed}})
	if err != nil {
		p.notify(noticeError, "the replay cannot start: "+err.Error())
		return nil
	}
	r.replayed = replayed
	p.notify(noticeInfo, "replay of "+format.ShortID(id)+" started under the debugger")
	return p.begin(r, session, table, rec.Inputs())
}

// rerunUnderSession reads the recorded run id and lays out the run that
// replays or forks it under a session, over the plan of document doc; ok
// is false, with a notice said, where it cannot start.
func (p *runPage) rerunUnderSession(id string, doc int, d workspace.Document, what string, debug bool) (*run, *debugger.Recording, bool) {
	switch {
	case !p.recorded():
		p.notify(noticeError, "no run store to "+what+" from")
		return nil, nil, false
	case p.run.active():
		p.notify(noticeError, "a run is going; it must end (a aborts it) first")
		return nil, nil, false
	case d.Plan == nil:
		p.notify(noticeError, "the plan does not load; fix it first")
		return nil, nil, false
	}
	rec, err := p.ws.Recording(p.ctx, id)
	if err != nil {
		p.notify(noticeError, err.Error())
		return nil, nil, false
	}
	return &run{doc: doc, plan: d.Plan, debug: debug, tree: live.New(d.Plan), timeline: timeline.New(), feed: live.NewFeed(), busy: true, rerun: what}, rec, true
}

// sameJSON reports whether a and b write the same JSON.
func sameJSON(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}

// rerun starts a replay or a fork of a recorded run in the background,
// streaming onto the run page as a run of its own.
func (p *runPage) rerun(id string, doc int, d workspace.Document, what string, do func(context.Context, *debugger.Recording, *run) replayedMsg) tea.Cmd {
	if !p.recorded() {
		p.notify(noticeError, "no run store to "+what+" from")
		return nil
	}
	if p.run.active() {
		p.notify(noticeError, "a run is going; it must end (a aborts it) first")
		return nil
	}
	if d.Plan == nil {
		p.notify(noticeError, "the plan does not load; fix it first")
		return nil
	}
	ctx, cancel := context.WithCancel(p.ctx)
	r := &run{doc: doc, plan: d.Plan, tree: live.New(d.Plan), timeline: timeline.New(), feed: live.NewFeed(), cancel: cancel, busy: true, rerun: what, before: p.run,
		origin: runtree.Origin{What: what, Run: id}}
	p.show(r, false)
	p.notify(noticeInfo, what+" of "+format.ShortID(id)+" started")
	ws := p.ws
	work := func() tea.Msg {
		defer r.feed.Close()
		rec, err := ws.Recording(ctx, id)
		if err != nil {
			return replayedMsg{r, err.Error(), true}
		}
		return do(ctx, rec, r)
	}
	return tea.Batch(work, r.waitEvents(), r.tick())
}

// onReplayed takes a replay's or fork's outcome; the run page settles
// once the last of its events has arrived too.
func (p *runPage) onReplayed(msg replayedMsg) tea.Cmd {
	r := msg.run
	r.outcome = &msg
	if !r.eventsDone {
		// The work closed the feed before it answered; the batch that
		// says so is on its way, and settles the run.
		return nil
	}
	return p.settleRerun(r)
}

// settleRerun ends a replay or a fork whose work and events are all in.
func (p *runPage) settleRerun(r *run) tea.Cmd {
	msg := *r.outcome
	r.busy = false
	r.state.Finished = true
	r.state.Status = r.tree.Totals().RunStatus
	if r.tree.Totals().Status == live.Pending && r == p.run && r.before != nil {
		// It never started (a fork from a step the record does not
		// have): the run the user was looking at comes back.
		p.show(r.before, false)
	}
	r.before = nil
	if msg.failed {
		p.notify(noticeError, msg.summary)
	} else {
		p.notify(noticeInfo, msg.summary)
	}
	return p.flushRuns()
}

// diffRuns compares two earlier runs step by step.
func (p *runPage) diffRuns(base, other string) tea.Cmd {
	ws, ctx := p.ws, p.ctx
	return func() tea.Msg {
		a, b, _, err := ws.Diff(ctx, base, other)
		return diffMsg{base: a, other: b, err: err}
	}
}

func (p *runPage) onDiff(msg diffMsg) {
	if msg.err != nil {
		p.notify(noticeError, msg.err.Error())
		return
	}
	p.diffPanel.SetRuns(msg.base, msg.other)
	p.post(pushOverlay{p.diffPanel, true})
	p.diffPanel.Focus()
}

// enclosingStep is the step a row belongs to: the row itself for a step or
// a map item, else the nearest step above a round, tool call or repair
// pass. A fork starts at a step.
func (p *runPage) enclosingStep(at string) string {
	for q := at; q != ""; q = parentPath(q) {
		if n, ok := p.run.tree.Node(q); ok && (n.Kind == live.KindStep || n.Kind == live.KindItem) {
			return q
		}
	}
	return at
}

func parentPath(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return ""
}
