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
	"github.com/stepwise-dev/stepwise/tui/approval"
	"github.com/stepwise-dev/stepwise/tui/breakpoints"
	"github.com/stepwise-dev/stepwise/tui/catalog"
	"github.com/stepwise-dev/stepwise/tui/cmdline"
	"github.com/stepwise-dev/stepwise/tui/common"
	"github.com/stepwise-dev/stepwise/tui/form"
	"github.com/stepwise-dev/stepwise/tui/palette"
	"github.com/stepwise-dev/stepwise/tui/runs"
	"github.com/stepwise-dev/stepwise/tui/runtree"
	"github.com/stepwise-dev/stepwise/tui/timeview"
	"github.com/stepwise-dev/stepwise/tui/valueedit"
)

// model is the root of the workbench. It routes messages: keys to the
// command line, the overlay on top or the page on show, after the
// workbench's own; the mouse to what is under it; and what runs, editors
// and panels send back to the actions they ask for. It lays out the
// header, the page, the overlay and the status line, nothing more.
type model struct {
	common.Common // the window's size, the theme and the keymap
	ctx           context.Context
	title         string
	ws            *workspace.Workspace
	log           *slog.Logger

	// The two pages, and the one on show.
	planPage *planPage
	runPage  *runPage
	page     page

	// The command line and the overlays hold text fields, which are
	// large (a textarea is kilobytes); they are held by pointer so that
	// the model, copied on every message, stays small.
	cmdline  *cmdline.Model
	panels   *panels
	overlays overlays
	// split is where the user put the border between the tree and the
	// detail pane, and whether a pane is zoomed, on both pages.
	split *split

	notice notice
	// noticeSeq numbers the notices said.
	noticeSeq int
	quitArmed bool // q was pressed while a run goes on
	// followPlanFiles says the tabs follow the plan files on the plan
	// paths (Options.FollowPlanFiles).
	followPlanFiles bool
}

func newModel(ctx context.Context, opts Options, withColor bool) model {
	c := common.New(common.NewTheme(true, withColor), common.DefaultKeyMap())
	log := opts.Log
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	panels := newPanels(c, opts.LogPath)
	s := &split{}
	m := model{
		Common:          c,
		ctx:             ctx,
		title:           opts.Title,
		followPlanFiles: opts.FollowPlanFiles,
		ws:              opts.Workspace,
		log:             log,
		planPage:        newPlanPage(c, opts.Documents, s),
		runPage:         newRunPage(ctx, c, opts.Workspace, log, panels, s),
		cmdline:         ptr(cmdline.New(c)),
		panels:          panels,
		split:           s,
	}
	m.page = m.planPage
	if m.ws != nil {
		// The workbench reopens on the plan it showed last.
		shown := m.ws.ShownPlan()
		for i := range m.planPage.count() {
			if d := m.planPage.documentAt(i); shown != "" && d.Name() == shown {
				m.planPage.show(i)
				m.planPage.problems.SetReport(d.Report)
			}
		}
	}
	if opts.Notice != "" {
		m.notify(noticeInfo, opts.Notice)
	}
	m.syncBreakpointMarks()
	m.sync()
	return m
}

// Init asks the terminal for its background colour, so the theme can follow
// a light one, and starts watching the plan files for changes.
func (m model) Init() tea.Cmd {
	return tea.Batch(tea.RequestBackgroundColor, watch())
}

// Update handles a message, then what the run page posted while it took
// it, within the same update.
func (m model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	shown, said := m.shown(), m.notice
	cmd := m.route(msg)
	for posted := m.runPage.takePosted(); len(posted) > 0; posted = m.runPage.takePosted() {
		for _, p := range posted {
			cmd = tea.Batch(cmd, m.route(p))
		}
	}
	if m.notice.hint && m.notice == said && m.shown() != shown {
		// A hint about the view left (no run to chart, with the runs
		// list now open) no longer applies.
		m.notice = notice{}
	}
	if n := m.notice; n.seq != said.seq && n.text != "" && n.kind != noticeConfirm {
		// A notice goes after a while; a warning goes with the next key.
		cmd = tea.Batch(cmd, tea.Tick(noticeLife, func(time.Time) tea.Msg { return noticeExpired{n.seq} }))
	}
	if m.overlays.isOpen(&m.panels.catalog) {
		// A run that starts or ends under the open catalog changes
		// whether it may add a step.
		m.panels.catalog.SetAddRefusal(m.addStepRefusal())
	}
	m.sync()
	return m, cmd
}

// view is what the workbench shows: the page, the overlay on top, and
// whether the run page charts the run and how.
type view struct {
	page     page
	overlay  common.Component
	charting bool
	chart    timeview.Mode
}

