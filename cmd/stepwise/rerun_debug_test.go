package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stepwise-dev/stepwise/debugger"
)

// itemsProjectFiles is a project whose plan notes five items in a map
// (each note appends a line to notes.log), notes the count, then asks.
var itemsProjectFiles = map[string]string{
	"tools/note.yaml": noteTool,
	"plans/items.yaml": `identifier: items
name: Items
description: Notes five items and their count, then asks.
steps:
  - id: E1
    tool_name: map
    input:
      over: [1, 2, 3, 4, 5]
      concurrency: 2
      do:
        - id: A
          tool_name: user__note
          input: { text: "item {{item}}" }
        - id: B
          tool_name: user__note
          input: { text: "then {{A.noted}}" }
  - id: E2
    tool_name: user__note
    input: { text: "count {{E1.count}}" }
  - id: E3
    tool_name: ask
    input:
      prompt: "Keep them?"
      output_schema: { type: object, required: [keep], properties: { keep: { type: boolean } } }
      when_unanswered: default
      default: { keep: false }
output: { items: "{{E1.results}}", count: "{{E2.noted}}", keep: "{{E3.answer.keep}}" }
`,
}

// rerunCLI runs the command line with stdin.
func rerunCLI(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), code
}

// TestRerunUnderDebugger forks and replays a recorded run under the
// debugger through fork --debug --json and replay --debug --json: the
// fork from a map item reruns that item alone and asks its ask at a stop;
// the replay stops at its breakpoint and runs no tool.
func TestRerunUnderDebugger(t *testing.T) {
	writeProject(t, itemsProjectFiles)
	dir, _ := os.Getwd()
	notes := func() string {
		b, _ := os.ReadFile(filepath.Join(dir, "notes.log"))
		return string(b)
	}
	stdout, stderr, code := runCLI(t, "run", "items", "--json")
	if code != 0 {
		t.Fatalf("run: exit %d\n%s%s", code, stdout, stderr)
	}
	var orig struct {
		RunID  string         `json:"run_id"`
		Output map[string]any `json:"output"`
	}
	if err := json.Unmarshal([]byte(stdout), &orig); err != nil || orig.RunID == "" {
		t.Fatalf("run envelope %s: %v", stdout, err)
	}
	if orig.Output["keep"] != false {
		t.Fatalf("with no one there, the ask took its default: %v", orig.Output)
	}

	t.Run("fork from an item", func(t *testing.T) {
		before := notes()
		stdin := strings.Join([]string{`print A`, `inject {"noted": "changed"}`, `continue`, `answer {"keep": true}`, `continue`}, "\n") + "\n"
		out, errOut, code := rerunCLI(t, stdin, "fork", orig.RunID, "--from", "E1/do.3", "--debug", "--continue", "--break", "E1/do.3/B", "--json")
		if code != 0 {
			t.Fatalf("exit %d\n%s%s", code, out, errOut)
		}
		got, end := sessionLines(t, out)
		// inject goes on as next does: to the map's result.
		want := []string{"stop E1/do.3/B step (breakpoint 1 (E1/do.3/B))", `value {"noted":"item 4"}`, "stop E1 result (next)", "stop E3 ask (ask)", "stop E3 result (next)", "end ok"}
		if !slices.Equal(got, want) {
			t.Errorf("session\n got %q\nwant %q", got, want)
		}
		// Item 3 (the fourth) ran again, its B injected; the other items
		// were reused, not run.
		if added := strings.TrimPrefix(notes(), before); added != "item 4\ncount 5\n" {
			t.Errorf("the fork wrote %q, want item 4's A and the count only", added)
		}
		wantOut := map[string]any{"items": slices.Clone(orig.Output["items"].([]any)), "count": "count 5", "keep": true}
		wantOut["items"].([]any)[3] = map[string]any{"noted": "changed"}
		if b, w := mustJSON(t, end["output"]), mustJSON(t, wantOut); b != w {
			t.Errorf("output %s, want %s", b, w)
		}
	})

	t.Run("a fork without a person takes the ask's default", func(t *testing.T) {
		out, errOut, code := rerunCLI(t, "", "fork", orig.RunID, "--from", "E3", "--json")
		var env struct {
			Output map[string]any `json:"output"`
		}
		if err := json.Unmarshal([]byte(out), &env); code != 0 || err != nil || env.Output["keep"] != false {
			t.Errorf("exit %d, output %s\n%s", code, out, errOut)
		}
	})

	t.Run("replay", func(t *testing.T) {
		before := notes()
		out, errOut, code := rerunCLI(t, "continue\ncontinue\nprint E1.count\ncontinue\ncontinue\n", "replay", orig.RunID, "--debug", "--break", "E2", "--json")
		if code != 0 {
			t.Fatalf("exit %d\n%s%s", code, out, errOut)
		}
		// The replay is held at its first stop; the kept breakpoint of
		// the fork's session stops it too; the ask stops it, and going on
		// lets the record answer it.
		got, end := sessionLines(t, out)
		want := []string{"stop E1 step (entry)", "stop E1/do.3/B step (breakpoint 1 (E1/do.3/B))", "stop E2 step (breakpoint 2 (E2))", "value 5", "stop E3 ask (ask)", "end ok"}
		if !slices.Equal(got, want) {
			t.Errorf("session\n got %q\nwant %q", got, want)
		}
		if mustJSON(t, end["output"]) != mustJSON(t, orig.Output) {
			t.Errorf("output %v, want the record's %v", end["output"], orig.Output)
		}
		if notes() != before {
			t.Errorf("the replay ran a tool: it wrote %q", strings.TrimPrefix(notes(), before))
		}
	})

	t.Run("refusals", func(t *testing.T) {
		for _, tc := range []struct {
			args []string
			code int
			msg  string
		}{
			{[]string{"replay", orig.RunID, "--break", "E2"}, exitUsage, "--break sets a breakpoint of the debugger; add --debug"},
			{[]string{"fork", orig.RunID, "--from", "E1", "--debug", "--break", "E1 nonsense"}, exitUsage, "--break E1 nonsense: 'nonsense' is not a stop kind"},
			{[]string{"fork", orig.RunID, "--from", "E9", "--debug"}, exitUsage, "--from E9: no step of run " + orig.RunID + " matches it; its steps: E1, E2, E3"},
		} {
			_, stderr, code := rerunCLI(t, "", tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.msg) {
				t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, tc.code, tc.msg)
			}
			// With --json, the refusal is the session's one line too.
			stdout, _, code := rerunCLI(t, "", append(tc.args, "--json")...)
			var line map[string]any
			if err := json.Unmarshal([]byte(stdout), &line); err != nil || code != tc.code || !strings.Contains(fmt.Sprint(line["error"]), tc.msg) {
				t.Errorf("%v --json: exit %d, stdout %q (%v); want %d and a line whose error says %q", tc.args, code, stdout, err, tc.code, tc.msg)
			}
		}
	})
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestForkAsksOnTerminal forks a run from its ask in a real terminal: the
// fork puts the question there, as stepwise run does, and the answer
// typed is the ask's.
func TestForkAsksOnTerminal(t *testing.T) {
	writeProject(t, itemsProjectFiles)
	stdout, stderr, code := runCLI(t, "run", "items", "--json")
	var orig struct {
		RunID string `json:"run_id"`
	}
	if err := json.Unmarshal([]byte(stdout), &orig); code != 0 || err != nil {
		t.Fatalf("run: exit %d, %v\n%s%s", code, err, stdout, stderr)
	}
	fork := strings.Join(quoteAll([]string{os.Args[0], "fork", orig.RunID, "--from", "E3", "--json"}), " ")
	s := startTmux(t, 120, 40, "env", cliEnv+"=1", "HOME="+os.Getenv("HOME"), "XDG_CONFIG_HOME="+os.Getenv("XDG_CONFIG_HOME"),
		"XDG_DATA_HOME="+os.Getenv("XDG_DATA_HOME"), "TERM=xterm-256color",
		// The pane stays after the fork exits, so that what it wrote can be read.
		"sh", "-c", fork+`; echo "exit $?"; sleep 60`)
	s.waitFor("? Keep them? [E3]")
	s.typed("y")
	s.keys("Enter")
	screen := s.waitFor("exit 0")
	if !strings.Contains(screen, `"keep": true`) {
		t.Errorf("the fork did not take the answer typed:\n%s", screen)
	}
}

