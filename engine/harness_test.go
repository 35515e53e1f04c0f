package engine_test

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

// project is a real project directory: .stepwise/ with its config, plans,
// tools and replies, loaded the way the CLI loads it.
type project struct {
	dir string
}

// newProject writes files (paths relative to .stepwise/) into a fresh
// project. config.toml defaults to testConfig and replies.yaml to none.
func newProject(t *testing.T, files map[string]string) *project {
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
	return &project{dir: dir}
}

// recorded collects a run's events.
type recorded struct {
	mu     sync.Mutex
	events []engine.Event
}

func (r *recorded) Event(e engine.Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

// of returns the events of one kind, in order.
func (r *recorded) of(kind engine.EventKind) []engine.Event {
	var out []engine.Event
	for _, e := range r.events {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// paths returns the paths of the events of one kind, in order.
func (r *recorded) paths(kind engine.EventKind) []string {
	var out []string
	for _, e := range r.of(kind) {
		out = append(out, e.Path)
	}
	return out
}

// outcome is one run of a plan in a test project.
type outcome struct {
	res    *engine.Result
	err    error // the run could not start
	events *recorded
}

// run loads the plan named file (relative to .stepwise/) and runs it with
// the given inputs and hook.
func (p *project) run(t *testing.T, file string, inputs map[string]any, hook engine.Hook) outcome {
	t.Helper()
	return p.runContext(t, context.Background(), file, inputs, hook)
}

// runContext is run under ctx.
func (p *project) runContext(t *testing.T, ctx context.Context, file string, inputs map[string]any, hook engine.Hook) outcome {
	t.Helper()
	ev := &recorded{}
	res, err := p.runWith(t, ctx, file, inputs, hook, ev)
	return outcome{res: res, err: err, events: ev}
}

// runWith loads the plan named file (relative to .stepwise/) and runs it
// under ctx with the given inputs, hook and sinks.
func (p *project) runWith(t *testing.T, ctx context.Context, file string, inputs map[string]any, hook engine.Hook, sinks ...engine.Sink) (*engine.Result, error) {
	t.Helper()
	cfg, _, err := config.Load(config.Options{Dir: p.dir})
	if err != nil {
		t.Fatal(err)
	}
	cat := tools.Load(cfg)
	path := filepath.Join(p.dir, ".stepwise", file)
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	plan, report := plans.Load(path, src, plans.Stepwise)
	if !report.OK() {
		t.Fatalf("plan does not load: %v", report.Problems)
	}
	rt := tools.NewRuntime(cfg, cat)
	defer rt.Close()
	eng := engine.New(engine.Options{Config: cfg, Catalog: cat, Tools: rt,
		Models: model.New(cfg, model.Options{Backoff: noBackoff}), Hook: hook, Sinks: sinks})
	return eng.Run(ctx, plan, inputs)
}

func noBackoff(int) time.Duration { return 0 }
