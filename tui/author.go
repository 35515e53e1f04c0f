package tui

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/stepwise-dev/stepwise/debugger/workspace"
	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/tui/common"
)

// fileStamp is what the workbench last saw of a plan file, to notice a
// change made by another program.
type fileStamp struct {
	mod  time.Time
	size int64
}

func stampOf(path string) fileStamp {
	if path == "" {
		return fileStamp{}
	}
	info, err := os.Stat(path)
	if err != nil {
		return fileStamp{}
	}
	return fileStamp{info.ModTime(), info.Size()}
}

// watchMsg asks the workbench to look at its plan files again.
type watchMsg struct{}

// watchEvery is how often the plan files are looked at. Polling a handful
// of files costs nothing, works on every file system and editor (those
// that replace the file as much as those that rewrite it), and needs no
// watcher library.
const watchEvery = time.Second

func watch() tea.Cmd {
	return tea.Tick(watchEvery, func(time.Time) tea.Msg { return watchMsg{} })
}

// onWatch reloads every plan file that changed on disk, and when a tool
// or plan file has come, gone or changed, reads the project's catalog
// again: the new plans open as tabs, the removed ones close, and every
// open plan is checked against the new catalog.
func (m *model) onWatch() tea.Cmd {
	for i := range m.planPage.count() {
		p := m.planPage.documentAt(i).Path
		if st := stampOf(p); p != "" && st != m.planPage.open[i].stamp {
			m.reload(i, "changed on disk")
		}
	}
	if m.ws != nil {
		changed := m.ws.Rescan()
		// The tabs follow on every look, not only when the catalog
		// changed: the tab of a file removed while its run went on
		// closes once that run ends.
		var added, removed []string
		if m.followPlanFiles {
			added, removed = m.followFiles()
		}
		if changed || len(added)+len(removed) > 0 {
			m.catalogChanged(added, removed)
		}
	}
	return watch()
}

// catalogChanged brings every open plan's checks in line with the
// catalog as read again, and says which plan files opened and closed.
func (m *model) catalogChanged(added, removed []string) {
	for i := range m.planPage.count() {
		// A plan that calls a plan__ tool or a user tool is checked
		// again: the tool may be new, gone or changed.
		if d := m.planPage.documentAt(i); d.Path != "" {
			m.planPage.replace(i, LoadDocument(m.ws, d.Path))
		}
	}
	m.documentChanged()
	m.log.Info("catalog read again", "added", added, "removed", removed)
	var parts []string
	if len(added) > 0 {
		parts = append(parts, "opened "+strings.Join(added, ", "))
	}
	if len(removed) > 0 {
		parts = append(parts, "closed "+strings.Join(removed, ", ")+" (gone from disk)")
	}
	if len(parts) > 0 {
		m.notify(noticeInfo, strings.Join(parts, "; "))
	}
}

// followFiles opens the plan files on the plan paths that have no tab,
// and closes the tabs whose file is gone, with the ended run on show of
// such a plan (its runs stay in the store); only a run still going keeps
// its plan's tab, until it ends. It returns the files opened and closed,
// as shown.
func (m *model) followFiles() (added, removed []string) {
	open := map[string]bool{}
	for i := m.planPage.count() - 1; i >= 0; i-- {
		d := m.planPage.documentAt(i)
		if d.Path == "" {
			continue
		}
		r := m.runPage.run
		if _, err := os.Stat(d.Path); errors.Is(err, fs.ErrNotExist) && m.planPage.count() > 1 && (r == nil || r.doc != i || !r.active()) {
			if r != nil && r.doc == i {
				m.dropRun()
			}
			m.closeTab(i)
			removed = append(removed, m.ws.DisplayPath(d.Path))
			continue
		}
		open[d.Path] = true
	}
	for _, f := range m.ws.PlanFiles() {
		if !open[f] {
			d := LoadDocument(m.ws, f)
			m.openTab(d)
			added = append(added, d.File)
		}
	}
	return added, removed
}

// openTab opens a plan tab at its place among the others and returns its
// index; the run on show keeps pointing at its own.
func (m *model) openTab(d workspace.Document) int {
	i := m.planPage.add(d)
	if r := m.runPage.run; r != nil && r.doc >= i && m.planPage.count() > 1 {
		r.doc++
	}
	return i
}

// closeTab closes plan tab i; the run on show keeps pointing at its own.
// dropRun takes the ended run off the run page, as before any run, when
// its plan's tab closes: the plan page is shown.
func (m *model) dropRun() {
	m.showRun(false)
	m.runPage.run = nil
}

func (m *model) closeTab(i int) {
	m.planPage.remove(i)
	if r := m.runPage.run; r != nil && r.doc > i {
		r.doc--
	}
}

