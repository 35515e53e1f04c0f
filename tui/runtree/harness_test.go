package runtree_test

import (
	"context"
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
// provider, and returns the plan and the events the run emitted. The
// events' times are set a tenth of a second apart, so that the durations
// on screen do not depend on how fast the machine ran the plan.
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
	t0 := time.Unix(1_700_000_000, 0)
	for i := range ev.events {
		ev.events[i].Time = t0.Add(time.Duration(i) * 100 * time.Millisecond)
	}
	return plan, ev.events
}