func (m *model) shown() view {
	v := view{page: m.page, charting: m.runPage.charting, chart: m.runPage.chart.Mode()}
	if top, ok := m.overlays.top(); ok {
		v.overlay = top.Component
	}
	return v
}

// route takes one message: window and theme changes for everyone, keys
// for the overlay on top or the page, mouse events for what is under the
// pointer, what runs, editors, forms and panels send back, and what the
// run page asks of the root.
func (m *model) route(msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.SetSize(msg.Width, msg.Height)
		m.relayout()
	case tea.BackgroundColorMsg:
		*m.Theme = *common.NewTheme(msg.IsDark(), m.Theme.Color)
		m.planPage.detail.Refresh()
		m.runPage.inspector.Refresh()
	case tea.KeyPressMsg:
		cmd = m.key(msg)
	case tea.PasteMsg:
		cmd = m.forwardToOverlay(msg)
	case tea.MouseClickMsg:
		cmd = m.click(msg)
	case tea.MouseMotionMsg:
		m.drag(msg.Mouse())
	case tea.MouseReleaseMsg:
		m.split.dragging = false
	case tea.MouseWheelMsg:
		cmd = m.wheel(msg)
	case noticeExpired:
		m.expireNotice(msg.seq)
	case notice:
		if msg.text == "" {
			m.notice = msg // a run that moved on clears what was said
		} else {
			m.notify(msg.kind, msg.text)
			m.notice.hint = msg.hint
		}
	case showRunMsg:
		m.showRun(true)
		if msg.focusTree {
			m.page.setFocus(paneTree)
		}
	case pushOverlay:
		m.overlays.push(msg.overlay, msg.panel)
	case breakpointHitsMsg:
		m.syncBreakpointMarks()
	case stateMsg:
		cmd = m.runPage.onState(msg)
	case batchMsg:
		cmd = m.runPage.onBatch(msg)
	case tickMsg:
		cmd = m.runPage.onTick(msg)
	case watchMsg:
		cmd = m.onWatch()
	case editedMsg:
		m.onEdited(msg)
	case cmdline.Submitted:
		cmd = m.execute(msg.Instruction)
	case cmdline.Refused:
		m.notify(noticeError, msg.Err.Error())
	case common.CloseOverlay:
		m.overlays.remove(msg.Overlay)
		if msg.Then != nil {
			cmd = m.route(msg.Then)
		}
	case valueedit.Submitted:
		cmd = m.runPage.onValue(msg.Value)
	case approval.Chosen:
		cmd = m.runPage.answerApproval(msg.Answer)
	case form.Submitted:
		m.planPage.open[m.planPage.current].inputs = msg.Inputs
		cmd = m.startRun(msg.Inputs, m.panels.formDebug)
	case catalog.Insert:
		m.insertStep(msg.Tool)
	case serverToolsMsg:
		m.onServerTools(msg)
	case palette.Chosen:
		cmd = m.choose(msg.Item)
	case breakpoints.Action:
		m.onBreakpointAction(msg)
	case runs.Open:
		cmd = m.runPage.openStored(msg.ID, m.planPage.current, m.planPage.document().Plan)
	case runs.Replay:
		cmd = m.runPage.replay(msg.ID, m.planPage.current, m.planPage.document())
	case forkFrom:
		var table *debugger.Breakpoints
		if msg.debug {
			table = m.breakpoints(m.planPage.current)
		}
		cmd = m.runPage.fork(msg.path, m.planPage.current, m.planPage.document(), table)
	case runs.ReplayDebug:
		cmd = m.runPage.replayUnderDebugger(msg.ID, m.planPage.current, m.planPage.document(), m.breakpoints(m.planPage.current))
	case runs.Diff:
		cmd = m.runPage.diffRuns(msg.Base, msg.Other)
	case storedMsg:
		m.runPage.onStored(msg)
	case replayedMsg:
		cmd = m.runPage.onReplayed(msg)
	case runsFlushedMsg:
		m.runPage.refreshRuns(m.planPage.document().Name())
	case diffMsg:
		m.runPage.onDiff(msg)
	default:
		cmd = m.forwardToOverlay(msg)
	}
	return cmd
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

