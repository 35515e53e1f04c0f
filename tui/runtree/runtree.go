// Package runtree is the workbench's live run tree pane: it draws a
// live.Tree as a run streams into it, one row a node, with each node's
// status, kind, time, tokens and cost, and marks the stop the run is held
// at and the rows a breakpoint matches.
//
// The selection is held by step path, not by row index: while a run
// streams, new map items and rounds arrive above the selected row, and the
// row must stay the same node. The index is worked out again on every frame
// with live.Tree.Index, and the selected row keeps its line on screen while
// rows arrive above it, so what the user looks at does not slide away.
package runtree

import (
	"maps"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/stepwise-dev/stepwise/engine/path"
	"github.com/stepwise-dev/stepwise/tui/common"
	"github.com/stepwise-dev/stepwise/tui/live"
)

// Model is the run tree pane.
type Model struct {
	common.Common
	tree *live.Tree
	common.Focusable
	// path is the selected node; empty selects the first row.
	path string
	// line is the line of the body the selected row is drawn on.
	line int
	stop string
	// held are the paths the run's other threads are held at now.
	held map[string]bool
	// origin says where a run again comes from, zero for any other run.
	origin Origin
	breaks func(path string) common.BreakMark
	// follow says the selection follows the newest running row as
	// events arrive (Follow), until the user moves it.
	follow bool
	// filter is the line typed after /; view the rows it leaves, nil
	// while there is none.
	filter common.FilterLine
	view   *filtered
	// slowest is the row the last jump to the slowest went to: from
	// there, the next goes to the next slowest.
	slowest string
}

// New returns the pane with no run to show, following.
func New(c common.Common) Model {
	return Model{Common: c, follow: true}
}

// Following reports whether the selection follows the newest running
// row.
func (m Model) Following() bool { return m.follow }

// SetFollow turns following on, selecting the newest running row at
// once, or off.
func (m *Model) SetFollow(on bool) {
	m.follow = on
	m.Follow()
}

// Follow selects the newest running row, or once nothing runs the row
// started last (live.Tree.Newest), while following is on; the page calls
// it as events arrive.
func (m *Model) Follow() {
	if !m.follow || m.tree == nil {
		return
	}
	if p, ok := m.tree.Newest(); ok {
		if i, ok := m.rows().Index(p); ok {
			m.selectIndex(i)
		}
	}
}

// SetTree shows another run's tree, or none (nil). The selection keeps its
// path, so a run of the same plan again shows the same node where it has
// one. A different tree drops the stop marker, which belonged to the run
// shown before.
func (m *Model) SetTree(t *live.Tree) {
	if t != m.tree {
		// Another run starts as every run does: unfiltered.
		m.stop, m.origin, m.held = "", Origin{}, nil
		m.filter = common.FilterLine{}
	}
	m.tree = t
	m.Refilter()
	m.settle()
}

// SetSize sets the pane's outer size, border included.
func (m *Model) SetSize(width, height int) {
	m.Common.SetSize(width, height)
	m.settle()
}

// Origin says where a run again comes from: a replay of a recorded run,
// or a fork of one from a path.
type Origin struct {
	What string // replay or fork; empty for a run of its own
	Run  string // the recorded run's id
	From string // where a fork starts; empty for a replay
}

// Text is the origin as a title says it ("fork of 6a73ad7968f9 from E2"),
// the run's id cut to idLen characters.
func (o Origin) Text(idLen int) string {
	if o.What == "" {
		return ""
	}
	s := o.What + " of " + o.Run[:min(idLen, len(o.Run))]
	if o.From != "" {
		s += " from " + o.From
	}
	return s
}

// SetOrigin says where the run shown comes from: a replay or a fork of a
// recorded run, or the zero Origin for a run of its own.
func (m *Model) SetOrigin(origin Origin) { m.origin = origin }

// Stop is the path of the node the run is held at, empty when none.
func (m Model) Stop() string { return m.stop }

// SetStop marks the row of the node the run is held at and selects it,
// opening its collapsed ancestors. An empty path clears the mark.
func (m *Model) SetStop(path string) {
	m.stop = path
	if m.view != nil {
		m.Refilter() // held matches the stop
	}
	if path != "" {
		m.SelectPath(path)
	}
}

// SetHeld gives the paths the run's threads are held at now, besides the
// stop: the held filter and the jump to held rows find them.
func (m *Model) SetHeld(paths []string) {
	held := make(map[string]bool, len(paths))
	for _, p := range paths {
		held[p] = true
	}
	if maps.Equal(held, m.held) {
		return
	}
	m.held = held
	if m.view != nil {
		m.Refilter()
	}
}

// heldNow reports whether a thread of the run is held at path now.
func (m Model) heldNow(path string) bool { return path == m.stop || m.held[path] }

// SetBreakpoints sets what says which breakpoints a row has; nil marks
// none. It is asked only about the rows in view.
func (m *Model) SetBreakpoints(match func(path string) common.BreakMark) {
	m.breaks = match
}

// Selected returns the selected row, false when there are no rows.
func (m Model) Selected() (live.Row, bool) {
	i, ok := m.cursor()
	if !ok {
		return live.Row{}, false
	}
	return m.rows().Rows(i, 1)[0], true
}

