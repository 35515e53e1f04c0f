package common_test

import (
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/stepwise-dev/stepwise/tui/common"
)

// newPane is a pane 7 lines high with a border and a header over its
// items (two lines above them, three in all that show none): four rows.
func newPane(n int) common.ListPane[string] {
	p := common.NewListPane[string](2, 3)
	items := make([]string, n)
	for i := range items {
		items[i] = string(rune('a' + i))
	}
	p.SetItems(items)
	p.SetListHeight(7)
	return p
}

func TestListPane(t *testing.T) {
	keys := common.DefaultKeyMap()
	key := func(code rune, text string) tea.KeyPressMsg { return tea.KeyPressMsg{Code: code, Text: text} }
	cases := []struct {
		name          string
		do            func(p *common.ListPane[string]) bool
		moved         bool
		cursor, first int
		selected      string
	}{
		{"down", func(p *common.ListPane[string]) bool { return p.Move(keys, key('j', "j")) }, true, 1, 0, "b"},
		{"up at the top stays", func(p *common.ListPane[string]) bool { return p.Move(keys, key(tea.KeyUp, "")) }, true, 0, 0, "a"},
		{"page down moves a window less a line", func(p *common.ListPane[string]) bool { return p.Move(keys, key(tea.KeyPgDown, "")) }, true, 3, 0, "d"},
		{"end scrolls the last item into view", func(p *common.ListPane[string]) bool { return p.Move(keys, key(tea.KeyEnd, "")) }, true, 9, 6, "j"},
		{"a key that does not move", func(p *common.ListPane[string]) bool { return p.Move(keys, key('x', "x")) }, false, 0, 0, "a"},
		{"click the third row", func(p *common.ListPane[string]) bool { p.ClickAt(4); return false }, false, 2, 0, "c"},
		{"click the header selects nothing", func(p *common.ListPane[string]) bool { p.ClickAt(1); return false }, false, 0, 0, "a"},
		{"click the bottom border selects nothing", func(p *common.ListPane[string]) bool { p.ClickAt(6); return false }, false, 0, 0, "a"},
		{"wheel down takes the cursor along", func(p *common.ListPane[string]) bool { p.Scroll(3); return false }, false, 3, 3, "d"},
		{"wheel past the end", func(p *common.ListPane[string]) bool { p.Scroll(50); return false }, false, 6, 6, "g"},
		{"select scrolls into view", func(p *common.ListPane[string]) bool { p.Select(8); return false }, false, 8, 5, "i"},
		{"select past the end is the last", func(p *common.ListPane[string]) bool { p.Select(99); return false }, false, 9, 6, "j"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := newPane(10)
			if moved := tc.do(&p); moved != tc.moved {
				t.Errorf("moved %v, want %v", moved, tc.moved)
			}
			first, end := p.Visible()
			if p.Cursor() != tc.cursor || first != tc.first || end != min(first+4, 10) {
				t.Errorf("cursor %d, rows %d to %d; want cursor %d from row %d", p.Cursor(), first, end, tc.cursor, tc.first)
			}
			if got, ok := p.Selected(); !ok || got != tc.selected {
				t.Errorf("selected %q %v, want %q", got, ok, tc.selected)
			}
		})
	}
}

func TestListPaneItemsAndHeight(t *testing.T) {
	p := newPane(10)
	if !p.Overflows() {
		t.Error("ten items in four rows do not overflow")
	}
	p.Select(9)
	// A taller pane shows every item; the cursor stays where it was.
	p.SetListHeight(13)
	if first, end := p.Visible(); first != 0 || end != 10 || p.Cursor() != 9 || p.Overflows() {
		t.Errorf("rows %d to %d, cursor %d, overflows %v after growing", first, end, p.Cursor(), p.Overflows())
	}
	// Fewer items clamp the cursor to the last.
	p.SetItems([]string{"x", "y"})
	if got, _ := p.Selected(); p.Cursor() != 1 || got != "y" || p.Len() != 2 {
		t.Errorf("cursor %d on %q of %d items", p.Cursor(), got, p.Len())
	}
	p.SetItems(nil)
	if _, ok := p.Selected(); ok || p.Cursor() != 0 || p.Len() != 0 {
		t.Errorf("an empty list selects something: cursor %d", p.Cursor())
	}
	// A pane too short for any row clicks and scrolls nothing.
	p = newPane(3)
	p.SetListHeight(2)
	p.ClickAt(2)
	p.Scroll(1)
	if first, end := p.Visible(); p.Cursor() != 0 || end != first {
		t.Errorf("a pane with no rows: cursor %d, rows %d to %d", p.Cursor(), first, end)
	}
}