// key handles a key press. A text field or the overlay on top takes it
// first; then the workbench's own keys (quitting, help, plans, runs and
// debugging, which work from every pane, so a held run can be moved on
// from anywhere); then the page on show, which gives it to its focused
// pane.
func (m *model) key(k tea.KeyPressMsg) tea.Cmd {
	keys := m.Keys
	if k.String() == "ctrl+c" {
		return m.quit()
	}
	if m.notice.kind == noticeConfirm {
		// The warning was for this key press only: the key that did
		// not confirm keeps the run, and the key that did says anew.
		m.notice = notice{}
	}
	if !key.Matches(k, keys.Quit) {
		m.quitArmed = false
	}
	if !key.Matches(k, keys.Abort) {
		m.runPage.abortArmed = false
	}
	var cmd tea.Cmd
	if handled, c := m.overlayKey(k); handled {
		return c
	}
	m.runPage.pressed = k.String()
	defer func() { m.runPage.pressed = "" }()
	switch {
	case key.Matches(k, keys.Quit):
		cmd = m.quit()
	case key.Matches(k, keys.Output):
		m.openOutput()
	case key.Matches(k, keys.Palette):
		m.overlays.push(&m.panels.palette, false)
		cmd = m.panels.palette.Open()
	case key.Matches(k, keys.Help):
		m.panels.help.Open()
		m.overlays.push(&m.panels.help, false)
	case key.Matches(k, keys.Command):
		m.cmdline.SetCompletions(m.completions())
		cmd = m.cmdline.Open()
	case key.Matches(k, keys.NextPlan):
		m.switchDocument(1)
	case key.Matches(k, keys.PrevPlan):
		m.switchDocument(-1)
	case key.Matches(k, keys.PlanView):
		m.togglePlanView()
	case key.Matches(k, keys.Narrower):
		m.resizeTree(-splitStep)
	case key.Matches(k, keys.Wider):
		m.resizeTree(splitStep)
	case key.Matches(k, keys.Zoom):
		m.toggleZoom()
	case key.Matches(k, keys.Follow):
		m.runPage.follow()
	case key.Matches(k, keys.NextFailed):
		m.runPage.jump(runtree.NextFailed, "failed")
	case key.Matches(k, keys.NextHeld):
		m.runPage.jump(runtree.NextHeld, "held at a stop")
	case key.Matches(k, keys.Slowest):
		m.runPage.jump(runtree.Slowest, "timed")
	case key.Matches(k, keys.Timeline):
		m.runPage.toggleChart(timeview.ModeTimeline)
	case key.Matches(k, keys.Spend):
		m.runPage.toggleChart(timeview.ModeSpend)
	case key.Matches(k, keys.Search) && !m.runShown() && m.planPage.focused() != paneTree:
		m.notify(noticeError, "/ filters the tree: tab to it; a run's inspector is searched with it too (P shows the run, r runs the plan)")
	case key.Matches(k, keys.Copy):
		cmd = m.copyValue()
	case key.Matches(k, keys.CopyPath):
		cmd = m.copyPath()
	case key.Matches(k, keys.Run):
		cmd = m.askInputs(false)
	case key.Matches(k, keys.Debug):
		cmd = m.askInputs(true)
	case key.Matches(k, keys.Validate):
		m.validate()
	case key.Matches(k, keys.Next), key.Matches(k, keys.Jump) && m.runPage.run.held() && m.page.focused() != paneBottom:
		cmd = m.runPage.next()
	case key.Matches(k, keys.StepIn):
		cmd = m.runPage.command(debugger.Command{Move: debugger.StepIn})
	case key.Matches(k, keys.StepOut):
		cmd = m.runPage.command(debugger.Command{Move: debugger.StepOut})
	case key.Matches(k, keys.Continue):
		cmd = m.runPage.command(debugger.Command{Move: debugger.Continue})
	case key.Matches(k, keys.Skip):
		cmd = m.runPage.openValueEditor()
	case key.Matches(k, keys.Abort):
		cmd = m.runPage.abortRun()
	case key.Matches(k, keys.Pause):
		m.runPage.pauseRun()
	case key.Matches(k, keys.Print):
		m.cmdline.SetCompletions(m.completions())
		cmd = m.cmdline.OpenWith("print ")
	case key.Matches(k, keys.Breakpoint):
		m.toggleBreakpoint()
	case key.Matches(k, keys.Delete):
		m.clearRowBreakpoints()
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
		cmd = m.runPage.openRuns(m.planPage.document().Name())
	default:
		_, cmd = m.page.Update(k)
	}
	return cmd
}

// overlayKey gives the key to the open text field or overlay, and reports
// whether it took it. A panel is modal: it takes every key but :, which
// opens the command line over it, so a command typed there reaches the
// line and not the panel's own keys.
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
	case m.page.capturing():
		_, cmd = m.page.Update(k)
		return true, cmd
	}
	top, ok := m.overlays.top()
	if !ok || top.panel && key.Matches(k, m.Keys.Command) || top.docked && !m.panels.output.Takes(k) {
		return false, nil
	}
	_, cmd = top.Update(k)
	return true, cmd
}

