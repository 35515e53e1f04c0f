package debugger

import (
	"strconv"
	"testing"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/path"
	"github.com/stepwise-dev/stepwise/plans/template"
)

// benchScope is a stop's scope as the engine hands it over: roots to look
// up, and all of them flattened for the State.
type benchScope struct{ template.MapScope }

func (s benchScope) Values() map[string]any { return s.MapScope }

// BenchmarkStopWithWatches is what a stop costs the session with 100
// breakpoints and 100 watch expressions set: deciding to stop there (99
// breakpoints that miss, one whose condition holds) and building the State
// with every watch read.
func BenchmarkStopWithWatches(b *testing.B) {
	s := &Session{bps: NewBreakpoints(), hits: map[int]int{}, conditionErrors: map[int]string{}, live: newLiveThreads()}
	for i := 0; i < 99; i++ {
		if _, err := s.bps.Set("E9"+strconv.Itoa(i)+"/do.*/agent.2", nil, nil); err != nil {
			b.Fatal(err)
		}
	}
	cond, err := ParseCondition("{{item.n}} gte 3")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.bps.Set("E1/do.*/agent.2/tracker__get_issue", []engine.StopKind{engine.StopTool}, cond); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		w := []string{"item.n", "E0.issues." + strconv.Itoa(i%10) + ".title", "stop.round", "input.team"}[i%4]
		if _, err := s.Watch(w); err != nil {
			b.Fatal(err)
		}
	}
	issues := make([]any, 10)
	for i := range issues {
		issues[i] = map[string]any{"id": i, "title": "issue " + strconv.Itoa(i)}
	}
	scope := benchScope{template.MapScope{"input": map[string]any{"team": "core"}, "E0": map[string]any{"issues": issues},
		"item": map[string]any{"n": 3}, "index": 3}}
	st := &engine.Stop{Kind: engine.StopTool, Path: "E1/do.3/agent.2/tracker__get_issue", Tool: "tracker__get_issue",
		Input: map[string]any{"id": 3}, Scope: scope,
		Stack: []engine.Frame{{Kind: path.KindPlan}, {Path: "E1", Kind: path.KindStep}, {Path: "E1/do.3", Kind: path.KindItem},
			{Path: "E1/do.3/agent.2", Kind: path.KindRound}, {Path: "E1/do.3/agent.2/tracker__get_issue", Kind: path.KindCall}}}
	b.ReportAllocs()
	for b.Loop() {
		reason, bp := s.shouldStop(st, "E1/do.3/agent.2/tracker__get_issue")
		if bp == nil {
			b.Fatalf("no breakpoint fired (%s)", reason)
		}
		s.current = &held{stop: st, thread: "E1/do.3/agent.2/tracker__get_issue", reason: reason, bp: bp}
		if state := s.stateLocked(); len(state.Watches) != 100 || state.Watches[0].Value != 3 {
			b.Fatalf("watches %v", state.Watches)
		}
		s.current = nil
	}
}

// BenchmarkThreadsOfABigMap lists the threads of a map whose 10,000 items
// are all live, a hundred of them held.
func BenchmarkThreadsOfABigMap(b *testing.B) {
	s := &Session{live: newLiveThreads()}
	s.ThreadStarted(mainThread)
	for i := 0; i < 10_000; i++ {
		item := path.Item("E1", i)
		s.ThreadStarted(item)
		s.live.at(item, &engine.Stop{Kind: engine.StopStep, Path: item + "/A"})
		if i%100 == 0 {
			s.live.hold(item, true)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if threads := s.Threads(); len(threads) != 10_001 || !threads[1].Held {
			b.Fatalf("%d threads", len(threads))
		}
	}
}
