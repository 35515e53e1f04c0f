package tui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/stepwise-dev/stepwise/tui/common"
	"github.com/stepwise-dev/stepwise/tui/detail"
	"github.com/stepwise-dev/stepwise/tui/problems"
	"github.com/stepwise-dev/stepwise/tui/tree"
)

// planPage is the plan on show: the tree of its steps, the detail of the
// selected one beside it, and what checking the plan found below them.
type planPage struct {
	common.Common
	tree     tree.Model
	detail   detail.Model
	problems problems.Model
	focus    pane
}

func newPlanPage(c common.Common, docs []Document) *planPage {
	p := &planPage{Common: c, tree: tree.New(c, docs), detail: detail.New(c)}
	p.problems = problems.New(c, p.tree.Document().Report)
	p.setFocus(paneTree)
	return p
}

// layout places the panes; the problems pane lists at least its "no
// problems" line.
func (p *planPage) layout() paneLayout {
	return layoutPanes(p.Width, p.Height, max(p.problems.Len(), 1))
}

// SetSize gives the page its box and each pane its part of it. The
// problems pane's height follows the report, so a new report is laid out
// again through here too.
func (p *planPage) SetSize(width, height int) {
	p.Common.SetSize(width, height)
	l := p.layout()
	p.tree.SetSize(l.tree.w, l.tree.h)
	p.detail.SetSize(l.detail.w, l.detail.h)
	p.problems.SetSize(l.bottom.w, l.bottom.h)
}

// Update takes a key for the focused pane (Tab moves the focus), or the
// mouse for the pane under the pointer.
func (p *planPage) Update(msg tea.Msg) (common.Component, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		return p, p.key(msg)
	case tea.MouseClickMsg:
		p.click(msg.Mouse())
	case tea.MouseWheelMsg:
		p.wheel(msg)
	}
	return p, nil
}

func (p *planPage) key(k tea.KeyPressMsg) tea.Cmd {
	var cmd tea.Cmd
	switch {
	case key.Matches(k, p.Keys.NextPane):
		p.setFocus(nextPane(p.focus, 1, true))
	case key.Matches(k, p.Keys.PrevPane):
		p.setFocus(nextPane(p.focus, -1, true))
	case p.focus == paneTree:
		p.tree, cmd = p.tree.Update(k)
	case p.focus == paneDetail:
		p.detail, cmd = p.detail.Update(k)
	case key.Matches(k, p.Keys.Jump):
		p.jump()
	default:
		p.problems, cmd = p.problems.Update(k)
	}
	return cmd
}

// jump takes the tree to the step of the selected problem and focuses it.
// It happens within the key press, not through a command, so a key typed
// right after Enter already acts on the tree.
func (p *planPage) jump() {
	if pr, ok := p.problems.Selected(); ok {
		p.tree.SelectProblem(pr)
		p.setFocus(paneTree)
	}
}

// click selects what is under the pointer and focuses its pane.
func (p *planPage) click(ms tea.Mouse) {
	l := p.layout()
	at, ok := clickAt(l, ms)
	if !ok {
		return
	}
	p.setFocus(at)
	switch at {
	case paneTree:
		p.tree.ClickAt(ms.Y - l.tree.y)
	case paneBottom:
		p.problems.ClickAt(ms.Y - l.bottom.y)
	}
}

// wheel scrolls the pane under the pointer, focused or not.
func (p *planPage) wheel(msg tea.MouseWheelMsg) {
	at, delta, ok := wheelAt(p.layout(), msg)
	if !ok {
		return
	}
	switch at {
	case paneTree:
		p.tree.Scroll(delta)
	case paneDetail:
		p.detail.Scroll(delta)
	case paneBottom:
		p.problems.Scroll(delta)
	}
}

// View draws the tree and the detail side by side (or stacked), the
// problems under them.
func (p *planPage) View() string {
	return drawPanes(p.layout(), p.tree.View(), p.detail.View(), p.problems.View())
}

// ShortHelp is the workbench's keys.
func (p *planPage) ShortHelp() []key.Binding { return p.Keys.ShortHelp() }

func (p *planPage) sync() {
	p.detail.Show(p.tree.Document(), p.tree.DocumentIndex(), p.tree.Selected())
}

func (p *planPage) focused() pane { return p.focus }

func (p *planPage) setFocus(f pane) {
	p.focus = f
	p.tree.Blur()
	p.detail.Blur()
	p.problems.Blur()
	switch f {
	case paneTree:
		p.tree.Focus()
	case paneDetail:
		p.detail.Focus()
	case paneBottom:
		p.problems.Focus()
	}
}

func (p *planPage) capturing() bool { return false }

func (p *planPage) selectedPath() string { return p.tree.Selected().Path }

// status says nothing of the plan: its problems have their pane.
func (p *planPage) status() (string, string) { return "", "" }