// TestReplayUnderDebuggerEnds replays a run whose ask a person answered
// under replay --debug: the ask stop suggests the recorded answer, which
// going on gives, and the end says how the replay compares with its
// record, as replay does (the finish object's identical and divergence
// with --json, the ✓ or ✗ line otherwise), and which run it is, on a line
// of its own, whether it matched or diverged.
func TestReplayUnderDebuggerEnds(t *testing.T) {
	dir := marksProject(t)
	out, errOut, code := debugCLI(t, "continue\nanswer {\"go\": true}\ncontinue\n", "asking", "--break", "E0 step", "--json")
	if code != 0 {
		t.Fatalf("debug: exit %d\n%s\n%s", code, out, errOut)
	}
	orig := sessionRun(t, errOut)
	runLine := regexp.MustCompile(`(?m)^run ([0-9a-f]{16}), a replay of ` + orig + ` \(stepwise inspect [0-9a-f]{12}\)\n`)
	type line struct {
		Reason     string               `json:"reason"`
		Stop       *debugger.Snapshot   `json:"stop"`
		Finished   bool                 `json:"finished"`
		Status     string               `json:"status"`
		Identical  *bool                `json:"identical"`
		Divergence *debugger.Divergence `json:"divergence"`
	}
	lines := func(out string) (stops []line, end line) {
		t.Helper()
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			var v line
			if err := json.Unmarshal([]byte(l), &v); err != nil {
				t.Fatalf("%v: %s", err, l)
			}
			if v.Finished {
				end = v
			} else if v.Stop != nil {
				stops = append(stops, v)
			}
		}
		return stops, end
	}

	t.Run("matches", func(t *testing.T) {
		out, errOut, code := rerunCLI(t, "continue\ncontinue\n", "replay", orig, "--debug", "--json")
		stops, end := lines(out)
		if code != 0 || len(stops) != 2 || stops[1].Stop.Kind != "ask" {
			t.Fatalf("exit %d, want the entry and the ask stops\n%s%s", code, out, errOut)
		}
		if got := mustJSON(t, stops[1].Stop.Prefill); got != `{"go":true}` {
			t.Errorf("the ask suggests %s, want the recorded answer {\"go\":true}", got)
		}
		if end.Status != "ok" || end.Identical == nil || !*end.Identical || end.Divergence != nil {
			t.Errorf("the end says status %q, identical %v, divergence %+v; want ok, true, none\n%s", end.Status, end.Identical, end.Divergence, out)
		}
		if !runLine.MatchString(errOut) {
			t.Errorf("no line names the replay's run:\n%s", errOut)
		}
		out, errOut, code = rerunCLI(t, "continue\ncontinue\n", "replay", orig, "--debug")
		if code != 0 || !strings.Contains(out, "✓ replay of run "+orig[:12]+" (asking) matches its record: 2 steps reproduced") {
			t.Errorf("exit %d\nstdout %s\nstderr %s", code, out, errOut)
		}
		if !strings.Contains(errOut, "  expects {\"go\":true}\n") || !runLine.MatchString(errOut) {
			t.Errorf("stderr does not suggest the recorded answer, or name the replay's run:\n%s", errOut)
		}
	})

	t.Run("diverges", func(t *testing.T) {
		plan := filepath.Join(dir, ".stepwise/plans/asking.yaml")
		text, _ := os.ReadFile(plan)
		os.WriteFile(plan, []byte(strings.Replace(string(text), "shape: { n: 1 }", "shape: { n: 2 }", 1)), 0o644)
		defer os.WriteFile(plan, text, 0o644)
		out, errOut, code := rerunCLI(t, "continue\n", "replay", orig, "--debug", "--json")
		_, end := lines(out)
		if code != 1 || end.Identical == nil || *end.Identical || end.Divergence == nil || end.Divergence.Path != "E0" || end.Divergence.What != "input" {
			t.Errorf("exit %d, the end %+v; want exit 1, not identical, diverging at E0's input\n%s%s", code, end, out, errOut)
		}
		if !runLine.MatchString(errOut) {
			t.Errorf("no line of its own names the replay's run:\n%s", errOut)
		}
		out, errOut, code = rerunCLI(t, "continue\n", "replay", orig, "--debug")
		if code != 1 || !strings.Contains(out, "✗ replay of run "+orig[:12]+" (asking) diverges at E0: the rendered input differs from the recorded one\n") {
			t.Errorf("exit %d\nstdout %s\nstderr %s", code, out, errOut)
		}
		if !runLine.MatchString(errOut) || !strings.HasSuffix(errOut, "\n") {
			t.Errorf("no line of its own names the replay's run:\n%q", errOut)
		}
	})
}

