// Package help is the help overlay: every key the workbench answers to,
// read from the keymap itself so it can never list a key the code does not
// handle, plus what the mouse does. The run and authoring keys are shown
// as the table of keys and commands (common.KeyMap.Table): each command
// of stepwise debug's language beside the key that does the same.
package help

import (
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

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
		// A page is a band of columns.
		if d, ok := m.Keys.Movement(msg, m.band(), len(m.body())); ok {
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
	m.scroll = m.scroll.Clamp(m.band(), len(m.body()))
}

// group is a titled section: key and description pairs.
type group struct {
	title string
	pairs [][2]string
}

// groups are the keymap's groups, by the pane that answers them, with the
// command line's keys and the mouse; then the run and authoring keys as
// the table of keys and commands, which the README shows too.
func (m Model) groups() []group {
	var out []group
	for _, g := range m.Keys.Groups() {
		if !m.Keys.InTable(g) {
			out = append(out, group{g.Title, pairs(g.Bindings)})
		}
	}
	out = append(out,
		group{"Command line (" + m.Keys.Command.Help().Key + ")", pairs(m.Keys.CommandLineHelp())},
		group{"Mouse", [][2]string{
			{"click", "select a row, pane or tab"},
			{"wheel", "scroll the pane under it"},
			{"ctrl+wheel", "zoom the timeline; a sideways wheel pans it"},
			{"drag", "the tree's border: resize it"},
		}})
	return append(out, group{"Keys and : commands", tablePairs(m.Keys.Table())})
}

// tablePairs writes each row of the table as its key beside the command
// (with its short forms in stepwise debug), then what they do under it,
// indented: a row on one line would not fit a column.
func tablePairs(rows []common.TableRow) [][2]string {
	var out [][2]string
	for _, r := range rows {
		if r.Usage == "" {
			out = append(out, [2]string{r.Key, r.Does})
			continue
		}
		usage := ":" + r.Usage
		if len(r.Aliases) > 0 {
			usage += " (" + strings.Join(r.Aliases, ", ") + ")"
		}
		out = append(out, [2]string{r.Key, usage}, [2]string{"", indent + r.Does})
	}
	return out
}

// indent marks the line of a table's row that says what its command does.
const indent = "  "

func pairs(bs []key.Binding) [][2]string {
	var out [][2]string
	for _, b := range bs {
		if b.Enabled() {
			out = append(out, [2]string{b.Help().Key, b.Help().Desc})
		}
	}
	return out
}

// Columns: at least minColumn cells wide, gap apart, as many as the
// width takes, so two at 80 columns and one below about 78.
const (
	minColumn = 36
	maxColumn = 60
	gap       = 3
)

// columns returns how many columns the overlay shows and how wide each is.
func (m Model) columns() (n, width int) {
	usable := max(m.Width-3, 1) // the border and a margin
	n = max((usable+gap)/(minColumn+gap), 1)
	return n, min((usable-gap*(n-1))/n, maxColumn)
}

// lines lays the groups out one under another at a column's width: a
// heading, then each key beside its description, keys aligned within the
// group and descriptions wrapped under themselves, never cut.
func (m Model) lines(width int) []string {
	t := m.Theme
	var out []string
	for i, g := range m.groups() {
		if i > 0 {
			out = append(out, "")
		}
		out = append(out, t.Heading.Render(common.Clip(g.title, width)))
		keyW := 0
		for _, p := range g.pairs {
			keyW = max(keyW, common.TextWidth(p[0]))
		}
		for _, p := range g.pairs {
			text, lead := p[1], ""
			if strings.HasPrefix(text, indent) {
				text, lead = strings.TrimPrefix(text, indent), indent
			}
			room := max(width-keyW-2-len(lead), 1)
			for j, l := range common.Wrap(text, room, "/") {
				k := strings.Repeat(" ", keyW)
				if j == 0 {
					k = t.Key.Render(common.Fit(p[0], keyW))
				}
				out = append(out, k+"  "+lead+t.Text.Render(l))
			}
		}
	}
	return out
}

// band is how many lines a column shows: the overlay less its border and
// the lines at its foot.
func (m Model) band() int { return max(m.Height-2-len(m.foot()), 1) }

// foot says how to close the overlay and page through it, and where the
// log is, wrapped to the overlay's width.
func (m Model) foot() []string {
	k := m.Keys
	foot := k.Help.Help().Key + " or " + k.Close.Help().Key + " closes this help · " + k.PageDown.Help().Key + " " + k.PageUp.Help().Key + " page"
	if m.logPath != "" {
		foot += " · log: " + m.logPath
	}
	return common.Wrap(foot, max(m.Width-4, 1), "")
}

// body lays the lines out in bands as tall as the overlay, each band as
// many columns side by side as the width takes: read down the first
// column, then the next, then page down to the next band. A heading never
// ends a column, and a blank line never starts one.
func (m Model) body() []string {
	n, width := m.columns()
	lines := m.lines(width)
	h := m.band()
	// Cut the lines into columns of at most h lines.
	var cols [][]string
	for len(lines) > 0 {
		for len(lines) > 0 && lines[0] == "" {
			lines = lines[1:]
		}
		take := min(h, len(lines))
		// A heading at the foot of a column goes to the next one.
		if take < len(lines) && take > 1 && lines[take-2] == "" {
			take--
		}
		if take == 0 {
			break
		}
		cols = append(cols, lines[:take])
		lines = lines[take:]
	}
	// When everything fits one band, balance the columns' heights.
	if len(cols) <= n && len(cols) > 1 {
		return m.join(m.balanced(m.lines(width), n), width)
	}
	var out []string
	for i := 0; i < len(cols); i += n {
		band := cols[i:min(i+n, len(cols))]
		rows := m.join(band, width)
		// Every band but the last is a full page, so that page down
		// moves from one to the next.
		if i+n < len(cols) {
			rows = append(rows, make([]string, h-len(rows))...)
		}
		out = append(out, rows...)
	}
	return out
}

// balanced cuts lines into n columns of about the same height, at group
// boundaries (blank lines) where it can.
func (m Model) balanced(lines []string, n int) [][]string {
	per := (len(lines) + n - 1) / n
	var cols [][]string
	for len(lines) > 0 {
		take := min(per, len(lines))
		if len(cols) == n-1 {
			take = len(lines)
		}
		// Move back to a group's end, within a quarter of a column.
		for back := take; back < len(lines) && back > take-per/4; back-- {
			if lines[back] == "" {
				take = back
				break
			}
		}
		cols = append(cols, lines[:take])
		lines = lines[take:]
		for len(lines) > 0 && lines[0] == "" {
			lines = lines[1:]
		}
	}
	return cols
}

// join puts columns side by side, each width cells and gap apart.
func (m Model) join(cols [][]string, width int) []string {
	height := 0
	for _, c := range cols {
		height = max(height, len(c))
	}
	out := make([]string, height)
	for i := range out {
		line := " "
		for j, c := range cols {
			cell := ""
			if i < len(c) {
				cell = c[i]
			}
			if j < len(cols)-1 {
				cell = common.Fit(cell, width) + strings.Repeat(" ", gap)
			}
			line += cell
		}
		out[i] = line
	}
	return out
}

// View draws the overlay box, the window's width, no taller than the
// window, scrolled when the keys do not all fit, with how to close it and
// where the log is at its foot.
func (m Model) View() string {
	body := m.body()
	foot := m.foot()
	h := min(len(body)+2+len(foot), m.Height)
	rows := max(h-2-len(foot), 0)
	sc := m.scroll.Clamp(rows, len(body))
	shown := slices.Clone(body[sc.Offset:min(sc.Offset+rows, len(body))])
	for len(shown) < rows {
		shown = append(shown, "")
	}
	for _, l := range foot {
		shown = append(shown, " "+m.Theme.Muted.Render(l))
	}
	footer := ""
	if len(body) > rows {
		footer = common.Position(min(sc.Offset+rows, len(body))-1, len(body))
	}
	title := m.Theme.PaneTitle("Keys", true)
	return strings.TrimRight(common.Frame(m.Theme, m.Width, h, title, footer, true, shown), "\n")
}
