// Package palette is the command palette: every key of the workbench with
// what it does, and every command of the command language with its
// usage, in one list filtered as one types. Enter does the one chosen: a
// key's entry does exactly what pressing the key does, a command's runs
// it, or opens the : line with its verb typed when it needs arguments.
// Nothing to remember.
package palette

import (
	"slices"
	"strings"
	"unicode/utf8"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/tui/common"
)

// Item is an entry of the palette: a key, or a command.
type Item struct {
	// Key is the key's name as the help shows it, for a command the key
	// that does the same; "" for a command no key does.
	Key string
	// Name is what the entry is called: a key's help, or a command's
	// usage after its colon (":break PATTERN [KIND...]").
	Name string
	// Does says what a command does; "" for a key, whose Name says it.
	Does string

	// Press is the key press that an entry of a key stands for.
	Press tea.KeyPressMsg
	// Verb is the command an entry of a command stands for; Args says
	// whether it needs arguments, which the : line then asks for.
	Verb debugger.Verb
	Args bool

	text string // what the filter reads, lower case
}

// Chosen is the entry the user chose, for the root to carry out once the
// palette is closed.
type Chosen struct{ Item Item }

// Model is the palette overlay.
type Model struct {
	common.Common
	all    []Item
	shown  []Item
	list   common.List
	filter textinput.Model
}

// New returns a palette over every key of c's keymap outside the
// overlays that take their own (forms, editors, the approval prompt), and
// every command of debugger.Grammar.
func New(c common.Common) Model {
	in := textinput.New()
	in.Prompt = "> "
	in.Placeholder = "type to filter keys and commands"
	in.KeyMap.AcceptSuggestion = key.NewBinding()
	in.KeyMap.NextSuggestion = key.NewBinding()
	in.KeyMap.PrevSuggestion = key.NewBinding()
	m := Model{Common: c, filter: in, all: Items(c.Keys)}
	m.filter.SetStyles(m.Theme.InputStyles())
	return m
}

// Items are the entries of the palette: the keys, then the commands.
func Items(k *common.KeyMap) []Item {
	var out []Item
	// The keys that act inside an overlay only, and the palette's own.
	inOverlay := []key.Binding{k.Submit, k.Close, k.AddStep, k.Approve, k.Deny, k.EditArgs, k.Palette}
	for _, g := range k.Groups() {
		for _, b := range g.Bindings {
			if !b.Enabled() || slices.ContainsFunc(inOverlay, func(o key.Binding) bool { return slices.Equal(o.Keys(), b.Keys()) }) {
				continue
			}
			out = append(out, Item{Key: b.Help().Key, Name: b.Help().Desc, Press: Press(b.Keys()[0])})
		}
	}
	rows := k.Table()
	for i, syn := range debugger.Grammar() {
		out = append(out, Item{
			Key:  rows[i].Key,
			Name: ":" + syn.Usage(),
			Does: syn.Does,
			Verb: syn.Verb,
			// Arguments in brackets may be left out.
			Args: syn.Args != "" && !strings.HasPrefix(syn.Args, "["),
		})
	}
	for i := range out {
		out[i].text = strings.ToLower(out[i].Name + " " + out[i].Does + " " + out[i].Key)
	}
	return out
}

// namedKeys are the keys the keymap names by a word.
var namedKeys = map[string]rune{
	"up": tea.KeyUp, "down": tea.KeyDown, "left": tea.KeyLeft, "right": tea.KeyRight,
	"home": tea.KeyHome, "end": tea.KeyEnd, "pgup": tea.KeyPgUp, "pgdown": tea.KeyPgDown,
	"enter": tea.KeyEnter, "tab": tea.KeyTab, "esc": tea.KeyEscape, "space": tea.KeySpace,
}