// TestReplayAskSaysTheRecord replays, under the debugger, a run whose ask
// a person declined: the ask stop says going on declines it again, as the
// record did, and gives the ask's default (recorded "decline" with
// --json, a record line in text), not only what the ask expects.
func TestReplayAskSaysTheRecord(t *testing.T) {
	debugProject(t, itemsProjectFiles)
	out, errOut, code := debugCLI(t, "continue\ndecline\ncontinue\n", "items", "--json")
	if code != 0 {
		t.Fatalf("debug: exit %d\n%s\n%s", code, out, errOut)
	}
	orig := sessionRun(t, errOut)
	out, errOut, code = rerunCLI(t, "continue\ncontinue\n", "replay", orig, "--debug", "--json")
	var ask *debugger.Snapshot
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var v struct {
			Stop *debugger.Snapshot `json:"stop"`
		}
		if json.Unmarshal([]byte(l), &v) == nil && v.Stop != nil && v.Stop.Kind == "ask" {
			ask = v.Stop
		}
	}
	if code != 0 || ask == nil || ask.Recorded != "decline" || mustJSON(t, ask.Output) != `{"keep":false}` {
		t.Fatalf("exit %d; the ask stop %+v does not say the record declined it, giving the default\n%s%s", code, ask, out, errOut)
	}
	_, errOut, code = rerunCLI(t, "continue\ncontinue\n", "replay", orig, "--debug")
	if want := "record the recorded run declined this ask: going on declines it again, and the ask gives its default, the output above"; code != 0 || !strings.Contains(strings.Join(strings.Fields(errOut), " "), want) {
		t.Errorf("exit %d; want %q in:\n%s", code, want, errOut)
	}
}

