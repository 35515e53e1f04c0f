package tui

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/debugger/workspace"
	"github.com/stepwise-dev/stepwise/engine/path"
	"github.com/stepwise-dev/stepwise/tui/breakpoints"
	"github.com/stepwise-dev/stepwise/tui/common"
)

// breakpoints returns a plan's breakpoint table, opened from the kept file
// on first use. A debug run of the plan stops by the same table, so that a
// breakpoint set mid-run takes effect at once, and a stepwise debug of the
// same plan merges its changes with the workbench's through the file.
func (m *model) breakpoints(doc int) *debugger.Breakpoints {
	if t := m.planPage.open[doc].breakpoints; t != nil {
		return t
	}
	t := debugger.NewBreakpoints()
	if d := m.planPage.documentAt(doc); m.ws != nil && d.Plan != nil {
		var err error
		if t, err = m.ws.Breakpoints(workspace.Document(d)); err != nil {
			m.notify(noticeError, "the kept breakpoints could not be read: "+err.Error())
		}
	}
	m.planPage.open[doc].breakpoints = t
	// A kept breakpoint the plan can no longer reach (a step renamed
	// since), or whose condition reads a step it lacks, is said as the
	// table is read, as a break would say it.
	for _, b := range m.listBreakpoints(doc) {
		if why := cmp.Or(b.Unmatched, b.UnknownSteps); why != "" {
			m.notify(noticeError, "kept breakpoint "+itoa(b.ID)+": "+why)
			break
		}
	}
	return t
}

// listBreakpoints lists a plan's breakpoints with the hits of its last
// debug run, until the next one counts afresh, each flagged when no path
// of the plan can match it.
func (m *model) listBreakpoints(doc int) []debugger.Breakpoint {
	if r := m.runPage.run; r != nil && r.debug && r.doc == doc {
		return r.session.Breakpoints()
	}
	list := m.breakpoints(doc).List()
	if p := m.planPage.documentAt(doc).Plan; p != nil {
		shapes := debugger.PlanShapes(p, nil)
		if m.ws != nil {
			shapes = m.ws.Shapes(p)
		}
		shapes.Flag(list)
	}
	return list
}

// execBreakpoints carries out a breakpoint verb on the current plan's
// table, through the debug run of the plan when one goes on (its answer
// then counts the run's hits), and says what it did.
func (m *model) execBreakpoints(in debugger.Instruction) {
	a, err := m.applyBreakpoints(in)
	if err != nil {
		m.notify(noticeError, err.Error())
		return
	}
	id := itoa(in.ID)
	switch in.Verb {
	case debugger.VerbBreak:
		id = itoa(a.Breakpoint.ID)
		m.notify(noticeInfo, "breakpoint "+id+" at "+a.Breakpoint.Spec())
	case debugger.VerbClear:
		m.notify(noticeInfo, "breakpoint "+id+" at "+a.Breakpoint.Spec()+" cleared")
	case debugger.VerbCond:
		if in.Condition == nil {
			m.notify(noticeInfo, "breakpoint "+id+" has no condition now")
		} else {
			m.notify(noticeInfo, "breakpoint "+id+" stops if "+in.Condition.String())
		}
	case debugger.VerbEnable, debugger.VerbDisable:
		at := ""
		if a.Breakpoint != nil {
			at = " at " + a.Breakpoint.Spec()
		}
		m.notify(noticeInfo, "breakpoint "+id+at+" "+string(in.Verb)+"d")
	case debugger.VerbErrors:
		m.notify(noticeInfo, "break on error is "+map[bool]string{true: "on", false: "off"}[a.BreakOnError])
	}
	for _, w := range a.Warnings {
		m.notify(noticeError, "breakpoint "+id+": "+w)
	}
	m.syncBreakpointMarks()
}

// applyBreakpoints carries out a breakpoint verb on the current plan's
// table, through the debug run of the plan when one goes on, and answers
// what the table says.
func (m *model) applyBreakpoints(in debugger.Instruction) (debugger.Answer, error) {
	doc := m.planPage.current
	d := m.planPage.document()
	switch r := m.runPage.run; {
	case d.Plan == nil:
		return debugger.Answer{}, errors.New("the plan does not load; fix it first")
	case r.active() && r.debug && r.doc == doc:
		return r.session.Exec(in)
	case m.ws != nil:
		return m.ws.ExecBreakpoints(d.Plan, m.breakpoints(doc), in)
	}
	return m.breakpoints(doc).Exec(in, debugger.PlanShapes(d.Plan, nil))
}

