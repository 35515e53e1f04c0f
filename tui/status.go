package tui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/tui/common"
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

// statusLine is the line above the key hints: what the page says of
// itself (where the run on show stands, and its elapsed time, calls,
// tokens and cost on the right), then the last notice.
func (m model) statusLine() string {
	t := m.Theme
	left, right := m.page.status()
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
	lw, rw := ansi.StringWidth(left), ansi.StringWidth(right)
	if lw+rw+3 > m.Width {
		return common.Fit(" "+left, m.Width)
	}
	return common.Fit(" "+left, m.Width-rw-1) + t.Muted.Render(right) + " "
}

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
	case "":
		return ""
	}
	return t.Problem.Render("✗ " + status.String())
}
