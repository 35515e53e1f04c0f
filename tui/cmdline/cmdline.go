// Package cmdline is the workbench's : command line: one line at the bottom
// of the screen where the debugger's command language is typed, the
// language the line driver (stepwise debug) reads too. Enter parses the
// line; a line that parses goes to the root as Submitted, one that does
// not stays open with the error beside it (a : typed on it starts a fresh
// line, the refused one kept in the history). The line keeps a history, and
// tab completes command names and the step paths the root supplies.
package cmdline

import (
	"errors"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/tui/common"
)

// Submitted is a line that parsed, for the root to carry out.
type Submitted struct {
	Instruction debugger.Instruction
}

// Refused is a line that did not parse, for the root to say why; the line
// stays open with it.
type Refused struct {
	Err error
}

// prompt opens the line, as in vi.
const prompt = ":"

// historySize is how many lines the history keeps.
const historySize = 100

// Model is the command line.
type Model struct {
	common.Common
	input  textinput.Model
	active bool
	err    error

	history []string // oldest first
	at      int      // the history line shown; len(history) is the draft
	draft   string   // the line being typed before walking the history

	paths   []string // the step paths tab completes
	matches []string // the candidates the last tab left open
}

// New returns a closed command line.
func New(c common.Common) Model {
	in := textinput.New()
	in.Prompt = prompt
	// The line's own keys (enter, tab, up and down) are the command
	// line's; the field keeps its editing keys.
	in.KeyMap.AcceptSuggestion = key.NewBinding()
	in.KeyMap.NextSuggestion = key.NewBinding()
	in.KeyMap.PrevSuggestion = key.NewBinding()
	return Model{Common: c, input: in}
}

// Open focuses an empty line.
func (m *Model) Open() tea.Cmd {
	return m.OpenWith("")
}

// OpenWith focuses a line holding text, the cursor at its end: a key that
// starts a command ("new ") opens the line with the verb typed.
func (m *Model) OpenWith(text string) tea.Cmd {
	m.active, m.err, m.matches = true, nil, nil
	m.at, m.draft = len(m.history), ""
	m.input.SetValue(text)
	m.input.CursorEnd()
	cmd := m.input.Focus()
	m.layout()
	return cmd
}

// Close closes the line, dropping what was typed.
func (m *Model) Close() {
	m.active, m.err, m.matches = false, nil, nil
	m.input.Reset()
	m.input.Blur()
}

// Active reports whether the line is open.
func (m Model) Active() bool { return m.active }

// Value returns the text typed.
func (m Model) Value() string { return m.input.Value() }

// Err returns the error of the last line that did not parse, shown until
// the line is edited.
func (m Model) Err() error { return m.err }

// History returns the lines submitted, oldest first.
func (m Model) History() []string { return slices.Clone(m.history) }

// SetCompletions sets the step paths tab completes, in the order they are
// offered; duplicates are dropped.
func (m *Model) SetCompletions(paths []string) {
	m.paths = nil
	seen := map[string]bool{}
	for _, p := range paths {
		if !seen[p] {
			seen[p] = true
			m.paths = append(m.paths, p)
		}
	}
}

// SetSize sets the width of the line; it is one line high whatever the
// height says.
func (m *Model) SetSize(width, height int) {
	m.Common.SetSize(width, height)
	m.layout()
}

