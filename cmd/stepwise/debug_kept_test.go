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
