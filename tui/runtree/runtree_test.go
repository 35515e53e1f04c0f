package runtree_test

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/stepwise-dev/stepwise/debugger/workspace"
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/tui/common"
	"github.com/stepwise-dev/stepwise/tui/format"
	"github.com/stepwise-dev/stepwise/tui/live"
	"github.com/stepwise-dev/stepwise/tui/live/livetest"
	"github.com/stepwise-dev/stepwise/tui/runtree"
)

// watched is a plan with something of every shape: a map with a two-step
// body, an agent with a tool call and a repair, a decide whose else branch
// does not run, an exit that ends the run, and a step after it that never
// runs.
const watched = `
identifier: watched
steps:
  - id: E1
    tool_name: map
    input:
      over: [a, b, c]
      concurrency: 1
      do:
        - id: A
          tool_name: builtin__reshape
          input: { shape: { n: "{{item}}" } }
        - id: B
          tool_name: builtin__reshape
          input: { shape: { m: "{{A.n}}" } }
  - id: E2
    tool_name: agent
    input:
      prompt: "Count the issues."
      tools: ["builtin__reshape"]
      output_schema: { type: object, required: [count], properties: { count: { type: integer } } }
  - id: E3
    tool_name: decide
    input:
      if: { value: 1, op: eq, to: 1 }
      then:
        - id: T
          tool_name: builtin__reshape
          input: { shape: {} }
      else: { tool_name: builtin__reshape, input: { shape: {} } }
  - id: E4
    tool_name: exit
    input:
      when: { value: 1, op: eq, to: 1 }
      status: success
      message: done
  - id: E5
    tool_name: builtin__reshape
    input: { shape: {} }
`

const watchedReplies = `
replies:
  - match: E2
    reply:
      text: "Let me look."
      tool_calls: [ { name: builtin__reshape, arguments: { shape: { n: 1 } } } ]
  - match: E2
    reply: { json: { count: "three" } }
  - match: E2
    role: repair
    reply: { json: { count: 3 } }
`

// runPlan is livetest.Run with the events' times set a tenth of a second
// apart, so that the durations on screen do not depend on how fast the
// machine ran the plan; a step's or a tool call's end says it took the
// time since its start, as the engine's would.
func runPlan(t *testing.T, files map[string]string) (*plans.Plan, []engine.Event) {
	t.Helper()
	plan, events := livetest.Run(t, files)
	t0 := time.Unix(1_700_000_000, 0)
	started := map[string]time.Time{}
	for i := range events {
		e := &events[i]
		e.Time = t0.Add(time.Duration(i) * 100 * time.Millisecond)
		since := func() float64 { return float64(e.Time.Sub(started[e.Path]).Microseconds()) / 1000 }
		switch p := e.Payload.(type) {
		case engine.StepStarted, engine.ToolStarted:
			if _, ok := started[e.Path]; !ok { // a step's own call starts after it
				started[e.Path] = e.Time
			}
		case engine.StepEnded:
			p.Ms = since()
			e.Payload = p
		case engine.ToolEnded:
			p.Ms = since()
			e.Payload = p
		}
	}
	return plan, events
}

// watchedRun runs the watched plan and returns its tree with the first n
// events applied (all of them when n < 0), and all the events.
func watchedRun(t *testing.T, n int) (*live.Tree, []engine.Event) {
	t.Helper()
	plan, events := runPlan(t, map[string]string{"plans/p.yaml": watched, "replies.yaml": watchedReplies})
	tr := live.New(plan)
	if n < 0 {
		n = len(events)
	}
	for _, e := range events[:n] {
		tr.Apply(e)
	}
	return tr, events
}

// upTo is how many of events come before the first one at path of kind,
// and that one.
func upTo(t *testing.T, events []engine.Event, path string, kind engine.EventKind) int {
	t.Helper()
	for i, e := range events {
		if e.Path == path && e.Kind == kind {
			return i + 1
		}
	}
	t.Fatalf("no %s event at %s", kind, path)
	return 0
}

func newPane(tr *live.Tree, w, h int, color bool) runtree.Model {
	m := runtree.New(common.New(common.NewTheme(true, color), common.DefaultKeyMap()))
	m.SetSize(w, h)
	m.SetTree(tr)
	return m
}

// screen is the pane as a user reads it, one string a line.
func screen(m runtree.Model) []string {
	return strings.Split(ansi.Strip(m.View()), "\n")
}

// row is the body line of the pane that shows the row at index i, for a
// pane tall enough to show every row from the first.
func row(m runtree.Model, i int) string {
	return screen(m)[1+i]
}

func selected(t *testing.T, m runtree.Model) string {
	t.Helper()
	r, ok := m.Selected()
	if !ok {
		t.Fatal("nothing selected")
	}
	return r.Path
}

