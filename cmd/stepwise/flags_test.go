package main

import "testing"

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
