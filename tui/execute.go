package tui

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/tui/output"
)

// execute carries out a line of the command language typed at the :
// command line. Each verb does what its key does; the line adds what a
// key cannot say: patterns, kinds and conditions, values, inputs, ids.
func (m *model) execute(in debugger.Instruction) tea.Cmd {
	m.log.Info("command line", "line", in.String())
	m.panels.output.Add(output.Command, in.String())
	if cmd, ok := in.Command(); ok {
		return m.runPage.command(cmd)
	}
	switch in.Verb {
	case debugger.VerbBreak, debugger.VerbClear, debugger.VerbCond, debugger.VerbEnable, debugger.VerbDisable, debugger.VerbErrors:
		m.execBreakpoints(in)
	case debugger.VerbBreakpoints:
		m.listBreakpointsAnswer()
	case debugger.VerbPause:
		m.runPage.pauseRun()
	case debugger.VerbPrint, debugger.VerbStack, debugger.VerbThreads, debugger.VerbWhere:
		m.readStop(in)
	case debugger.VerbThread:
		return m.runPage.switchThread(in.Path)
	case debugger.VerbWatch, debugger.VerbUnwatch, debugger.VerbWatches:
		m.watchCommand(in)
	case debugger.VerbRun, debugger.VerbDebug:
		debug := in.Verb == debugger.VerbDebug
		if in.Inputs == nil {
			return m.askInputs(debug)
		}
		return m.startRun(in.Inputs, debug)
	case debugger.VerbGate:
		m.runPage.setGate(in.Patterns, m.planPage.document().Plan)
	case debugger.VerbGoto:
		m.gotoPath(in.Path)
	case debugger.VerbOpen:
		if !m.runPage.recorded() {
			m.notify(noticeError, "no run store to open runs from")
			return nil
		}
		return m.runPage.openStored(in.Run, m.planPage.current, m.planPage.document().Plan)
	case debugger.VerbFork:
		p := in.Path
		if p == "" {
			p = m.runPage.selectedPath()
		}
		return m.runPage.fork(p, m.planPage.current, m.planPage.document(), nil)
	case debugger.VerbDiff:
		if m.runPage.run == nil || m.runPage.run.stored == "" {
			m.notify(noticeError, "diff compares the earlier run on show with another: R opens one")
			return nil
		}
		return m.runPage.diffRuns(m.runPage.run.stored, in.Run)
	case debugger.VerbTools:
		return m.openCatalog()
	case debugger.VerbRuns:
		return m.runPage.openRuns(m.planPage.document().Name())
	case debugger.VerbHelp:
		if in.Topic != "" {
			// help COMMAND says what that one does, as stepwise debug's
			// help does; help alone opens the keys and commands.
			for _, syn := range debugger.Grammar() {
				if syn.Verb == in.Topic {
					m.notify(noticeInfo, syn.Usage()+": "+syn.Does)
				}
			}
			return nil
		}
		m.panels.help.Open()
		m.overlays.push(&m.panels.help, false)
	case debugger.VerbNew:
		m.newPlan(in.Path)
	case debugger.VerbQuit:
		m.quitArmed = true
		return m.quit()
	}
	return nil
}

// watchCommand carries out watch, unwatch and watches: on the live run,
// whose session reads them at its stops, and on the workbench's list,
// which every run starts with. The answer is said on the status line, and
// whole in the output pane; the watch pane shows them all.
func (m *model) watchCommand(in debugger.Instruction) {
	if err := m.runPage.watch(in); err != nil {
		m.notify(noticeError, err.Error())
		return
	}
	ws := m.runPage.watches()
	plan := m.planPage.document().Plan
	switch in.Verb {
	case debugger.VerbWatch:
		w := ws[len(ws)-1]
		msg := fmt.Sprintf("watch %d: %s", w.ID, watchText(w))
		if w.Read {
			m.notify(noticeInfo, msg)
			return
		}
		// Set away from a stop, a path that can read nothing is said
		// now, as a breakpoint that can never stop is; it is set all
		// the same, and each stop says its error.
		if warn := debugger.UnknownRoot(plan, w.Path); warn != "" {
			m.notify(noticeError, msg+": "+warn)
			return
		}
		m.notify(noticeInfo, msg+" (read at every stop)")
	case debugger.VerbUnwatch:
		m.notify(noticeInfo, fmt.Sprintf("watch %d removed", in.ID))
	case debugger.VerbWatches:
		if len(ws) == 0 {
			m.notify(noticeInfo, "no watches; watch PATH sets one")
			return
		}
		var list []string
		for _, w := range ws {
			text := watchText(w)
			if warn := debugger.UnknownRoot(plan, w.Path); !w.Read && warn != "" {
				text += ": " + warn
			}
			list = append(list, fmt.Sprintf("%d %s", w.ID, text))
		}
		m.answer(noticeInfo, "watches: "+strings.Join(list, ", "), strings.Join(list, "\n"))
	}
}

// watchText is a watch and what it read, in short.
func watchText(w debugger.WatchValue) string {
	switch {
	case w.Error != "":
		return w.Path + ": " + w.Error
	case w.Read:
		b, _ := json.Marshal(w.Value)
		return w.Path + " = " + string(b)
	}
	return w.Path
}

