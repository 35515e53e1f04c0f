package live

import (
	"time"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/tui/progress"
)

// Row is one visible line of the tree.
type Row struct {
	Depth int    // 0 for top-level steps
	Path  string // the node's step path, as events, breakpoints and the store name it
	// Label is the path's last segment: E1, do.3, agent.2,
	// builtin__reshape.2, repair, or a called plan's identifier.
	Label  string
	Kind   Kind
	Tool   string
	Status Status
	// Duration is end minus start, or for a running node the time since
	// it started, by the tree's clock; zero before it starts.
	Duration time.Duration
	// Held is how much of Duration the node's threads were held at
	// stops, once it ended.
	Held time.Duration
	// HeldNow says a thread is held at or below the node now (Holding),
	// even before any of that hold has shown as time.
	HeldNow bool
	// HeldHere says a thread is held now at the node's own stop.
	HeldHere bool
	Spend    Spend // the node's model calls and its subtree's
	// Aborted says the node is failed because the run was aborted at or
	// under it (Node.Aborted): a filter finds it by that word.
	Aborted bool
	// Decided is the action by which a person decided the node; Reused
	// says a replay or a fork gave it a recorded result ("replay",
	// "fork"). Both are empty for a node that ran.
	Decided, Reused string
	// Items is the progress through its items of a top-level map,
	// filter or reduce while it runs; nil for any other row. It is the
	// tree's, read before the next event.
	Items *progress.List
	// HasChildren says the node has rows under it; Collapsed that they
	// are hidden.
	HasChildren bool
	Collapsed   bool
	// Rails says where a tree's guide lines run past the row: bit d is
	// set when the row's ancestor at depth d, or at d == Depth the node
	// itself, has siblings after it. A drawing needs it to tell ├ from └
	// and │ from a blank, which the rows in view alone cannot say. Depths
	// past 63 are not tracked and read as having no siblings after them.
	Rails uint64
}

// Len returns how many rows are visible.
func (t *Tree) Len() int { return t.root.inner }

// Rows returns up to n visible rows from offset. It walks down to offset by
// the subtree row counts, finding the child that holds it in log(siblings)
// steps at each depth, then reads n rows on, so its cost is the depth times
// log(siblings) plus n, however many rows the tree holds.
func (t *Tree) Rows(offset, n int) []Row {
	if offset < 0 {
		offset = 0
	}
	n = min(n, t.Len()-offset)
	if n <= 0 {
		return nil
	}
	out := make([]Row, 0, n)
	t.collect(&t.root, offset, 0, n, 0, &out)
	return out
}

// collect appends the rows of parent's children's subtrees, skipping the
// first skip. rails are the Rails of the children's ancestors.
func (t *Tree) collect(parent *node, skip, depth, n int, rails uint64, out *[]Row) {
	nodes := parent.children
	first, skip := parent.childAt(skip)
	for i := first; i < len(nodes); i++ {
		if len(*out) >= n {
			return
		}
		c := nodes[i]
		own := rails
		if i < len(nodes)-1 && depth < 64 {
			own |= 1 << depth
		}
		if skip == 0 {
			*out = append(*out, t.row(c, depth, own))
		} else {
			skip--
		}
		if !c.collapsed {
			t.collect(c, skip, depth+1, n, own, out)
		}
		skip = 0
	}
}

func (t *Tree) row(n *node, depth int, rails uint64) Row {
	r := Row{
		Depth: depth, Path: n.path, Label: n.segment, Kind: n.kind, Tool: n.tool,
		Status: n.shownStatus(), Duration: t.duration(n), Held: t.heldTime(n), HeldNow: !n.heldSince.IsZero(), Spend: n.spend, Decided: n.decided, Reused: n.reused,
		Aborted: n.shownAborted(), HasChildren: len(n.children) > 0, Collapsed: n.collapsed, Rails: rails,
	}
	if r.HeldNow {
		_, r.HeldHere = t.holding[n.path]
	}
	if depth == 0 && r.Status == Running {
		if s := t.progress.Step(n.path); s != nil {
			r.Items = s.List
		}
	}
	return r
}

// effectiveStatus is the node's status, or for a node without events of its
// own (an item of a list body, a called plan, a branch head) its children's:
// running while any runs, failed if any failed, ok once they ran. An item
// whose body has begun runs until the last of its steps has run (one held
// at its stop, or about to start, has not), or until the run ends.
func (n *node) effectiveStatus() Status {
	if !n.derived {
		return n.status
	}
	switch {
	case n.running > 0:
		return Running
	case n.failed > 0 && n.childFailed():
		return Failed
	case n.touched && n.kind == KindItem && n.stepsToCome() && !n.runEnded():
		return Running
	case n.touched:
		return OK
	}
	return Pending
}

// shownAborted reports whether the node failed because the run was
// aborted: its own end or its stop says so (node.aborted), or, for a node
// that takes its status from what is under it (a map's item, a called
// plan), everything that failed under it failed so. An item the abort cut
// short is then marked as its steps are, not as a failure of its own.
func (n *node) shownAborted() bool {
	if !n.derived || n.aborted {
		return n.aborted
	}
	if n.effectiveStatus() != Failed {
		return false
	}
	for _, c := range n.children {
		if c.effectiveStatus() == Failed && !c.shownAborted() {
			return false
		}
	}
	return true
}

// stepsToCome reports whether a step of n's body has yet to run.
func (n *node) stepsToCome() bool {
	for _, c := range n.children {
		if c.effectiveStatus() == Pending {
			return true
		}
	}
	return false
}

