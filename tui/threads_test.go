package tui

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/tui/common"
	"github.com/stepwise-dev/stepwise/tui/inspector"
	"github.com/stepwise-dev/stepwise/tui/live"
)

// fanPlan looks three names up at once, so that a breakpoint on its
// items holds three threads.
const fanPlan = `identifier: fan
name: Fan
description: Looks three names up at once.
steps:
  - id: F0
    tool_name: builtin__reshape
    input: { shape: { names: ["a", "b", "c"] } }
  - id: F1
    tool_name: map
    input:
      over: "{{F0.names}}"
      concurrency: 3
      do:
        tool_name: user__lookup
        input: { name: "{{item}}" }
`

// newBenchWithPlan is a workbench on the test project with one more plan,
// name.yaml of text, open and shown.
func newBenchWithPlan(t *testing.T, name, text string) *bench {
	t.Helper()
	p := newTestProject(t)
	file := filepath.Join(p.planDir, name+".yaml")
	writeTestFile(t, file, text)
	d := LoadDocument(p.ws, file)
	if d.Plan == nil || !d.Report.OK() {
		t.Fatalf("the %s plan does not load: %v", name, d.Report.Problems)
	}
	p.docs = append(p.docs, d)
	b := newBenchOn(t, p, 120, 40)
	b.toDoc(len(p.docs) - 1)
	return b
}

// heldThreads counts the threads the threads pane lists as held.
func heldThreads(m model) int {
	n := 0
	for _, th := range m.runPage.threads() {
		if th.Held {
			n++
		}
	}
	return n
}

// waitThreadsHeld ticks the run's clock until the threads pane lists n
// threads held: the items start beside the first one held, and the pane
// reads them again as the clock ticks.
func (b *bench) waitThreadsHeld(n int) {
	b.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); heldThreads(b.m) < n; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.t.Fatalf("the threads pane lists %v, want %d held", b.m.runPage.threads(), n)
		}
		b.update(tickMsg{b.m.runPage.run})
	}
}

// TestThreadsPane: a debug run held in a map with three items at their
// stops lists every live thread in the threads pane, the plan's own
// running in the map; enter on another held item makes it the one the
// commands act on, and n then moves it, not the first.
func TestThreadsPane(t *testing.T) {
	b := newBenchWithPlan(t, "fan", fanPlan)
	b.press(command("break F1/do.*")...)
	b.press(keyDebug)
	b.settle()
	b.waitThreadsHeld(3)
	first := b.m.runPage.run.state.Stop.Path
	wantHeld(t, b, first, engine.StopStep, "breakpoint")
	// Every held item has its row, not only the one the keys act on.
	for _, item := range []string{"F1/do.0", "F1/do.1", "F1/do.2"} {
		if _, ok := b.m.runPage.run.tree.Node(item); !ok {
			t.Errorf("held item %s has no row", item)
		}
	}
	// Each thread says where it is below its id: here, at its own path.
	wantScreen(t, b, "Threads", "4 live, 3 held", "● main  F1 step", "▶ "+first[len("F1/"):]+"  step")

	// The pane takes the focus after the tree and the inspector.
	b.press(keyTab, keyTab)
	if b.m.page.focused() != paneBottom {
		t.Fatalf("tab twice focuses pane %d, not the threads", b.m.page.focused())
	}
	other := ""
	for i, th := range b.m.runPage.threads() {
		if th.Held && !th.Stopped {
			other = th.ID
			b.m.runPage.threadList.Select(i)
			break
		}
	}
	b.press(keyEnter)
	wantHeld(t, b, other, engine.StopStep, "thread")
	wantScreen(t, b, "▶ "+other[len("F1/"):]+"  step")
	wantNotice(t, b, "thread "+other+" is current: held at "+other+" (step)")

	// With the breakpoint cleared, n follows the chosen item and no
	// other: it lands in that item or after the map, never in a sibling.
	b.press(command("clear 1")...)
	b.press(keyNext)
	b.until("the chosen item to go on", func(m model) bool {
		r := m.runPage.run
		return r.state.Finished || r.held() && (r.state.Stop.Path != other || r.state.Stop.Kind != engine.StopStep)
	})
	if st := b.m.runPage.run.state; st.Stop != nil && st.Stop.Thread != other && st.Stop.Thread != "main" {
		t.Errorf("n from %s landed at %s, in thread %s", other, st.Stop.Path, st.Stop.Thread)
	}
	for !b.m.runPage.run.state.Finished {
		b.press(keyContinue)
	}
	if b.m.runPage.threadsShown() {
		t.Errorf("the threads pane stays after the run: %v", b.m.runPage.threads())
	}
}

