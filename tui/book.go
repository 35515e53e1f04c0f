package tui

import (
	"slices"
	"strings"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/path"
	"github.com/stepwise-dev/stepwise/engine/tools"
	"github.com/stepwise-dev/stepwise/tui/breakpoints"
)

// book returns the session that holds a plan's breakpoints: the running
// session while a debug run of the plan goes on, so that a breakpoint set
// mid-run takes effect at once; else a session that never runs, loaded
// from the kept file on first use. Breakpoints are checked and numbered
// by the debugger in both cases, the same way the line driver's are.
func (m *model) book(doc int) *debugger.Session {
	if r := m.run; r.active() && r.debug && r.doc == doc {
		return r.session
	}
	if b, ok := m.books[doc]; ok {
		return b
	}
	d := m.tree.DocumentAt(doc)
	var opts engine.Options
	if m.project != nil {
		opts.Catalog = m.project.Engine.Catalog
	}
	b := debugger.New(d.Plan, opts)
	if file := m.breakpointFile(doc); file != "" {
		if err := b.LoadBreakpoints(file); err != nil {
			m.notify(noticeError, "the kept breakpoints could not be read: "+err.Error())
		}
	}
	m.books[doc] = b
	return b
}

// breakpointFile is where the plan's breakpoints are kept, or "".
func (m *model) breakpointFile(doc int) string {
	d := m.tree.DocumentAt(doc)
	if m.project == nil || m.project.BreakpointDir == "" || d.Plan == nil {
		return ""
	}
	return debugger.BreakpointFile(m.project.BreakpointDir, d.Name())
}

// breakpointsChanged keeps the book on disk, and the marks and the panel
// in step with it.
func (m *model) breakpointsChanged() {
	doc := m.tree.DocumentIndex()
	if file := m.breakpointFile(doc); file != "" {
		if err := m.book(doc).SaveBreakpoints(file); err != nil {
			m.notify(noticeError, "the breakpoints could not be kept: "+err.Error())
		}
	}
	m.syncBreakpointMarks()
}

// syncBreakpointMarks shows the current plan's enabled breakpoints as
// marks on the rows of both trees, and in the panel.
func (m *model) syncBreakpointMarks() {
	doc := m.tree.DocumentIndex()
	if m.tree.Document().Plan == nil {
		m.tree.SetBreakpoints(nil)
		m.runTree.SetBreakpoints(nil)
		return
	}
	b := m.book(doc)
	var patterns []path.Pattern
	for _, bp := range b.Breakpoints() {
		if !bp.Enabled {
			continue
		}
		for _, pat := range []string{bp.Pattern, stepPart(bp.Pattern)} {
			if p, err := path.Compile(pat); err == nil && pat != "" {
				patterns = append(patterns, p)
			}
		}
	}
	match := func(p string) bool {
		return slices.ContainsFunc(patterns, func(pt path.Pattern) bool { return pt.Match(p) })
	}
	m.tree.SetBreakpoints(match)
	m.runTree.SetBreakpoints(match)
	m.breakPanel.SetBreakpoints(b.Breakpoints(), b.BreaksOnError())
}

// toggleBreakpoint sets a breakpoint on the selected row's path, or
// clears the one set on exactly that path.
func (m *model) toggleBreakpoint() {
	p := m.selectedPath()
	if p == "" {
		m.notify(noticeError, "select a step (or, in a run, any row) to break at")
		return
	}
	doc := m.tree.DocumentIndex()
	if m.tree.Document().Plan == nil {
		m.notify(noticeError, "the plan does not load; fix it first")
		return
	}
	b := m.book(doc)
	for _, bp := range b.Breakpoints() {
		if bp.Pattern == p && len(bp.Kinds) == 0 && bp.Condition == nil {
			b.Clear(bp.ID)
			m.notify(noticeInfo, "breakpoint "+itoa(bp.ID)+" at "+p+" cleared")
			m.breakpointsChanged()
			return
		}
	}
	m.setBreakpoint(p, nil, nil)
}

// setBreakpoint sets a breakpoint on the current plan.
func (m *model) setBreakpoint(pattern string, kinds []engine.StopKind, cond *debugger.Condition) {
	bp, err := m.book(m.tree.DocumentIndex()).Break(pattern, kinds, cond)
	if err != nil {
		m.notify(noticeError, err.Error())
		return
	}
	m.notify(noticeInfo, "breakpoint "+itoa(bp.ID)+" at "+bp.Spec())
	if stepOnly(kinds) && !m.patternReachesStep(pattern) {
		m.notify(noticeError, "breakpoint "+itoa(bp.ID)+" at "+bp.Spec()+": no step of the plan is at that path, so it may never stop (the steps of a list body are PATH/do.*/ID)")
	}
	m.breakpointsChanged()
}

// stepPart is the part of a pattern that names a step, before a round, a
// repair pass or the tool calls under them: a breakpoint on
// E1/do.*/verdict/agent.2 is marked on the plan's row of verdict too.
func stepPart(pattern string) string {
	segs := strings.Split(pattern, "/")
	for i, s := range segs {
		if strings.HasPrefix(s, "agent.") || s == "repair" {
			return strings.Join(segs[:i], "/")
		}
	}
	return ""
}

// stepOnly reports whether breakpoint kinds stop at steps alone (none
// given counts: a pattern without kinds is usually meant for steps).
func stepOnly(kinds []engine.StopKind) bool {
	for _, k := range kinds {
		if k != engine.StopStep && k != engine.StopResult && k != engine.StopError {
			return false
		}
	}
	return true
}

// patternReachesStep reports whether a pattern could stop at a step of
// the plan on show: it names one of its steps, or reaches below steps
// (** or a round, tool call or repair pass) where no list of steps says.
func (m *model) patternReachesStep(pattern string) bool {
	if strings.Contains(pattern, "**") || strings.Contains(pattern, "agent.") || strings.HasSuffix(pattern, "/repair") {
		return true
	}
	var catalog *tools.Catalog
	if m.project != nil {
		catalog = m.project.Engine.Catalog
	}
	return debugger.HasStep(m.tree.Document().Plan, catalog, pattern)
}

// selectedPath is the path of the selected row of the tree on show.
func (m *model) selectedPath() string {
	if m.runView {
		return m.selectedRunPath()
	}
	return m.tree.Selected().Path
}

func (m *model) toggleBreakOnError() {
	b := m.book(m.tree.DocumentIndex())
	on := !b.BreaksOnError()
	b.BreakOnError(on)
	if on {
		m.notify(noticeInfo, "break on error is on")
	} else {
		m.notify(noticeInfo, "break on error is off")
	}
	m.syncBreakpointMarks()
}

func (m *model) openBreakpoints() {
	if m.tree.Document().Plan == nil {
		m.notify(noticeError, "the plan does not load; fix it first")
		return
	}
	m.syncBreakpointMarks()
	m.overlay = overlayBreakpoints
	m.breakPanel.Focus()
}

// onBreakpointAction applies what the panel asked for to the book.
func (m *model) onBreakpointAction(a breakpoints.Action) {
	b := m.book(m.tree.DocumentIndex())
	var err error
	switch {
	case a.Delete:
		err = b.Clear(a.ID)
	case a.Enable != nil:
		err = b.Enable(a.ID, *a.Enable)
	case a.BreakOnError != nil:
		b.BreakOnError(*a.BreakOnError)
	}
	if err != nil {
		m.notify(noticeError, err.Error())
	}
	m.breakpointsChanged()
}
