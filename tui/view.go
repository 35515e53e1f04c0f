package tui

import (
	"strings"

	bhelp "charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/tui/common"
)

// relayout gives every component its box for the current window. A
// window too small to lay out gives the pages none.
func (m *model) relayout() {
	l := m.layout()
	m.planPage.SetSize(l.body.w, l.body.h)
	m.runPage.SetSize(l.body.w, l.body.h)
	m.cmdline.SetSize(m.Width, 1)
	m.panels.setSize(m.Width, m.Height)
}

func (m model) layout() layout {
	l := computeLayout(m.Width, m.Height)
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

// click selects what is under the pointer and focuses its pane. An open
// overlay takes the click, at coordinates relative to its box: most close
// when it falls outside.
func (m *model) click(msg tea.MouseClickMsg) tea.Cmd {
	if msg.Button != tea.MouseLeft {
		return nil
	}
	if top, ok := m.overlays.top(); ok && !top.docked {
		// Where overlayOn drew it, by the size it is drawn at.
		box := top.View()
		msg.X -= max((m.Width-lipgloss.Width(box))/2, 0)
		msg.Y -= max((m.Height-lipgloss.Height(box))/2, 0)
		_, cmd := top.Update(msg)
		return cmd
	}
	l := m.layout()
	// A click on the output pane is the pane's; one beside it, the page's.
	if d := m.dockRect(); m.overlays.isOpen(&m.panels.output) && d.contains(msg.X, msg.Y) {
		return nil
	}
	switch {
	case l.header.contains(msg.X, msg.Y):
		if i, ok := m.planPage.tabs().At(msg.X-l.tabsX, l.header.w-l.tabsX); ok && i != m.planPage.current {
			m.planPage.show(i)
			m.documentChanged()
		}
	case l.body.contains(msg.X, msg.Y) && m.page.layout().onBorder(msg.X-l.body.x, msg.Y-l.body.y):
		m.split.dragging = true
	case l.body.contains(msg.X, msg.Y):
		msg.Y -= l.body.y
		_, cmd := m.page.Update(msg)
		return cmd
	}
	return nil
}

// splitStep is how many columns a key moves the border between the tree
// and the detail pane.
const splitStep = 4

// resizeTree widens the tree pane by delta columns (narrows it, delta
// negative), the detail pane giving or taking them; a zoomed pane is
// shown beside the others again first.
func (m *model) resizeTree(delta int) {
	l := m.page.layout()
	if l.stacked {
		m.notify(noticeError, "the panes are stacked below "+itoa(stackBelow)+" columns: widen the window to resize them")
		return
	}
	if m.split.zoom {
		m.toggleZoom()
	}
	m.setTreeWidth(m.split.treeWidth(m.layout().body.w) + delta)
}

// setTreeWidth sets the tree pane's width, held to what leaves both
// panes minPaneWidth, as its share of the page, and lays the pages out
// again.
func (m *model) setTreeWidth(w int) {
	width := m.layout().body.w
	m.split.tree = float64(max(min(w, width-minPaneWidth), minPaneWidth)) / float64(max(width, 1))
	m.relayout()
}

// drag moves the border between the tree and the detail pane with the
// pointer while a button holds it (click put it there).
func (m *model) drag(ms tea.Mouse) {
	if !m.split.dragging {
		return
	}
	// The pointer is on the tree's right edge: the tree ends one column
	// past it.
	m.setTreeWidth(ms.X - m.layout().body.x + 1)
}

// toggleZoom gives the focused pane the whole page, or shows every pane
// again.
func (m *model) toggleZoom() {
	m.split.zoom = !m.split.zoom
	m.relayout()
	if m.split.zoom {
		m.notify(noticeInfo, "zoomed: "+m.Keys.Zoom.Help().Key+" shows every pane again, "+m.Keys.NextPane.Help().Key+" zooms the next")
	} else {
		m.notice = notice{}
	}
}

// wheel scrolls the open overlay, or what is under the pointer: the
// output pane or the page.
func (m *model) wheel(msg tea.MouseWheelMsg) tea.Cmd {
	if m.overlays.isOpen(&m.panels.output) && m.dockRect().contains(msg.X, msg.Y) {
		_, cmd := m.panels.output.Update(msg)
		return cmd
	}
	if top, ok := m.overlays.top(); ok && !top.docked {
		_, cmd := top.Update(msg)
		return cmd
	}
	if l := m.layout(); l.body.contains(msg.X, msg.Y) {
		msg.Y -= l.body.y
		_, cmd := m.page.Update(msg)
		return cmd
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
// page on show, the status line and the key hints (or the command line);
// the overlay on top of the stack over them.
func (m model) render() string {
	if m.Width <= 0 || m.Height <= 0 {
		return ""
	}
	l := m.layout()
	if l.tooSmall {
		msg := "stepwise: the window is too small (" + itoa(m.Width) + "×" + itoa(m.Height) + ")"
		return strings.Join(common.Block([]string{msg}, m.Width, m.Height), "\n")
	}
	screen := strings.Join([]string{m.header(l), m.page.View(), m.statusLine(), m.footer()}, "\n")
	// The output pane stays drawn at the page's foot under any overlay
	// opened over it.
	if m.overlays.isOpen(&m.panels.output) {
		d := m.dockRect()
		screen = placeOn(screen, m.panels.output.View(), d.x, d.y)
	}
	if top, ok := m.overlays.top(); ok && !top.docked {
		screen = overlayOn(screen, top.View(), m.Width, m.Height, l.body)
	}
	return common.Screen(screen, m.Height)
}

// dockRect is where the output pane goes: the foot of the page, the
// whole width, right above the status line.
func (m model) dockRect() rect {
	body := m.layout().body
	h := min(m.panels.output.Height, body.h)
	return rect{0, body.y + body.h - h, m.Width, h}
}

// header is the top line: the application, what is open, and the plan tabs.
func (m model) header(l layout) string {
	return common.Fit(m.headerLead()+m.planPage.tabs().View(m.Theme, max(m.Width-l.tabsX, 0)), m.Width)
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
	// An overlay that takes every key shows its own; the others leave
	// the footer to what is under them.
	var bindings []key.Binding
	if top, ok := m.overlays.top(); ok {
		bindings = top.ShortHelp()
	}
	switch {
	case bindings != nil:
	case m.runPage.run.held() && m.runPage.run.state.Stop.Kind == engine.StopAsk && m.runPage.run.rerun == "replay":
		bindings = m.Keys.ReplayAskHelp()
	case m.runPage.run.held() && m.runPage.run.state.Stop.Kind == engine.StopAsk:
		bindings = m.Keys.AskHelp()
	case m.runPage.run.held():
		// A held run's keys act from either page.
		bindings = m.Keys.StopHelp()
	default:
		bindings = m.page.ShortHelp()
	}
	return common.Fit(" "+h.ShortHelpView(bindings), m.Width)
}

// overlayOn draws box centred on top of screen, over a blank cover of
// the page (the rect body): one blank column each side of the box, so
// that what shows of the panes beside it is never a stray character of
// their text against the box's edge, and, on a side where the box leaves
// the page no more than edgeCover cells, everything out to the page's
// edge, so no corner or side of a pane beneath shows in a sliver there.
// Above and below the box the same holds only where the cover already
// reaches both sides of the page: the rows there are then slivers of the
// whole width, pieces of borders; beside a narrower box they are the
// panes' own lines, which stay in view whole. The box itself stays where
// it was.
func overlayOn(screen, box string, width, height int, body rect) string {
	bw, bh := lipgloss.Width(box), lipgloss.Height(box)
	x, y := max((width-bw)/2, 0), max((height-bh)/2, 0)
	left, right := max(x-1, 0), min(x+bw+1, width)
	if left-body.x <= edgeCover {
		left = body.x
	}
	if body.x+body.w-right <= edgeCover {
		right = body.x + body.w
	}
	top, bottom := y, y+bh
	if wide := left == body.x && right == body.x+body.w; wide {
		if top-body.y <= edgeCover {
			top = min(body.y, top)
		}
		if body.y+body.h-bottom <= edgeCover {
			bottom = max(body.y+body.h, bottom)
		}
	}
	cover := strings.Join(common.Block(nil, max(right-left, 0), max(bottom-top, 0)), "\n")
	return lipgloss.NewCompositor(
		lipgloss.NewLayer(screen),
		lipgloss.NewLayer(cover).X(left).Y(top).Z(1),
		lipgloss.NewLayer(box).X(x).Y(y).Z(2),
	).Render()
}

// edgeCover is the widest gap, in cells, between an overlay and the
// page's edge that the overlay's blank cover fills: a narrower sliver of
// the panes beneath shows only pieces of their borders.
const edgeCover = 3

// placeOn draws box over screen with its top left corner at x, y.
func placeOn(screen, box string, x, y int) string {
	return lipgloss.NewCompositor(
		lipgloss.NewLayer(screen),
		lipgloss.NewLayer(box).X(x).Y(y).Z(1),
	).Render()
}
