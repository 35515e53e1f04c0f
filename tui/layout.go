package tui

import "strconv"

// rect is a box on the screen.
type rect struct{ x, y, w, h int }

func (r rect) contains(x, y int) bool {
	return x >= r.x && x < r.x+r.w && y >= r.y && y < r.y+r.h
}

// layout is where everything goes for one window size.
type layout struct {
	tooSmall bool
	stacked  bool // tree above detail, for narrow windows
	header   rect
	tabsX    int // the column the plan tabs start at, after the header's lead
	tree     rect
	detail   rect
	bottom   rect // the problems, or the threads held; zero height when left out
	status   rect
	footer   rect
}

// The smallest window the workbench lays out; below it, it says so.
const (
	minWidth  = 24
	minHeight = 9
	// Below this width the tree and the detail pane stack instead of
	// standing side by side.
	stackBelow = 60
)

// computeLayout places the panes in a width by height window with bottom
// lines (problems and notes, or held threads) to list; none leaves the
// bottom pane out. It is a pure function of its inputs: the view and the
// mouse handling both call it, so they always agree.
//
// The header, the status line and the key hints take a line each. The
// bottom pane takes what it needs up to a quarter of the rest.
// The tree gets 45% of the width (within 24 to 80 columns), the detail pane
// the remainder; on narrow windows they stack, the tree on top.
func computeLayout(width, height, bottom int) layout {
	if width < minWidth || height < minHeight {
		return layout{tooSmall: true}
	}
	var l layout
	l.header = rect{0, 0, width, 1}
	l.status = rect{0, height - 2, width, 1}
	l.footer = rect{0, height - 1, width, 1}
	body := height - 3

	ph := 0
	if bottom > 0 {
		ph = min(bottom+2, max(3, body/4))
	}
	l.bottom = rect{0, 1 + body - ph, width, ph}
	top := body - ph

	if width < stackBelow {
		l.stacked = true
		// The tree keeps at least one row in view; the detail pane gives
		// way first when there is no room for both.
		th := max(top/2, min(top, 3))
		l.tree = rect{0, 1, width, th}
		l.detail = rect{0, 1 + th, width, top - th}
		return l
	}
	tw := min(max(width*45/100, 24), 80)
	l.tree = rect{0, 1, tw, top}
	l.detail = rect{tw, 1, width - tw, top}
	return l
}

func itoa(n int) string { return strconv.Itoa(n) }