var (
	keyDown   = tea.KeyPressMsg{Code: 'j', Text: "j"}
	keyUp     = tea.KeyPressMsg{Code: 'k', Text: "k"}
	keyLeft   = tea.KeyPressMsg{Code: tea.KeyLeft}
	keyRight  = tea.KeyPressMsg{Code: tea.KeyRight}
	keyFold   = tea.KeyPressMsg{Code: 'h', Text: "h"}
	keyUnfold = tea.KeyPressMsg{Code: 'l', Text: "l"}
	keySpace  = tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	keyBottom = tea.KeyPressMsg{Code: 'g', Mod: tea.ModShift, Text: "G"}
	keyHome   = tea.KeyPressMsg{Code: tea.KeyHome}
	keyPgDown = tea.KeyPressMsg{Code: tea.KeyPgDown}
	keyOther  = tea.KeyPressMsg{Code: 'z', Text: "z"}
)

// TestScreens pins the pane's screens, ANSI stripped, in testdata
// (regenerate with -update).
func TestScreens(t *testing.T) {
	cases := []struct {
		name  string
		w, h  int
		setup func(t *testing.T) runtree.Model
	}{
		{"finished_100x26", 100, 26, func(t *testing.T) runtree.Model {
			tr, _ := watchedRun(t, -1)
			m := newPane(tr, 100, 26, false)
			m.Focus()
			m.SelectPath("E2")
			return m
		}},
		{"streaming_100x26", 100, 26, func(t *testing.T) runtree.Model {
			_, events := watchedRun(t, 0)
			tr, _ := watchedRun(t, upTo(t, events, "E2/agent.1/builtin__reshape", engine.EventToolStart))
			return newPane(tr, 100, 26, false)
		}},
		{"stopped_100x14", 100, 14, func(t *testing.T) runtree.Model {
			tr, _ := watchedRun(t, -1)
			m := newPane(tr, 100, 14, false)
			m.Focus()
			// A disabled breakpoint on E1/do.1/B shows as ○.
			m.SetBreakpoints(func(p string) common.BreakMark {
				switch p {
				case "E2", "E2/agent.2/repair":
					return common.BreakOn
				case "E1/do.1/B":
					return common.BreakOff
				}
				return common.NoBreak
			})
			m.SetStop("E2/agent.2/repair")
			return m
		}},
		{"collapsed_60x12", 60, 12, func(t *testing.T) runtree.Model {
			tr, _ := watchedRun(t, -1)
			tr.SetCollapsed("E1", true)
			tr.SetCollapsed("E3", true)
			m := newPane(tr, 60, 12, false)
			m.SelectPath("E2/agent.1/builtin__reshape")
			return m
		}},
		{"narrow_40x10", 40, 10, func(t *testing.T) runtree.Model {
			tr, _ := watchedRun(t, -1)
			m := newPane(tr, 40, 10, false)
			m.SelectPath("E1/do.2/B")
			return m
		}},
		{"failed_80x10", 80, 10, func(t *testing.T) runtree.Model {
			plan, events := runPlan(t, map[string]string{"plans/p.yaml": livetest.FailingMap})
			tr := live.New(plan)
			for _, e := range events {
				tr.Apply(e)
			}
			return newPane(tr, 80, 10, false)
		}},
		{"no_run_60x5", 60, 5, func(t *testing.T) runtree.Model {
			return newPane(nil, 60, 5, false)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			golden.RequireEqual(t, ansi.Strip(tc.setup(t).View())+"\n")
		})
	}
}

// TestRowsAndGlyphs checks every row of a finished run and of one
// stopped half-way: its line carries the glyph of its status in the
// status column, its fold marker, its kind glyph and its label.
func TestRowsAndGlyphs(t *testing.T) {
	finished, events := watchedRun(t, -1)
	streaming, _ := watchedRun(t, upTo(t, events, "E2/agent.1/builtin__reshape", engine.EventToolStart))
	for name, tr := range map[string]*live.Tree{"finished": finished, "streaming": streaming} {
		t.Run(name, func(t *testing.T) {
			m := newPane(tr, 100, tr.Len()+2, false)
			statuses := map[live.Status]int{}
			for i, r := range tr.Rows(0, tr.Len()) {
				line := row(m, i)
				col := 1 + 2 + 4*r.Depth // border, gutter, prefix
				fold := "─"
				switch {
				case r.HasChildren && r.Collapsed:
					fold = "▸"
				case r.HasChildren:
					fold = "▾"
				case r.Depth == 0:
					fold = " "
				}
				if got := ansi.Cut(line, col, col+1); got != fold {
					t.Errorf("%s: fold marker %q, want %q in %q", r.Path, got, fold, line)
				}
				if got, want := ansi.Cut(line, col+2, col+3), runtree.StatusGlyph(r.Status, r.Aborted); got != want {
					t.Errorf("%s (%s): status %q, want %q in %q", r.Path, r.Status, got, want, line)
				}
				if !strings.Contains(line, " "+r.Label) {
					t.Errorf("%s: no label %q in %q", r.Path, r.Label, line)
				}
				statuses[r.Status]++
			}
			for path, glyph := range map[string]string{"E1": "⟳", "E2": "✻", "E3": "⑂", "E4": "⎋"} {
				i, _ := tr.Index(path)
				if line := row(m, i); !strings.Contains(line, glyph+" "+path+"  ") {
					t.Errorf("%s: no kind glyph %s in %q", path, glyph, line)
				}
			}
			if name == "finished" && (statuses[live.OK] == 0 || statuses[live.Exited] != 1 || statuses[live.Pending] != 1 || statuses[live.Skipped] != 1) {
				t.Errorf("finished run statuses %v", statuses)
			}
			if name == "streaming" && (statuses[live.Running] != 3 || statuses[live.Pending] == 0) {
				t.Errorf("streaming run statuses %v", statuses)
			}
		})
	}
}