// TestWatchPane: watches set with no run going are listed unread, read at
// every stop of the next debug run and kept after it, by the numbers they
// were given; unwatch takes one away, and the pane goes with the last.
func TestWatchPane(t *testing.T) {
	b := newBench(t, 120, 40)
	b.press(command("watch E0.topic")...)
	wantNotice(t, b, "watch 1: E0.topic (read at every stop)")

	b.debugTo(docFlow, "E1/do.0")
	wantHeld(t, b, "E1/do.0", engine.StopStep, "breakpoint")
	wantScreen(t, b, "Watches", `1 E0.topic = "bugs"`)
	b.press(command("watch item")...)
	wantNotice(t, b, `watch 2: item = "a"`)
	b.press(keyNext)
	b.until("the item's result stop", func(m model) bool { return m.runPage.run.held() && m.runPage.run.state.Stop.Kind == engine.StopResult })
	wantScreen(t, b, `1 E0.topic = "bugs"`, `2 item = "a"`)
	b.press(command("clear 1")...)
	b.press(keyContinue)
	b.until("the run to end", func(m model) bool { return m.runPage.run.state.Finished })
	// The last values read stay in view after the run.
	wantScreen(t, b, `1 E0.topic = "bugs"`, "2 item")

	b.press(command("unwatch 1")...)
	wantNotice(t, b, "watch 1 removed")
	// The numbers stay: the other watch is still 2.
	wantScreen(t, b, "2 item")
	b.press(command("unwatch 1")...)
	wantNotice(t, b, "there is no watch 1; watches lists them")
	b.press(command("unwatch 2")...)
	if b.m.runPage.watchesShown() {
		t.Fatalf("the watch pane stays with no watch: %v", b.m.runPage.watches())
	}
	if strings.Contains(b.screen(), "Watches") {
		t.Error("the screen still shows the watch pane")
	}
	b.press(command("unwatch 3")...)
	wantNotice(t, b, "there is no watch 3; watches lists them")
}

// TestResultStopShowsTheResult: held at a step's result stop, the
// inspector's Result tab shows the value the step gave, though the event
// that ends the step comes after the stop.
func TestResultStopShowsTheResult(t *testing.T) {
	b := newBench(t, 120, 40)
	b.debugTo(docFlow, "E1/do.0")
	b.press(keyNext)
	wantHeld(t, b, "E1/do.0", engine.StopResult, "breakpoint")
	if !b.m.runPage.inspector.SelectTab(inspector.TabResult) {
		t.Fatal("no Result tab at the result stop")
	}
	wantScreen(t, b, "Result  held at its result stop", `"name": "a"`)
}

// TestOneThreadNoPane: a debug run held with its plan's own thread alone
// and no watch shows no threads pane: a list of one says nothing.
func TestOneThreadNoPane(t *testing.T) {
	b := newBench(t, 120, 40)
	b.debugTo(docSimple, "")
	wantHeld(t, b, "S0", engine.StopStep, "entry")
	if strings.Contains(b.screen(), "Threads") {
		t.Errorf("a threads pane for one thread:\n%s", b.screen())
	}
}

