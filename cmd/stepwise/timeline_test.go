package main

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/stepwise-dev/stepwise/debugger/workspace"
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/store"
)

// surveyFiles is a project whose plan maps three items, one at a time,
// through an agent that calls a tool and then answers, sums up with a
// priced verdict and fails at its last step.
var surveyFiles = map[string]string{
	"config.toml": `
[providers.script]
type = "script"
file = ".stepwise/replies.yaml"

[models]
default = { provider = "script", model = "scripted" }

[pricing.scripted]
input = 2.50
output = 10.00
`,
	"replies.yaml": `replies:
  - match: "E1/do.*"
    reply:
      tool_calls: [{ name: user__note, arguments: { text: "looked" } }]
      usage: { input_tokens: 1000, output_tokens: 50 }
  - match: "E1/do.*"
    reply: { json: { found: "x" }, usage: { input_tokens: 2000, output_tokens: 20 } }
  - match: "E1/do.*"
    reply:
      tool_calls: [{ name: user__note, arguments: { text: "looked" } }]
      usage: { input_tokens: 1000, output_tokens: 50 }
  - match: "E1/do.*"
    reply: { json: { found: "y" }, usage: { input_tokens: 2000, output_tokens: 20 } }
  - match: "E1/do.*"
    reply:
      tool_calls: [{ name: user__note, arguments: { text: "looked" } }]
      usage: { input_tokens: 1000, output_tokens: 50 }
  - match: "E1/do.*"
    reply: { json: { found: "z" }, usage: { input_tokens: 2000, output_tokens: 20 } }
  - match: E2
    reply: { text: "three found", usage: { input_tokens: 100, output_tokens: 10 } }
`,
	"tools/note.yaml": `name: note
description: Says what it noted.
kind: exec
command: sh
args: ["-c", 'printf "{\"noted\": \"%s\"}" "$1"', note, "{{input.text}}"]
output: json
input_schema: { type: object, required: [text], properties: { text: { type: string } } }
`,
	"tools/fail.yaml": `name: fail
description: Always fails.
kind: exec
command: sh
args: ["-c", "echo broken >&2; exit 3"]
input_schema: { type: object }
`,
	"plans/survey.yaml": `identifier: survey
name: Survey
description: Looks into three things, sums up, and fails at the end.
steps:
  - id: E1
    tool_name: map
    input:
      over: ["a", "b", "c"]
      concurrency: 1
      do:
        tool_name: agent
        input:
          prompt: "Look into {{item}}"
          tools: ["user__note"]
          max_iterations: 3
          output_schema: { type: object, required: [found], properties: { found: { type: string } } }
  - id: E2
    tool_name: builtin__infer
    input: { instruction: "Sum up {{E1}}" }
  - id: E3
    tool_name: user__fail
    input: {}
`,
}

