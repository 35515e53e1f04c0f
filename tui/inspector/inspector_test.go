package inspector_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/debugger/workspace"
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/tui/common"
	"github.com/stepwise-dev/stepwise/tui/format"
	"github.com/stepwise-dev/stepwise/tui/inspector"
	"github.com/stepwise-dev/stepwise/tui/live"
	"github.com/stepwise-dev/stepwise/tui/live/livetest"
)

// inOrder fails unless each of want occurs in text after the one before.
func inOrder(t *testing.T, text string, want ...string) {
	t.Helper()
	rest := text
	for _, w := range want {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Fatalf("%q not found (in order) in:\n%s", w, text)
		}
		rest = rest[i+len(w):]
	}
}

// stopAt runs the agent plan under the debugger to a stop.
func stopAt(t *testing.T, pattern string, kind engine.StopKind) (*live.Tree, *debugger.Snapshot) {
	t.Helper()
	return held(t, agentPlan, agentReplies, pattern, kind)
}

// nodeOf is the tree's node at path, or the zero Node when the tree has
// none yet (a round held before its call), which Show reads from the stop.
func nodeOf(tr *live.Tree, path string) live.Node {
	n, _ := tr.Node(path)
	return n
}

func TestTabs(t *testing.T) {
	done := run(t, agentPlan, agentReplies)
	tests := []struct {
		name string
		tree func() (*live.Tree, *debugger.Snapshot)
		path string
		want []inspector.Tab
	}{
		{"agent step", nil, "E1", []inspector.Tab{inspector.TabInput, inspector.TabResult, inspector.TabScope, inspector.TabUsage}},
		{"round with a tool call", nil, "E1/agent.1", []inspector.Tab{inspector.TabModel, inspector.TabScope, inspector.TabUsage}},
		{"tool call", nil, "E1/agent.1/builtin__reshape", []inspector.Tab{inspector.TabTool, inspector.TabScope}},
		{"refused round", nil, "E1/agent.2", []inspector.Tab{inspector.TabModel, inspector.TabRefusals, inspector.TabScope, inspector.TabUsage}},
		{"repair pass", nil, "E1/agent.2/repair", []inspector.Tab{inspector.TabModel, inspector.TabRefusals, inspector.TabRepair, inspector.TabScope, inspector.TabUsage}},
		{"tool step", nil, "E2", []inspector.Tab{inspector.TabInput, inspector.TabResult, inspector.TabScope}},
		{"held before a round", func() (*live.Tree, *debugger.Snapshot) { return stopAt(t, "E1/agent.2", engine.StopRound) },
			"E1/agent.2", []inspector.Tab{inspector.TabModel, inspector.TabScope, inspector.TabStop}},
		{"held before a repair", func() (*live.Tree, *debugger.Snapshot) { return stopAt(t, "E1/agent.2/repair", engine.StopRepair) },
			"E1/agent.2/repair", []inspector.Tab{inspector.TabModel, inspector.TabRefusals, inspector.TabRepair, inspector.TabScope, inspector.TabStop}},
		{"held before a step", func() (*live.Tree, *debugger.Snapshot) { return stopAt(t, "E2", engine.StopStep) },
			"E2", []inspector.Tab{inspector.TabInput, inspector.TabResult, inspector.TabScope, inspector.TabStop}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr, stop := done, (*debugger.Snapshot)(nil)
			if tc.tree != nil {
				tr, stop = tc.tree()
			}
			m := newModel(80, 30, true)
			m.Show(nodeOf(tr, tc.path), stop)
			if got := m.Tabs(); !slices.Equal(got, tc.want) {
				t.Errorf("tabs %v, want %v", got, tc.want)
			}
			// The tab on show in brackets, the others padded to match.
			want := "[" + tc.want[0].String() + "]"
			for _, tab := range tc.want[1:] {
				want += " " + tab.String() + " "
			}
			if line := screen(m)[1]; !strings.Contains(line, strings.TrimSpace(want)) {
				t.Errorf("tab line %q, want %q", line, want)
			}
		})
	}
}

