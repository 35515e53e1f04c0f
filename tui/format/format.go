// Package format writes the quantities of a run as a person reads them, one
// style for each, so that the same run reads the same in `stepwise runs`,
// `stepwise inspect`, the runs panel, the run tree, the inspector and the
// status bar. The CLI imports it as well as the panes.
//
// The styles:
//
//   - A duration is cut, never rounded, so that a running step's time never
//     shows more than has passed and the finished step keeps the figure it
//     showed last: 0ms (under a millisecond), 340ms, 1.2s, 12.3s, 2m03s,
//     1h02m. A run that
//     has no time (it is still going, or was cut off) shows -.
//   - A time difference is a duration with its sign: +840ms, -2.2s, and ±0
//     for under a millisecond either way, which is noise.
//   - A token count fits in five cells, cut as durations are: 840, 12.3k,
//     310k, 4.5M. The caller adds a unit (" tok", " tokens") where no column
//     heading says what the figure is. Only the itemised usage of `stepwise
//     inspect` (input, output, cache write, cache read) states exact counts,
//     which is what it is for.
//   - A cost is in dollars, to the hundredth of a cent below a dollar and to
//     the cent above: $0.0042, $12.35; <$0.0001 for a cost too small to show
//     and $0 for a free one. Spend is "-" when nothing was spent or a call
//     was unpriced: a cost is never estimated. A spend cap is no cost: it
//     is said as it was given, with engine.CapText.
//   - A run id is shown by its first twelve characters, as many as any
//     command accepts to tell runs apart; a full id is printed as it is.
//   - When a run started, in a pane: the time of day for today, the day and
//     minute for an earlier day this year, the date for an earlier year, to
//     fit a narrow column. On the command line, which has no width to save
//     and whose output outlives the day, a full local timestamp.
//   - A signed count: +120, -3, 0.
package format

import (
	"strconv"
	"time"

	"github.com/stepwise-dev/stepwise/engine"
)

// ShortIDLength is how many characters of a run id a list shows.
const ShortIDLength = 12

// ShortID is a run id as a list shows it.
func ShortID(id string) string {
	if len(id) > ShortIDLength {
		return id[:ShortIDLength]
	}
	return id
}

// Duration is a duration as a person reads it, cut to its shown precision.
func Duration(d time.Duration) string {
	switch {
	case d < time.Second:
		return strconv.Itoa(int(max(d, 0)/time.Millisecond)) + "ms"
	case d < time.Minute:
		return tenths(int64(d/(100*time.Millisecond))) + "s"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + "m" + twoDigits(int(d%time.Minute/time.Second)) + "s"
	}
	return strconv.Itoa(int(d/time.Hour)) + "h" + twoDigits(int(d%time.Hour/time.Minute)) + "m"
}

// RunTime is how long a run took, as a list of runs shows it.
func RunTime(d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	return Duration(d)
}

// Millis is a duration recorded in milliseconds, as Duration writes it.
func Millis(ms float64) string {
	return Duration(time.Duration(ms * float64(time.Millisecond)))
}

// MillisDelta is a time difference recorded in milliseconds, with its sign.
func MillisDelta(ms float64) string {
	d := time.Duration(ms * float64(time.Millisecond))
	switch {
	case d >= time.Millisecond:
		return "+" + Duration(d)
	case d <= -time.Millisecond:
		return "-" + Duration(-d)
	}
	return "±0"
}

// Tokens is a token count in at most five cells, rounded to the nearest
// of the unit it is written in (15781 is 15.8k); a count that rounds up
// to the next unit is written in it (99960 is 100k, not 100.0k).
func Tokens(n int) string {
	if n < 1000 {
		return strconv.Itoa(n)
	}
	if t := (n + 50) / 100; t < 1000 {
		return tenths(int64(t)) + "k"
	}
	if k := (n + 500) / 1000; k < 1000 {
		return strconv.Itoa(k) + "k"
	}
	return tenths(int64((n+50_000)/100_000)) + "M"
}

