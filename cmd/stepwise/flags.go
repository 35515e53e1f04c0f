package main

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The flag values whose reading pflag's own would get wrong: a cost, which
// people write with a dollar sign and which 0, NaN or Inf would turn into no
// cap without a word, a duration in days, the natural unit for the age of
// runs, which time.ParseDuration does not know, and the form of --events,
// which takes one word where a string flag takes any.

// takes is a flag value refused, saying what the flag takes instead;
// flagValueError makes the message of it.
type takes string

func (t takes) Error() string { return string(t) }

// flagValueError is the usage error for a flag value that cannot be read:
// "--max-cost takes a cost in USD above 0 (2.50, $2.50), not 'abc'", never
// a parser's own error. An int flag's value that is not a number is said
// the same way; other errors come back as they are.
func flagValueError(err error) error {
	var bad *pflag.InvalidValueError
	if !errors.As(err, &bad) {
		return err
	}
	if refused := valueRefusal(bad.GetFlag(), bad.GetValue(), err); refused != nil {
		return refused
	}
	return err
}

// valueRefusal says what flag takes, for value, which it refused with err;
// nil where err says nothing of what it takes.
func valueRefusal(flag *pflag.Flag, value string, err error) error {
	var what takes
	switch {
	case errors.As(err, &what):
	case flag.Value.Type() == "int":
		what = "a whole number"
	default:
		return nil
	}
	return fmt.Errorf("--%s takes %s, not '%s'", flag.Name, what, value)
}

// heldValue is a flag value of a command that refuses its command line in
// the form the command line asks for (run, debug, replay and fork: a
// --json envelope, an --events jsonl line): a value it cannot read is
// held, for the command to refuse first thing (heldValueError) as it
// refuses every other bad command line. Refused by the parse, it would be
// refused before the flags after it (--json, --events) were read, and in
// plain text whatever they asked for.
type heldValue struct {
	pflag.Value
	flag *pflag.Flag
	// refusal is why the first value that could not be read was refused.
	refusal error
}

func (v *heldValue) Set(s string) error {
	if err := v.Value.Set(s); err != nil && v.refusal == nil {
		v.refusal = valueRefusal(v.flag, s, err)
		if v.refusal == nil {
			v.refusal = fmt.Errorf("--%s: %w", v.flag.Name, err)
		}
	}
	return nil
}

// heldFlag adds the flag name, whose value is held, to cmd.
func heldFlag(cmd *cobra.Command, value pflag.Value, name, usage string) {
	held := &heldValue{Value: value}
	held.flag = cmd.Flags().VarPF(held, name, "", usage)
}

// heldValueError is the usage error for the first of cmd's held flag
// values (in the order of their names) that could not be read; nil when
// every one was.
func heldValueError(cmd *cobra.Command) error {
	var refusal error
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if held, ok := f.Value.(*heldValue); ok && refusal == nil && held.refusal != nil {
			refusal = usageError{held.refusal}
		}
	})
	return refusal
}

// costValue is a cost in USD above 0: 2.50, or $2.50.
type costValue struct{ usd *float64 }

func (v costValue) Set(s string) error {
	usd, err := strconv.ParseFloat(strings.TrimPrefix(strings.TrimSpace(s), "$"), 64)
	// !(usd > 0) refuses NaN as well as 0 and less.
	if err != nil || !(usd > 0) || math.IsInf(usd, 0) {
		return takes("a cost in USD above 0 (2.50, $2.50)")
	}
	*v.usd = usd
	return nil
}

func (v costValue) String() string {
	return strconv.FormatFloat(*v.usd, 'f', -1, 64)
}

func (v costValue) Type() string { return "USD" }

// addMaxCost adds --max-cost, the spend cap of one run over [limits]
// cost_usd, to a command whose run calls models: run, debug and fork.
func addMaxCost(cmd *cobra.Command, usd *float64) {
	heldFlag(cmd, costValue{usd}, "max-cost", "stop the run before its next model call once its priced calls cost this many USD ([limits] cost_usd); under the debugger, hold it there")
}