// TestContent checks each tab of the round, tool call and repair rows
// of a real run, finished or held at a stop.
func TestContent(t *testing.T) {
	done := run(t, agentPlan, agentReplies)
	tests := []struct {
		name string
		tree func() (*live.Tree, *debugger.Snapshot)
		path string
		tab  inspector.Tab
		want []string
	}{
		{"round 1: the call, reply and request", nil, "E1/agent.1", inspector.TabModel, []string{
			"Call  scripted via script · chat",
			"Reply  finish tool_calls", "reasoning", "I should count them first.", "Let me look.",
			"Tool calls  1", "builtin__reshape  call_1", `"shape": {`, `"n": 1`,
			"Request  role chat", "format answer", `"schema": {`,
			"Messages  2", "system", "You carry out one task", "user", "Count the issues.",
			"Tools  1 offered", "builtin__reshape", `"input_schema": {…} 4 keys`,
		}},
		{"round 2: the earlier turns are in its request", nil, "E1/agent.2", inspector.TabModel, []string{
			"Reply  finish stop", `"count": "three"`,
			"Messages  4", "assistant", "Let me look.", "→ builtin__reshape  call_1",
			"tool  cache breakpoint at its end", "← answers call_1", `"n": 1`,
		}},
		{"round 2: its refusals", nil, "E1/agent.2", inspector.TabRefusals, []string{
			"Refusals  1 violation", "went to a repair pass", "✗ /count", "got string, want integer",
		}},
		{"round 2: its usage, the repair included", nil, "E1/agent.2", inspector.TabUsage, []string{
			"calls       2", "tokens in   290", "tokens out  15", "cost        $0.0003",
			"Last call  scripted via script", "role        chat", "tokens      in 200 · out 10",
		}},
		{"tool call", nil, "E1/agent.1/builtin__reshape", inspector.TabTool, []string{
			"Tool  builtin__reshape", "Arguments", `"shape": {`, `"n": 1`, "Result", `"n": 1`,
		}},
		{"repair: its call", nil, "E1/agent.2/repair", inspector.TabModel, []string{
			"scripted via script · repair", `"count": 3`, "Request  role repair", "You repair answers",
			"The answer:", `{"count":"three"}`, "Tools  none offered",
		}},
		{"repair: what it was asked to fix", nil, "E1/agent.2/repair", inspector.TabRefusals, []string{
			"1 violation", "asked to fix it", "✗ /count", "got string, want integer",
		}},
		{"repair: before and after", nil, "E1/agent.2/repair", inspector.TabRepair, []string{
			"Refused answer  - removed", "  {", `-   "count": "three"`, "  }",
			"Repaired answer  + added", "  {", `+   "count": 3`, "  }",
		}},
		{"agent step: its result", nil, "E1", inspector.TabResult, []string{
			"Result  ✓ ok", `"final": true`, `"iterations": 2`, `"count": 3`, `"tool": "builtin__reshape"`,
		}},
		{"agent step: its input", nil, "E1", inspector.TabInput, []string{
			"Input", `"output_schema": {`, `"prompt": "Count the issues."`,
		}},
		{"scope without a stop", nil, "E1", inspector.TabScope, []string{"scope is shown while the run is held here"}},
		{"held before round 2: the request about to be sent", func() (*live.Tree, *debugger.Snapshot) {
			return stopAt(t, "E1/agent.2", engine.StopRound)
		}, "E1/agent.2", inspector.TabModel, []string{
			"Reply", "not asked yet", "Request  role chat", "Messages  4", "tool  cache breakpoint at its end", "← answers call_1",
		}},
		{"held before round 2: the stop", func() (*live.Tree, *debugger.Snapshot) {
			return stopAt(t, "E1/agent.2", engine.StopRound)
		}, "E1/agent.2", inspector.TabStop, []string{
			"Held  round stop at E1/agent.2", "break  #1 E1/agent.2", "Stack  innermost first",
			"E1/agent.2  round", "E1  step agent", "(plan)  plan agentic",
		}},
		{"held at a reply a replay replaces: where its output comes from", func() (*live.Tree, *debugger.Snapshot) {
			tr, snap := stopAt(t, "E1/agent.2", engine.StopRound)
			snap.Recorded = "replace"
			return tr, snap
		}, "E1/agent.2", inspector.TabStop, []string{
			"Held  round stop at E1/agent.2", "record the recorded run's replace here is made again: going on gives the", "output shown", "Stack",
		}},
		{"held before the repair: nothing repaired yet", func() (*live.Tree, *debugger.Snapshot) {
			return stopAt(t, "E1/agent.2/repair", engine.StopRepair)
		}, "E1/agent.2/repair", inspector.TabRepair, []string{
			"Refused answer", `"count": "three"`, "Repaired answer", "not asked yet: the run is held before the pass",
		}},
		{"held before E2: its scope", func() (*live.Tree, *debugger.Snapshot) {
			return stopAt(t, "E2", engine.StopStep)
		}, "E2", inspector.TabScope, []string{"Scope", `"E1": {…} 4 keys`, `"input": {}`}},
		{"held before E2: its result is not there yet", func() (*live.Tree, *debugger.Snapshot) {
			tr, snap := stopAt(t, "E2", engine.StopStep)
			// The workbench tells the tree where the run is held, which
			// shows the held step as running.
			tr.Holding([]string{"E2"}, time.Now())
			return tr, snap
		}, "E2", inspector.TabResult, []string{"Result  not run yet: held at its step stop"}},
		{"held before E2: what a value must match", func() (*live.Tree, *debugger.Snapshot) {
			return stopAt(t, "E2", engine.StopStep)
		}, "E2", inspector.TabStop, []string{"Held  step stop at E2", "tool   builtin__reshape", "E2  step builtin__reshape"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr, stop := done, (*debugger.Snapshot)(nil)
			if tc.tree != nil {
				tr, stop = tc.tree()
			}
			m := newModel(80, 200, true)
			m.Show(nodeOf(tr, tc.path), stop)
			if !m.SelectTab(tc.tab) {
				t.Fatalf("no %s tab in %v", tc.tab, m.Tabs())
			}
			inOrder(t, body(m), tc.want...)
		})
	}
}