// Update handles a key or a paste while the line is open. Keys that type
// text always type it, so that j, k and space reach the line; of the
// others, Jump (enter) submits, Close (esc) closes, Up and Down walk the
// history and NextPane (tab) completes.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	if !m.active {
		return m, nil
	}
	if k, ok := msg.(tea.KeyPressMsg); ok && k.Text == "" {
		keys := m.Keys
		switch {
		case key.Matches(k, keys.Close):
			m.Close()
			return m, nil
		case key.Matches(k, keys.Jump):
			return m.submit()
		case key.Matches(k, keys.Up):
			m.walk(-1)
			return m, nil
		case key.Matches(k, keys.Down):
			m.walk(1)
			return m, nil
		case key.Matches(k, keys.NextPane):
			m.complete()
			m.layout()
			return m, nil
		case key.Matches(k, keys.CopyPath):
			return m, tea.SetClipboard(m.input.Value())
		}
	}
	if k, ok := msg.(tea.KeyPressMsg); ok && k.Text == prompt && m.err != nil {
		// A : on a refused line, untouched since, starts the next
		// command, as it would on a closed line: typed on, it would join
		// the two. The refused line goes to the history, where up finds
		// it to fix.
		m.remember(strings.TrimSpace(m.input.Value()))
		m.OpenWith("")
		return m, nil
	}
	before := m.input.Value()
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	if m.input.Value() != before {
		// The error and the candidates were about the old text.
		m.err, m.matches = nil, nil
	}
	m.layout()
	return m, cmd
}

// submit parses the line: one that parses closes the line and goes to the
// root; one that does not stays, with its error.
func (m Model) submit() (Model, tea.Cmd) {
	line := strings.TrimSpace(m.input.Value())
	in, err := debugger.ParseCommand(line)
	if errors.Is(err, debugger.ErrEmptyLine) {
		m.Close()
		return m, nil
	}
	if err != nil {
		// The line stays as typed, verb included, the cursor at its end;
		// the root says the error whole on the status line, which the
		// line's own aside may have too little room for.
		m.err, m.matches = err, nil
		m.input.CursorEnd()
		m.layout()
		return m, func() tea.Msg { return Refused{Err: err} }
	}
	m.remember(line)
	m.Close()
	return m, func() tea.Msg { return Submitted{Instruction: in} }
}

// remember adds line to the history, once if typed twice in a row.
func (m *Model) remember(line string) {
	if n := len(m.history); n == 0 || m.history[n-1] != line {
		m.history = append(m.history, line)
		if len(m.history) > historySize {
			m.history = slices.Delete(m.history, 0, len(m.history)-historySize)
		}
	}
}

// walk moves through the history: back (-1) to older lines, forward (1)
// to newer ones and at last to the line that was being typed.
func (m *Model) walk(delta int) {
	at := min(max(m.at+delta, 0), len(m.history))
	if at == m.at {
		return
	}
	if m.at == len(m.history) {
		m.draft = m.input.Value()
	}
	m.at = at
	text := m.draft
	if at < len(m.history) {
		text = m.history[at]
	}
	m.input.SetValue(text)
	m.input.CursorEnd()
	m.err, m.matches = nil, nil
	m.layout()
}

// complete completes the word the cursor is in: to the one candidate
// that fits, followed by a space, or as far as all that fit agree, leaving
// them on show.
func (m *Model) complete() {
	runes := []rune(m.input.Value())
	pos := m.input.Position()
	start, end := pos, pos
	for start > 0 && !unicode.IsSpace(runes[start-1]) {
		start--
	}
	for end < len(runes) && !unicode.IsSpace(runes[end]) {
		end++
	}
	word := string(runes[start:end])
	var matches []string
	for _, c := range m.candidates(strings.Fields(string(runes[:start]))) {
		if strings.HasPrefix(c, word) && !slices.Contains(matches, c) {
			matches = append(matches, c)
		}
	}
	m.matches = nil
	switch len(matches) {
	case 0:
		return
	case 1:
		word = matches[0]
		// A path may go on deeper (pick, then /agent.2): no space after
		// it; after anything else the next word comes.
		if end == len(runes) && !slices.Contains(m.paths, word) {
			word += " "
		}
	default:
		word = commonPrefix(matches)
		m.matches = matches
	}
	head := string(runes[:start]) + word
	m.input.SetValue(head + string(runes[end:]))
	m.input.SetCursor(len([]rune(head)))
}

