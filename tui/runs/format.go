package runs

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"charm.land/lipgloss/v2"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/store"
	"github.com/stepwise-dev/stepwise/tui/common"
)

// shortID is how many characters of a run id the panel shows, as many as
// `stepwise runs` lists: enough for `stepwise inspect` to tell runs apart.
const shortID = 12

func short(id string) string {
	if len(id) > shortID {
		return id[:shortID]
	}
	return id
}

// outcome is the glyph, word and style of how a run ended. The word is
// always there, so that the glyph's colour is never all there is to read.
func outcome(t *common.Theme, status engine.RunStatus, interrupted bool) (glyph, word string, style lipgloss.Style) {
	switch {
	case interrupted:
		return "○", "interrupted", t.Muted
	case status == engine.StatusOK:
		return "✓", "ok", t.Valid
	case status == engine.StatusExited:
		return "↪", "exited", t.Note
	case status == engine.StatusFailed:
		return "✗", "failed", t.Problem
	case status == engine.StatusAborted:
		return "■", "aborted", t.Problem
	case status == engine.StatusRunning:
		return "●", "running", t.Glyph
	}
	return "?", status.String(), t.Text
}

// started is when a run started as the panel shows it: the time of day for
// a run of today, the day and minute for an earlier one this year, the
// date for one of an earlier year. Today is now's day, in now's location;
// with no now, every run is an earlier one, in local time.
func started(at, now time.Time) string {
	if at.IsZero() {
		return "-"
	}
	loc := time.Local
	if !now.IsZero() {
		loc = now.Location()
	}
	at = at.In(loc)
	y, m, d := at.Date()
	if !now.IsZero() {
		ny, nm, nd := now.Date()
		switch {
		case y == ny && m == nm && d == nd:
			return at.Format("15:04:05")
		case y != ny:
			return at.Format("2006-01-02")
		}
	}
	return at.Format("Jan 02 15:04")
}

// duration rounds a duration to what a person reads, as `stepwise runs`
// does: <1ms, 840ms, 2.2s, 3m05s, 1h02m.
func duration(d time.Duration) string {
	switch {
	case d <= 0:
		return "-"
	case d < time.Millisecond:
		return "<1ms"
	case d < time.Second:
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		d = d.Round(time.Second)
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	d = d.Round(time.Minute)
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// tokens is a token count in at most five cells: 840, 12.4k, 310k, 2.1M.
func tokens(n int) string {
	switch {
	case n == 0:
		return "-"
	case n < 10_000:
		return strconv.Itoa(n)
	case n < 1_000_000:
		if n < 100_000 {
			return fmt.Sprintf("%.1fk", float64(n)/1e3)
		}
		return strconv.Itoa(n/1000) + "k"
	}
	return fmt.Sprintf("%.1fM", float64(n)/1e6)
}

// cost is a cost in dollars, to the hundredth of a cent; "-" when nothing
// was spent or a call was unpriced: a cost is never estimated.
func cost(s store.Spend) string {
	if s.Calls == 0 || s.CostUSD == nil {
		return "-"
	}
	switch c := *s.CostUSD; {
	case c > 0 && c < 0.0001:
		return "<$0.0001"
	case c < 1:
		return fmt.Sprintf("$%.4f", c)
	}
	return fmt.Sprintf("$%.2f", *s.CostUSD)
}

// signed is a delta with its sign: +120, -3, and 0 for none.
func signed(n int) string {
	if n > 0 {
		return "+" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

// signedMs is a time delta in milliseconds, rounded as duration rounds;
// under a millisecond either way is noise, and reads as none.
func signedMs(ms float64) string {
	d := time.Duration(ms * float64(time.Millisecond))
	switch {
	case d >= time.Millisecond:
		return "+" + duration(d)
	case d <= -time.Millisecond:
		return "-" + duration(-d)
	}
	return "±0"
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
