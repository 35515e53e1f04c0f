package tui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/stepwise-dev/stepwise/debugger/workspace"
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/record"
	"github.com/stepwise-dev/stepwise/tui/live/livetest"
)

// The project the run tests open: a real directory with a config that
// answers every model call from a script, user tools that run through sh,
// and a run store in a SQLite file, assembled into a Project the way
// cmd/stepwise's openWorkbench does.

// projectConfig is .stepwise/config.toml. The data directory (and so the
// run store) is set per project, in a temporary directory.
const projectConfig = `
[providers.script]
type = "script"
file = "replies.yaml"

[models]
default = { provider = "script", model = "scripted" }

[pricing.scripted]
input = 1.0
output = 2.0

[settings]
data_dir = %q

[storage]
backend = %q
`

// projectReplies answer the flow plan's agent (E2): a round that calls a
// tool, an answer that breaks the schema, and the repair that fixes it.
const projectReplies = `replies:
  - match: E2
    reply:
      text: "Let me reshape the items."
      tool_calls: [ { name: builtin__reshape, arguments: { shape: { n: 3 } } } ]
      usage: { input_tokens: 100, output_tokens: 10 }
  - match: E2
    reply: { json: { count: "three" }, usage: { input_tokens: 120, output_tokens: 6 } }
  - match: E2
    role: repair
    reply: { json: { count: 3 }, usage: { input_tokens: 50, output_tokens: 4 } }
`

// The user tools: lookup answers with a declared output schema (so an
// injected value is checked), fail always fails, and gate waits until its
// file exists (so a test decides when a run goes on).
const (
	lookupTool = `name: lookup
description: Looks a name up and says how often it was seen.
kind: exec
command: sh
args: ["-c", 'printf "{\"name\": \"%s\", \"count\": 1}" "$1"', lookup, "{{input.name}}"]
output: json
input_schema: { type: object, required: [name], properties: { name: { type: string } } }
output_schema:
  type: object
  required: [name]
  properties:
    name: { type: string }
    count: { type: integer }
`
	failTool = `name: fail
description: Always fails.
kind: exec
command: sh
args: ["-c", "echo broken >&2; exit 3"]
output: text
input_schema: { type: object, properties: {} }
`
	gateTool = `name: gate
description: Waits until its file exists.
kind: exec
command: sh
args: ["-c", 'while [ ! -f "$1" ]; do sleep 0.01; done; echo "{}"', gate, "{{input.file}}"]
output: json
input_schema: { type: object, required: [file], properties: { file: { type: string } } }
`
)

// The plans, in the workbench's tab order.
const (
	// flowPlan has inputs, a map over a list (E1/do.0 to E1/do.2) and an
	// agent (E2) whose round 1 calls a tool and whose round 2 answer is
	// repaired. Its steps come last, so that steps appended to it go to
	// the end of the file.
	flowPlan = `identifier: flow
name: Flow
description: Lists items, looks each one up, and has an agent count them.
input_schema:
  type: object
  required: [topic]
  properties:
    topic: { type: string, description: What to look into., default: bugs }
    limit: { type: integer, default: 3 }
output:
  count: "{{E2.output.count}}"
steps:
  - id: E0
    tool_name: builtin__reshape
    input: { shape: { items: ["a", "b", "c"], topic: "{{input.topic}}" } }
  - id: E1
    tool_name: map
    input:
      over: "{{E0.items}}"
      concurrency: 1
      do:
        tool_name: user__lookup
        input: { name: "{{item}}" }
  - id: E2
    tool_name: agent
    input:
      prompt: "Count what the lookups found: {{E1}}"
      tools: ["builtin__reshape"]
      max_iterations: 3
      output_schema: { type: object, required: [count], properties: { count: { type: integer } } }
`
	// simplePlan has no inputs and calls no model, so it runs as often
	// as a test likes.
	simplePlan = `identifier: simple
name: Simple
description: Two steps and no inputs.
steps:
  - id: S0
    tool_name: builtin__reshape
    input: { shape: { greeting: hello } }
  - id: S1
    tool_name: builtin__reshape
    input: { shape: { echo: "{{S0.greeting}}" } }
`
	// failingPlan fails at F1.
	failingPlan = `identifier: failing
name: Failing
description: Fails at its second step.
steps:
  - id: F0
    tool_name: builtin__reshape
    input: { shape: { ok: true } }
  - id: F1
    tool_name: user__fail
    input: {}
  - id: F2
    tool_name: builtin__reshape
    input: { shape: { never: true } }
`
	// askingPlan asks a question at A0.
	askingPlan = `identifier: asking
name: Asking
description: Asks whether to ship.
steps:
  - id: A0
    tool_name: ask
    input:
      prompt: "Ship it?"
      output_schema: { type: object, required: [ship], properties: { ship: { type: boolean } } }
      when_unanswered: default
      default: { ship: false }
  - id: A1
    tool_name: builtin__reshape
    input: { shape: { shipped: "{{A0.answer.ship}}" } }
`
	// slowPlan waits at W0 until the project's gate file exists.
	slowPlan = `identifier: slow
name: Slow
description: Waits for its gate, then finishes.
steps:
  - id: W0
    tool_name: user__gate
    input: { file: %q }
  - id: W1
    tool_name: builtin__reshape
    input: { shape: { done: true } }
`
)

