package common

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// KeyMap is every key the workbench answers to. Components match against it
// rather than against literal strings, so one place says what each key does
// and the help overlay lists exactly what the code handles.
type KeyMap struct {
	Up       key.Binding
	Down     key.Binding
	Top      key.Binding
	Bottom   key.Binding
	PageUp   key.Binding
	PageDown key.Binding

	NextPane key.Binding
	PrevPane key.Binding
	Jump     key.Binding
	NextPlan key.Binding
	PrevPlan key.Binding

	Help  key.Binding
	Close key.Binding
	Quit  key.Binding
}

// DefaultKeyMap returns the workbench keys.
func DefaultKeyMap() *KeyMap {
	return &KeyMap{
		Up:       key.NewBinding(key.WithKeys("k", "up"), key.WithHelp("↑/k", "move up")),
		Down:     key.NewBinding(key.WithKeys("j", "down"), key.WithHelp("↓/j", "move down")),
		Top:      key.NewBinding(key.WithKeys("g", "home"), key.WithHelp("g/home", "jump to the top")),
		Bottom:   key.NewBinding(key.WithKeys("G", "end"), key.WithHelp("G/end", "jump to the bottom")),
		PageUp:   key.NewBinding(key.WithKeys("pgup", "ctrl+u"), key.WithHelp("pgup", "page up")),
		PageDown: key.NewBinding(key.WithKeys("pgdown", "ctrl+d"), key.WithHelp("pgdn", "page down")),

		NextPane: key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next pane")),
		PrevPane: key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "previous pane")),
		Jump:     key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "go to a problem's step")),
		NextPlan: key.NewBinding(key.WithKeys("]"), key.WithHelp("]", "next plan")),
		PrevPlan: key.NewBinding(key.WithKeys("["), key.WithHelp("[", "previous plan")),

		Help:  key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "toggle help")),
		Close: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "close help")),
		Quit:  key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
	}
}

// ShortHelp is the footer line: the keys a newcomer needs first, with
// help text short enough for an 80-column terminal.
func (k KeyMap) ShortHelp() []key.Binding {
	short := func(b key.Binding, keys, desc string) key.Binding {
		b.SetHelp(keys, desc)
		return b
	}
	return []key.Binding{
		short(k.Down, "j/k", "move"),
		short(k.NextPane, "tab", "pane"),
		short(k.Jump, "enter", "jump to step"),
		short(k.NextPlan, "[/]", "plan"),
		short(k.Help, "?", "help"),
		short(k.Quit, "q", "quit"),
	}
}

// KeyGroup is a titled group of bindings in the help overlay.
type KeyGroup struct {
	Title    string
	Bindings []key.Binding
}

// Groups lists every binding, grouped the way the help overlay shows them.
func (k KeyMap) Groups() []KeyGroup {
	return []KeyGroup{
		{"Move", []key.Binding{k.Up, k.Down, k.Top, k.Bottom, k.PageUp, k.PageDown}},
		{"Panes and plans", []key.Binding{k.NextPane, k.PrevPane, k.Jump, k.NextPlan, k.PrevPlan}},
		{"Workbench", []key.Binding{k.Help, k.Close, k.Quit}},
	}
}

// FullHelp satisfies bubbles' help.KeyMap: every binding, by group.
func (k KeyMap) FullHelp() [][]key.Binding {
	var out [][]key.Binding
	for _, g := range k.Groups() {
		out = append(out, g.Bindings)
	}
	return out
}

// Movement is how far a movement key moves a cursor or a scroll position
// through total lines, a page being page lines: -1 or 1 for up and down,
// a page for page up and down, all the way for top and bottom. ok is false
// for any other key. Every list and scrolling pane moves by it, so they all
// answer the same keys the same way.
func (k *KeyMap) Movement(msg tea.KeyPressMsg, page, total int) (delta int, ok bool) {
	switch {
	case key.Matches(msg, k.Up):
		return -1, true
	case key.Matches(msg, k.Down):
		return 1, true
	case key.Matches(msg, k.Top):
		return -total, true
	case key.Matches(msg, k.Bottom):
		return total, true
	case key.Matches(msg, k.PageUp):
		return -page, true
	case key.Matches(msg, k.PageDown):
		return page, true
	}
	return 0, false
}
