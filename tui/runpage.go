package tui

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/debugger/workspace"
	"github.com/stepwise-dev/stepwise/tui/approval"
	"github.com/stepwise-dev/stepwise/tui/common"
	"github.com/stepwise-dev/stepwise/tui/format"
	"github.com/stepwise-dev/stepwise/tui/inspector"
	"github.com/stepwise-dev/stepwise/tui/live"
	"github.com/stepwise-dev/stepwise/tui/runs"
	"github.com/stepwise-dev/stepwise/tui/runtree"
	"github.com/stepwise-dev/stepwise/tui/timeview"
	"github.com/stepwise-dev/stepwise/tui/valueedit"
)

// runPage is the run on show: its live tree, the inspector on the
// selected row beside it, and below them the run's threads (a debug
// run's live ones, or those of a run held with more than one) and its
// watches. It owns the runs' lifecycle (run.go) and the
// earlier runs (history.go), and posts what the root must do as messages.
type runPage struct {
	common.Common
	tree      runtree.Model
	inspector inspector.Model
	// chart is the run's Timeline or Spend, drawn in the inspector's
	// place while charting.
	chart    timeview.Model
	charting bool
	// run is the run on show: nil until one is started or opened.
	run   *run
	focus pane
	split *split // the root's, shared with the plan page
	// threadList is the threads pane's list, the selection kept on the
	// same thread as the list is read again.
	threadList common.ListPane[debugger.Thread]

	// What runs need of the workbench: the workspace they run in, the
	// context that ends with it, its log and its clock (tests set it, so
	// that screens do not move).
	ctx context.Context
	ws  *workspace.Workspace
	log *slog.Logger
	now func() time.Time
	// The overlays the page fills, which the root's overlay stack draws
	// once the page posts them: the value editor at a stop or for a fork,
	// the approval prompt, the earlier runs and their diff.
	editor   *valueedit.Model
	approval *approval.Model
	// forking is the fork whose value the editor has open; nil while the
	// editor is a stop's, or closed.
	forking   *forkDraft
	runsPanel *runs.Model
	diffPanel *runs.DiffModel
	// gate are the patterns of the tool calls the next runs hold for
	// approval (gate PATTERN...); none holds nothing.
	gate []string
	// watchList is the watch expressions every run reads at its stops
	// (watch PATH), kept from run to run as the breakpoints are, each
	// with the number the workbench gave it; lastWatch is the last number
	// given. A run's session numbers its own; the two lists stay in the
	// same order, so the workbench's numbers are the ones shown.
	watchList []debugger.WatchValue
	lastWatch int
	// pressed is the key the workbench is carrying out, "" when none (a
	// command typed on the line): the value editor it opens does not
	// type it.
	pressed string
	// editingArgs says the value editor is open on a held call's
	// arguments, so that what it gives is an edit, not an inject.
	editingArgs bool
	// abortArmed says abort was pressed once: the next press aborts, any
	// other key disarms it.
	abortArmed bool
	// posted are the messages for the root (a notice, the page to show,
	// an overlay to open), which it takes after each message it routes
	// here, in order, so that they land within the same update.
	posted []tea.Msg
}

// The messages the run page posts for the root, besides a notice.
type (
	// showRunMsg asks the root to show the run page, with the focus on
	// the run tree when focusTree.
	showRunMsg struct{ focusTree bool }
	// pushOverlay asks the root to open an overlay on the stack; panel
	// as the stack's layer says.
	pushOverlay struct {
		overlay common.Component
		panel   bool
	}
	// breakpointHitsMsg says a debug run came to a stop or ended: the
	// plan page marks its breakpoints again, and the breakpoints panel
	// shows the run's hits.
	breakpointHitsMsg struct{}
)

// forkFrom asks the workbench to fork the earlier run on show from the
// step at path, under the debugger when debug is set.
type forkFrom struct {
	path  string
	debug bool
}

func newRunPage(ctx context.Context, c common.Common, ws *workspace.Workspace, log *slog.Logger, panels *panels, s *split) *runPage {
	p := &runPage{Common: c, split: s, tree: runtree.New(c), inspector: inspector.New(c), chart: timeview.New(c), threadList: common.NewListPane[debugger.Thread](1, 2),
		ctx: ctx, ws: ws, log: log, now: time.Now, editor: &panels.editor, approval: &panels.approval, runsPanel: &panels.runs, diffPanel: &panels.diff}
	p.setFocus(paneTree)
	return p
}