// The documents' indexes in the workbench.
const (
	docFlow = iota
	docSimple
	docFailing
	docAsking
	docSlow
)

// planNames are the plan files, in tab order.
var planNames = []string{"flow", "simple", "failing", "asking", "slow"}

// testProject is a project directory on disk and the workspace the
// workbench gets for it.
type testProject struct {
	dir     string // the project root
	planDir string
	gate    string      // the file the slow plan waits for
	emitted *eventCount // every event of every run in the project
	ws      *workspace.Workspace
	docs    []workspace.Document
}

// eventCount is a sink that counts events, so that a test knows when the
// workbench has been handed all of them.
type eventCount struct{ n atomic.Int64 }

func (c *eventCount) Event(engine.Event) { c.n.Add(1) }

// newTestProject writes the project into a temporary directory and opens
// its workspace, recording runs in a run store, as the binary does.
func newTestProject(t testing.TB) *testProject {
	return openTestProject(t, "sqlite")
}

// openTestProject is newTestProject with the storage backend given.
func openTestProject(t testing.TB, backend string) *testProject {
	t.Helper()
	dir := t.TempDir()
	p := &testProject{dir: dir, planDir: filepath.Join(dir, ".stepwise", "plans"), gate: filepath.Join(dir, "gate"), emitted: &eventCount{}}
	files := map[string]string{
		".stepwise/config.toml":        fmt.Sprintf(projectConfig, filepath.Join(dir, "data"), backend),
		"replies.yaml":                 projectReplies,
		".stepwise/tools/lookup.yaml":  lookupTool,
		".stepwise/tools/fail.yaml":    failTool,
		".stepwise/tools/gate.yaml":    gateTool,
		".stepwise/plans/flow.yaml":    flowPlan,
		".stepwise/plans/simple.yaml":  simplePlan,
		".stepwise/plans/failing.yaml": failingPlan,
		".stepwise/plans/asking.yaml":  askingPlan,
		".stepwise/plans/slow.yaml":    fmt.Sprintf(slowPlan, p.gate),
	}
	for name, text := range files {
		writeTestFile(t, filepath.Join(dir, name), text)
	}
	ws, err := workspace.Open(dir, workspace.Options{LookupEnv: livetest.IsolatedEnv(dir), Sinks: []engine.Sink{p.emitted}})
	if err != nil {
		t.Fatal(err)
	}
	// The recorder flushes before the store closes.
	t.Cleanup(func() { ws.Close() })
	if ws.Project().Root == "" {
		t.Fatal("the test project is not found as a project")
	}
	ws.ShowPathsFrom(dir)
	if err := ws.OpenStore(nil); err != nil {
		t.Fatal(err)
	}
	p.ws = ws
	for _, name := range planNames {
		d := LoadDocument(ws, p.planFile(name))
		if d.Plan == nil || !d.Report.OK() {
			t.Fatalf("plan %s does not load: %v", name, d.Report.Problems)
		}
		p.docs = append(p.docs, d)
	}
	return p
}