// TestColumns checks the figures on the right and that a narrowing pane
// drops tokens first, then cost, then the duration, keeping the tree:
// the tree's share of a 120-column window (54) shows time and cost.
func TestColumns(t *testing.T) {
	tr, _ := watchedRun(t, -1)
	i, _ := tr.Index("E2/agent.1")
	r := tr.Rows(i, 1)[0]
	// The spend, then the time, which stays at the end of the row.
	full := format.Tokens(r.Spend.Tokens()) + " tok   " + format.Cost(*r.Spend.Cost()) + "   " + format.Duration(r.Duration) + "│"
	tests := []struct {
		width                 int
		duration, tokens, usd bool
	}{
		{100, true, true, true},
		{62, true, true, true},
		{61, true, false, true},
		{54, true, false, true},
		{50, true, false, true},
		{49, true, false, false},
		{40, true, false, false},
		// The split at 80 columns: the time stays, the names give way.
		{36, true, false, false},
		{30, true, false, false},
		{29, false, false, false},
		{12, false, false, false},
	}
	for _, tc := range tests {
		m := newPane(tr, tc.width, tr.Len()+2, true)
		line := row(m, i)
		has := func(s string) bool { return strings.Contains(line, s) }
		if has(format.Duration(r.Duration)) != tc.duration || has(" tok") != tc.tokens || has("$") != tc.usd {
			t.Errorf("width %d: %q, want duration %v tokens %v cost %v", tc.width, line, tc.duration, tc.tokens, tc.usd)
		}
		if tc.tokens && !has(full) {
			t.Errorf("width %d: columns not aligned as %q in %q", tc.width, full, line)
		}
		if tc.width >= 30 && !has("agent.1") {
			t.Errorf("width %d: the label is cut in %q", tc.width, line)
		}
	}
	// A row without model calls has nothing in the spend's columns: its
	// names take their cells rather than lose their middle.
	j, _ := tr.Index("E1/do.0/A")
	for _, width := range []int{100, 62} {
		m := newPane(tr, width, tr.Len()+2, true)
		if line := row(m, j); !strings.Contains(line, "A  builtin__reshape") {
			t.Errorf("width %d: the names are cut with the spend's cells empty: %q", width, line)
		}
	}
}

// TestWidths draws the pane at many sizes, in every state: every line is
// exactly the pane's width and there are exactly its height of lines.
func TestWidths(t *testing.T) {
	tr, _ := watchedRun(t, -1)
	for _, color := range []bool{true, false} {
		for w := 0; w <= 120; w++ {
			for _, h := range []int{0, 1, 2, 3, 7, 30} {
				for _, tree := range []*live.Tree{tr, nil} {
					m := newPane(tree, w, h, color)
					if w%2 == 0 {
						m.Focus()
					}
					m.SetBreakpoints(func(p string) common.BreakMark {
						if strings.HasPrefix(p, "E2") {
							return common.BreakOn
						}
						return common.NoBreak
					})
					m.SetStop("E2/agent.1/builtin__reshape")
					out := m.View()
					lines := strings.Split(out, "\n")
					if h == 0 {
						if out != "" {
							t.Errorf("%dx%d: %q", w, h, out)
						}
						continue
					}
					if len(lines) != h {
						t.Errorf("%dx%d color=%v: %d lines", w, h, color, len(lines))
					}
					for _, l := range lines {
						if got := ansi.StringWidth(l); got != w {
							t.Errorf("%dx%d color=%v: line %q is %d wide", w, h, color, ansi.Strip(l), got)
						}
					}
				}
			}
		}
	}
}

// sgr matches a select-graphic-rendition escape and captures its
// parameters.
var sgr = regexp.MustCompile(`\x1b\[([0-9;:]*)m`)