// follow makes the run tree's selection follow the newest running row
// again.
func (p *runPage) follow() {
	switch {
	case p.run == nil:
		p.hint("no run to follow: r runs the plan, g debugs it")
		return
	case !p.run.active():
		p.notify(noticeError, "the run is over: nothing runs to follow")
		return
	}
	p.tree.SetFollow(true)
	p.post(showRunMsg{focusTree: false})
}

// jump selects the next row of a kind in the run tree (what names the
// kind, for the notice when there is none) and shows the run.
func (p *runPage) jump(to runtree.Target, what string) {
	if p.run == nil {
		p.hint("no run to look through: r runs the plan, g debugs it, R opens an earlier run")
		return
	}
	if !p.tree.Jump(to) {
		p.notify(noticeInfo, "no row of the run is "+what)
		return
	}
	// Say what was found: the row may be the one selected already.
	r, _ := p.tree.Selected()
	switch to {
	case runtree.NextFailed:
		p.notify(noticeInfo, "failed: "+r.Path)
	case runtree.NextHeld:
		th, waits := p.heldThreadAt(r.Path)
		switch {
		case r.Path == p.tree.Stop():
			p.notify(noticeInfo, "held now: "+r.Path)
		case waits:
			p.notify(noticeInfo, "held now: "+r.Path+", thread "+th.ID+" waits there (enter on it in Threads, or :thread "+th.ID+", makes it current)")
		default:
			p.notify(noticeInfo, "held: "+r.Path+", "+format.Duration(r.Held)+" at its stops")
		}
	case runtree.Slowest:
		p.notify(noticeInfo, "slowest: "+r.Path+", "+format.Duration(r.Duration-r.Held)+" own time")
	}
	p.post(showRunMsg{focusTree: true})
}

// post leaves a message for the root.
func (p *runPage) post(msg tea.Msg) { p.posted = append(p.posted, msg) }

// takePosted hands the root what the page posted, oldest first.
func (p *runPage) takePosted() []tea.Msg {
	posted := p.posted
	p.posted = nil
	return posted
}

// notify asks the root to say something on the status line.
func (p *runPage) notify(kind noticeKind, text string) { p.post(notice{kind: kind, text: text}) }

// hint asks the root to refuse what was asked, saying what to do instead,
// until the view changes (notice.hint).
func (p *runPage) hint(text string) { p.post(notice{kind: noticeError, text: text, hint: true}) }

// show makes r the run on show and asks the root to show the page.
func (p *runPage) show(r *run, focusTree bool) {
	p.run = r
	p.tree.SetTree(r.tree)
	p.tree.SetOrigin(r.origin)
	p.post(showRunMsg{focusTree})
}

func (p *runPage) layout() paneLayout {
	lines := 0
	if p.threadsShown() {
		lines = len(p.threads())
	}
	if p.watchesShown() {
		lines = max(lines, len(p.watchList))
	}
	return layoutPanes(p.Width, p.Height, lines, *p.split, p.focus)
}

// SetSize gives the page its box and each pane its part of it. The
// threads and watch panes come and go with the stops and the threads, so
// they are laid out again through here too.
func (p *runPage) SetSize(width, height int) {
	p.Common.SetSize(width, height)
	l := p.layout()
	p.tree.SetSize(l.tree.w, l.tree.h)
	p.inspector.SetSize(l.detail.w, l.detail.h)
	p.chart.SetSize(l.detail.w, l.detail.h)
	threads, _ := p.bottomPanes(l)
	p.threadList.SetListHeight(threads.h)
}

