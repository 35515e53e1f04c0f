package common

import tea "charm.land/bubbletea/v2"

// List is the selection of a list pane: the selected line and the window
// of lines in view. The pane keeps the lines; every method takes how many
// there are (total) and how many the window shows (height), so a List never
// holds a stale count or size. Every pane that lists things one a line
// moves by it, so they all select, click, scroll and follow alike.
type List struct {
	Cursor int
	Scroll Scroll
}

// Select moves the cursor to line i, clamped, and scrolls it into view.
// With no lines the cursor and the window go back to the top.
func (l *List) Select(i, height, total int) {
	if total == 0 {
		*l = List{}
		return
	}
	l.Cursor = min(max(i, 0), total-1)
	l.Follow(height, total)
}

// Follow scrolls the window, as little as it can, so that the cursor is in
// view: after the window's height or the lines have changed.
func (l *List) Follow(height, total int) {
	l.Scroll = l.Scroll.Follow(l.Cursor, height, total)
}

// ClickAt selects the line drawn at row of the window (0 is its first
// line); a row outside the window or past the last line selects nothing.
func (l *List) ClickAt(row, height, total int) {
	if row < 0 || row >= height {
		return
	}
	if i := l.Scroll.Offset + row; i < total {
		l.Select(i, height, total)
	}
}

// ScrollBy moves the window by delta lines, taking the cursor along so it
// stays in view.
func (l *List) ScrollBy(delta, height, total int) {
	l.Scroll.Offset += delta
	l.Scroll = l.Scroll.Clamp(height, total)
	if height > 0 && total > 0 {
		l.Cursor = min(max(l.Cursor, l.Scroll.Offset), l.Scroll.Offset+height-1, total-1)
	}
}

// Move moves the cursor as the movement key msg asks (a page being the
// window less a line) and reports whether msg was a movement key.
func (l *List) Move(keys *KeyMap, msg tea.KeyPressMsg, height, total int) bool {
	delta, ok := keys.Movement(msg, max(height-1, 1), total)
	if ok {
		l.Select(l.Cursor+delta, height, total)
	}
	return ok
}

// Visible returns the lines in view, from first up to but not including
// end.
func (l List) Visible(height, total int) (first, end int) {
	return l.Scroll.Offset, min(l.Scroll.Offset+height, total)
}