// TestNoColor checks that without colour nothing is drawn in colour and
// the screen reads the same as with it: status, selection, stop and
// breakpoints all show as glyphs, the selection also in reverse video.
func TestNoColor(t *testing.T) {
	tr, events := watchedRun(t, 0)
	for _, e := range events[:upTo(t, events, "E2/agent.2/repair", engine.EventRepair)] {
		tr.Apply(e)
	}
	draw := func(color bool) string {
		m := newPane(tr, 100, tr.Len()+2, color)
		m.Focus()
		m.SetBreakpoints(func(p string) common.BreakMark {
			if p == "E1/do.1" {
				return common.BreakOn
			}
			return common.NoBreak
		})
		m.SetStop("E2/agent.2/repair")
		return m.View()
	}
	plain := draw(false)
	for _, match := range sgr.FindAllStringSubmatch(plain, -1) {
		for _, p := range strings.Split(match[1], ";") {
			if n, err := strconv.Atoi(p); err == nil && (n >= 30 && n <= 49 || n >= 90 && n <= 107) {
				t.Fatalf("colour %q without colour", match[0])
			}
		}
	}
	if !strings.Contains(plain, "\x1b[7") && !strings.Contains(plain, ";7m") {
		t.Error("the selected row is not in reverse video")
	}
	if ansi.Strip(plain) != ansi.Strip(draw(true)) {
		t.Errorf("the screen reads differently without colour:\n%s\nwith:\n%s", ansi.Strip(plain), ansi.Strip(draw(true)))
	}
	text := ansi.Strip(plain)
	for _, want := range []string{"watched ⏸ held", "▶      └── ◐ repair", "●   ├─▾ ✓ do.1", "○ E5", "✓ B"} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in\n%s", want, text)
		}
	}
}

// TestSelectionHeldWhileRowsArrive selects a row before the run starts and
// applies the run an event at a time: rows arrive above it (map items,
// rounds, tool calls), and it stays the same node on the same line, while
// the rows above it scroll out of a pane too short for them.
func TestSelectionHeldWhileRowsArrive(t *testing.T) {
	tr, events := watchedRun(t, 0)
	m := newPane(tr, 80, 8, false)
	if !m.SelectPath("E3") {
		t.Fatal("no E3")
	}
	const line = 1 + 2 // the border, then E1 and E2 above it
	if got := screen(m)[line]; !strings.Contains(got, "›▾ ○ ⑂ E3") {
		t.Fatalf("E3 is not selected on line %d: %q", line, got)
	}
	arrived := false
	for _, e := range events {
		before := tr.Len()
		tr.Apply(e)
		arrived = arrived || tr.Len() > before
		if got := selected(t, m); got != "E3" {
			t.Fatalf("after %s at %s the selection is %s", e.Kind, e.Path, got)
		}
		if got := screen(m)[line]; !strings.Contains(got, "›") || !strings.Contains(got, "⑂ E3") {
			t.Fatalf("after %s at %s E3 is not on line %d:\n%s", e.Kind, e.Path, line, strings.Join(screen(m), "\n"))
		}
	}
	if !arrived {
		t.Fatal("no rows arrived")
	}
	if i, _ := tr.Index("E3"); i < 10 {
		t.Errorf("E3 at row %d: the rows arrived below it", i)
	}
}