// TestToolCallThreadSaysWhere checks a tool call's thread, held before its
// call, says where it is in the threads pane, as every other thread does.
func TestToolCallThreadSaysWhere(t *testing.T) {
	b := newBench(t, 160, 40)
	b.debugTo(docFlow, "E2/agent.1/builtin__reshape")
	wantHeld(t, b, "E2/agent.1/builtin__reshape", engine.StopTool, "breakpoint")
	wantScreen(t, b, "Threads", "● main  E2/agent.1 reply", "▶ agent.1/builtin__reshape  tool")
}

// fanBodyPlan is fanPlan with a body of two steps, so that an item's
// thread is held at a path below its own.
const fanBodyPlan = `identifier: fanbody
name: Fan body
description: Looks three names up at once, then shapes each.
steps:
  - id: F0
    tool_name: builtin__reshape
    input: { shape: { names: ["a", "b", "c"] } }
  - id: F1
    tool_name: map
    input:
      over: "{{F0.names}}"
      concurrency: 3
      do:
        - id: look
          tool_name: user__lookup
          input: { name: "{{item}}" }
        - id: card
          tool_name: builtin__reshape
          input: { shape: { seen: "{{look.count}}" } }
`

// TestThreadsPaneAt80x24: at the smallest size, each thread says where it
// is below its id and the kind of its stop, whole; a short watch takes a
// narrow pane beside the threads; :threads says each stop's kind, and
// :thread answers on the status line.
func TestThreadsPaneAt80x24(t *testing.T) {
	b := newBenchWithPlan(t, "fanbody", fanBodyPlan)
	b.update(tea.WindowSizeMsg{Width: 80, Height: 24})
	b.press(command("watch item")...)
	b.press(command("break F1/do.*/card")...)
	b.press(keyDebug)
	b.settle()
	b.waitThreadsHeld(3)
	first := b.m.runPage.run.state.Stop
	item := strings.TrimSuffix(first.Path, "/card")
	wantHeld(t, b, first.Path, engine.StopStep, "breakpoint")
	wantScreen(t, b, "▶ "+item[len("F1/"):]+"  card step")
	// The watch pane is as wide as its one short line needs.
	threads, watches := b.m.runPage.bottomPanes(b.m.runPage.layout())
	if watches.w > minWatchesWidth || threads.w < 80-minWatchesWidth {
		t.Errorf("threads %d cells, watches %d, for one short watch:\n%s", threads.w, watches.w, b.screen())
	}
	b.press(command("threads")...)
	wantNotice(t, b, "▶ "+item+" at "+first.Path+" (step)")
	var other debugger.Thread
	for _, th := range b.m.runPage.threads() {
		if th.Held && !th.Stopped {
			other = th
			break
		}
	}
	b.press(command("thread " + other.ID)...)
	wantHeld(t, b, other.Path, other.Kind, "thread")
	wantNotice(t, b, "thread "+other.ID+" is current: held at "+other.Path+" ("+string(other.Kind)+")")
}

// TestThreadsPaneSaysMore: a threads pane too short for its threads says
// how many more there are and which way, and scrolls to them.
func TestThreadsPaneSaysMore(t *testing.T) {
	b := newBenchWithPlan(t, "fan", fanPlan)
	b.update(tea.WindowSizeMsg{Width: 80, Height: 24})
	b.press(command("break F1/do.*")...)
	b.press(keyDebug)
	b.settle()
	b.waitThreadsHeld(3)
	if !b.m.runPage.threadList.Overflows() {
		t.Skipf("the pane at 80x24 shows all %d threads", len(b.m.runPage.threads()))
	}
	wantScreen(t, b, "4 live, 3 held · ↓ +1 more")
	b.press(keyTab, keyTab, keyEnd)
	wantScreen(t, b, "4 live, 3 held · ↑ +1 more")
}

