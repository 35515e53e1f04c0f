package runtree

import (
	"cmp"
	"slices"

	"github.com/stepwise-dev/stepwise/tui/common"
	"github.com/stepwise-dev/stepwise/tui/live"
)

// rowSource is what the pane reads its rows from: the tree, or the rows a
// filter leaves of it.
type rowSource interface {
	Len() int
	Rows(offset, n int) []live.Row
	Index(path string) (int, bool)
}

// rows is the pane's rows: the filter's while there is one.
func (m Model) rows() rowSource {
	if m.view != nil {
		return m.view
	}
	return m.tree
}

// filtered is the rows of a tree a filter leaves: the matching nodes and
// their ancestors, in the tree's order, whatever is collapsed, with the
// guide lines drawn as if the others were not there.
type filtered struct {
	rows  []live.Row
	index map[string]int
}

func (f *filtered) Len() int { return len(f.rows) }

func (f *filtered) Rows(offset, n int) []live.Row {
	offset = max(offset, 0)
	return f.rows[min(offset, len(f.rows)):min(offset+max(n, 0), len(f.rows))]
}

func (f *filtered) Index(path string) (int, bool) {
	i, ok := f.index[path]
	return i, ok
}

// Filtering reports whether the filter line takes the keys.
func (m Model) Filtering() bool { return m.filter.Editing }

// Filter is the filter the rows are narrowed by; empty when none.
func (m Model) Filter() string { return m.filter.Query }

// StartFilter opens the filter line, with the filter there is.
func (m *Model) StartFilter() { m.filter.Editing = true }

// SetFilter narrows the rows to those query matches and their ancestors;
// an empty query shows every row again and closes the filter line.
func (m *Model) SetFilter(query string) {
	m.filter.Query = query
	if query == "" {
		m.filter.Editing = false
	}
	m.Refilter()
}

// Refilter reads the filter's rows from the tree again, after events or
// another filter; the page calls it as events arrive. The selection stays
// on its node while that shows.
func (m *Model) Refilter() {
	if m.filter.Query == "" && m.view == nil {
		return
	}
	m.view = nil
	if m.filter.Query != "" && m.tree != nil {
		m.view = filterRows(m.tree, m.filter.Terms(), m.heldNow)
	}
	m.settle()
}

// filterRows is the rows of t whose nodes match every term, with their
// ancestors. One pass keeps the path down to the row on a stack; a match
// writes out the ancestors on it not written yet, then itself. A pass
// backwards then works out which kept rows have kept siblings after them,
// for the guide lines.
func filterRows(t *live.Tree, terms []string, heldNow func(path string) bool) *filtered {
	type ancestor struct {
		row     live.Row
		written bool
	}
	var stack []ancestor
	f := &filtered{index: map[string]int{}}
	write := func(r live.Row) {
		r.Collapsed, r.HasChildren = false, false
		if n := len(f.rows); n > 0 && f.rows[n-1].Depth < r.Depth {
			f.rows[n-1].HasChildren = true
		}
		f.index[r.Path] = len(f.rows)
		f.rows = append(f.rows, r)
	}
	t.Walk(func(r live.Row) bool {
		stack = append(stack[:min(r.Depth, len(stack))], ancestor{row: r})
		if matches(r, terms, heldNow) {
			for j := range stack {
				if !stack[j].written {
					stack[j].written = true
					write(stack[j].row)
				}
			}
		}
		return true
	})
	// later[d] says a kept row at depth d comes after, under the same
	// parent: the rows between are deeper.
	var later [64]bool
	for i := len(f.rows) - 1; i >= 0; i-- {
		d := min(f.rows[i].Depth, len(later)-1)
		if later[d] {
			f.rows[i].Rails = 1 << d
		} else {
			f.rows[i].Rails = 0
		}
		later[d] = true
		for e := d + 1; e < len(later); e++ {
			later[e] = false
		}
	}
	// A row's rails are its parent's plus its own.
	var rails [65]uint64
	for i := range f.rows {
		d := min(f.rows[i].Depth, len(later)-1)
		if d > 0 {
			f.rows[i].Rails |= rails[d-1] &^ (^uint64(0) << d)
		}
		rails[d] = f.rows[i].Rails
	}
	return f
}

