package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDebugKeptDisabled checks that stepwise debug says a kept breakpoint
// that is disabled is, as it lists the kept ones at the start.
func TestDebugKeptDisabled(t *testing.T) {
	demoProject(t)
	kept := `[{"id": 1, "pattern": "open_issues", "enabled": true},
 {"id": 2, "pattern": "assess/do.*/verdict", "enabled": false}]`
	os.MkdirAll(filepath.Join(".stepwise", "breakpoints"), 0o755)
	if err := os.WriteFile(filepath.Join(".stepwise", "breakpoints", "triage_queue.json"), []byte(kept), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, _ := debugCLI(t, "quit\n", "triage_queue", `{"on_call": "Priya"}`)
	for _, want := range []string{"breakpoint 1 at open_issues (kept)\n", "breakpoint 2 at assess/do.*/verdict (kept, disabled)\n"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("the kept breakpoints are not said as %q:\n%s", want, errOut)
		}
	}
}

// TestDebugKeptUnknownSteps checks that a kept breakpoint whose condition
// reads a step the plan does not have is flagged as a kept unmatched
// pattern is: as the session starts and in breakpoints, in text and in
// --json; that a --break the kept ones have already is said once; and
// that errors off says where break on error stands as the workbench does.
func TestDebugKeptUnknownSteps(t *testing.T) {
	demoProject(t)
	kept := `[{"id": 1, "pattern": "assess/do.2/verdict", "kinds": ["step"], "enabled": true},
 {"id": 8, "pattern": "queue_empty", "condition": {"value": "{{nope.x}}", "op": "eq", "to": 1}, "enabled": true}]`
	os.MkdirAll(filepath.Join(".stepwise", "breakpoints"), 0o755)
	if err := os.WriteFile(filepath.Join(".stepwise", "breakpoints", "triage_queue.json"), []byte(kept), 0o644); err != nil {
		t.Fatal(err)
	}
	const warning = "the condition reads 'nope.x', so it never holds: the plan has no step 'nope'; did you mean 'note'?"
	_, errOut, _ := debugCLI(t, "breakpoints\nerrors off\nquit\n", "triage_queue", `{"on_call": "Priya"}`, "--break", "assess/do.2/verdict step")
	for _, want := range []string{
		"breakpoint 8 at queue_empty if {{nope.x}} eq 1 (kept)\nwarning: " + warning + "\n",
		"8  queue_empty if {{nope.x}} eq 1  hits 0\n   " + warning + "\n",
		"break on error is off\n",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("want %q in:\n%s", want, errOut)
		}
	}
	if n := strings.Count(errOut, "breakpoint 1 at assess/do.2/verdict step"); n != 1 {
		t.Errorf("the kept breakpoint --break names again is said %d times, want once:\n%s", n, errOut)
	}

	out, _, _ := debugCLI(t, "breakpoints\nquit\n", "triage_queue", `{"on_call": "Priya"}`, "--json")
	var keptWarning, listed string
	for _, l := range jsonLines(t, out) {
		if b, ok := l["breakpoint"].(map[string]any); ok && b["id"] == 8.0 {
			keptWarning, _ = l["warning"].(string)
		}
		list, _ := l["breakpoints"].([]any)
		for _, b := range list {
			if b := b.(map[string]any); b["id"] == 8.0 {
				listed, _ = b["unknown_steps"].(string)
			}
		}
	}
	if keptWarning != warning || listed != warning {
		t.Errorf("--json: kept warning %q, listed unknown_steps %q, want %q:\n%s", keptWarning, listed, warning, out)
	}
}

// TestDebugCondAnswerFlagsUnknownSteps checks that the --json answer to
// cond carries the breakpoint's unknown_steps, as the answers to break and
// breakpoints do, and its warning.
func TestDebugCondAnswerFlagsUnknownSteps(t *testing.T) {
	demoProject(t)
	const warning = "the condition reads 'nope.x', so it never holds: the plan has no step 'nope'; did you mean 'note'?"
	out, _, _ := debugCLI(t, "break queue_empty\ncond 1 {{nope.x}} eq 1\nquit\n", "triage_queue", `{"on_call": "Priya"}`, "--json")
	var flagged, warned string
	for _, l := range jsonLines(t, out) {
		// cond's answer is the one that says ok.
		if b, ok := l["breakpoint"].(map[string]any); ok && l["ok"] == true {
			flagged, _ = b["unknown_steps"].(string)
			warned, _ = l["warning"].(string)
		}
	}
	if flagged != warning || warned != warning {
		t.Errorf("cond's answer: unknown_steps %q, warning %q, want %q for both:\n%s", flagged, warned, warning, out)
	}
}