// Press is the key press a key name of the keymap stands for ("G",
// "ctrl+u", "shift+tab", "pgdown"), as the terminal sends it.
func Press(name string) tea.KeyPressMsg {
	var msg tea.KeyPressMsg
	for {
		switch {
		case strings.HasPrefix(name, "ctrl+") && len(name) > len("ctrl+"):
			msg.Mod |= tea.ModCtrl
			name = strings.TrimPrefix(name, "ctrl+")
			continue
		case strings.HasPrefix(name, "shift+") && len(name) > len("shift+"):
			msg.Mod |= tea.ModShift
			name = strings.TrimPrefix(name, "shift+")
			continue
		}
		break
	}
	if code, ok := namedKeys[name]; ok {
		msg.Code = code
		if code == tea.KeySpace {
			msg.Text = " "
		}
		return msg
	}
	r := []rune(name)[0]
	msg.Code = r
	if msg.Mod == 0 {
		msg.Text = string(r)
	}
	return msg
}

// Open shows every entry, the filter empty and the first entry chosen.
func (m *Model) Open() tea.Cmd {
	m.filter.SetValue("")
	m.refilter()
	return m.filter.Focus()
}

// SetSize sets the overlay's size, border included.
func (m *Model) SetSize(width, height int) {
	m.Common.SetSize(width, height)
	// The border, the space before the prompt, and the cursor's cell.
	m.filter.SetWidth(max(width-4-common.TextWidth(m.filter.Prompt), 1))
	m.follow()
}

// Filter returns the text the entries are filtered by.
func (m Model) Filter() string { return m.filter.Value() }

// Items returns every entry.
func (m Model) Items() []Item { return m.all }

// Shown returns the entries the filter lets through, best first.
func (m Model) Shown() []Item { return m.shown }

// Selected returns the chosen entry, if the filter lets any through.
func (m Model) Selected() (Item, bool) {
	if len(m.shown) == 0 {
		return Item{}, false
	}
	return m.shown[m.list.Cursor], true
}

// rows is how many entries fit: the border, the filter and the line under
// it take four lines.
func (m Model) rows() int { return max(m.Height-4, 0) }

func (m *Model) follow() { m.list.Follow(m.rows(), len(m.shown)) }

// Update: text typed filters; the arrows, page keys, ctrl+n and ctrl+p
// move; enter chooses; esc closes. A click outside closes, the wheel
// scrolls.
func (m *Model) Update(msg tea.Msg) (common.Component, tea.Cmd) {
	keys := m.Keys
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		switch {
		case key.Matches(msg, keys.Close):
			return m, common.Close(m)
		case key.Matches(msg, keys.Jump):
			if it, ok := m.Selected(); ok {
				return m, common.CloseWith(m, Chosen{it})
			}
			return m, nil
		case key.Matches(msg, keys.NextHit):
			m.list.Select(m.list.Cursor+1, m.rows(), len(m.shown))
			return m, nil
		case key.Matches(msg, keys.PrevHit):
			m.list.Select(m.list.Cursor-1, m.rows(), len(m.shown))
			return m, nil
		case msg.Text == "":
			// Keys that type nothing move; text goes to the filter.
			if m.list.Move(keys, msg, m.rows(), len(m.shown)) {
				return m, nil
			}
		}
	case tea.MouseClickMsg:
		if !common.Inside(msg.Mouse(), m.Width, m.Height) {
			return m, common.Close(m)
		}
		m.list.ClickAt(msg.Y-3, m.rows(), len(m.shown))
		return m, nil
	case tea.MouseWheelMsg:
		m.list.ScrollBy(common.WheelDelta(msg), m.rows(), len(m.shown))
		return m, nil
	}
	before := m.filter.Value()
	var cmd tea.Cmd
	m.filter, cmd = m.filter.Update(msg)
	if m.filter.Value() != before {
		m.refilter()
	}
	return m, cmd
}

// refilter lists the entries that match the filter, best first, and
// chooses the first.
func (m *Model) refilter() {
	m.shown = Filter(m.all, m.filter.Value())
	m.list.Select(0, m.rows(), len(m.shown))
}

// Filter returns the items that match query, best first: those whose
// name starts with it, then those whose name holds it, or each of its
// words; then those whose description or key does; then those that hold
// the letters of each word in order ("brkpnl" finds the breakpoints
// panel), the tighter the better. Case is ignored.
func Filter(items []Item, query string) []Item {
	q := strings.ToLower(strings.TrimSpace(query))
	if q == "" {
		return items
	}
	words := strings.Fields(q)
	type scored struct {
		item  Item
		score int
	}
	var hits []scored
	for _, it := range items {
		if score, ok := match(it, q, words); ok {
			hits = append(hits, scored{it, score})
		}
	}
	slices.SortStableFunc(hits, func(a, b scored) int { return a.score - b.score })
	out := make([]Item, len(hits))
	for i, h := range hits {
		out[i] = h.item
	}
	return out
}

