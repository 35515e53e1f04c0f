package tui

import (
	"context"
	"io"
	"log/slog"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/debugger/workspace"
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/tui/breakpoints"
	"github.com/stepwise-dev/stepwise/tui/catalog"
	"github.com/stepwise-dev/stepwise/tui/cmdline"
	"github.com/stepwise-dev/stepwise/tui/common"
	"github.com/stepwise-dev/stepwise/tui/detail"
	"github.com/stepwise-dev/stepwise/tui/form"
	"github.com/stepwise-dev/stepwise/tui/inspector"
	"github.com/stepwise-dev/stepwise/tui/live"
	"github.com/stepwise-dev/stepwise/tui/problems"
	"github.com/stepwise-dev/stepwise/tui/runs"
	"github.com/stepwise-dev/stepwise/tui/runtree"
	"github.com/stepwise-dev/stepwise/tui/tree"
	"github.com/stepwise-dev/stepwise/tui/valueedit"
)

// pane names a focusable pane, in Tab order.
type pane int

const (
	paneTree pane = iota
	paneDetail
	paneBottom // the problems in the plan view, the threads in the run view
	paneCount
)

// model is the root of the workbench.
type model struct {
	common.Common // the window's size, the theme and the keymap
	ctx           context.Context
	title         string
	ws            *workspace.Workspace
	log           *slog.Logger
	logPath       string
	// now is the clock; tests set it so screens do not move.
	now func() time.Time

	// The plan view: the plan's tree, the step detail, the problems.
	tree     tree.Model
	detail   detail.Model
	problems problems.Model
	// The run view: the live tree of the run on show and its inspector.
	runTree   runtree.Model
	inspector *inspector.Model
	runView   bool
	run       *run

	// The command line and the overlays hold text fields, which are
	// large (a textarea is kilobytes); they are held by pointer so that
	// the model, copied on every message, stays small.
	cmdline    *cmdline.Model
	panels     *panels
	overlays   overlays
	tables     map[int]*debugger.Breakpoints // each plan's breakpoints
	watched    map[int]fileStamp             // each plan file as last read
	lastInputs map[string]map[string]any     // each plan file's last inputs, to fill its form with
	notice     notice
	quitArmed  bool // q was pressed while a run goes on
	focus      pane
	threadsSel int
}

func newModel(ctx context.Context, opts Options, withColor bool) model {
	c := common.New(common.NewTheme(true, withColor), common.DefaultKeyMap())
	log := opts.Log
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	m := model{
		Common:     c,
		ctx:        ctx,
		title:      opts.Title,
		ws:         opts.Workspace,
		log:        log,
		logPath:    opts.LogPath,
		now:        time.Now,
		tree:       tree.New(c, opts.Documents),
		detail:     detail.New(c),
		runTree:    runtree.New(c),
		inspector:  ptr(inspector.New(c)),
		cmdline:    ptr(cmdline.New(c)),
		panels:     newPanels(c, opts.LogPath),
		tables:     map[int]*debugger.Breakpoints{},
		watched:    map[int]fileStamp{},
		lastInputs: map[string]map[string]any{},
	}
	m.problems = problems.New(c, m.tree.Document().Report)
	for i := range m.tree.Len() {
		m.watched[i] = stampOf(m.tree.DocumentAt(i).Path)
	}
	m.syncBreakpointMarks()
	m.setFocus(paneTree)
	m.sync()
	return m
}

// Init asks the terminal for its background colour, so the theme can follow
// a light one, and starts watching the plan files for changes.
func (m model) Init() tea.Cmd {
	return tea.Batch(tea.RequestBackgroundColor, watch())
}