// TestKeys drives the pane with keys from a selected row and checks where
// the selection lands and what is folded.
func TestKeys(t *testing.T) {
	tests := []struct {
		name      string
		from      string
		keys      []tea.KeyPressMsg
		want      string
		collapsed []string // paths folded afterwards
	}{
		{"down", "E1", []tea.KeyPressMsg{keyDown, keyDown}, "E1/do.0/A", nil},
		{"up stops at the top", "E1/do.0", []tea.KeyPressMsg{keyUp, keyUp, keyUp}, "E1", nil},
		{"bottom and home", "E2", []tea.KeyPressMsg{keyBottom}, "E5", nil},
		{"home", "E2", []tea.KeyPressMsg{keyHome}, "E1", nil},
		{"page down", "E1", []tea.KeyPressMsg{keyPgDown}, "E1/do.2", nil}, // a body of 8 rows pages 7
		{"fold", "E1", []tea.KeyPressMsg{keyFold}, "E1", []string{"E1"}},
		{"fold with the arrow", "E2", []tea.KeyPressMsg{keyLeft}, "E2", []string{"E2"}},
		{"fold a folded top-level row stays", "E1", []tea.KeyPressMsg{keyFold, keyFold}, "E1", []string{"E1"}},
		{"fold a leaf goes to its parent", "E1/do.1/B", []tea.KeyPressMsg{keyFold}, "E1/do.1", nil},
		{"then folds the parent, then goes up", "E1/do.1/B", []tea.KeyPressMsg{keyFold, keyFold, keyFold}, "E1", []string{"E1/do.1"}},
		{"a top-level leaf stays", "E5", []tea.KeyPressMsg{keyFold}, "E5", nil},
		{"unfold", "E1", []tea.KeyPressMsg{keyFold, keyUnfold}, "E1", nil},
		{"unfold an open row goes to its first child", "E2", []tea.KeyPressMsg{keyUnfold, keyRight}, "E2/agent.1/builtin__reshape", nil},
		{"unfold a leaf does nothing", "E4", []tea.KeyPressMsg{keyUnfold}, "E4", nil},
		{"toggle", "E3", []tea.KeyPressMsg{keySpace}, "E3", []string{"E3"}},
		{"toggle twice", "E3", []tea.KeyPressMsg{keySpace, keySpace}, "E3", nil},
		{"moving over a folded row skips its children", "E1", []tea.KeyPressMsg{keySpace, keyDown}, "E2", []string{"E1"}},
		{"other keys do nothing", "E2", []tea.KeyPressMsg{keyOther}, "E2", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, _ := watchedRun(t, -1)
			m := newPane(tr, 80, 10, false)
			m.Focus()
			if !m.SelectPath(tt.from) {
				t.Fatalf("no %s", tt.from)
			}
			for _, k := range tt.keys {
				var cmd tea.Cmd
				m, cmd = m.Update(k)
				if cmd != nil {
					t.Errorf("%s gave a command", k)
				}
			}
			if got := selected(t, m); got != tt.want {
				t.Errorf("selected %s, want %s", got, tt.want)
			}
			var folded []string
			for _, path := range []string{"E1", "E1/do.1", "E2", "E3"} {
				if n, ok := tr.Index(path); ok && tr.Rows(n, 1)[0].Collapsed {
					folded = append(folded, path)
				}
			}
			if strings.Join(folded, " ") != strings.Join(tt.collapsed, " ") {
				t.Errorf("folded %v, want %v", folded, tt.collapsed)
			}
		})
	}
}

// TestHiddenSelection folds the selected node's ancestor from outside the
// pane: the selection falls to the nearest row that shows.
func TestHiddenSelection(t *testing.T) {
	tr, _ := watchedRun(t, -1)
	m := newPane(tr, 80, 30, false)
	m.SelectPath("E1/do.1/B")
	tr.SetCollapsed("E1/do.1", true)
	if got := selected(t, m); got != "E1/do.1" {
		t.Errorf("with its item folded the selection is %s", got)
	}
	tr.SetCollapsed("E1", true)
	if got := selected(t, m); got != "E1" {
		t.Errorf("with its map folded the selection is %s", got)
	}
	if got := screen(m)[1]; !strings.Contains(got, "›▸ ✓ ⟳ E1") {
		t.Errorf("the folded map is not drawn selected: %q", got)
	}
	// Moving on from the row it fell to starts there.
	m, _ = m.Update(keyDown)
	if got := selected(t, m); got != "E2" {
		t.Errorf("down from the folded map went to %s", got)
	}
}

// TestSelectPath selects rows inside folded subtrees.
func TestSelectPath(t *testing.T) {
	tr, _ := watchedRun(t, -1)
	tr.SetCollapsed("E1/do.2", true)
	tr.SetCollapsed("E1", true)
	tr.SetCollapsed("E3", true)
	m := newPane(tr, 80, 6, false)
	m.SelectPath("E3")
	if !m.SelectPath("E1/do.2/B") {
		t.Fatal("SelectPath found no E1/do.2/B")
	}
	if got := selected(t, m); got != "E1/do.2/B" {
		t.Errorf("selected %s", got)
	}
	if _, ok := tr.Index("E1/do.2/B"); !ok {
		t.Error("the row does not show")
	}
	if i, _ := tr.Index("E3"); tr.Rows(i, 1)[0].Collapsed != true {
		t.Error("SelectPath unfolded a row off its path")
	}
	if !strings.Contains(strings.Join(screen(m), "\n"), "›      └── ✓ B") {
		t.Errorf("the selected row is not in view:\n%s", strings.Join(screen(m), "\n"))
	}
	if m.SelectPath("E9") {
		t.Error("SelectPath found a node that does not exist")
	}
	if got := selected(t, m); got != "E1/do.2/B" {
		t.Errorf("a failed SelectPath moved the selection to %s", got)
	}
}

