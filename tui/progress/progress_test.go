package progress

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/chat"
	paths "github.com/stepwise-dev/stepwise/engine/path"
)

// recordedEvents reads testdata/fan.jsonl: the --events jsonl of a real
// `stepwise run fan --script` of testdata/fan.yaml with the replies of
// testdata/fan.replies.yaml (a map of six agents at concurrency 3, an
// agent of three rounds, a filter, and a map with a list body whose third
// item fails), decoded as a record is.
func recordedEvents(t testing.TB) []engine.Event {
	t.Helper()
	f, err := os.Open("testdata/fan.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var events []engine.Event
	lines := bufio.NewScanner(f)
	lines.Buffer(nil, 1<<20)
	for lines.Scan() {
		var line struct {
			Seq     uint64           `json:"seq"`
			Time    time.Time        `json:"time"`
			Path    string           `json:"path"`
			Kind    engine.EventKind `json:"kind"`
			Payload json.RawMessage  `json:"payload"`
		}
		if err := json.Unmarshal(lines.Bytes(), &line); err != nil {
			t.Fatal(err)
		}
		payload, err := engine.DecodePayload(line.Kind, line.Payload)
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, engine.Event{Seq: line.Seq, Time: line.Time, Path: line.Path, Unit: paths.KindOf(line.Path), Kind: line.Kind, Payload: payload})
	}
	return events
}

// TestRecordedRun feeds a recorded run's events in and checks what the
// progress says at points along the way and of each step as it ends.
func TestRecordedRun(t *testing.T) {
	events := recordedEvents(t)
	r := New(time.Time{})
	ended := map[string]*Step{}
	// seen checks the running steps when the event at path of kind has
	// just been taken in, the first time.
	type check struct {
		path string
		kind engine.EventKind
		test func(t *testing.T)
	}
	checks := []check{
		{"E1", engine.EventItems, func(t *testing.T) {
			s := running(t, r, "E1")
			if s.List == nil || s.List.Total != 6 || s.List.Done != 0 || s.List.Running() != 0 {
				t.Errorf("E1 once listed: %+v", s.List)
			}
		}},
		{"E1/do.3", engine.EventStepStart, func(t *testing.T) {
			// Item 0 ended, which let item 3 start: 1 done, 3 running.
			l := running(t, r, "E1").List
			if l.Done != 1 || l.Running() != 3 || l.Failed != 0 {
				t.Errorf("E1 at item 3's start: done %d, running %d, failed %d", l.Done, l.Running(), l.Failed)
			}
		}},
		{"E2/agent.2", engine.EventModelCall, func(t *testing.T) {
			s := running(t, r, "E2")
			if !s.Agent || s.Rounds != 2 || s.Tools != 2 || s.Spend.Calls != 2 || s.Spend.Tokens != 660 {
				t.Errorf("E2 after its second reply: %+v", s)
			}
		}},
	}
	for _, e := range events {
		if s := r.Event(e); s != nil {
			ended[s.Path] = s
		}
		for i, c := range checks {
			if c.path == e.Path && c.kind == e.Kind {
				t.Run(c.path+" "+string(c.kind), c.test)
				checks = append(checks[:i], checks[i+1:]...)
				break
			}
		}
	}
	if len(checks) > 0 {
		t.Errorf("the record has no %s event at %s", checks[0].kind, checks[0].path)
	}
	if !r.Started.Equal(events[0].Time) {
		t.Errorf("the run started %v, its run_start says %v", r.Started, events[0].Time)
	}
	if len(r.Running()) != 0 {
		t.Errorf("steps still running after the run ended: %v", r.Running())
	}
	priced := func(s Spend) bool { return s.Priced && s.CostUSD > 0 }
	for _, c := range []struct {
		path                 string
		status               engine.StepStatus
		total, done, failed  int
		rounds, tools, calls int
		tokens               int
	}{
		{"E0", engine.StepOK, -1, 0, 0, 0, 0, 0, 0},
		{"E1", engine.StepOK, 6, 6, 0, 0, 0, 12, 1320},
		{"E2", engine.StepOK, -1, 0, 0, 3, 3, 3, 990},
		{"E3", engine.StepOK, 6, 6, 0, 0, 0, 0, 0},
		// Items 0 and 1 ran both body steps; item 2 failed at its first.
		{"E4", engine.StepFailed, 4, 3, 1, 0, 0, 0, 0},
	} {
		s := ended[c.path]
		if s == nil {
			t.Errorf("%s never ended", c.path)
			continue
		}
		if s.End.Status != c.status {
			t.Errorf("%s ended %s, want %s", c.path, s.End.Status, c.status)
		}
		if c.total >= 0 {
			if s.List == nil || s.List.Total != c.total || s.List.Done != c.done || s.List.Failed != c.failed || s.List.Running() != 0 {
				t.Errorf("%s's items at its end: %+v, want %d of %d done, %d failed", c.path, s.List, c.done, c.total, c.failed)
			}
		} else if s.List != nil {
			t.Errorf("%s is no list step, yet has items: %+v", c.path, s.List)
		}
		if s.Rounds != c.rounds || s.Tools != c.tools {
			t.Errorf("%s: %d rounds, %d tools, want %d and %d", c.path, s.Rounds, s.Tools, c.rounds, c.tools)
		}
		if s.Spend.Calls != c.calls || s.Spend.Tokens != c.tokens || (c.calls > 0 && !priced(s.Spend)) {
			t.Errorf("%s spent %+v, want %d calls, %d tokens, priced", c.path, s.Spend, c.calls, c.tokens)
		}
	}
	if r.Spend.Calls != 15 || r.Spend.Tokens != 2310 || !priced(r.Spend) {
		t.Errorf("the run spent %+v, want 15 calls and 2,310 tokens, priced", r.Spend)
	}
}