// Update handles a message: window and theme changes for everyone, keys for
// the overlay or the focused pane, mouse events for the pane under the
// pointer, and what runs, editors and forms send back.
func (m model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmd tea.Cmd
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.SetSize(msg.Width, msg.Height)
		m.relayout()
	case tea.BackgroundColorMsg:
		*m.Theme = *common.NewTheme(msg.IsDark(), m.Theme.Color)
		m.detail.Refresh()
		m.inspector.Refresh()
	case tea.KeyPressMsg:
		return m.key(msg)
	case tea.PasteMsg:
		cmd = m.forwardToOverlay(msg)
	case tea.MouseClickMsg:
		cmd = m.click(msg)
	case tea.MouseWheelMsg:
		cmd = m.wheel(msg)
	case stateMsg:
		cmd = m.onState(msg)
	case batchMsg:
		cmd = m.onBatch(msg)
	case tickMsg:
		cmd = m.onTick(msg)
	case watchMsg:
		cmd = m.onWatch()
	case editedMsg:
		m.onEdited(msg)
	case cmdline.Submitted:
		cmd = m.execute(msg.Instruction)
	case common.CloseOverlay:
		m.overlays.remove(msg.Overlay)
	case valueedit.Submitted:
		cmd = m.onValue(msg.Value)
	case form.Submitted:
		m.lastInputs[m.tree.Document().Path] = msg.Inputs
		cmd = m.startRun(m.tree.DocumentIndex(), msg.Inputs, m.panels.formDebug)
	case catalog.Insert:
		m.insertStep(msg.Tool)
	case serverToolsMsg:
		m.onServerTools(msg)
	case breakpoints.Action:
		m.onBreakpointAction(msg)
	case runs.Open:
		cmd = m.openStored(msg.ID)
	case runs.Replay:
		cmd = m.replay(msg.ID)
	case runs.Diff:
		cmd = m.diffRuns(msg.Base, msg.Other)
	case storedMsg:
		m.onStored(msg)
	case replayedMsg:
		cmd = m.onReplayed(msg)
	case runsFlushedMsg:
		m.refreshRuns()
	case diffMsg:
		m.onDiff(msg)
	default:
		cmd = m.forwardToOverlay(msg)
	}
	m.sync()
	return m, cmd
}

// forwardToOverlay passes other messages (a paste, a cursor's blink) to
// the command line while it is open, else to the overlay on top.
func (m *model) forwardToOverlay(msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	if m.cmdline.Active() {
		*m.cmdline, cmd = m.cmdline.Update(msg)
	} else if top, ok := m.overlays.top(); ok {
		_, cmd = top.Update(msg)
	}
	return cmd
}

// key handles a key press. An overlay or a text field takes it first;
// then the global keys (quitting, help, panes, runs and debugging, which
// work from every pane, so a held run can be moved on from anywhere); then
// the focused pane.
func (m model) key(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	keys := m.Keys
	if k.String() == "ctrl+c" {
		return m, m.quit()
	}
	if !key.Matches(k, keys.Quit) {
		m.quitArmed = false
	}
	var cmd tea.Cmd
	if handled, c := m.overlayKey(k); handled {
		m.sync()
		return m, c
	}
	switch {
	case key.Matches(k, keys.Quit):
		cmd = m.quit()
	case key.Matches(k, keys.Help):
		m.overlays.push(&m.panels.help, false)
	case key.Matches(k, keys.Command):
		m.cmdline.SetCompletions(m.completions())
		cmd = m.cmdline.Open()
	case key.Matches(k, keys.NextPane):
		m.cycleFocus(1)
	case key.Matches(k, keys.PrevPane):
		m.cycleFocus(-1)
	case key.Matches(k, keys.NextPlan):
		m.switchDocument(1)
	case key.Matches(k, keys.PrevPlan):
		m.switchDocument(-1)
	case key.Matches(k, keys.PlanView):
		m.togglePlanView()
	case key.Matches(k, keys.Run):
		cmd = m.askInputs(false)
	case key.Matches(k, keys.Debug):
		cmd = m.askInputs(true)
	case key.Matches(k, keys.Validate):
		m.validate()
	case key.Matches(k, keys.Next), key.Matches(k, keys.Jump) && m.run.held() && m.focus != paneBottom:
		cmd = m.next()
	case key.Matches(k, keys.StepIn):
		cmd = m.command(engine.Decision{}, debugger.StepIn)
	case key.Matches(k, keys.StepOut):
		cmd = m.command(engine.Decision{}, debugger.StepOut)
	case key.Matches(k, keys.Continue):
		cmd = m.command(engine.Decision{}, debugger.Continue)
	case key.Matches(k, keys.Skip):
		cmd = m.openValueEditor()
	case key.Matches(k, keys.Abort):
		cmd = m.abortRun()
	case key.Matches(k, keys.Pause):
		m.pauseRun()
	case key.Matches(k, keys.Breakpoint):
		m.toggleBreakpoint()
	case key.Matches(k, keys.BreakError):
		m.toggleBreakOnError()
	case key.Matches(k, keys.Breakpoints):
		m.openBreakpoints()
	case key.Matches(k, keys.Edit):
		cmd = m.edit()
	case key.Matches(k, keys.NewPlan):
		m.cmdline.SetCompletions(m.completions())
		cmd = m.cmdline.OpenWith("new ")
	case key.Matches(k, keys.Tools):
		cmd = m.openCatalog()
	case key.Matches(k, keys.Runs):
		cmd = m.openRuns()
	case key.Matches(k, keys.Fork) && m.runView:
		cmd = m.fork(m.selectedRunPath())
	case key.Matches(k, keys.Replay) && m.runView && m.run.stored != "":
		cmd = m.replay(m.run.stored)
	case key.Matches(k, keys.PrevTab, keys.NextTab) && m.runView:
		// The inspector's tabs turn from any pane: the tree keeps the
		// selection, the inspector shows another side of it.
		*m.inspector, cmd = m.inspector.Update(k)
	default:
		cmd = m.paneKey(k)
	}
	m.sync()
	return m, cmd
}

