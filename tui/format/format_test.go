package format_test

import (
	"testing"
	"time"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/tui/format"
)

func TestDuration(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{-time.Second, "0ms"}, {0, "0ms"}, {time.Microsecond, "0ms"}, {time.Millisecond, "1ms"},
		{340 * time.Millisecond, "340ms"}, {999 * time.Millisecond, "999ms"},
		{1250 * time.Millisecond, "1.2s"}, {12340 * time.Millisecond, "12.3s"}, {59999 * time.Millisecond, "59.9s"},
		{2*time.Minute + 3*time.Second, "2m03s"}, {59*time.Minute + 59*time.Second, "59m59s"},
		{time.Hour + 2*time.Minute + 30*time.Second, "1h02m"}, {100*time.Hour + 59*time.Minute, "100h59m"},
	} {
		if got := format.Duration(tc.d); got != tc.want {
			t.Errorf("Duration(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

func TestRunTime(t *testing.T) {
	for d, want := range map[time.Duration]string{0: "-", time.Microsecond: "0ms", 2250 * time.Millisecond: "2.2s"} {
		if got := format.RunTime(d); got != want {
			t.Errorf("RunTime(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestMillis(t *testing.T) {
	for _, tc := range []struct {
		ms          float64
		plain, diff string
	}{
		{0, "0ms", "±0"}, {0.4, "0ms", "±0"}, {-0.9, "0ms", "±0"}, {840, "840ms", "+840ms"},
		{-2250, "0ms", "-2.2s"}, {65_000, "1m05s", "+1m05s"},
	} {
		if got := format.Millis(tc.ms); got != tc.plain {
			t.Errorf("Millis(%v) = %q, want %q", tc.ms, got, tc.plain)
		}
		if got := format.MillisDelta(tc.ms); got != tc.diff {
			t.Errorf("MillisDelta(%v) = %q, want %q", tc.ms, got, tc.diff)
		}
	}
}

func TestTokens(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{
		{0, "0"}, {208, "208"}, {999, "999"}, {1000, "1.0k"}, {12_345, "12.3k"}, {15_781, "15.8k"}, {1_049, "1.0k"},
		{1_050, "1.1k"}, {99_949, "99.9k"}, {99_950, "100k"}, {99_999, "100k"}, {100_000, "100k"}, {310_499, "310k"},
		{310_999, "311k"}, {999_499, "999k"}, {999_500, "1.0M"}, {1_000_000, "1.0M"}, {4_560_000, "4.6M"}, {4_549_999, "4.5M"},
	} {
		if got := format.Tokens(tc.n); got != tc.want {
			t.Errorf("Tokens(%d) = %q, want %q", tc.n, got, tc.want)
		}
		if got := format.Tokens(tc.n); len(got) > 5 {
			t.Errorf("Tokens(%d) = %q, wider than five cells", tc.n, got)
		}
	}
}

func TestCost(t *testing.T) {
	for _, tc := range []struct {
		usd  float64
		want string
	}{
		{0, "$0"}, {0.00004, "<$0.0001"}, {0.0001, "$0.0001"}, {0.0042, "$0.0042"}, {0.99994, "$0.9999"},
		{1.5, "$1.50"}, {12.34567, "$12.35"}, {1234.5, "$1234.50"},
	} {
		if got := format.Cost(tc.usd); got != tc.want {
			t.Errorf("Cost(%v) = %q, want %q", tc.usd, got, tc.want)
		}
	}
	free, some := 0.0, 0.25
	for _, tc := range []struct {
		calls int
		usd   *float64
		want  string
	}{{0, nil, "-"}, {0, &some, "-"}, {2, nil, "-"}, {1, &free, "$0"}, {3, &some, "$0.2500"}} {
		if got := format.Spend(tc.calls, tc.usd); got != tc.want {
			t.Errorf("Spend(%d, %v) = %q, want %q", tc.calls, tc.usd, got, tc.want)
		}
	}
}

func TestBytes(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{{0, "0 B"}, {1023, "1023 B"}, {1024, "1.0 KiB"}, {1536, "1.5 KiB"}, {5 << 20, "5.0 MiB"}, {3 << 30, "3.0 GiB"}} {
		if got := format.Bytes(tc.n); got != tc.want {
			t.Errorf("Bytes(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

func TestShortIDAndDelta(t *testing.T) {
	for id, want := range map[string]string{"": "", "abc": "abc", "0123456789ab": "0123456789ab", "0123456789abcdef": "0123456789ab"} {
		if got := format.ShortID(id); got != want {
			t.Errorf("ShortID(%q) = %q, want %q", id, got, want)
		}
	}
	for n, want := range map[int]string{0: "0", 120: "+120", -3: "-3"} {
		if got := format.Delta(n); got != want {
			t.Errorf("Delta(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestStarted(t *testing.T) {
	loc := time.FixedZone("X", 2*3600)
	now := time.Date(2026, 11, 27, 14, 0, 0, 0, loc)
	for _, tc := range []struct {
		at   time.Time
		now  time.Time
		want string
	}{
		{time.Time{}, now, "-"},
		{time.Date(2026, 11, 27, 9, 3, 5, 0, loc), now, "09:03:05"},
		// The day before in UTC is today in now's location.
		{time.Date(2026, 11, 26, 23, 30, 0, 0, time.UTC), now, "01:30:00"},
		{time.Date(2026, 11, 26, 22, 30, 0, 0, loc), now, "Nov 26 22:30"},
		{time.Date(2025, 1, 2, 3, 4, 5, 0, loc), now, "2025-01-02"},
		{time.Date(2025, 1, 2, 3, 4, 5, 0, time.Local), time.Time{}, "Jan 02 03:04"},
	} {
		if got := format.Started(tc.at, tc.now); got != tc.want {
			t.Errorf("Started(%v, %v) = %q, want %q", tc.at, tc.now, got, tc.want)
		}
	}
	if got := format.Timestamp(time.Time{}); got != "-" {
		t.Errorf("Timestamp(zero) = %q, want -", got)
	}
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.Local)
	if got := format.Timestamp(at); got != "2025-01-02 03:04:05" {
		t.Errorf("Timestamp(%v) = %q", at, got)
	}
}

// TestMarks: a unit a replay gave a person's recorded value reads as
// replayed, in its mark and its text alike, whatever action the record
// names; one decided in the run reads as decided.
func TestMarks(t *testing.T) {
	for _, tc := range []struct{ decided, reused, mark, text string }{
		{"answer", "", format.MarkDecided, format.MarkDecided + " answer"},
		{"answer", "replay", format.MarkReplayed, format.MarkReplayed + " replayed"},
		{"", "replay", format.MarkReplayed, format.MarkReplayed + " replayed"},
		{"", "fork", format.MarkReused, format.MarkReused + " reused by the fork"},
		{"set", "", format.MarkDecided, format.MarkDecided + " set by the fork (--set)"},
		{"", "", "", ""},
	} {
		if got := format.Mark(tc.decided, tc.reused); got != tc.mark {
			t.Errorf("format.Mark(%q, %q) = %q, want %q", tc.decided, tc.reused, got, tc.mark)
		}
		if got := format.MarkText(tc.decided, tc.reused); got != tc.text {
			t.Errorf("format.MarkText(%q, %q) = %q, want %q", tc.decided, tc.reused, got, tc.text)
		}
	}
}

// TestDecisionText says where a decision of the record was made: at its
// stop, or, for a fork's --set, before the fork ran, at none.
func TestDecisionText(t *testing.T) {
	for _, tc := range []struct {
		action string
		stop   engine.StopKind
		text   string
	}{
		{"replace", engine.StopError, "replace at its error stop"},
		{"inject", engine.StopStep, "inject at its step stop"},
		{"set", engine.StopStep, "set by the fork (--set)"},
	} {
		if got := format.DecisionText(tc.action, tc.stop); got != tc.text {
			t.Errorf("format.DecisionText(%q, %q) = %q, want %q", tc.action, tc.stop, got, tc.text)
		}
	}
}