// Cost is a cost in dollars.
func Cost(usd float64) string {
	switch {
	case usd == 0:
		return "$0"
	case usd < 0.0001:
		return "<$0.0001"
	case usd < 1:
		return "$" + strconv.FormatFloat(usd, 'f', 4, 64)
	}
	return "$" + strconv.FormatFloat(usd, 'f', 2, 64)
}

// Bytes is a size in bytes, in the binary unit that keeps it under 1024,
// with a tenth from KiB on: 512 B, 4.0 KiB, 1.2 MiB.
func Bytes(n int64) string {
	if n < 1024 {
		return strconv.FormatInt(n, 10) + " B"
	}
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB"}
	size := float64(n) / 1024
	i := 0
	for ; size >= 1024 && i < len(units)-1; i++ {
		size /= 1024
	}
	return strconv.FormatFloat(size, 'f', 1, 64) + " " + units[i]
}

// Spend is the cost of calls model calls, usd nil when one was unpriced:
// "-" when there is no cost to tell.
func Spend(calls int, usd *float64) string {
	if calls == 0 || usd == nil {
		return "-"
	}
	return Cost(*usd)
}

// Delta is a signed count.
func Delta(n int) string {
	if n > 0 {
		return "+" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

// Started is when a run started, as a list shows it. Today is now's day,
// in now's location; with no now, every run is of an earlier day, in local
// time.
func Started(at, now time.Time) string {
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

// Timestamp is a time as a record states it, in local time.
func Timestamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04:05")
}

// tenths writes n tenths as a decimal with one place.
func tenths(n int64) string {
	return strconv.FormatInt(n/10, 10) + "." + strconv.FormatInt(n%10, 10)
}

func twoDigits(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

// HeldTime is a unit's wall time with how much of it its threads were
// held at stops beside it: "1m40s, 40s of it held", or the wall time
// alone when nothing was held.
func HeldTime(wall, held time.Duration) string {
	if held < time.Millisecond {
		return Duration(wall)
	}
	return Duration(wall) + ", " + Duration(held) + " of it held"
}

// The marks of a unit whose result did not come from running it, each
// its own shape: a person decided it (inject, replace, answer, ...), a
// replay gave it from its record, a fork reused the recorded result.
// A record made before units were marked says only that a step was
// skipped, which its status's own glyph shows.
const (
	MarkDecided  = "✎"
	MarkReplayed = "↺"
	MarkReused   = "⇢"
)

// Mark is the mark of a unit that the record says was decided by hand
// (decided names the action) or reused (reused is "replay" or "fork"),
// "" for one that ran.
func Mark(decided, reused string) string {
	switch {
	case reused == replayed:
		// A replay that gave a unit a person's recorded value made
		// that decision again; nobody decided it in the replay.
		return MarkReplayed
	case decided != "":
		return MarkDecided
	case reused != "":
		return MarkReused
	}
	return ""
}

// replayed is what a unit's reused mark says of a value a replay gave it
// from the record.
var replayed = engine.FromReplay.String()

// setByFork is the action a record gives a value a fork's --set gave a
// step: a person's decision, made before the fork started, at no stop.
var setByFork = engine.BySet.String()

// MarkText is the mark with what it means, for a line of text:
// "✎ inject", "✎ set by the fork (--set)", "↺ replayed", "⇢ reused by the
// fork"; "" for a unit that ran.
func MarkText(decided, reused string) string {
	switch m := Mark(decided, reused); {
	case reused == replayed:
		return m + " replayed"
	case decided == setByFork:
		return m + " " + DecisionText(decided, "")
	case decided != "":
		return m + " " + decided
	case reused != "":
		return m + " reused by the fork"
	}
	return ""
}

// DecisionText says what a decision of the record did: "replace at its
// error stop", or "set by the fork (--set)" for a value a fork's --set
// gave, which no stop asked for.
func DecisionText(action string, stop engine.StopKind) string {
	if action == setByFork {
		return "set by the fork (--set)"
	}
	return action + " at its " + string(stop) + " stop"
}