// match scores how well an item matches query q (its words, words): the
// lower the better; ok is false when it does not.
func match(it Item, q string, words []string) (score int, ok bool) {
	const tier = 1 << 16
	name := strings.TrimPrefix(strings.ToLower(it.Name), ":")
	all := func(s string) bool {
		for _, w := range words {
			if !strings.Contains(s, w) {
				return false
			}
		}
		return true
	}
	switch {
	case strings.HasPrefix(name, q):
		return 0, true
	case strings.Contains(name, q):
		return tier + strings.Index(name, q), true
	case all(name):
		return 2 * tier, true
	case strings.Contains(it.text, q), all(it.text):
		return 3 * tier, true
	}
	span := 0
	for _, w := range words {
		n, ok := subsequence(it.text, w)
		if !ok {
			return 0, false
		}
		span += n
	}
	return 4*tier + span, true
}

// subsequence reports whether the runes of w appear in s in order, and
// over how many bytes of s the tightest such run from any start spans.
func subsequence(s, w string) (span int, ok bool) {
	first, _ := utf8.DecodeRuneInString(w)
	best := -1
	for start := strings.IndexRune(s, first); start >= 0; {
		end, rest := start, s[start:]
		found := true
		for _, r := range w {
			i := strings.IndexRune(rest, r)
			if i < 0 {
				found = false
				break
			}
			end += i + utf8.RuneLen(r)
			rest = rest[i+utf8.RuneLen(r):]
		}
		if !found {
			break
		}
		if n := end - start; best < 0 || n < best {
			best = n
		}
		next := strings.IndexRune(s[start+1:], first)
		if next < 0 {
			break
		}
		start += 1 + next
	}
	return best, best >= 0
}

// ShortHelp is the palette's keys: it takes every key.
func (m *Model) ShortHelp() []key.Binding {
	k := m.Keys
	return []key.Binding{
		key.NewBinding(key.WithHelp("type", "filter")),
		key.NewBinding(key.WithHelp("↑/↓", "choose")),
		key.NewBinding(key.WithHelp(k.Jump.Help().Key, "do it")),
		key.NewBinding(key.WithHelp(k.Close.Help().Key, "close")),
	}
}

// View draws the palette at exactly its size: the filter, then the
// entries, each with its key on the left and, for a command, what it
// does after its usage.
func (m Model) View() string {
	t := m.Theme
	inner := max(m.Width-2, 0)
	lines := []string{" " + m.filter.View(), ""}
	if len(m.shown) == 0 {
		lines = append(lines, t.Muted.Render(" nothing matches; esc closes, backspace widens the filter"))
	}
	keyW := 0
	for _, it := range m.all {
		keyW = max(keyW, common.TextWidth(it.Key))
	}
	first, end := m.list.Visible(m.rows(), len(m.shown))
	for i := first; i < end; i++ {
		it := m.shown[i]
		sel := i == m.list.Cursor
		base := t.RowStyle(sel, true)
		l := common.NewLine(inner)
		gutter := " "
		if sel {
			gutter = "▸"
		}
		l.Add(gutter, common.PaintOf(base))
		l.Add(common.Fit(it.Key, keyW)+"  ", common.PaintOf(t.Key.Inherit(base)))
		l.Add(it.Name, common.PaintOf(t.Strong.Inherit(base)))
		if it.Does != "" {
			l.Add("  "+it.Does, common.PaintOf(t.Muted.Inherit(base)))
		}
		l.PadTo(inner, common.PaintOf(base))
		lines = append(lines, l.String())
	}
	footer := ""
	if len(m.shown) > m.rows() {
		footer = common.Position(m.list.Cursor, len(m.shown))
	}
	return common.Frame(t, m.Width, m.Height, t.PaneTitle("Palette", true), footer, true, lines)
}