// TestFolding folds and unfolds the JSON of the agent step's result.
func TestFolding(t *testing.T) {
	tr := run(t, agentPlan, agentReplies)
	m := newModel(60, 40, false)
	show(t, &m, tr, "E1", nil)
	m.SelectTab(inspector.TabResult)
	full := body(m)
	lineOf := func(want string) int {
		t.Helper()
		for i, l := range strings.Split(body(m), "\n") {
			if strings.Contains(l, want) {
				return i
			}
		}
		t.Fatalf("%q not on the page:\n%s", want, body(m))
		return 0
	}
	to := func(want string) {
		t.Helper()
		press(&m, keyTop)
		for range lineOf(want) {
			press(&m, keyDown)
		}
	}

	to(`"output": {`)
	press(&m, keyLeft)
	inOrder(t, body(m), `"iterations": 2,`, `"output": {…} 1 key`, `"tools_called": [`)
	if strings.Contains(body(m), `"count": 3`) {
		t.Fatalf("folded output still shows its member:\n%s", body(m))
	}
	press(&m, keyRight)
	if body(m) != full {
		t.Fatalf("unfolding did not restore the page:\n%s", body(m))
	}

	// Folding from inside a value folds the object it is in, and the
	// cursor goes to the line that object opens on; folding there again
	// folds the array around it.
	to(`"round": 1`)
	press(&m, keyLeft)
	inOrder(t, body(m), `"tools_called": [`, `{…} 2 keys`, `]`)
	if got, want := m.Cursor(), lineOf(`{…} 2 keys`); got != want {
		t.Errorf("cursor on line %d, want the fold's line %d", got, want)
	}
	press(&m, keyLeft)
	inOrder(t, body(m), `"tools_called": […] 1 item`)
	if got, want := m.Cursor(), lineOf(`"tools_called"`); got != want {
		t.Errorf("cursor on line %d, want the array's line %d", got, want)
	}
	// Unfolding the array finds the object in it as it was left.
	press(&m, keySpace)
	inOrder(t, body(m), `"tools_called": [`, `{…} 2 keys`)

	// Toggle on the root folds everything to one line.
	press(&m, keyTop, keyDown, keySpace)
	inOrder(t, body(m), "Result  ✓ ok", "{…} 4 keys")
	if n := len(strings.Split(body(m), "\n")); n != 2 {
		t.Errorf("the folded root leaves %d lines:\n%s", n, body(m))
	}
	press(&m, keySpace)
	inOrder(t, body(m), `"final": true`)
}