// Update takes a key for the focused pane (Tab moves the focus; the
// inspector's tabs turn from any pane; f and y fork and replay an earlier
// run), or the mouse for the pane under the pointer.
func (p *runPage) Update(msg tea.Msg) (common.Component, tea.Cmd) {
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

// replayKey asks for a replay of the run on show, under the debugger when
// debug is set, or says why it cannot be replayed yet.
func (p *runPage) replayKey(debug bool) tea.Cmd {
	id := p.run.recordID()
	switch {
	case id == "" && p.run.active():
		p.notify(noticeError, "the run is going: it can be replayed once it ends")
		return nil
	case id == "" || !p.recorded():
		p.notify(noticeError, "the run has no record to replay: R lists the recorded runs")
		return nil
	case debug:
		return common.Send(runs.ReplayDebug{ID: id})
	}
	return common.Send(runs.Replay{ID: id})
}

func (p *runPage) key(k tea.KeyPressMsg) tea.Cmd {
	keys := p.Keys
	var cmd tea.Cmd
	switch {
	case p.inspector.Capturing():
		p.inspector, cmd = p.inspector.Update(k)
	case p.tree.Filtering():
		p.tree, cmd = p.tree.Update(k)
	case key.Matches(k, keys.Search) && p.focus == paneTree:
		p.tree.StartFilter()
	case key.Matches(k, keys.NextPane):
		p.setFocus(nextPane(p.focus, 1, p.threadsShown()))
	case key.Matches(k, keys.PrevPane):
		p.setFocus(nextPane(p.focus, -1, p.threadsShown()))
	case key.Matches(k, keys.Fork, keys.ForkDebug):
		cmd = common.Send(forkFrom{p.selectedPath(), key.Matches(k, keys.ForkDebug)})
	case key.Matches(k, keys.Replay, keys.ReplayDebug):
		cmd = p.replayKey(key.Matches(k, keys.ReplayDebug))
	case key.Matches(k, keys.PrevTab, keys.NextTab):
		// The inspector's tabs turn from any pane: the tree keeps the
		// selection, the inspector shows another side of it.
		p.inspector, cmd = p.inspector.Update(k)
	case p.charting && p.chart.Mode() == timeview.ModeTimeline && key.Matches(k, keys.ZoomIn, keys.ZoomOut):
		// The tree has no use for + and -: they zoom the timeline on
		// show from whichever pane has the focus.
		p.chart, cmd = p.chart.Update(k)
	case p.focus == paneTree:
		p.tree, cmd = p.tree.Update(k)
	case p.focus == paneDetail && p.charting:
		p.chart, cmd = p.chart.Update(k)
		p.selectBar()
	case p.focus == paneDetail:
		p.inspector, cmd = p.inspector.Update(k)
	default:
		cmd = p.threadKey(k)
	}
	return cmd
}

// click selects what is under the pointer and focuses its pane.
func (p *runPage) click(ms tea.Mouse) {
	l := p.layout()
	at, ok := clickAt(l, ms)
	if !ok {
		return
	}
	threads, _ := p.bottomPanes(l)
	if at == paneBottom && !threads.contains(ms.X, ms.Y) {
		// The watch pane only shows; it takes no keys.
		return
	}
	p.setFocus(at)
	switch at {
	case paneTree:
		p.tree.ClickAt(ms.Y - l.tree.y)
	case paneDetail:
		if p.charting {
			p.chart.ClickAt(ms.Y - l.detail.y)
			p.selectBar()
			return
		}
		p.inspector.ClickAt(ms.X-l.detail.x, ms.Y-l.detail.y)
	case paneBottom:
		p.threadList.ClickAt(ms.Y - threads.y)
	}
}

// wheel scrolls the tree, the inspector or the threads under the
// pointer, focused or not.
func (p *runPage) wheel(msg tea.MouseWheelMsg) {
	at, delta, ok := wheelAt(p.layout(), msg)
	if !ok {
		return
	}
	switch at {
	case paneTree:
		p.tree.Scroll(delta)
	case paneDetail:
		if p.charting {
			p.chart.Wheel(msg)
			return
		}
		p.inspector.Scroll(delta)
	case paneBottom:
		p.threadList.Scroll(delta)
	}
}

// View draws the run tree and the inspector side by side (or stacked),
// the threads and the watches under them.
func (p *runPage) View() string {
	l := p.layout()
	detail := p.inspector.View()
	if p.charting {
		if p.run != nil {
			p.chart.Show(p.run.timeline)
			p.chart.Select(p.selectedPath())
		}
		detail = p.chart.View()
	}
	return drawPanes(l, p.tree.View(), detail, p.bottomView(l))
}

// toggleChart shows the run's timeline or spend in the inspector's place,
// or the inspector again when it shows already.
func (p *runPage) toggleChart(mode timeview.Mode) {
	if p.run == nil {
		p.hint("no run to chart: r runs the plan, R opens an earlier run")
		return
	}
	p.charting = !(p.charting && p.chart.Mode() == mode)
	p.chart.SetMode(mode)
	p.post(showRunMsg{focusTree: false})
}

// selectBar selects in the run tree the row of the bar the chart selected.
func (p *runPage) selectBar() {
	if path := p.chart.Selected(); path != "" && path != p.selectedPath() {
		p.tree.SelectPath(path)
		p.sync()
	}
}

// ShortHelp is the workbench's keys; the root shows a stop's while the
// run is held, on either page.
func (p *runPage) ShortHelp() []key.Binding { return p.Keys.ShortHelp() }

// sync points the inspector at the selected row, with the stop when the
// run is held there.
func (p *runPage) sync() {
	row, ok := p.tree.Selected()
	if !ok {
		p.inspector.Show(live.Node{}, nil)
		return
	}
	node, _ := p.run.tree.Node(row.Path)
	var snap *debugger.Snapshot
	if p.run.held() && p.run.state.Stop.Path == row.Path {
		snap = p.run.state.Stop
	}
	p.inspector.Show(node, snap)
}

func (p *runPage) focused() pane { return p.focus }

func (p *runPage) setFocus(f pane) {
	if f == paneBottom && !p.threadsShown() {
		f = paneTree
	}
	zoomedAway := p.split.zoom && f != p.focus
	p.focus = f
	if zoomedAway {
		// A zoomed page shows the focused pane: the new one takes the
		// box.
		p.SetSize(p.Width, p.Height)
	}
	p.tree.Blur()
	p.inspector.Blur()
	p.chart.Blur()
	switch f {
	case paneTree:
		p.tree.Focus()
	case paneDetail:
		p.inspector.Focus()
		p.chart.Focus()
	}
}

func (p *runPage) capturing() bool { return p.inspector.Capturing() || p.tree.Filtering() }

func (p *runPage) selectedPath() string {
	if row, ok := p.tree.Selected(); ok {
		return row.Path
	}
	return ""
}

// status is where the run stands, on the left, and what it has spent, on
// the right.
func (p *runPage) status() (string, string) {
	if p.run == nil {
		return "", ""
	}
	return p.runStatus(), p.spendStatus()
}

// runStatus says where the run on show stands: held where and why, going
// on, or how it ended.
func (p *runPage) runStatus() string {
	t, r := p.Theme, p.run
	tot := r.tree.Totals()
	switch {
	case r.stored != "":
		return t.Strong.Render("run "+format.ShortID(r.stored)) + t.Muted.Render(" (earlier, read-only) ") + endWord(t, tot.RunStatus)
	case r.held():
		st := r.state.Stop
		s := t.Glyph.Render("⏸ held") + " at " + t.Strong.Render(st.Path) + t.Muted.Render(" ("+string(st.Kind)+")")
		if reason := reasonWords(r); reason != "" {
			s += t.Muted.Render(" · " + reason)
		}
		if st.Reused {
			s += t.Muted.Render(" · going on reuses its recorded result")
		}
		return s
	case r.active():
		s := t.Valid.Render("● running")
		if tot.Running > 0 {
			s += t.Muted.Render(" " + common.Count(tot.Running, "step"))
		}
		if lists := r.tree.Lists(); len(lists) > 0 {
			// The first map under way, in full: the tree's row has room
			// for its count alone.
			l := lists[0]
			s += t.Muted.Render(" · " + l.Path + " " + strings.Join(l.List.Words(r.tree.Now()), " · "))
		}
		if r.debug {
			s += t.Muted.Render(" · debug")
		}
		if p.tree.Following() {
			s += t.Muted.Render(" · following")
		} else {
			s += t.Muted.Render(" · " + p.Keys.Follow.Help().Key + " follows")
		}
		return s
	}
	return endWord(t, r.state.Status)
}

// spendStatus is the run's elapsed time, calls, tokens and cost.
func (p *runPage) spendStatus() string {
	tot := p.run.tree.Totals()
	parts := []string{format.Duration(tot.Elapsed)}
	if tot.Spend.Calls > 0 {
		parts = append(parts, common.Count(tot.Spend.Calls, "call"),
			format.Tokens(tot.Spend.Tokens())+" tok")
		if c := tot.Spend.Cost(); c != nil {
			parts = append(parts, format.Cost(*c))
		}
	}
	return strings.Join(parts, " · ")
}
