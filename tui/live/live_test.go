package live_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/chat"
	"github.com/stepwise-dev/stepwise/engine/path"
	"github.com/stepwise-dev/stepwise/tui/live"
	"github.com/stepwise-dev/stepwise/tui/live/livetest"
)

// innerPlan is a plan other plans call as plan__inner.
const innerPlan = `
identifier: inner
steps:
  - id: S0
    tool_name: builtin__reshape
    input: { shape: { ok: true } }
output: { ok: "{{S0.ok}}" }
`

// agentStep is an agent step E1 that may call builtin__reshape.
const agentStep = `
  - id: E1
    tool_name: agent
    input:
      prompt: "Count the issues."
      tools: ["builtin__reshape"]
      output_schema: { type: object, required: [count], properties: { count: { type: integer } } }
`

// TestShapes runs real plans and checks the tree their events build, the
// run-time nodes under the steps the plan lays out up front.
func TestShapes(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string
		want    string
		status  live.Status
		done    int
		failed  int
		replies map[string]string // path: the reply streamed there
	}{
		{
			name: "map with a two-step body",
			files: map[string]string{"plans/p.yaml": `
identifier: mapped
steps:
  - id: E1
    tool_name: map
    input:
      over: [a, b]
      concurrency: 1
      do:
        - id: A
          tool_name: builtin__reshape
          input: { shape: { n: "{{item}}" } }
        - id: B
          tool_name: builtin__reshape
          input: { shape: { m: "{{A.n}}" } }
  - id: E2
    tool_name: builtin__reshape
    input: { shape: {} }
`},
			want: `
E1 step map ok
  do.0 item ok
    A step builtin__reshape ok
    B step builtin__reshape ok
  do.1 item ok
    A step builtin__reshape ok
    B step builtin__reshape ok
E2 step builtin__reshape ok
`,
			status: live.OK, done: 6,
		},
		{
			name: "agent with two rounds, a tool call and a repair",
			files: map[string]string{
				"plans/p.yaml": "identifier: agentic\nsteps:" + agentStep,
				"replies.yaml": `
replies:
  - match: E1
    reply:
      text: "Let me look."
      tool_calls: [ { name: builtin__reshape, arguments: { shape: { n: 1 } } } ]
  - match: E1
    reply: { json: { count: "three" } }
  - match: E1
    role: repair
    reply: { json: { count: 3 } }
`},
			want: `
E1 step agent ok calls=3
  agent.1 round ok calls=1
    builtin__reshape tool builtin__reshape ok
  agent.2 round ok calls=2
    repair repair ok calls=1
`,
			status: live.OK, done: 1,
			replies: map[string]string{
				"E1/agent.1":        "Let me look.",
				"E1/agent.2":        `{"count":"three"}`,
				"E1/agent.2/repair": `{"count":3}`,
			},
		},
		{
			name: "nested plan call, alone and in a map item",
			files: map[string]string{"plans/inner.yaml": innerPlan, "plans/p.yaml": `
identifier: outer
steps:
  - id: E1
    tool_name: plan__inner
    input: {}
  - id: E2
    tool_name: map
    input: { over: [1], do: { tool_name: plan__inner, input: {} } }
`},
			want: `
E1 step plan__inner ok
  inner plan ok
    S0 step builtin__reshape ok
E2 step map ok
  do.0 item plan__inner ok
    inner plan ok
      S0 step builtin__reshape ok
`,
			status: live.OK, done: 5,
		},
		{
			name:  "a failed step in a map item, and the steps it stopped",
			files: map[string]string{"plans/p.yaml": livetest.FailingMap},
			want: `
E1 step map failed
  do.0 item failed
    A step builtin__reshape failed
    B step builtin__reshape pending
E2 step builtin__reshape pending
`,
			status: live.Failed, failed: 2,
		},
		{
			name: "a decide branch laid out before it runs, skipped once the run ends without it",
			files: map[string]string{"plans/p.yaml": `
identifier: branching
steps:
  - id: E1
    tool_name: decide
    input:
      if: { value: 1, op: eq, to: 1 }
      then:
        - id: T
          tool_name: builtin__reshape
          input: { shape: {} }
      else: { tool_name: builtin__reshape, input: { shape: {} } }
`},
			want: `
E1 step decide ok
  then head ok
    T step builtin__reshape ok
  else step builtin__reshape skipped
`,
			status: live.OK, done: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan, events := livetest.Run(t, tt.files)
			tr := live.New(plan)
			var usage engine.UsageReport
			for _, e := range events {
				tr.Apply(e)
				if u, ok := e.Payload.(engine.UsageReport); ok {
					usage = u
				}
			}
			if got := shape(tr); got != strings.TrimPrefix(tt.want, "\n") {
				t.Errorf("tree:\n%s\nwant:\n%s", got, strings.TrimPrefix(tt.want, "\n"))
			}
			tot := tr.Totals()
			if tot.Status != tt.status || tot.Done != tt.done || tot.Failed != tt.failed || tot.Running != 0 {
				t.Errorf("totals %s done %d failed %d running %d, want %s %d %d 0", tot.Status, tot.Done, tot.Failed, tot.Running, tt.status, tt.done, tt.failed)
			}
			if tot.Spend.Calls != usage.Calls || tot.Spend.Usage != usage.Usage || !sameCost(tot.Spend.Cost(), usage.CostUSD) {
				t.Errorf("spend %+v cost %v, the run reports %+v cost %v", tot.Spend, tot.Spend.Cost(), usage.Usage, usage.CostUSD)
			}
			if tot.Elapsed <= 0 || tot.End.IsZero() {
				t.Errorf("elapsed %v end %v", tot.Elapsed, tot.End)
			}
			for path, want := range tt.replies {
				if n, _ := tr.Node(path); n.Reply != want {
					t.Errorf("%s replied %q, want %q", path, n.Reply, want)
				}
			}
		})
	}
}