// TestWatchUnknownRoot: a watch whose path names no step, input or root
// of the scope is set with a warning, listed with it away from a stop,
// and says its error at every stop.
func TestWatchUnknownRoot(t *testing.T) {
	b := newBench(t, 120, 40)
	b.press(command("watch nosuch.path")...)
	wantNotice(t, b, "watch 1: nosuch.path: no step of the plan is named nosuch")
	if b.m.notice.kind != noticeError {
		t.Errorf("the warning is said as %v", b.m.notice.kind)
	}
	b.press(command("watch E0.topic")...)
	wantNotice(t, b, "watch 2: E0.topic (read at every stop)")
	b.press(command("watches")...)
	wantNotice(t, b, "watches: 1 nosuch.path: no step of the plan is named nosuch")
	b.debugTo(docFlow, "E1/do.0")
	wantHeld(t, b, "E1/do.0", engine.StopStep, "breakpoint")
	b.press(command("watches")...)
	wantNotice(t, b, "watches: 1 nosuch.path: missing step 'nosuch'")
	wantScreen(t, b, "1 nosuch.path: missing step 'nosuch'", `2 E0.topic = "bugs"`)
}

// TestThreadPlace names threads as the threads pane does: below the
// thread that started them, or their top-level step, with the stop's path
// below the id.
func TestThreadPlace(t *testing.T) {
	ids := []string{"main", "assess/do.0", "assess/do.0/verdict/agent.1/tracker__search", "E2/agent.1/builtin__reshape", "a/do.1", "a/do.1/b/do.2"}
	for _, tc := range []struct {
		id, path    string
		name, where string
	}{
		{"main", "assess", "main", "assess"},
		{"assess/do.0", "assess/do.0/verdict/agent.2", "do.0", "verdict/agent.2"},
		{"assess/do.0", "assess/do.0", "do.0", ""},
		{"assess/do.0/verdict/agent.1/tracker__search", "assess/do.0/verdict/agent.1/tracker__search", "verdict/agent.1/tracker__search", ""},
		{"E2/agent.1/builtin__reshape", "E2/agent.1/builtin__reshape", "agent.1/builtin__reshape", ""},
		{"a/do.1/b/do.2", "a/do.1/b/do.2/c", "b/do.2", "c"},
		{"a/do.1", "", "do.1", ""},
		// A called plan's map item below a branch keeps its whole id.
		{"post/then/post_triage_notes/comments/do.0", "post/then/post_triage_notes/comments/do.0/posted",
			"post/then/post_triage_notes/comments/do.0", "posted"},
	} {
		name, where := threadPlace(debugger.Thread{ID: tc.id, Path: tc.path}, ids)
		if name != tc.name || where != tc.where {
			t.Errorf("thread %s at %q: %q, %q; want %q, %q", tc.id, tc.path, name, where, tc.name, tc.where)
		}
	}
}

// pairPlan maps over two items with a body of two steps.
const pairPlan = `identifier: pair
name: Pair
description: Two steps for each of two items.
steps:
  - id: E1
    tool_name: map
    input:
      over: [1, 2]
      concurrency: 1
      do:
        - id: A
          tool_name: builtin__reshape
          input: { shape: { n: "{{item}}" } }
        - id: B
          tool_name: builtin__reshape
          input: { shape: { m: "{{A.n}}" } }
`

// TestItemHeldInItsBody: a map item whose second step is held at its
// stop, its first done, is not done: its row shows it running until the
// step has run.
func TestItemHeldInItsBody(t *testing.T) {
	b := newBenchWithPlan(t, "pair", pairPlan)
	b.press(command("break E1/do.0/B step")...)
	b.press(keyDebug)
	wantHeld(t, b, "E1/do.0/B", engine.StopStep, "breakpoint")
	if n := node(t, b, "E1/do.0"); n.Status.Done() {
		t.Errorf("the item is %s while its step B is held before it runs", n.Status)
	}
	if l := treeLine(t, b.m.runPage.tree.View(), "do.0"); strings.Contains(l, "✓") {
		t.Errorf("the held item's row says it is done: %q", l)
	}
	b.press(keyNext)
	if n := node(t, b, "E1/do.0"); n.Status.Done() {
		t.Errorf("the item is %s at its step B's result, before B's end", n.Status)
	}
	b.press(keyContinue)
	wantEnded(t, b, "ok")
	if n := node(t, b, "E1/do.0"); n.Status != live.OK {
		t.Errorf("the item is %s once the run ended", n.Status)
	}
}

