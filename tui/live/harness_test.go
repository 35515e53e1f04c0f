package live_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/config"
	"github.com/stepwise-dev/stepwise/engine/model"
	"github.com/stepwise-dev/stepwise/engine/tools"
	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/tui/live"
)

// testConfig is the config.toml of a test project: one script provider
// answering every role from replies.yaml, priced so costs show.
const testConfig = `
[providers.script]
type = "script"
file = ".stepwise/replies.yaml"

[models]
default = { provider = "script", model = "scripted" }

[pricing.scripted]
input = 1.0
output = 2.0

[storage]
backend = "memory"
`

// recorded collects a run's events, as the workbench's sink would.
type recorded struct {
	mu     sync.Mutex
	events []engine.Event
}

func (r *recorded) Event(e engine.Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

// runPlan writes files (paths relative to .stepwise/) into a fresh
// project, runs plans/p.yaml through a real engine with the script
// provider, and returns the plan and the events the run emitted.
func runPlan(t testing.TB, files map[string]string) (*plans.Plan, []engine.Event) {
	t.Helper()
	dir := t.TempDir()
	all := map[string]string{"config.toml": testConfig, "replies.yaml": "replies: []\n"}
	for k, v := range files {
		all[k] = v
	}
	for name, content := range all {
		if strings.HasPrefix(name, "plans/") && !strings.Contains(content, "\nname:") {
			content = "name: test plan\ndescription: a plan under test\n" + content
		}
		path := filepath.Join(dir, ".stepwise", name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg, _, err := config.Load(config.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	cat := tools.Load(cfg)
	path := filepath.Join(dir, ".stepwise", "plans", "p.yaml")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	plan, report := plans.Load(path, src)
	if !report.OK() {
		t.Fatalf("plan does not load: %v", report.Problems)
	}
	rt := tools.NewRuntime(cfg, cat)
	defer rt.Close()
	ev := &recorded{}
	eng := engine.New(engine.Options{Config: cfg, Catalog: cat, Tools: rt,
		Models: model.New(cfg, model.Options{Backoff: func(int) time.Duration { return 0 }}), Sinks: []engine.Sink{ev}})
	if _, err := eng.Run(context.Background(), plan, nil); err != nil {
		t.Fatalf("run did not start: %v", err)
	}
	return plan, ev.events
}

// dump draws the visible rows one a line: indent, label, kind, tool,
// status, and the tokens where there are any.
func dump(tr *live.Tree) string {
	var b strings.Builder
	for _, r := range tr.Rows(0, tr.Len()) {
		fmt.Fprintf(&b, "%s%s %s", strings.Repeat("  ", r.Depth), r.Label, r.Kind)
		if r.Tool != "" {
			fmt.Fprintf(&b, " %s", r.Tool)
		}
		fmt.Fprintf(&b, " %s", r.Status)
		if u := r.Spend.Usage; r.Spend.Calls > 0 {
			fmt.Fprintf(&b, " calls=%d in=%d out=%d", r.Spend.Calls, u.InputTokens, u.OutputTokens)
		}
		if r.Collapsed {
			b.WriteString(" +")
		}
		b.WriteByte('\n')
	}
	return b.String()
}
