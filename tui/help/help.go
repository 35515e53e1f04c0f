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

// Update scrolls the overlay on the movement keys and the wheel: page
// down leaves the cheat sheet for every key at length; the help key, Close, Quit
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
// width takes, so two at 80 columns and one below about 78. The cheat
// sheet's columns are narrower: four at 80.
const (
	minColumn = 36
	maxColumn = 60
	gap       = 3

	minCheatColumn = 17
	maxCheatColumn = 24
	cheatGap       = 2
)

// columns returns how many columns of at least least cells, gapped apart,
// the overlay shows, and how wide each is (at most most).
func (m Model) columns(least, most, gapped int) (n, width int) {
	usable := max(m.Width-3, 1) // the border and a margin
	n = max((usable+gapped)/(least+gapped), 1)
	return n, min((usable-gapped*(n-1))/n, most)
}

// block is lines that stay together in one column: a heading, a key with
// its wrapped description, a whole group of the cheat sheet, or the blank
// line between groups.
type block struct {
	lines   []string
	heading bool
	blank   bool
}

var blankBlock = block{lines: []string{""}, blank: true}

// cheatBlocks is the cheat sheet at a column's width: a block per group,
// its heading over its keys, each key beside its one word.
func (m Model) cheatBlocks(width int) []block {
	t := m.Theme
	var out []block
	for i, g := range m.Keys.CheatSheet() {
		if i > 0 {
			out = append(out, blankBlock)
		}
		keyW := 0
		for _, e := range g.Entries {
			keyW = max(keyW, common.TextWidth(e.Keys))
		}
		b := block{lines: []string{t.Heading.Render(common.Clip(g.Title, width))}}
		for _, e := range g.Entries {
			b.lines = append(b.lines, common.Clip(t.Key.Render(common.Fit(e.Keys, keyW))+" "+t.Text.Render(e.Word), width))
		}
		out = append(out, b)
	}
	return out
}

// blocks lays the groups out at a column's width: a heading, then each
// key beside its description, keys aligned within the group and
// descriptions wrapped under themselves, never cut. A key's lines (and a
// command's usage with what it does) are one block, so a page break never
// falls inside one.
func (m Model) blocks(width int) []block {
	t := m.Theme
	var out []block
	for i, g := range m.groups() {
		if i > 0 {
			out = append(out, blankBlock)
		}
		out = append(out, block{lines: []string{t.Heading.Render(common.Clip(g.title, width))}, heading: true})
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
			var wrapped []string
			for j, l := range common.Wrap(text, room, "/") {
				k := strings.Repeat(" ", keyW)
				if j == 0 {
					k = t.Key.Render(common.Fit(p[0], keyW))
				}
				wrapped = append(wrapped, k+"  "+lead+t.Text.Render(l))
			}
			// What a command does goes on with the command above it.
			if lead != "" && len(out) > 0 && !out[len(out)-1].heading {
				out[len(out)-1].lines = append(out[len(out)-1].lines, wrapped...)
				continue
			}
			out = append(out, block{lines: wrapped})
		}
	}
	return out
}

// lines is every line of the blocks, in order.
func lines(blocks []block) []string {
	var out []string
	for _, b := range blocks {
		out = append(out, b.lines...)
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
	foot := k.Help.Help().Key + " or " + k.Close.Help().Key + " closes · " + k.PageDown.Help().Key + " every key in full, " + k.PageUp.Help().Key + " back"
	if m.logPath != "" {
		foot += " · log: " + m.logPath
	}
	return common.Wrap(foot, max(m.Width-4, 1), "")
}

// body is the cheat sheet, a page of its own, then every key and command
// at length on the pages after it.
func (m Model) body() []string {
	h := m.band()
	n, width := m.columns(minCheatColumn, maxCheatColumn, cheatGap)
	out := m.pages(m.cheatBlocks(width), n, width, cheatGap)
	out = append(out, make([]string, (h-len(out)%h)%h)...)
	n, width = m.columns(minColumn, maxColumn, gap)
	return append(out, m.pages(m.blocks(width), n, width, gap)...)
}

// pages lays blocks out in bands as tall as the overlay, each band n
// columns side by side: read down the first column, then the next, then
// page down to the next band. A heading never ends a column, and a blank
// line never starts one. When everything fits one band, the columns are
// balanced in height.
func (m Model) pages(blocks []block, n, width, gapped int) []string {
	h := m.band()
	cols := columnsOf(blocks, h)
	if len(cols) <= n && len(cols) > 1 {
		if even := balanced(blocks, n); tallest(even) <= h {
			return m.join(even, width, gapped)
		}
	}
	var out []string
	for i := 0; i < len(cols); i += n {
		rows := m.join(cols[i:min(i+n, len(cols))], width, gapped)
		// Every band but the last is a full page, so that page down
		// moves from one to the next.
		if i+n < len(cols) {
			rows = append(rows, make([]string, h-len(rows))...)
		}
		out = append(out, rows...)
	}
	return out
}

// columnsOf cuts blocks into columns of at most h lines; only a block
// taller than a whole column is cut.
func columnsOf(blocks []block, h int) [][]string {
	var cols [][]string
	var col []block
	height := 0
	flush := func() {
		// A heading at the foot of a column goes to the next one.
		var carry []block
		if len(col) > 1 && col[len(col)-1].heading {
			carry = col[len(col)-1:]
			col = col[:len(col)-1]
		}
		if len(col) > 0 {
			cols = append(cols, lines(col))
		}
		col, height = carry, len(lines(carry))
	}
	for _, b := range blocks {
		if b.blank && len(col) == 0 {
			continue
		}
		if height+len(b.lines) > h {
			flush()
			if b.blank {
				continue
			}
		}
		for len(b.lines) > h {
			cols = append(cols, b.lines[:h])
			b.lines = b.lines[h:]
		}
		col = append(col, b)
		height += len(b.lines)
	}
	flush()
	return cols
}

// balanced cuts blocks into n columns of about the same height, at group
// boundaries (blank lines) where it can.
func balanced(blocks []block, n int) [][]string {
	per := (len(lines(blocks)) + n - 1) / n
	var cols [][]string
	for len(blocks) > 0 {
		for len(blocks) > 0 && blocks[0].blank {
			blocks = blocks[1:]
		}
		take, height, group := 0, 0, 0
		for take < len(blocks) && (len(cols) == n-1 || take == 0 || height+len(blocks[take].lines) <= per) {
			if blocks[take].blank {
				group = take
			}
			height += len(blocks[take].lines)
			take++
		}
		// Move back to a group's end, within a quarter of a column.
		if take < len(blocks) && group > 0 && len(lines(blocks[:group])) > per-per/4 {
			take = group
		}
		if take > 0 && blocks[take-1].heading {
			take--
		}
		if take == 0 {
			take = 1
		}
		cols = append(cols, lines(blocks[:take]))
		blocks = blocks[take:]
	}
	return cols
}

// tallest is the height of the tallest column.
func tallest(cols [][]string) int {
	h := 0
	for _, c := range cols {
		h = max(h, len(c))
	}
	return h
}

// join puts columns side by side, each width cells and gapped apart.
func (m Model) join(cols [][]string, width, gapped int) []string {
	out := make([]string, tallest(cols))
	for i := range out {
		line := " "
		for j, c := range cols {
			cell := ""
			if i < len(c) {
				cell = c[i]
			}
			if j < len(cols)-1 {
				cell = common.Fit(cell, width) + strings.Repeat(" ", gapped)
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