// overlayKey gives the key to the open text field or overlay, and reports
// whether it took it. Panels let the run keys through, so a held run can
// be moved on with the runs or breakpoints panel open.
func (m *model) overlayKey(k tea.KeyPressMsg) (bool, tea.Cmd) {
	var cmd tea.Cmd
	switch {
	case m.cmdline.Active():
		*m.cmdline, cmd = m.cmdline.Update(k)
		if !m.cmdline.Active() && cmd != nil {
			// The line was submitted: carry it out within this key
			// press, so that a key typed right after enter (a fast
			// typist, a paste, a script) already finds it done.
			if sub, ok := cmd().(cmdline.Submitted); ok {
				return true, m.execute(sub.Instruction)
			}
		}
		return true, cmd
	case m.inspector.Capturing():
		*m.inspector, cmd = m.inspector.Update(k)
		return true, cmd
	}
	top, ok := m.overlays.top()
	if !ok || top.panel && m.runKey(k) {
		return false, nil
	}
	_, cmd = top.Update(k)
	return true, cmd
}

// runKey reports whether a key moves a run on: those act with a panel
// open.
func (m *model) runKey(k tea.KeyPressMsg) bool {
	keys := m.Keys
	return m.run.held() && key.Matches(k, keys.Next, keys.StepIn, keys.StepOut, keys.Continue, keys.Skip, keys.Abort)
}

// paneKey gives a key to the focused pane.
func (m *model) paneKey(k tea.KeyPressMsg) tea.Cmd {
	var cmd tea.Cmd
	switch m.focus {
	case paneTree:
		if m.runView {
			m.runTree, cmd = m.runTree.Update(k)
		} else {
			m.tree, cmd = m.tree.Update(k)
		}
	case paneDetail:
		if m.runView {
			*m.inspector, cmd = m.inspector.Update(k)
		} else {
			m.detail, cmd = m.detail.Update(k)
		}
	case paneBottom:
		if m.runView {
			m.threadKey(k)
		} else if key.Matches(k, m.Keys.Jump) {
			m.jump()
		} else {
			m.problems, cmd = m.problems.Update(k)
		}
	}
	return cmd
}

// quit leaves the workbench; with a run going on, the first press says
// that quitting aborts it and the second does.
func (m *model) quit() tea.Cmd {
	if m.run.active() && !m.quitArmed {
		m.quitArmed = true
		m.notify(noticeError, "a run is going: q again aborts it and quits")
		return nil
	}
	if m.run.active() {
		m.run.cancel()
	}
	return tea.Quit
}

// next moves a held run over its stop; at a question it declines to
// answer, which is what moving on without an answer means there.
func (m *model) next() tea.Cmd {
	if m.run.held() && m.run.state.Stop.Kind == engine.StopAsk {
		move := debugger.Continue
		if m.run.debug {
			move = debugger.Next
		}
		return m.command(engine.Decision{Action: engine.Decline}, move)
	}
	return m.command(engine.Decision{}, debugger.Next)
}