// TestSearch finds text on a tab, marks every match in reverse video and
// moves between matches.
func TestSearch(t *testing.T) {
	tr := run(t, agentPlan, agentReplies)
	for _, color := range []bool{true, false} {
		t.Run(fmt.Sprintf("color=%v", color), func(t *testing.T) {
			m := newModel(80, 60, color)
			show(t, &m, tr, "E1/agent.2", nil)
			m.SelectTab(inspector.TabModel)

			press(&m, keySlash)
			if !m.Capturing() {
				t.Fatal("the search box did not open")
			}
			press(&m, typed("reshape")...)
			n, cur := m.Hits()
			if n < 2 || cur != 0 {
				t.Fatalf("%d matches, current %d; want 2 or more, the first current", n, cur)
			}
			// Typing j goes to the query, not to the cursor.
			if m.Cursor() == 0 || !cursorLineHas(m, "reshape") {
				t.Fatalf("the cursor is not on the first match:\n%s", m.View())
			}
			if reversed := "\x1b[7mreshape"; strings.Count(m.View(), reversed) < 2 {
				t.Errorf("matches are not in reverse video:\n%q", m.View())
			}
			if last := screen(m)[58]; !strings.Contains(last, "/reshape") {
				t.Errorf("the search box shows %q", last)
			}

			first := m.Cursor()
			press(&m, keyEnter)
			if _, c := m.Hits(); c != 1 || !cursorLineHas(m, "reshape") {
				t.Errorf("enter went to match %d", c)
			}
			press(&m, keyEsc)
			if m.Capturing() {
				t.Fatal("esc did not close the search box")
			}
			if n2, _ := m.Hits(); n2 != n || !strings.Contains(m.View(), "\x1b[7mreshape") {
				t.Error("closing the box dropped the matches")
			}
			if foot := screen(m)[59]; !strings.Contains(foot, fmt.Sprintf("/reshape 2/%d", n)) {
				t.Errorf("footer %q", foot)
			}

			press(&m, keyPrevHit)
			if _, c := m.Hits(); c != 0 || m.Cursor() != first {
				t.Errorf("ctrl+p went to match %d, line %d", c, m.Cursor())
			}
			press(&m, keyPrevHit)
			if _, c := m.Hits(); c != n-1 {
				t.Errorf("ctrl+p from the first match went to %d, want the last, %d", c, n-1)
			}
			press(&m, keyNextHit)
			if _, c := m.Hits(); c != 0 || m.Cursor() != first {
				t.Errorf("ctrl+n from the last match went to %d", c)
			}

			// With the box closed, movement keys move the cursor again.
			before := m.Cursor()
			press(&m, keyDown)
			if m.Cursor() != before+1 {
				t.Errorf("j moved the cursor from %d to %d", before, m.Cursor())
			}

			// A capital makes the search exact.
			press(&m, keySlash)
			press(&m, typed("Count")...)
			exact, _ := m.Hits()
			press(&m, keyEsc, keySlash)
			press(&m, typed("count")...)
			if loose, _ := m.Hits(); exact == 0 || loose <= exact {
				t.Errorf("Count matched %d, count %d: want fewer for the capital", exact, loose)
			}
		})
	}
}