// syncBreakpointMarks shows the current plan's breakpoints as marks on
// the rows of both trees (● an enabled one, ○ one disabled), and in the
// panel.
func (m *model) syncBreakpointMarks() {
	doc := m.planPage.current
	if m.planPage.document().Plan == nil {
		m.planPage.tree().SetBreakpoints(nil)
		m.runPage.tree.SetBreakpoints(nil)
		return
	}
	list := m.listBreakpoints(doc)
	placed := placeBreakpoints(list)
	m.planPage.tree().SetBreakpoints(placed.marks(true))
	m.runPage.tree.SetBreakpoints(placed.marks(false))
	m.panels.breakpoints.SetBreakpoints(list, m.breakpoints(doc).BreaksOnError())
}

// placedBreakpoint is a breakpoint with the patterns of the rows it marks.
// A run's tree has rows for rounds and repairs, and a breakpoint marks the
// rows its own pattern matches; the plan's tree has none, so there a
// breakpoint inside a step also marks the step. The plan's tree has a row
// for a body's step, not one an item (its path says do.*), so there a
// breakpoint on one item's step (E1/do.3/verdict) marks the body's step.
type placedBreakpoint struct {
	debugger.Breakpoint
	run, plan []path.Pattern
}

// placedBreakpoints are a plan's breakpoints, each placed.
type placedBreakpoints []placedBreakpoint

func placeBreakpoints(list []debugger.Breakpoint) placedBreakpoints {
	out := make(placedBreakpoints, 0, len(list))
	for _, bp := range list {
		pb := placedBreakpoint{Breakpoint: bp}
		if p, err := path.Compile(bp.Pattern); err == nil {
			pb.run = append(pb.run, p)
		}
		static := path.Static(bp.Pattern)
		if p, err := path.Compile(static); err == nil {
			pb.plan = append(pb.plan, p)
		}
		if step := stepPart(static); step != "" {
			if p, err := path.Compile(step); err == nil {
				pb.plan = append(pb.plan, p)
			}
		}
		out = append(out, pb)
	}
	return out
}

// on lists the breakpoints that mark the row at p, in the plan's tree or
// the run's.
func (ps placedBreakpoints) on(p string, plan bool) []debugger.Breakpoint {
	var out []debugger.Breakpoint
	for _, pb := range ps {
		if pb.matches(p, plan) {
			out = append(out, pb.Breakpoint)
		}
	}
	return out
}

// matches reports whether the breakpoint marks the row at p.
func (pb placedBreakpoint) matches(p string, plan bool) bool {
	patterns := pb.run
	if plan {
		patterns = pb.plan
	}
	return slices.ContainsFunc(patterns, func(pt path.Pattern) bool { return pt.Match(p) })
}

// marks says, for a tree's rows, which breakpoints each has: ● for an
// enabled one, else ○ for a disabled one.
func (ps placedBreakpoints) marks(plan bool) func(string) common.BreakMark {
	return func(p string) common.BreakMark {
		mark := common.NoBreak
		for _, pb := range ps {
			if !pb.matches(p, plan) {
				continue
			}
			if pb.Enabled {
				return common.BreakOn
			}
			mark = common.BreakOff
		}
		return mark
	}
}

// toggleBreakpoint sets a breakpoint on the selected row's path, or
// clears the one set on exactly that path. On a row marked ○ it enables
// the disabled breakpoints that mark it, whatever their patterns, kinds
// or conditions: the mark says they are there but stop nothing, and a
// second breakpoint beside them would leave the first ones off.
func (m *model) toggleBreakpoint() {
	p := m.page.selectedPath()
	if p == "" {
		m.notify(noticeError, "select a step (or, in a run, any row) to break at")
		return
	}
	if m.planPage.document().Plan != nil {
		on := placeBreakpoints(m.listBreakpoints(m.planPage.current)).on(p, !m.runShown())
		if len(on) > 0 && !hasEnabled(on) {
			for _, bp := range on {
				m.execBreakpoints(debugger.Instruction{Verb: debugger.VerbEnable, ID: bp.ID})
			}
			return
		}
		for _, bp := range on {
			if bp.Pattern == p && len(bp.Kinds) == 0 && bp.Condition == nil {
				verb := debugger.VerbClear
				if !bp.Enabled {
					verb = debugger.VerbEnable
				}
				m.execBreakpoints(debugger.Instruction{Verb: verb, ID: bp.ID})
				return
			}
		}
	}
	m.execBreakpoints(debugger.Instruction{Verb: debugger.VerbBreak, Pattern: p})
}

