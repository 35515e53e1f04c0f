package tui

import (
	"strings"

	bhelp "charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/stepwise-dev/stepwise/tui/common"
	"github.com/stepwise-dev/stepwise/tui/detail"
	"github.com/stepwise-dev/stepwise/tui/help"
	"github.com/stepwise-dev/stepwise/tui/problems"
	"github.com/stepwise-dev/stepwise/tui/tree"
)

// pane names a focusable pane, in Tab order.
type pane int

const (
	paneTree pane = iota
	paneDetail
	paneProblems
	paneCount
)

// model is the root of the workbench.
type model struct {
	common.Common // the window's size, the theme and the keymap
	title         string

	tree     tree.Model
	detail   detail.Model
	problems problems.Model
	help     help.Model

	focus    pane
	showHelp bool
}

func newModel(opts Options, withColor bool) model {
	c := common.New(common.NewTheme(true, withColor), common.DefaultKeyMap())
	m := model{
		Common: c,
		title:  opts.Title,
		tree:   tree.New(c, opts.Documents),
		detail: detail.New(c),
		help:   help.New(c),
	}
	m.problems = problems.New(c, m.tree.Document().Report)
	m.setFocus(paneTree)
	m.syncDetail()
	return m
}

// Init asks the terminal for its background colour, so the theme can follow
// a light one.
func (m model) Init() tea.Cmd {
	return tea.RequestBackgroundColor
}

// Update handles a message: window and theme changes for everyone, keys for
// the focused pane (or the help overlay while it is open), mouse events for
// the pane under the pointer.
func (m model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.SetSize(msg.Width, msg.Height)
		m.relayout()
	case tea.BackgroundColorMsg:
		*m.Theme = *common.NewTheme(msg.IsDark(), m.Theme.Color)
		m.detail.Refresh()
	case tea.KeyPressMsg:
		return m.key(msg)
	case tea.MouseClickMsg:
		m.click(msg.Mouse())
	case tea.MouseWheelMsg:
		m.wheel(msg.Mouse())
	}
	m.syncDetail()
	return m, nil
}

// key handles a key press: the global keys first, then the focused pane's.
func (m model) key(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	keys := m.Keys
	if key.Matches(k, keys.Quit) {
		return m, tea.Quit
	}
	if m.showHelp {
		if key.Matches(k, keys.Help, keys.Close) {
			m.showHelp = false
		}
		return m, nil
	}
	var cmd tea.Cmd
	switch {
	case key.Matches(k, keys.Help):
		m.showHelp = true
	case key.Matches(k, keys.NextPane):
		m.setFocus((m.focus + 1) % paneCount)
	case key.Matches(k, keys.PrevPane):
		m.setFocus((m.focus + paneCount - 1) % paneCount)
	case key.Matches(k, keys.NextPlan):
		m.switchDocument(1)
	case key.Matches(k, keys.PrevPlan):
		m.switchDocument(-1)
	default:
		switch m.focus {
		case paneTree:
			m.tree, cmd = m.tree.Update(k)
		case paneDetail:
			m.detail, cmd = m.detail.Update(k)
		case paneProblems:
			if key.Matches(k, keys.Jump) {
				m.jump()
			} else {
				m.problems, cmd = m.problems.Update(k)
			}
		}
	}
	m.syncDetail()
	return m, cmd
}

// jump takes the tree to the step of the selected problem and focuses it.
// It happens within the key press, not through a command, so a key typed
// right after Enter already acts on the tree.
func (m *model) jump() {
	if p, ok := m.problems.Selected(); ok {
		m.tree.SelectProblem(p)
		m.setFocus(paneTree)
	}
}

// switchDocument shows the next or previous plan in every pane.
func (m *model) switchDocument(delta int) {
	if m.tree.Len() < 2 {
		return
	}
	m.tree.CycleDocument(delta)
	m.documentChanged()
}

func (m *model) documentChanged() {
	m.problems.SetReport(m.tree.Document().Report)
	// The problems pane's height follows the report; lay out again.
	m.relayout()
	m.syncDetail()
}

// syncDetail points the detail pane at the tree's selection.
func (m *model) syncDetail() {
	m.detail.Show(m.tree.Document(), m.tree.DocumentIndex(), m.tree.Selected())
}

func (m *model) setFocus(p pane) {
	m.focus = p
	m.tree.Blur()
	m.detail.Blur()
	m.problems.Blur()
	switch p {
	case paneTree:
		m.tree.Focus()
	case paneDetail:
		m.detail.Focus()
	case paneProblems:
		m.problems.Focus()
	}
}

// relayout gives every component its box for the current window.
func (m *model) relayout() {
	l := m.layout()
	m.tree.SetSize(l.tree.w, l.tree.h)
	m.detail.SetSize(l.detail.w, l.detail.h)
	m.problems.SetSize(l.problems.w, l.problems.h)
	m.help.SetSize(m.Width, m.Height)
}

func (m model) layout() layout {
	l := computeLayout(m.Width, m.Height, m.problems.Len())
	l.tabsX = lipgloss.Width(m.headerLead())
	return l
}

