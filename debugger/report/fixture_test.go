package report_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stepwise-dev/stepwise/debugger/report"
	"github.com/stepwise-dev/stepwise/debugger/workspace"
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/record"
)

// canary is the secret a provider's ${VAR} reads, which the token tool is
// passed by name and prints: the run's record holds it, the page must not.
const (
	canaryVar = "SW_REPORT_CANARY"
	canary    = "report-canary-4f2a9c81e0b7d3"
)

// hostile is markup in a value, which a page must show as text.
const hostile = `</script><img src=x onerror=alert(1)>`

// showcaseFiles are a project whose one plan does what a report shows: an
// exec tool that prints a secret, a concurrent map, a payload far longer
// than a page shows, an agent that calls tools over two rounds, one that
// ends without a valid answer after a repair pass, and a step that fails.
var showcaseFiles = map[string]string{
	".stepwise/config.toml": `
[providers.script]
type = "script"
file = "replies.yaml"

[providers.vault]
type = "openai"
api_key = "${` + canaryVar + `}"

[models]
default = { provider = "script", model = "scripted" }

[pricing.scripted]
input = 2.50
output = 10.00
`,
	".stepwise/tools/token.yaml": `name: token
description: Prints the token it is passed.
kind: exec
command: sh
args: ["-c", "echo token is $REPORT_TOKEN"]
env: { REPORT_TOKEN: "${` + canaryVar + `}" }
output: text
`,
	".stepwise/tools/big.yaml": `name: big
description: Prints three hundred thousand bytes.
kind: exec
command: sh
args: ["-c", "head -c 300000 /dev/zero | tr '\\0' x"]
output: text
`,
	".stepwise/tools/fail.yaml": `name: fail
description: Fails, saying why in markup.
kind: exec
command: sh
args: ["-c", "echo 'the disk is full </b><b>' >&2; exit 3"]
output: text
`,
	".stepwise/plans/showcase.yaml": `identifier: showcase
name: Showcase
description: Everything a report shows.
input_schema:
  type: object
  properties:
    items: { type: array, items: { type: string } }
steps:
  - id: E1
    tool_name: user__token
    input: {}
  - id: E2
    tool_name: map
    input:
      over: "{{input.items}}"
      concurrency: 2
      do:
        tool_name: builtin__reshape
        input: { shape: { title: "{{item}}" } }
  - id: E3
    tool_name: user__big
    input: {}
  - id: E4
    tool_name: agent
    input:
      prompt: "Look at {{E2.results}}"
      tools: ["builtin__reshape", "user__token"]
      max_iterations: 3
      output_schema:
        type: object
        required: [verdict]
        properties:
          verdict: { type: string }
  - id: E5
    tool_name: agent
    input:
      prompt: "Answer in one round."
      max_iterations: 1
      output_schema:
        type: object
        required: [verdict]
        properties:
          verdict: { type: string }
  - id: E6
    tool_name: user__fail
    input: {}
`,
	"replies.yaml": `replies:
  - match: E4
    reply:
      tool_calls:
        - {name: builtin__reshape, arguments: {shape: {note: "` + hostile + `"}}}
        - {name: user__token, arguments: {}}
      usage: {input_tokens: 1200, output_tokens: 80}
      delay_ms: 30
  - match: E4
    reply:
      json: {verdict: "fine ` + hostile + `"}
      usage: {input_tokens: 1500, output_tokens: 40}
      delay_ms: 20
  - match: E5
    reply: { json: {wrong: 1} }
  - match: E5
    role: repair
    reply: { json: {still: wrong} }
`,
}

// recorded is a run read back from a real run store, as the command
// reads it.
type recorded struct {
	detail *record.RunDetail
	events []engine.Event
	redact func(string) string
}

// recordShowcase runs the showcase plan in a fresh project with a SQLite
// run store and reads it back.
func recordShowcase(t *testing.T) recorded {
	t.Helper()
	run := recordRun(t, showcaseFiles, "showcase", map[string]any{"items": []any{"a", hostile, "c"}})
	if run.detail.Status != engine.StatusFailed {
		t.Fatalf("the showcase ended %s, want failed at E6", run.detail.Status)
	}
	return run
}

// recordRun runs plan, one of files' plans, in a fresh project with a
// SQLite run store and reads the run back as the command does.
func recordRun(tb testing.TB, files map[string]string, plan string, inputs map[string]any) recorded {
	tb.Helper()
	dir := tb.TempDir()
	for name, content := range files {
		file := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	// The configuration reads the secret through LookupEnv, the tool's
	// env from the process's environment.
	tb.Setenv(canaryVar, canary)
	env := map[string]string{"HOME": filepath.Join(dir, "home"), "XDG_CONFIG_HOME": filepath.Join(dir, "xdg-config"),
		"XDG_DATA_HOME": filepath.Join(dir, "xdg-data"), canaryVar: canary}
	ws, err := workspace.Open(dir, workspace.Options{LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ws.Close() })
	doc, err := ws.Load(filepath.Join(dir, ".stepwise", "plans", plan+".yaml"))
	if err != nil || !doc.Report.OK() {
		tb.Fatalf("load: %v %v", err, doc.Report.Problems)
	}
	ctx := context.Background()
	res, err := ws.Run(ctx, doc.Plan, inputs, workspace.RunOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	d, events, err := ws.RunEvents(ctx, res.RunID)
	if err != nil {
		tb.Fatal(err)
	}
	return recorded{detail: d, events: events, redact: ws.Redact}
}

// page writes the run's report.
func (r recorded) page(t *testing.T) string {
	t.Helper()
	var b bytes.Buffer
	if err := report.Write(&b, r.detail, r.events, r.redact); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
