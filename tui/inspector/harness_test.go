package inspector_test

import (
	"context"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/debugger/workspace"
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/tui/common"
	"github.com/stepwise-dev/stepwise/tui/inspector"
	"github.com/stepwise-dev/stepwise/tui/live"
	"github.com/stepwise-dev/stepwise/tui/live/livetest"
)

// agentPlan is one agent step E1 that may call builtin__reshape and must
// answer {count: integer}.
const agentPlan = `
identifier: agentic
steps:
  - id: E1
    tool_name: agent
    input:
      prompt: "Count the issues."
      tools: ["builtin__reshape"]
      output_schema: { type: object, required: [count], properties: { count: { type: integer } } }
  - id: E2
    tool_name: builtin__reshape
    input: { shape: { total: "{{E1.output.count}}" } }
`

// agentReplies make E1 think, call the tool, then answer with a count
// that fails the schema, which the repair pass fixes.
const agentReplies = `
replies:
  - match: E1
    reply:
      text: "Let me look."
      reasoning: "I should count them first."
      tool_calls: [ { name: builtin__reshape, arguments: { shape: { n: 1 } } } ]
      usage: { input_tokens: 120, output_tokens: 30 }
  - match: E1
    reply:
      json: { count: "three" }
      usage: { input_tokens: 200, output_tokens: 10 }
  - match: E1
    role: repair
    reply:
      json: { count: 3 }
      usage: { input_tokens: 90, output_tokens: 5 }
`

// project writes a project with plans/p.yaml and replies.yaml and returns
// the loaded plan and its workspace.
func project(t testing.TB, plan, replies string) (*plans.Plan, *workspace.Workspace) {
	t.Helper()
	dir, ws := livetest.Project(t, map[string]string{"plans/p.yaml": plan, "replies.yaml": replies})
	return livetest.Plan(t, dir, "plans/p.yaml"), ws
}

// run runs a plan to its end through a real engine and returns the tree
// its events build.
func run(t testing.TB, plan, replies string) *live.Tree {
	t.Helper()
	p, events := livetest.Run(t, map[string]string{"plans/p.yaml": plan, "replies.yaml": replies})
	tr := live.New(p)
	for _, e := range events {
		tr.Apply(e)
	}
	return tr
}

// held runs a plan under the debugger until the breakpoint (pattern,
// kinds) stops it, and returns the tree of the events so far and the
// stop. The run is aborted when the test ends.
func held(t testing.TB, plan, replies, pattern string, kinds ...engine.StopKind) (*live.Tree, *debugger.Snapshot) {
	t.Helper()
	p, ws := project(t, plan, replies)
	table, rec := debugger.NewBreakpoints(), &livetest.Events{}
	if _, err := table.Set(pattern, kinds, nil); err != nil {
		t.Fatal(err)
	}
	s, err := ws.Debug(p, table, workspace.RunOptions{Sinks: []engine.Sink{rec}})
	if err != nil {
		t.Fatal(err)
	}
	st := s.Start(context.Background(), nil)
	if st.Stop == nil {
		t.Fatalf("the run did not stop at %s: %+v", pattern, st)
	}
	t.Cleanup(func() { s.Do(debugger.Command{Decision: engine.Decision{Action: engine.Abort}}) })
	tr := live.New(p)
	for _, e := range rec.All() {
		tr.Apply(e)
	}
	return tr, st.Stop
}

// newModel is an inspector of the given size, colour on or off, focused.
func newModel(width, height int, color bool) inspector.Model {
	m := inspector.New(common.New(common.NewTheme(true, color), common.DefaultKeyMap()))
	m.SetSize(width, height)
	m.Focus()
	return m
}

// show shows the node at path of tr.
func show(t testing.TB, m *inspector.Model, tr *live.Tree, path string, stop *debugger.Snapshot) {
	t.Helper()
	n, ok := tr.Node(path)
	if !ok {
		t.Fatalf("no node %s", path)
	}
	m.Show(n, stop)
}

// screen is the view without styling, one string a line.
func screen(m inspector.Model) []string {
	return strings.Split(ansi.Strip(m.View()), "\n")
}

// body is the page lines in view, without the border, the margin and
// trailing blanks, joined by newlines.
func body(m inspector.Model) string {
	lines := screen(m)
	var out []string
	for _, l := range lines[2 : len(lines)-1] {
		r := []rune(l)
		out = append(out, strings.TrimRight(string(r[2:len(r)-1]), " "))
	}
	return strings.TrimRight(strings.Join(out, "\n"), "\n")
}

// press sends keys to the model, one at a time.
func press(m *inspector.Model, keys ...tea.KeyPressMsg) {
	for _, k := range keys {
		*m, _ = m.Update(k)
	}
}

// typed is the key presses that type s.
func typed(s string) []tea.KeyPressMsg {
	var out []tea.KeyPressMsg
	for _, r := range s {
		out = append(out, tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	return out
}

var (
	keyDown    = tea.KeyPressMsg{Code: 'j', Text: "j"}
	keyUp      = tea.KeyPressMsg{Code: 'k', Text: "k"}
	keyBottom  = tea.KeyPressMsg{Code: tea.KeyEnd}
	keyTop     = tea.KeyPressMsg{Code: tea.KeyHome}
	keyNext    = tea.KeyPressMsg{Code: '>', Text: ">"}
	keyPrev    = tea.KeyPressMsg{Code: '<', Text: "<"}
	keySpace   = tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	keyLeft    = tea.KeyPressMsg{Code: 'h', Text: "h"}
	keyRight   = tea.KeyPressMsg{Code: 'l', Text: "l"}
	keySlash   = tea.KeyPressMsg{Code: '/', Text: "/"}
	keyEnter   = tea.KeyPressMsg{Code: tea.KeyEnter}
	keyEsc     = tea.KeyPressMsg{Code: tea.KeyEscape}
	keyNextHit = tea.KeyPressMsg{Code: 'n', Mod: tea.ModCtrl}
	keyPrevHit = tea.KeyPressMsg{Code: 'p', Mod: tea.ModCtrl}
)