// cursorLineHas reports whether the line under the cursor mark contains s.
func cursorLineHas(m inspector.Model, s string) bool {
	for _, l := range screen(m) {
		if strings.HasPrefix(l, "┃›") {
			return strings.Contains(strings.ToLower(l), s)
		}
	}
	return false
}

// TestClick selects tabs and lines with the mouse.
func TestClick(t *testing.T) {
	tr := run(t, agentPlan, agentReplies)
	m := newModel(80, 20, true)
	show(t, &m, tr, "E1/agent.2/repair", nil)
	for _, tab := range []inspector.Tab{inspector.TabRepair, inspector.TabUsage, inspector.TabModel, inspector.TabRefusals} {
		line := []rune(screen(m)[1])
		x := strings.Index(string(line), tab.String())
		if x < 0 {
			t.Fatalf("no %s on the tab line %q", tab, string(line))
		}
		m.ClickAt(len([]rune(string(line)[:x])), 1)
		if m.Tab() != tab {
			t.Errorf("click on %s shows %s", tab, m.Tab())
		}
	}
	m.SelectTab(inspector.TabModel)
	m.ClickAt(10, 5)
	if m.Cursor() != 3 {
		t.Errorf("click on the pane's line 5 put the cursor on page line %d, want 3", m.Cursor())
	}
	m.ClickAt(0, 1) // the border beside the tab line: nothing there
	if m.Cursor() != 3 || m.Tab() != inspector.TabModel {
		t.Errorf("a click on the border moved the cursor or changed the tab")
	}
	m.Scroll(5)
	if got := m.Cursor(); got < 5 {
		t.Errorf("scrolling by 5 left the cursor on line %d, out of view", got)
	}
}

// TestNothingSelected: the zero Node empties the pane, and a node shown
// after it starts afresh.
func TestNothingSelected(t *testing.T) {
	tr := run(t, agentPlan, agentReplies)
	m := newModel(60, 10, true)
	show(t, &m, tr, "E1", nil)
	m.Show(live.Node{}, nil)
	if len(m.Tabs()) != 0 || m.Len() != 0 || !strings.Contains(body(m), "nothing selected") {
		t.Errorf("after the zero Node: tabs %v, %d lines:\n%s", m.Tabs(), m.Len(), body(m))
	}
	show(t, &m, tr, "E1", nil)
	if m.Tab() != inspector.TabInput || m.Len() == 0 {
		t.Errorf("E1 shown again: tab %s, %d lines", m.Tab(), m.Len())
	}
}

// TestNarrowTabs keeps the tab on show in view when the labels do not
// all fit, and clicks still find the tab under them.
func TestNarrowTabs(t *testing.T) {
	tr := run(t, agentPlan, agentReplies)
	m := newModel(30, 10, false)
	show(t, &m, tr, "E1/agent.2/repair", nil)
	m.SelectTab(inspector.TabUsage)
	line := screen(m)[1]
	if !strings.Contains(line, "[Usage]") || !strings.HasPrefix(line, "┃‹") {
		t.Fatalf("tab line %q: want [Usage] in view and ‹ for the tabs cut off", line)
	}
	press(&m, keyNext)
	if m.Tab() != inspector.TabModel {
		t.Errorf("> from the last tab shows %s, want the first", m.Tab())
	}
	press(&m, keyPrev)
	if m.Tab() != inspector.TabUsage {
		t.Errorf("< from the first tab shows %s, want the last", m.Tab())
	}
	runes := []rune(screen(m)[1])
	x := strings.Index(string(runes), "Scope")
	m.ClickAt(len([]rune(string(runes)[:x])), 1)
	if m.Tab() != inspector.TabScope {
		t.Errorf("click on Scope shows %s", m.Tab())
	}
}