// shape is dump without the token figures, which follow the script
// provider's estimates.
func shape(tr *live.Tree) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(livetest.Dump(tr), "\n") {
		if i := strings.Index(line, " in="); i >= 0 {
			line = line[:i] + "\n"
		}
		b.WriteString(line)
	}
	return b.String()
}

func sameCost(a, b *float64) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// TestRollUp checks that a round's tokens reach its step and that the
// step's are its rounds' and repairs' sum, and the inspector's view of a
// repair pass.
func TestRollUp(t *testing.T) {
	plan, events := livetest.Run(t, map[string]string{
		"plans/p.yaml": "identifier: agentic\nsteps:" + agentStep,
		"replies.yaml": `
replies:
  - match: E1
    reply: { json: { count: "three" }, usage: { input_tokens: 100, output_tokens: 10, cache_read_input_tokens: 40 } }
  - match: E1
    role: repair
    reply: { json: { count: 3 }, usage: { input_tokens: 7, output_tokens: 3 } }
`})
	tr := live.New(plan)
	for _, e := range events {
		tr.Apply(e)
	}
	for path, want := range map[string]chat.Usage{
		"E1":                {InputTokens: 107, OutputTokens: 13, CacheReadInputTokens: 40},
		"E1/agent.1":        {InputTokens: 107, OutputTokens: 13, CacheReadInputTokens: 40},
		"E1/agent.1/repair": {InputTokens: 7, OutputTokens: 3},
	} {
		n, ok := tr.Node(path)
		if !ok || n.Spend.Usage != want {
			t.Errorf("%s spent %+v, want %+v", path, n.Spend.Usage, want)
		}
		if n.Spend.Cost() == nil {
			t.Errorf("%s has no cost though every call is priced", path)
		}
	}
	rep, _ := tr.Node("E1/agent.1/repair")
	if rep.Kind != live.KindRepair || rep.Input != `{"count":"three"}` || len(rep.Violations) != 1 || rep.End.IsZero() {
		t.Errorf("repair %+v", rep)
	}
	step, _ := tr.Node("E1")
	if step.Input == nil || step.Result == nil || step.Duration <= 0 {
		t.Errorf("step input %v result %v duration %v", step.Input, step.Result, step.Duration)
	}
}