// SelectPath selects the node at path, clearing a filter that hides it and
// expanding its collapsed ancestors so that its row shows, and reports
// whether there is such a node.
func (m *Model) SelectPath(path string) bool {
	if m.tree == nil || !m.tree.Reveal(path) {
		return false
	}
	i, ok := m.rows().Index(path)
	if !ok && m.filter.Query != "" {
		// The filter hides the row: asked for by path, it shows.
		m.SetFilter("")
		i, ok = m.rows().Index(path)
	}
	if ok {
		m.selectIndex(i)
	}
	return ok
}

// ClickAt selects the row drawn at line y of the pane (0 is the top
// border), as tui/tree does; folding stays with the keys.
func (m *Model) ClickAt(y int) {
	line := y - 1
	if m.tree == nil || line < 0 || line >= m.bodyHeight() {
		return
	}
	i, _ := m.cursor()
	if r := m.rows().Rows(m.offset(i)+line, 1); len(r) > 0 {
		m.path, m.line = r[0].Path, line
		m.follow = false
	}
}

// Scroll moves the view by delta rows (the mouse wheel), taking the
// selection along when it would leave the view, so it stays visible.
func (m *Model) Scroll(delta int) {
	i, ok := m.cursor()
	if !ok {
		return
	}
	h, total := m.bodyHeight(), m.rows().Len()
	off := common.Scroll{Offset: m.offset(i) + delta}.Clamp(h, total).Offset
	if h > 0 {
		j := min(max(i, off), off+h-1, total-1)
		if j != i {
			m.path = m.rows().Rows(j, 1)[0].Path
			m.follow = false
		}
		m.line = j - off
	}
}

// Update answers the movement and folding keys; the page sends it keys
// only while the pane has focus. Collapse on a row that is already folded,
// or has nothing to fold, goes to its parent; Expand on an unfolded row
// goes to its first child. A key that moves the selection stops it
// following the running row. Other messages do nothing.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	kp, isKey := msg.(tea.KeyPressMsg)
	switch {
	case !isKey:
		return m, nil
	case m.filter.Editing:
		if m.filter.Edit(kp) {
			m.Refilter()
		}
		return m, nil
	case key.Matches(kp, m.Keys.Close) && m.view != nil:
		m.SetFilter("")
		return m, nil
	}
	i, ok := m.cursor()
	if !ok {
		return m, nil
	}
	before := m.rows().Rows(i, 1)[0].Path
	m.key(kp, i)
	if m.path != before {
		m.follow = false
	}
	return m, nil
}

// key answers a movement or folding key with row i selected.
func (m *Model) key(kp tea.KeyPressMsg, i int) {
	k := m.Keys
	if delta, ok := k.Movement(kp, max(m.bodyHeight()-1, 1), m.rows().Len()); ok {
		m.selectIndex(i + delta)
		return
	}
	r := m.rows().Rows(i, 1)[0]
	switch {
	case key.Matches(kp, k.Collapse):
		switch {
		case r.HasChildren && !r.Collapsed:
			m.fold(r.Path, true)
		case r.Depth > 0:
			m.SelectPath(parentOf(r.Path))
		}
	case key.Matches(kp, k.Expand):
		switch {
		case r.HasChildren && r.Collapsed:
			m.fold(r.Path, false)
		case r.HasChildren:
			m.selectIndex(i + 1)
		}
	case key.Matches(kp, k.Toggle):
		if r.HasChildren {
			m.fold(r.Path, !r.Collapsed)
		}
	}
}

// fold collapses or expands the selected node, which keeps its line.
func (m *Model) fold(path string, collapsed bool) {
	m.path = path
	m.tree.SetCollapsed(path, collapsed)
	m.settle()
}

// cursor returns the selected row's index: the selected node's, or its
// nearest visible ancestor's while a collapse hides it, or the first row's
// when the tree has nothing on the selected path. ok is false when there
// are no rows.
func (m Model) cursor() (int, bool) {
	if m.tree == nil || m.rows().Len() == 0 {
		return 0, false
	}
	for p := m.path; p != ""; p = parentOf(p) {
		if i, ok := m.rows().Index(p); ok {
			return i, true
		}
	}
	return 0, true
}

// offset is the first row in view when row i is selected: the one that
// puts the selection on its line, held inside the rows.
func (m Model) offset(i int) int {
	h := m.bodyHeight()
	line := min(max(m.line, 0), max(h-1, 0))
	return common.Scroll{Offset: i - line}.Clamp(h, m.rows().Len()).Offset
}

// selectIndex selects row i, clamped, scrolling as little as keeps it in
// view.
func (m *Model) selectIndex(i int) {
	cur, ok := m.cursor()
	if !ok {
		return
	}
	total := m.rows().Len()
	i = min(max(i, 0), total-1)
	off := common.Scroll{Offset: m.offset(cur)}.Follow(i, m.bodyHeight(), total).Offset
	m.path, m.line = m.rows().Rows(i, 1)[0].Path, i-off
}

// settle pins the selection to the node and line it is drawn at now, after
// a change that may have hidden it or moved the view: a collapse above it,
// a resize, another tree.
func (m *Model) settle() {
	i, ok := m.cursor()
	if !ok {
		return
	}
	off := m.offset(i)
	m.path, m.line = m.rows().Rows(i, 1)[0].Path, i-off
}

func (m Model) bodyHeight() int { return max(m.Height-2, 0) }

// parentOf is the path of a node's parent, empty for a top-level step.
func parentOf(p string) string {
	parent, _, _ := path.Parent(p)
	return parent
}