func running(t *testing.T, r *Run, path string) *Step {
	t.Helper()
	for _, s := range r.Running() {
		if s.Path == path {
			return s
		}
	}
	t.Fatalf("%s is not running", path)
	return nil
}

// TestRateAndETA times the items of a map by hand: the rate counts from
// the first item's start, and the ETA is what is left at that rate.
func TestRateAndETA(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	r := New(t0)
	r.Event(engine.Event{Time: t0, Path: "E1", Unit: paths.KindStep, Kind: engine.EventStepStart, Payload: engine.StepStarted{Tool: "map"}})
	l := running(t, r, "E1").List
	if _, ok := l.ETA(at(time.Second)); ok || l.Rate(at(time.Second)) != 0 {
		t.Errorf("an ETA before the list rendered")
	}
	r.Event(engine.Event{Time: at(time.Second), Path: "E1", Unit: paths.KindStep, Kind: engine.EventItems, Payload: engine.ItemsListed{Count: 10}})
	// The first item starts 2s after the step (held at a stop, say): the
	// rate does not count that wait.
	for i := range 4 {
		item := paths.Item("E1", i)
		r.Event(engine.Event{Time: at(2 * time.Second), Path: item, Unit: paths.KindItem, Kind: engine.EventStepStart, Payload: engine.StepStarted{Tool: "agent"}})
		status := engine.StepOK
		if i == 3 {
			status = engine.StepFailed
		}
		r.Event(engine.Event{Time: at(3 * time.Second), Path: item, Unit: paths.KindItem, Kind: engine.EventStepEnd, Payload: engine.StepEnded{Tool: "agent", Status: status}})
	}
	r.Event(engine.Event{Time: at(3 * time.Second), Path: "E1/do.4", Unit: paths.KindItem, Kind: engine.EventStepStart, Payload: engine.StepStarted{Tool: "agent"}})
	now := at(4 * time.Second)
	if l.Done != 4 || l.Failed != 1 || l.Running() != 1 || l.Total != 10 {
		t.Errorf("done %d, failed %d, running %d of %d", l.Done, l.Failed, l.Running(), l.Total)
	}
	if rate := l.Rate(now); rate != 2 {
		t.Errorf("rate %g/s, want 2/s (4 items in the 2s since the first started)", rate)
	}
	if left, ok := l.ETA(now); !ok || left != 3*time.Second {
		t.Errorf("ETA %v (%v), want 3s (6 items left at 2/s)", left, ok)
	}
	if got, want := strings.Join(l.Words(now), " · "), "4/10 items · 1 running · 1 failed · 2.0/s · ETA 3.0s"; got != want {
		t.Errorf("words %q, want %q", got, want)
	}
	if r.Step("E1") != running(t, r, "E1") || r.Step("E1/do.4") != nil {
		t.Errorf("Step does not find the running top-level step alone")
	}
	slow := &List{Total: -1, Done: 1234, running: map[int]bool{}, firstStarted: t0}
	if got, want := strings.Join(slow.Words(at(time.Hour)), " · "), "1,234/? items · 0 running · 20.6/min"; got != want {
		t.Errorf("before the total, words %q, want %q", got, want)
	}
}