// TestWidths draws every tab of every row, held and not, with the search
// box open and closed, at 40 and 120 columns, and checks each view is
// exactly the pane's size.
func TestWidths(t *testing.T) {
	type shown struct {
		tr   *live.Tree
		stop *debugger.Snapshot
		path string
	}
	done := run(t, agentPlan, agentReplies)
	var cases []shown
	for _, p := range []string{"E1", "E1/agent.1", "E1/agent.1/builtin__reshape", "E1/agent.2", "E1/agent.2/repair", "E2"} {
		cases = append(cases, shown{done, nil, p})
	}
	for _, s := range []struct {
		pattern string
		kind    engine.StopKind
	}{{"E1/agent.2", engine.StopRound}, {"E1/agent.2", engine.StopReply}, {"E1/agent.2/repair", engine.StopRepair},
		{"E1/agent.1/*", engine.StopTool}, {"E1/agent.1/*", engine.StopResult}, {"E2", engine.StopStep}} {
		tr, stop := stopAt(t, s.pattern, s.kind)
		cases = append(cases, shown{tr, stop, stop.Path})
	}
	for _, size := range [][2]int{{40, 12}, {120, 30}, {40, 3}, {120, 4}} {
		for _, color := range []bool{true, false} {
			// Before anything is shown, and after a click on its tab line.
			empty := newModel(size[0], size[1], color)
			empty.ClickAt(3, 1)
			if lines := strings.Split(empty.View(), "\n"); len(lines) != size[1] || ansi.StringWidth(lines[0]) != size[0] {
				t.Errorf("%v: the empty pane is %d lines, %d wide", size, len(lines), ansi.StringWidth(lines[0]))
			}
			for _, c := range cases {
				m := newModel(size[0], size[1], color)
				m.Show(nodeOf(c.tr, c.path), c.stop)
				for _, tab := range m.Tabs() {
					m.SelectTab(tab)
					check := func(what string) {
						t.Helper()
						lines := strings.Split(m.View(), "\n")
						if len(lines) != size[1] {
							t.Errorf("%v %s %s %s: %d lines", size, c.path, tab, what, len(lines))
						}
						for i, l := range lines {
							if w := ansi.StringWidth(l); w != size[0] {
								t.Errorf("%v %s %s %s: line %d is %d wide: %q", size, c.path, tab, what, i, w, ansi.Strip(l))
							}
						}
					}
					check("")
					press(&m, keyBottom)
					check("at the bottom")
					press(&m, keySlash)
					press(&m, typed("e")...)
					check("searching")
					press(&m, keyEsc)
				}
			}
		}
	}
}

// sgr finds the parameters of SGR escape sequences.
var sgr = regexp.MustCompile(`\x1b\[([0-9;:]*)m`)

// TestNoColor draws every tab without colour: no colour codes at all, and
// what colour would say (the tab on show, the cursor, matches, errors,
// the diff) still shows.
func TestNoColor(t *testing.T) {
	tr := run(t, agentPlan, agentReplies)
	m := newModel(80, 60, false)
	for _, path := range []string{"E1", "E1/agent.1", "E1/agent.1/builtin__reshape", "E1/agent.2", "E1/agent.2/repair"} {
		show(t, &m, tr, path, nil)
		for _, tab := range m.Tabs() {
			m.SelectTab(tab)
			view := m.View()
			for _, match := range sgr.FindAllStringSubmatch(view, -1) {
				for _, p := range strings.FieldsFunc(match[1], func(r rune) bool { return r == ';' || r == ':' }) {
					if p == "38" || p == "48" || p == "58" || (len(p) == 2 && (p[0] == '3' || p[0] == '4' || p[0] == '9') && p != "39" && p != "49") {
						t.Fatalf("%s %s: colour code %q in %q", path, tab, match[0], view)
					}
				}
			}
			if !strings.Contains(ansi.Strip(view), "["+tab.String()+"]") {
				t.Errorf("%s %s: the tab on show is not marked", path, tab)
			}
			if !strings.Contains(ansi.Strip(view), "┃›") {
				t.Errorf("%s %s: no cursor mark", path, tab)
			}
		}
	}
	show(t, &m, tr, "E1/agent.2/repair", nil)
	m.SelectTab(inspector.TabRepair)
	inOrder(t, body(m), `-   "count": "three"`, `+   "count": 3`)
	m.SelectTab(inspector.TabRefusals)
	inOrder(t, body(m), "✗ /count")
}