// statusWords are the words a filter matches a row's status by, besides
// held, which matches a row held at a stop for some of its time, or the
// stop the run is held at now, and aborted, which matches a failed row the
// run was aborted at or under.
var statusWords = map[string]live.Status{
	"pending": live.Pending, "running": live.Running, "ok": live.OK,
	"failed": live.Failed, "skipped": live.Skipped, "exited": live.Exited,
}

// matches reports whether a row matches every term: a status word (or
// held) its status, any other word a part of its path or tool. heldNow
// says whether a thread of the run is held at a path now.
func matches(r live.Row, terms []string, heldNow func(path string) bool) bool {
	for _, term := range terms {
		if st, ok := statusWords[term]; ok {
			if r.Status != st {
				return false
			}
			continue
		}
		if term == "aborted" {
			if !r.Aborted {
				return false
			}
			continue
		}
		if term == "held" {
			if r.Held == 0 && !heldNow(r.Path) {
				return false
			}
			continue
		}
		if !common.ContainsFold(r.Path, term) && !common.ContainsFold(r.Tool, term) {
			return false
		}
	}
	return true
}

// Target is a kind of row the jump keys go to.
type Target int

// The rows the jump keys go to.
const (
	// NextFailed is the next failed row after the selection.
	NextFailed Target = iota
	// NextHeld is the next row held at a stop for some of its time, or
	// one a thread is held at now (not the rows above it, held through
	// it): from one held thread's row, the next thread's.
	NextHeld
	// Slowest is the slowest row with nothing under it, by its own time
	// (its wall time less what it was held), where the time went; from
	// there, the next slowest.
	Slowest
)

// Jump selects the next row of the target kind after the selected one,
// in the tree's order (for Slowest, in order of time), around the end to
// the start, opening collapsed rows to show it; the selection stops
// following. It reports false, selecting nothing, when there is none.
func (m *Model) Jump(to Target) bool {
	if m.tree == nil {
		return false
	}
	// The candidates, each with its place in the tree's order, and the
	// selection's place.
	type cand struct {
		live.Row
		at int
	}
	var cands []cand
	cur, _ := m.Selected()
	at, curAt := 0, -1
	m.tree.Walk(func(r live.Row) bool {
		if r.Path == cur.Path {
			curAt = at
		}
		switch {
		case to == NextFailed && r.Status == live.Failed,
			to == NextHeld && (r.Path == m.stop || r.HeldHere || m.heldNow(r.Path) || r.Held > 0 && !r.HeldNow),
			to == Slowest && !r.HasChildren && r.Duration-r.Held > 0:
			cands = append(cands, cand{r, at})
		}
		at++
		return true
	})
	if len(cands) == 0 {
		return false
	}
	var next int
	if to == Slowest {
		// From the row the last T went to, the next slowest; from any
		// other, the slowest.
		// By each row's own time: time held at a stop is nobody's.
		slices.SortStableFunc(cands, func(a, b cand) int { return cmp.Compare(b.Duration-b.Held, a.Duration-a.Held) })
		if i := slices.IndexFunc(cands, func(c cand) bool { return c.at == curAt }); i >= 0 && cur.Path == m.slowest {
			next = (i + 1) % len(cands)
		}
		m.slowest = cands[next].Path
	} else {
		next = max(slices.IndexFunc(cands, func(c cand) bool { return c.at > curAt }), 0)
	}
	if m.view != nil {
		if _, ok := m.view.Index(cands[next].Path); !ok {
			m.SetFilter("") // the filter hides it: show every row
		}
	}
	m.follow = false
	return m.SelectPath(cands[next].Path)
}