// reload reads a plan file again and checks it, showing the new tree and
// problems; why says what prompted it.
func (m *model) reload(doc int, why string) {
	d := m.planPage.documentAt(doc)
	if m.ws == nil || d.Path == "" {
		return
	}
	nd := LoadDocument(m.ws, d.Path)
	m.planPage.replace(doc, nd)
	if doc == m.planPage.current {
		m.syncBreakpointMarks()
		m.relayout()
	}
	m.log.Info("reloaded", "file", nd.File, "why", why, "problems", len(nd.Report.Problems))
	m.notify(reportKind(nd.Report), nd.File+" "+why+": "+reportSummary(nd.Report))
}

func reportKind(r plans.Report) noticeKind {
	if r.OK() {
		return noticeInfo
	}
	return noticeError
}

// reportSummary says in a few words what checking a plan found.
func reportSummary(r plans.Report) string {
	n := len(r.Problems)
	if n == 0 {
		return "valid"
	}
	return common.Count(n, "problem") + " (tab to the problems, enter jumps to the step)"
}

// validate checks the plan on show again, from the file on disk.
func (m *model) validate() {
	doc := m.planPage.current
	if m.planPage.document().Path == "" || m.ws == nil {
		m.notify(reportKind(m.planPage.document().Report), reportSummary(m.planPage.document().Report))
		return
	}
	m.reload(doc, "checked")
}

// editedMsg says the editor the workbench handed the terminal to is done.
type editedMsg struct {
	doc int
	err error
	// unchanged says the file is as it was before the editor ran.
	unchanged bool
}

// edit hands the terminal to $VISUAL or $EDITOR (vi when neither is set)
// on the plan's file, at the selected step's line where the editor takes
// one; the workbench takes the terminal back, and reloads the file, when
// the editor exits.
func (m *model) edit() tea.Cmd {
	doc := m.planPage.current
	p := m.planPage.document().Path
	if p == "" {
		m.notify(noticeError, "this plan has no file to edit")
		return nil
	}
	argv := editorCommand(os.Getenv)
	if len(argv) == 0 {
		m.notify(noticeError, "no editor: set $EDITOR (vi was not found either)")
		return nil
	}
	line := 0
	if !m.runShown() {
		line = m.planPage.tree().Selected().Line
	}
	c := exec.Command(argv[0], append(argv[1:], editorArgs(argv[0], p, line)...)...)
	m.log.Info("editing", "file", p, "editor", argv)
	before, readErr := os.ReadFile(p)
	return tea.ExecProcess(c, func(err error) tea.Msg {
		after, afterErr := os.ReadFile(p)
		return editedMsg{doc: doc, err: err, unchanged: readErr == nil && afterErr == nil && bytes.Equal(before, after)}
	})
}

// editorCommand is the editor to run, as argv: $VISUAL, then $EDITOR
// (either may carry flags, as in "code -w"), then vi.
func editorCommand(getenv func(string) string) []string {
	for _, v := range []string{"VISUAL", "EDITOR"} {
		if f := strings.Fields(getenv(v)); len(f) > 0 {
			return f
		}
	}
	if p, err := exec.LookPath("vi"); err == nil {
		return []string{p}
	}
	return nil
}

// editorArgs are the arguments that open file at line (none when 0) in
// editor, in the way each editor asks for a line: +LINE before the file
// for vi and its kin, nano, emacs, kakoune, micro and helix, --goto
// FILE:LINE for VS Code, FILE:LINE for Sublime Text. An editor not known
// here is given the file alone, since a line argument it does not
// understand could open a second file named +12.
func editorArgs(editor, file string, line int) []string {
	if line <= 0 {
		return []string{file}
	}
	at := itoa(line)
	switch strings.TrimSuffix(filepath.Base(editor), ".exe") {
	case "vi", "vim", "nvim", "view", "nano", "emacs", "emacsclient", "micro", "kak", "hx", "helix", "joe", "mg":
		return []string{"+" + at, file}
	case "code", "code-insiders", "codium":
		return []string{"--goto", file + ":" + at}
	case "subl":
		return []string{file + ":" + at}
	}
	return []string{file}
}

func (m *model) onEdited(msg editedMsg) {
	switch {
	case msg.err != nil:
		m.notify(noticeError, "the editor failed: "+msg.err.Error())
	case msg.unchanged:
		m.notify(noticeInfo, m.planPage.documentAt(msg.doc).File+" unchanged")
		return
	}
	m.reload(msg.doc, "edited")
}