// TestStrictMode shows, for a step asking for strict output, whether each
// round's request went with it: a round whose model may call tools goes
// without (its answer is not restricted), the last round, where no tool
// may be called, with it.
func TestStrictMode(t *testing.T) {
	plan := `
identifier: strict
steps:
  - id: E1
    tool_name: agent
    input:
      prompt: "Count the issues."
      tools: ["builtin__reshape"]
      max_iterations: 2
      structured_output: strict
      output_schema: { type: object, additionalProperties: false, required: [count], properties: { count: { type: integer } } }
`
	replies := `
replies:
  - match: E1
    reply: { tool_calls: [ { name: builtin__reshape, arguments: { shape: { n: 1 } } } ] }
  - match: E1
    reply: { json: { count: 3 } }
`
	tr := run(t, plan, replies)
	for _, tc := range []struct{ path, want string }{
		{"E1/agent.1", "format answer (strict asked for, not sent: unsupported_context_tools; validated after)"},
		{"E1/agent.2", "format answer (strict, sent)"},
	} {
		m := newModel(120, 200, false)
		m.Show(nodeOf(tr, tc.path), nil)
		m.SelectTab(inspector.TabModel)
		inOrder(t, body(m), tc.want)
	}
}

// TestTabKeptByName: the tab on show is kept by what it is, not where it
// stands: going from a round to one with a Refusals tab before Scope
// keeps Scope.
func TestTabKeptByName(t *testing.T) {
	done := run(t, agentPlan, agentReplies)
	m := newModel(80, 30, true)
	m.Show(nodeOf(done, "E1/agent.1"), nil)
	if !m.SelectTab(inspector.TabScope) {
		t.Fatal("no Scope tab at E1/agent.1")
	}
	m.Show(nodeOf(done, "E1/agent.2"), nil)
	if got := m.Tab(); got != inspector.TabScope {
		t.Errorf("the tab on show at E1/agent.2 is %v, want Scope", got)
	}
}

// TestTitleKeepsThePathsEnds: a path too long for the pane's title loses
// its middle, so the end that names the row stays in view.
func TestTitleKeepsThePathsEnds(t *testing.T) {
	done := run(t, agentPlan, agentReplies)
	m := newModel(30, 12, true)
	m.Show(nodeOf(done, "E1/agent.1/builtin__reshape"), nil)
	top := strings.SplitN(ansi.Strip(m.View()), "\n", 2)[0]
	if !regexp.MustCompile(`Inspector E1/\S*` + common.Ellipsis + `\S*shape ✓`).MatchString(top) {
		t.Errorf("the title does not keep both ends of the path: %q", top)
	}
}

// TestHeldAsk: an ask a person answered after a while has the Usage tab,
// which says how much of its time it was held and that the answer was
// given by hand, as inspect does.
func TestHeldAsk(t *testing.T) {
	dir, ws := livetest.Project(t, map[string]string{"plans/p.yaml": `
identifier: asking
steps:
  - id: E1
    tool_name: ask
    input:
      prompt: "Go on?"
      output_schema: { type: object, required: [go], properties: { go: { type: boolean } } }
`})
	plan := livetest.Plan(t, dir, "plans/p.yaml")
	const hold = 120 * time.Millisecond
	hook := func(_ context.Context, st *engine.Stop) engine.Decision {
		if st.Kind != engine.StopAsk {
			return engine.Decision{}
		}
		st.Hold()
		time.Sleep(hold)
		st.Release()
		return engine.Decision{Action: engine.Answer, Value: map[string]any{"go": true}}
	}
	rec := &livetest.Events{}
	if res, err := ws.Run(context.Background(), plan, nil, workspace.RunOptions{Sinks: []engine.Sink{rec}, Hook: hook}); err != nil || res.Status != engine.StatusOK {
		t.Fatalf("run: %v %+v", err, res)
	}
	tr := live.New(plan)
	for _, e := range rec.All() {
		tr.Apply(e)
	}
	n := nodeOf(tr, "E1")
	if n.Held < hold || n.Held > n.Duration {
		t.Fatalf("the ask took %v, %v of it held; want %v held at least", n.Duration, n.Held, hold)
	}
	m := newModel(80, 40, false)
	m.Show(n, nil)
	if !m.SelectTab(inspector.TabUsage) {
		t.Fatalf("no Usage tab for the held ask: %v", m.Tabs())
	}
	inOrder(t, body(m), "duration", format.HeldTime(n.Duration, n.Held), "given", format.MarkDecided+" answer")
}

