package main

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/store"
	"github.com/stepwise-dev/stepwise/tui/progress"
)

// progressProjectFiles is a project whose plan slow maps 40 items through
// an agent whose scripted reply takes delay ms, four at a time, then runs
// an agent of two rounds, then asks, when ask is set, whether to ship.
func progressProjectFiles(delay int, ask bool) map[string]string {
	replies, items := labelReplies(40, fmt.Sprintf("usage: { input_tokens: 1000, output_tokens: 100 }, delay_ms: %d", delay))
	replies += `  - match: E2
    reply: { tool_calls: [{ name: builtin__reshape, arguments: { shape: { x: 1 } } }], usage: { input_tokens: 300, output_tokens: 30 }, delay_ms: 300 }
  - match: E2
    reply: { json: { count: 3 }, usage: { input_tokens: 300, output_tokens: 30 } }
`
	plan := `identifier: slow
name: Slow
description: A slow map of agents, then an agent.
steps:
  - id: E0
    tool_name: builtin__reshape
    input:
      shape:
        items:
` + items + `  - id: E1
    tool_name: map
    input:
      over: "{{E0.items}}"
      concurrency: 4
      do:
        tool_name: agent
        input:
          prompt: "Label item {{item}}"
          output_schema: { type: object, required: [label], properties: { label: { type: string } } }
  - id: E2
    tool_name: agent
    input:
      prompt: "Count."
      tools: ["builtin__reshape"]
      output_schema: { type: object, required: [count], properties: { count: { type: integer } } }
`
	if ask {
		plan += `  - id: E3
    tool_name: ask
    input:
      prompt: "Ship it?"
      output_schema: { type: object, required: [ship], properties: { ship: { type: boolean } } }
`
	}
	plan += "output: { count: \"{{E2.output.count}}\" }\n"
	return map[string]string{
		"config.toml":     scriptedConfig,
		"replies.yaml":    replies,
		"plans/slow.yaml": plan,
	}
}

// scriptedConfig is the configuration of the progress tests' projects: a
// scripted model, priced.
const scriptedConfig = `
[providers.script]
type = "script"
file = ".stepwise/replies.yaml"

[models]
default = { provider = "script", model = "scripted" }

[pricing.scripted]
input = 2.0
output = 4.0
`

// labelReplies are the replies for a map of n agents labelling items
// E1/do.0 to E1/do.n-1, each with the reply fields extra, and the YAML
// list of the n items, as a plan's step input lists them.
func labelReplies(n int, extra string) (replies, items string) {
	var r, i strings.Builder
	r.WriteString("replies:\n")
	for k := range n {
		fmt.Fprintf(&r, "  - match: E1/do.%d\n    reply: { json: { label: ok }, %s }\n", k, extra)
		fmt.Fprintf(&i, "          - %d\n", k)
	}
	return r.String(), i.String()
}

// startStepwise runs stepwise with args in a terminal of width by height,
// whose window stays open after the command to be read and says "exit N".
func startStepwise(t *testing.T, width, height int, env []string, args ...string) *tmuxSession {
	t.Helper()
	dir, _ := os.Getwd()
	argv := append(childEnv(), env...)
	argv = append(append(argv, os.Args[0]), args...)
	// The shell traps ctrl-c, so that it outlives the run to say how it
	// ended; the run gets the signal as ever.
	script := "trap : INT; cd " + quoteAll([]string{dir})[0] + " && " + strings.Join(quoteAll(argv), " ") + "; echo \"exit $?\"; sleep 600"
	return startTmux(t, width, height, "sh", "-c", script)
}

// scrollback is the whole pane, what scrolled off included.
func (s *tmuxSession) scrollback() string {
	return s.run("capture-pane", "-p", "-t", "0", "-S", "-")
}

