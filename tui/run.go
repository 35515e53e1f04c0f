package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/debugger/timeline"
	"github.com/stepwise-dev/stepwise/debugger/workspace"
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/tui/approval"
	"github.com/stepwise-dev/stepwise/tui/common"
	"github.com/stepwise-dev/stepwise/tui/format"
	"github.com/stepwise-dev/stepwise/tui/live"
	"github.com/stepwise-dev/stepwise/tui/runtree"
)

// run is one run on show: a live one the workbench drives through a
// debugger session, or an earlier one read back from the store.
type run struct {
	doc     int // the document whose plan runs
	plan    *plans.Plan
	debug   bool
	session *debugger.Session // nil for an earlier run and a replay (y)
	tree    *live.Tree
	// timeline is the run's bars on one time axis, fed the events the
	// tree is.
	timeline *timeline.Timeline
	feed     *live.Feed
	cancel   context.CancelFunc

	// state is the session's latest answer; busy says a Start or Do is in
	// flight, that is, the run is going on and not held.
	state debugger.State
	busy  bool
	// watches are the run's watch expressions, as its session read them
	// at the last stop.
	watches []debugger.WatchValue
	// eventsDone says the feed has delivered the run's last event;
	// applied counts the events the tree has taken.
	eventsDone bool
	applied    int
	// stored is the id of an earlier run opened from the store; rerun
	// says "replay" or "fork" for one run again from the store.
	stored string
	rerun  string
	// origin says where a replay or a fork comes from, for the tree's
	// title: "replay of RUN", "fork of RUN from PATH".
	origin runtree.Origin
	// id is the run's own id, read off its events, which the run store
	// keeps it under once it has ended.
	id string
	// before is the run on show when a replay or fork started, shown
	// again if it cannot start; outcome is what the replay or fork
	// found, kept until its last events are in.
	before  *run
	outcome *replayedMsg
	// replayed tells how a replay under the debugger compares with its
	// record, and forked how a fork went, once it has ended; nil for every
	// other run.
	replayed func(*engine.Result) *debugger.ReplayResult
	forked   func(*engine.Result) *debugger.ForkResult
}

// held reports whether the run waits at a stop for a command.
func (r *run) held() bool {
	return r != nil && r.session != nil && !r.busy && r.state.Stop != nil && !r.state.Finished
}

// recordID is the id of the run's record, which a replay reads: an
// earlier run's, or the run's own once it has ended; empty while it goes
// on.
func (r *run) recordID() string {
	switch {
	case r == nil:
		return ""
	case r.stored != "":
		return r.stored
	case r.state.Finished:
		return r.id
	}
	return ""
}

// active reports whether the run still goes on or waits.
func (r *run) active() bool {
	return r != nil && r.stored == "" && !r.state.Finished
}

// The messages a run sends the workbench. Each names its run, so that a
// late message of a run that was replaced is dropped.
type (
	// stateMsg is the session's answer to Start or Do.
	stateMsg struct {
		run   *run
		state debugger.State
		err   error
		// switched says the state answers thread ID (or enter in the
		// threads pane), which the status line then answers too.
		switched bool
	}
	// batchMsg is the events that arrived since the last batch.
	batchMsg struct {
		run   *run
		batch live.Batch
	}
	// tickMsg moves the clocks of running rows and the status bar.
	tickMsg struct{ run *run }
)

// tickEvery is how often running durations are redrawn.
const tickEvery = 200 * time.Millisecond

func (r *run) tick() tea.Cmd {
	return tea.Tick(tickEvery, func(time.Time) tea.Msg { return tickMsg{r} })
}

func (r *run) waitEvents() tea.Cmd {
	feed := r.feed
	wait := feed.Wait()
	return func() tea.Msg { return batchMsg{r, wait().(live.Batch)} }
}

