// Package output is the output pane: the history of the command lines
// typed at the : line and of everything the workbench said, each answer
// whole (a printed value pretty-printed, a stack one frame a line), where
// the status line has room for one line of it only. It is drawn at the
// foot of the page, the page staying in view above it, and scrolls.
package output

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/stepwise-dev/stepwise/tui/common"
)

// Kind says what a line of the history is.
type Kind int

const (
	// Command is a command line as it was typed.
	Command Kind = iota
	// Answer is what the workbench answered or said.
	Answer
	// Problem is a refusal or a failure.
	Problem
)

// maxEntries bounds the history: the oldest entries go first.
const maxEntries = 500

// entry is a command line, or an answer of any number of lines.
type entry struct {
	kind Kind
	text string
}

// Model is the output pane. Its size is the box it is drawn in, border
// included.
type Model struct {
	common.Common
	entries []entry
	// lines are the entries wrapped to the pane's width, each line with
	// the kind of the entry it comes from; rebuilt when either changes.
	lines  []line
	scroll common.Scroll
	// atEnd says the pane follows the end of the history, as it is at
	// first: what is added next shows without scrolling.
	atEnd bool
}

type line struct {
	kind Kind
	text string
}

// New returns an empty pane, following its end.
func New(c common.Common) Model { return Model{Common: c, atEnd: true} }

// Add appends an entry: a command line, or an answer whose line breaks
// are kept.
func (m *Model) Add(kind Kind, text string) {
	m.entries = append(m.entries, entry{kind, strings.TrimRight(text, "\n")})
	if over := len(m.entries) - maxEntries; over > 0 {
		m.entries = m.entries[over:]
	}
	m.wrap()
}

// Len is how many entries the history holds.
func (m Model) Len() int { return len(m.entries) }

// Text is the history as plain text, one entry a line (or more), command
// lines marked as the pane marks them.
func (m Model) Text() string {
	var b strings.Builder
	for _, e := range m.entries {
		b.WriteString(prefix(e.kind) + e.text + "\n")
	}
	return b.String()
}

// SetSize sets the pane's box, border included.
func (m *Model) SetSize(width, height int) {
	m.Common.SetSize(width, height)
	m.wrap()
}

// ShowEnd scrolls to the last entry, and follows the end from there: the
// pane opens on what was said last.
func (m *Model) ShowEnd() {
	m.atEnd = true
	m.clamp()
}

// prefix marks a command line, as a shell's prompt does.
func prefix(k Kind) string {
	if k == Command {
		return "› :"
	}
	return ""
}

// wrap breaks the entries into the pane's lines: an answer's lines
// indented under its command line, wrapped, never cut.
func (m *Model) wrap() {
	inner := max(m.Width-2, 1)
	m.lines = m.lines[:0]
	for _, e := range m.entries {
		indent := "  "
		if e.kind == Command {
			indent = ""
		}
		for _, l := range common.Wrap(prefix(e.kind)+e.text, max(inner-1-len(indent), 1), "/,") {
			m.lines = append(m.lines, line{e.kind, indent + l})
		}
	}
	m.clamp()
}

// rows is how many lines show inside the border.
func (m Model) rows() int { return max(m.Height-2, 0) }

// clamp keeps the window inside the history, at its end while following.
func (m *Model) clamp() {
	if m.atEnd {
		m.scroll.Offset = len(m.lines)
	}
	m.scroll = m.scroll.Clamp(m.rows(), len(m.lines))
}

// Scroll moves the view by delta lines; reaching the end follows it
// again.
func (m *Model) Scroll(delta int) {
	m.atEnd = false
	m.scroll.Offset += delta
	m.clamp()
	m.atEnd = m.scroll.Offset+m.rows() >= len(m.lines)
}

// Update scrolls on the movement keys and the wheel; Close and the
// output key close the pane. The root gives it only the keys it Takes.
func (m *Model) Update(msg tea.Msg) (common.Component, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		if key.Matches(msg, m.Keys.Close, m.Keys.Output) {
			return m, common.Close(m)
		}
		if d, ok := m.Keys.Movement(msg, max(m.rows()-1, 1), len(m.lines)); ok {
			m.Scroll(d)
		}
	case tea.MouseWheelMsg:
		m.Scroll(common.WheelDelta(msg))
	}
	return m, nil
}

// Takes reports whether the pane takes a key: the movement keys scroll it,
// Close and the output key close it. Every other key is the workbench's,
// so that a held run can be moved on and another command typed with the
// pane open.
func (m Model) Takes(k tea.KeyPressMsg) bool {
	keys := m.Keys
	return key.Matches(k, keys.Up, keys.Down, keys.Top, keys.Bottom, keys.PageUp, keys.PageDown, keys.Close, keys.Output)
}

// ShortHelp leaves the footer to the page: the pane's keys are on its
// border, and the page's keys work with it open.
func (m *Model) ShortHelp() []key.Binding { return nil }

// View draws the pane at exactly its size: the history's last lines, or
// those scrolled to, with the keys and the position on the bottom edge.
func (m Model) View() string {
	t := m.Theme
	paint := map[Kind]common.Paint{
		Command: common.PaintOf(t.Key),
		Answer:  common.PaintOf(t.Text),
		Problem: common.PaintOf(t.Problem),
	}
	var body []string
	if len(m.lines) == 0 {
		body = []string{t.Muted.Render(" nothing said yet: the answers of : commands show here whole")}
	}
	end := min(m.scroll.Offset+m.rows(), len(m.lines))
	for _, l := range m.lines[m.scroll.Offset:end] {
		body = append(body, " "+paint[l.kind].Render(l.text))
	}
	k := m.Keys
	footer := t.Muted.Render(k.Down.Help().Key + " " + k.PageDown.Help().Key + " scroll · " + k.Output.Help().Key + "/" + k.Close.Help().Key + " close")
	if len(m.lines) > m.rows() {
		footer += " " + common.Position(end-1, len(m.lines))
	}
	return common.Frame(t, m.Width, m.Height, t.PaneTitle("Output", true), footer, true, body)
}