// openValueEditor opens the editor for the value to inject, replace or
// answer at the stop the run is held at.
func (m *model) openValueEditor() tea.Cmd {
	if !m.run.held() {
		m.notify(noticeError, "s injects a value where a run is held; no run is held")
		return nil
	}
	snap := m.run.state.Stop
	m.overlays.push(&m.panels.editor, false)
	return m.panels.editor.Open(editTitle(snap), snap)
}

// onValue sends the edited value as the stop's decision; the run then
// goes on as next does.
func (m *model) onValue(v any) tea.Cmd {
	if !m.run.held() {
		return nil
	}
	// A debug run goes on to the next stop; a plain run, held only
	// because its plan asked, goes on to its end.
	move := debugger.Continue
	if m.run.debug {
		move = debugger.Next
	}
	return m.command(decisionFor(m.run.state.Stop.Kind, v), move)
}

// askInputs starts a run, asking for the plan's inputs first when it
// declares any.
func (m *model) askInputs(debug bool) tea.Cmd {
	d := m.tree.Document()
	if d.Plan != nil && d.Plan.InputSchema != nil && d.Report.OK() && m.ws != nil && !m.run.active() {
		m.panels.formDebug = debug
		m.overlays.push(&m.panels.form, false)
		cmd := m.panels.form.Open("inputs of "+d.Name(), d.Plan.InputSchema)
		m.panels.form.Fill(m.lastInputs[d.Path])
		return cmd
	}
	return m.startRun(m.tree.DocumentIndex(), nil, debug)
}

// jump takes the tree to the step of the selected problem and focuses it.
// It happens within the key press, not through a command, so a key typed
// right after Enter already acts on the tree.
func (m *model) jump() {
	if p, ok := m.problems.Selected(); ok {
		m.showRun(false)
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
	if m.run != nil && m.run.doc != m.tree.DocumentIndex() {
		m.showRun(false)
	}
	m.syncBreakpointMarks()
	// The problems pane's height follows the report; lay out again.
	m.relayout()
}

// showRun switches the tree and detail panes between the plan and the run
// on show.
func (m *model) showRun(on bool) {
	if on && m.run == nil {
		return
	}
	if on {
		if m.run.doc != m.tree.DocumentIndex() {
			m.tree.SetDocument(m.run.doc)
			m.problems.SetReport(m.tree.Document().Report)
		}
		m.runTree.SetTree(m.run.tree)
	}
	m.runView = on
	m.relayout()
}

func (m *model) togglePlanView() {
	if m.run == nil {
		m.notify(noticeError, "no run to show yet: r runs the plan, g debugs it, R opens an earlier run")
		return
	}
	m.showRun(!m.runView)
}

// sync points the detail pane or the inspector at the selection, and the
// other panes at what the run and the book hold now.
func (m *model) sync() {
	if !m.runView {
		m.detail.Show(m.tree.Document(), m.tree.DocumentIndex(), m.tree.Selected())
		return
	}
	row, ok := m.runTree.Selected()
	if !ok {
		m.inspector.Show(live.Node{}, nil)
		return
	}
	node, _ := m.run.tree.Node(row.Path)
	var snap *debugger.Snapshot
	if m.run.held() && m.run.state.Stop.Path == row.Path {
		snap = m.run.state.Stop
	}
	m.inspector.Show(node, snap)
}

func (m *model) selectedRunPath() string {
	if row, ok := m.runTree.Selected(); ok {
		return row.Path
	}
	return ""
}

// cycleFocus moves the focus to the next (1) or previous (-1) pane on
// screen.
func (m *model) cycleFocus(delta pane) {
	p := m.focus
	for range paneCount {
		p = (p + delta + paneCount) % paneCount
		if p != paneBottom || m.bottomShown() {
			break
		}
	}
	m.setFocus(p)
}

func (m *model) setFocus(p pane) {
	if p == paneBottom && !m.bottomShown() {
		p = paneTree
	}
	m.focus = p
	m.tree.Blur()
	m.detail.Blur()
	m.problems.Blur()
	m.runTree.Blur()
	m.inspector.Blur()
	switch p {
	case paneTree:
		m.tree.Focus()
		m.runTree.Focus()
	case paneDetail:
		m.detail.Focus()
		m.inspector.Focus()
	case paneBottom:
		m.problems.Focus()
	}
}

func ptr[T any](v T) *T { return &v }