// newPlan writes a plan file from the skeleton into the project's plan
// directory and opens it, refusing to write over a file.
func (m *model) newPlan(identifier string) {
	if m.ws == nil || len(m.ws.Project().PlanPaths) == 0 {
		m.notify(noticeError, "new plans need a project with a plan directory")
		return
	}
	planDir := m.ws.Project().PlanPaths[0]
	if !plans.ValidIdentifier(identifier) {
		m.notify(noticeError, "'"+identifier+"' is not a plan identifier: use letters, digits, '_' and '-'")
		return
	}
	file := filepath.Join(planDir, identifier+".yaml")
	if _, err := os.Stat(file); !errors.Is(err, fs.ErrNotExist) {
		m.notify(noticeError, identifier+" exists already: open it instead ("+file+")")
		return
	}
	if err := os.MkdirAll(planDir, 0o755); err != nil {
		m.notify(noticeError, err.Error())
		return
	}
	if err := os.WriteFile(file, plans.NewPlanSkeleton(identifier), 0o644); err != nil {
		m.notify(noticeError, err.Error())
		return
	}
	doc := m.openTab(LoadDocument(m.ws, file))
	m.planPage.show(doc)
	m.showRun(false)
	// The new plan joins the catalog at once: a plan may call it as
	// plan__ from now on.
	if m.ws.Rescan() {
		m.catalogChanged(nil, nil)
	}
	m.documentChanged()
	m.notify(noticeInfo, "created "+m.planPage.document().File+"; e edits it, t adds a step for a tool")
}

// serverToolsMsg brings the MCP servers' tools to the catalog, and what
// kept any server from answering.
type serverToolsMsg struct {
	tools    []plans.ToolInfo
	failures []string
}

// serverListTimeout bounds how long the catalog waits for each server.
const serverListTimeout = 10 * time.Second

// openCatalog shows the tool catalog: the control steps, the built-in,
// user and plan tools at once, and each MCP server's tools as the servers
// answer, in the background.
func (m *model) openCatalog() tea.Cmd {
	if m.ws == nil {
		m.notify(noticeError, "no tool catalog: the workbench was opened without a project")
		return nil
	}
	ws := m.ws
	m.panels.catalog.SetTools(ws.Tools())
	m.panels.catalog.SetPlan(m.planPage.document().Name())
	m.panels.catalog.SetAddRefusal(m.addStepRefusal())
	m.overlays.push(&m.panels.catalog, false)
	if len(ws.Servers()) == 0 {
		return nil
	}
	ctx, servers := m.ctx, ws.Servers()
	return func() tea.Msg {
		var msg serverToolsMsg
		for _, s := range servers {
			sctx, cancel := context.WithTimeout(ctx, serverListTimeout)
			list, err := ws.ServerTools(sctx, s)
			cancel()
			if err != nil {
				msg.failures = append(msg.failures, s+": "+err.Error())
				continue
			}
			msg.tools = append(msg.tools, list...)
		}
		return msg
	}
}

// onServerTools adds the servers' tools to the catalog.
func (m *model) onServerTools(msg serverToolsMsg) {
	m.panels.catalog.SetTools(append(m.ws.Tools(), msg.tools...))
	if len(msg.failures) > 0 {
		m.notify(noticeError, "MCP servers not listed: "+strings.Join(msg.failures, "; "))
	}
}

// addStepRefusal says why no step can be added to the plan on show now,
// empty when one can: a run of it goes or is held. The run reads the plan
// as it was; its file changing under it would make its record and its
// tree disagree with the file.
func (m *model) addStepRefusal() string {
	r := m.runPage.run
	if !r.active() || r.doc != m.planPage.current {
		return ""
	}
	how := "going"
	if r.held() {
		how = "held at a stop"
	}
	return "a run of " + m.planPage.document().Name() + " is " + how + ": steps are added once it ends"
}

// insertStep appends a step calling tool to the plan on show, in its file,
// and reloads it with the new step selected.
func (m *model) insertStep(tool plans.ToolInfo) {
	doc := m.planPage.current
	d := m.planPage.document()
	if d.Path == "" || d.Plan == nil {
		m.notify(noticeError, "steps are added to a plan that loads from a file; fix or open one first")
		return
	}
	if why := m.addStepRefusal(); why != "" {
		m.notify(noticeError, why+" (a aborts it)")
		return
	}
	src, err := os.ReadFile(d.Path)
	if err != nil {
		m.notify(noticeError, err.Error())
		return
	}
	id := plans.NextStepID(d.Plan)
	out, err := plans.AppendStep(src, plans.StepSkeleton(d.Plan, id, tool))
	if ee, ok := errors.AsType[*plans.EditError](err); ok {
		ee.Pos.File = d.File
	}
	if err != nil {
		m.notify(noticeError, "the step cannot be added: "+err.Error())
		return
	}
	if err := os.WriteFile(d.Path, out, 0o644); err != nil {
		m.notify(noticeError, err.Error())
		return
	}
	m.reload(doc, "has a new step "+id+" calling "+tool.Name)
	m.showRun(false)
	m.planPage.tree().SelectPath(id)
	m.page.setFocus(paneTree)
}

// LoadDocument loads and checks a plan file; a file that cannot be read
// is a document whose one problem says why, so that the workbench keeps
// going.
func LoadDocument(ws *workspace.Workspace, path string) workspace.Document {
	d, err := ws.Load(path)
	if err != nil {
		return workspace.Document{File: path, Path: path, Report: plans.Report{Problems: []plans.Problem{
			{Code: plans.CodeUnreadable, Message: err.Error() + "; the workbench reads it again when it changes", Pos: plans.Pos{File: path}},
		}}}
	}
	return d
}
