package debugger_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/config"
	"github.com/stepwise-dev/stepwise/engine/model"
	"github.com/stepwise-dev/stepwise/engine/store"
	"github.com/stepwise-dev/stepwise/engine/tools"
	"github.com/stepwise-dev/stepwise/plans"
)

// chainPlan uses every kind of work a replay answers: a user exec tool
// with a side effect (note appends to notes.log), a model-backed tool, an
// agent whose first round calls tools (one of which fails), an infer gate
// with a branch, a map, and an ask.
const chainPlan = `identifier: chain
name: Chain
description: Notes, infers, investigates, decides, fans out and asks.
input_schema:
  type: object
  properties:
    topic: { type: string, default: bugs }
steps:
  - id: E0
    tool_name: user__note
    input: { text: "start {{input.topic}}" }
  - id: E1
    tool_name: builtin__infer
    input: { instruction: "Summarize {{E0.noted}}" }
  - id: E2
    tool_name: agent
    input:
      prompt: "Look into {{E1.text}}"
      tools: ["user__note", "user__fail"]
      max_iterations: 3
      output_schema:
        type: object
        required: [found]
        properties: { found: { type: string } }
  - id: E3
    tool_name: decide
    input:
      infer: "Is it serious? {{E2.output.found}}"
      then: { tool_name: user__note, input: { text: "serious {{E2.output.found}}" } }
      else: { tool_name: user__note, input: { text: "fine" } }
  - id: E4
    tool_name: map
    input:
      over: ["a", "b", "c"]
      concurrency: 2
      do: { tool_name: user__note, input: { text: "item {{item}}" } }
  - id: E5
    tool_name: ask
    input:
      prompt: "Ship it?"
      output_schema: { type: object, required: [ship], properties: { ship: { type: boolean } } }
      when_unanswered: default
      default: { ship: false }
output:
  summary: "{{E1.text}}"
  found: "{{E2.output.found}}"
  branch: "{{E3.branch}}"
  items: "{{E4.count}}"
  ship: "{{E5.answer.ship}}"
`

// chainReplies answer the chain's model calls when it is recorded.
const chainReplies = `replies:
  - match: E1
    reply: { text: "three bugs", usage: { input_tokens: 40, output_tokens: 4 } }
  - match: E2
    reply:
      tool_calls:
        - { name: user__note, arguments: { text: "agent looked" } }
        - { name: user__fail, arguments: {} }
      usage: { input_tokens: 300, output_tokens: 20 }
  - match: E2
    reply: { json: { found: "a crash" }, usage: { input_tokens: 400, output_tokens: 10 } }
  - match: E3
    role: judge
    reply: { json: { verdict: true, reason: "crashes are serious" }, usage: { input_tokens: 50, output_tokens: 5 } }
`

// brokenPlan fails at its second step, a tool that fails after it has
// written to notes.log.
const brokenPlan = `identifier: broken
name: Broken
description: Notes, then fails.
steps:
  - id: E0
    tool_name: user__note
    input: { text: "before the failure" }
  - id: E1
    tool_name: user__fail
    input: {}
  - id: E2
    tool_name: user__note
    input: { text: "never" }
`

var toolFiles = map[string]string{
	".stepwise/tools/note.yaml": `name: note
description: Appends a line to notes.log and says what it noted.
kind: exec
command: sh
args:
  - "-c"
  - 'printf "%s\n" "$1" >> notes.log && printf "{\"noted\": \"%s\"}" "$1"'
  - note
  - "{{input.text}}"
output: json
input_schema: { type: object, required: [text], properties: { text: { type: string } } }
`,
	".stepwise/tools/fail.yaml": `name: fail
description: Writes to notes.log, then fails.
kind: exec
command: sh
args: ["-c", "echo fail ran >> notes.log; echo broken >&2; exit 3"]
output: text
input_schema: { type: object, properties: {} }
`,
}

// testProject is a project directory on disk with a script provider, the
// note and fail tools and a run store in a temporary SQLite file.
type testProject struct {
	dir   string
	cfg   *config.Config
	cat   *tools.Catalog
	store *store.Store
}