// startRun runs the document's plan with inputs: a debug run stops at the
// breakpoints of table (at the first stop when none is enabled), a plain
// run, given no table, only where the plan asks a question.
func (p *runPage) startRun(doc int, d workspace.Document, inputs map[string]any, debug bool, table *debugger.Breakpoints) tea.Cmd {
	if p.ws == nil {
		p.notify(noticeError, "this workbench cannot run plans: it was opened without a project")
		return nil
	}
	if d.Plan == nil || !d.Report.OK() {
		p.notify(noticeError, d.File+" has problems; fix them (v validates again) before running it")
		return nil
	}
	if p.run.active() {
		p.notify(noticeError, "a run is already going; a aborts it")
		return nil
	}
	plan := *d.Plan
	if d.Path != "" {
		// The engine records the file it ran; the document's File is
		// only how the workbench shows it.
		plan.File = d.Path
	}
	r := &run{doc: doc, plan: &plan, debug: debug, tree: live.New(&plan), timeline: timeline.New(), feed: live.NewFeed(), busy: true}
	opts := workspace.RunOptions{Sinks: []engine.Sink{r.feed}}
	if !debug {
		// A plain run goes through a session too, to be held where its
		// plan asks; its record says it was a run.
		opts.Made = engine.MadeRun
	}
	session, err := p.ws.Debug(&plan, table, opts)
	if err != nil {
		p.notify(noticeError, "the run cannot start: "+err.Error())
		return nil
	}
	p.log.Info("run started", "plan", d.Name(), "debug", debug, "inputs", inputs)
	// What was said of the last run is old now.
	p.post(notice{})
	return p.begin(r, session, table, inputs)
}

// begin starts session, whose events go to r's feed, on the page with
// inputs: a debug run with no breakpoint enabled in table stops at its
// first stop. The session reads the workbench's watches at its stops,
// and, unless it replays (its calls answered from the record), holds the
// calls the gate names for approval.
func (p *runPage) begin(r *run, session *debugger.Session, table *debugger.Breakpoints, inputs map[string]any) tea.Cmd {
	if len(p.gate) > 0 && r.rerun != "replay" {
		approvals, err := p.ws.Approvals(p.gate)
		if err != nil {
			p.notify(noticeError, "the run cannot start: "+err.Error())
			return nil
		}
		session.Approve(approvals)
	}
	for _, w := range p.watchList {
		// Each was checked when it was set; a path is a path.
		if _, err := session.Watch(w.Path); err != nil {
			p.notify(noticeError, err.Error())
		}
	}
	r.session = session
	r.watches = session.Watches()
	if r.debug && !hasEnabled(table.List()) {
		// With no breakpoint to stop at, a debug run is held at its
		// first stop, before anything has run.
		session.Hold()
	}
	ctx, cancel := context.WithCancel(p.ctx)
	r.cancel = cancel
	p.tree.SetFollow(true) // every run starts followed
	p.show(r, false)
	start := func() tea.Msg {
		st := session.Start(ctx, inputs)
		return stateMsg{run: r, state: st}
	}
	return tea.Batch(start, r.waitEvents(), r.tick())
}

// setGate sets the patterns of the tool calls the next runs hold for
// approval; none holds nothing. A pattern that can hold no call of plan
// (the current one; nil when it does not load) is set all the same, and
// said: the plan may change before it runs.
func (p *runPage) setGate(patterns []string, plan *plans.Plan) {
	p.gate = patterns
	if len(patterns) == 0 {
		p.notify(noticeInfo, "the next runs hold no tool call for approval")
		return
	}
	p.notify(noticeInfo, "the next runs hold the calls of "+strings.Join(patterns, ", ")+" for approval, read-only tools excepted")
	if p.ws == nil || plan == nil {
		return
	}
	approvals, err := p.ws.Approvals(patterns)
	if err != nil {
		p.notify(noticeError, err.Error())
		return
	}
	for _, u := range approvals.Unheld(p.ws.Shapes(plan)) {
		p.notify(noticeError, "gate "+u.Pattern+": "+u.Warning)
	}
}