// clearRowBreakpoints clears every breakpoint whose mark the selected row
// shows, enabled or not, and says which; B lists the others.
func (m *model) clearRowBreakpoints() {
	p := m.page.selectedPath()
	if p == "" {
		m.notify(noticeError, "select a row with a breakpoint (● or ○) to clear it; "+m.Keys.Breakpoints.Help().Key+" lists them all")
		return
	}
	if !m.refreshBreakpoints() {
		return
	}
	on := placeBreakpoints(m.listBreakpoints(m.planPage.current)).on(p, !m.runShown())
	if len(on) == 0 {
		m.notify(noticeError, "no breakpoint on "+p+"; "+m.Keys.Breakpoints.Help().Key+" lists them all")
		return
	}
	var cleared, problems []string
	for _, bp := range on {
		a, err := m.applyBreakpoints(debugger.Instruction{Verb: debugger.VerbClear, ID: bp.ID})
		if err != nil {
			problems = append(problems, err.Error())
			break
		}
		cleared = append(cleared, itoa(bp.ID)+" at "+bp.Spec())
		for _, w := range a.Warnings {
			problems = append(problems, "breakpoint "+itoa(bp.ID)+": "+w)
		}
	}
	m.syncBreakpointMarks()
	if len(cleared) > 0 {
		word := "breakpoint "
		if len(cleared) > 1 {
			word = "breakpoints "
		}
		m.notify(noticeInfo, "cleared "+word+strings.Join(cleared, ", "))
	}
	// What went wrong is said last, so the status line keeps it.
	for _, p := range problems {
		m.notify(noticeError, p)
	}
}

func (m *model) toggleBreakOnError() {
	m.execBreakpoints(debugger.Instruction{Verb: debugger.VerbErrors, On: !m.breakpoints(m.planPage.current).BreaksOnError()})
}

func (m *model) openBreakpoints() {
	if !m.refreshBreakpoints() {
		return
	}
	m.overlays.push(&m.panels.breakpoints, true)
	m.panels.breakpoints.Focus()
}

// listBreakpointsAnswer answers :breakpoints as :stack answers: in short on
// the status line and one a line in the output pane, which opens when the
// status line cuts the list. The panel stays for B.
func (m *model) listBreakpointsAnswer() {
	if !m.refreshBreakpoints() {
		return
	}
	bps := m.panels.breakpoints.Breakpoints()
	if len(bps) == 0 {
		m.answer(noticeInfo, breakpoints.Empty, breakpoints.Empty)
		return
	}
	var specs []string
	for _, b := range bps {
		specs = append(specs, itoa(b.ID)+" "+b.Spec())
	}
	m.answer(noticeInfo, common.Count(len(bps), "breakpoint")+": "+strings.Join(specs, ", "), m.breakpointList())
}

// refreshBreakpoints reads the current plan's breakpoints again, taking in
// what a stepwise debug of the same plan kept meanwhile, and reports
// whether the plan loads, which a breakpoint needs.
func (m *model) refreshBreakpoints() bool {
	if m.planPage.document().Plan == nil {
		m.notify(noticeError, "the plan does not load; fix it first")
		return false
	}
	if err := m.breakpoints(m.planPage.current).Refresh(); err != nil {
		m.notify(noticeError, "the kept breakpoints could not be read: "+err.Error())
	}
	m.syncBreakpointMarks()
	return true
}

// onBreakpointAction carries out what the panel asked for.
func (m *model) onBreakpointAction(a breakpoints.Action) {
	switch {
	case a.Delete:
		m.execBreakpoints(debugger.Instruction{Verb: debugger.VerbClear, ID: a.ID})
	case a.Enable != nil:
		verb := debugger.VerbDisable
		if *a.Enable {
			verb = debugger.VerbEnable
		}
		m.execBreakpoints(debugger.Instruction{Verb: verb, ID: a.ID})
	case a.BreakOnError != nil:
		m.execBreakpoints(debugger.Instruction{Verb: debugger.VerbErrors, On: *a.BreakOnError})
	}
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

// breakpointList is the plan's breakpoints as the output pane lists them,
// one a line, as the breakpoints panel shows them.
func (m *model) breakpointList() string {
	bps := m.panels.breakpoints.Breakpoints()
	if len(bps) == 0 {
		return breakpoints.Empty
	}
	var lines []string
	for _, b := range bps {
		mark := "●"
		if !b.Enabled {
			mark = "○"
		}
		lines = append(lines, fmt.Sprintf("%s %d %s (%s)", mark, b.ID, b.Spec(), common.Count(b.Hits, "hit")))
	}
	return strings.Join(lines, "\n")
}