// TestProgressTmux runs a slow map on a terminal: mid-run the block shows
// the map's bar and counts and the run's spend; then, held at the ask,
// the block steps aside for the prompt and says what the run waits for;
// at the end each step has left its summary in the scrollback, no block
// is left on the screen, and the run exits 0.
func TestProgressTmux(t *testing.T) {
	writeProject(t, progressProjectFiles(300, true))
	s := startStepwise(t, 120, 30, nil, "run", "slow")

	screen := s.waitFor("k tok · $")
	bar := regexp.MustCompile(`▸ E1 map [█░]{20} \d+/40 items · \d running · `)
	if !bar.MatchString(screen) {
		t.Errorf("mid-run, the block shows no bar for E1:\n%s", screen)
	}
	if !regexp.MustCompile(`(?m)^  run \d+(ms|\.\ds) · [\d.]+k tok · \$0\.\d{4}$`).MatchString(screen) {
		t.Errorf("mid-run, the block does not show the run's time, tokens and cost:\n%s", screen)
	}
	if !strings.Contains(screen, "✓ E0 builtin__reshape") {
		t.Errorf("E0's summary is not above the block:\n%s", screen)
	}

	screen = s.waitFor("? Ship it? [E3]")
	if !strings.Contains(screen, "⏸ E3 waits for an answer") {
		t.Errorf("held at the ask, the screen does not say what the run waits for:\n%s", screen)
	}
	if strings.Contains(screen, "▸ ") || strings.Contains(screen, "  run ") {
		t.Errorf("the block did not step aside for the prompt:\n%s", screen)
	}
	s.typed("y")
	s.keys("Enter")
	s.waitFor("exit 0")

	all := s.scrollback()
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^✓ E0 builtin__reshape \d+ms$`),
		regexp.MustCompile(`(?m)^✓ E1 map 40 items \d+\.\ds 44\.0k tok \$0\.0960$`),
		regexp.MustCompile(`(?m)^✓ E2 agent 2 rounds 1 tool \d+(ms|\.\ds) 660 tok \$0\.0014$`),
		regexp.MustCompile(`(?m)^✓ E3 ask \d+(ms|\.\ds)$`),
		regexp.MustCompile(`(?m)^usage: 42 model calls`),
	} {
		if !want.MatchString(all) {
			t.Errorf("the scrollback has no line like %s:\n%s", want, all)
		}
	}
	if strings.Contains(all, "→ E1") {
		t.Errorf("on a terminal, the block says what starts; the start lines are for logs:\n%s", all)
	}
	if strings.Contains(all, "▸ ") || strings.Contains(all, "  run ") {
		t.Errorf("a frame of the block was left on the screen or in the scrollback:\n%s", all)
	}
}

// TestProgressTmuxBlockAtTheTop runs a plan whose first step is slow on a
// terminal with nothing on it yet, so that the block is first drawn at the
// top of the screen: taking it off must not leave it in the scrollback (an
// erase of the whole screen from its top, tmux keeps in its history).
func TestProgressTmuxBlockAtTheTop(t *testing.T) {
	writeProject(t, map[string]string{
		"config.toml": scriptedConfig,
		"replies.yaml": `replies:
  - match: E0
    reply: { json: { count: 3 }, usage: { input_tokens: 300, output_tokens: 30 }, delay_ms: 600 }
`,
		"plans/first.yaml": `identifier: first
name: First
description: A slow agent first.
steps:
  - id: E0
    tool_name: agent
    input:
      prompt: "Count."
      output_schema: { type: object, required: [count], properties: { count: { type: integer } } }
output: { count: "{{E0.output.count}}" }
`,
	})
	s := startStepwise(t, 100, 20, nil, "run", "first")
	if screen := s.waitFor("▸ E0 agent"); !strings.HasPrefix(screen, "▸ E0 agent") {
		t.Fatalf("the block is not at the top of the screen, which this test needs:\n%s", screen)
	}
	s.waitFor("exit 0")
	all := s.scrollback()
	if !regexp.MustCompile(`(?m)^✓ E0 agent 1 round 0 tools \d+ms 330 tok \$0\.0007$`).MatchString(all) {
		t.Errorf("E0's summary is not in the scrollback:\n%s", all)
	}
	if strings.Contains(all, "▸ ") || strings.Contains(all, "  run ") {
		t.Errorf("a frame of the block was left on the screen or in the scrollback:\n%s", all)
	}
}

// TestProgressTmuxInterrupt: ctrl-c on a terminal ends the run with exit
// 130, the block cleared; with NO_COLOR the bar is drawn without colour.
func TestProgressTmuxInterrupt(t *testing.T) {
	writeProject(t, progressProjectFiles(2000, false))
	s := startStepwise(t, 100, 20, []string{"NO_COLOR=1"}, "run", "slow")
	s.waitFor("items · ")
	colored := s.run("capture-pane", "-p", "-e", "-t", "0")
	if regexp.MustCompile("\x1b\\[[0-9;]*3[0-9;]*m").MatchString(colored) {
		t.Errorf("with NO_COLOR the block has colours:\n%q", colored)
	}
	s.keys("C-c")
	screen := s.waitFor("exit 130")
	if strings.Contains(screen, "▸ E1") {
		t.Errorf("the block is still on the screen after ctrl-c:\n%s", screen)
	}
	// The items ctrl-c cut off were cancelled, not failed, and the map
	// around them aborted; the calls it cut off, none answered, tell no
	// cost: a failed call's event does not say whether its model is priced.
	if !regexp.MustCompile(`(?m)^■ E1 map 0 of 40 items done \(4 cancelled\) aborted after \d+(ms|\.\ds) 0 tok$`).MatchString(screen) {
		t.Errorf("the map's summary does not say its items were cancelled:\n%s", screen)
	}
	if !strings.Contains(screen, "interrupt") {
		t.Errorf("the run does not say it was interrupted:\n%s", screen)
	}
}

// TestProgressTmuxColors: on a terminal with colours the bar has them.
func TestProgressTmuxColors(t *testing.T) {
	writeProject(t, progressProjectFiles(2000, false))
	s := startStepwise(t, 100, 20, nil, "run", "slow")
	s.waitFor("items · ")
	if colored := s.run("capture-pane", "-p", "-e", "-t", "0"); !strings.Contains(colored, "\x1b[38;") {
		t.Errorf("the bar has no colour:\n%q", colored)
	}
	s.keys("C-c")
	s.waitFor("exit 130")
}

// TestProgressLines runs the slow map with stderr not a terminal and a
// progress period of 300ms: the start lines as ever, and for each step
// that runs longer than the period a line each period; no block, no
// escape sequence.
func TestProgressLines(t *testing.T) {
	writeProject(t, progressProjectFiles(150, false))
	out, errOut, code := runCLI(t, "run", "slow", "--progress-every", "300ms")
	if code != 0 || !strings.Contains(out, `"count": 3`) {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	lines := strings.Split(errOut, "\n")
	var told []string
	for _, l := range lines {
		if strings.HasPrefix(l, "… ") {
			told = append(told, l)
		}
	}
	// 40 items of 150ms, four at a time: 1.5s, some five periods. Each
	// line is a period after the one before it (the elapsed time is cut
	// to tenths of a second), the first a period after the step started.
	line := regexp.MustCompile(`^… E1 map \d+/40 items, \d running, [\d.]+/s, ETA \d+(ms|\.\ds), (\d+(ms|\.\ds))$`)
	var at []time.Duration
	for _, l := range told {
		if !strings.HasPrefix(l, "… E1 ") {
			continue
		}
		m := line.FindStringSubmatch(l)
		if m == nil {
			t.Errorf("a progress line reads %q", l)
			continue
		}
		d, err := time.ParseDuration(m[2])
		if err != nil {
			t.Fatal(err)
		}
		at = append(at, d)
	}
	if len(at) < 2 {
		t.Errorf("%d progress lines of E1 in a 1.5s map told every 300ms:\n%s", len(at), errOut)
	}
	for i, d := range at {
		if (i == 0 && d < 300*time.Millisecond) || (i > 0 && d-at[i-1] < 200*time.Millisecond) {
			t.Errorf("progress lines at %v: not a period apart", at)
			break
		}
	}
	for _, want := range []string{"→ E0 builtin__reshape\n", "→ E1 map\n", "→ E2 agent\n", "usage: 42 model calls"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr has no %q:\n%s", want, errOut)
		}
	}
	if strings.Contains(errOut, "\x1b") || strings.Contains(errOut, "▸") {
		t.Errorf("off a terminal, stderr has a block or escape sequences:\n%q", errOut)
	}

	// Quick steps are never told as they go.
	_, errOut, _ = runCLI(t, "run", "slow", "--progress-every", "1h")
	if strings.Contains(errOut, "… ") {
		t.Errorf("a step told before it ran the period:\n%s", errOut)
	}
}

// TestProgressQuiet: --quiet leaves stdout the deliverable and stderr
// empty, but for errors.
func TestProgressQuiet(t *testing.T) {
	writeProject(t, progressProjectFiles(0, false))
	out, errOut, code := runCLI(t, "run", "slow", "--quiet")
	if code != 0 || !strings.Contains(out, `"count": 3`) || errOut != "" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	runProject(t)
	out, errOut, code = runCLI(t, "run", "broken_run", "-q")
	if code != 1 || out != "" || !strings.HasPrefix(errOut, "Error: ") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("a failed run, quiet: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	_, errOut, code = runCLI(t, "run", "broken_run", "--progress-every", "-1s")
	if code != exitUsage || !strings.Contains(errOut, "--progress-every takes a duration such as 10s, or 0 for no progress lines, not -1s") {
		t.Errorf("--progress-every -1s: exit %d, stderr %q", code, errOut)
	}
}

// warningsProjectFiles is a project whose runs warn: twice's first model
// call answers after its model failed three times and fell over to its
// fallback, its second after one failed attempt and with its instruction
// cut ([limits] model_input_bytes); agentic's agent has its prompt cut;
// halts fails at its second step, before its third; and the configuration
// has a key it does not know. Each call makes a new map, which a test may
// add to.
func warningsProjectFiles() map[string]string {
	return map[string]string{
		"config.toml": `[providers.script]
type = "script"
file = ".stepwise/replies.yaml"
[models]
default = { provider = "script", model = "scripted", fallbacks = [{ provider = "script", model = "backup" }] }
[limits]
model_input_bytes = 10
[settings]
nonsense = 1
`,
		"replies.yaml": `replies:
  - match: E0
    error: { status: 503, message: busy }
  - match: E0
    error: { status: 503, message: busy }
  - match: E0
    error: { status: 503, message: busy }
  - match: E0
    reply: { text: done }
  - match: E1
    error: { status: 503, message: busy }
  - match: E1
    reply: { text: done }
  - match: count
    reply: { json: { count: 3 } }
`,
		"plans/twice.yaml": `identifier: twice
name: Twice
description: Two calls to a model, the second's instruction cut.
steps:
  - id: E0
    tool_name: builtin__infer
    input: { instruction: "Say done." }
  - id: E1
    tool_name: builtin__infer
    input: { instruction: "Say done, in more than ten bytes." }
output: { a: "{{E0.text}}", b: "{{E1.text}}" }
`,
		"plans/agentic.yaml": `identifier: agentic
name: Agentic
description: One agent step, its prompt cut.
steps:
  - id: count
    tool_name: agent
    input:
      prompt: "Count the open issues."
      output_schema: { type: object, required: [count], properties: { count: { type: integer } } }
output: { count: "{{count.output.count}}" }
`,
		"plans/halts.yaml": `identifier: halts
name: Halts
description: Fails at its second step, before its third.
steps:
  - id: E0
    tool_name: builtin__reshape
    input: { shape: { issues: [] } }
  - id: E1
    tool_name: builtin__reshape
    input: { shape: { first: "{{E0.issues.0.id}}" } }
  - id: E2
    tool_name: builtin__reshape
    input: { shape: { done: true } }
`,
	}
}

// TestQuietTellsWarnings: --quiet leaves out progress, the usage line and
// the run id, not warnings. The configuration's, the spend cap's, a
// failover's, a retried call's and a step's ([limits] model_input_bytes)
// are each one line on stderr under it, as they are without it, in run
// and fork; and so is a --set a fork never came to.
func TestQuietTellsWarnings(t *testing.T) {
	writeProject(t, warningsProjectFiles())
	const (
		config   = ".stepwise/config.toml:9:1: warning: settings.nonsense: unknown key"
		cap      = "warning: the spend cap ($1.00, --max-cost) cannot count the calls of model %s (%s), which has no price: add [pricing.%[1]s] with its input and output prices, in USD per million tokens"
		failover = "warning: script/scripted failed (model script/scripted: 503 busy (gave up after 3 attempts)); falling over to script/backup"
		retried  = "warning: E0: script/backup answered after 3 failed attempts: model script/scripted: 503 busy; model script/scripted: 503 busy; model script/scripted: 503 busy (gave up after 3 attempts)"
		cut      = "warning: E1: builtin__infer's instruction was cut to 10 of its 33 bytes for the model ([limits] model_input_bytes); the record keeps it whole"
		retried1 = "warning: E1: script/scripted answered after 1 failed attempt: model script/scripted: 503 busy"
	)
	caps := []string{fmt.Sprintf(cap, "scripted", "models.default"), fmt.Sprintf(cap, "backup", "models.default fallbacks")}
	out, errOut, code := runCLI(t, "run", "twice", "--max-cost", "1", "--json", "-q")
	want := strings.Join(append(append([]string{config}, caps...), failover, retried, cut, retried1), "\n") + "\n"
	if code != 0 || errOut != want {
		t.Fatalf("run: exit %d, stderr:\n%s\nwant:\n%s", code, errOut, want)
	}
	id := regexp.MustCompile(`"run_id": "([0-9a-f]+)"`).FindStringSubmatch(out)[1]

	_, errOut, code = runCLI(t, "fork", id, "--from", "E1", "--max-cost", "1", "-q")
	if want := strings.Join(append(append([]string{config}, caps...), cut, retried1), "\n") + "\n"; code != 0 || errOut != want {
		t.Errorf("fork: exit %d, stderr:\n%s\nwant:\n%s", code, errOut, want)
	}

	out, _, _ = runCLI(t, "run", "halts", "--json")
	id = regexp.MustCompile(`"run_id": "([0-9a-f]+)"`).FindStringSubmatch(out)[1]
	_, errOut, code = runCLI(t, "fork", id, "--from", "E1", "--set", "E2={}", "-q")
	want = config + "\nwarning: --set E2: the fork ran no step there\nError: plan failed at step E1 (builtin__reshape): empty data at 'E0.issues.0.id': 'E0.issues' is an empty list\n"
	if code != 1 || errOut != want {
		t.Errorf("a fork that never came to its --set: exit %d, stderr:\n%s\nwant:\n%s", code, errOut, want)
	}
}

// TestEventsJSONLTellsWarnings: under --events jsonl, stderr is JSON lines
// and nothing else, in run and fork, and every warning a person would
// read is one of them, {"kind": "warning", ..., "warning": TEXT}: the
// configuration's, the spend cap's, a failover's (which no event tells), a
// --set the fork never came to; what [storage] keep_days pruned as the
// run started is a line {"kind": "pruned"}. A flag refused once the
// command line is read is an error line.
func TestEventsJSONLTellsWarnings(t *testing.T) {
	files := warningsProjectFiles()
	files["config.toml"] += "[storage]\nkeep_days = 2\n"
	writeProject(t, files)
	wd, _ := os.Getwd()
	// lines are the lines of stderr, each one JSON object; told are those
	// that are no event of the run (an event has a seq).
	lines := func(errOut string) (all, told []map[string]any) {
		t.Helper()
		for _, line := range strings.Split(strings.TrimSuffix(errOut, "\n"), "\n") {
			var l map[string]any
			if err := json.Unmarshal([]byte(line), &l); err != nil {
				t.Fatalf("stderr has a line that is not a JSON object: %q\n%s", line, errOut)
			}
			all = append(all, l)
			if _, event := l["seq"]; !event {
				told = append(told, l)
			}
		}
		return all, told
	}
	const (
		cap      = "the spend cap ($1.00, --max-cost) cannot count the calls of model %s (%s), which has no price: add [pricing.%[1]s] with its input and output prices, in USD per million tokens"
		failover = "script/scripted failed (model script/scripted: 503 busy (gave up after 3 attempts)); falling over to script/backup"
		pruned   = "[storage] keep_days = 2: deleted 1 run older than 2 days, all of this project"
	)
	// warning is a warning line, and what it is about.
	warning := func(text string, about ...string) map[string]any {
		w := map[string]any{"kind": "warning", "warning": text}
		for i := 0; i < len(about); i += 2 {
			w[about[i]] = about[i+1]
		}
		return w
	}
	// The configuration's warning is placed as validate --json places it.
	config := map[string]any{"kind": "warning", "file": ".stepwise/config.toml", "line": 9.0, "col": 1.0, "warning": "settings.nonsense: unknown key"}
	// check compares the lines told with want; a pruned line's message is
	// compared up to what it says of the space given back.
	check := func(what string, told, want []map[string]any) {
		t.Helper()
		for i, l := range told {
			if l["kind"] == "pruned" {
				if m, _ := l["message"].(string); strings.HasPrefix(m, pruned) {
					l["message"] = pruned
				}
			}
			if i >= len(want) || fmt.Sprint(l) != fmt.Sprint(want[i]) {
				t.Errorf("%s: the lines that are no event:\n%v\nwant:\n%v", what, told, want)
				return
			}
		}
		if len(told) != len(want) {
			t.Errorf("%s: the lines that are no event:\n%v\nwant:\n%v", what, told, want)
		}
	}
	prunedLine := func(id string) map[string]any {
		return map[string]any{"kind": "pruned", "keep_days": 2.0, "runs": []any{id}, "other_projects": 0.0, "message": pruned}
	}
	caps := []map[string]any{
		warning(fmt.Sprintf(cap, "scripted", "models.default"), "model", "scripted"),
		warning(fmt.Sprintf(cap, "backup", "models.default fallbacks"), "model", "backup"),
	}

	recordOldRuns(t, wd, 72*time.Hour, "old-run")
	_, errOut, code := runCLI(t, "run", "twice", "--max-cost", "1", "--events", "jsonl")
	all, told := lines(errOut)
	if code != 0 || all[len(all)-1]["kind"] != "run_end" {
		t.Fatalf("run: exit %d, stderr:\n%s", code, errOut)
	}
	check("run", told, append(append([]map[string]any{config}, caps...), prunedLine("old-run"), warning(failover)))

	out, _, _ := runCLI(t, "run", "halts", "--json")
	id := regexp.MustCompile(`"run_id": "([0-9a-f]+)"`).FindStringSubmatch(out)[1]
	recordOldRuns(t, wd, 72*time.Hour, "old-fork")
	_, errOut, code = runCLI(t, "fork", id, "--from", "E1", "--set", "E2={}", "--max-cost", "1", "--events", "jsonl")
	all, told = lines(errOut)
	if code != 1 || all[len(all)-2]["kind"] != "run_end" {
		t.Fatalf("fork: exit %d, stderr:\n%s", code, errOut)
	}
	check("fork", told, append(append([]map[string]any{config}, caps...), prunedLine("old-fork"), warning("the fork ran no step there", "set", "E2")))

	for _, args := range [][]string{
		{"fork", id, "--from", "E1", "--set", "E2=nope"},
		{"fork", id},
		{"run", "halts", "--progress-every", "-1s"},
	} {
		_, errOut, code = runCLI(t, append(args, "--events", "jsonl")...)
		if all, _ = lines(errOut); code != exitUsage || len(all) != 1 || all[0]["kind"] != "error" {
			t.Errorf("%v: exit %d, stderr:\n%s", args, code, errOut)
		}
	}
}

// recordInStore opens the data directory's run store and has record write
// runs to a recorder of it (with storetest), then closes both, as a
// command that recorded them would: runs made as a test needs them, old
// ones included.
func recordInStore(t *testing.T, record func(rec engine.Sink)) {
	t.Helper()
	st, err := store.Open(dataStore())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rec := st.Recorder()
	defer rec.Close()
	record(rec)
}

// waitProjectFiles is a project whose plan runs one agent step whose
// scripted reply takes delay ms.
func waitProjectFiles(delay int) map[string]string {
	return map[string]string{
		"config.toml": `
[providers.script]
type = "script"
file = ".stepwise/replies.yaml"

[models]
default = { provider = "script", model = "scripted" }
`,
		"replies.yaml": fmt.Sprintf("replies:\n  - match: E1\n    reply: { json: { ok: true }, delay_ms: %d }\n", delay),
		"plans/wait.yaml": `identifier: wait
name: Wait
description: One slow agent.
steps:
  - id: E1
    tool_name: agent
    input:
      prompt: "Wait."
      output_schema: { type: object, required: [ok], properties: { ok: { type: boolean } } }
output: { ok: "{{E1.output.ok}}" }
`,
	}
}

// TestProgressLinesOnTime: off a terminal, a step that runs 1s told every
// 300ms gets its lines at 300ms, 600ms and 900ms of its age, each in its
// own period: none late by a period, none skipped. The times are those
// the lines carry, the step's age when each was written.
func TestProgressLinesOnTime(t *testing.T) {
	writeProject(t, waitProjectFiles(1000))
	const period = 300 * time.Millisecond
	_, errOut, code := runCLI(t, "run", "wait", "--progress-every", period.String())
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	line := regexp.MustCompile(`(?m)^… E1 agent round 1, 0 tools, (\d+ms|\d+\.\ds)$`)
	var beats []int
	for _, m := range line.FindAllStringSubmatch(errOut, -1) {
		age, err := time.ParseDuration(m[1])
		if err != nil {
			t.Fatal(err)
		}
		beats = append(beats, int(age/period))
	}
	if len(beats) < 3 {
		t.Fatalf("%d progress lines of a 1s step told every 300ms, want one at each of 300, 600 and 900ms:\n%s", len(beats), errOut)
	}
	for i, beat := range beats {
		if beat != i+1 {
			t.Errorf("progress line %d came in period %d of the step's age, want %d:\n%s", i+1, beat, i+1, errOut)
		}
	}

	// 0 tells no step as it goes; the start and end lines stay.
	_, errOut, code = runCLI(t, "run", "wait", "--progress-every", "0")
	if code != 0 || strings.Contains(errOut, "… ") || !strings.Contains(errOut, "→ E1 agent\n") || !strings.Contains(errOut, "usage: 1 model call") {
		t.Errorf("--progress-every 0: exit %d, stderr:\n%s", code, errOut)
	}
}

// TestProgressTmuxReplay: a replay on a terminal leaves the summary of
// each step it replayed, as a run does.
func TestProgressTmuxReplay(t *testing.T) {
	writeProject(t, progressProjectFiles(0, false))
	out, errOut, code := runCLI(t, "run", "slow", "--json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	id := regexp.MustCompile(`"run_id": "([0-9a-f]+)"`).FindStringSubmatch(out)[1]
	s := startStepwise(t, 120, 30, nil, "replay", id)
	s.waitFor("exit 0")
	all := s.scrollback()
	for _, want := range []string{"✓ E1 map 40 items ", "✓ E2 agent 2 rounds 1 tool ", "matches its record"} {
		if !strings.Contains(all, want) {
			t.Errorf("the replay's terminal has no %q:\n%s", want, all)
		}
	}
}

// TestProgressReplayAndFork: replay and fork take --quiet and
// --progress-every as run does.
func TestProgressReplayAndFork(t *testing.T) {
	writeProject(t, progressProjectFiles(0, false))
	out, errOut, code := runCLI(t, "run", "slow", "--json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	id := regexp.MustCompile(`"run_id": "([0-9a-f]+)"`).FindStringSubmatch(out)[1]
	out, errOut, code = runCLI(t, "replay", id, "--quiet")
	if code != 0 || !strings.Contains(out, "matches its record") || errOut != "" {
		t.Errorf("replay --quiet: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	out, errOut, code = runCLI(t, "fork", id, "--from", "E2", "--quiet")
	if code != 0 || !strings.Contains(out, `"count": 3`) || errOut != "" {
		t.Errorf("fork --quiet: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	_, errOut, code = runCLI(t, "fork", id, "--from", "E2", "--progress-every", "1h")
	if code != 0 || !strings.Contains(errOut, "reused from run") || !strings.Contains(errOut, "→ E2 agent") {
		t.Errorf("fork: exit %d, stderr %q", code, errOut)
	}
}

// TestProgressTmuxDumbTerminal: a terminal that cannot redraw in place
// gets the log lines, not the block.
func TestProgressTmuxDumbTerminal(t *testing.T) {
	writeProject(t, progressProjectFiles(100, false))
	s := startStepwise(t, 100, 40, []string{"TERM=dumb"}, "run", "slow", "--progress-every", "300ms")
	screen := s.waitFor("exit 0")
	if !strings.Contains(screen, "→ E1 map") || !regexp.MustCompile(`… E1 map \d+/40 items, `).MatchString(screen) || strings.Contains(screen, "▸") {
		t.Errorf("a dumb terminal does not get the log lines:\n%s", screen)
	}
}

// TestProgressTmuxSolver: the solver's answer streams to the terminal the
// block is on: the block makes way for it for good, and the answer keeps
// its lines to itself.
func TestProgressTmuxSolver(t *testing.T) {
	runProject(t)
	s := startStepwise(t, 100, 20, nil, "run", "narrate")
	screen := s.waitFor("exit 0")
	if !regexp.MustCompile(`(?m)^✓ E0 builtin__reshape \d+ms\nTwo issues, both fine\.\nusage: 1 model call`).MatchString(screen) {
		t.Errorf("the answer does not stand on its own lines:\n%s", screen)
	}
	if strings.Contains(screen, "▸ ") || strings.Contains(screen, "  run ") {
		t.Errorf("a frame of the block is left on the screen:\n%s", screen)
	}
}

// TestProgressFailedSummary: off a terminal, a step that failed is told
// with its items, what failed and what it cost, a failed model call
// (which has no price) leaving the cost of the others known.
func TestProgressFailedSummary(t *testing.T) {
	files := progressProjectFiles(0, false)
	files["replies.yaml"] = strings.Replace(files["replies.yaml"], "  - match: E1/do.5\n    reply: { json: { label: ok }, usage: { input_tokens: 1000, output_tokens: 100 }, delay_ms: 0 }\n",
		"  - match: E1/do.5\n    error: { status: 400, message: refused }\n", 1)
	writeProject(t, files)
	_, errOut, code := runCLI(t, "run", "slow")
	if code != 1 || !regexp.MustCompile(`(?m)^✗ E1 map \d+ of 40 items done \(1 failed\) failed after \d+(ms|\.\ds) [\d.]+k tok \$0\.\d{4}$`).MatchString(errOut) {
		t.Errorf("exit %d; the failed map's summary is not there with its cost:\n%s", code, errOut)
	}
}

// TestSummaryTailCounts checks that a list step's summary counts its items
// in words that agree with the count.
func TestSummaryTailCounts(t *testing.T) {
	cases := []struct {
		name string
		list progress.List
		want string
	}{
		{"one item", progress.List{Total: 1, Done: 1}, " 1 item"},
		{"one of one failed", progress.List{Total: 1, Done: 1, Failed: 1}, " 0 of 1 item done (1 failed)"},
		{"two items", progress.List{Total: 2, Done: 2}, " 2 items"},
		{"one of two", progress.List{Total: 2, Done: 1}, " 1 of 2 items done"},
		{"none of one", progress.List{Total: 1, Done: 0}, " 0 of 1 item done"},
		{"two of four, two cut", progress.List{Total: 4, Done: 4, Cancelled: 2}, " 2 of 4 items done (2 cancelled)"},
		{"none yet", progress.List{Total: 4, Done: 2, Cancelled: 2}, " 0 of 4 items done (2 cancelled)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := summaryTail(&progress.Step{List: &c.list}); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

// TestProgressTellsRetries: off a terminal, a model call that answered
// after failed attempts is told, with why they failed: its time is more
// than its reply shows, and nothing else on stderr would say why.
func TestProgressTellsRetries(t *testing.T) {
	writeProject(t, map[string]string{
		"config.toml": scriptedConfig,
		"replies.yaml": `replies:
  - match: E0
    error: { status: 503, message: busy }
  - match: E0
    reply: { text: done }
`,
		"plans/once.yaml": `identifier: once
name: Once
description: One call to a model.
steps:
  - id: E0
    tool_name: builtin__infer
    input: { instruction: "Say done." }
`,
	})
	_, errOut, code := runCLI(t, "run", "once")
	if want := "warning: E0: script/scripted answered after 1 failed attempt: model script/scripted: 503 busy\n"; code != 0 || !strings.Contains(errOut, want) {
		t.Errorf("exit %d; stderr lacks %q:\n%s", code, want, errOut)
	}
}
