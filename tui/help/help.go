// Package help is the help overlay: every key the workbench answers to,
// read from the keymap itself so it can never list a key the code does not
// handle, plus what the mouse does. The run and authoring keys are shown
// as the table of keys and commands (common.KeyMap.Table): each command
// of stepwise debug's language beside the key that does the same.
package help

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/stepwise-dev/stepwise/tui/common"
)

// Model is the help overlay. Its size is the space it may take: the window.
type Model struct {
	common.Common
	logPath string
	scroll  common.Scroll
}

// New returns the overlay; logPath is where the workbench's log goes,
// said at the foot of the overlay ("" when it keeps none).
func New(c common.Common, logPath string) Model { return Model{Common: c, logPath: logPath} }

// SetSize sets the space the overlay may take.
func (m *Model) SetSize(width, height int) { m.Common.SetSize(width, height) }

// Open shows the overlay from its top, wherever it was left.
func (m *Model) Open() { m.scroll.Offset = 0 }

// Update scrolls the overlay on the movement keys and the wheel, for
// windows too small to show every key at once; the help key, Close, Quit
// and a click anywhere close it.
func (m *Model) Update(msg tea.Msg) (common.Component, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		if key.Matches(msg, m.Keys.Help, m.Keys.Close, m.Keys.Quit) {
			return m, common.Close(m)
		}
		if d, ok := m.Keys.Movement(msg, max(m.Height-3, 1), len(m.body())); ok {
			m.Scroll(d)
		}
	case tea.MouseClickMsg:
		return m, common.Close(m)
	case tea.MouseWheelMsg:
		m.Scroll(common.WheelDelta(msg))
	}
	return m, nil
}

// ShortHelp leaves the footer to the page: the help lists every key.
func (m *Model) ShortHelp() []key.Binding { return nil }

// Scroll moves the overlay's content by delta lines.
func (m *Model) Scroll(delta int) {
	m.scroll.Offset += delta
	m.scroll = m.scroll.Clamp(max(m.Height-2, 0), len(m.body()))
}

// group is a titled column section: key and description pairs.
type group struct {
	title string
	pairs [][2]string
}

// groups are the keymap's groups, those of the run and authoring keys
// given as the table of keys and commands, which the README shows too.
func (m Model) groups() []group {
	var out []group
	for _, g := range m.Keys.Groups() {
		if !m.Keys.InTable(g) {
			out = append(out, group{g.Title, pairs(g.Bindings)})
		}
	}
	out = append(out, group{"Mouse", [][2]string{
		{"click", "select a row, pane or tab"},
		{"wheel", "scroll the pane under it"},
		{"drag", "the tree's border: resize it"},
	}})
	return append(out, group{"Keys and : commands", tablePairs(m.Keys.Table())})
}

// tableWidth is the width the table's descriptions wrap at, which keeps
// the overlay inside a 60-column terminal.
const tableWidth = 44

// tablePairs writes each row of the table as its key beside the command
// (with its short forms in stepwise debug), then what they do under it,
// wrapped: a row on one line would not fit an 80-column terminal.
func tablePairs(rows []common.TableRow) [][2]string {
	var out [][2]string
	for _, r := range rows {
		does := common.Wrap(r.Does, tableWidth, "")
		first := does[0]
		if r.Usage != "" {
			first = ":" + r.Usage
			if len(r.Aliases) > 0 {
				first += " (" + strings.Join(r.Aliases, ", ") + ")"
			}
		} else {
			does = does[1:]
		}
		out = append(out, [2]string{r.Key, first})
		for _, l := range does {
			out = append(out, [2]string{"", "  " + l})
		}
	}
	return out
}

func pairs(bs []key.Binding) [][2]string {
	var out [][2]string
	for _, b := range bs {
		if b.Enabled() {
			out = append(out, [2]string{b.Help().Key, b.Help().Desc})
		}
	}
	return out
}

// column lays groups out one under another, the keys of each group
// aligned.
func (m Model) column(groups []group) []string {
	t := m.Theme
	var lines []string
	for i, g := range groups {
		if i > 0 {
			lines = append(lines, "")
		}
		lines = append(lines, t.Heading.Render(g.title))
		keyW := 0
		for _, p := range g.pairs {
			keyW = max(keyW, ansi.StringWidth(p[0]))
		}
		for _, p := range g.pairs {
			lines = append(lines, t.Key.Render(common.Fit(p[0], keyW))+"  "+t.Text.Render(p[1]))
		}
	}
	return lines
}

func width(lines []string) int {
	w := 0
	for _, l := range lines {
		w = max(w, ansi.StringWidth(l))
	}
	return w
}

// body lays the groups out in as many columns as the width takes,
// filling each column to about the same height, keys aligned.
func (m Model) body() []string {
	gs := m.groups()
	const gap = "    "
	var body []string
	for cols := len(gs); cols >= 1; cols-- {
		columns := balance(gs, cols)
		var rendered [][]string
		total := 0
		for _, c := range columns {
			lines := m.column(c)
			rendered = append(rendered, lines)
			total += width(lines) + len(gap)
		}
		if total+4 > m.Width && cols > 1 {
			continue
		}
		height := 0
		for _, c := range rendered {
			height = max(height, len(c))
		}
		for i := range height {
			line := " "
			for j, c := range rendered {
				cell := ""
				if i < len(c) {
					cell = c[i]
				}
				if j < len(rendered)-1 {
					cell = common.Fit(cell, width(c)) + gap
				}
				line += cell
			}
			body = append(body, line)
		}
		break
	}
	foot := "? or esc closes this help"
	if m.logPath != "" {
		foot += " · log: " + m.logPath
	}
	return append(body, "", " "+m.Theme.Muted.Render(foot))
}

// balance splits groups, in order, into at most n columns of about the
// same number of lines.
func balance(gs []group, n int) [][]group {
	total := 0
	for _, g := range gs {
		total += len(g.pairs) + 2
	}
	per := (total + n - 1) / n
	var out [][]group
	var cur []group
	lines := 0
	for _, g := range gs {
		h := len(g.pairs) + 2
		if lines > 0 && lines+h > per && len(out) < n-1 {
			out = append(out, cur)
			cur, lines = nil, 0
		}
		cur = append(cur, g)
		lines += h
	}
	return append(out, cur)
}

// View draws the overlay box, no larger than the overlay's size, scrolled
// when the keys do not all fit.
func (m Model) View() string {
	body := m.body()
	w := min(width(body)+3, m.Width)
	h := min(len(body)+2, m.Height)
	sc := m.scroll.Clamp(max(h-2, 0), len(body))
	footer := ""
	if len(body) > h-2 {
		footer = common.Position(sc.Offset+h-3, len(body))
	}
	title := m.Theme.PaneTitle("Keys", true)
	return strings.TrimRight(common.Frame(m.Theme, w, h, title, footer, true, body[sc.Offset:]), "\n")
}