// TestStreaming checks that a reply streamed in pieces accumulates on its
// round while the round runs.
func TestStreaming(t *testing.T) {
	plan, events := livetest.Run(t, map[string]string{
		"plans/p.yaml": "identifier: agentic\nsteps:" + agentStep,
		"replies.yaml": `
replies:
  - match: E1
    reply: { text: "{\"count\": 12345}", reasoning: "Count them one by one.", delay_ms: 20 }
`})
	tr := live.New(plan)
	deltas := 0
	for _, e := range events {
		tr.Apply(e)
		if e.Kind != engine.EventModelDelta {
			continue
		}
		deltas++
		if n, _ := tr.Node("E1/agent.1"); n.Status != live.Running {
			t.Errorf("round %s while it streams", n.Status)
		}
	}
	if deltas < 2 {
		t.Fatalf("%d deltas: the reply did not stream", deltas)
	}
	n, _ := tr.Node("E1/agent.1")
	if n.Reply != `{"count": 12345}` || n.Reasoning != "Count them one by one." || n.Status != live.OK {
		t.Errorf("round %s replied %q reasoning %q", n.Status, n.Reply, n.Reasoning)
	}
}

// at makes a hand-made event, for what a script cannot easily provoke: a
// reset stream, items starting out of order.
func at(seq uint64, path string, kind engine.EventKind, payload any) engine.Event {
	return engine.Event{Seq: seq, Time: time.Unix(1000+int64(seq), 0), RunID: "r", Path: path, Kind: kind, Payload: payload}
}

func TestResetDelta(t *testing.T) {
	tr := live.New(nil)
	for _, e := range []engine.Event{
		at(1, "", engine.EventRunStart, engine.RunStarted{Plan: "p"}),
		at(2, "E1", engine.EventStepStart, engine.StepStarted{Tool: "agent"}),
		at(3, "E1/agent.1", engine.EventModelDelta, chat.Delta{Text: "abandoned "}),
		at(4, "E1/agent.1", engine.EventModelDelta, chat.Delta{Reset: true}),
		at(5, "E1/agent.1", engine.EventModelDelta, chat.Delta{Text: "kept "}),
		at(6, "E1/agent.1", engine.EventModelDelta, chat.Delta{Text: "reply"}),
	} {
		tr.Apply(e)
	}
	n, _ := tr.Node("E1/agent.1")
	if n.Reply != "kept reply" || n.Status != live.Running || n.Duration != 3*time.Second {
		t.Errorf("round %s %v replied %q", n.Status, n.Duration, n.Reply)
	}
	tr.Tick(time.Unix(1010, 0))
	if n, _ := tr.Node("E1/agent.1"); n.Duration != 7*time.Second {
		t.Errorf("after a tick the round ran %v", n.Duration)
	}
	if tot := tr.Totals(); tot.Elapsed != 9*time.Second || tot.Running != 1 {
		t.Errorf("elapsed %v running %d", tot.Elapsed, tot.Running)
	}
}

// TestItemOrder checks that items sit in the order of their index, not of
// their start, and that a body step arriving first makes its item.
func TestItemOrder(t *testing.T) {
	tr := live.New(nil)
	seq := uint64(0)
	apply := func(path string, kind engine.EventKind, payload any) {
		seq++
		tr.Apply(at(seq, path, kind, payload))
	}
	apply("E1", engine.EventStepStart, engine.StepStarted{Tool: "map"})
	for _, i := range []string{"2", "0", "3", "1"} {
		apply("E1/do."+i+"/A", engine.EventStepStart, engine.StepStarted{Tool: "builtin__reshape"})
	}
	apply("E1/do.0/A", engine.EventStepEnd, engine.StepEnded{Tool: "builtin__reshape", Status: "ok"})
	want := `
E1 step map running
  do.0 item ok
    A step builtin__reshape ok
  do.1 item running
    A step builtin__reshape running
  do.2 item running
    A step builtin__reshape running
  do.3 item running
    A step builtin__reshape running
`
	if got := livetest.Dump(tr); got != strings.TrimPrefix(want, "\n") {
		t.Errorf("tree:\n%s", got)
	}
}