func hasEnabled(bps []debugger.Breakpoint) bool {
	return slices.ContainsFunc(bps, func(b debugger.Breakpoint) bool { return b.Enabled })
}

// command sends the held run a decision and a movement. It is refused
// (with a notice) when the run is not held.
func (p *runPage) command(cmd debugger.Command) tea.Cmd {
	d := cmd.Decision
	r := p.run
	if !r.held() {
		switch {
		case r.active():
			p.notify(noticeError, "the run is not held at a stop; "+p.Keys.Pause.Help().Key+" pauses it")
		default:
			p.notify(noticeError, "no run is held; g starts a debug run")
		}
		return nil
	}
	if r.state.Stop.Approval && d.Action == engine.Proceed {
		// Going on would approve the call without a word: the prompt
		// asks again, and the answer is a person's.
		p.approval.Open(r.state.Stop)
		p.post(notice{})
		p.post(pushOverlay{p.approval, false})
		return nil
	}
	if r.state.Stop.Kind == engine.StopAsk && d.Action == engine.Proceed && r.rerun != "replay" {
		// Going on would decline the question without a word: the
		// answer editor opens, and declining is said on purpose. A
		// replay's ask is the record's to answer: going on gives the
		// recorded answer, and the editor is for a person who would
		// answer otherwise.
		return p.openValueEditor()
	}
	if !r.debug && cmd.Until == "" {
		// A plain run is held only where its plan asks or its gate
		// holds a call: once answered it goes on to its end, whatever
		// the command said of moving.
		cmd.Move = debugger.Continue
	}
	if cmd.Until != "" {
		// It runs on, as break sets a breakpoint that cannot stop: the
		// warning says it will not stop where it was meant to.
		if warning := r.session.Unmatched(cmd.Until); warning != "" {
			p.notify(noticeError, "until "+cmd.Until+": "+warning)
		}
	}
	r.busy = true
	p.log.Info("command", "path", r.state.Stop.Path, "action", d.Action.String(), "move", moveWord(cmd.Move), "until", cmd.Until)
	if d.Action == engine.Inject || d.Action == engine.Replace {
		r.tree.Decided(r.state.Stop.Path)
	}
	session := r.session
	return func() tea.Msg {
		st, err := session.Do(cmd)
		return stateMsg{run: r, state: st, err: err}
	}
}

// next moves a held run over its stop; at a question it opens the answer
// editor (command).
func (p *runPage) next() tea.Cmd {
	return p.command(debugger.Command{Move: debugger.Next})
}

// openValueEditor opens the editor for the value to inject, replace or
// answer at the stop the run is held at.
func (p *runPage) openValueEditor() tea.Cmd {
	if !p.run.held() {
		p.notify(noticeError, p.Keys.Skip.Help().Key+" injects a value where a run is held; no run is held")
		return nil
	}
	p.forking = nil
	snap := p.run.state.Stop
	p.editingArgs = false
	p.post(pushOverlay{p.editor, false})
	cmd := p.editor.Open(editTitle(snap), editAbout(snap), snap)
	p.editor.OpenedBy(p.pressed)
	return cmd
}

// openArgumentsEditor opens the value editor on the arguments of the tool
// call the run is held before, checked against the tool's input schema.
func (p *runPage) openArgumentsEditor() tea.Cmd {
	if !p.run.held() {
		return nil
	}
	snap := *p.run.state.Stop
	snap.Prefill, snap.Schema, snap.Readers = snap.Input, snap.InputSchema, nil
	p.editingArgs = true
	p.post(pushOverlay{p.editor, false})
	return p.editor.Open(fmt.Sprintf("edit the arguments of %s at %s", snap.Tool, snap.Path), "it runs with them", &snap)
}

