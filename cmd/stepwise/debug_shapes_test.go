package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDebugUnmatchedBreakpoints checks that stepwise debug flags, on the
// demo, a breakpoint no path of the plan can match, with the nearest
// pattern that would: a kept one as the session starts, one set by break
// (the answer carries it as "warning"), and each in the breakpoints list.
// A breakpoint that can match carries no warning.
func TestDebugUnmatchedBreakpoints(t *testing.T) {
	demoProject(t)
	kept := `[{"id": 1, "pattern": "assess/do.3/agent.2", "enabled": true},
 {"id": 2, "pattern": "assess/do.*/verdict/agent.1", "kinds": ["round"], "enabled": true}]`
	os.MkdirAll(filepath.Join(".stepwise", "breakpoints"), 0o755)
	if err := os.WriteFile(filepath.Join(".stepwise", "breakpoints", "triage_queue.json"), []byte(kept), 0o644); err != nil {
		t.Fatal(err)
	}
	stdin := strings.Join([]string{
		`break assess/do.*/verdcit`,
		`break confirm ask`,
		`break **/tracker__search round`,
		`breakpoints`,
		`quit`,
	}, "\n") + "\n"
	out, errOut, _ := debugCLI(t, stdin, "triage_queue", `{"on_call": "Priya"}`, "--json")
	lines := jsonLines(t, out)
	warnings := map[float64]string{}
	var listed []any
	for _, l := range lines {
		if b, ok := l["breakpoint"].(map[string]any); ok {
			w, _ := l["warning"].(string)
			warnings[b["id"].(float64)] = w
			if u, _ := b["unmatched"].(string); u != w {
				t.Errorf("breakpoint %v: warning %q, unmatched %q", b["id"], w, u)
			}
		}
		if l["breakpoints"] != nil {
			listed = l["breakpoints"].([]any)
		}
	}
	want := map[float64]string{
		1: "no path of the plan matches assess/do.3/agent.2, so it never stops; the nearest that would: assess/do.3/verdict/agent.2",
		2: "",
		3: "no path of the plan matches assess/do.*/verdcit, so it never stops; the nearest that would: assess/do.*/verdict",
		4: "",
		5: "no round stop of the plan is at a path **/tracker__search matches, so it never stops; the nearest that would: **",
	}
	for id, w := range want {
		if warnings[id] != w {
			t.Errorf("breakpoint %v: warning %q, want %q\n%s\n%s", id, warnings[id], w, out, errOut)
		}
	}
	if len(listed) != 5 {
		t.Fatalf("breakpoints listed %v", listed)
	}
	for _, b := range listed {
		b := b.(map[string]any)
		if u, _ := b["unmatched"].(string); u != want[b["id"].(float64)] {
			t.Errorf("breakpoints: %v unmatched %q", b["id"], u)
		}
	}
	// Without --json, the warnings are said on stderr.
	_, errOut, _ = debugCLI(t, "break assess/do.1/agent.2\nquit\n", "triage_queue", `{"on_call": "Priya"}`)
	if !strings.Contains(errOut, "breakpoint 1 at assess/do.3/agent.2 (kept)\nwarning: "+want[1]) ||
		!strings.Contains(errOut, "breakpoint 6 at assess/do.1/agent.2\nwarning: "+strings.ReplaceAll(want[1], "do.3", "do.1")) {
		t.Errorf("text:\n%s", errOut)
	}
}