func TestCollapse(t *testing.T) {
	plan, events := livetest.Run(t, map[string]string{"plans/p.yaml": `
identifier: mapped
steps:
  - id: E1
    tool_name: map
    input:
      over: [a, b, c]
      concurrency: 1
      do:
        - id: A
          tool_name: builtin__reshape
          input: { shape: {} }
        - id: B
          tool_name: builtin__reshape
          input: { shape: {} }
  - id: E2
    tool_name: builtin__reshape
    input: { shape: {} }
`})
	tr := live.New(plan)
	// Collapse an item before its events arrive, and another after: the
	// counts must hold either way.
	half := len(events) / 2
	for _, e := range events[:half] {
		tr.Apply(e)
	}
	tr.Toggle("E1/do.0")
	for _, e := range events[half:] {
		tr.Apply(e)
	}
	tests := []struct {
		name   string
		toggle string
		want   []string // the visible labels, by path
		index  map[string]int
	}{
		{name: "item 0 collapsed", want: []string{"E1", "E1/do.0", "E1/do.1", "E1/do.1/A", "E1/do.1/B", "E1/do.2", "E1/do.2/A", "E1/do.2/B", "E2"},
			index: map[string]int{"E2": 8, "E1/do.2/B": 7, "E1/do.0/A": -1}},
		{name: "item 2 collapsed too", toggle: "E1/do.2", want: []string{"E1", "E1/do.0", "E1/do.1", "E1/do.1/A", "E1/do.1/B", "E1/do.2", "E2"},
			index: map[string]int{"E2": 6}},
		{name: "the map collapsed", toggle: "E1", want: []string{"E1", "E2"}, index: map[string]int{"E2": 1, "E1/do.1": -1}},
		{name: "the map expanded keeps its items' state", toggle: "E1", want: []string{"E1", "E1/do.0", "E1/do.1", "E1/do.1/A", "E1/do.1/B", "E1/do.2", "E2"}},
		{name: "item 0 expanded", toggle: "E1/do.0", want: []string{"E1", "E1/do.0", "E1/do.0/A", "E1/do.0/B", "E1/do.1", "E1/do.1/A", "E1/do.1/B", "E1/do.2", "E2"},
			index: map[string]int{"E1/do.0/B": 3, "E2": 8, "nowhere": -1}},
	}
	for _, tt := range tests {
		if tt.toggle != "" && !tr.Toggle(tt.toggle) {
			t.Fatalf("%s: no node %s", tt.name, tt.toggle)
		}
		var got []string
		for _, r := range tr.Rows(0, 100) {
			got = append(got, r.Path)
		}
		if strings.Join(got, " ") != strings.Join(tt.want, " ") || tr.Len() != len(tt.want) {
			t.Errorf("%s: rows %v (len %d), want %v", tt.name, got, tr.Len(), tt.want)
		}
		// Every window of the rows is the same slice of the whole.
		for off := 0; off < len(tt.want); off++ {
			for n := 1; n <= 3; n++ {
				var win []string
				for _, r := range tr.Rows(off, n) {
					win = append(win, r.Path)
				}
				if want := tt.want[off:min(off+n, len(tt.want))]; strings.Join(win, " ") != strings.Join(want, " ") {
					t.Errorf("%s: Rows(%d, %d) = %v, want %v", tt.name, off, n, win, want)
				}
			}
		}
		for path, want := range tt.index {
			i, ok := tr.Index(path)
			if !ok {
				i = -1
			}
			if i != want {
				t.Errorf("%s: Index(%s) = %d, want %d", tt.name, path, i, want)
			}
		}
	}
	if r := tr.Rows(1, 1)[0]; !r.HasChildren || r.Collapsed || r.Depth != 1 || r.Kind != live.KindItem {
		t.Errorf("row %+v", r)
	}
	if tr.Toggle("nowhere") {
		t.Error("toggled a node that does not exist")
	}
}