// eventsValue is the form --events writes a run's events in on stderr:
// jsonl, one JSON object a line, the only one there is.
type eventsValue struct{ form *string }

func (v eventsValue) Set(s string) error {
	if s != "jsonl" {
		return takes("jsonl")
	}
	*v.form = s
	return nil
}

func (v eventsValue) String() string { return *v.form }

func (v eventsValue) Type() string { return "string" }

// addEvents adds --events to a command that runs a plan's steps for real,
// for a script to watch: run and fork.
func addEvents(cmd *cobra.Command, form *string) {
	heldFlag(cmd, eventsValue{form}, "events", "write every event to stderr as it happens: jsonl")
}

// durationValue is a duration as time.ParseDuration reads it (90m, 36h,
// 1h30m), with days and weeks among its units (7d, 2w, 1.5d, 1w2d, 1d12h).
type durationValue struct{ d *time.Duration }

// durationTakes says what durationValue reads.
const durationTakes = takes("a duration such as 7d, 2w, 36h, 1d12h or 90m (units ns, us, ms, s, m, h, d, w)")

func (v durationValue) Set(s string) error {
	d, err := parseDuration(strings.TrimSpace(s))
	if err != nil {
		return durationTakes
	}
	*v.d = d
	return nil
}

// parseDuration reads what durationValue takes: a sign, then numbers each
// with its unit, as time.ParseDuration reads them, but that d and w may be
// among them.
func parseDuration(s string) (time.Duration, error) {
	sign, rest := time.Duration(1), strings.TrimPrefix(s, "+")
	if r, ok := strings.CutPrefix(s, "-"); ok {
		sign, rest = -1, r
	}
	if rest == "0" {
		return 0, nil
	}
	if rest == "" {
		return 0, durationTakes
	}
	isNumber := func(r rune) bool { return r >= '0' && r <= '9' || r == '.' }
	var total time.Duration
	for rest != "" {
		// A number, then its unit: what runs up to the next number.
		unit := strings.IndexFunc(rest, func(r rune) bool { return !isNumber(r) })
		if unit <= 0 {
			return 0, durationTakes
		}
		end := len(rest)
		if next := strings.IndexFunc(rest[unit:], isNumber); next >= 0 {
			end = unit + next
		}
		term, err := durationTerm(rest[:unit], rest[unit:end])
		if err != nil || term > math.MaxInt64-total {
			return 0, durationTakes
		}
		total, rest = total+term, rest[end:]
	}
	return sign * total, nil
}

// durationTerm is one number and its unit of what durationValue takes.
func durationTerm(number, unit string) (time.Duration, error) {
	var length time.Duration
	switch unit {
	case "d":
		length = 24 * time.Hour
	case "w":
		length = 7 * 24 * time.Hour
	default:
		return time.ParseDuration(number + unit)
	}
	count, err := strconv.ParseFloat(number, 64)
	if err != nil || count*float64(length) >= math.MaxInt64 {
		return 0, durationTakes
	}
	return time.Duration(count * float64(length)), nil
}

// String says the duration as it is likely typed: 7d rather than
// 168h0m0s.
func (v durationValue) String() string {
	const day = 24 * time.Hour
	switch d := *v.d; {
	case d == 0:
		// pflag leaves a default of "0" out of the help.
		return "0"
	case d%day == 0:
		return strconv.FormatInt(int64(d/day), 10) + "d"
	default:
		// 36h, not time.Duration's 36h0m0s.
		s := d.String()
		if strings.HasSuffix(s, "m0s") {
			s = strings.TrimSuffix(s, "0s")
		}
		if strings.HasSuffix(s, "h0m") {
			s = strings.TrimSuffix(s, "0m")
		}
		return s
	}
}

func (v durationValue) Type() string { return "duration" }
