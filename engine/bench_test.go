package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/config"
	"github.com/stepwise-dev/stepwise/engine/internal/cputime"
	"github.com/stepwise-dev/stepwise/engine/model"
	"github.com/stepwise-dev/stepwise/engine/store"
	"github.com/stepwise-dev/stepwise/engine/tools"
	"github.com/stepwise-dev/stepwise/plans"
)

// benchRun loads a plan into a project and returns a function that runs it
// once, with a fresh run-store recorder per run, hiding secrets, when
// withStore is set.
func benchRun(b *testing.B, planYAML string, inputs map[string]any, withStore bool, secrets ...store.Secret) func() *engine.Result {
	b.Helper()
	dir := b.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".stepwise"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".stepwise", "config.toml"), []byte("[storage]\nbackend = \"memory\"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	cfg, _, err := config.Load(config.Options{Dir: dir})
	if err != nil {
		b.Fatal(err)
	}
	cat := tools.Load(cfg)
	plan, report := plans.Load("bench.yaml", []byte(planYAML), plans.Stepwise)
	if !report.OK() {
		b.Fatal(report.Problems)
	}
	rt := tools.NewRuntime(cfg, cat)
	b.Cleanup(func() { rt.Close() })
	var st *store.Store
	if withStore {
		if st, err = store.Open(filepath.Join(dir, "runs.db")); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { st.Close() })
	}
	return func() *engine.Result {
		var sinks []engine.Sink
		var rec *store.Recorder
		if st != nil {
			rec = st.Recorder(secrets...)
			sinks = append(sinks, rec)
		}
		eng := engine.New(engine.Options{Config: cfg, Catalog: cat, Tools: rt, Models: model.New(cfg, model.Options{}), Sinks: sinks})
		res, err := eng.Run(context.Background(), plan, inputs)
		if err != nil {
			b.Fatal(err)
		}
		if rec != nil {
			if err := rec.Close(); err != nil {
				b.Fatal(err)
			}
		}
		if res.Status != engine.StatusOK {
			b.Fatalf("run %s: %v", res.Status, res.Err)
		}
		return res
	}
}

// BenchmarkStepOverhead runs a plan of 1,000 builtin__reshape steps, each
// reading the one before it: what the engine costs per step when the tool
// itself costs next to nothing.
func BenchmarkStepOverhead(b *testing.B) {
	benchChain(b, false)
}

// BenchmarkStepOverheadStore is BenchmarkStepOverhead recording the run in
// a run store on disk, the final flush included: ns/step less
// BenchmarkStepOverhead's is what recording costs a step of a chain.
func BenchmarkStepOverheadStore(b *testing.B) {
	benchChain(b, true)
}

func benchChain(b *testing.B, withStore bool) {
	var src strings.Builder
	src.WriteString("identifier: long\nname: long\ndescription: a long chain\nsteps:\n  - id: S0\n    tool_name: builtin__reshape\n    input: { shape: { n: 0, tag: start } }\n")
	for i := 1; i < 1000; i++ {
		fmt.Fprintf(&src, "  - id: S%d\n    tool_name: builtin__reshape\n    input: { shape: { n: \"{{S%d.n}}\", tag: \"step {{S%d.tag}}\" } }\n", i, i-1, i-1)
	}
	run := benchRun(b, src.String(), nil, withStore)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cputime.Process()
	for b.Loop() {
		run()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "ns/step")
	b.ReportMetric(cputime.PerOp(cpu, b.N), "cpu-ms/op")
}

const mapPlan = `
identifier: fan
name: fan
description: a wide map
input_schema:
  type: object
  properties:
    items: { type: array }
steps:
  - id: E1
    tool_name: map
    input:
      over: "{{input.items}}"
      concurrency: 64
      do:
        tool_name: builtin__reshape
        input: { shape: { id: "{{item.id}}", title: "#{{index}} {{item.title}}" } }
`

func mapItems(n int) map[string]any {
	items := make([]any, n)
	for i := range items {
		items[i] = map[string]any{"id": fmt.Sprintf("CHK-%d", i), "title": "checkout times out"}
	}
	return map[string]any{"items": items}
}

// BenchmarkMap10k runs a map of 10,000 items at concurrency 64 with the run
// store off. Its cpu-ms/op, like the other run benchmarks', is the CPU
// time used on all cores, the garbage collector's and a run store's
// goroutines' included, which a loaded machine inflates much less than
// ns/op: on two cores, a recorded run's ns/op is at least half of it.
func BenchmarkMap10k(b *testing.B) {
	run := benchRun(b, mapPlan, mapItems(10000), false)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cputime.Process()
	for b.Loop() {
		if res := run(); res.StepsExecuted != 10001 {
			b.Fatalf("steps %d", res.StepsExecuted)
		}
	}
	b.ReportMetric(cputime.PerOp(cpu, b.N), "cpu-ms/op")
}

// BenchmarkMap10kStore is BenchmarkMap10k recording every event in a run
// store on disk, the final flush included.
func BenchmarkMap10kStore(b *testing.B) {
	run := benchRun(b, mapPlan, mapItems(10000), true)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cputime.Process()
	for b.Loop() {
		run()
	}
	b.ReportMetric(cputime.PerOp(cpu, b.N), "cpu-ms/op")
}