// TestRailsAndReveal checks the guide lines a row reports, the same in
// every window of the rows, and that Reveal opens the collapsed ancestors
// of a node and nothing else.
func TestRailsAndReveal(t *testing.T) {
	tr := live.New(nil)
	seq := uint64(0)
	apply := func(path string, kind engine.EventKind, payload any) {
		seq++
		tr.Apply(at(seq, path, kind, payload))
	}
	apply("E1", engine.EventStepStart, engine.StepStarted{Tool: "map"})
	for _, i := range []string{"0", "1"} {
		apply("E1/do."+i+"/A", engine.EventStepStart, engine.StepStarted{Tool: "builtin__reshape"})
		apply("E1/do."+i+"/B", engine.EventStepStart, engine.StepStarted{Tool: "builtin__reshape"})
	}
	apply("E2", engine.EventStepStart, engine.StepStarted{Tool: "builtin__reshape"})
	want := map[string]uint64{
		"E1":        0b1,   // E2 follows it
		"E1/do.0":   0b11,  // and do.1 follows do.0
		"E1/do.0/A": 0b111, // and B follows A
		"E1/do.0/B": 0b011,
		"E1/do.1":   0b01,
		"E1/do.1/A": 0b101,
		"E1/do.1/B": 0b001,
		"E2":        0,
	}
	all := tr.Rows(0, tr.Len())
	if len(all) != len(want) {
		t.Fatalf("%d rows", len(all))
	}
	for off, r := range all {
		if r.Rails != want[r.Path] {
			t.Errorf("%s: rails %b, want %b", r.Path, r.Rails, want[r.Path])
		}
		if w := tr.Rows(off, 1)[0]; w.Rails != r.Rails {
			t.Errorf("%s: rails %b alone, %b among all rows", r.Path, w.Rails, r.Rails)
		}
	}

	tr.SetCollapsed("E1/do.1", true)
	tr.SetCollapsed("E1", true)
	tr.SetCollapsed("E1/do.0/A", true)
	if _, ok := tr.Index("E1/do.1/B"); ok {
		t.Fatal("a node under collapsed ancestors shows")
	}
	if !tr.Reveal("E1/do.1/B") {
		t.Fatal("Reveal found no node")
	}
	if i, ok := tr.Index("E1/do.1/B"); !ok || i != 6 {
		t.Errorf("revealed row at %d (%v), want 6", i, ok)
	}
	if r := tr.Rows(2, 1)[0]; r.Path != "E1/do.0/A" || !r.Collapsed {
		t.Errorf("Reveal changed a node off the path: %+v", r)
	}
	if tr.Len() != 8 {
		t.Errorf("%d rows after Reveal, want 8", tr.Len())
	}
	if tr.Reveal("nowhere") {
		t.Error("revealed a node that does not exist")
	}
}

// TestNewRoundClosesTheOneBefore checks that a round still open when the
// next one starts ends then: failed when its last call failed, ok when its
// reply was cut short.
func TestNewRoundClosesTheOneBefore(t *testing.T) {
	tr := live.New(nil)
	for _, e := range []engine.Event{
		at(1, "", engine.EventRunStart, engine.RunStarted{Plan: "p"}),
		at(2, "E1", engine.EventStepStart, engine.StepStarted{Tool: "agent"}),
		at(3, "E1/agent.1", engine.EventModelCall, engine.ModelCalled{Site: "E1", Error: "rate limited"}),
		at(4, "E1/agent.2", engine.EventModelDelta, chat.Delta{Text: "cut "}),
		at(5, "E1/agent.3", engine.EventModelDelta, chat.Delta{Text: "short"}),
	} {
		tr.Apply(e)
	}
	for _, want := range []struct {
		path   string
		status live.Status
		end    time.Time
	}{
		{"E1/agent.1", live.Failed, time.Unix(1004, 0)},
		{"E1/agent.2", live.OK, time.Unix(1005, 0)},
		{"E1/agent.3", live.Running, time.Time{}},
	} {
		if n, _ := tr.Node(want.path); n.Status != want.status || !n.End.Equal(want.end) {
			t.Errorf("%s: %s ending %v, want %s ending %v", want.path, n.Status, n.End, want.status, want.end)
		}
	}
	if tot := tr.Totals(); tot.Running != 1 {
		t.Errorf("%d steps running, want E1 alone", tot.Running)
	}
}

