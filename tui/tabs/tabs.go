// Package tabs is the strip of plan tabs in the workbench's header: a tab
// for each open plan, the current one in brackets, each with ✓ or its
// problem count. When they do not all fit, the strip shows a window of
// them that holds the current one.
package tabs

import (
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/stepwise-dev/stepwise/debugger/workspace"
	"github.com/stepwise-dev/stepwise/tui/common"
)

// Strip is the open plans and which of them is on show.
type Strip struct {
	Docs    []workspace.Document
	Current int
}

// tabCell is where one plan tab sits in the tab strip.
type tabCell struct {
	index int // document index
	x     int // first column, relative to the strip
	width int
}

// tabMark is a tab's validity mark: ✓, or ✗ and the problem count.
func (m Strip) tabMark(i int) (string, bool) {
	n := len(m.Docs[i].Report.Problems)
	if n == 0 && m.Docs[i].Plan != nil {
		return "✓", true
	}
	return "✗" + strconv.Itoa(n), false
}

// tabWidth is the width of tab i: a space or bracket each side, the name, a
// space and the mark.
func (m Strip) tabWidth(i int) int {
	mark, _ := m.tabMark(i)
	return ansi.StringWidth(m.Docs[i].Name()) + 1 + ansi.StringWidth(mark) + 2
}

const (
	moreLeft  = "‹ "
	moreRight = " ›"
)

// tabLayout places the tabs in a strip width columns wide. When they do not
// all fit, the strip shows a window of them that holds the current one, with
// ‹ and › saying more lie either side.
func (m Strip) tabLayout(width int) (cells []tabCell, left, right bool) {
	n := len(m.Docs)
	widths := make([]int, n)
	for i := range widths {
		widths[i] = m.tabWidth(i)
	}
	sum := func(from, to int) int { // widths of tabs [from, to)
		s := 0
		for i := from; i < to; i++ {
			s += widths[i]
		}
		return s
	}
	marks := func(from, to int) int {
		w := 0
		if from > 0 {
			w += len([]rune(moreLeft))
		}
		if to < n {
			w += len([]rune(moreRight))
		}
		return w
	}
	start := 0
	for start < m.Current && sum(start, m.Current+1)+marks(start, m.Current+1) > width {
		start++
	}
	end := m.Current + 1
	for end < n && sum(start, end+1)+marks(start, end+1) <= width {
		end++
	}
	x := 0
	if start > 0 {
		x = len([]rune(moreLeft))
	}
	for i := start; i < end; i++ {
		cells = append(cells, tabCell{index: i, x: x, width: widths[i]})
		x += widths[i]
	}
	return cells, start > 0, end < n
}

// View draws the tabs in a strip at most width columns wide.
func (m Strip) View(t *common.Theme, width int) string {
	cells, left, right := m.tabLayout(width)
	var b strings.Builder
	if left {
		b.WriteString(t.Muted.Render(moreLeft))
	}
	for _, c := range cells {
		mark, ok := m.tabMark(c.index)
		markStyle := t.Problem
		if ok {
			markStyle = t.Valid
		}
		name := m.Docs[c.index].Name()
		if c.index == m.Current {
			b.WriteString(t.TabOn.Render("["+name) + " " + markStyle.Render(mark) + t.TabOn.Render("]"))
		} else {
			b.WriteString(" " + t.Tab.Render(name) + " " + markStyle.Render(mark) + " ")
		}
	}
	if right {
		b.WriteString(t.Muted.Render(moreRight))
	}
	return b.String()
}

// At returns the index of the plan whose tab is drawn at column x of a
// strip width columns wide.
func (m Strip) At(x, width int) (int, bool) {
	cells, _, _ := m.tabLayout(width)
	for _, c := range cells {
		if x >= c.x && x < c.x+c.width {
			return c.index, true
		}
	}
	return 0, false
}