func newTestProject(t *testing.T) *testProject {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		".stepwise/config.toml":       "[providers.s]\ntype = \"script\"\nfile = \"replies.yaml\"\n[models]\ndefault = { provider = \"s\", model = \"scripted\" }\n",
		"replies.yaml":                chainReplies,
		".stepwise/plans/chain.yaml":  chainPlan,
		".stepwise/plans/broken.yaml": brokenPlan,
	}
	for k, v := range toolFiles {
		files[k] = v
	}
	for name, text := range files {
		writeFile(t, filepath.Join(dir, name), text)
	}
	env := map[string]string{"HOME": filepath.Join(dir, "home"), "XDG_CONFIG_HOME": filepath.Join(dir, "xdg-config"), "XDG_DATA_HOME": filepath.Join(dir, "xdg-data")}
	cfg, _, err := config.Load(config.Options{Dir: dir, LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(filepath.Join(dir, "runs.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return &testProject{dir: dir, cfg: cfg, cat: tools.Load(cfg), store: st}
}

func writeFile(t *testing.T, file, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// plan writes text as the plan file name and loads it, as a command loads
// the current content of a recorded run's file.
func (p *testProject) plan(t *testing.T, name, text string) *plans.Plan {
	t.Helper()
	file := filepath.Join(p.dir, ".stepwise", "plans", name+".yaml")
	writeFile(t, file, text)
	pl, report := plans.Load(file, []byte(text), plans.Stepwise)
	if !report.OK() {
		t.Fatalf("plan %s does not load: %v", name, report.Problems)
	}
	return pl
}

// notes is what the note and fail tools have written so far.
func (p *testProject) notes(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(p.dir, "notes.log"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return string(b)
}

// events is a sink keeping a run's events.
type events struct {
	mu   sync.Mutex
	list []engine.Event
}

func (e *events) Event(ev engine.Event) {
	e.mu.Lock()
	e.list = append(e.list, ev)
	e.mu.Unlock()
}

// modelCalls lists "site provider" for each model call made.
func (e *events) modelCalls() []string {
	var out []string
	for _, ev := range e.list {
		if c, ok := ev.Payload.(engine.ModelCalled); ok {
			out = append(out, c.Site+" "+c.Provider)
		}
	}
	return out
}

// options are the engine parts of a run in the project, recorded into its
// store; closing the Recorder (the returned func) flushes the record.
func (p *testProject) options(t *testing.T, models *model.Models, hook engine.Hook) (engine.Options, *events, func()) {
	t.Helper()
	rt := tools.NewRuntime(p.cfg, p.cat)
	rec := p.store.Recorder()
	ev := &events{}
	return engine.Options{Config: p.cfg, Catalog: p.cat, Tools: rt, Models: models, Hook: hook, Sinks: []engine.Sink{rec, ev}}, ev, func() {
		if err := rec.Close(); err != nil {
			t.Fatal(err)
		}
		rt.Close()
	}
}

func (p *testProject) models() *model.Models {
	return model.New(p.cfg, model.Options{Backoff: func(int) time.Duration { return 0 }})
}

// answerAsks answers every ask with {ship: true}.
func answerAsks(ctx context.Context, st *engine.Stop) engine.Decision {
	if st.Kind == engine.StopAsk {
		return engine.Decision{Action: engine.Answer, Value: map[string]any{"ship": true}}
	}
	return engine.Decision{}
}

// record runs a plan of the project for real and returns its record.
func (p *testProject) record(t *testing.T, pl *plans.Plan, inputs map[string]any) (*engine.Result, *debugger.Recording) {
	t.Helper()
	opts, _, done := p.options(t, p.models(), answerAsks)
	res, err := engine.New(opts).Run(context.Background(), pl, inputs)
	done()
	if err != nil {
		t.Fatal(err)
	}
	return res, p.recording(t, res.RunID)
}

func (p *testProject) recording(t *testing.T, id string) *debugger.Recording {
	t.Helper()
	rec, err := debugger.LoadRecording(context.Background(), p.store, id)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// replay replays rec with pl, recorded as a new run, with the replies file
// emptied first: a model call that reached the script would fail.
func (p *testProject) replay(t *testing.T, rec *debugger.Recording, pl *plans.Plan) (*debugger.ReplayResult, *events) {
	t.Helper()
	writeFile(t, filepath.Join(p.dir, "replies.yaml"), "replies: []\n")
	opts, ev, done := p.options(t, nil, nil)
	out, err := debugger.Replay(context.Background(), rec, pl, opts)
	done()
	if err != nil {
		t.Fatal(err)
	}
	return out, ev
}

func TestReplayReproducesARun(t *testing.T) {
	p := newTestProject(t)
	pl := p.plan(t, "chain", chainPlan)
	res, rec := p.record(t, pl, nil)
	if res.Status != engine.StatusOK {
		t.Fatalf("the recorded run ended %s: %v", res.Status, res.Err)
	}
	notes := p.notes(t)
	if !strings.Contains(notes, "start bugs") || !strings.Contains(notes, "fail ran") || !strings.Contains(notes, "item c") {
		t.Fatalf("the recorded run did not write its notes: %q", notes)
	}

	out, ev := p.replay(t, rec, p.plan(t, "chain", chainPlan))
	if !out.Identical() {
		t.Fatalf("the replay diverged: %s (expected %v, got %v)", out.Divergence, out.Divergence.Expected, out.Divergence.Got)
	}
	if got := p.notes(t); got != notes {
		t.Errorf("the replay ran a tool: notes.log went from %q to %q", notes, got)
	}
	// The agent's two rounds and the verdict, each from the record;
	// builtin__infer's result is injected whole.
	if calls := ev.modelCalls(); !slices.Equal(calls, []string{"E2 replay", "E2 replay", "E3 replay"}) {
		t.Errorf("model calls %v, want the agent's two rounds and the verdict, all replayed", calls)
	}
	// All four were answered from the record, builtin__infer's with its
	// result.
	if out.ModelCalls != 4 || out.Steps != len(rec.Run.Steps) || out.FailedAt != "" {
		t.Errorf("replay counted %d model calls and %d steps (failed at %q), want 4 and %d", out.ModelCalls, out.Steps, out.FailedAt, len(rec.Run.Steps))
	}
	if !reflect.DeepEqual(plain(t, out.Run.Output), plain(t, res.Output)) || out.Run.Usage.InputTokens != 0 {
		t.Errorf("replayed output %v (usage %+v), want %v at no cost", out.Run.Output, out.Run.Usage, res.Output)
	}

	// The replay is a run of its own in the store, and replays in turn:
	// its agent's tool calls, answered at a stop, have no tool events, and
	// are read off the next round's request.
	again, _ := p.replay(t, p.recording(t, out.Run.RunID), pl)
	if !again.Identical() {
		t.Fatalf("the replay of the replay diverged: %s (expected %v, got %v)", again.Divergence, again.Divergence.Expected, again.Divergence.Got)
	}
	if got := p.notes(t); got != notes {
		t.Errorf("the second replay ran a tool: notes.log went from %q to %q", notes, got)
	}
}

func TestReplayDivergesWhereThePlanChanged(t *testing.T) {
	tests := []struct {
		name     string
		old, new string
		path     string
		what     string
		cutShort bool
	}{
		{name: "a catalog step's input template", old: `"Summarize {{E0.noted}}"`, new: `"Summarise {{E0.noted}} briefly"`, path: "E1", what: "input", cutShort: true},
		{name: "an agent's prompt", old: `"Look into {{E1.text}}"`, new: `"Investigate {{E1.text}}"`, path: "E2", what: "input", cutShort: true},
		{name: "an agent's tools", old: `tools: ["user__note", "user__fail"]`, new: `tools: ["user__*"]`, path: "E2", what: "input", cutShort: true},
		{name: "a branch's step", old: `"serious {{E2.output.found}}"`, new: `"grave {{E2.output.found}}"`, path: "E3/then", what: "input", cutShort: true},
		{name: "the recorded inputs' default", old: "default: bugs", new: "default: crashes", path: "", what: ""},
		{name: "a step the record does not have", old: "  - id: E1\n", new: "  - id: E0b\n    tool_name: user__note\n    input: { text: new }\n  - id: E1\n", path: "E0b", what: "step", cutShort: true},
		{name: "a step taken out", old: "  - id: E5\n    tool_name: ask", new: "  - id: E5\n    tool_name: builtin__reshape\n    input: { shape: { answer: { ship: true } } }\n  - id: E6\n    tool_name: ask", path: "E5", what: "tool", cutShort: true},
		{name: "a result computed otherwise", old: `items: "{{E4.count}}"`, new: `items: "{{E4.results}}"`, path: "", what: "outcome"},
	}
	p := newTestProject(t)
	_, rec := p.record(t, p.plan(t, "chain", chainPlan), nil)
	notes := p.notes(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(chainPlan, tc.old) {
				t.Fatalf("the plan has no %q", tc.old)
			}
			edited := p.plan(t, "chain", strings.Replace(chainPlan, tc.old, tc.new, 1))
			out, _ := p.replay(t, rec, edited)
			if tc.name == "the recorded inputs' default" {
				// The recorded inputs hold the default the run had: the
				// edit does not reach them, and the replay is identical.
				if !out.Identical() {
					t.Fatalf("diverged: %s", out.Divergence)
				}
				return
			}
			d := out.Divergence
			if d == nil {
				t.Fatal("the replay reports no divergence")
			}
			if d.Path != tc.path || d.What != tc.what || d.CutShort != tc.cutShort {
				t.Errorf("divergence %s (what %s, cut short %v), want at %q, what %s, cut short %v", d, d.What, d.CutShort, tc.path, tc.what, tc.cutShort)
			}
			if d.CutShort && out.Run.Status != engine.StatusAborted {
				t.Errorf("a replay cut short ended %s", out.Run.Status)
			}
			if got := p.notes(t); got != notes {
				t.Errorf("the replay ran a tool: notes.log went from %q to %q", notes, got)
			}
		})
	}
	// Not only the plan: an agent's request is compared round by round,
	// so a change in what the model would be asked shows where it first
	// matters.
	t.Run("the agent prompt of the configuration", func(t *testing.T) {
		saved := p.cfg.Prompts.Agent
		p.cfg.Prompts.Agent = "Be brief."
		defer func() { p.cfg.Prompts.Agent = saved }()
		out, _ := p.replay(t, rec, p.plan(t, "chain", chainPlan))
		d := out.Divergence
		if d == nil || d.Path != "E2/agent.1" || d.What != "request" || !strings.Contains(d.Message, "message 1 (system)") {
			t.Fatalf("divergence %v, want the first round's system message", d)
		}
	})
	// The divergence says what the record has and what the replay had.
	out, _ := p.replay(t, rec, p.plan(t, "chain", strings.Replace(chainPlan, `"Summarize {{E0.noted}}"`, `"Summarise {{E0.noted}}"`, 1)))
	want := map[string]any{"instruction": "Summarize start bugs"}
	if !reflect.DeepEqual(out.Divergence.Expected, want) || !reflect.DeepEqual(out.Divergence.Got, map[string]any{"instruction": "Summarise start bugs"}) {
		t.Errorf("expected %v, got %v", out.Divergence.Expected, out.Divergence.Got)
	}
}

func TestReplayReproducesAFailure(t *testing.T) {
	p := newTestProject(t)
	pl := p.plan(t, "broken", brokenPlan)
	res, rec := p.record(t, pl, nil)
	if res.Status != engine.StatusFailed {
		t.Fatalf("the recorded run ended %s", res.Status)
	}
	notes := p.notes(t)
	out, _ := p.replay(t, rec, pl)
	if !out.Identical() || out.FailedAt != "E1" {
		t.Fatalf("replay: divergence %v, failed at %q; want the failure at E1 reproduced", out.Divergence, out.FailedAt)
	}
	if got := p.notes(t); got != notes {
		t.Errorf("the replay ran the failing tool: notes.log went from %q to %q", notes, got)
	}
	// The replay fails as the recorded run failed, with its words, and
	// its record says the failure was the recorded one's.
	if out.Run.Status != engine.StatusFailed || out.Run.Err == nil || out.Run.Err.Error() != res.Err.Error() {
		t.Errorf("the replay ended %s (%v), want failed as recorded (%v)", out.Run.Status, out.Run.Err, res.Err)
	}
	steps := p.recording(t, out.Run.RunID).Run.Steps
	if s := steps[len(steps)-1]; s.Path != "E1" || s.Status != engine.StepFailed || s.Reused != "replay" || s.Error != rec.Run.Errors[0].Message {
		t.Errorf("the replay's record of E1: %s %q reused %q, want failed as recorded, reused from the replay", s.Status, s.Error, s.Reused)
	}
}

// TestReplayOfPlanCalls: a plan__ step, and a plan__ tool that an agent
// calls, run in a replay as they ran, their steps answered from the record
// under the call's path.
func TestReplayOfPlanCalls(t *testing.T) {
	p := newTestProject(t)
	p.plan(t, "inner", `identifier: inner
name: Inner
description: Notes once.
steps:
  - id: E0
    tool_name: user__note
    input: { text: "inner" }
output:
  noted: "{{E0.noted}}"
`)
	p.cat = tools.Load(p.cfg)
	outer := p.plan(t, "outer", `identifier: outer
name: Outer
description: Calls inner as a step and from an agent.
steps:
  - id: E0
    tool_name: plan__inner
    input: {}
  - id: E1
    tool_name: agent
    input:
      prompt: "Call inner once."
      tools: ["plan__inner"]
      max_iterations: 2
      output_schema: { type: object, required: [ok], properties: { ok: { type: boolean } } }
output:
  first: "{{E0.noted}}"
  ok: "{{E1.output.ok}}"
`)
	writeFile(t, filepath.Join(p.dir, "replies.yaml"), `replies:
  - match: E1
    reply: { tool_calls: [{ name: plan__inner, arguments: {} }] }
  - match: E1
    reply: { json: { ok: true } }
`)
	res, rec := p.record(t, outer, nil)
	if res.Status != engine.StatusOK {
		t.Fatalf("the recorded run ended %s: %v", res.Status, res.Err)
	}
	notes := p.notes(t)
	if strings.Count(notes, "inner") != 2 {
		t.Fatalf("notes %q", notes)
	}
	out, _ := p.replay(t, rec, outer)
	if !out.Identical() {
		t.Fatalf("the replay diverged: %s", out.Divergence)
	}
	if got := p.notes(t); got != notes {
		t.Errorf("the replay ran a tool: notes.log went from %q to %q", notes, got)
	}
	if out.Steps != 4 { // E0, E0/inner/E0, E1, E1/agent.1/plan__inner/inner/E0
		t.Errorf("%d steps reproduced", out.Steps)
	}
}

// TestReplayOfAnInterruptedRun: a step the record never finished cannot be
// replayed; the replay says so there.
func TestReplayOfAnInterruptedRun(t *testing.T) {
	p := newTestProject(t)
	pl := p.plan(t, "broken", brokenPlan)
	_, rec := p.record(t, pl, nil)
	for i := range rec.Run.Steps {
		if rec.Run.Steps[i].Path == "E0" {
			rec.Run.Steps[i].Status, rec.Run.Steps[i].Result = "running", nil
		}
	}
	rec, err := debugger.NewRecording(rec.Run, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := p.replay(t, rec, pl)
	if d := out.Divergence; d == nil || d.Path != "E0" || d.What != "unfinished" {
		t.Fatalf("divergence %v, want E0 unfinished", d)
	}
}

func plain(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestReplayMakesDecisionsAgain records runs in which a person decided at
// a stop, and replays each: the replay reproduces the run without running
// what the person's decision kept from running, and its record lists the
// decision made again with the recorded stop, action and value, though
// the replay gives a step its result at its first stop.
func TestReplayMakesDecisionsAgain(t *testing.T) {
	injected := map[string]any{"output": map[string]any{"found": "by hand"}, "iterations": 0, "tools_called": []any{}, "final": true}
	for _, tc := range []struct {
		name, plan, text string
		at               engine.StopKind
		path             string
		decision         engine.Decision
		want             engine.Decided
	}{
		{"an agent step injected at its step stop", "chain", chainPlan, engine.StopStep, "E2",
			engine.Decision{Action: engine.Inject, Value: injected},
			engine.Decided{Stop: engine.StopStep, Action: "inject", Value: injected, Origin: "replay"}},
		{"a tool step's failure replaced at its error stop", "broken", brokenPlan, engine.StopError, "E1",
			engine.Decision{Action: engine.Replace, Value: "no failure after all"},
			engine.Decided{Stop: engine.StopError, Action: "replace", Value: "no failure after all", Origin: "replay"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newTestProject(t)
			pl := p.plan(t, tc.plan, tc.text)
			hook := func(ctx context.Context, st *engine.Stop) engine.Decision {
				if st.Kind == tc.at && st.Path == tc.path {
					return tc.decision
				}
				return answerAsks(ctx, st)
			}
			opts, _, done := p.options(t, p.models(), hook)
			res, err := engine.New(opts).Run(context.Background(), pl, nil)
			done()
			if err != nil || res.Status != engine.StatusOK {
				t.Fatalf("the recorded run: %v %v", err, res.Err)
			}
			notes := p.notes(t)
			out, ev := p.replay(t, p.recording(t, res.RunID), pl)
			if !out.Identical() {
				t.Fatalf("the replay diverges: %v", out.Divergence)
			}
			if p.notes(t) != notes {
				t.Errorf("the replay ran a tool: notes.log went from %q to %q", notes, p.notes(t))
			}
			var decided []engine.Decided
			for _, e := range ev.list {
				if d, ok := e.Payload.(engine.Decided); ok && e.Path == tc.path {
					decided = append(decided, d)
				}
			}
			if len(decided) != 1 || decided[0].Stop != tc.want.Stop || decided[0].Action != tc.want.Action || decided[0].Origin != tc.want.Origin ||
				!reflect.DeepEqual(plain(t, decided[0].Value), plain(t, tc.want.Value)) {
				t.Errorf("the replay's decisions at %s: %+v, want one %+v", tc.path, decided, tc.want)
			}
		})
	}
}