// TestRowsAndIndexAgree builds a map whose items start in a scrambled
// order, folds and unfolds nodes at every depth, and checks after each
// change that every window of rows is the same slice of the whole list,
// that each row's path indexes back to it, and that the items keep the
// order of N.
func TestRowsAndIndexAgree(t *testing.T) {
	tr := live.New(nil)
	seq := uint64(0)
	apply := func(path string, kind engine.EventKind, payload any) {
		seq++
		tr.Apply(at(seq, path, kind, payload))
	}
	apply("", engine.EventRunStart, engine.RunStarted{Plan: "p"})
	apply("E1", engine.EventStepStart, engine.StepStarted{Tool: "map"})
	const items = 101
	for k := range items {
		item := "E1/do." + strconv.Itoa(k*37%items)
		apply(item+"/A", engine.EventStepStart, engine.StepStarted{Tool: "agent"})
		if k%3 == 0 {
			apply(item+"/A/agent.1", engine.EventModelDelta, chat.Delta{Text: "x"})
		}
		apply(item+"/B", engine.EventStepStart, engine.StepStarted{Tool: "builtin__reshape"})
	}
	apply("E2", engine.EventStepStart, engine.StepStarted{Tool: "builtin__reshape"})

	check := func(what string) {
		t.Helper()
		all := tr.Rows(0, tr.Len())
		if len(all) != tr.Len() {
			t.Fatalf("%s: %d rows of %d", what, len(all), tr.Len())
		}
		last := -1
		for i, r := range all {
			if j, ok := tr.Index(r.Path); !ok || j != i {
				t.Fatalf("%s: %s is row %d, Index says %d %v", what, r.Path, i, j, ok)
			}
			if r.Kind == live.KindItem {
				n, _ := strconv.Atoi(strings.TrimPrefix(r.Label, "do."))
				if n <= last {
					t.Fatalf("%s: %s after do.%d", what, r.Label, last)
				}
				last = n
			}
			for _, n := range []int{1, 7} {
				got := tr.Rows(i, n)
				if want := all[i:min(i+n, len(all))]; !slices.Equal(got, want) {
					t.Fatalf("%s: Rows(%d, %d) = %v, want %v", what, i, n, got, want)
				}
			}
		}
	}
	check("laid out")
	for _, p := range []string{"E1/do.5", "E1/do.6/A", "E1/do.0", "E1/do.100", "E1", "E1/do.6/A", "E1/do.5", "E1"} {
		tr.Toggle(p)
		check("toggled " + p)
	}
	// Items that start while their map is folded count once it unfolds.
	tr.Toggle("E1")
	apply("E1/do."+strconv.Itoa(items)+"/A", engine.EventStepStart, engine.StepStarted{Tool: "agent"})
	apply("E1/do.0/A/agent.1", engine.EventModelDelta, chat.Delta{Text: "y"})
	check("grown while folded")
	tr.Toggle("E1")
	check("unfolded")
}

