package runs_test

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
	"github.com/stepwise-dev/stepwise/engine/store"
	"github.com/stepwise-dev/stepwise/engine/tools"
	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/tui/common"
	"github.com/stepwise-dev/stepwise/tui/live"
)

// smallPlan reshapes its input, asks a model, and decides on the input: n
// = 1 takes the then branch and ends ok, any other n the else branch, whose
// tool fails, and the run with it.
const smallPlan = `identifier: small
name: Small
description: Reshapes, infers, decides.
input_schema:
  type: object
  properties: { n: { type: integer, default: 1 } }
steps:
  - id: E0
    tool_name: builtin__reshape
    input: { shape: { n: "{{input.n}}" } }
  - id: E1
    tool_name: builtin__infer
    input: { instruction: "Say hello" }
  - id: E2
    tool_name: decide
    input:
      if: { value: "{{input.n}}", op: eq, to: 1 }
      then: { tool_name: builtin__reshape, input: { shape: { went: then } } }
      else: { tool_name: user__fail, input: {} }
`

var projectFiles = map[string]string{
	".stepwise/config.toml": `[providers.s]
type = "script"
file = "replies.yaml"
[models]
default = { provider = "s", model = "scripted" }
[pricing.scripted]
input = 1.0
output = 2.0
`,
	"replies.yaml": `replies:
  - match: E1
    reply: { text: "hello", usage: { input_tokens: 40, output_tokens: 4 } }
`,
	".stepwise/plans/small.yaml": smallPlan,
	".stepwise/tools/fail.yaml": `name: fail
description: Fails.
kind: exec
command: sh
args: ["-c", "echo broken >&2; exit 3"]
output: text
input_schema: { type: object, properties: {} }
`,
}

// project is a project on disk with a script provider, a failing tool and
// a run store in a real SQLite file.
type project struct {
	dir   string
	cfg   *config.Config
	cat   *tools.Catalog
	plan  *plans.Plan
	store *store.Store
}

func newProject(t *testing.T) *project {
	t.Helper()
	dir := t.TempDir()
	for name, text := range projectFiles {
		file := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{"HOME": filepath.Join(dir, "home"), "XDG_CONFIG_HOME": filepath.Join(dir, "xdg-config"), "XDG_DATA_HOME": filepath.Join(dir, "xdg-data")}
	cfg, _, err := config.Load(config.Options{Dir: dir, LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, ".stepwise", "plans", "small.yaml")
	plan, report := plans.Load(file, []byte(smallPlan))
	if !report.OK() {
		t.Fatalf("the plan does not load: %v", report.Problems)
	}
	st, err := store.Open(filepath.Join(dir, "runs.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return &project{dir: dir, cfg: cfg, cat: tools.Load(cfg), plan: plan, store: st}
}

// sink keeps the events of a run as they were emitted.
type sink struct {
	mu     sync.Mutex
	events []engine.Event
}

func (s *sink) Event(e engine.Event) {
	s.mu.Lock()
	s.events = append(s.events, e)
	s.mu.Unlock()
}

// record runs the plan for real with inputs, recorded into the store, and
// returns the run's id and the events a sink saw live.
func (p *project) record(t *testing.T, inputs map[string]any) (string, []engine.Event) {
	t.Helper()
	rt := tools.NewRuntime(p.cfg, p.cat)
	defer rt.Close()
	rec, seen := p.store.Recorder(), &sink{}
	res, err := engine.New(engine.Options{Config: p.cfg, Catalog: p.cat, Tools: rt,
		Models: model.New(p.cfg, model.Options{Backoff: func(int) time.Duration { return 0 }}),
		Sinks:  []engine.Sink{rec, seen}}).Run(context.Background(), p.plan, inputs)
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	return res.RunID, seen.events
}

// recordBoth records the run that ends ok (n = 1) and then the one that
// fails (n = 2).
func (p *project) recordBoth(t *testing.T) (ok, failed string) {
	t.Helper()
	ok, _ = p.record(t, nil)
	failed, _ = p.record(t, map[string]any{"n": 2})
	return ok, failed
}

func newCommon(color bool) common.Common {
	return common.New(common.NewTheme(true, color), common.DefaultKeyMap())
}

// dump draws a tree's rows one a line: indent, label, kind, tool, status,
// and the model calls where there are any.
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
		b.WriteByte('\n')
	}
	return b.String()
}