// TestStopAndBreakpoints marks the stop and the breakpoints and clears
// them.
func TestStopAndBreakpoints(t *testing.T) {
	tr, _ := watchedRun(t, -1)
	tr.SetCollapsed("E2", true)
	m := newPane(tr, 80, 30, false)
	// E3's breakpoint is disabled: it shows, as ○.
	m.SetBreakpoints(func(p string) common.BreakMark {
		switch p {
		case "E4", "E2/agent.1":
			return common.BreakOn
		case "E3":
			return common.BreakOff
		}
		return common.NoBreak
	})
	m.SetStop("E2/agent.1/builtin__reshape")
	if got := selected(t, m); got != "E2/agent.1/builtin__reshape" {
		t.Errorf("the stop selected %s", got)
	}
	marks := func() map[string]string {
		out := map[string]string{}
		for i, r := range tr.Rows(0, tr.Len()) {
			if g := ansi.Cut(row(m, i), 1, 3); g != "  " && g != " ›" {
				out[r.Path] = g
			}
		}
		return out
	}
	want := map[string]string{"E2/agent.1": "● ", "E2/agent.1/builtin__reshape": " ▶", "E3": "○ ", "E4": "● "}
	if got := marks(); !maps.Equal(got, want) {
		t.Errorf("marks %q, want %q", got, want)
	}
	m.SetStop("")
	m.SetBreakpoints(nil)
	if got := marks(); len(got) != 0 {
		t.Errorf("marks %q after clearing", got)
	}
	if got := selected(t, m); got != "E2/agent.1/builtin__reshape" {
		t.Errorf("clearing the stop moved the selection to %s", got)
	}
}

// TestClickAndScroll clicks rows and turns the wheel.
func TestClickAndScroll(t *testing.T) {
	tr, _ := watchedRun(t, -1)
	m := newPane(tr, 80, 8, false) // six rows in view
	m.ClickAt(3)
	if got := selected(t, m); got != "E1/do.0/A" {
		t.Errorf("a click on the third row selected %s", got)
	}
	m.ClickAt(0)
	m.ClickAt(7)
	if got := selected(t, m); got != "E1/do.0/A" {
		t.Errorf("a click on the border selected %s", got)
	}
	m.SelectPath("E1")
	m.Scroll(3)
	if got := selected(t, m); got != "E1/do.0/B" {
		t.Errorf("scrolling three rows took the selection to %s", got)
	}
	if got := screen(m)[1]; !strings.Contains(got, "›") {
		t.Errorf("the selection is not on the first line: %q", got)
	}
	m.Scroll(1000)
	if got := screen(m)[6]; !strings.Contains(got, "E5") {
		t.Errorf("scrolled to the end, the last line is %q", got)
	}
	if got := selected(t, m); got != "E3" {
		t.Errorf("at the end the selection is %s", got)
	}
	m.ClickAt(2) // the second line of the view scrolled to the end
	if got := selected(t, m); got != "E3/then" {
		t.Errorf("a click on the scrolled view selected %s", got)
	}
	m.Scroll(-1000)
	if got := selected(t, m); got != "E1/do.1/A" {
		t.Errorf("back at the top the selection is %s", got)
	}
}

// TestTitleAndFooter checks the frame: the plan and the run's status in
// the title, the selection's place in the footer, the hint before a run.
func TestTitleAndFooter(t *testing.T) {
	tr, events := watchedRun(t, 0)
	m := newPane(tr, 80, 30, false)
	top := func() string { return screen(m)[0] }
	bottom := func() string { s := screen(m); return s[len(s)-1] }
	if !strings.Contains(top(), "Run watched ○ pending") {
		t.Errorf("before the run: %q", top())
	}
	if !strings.Contains(bottom(), " 1/8 ") {
		t.Errorf("footer %q", bottom())
	}
	for _, e := range events[:3] {
		tr.Apply(e)
	}
	if !strings.Contains(top(), "Run watched ◐ running") {
		t.Errorf("while it runs: %q", top())
	}
	for _, e := range events[3:] {
		tr.Apply(e)
	}
	m.SelectPath("E5")
	if !strings.Contains(top(), "Run watched ⏏ exited") || !strings.Contains(bottom(), " 21/21 ") {
		t.Errorf("after the run: %q %q", top(), bottom())
	}

	// Another run's tree keeps the selection where it has the node, and
	// drops the stop of the run before.
	m.SetStop("E4")
	next, _ := watchedRun(t, 0)
	m.SetTree(next)
	if got := selected(t, m); got != "E4" {
		t.Errorf("in the next run the selection is %s", got)
	}
	if strings.Contains(strings.Join(screen(m), "\n"), "▶") {
		t.Error("the stop of the run before still shows")
	}

	m.SetTree(nil)
	if _, ok := m.Selected(); ok {
		t.Error("a selection without a tree")
	}
	if !strings.Contains(screen(m)[1], "no run yet: r runs the plan, g debugs it") {
		t.Errorf("no hint: %q", screen(m)[1])
	}
	m.Update(keyDown) // no tree: nothing to move, nothing to break
	m.ClickAt(2)
	m.Scroll(1)
	if m.SelectPath("E1") {
		t.Error("SelectPath without a tree")
	}
}

