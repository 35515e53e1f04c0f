package tui

import "strconv"

// rect is a box on the screen.
type rect struct{ x, y, w, h int }

func (r rect) contains(x, y int) bool {
	return x >= r.x && x < r.x+r.w && y >= r.y && y < r.y+r.h
}

// layout is where the root puts things for one window size: the header
// and the page under it; the status line and the key hints take the last
// two lines.
type layout struct {
	tooSmall bool
	header   rect
	tabsX    int  // the column the plan tabs start at, after the header's lead
	body     rect // the page on show
}

// The smallest window the workbench lays out; below it, it says so.
const (
	minWidth  = 24
	minHeight = 9
	// Below this width the tree and the detail pane stack instead of
	// standing side by side.
	stackBelow = 60
)

// computeLayout places the header, the page, the status line and the key
// hints in a width by height window. It is a pure function of its inputs:
// the view and the mouse handling both call it, so they always agree.
//
// The header, the status line and the key hints take a line each; the
// page, which places its own panes (layoutPanes), the rest.
func computeLayout(width, height int) layout {
	if width < minWidth || height < minHeight {
		return layout{tooSmall: true}
	}
	return layout{
		header: rect{0, 0, width, 1},
		body:   rect{0, 1, width, height - 3},
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