// TestHeldAskWaiting shows the Usage tab of an ask that waits for its
// answer: its time so far and the held share, growing with the clock,
// before the ask ends.
func TestHeldAskWaiting(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	tr := live.New(nil)
	tr.Apply(engine.Event{Seq: 1, Time: t0, Kind: engine.EventRunStart, Payload: engine.RunStarted{Plan: "asking"}})
	tr.Apply(engine.Event{Seq: 2, Time: t0, Path: "E1", Kind: engine.EventStepStart, Payload: engine.StepStarted{Tool: "ask"}})
	tr.Holding([]string{"E1"}, t0)
	tr.Tick(t0.Add(5 * time.Second))
	m := newModel(80, 40, false)
	m.Show(nodeOf(tr, "E1"), nil)
	if !m.SelectTab(inspector.TabUsage) {
		t.Fatalf("no Usage tab for the waiting ask: %v", m.Tabs())
	}
	inOrder(t, body(m), "duration", "5.0s, 5.0s of it held so far, running")
	// The clock goes on: so does what the tab says.
	tr.Tick(t0.Add(7 * time.Second))
	m.Show(nodeOf(tr, "E1"), nil)
	inOrder(t, body(m), "duration", "7.0s, 7.0s of it held so far, running")
}

// TestAbortedWords runs the agent plan under the debugger to its second
// round's stop and aborts there: the round's request was never sent, and
// its inspector says so rather than promise it, and its step says the run
// was aborted before it ended.
func TestAbortedWords(t *testing.T) {
	p, ws := project(t, agentPlan, agentReplies)
	table, rec := debugger.NewBreakpoints(), &livetest.Events{}
	if _, err := table.Set("E1/agent.2", []engine.StopKind{engine.StopRound}, nil); err != nil {
		t.Fatal(err)
	}
	s, err := ws.Debug(p, table, workspace.RunOptions{Sinks: []engine.Sink{rec}})
	if err != nil {
		t.Fatal(err)
	}
	if st := s.Start(context.Background(), nil); st.Stop == nil {
		t.Fatalf("the run did not stop at E1/agent.2: %+v", st)
	}
	if end, err := s.Do(debugger.Command{Decision: engine.Decision{Action: engine.Abort}}); err != nil || end.Status != engine.StatusAborted {
		t.Fatalf("the run ended %s (%v), want aborted", end.Status, err)
	}
	tr := live.New(p)
	for _, e := range rec.All() {
		tr.Apply(e)
	}
	for _, tc := range []struct {
		path string
		tab  inspector.Tab
		want string
	}{
		{"E1/agent.2", inspector.TabModel, "none: the run was aborted before the call was made, or before it ended"},
		{"E1", inspector.TabResult, "Result  ■ aborted: the run was aborted before it ended"},
	} {
		m := newModel(80, 200, false)
		show(t, &m, tr, tc.path, nil)
		if !m.SelectTab(tc.tab) {
			t.Fatalf("%s: no %s tab in %v", tc.path, tc.tab, m.Tabs())
		}
		inOrder(t, body(m), tc.want)
	}
}