// TestNextHeldGoesThroughThreads: H from the stop goes to the row of the
// next thread held now, press after press, and around to the stop again,
// as E and T go through theirs.
func TestNextHeldGoesThroughThreads(t *testing.T) {
	b := newBenchWithPlan(t, "fan", fanPlan)
	b.press(command("break F1/do.*")...)
	b.press(keyDebug)
	b.settle()
	b.waitThreadsHeld(3)
	first := b.m.runPage.run.state.Stop.Path
	seen := map[string]bool{}
	for range 3 {
		b.press(keyNextHeld)
		got := b.m.runPage.selectedPath()
		if !strings.HasPrefix(got, "F1/do.") || seen[got] {
			t.Fatalf("H went to %q (notice %q), after %v", got, b.m.notice.text, seen)
		}
		seen[got] = true
		if got != first {
			wantNotice(t, b, "held now: "+got+", thread "+got+" waits there")
		}
	}
	b.press(keyNextHeld)
	if got := b.m.runPage.selectedPath(); !seen[got] {
		t.Errorf("the fourth H went to %q, not around to a held thread's row", got)
	}
	for !b.m.runPage.run.state.Finished {
		b.press(keyContinue)
	}
}

// TestFitThreadPlace: a narrow threads pane keeps where a thread is whole
// and cuts the middle of its name; only a pane too narrow for the place
// beside a short name cuts the place too.
func TestFitThreadPlace(t *testing.T) {
	const deep = "post/then/post_triage_notes/comments/do.0"
	for _, tc := range []struct {
		name, where string
		room        int
		wantName    string
		wantWhere   string
	}{
		{deep, "posted", 80, deep, "posted"},
		{deep, "posted", 30, "post/the…comments/do.0", "posted"},
		{"do.0", "verdict/agent.2", 40, "do.0", "verdict/agent.2"},
		{deep, "", 20, "post/th…omments/do.0", ""},
		{deep, "verdict/agent.2/tracker__add_comment", 30, "po…/do.0", "verdict…_add_comment"},
	} {
		name, where := fitThreadPlace(tc.name, tc.where, tc.room)
		if name != tc.wantName || where != tc.wantWhere {
			t.Errorf("fitThreadPlace(%q, %q, %d) = %q, %q; want %q, %q", tc.name, tc.where, tc.room, name, where, tc.wantName, tc.wantWhere)
		}
		if w := common.TextWidth(name) + 2 + common.TextWidth(where); where != "" && w > tc.room {
			t.Errorf("fitThreadPlace(%q, %q, %d) takes %d cells", tc.name, tc.where, tc.room, w)
		}
	}
}

// TestWatchPaneTakesUnusedRoom: at 80 columns a watch whose line is
// longer than the watch pane's share takes the room the threads beside it
// do not use, and is not cut.
func TestWatchPaneTakesUnusedRoom(t *testing.T) {
	b := newBench(t, 80, 24)
	b.w, b.h = 80, 24
	b.press(command("watch nosuch.path")...)
	b.debugTo(docFlow, "E1/do.0")
	wantHeld(t, b, "E1/do.0", engine.StopStep, "breakpoint")
	threads, watches := b.m.runPage.bottomPanes(b.m.runPage.layout())
	if threads.w < b.m.runPage.threadsWidth()+2 {
		t.Errorf("the threads pane is %d cells, under the %d its lines need", threads.w, b.m.runPage.threadsWidth()+2)
	}
	wantScreen(t, b, "1 nosuch.path: missing step 'nosuch' in 'nosuch.path'")
	if watches.w <= 80*maxWatchesShare/100 {
		t.Errorf("the watch pane keeps to its share, %d cells", watches.w)
	}
}