// candidates are the words that may come after the words typed so far:
// a command name first, then what that command takes.
func (m *Model) candidates(typed []string) []string {
	if len(typed) == 0 {
		return verbs()
	}
	switch verbOf(typed[0]) {
	case debugger.VerbBreak:
		if len(typed) == 1 {
			return m.paths
		}
		if slices.Contains(typed, "if") {
			return nil
		}
		var kinds []string
		for _, k := range debugger.StopKinds {
			kinds = append(kinds, string(k))
		}
		return append(kinds, "if")
	case debugger.VerbGoto, debugger.VerbFork:
		if len(typed) == 1 {
			return m.paths
		}
	case debugger.VerbErrors:
		if len(typed) == 1 {
			return []string{"on", "off"}
		}
	case debugger.VerbHelp:
		if len(typed) == 1 {
			return verbs()
		}
	}
	return nil
}

func verbs() []string {
	var out []string
	for _, s := range debugger.Grammar() {
		out = append(out, string(s.Verb))
	}
	return out
}

// verbOf finds the verb a word names, short forms included.
func verbOf(word string) debugger.Verb {
	for _, s := range debugger.Grammar() {
		if string(s.Verb) == word || slices.Contains(s.Aliases, word) {
			return s.Verb
		}
	}
	return ""
}

func commonPrefix(words []string) string {
	p := words[0]
	for _, w := range words[1:] {
		for !strings.HasPrefix(w, p) {
			_, size := utf8.DecodeLastRuneInString(p)
			p = p[:len(p)-size]
		}
	}
	return p
}

// aside is what shows at the right of the line: the error of a line that
// did not parse, the candidates a tab left open, or the keys.
func (m Model) aside() (text string, problem bool) {
	switch {
	case m.err != nil:
		return "✗ " + m.err.Error(), true
	case len(m.matches) > 0:
		return strings.Join(m.matches, "  "), false
	}
	k := m.Keys
	return k.Jump.Help().Key + " submit · " + k.NextPane.Help().Key + " complete · ↑↓ history · " + k.Close.Help().Key + " close", false
}

// split shares the width between the field (prompt included) and the
// text aside, a space between them. The field takes what its text needs;
// the aside what it needs of the rest, or at least half the line, so that
// an error stays readable beside a long line. The field scrolls.
func (m Model) split() (field, aside int) {
	text, _ := m.aside()
	w := common.TextWidth(text)
	const minWidth = 16 // below this the aside is dropped
	const minAside = 4  // an error cut shorter than this says nothing
	if m.Width < minWidth {
		return m.Width, 0
	}
	need := common.TextWidth(prompt) + common.TextWidth(m.input.Value()) + 1
	switch {
	case need+1+w <= m.Width:
		aside = w
	case m.err != nil && need < m.Width:
		// A refused line shows whole, so that what is fixed is in
		// view; its error has the status line too.
		aside = m.Width - need - 1
		if aside < minAside {
			aside = 0
		}
	default:
		aside = min(w, max(m.Width-need-1, m.Width/2))
	}
	return m.Width - aside - 1, aside
}

// layout styles the field, fits it to the width split gives it, and
// scrolls its text so the cursor shows.
func (m *Model) layout() {
	m.input.SetStyles(m.Theme.InputStyles())
	field, _ := m.split()
	m.input.SetWidth(max(field-common.TextWidth(prompt)-1, 1))
	m.input.SetCursor(m.input.Position())
}

// View draws the line, exactly Width cells wide: the prompt and the text,
// then the aside at the right edge. A closed line draws blank.
func (m Model) View() string {
	if !m.active {
		return common.Fit("", m.Width)
	}
	in := m.input
	in.SetStyles(m.Theme.InputStyles())
	field, asideWidth := m.split()
	line := common.Fit(in.View(), field)
	if asideWidth > 0 {
		text, problem := m.aside()
		st := m.Theme.Muted
		if problem {
			st = m.Theme.Problem
		}
		line += " " + st.Render(common.Fit(text, asideWidth))
	}
	return line
}
