package runs_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stepwise-dev/stepwise/debugger/workspace"
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/tui/common"
	"github.com/stepwise-dev/stepwise/tui/live/livetest"
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

// project is a project on disk with a script provider, a failing tool and
// a run store in a real SQLite file.
type project struct {
	ws   *workspace.Workspace
	plan *plans.Plan
}

// storedConfig is livetest's configuration with runs recorded in a store,
// in the data directory inside the test's isolated home.
var storedConfig = strings.Replace(livetest.Config, `backend = "memory"`, `backend = "sqlite"`, 1)

func newProject(t *testing.T) *project {
	t.Helper()
	dir, ws := livetest.Project(t, map[string]string{
		"config.toml": storedConfig,
		"replies.yaml": `replies:
  - match: E1
    reply: { text: "hello", usage: { input_tokens: 40, output_tokens: 4 } }
`,
		"plans/small.yaml": smallPlan,
		"tools/fail.yaml": `name: fail
description: Fails.
kind: exec
command: sh
args: ["-c", "echo broken >&2; exit 3"]
output: text
input_schema: { type: object, properties: {} }
`,
	})
	return &project{ws: ws, plan: livetest.Plan(t, dir, "plans/small.yaml")}
}

// record runs the plan for real with inputs, recorded into the store, and
// returns the run's id and the events a sink saw live.
func (p *project) record(t *testing.T, inputs map[string]any) (string, []engine.Event) {
	t.Helper()
	seen := &livetest.Events{}
	res, err := p.ws.Run(context.Background(), p.plan, inputs, workspace.RunOptions{Sinks: []engine.Sink{seen}})
	if err != nil {
		t.Fatal(err)
	}
	return res.RunID, seen.All()
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