// readStop carries out print, stack, threads and where on the held run
// (threads on a going one too), and says the answer on the status line in
// short, and in the output pane whole: a value pretty-printed, a frame or
// a thread a line.
func (m *model) readStop(in debugger.Instruction) {
	r := m.runPage.run
	// threads lists a going run's threads too.
	going := in.Verb == debugger.VerbThreads && r.active() && r.session != nil
	if !r.held() && !going {
		if in.Verb == debugger.VerbPrint {
			m.notify(noticeError, "print reads the scope of a held run; no run is held")
		} else {
			m.notify(noticeError, "no run is held")
		}
		return
	}
	a, err := r.session.Exec(in)
	if err != nil {
		m.notify(noticeError, err.Error())
		return
	}
	// Threads may have started, reached stops or ended since the pane
	// last read them.
	m.runPage.refreshThreads()
	switch in.Verb {
	case debugger.VerbPrint:
		b, _ := json.Marshal(a.Value)
		whole, _ := json.MarshalIndent(a.Value, "", "  ")
		m.answer(noticeInfo, a.Path+" = "+string(b), a.Path+" = "+string(whole))
	case debugger.VerbStack:
		// Innermost first, frame 0 the stop's own, as stepwise debug
		// lists them.
		var frames, lines []string
		for _, f := range slices.Backward(a.Stack) {
			frames = append(frames, f.Path+" ("+f.Kind.String()+")")
			lines = append(lines, fmt.Sprintf("%d  %-6s %s", len(lines), f.Kind, strings.TrimSpace(f.Path+" "+f.Tool)))
		}
		m.answer(noticeInfo, strings.Join(frames, " ← "), strings.Join(lines, "\n"))
	case debugger.VerbThreads:
		// The status line marks the held threads; the pane, as the
		// threads pane does, the running ones too.
		held := 0
		var short, whole []string
		for _, th := range a.Threads {
			mark := "● "
			switch {
			case th.Stopped:
				mark, held = "▶ ", held+1
			case th.Held:
				mark, held = "⏸ ", held+1
			}
			// The whole list says where each thread is, and the kind
			// of the stop it is at or last passed; the status line
			// leaves out a place that repeats the thread's name.
			at, kind := "", ""
			if th.Path != "" {
				at = " at " + th.Path
			}
			if th.Kind != "" {
				kind = " (" + string(th.Kind) + ")"
			}
			whole = append(whole, mark+th.ID+at+kind)
			s := th.ID
			if th.Path != th.ID {
				s += at
			}
			s += kind
			if mark != "● " {
				s = mark + s
			}
			short = append(short, s)
		}
		head := fmt.Sprintf("%d live, %d held", len(a.Threads), held)
		m.answer(noticeInfo, head+": "+strings.Join(short, ", "), head+"\n"+strings.Join(whole, "\n"))
	case debugger.VerbWhere:
		st := a.State
		msg := fmt.Sprintf("held at %s (%s): %s", st.Stop.Path, st.Stop.Kind, reasonWords(m.runPage.run))
		whole := msg
		if n := len(st.Threads); n > 1 {
			msg += fmt.Sprintf("; %d threads held", n)
			whole += fmt.Sprintf("\n%d threads held:", n)
			for _, th := range st.Threads {
				whole += fmt.Sprintf("\n⏸ %s at %s (%s)", th.ID, th.Path, th.Kind)
			}
		}
		m.answer(noticeInfo, msg, whole)
	}
}

// gotoPath selects a row by its path, in the run when one is on show,
// and says where it went, and that it dropped the tree's filter when
// that hid the row.
func (m *model) gotoPath(p string) {
	if m.runShown() {
		filter := m.runPage.tree.Filter()
		if m.runPage.tree.SelectPath(p) {
			m.page.setFocus(paneTree)
			m.notify(noticeInfo, wentTo(p, "the run", filter, m.runPage.tree.Filter()))
			return
		}
	}
	// A path the plan has not either leaves the page as it was.
	filter := m.planPage.tree().Filter()
	if !m.planPage.tree().SelectPath(p) {
		m.notify(noticeError, "no step at "+p+" (tab completes the paths there are)")
		return
	}
	m.showRun(false)
	m.page.setFocus(paneTree)
	m.notify(noticeInfo, wentTo(p, "the plan", filter, m.planPage.tree().Filter()))
}

// wentTo says where a goto went, in which tree, and that it cleared the
// filter before when the filter after differs.
func wentTo(p, tree, before, after string) string {
	s := "at " + p + " in " + tree
	if before != after {
		s += " (cleared the filter /" + before + ", which hid it)"
	}
	return s
}

// completionRows bounds how many rows of a run's tree are offered for
// completion: a map of ten thousand items offers its first ones.
const completionRows = 2000

// completions are what tab completes on the command line: the paths of
// the run on show (its visible rows), then of the plan.
func (m *model) completions() []string {
	var out []string
	if m.runPage.run != nil {
		for _, r := range m.runPage.run.tree.Rows(0, completionRows) {
			out = append(out, r.Path)
		}
	}
	for _, r := range m.planPage.tree().Rows() {
		if r.Path != "" {
			out = append(out, r.Path)
		}
	}
	return out
}