// TestStepEndClosesWhatRunsBelow checks that a step's end closes what
// still runs under it, and only that: the round it never heard the end
// of, and the tool call and item step an abort cut short.
func TestStepEndClosesWhatRunsBelow(t *testing.T) {
	tr := live.New(nil)
	for _, e := range []engine.Event{
		at(1, "", engine.EventRunStart, engine.RunStarted{Plan: "p"}),
		at(2, "E1", engine.EventStepStart, engine.StepStarted{Tool: "agent"}),
		at(3, "E1/agent.1", engine.EventModelDelta, chat.Delta{Text: "cut short"}),
		at(4, "E1", engine.EventStepEnd, engine.StepEnded{Tool: "agent", Status: "ok"}),
		at(5, "E2", engine.EventStepStart, engine.StepStarted{Tool: "map"}),
		at(6, "E2/do.0/A", engine.EventStepStart, engine.StepStarted{Tool: "builtin__reshape"}),
		at(7, "E2/do.0/A", engine.EventStepEnd, engine.StepEnded{Tool: "builtin__reshape", Status: "ok"}),
		at(8, "E2/do.1/A", engine.EventStepStart, engine.StepStarted{Tool: "builtin__reshape"}),
		at(9, "E2", engine.EventStepEnd, engine.StepEnded{Tool: "map", Status: "failed", Error: "aborted"}),
	} {
		tr.Apply(e)
	}
	for _, want := range []struct {
		path   string
		status live.Status
		end    time.Time
	}{
		{"E1/agent.1", live.OK, time.Unix(1004, 0)},
		{"E2/do.0/A", live.OK, time.Unix(1007, 0)},
		{"E2/do.1/A", live.Failed, time.Unix(1009, 0)},
		{"E2/do.1", live.Failed, time.Unix(1009, 0)},
	} {
		if n, _ := tr.Node(want.path); n.Status != want.status || !n.End.Equal(want.end) {
			t.Errorf("%s: %s ending %v, want %s ending %v", want.path, n.Status, n.End, want.status, want.end)
		}
	}
	if tot := tr.Totals(); tot.Running != 0 {
		t.Errorf("%d steps running", tot.Running)
	}
}

// TestRoundEndsWithItsCalls checks that a round ends when the last of the
// tool calls its reply asked for ends, counting only the calls that have
// ended at that moment: one that starts again runs until it ends again.
func TestRoundEndsWithItsCalls(t *testing.T) {
	tr := live.New(nil)
	call := func(seq uint64, p string, kind engine.EventKind, payload any) engine.Event {
		e := at(seq, p, kind, payload)
		e.Unit = path.KindCall
		return e
	}
	reply := chat.Reply{ToolCalls: []chat.ToolCall{{ID: "1", Name: "lookup"}, {ID: "2", Name: "fetch"}}}
	round := func() live.Node { n, _ := tr.Node("E1/agent.1"); return n }
	for _, e := range []engine.Event{
		at(1, "", engine.EventRunStart, engine.RunStarted{Plan: "p"}),
		at(2, "E1", engine.EventStepStart, engine.StepStarted{Tool: "agent"}),
		at(3, "E1/agent.1", engine.EventModelCall, engine.ModelCalled{Site: "E1", Reply: reply}),
		call(4, "E1/agent.1/lookup", engine.EventToolStart, engine.ToolStarted{Tool: "lookup"}),
		call(5, "E1/agent.1/lookup", engine.EventToolEnd, engine.ToolEnded{Tool: "lookup"}),
		call(6, "E1/agent.1/lookup", engine.EventToolStart, engine.ToolStarted{Tool: "lookup"}),
		call(7, "E1/agent.1/fetch", engine.EventToolStart, engine.ToolStarted{Tool: "fetch"}),
		call(8, "E1/agent.1/fetch", engine.EventToolEnd, engine.ToolEnded{Tool: "fetch"}),
	} {
		tr.Apply(e)
	}
	if n := round(); n.Status != live.Running {
		t.Fatalf("with lookup running again the round is %s", n.Status)
	}
	tr.Apply(call(9, "E1/agent.1/lookup", engine.EventToolEnd, engine.ToolEnded{Tool: "lookup"}))
	if n := round(); n.Status != live.OK || !n.End.Equal(time.Unix(1009, 0)) {
		t.Fatalf("with both calls ended the round is %s, ending %v", n.Status, n.End)
	}
}
