package tui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/tui/common"
	"github.com/stepwise-dev/stepwise/tui/format"
)

// noticeKind says whether a notice reports something done or refused.
type noticeKind int

const (
	noticeInfo noticeKind = iota
	noticeError
)

// notice is the last thing the workbench has to say, on the status line
// until the next one.
type notice struct {
	kind noticeKind
	text string
}

// notify says something on the status line, and in the log.
func (m *model) notify(kind noticeKind, text string) {
	// The status line is one line: an error that quotes a value keeps its
	// words, not its line breaks.
	text = strings.Join(strings.Fields(text), " ")
	m.notice = notice{kind, text}
	if kind == noticeError {
		m.log.Warn(text)
	} else {
		m.log.Info(text)
	}
}

// statusLine is the line above the key hints: where the run stands (held
// where and why, going on, or how it ended), its elapsed time, calls,
// tokens and cost on the right; or, with no run on show, the last notice.
func (m model) statusLine() string {
	t := m.Theme
	left := ""
	if r := m.run; r != nil && m.runView {
		left = m.runStatus(r)
	}
	if m.notice.text != "" {
		style := t.Muted
		if m.notice.kind == noticeError {
			style = t.Problem
		}
		if left != "" {
			left += t.Muted.Render("  ·  ")
		}
		left += style.Render(m.notice.text)
	}
	right := m.spendStatus()
	lw, rw := ansi.StringWidth(left), ansi.StringWidth(right)
	if lw+rw+3 > m.Width {
		return common.Fit(" "+left, m.Width)
	}
	return common.Fit(" "+left, m.Width-rw-1) + t.Muted.Render(right) + " "
}

// runStatus says where the run on show stands.
func (m model) runStatus(r *run) string {
	t := m.Theme
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
		return s
	case r.active():
		s := t.Valid.Render("● running")
		if tot.Running > 0 {
			s += t.Muted.Render(" " + common.Count(tot.Running, "step"))
		}
		if r.debug {
			s += t.Muted.Render(" · debug")
		}
		return s
	}
	return endWord(t, r.state.Status)
}

// reasonWords says why the run is held: the session's reason, except that
// the pause a debug run with no breakpoint starts with is its first stop.
func reasonWords(r *run) string {
	if r.state.Reason == debugger.ReasonPause && r.firstPause {
		return "first stop"
	}
	return r.state.Reason.String()
}

func endWord(t *common.Theme, status engine.RunStatus) string {
	switch status {
	case engine.StatusOK:
		return t.Valid.Render("✓ ok")
	case engine.StatusExited:
		return t.Valid.Render("⏏ exited")
	case "":
		return ""
	}
	return t.Problem.Render("✗ " + status.String())
}

// spendStatus is the run's elapsed time, calls, tokens and cost.
func (m model) spendStatus() string {
	r := m.run
	if r == nil || !m.runView {
		return ""
	}
	tot := r.tree.Totals()
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

// threads are the threads held at the stop, when the run is held.
func (m model) threads() []debugger.Thread {
	if !m.run.held() {
		return nil
	}
	return m.run.state.Threads
}

// threadsView lists the held threads: the stopped one, which the commands
// act on, first and marked.
func (m model) threadsView(width, height int) string {
	t := m.Theme
	var lines []string
	for i, th := range m.threads() {
		mark := "  "
		if th.Stopped {
			mark = "▶ "
		}
		line := mark + th.ID + "  " + th.Path + "  " + string(th.Kind)
		if i == m.threadsSel && m.focus == paneBottom {
			line = t.Selected.Render(common.Fit(line, max(width-2, 0)))
		}
		lines = append(lines, line)
	}
	title := t.PaneTitle("Threads held", m.focus == paneBottom)
	return common.Frame(t, width, height, title, "", m.focus == paneBottom, lines)
}

// threadKey moves through the thread list; enter selects the thread's
// path in the tree.
func (m *model) threadKey(k tea.KeyPressMsg) {
	ths := m.threads()
	if len(ths) == 0 {
		return
	}
	if d, ok := m.Keys.Movement(k, 1, len(ths)); ok {
		m.threadsSel = min(max(m.threadsSel+d, 0), len(ths)-1)
		return
	}
	if key.Matches(k, m.Keys.Jump) {
		m.runTree.SelectPath(ths[m.threadsSel].Path)
		m.setFocus(paneTree)
	}
}
