package tui

import (
	"math"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/stepwise-dev/stepwise/tui/common"
)

// page is a screen of the workbench under its header and above its status
// line: the plan (its tree, the step detail, the problems) or the run on
// show (its tree, the inspector, the threads held). A page lays out its
// panes in the box it is given, routes keys to the focused pane and the
// mouse, at coordinates relative to its box, to the pane under the
// pointer.
type page interface {
	common.Component
	// sync points the page's detail pane at the selection, after
	// anything may have moved it.
	sync()
	// focused returns the pane that has the keys; setFocus gives them to
	// another, the tree when that one is not laid out.
	focused() pane
	setFocus(pane)
	// capturing reports whether a pane takes every key, the workbench's
	// own included: the inspector's search box while it is open.
	capturing() bool
	// selectedPath is the path of the selected row of the page's tree.
	selectedPath() string
	// status is what the status line says of the page, on its left
	// and on its right.
	status() (left, right string)
	// layout is where the page's panes go in its box now.
	layout() paneLayout
}

// pane names a focusable pane of a page, in Tab order.
type pane int

const (
	paneTree pane = iota
	paneDetail
	paneBottom // the problems on the plan page, the threads on the run page
	paneCount
)

// nextPane is the pane delta panes on from p, in Tab order, over those on
// screen: the bottom one only when shown.
func nextPane(p, delta pane, bottomShown bool) pane {
	for range paneCount {
		p = (p + delta + paneCount) % paneCount
		if p != paneBottom || bottomShown {
			break
		}
	}
	return p
}

// paneLayout is where a page's panes go in its box.
type paneLayout struct {
	stacked bool // tree above detail, for narrow windows
	// zoomed says one pane, zoom, takes the whole box; the others are
	// empty rects and are not drawn.
	zoomed bool
	zoom   pane
	tree   rect
	detail rect
	bottom rect // the problems, or the threads held; zero height when left out
}

// split is how the user has arranged the panes: the width the tree takes
// beside the detail pane, and whether the focused pane fills the page.
// The root keeps one for both pages, for the whole session, so a run
// shows with the panes where the plan had them.
type split struct {
	// tree is the tree pane's share of the page's width, so that a
	// resize keeps the proportion the user chose; 0 until the user sets
	// it, which leaves it to layoutPanes' default.
	tree float64
	zoom bool
	// dragging says a mouse button went down on the border between the
	// tree and the detail pane, and the pointer's motion moves it.
	dragging bool
}

// minPaneWidth is the narrowest the tree or the detail pane is made
// beside the other, however the split is set.
const minPaneWidth = 24

// treeWidth is the tree pane's width in a box width wide that puts the
// panes side by side: the user's share of it, or 45% of the box within 24
// to 80 columns; either way the detail pane keeps minPaneWidth.
func (s split) treeWidth(width int) int {
	tw := int(math.Round(s.tree * float64(width)))
	if s.tree == 0 {
		tw = min(max(width*45/100, minPaneWidth), 80)
	}
	return min(max(tw, minPaneWidth), width-minPaneWidth)
}

// layoutPanes places a page's panes in a width by height box with bottom
// lines (problems and notes, or held threads) to list; none leaves the
// bottom pane out. It is a pure function of its inputs: the view and the
// mouse handling both call it, so they always agree.
//
// A zoomed split gives the focused pane the whole box. Otherwise the
// bottom pane takes what it needs up to a quarter of the box, the tree
// the split's width (split.treeWidth) and the detail pane the remainder;
// on narrow windows they stack, the tree on top.
func layoutPanes(width, height, bottom int, s split, focus pane) paneLayout {
	var l paneLayout
	if s.zoom && (focus != paneBottom || bottom > 0) {
		l.zoomed, l.zoom = true, focus
		*l.rectOf(focus) = rect{0, 0, width, height}
		return l
	}
	ph := 0
	if bottom > 0 {
		ph = min(bottom+2, max(3, height/4))
	}
	l.bottom = rect{0, height - ph, width, ph}
	top := height - ph

	if width < stackBelow {
		l.stacked = true
		// The tree keeps at least one row in view; the detail pane gives
		// way first when there is no room for both.
		th := max(top/2, min(top, 3))
		l.tree = rect{0, 0, width, th}
		l.detail = rect{0, th, width, top - th}
		return l
	}
	tw := s.treeWidth(width)
	l.tree = rect{0, 0, tw, top}
	l.detail = rect{tw, 0, width - tw, top}
	return l
}

// rectOf is the rect of pane p in l.
func (l *paneLayout) rectOf(p pane) *rect {
	switch p {
	case paneDetail:
		return &l.detail
	case paneBottom:
		return &l.bottom
	}
	return &l.tree
}

// onBorder reports whether x, y of the page's box lies on the border
// between the tree and the detail pane standing beside it: the tree's
// right edge or the detail pane's left one.
func (l paneLayout) onBorder(x, y int) bool {
	if l.stacked || l.zoomed || y < l.tree.y || y >= l.tree.y+l.tree.h {
		return false
	}
	edge := l.tree.x + l.tree.w
	return x == edge-1 || x == edge
}

// drawPanes puts a page's pane views where l places them. The views are
// exactly their panes' sizes, so lines are simply joined, into one string
// sized once: the root copies it into the screen, and a frame should
// cost no other copy of it.
func drawPanes(l paneLayout, tree, detail, bottom string) string {
	if l.zoomed {
		return [...]string{paneTree: tree, paneDetail: detail, paneBottom: bottom}[l.zoom]
	}
	var b strings.Builder
	b.Grow(len(tree) + len(detail) + len(bottom) + 2)
	if l.stacked {
		b.WriteString(tree)
		if l.detail.h > 0 {
			b.WriteByte('\n')
			b.WriteString(detail)
		}
	} else {
		writeColumns(&b, tree, detail)
	}
	if l.bottom.h > 0 {
		b.WriteByte('\n')
		b.WriteString(bottom)
	}
	return b.String()
}

// writeColumns puts two blocks side by side; lipgloss.JoinHorizontal
// would measure every line again.
func writeColumns(b *strings.Builder, left, right string) {
	ls, rs := strings.Split(left, "\n"), strings.Split(right, "\n")
	for i := range max(len(ls), len(rs)) {
		if i > 0 {
			b.WriteByte('\n')
		}
		if i < len(ls) {
			b.WriteString(ls[i])
		}
		if i < len(rs) {
			b.WriteString(rs[i])
		}
	}
}

// wheelAt is the pane a wheel turn at ms scrolls, and by how much; ok is
// false for a turn that scrolls nothing.
func wheelAt(l paneLayout, msg tea.MouseWheelMsg) (p pane, delta int, ok bool) {
	delta = common.WheelDelta(msg)
	switch ms := msg.Mouse(); {
	case delta == 0:
	case l.tree.contains(ms.X, ms.Y):
		return paneTree, delta, true
	case l.detail.contains(ms.X, ms.Y):
		return paneDetail, delta, true
	case l.bottom.contains(ms.X, ms.Y):
		return paneBottom, delta, true
	}
	return 0, 0, false
}

// clickAt is the pane a click at ms falls on; ok is false outside them.
func clickAt(l paneLayout, ms tea.Mouse) (pane, bool) {
	switch {
	case l.tree.contains(ms.X, ms.Y):
		return paneTree, true
	case l.detail.contains(ms.X, ms.Y):
		return paneDetail, true
	case l.bottom.contains(ms.X, ms.Y):
		return paneBottom, true
	}
	return 0, false
}