func (p *testProject) planFile(name string) string { return filepath.Join(p.planDir, name+".yaml") }

// open opens the gate the slow plan waits at.
func (p *testProject) open(t testing.TB) {
	t.Helper()
	writeTestFile(t, p.gate, "open\n")
}

// runs lists the plan's recorded runs, newest first.
func (p *testProject) runs(t testing.TB, plan string) []record.RunSummary {
	t.Helper()
	list, err := p.ws.Runs(context.Background(), record.RunFilter{Plan: plan, Project: p.ws.Project().Root, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// waitRecorded waits until the store has n finished runs of the plan: the
// recorder writes in the background, a moment after the run ends.
func (p *testProject) waitRecorded(t testing.TB, plan string, n int) []record.RunSummary {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		list := p.runs(t, plan)
		done := 0
		for _, r := range list {
			if r.Status != engine.StatusRunning {
				done++
			}
		}
		if done >= n {
			return list
		}
		if time.Now().After(deadline) {
			t.Fatalf("the store has %d finished runs of %s, want %d", done, plan, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func writeTestFile(t testing.TB, file, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fixedNow is the clock of the run tests. It never moves, and it is
// earlier than any event, so that the run's tick (which moves the tree's
// clock forward only) changes nothing: what a screen shows of time comes
// from the times of events alone (see normalise).
var fixedNow = time.Date(2020, 6, 1, 12, 0, 0, 0, time.UTC)

// bench drives the root model over a test project the way Bubble Tea's
// program does, but with the test in control of when messages are taken:
// every command runs in a goroutine of its own and its message comes back
// to the test's goroutine, which alone touches the model.
//
// settle waits until the workbench is quiet: no command still working
// (Session.Start and Do return when the run next stops or ends, a store
// read when it is read), and every event the engine emitted handed to the
// run's tree. Some commands never count as working: the feed's wait (it
// blocks until more events come), and the run's tick, the file watch and
// the cursor's blink, which wait for the clock; the messages of those
// three are dropped, so that the screen never depends on the wall clock.
// A command is told by the name of its function (see background).
type bench struct {
	t    testing.TB
	p    *testProject
	m    model
	w, h int

	results chan result
	done    chan struct{}
	working int // commands whose message has not come back
	quit    bool
	execs   []tea.Msg // what tea.ExecProcess asked for
	// clipboard is what tea.SetClipboard asked the terminal to copy
	// (OSC 52), in order.
	clipboard []string
	seen      []*run // every run, to release at the end
}

type result struct {
	msg  tea.Msg
	work bool
}

// newBench opens the workbench on a fresh test project at w by h.
func newBench(t testing.TB, w, h int) *bench {
	t.Helper()
	return newBenchOn(t, newTestProject(t), w, h)
}

// newBenchOn opens a workbench on a project another bench may have
// opened already (it reads the breakpoints that one kept).
func newBenchOn(t testing.TB, p *testProject, w, h int) *bench {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	m := newModel(ctx, Options{Title: "test project", Documents: p.docs, Workspace: p.ws}, false)
	m.runPage.now = func() time.Time { return fixedNow }
	b := &bench{t: t, p: p, m: m, w: w, h: h, results: make(chan result, 64), done: make(chan struct{})}
	t.Cleanup(func() {
		// Abort whatever still runs and let the goroutines of the
		// feeds' waits go; the project's cleanups then flush the
		// recorder and close the store.
		cancel()
		b.release(b.m.runPage.run)
		for _, r := range b.seen {
			if r.feed != nil {
				r.feed.Close()
			}
		}
		// A Start or Do still in flight returns once the cancelled
		// run ends, a replay or fork once it gives up.
		b.drainWork(5 * time.Second)
		close(b.done)
	})
	b.update(tea.WindowSizeMsg{Width: w, Height: h})
	return b
}

func (b *bench) release(r *run) {
	if r != nil && r.cancel != nil {
		r.cancel()
	}
}

// drainWork takes messages without applying them until no command is
// working, or the time is up.
func (b *bench) drainWork(limit time.Duration) {
	deadline := time.After(limit)
	for b.working > 0 {
		select {
		case r := <-b.results:
			if r.work {
				b.working--
			}
		case <-deadline:
			return
		}
	}
}

// commandName is the name of the function behind a command, which says
// whether it is one that waits for the wall clock or for events.
func commandName(c tea.Cmd) string {
	return runtime.FuncForPC(reflect.ValueOf(c).Pointer()).Name()
}

// background reports whether a command waits rather than works: the
// feed's wait, a tick, a cursor's blink.
func background(c tea.Cmd) bool {
	n := commandName(c)
	return strings.Contains(n, ".waitEvents.") || strings.Contains(n, "bubbletea/v2.Tick.") || strings.Contains(n, "/cursor.")
}

// launch runs a command in a goroutine of its own.
func (b *bench) launch(c tea.Cmd) {
	if c == nil {
		return
	}
	work := !background(c)
	if work {
		b.working++
	}
	go func() {
		msg := c()
		select {
		case b.results <- result{msg, work}:
		case <-b.done:
		}
	}()
}

// update hands the model one message and launches what it asks for.
func (b *bench) update(msg tea.Msg) {
	next, cmd := b.m.Update(msg)
	b.m = next.(model)
	if r := b.m.runPage.run; r != nil && !slices.Contains(b.seen, r) {
		b.seen = append(b.seen, r)
	}
	b.launch(cmd)
}

// deliver takes a command's message as the program would.
func (b *bench) deliver(msg tea.Msg) {
	switch msg := msg.(type) {
	case nil:
	case tea.BatchMsg:
		for _, c := range msg {
			b.launch(c)
		}
	case tea.QuitMsg:
		b.quit = true
	case tickMsg, watchMsg:
		// The clock and the file watch move only when a test says so.
	case batchMsg:
		b.update(msg)
	default:
		typ := reflect.TypeOf(msg)
		switch {
		case strings.HasSuffix(typ.PkgPath(), "/cursor"):
			// The cursor's blink would re-arm forever.
		case typ.String() == "tea.execMsg":
			b.execs = append(b.execs, msg)
		case typ.String() == "tea.setClipboardMsg":
			b.clipboard = append(b.clipboard, reflect.ValueOf(msg).String())
		default:
			b.update(msg)
		}
	}
}

// take waits for one command's message and delivers it.
func (b *bench) take(deadline <-chan time.Time, why string) {
	b.t.Helper()
	select {
	case r := <-b.results:
		if r.work {
			b.working--
		}
		b.deliver(r.msg)
	case <-deadline:
		b.t.Fatalf("timed out waiting for %s; %d commands working, %d of %d events applied; screen:\n%s",
			why, b.working, b.applied(), b.p.emitted.n.Load(), b.screen())
	}
}

// quiet reports whether nothing is left to happen without a key.
func (b *bench) quiet() bool {
	// A replay's or fork's outcome waits for the batch that ends its
	// events, which a background wait brings.
	settling := b.m.runPage.run != nil && b.m.runPage.run.outcome != nil && !b.m.runPage.run.eventsDone
	return b.working == 0 && b.applied() == b.p.emitted.n.Load() && !settling
}

// applied counts the events the runs the bench has seen gave their trees.
func (b *bench) applied() int64 {
	var n int64
	for _, r := range b.seen {
		n += int64(r.applied)
	}
	return n
}

// settle takes messages until the workbench is quiet.
func (b *bench) settle() {
	b.t.Helper()
	deadline := time.After(20 * time.Second)
	for !b.quiet() {
		b.take(deadline, "the workbench to settle")
	}
}

// until takes messages until cond holds of the model, for what happens
// while a run goes on.
func (b *bench) until(why string, cond func(m model) bool) {
	b.t.Helper()
	deadline := time.After(20 * time.Second)
	for !cond(b.m) {
		b.take(deadline, why)
	}
}

// press sends each message (keys, pastes, typed text; a []tea.Msg is
// sent message by message) and settles after each.
func (b *bench) press(msgs ...tea.Msg) {
	b.t.Helper()
	for _, msg := range flatten(msgs) {
		b.update(msg)
		b.settle()
	}
}

// runExec runs the program the i-th tea.ExecProcess asked for, as the
// program would with the terminal handed over (here the program gets no
// terminal: stdin is empty), and delivers the message its callback makes.
// Bubble Tea keeps the command and the callback in unexported fields of
// its message; they are read through an addressable copy.
func (b *bench) runExec(i int) {
	b.t.Helper()
	if i >= len(b.execs) {
		b.t.Fatalf("no program %d: %d asked for", i, len(b.execs))
	}
	msg := reflect.New(reflect.TypeOf(b.execs[i])).Elem()
	msg.Set(reflect.ValueOf(b.execs[i]))
	field := func(name string) any {
		f := msg.FieldByName(name)
		if !f.IsValid() {
			b.t.Fatalf("%s has no field %s: Bubble Tea changed its exec message", msg.Type(), name)
		}
		return reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().Interface()
	}
	cmd, ok := field("cmd").(tea.ExecCommand)
	fn, fnOK := field("fn").(tea.ExecCallback)
	if !ok || !fnOK {
		b.t.Fatalf("%s holds no command and callback: Bubble Tea changed its exec message", msg.Type())
	}
	b.press(fn(cmd.Run()))
}

// send sends messages without settling: the run keeps going.
func (b *bench) send(msgs ...tea.Msg) {
	for _, msg := range flatten(msgs) {
		b.update(msg)
	}
}

// flatten spreads the []tea.Msg among msgs, so that a sequence of keys
// (command, typeText) can stand among single keys.
func flatten(msgs []tea.Msg) []tea.Msg {
	var out []tea.Msg
	for _, msg := range msgs {
		if list, ok := msg.([]tea.Msg); ok {
			out = append(out, flatten(list)...)
			continue
		}
		out = append(out, msg)
	}
	return out
}

// screen is what the user reads.
func (b *bench) screen() string { return ansi.Strip(b.m.render()) }

// typeText is text typed key by key.
func typeText(s string) []tea.Msg {
	var out []tea.Msg
	for _, r := range s {
		if r == ' ' {
			out = append(out, tea.KeyPressMsg{Code: tea.KeySpace, Text: " "})
			continue
		}
		out = append(out, tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	return out
}

// command is a line typed at the : command line, then enter.
func command(line string) []tea.Msg {
	return seq(keyColon, typeText(line), keyEnter)
}

// The keys of the run tests, as the terminal sends them.
var (
	keyRun        = tea.KeyPressMsg{Code: 'r', Text: "r"}
	keyDebug      = tea.KeyPressMsg{Code: 'g', Text: "g"}
	keyValidate   = tea.KeyPressMsg{Code: 'v', Text: "v"}
	keyNext       = tea.KeyPressMsg{Code: 'n', Text: "n"}
	keyStepIn     = tea.KeyPressMsg{Code: 's', Text: "s"}
	keyStepOut    = tea.KeyPressMsg{Code: 'o', Text: "o"}
	keyContinue   = tea.KeyPressMsg{Code: 'c', Text: "c"}
	keySkip       = tea.KeyPressMsg{Code: 'i', Text: "i"}
	keyAbort      = tea.KeyPressMsg{Code: 'a', Text: "a"}
	keyPause      = tea.KeyPressMsg{Code: 'z', Text: "z"}
	keyPrint      = tea.KeyPressMsg{Code: 'p', Text: "p"}
	keyBreak      = tea.KeyPressMsg{Code: 'b', Text: "b"}
	keyBreakErr   = tea.KeyPressMsg{Code: 'x', Text: "x"}
	keyColon      = tea.KeyPressMsg{Code: ':', Text: ":"}
	keyEdit       = tea.KeyPressMsg{Code: 'e', Text: "e"}
	keyNewPlan    = tea.KeyPressMsg{Code: 'n', Mod: tea.ModShift, Text: "N"}
	keyTools      = tea.KeyPressMsg{Code: 't', Text: "t"}
	keyRuns       = tea.KeyPressMsg{Code: 'r', Mod: tea.ModShift, Text: "R"}
	keyBreakPanel = tea.KeyPressMsg{Code: 'b', Mod: tea.ModShift, Text: "B"}
	keyPlanView   = tea.KeyPressMsg{Code: 'p', Mod: tea.ModShift, Text: "P"}
	keyReplay     = tea.KeyPressMsg{Code: 'y', Text: "y"}
	keyFork       = tea.KeyPressMsg{Code: 'f', Text: "f"}
	keyForkDebug  = tea.KeyPressMsg{Code: 'F', Text: "F"}
	keyReplayDbg  = tea.KeyPressMsg{Code: 'Y', Text: "Y"}
	keyDiff       = tea.KeyPressMsg{Code: 'd', Text: "d"}
	keyDelete     = tea.KeyPressMsg{Code: 'd', Mod: tea.ModShift, Text: "D"}
	keyPrevTab    = tea.KeyPressMsg{Code: '<', Text: "<"}
	keyNextTab    = tea.KeyPressMsg{Code: '>', Text: ">"}
	keySearch     = tea.KeyPressMsg{Code: '/', Text: "/"}
	keyNextHit    = tea.KeyPressMsg{Code: 'n', Mod: tea.ModCtrl}
	keyPrevHit    = tea.KeyPressMsg{Code: 'p', Mod: tea.ModCtrl}
	keyFold       = tea.KeyPressMsg{Code: 'h', Text: "h"}
	keyUnfold     = tea.KeyPressMsg{Code: 'l', Text: "l"}
	keySpace      = tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	keySubmit     = tea.KeyPressMsg{Code: 's', Mod: tea.ModCtrl}
	keySelectAll  = tea.KeyPressMsg{Code: 'g', Mod: tea.ModCtrl}
)

// paste is text pasted into whatever takes text.
func paste(s string) tea.Msg { return tea.PasteMsg{Content: s} }

// replaceText selects everything in the value editor and pastes s over
// it.
func replaceText(s string) []tea.Msg { return []tea.Msg{keySelectAll, paste(s)} }

// durationPattern matches the durations events give a screen (340ms,
// 1.2s, 2m03s, <1ms), with the spaces before them: normalise keeps the
// width of what it replaces, so the columns after them stay where they
// are.
var durationPattern = regexp.MustCompile(`( *)(<1ms|\b\d+(\.\d+)?(ms|µs|s)\b|\b\d+m\d\ds\b)`)

// normalise takes out of a screen what follows the wall clock: the
// durations, which come from the times of events, and the run ids and
// start times of recorded runs; ids lists the run ids to replace, in the
// order their placeholders are numbered.
func normalise(screen string, ids ...string) string {
	for i, id := range ids {
		place := strings.Repeat(fmt.Sprintf("R%d", i+1), len(id))[:len(id)]
		for _, n := range []int{len(id), 12, 8} {
			if n <= len(id) {
				screen = strings.ReplaceAll(screen, id[:n], place[:n])
			}
		}
	}
	screen = durationPattern.ReplaceAllStringFunc(screen, func(s string) string {
		n := len([]rune(s))
		return strings.Repeat(" ", max(n-2, 0)) + "~t"[:min(n, 2)]
	})
	screen = regexp.MustCompile(`\b\d\d:\d\d:\d\d\b`).ReplaceAllString(screen, "hh:mm:ss")
	screen = regexp.MustCompile(`\b\d{4}-\d\d-\d\d\b`).ReplaceAllString(screen, "yyyy-mm-dd")
	return screen
}
