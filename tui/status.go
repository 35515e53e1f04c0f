package tui

import (
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/tui/common"
	"github.com/stepwise-dev/stepwise/tui/output"
)

// noticeKind says whether a notice reports something done or refused.
type noticeKind int

const (
	noticeInfo noticeKind = iota
	noticeError
	// noticeConfirm says what a second press of the key just pressed
	// would do: it has the status line to itself, so that it is read
	// whole before the key is pressed again.
	noticeConfirm
)

// notice is the last thing the workbench has to say, on the status line
// until the next one.
type notice struct {
	kind noticeKind
	text string
	// hint says the notice points from the view on show to what to do
	// there instead (no run to chart: r runs the plan): it goes when the
	// view changes, where it no longer applies.
	hint bool
	// seq tells one notice from the next, so that the expiry of an old
	// one leaves a newer one be.
	seq int
}

// noticeLife is how long a notice stays on the status line; the output
// pane keeps it after.
const noticeLife = 10 * time.Second

// noticeExpired says the notice seq has been on show for noticeLife.
type noticeExpired struct{ seq int }

// expireNotice clears the notice seq if it is still the one on show.
func (m *model) expireNotice(seq int) {
	if m.notice.seq == seq && m.notice.text != "" {
		m.notice = notice{}
	}
}

// notify says something on the status line, in the output pane and in
// the log.
func (m *model) notify(kind noticeKind, text string) { m.say(kind, text, text) }

// hint refuses what was asked, saying what to do instead, until the view
// changes (notice.hint).
func (m *model) hint(text string) {
	m.notify(noticeError, text)
	m.notice.hint = true
}

// say puts short on the status line, and whole, which says the same at
// length (a value pretty-printed, one frame a line), in the output pane
// and the log.
func (m *model) say(kind noticeKind, short, whole string) {
	// The status line is one line: an error that quotes a value keeps its
	// words, not its line breaks.
	m.noticeSeq++
	m.notice = notice{kind: kind, text: strings.Join(strings.Fields(short), " "), seq: m.noticeSeq}
	out := output.Answer
	if kind != noticeInfo {
		out = output.Problem
		m.log.Warn(whole)
	} else {
		m.log.Info(whole)
	}
	m.panels.output.Add(out, whole)
}

// answer is say for the answer of a command typed: one the status line
// cannot show whole opens the output pane, since it was asked for.
func (m *model) answer(kind noticeKind, short, whole string) {
	m.say(kind, short, whole)
	if _, cut := m.status(); cut {
		m.openOutput()
	}
}

// statusLine is the line above the key hints: what the page says of
// itself (where the run on show stands, and its elapsed time, calls,
// tokens and cost on the right), then the last notice.
func (m model) statusLine() string {
	line, _ := m.status()
	return line
}

// status draws the status line, and reports whether the notice on it is
// cut. A cut notice ends pointing to the output pane, which has it whole,
// unless the pane is open.
func (m model) status() (line string, cut bool) {
	t := m.Theme
	if m.notice.kind == noticeConfirm && m.notice.text != "" {
		return common.Fit(" "+t.Problem.Render(m.notice.text), m.Width), common.TextWidth(m.notice.text)+1 > m.Width
	}
	left, right := m.page.status()
	if m.notice.text != "" {
		style := t.Muted
		if m.notice.kind == noticeError {
			style = t.Problem
		}
		if left != "" {
			left += t.Muted.Render("  ·  ")
		}
		text := m.notice.text
		// The figures on the right stay while the notice keeps a few
		// words beside them: a long notice is cut, pointing to the
		// output pane, rather than push the run's time and spend off.
		room := m.Width - 1 - ansi.StringWidth(left)
		if beside := room - ansi.StringWidth(right) - 3; right != "" && beside >= minNoticeBeside {
			room = beside
		}
		hint := " (" + m.Keys.Output.Help().Key + " shows all)"
		cut = common.TextWidth(text) > room
		switch {
		case cut && !m.overlays.isOpen(&m.panels.output) && room > len(hint)+8:
			left += style.Render(common.Fit(text, room-len(hint))) + t.Key.Render(hint)
		case cut:
			left += style.Render(common.Fit(text, room))
		default:
			left += style.Render(text)
		}
	}
	lw, rw := ansi.StringWidth(left), ansi.StringWidth(right)
	if lw+rw+3 > m.Width {
		return common.Fit(" "+left, m.Width), cut
	}
	return common.Fit(" "+left, m.Width-rw-1) + t.Muted.Render(right) + " ", cut
}

// minNoticeBeside is the fewest cells a notice keeps beside the figures
// on the status line; with less room, the notice has the line.
const minNoticeBeside = 24

// reasonWords says why the run is held: the session's reason, in the
// workbench's words for the stop a held debug run starts at.
func reasonWords(r *run) string {
	if r.state.Reason == debugger.ReasonEntry {
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
	case engine.StatusAborted:
		// Marked as the runs list and the tree mark an aborted run.
		return t.Problem.Render("■ aborted")
	case "":
		return ""
	}
	return t.Problem.Render("✗ " + status.String())
}