// retimedRun runs the survey plan, then records its events again as a run
// of their own, whose times are fixed: each event 100ms after the one
// before, each model call 80ms long, each tool call 60ms, and each step as
// long as its events say. The run's shape is the engine's; only the clock
// is the test's, so the waterfall can be pinned.
func retimedRun(t *testing.T) string {
	t.Helper()
	writeProject(t, surveyFiles)
	out, errOut, code := runCLI(t, "run", "survey", "--json")
	var env struct {
		RunID string `json:"run_id"`
	}
	if err := json.Unmarshal([]byte(out), &env); err != nil || code != 1 || env.RunID == "" {
		t.Fatalf("run: exit %d, %v\n%s\n%s", code, err, out, errOut)
	}
	ws, err := workspace.Open("", workspace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, events, err := ws.RunEvents(context.Background(), env.RunID)
	ws.Close()
	if err != nil {
		t.Fatal(err)
	}
	var file string
	filepath.WalkDir(os.Getenv("XDG_DATA_HOME"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == store.FileName {
			file = p
		}
		return nil
	})
	st, err := store.Open(file)
	if err != nil {
		t.Fatalf("the run store %q: %v", file, err)
	}
	defer st.Close()
	const id = "7133700000000001"
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	rec := st.Recorder()
	for _, e := range events {
		e.RunID, e.Time = id, base.Add(time.Duration(e.Seq-1)*100*time.Millisecond)
		switch p := e.Payload.(type) {
		case engine.ModelCalled:
			p.Ms = 80
			e.Payload = p
		case engine.ToolEnded:
			p.Ms = 60
			e.Payload = p
		case engine.StepEnded:
			// A step's time is its events' (no step stop held it).
			p.Ms = 0
			e.Payload = p
		}
		rec.Event(e)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	return id
}

func TestInspectTimeline(t *testing.T) {
	id := retimedRun(t)
	out, errOut, code := runCLI(t, "inspect", id, "--timeline", "--width", "80")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	golden(t, "inspect_timeline_80.txt", out)

	// Not on a terminal, the waterfall is 100 columns wide: the last
	// step's bar ends within a few columns of the edge.
	out, _, _ = runCLI(t, "inspect", id[:8], "--timeline")
	widest := 0
	for _, line := range strings.Split(out, "\n") {
		widest = max(widest, ansi.StringWidth(line))
	}
	if widest > 100 || widest < 95 {
		t.Errorf("the widest line is %d columns, want 95 to 100:\n%s", widest, out)
	}

	for _, tc := range []struct {
		name string
		args []string
		says string
	}{
		{"width without timeline", []string{"--width", "80"}, "--width sets the width of --timeline's waterfall: add --timeline"},
		{"too narrow", []string{"--timeline", "--width", "5"}, "--width 5 is too narrow for a waterfall: give 24 columns or more"},
		{"with json", []string{"--timeline", "--json"}, "--timeline draws the run as text: leave out --json"},
		{"rows without timeline", []string{"--rows", "5"}, "--rows sets the rows of --timeline's waterfall: add --timeline"},
		{"negative rows", []string{"--timeline", "--rows", "-1"}, "--rows -1: give the most bars to draw, or 0 for all of them"},
		{"a step of no unit", []string{"--timeline", "--step", "E9"}, "--step E9 matches no unit of run 7133700000000001; its steps: E1, E2, E3"},
		{"a step that is no pattern", []string{"--timeline", "--step", "E1//do.0"}, "--step: path pattern \"E1//do.0\": segment 2 is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut, code := runCLI(t, append([]string{"inspect", id}, tc.args...)...)
			if code != 2 || !strings.Contains(errOut, tc.says) {
				t.Errorf("exit %d: %s", code, errOut)
			}
		})
	}
	if _, errOut, code := runCLI(t, "inspect", "zzzz", "--timeline"); code != 1 || !strings.Contains(errOut, "zzzz") {
		t.Errorf("an unknown run: exit %d: %s", code, errOut)
	}
}

// TestInspectTimelineRowsAndStep cuts the survey's waterfall to a few
// rows, where the units outside the map's items come first and then its
// items, the slowest first, and the map says how many it left out; and
// draws one item's subtree on the stretch of time it spans.
func TestInspectTimelineRowsAndStep(t *testing.T) {
	id := retimedRun(t)
	out, errOut, code := runCLI(t, "inspect", id, "--timeline", "--width", "80", "--rows", "8")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	golden(t, "inspect_timeline_rows_80.txt", out)
	for _, want := range []string{"  E1 map", "  E2 builtin__infer", "✗ E3 user__fail", "⋯ 1 more item", "8 of 15 rows shown"} {
		if !strings.Contains(out, want) {
			t.Errorf("the cut waterfall lacks %q:\n%s", want, out)
		}
	}
	all, _, _ := runCLI(t, "inspect", id, "--timeline", "--width", "80", "--rows", "0")
	if strings.Count(all, "\n") != 15+3 || strings.Contains(all, "rows shown") {
		t.Errorf("--rows 0 does not draw every bar:\n%s", all)
	}

	out, errOut, code = runCLI(t, "inspect", id, "--timeline", "--width", "80", "--step", "E1/do.1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	golden(t, "inspect_timeline_step_80.txt", out)
	if strings.Contains(out, "do.0") || strings.Contains(out, "E2") || !strings.Contains(out, "under E1/do.1") {
		t.Errorf("--step E1/do.1 draws more than its subtree:\n%s", out)
	}
}

// TestInspectUsageGroupsItems inspects the survey: its usage by step adds
// the map's items up under their body step, the dearest listed under it.
func TestInspectUsageGroupsItems(t *testing.T) {
	id := retimedRun(t)
	out, errOut, code := runCLI(t, "inspect", id)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	at := strings.Index(out, "  by step\n")
	if at < 0 {
		t.Fatalf("no usage by step:\n%s", out)
	}
	byStep := out[at:strings.Index(out, "  by model\n")]
	want := regexp.MustCompile(`^  by step\n    E1/do\.\* ×3 +6 calls, 9\.2k tokens, \$0\.\d+\n      E1/do\.0 +2 calls, 3\.1k tokens, \$0\.\d+\n      E1/do\.1 .*\n      E1/do\.2 .*\n    E2 +1 call, 110 tokens, \$0\.\d+\n$`)
	if !want.MatchString(byStep) {
		t.Errorf("usage by step:\n%s", byStep)
	}
}
