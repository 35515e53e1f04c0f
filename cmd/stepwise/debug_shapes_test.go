package main

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
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

// TestDebugApproveUnheld checks that stepwise debug says, on the demo, an
// --approve pattern that can hold no call of the plan: one no call's path
// matches, with the nearest that would hold one, and one whose every call
// is of a read-only tool; with --json as {approve, warning} lines before
// the first stop, as a kept breakpoint's warning is said. A pattern that
// holds the tracker's calls, an MCP server's tools, is said nothing of.
func TestDebugApproveUnheld(t *testing.T) {
	demoProject(t)
	args := []string{"triage_queue", `{"on_call": "Priya"}`, "--approve", "**/nomatch__*", "--approve", "**/card", "--approve", "**/tracker__*"}
	want := map[string]string{
		"**/nomatch__*": "no tool call of the plan is at a path it matches, so it holds none; the nearest that would: **/tracker__list_issues",
		"**/card":       "every tool call of the plan at a path it matches is of a read-only tool (builtin__reshape), and read-only tools are never held, so it holds none",
	}
	out, errOut, code := debugCLI(t, "quit\n", append(args, "--json")...)
	if code != exitInterrupted {
		t.Fatalf("quit at the first stop: exit %d\n%s", code, errOut)
	}
	lines := jsonLines(t, out)
	got := map[string]string{}
	firstStop := slices.IndexFunc(lines, func(l map[string]any) bool { return l["stop"] != nil })
	for i, l := range lines {
		if p, ok := l["approve"].(string); ok {
			got[p], _ = l["warning"].(string)
			if firstStop >= 0 && i > firstStop {
				t.Errorf("the warning on %s came after the first stop", p)
			}
		}
	}
	if !maps.Equal(got, want) {
		t.Errorf("--json warnings\n got %q\nwant %q\n%s", got, want, out)
	}
	// Without --json, on stderr.
	_, errOut, _ = debugCLI(t, "quit\n", args...)
	for p, w := range want {
		if !strings.Contains(errOut, "warning: --approve "+p+": "+w+"\n") {
			t.Errorf("stderr does not warn of %s:\n%s", p, errOut)
		}
	}
	if strings.Contains(errOut, "--approve **/tracker__*") {
		t.Errorf("a pattern that holds calls is warned of:\n%s", errOut)
	}
}
