package livetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stepwise-dev/stepwise/debugger/workspace"
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/tui/live"
)

// Config is the config.toml of a test project: one script provider
// answering every role from replies.yaml, priced so costs show, and runs
// kept in memory.
const Config = `
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

// Events collects a run's events, as the workbench's sink would. It is
// safe for concurrent use: the engine emits from the goroutines of a
// run's parallel steps.
type Events struct {
	mu     sync.Mutex
	events []engine.Event
}

// Event records e.
func (r *Events) Event(e engine.Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

// All returns a copy of the events recorded so far, in order.
func (r *Events) All() []engine.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]engine.Event(nil), r.events...)
}

// Project writes files (paths relative to .stepwise/) into a fresh
// project and opens its workspace, closed when the test ends.
// config.toml defaults to Config and replies.yaml to no replies; a plan
// under plans/ without a name gets one. The configuration is read with
// HOME and the XDG directories inside the project, so that nothing of the
// machine's own configuration reaches the test.
func Project(t testing.TB, files map[string]string) (dir string, ws *workspace.Workspace) {
	t.Helper()
	dir = t.TempDir()
	all := map[string]string{"config.toml": Config, "replies.yaml": "replies: []\n"}
	for k, v := range files {
		all[k] = v
	}
	for name, content := range all {
		if strings.HasPrefix(name, "plans/") && !strings.HasPrefix(content, "name:") && !strings.Contains(content, "\nname:") {
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
	ws, err := workspace.Open(dir, workspace.Options{LookupEnv: IsolatedEnv(dir)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return dir, ws
}

// IsolatedEnv is an environment with HOME and the XDG directories inside
// dir and nothing else, for a test's configuration to read.
func IsolatedEnv(dir string) func(string) (string, bool) {
	env := map[string]string{
		"HOME":            filepath.Join(dir, "home"),
		"XDG_CONFIG_HOME": filepath.Join(dir, "xdg-config"),
		"XDG_DATA_HOME":   filepath.Join(dir, "xdg-data"),
	}
	return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

// Plan loads the plan file name (relative to .stepwise/) of the project in
// dir, failing the test when it does not load cleanly.
func Plan(t testing.TB, dir, name string) *plans.Plan {
	t.Helper()
	path := filepath.Join(dir, ".stepwise", name)
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	plan, report := plans.Load(path, src, plans.Stepwise)
	if !report.OK() {
		t.Fatalf("plan does not load: %v", report.Problems)
	}
	return plan
}

// Run writes files into a fresh project (as Project does), runs
// plans/p.yaml to its end through the real engine without inputs, and
// returns the plan and the events the run emitted.
func Run(t testing.TB, files map[string]string) (*plans.Plan, []engine.Event) {
	t.Helper()
	dir, ws := Project(t, files)
	plan := Plan(t, dir, "plans/p.yaml")
	ev := &Events{}
	if _, err := ws.Run(context.Background(), plan, nil, workspace.RunOptions{Sinks: []engine.Sink{ev}}); err != nil {
		t.Fatalf("run did not start: %v", err)
	}
	return plan, ev.All()
}

// Dump draws a tree's visible rows one a line: indent, label, kind, tool,
// status, the model calls and tokens where there are any, and a + on a
// collapsed row.
func Dump(tr *live.Tree) string {
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

// FailingMap is a plan whose map item fails at its first step, which
// fails the run: the steps after it never start.
const FailingMap = `
identifier: failing
steps:
  - id: E1
    tool_name: map
    input:
      over: [1]
      do:
        - id: A
          tool_name: builtin__reshape
          input: { shape: { x: "{{item.missing}}" } }
        - id: B
          tool_name: builtin__reshape
          input: { shape: {} }
  - id: E2
    tool_name: builtin__reshape
    input: { shape: {} }
`
