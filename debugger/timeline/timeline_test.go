package timeline_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/debugger/timeline"
	"github.com/stepwise-dev/stepwise/debugger/workspace"
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/chat"
	"github.com/stepwise-dev/stepwise/engine/path"
)

// The project the tests run: a map of three items, two at a time, each an
// agent that calls an exec tool and then answers; a priced verdict; and a
// tool step that fails, so the run fails.
var projectFiles = map[string]string{
	".stepwise/config.toml": `
[providers.script]
type = "script"
file = "replies.yaml"

[models]
default = { provider = "script", model = "scripted" }
judge = { provider = "script", model = "scripted-mini" }

[pricing.scripted]
input = 2.50
output = 10.00

[pricing.scripted-mini]
input = 0.25
output = 1.25

[storage]
backend = "sqlite"
`,
	"replies.yaml": `replies:
  - match: E1/do.0
    reply:
      tool_calls: [{ name: user__note, arguments: { text: "looked" } }]
      usage: { input_tokens: 1000, output_tokens: 50 }
      delay_ms: 20
  - match: E1/do.0
    reply: { json: { found: "x" }, usage: { input_tokens: 2000, output_tokens: 20 }, delay_ms: 10 }
  - match: E1/do.1
    reply:
      tool_calls: [{ name: user__note, arguments: { text: "looked" } }]
      usage: { input_tokens: 1000, output_tokens: 50 }
      delay_ms: 20
  - match: E1/do.1
    reply: { json: { found: "x" }, usage: { input_tokens: 2000, output_tokens: 20 }, delay_ms: 10 }
  - match: E1/do.2
    reply:
      tool_calls: [{ name: user__note, arguments: { text: "looked" } }]
      usage: { input_tokens: 1000, output_tokens: 50 }
      delay_ms: 20
  - match: E1/do.2
    reply: { json: { found: "x" }, usage: { input_tokens: 2000, output_tokens: 20 }, delay_ms: 10 }
  - match: E2
    reply: { text: "three found", usage: { input_tokens: 100, output_tokens: 10 }, delay_ms: 10 }
`,
	".stepwise/tools/note.yaml": `name: note
description: Says what it noted, a little later.
kind: exec
command: sh
args: ["-c", 'sleep 0.02; printf "{\"noted\": \"%s\"}" "$1"', note, "{{input.text}}"]
output: json
input_schema: { type: object, required: [text], properties: { text: { type: string } } }
`,
	".stepwise/tools/fail.yaml": `name: fail
description: Always fails.
kind: exec
command: sh
args: ["-c", "echo broken >&2; exit 3"]
input_schema: { type: object }
`,
	".stepwise/plans/survey.yaml": `identifier: survey
name: Survey
description: Looks into three things, sums up, and fails at the end.
steps:
  - id: E1
    tool_name: map
    input:
      over: ["a", "b", "c"]
      concurrency: 2
      do:
        tool_name: agent
        input:
          prompt: "Look into {{item}}"
          tools: ["user__note"]
          max_iterations: 3
          model: judge
          output_schema: { type: object, required: [found], properties: { found: { type: string } } }
  - id: E2
    tool_name: builtin__infer
    input: { instruction: "Sum up {{E1}}" }
  - id: E3
    tool_name: user__fail
    input: {}
`,
}