// runEnded reports whether the run n belongs to has ended.
func (n *node) runEnded() bool {
	for n.parent != nil {
		n = n.parent
	}
	return n.ended
}

// childFailed reports whether one of n's children ended failed. A failure
// deeper down that a child got over (a round whose call failed, in a step
// whose failure was replaced at an error stop) is that child's business.
func (n *node) childFailed() bool {
	for _, c := range n.children {
		if c.effectiveStatus() == Failed {
			return true
		}
	}
	return false
}

// duration is how long the node ran: from its start to its end, or while
// it runs to the tree's clock. It is wall time, time held at stops
// included; the end event says how much of it the node's own threads
// were held (Row.Held), which a concurrent item's model call, going on
// meanwhile, never is.
func (t *Tree) duration(n *node) time.Duration {
	if !n.heldSince.IsZero() {
		return max(t.now.Sub(n.heldStart()), 0)
	}
	st := n.effectiveStatus()
	switch {
	case n.start.IsZero() || st == Pending:
		return 0
	case st == Running:
		return max(t.now.Sub(n.start), 0)
	}
	return max(n.end.Sub(n.start), 0)
}

// Index returns the row at which path shows, or false when it does not:
// there is no such node, or an ancestor is collapsed.
func (t *Tree) Index(path string) (int, bool) {
	n, ok := t.byPath[path]
	if !ok {
		return 0, false
	}
	i := 0
	for c := n; c.parent != nil; c = c.parent {
		p := c.parent
		if p.collapsed {
			return 0, false
		}
		if p != &t.root {
			i++ // the parent's own row
		}
		i += p.rowsBefore(c.pos)
	}
	return i, true
}

// Toggle collapses an expanded node or expands a collapsed one, and
// reports whether there is a node at path.
func (t *Tree) Toggle(path string) bool {
	n, ok := t.byPath[path]
	if ok {
		t.SetCollapsed(path, !n.collapsed)
	}
	return ok
}

// SetCollapsed collapses or expands the node at path. Only the counts of
// its ancestors change; nothing is laid out again.
func (t *Tree) SetCollapsed(path string, collapsed bool) {
	n, ok := t.byPath[path]
	if !ok || n.collapsed == collapsed {
		return
	}
	before := n.rows()
	n.collapsed = collapsed
	if p := n.parent; p != nil {
		p.addRows(n.pos, n.rows()-before)
		t.grow(p, n.rows()-before)
	}
}

// Reveal expands every collapsed ancestor of the node at path, so that its
// row shows, and reports whether there is a node at path.
func (t *Tree) Reveal(path string) bool {
	n, ok := t.byPath[path]
	if !ok {
		return false
	}
	for a := n.parent; a != nil && a != &t.root; a = a.parent {
		if a.collapsed {
			t.SetCollapsed(a.path, false)
		}
	}
	return true
}

// Node is everything the tree knows of one node, for the inspector.
type Node struct {
	Path     string
	Kind     Kind
	Tool     string
	Status   Status
	Start    time.Time
	End      time.Time // zero while it runs
	Duration time.Duration
	// Held, Decided and Reused are Row's.
	Held            time.Duration
	Decided, Reused string
	Spend           Spend
	// Input is the rendered input of a step, the arguments of a tool
	// call, or the refused answer a repair pass is given.
	Input  any
	Result any
	Error  string
	// Reply and Reasoning are what streamed from the model at this path:
	// a round's reply, a repair pass's, a judge's or the solver's.
	Reply      string
	Reasoning  string
	Violations []string // a repair pass: the schema errors to fix
	Warnings   []string
	Gate       *engine.GateEvaluated
	Ask        *engine.Asked
	// Exit is the exit that ended the run, on its step's node; CutOff
	// says the node was skipped because an exit ended the run first.
	Exit   *engine.Exit
	CutOff bool
	// Aborted says the run was aborted at the node's stop, or its step
	// ended aborted.
	Aborted   bool
	CallError string // the last model call's error, until one succeeds
	// Call is the last model call made at this path, whole (request,
	// reply, usage, strict-output record); nil until one ends. A round's
	// request is known only here, once its call has ended.
	Call *engine.ModelCalled
	// Refusals are, for a round, the schema errors of its answer that
	// sent it to a repair pass; a repair pass has them as Violations.
	Refusals []string
	// Version counts the events applied at this path: a reader that saw
	// the same Version, Status, Spend.Calls and Children has seen
	// everything the node holds.
	Version uint64
	// Children counts the nodes directly under it. A count, not their
	// paths: the inspector asks for the selected node on every batch of
	// events, and a map's node has an item for each element.
	Children int
}

// Node returns the node at path.
func (t *Tree) Node(path string) (Node, bool) {
	n, ok := t.byPath[path]
	if !ok {
		return Node{}, false
	}
	out := Node{
		Path: n.path, Kind: n.kind, Tool: n.tool, Status: n.shownStatus(), Start: n.heldStart(),
		Duration: t.duration(n), Held: t.heldTime(n), Decided: n.decided, Reused: n.reused, Spend: n.spend, Input: n.input, Result: n.result, Error: n.err,
		Reply: n.reply.String(), Reasoning: n.thinking.String(), Violations: n.violations,
		Warnings: n.warnings, Gate: n.gate, Ask: n.ask, Exit: n.exit, CutOff: n.cutOff, Aborted: n.shownAborted(), CallError: n.callErr, Call: n.call, Version: n.version,
	}
	if out.Status.Done() {
		out.End = n.end
	}
	out.Children = len(n.children)
	if n.kind == KindRound {
		for _, c := range n.children {
			if c.kind == KindRepair {
				out.Refusals = c.violations
			}
		}
	}
	return out, true
}