// TestUnpricedSpend: one unpriced call makes a cost unknown, and the
// tokens still add up.
func TestUnpricedSpend(t *testing.T) {
	r := New(time.Time{})
	price := 0.5
	for _, cost := range []*float64{&price, nil, &price} {
		r.Event(engine.Event{Path: "E1/agent.1", Unit: paths.KindRound, Kind: engine.EventModelCall, Payload: engine.ModelCalled{Usage: chatUsage(10, 5), CostUSD: cost}})
	}
	if r.Spend.Calls != 3 || r.Spend.Tokens != 45 || r.Spend.Priced {
		t.Errorf("spend %+v, want 3 calls, 45 tokens, not priced", r.Spend)
	}
}

// TestFailedCallsLeaveTheCostUnknown: calls that all failed say nothing
// of the model's price, so their spend is not priced; a failed call
// beside a priced one leaves that one's cost told.
func TestFailedCallsLeaveTheCostUnknown(t *testing.T) {
	price := 0.5
	for _, tc := range []struct {
		name   string
		calls  []engine.ModelCalled
		priced bool
	}{
		{"failed only", []engine.ModelCalled{{Error: "400 bad request"}, {Error: "timeout"}}, false},
		{"failed and priced", []engine.ModelCalled{{Error: "timeout"}, {Usage: chatUsage(10, 5), CostUSD: &price}}, true},
		{"failed, priced and unpriced", []engine.ModelCalled{{Usage: chatUsage(10, 5), CostUSD: &price}, {Error: "timeout"}, {Usage: chatUsage(10, 5)}}, false},
	} {
		r := New(time.Time{})
		for _, c := range tc.calls {
			r.Event(engine.Event{Path: "E1", Kind: engine.EventModelCall, Payload: c})
		}
		if r.Spend.Priced != tc.priced || r.Spend.Calls != len(tc.calls) {
			t.Errorf("%s: spend %+v, want priced %v", tc.name, r.Spend, tc.priced)
		}
	}
}

func chatUsage(in, out int) chat.Usage { return chat.Usage{InputTokens: in, OutputTokens: out} }

// BenchmarkEvent is what taking one event in costs, over the events of
// the recorded run: ns/event times a run's events is what following it
// costs the run.
func BenchmarkEvent(b *testing.B) {
	events := recordedEvents(b)
	n := 0
	for b.Loop() {
		r := New(time.Time{})
		for _, e := range events {
			r.Event(e)
		}
		n += len(events)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/event")
}

// TestCancelledItems: an item the run's cancellation cut off (the engine
// ends it aborted) is counted cancelled, not failed; the call it cut off failed unpriced, which
// leaves the cost of the answered calls known.
func TestCancelledItems(t *testing.T) {
	r := New(time.Time{})
	r.Event(engine.Event{Path: "E1", Unit: paths.KindStep, Kind: engine.EventStepStart, Payload: engine.StepStarted{Tool: "map"}})
	price := 0.25
	for i, c := range []struct {
		status engine.StepStatus
		err    string
		call   engine.ModelCalled
	}{
		{engine.StepOK, "", engine.ModelCalled{Usage: chatUsage(100, 10), CostUSD: &price}},
		{engine.StepFailed, "round 1: the reply does not match the output_schema", engine.ModelCalled{Usage: chatUsage(100, 10), CostUSD: &price}},
		{engine.StepAborted, "round 1: context canceled", engine.ModelCalled{Error: "context canceled"}},
	} {
		item := paths.Item("E1", i)
		r.Event(engine.Event{Path: item, Unit: paths.KindItem, Kind: engine.EventStepStart, Payload: engine.StepStarted{Tool: "agent"}})
		r.Event(engine.Event{Path: paths.Round(item, 1), Unit: paths.KindRound, Kind: engine.EventModelCall, Payload: c.call})
		r.Event(engine.Event{Path: item, Unit: paths.KindItem, Kind: engine.EventStepEnd, Payload: engine.StepEnded{Tool: "agent", Status: c.status, Error: c.err}})
	}
	s := r.Event(engine.Event{Path: "E1", Unit: paths.KindStep, Kind: engine.EventStepEnd, Payload: engine.StepEnded{Tool: "map", Status: engine.StepAborted, Error: "`do` item 2 (agent): round 1: context canceled"}})
	if s == nil || s.List.Done != 3 || s.List.Failed != 1 || s.List.Cancelled != 1 {
		t.Fatalf("the map's items at its end: %+v", s)
	}
	if !s.Spend.Priced || s.Spend.CostUSD != 0.5 || s.Spend.Calls != 3 || !r.Spend.Priced {
		t.Errorf("the map spent %+v (the run %+v), want 3 calls priced at $0.50", s.Spend, r.Spend)
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -10000: "-10,000"} {
		if got := Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