// openSurvey writes the survey project into a fresh directory and opens its
// workspace, recording runs in a SQLite store.
func openSurvey(t testing.TB) (*workspace.Workspace, workspace.Document) {
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
	ws, err := workspace.Open(dir, workspace.Options{LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	doc, err := ws.Load(filepath.Join(dir, ".stepwise", "plans", "survey.yaml"))
	if err != nil || !doc.Report.OK() {
		t.Fatalf("load: %v %v", err, doc.Report.Problems)
	}
	return ws, doc
}

// recorded runs the survey plan, feeding a timeline live from the run's
// events as it goes, and reads the run back from the store.
func recorded(t testing.TB) (live *timeline.Timeline, events []engine.Event) {
	t.Helper()
	ws, doc := openSurvey(t)
	live = timeline.New()
	var mu sync.Mutex
	sink := engine.SinkFunc(func(e engine.Event) {
		mu.Lock()
		defer mu.Unlock()
		live.Apply(e)
	})
	res, err := ws.Run(context.Background(), doc.Plan, nil, workspace.RunOptions{Sinks: []engine.Sink{sink}})
	if err != nil || res.Status != engine.StatusFailed {
		t.Fatalf("run: %v %+v", err, res)
	}
	_, events, err = ws.RunEvents(context.Background(), res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	return live, events
}

func TestTimelineOfARecordedRun(t *testing.T) {
	live, events := recorded(t)
	tl := timeline.FromEvents(events)
	if tl.Status() != engine.StatusFailed || tl.Plan() != "survey" || tl.Start().IsZero() || !tl.End().After(tl.Start()) {
		t.Fatalf("run %s %s %v..%v", tl.Status(), tl.Plan(), tl.Start(), tl.End())
	}
	bars := tl.Bars(0, tl.Len())
	var got []string
	for _, b := range bars {
		got = append(got, strings.Repeat("  ", b.Depth)+b.Label)
	}
	want := []string{
		"E1 map",
		"  do.0 agent", "    agent.1", "      user__note", "    agent.2",
		"  do.1 agent", "    agent.1", "      user__note", "    agent.2",
		"  do.2 agent", "    agent.1", "      user__note", "    agent.2",
		"E2 builtin__infer",
		"E3 user__fail",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("bars:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	byPath := map[string]timeline.Bar{}
	for _, b := range bars {
		byPath[b.Path] = b
		if b.Open() || b.End.Before(b.Start) || b.Start.Before(tl.Start()) || b.End.After(tl.End()) {
			t.Errorf("%s runs %v..%v, outside the run's %v..%v", b.Path, b.Start, b.End, tl.Start(), tl.End())
		}
		if b.Parent != "" {
			p := byPath[b.Parent]
			if b.Start.Before(p.Start) || b.End.After(p.End) {
				t.Errorf("%s (%v..%v) is outside its parent %s (%v..%v)", b.Path, b.Start, b.End, p.Path, p.Start, p.End)
			}
		}
	}
	// Two items ran at once, the third after one of them.
	d0, d1, d2 := byPath["E1/do.0"], byPath["E1/do.1"], byPath["E1/do.2"]
	if !d1.Start.Before(d0.End) || !(d2.Start.After(d0.Start) && d2.Start.After(d1.Start)) {
		t.Errorf("items ran do.0 %v..%v, do.1 %v..%v, do.2 %v..%v", d0.Start, d0.End, d1.Start, d1.End, d2.Start, d2.End)
	}
	for _, tc := range []struct {
		path        string
		model, tool bool
		failed      bool
		kind        path.Kind
	}{
		{"E1", true, true, false, path.KindStep},
		{"E1/do.1", true, true, false, path.KindItem},
		{"E1/do.1/agent.1", true, true, false, path.KindRound},
		{"E1/do.1/agent.1/user__note", false, true, false, path.KindCall},
		{"E1/do.1/agent.2", true, false, false, path.KindRound},
		{"E3", false, true, true, path.KindStep},
	} {
		b := byPath[tc.path]
		if (b.Model > 0) != tc.model || (b.Tool > 0) != tc.tool || b.Failed != tc.failed || b.Kind != tc.kind {
			t.Errorf("%s: model %v tool %v failed %v kind %s; want model %v tool %v failed %v kind %s",
				tc.path, b.Model, b.Tool, b.Failed, b.Kind, tc.model, tc.tool, tc.failed, tc.kind)
		}
	}
	// An infer is a tool that calls a model: its time is the model's.
	if b := byPath["E2"]; b.Model < 10*time.Millisecond || b.Tool > b.Model/2 || b.Failed {
		t.Errorf("E2: model %v tool %v failed %v; its reply waits 10ms", b.Model, b.Tool, b.Failed)
	}
	// The scripted delays and the tool's sleep show as model and tool time.
	if r := byPath["E1/do.0/agent.1"]; r.Model < 20*time.Millisecond {
		t.Errorf("round 1 of do.0 took %v of model time; its reply waits 20ms", r.Model)
	}
	// The engine times a call from just before its start event: a
	// millisecond is room enough for the difference.
	if c := byPath["E1/do.0/agent.1/user__note"]; c.Tool < 20*time.Millisecond || c.Tool > c.End.Sub(c.Start)+time.Millisecond {
		t.Errorf("the note took %v of tool time in %v; it sleeps 20ms", c.Tool, c.End.Sub(c.Start))
	}
	if m := byPath["E1"]; m.Model < 3*30*time.Millisecond || len(m.Spans) == 0 {
		t.Errorf("the map took %v of model time in %d spans; its three items' calls wait 90ms", m.Model, len(m.Spans))
	}

	// The timeline fed live while the run went is the one read back.
	if live.Len() != tl.Len() || live.Status() != tl.Status() {
		t.Fatalf("live %d bars %s, recorded %d %s", live.Len(), live.Status(), tl.Len(), tl.Status())
	}
	for i, b := range live.Bars(0, live.Len()) {
		r := bars[i]
		if b.Path != r.Path || !b.Start.Equal(r.Start) || !b.End.Equal(r.End) || b.Failed != r.Failed || b.Model != r.Model || b.Tool != r.Tool {
			t.Errorf("bar %d live %+v\nrecorded %+v", i, b, r)
		}
	}
}

// TestTimelineGrowsAsEventsArrive feeds the recorded events one at a
// time, as a live run delivers them, and checks the bars open and close
// as the units start and end.
func TestTimelineGrowsAsEventsArrive(t *testing.T) {
	_, events := recorded(t)
	tl := timeline.New()
	sawOpenItem, sawOpenMap := false, false
	prev := 0
	for _, e := range events {
		tl.Apply(e)
		if tl.Len() < prev {
			t.Fatalf("the timeline shrank from %d to %d bars at event %d", prev, tl.Len(), e.Seq)
		}
		prev = tl.Len()
		if b, ok := tl.Bar("E1/do.1"); ok && b.Open() {
			sawOpenItem = true
		}
		if b, ok := tl.Bar("E1"); ok && b.Open() && tl.End().IsZero() {
			sawOpenMap = true
		}
	}
	if !sawOpenItem || !sawOpenMap {
		t.Errorf("the item or the map never showed running: %v %v", sawOpenItem, sawOpenMap)
	}
	if tl.Index("E3") != tl.Len()-1 || tl.Index("nope") != -1 {
		t.Errorf("index of E3 %d of %d", tl.Index("E3"), tl.Len())
	}
	if got := tl.Bars(tl.Len()-2, 10); len(got) != 2 || got[1].Path != "E3" {
		t.Errorf("the last two bars: %+v", got)
	}
}

func TestTimelineSpend(t *testing.T) {
	live, events := recorded(t)
	s := timeline.FromEvents(events).Spend()
	if s.Calls != 7 || s.Cost == nil {
		t.Fatalf("spend %+v", s)
	}
	var steps []string
	for _, l := range s.ByStep {
		steps = append(steps, l.Label)
	}
	// The map's items are one line, their step's; the verdict, on the
	// dearer model, cost the least all the same.
	if got := strings.Join(steps, " "); got != "E1/do.* E2" {
		t.Errorf("by step: %s", got)
	}
	// Every item spent the same, and ties go in path order.
	var items []string
	for _, l := range s.ByStep[0].Items {
		items = append(items, l.Label)
	}
	if g := s.ByStep[0]; g.Calls != 6 || g.Tokens != 3*(1050+2020) || strings.Join(items, " ") != "E1/do.0 E1/do.1 E1/do.2" {
		t.Errorf("the map's group: %d calls, %d tokens, items %v", g.Calls, g.Tokens, items)
	}
	if len(s.ByModel) != 2 || s.ByModel[0].Label != "script/scripted-mini" || s.ByModel[0].Calls != 6 || s.ByModel[1].Label != "script/scripted" {
		t.Errorf("by model: %+v", s.ByModel)
	}
	// The items' 6 calls, 3 × (1000 in, 50 out) + 3 × (2000 in, 20 out),
	// at 0.25/1.25; the verdict's at 2.50/10.00.
	want := (3*1000+3*2000)*0.25/1e6 + (3*50+3*20)*1.25/1e6 + 100*2.5/1e6 + 10*10.0/1e6
	if d := *s.Cost - want; d > 1e-9 || d < -1e-9 {
		t.Errorf("cost %v, want %v", *s.Cost, want)
	}
	// Live, the spend is counted from the calls until the usage report.
	partial := timeline.New()
	for _, e := range events {
		if e.Kind == engine.EventRunEnd {
			break
		}
		partial.Apply(e)
	}
	if p := partial.Spend(); p.Calls != s.Calls || p.Tokens != s.Tokens || *p.Cost != *s.Cost {
		t.Errorf("counted from the calls %+v, reported %+v", p, s)
	}
	if l := live.Spend(); l.Tokens != s.Tokens {
		t.Errorf("live %+v", l)
	}
}

// TestTimelineHeldAtAStop debugs the survey plan with a breakpoint on E2,
// holds the run there a while, and continues: E2's bar says how long it
// was held, and its first columns are hatched.
func TestTimelineHeldAtAStop(t *testing.T) {
	ws, doc := openSurvey(t)
	table := debugger.NewBreakpoints()
	table.BreakOnError(false)
	if _, err := table.Set("E2", []engine.StopKind{engine.StopStep}, nil); err != nil {
		t.Fatal(err)
	}
	session, err := ws.Debug(doc.Plan, table, workspace.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st := session.Start(context.Background(), nil)
	if st.Stop == nil || st.Stop.Path != "E2" {
		t.Fatalf("not held at E2: %+v", st)
	}
	const hold = 80 * time.Millisecond
	time.Sleep(hold)
	a, err := session.Exec(debugger.Instruction{Verb: debugger.VerbContinue})
	if err != nil || a.State == nil || !a.State.Finished {
		t.Fatalf("continue: %v %+v", err, a.State)
	}
	_, events, err := ws.RunEvents(context.Background(), a.State.RunID)
	if err != nil {
		t.Fatal(err)
	}
	tl := timeline.FromEvents(events)
	b, ok := tl.Bar("E2")
	if !ok || b.Held < hold || b.Held > b.End.Sub(b.Start) {
		t.Fatalf("E2 held %v in %v, want %v at least", b.Held, b.End.Sub(b.Start), hold)
	}
	held := Span(b.Spans, timeline.SpanHeld)
	if held == nil || !held.Start.Equal(b.Start) || held.End.Sub(held.Start) != b.Held {
		t.Errorf("E2's held span %+v; the bar starts %v, held %v", held, b.Start, b.Held)
	}
	// Over a window of E2 alone, the hold takes its first columns.
	w := timeline.Window{Start: b.Start, Span: b.End.Sub(b.Start)}
	cells := w.Cells(nil, b, tl.Now(), 20)
	if cells[0] != timeline.CellHeld || cells[19] == timeline.CellHeld || cells[19] == timeline.CellNone {
		t.Errorf("E2's cells %v", cells)
	}
}

// Span returns the first span of a kind, or nil.
func Span(spans []timeline.Span, kind timeline.SpanKind) *timeline.Span {
	for i := range spans {
		if spans[i].Kind == kind {
			return &spans[i]
		}
	}
	return nil
}

func TestTimelineCells(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	w := timeline.Window{Start: t0, Span: 100 * time.Millisecond}
	const (
		o = timeline.CellNone
		b = timeline.CellBar
		T = timeline.CellTool
		M = timeline.CellModel
		H = timeline.CellHeld
		I = timeline.CellInstant
	)
	for _, tc := range []struct {
		name string
		bar  timeline.Bar
		now  time.Time
		want []timeline.Cell
	}{
		{"a bar with a tool call and a model call", timeline.Bar{Start: at(10), End: at(90), Spans: []timeline.Span{
			{Kind: timeline.SpanTool, Start: at(20), End: at(40)},
			{Kind: timeline.SpanModel, Start: at(50), End: at(70)},
		}}, at(100), []timeline.Cell{o, b, T, T, b, M, M, b, b, o}},
		{"a hold over a model call", timeline.Bar{Start: at(0), End: at(50), Spans: []timeline.Span{
			{Kind: timeline.SpanModel, Start: at(0), End: at(50)},
			{Kind: timeline.SpanHeld, Start: at(0), End: at(20)},
		}}, at(100), []timeline.Cell{H, H, M, M, M, o, o, o, o, o}},
		{"an instant keeps its column, as a mark of its own", timeline.Bar{Start: at(33), End: at(33)}, at(100), []timeline.Cell{o, o, o, I, o, o, o, o, o, o}},
		{"an instant at the window's end takes its last column", timeline.Bar{Start: at(100), End: at(100)}, at(100), []timeline.Cell{o, o, o, o, o, o, o, o, o, I}},
		{"a bar that just began is no instant", timeline.Bar{Start: at(33)}, at(33), []timeline.Cell{o, o, o, b, o, o, o, o, o, o}},
		{"an open bar reaches now", timeline.Bar{Start: at(60)}, at(80), []timeline.Cell{o, o, o, o, o, o, b, b, o, o}},
		{"a bar past the window", timeline.Bar{Start: at(-50), End: at(250)}, at(300), []timeline.Cell{b, b, b, b, b, b, b, b, b, b}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := w.Cells(nil, tc.bar, tc.now, 10)
			if !slices.Equal(got, tc.want) {
				t.Errorf("cells %v, want %v", got, tc.want)
			}
		})
	}
	if c := w.Column(at(-1), 10); c != -1 {
		t.Errorf("a time just before the window is in column %d, want -1", c)
	}
}

// BenchmarkApplyRun is what a live timeline costs a run: every event of a
// recorded run of the survey plan applied, as a front end applies them.
func BenchmarkApplyRun(b *testing.B) {
	_, events := recorded(b)
	b.ReportAllocs()
	for b.Loop() {
		timeline.FromEvents(events)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(events)), "ns/event")
}

// TestTimelineSpendGroupsItems reads usage reports by step as the engine
// writes them: the items of a map, nested maps' too, add up under their
// body step, most expensive item first, and a group's cost is unknown as
// soon as one item's is.
func TestTimelineSpendGroupsItems(t *testing.T) {
	usd := func(v float64) *float64 { return &v }
	line := func(p string, calls, tokens int, cost *float64) engine.UsageLine {
		return engine.UsageLine{Path: p, Calls: calls, Usage: chat.Usage{InputTokens: tokens}, CostUSD: cost}
	}
	for _, tc := range []struct {
		name  string
		steps []engine.UsageLine
		// want is each line of ByStep as label:calls:tokens:cost, a
		// group's items after it in brackets.
		want string
	}{
		{"a map's items under their body step", []engine.UsageLine{
			line("E1/do.0/verdict", 1, 100, usd(0.01)), line("E1/do.1/verdict", 2, 300, usd(0.03)),
			line("E1/do.2/verdict", 1, 100, usd(0.01)), line("E2", 1, 50, usd(0.02)),
		}, "E1/do.*/verdict:4:500:0.05[E1/do.1/verdict E1/do.0/verdict E1/do.2/verdict] E2:1:50:0.02"},
		{"a map of one item is the item", []engine.UsageLine{
			line("E1/do.0", 1, 100, usd(0.01)), line("E2", 1, 50, usd(0.02)),
		}, "E2:1:50:0.02 E1/do.0:1:100:0.01"},
		{"nested maps group by both indices", []engine.UsageLine{
			line("E1/do.0/E2/do.0", 1, 10, usd(0.001)), line("E1/do.1/E2/do.3", 1, 30, usd(0.003)),
			line("E1/do.0", 1, 20, usd(0.002)), line("E1/do.1", 1, 20, usd(0.002)),
		}, "E1/do.*:2:40:0.004[E1/do.0 E1/do.1] E1/do.*/E2/do.*:2:40:0.004[E1/do.1/E2/do.3 E1/do.0/E2/do.0]"},
		{"equal items in the order they are counted", []engine.UsageLine{
			line("E1/do.10", 1, 10, usd(0.001)), line("E1/do.2", 1, 10, usd(0.001)),
			line("E1/do.1", 1, 10, usd(0.001)), line("E1/do.0", 1, 10, usd(0.001)),
		}, "E1/do.*:4:40:0.004[E1/do.0 E1/do.1 E1/do.2 E1/do.10]"},
		// An unknown cost counts as none, as in the engine's by_step.
		{"an unpriced item leaves the group's cost unknown", []engine.UsageLine{
			line("E1/do.0", 1, 100, usd(0.01)), line("E1/do.1", 1, 300, nil),
		}, "E1/do.*:2:400:?[E1/do.0 E1/do.1]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := timeline.SpendOf(engine.UsageReport{ByStep: tc.steps})
			var got []string
			for _, l := range s.ByStep {
				cost := "?"
				if l.Cost != nil {
					cost = strconv.FormatFloat(*l.Cost, 'f', -1, 64)
				}
				text := fmt.Sprintf("%s:%d:%d:%s", l.Label, l.Calls, l.Tokens, cost)
				if l.Group() {
					var items []string
					for _, it := range l.Items {
						items = append(items, it.Label)
					}
					text += "[" + strings.Join(items, " ") + "]"
				}
				got = append(got, text)
			}
			if g := strings.Join(got, " "); g != tc.want {
				t.Errorf("by step\n%s\nwant\n%s", g, tc.want)
			}
		})
	}
}

// TestTimelineAskHeldWhileItWaits: an ask that waits for its answer is
// drawn held up to now, live, not as a bar that waits; once answered, its
// hold is the one its end reports.
func TestTimelineAskHeldWhileItWaits(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	tl := timeline.New()
	tl.Apply(engine.Event{Time: at(0), RunID: "r", Kind: engine.EventRunStart, Payload: engine.RunStarted{Plan: "asks"}})
	tl.Apply(engine.Event{Time: at(0), Path: "E1", Unit: path.KindStep, Kind: engine.EventStepStart, Payload: engine.StepStarted{Tool: "ask"}})
	tl.Tick(at(1000))
	b, _ := tl.Bar("E1")
	w := timeline.Window{Start: t0, Span: time.Second}
	for i, c := range w.Cells(nil, b, tl.Now(), 10) {
		if c != timeline.CellHeld {
			t.Fatalf("column %d of the waiting ask is %v, want held", i, c)
		}
	}
	tl.Apply(engine.Event{Time: at(1000), Path: "E1", Unit: path.KindStep, Kind: engine.EventAsk, Payload: engine.Asked{Answered: true, Answer: "yes"}})
	tl.Apply(engine.Event{Time: at(1000), Path: "E1", Unit: path.KindStep, Kind: engine.EventStepEnd, Payload: engine.StepEnded{Tool: "ask", Status: engine.StepOK, Ms: 1000, HeldMs: 1000}})
	b, _ = tl.Bar("E1")
	if !b.HeldSince.IsZero() || b.Held != time.Second {
		t.Errorf("the answered ask: held since %v, held %v; want none and 1s", b.HeldSince, b.Held)
	}
	for i, c := range w.Cells(nil, b, tl.Now(), 10) {
		if c != timeline.CellHeld {
			t.Errorf("column %d of the answered ask is %v, want held", i, c)
		}
	}
}

// inSequence returns what applies one event to tl, numbered after the
// one before.
func inSequence(tl *timeline.Timeline) func(at time.Time, p string, unit path.Kind, kind engine.EventKind, payload any) {
	seq := uint64(0)
	return func(at time.Time, p string, unit path.Kind, kind engine.EventKind, payload any) {
		seq++
		tl.Apply(engine.Event{Seq: seq, Time: at, Path: p, Unit: unit, Kind: kind, Payload: payload})
	}
}

// TestHoldingNow holds a map item at its step's stop before the step's
// first event: the item's bar and its step's are there at once, and they
// and the map's run to now, held from the hold's start, until the Held
// event that ends the hold says how long it was.
func TestHoldingNow(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	tl := timeline.New()
	apply := inSequence(tl)
	apply(t0, "", path.KindRun, engine.EventRunStart, engine.RunStarted{Plan: "p"})
	apply(t0, "E1", path.KindStep, engine.EventStepStart, engine.StepStarted{Tool: "map"})
	step := "E1/do.1/A"
	tl.Holding([]string{step}, t0)
	tl.Tick(t0.Add(5 * time.Second))
	for _, p := range []string{step, "E1/do.1", "E1"} {
		b, ok := tl.Bar(p)
		if !ok {
			t.Fatalf("no bar at %s while it is held", p)
		}
		if !b.Open() || b.HeldSince != t0 || b.Held != 5*time.Second {
			t.Errorf("%s held now: open %v, held since %v, held %v; want open, held since the hold, 5s held", p, b.Open(), b.HeldSince.Sub(t0), b.Held)
		}
	}
	released := t0.Add(6 * time.Second)
	tl.Holding(nil, released)
	apply(released, step, path.KindStep, engine.EventHeld, engine.Held{Stop: engine.StopStep, Ms: 6000})
	apply(released, step, path.KindStep, engine.EventStepStart, engine.StepStarted{Tool: "user__note"})
	apply(released.Add(time.Second), step, path.KindStep, engine.EventStepEnd, engine.StepEnded{Tool: "user__note", Status: "ok", Ms: 7000, HeldMs: 6000})
	if b, _ := tl.Bar(step); b.Open() || !b.HeldSince.IsZero() || b.Held != 6*time.Second || b.End.Sub(b.Start) != 7*time.Second {
		t.Errorf("%s over: open %v, held since %v, %v of %v held; want 6s of 7s", step, b.Open(), b.HeldSince, b.Held, b.End.Sub(b.Start))
	}
}

// TestHoldAheadOfEvents holds a filter item's verdict while the events of
// a step that ran before the filter have yet to arrive (the workbench
// reads the hold from the session before the events' batch), then aborts
// the run there: the bars keep the run's order, and the verdict's bar
// spans the time it was held.
func TestHoldAheadOfEvents(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	tl := timeline.New()
	apply := inSequence(tl)
	apply(t0, "", path.KindRun, engine.EventRunStart, engine.RunStarted{Plan: "p"})
	apply(t0, "E0", path.KindStep, engine.EventStepStart, engine.StepStarted{Tool: "builtin__reshape"})
	apply(t0.Add(time.Second), "E0", path.KindStep, engine.EventStepEnd, engine.StepEnded{Tool: "builtin__reshape", Status: "ok", Ms: 1000})
	verdict := "E2/do.0/verdict"
	held := t0.Add(3 * time.Second)
	tl.Holding([]string{verdict}, held)
	apply(t0.Add(time.Second), "E1", path.KindStep, engine.EventStepStart, engine.StepStarted{Tool: "builtin__reshape"})
	apply(t0.Add(2*time.Second), "E1", path.KindStep, engine.EventStepEnd, engine.StepEnded{Tool: "builtin__reshape", Status: "ok", Ms: 1000})
	apply(t0.Add(2*time.Second), "E2", path.KindStep, engine.EventStepStart, engine.StepStarted{Tool: "filter"})
	aborted := t0.Add(10 * time.Second)
	tl.Holding(nil, aborted)
	apply(aborted, "E2", path.KindStep, engine.EventStepEnd, engine.StepEnded{Tool: "filter", Status: "failed", Ms: 8000})
	apply(aborted, "", path.KindRun, engine.EventRunEnd, engine.RunEnded{Status: engine.StatusAborted})
	var order []string
	for _, b := range tl.Bars(0, tl.Len()) {
		order = append(order, b.Path)
	}
	if want := []string{"E0", "E1", "E2", "E2/do.0", verdict}; !slices.Equal(order, want) {
		t.Errorf("bars %v, want %v", order, want)
	}
	b, _ := tl.Bar(verdict)
	if !b.Start.Equal(held) || !b.End.Equal(aborted) {
		t.Errorf("the aborted verdict's bar runs %v to %v after the start; want %v to %v", b.Start.Sub(t0), b.End.Sub(t0), held.Sub(t0), aborted.Sub(t0))
	}
}

// TestAbortedBars aborts a map's run with one item ended, one failed of
// its own, one aborted at its step's stop and one still running: the
// last two, and the map, are cut short by the abort and drawn so, as the
// run tree draws them; the failed item stays failed.
func TestAbortedBars(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	tl := timeline.New()
	apply := inSequence(tl)
	apply(t0, "", path.KindRun, engine.EventRunStart, engine.RunStarted{Plan: "p"})
	apply(t0, "E1", path.KindStep, engine.EventStepStart, engine.StepStarted{Tool: "map"})
	for i := range 4 {
		p := fmt.Sprintf("E1/do.%d/check", i)
		apply(t0, p, path.KindStep, engine.EventStepStart, engine.StepStarted{Tool: "user__check"})
	}
	end := t0.Add(time.Second)
	apply(end, "E1/do.0/check", path.KindStep, engine.EventStepEnd, engine.StepEnded{Tool: "user__check", Status: engine.StepOK, Ms: 1000})
	apply(end, "E1/do.1/check", path.KindStep, engine.EventStepEnd, engine.StepEnded{Tool: "user__check", Status: engine.StepFailed, Error: "boom", Ms: 1000})
	aborted := t0.Add(2 * time.Second)
	apply(aborted, "E1/do.2/check", path.KindStep, engine.EventStepEnd, engine.StepEnded{Tool: "user__check", Status: engine.StepAborted, Ms: 2000})
	apply(aborted, "E1", path.KindStep, engine.EventStepEnd, engine.StepEnded{Tool: "map", Status: engine.StepAborted, Ms: 2000})
	apply(aborted, "", path.KindRun, engine.EventRunEnd, engine.RunEnded{Status: engine.StatusAborted})
	for _, tc := range []struct {
		path            string
		failed, aborted bool
	}{
		{"E1", true, true},
		{"E1/do.0", false, false},
		{"E1/do.0/check", false, false},
		{"E1/do.1", true, false},
		{"E1/do.1/check", true, false},
		{"E1/do.2", true, true},
		{"E1/do.2/check", true, true},
		{"E1/do.3", true, true},
		{"E1/do.3/check", true, true},
	} {
		b, ok := tl.Bar(tc.path)
		if !ok {
			t.Errorf("%s: no bar", tc.path)
			continue
		}
		if b.Failed != tc.failed || b.Aborted != tc.aborted || b.Open() {
			t.Errorf("%s: failed %v aborted %v open %v; want failed %v aborted %v, ended", tc.path, b.Failed, b.Aborted, b.Open(), tc.failed, tc.aborted)
		}
	}
}

// TestHeldWhereItWas holds a map's second item at its step's stop from the
// second second to the fifth: the map's bar is shaded there, where the
// hold was, not from its start, which is all its end event's held_ms
// could say; a record without held events is still shaded from the start.
func TestHeldWhereItWas(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	for _, withHeld := range []bool{true, false} {
		tl := timeline.New()
		apply := inSequence(tl)
		apply(t0, "", path.KindRun, engine.EventRunStart, engine.RunStarted{Plan: "p"})
		apply(t0, "E1", path.KindStep, engine.EventStepStart, engine.StepStarted{Tool: "map"})
		apply(t0, "E1/do.0/check", path.KindStep, engine.EventStepStart, engine.StepStarted{Tool: "user__check"})
		apply(t0.Add(time.Second), "E1/do.0/check", path.KindStep, engine.EventStepEnd, engine.StepEnded{Tool: "user__check", Status: engine.StepOK, Ms: 1000})
		released := t0.Add(5 * time.Second)
		if withHeld {
			apply(released, "E1/do.1/check", path.KindStep, engine.EventHeld, engine.Held{Stop: engine.StopStep, Ms: 3000})
		}
		apply(released, "E1/do.1/check", path.KindStep, engine.EventStepStart, engine.StepStarted{Tool: "user__check"})
		apply(t0.Add(6*time.Second), "E1/do.1/check", path.KindStep, engine.EventStepEnd, engine.StepEnded{Tool: "user__check", Status: engine.StepOK, Ms: 4000, HeldMs: 3000})
		apply(t0.Add(6*time.Second), "E1", path.KindStep, engine.EventStepEnd, engine.StepEnded{Tool: "map", Status: engine.StepOK, Ms: 6000, HeldMs: 3000})
		apply(t0.Add(6*time.Second), "", path.KindRun, engine.EventRunEnd, engine.RunEnded{Status: engine.StatusOK})
		b, _ := tl.Bar("E1")
		var held []timeline.Span
		for _, s := range b.Spans {
			if s.Kind == timeline.SpanHeld {
				held = append(held, s)
			}
		}
		from, to := 2*time.Second, 5*time.Second
		if !withHeld {
			from, to = 0, 3*time.Second
		}
		if b.Held != 3*time.Second || len(held) != 1 || held[0].Start.Sub(t0) != from || held[0].End.Sub(t0) != to {
			var got []string
			for _, s := range held {
				got = append(got, fmt.Sprintf("%v-%v", s.Start.Sub(t0), s.End.Sub(t0)))
			}
			t.Errorf("held events %v: the map held %v, shaded %v; want 3s, %v-%v", withHeld, b.Held, got, from, to)
		}
	}
}

// TestAbortedRound cuts an agent's round short with the run's abort, its
// call stopped: the round is marked aborted, as its step is, not left
// unmarked or drawn as failed of its own.
func TestAbortedRound(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	tl := timeline.New()
	apply := inSequence(tl)
	apply(t0, "", path.KindRun, engine.EventRunStart, engine.RunStarted{Plan: "p"})
	apply(t0, "E1", path.KindStep, engine.EventStepStart, engine.StepStarted{Tool: "agent"})
	stopped := t0.Add(time.Second)
	apply(stopped, "E1/agent.1", path.KindRound, engine.EventModelCall, engine.ModelCalled{Ms: 1000, Error: "stopped: interrupted (ctrl-c)", Aborted: true})
	apply(stopped, "E1", path.KindStep, engine.EventStepEnd, engine.StepEnded{Tool: "agent", Status: engine.StepAborted, Ms: 1000})
	apply(stopped, "", path.KindRun, engine.EventRunEnd, engine.RunEnded{Status: engine.StatusAborted})
	for _, p := range []string{"E1", "E1/agent.1"} {
		if b, _ := tl.Bar(p); !b.Aborted || b.Open() {
			t.Errorf("%s: aborted %v, open %v; want aborted, ended", p, b.Aborted, b.Open())
		}
	}
}