// openOutput shows the output pane at its end, what was said last.
func (m *model) openOutput() {
	m.panels.output.ShowEnd()
	m.overlays.dock(&m.panels.output)
}

// choose does what the entry chosen in the palette stands for: what its
// key does, or its command; a command that needs arguments opens the :
// line with its verb typed, for them.
func (m *model) choose(it palette.Item) tea.Cmd {
	if it.Verb == "" {
		return m.key(it.Press)
	}
	if it.Args {
		m.cmdline.SetCompletions(m.completions())
		return m.cmdline.OpenWith(string(it.Verb) + " ")
	}
	in, err := debugger.ParseCommand(string(it.Verb))
	if err != nil {
		m.notify(noticeError, err.Error())
		return nil
	}
	return m.execute(in)
}

// quit leaves the workbench; with a run going on, the first press says
// that quitting aborts it and the second does.
func (m *model) quit() tea.Cmd {
	if m.runPage.run.active() && !m.quitArmed {
		m.quitArmed = true
		m.notify(noticeConfirm, "a run is going: "+m.Keys.Quit.Help().Key+" again aborts it and quits · any other key keeps it")
		return nil
	}
	if m.runPage.run.active() {
		m.runPage.run.cancel()
	}
	return tea.Quit
}

// askInputs starts a run, asking for the plan's inputs first when it
// declares any.
func (m *model) askInputs(debug bool) tea.Cmd {
	d := m.planPage.document()
	if d.Plan != nil && d.Plan.InputSchema != nil && d.Report.OK() && m.ws != nil && !m.runPage.run.active() {
		m.panels.formDebug = debug
		m.overlays.push(&m.panels.form, false)
		cmd := m.panels.form.Open("inputs of "+d.Name(), d.Plan.InputSchema)
		if debug {
			m.panels.form.SetStarts("debug")
		}
		inputs := m.planPage.open[m.planPage.current].inputs
		if inputs == nil {
			// Nothing ran this session: the last session's run says.
			inputs = m.runPage.lastInputs(d.Name())
		}
		m.panels.form.Fill(inputs)
		return cmd
	}
	return m.startRun(nil, debug)
}

// startRun runs the plan on show with inputs on the run page; a debug run
// stops by the plan's breakpoint table.
func (m *model) startRun(inputs map[string]any, debug bool) tea.Cmd {
	var table *debugger.Breakpoints
	if debug {
		table = m.breakpoints(m.planPage.current)
	}
	return m.runPage.startRun(m.planPage.current, m.planPage.document(), inputs, debug, table)
}

// switchDocument shows the next or previous plan in every pane.
func (m *model) switchDocument(delta int) {
	if m.planPage.count() < 2 {
		return
	}
	m.planPage.cycle(delta)
	// What was said was about the plan left, or its run.
	m.notice = notice{}
	m.documentChanged()
}

func (m *model) documentChanged() {
	m.planPage.problems.SetReport(m.planPage.document().Report)
	if m.ws != nil {
		if err := m.ws.KeepShownPlan(m.planPage.document().Name()); err != nil {
			m.log.Warn(err.Error())
		}
	}
	if m.runPage.run != nil && m.runPage.run.doc != m.planPage.current {
		m.showRun(false)
	}
	m.syncBreakpointMarks()
	// The problems pane's height follows the report; lay out again.
	m.relayout()
}

// showRun shows the run page (on) or the plan page. The focus stays on
// the same pane, where the other page lays it out. The run page has its
// run's tree already: it sets it when it takes a run on show.
func (m *model) showRun(on bool) {
	run := m.runPage.run
	if on && run == nil {
		return
	}
	var next page = m.planPage
	if on {
		if run.doc != m.planPage.current {
			m.planPage.show(run.doc)
			m.planPage.problems.SetReport(m.planPage.document().Report)
		}
		next = m.runPage
	}
	focus := m.page.focused()
	m.page = next
	m.relayout()
	next.setFocus(focus)
}

// runShown reports whether the run page is on show.
func (m *model) runShown() bool { return m.page == page(m.runPage) }

func (m *model) togglePlanView() {
	if m.runPage.run == nil {
		m.hint("no run to show yet: r runs the plan, g debugs it, R opens an earlier run")
		return
	}
	// What was said belongs to the view left; the output pane keeps it.
	m.notice = notice{}
	m.showRun(!m.runShown())
}

// sync points the detail pane of the page on show at its selection.
func (m *model) sync() { m.page.sync() }

func ptr[T any](v T) *T { return &v }