// answerApproval carries out the answer chosen at the approval prompt:
// approve or deny the held call, then continue, as the approve and deny
// commands do; or edit its arguments first, which goes on as an edit at
// any stop does.
func (p *runPage) answerApproval(a approval.Answer) tea.Cmd {
	switch a {
	case approval.Approve:
		return p.command(debugger.Command{Decision: engine.Decision{Action: engine.Approve}, Move: debugger.Continue})
	case approval.Deny:
		return p.command(debugger.Command{Decision: engine.Decision{Action: engine.Deny}, Move: debugger.Continue})
	}
	return p.openArgumentsEditor()
}

// onValue starts the fork whose value the editor had open with it, or
// sends it as the stop's decision (an edit of a held call's arguments, or
// an inject, replace or answer); the run then goes on as next does.
func (p *runPage) onValue(v any) tea.Cmd {
	if f := p.forking; f != nil {
		p.forking = nil
		return p.startFork(f, v)
	}
	if !p.run.held() {
		return nil
	}
	// A debug run goes on to the next stop; a plain run, held only
	// because its plan asked, goes on to its end.
	move := debugger.Continue
	if p.run.debug {
		move = debugger.Next
	}
	if p.editingArgs {
		p.editingArgs = false
		return p.command(debugger.Command{Decision: engine.Decision{Action: engine.Edit, Value: v}, Move: move})
	}
	return p.command(debugger.Command{Decision: decisionFor(p.run.state.Stop.Kind, v), Move: move})
}

// abortRun aborts the run: through the stop when it is held, else by
// cancelling its context, which the engine hears at once. The first press
// only says what the second does: an aborted run cannot be taken back.
func (p *runPage) abortRun() tea.Cmd {
	r := p.run
	if r.active() && !p.abortArmed {
		p.abortArmed = true
		p.notify(noticeConfirm, p.Keys.Abort.Help().Key+" again aborts the run · any other key keeps it")
		return nil
	}
	p.abortArmed = false
	switch {
	case r.held():
		return p.command(debugger.Command{Decision: engine.Decision{Action: engine.Abort}, Move: debugger.Continue})
	case r.active():
		r.cancel()
		p.notify(noticeInfo, "aborting the run")
	default:
		p.notify(noticeError, "no run is going")
	}
	return nil
}

// switchThread makes another held thread of the run the current one: the
// run is then held at its stop.
func (p *runPage) switchThread(id string) tea.Cmd {
	r := p.run
	if !r.held() {
		p.notify(noticeError, "thread chooses among the threads of a held run; no run is held ("+p.Keys.Pause.Help().Key+" pauses one going on)")
		return nil
	}
	r.busy = true
	session := r.session
	return func() tea.Msg {
		st, err := session.SwitchThread(id)
		return stateMsg{run: r, state: st, err: err, switched: true}
	}
}

// pauseRun asks a going run to stop at its next stop.
func (p *runPage) pauseRun() {
	r := p.run
	if !r.active() || r.held() {
		p.notify(noticeError, "no run is going to pause")
		return
	}
	if err := r.session.Pause(); err != nil {
		p.notify(noticeError, err.Error())
		return
	}
	p.notify(noticeInfo, "pausing at the next stop")
}

