// Package live is the model behind the workbench's live step tree: a tree of
// nodes keyed by step path (DESIGN.md section 2), fed one engine event at a
// time. The plan's own steps are laid out up front as pending; the nodes that
// exist only at run time (map items do.N, agent rounds agent.N, tool calls,
// repair passes, the steps of a called plan) appear as their first event
// arrives. Apply costs a map lookup and a walk up the node's ancestors, never
// a walk of the tree, nor of a node's siblings beyond the later items an item
// that starts late goes before, so a run of tens of thousands of events
// stays cheap; Rows hands out only the visible slice asked for, found
// through each node's counts of its children's rows.
//
// A Tree is plain data, not safe for concurrent use: the workbench applies
// events in its update loop, where it also reads rows.
package live

import (
	"maps"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/chat"
	"github.com/stepwise-dev/stepwise/engine/path"
	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/tui/progress"
)

// Kind says what a node stands for.
type Kind int

// The kinds of node.
const (
	KindStep   Kind = iota // a step, a body call or the solver
	KindItem               // a map, reduce or filter item: do.N
	KindRound              // an agent round: agent.N
	KindTool               // a tool call made in a round
	KindRepair             // a repair pass on a structured answer
	KindCall               // a model call of its own, such as an infer gate's judge
	KindPlan               // the steps of a called plan, under the step that called it
	KindHead               // a decide branch head: then or else
)

var kindNames = [...]string{"step", "item", "round", "tool", "repair", "call", "plan", "head"}