// TestStatusGlyphs: each status has a glyph of its own, and a unit the
// run's abort ended has one apart from a failed unit's.
func TestStatusGlyphs(t *testing.T) {
	glyphs := map[string]string{"aborted": runtree.StatusGlyph(live.Failed, true)}
	for _, s := range []live.Status{live.Pending, live.Running, live.OK, live.Failed, live.Skipped, live.Exited} {
		g := runtree.StatusGlyph(s, false)
		for other, og := range glyphs {
			if g == og {
				t.Errorf("%s and %s share the glyph %s", s, other, g)
			}
		}
		glyphs[string(s)] = g
	}
}

// TestMarks draws each way a unit came by its result with a glyph of its
// own (decided by hand, replayed, reused by a fork, a record that does
// not say), and marks the duration of a unit that was held at a stop.
func TestMarks(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	tr := live.New(nil)
	seq := uint64(0)
	apply := func(ms int, path string, p any) {
		seq++
		tr.Apply(engine.Event{Seq: seq, Time: at(ms), Path: path, Payload: p})
	}
	apply(0, "", engine.RunStarted{Plan: "p"})
	for i, end := range []engine.StepEnded{
		{Tool: "t", Status: engine.StepSkipped, Decided: "inject"},
		{Tool: "t", Status: engine.StepSkipped, Reused: "replay"},
		{Tool: "t", Status: engine.StepSkipped, Reused: "fork"},
		{Tool: "t", Status: engine.StepSkipped},
		{Tool: "t", Status: engine.StepOK, Ms: 1000, HeldMs: 400},
	} {
		path := fmt.Sprintf("E%d", i+1)
		apply(i*1000, path, engine.StepStarted{Tool: "t"})
		apply(i*1000+int(end.Ms), path, end)
	}
	apply(6000, "E6/agent.1", engine.Decided{Stop: engine.StopReply, Action: "replace"})
	m := newPane(tr, 100, tr.Len()+2, false)
	for path, want := range map[string]string{"E1": "✎", "E2": "↺", "E3": "⇢", "E4": "↷", "E5": "✓", "agent.1": "✎"} {
		i, ok := tr.Index(path)
		if !ok {
			i, _ = tr.Index("E6/" + path)
		}
		if line := row(m, i); !strings.Contains(line, want+" "+path) {
			t.Errorf("%s: no %s in %q", path, want, line)
		}
	}
	i, _ := tr.Index("E5")
	if line := row(m, i); !strings.Contains(line, " 1.0s ⏸") {
		t.Errorf("E5 was held 400ms of its 1s, which its row does not mark: %q", line)
	}
	i, _ = tr.Index("E1")
	if line := row(m, i); strings.Contains(line, "⏸") {
		t.Errorf("E1 was never held, but its row says so: %q", line)
	}
	if n, _ := tr.Node("E5"); n.Held != 400*time.Millisecond {
		t.Errorf("E5 held %v, want 400ms", n.Held)
	}
}

// TestHeldMark runs a map whose first item a hook holds at its step
// stop: the held rows (the item's step, the item, the map) show the held
// mark a space after their wall time, in cells of its own, so that their
// times end in the same column as the others'.
func TestHeldMark(t *testing.T) {
	dir, ws := livetest.Project(t, map[string]string{"plans/p.yaml": `
identifier: held
steps:
  - id: E1
    tool_name: map
    input:
      over: [a, b]
      do:
        - id: A
          tool_name: builtin__reshape
          input: { shape: { n: "{{item}}" } }
  - id: E2
    tool_name: builtin__reshape
    input: { shape: {} }
`})
	plan := livetest.Plan(t, dir, "plans/p.yaml")
	hook := func(_ context.Context, st *engine.Stop) engine.Decision {
		if st.Kind == engine.StopStep && st.Path == "E1/do.0/A" {
			st.Hold()
			time.Sleep(60 * time.Millisecond)
			st.Release()
		}
		return engine.Decision{}
	}
	rec := &livetest.Events{}
	if res, err := ws.Run(context.Background(), plan, nil, workspace.RunOptions{Sinks: []engine.Sink{rec}, Hook: hook}); err != nil || res.Status != engine.StatusOK {
		t.Fatalf("run: %v %+v", err, res)
	}
	tr := live.New(plan)
	for _, e := range rec.All() {
		tr.Apply(e)
	}
	// 36 is the tree's pane in the split at 80 columns: the time and
	// the mark stay there too.
	for _, width := range []int{100, 36} {
		heldMarks(t, tr, width)
	}
}

