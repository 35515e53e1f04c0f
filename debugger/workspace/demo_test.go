package workspace_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stepwise-dev/stepwise/debugger/workspace"
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/plans/examples"
)

// TestMain makes the test binary the demo's tracker server when the demo
// project's config starts it (as `stepwise __demo-mcp`), the way the
// stepwise binary serves it.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "__demo-mcp" {
		if err := examples.ServeTracker(context.Background()); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestDemoRunsStartFresh: every run of the demo starts from the tracker's
// seed, though the runs of one workspace (a workbench session) share one
// tracker server: a comment one run posts is not there for the next.
func TestDemoRunsStartFresh(t *testing.T) {
	dir := t.TempDir()
	if err := examples.WriteProject(dir, os.Args[0]); err != nil {
		t.Fatal(err)
	}
	ws := reopen(t, dir)
	ctx := context.Background()
	run := func(name string, inputs map[string]any) *engine.Result {
		t.Helper()
		d, err := ws.Load(filepath.Join(dir, ".stepwise", "plans", name+".yaml"))
		if err != nil || d.Plan == nil {
			t.Fatalf("load %s: %v", name, err)
		}
		res, err := ws.Run(ctx, d.Plan, inputs, workspace.RunOptions{})
		if err != nil || res.Status != engine.StatusOK {
			t.Fatalf("run %s: %v %+v", name, err, res)
		}
		return res
	}
	comments := func() any {
		t.Helper()
		out, _ := run("issue_timeline", map[string]any{"id": "CHK-107"}).Output.(map[string]any)
		return out["comments"]
	}
	if n := comments(); n != 2 {
		t.Fatalf("CHK-107 has %v comments, want the seed's 2", n)
	}
	findings := []any{map[string]any{"id": "CHK-107", "severity": "sev2", "component": "payments-gateway", "duplicate_of": "", "summary": "Retries back off."}}
	run("post_triage_notes", map[string]any{"findings": findings})
	if n := comments(); n != 2 {
		t.Errorf("after another run posted on CHK-107, the next run sees %v comments, want the seed's 2", n)
	}
}