// String returns the kind's name.
func (k Kind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Status is where a node stands.
type Status string

// The statuses of a node. Skipped is a step whose result a stop decision
// injected; exited a step an exit gate ended with success.
const (
	Pending Status = "pending"
	Running Status = "running"
	OK      Status = "ok"
	Failed  Status = "failed"
	Skipped Status = "skipped"
	Exited  Status = "exited"
)

// Done reports whether the status is final.
func (s Status) Done() bool { return s != Pending && s != Running }

// Spend is what the model calls at and below a node cost.
type Spend struct {
	// Calls counts the completed (billable) model calls.
	Calls int
	Usage chat.Usage
	// priced counts the calls that came with a price; cost sums them.
	priced int
	cost   float64
}

// Cost returns the summed cost in USD, or nil unless every call was
// priced: an unknown cost is absent rather than understated, as in the
// engine's usage report.
func (s Spend) Cost() *float64 {
	if s.Calls == 0 || s.priced != s.Calls {
		return nil
	}
	v := s.cost
	return &v
}

// Tokens counts every token the calls used: input, output and both cache
// figures, as the run store counts a run's tokens, so that a run shows the
// same count live and in the list of runs.
func (s Spend) Tokens() int {
	return s.Usage.Total()
}

func (s *Spend) add(u chat.Usage, cost *float64) {
	s.Calls++
	s.Usage = s.Usage.Add(u)
	if cost != nil {
		s.priced++
		// A billionth of a dollar is precision enough, and keeps the
		// binary noise of summed prices out of the display.
		s.cost = math.Round((s.cost+*cost)*1e9) / 1e9
	}
}

// node is one unit of work in the tree.
type node struct {
	path     string
	segment  string // the last path segment, the node's label
	item     int    // N of a do.N segment, or a tool call's place in its round's reply; -1 otherwise
	kind     Kind
	tool     string
	status   Status
	derived  bool // status, start and end come from the children (items, plan and branch heads without events of their own)
	start    time.Time
	end      time.Time
	spend    Spend // this node's calls and everything below it
	input    any
	result   any
	err      string
	reply    strings.Builder
	thinking strings.Builder
	// violations are the schema errors a repair pass was asked to fix.
	violations []string
	warnings   []string
	gate       *engine.GateEvaluated
	// exit is the exit that ended the run, on its step's node; cutOff
	// marks a node skipped because an exit ended the run before it.
	exit      *engine.Exit
	cutOff    bool
	ask       *engine.Asked
	callErr   string // the last model call's error, cleared by a call that succeeds
	repairing *node  // a round's repair pass in progress: the round's deltas are its reply
	// expected says Expect or a hold laid the node out at a stop, before any event
	// of its own: the first one starts it.
	expected bool
	// decided is the action by which a person decided the node (its
	// result, its reply, its answer); reused says a replay or a fork gave
	// it a recorded result instead ("replay", "fork").
	decided, reused string
	// held is how much of the node's time its threads were held at
	// stops, as its end event says when timed; holds are the holds at
	// and below it, which say it for a node without an end event of its
	// own (an item, a round, a called plan) and for one still running.
	held  time.Duration
	timed bool
	holds engine.Holds
	// heldSince is when the earliest hold going on now at or below the
	// node began (Holding): none of its Held events has come yet, since
	// one comes as its hold ends. Zero when no thread in it is held.
	heldSince time.Time

	// call is the last model call made here, failed or not.
	call *engine.ModelCalled
	// version counts the events applied here, so that a reader can tell
	// the node changed without comparing what it holds.
	version uint64

	parent   *node
	children []*node
	// pos is the node's place in its parent's children, and span its
	// entry in the Fenwick tree of the parent's children's row counts:
	// the rows of the siblings at places pos+1-lowbit(pos+1) to pos,
	// itself included (lowbit(k) = k&-k). With them the rows before a
	// child, and the child that holds a given row, are found in
	// log(siblings) steps rather than a walk of the siblings (Index,
	// Rows).
	pos  int
	span int
	// Counts over the subtree, the node included, kept as events arrive
	// so that no event walks more than the node's ancestors.
	running int // nodes running
	failed  int // nodes failed
	touched bool
	isStep  bool // step events arrived for it: a step, a body call, an item's single call

	// roundsRunning counts the children that are rounds and run, so that
	// a new round finds the one it closes without a walk of every
	// round before it.
	roundsRunning int
	// toolsEnded counts the children that are tool calls and have ended,
	// so that a round knows it is done without a walk of its calls.
	toolsEnded int

	collapsed bool
	inner     int // rows of the children's subtrees when expanded

	// aborted says the run was aborted at this node's stop, or its step
	// ended aborted (the run was aborted at or under it).
	aborted bool

	// ended is set on the root once the run has ended: an item whose
	// steps did not all run is then over as far as it got.
	ended bool
}

// rows is how many rows the node's subtree shows: itself, and its
// children's unless it is collapsed.
func (n *node) rows() int {
	if n.collapsed {
		return 1
	}
	return 1 + n.inner
}

// Tree is the live step tree of one run.
type Tree struct {
	root   node
	byPath map[string]*node
	totals Totals
	// runningSteps counts the nodes with step events that run.
	runningSteps int
	now          time.Time
	// itemSteps are the steps of each list body, by the static path of
	// the control step that owns it (E1, E1/do.*/E3).
	itemSteps map[string][]itemStep
	// progress follows the top-level steps' items (done of the total,
	// running, the rate), as `stepwise run` shows them.
	progress *progress.Run
	// holding are the paths where a thread is held now, each with when
	// the tree first saw it held there; heldNodes the nodes at and above
	// them, whose heldSince says so.
	holding   engine.HeldNow
	heldNodes []*node
}

// Totals is what the status bar shows of the run.
type Totals struct {
	RunID  string
	Plan   string
	Status Status // pending before run_start, running until run_end
	// RunStatus is the engine's word for how the run ended: ok, exited,
	// failed or aborted; empty while it runs.
	RunStatus engine.RunStatus
	Error     string
	Start     time.Time
	End       time.Time
	// Elapsed runs to the end of the run, or to the latest event or Tick
	// while it runs.
	Elapsed  time.Duration
	Spend    Spend
	Done     int // steps ended ok, skipped or exited
	Failed   int // steps ended failed
	Aborted  int // steps ended aborted: the run was aborted at or under them
	Running  int // steps running
	Warnings int
}

// New returns a tree with the plan's steps laid out as pending: the top
// level, decide branches, and the solver. Map, reduce and filter bodies are
// laid out per item, as items start. plan may be nil, for a run replayed
// from its events alone.
func New(plan *plans.Plan) *Tree {
	t := &Tree{byPath: map[string]*node{}, itemSteps: map[string][]itemStep{}, progress: progress.New(time.Time{})}
	t.root.item = -1
	t.totals.Status = Pending
	if plan == nil {
		return t
	}
	t.totals.Plan = plan.Identifier.Value
	for _, s := range plan.Steps {
		t.seed(s)
	}
	switch plan.FinishMode() {
	case plans.FinishSolver:
		n := t.ensure("solver", KindStep, time.Time{})
		n.tool = "solver"
	case plans.FinishOutput:
		// The output has no events of its own: the run's end carries it,
		// and it shows as the tree's last row, where the plan's output
		// mapping is written.
		n := t.ensure(outputPath, KindStep, time.Time{})
		n.tool = outputPath
	}
	return t
}

// seed lays out a step and its decide branches, and notes the steps of
// a list body, which are laid out in each item as it starts.
func (t *Tree) seed(s *plans.Step) {
	n := t.ensure(s.Path, KindStep, time.Time{})
	n.tool = s.ToolName.Value
	_, decide := s.Control.(*plans.DecideInput)
	for _, b := range plans.Bodies(s) {
		if decide {
			for _, c := range b.Steps {
				t.seed(c)
			}
			continue
		}
		if b.Single {
			continue
		}
		var steps []itemStep
		for _, c := range b.Steps {
			steps = append(steps, itemStep{c.ID.Value, c.ToolName.Value})
		}
		t.itemSteps[s.Path] = steps
	}
}

// itemStep is a step of a list body, as each item lays it out.
type itemStep struct{ id, tool string }

// layOutItem lays out the steps of a new item's list body as pending, in
// the plan's order, so that they show in that order whichever starts
// first (items of a concurrent map interleave) and so that the steps
// still to come are there to select and break on.
func (t *Tree) layOutItem(item *node) {
	steps, ok := t.itemSteps[path.Static(item.parent.path)]
	if !ok {
		return
	}
	for _, s := range steps {
		t.ensure(path.Join(item.path, s.id), KindStep, time.Time{}).tool = s.tool
	}
}

// Apply adds one event to the tree. Events must arrive in sequence order,
// as a sink receives them.
func (t *Tree) Apply(e engine.Event) {
	if e.Time.After(t.now) {
		t.now = e.Time
	}
	t.progress.Event(e)
	switch p := e.Payload.(type) {
	case engine.RunStarted:
		t.totals.RunID, t.totals.Status, t.totals.Start = e.RunID, Running, e.Time
		if t.totals.Plan == "" {
			t.totals.Plan = p.Plan
		}
		// A hold seen before the run's first event (its first stop) is
		// held from the run's start at the earliest.
		t.markHolding()
	case engine.RunEnded:
		t.root.ended = true
		// The threads held when the run was aborted are aborted with it,
		// at their stops, where no event of their own will say so.
		heldAtEnd := slices.Collect(maps.Keys(t.holding))
		t.holding = nil
		t.markHolding()
		t.totals.RunStatus, t.totals.Error, t.totals.End = p.Status, p.Error, e.Time
		t.totals.Status = runNodeStatus(p.Status)
		if p.Exit != nil {
			// The steps the exit cut off will never run; the exit's own
			// step says what it said.
			for _, c := range t.root.children {
				t.skipCutOff(c, e.Time)
			}
			if n, ok := t.byPath[p.Exit.Step]; ok {
				n.exit = p.Exit
				n.version++
			}
		}
		for _, c := range t.root.children {
			t.closeOpen(c, e.Time, t.totals.Status, p.Status == engine.StatusAborted)
		}
		if n, ok := t.byPath[p.AbortedAt]; ok {
			t.abortedAt(n, p.Error, e.Time)
		}
		if p.Status == engine.StatusAborted {
			for _, held := range heldAtEnd {
				if n, ok := t.byPath[held]; ok {
					t.abortedAt(n, p.Error, e.Time)
				}
			}
		}
		if p.Status == engine.StatusOK {
			// A run that ended ok will run nothing more: a branch its
			// decide did not take is skipped, not pending.
			for _, c := range t.root.children {
				t.skipNotTaken(c, e.Time)
			}
		}
		if n, ok := t.byPath[outputPath]; ok && p.Output != nil {
			n.result, n.derived = p.Output, false
			n.version++
			t.setStatus(n, OK, e.Time)
			n.start = e.Time
		}
	case engine.StepStarted:
		n := t.at(e.Path, KindStep, e.Time)
		n.tool, n.input, n.derived, n.isStep = p.Tool, p.Input, false, true
		t.setStatus(n, Running, e.Time)
		n.start, n.end = n.startedBy(e.Time), time.Time{}
	case engine.StepEnded:
		n := t.at(e.Path, KindStep, e.Time)
		n.tool, n.result, n.err, n.derived, n.isStep = p.Tool, p.Result, p.Error, false, true
		n.mark(p.Decided, p.Reused)
		if p.Tool == plans.ControlMap {
			giveItemsResults(n, p.Result)
		}
		st := stepNodeStatus(p.Status)
		// An aborted step is drawn as a node the run was aborted at is,
		// from its own end: live and read back from the record alike.
		n.aborted = n.aborted || p.Status == engine.StepAborted
		t.closeOpenChildren(n, e.Time, st, p.Status == engine.StepAborted)
		t.setStatus(n, st, e.Time)
		t.timed(n, e.Time, p.Ms, p.HeldMs)
		switch {
		case p.Status == engine.StepAborted:
			t.totals.Aborted++
		case st == Failed:
			t.totals.Failed++
		default:
			t.totals.Done++
		}
	case engine.ToolStarted:
		n := t.at(e.Path, KindTool, e.Time)
		if e.Unit != path.KindCall {
			// A step's own dispatch: the step events carry it.
			break
		}
		n.tool, n.input = p.Tool, p.Args
		t.setStatus(n, Running, e.Time)
		n.start = n.startedBy(e.Time)
	case engine.ToolEnded:
		n := t.at(e.Path, KindTool, e.Time)
		if e.Unit != path.KindCall {
			break
		}
		n.tool, n.result, n.err = p.Tool, p.Result, p.Error
		n.mark(p.Decided, p.Reused)
		defer func() {
			if r := n.parent; r != nil && r.kind == KindRound {
				t.endRoundIfDone(r, e.Time)
			}
		}()
		st := OK
		switch {
		case p.IsError:
			st = Failed
		case p.Injected:
			st = Skipped
		}
		t.setStatus(n, st, e.Time)
		t.timed(n, e.Time, p.Ms, p.HeldMs)
	case engine.ModelCalled:
		n := t.at(e.Path, KindCall, e.Time)
		// The payload's fields are copied, once a call; the request's
		// messages and the reply's text are shared.
		c := p
		n.call = &c
		if begun := e.Time.Add(-time.Duration(p.Ms * float64(time.Millisecond))); n.kind != KindStep && begun.Before(n.start) {
			// A round starts when its call does; its first event may be
			// a delta that came later, or this very event.
			n.start = begun
		}
		if p.Error != "" {
			n.callErr = p.Error
			// A call the run's abort cut short marks its round so.
			n.aborted = n.aborted || p.Aborted
			break
		}
		n.callErr = ""
		for a := n; a != nil; a = a.parent {
			a.spend.add(p.Usage, p.CostUSD)
		}
		t.totals.Spend.add(p.Usage, p.CostUSD)
		switch n.kind {
		case KindRepair:
			if r := n.parent; r != nil && r.repairing == n {
				r.repairing = nil
			}
			t.setStatus(n, OK, e.Time)
			if r := n.parent; r != nil && r.kind == KindRound {
				t.endRoundIfDone(r, e.Time)
			}
		case KindCall:
			t.setStatus(n, OK, e.Time)
		case KindRound:
			// A round whose reply asks for no tool is done with its
			// reply; one that asks is done with its last call.
			t.endRoundIfDone(n, e.Time)
		}
	case chat.Delta:
		n := t.at(e.Path, KindCall, e.Time)
		if n.repairing != nil {
			n = n.repairing
			n.version++
		}
		if p.Reset {
			n.reply.Reset()
			n.thinking.Reset()
			break
		}
		n.reply.WriteString(p.Text)
		n.thinking.WriteString(p.Reasoning)
	case engine.Repairing:
		n := t.at(e.Path, KindRepair, e.Time)
		n.input, n.violations = p.Answer, p.Violations
		if n.parent != &t.root {
			n.parent.repairing = n
			if r := n.parent; r.kind == KindRound && r.status == OK {
				// The round's answer failed its schema: the round goes
				// on with its repair pass.
				t.setStatus(r, Running, e.Time)
			}
		}
	case engine.GateEvaluated:
		n := t.at(e.Path, KindStep, e.Time)
		g := p
		n.gate = &g
		if n.kind == KindItem && n.derived && len(n.children) == 0 {
			// A filter's item is its gate's verdict, with no step of
			// its own: it is done once judged.
			n.derived, n.start = false, n.startedBy(e.Time)
			t.setStatus(n, OK, e.Time)
		}
	case engine.Asked:
		n := t.at(e.Path, KindStep, e.Time)
		a := p
		n.ask = &a
	case engine.Decided:
		// Before the unit's own events, if any come: it is not started.
		n := t.at(e.Path, KindStep, e.Time)
		if p.Origin == engine.FromReplay.String() {
			// A decision the replay made again, as the record had it:
			// replayed, not decided by hand in this run.
			n.reused = "replay"
		} else {
			n.decided = p.Action
		}
	case engine.Held:
		if e.Path != "" {
			t.hold(e.Path, e.Time, p)
		}
	case engine.Warning:
		t.totals.Warnings++
		if e.Path != "" {
			n := t.at(e.Path, KindStep, e.Time)
			n.warnings = append(n.warnings, p.Message)
		}
	}
	t.refreshElapsed()
}

// Tick moves the tree's clock to now, so that running nodes and the run's
// elapsed time grow between events; the workbench calls it on its timer.
// The clock never goes back.
func (t *Tree) Tick(now time.Time) {
	if now.After(t.now) {
		t.now = now
		t.refreshElapsed()
	}
}

func (t *Tree) refreshElapsed() {
	switch {
	case t.totals.Start.IsZero():
	case !t.totals.End.IsZero():
		t.totals.Elapsed = t.totals.End.Sub(t.totals.Start)
	default:
		t.totals.Elapsed = t.now.Sub(t.totals.Start)
	}
}

// Now is the tree's clock: the latest event's time, or a later Tick.
func (t *Tree) Now() time.Time { return t.now }

// Lists are the top-level maps, filters and reduces that run, in the
// order they started, with their progress through their items.
func (t *Tree) Lists() []*progress.Step {
	var lists []*progress.Step
	for _, s := range t.progress.Running() {
		if s.List != nil {
			lists = append(lists, s)
		}
	}
	return lists
}

// Totals returns the run's figures for the status bar.
func (t *Tree) Totals() Totals {
	tt := t.totals
	tt.Running = t.runningSteps
	return tt
}

// mark records who gave the node its result, as its end event says; an
// end that says nothing leaves a decision the node already had.
func (n *node) mark(decided, reused string) {
	if decided != "" || reused != "" {
		n.decided, n.reused = decided, reused
	}
}

// millis is a duration an event gives in milliseconds.
func millis(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

// stepNodeStatus maps the engine's step statuses onto a node's: an
// aborted step ends failed, marked aborted (node.aborted).
func stepNodeStatus(s engine.StepStatus) Status {
	switch s {
	case engine.StepOK:
		return OK
	case engine.StepSkipped:
		return Skipped
	case engine.StepExited:
		return Exited
	}
	return Failed
}

// runNodeStatus maps the engine's run statuses onto the root's.
func runNodeStatus(s engine.RunStatus) Status {
	switch s {
	case engine.StatusOK:
		return OK
	case engine.StatusExited:
		return Exited
	}
	return Failed // failed, aborted
}

// at returns the node at path, creating it and any missing parent. kind
// is what the event says a new leaf is, when its segment does not say.
func (t *Tree) at(path string, kind Kind, at time.Time) *node {
	if path == "" {
		return &t.root
	}
	if n, ok := t.byPath[path]; ok {
		n.version++
		if kind != KindStep && (n.expected || n.derived && !n.touched && n.ownsEvents()) {
			// Laid out at a stop before its first event, itself or as
			// the parent of a unit held at its stop (a round, when its
			// tool call's stop overtook the round's model call): it
			// runs from this one, as a node the event made would, or
			// from a hold at its stop.
			n.expected, n.derived, n.start = false, false, n.startedBy(at)
			if n.kind == KindRound {
				t.closeRoundsBefore(n.parent, n.start)
			}
			t.setStatus(n, Running, at)
		}
		return n
	}
	n := t.ensure(path, kind, at)
	n.version++
	if n.derived && kind != KindStep {
		// Created by a model call, a delta, a tool or a repair: it is
		// running from now until its own end or its parent's.
		n.derived = false
		t.setStatus(n, Running, at)
	}
	return n
}

// ownsEvents reports whether the node's kind has events of its own that
// start it (a round, a tool call, a repair pass, a model call), rather
// than taking its status from its children or its step events.
func (n *node) ownsEvents() bool {
	switch n.kind {
	case KindRound, KindTool, KindRepair, KindCall:
		return true
	}
	return false
}

// ensure returns the node at path, creating it and its missing parents
// with the given time as their start. A new node starts pending with its
// status derived from its children until an event of its own arrives.
func (t *Tree) ensure(nodePath string, kind Kind, at time.Time) *node {
	return t.layOut(nodePath, kind, at, false)
}

// layOut is ensure, with expected saying the node is laid out at its
// stop (Expect) rather than by an event or a hold.
func (t *Tree) layOut(nodePath string, kind Kind, at time.Time, expected bool) *node {
	if n, ok := t.byPath[nodePath]; ok {
		return n
	}
	parent, seg := &t.root, nodePath
	if parentPath, last, ok := path.Parent(nodePath); ok {
		parent, seg = t.ensure(parentPath, kindGroup, at), last
		if n, ok := t.byPath[nodePath]; ok {
			// Laying out the parent, a new item, laid this out too.
			return n
		}
	}
	n := &node{path: nodePath, segment: seg, item: -1, status: Pending, derived: true, start: at, parent: parent, expected: expected}
	n.kind = kindOf(parent, seg, kind)
	if n.kind == KindItem {
		n.item, _ = path.ItemIndex(seg)
	}
	t.byPath[nodePath] = n
	t.insert(parent, n)
	if n.kind == KindItem {
		t.layOutItem(n)
	}
	return n
}

// giveItemsResults gives a map's items of several steps, which have no
// step events of their own, their results: the map's results, in item
// order, each what its item's body gave.
func giveItemsResults(m *node, result any) {
	out, _ := result.(map[string]any)
	results, _ := out["results"].([]any)
	for _, c := range m.children {
		if c.kind == KindItem && c.result == nil && c.item >= 0 && c.item < len(results) {
			c.result = results[c.item]
		}
	}
}

// Expect makes sure there is a node at path, pending until its first
// event arrives, and reports whether it had to make one. A run held at a
// stop before a unit's first event (a step about to start, a round about
// to call its model, a tool call about to be made) then has a row to
// select; tool is what the stop says runs there.
func (t *Tree) Expect(path, tool string) bool {
	if _, ok := t.byPath[path]; ok || path == "" {
		return false
	}
	// No start yet: the node and the ones laid out above it start with
	// the first event under them, as they would with no stop there, so
	// that a run shows the same times live and read back.
	n := t.layOut(path, kindGroup, time.Time{}, true)
	// A new item may have laid it out with its body's steps.
	n.expected = true
	// A round's or a repair's stop names the agent step's tool, which
	// is not the row's own: a round's row carries none, as one laid out
	// by its events does.
	if n.tool == "" && (n.kind == KindStep || n.kind == KindItem || n.kind == KindTool) {
		n.tool = tool
	}
	if _, ok := t.holding[path]; ok {
		// Held there already: the new row says so.
		t.markHolding()
	}
	return true
}

// Decided marks the node at path skipped when it has had no event of its
// own: the run was held there and told to go on with a value instead (an
// injected tool call, a round whose reply was replaced before the call),
// so no event will ever say it ran. Its time is the hold at its stop.
func (t *Tree) Decided(path string) {
	n, ok := t.byPath[path]
	if !ok || n.touched || !n.derived {
		return
	}
	n.derived, n.expected, n.start = false, false, n.startedBy(t.now)
	n.version++
	t.setStatus(n, Skipped, t.now)
}

// outputPath names the row of an output plan's output.
const outputPath = "output"

// KindOfUnit is the kind of node that shows a unit of the engine's kind
// u, for the kinds that have a node kind of their own: an item, a round,
// a round's tool call, a repair pass.
func KindOfUnit(u path.Kind) (Kind, bool) {
	switch u {
	case path.KindItem:
		return KindItem, true
	case path.KindRound:
		return KindRound, true
	case path.KindCall:
		return KindTool, true
	case path.KindRepair:
		return KindRepair, true
	}
	return 0, false
}

// kindGroup is what ensure asks for a parent that is missing: a node
// with no event of its own yet, which kindOf names by its segment.
const kindGroup Kind = -1

// kindOf names a new node's kind by what the path says it is (an item, a
// round, a repair pass, a round's tool call), else by what its parent is,
// else by the event that created it.
func kindOf(parent *node, seg string, kind Kind) Kind {
	if k, ok := KindOfUnit(path.SegmentKind(parent.segment, seg)); ok {
		return k
	}
	switch {
	case parent.path != "" && parent.tool == "plan__"+seg:
		return KindPlan
	case (seg == "then" || seg == "else") && kind == kindGroup:
		return KindHead
	case kind == kindGroup:
		return KindStep
	}
	return kind
}

// insert adds n under parent: after its siblings, except that do.N items
// keep the order of N whatever order they start in. A new round closes the
// round before it.
func (t *Tree) insert(parent, n *node) {
	i := len(parent.children)
	if n.kind == KindTool && parent.kind == KindRound {
		n.item = callIndex(parent, n.path)
	}
	if n.kind == KindStep && !n.expected {
		// A step laid out at a stop before its first event (Expect) is
		// where its thread is held: a sibling step new to the tree ran
		// before it, its events overtaken by the stop on their way. A
		// step laid out at a later stop of the same thread comes after
		// it, even before that step's events arrive: a body's steps
		// run one after another.
		for i > 0 && parent.children[i-1].expected && !parent.children[i-1].touched {
			i--
		}
	}
	if n.kind == KindItem || n.kind == KindTool && n.item >= 0 {
		// Items keep the order of N, a round's tool calls the order its
		// reply asked for them, whatever order they start in.
		for i > 0 && parent.children[i-1].kind == n.kind && parent.children[i-1].item > n.item {
			i--
		}
	}
	if n.kind == KindRound && !n.start.IsZero() {
		t.closeRoundsBefore(parent, n.start)
	}
	parent.children = slices.Insert(parent.children, i, n)
	for j := i; j < len(parent.children); j++ {
		parent.children[j].pos = j
	}
	parent.refill(i)
	t.grow(parent, n.rows())
}

// closeRoundsBefore ends, at at, the rounds under agent that still run
// when a new round starts there. A round laid out at its stop before its
// first event (Expect) starts with that event, and closes them then:
// closed at its stop, a round whose tool call's end was still on its way
// ended at no time, and read 0ms.
func (t *Tree) closeRoundsBefore(agent *node, at time.Time) {
	// The round that runs is the last but one in practice: look from the
	// end, and only for as many as there are.
	open := agent.roundsRunning
	for j := len(agent.children) - 1; j >= 0 && open > 0; j-- {
		if prev := agent.children[j]; prev.kind == KindRound && prev.status == Running {
			open--
			t.closeOpen(prev, at, OK, false)
		}
	}
}

// callIndex is where the tool call at callPath stands among the calls
// its round's reply asked for, or -1 while the reply is not known.
func callIndex(round *node, callPath string) int {
	if round.call == nil {
		return -1
	}
	calls := round.call.Reply.ToolCalls
	return slices.Index(path.Calls(round.path, len(calls), func(i int) string { return calls[i].Name }), callPath)
}

// grow adds d rows under n, up the ancestors as far as they are expanded.
func (t *Tree) grow(n *node, d int) {
	for a := n; a != nil && d != 0; a = a.parent {
		a.inner += d
		if a.collapsed {
			return
		}
		if a.parent != nil {
			a.parent.addRows(a.pos, d)
		}
	}
}

// rowsBefore is how many rows the children before place i show.
func (n *node) rowsBefore(i int) int {
	s := 0
	for k := i; k > 0; k -= k & -k {
		s += n.children[k-1].span
	}
	return s
}

// addRows notes that the child at place i shows d rows more.
func (n *node) addRows(i, d int) {
	for k := i + 1; k <= len(n.children); k += k & -k {
		n.children[k-1].span += d
	}
}

// childAt returns the place of the child whose rows hold row r of the
// children's rows, and r's row within that child's.
func (n *node) childAt(r int) (int, int) {
	i := 0
	for step := 1 << bits.Len(uint(len(n.children))) >> 1; step > 0; step >>= 1 {
		if k := i + step; k <= len(n.children) && n.children[k-1].span <= r {
			i = k
			r -= n.children[k-1].span
		}
	}
	return i, r
}

// refill works the spans of the children out again from place from on,
// after a child was inserted there: each is its child's rows plus the
// spans that make up the rest of its range, which are either untouched or
// already refilled. Appending a child refills its own span alone, in
// log(children) steps.
func (n *node) refill(from int) {
	for k := from + 1; k <= len(n.children); k++ {
		s := n.children[k-1].rows()
		for j := 1; j < k&-k; j <<= 1 {
			s += n.children[k-j-1].span
		}
		n.children[k-1].span = s
	}
}

// setStatus changes a node's status and keeps the counts of its ancestors,
// and the derived status of the items and heads above it, in step.
func (t *Tree) setStatus(n *node, st Status, at time.Time) {
	old := n.status
	if old == st {
		return
	}
	n.status = st
	dRun, dFail := 0, 0
	if old == Running {
		dRun--
	}
	if st == Running {
		dRun++
	}
	if old == Failed {
		dFail--
	}
	if st == Failed {
		dFail++
	}
	if st.Done() {
		n.end = at
	}
	if n.isStep {
		t.runningSteps += dRun
	}
	if p := n.parent; p != nil {
		switch {
		case n.kind == KindRound:
			p.roundsRunning += dRun
		case n.kind == KindTool && st.Done() && !old.Done():
			p.toolsEnded++
		case n.kind == KindTool && old.Done() && !st.Done():
			p.toolsEnded--
		}
	}
	for a := n; a != nil; a = a.parent {
		a.running += dRun
		a.failed += dFail
		if a != n && a.derived {
			a.touched = true
			if a.start.IsZero() || (st == Running && at.Before(a.start)) {
				a.start = at
			}
			if a.running == 0 {
				a.end = at
			}
		}
	}
	n.touched = true
}

// closeOpenChildren ends whatever still runs below n when n ends: rounds,
// which have no end event of their own, and anything an abort cut short
// (aborted says n ended so).
func (t *Tree) closeOpenChildren(n *node, at time.Time, st Status, aborted bool) {
	own := 0
	if n.status == Running {
		own = 1
	}
	if n.running == own {
		// Nothing runs below: no walk of a map's every item as it ends.
		return
	}
	for _, c := range n.children {
		t.closeOpen(c, at, st, aborted)
	}
}

// endRoundIfDone ends round r at at once its reply is in and every tool
// call the reply asked for has ended, so that a round's row stops its
// clock then, not when the next round or its step's end closes it.
func (t *Tree) endRoundIfDone(r *node, at time.Time) {
	if r.status != Running || r.call == nil || r.callErr != "" || r.repairing != nil {
		return
	}
	if r.toolsEnded >= len(r.call.Reply.ToolCalls) {
		t.setStatus(r, OK, at)
	}
}

// skipCutOff marks skipped what an exit cut off in n's subtree: n when it
// had not started, and the steps that had not started inside it when it
// was still going. What finished on its own keeps its rows as they are,
// a branch it did not take pending among them.
func (t *Tree) skipCutOff(n *node, at time.Time) {
	switch n.effectiveStatus() {
	case Running:
		for _, c := range n.children {
			t.skipCutOff(c, at)
		}
	case Pending:
		t.skipSubtree(n, at)
	}
}

// skipNotTaken marks skipped what is still pending under the steps that
// finished ok in n's subtree: the branches a decide did not take.
func (t *Tree) skipNotTaken(n *node, at time.Time) {
	if n.effectiveStatus() != OK {
		return
	}
	for _, c := range n.children {
		if c.effectiveStatus() == Pending {
			t.skipSubtree(c, at)
			continue
		}
		t.skipNotTaken(c, at)
	}
}

// skipSubtree marks n and everything under it skipped.
func (t *Tree) skipSubtree(n *node, at time.Time) {
	for _, c := range n.children {
		t.skipSubtree(c, at)
	}
	if n.path == outputPath {
		return
	}
	n.derived, n.expected, n.start, n.cutOff = false, false, at, true
	n.version++
	t.setStatus(n, Skipped, at)
}

// closeOpen ends n and its subtree where they still run. A round or model
// call ends failed if its last call did, else ok; anything else takes the
// status of what closed it, or failed when that ended ok, since only a cut
// leaves a step or tool call open. aborted says the run's abort closed
// them: what ends failed so is marked aborted.
func (t *Tree) closeOpen(n *node, at time.Time, st Status, aborted bool) {
	if n.running == 0 {
		return
	}
	for _, c := range n.children {
		t.closeOpen(c, at, st, aborted)
	}
	if n.status != Running || n.derived {
		return
	}
	final := st
	switch n.kind {
	case KindRound, KindRepair, KindCall:
		final = OK
		if n.callErr != "" {
			final = Failed
		}
	default:
		if st.Done() && st != Failed && st != Exited {
			final = Failed
		}
	}
	n.repairing = nil
	if aborted && final == Failed {
		// Cut short by the run's abort, a round's call too: its error
		// is the abort's ("stopped: ...").
		n.aborted = true
		n.version++
	}
	t.setStatus(n, final, at)
}

// abortedAt ends n aborted with the run's error: the run was aborted at
// its stop, where it was held, often before it started (a step at its
// step stop), so that no event of its own will say so.
func (t *Tree) abortedAt(n *node, runErr string, at time.Time) {
	n.aborted = true
	n.version++
	if n.err == "" {
		n.err = runErr
	}
	if n.effectiveStatus().Done() {
		return
	}
	n.derived, n.expected, n.start = false, false, n.startedBy(at)
	t.setStatus(n, Failed, at)
}

// startedBy is when a node whose first event of its own arrives at at
// began: then, or earlier when it was held at its stop before it (a step
// at its step stop, a round at its round stop, a call at its tool stop),
// since time held there is the node's.
func (n *node) startedBy(at time.Time) time.Time {
	if first := n.holds.First(); !first.IsZero() && first.Before(at) {
		return first
	}
	return at
}

// timed gives a step or a tool call the times its end event says, the
// engine's: it ran the ms before end, its step or tool stop included, and
// its threads were held heldMs of them. The nodes above it without
// events of their own (an item, a called plan) began no later than it.
// An end that gives no time at all keeps the start its start event gave.
func (t *Tree) timed(n *node, end time.Time, ms, heldMs float64) {
	if ms > 0 || n.start.IsZero() {
		n.start = end.Add(-millis(ms))
	}
	n.held, n.timed = millis(heldMs), true
	t.startAbove(n, n.start)
}

// startAbove moves the start of the nodes above n that span what is under
// them back to at, up to the first one with a start of its own.
func (t *Tree) startAbove(n *node, at time.Time) {
	for a := n.parent; a != nil && a != &t.root && a.derived; a = a.parent {
		if a.start.IsZero() || at.Before(a.start) {
			a.start = at
		}
	}
}

// hold adds a hold at path, which ended at end, to the node there and to
// every node above it: each one's threads were held then. A unit ran
// while it was held at its own stops, so a node that spans what is under
// it (an item, a called plan) or has no end event (a round, held at its
// reply stop once its call is in) lasts at least to the hold's end, and a
// node not yet started runs from the hold's start.
func (t *Tree) hold(p string, end time.Time, h engine.Held) {
	n := t.ensure(p, kindGroup, end.Add(-millis(h.Ms)))
	if n.derived && !n.touched {
		n.expected = true
	}
	if _, ok := t.holding[p]; ok {
		// The hold going on there is over: this event says how long.
		delete(t.holding, p)
		t.markHolding()
	}
	n.version++
	for a := n; a != nil && a != &t.root; a = a.parent {
		a.holds.Add(end, h)
		if first := a.holds.First(); a.start.IsZero() || first.Before(a.start) {
			if !a.timed {
				a.start = first
			}
		}
		if !a.timed && a.effectiveStatus().Done() && end.After(a.end) {
			a.end = end
		}
	}
}

// Holding says where threads of the run are held now, at the clock's
// now: the paths of their stops. A unit held now, at its own stop or with
// a thread held inside it, runs on the tree's clock, and its held time
// with it, from when the tree first saw the hold until the Held event
// that ends it (or the run's end) arrives, so that it reads live what it
// will read once over. A hold first seen is held from now, not from the
// clock's last tick: a run held at its first stop is held before the
// clock's first tick, and before the tree has any of its events.
func (t *Tree) Holding(paths []string, now time.Time) {
	t.holding = t.holding.Update(paths, now)
	t.markHolding()
}

// markHolding sets heldSince on the nodes at and above the paths held now,
// and clears it on the nodes no longer so.
func (t *Tree) markHolding() {
	for _, n := range t.heldNodes {
		n.heldSince = time.Time{}
		n.version++
	}
	t.heldNodes = t.heldNodes[:0]
	for p, since := range t.holding {
		n, ok := t.byPath[p]
		if !ok {
			continue
		}
		// No hold began before its run: a clock that is not the events'
		// (a test's) may read earlier.
		if since.Before(t.totals.Start) {
			since = t.totals.Start
		}
		for a := n; a != nil && a != &t.root; a = a.parent {
			switch {
			case a.heldSince.IsZero():
				a.heldSince = since
				a.version++
				t.heldNodes = append(t.heldNodes, a)
			case since.Before(a.heldSince):
				a.heldSince = since
			}
		}
	}
}

// shownStatus is the node's status as it shows: a unit held now runs, even
// one that has not started (held at its stop before its first event) or
// that had its own work done (a round held at its reply stop).
func (n *node) shownStatus() Status {
	st := n.effectiveStatus()
	if !n.heldSince.IsZero() && (st == Pending || st == OK && !n.timed) {
		return Running
	}
	return st
}

// heldStart is when a node held now began: its start, or the hold's when
// the hold came first.
func (n *node) heldStart() time.Time {
	if !n.heldSince.IsZero() && (n.start.IsZero() || n.heldSince.Before(n.start)) {
		return n.heldSince
	}
	return n.start
}

// heldTime is how much of the node's duration its threads were held at
// stops: what its end event says, or for a node without one, or still
// running, the holds at and below it within its time, and the hold going
// on now, which covers all of it from its start.
func (t *Tree) heldTime(n *node) time.Duration {
	if !n.heldSince.IsZero() {
		return n.holds.Within(n.heldStart(), n.heldSince) + max(t.now.Sub(n.heldSince), 0)
	}
	if n.timed {
		return n.held
	}
	st := n.effectiveStatus()
	if n.start.IsZero() || st == Pending {
		return 0
	}
	end := n.end
	if st == Running {
		end = t.now
	}
	return n.holds.Within(n.start, end)
}
