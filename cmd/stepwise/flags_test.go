package main

import (
	"encoding/json"
	"testing"
)

// TestFlagValues refuses a flag value that cannot be read, or that would
// quietly mean something else (--max-cost 0 or NaN: no cap), with one
// message that says what the flag takes, never a parser's error.
func TestFlagValues(t *testing.T) {
	const cost = "takes a cost in USD above 0 (2.50, $2.50), not "
	const duration = "takes a duration such as 7d, 2w, 36h, 1d12h or 90m (units ns, us, ms, s, m, h, d, w), not "
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"a cost of 0", []string{"run", "report", "--max-cost", "0"}, "--max-cost " + cost + "'0'"},
		{"a negative cost", []string{"run", "report", "--max-cost", "-1"}, "--max-cost " + cost + "'-1'"},
		{"a cost of NaN", []string{"run", "report", "--max-cost", "NaN"}, "--max-cost " + cost + "'NaN'"},
		{"an infinite cost", []string{"run", "report", "--max-cost", "Inf"}, "--max-cost " + cost + "'Inf'"},
		{"a cost that is no number", []string{"run", "report", "--max-cost", "abc"}, "--max-cost " + cost + "'abc'"},
		{"a dollar sign alone", []string{"run", "report", "--max-cost", "$"}, "--max-cost " + cost + "'$'"},
		{"a cost of 0 to debug", []string{"debug", "report", "--max-cost", "0"}, "--max-cost " + cost + "'0'"},
		{"a cost of 0 to fork", []string{"fork", "0123", "--from", "E1", "--max-cost", "0"}, "--max-cost " + cost + "'0'"},
		{"a cost that is no number to fork --debug", []string{"fork", "0123", "--from", "E1", "--debug", "--max-cost", "abc"}, "--max-cost " + cost + "'abc'"},
		{"a progress interval that is no duration", []string{"run", "report", "--progress-every", "soon"}, "--progress-every " + duration + "'soon'"},
		{"days spelled out", []string{"runs", "prune", "--older-than", "7days"}, "--older-than " + duration + "'7days'"},
		{"a number without its unit", []string{"runs", "prune", "--older-than", "1d2"}, "--older-than " + duration + "'1d2'"},
		{"an age below 0", []string{"runs", "prune", "--older-than", "-36h"}, "--older-than takes a duration above 0 (7d, 2w, 36h, 90m), not -36h"},
		{"no age", []string{"runs", "prune"}, "stepwise runs prune needs --older-than, a duration above 0 (7d, 2w, 36h, 90m)"},
		{"a count that is no number", []string{"runs", "prune", "--older-than", "7d", "--keep", "x"}, "--keep takes a whole number, not 'x'"},
		{"a limit that is no whole number", []string{"runs", "--limit", "1.5"}, "--limit takes a whole number, not '1.5'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runProject(t)
			_, errOut, code := runCLI(t, tt.args...)
			if code != exitUsage || errOut != "stepwise: "+tt.want+"\n" {
				t.Errorf("exit %d, want %d; stderr:\n%s\nwant:\nstepwise: %s", code, exitUsage, errOut, tt.want)
			}
		})
	}
}

// TestFlagValueRefusalsKeepTheirForm refuses a flag value that cannot be
// read in the form the command line asked for, as any other refusal of
// the run: the envelope on stdout with --json, an error line on stderr
// with --events jsonl, a JSON line on stdout with debug's --json, even
// where --json or --events comes after the bad value. It is a bad command
// line all the same: exit 2.
func TestFlagValueRefusalsKeepTheirForm(t *testing.T) {
	const cost = "--max-cost takes a cost in USD above 0 (2.50, $2.50), not 'abc'"
	const every = "--progress-every takes a duration such as 7d, 2w, 36h, 1d12h or 90m (units ns, us, ms, s, m, h, d, w), not 'soon'"
	const quiet = "--quiet does not go with --debug: under the debugger, the stops and answers tell the run (with --json, as JSON lines)"
	// Each form is where the refusal is found, and the key its message is
	// under.
	type form struct {
		stdout bool
		key    string
	}
	envelope, eventLine, debugLine := form{true, "error"}, form{false, "message"}, form{true, "error"}
	tests := []struct {
		name string
		args []string
		form form
		want string
	}{
		{"run --json", []string{"run", "report", "--max-cost", "abc", "--json"}, envelope, cost},
		{"run --events jsonl", []string{"run", "report", "--max-cost", "abc", "--events", "jsonl"}, eventLine, cost},
		{"run --json, a bad interval", []string{"run", "report", "--progress-every", "soon", "--json"}, envelope, every},
		{"debug --json", []string{"debug", "report", "--max-cost", "abc", "--json"}, debugLine, cost},
		{"debug --json, inputs that are not JSON", []string{"debug", "report", "{team", "--json"}, debugLine, "the inputs are not JSON: invalid character 't' looking for beginning of object key string"},
		{"fork --json", []string{"fork", "0123", "--from", "E1", "--max-cost", "abc", "--json"}, envelope, cost},
		{"fork --events jsonl", []string{"fork", "0123", "--from", "E1", "--max-cost", "abc", "--events", "jsonl"}, eventLine, cost},
		{"fork --debug --json", []string{"fork", "0123", "--from", "E1", "--max-cost", "abc", "--debug", "--json"}, debugLine, cost},
		{"replay --json", []string{"replay", "0123", "--progress-every", "soon", "--json"}, envelope, every},
		{"fork --debug -q --json", []string{"fork", "0123", "--from", "E1", "--debug", "-q", "--json"}, debugLine, quiet},
		{"replay --debug -q --json", []string{"replay", "0123", "--debug", "-q", "--json"}, debugLine, quiet},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runProject(t)
			out, errOut, code := runCLI(t, tt.args...)
			where := errOut
			if tt.form.stdout {
				where = out
			}
			var refusal map[string]any
			if err := json.Unmarshal([]byte(where), &refusal); err != nil || refusal[tt.form.key] != tt.want || code != exitUsage {
				t.Errorf("exit %d, want %d; the refusal is not %s %q in JSON (%v)\nstdout:\n%s\nstderr:\n%s", code, exitUsage, tt.form.key, tt.want, err, out, errOut)
			}
		})
	}
}

// TestQuietDoesNotGoWithDebug refuses --quiet and --progress-every under
// --debug, as --events is: the debugger's stops and answers tell the run,
// and would leave nothing out, so that either flag would be ignored.
func TestQuietDoesNotGoWithDebug(t *testing.T) {
	const refused = " does not go with --debug: under the debugger, the stops and answers tell the run (with --json, as JSON lines)\n"
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"fork", "0123", "--from", "E1", "--debug", "-q"}, "stepwise: --quiet" + refused},
		{[]string{"replay", "0123", "--debug", "--quiet"}, "stepwise: --quiet" + refused},
		{[]string{"replay", "0123", "--debug", "--progress-every", "1s"}, "stepwise: --progress-every" + refused},
		{[]string{"fork", "0123", "--from", "E1", "--debug", "--events", "jsonl"}, "stepwise: --events" + refused},
	}
	for _, tt := range tests {
		runProject(t)
		out, errOut, code := runCLI(t, tt.args...)
		if code != exitUsage || out != "" || errOut != tt.want {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2, stderr %q", tt.args, code, out, errOut, tt.want)
		}
	}
}
