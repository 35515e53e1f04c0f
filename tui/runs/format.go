package runs

import (
	"strings"

	"charm.land/lipgloss/v2"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/tui/common"
)

// outcome is the glyph, word and style of how a run ended. The word is
// always there, so that the glyph's colour is never all there is to read.
func outcome(t *common.Theme, status engine.RunStatus, interrupted bool) (glyph, word string, style lipgloss.Style) {
	switch {
	case interrupted:
		return "○", "interrupted", t.Muted
	case status == engine.StatusOK:
		return "✓", "ok", t.Valid
	case status == engine.StatusExited:
		return "⏏", "exited", t.Note
	case status == engine.StatusFailed:
		return "✗", "failed", t.Problem
	case status == engine.StatusAborted:
		return "■", "aborted", t.Problem
	case status == engine.StatusRunning:
		return "●", "running", t.Glyph
	}
	return "?", status.String(), t.Text
}

// pad right-aligns text in width cells.
func pad(text string, width int) string {
	if n := width - common.TextWidth(text); n > 0 {
		return strings.Repeat(" ", n) + text
	}
	return text
}

// padRight left-aligns text in width cells.
func padRight(text string, width int) string {
	if n := width - common.TextWidth(text); n > 0 {
		return text + strings.Repeat(" ", n)
	}
	return text
}
