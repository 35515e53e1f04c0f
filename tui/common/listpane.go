package common

import tea "charm.land/bubbletea/v2"

// ListPane is the list of a pane that shows items one a line under a few
// lines of its own (its border, a header): the items, the selection and
// the window in view. The problems list, the runs panel and the
// breakpoints panel embed one, so that they select, click, scroll and
// follow alike and each only draws its lines; its methods are theirs.
type ListPane[T any] struct {
	items []T
	list  List
	// above is how many lines of the pane stand above the first item, its
	// border included; chrome is how many of its lines show no item.
	above, chrome int
	// height is the pane's outer height.
	height int
}

// NewListPane returns an empty list for a pane with above lines over its
// items, chrome lines in all that show none.
func NewListPane[T any](above, chrome int) ListPane[T] {
	return ListPane[T]{above: above, chrome: chrome}
}

// SetItems shows items, the cursor on the same index, clamped.
func (p *ListPane[T]) SetItems(items []T) {
	p.items = items
	p.Select(p.list.Cursor)
}

// SetListHeight takes the pane's outer height, and scrolls the cursor back
// into view.
func (p *ListPane[T]) SetListHeight(height int) {
	p.height = height
	p.list.Follow(p.rows(), len(p.items))
}

// Items returns the items listed.
func (p ListPane[T]) Items() []T { return p.items }

// Len returns how many items there are.
func (p ListPane[T]) Len() int { return len(p.items) }

// Cursor returns the index of the selected item.
func (p ListPane[T]) Cursor() int { return p.list.Cursor }

// Selected returns the selected item, if there is any.
func (p ListPane[T]) Selected() (T, bool) {
	if len(p.items) == 0 {
		var none T
		return none, false
	}
	return p.items[p.list.Cursor], true
}

// Select moves the selection to item i, clamped, and scrolls it into view.
func (p *ListPane[T]) Select(i int) { p.list.Select(i, p.rows(), len(p.items)) }

// ClickAt selects the item drawn at line y of the pane (0 is its border).
func (p *ListPane[T]) ClickAt(y int) { p.list.ClickAt(y-p.above, p.rows(), len(p.items)) }

// Scroll moves the view by delta lines (the mouse wheel), taking the
// selection along so it stays in view.
func (p *ListPane[T]) Scroll(delta int) { p.list.ScrollBy(delta, p.rows(), len(p.items)) }

// Move moves the selection as the movement key msg asks and reports
// whether msg was a movement key.
func (p *ListPane[T]) Move(keys *KeyMap, msg tea.KeyPressMsg) bool {
	return p.list.Move(keys, msg, p.rows(), len(p.items))
}

// Visible returns the items in view, from first up to but not including
// end.
func (p ListPane[T]) Visible() (first, end int) { return p.list.Visible(p.rows(), len(p.items)) }

// Overflows reports whether there are more items than fit, when a pane
// says where in the list the cursor is.
func (p ListPane[T]) Overflows() bool { return len(p.items) > p.rows() }

// rows is how many items fit.
func (p ListPane[T]) rows() int { return max(p.height-p.chrome, 0) }

// PanelMouse takes the mouse for a list shown as an overlay panel of width
// by height: a click outside the panel closes it (overlay is the panel), a
// click inside selects the row under it, and the wheel scrolls.
func (p *ListPane[T]) PanelMouse(msg tea.Msg, overlay Component, width, height int) tea.Cmd {
	switch msg := msg.(type) {
	case tea.MouseClickMsg:
		if !Inside(msg.Mouse(), width, height) {
			return Close(overlay)
		}
		p.ClickAt(msg.Y)
	case tea.MouseWheelMsg:
		p.Scroll(WheelDelta(msg))
	}
	return nil
}