// onState takes the session's answer: the run is held at a stop (the tree
// selects it, the inspector shows it) or has finished.
func (p *runPage) onState(msg stateMsg) tea.Cmd {
	r := msg.run
	if r != p.run {
		return nil
	}
	r.busy = false
	if msg.err != nil {
		// A refused command: the run stays where it was.
		p.notify(noticeError, msg.err.Error())
		p.refreshThreads()
		return nil
	}
	r.state = msg.state
	st := msg.state
	if st.Stop != nil {
		// A finished run keeps what its watches read at its last stop.
		r.watches = st.Watches
	}
	markHolds(r, p.refreshThreads(), p.now())
	p.post(notice{}) // what was said before the run moved is old
	switch {
	case st.Finished:
		p.log.Info("run finished", "status", st.Status, "error", st.Error)
		// The engine's Run has returned, so every event is in the feed.
		r.feed.Close()
		return p.runEnded(r)
	case st.Stop != nil:
		p.log.Info("held", "path", st.Stop.Path, "kind", st.Stop.Kind, "reason", st.Reason)
		if r.debug {
			// The breakpoint that held it, if one did, has one hit more.
			p.post(breakpointHitsMsg{})
		}
		p.show(r, true)
		p.selectCurrentThread()
		r.tree.Expect(st.Stop.Path, st.Stop.Tool)
		p.tree.SetStop(st.Stop.Path)
		if st.Stop.Kind == engine.StopAsk {
			// The plan asks: the workbench says so and stays navigable;
			// the answer editor opens when asked for.
			msg := askWaits(st.Stop)
			if b, err := json.Marshal(st.Stop.Prefill); err == nil && r.rerun == "replay" && st.Stop.Prefill != nil {
				// First, since a long question is cut at its end.
				msg = "going on answers as the record did: " + string(b) + " · " + msg
			}
			p.notify(noticeInfo, msg)
			return nil
		}
		if st.Stop.Approval {
			// The gate holds a call: the prompt asks about it at once.
			p.approval.Open(st.Stop)
			p.post(pushOverlay{p.approval, false})
		}
		if msg.switched {
			p.notify(noticeInfo, fmt.Sprintf("thread %s is current: held at %s (%s)", st.Stop.Thread, st.Stop.Path, st.Stop.Kind))
		}
	}
	return nil
}

// runEnded says how the run ended; the breakpoints panel goes on showing
// a debug run's hits until the next run counts afresh.
func (p *runPage) runEnded(r *run) tea.Cmd {
	p.tree.SetStop("")
	if r.debug {
		p.post(breakpointHitsMsg{})
	}
	st := r.state
	var replay *debugger.ReplayResult
	if r.replayed != nil && st.Result != nil {
		replay = r.replayed(st.Result)
	}
	switch {
	case replay != nil && replay.Divergence != nil:
		p.notify(noticeError, "the replay diverged: "+replay.Divergence.String())
	case replay != nil:
		// As y says it: under the debugger the verdict is the same.
		p.notify(noticeInfo, replayMatches(replay))
	case r.forked != nil && st.Result != nil:
		res := r.forked(st.Result)
		msg := fmt.Sprintf("forked %s from %s: %s reused, the run %s", format.ShortID(res.Of), res.From, common.Count(len(res.Reused), "step"), res.Run.Status)
		if len(res.Set) > 0 {
			msg += ", its value set at " + strings.Join(res.Set, ", ")
		}
		if ex := st.Result.Exit; ex != nil {
			msg += fmt.Sprintf("; it exited at %s: %s", ex.Step, ex.Message)
		}
		kind := noticeError
		if res.Run.Status == engine.StatusOK || res.Run.Status == engine.StatusExited {
			kind = noticeInfo
		}
		p.notify(kind, msg)
	case st.Result != nil && st.Result.Exit != nil:
		// The exit's message is what the plan has to say.
		ex := st.Result.Exit
		kind := noticeInfo
		if ex.Status != "success" {
			kind = noticeError
		}
		p.notify(kind, fmt.Sprintf("the run exited at %s (%s): %s", ex.Step, ex.Status, ex.Message))
	case st.Status == engine.StatusOK:
		// The status line says ok already, and its figures need the room.
		p.notify(noticeInfo, p.Keys.Timeline.Help().Key+" timeline · "+p.Keys.Spend.Help().Key+" spend")
	default:
		msg := "the run " + st.Status.String()
		switch {
		case strings.HasPrefix(st.Error, "run "+st.Status.String()):
			// "run aborted at E2" says it already.
			msg = "the " + st.Error
		case st.Error != "":
			msg += ": " + st.Error
		}
		p.notify(noticeError, msg)
	}
	return p.flushRuns()
}