// BenchmarkMap10kStoreSecrets is BenchmarkMap10kStore with two secrets
// to hide, which no payload holds: what searching every payload for them
// costs.
func BenchmarkMap10kStoreSecrets(b *testing.B) {
	run := benchRun(b, mapPlan, mapItems(10000), true,
		store.Secret{Value: "sk-ant-0123456789abcdef", Ref: "${ANTHROPIC_API_KEY}"},
		store.Secret{Value: `tok-"quoted\0123456789`, Ref: "${TRACKER_TOKEN}"})
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cputime.Process()
	for b.Loop() {
		run()
	}
	b.ReportMetric(cputime.PerOp(cpu, b.N), "cpu-ms/op")
}

// agentBenchReplies scripts an agent that calls builtin__reshape for
// rounds-1 rounds and then answers, n times over (one agent per map item).
func agentBenchReplies(rounds, n int) string {
	var b strings.Builder
	b.WriteString("replies:\n")
	for i := 0; i < n; i++ {
		for r := 1; r < rounds; r++ {
			b.WriteString("  - match: \"**\"\n    reply: { tool_calls: [ { name: builtin__reshape, arguments: { shape: { n: 1 } } } ], usage: { input_tokens: 100, output_tokens: 10 } }\n")
		}
		b.WriteString("  - match: \"**\"\n    reply: { json: { count: 1 }, usage: { input_tokens: 100, output_tokens: 10 } }\n")
	}
	return b.String()
}

// benchAgent runs plan with an instant scripted model. The replies file is
// read once, before the runs, and handed to each run's models, as stepwise
// run reads it once before its run: parsing it is no part of a round, and
// its garbage, collected during the rounds, would be charged to them. Each
// run still starts the script from the top. The loop's own time per round
// is reported for a lone agent, whose model calls do not overlap.
func benchAgent(b *testing.B, plan, replies string, rounds int, lone bool) {
	dir := b.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".stepwise"), 0o755); err != nil {
		b.Fatal(err)
	}
	toml := "[storage]\nbackend = \"memory\"\n[providers.s]\ntype = \"script\"\nfile = \"replies.yaml\"\n[models]\ndefault = { provider = \"s\", model = \"m\" }\n"
	os.WriteFile(filepath.Join(dir, ".stepwise", "config.toml"), []byte(toml), 0o644)
	os.WriteFile(filepath.Join(dir, "replies.yaml"), []byte(replies), 0o644)
	cfg, _, err := config.Load(config.Options{Dir: dir})
	if err != nil {
		b.Fatal(err)
	}
	script := cfg.Providers["s"].File
	loaded, err := model.LoadScript(script)
	if err != nil {
		b.Fatal(err)
	}
	scripts := map[string]*model.Script{script: loaded}
	cat := tools.Load(cfg)
	p, report := plans.Load("bench.yaml", []byte(plan), plans.Stepwise)
	if !report.OK() {
		b.Fatal(report.Problems)
	}
	rt := tools.NewRuntime(cfg, cat)
	b.Cleanup(func() { rt.Close() })
	// The time inside model calls, read off the llm_call events, so that
	// what is left is the loop's own.
	var inModel atomic.Int64
	timer := engine.SinkFunc(func(e engine.Event) {
		if call, ok := e.Payload.(engine.ModelCalled); ok {
			inModel.Add(int64(call.Ms * 1e6))
		}
	})
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		eng := engine.New(engine.Options{Config: cfg, Catalog: cat, Tools: rt, Models: model.New(cfg, model.Options{Scripts: scripts}), Sinks: []engine.Sink{timer}})
		res, err := eng.Run(context.Background(), p, nil)
		if err != nil || res.Status != engine.StatusOK {
			b.Fatalf("%v %v", err, res.Err)
		}
	}
	perRound := float64(b.N) * float64(rounds)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/perRound, "ns/round")
	if lone {
		b.ReportMetric((float64(b.Elapsed().Nanoseconds())-float64(inModel.Load()))/perRound, "ns/round-outside-model")
	}
}

const agentStep = `
        tool_name: agent
        input:
          prompt: "Count."
          tools: ["builtin__reshape"]
          max_iterations: 8
          output_schema: { type: object, additionalProperties: false, required: [count], properties: { count: { type: integer } } }
`

// BenchmarkAgentRound is the loop's own cost per round with a model that
// answers at once: sixteen rounds, fifteen of them calling a tool, so that
// the step's setup (resolving its tools, rendering its prompt) weighs on
// the figure as little as it does on a real agent's.
func BenchmarkAgentRound(b *testing.B) {
	step := strings.Replace(agentStep, "max_iterations: 8", "max_iterations: 16", 1)
	plan := "identifier: a\nname: a\ndescription: a\nsteps:\n  - id: E1\n" + strings.Replace(step, "\n        ", "\n    ", -1)
	benchAgent(b, plan, agentBenchReplies(16, 1), 16, true)
}

// BenchmarkAgentMap64 runs a map of 64 agent steps, 16 at a time, each
// taking three rounds.
func BenchmarkAgentMap64(b *testing.B) {
	plan := "identifier: m\nname: m\ndescription: m\nsteps:\n  - id: E1\n    tool_name: map\n    input:\n      over: \"{{input.items}}\"\n      concurrency: 16\n      do:" +
		strings.Replace(agentStep, "max_iterations: 8", "max_iterations: 3", 1) +
		"input_schema: { type: object, properties: { items: { type: array, default: [" + strings.Repeat("1,", 63) + "1] } } }\n"
	benchAgent(b, plan, agentBenchReplies(3, 64), 64*3, false)
}
