package tree

import (
	"github.com/stepwise-dev/stepwise/tui/common"
)

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
	m.refilter()
}

// refilter works out the rows the filter leaves, after another filter or
// another document. The selection stays on its row while that shows, and
// goes to the first row shown when not.
func (m *Model) refilter() {
	d := &m.d
	d.shown = nil
	if terms := m.filter.Terms(); len(terms) > 0 {
		d.shown = filterRows(d.rows, terms)
		if _, ok := d.lineOf(d.cursor); !ok && len(d.shown) > 0 {
			d.cursor = d.shown[0]
		}
	} else if len(d.folded) > 0 {
		d.shown = unfoldedRows(d.rows, d.folded)
		// A row folded away leaves the selection on the fold.
		for _, ok := d.lineOf(d.cursor); !ok; _, ok = d.lineOf(d.cursor) {
			d.cursor = parentRow(d.rows, d.cursor)
		}
	}
	m.follow()
}

// unfoldedRows is the indices of the rows no folded row hides: every row
// but those under a folded one.
func unfoldedRows(rows []Row, folded map[string]bool) []int {
	shown := []int{}
	hiddenBelow := -1 // the depth of the folded row being skipped
	for i, r := range rows {
		if hiddenBelow >= 0 && r.depth > hiddenBelow {
			continue
		}
		hiddenBelow = -1
		shown = append(shown, i)
		if r.folds && r.Kind != KindPlan && folded[r.Path] {
			hiddenBelow = r.depth
		}
	}
	return shown
}

// filterRows is the indices of the rows that match every term, with
// their ancestors, in the tree's order. One pass keeps the rows down to
// the current one on a stack; a match writes out the ancestors on it not
// written yet, then itself.
func filterRows(rows []Row, terms []string) []int {
	type ancestor struct {
		index   int
		written bool
	}
	var stack []ancestor
	shown := []int{}
	for i, r := range rows {
		stack = append(stack[:min(r.depth, len(stack))], ancestor{index: i})
		if !matches(r, terms) {
			continue
		}
		for j := range stack {
			if !stack[j].written {
				stack[j].written = true
				shown = append(shown, stack[j].index)
			}
		}
	}
	return shown
}

// matches reports whether every term is a part of the row's path, its
// step's id or its tool.
func matches(r Row, terms []string) bool {
	for _, term := range terms {
		switch {
		case common.ContainsFold(r.Path, term):
		case r.Step != nil && (common.ContainsFold(r.Step.ID.Value, term) || common.ContainsFold(r.Step.ToolName.Value, term)):
		default:
			return false
		}
	}
	return true
}

// count is how many rows the pane shows: those the filter leaves, or all.
func (d document) count() int {
	if d.shown != nil {
		return len(d.shown)
	}
	return len(d.rows)
}

// rowAt is the index in the tree of the row shown at line i.
func (d document) rowAt(i int) int {
	if d.shown != nil {
		return d.shown[i]
	}
	return i
}

// lineOf is the line row i shows at, and whether it shows.
func (d document) lineOf(i int) (int, bool) {
	if d.shown == nil {
		return i, true
	}
	for line, r := range d.shown {
		if r == i {
			return line, true
		}
	}
	return 0, false
}
