package common

import (
	"strings"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
)

// FilterLine is the line a tree pane is filtered by, typed after /: both
// trees answer the same keys with it and show it the same way in their
// title.
type FilterLine struct {
	// Query is the filter; empty when none.
	Query string
	// Editing says the line takes the keys.
	Editing bool
}

// Edit takes a key typed on the line: text narrows as it is typed,
// backspace takes a character back, enter keeps the filter and gives the
// keys back to the tree, esc drops it. It reports whether the query
// changed.
func (f *FilterLine) Edit(kp tea.KeyPressMsg) bool {
	switch kp.String() {
	case "enter":
		f.Editing = false
	case "esc":
		f.Editing = false
		if f.Query != "" {
			f.Query = ""
			return true
		}
	case "backspace":
		if f.Query != "" {
			_, n := utf8.DecodeLastRuneInString(f.Query)
			f.Query = f.Query[:len(f.Query)-n]
			return true
		}
	default:
		if kp.Text != "" {
			f.Query += kp.Text
			return true
		}
	}
	return false
}

// Terms is the query's words, lowered: a row matches when it matches
// every one.
func (f FilterLine) Terms() []string { return strings.Fields(strings.ToLower(f.Query)) }

// Title is the filter as a pane's title shows it after its name, with a
// cursor while it is typed; "" when there is none.
func (f FilterLine) Title(t *Theme) string {
	if !f.Editing && f.Query == "" {
		return ""
	}
	s := "/" + f.Query
	if f.Editing {
		s += "▏"
	}
	return " " + t.Key.Render(s)
}

// ContainsFold reports whether s holds term, whatever the case: a filter
// reads every row of a tree on every batch, and lowering each one first
// would cost an allocation a row.
func ContainsFold(s, term string) bool {
	for i := 0; i+len(term) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(term)], term) {
			return true
		}
	}
	return false
}