// heldMarks checks that every row of a pane width wide shows its time
// with the held mark where it was held, the times aligned.
func heldMarks(t *testing.T, tr *live.Tree, width int) {
	t.Helper()
	m := newPane(tr, width, tr.Len()+2, false)
	durationEnd := -1
	for i, r := range tr.Rows(0, tr.Len()) {
		line := row(m, i)
		if w := ansi.StringWidth(line); w != width {
			t.Errorf("%s: a line %d wide: %q", r.Path, w, line)
		}
		dur := format.Duration(r.Duration)
		held := r.Held >= time.Millisecond
		if held != (r.Path == "E1" || r.Path == "E1/do.0" || r.Path == "E1/do.0/A") {
			t.Errorf("%s: held %v", r.Path, r.Held)
		}
		want := dur + "  │"
		if held {
			want = dur + " ⏸│"
		}
		at := strings.LastIndex(line, want)
		if at < 0 {
			t.Errorf("%s: %q does not end in %q", r.Path, line, want)
			continue
		}
		end := ansi.StringWidth(line[:at]) + len(dur)
		if durationEnd < 0 {
			durationEnd = end
		}
		if end != durationEnd {
			t.Errorf("%s: its time ends at column %d, the first row's at %d:\n%s", r.Path, end, durationEnd, strings.Join(screen(m), "\n"))
		}
	}
}

// TestTitleOfARunAgain: the title says where a replay or a fork comes
// from; a narrow pane cuts the run's id short, then the middle of the
// plan's name, and keeps where a fork starts and how the run stands.
func TestTitleOfARunAgain(t *testing.T) {
	const id = "57a18d9e12ab3c4d"
	for _, tc := range []struct {
		name   string
		origin runtree.Origin
		width  int
		want   string
	}{
		{"a wide fork says all", runtree.Origin{What: "fork", Run: id, From: "E4"}, 80, "Run watched fork of 57a18d9e12ab from E4 ○ pending"},
		{"a narrow fork cuts the id", runtree.Origin{What: "fork", Run: id, From: "E4"}, 48, "Run watched fork of 57a18 from E4 ○ pending"},
		{"a narrow replay", runtree.Origin{What: "replay", Run: id}, 42, "Run watched replay of 57a18 ○ pending"},
		{"a long plan name loses its middle before where a fork starts", runtree.Origin{What: "fork", Run: id, From: "post/then"}, 55,
			"Run wat…_queue fork of 57a18 from post/then ⏸ held"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, _ := watchedRun(t, 0)
			if tc.origin.From == "post/then" {
				plan, _ := runPlan(t, map[string]string{"plans/p.yaml": strings.Replace(watched, "identifier: watched", "identifier: watched_triage_queue", 1), "replies.yaml": watchedReplies})
				tr = live.New(plan)
			}
			// In colour too: the title's paint takes no room.
			for _, color := range []bool{false, true} {
				m := newPane(tr, tc.width, 10, color)
				m.Focus()
				if tc.origin.From == "post/then" {
					m.SetStop("E1")
				}
				m.SetOrigin(tc.origin)
				if top := screen(m)[0]; !strings.Contains(top, tc.want) {
					t.Errorf("colour %v: title %q, want %q", color, top, tc.want)
				}
			}
		})
	}
}

// TestDeepRows draws a run whose rows go six deep (a decide's branch
// calls a plan whose map's items each run a step) in the tree's pane of
// the split at 80 columns and narrower: every row, however deep, shows
// its status glyph and its whole short name, giving up its time, then
// the width of its guide lines, first.
func TestDeepRows(t *testing.T) {
	plan, events := runPlan(t, map[string]string{"plans/p.yaml": `
identifier: deep
steps:
  - id: post
    tool_name: decide
    input:
      if: { value: 1, op: eq, to: 1 }
      then:
        - id: notes
          tool_name: plan__inner
          input: {}
      else: { tool_name: builtin__reshape, input: { shape: {} } }
`, "plans/inner.yaml": `
identifier: inner
steps:
  - id: comments
    tool_name: map
    input:
      over: [a, b]
      do:
        - id: posted
          tool_name: builtin__reshape
          input: { shape: { n: "{{item}}" } }
`})
	tr := live.New(plan)
	for _, e := range events {
		tr.Apply(e)
	}
	deepest := 0
	for _, width := range []int{36, 30} {
		m := newPane(tr, width, tr.Len()+2, false)
		for i, r := range tr.Rows(0, tr.Len()) {
			deepest = max(deepest, r.Depth)
			line := row(m, i)
			want := runtree.StatusGlyph(r.Status, r.Aborted) + " "
			if !strings.Contains(line, want) || !strings.Contains(line, r.Label) {
				t.Errorf("width %d: %s (depth %d) reads %q; want its glyph %s and its name %s", width, r.Path, r.Depth, line, want, r.Label)
			}
		}
	}
	if deepest < 5 {
		t.Errorf("the deepest row is %d deep; the test wants rows at least 5 deep", deepest)
	}
}