// onBatch applies a batch of events to the run's tree.
func (p *runPage) onBatch(msg batchMsg) tea.Cmd {
	r := msg.run
	r.apply(msg.batch.Events)
	if r == p.run {
		p.tree.Refilter()
		if !r.held() {
			// Held, the selection stays on the stop.
			p.tree.Follow()
		}
	}
	if msg.batch.Done {
		r.eventsDone = true
		if r.outcome != nil {
			return p.settleRerun(r)
		}
		return nil
	}
	return r.waitEvents()
}

// apply gives the run's tree events, in order.
func (r *run) apply(events []engine.Event) {
	for _, e := range events {
		if r.id == "" {
			r.id = e.RunID
		}
		r.tree.Apply(e)
		r.timeline.Apply(e)
	}
	r.applied += len(events)
}

// onTick moves the run's clock while it goes on.
func (p *runPage) onTick(msg tickMsg) tea.Cmd {
	r := msg.run
	if r != p.run || r.eventsDone || r.state.Finished {
		return nil
	}
	r.tree.Tick(p.now())
	r.timeline.Tick(p.now())
	if r.debug || r.held() {
		// Threads start, pass stops and end without a word to the
		// workbench: the threads pane reads them as the clock goes.
		markHolds(r, p.refreshThreads(), p.now())
	}
	return r.tick()
}

// markHolds tells the run's tree and timeline where its threads are held
// now (held, the paths refreshThreads read, while the run is held), so
// that a held unit's row and bar mark the hold and count it as the clock
// goes, before the Held event that comes as the hold ends.
func markHolds(r *run, held []string, now time.Time) {
	if !r.held() {
		held = nil
	}
	r.tree.Holding(held, now)
	r.timeline.Holding(held, now)
}

func moveWord(mv debugger.Movement) string {
	switch mv {
	case debugger.StepIn:
		return "step in"
	case debugger.Next:
		return "next"
	case debugger.StepOut:
		return "step out"
	}
	return "continue"
}

// decisionFor is the decision a value edited at a stop makes: an answer at
// a question, an inject before a step or tool call, a replace after.
func decisionFor(kind engine.StopKind, v any) engine.Decision {
	return engine.Decision{Action: kind.ValueAction(), Value: v}
}

// editTitle says what a value edited at a stop becomes.
func editTitle(s *debugger.Snapshot) string {
	switch s.Kind {
	case engine.StopAsk:
		return fmt.Sprintf("answer the question at %s", s.Path)
	case engine.StopStep, engine.StopTool:
		return fmt.Sprintf("inject a result for %s: it will not run", s.Path)
	case engine.StopError:
		return fmt.Sprintf("replace the failure at %s with a result", s.Path)
	case engine.StopRound:
		// Nothing was given yet: the value stands for the round's reply.
		// What that means is said above the value, wrapped (editAbout):
		// with a deep path, a title that said it too would be cut.
		return fmt.Sprintf("give the reply of %s", s.Path)
	}
	return fmt.Sprintf("replace what %s gave (%s)", s.Path, s.Kind)
}

// askWaits says that a question waits; the footer says how to answer or
// decline it.
func askWaits(s *debugger.Snapshot) string {
	if s.Ask != nil && s.Ask.Prompt != "" {
		return s.Path + " asks: " + s.Ask.Prompt
	}
	return s.Path + " asks a question"
}

// editAbout is what the editor says above the value, whole, which a title
// would cut: an ask's question, or what a reply given at a round does.
func editAbout(s *debugger.Snapshot) string {
	switch {
	case s.Kind == engine.StopAsk && s.Ask != nil && s.Ask.Prompt != "":
		return s.Path + " asks: " + s.Ask.Prompt
	case s.Kind == engine.StopRound:
		return "in the model's place: the model is not called"
	}
	return ""
}