// TestForkUnderDebuggerStartsNoServerForReusedSteps forks a run of the
// demo from its solver under the debugger: the steps before it, which
// call the tracker's MCP server, are reused, so the fork starts no server
// (looking their tools up would start it, and count in the first reused
// step's time).
func TestForkUnderDebuggerStartsNoServerForReusedSteps(t *testing.T) {
	demoProject(t)
	dir, _ := os.Getwd()
	started := filepath.Join(dir, "started.log")
	wrapper := filepath.Join(dir, "tracker.sh")
	script := "#!/bin/sh\necho started >> " + strconv.Quote(started) + "\nexec " + strconv.Quote(os.Args[0]) + ` "$@"` + "\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(".stepwise", "config.toml")
	text, _ := os.ReadFile(config)
	replaced := strings.Replace(string(text), "command = "+strconv.Quote(os.Args[0]), "command = "+strconv.Quote(wrapper), 1)
	if replaced == string(text) {
		t.Fatalf("the demo's config names no tracker command %s:\n%s", os.Args[0], text)
	}
	os.WriteFile(config, []byte(replaced), 0o644)
	out, errOut, code := rerunCLI(t, "", "run", "triage_queue", `{"on_call": "Priya"}`, "--json")
	var env struct {
		RunID string `json:"run_id"`
	}
	if err := json.Unmarshal([]byte(out), &env); code != 0 || err != nil {
		t.Fatalf("run: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	before, _ := os.ReadFile(started)
	if len(before) == 0 {
		t.Fatal("the run did not start the tracker through the wrapper")
	}
	_, errOut, code = rerunCLI(t, "continue\ncontinue\ncontinue\n", "fork", env.RunID, "--from", "solver", "--debug")
	if code != 0 {
		t.Fatalf("fork: exit %d\n%s", code, errOut)
	}
	if after, _ := os.ReadFile(started); string(after) != string(before) {
		t.Errorf("the fork started the tracker for steps it reused (%q, then %q)\n%s", before, after, errOut)
	}
}
