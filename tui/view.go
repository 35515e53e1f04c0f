package tui

import (
	"strings"

	bhelp "charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/stepwise-dev/stepwise/tui/common"
)

// relayout gives every component its box for the current window.
func (m *model) relayout() {
	l := m.layout()
	m.tree.SetSize(l.tree.w, l.tree.h)
	m.runTree.SetSize(l.tree.w, l.tree.h)
	m.detail.SetSize(l.detail.w, l.detail.h)
	m.inspector.SetSize(l.detail.w, l.detail.h)
	m.problems.SetSize(l.bottom.w, l.bottom.h)
	m.cmdline.SetSize(m.Width, 1)
	m.panels.setSize(m.Width, m.Height)
}

func (m model) layout() layout {
	l := computeLayout(m.Width, m.Height, m.bottomLines())
	l.tabsX = lipgloss.Width(m.headerLead())
	return l
}

// bottomShown reports whether the bottom pane is laid out: the problems
// always in the plan view; the threads in the run view while a held run
// has more than one.
func (m model) bottomShown() bool {
	return !m.runView || len(m.threads()) > 1
}

// bottomLines is how many lines the bottom pane would like; zero leaves
// it out.
func (m model) bottomLines() int {
	switch {
	case !m.runView:
		return max(m.problems.Len(), 1)
	case len(m.threads()) > 1:
		return len(m.threads())
	}
	return 0
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

// click selects what is under the pointer and focuses its pane. An open
// overlay takes the click, at coordinates relative to its box: most close
// when it falls outside.
func (m *model) click(msg tea.MouseClickMsg) tea.Cmd {
	if msg.Button != tea.MouseLeft {
		return nil
	}
	if top, ok := m.overlays.top(); ok {
		ow, oh := overlaySize(m.Width, m.Height)
		msg.X -= (m.Width - ow) / 2
		msg.Y -= (m.Height - oh) / 2
		_, cmd := top.Update(msg)
		return cmd
	}
	ms := msg.Mouse()
	l := m.layout()
	if l.tooSmall {
		return nil
	}
	switch {
	case l.header.contains(ms.X, ms.Y):
		if i, ok := m.tree.TabAt(ms.X-l.tabsX, l.header.w-l.tabsX); ok && i != m.tree.DocumentIndex() {
			m.tree.SetDocument(i)
			m.documentChanged()
		}
	case l.tree.contains(ms.X, ms.Y):
		m.setFocus(paneTree)
		if m.runView {
			m.runTree.ClickAt(ms.Y - l.tree.y)
		} else {
			m.tree.ClickAt(ms.Y - l.tree.y)
		}
	case l.detail.contains(ms.X, ms.Y):
		m.setFocus(paneDetail)
		if m.runView {
			m.inspector.ClickAt(ms.X-l.detail.x, ms.Y-l.detail.y)
		}
	case l.bottom.contains(ms.X, ms.Y):
		m.setFocus(paneBottom)
		if m.runView {
			m.threadsSel = min(max(ms.Y-l.bottom.y-1, 0), max(len(m.threads())-1, 0))
		} else {
			m.problems.ClickAt(ms.Y - l.bottom.y)
		}
	}
	return nil
}

// wheel scrolls the open overlay, or the pane under the pointer, focused
// or not.
func (m *model) wheel(msg tea.MouseWheelMsg) tea.Cmd {
	if top, ok := m.overlays.top(); ok {
		_, cmd := top.Update(msg)
		return cmd
	}
	ms := msg.Mouse()
	delta := common.WheelDelta(msg)
	if delta == 0 {
		return nil
	}
	l := m.layout()
	switch {
	case l.tree.contains(ms.X, ms.Y):
		if m.runView {
			m.runTree.Scroll(delta)
		} else {
			m.tree.Scroll(delta)
		}
	case l.detail.contains(ms.X, ms.Y):
		if m.runView {
			m.inspector.Scroll(delta)
		} else {
			m.detail.Scroll(delta)
		}
	case l.bottom.contains(ms.X, ms.Y) && !m.runView:
		m.problems.Scroll(delta)
	}
	return nil
}

// View draws the workbench.
func (m model) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	v.WindowTitle = "stepwise"
	return v
}

// render is the screen as a string, exactly the window's size: header, the
// tree and detail panes, the bottom pane, the status line and the key
// hints (or the command line); an overlay on top when one is open.
func (m model) render() string {
	if m.Width <= 0 || m.Height <= 0 {
		return ""
	}
	l := m.layout()
	if l.tooSmall {
		msg := "stepwise: the window is too small (" + itoa(m.Width) + "×" + itoa(m.Height) + ")"
		return strings.Join(common.Block([]string{msg}, m.Width, m.Height), "\n")
	}
	treeView, detailView := m.tree.View(), m.detail.View()
	if m.runView {
		treeView, detailView = m.runTree.View(), m.inspector.View()
	}
	var rows []string
	rows = append(rows, m.header(l))
	if l.stacked {
		rows = append(rows, treeView)
		if l.detail.h > 0 {
			rows = append(rows, detailView)
		}
	} else {
		rows = append(rows, joinColumns(treeView, detailView))
	}
	if l.bottom.h > 0 {
		if m.runView {
			rows = append(rows, m.threadsView(l.bottom.w, l.bottom.h))
		} else {
			rows = append(rows, m.problems.View())
		}
	}
	rows = append(rows, m.statusLine(), m.footer())
	screen := strings.Join(rows, "\n")
	if top, ok := m.overlays.top(); ok {
		screen = overlayOn(screen, top.View(), m.Width, m.Height)
	}
	return common.Screen(screen, m.Height)
}

// header is the top line: the application, what is open, and the plan tabs.
func (m model) header(l layout) string {
	return common.Fit(m.headerLead()+m.tree.Tabs(max(m.Width-l.tabsX, 0)), m.Width)
}

// footer is the bottom line: the command line while it is open, else the
// keys that matter now.
func (m model) footer() string {
	if m.cmdline.Active() {
		return m.cmdline.View()
	}
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
	var bindings []key.Binding
	if top, ok := m.overlays.top(); ok {
		bindings = top.ShortHelp()
	}
	switch {
	case bindings != nil:
	case m.run.held():
		bindings = m.Keys.StopHelp()
	default:
		bindings = m.Keys.ShortHelp()
	}
	return common.Fit(" "+h.ShortHelpView(bindings), m.Width)
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

// overlayOn draws box centred on top of screen.
func overlayOn(screen, box string, width, height int) string {
	bw, bh := lipgloss.Width(box), lipgloss.Height(box)
	x, y := max((width-bw)/2, 0), max((height-bh)/2, 0)
	return lipgloss.NewCompositor(
		lipgloss.NewLayer(screen),
		lipgloss.NewLayer(box).X(x).Y(y).Z(1),
	).Render()
}