// headerLead is the header before the plan tabs: the application and what
// is open.
func (m model) headerLead() string {
	t := m.Theme
	lead := t.App.Render(" stepwise")
	if m.title != "" {
		lead += t.Muted.Render(" · " + m.title)
	}
	return lead + "  "
}

// click selects what is under the pointer and focuses its pane; any click
// closes the help overlay.
func (m *model) click(ms tea.Mouse) {
	if ms.Button != tea.MouseLeft {
		return
	}
	if m.showHelp {
		m.showHelp = false
		return
	}
	l := m.layout()
	if l.tooSmall {
		return
	}
	switch {
	case l.header.contains(ms.X, ms.Y):
		if i, ok := m.tree.TabAt(ms.X-l.tabsX, l.header.w-l.tabsX); ok && i != m.tree.DocumentIndex() {
			m.tree.SetDocument(i)
			m.documentChanged()
		}
	case l.tree.contains(ms.X, ms.Y):
		m.setFocus(paneTree)
		m.tree.ClickAt(ms.Y - l.tree.y)
	case l.detail.contains(ms.X, ms.Y):
		m.setFocus(paneDetail)
	case l.problems.contains(ms.X, ms.Y):
		m.setFocus(paneProblems)
		m.problems.ClickAt(ms.Y - l.problems.y)
	}
}

// wheelStep is how many lines one notch of the wheel scrolls.
const wheelStep = 3

// wheel scrolls the pane under the pointer, focused or not.
func (m *model) wheel(ms tea.Mouse) {
	if m.showHelp {
		return
	}
	var delta int
	switch ms.Button {
	case tea.MouseWheelUp:
		delta = -wheelStep
	case tea.MouseWheelDown:
		delta = wheelStep
	default:
		return
	}
	l := m.layout()
	switch {
	case l.tree.contains(ms.X, ms.Y):
		m.tree.Scroll(delta)
	case l.detail.contains(ms.X, ms.Y):
		m.detail.Scroll(delta)
	case l.problems.contains(ms.X, ms.Y):
		m.problems.Scroll(delta)
	}
}

// View draws the workbench: header, the tree and detail panes, the problems
// pane, the key hints; the help overlay on top when open.
func (m model) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	v.WindowTitle = "stepwise"
	return v
}

// render is the screen as a string, exactly the window's size.
func (m model) render() string {
	if m.Width <= 0 || m.Height <= 0 {
		return ""
	}
	l := m.layout()
	if l.tooSmall {
		msg := "stepwise: the window is too small (" + itoa(m.Width) + "×" + itoa(m.Height) + ")"
		return strings.Join(common.Block([]string{common.Clip(msg, m.Width)}, m.Width, m.Height), "\n")
	}
	var rows []string
	rows = append(rows, m.header(l))
	if l.stacked {
		rows = append(rows, m.tree.View())
		if l.detail.h > 0 {
			rows = append(rows, m.detail.View())
		}
	} else {
		rows = append(rows, joinColumns(m.tree.View(), m.detail.View()))
	}
	rows = append(rows, m.problems.View(), m.footer())
	screen := strings.Join(rows, "\n")
	if m.showHelp {
		screen = overlay(screen, m.help.View(), m.Width, m.Height)
	}
	return common.Screen(screen, m.Height)
}

// header is the top line: the application, what is open, and the plan tabs.
func (m model) header(l layout) string {
	return common.Fit(m.headerLead()+m.tree.Tabs(max(m.Width-l.tabsX, 0)), m.Width)
}

// footer is the bottom line: the keys to start with.
func (m model) footer() string {
	t := m.Theme
	h := bhelp.New()
	h.ShortSeparator = " · "
	h.Styles = bhelp.Styles{
		ShortKey:       t.Key,
		ShortDesc:      t.Muted,
		ShortSeparator: t.Muted,
		Ellipsis:       t.Muted,
	}
	h.SetWidth(m.Width - 1)
	return common.Fit(" "+h.ShortHelpView(m.Keys.ShortHelp()), m.Width)
}

// joinColumns puts two blocks side by side. Both are exactly their pane's
// size, so lines are simply joined; lipgloss.JoinHorizontal would measure
// every line again.
func joinColumns(left, right string) string {
	ls, rs := strings.Split(left, "\n"), strings.Split(right, "\n")
	var b strings.Builder
	for i := range max(len(ls), len(rs)) {
		if i > 0 {
			b.WriteByte('\n')
		}
		if i < len(ls) {
			b.WriteString(ls[i])
		}
		if i < len(rs) {
			b.WriteString(rs[i])
		}
	}
	return b.String()
}

// overlay draws box centred on top of screen.
func overlay(screen, box string, width, height int) string {
	bw, bh := lipgloss.Width(box), lipgloss.Height(box)
	x, y := max((width-bw)/2, 0), max((height-bh)/2, 0)
	return lipgloss.NewCompositor(
		lipgloss.NewLayer(screen),
		lipgloss.NewLayer(box).X(x).Y(y).Z(1),
	).Render()
}
