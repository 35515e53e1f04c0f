package tui

import (
	"slices"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/debugger/workspace"
	"github.com/stepwise-dev/stepwise/tui/common"
	"github.com/stepwise-dev/stepwise/tui/detail"
	"github.com/stepwise-dev/stepwise/tui/problems"
	"github.com/stepwise-dev/stepwise/tui/tabs"
	"github.com/stepwise-dev/stepwise/tui/tree"
)

// planPage is the plans the workbench has open and the one on show: the
// tree of its steps, the detail of the selected one beside it, and what
// checking the plan found below them.
type planPage struct {
	common.Common
	// open are the open plans, in tab order; current is the one on show.
	open     []openPlan
	current  int
	detail   detail.Model
	problems problems.Model
	focus    pane
	split    *split // the root's, shared with the run page
}

// openPlan is a plan file the workbench has open.
type openPlan struct {
	// tree is the plan's step tree, which keeps the selection where the
	// user left it, so that switching plans and back keeps the place.
	tree tree.Model
	// stamp is the file as last read, to notice a change made by another
	// program.
	stamp fileStamp
	// breakpoints is the plan's breakpoint table, opened on first use;
	// nil until then, and again once the file is read anew.
	breakpoints *debugger.Breakpoints
	// inputs are what the plan last ran with this session, to fill its
	// form with; before its first run the run store says.
	inputs map[string]any
}

// newPlanPage opens docs; with none it shows an empty plan, so that there
// is always one on show.
func newPlanPage(c common.Common, docs []workspace.Document, s *split) *planPage {
	if len(docs) == 0 {
		docs = []workspace.Document{{}}
	}
	p := &planPage{Common: c, detail: detail.New(c), split: s}
	for _, d := range docs {
		p.open = append(p.open, openPlan{tree: tree.New(c, d), stamp: stampOf(d.Path)})
	}
	p.problems = problems.New(c, p.document().Report)
	p.setFocus(paneTree)
	return p
}

// tree is the step tree of the plan on show.
func (p *planPage) tree() *tree.Model { return &p.open[p.current].tree }

// document is the plan on show.
func (p *planPage) document() workspace.Document { return p.documentAt(p.current) }

// documentAt is open plan i.
func (p *planPage) documentAt(i int) workspace.Document { return p.open[i].tree.Document() }

// count is how many plans are open.
func (p *planPage) count() int { return len(p.open) }

// show shows open plan i, where its selection was left, with its
// problems.
func (p *planPage) show(i int) {
	if i < 0 || i >= len(p.open) {
		return
	}
	p.tree().Blur()
	p.current = i
	p.problems.SetReport(p.document().Report)
	p.setFocus(p.focus)
}

// cycle shows the next (delta 1) or previous (delta -1) plan, wrapping
// around.
func (p *planPage) cycle(delta int) {
	n := len(p.open)
	p.show(((p.current+delta)%n + n) % n)
}

// replace puts plan i read again in place, keeping the selection on the
// same path where the new plan still has it. Its breakpoint table is
// opened again for the new plan.
func (p *planPage) replace(i int, doc workspace.Document) {
	o := &p.open[i]
	path := o.tree.Document().Path
	o.tree.Replace(doc)
	o.stamp = stampOf(path)
	o.breakpoints = nil
	p.detail.Forget()
	if i == p.current {
		p.problems.SetReport(doc.Report)
	}
}

// add opens another plan at its place among the tabs and returns its
// index; the plan on show stays on show.
func (p *planPage) add(doc workspace.Document) int {
	t := tree.New(p.Common, doc)
	l := p.layout()
	t.SetSize(l.tree.w, l.tree.h)
	// Tabs stay in the order of their names, as a launch opens them, so
	// that a plan keeps its place from one session to the next.
	i := len(p.open)
	for j := range p.open {
		if doc.Name() < p.documentAt(j).Name() {
			i = j
			break
		}
	}
	p.open = slices.Insert(p.open, i, openPlan{tree: t, stamp: stampOf(doc.Path)})
	if p.current >= i && len(p.open) > 1 {
		p.current++
	}
	return i
}

// remove closes open plan i; the plan on show stays on show, or the one
// before it takes its place.
func (p *planPage) remove(i int) {
	p.open = slices.Delete(p.open, i, i+1)
	switch {
	case p.current > i, p.current == i && p.current == len(p.open):
		p.current--
	}
	p.show(p.current)
}

// tabs is the open plans as the header's tabs.
func (p *planPage) tabs() tabs.Strip {
	docs := make([]workspace.Document, len(p.open))
	for i := range p.open {
		docs[i] = p.documentAt(i)
	}
	return tabs.Strip{Docs: docs, Current: p.current}
}

// layout places the panes; the problems pane lists at least its "no
// problems" line.
func (p *planPage) layout() paneLayout {
	return layoutPanes(p.Width, p.Height, max(p.problems.Len(), 1), *p.split, p.focus)
}

// SetSize gives the page its box and each pane its part of it. The
// problems pane's height follows the report, so a new report is laid out
// again through here too.
func (p *planPage) SetSize(width, height int) {
	p.Common.SetSize(width, height)
	l := p.layout()
	for i := range p.open {
		p.open[i].tree.SetSize(l.tree.w, l.tree.h)
	}
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
		*p.tree(), cmd = p.tree().Update(k)
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
		p.tree().SelectProblem(pr)
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
		p.tree().ClickAt(ms.Y - l.tree.y)
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
		p.tree().Scroll(delta)
	case paneDetail:
		p.detail.Scroll(delta)
	case paneBottom:
		p.problems.Scroll(delta)
	}
}

// View draws the tree and the detail side by side (or stacked), the
// problems under them.
func (p *planPage) View() string {
	return drawPanes(p.layout(), p.tree().View(), p.detail.View(), p.problems.View())
}

// ShortHelp is the workbench's keys.
func (p *planPage) ShortHelp() []key.Binding { return p.Keys.ShortHelp() }

func (p *planPage) sync() {
	p.detail.Show(p.document(), p.current, p.tree().Selected())
}

func (p *planPage) focused() pane { return p.focus }

func (p *planPage) setFocus(f pane) {
	zoomedAway := p.split.zoom && f != p.focus
	p.focus = f
	if zoomedAway {
		// A zoomed page shows the focused pane: the new one takes the
		// box.
		p.SetSize(p.Width, p.Height)
	}
	p.tree().Blur()
	p.detail.Blur()
	p.problems.Blur()
	switch f {
	case paneTree:
		p.tree().Focus()
	case paneDetail:
		p.detail.Focus()
	case paneBottom:
		p.problems.Focus()
	}
}

func (p *planPage) capturing() bool { return p.focus == paneTree && p.tree().Filtering() }

func (p *planPage) selectedPath() string { return p.tree().Selected().Path }

// status says nothing of the plan: its problems have their pane.
func (p *planPage) status() (string, string) { return "", "" }
