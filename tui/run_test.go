package tui

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/tui/breakpoints"
	"github.com/stepwise-dev/stepwise/tui/common"
	"github.com/stepwise-dev/stepwise/tui/format"
	"github.com/stepwise-dev/stepwise/tui/inspector"
	"github.com/stepwise-dev/stepwise/tui/live"
)

// The tests of this file press the workbench's run and debug keys over a
// real project (project_test.go): real sessions, real tools, a real run
// store. Each case brings the workbench to a state (the plan view, a
// finished run, a run held at a stop, a run going on), presses keys, and
// checks the state and what is on screen.

// benchCase is one case of a key table.
type benchCase struct {
	name  string
	setup func(b *bench)
	keys  []tea.Msg // pressed one by one, each settled
	check func(t *testing.T, b *bench)
}

// runCases runs a key table, each case on a project of its own.
func runCases(t *testing.T, cases []benchCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := newBench(t, 120, 40)
			if tc.setup != nil {
				tc.setup(b)
			}
			b.press(tc.keys...)
			tc.check(t, b)
			if !b.quit {
				checkScreen(t, b.m, b.w, b.h)
			}
		})
	}
}

// The states a case starts from.

// toDoc shows the plan at index doc.
func (b *bench) toDoc(doc int) {
	b.t.Helper()
	for range doc {
		b.press(keyNextPlan)
	}
}

// inputsFor are the keys that accept the inputs form, for the plan that
// has one.
func inputsFor(doc int) []tea.Msg {
	if doc == docFlow {
		return []tea.Msg{keySubmit}
	}
	return nil
}

// runToEnd runs a plan to its end.
func (b *bench) runToEnd(doc int) {
	b.t.Helper()
	b.toDoc(doc)
	b.press(keyRun)
	b.press(inputsFor(doc)...)
}

// debugTo starts a debug run of a plan held at its first stop, or at a
// breakpoint on pattern set first.
func (b *bench) debugTo(doc int, pattern string) {
	b.t.Helper()
	b.toDoc(doc)
	if pattern != "" {
		b.press(command("break " + pattern)...)
	}
	b.press(keyDebug)
	b.press(inputsFor(doc)...)
}

// goSlow starts a plain run of the slow plan and waits until its first
// step waits at the gate: the run goes on, and is not held.
func (b *bench) goSlow() {
	b.t.Helper()
	b.toDoc(docSlow)
	b.send(keyRun)
	b.until("W0 to wait at its gate", func(m model) bool {
		n, ok := m.runPage.run.tree.Node("W0")
		return ok && n.Status == live.Running
	})
}

// finish opens the slow plan's gate and lets the run go on.
func (b *bench) finish() {
	b.t.Helper()
	b.p.open(b.t)
	b.settle()
}

// The checks.

// wantHeld checks the run is held at a stop of the kind at path, for a
// reason that says reason, and that the screen says so.
func wantHeld(t *testing.T, b *bench, path string, kind engine.StopKind, reason string) {
	t.Helper()
	r := b.m.runPage.run
	if !r.held() {
		state := "no run"
		if r != nil {
			state = fmt.Sprintf("status %q, busy %v", r.state.Status, r.busy)
		}
		t.Fatalf("the run is not held (%s); want held at %s (%s); notice %q", state, path, kind, b.m.notice.text)
	}
	st := r.state
	if st.Stop.Path != path || st.Stop.Kind != kind || !strings.Contains(st.Reason.String(), reason) {
		t.Fatalf("held at %s (%s) for %q, want %s (%s) for %q", st.Stop.Path, st.Stop.Kind, st.Reason, path, kind, reason)
	}
	if !b.m.runShown() {
		t.Error("a held run is not on show")
	}
	wantScreen(t, b, "⏸ held at "+path+" ("+string(kind)+")")
	// An overlay on top says its own keys; the page's are the stop's.
	if _, ok := b.m.overlays.top(); !ok {
		wantScreen(t, b, "n next · s in · o out · c continue · i inject · p print · a abort")
	}
}

// wantEnded checks the run has ended with status, by the session's word
// and by its tree's.
func wantEnded(t *testing.T, b *bench, status string) {
	t.Helper()
	r := b.m.runPage.run
	if r == nil || !r.state.Finished || r.busy {
		t.Fatalf("the run has not ended; notice %q", b.m.notice.text)
	}
	if r.state.Status.String() != status {
		t.Fatalf("the run ended %s (%s), want %s", r.state.Status, r.state.Error, status)
	}
	if got := r.tree.Totals().RunStatus; got.String() != status {
		t.Errorf("the run tree says the run ended %q, want %q", got, status)
	}
}

// wantNotice checks the status line's notice says text.
func wantNotice(t *testing.T, b *bench, text string) {
	t.Helper()
	if !strings.Contains(b.m.notice.text, text) {
		t.Errorf("notice %q, want it to say %q", b.m.notice.text, text)
	}
}

// wantScreen checks the screen shows every text.
func wantScreen(t *testing.T, b *bench, texts ...string) {
	t.Helper()
	s := b.screen()
	for _, text := range texts {
		if !strings.Contains(s, text) {
			t.Errorf("the screen does not show %q:\n%s", text, s)
			return
		}
	}
}

// wantNoScreen checks the screen shows none of texts.
func wantNoScreen(t *testing.T, b *bench, texts ...string) {
	t.Helper()
	s := b.screen()
	for _, text := range texts {
		if strings.Contains(s, text) {
			t.Errorf("the screen shows %q:\n%s", text, s)
			return
		}
	}
}

// overlay names one of the workbench's overlays, for a test to say which
// it wants on top.
type overlay func(*panels) common.Component

var (
	overlayNone        overlay = func(*panels) common.Component { return nil }
	overlayHelp        overlay = func(p *panels) common.Component { return &p.help }
	overlayEditor      overlay = func(p *panels) common.Component { return &p.editor }
	overlayForm        overlay = func(p *panels) common.Component { return &p.form }
	overlayCatalog     overlay = func(p *panels) common.Component { return &p.catalog }
	overlayRuns        overlay = func(p *panels) common.Component { return &p.runs }
	overlayDiff        overlay = func(p *panels) common.Component { return &p.diff }
	overlayBreakpoints overlay = func(p *panels) common.Component { return &p.breakpoints }
)

// overlayIs reports whether o is the overlay on top, or, for overlayNone,
// whether none is open.
func overlayIs(m model, o overlay) bool {
	top, _ := m.overlays.top()
	return top.Component == o(m.panels)
}

// wantOverlay checks which overlay is open.
func wantOverlay(t *testing.T, b *bench, o overlay) {
	t.Helper()
	if !overlayIs(b.m, o) {
		top, _ := b.m.overlays.top()
		t.Errorf("overlay %T open, want %T", top.Component, o(b.m.panels))
	}
}

// wantNoRun checks no run was started or opened.
func wantNoRun(t *testing.T, b *bench) {
	t.Helper()
	if b.m.runPage.run != nil {
		t.Errorf("a run started (status %q)", b.m.runPage.run.state.Status)
	}
}

// node is the run tree's node at path, which must exist.
func node(t *testing.T, b *bench, path string) live.Node {
	t.Helper()
	n, ok := b.m.runPage.run.tree.Node(path)
	if !ok {
		t.Fatalf("the run tree has no %s", path)
	}
	return n
}

// jsonEqual compares a value with JSON text, as JSON.
func jsonEqual(t *testing.T, got any, want string) {
	t.Helper()
	g, _ := json.Marshal(got)
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	ws, _ := json.Marshal(w)
	if string(g) != string(ws) {
		t.Errorf("value %s, want %s", g, ws)
	}
}

// treeLine is the line of a tree pane's view that shows label (a row's
// own text, as "S1  builtin__reshape").
func treeLine(t *testing.T, view, label string) string {
	t.Helper()
	for _, l := range strings.Split(ansi.Strip(view), "\n") {
		if strings.Contains(l, label) {
			return l
		}
	}
	t.Fatalf("no row %q in:\n%s", label, ansi.Strip(view))
	return ""
}

// breakMarked reports whether a tree line carries the breakpoint mark in
// its gutter.
func breakMarked(line string) bool { return gutterHas(line, '●') }

// breakOffMarked reports whether a tree line carries the mark of a
// disabled breakpoint in its gutter.
func breakOffMarked(line string) bool { return gutterHas(line, '○') }

func gutterHas(line string, mark rune) bool {
	gutter := []rune(line)
	return len(gutter) > 3 && strings.ContainsRune(string(gutter[:3]), mark)
}

func TestRunKey(t *testing.T) {
	runCases(t, []benchCase{
		{"r asks for the inputs of a plan that has an input_schema", nil, seq(keyRun), func(t *testing.T, b *bench) {
			wantOverlay(t, b, overlayForm)
			wantNoRun(t, b)
			wantScreen(t, b, "inputs of flow", "topic *", "bugs", "limit", "ctrl+s run")
		}},
		{"r then ctrl+s runs the plan to its end", nil, seq(keyRun, keySubmit), func(t *testing.T, b *bench) {
			wantOverlay(t, b, overlayNone)
			wantEnded(t, b, "ok")
			if b.m.runPage.run.debug || !b.m.runShown() {
				t.Errorf("debug %v, run view %v: want a plain run on show", b.m.runPage.run.debug, b.m.runShown())
			}
			for _, p := range []string{"E0", "E1/do.0", "E1/do.1", "E1/do.2", "E2/agent.1/builtin__reshape", "E2/agent.2/repair"} {
				if n := node(t, b, p); n.Status != live.OK {
					t.Errorf("%s is %s, want ok", p, n.Status)
				}
			}
			jsonEqual(t, node(t, b, "E0").Result, `{"items": ["a", "b", "c"], "topic": "bugs"}`)
			wantNotice(t, b, "w timeline · $ spend")
			wantScreen(t, b, "Run flow ✓ ok", "do.2  user__lookup", "agent.2", "repair", "✓ ok  ·  w timeline · $ spend", "3 calls · 290 tok · $0.0003")
		}},
		{"r runs a plan without inputs at once", func(b *bench) { b.toDoc(docSimple) }, seq(keyRun), func(t *testing.T, b *bench) {
			wantOverlay(t, b, overlayNone)
			wantEnded(t, b, "ok")
			jsonEqual(t, node(t, b, "S1").Result, `{"echo": "hello"}`)
		}},
		{"r in the run view runs the plan again", func(b *bench) { b.runToEnd(docSimple) }, seq(keyRun), func(t *testing.T, b *bench) {
			wantEnded(t, b, "ok")
			if len(b.seen) != 2 || b.m.runPage.run != b.seen[1] {
				t.Errorf("%d runs, want the second on show", len(b.seen))
			}
			b.p.waitRecorded(t, "simple", 2)
		}},
		{"esc closes the inputs form without running", nil, seq(keyRun, keyEsc), func(t *testing.T, b *bench) {
			wantOverlay(t, b, overlayNone)
			wantNoRun(t, b)
		}},
		{"r while a run is held is refused", func(b *bench) { b.debugTo(docSimple, "") }, seq(keyRun), func(t *testing.T, b *bench) {
			wantNotice(t, b, "a run is already going; a aborts it")
			wantHeld(t, b, "S0", engine.StopStep, "entry")
			if len(b.seen) != 1 {
				t.Errorf("%d runs started, want 1", len(b.seen))
			}
		}},
		{"r on a plan with inputs while a run is held is refused without a form", func(b *bench) { b.debugTo(docFlow, "") }, seq(keyRun), func(t *testing.T, b *bench) {
			wantOverlay(t, b, overlayNone)
			wantNotice(t, b, "a run is already going")
			wantHeld(t, b, "E0", engine.StopStep, "entry")
		}},
		{"a plain run does not stop at a failure", func(b *bench) { b.toDoc(docFailing) }, seq(keyRun), func(t *testing.T, b *bench) {
			wantEnded(t, b, "failed")
			wantNotice(t, b, "the run failed: plan failed at step F1")
			if n := node(t, b, "F1"); n.Status != live.Failed {
				t.Errorf("F1 is %s, want failed", n.Status)
			}
			wantScreen(t, b, "Run failing ✗ failed")
		}},
		{"r while a run goes on is refused", func(b *bench) { b.goSlow() }, nil, func(t *testing.T, b *bench) {
			b.send(keyRun)
			wantNotice(t, b, "a run is already going")
			b.finish()
			wantEnded(t, b, "ok")
		}},
	})
}

func TestDebugKey(t *testing.T) {
	runCases(t, []benchCase{
		{"g stops at the first stop when no breakpoint is set", func(b *bench) { b.toDoc(docSimple) }, seq(keyDebug), func(t *testing.T, b *bench) {
			wantHeld(t, b, "S0", engine.StopStep, "entry")
			if !b.m.runPage.run.debug {
				t.Error("g started a plain run")
			}
			wantFocus(t, b.m, paneTree)
			if l := treeLine(t, b.m.runPage.tree.View(), "S0  builtin__reshape"); !strings.Contains(l, "▶") {
				t.Errorf("the stop is not marked on its row: %q", l)
			}
		}},
		{"g runs to a breakpoint", func(b *bench) { b.toDoc(docSimple) }, seq(keyDown, keyDown, keyBreak, keyDebug), func(t *testing.T, b *bench) {
			wantHeld(t, b, "S1", engine.StopStep, "breakpoint 1 (S1)")
			jsonEqual(t, node(t, b, "S0").Result, `{"greeting": "hello"}`)
		}},
		{"g asks for the inputs first, then holds the run", nil, seq(keyDebug), func(t *testing.T, b *bench) {
			wantScreen(t, b, "ctrl+s debug")
			// The key bar names ctrl+s as the form's box does.
			if lines := strings.Split(strings.TrimRight(b.screen(), "\n"), "\n"); !strings.Contains(lines[len(lines)-1], "ctrl+s debug") {
				t.Errorf("the key bar reads %q, want ctrl+s debug", lines[len(lines)-1])
			}
			wantOverlay(t, b, overlayForm)
			wantNoRun(t, b)
			b.press(keySubmit)
			wantHeld(t, b, "E0", engine.StopStep, "entry")
		}},
		{"g with only a disabled breakpoint stops at the first stop", func(b *bench) { b.toDoc(docSimple) },
			seq(command("break S1"), command("disable 1"), keyDebug), func(t *testing.T, b *bench) {
				wantHeld(t, b, "S0", engine.StopStep, "entry")
			}},
		{"g in the run view of a finished run debugs the plan again", func(b *bench) { b.runToEnd(docSimple) }, seq(keyDebug), func(t *testing.T, b *bench) {
			wantHeld(t, b, "S0", engine.StopStep, "entry")
		}},
		{"g while a run is held is refused", func(b *bench) { b.debugTo(docSimple, "") }, seq(keyDebug), func(t *testing.T, b *bench) {
			wantNotice(t, b, "a run is already going")
			wantHeld(t, b, "S0", engine.StopStep, "entry")
		}},
		{"a breakpoint with no kinds stops at every stop of its path; its hits are kept", func(b *bench) { b.debugTo(docSimple, "S1") }, seq(keyContinue), func(t *testing.T, b *bench) {
			wantHeld(t, b, "S1", engine.StopResult, "breakpoint 1 (S1)")
			b.press(keyBreakPanel)
			wantScreen(t, b, "1  S1", "2 hits")
		}},
	})
}

func TestValidateKey(t *testing.T) {
	runCases(t, []benchCase{
		{"v checks the plan again", func(b *bench) { b.toDoc(docSimple) }, seq(keyValidate), func(t *testing.T, b *bench) {
			wantNotice(t, b, ".stepwise/plans/simple.yaml checked: valid")
		}},
		{"v reads the file again and shows its problems", func(b *bench) {
			b.toDoc(docSimple)
			writeTestFile(b.t, b.p.planFile("simple"), strings.Replace(simplePlan, "S0.greeting", "S7.greeting", 1))
		}, seq(keyValidate), func(t *testing.T, b *bench) {
			wantNotice(t, b, "checked: 1 problem")
			if d := b.m.planPage.document(); b.m.planPage.problems.Len() == 0 || d.Report.OK() {
				t.Error("the problems pane lists nothing")
			}
			wantScreen(t, b, "S7")
			b.press(keyRun)
			wantNoRun(t, b)
			wantNotice(t, b, "has problems; fix them (v validates again) before running it")
		}},
		{"v in the run view checks the plan and keeps the run on show", func(b *bench) { b.runToEnd(docSimple) }, seq(keyValidate), func(t *testing.T, b *bench) {
			wantNotice(t, b, "checked: valid")
			if !b.m.runShown() {
				t.Error("v left the run view")
			}
		}},
		{"v while a run is held keeps it held", func(b *bench) { b.debugTo(docSimple, "") }, seq(keyValidate, keyNext), func(t *testing.T, b *bench) {
			wantHeld(t, b, "S0", engine.StopResult, "next")
		}},
	})
}

// TestStepKeys moves held runs with n, enter, i, o and c.
func TestStepKeys(t *testing.T) {
	runCases(t, []benchCase{
		{"n moves over the stop", func(b *bench) { b.debugTo(docSimple, "") }, seq(keyNext), func(t *testing.T, b *bench) {
			wantHeld(t, b, "S0", engine.StopResult, "next")
		}},
		{"n twice goes to the next step", func(b *bench) { b.debugTo(docSimple, "") }, seq(keyNext, keyNext), func(t *testing.T, b *bench) {
			wantHeld(t, b, "S1", engine.StopStep, "next")
		}},
		{"enter at a stop is n", func(b *bench) { b.debugTo(docSimple, "") }, seq(keyEnter, keyEnter), func(t *testing.T, b *bench) {
			wantHeld(t, b, "S1", engine.StopStep, "next")
		}},
		{"enter from the inspector is n too", func(b *bench) { b.debugTo(docSimple, "") }, seq(keyTab, keyEnter), func(t *testing.T, b *bench) {
			wantHeld(t, b, "S0", engine.StopResult, "next")
		}},
		{"n at a map step goes over its items to its result", func(b *bench) { b.debugTo(docFlow, "E1") }, seq(keyNext), func(t *testing.T, b *bench) {
			wantHeld(t, b, "E1", engine.StopResult, "breakpoint 1 (E1)")
			if n := node(t, b, "E1/do.2"); n.Status != live.OK {
				t.Errorf("E1/do.2 is %s", n.Status)
			}
		}},
		{"n past the last stop ends the run", func(b *bench) { b.debugTo(docSimple, "") }, seq(keyNext, keyNext, keyNext, keyNext), func(t *testing.T, b *bench) {
			wantEnded(t, b, "ok")
			wantScreen(t, b, "j/k move · tab pane · r run · g debug")
		}},
		{"n with no run held says so", nil, seq(keyNext), func(t *testing.T, b *bench) {
			wantNotice(t, b, "no run is held; g starts a debug run")
		}},
		{"n after the run ended says so", func(b *bench) { b.runToEnd(docSimple) }, seq(keyNext), func(t *testing.T, b *bench) {
			wantNotice(t, b, "no run is held")
		}},
		{"n while the run goes on says it is not held", func(b *bench) { b.goSlow() }, nil, func(t *testing.T, b *bench) {
			b.send(keyNext)
			wantNotice(t, b, "the run is not held at a stop; z pauses it")
			b.finish()
			wantEnded(t, b, "ok")
		}},
		{"enter with no run held does nothing to runs", func(b *bench) { b.toDoc(docSimple) }, seq(keyDown, keyEnter), func(t *testing.T, b *bench) {
			wantNoRun(t, b)
			wantRow(t, b.m, 1, "S0")
		}},
		{"s steps into a map's first item", func(b *bench) { b.debugTo(docFlow, "E1") }, seq(keyStepIn), func(t *testing.T, b *bench) {
			wantHeld(t, b, "E1/do.0", engine.StopStep, "step")
		}},
		{"s steps into an agent's round and its tool call", func(b *bench) { b.debugTo(docFlow, "E2") }, seq(keyStepIn, keyStepIn, keyStepIn), func(t *testing.T, b *bench) {
			wantHeld(t, b, "E2/agent.1/builtin__reshape", engine.StopTool, "step")
		}},
		{"s with no run held says so", nil, seq(keyStepIn), func(t *testing.T, b *bench) {
			wantNotice(t, b, "no run is held")
		}},
		{"o steps out of a map item to the map's result", func(b *bench) { b.debugTo(docFlow, "E1/do.0 step") }, seq(keyStepOut), func(t *testing.T, b *bench) {
			wantHeld(t, b, "E1", engine.StopResult, "step out")
		}},
		{"o with no run held says so", func(b *bench) { b.runToEnd(docSimple) }, seq(keyStepOut), func(t *testing.T, b *bench) {
			wantNotice(t, b, "no run is held")
		}},
		{"c runs to the next breakpoint", func(b *bench) { b.debugTo(docFlow, "E1/do.*") }, seq(keyContinue), func(t *testing.T, b *bench) {
			wantHeld(t, b, "E1/do.0", engine.StopResult, "breakpoint 1 (E1/do.*)")
		}},
		{"c with no breakpoint ahead runs to the end", func(b *bench) { b.debugTo(docSimple, "") }, seq(keyContinue), func(t *testing.T, b *bench) {
			wantEnded(t, b, "ok")
			wantNotice(t, b, "w timeline · $ spend")
		}},
		{"c with no run held says so", nil, seq(keyContinue), func(t *testing.T, b *bench) {
			wantNotice(t, b, "no run is held")
		}},
	})
}

// TestInjectKey opens the value editor with s at a stop and at an ask.
func TestInjectKey(t *testing.T) {
	runCases(t, []benchCase{
		{"i opens the editor on the value the stop suggests", func(b *bench) { b.debugTo(docFlow, "E1/do.0") }, seq(keySkip), func(t *testing.T, b *bench) {
			wantOverlay(t, b, overlayEditor)
			wantScreen(t, b, "inject a result for E1/do.0: it will not run", `"name": ""`, "✓ matches the schema")
			jsonEqual(t, b.m.runPage.run.state.Stop.Prefill, `{"name": ""}`)
		}},
		{"ctrl+s injects a valid value and the tree shows it", func(b *bench) { b.debugTo(docFlow, "E1/do.0") },
			seq(keySkip, replaceText(`{"name": "zed", "count": 9}`), keySubmit), func(t *testing.T, b *bench) {
				wantOverlay(t, b, overlayNone)
				wantHeld(t, b, "E1", engine.StopResult, "next")
				n := node(t, b, "E1/do.0")
				if n.Status != live.Skipped {
					t.Errorf("E1/do.0 is %s, want skipped", n.Status)
				}
				jsonEqual(t, n.Result, `{"name": "zed", "count": 9}`)
				// Decided by hand, with a glyph of its own; held for as
				// long as the editor was open.
				if l := treeLine(t, b.m.runPage.tree.View(), "do.0"); !strings.Contains(l, "✎ do.0") {
					t.Errorf("the injected item is not drawn decided by hand: %q", l)
				}
				if n.Decided != "inject" || n.Held <= 0 {
					t.Errorf("E1/do.0 decided %q, held %v; want decided by inject, held", n.Decided, n.Held)
				}
				// The injected value is what the next step reads.
				b.press(keyNext)
				wantHeld(t, b, "E2", engine.StopStep, "next")
				b.press(command("print E1.results.0.name")...)
				wantNotice(t, b, `E1.results.0.name = "zed"`)
				b.press(command("goto E1/do.0")...)
				if !b.m.runPage.inspector.SelectTab(inspector.TabResult) {
					t.Fatalf("no Result tab at E1/do.0 in %v", b.m.runPage.inspector.Tabs())
				}
				wantScreen(t, b, `"name": "zed"`)
			}},
		{"an invalid value is refused and the run stays held", func(b *bench) { b.debugTo(docFlow, "E1/do.0") },
			seq(keySkip, replaceText(`{"name": 5}`), keySubmit), func(t *testing.T, b *bench) {
				wantOverlay(t, b, overlayEditor)
				wantScreen(t, b, "fix the problems above first", "/name")
				if !b.m.runPage.run.held() || b.m.runPage.run.state.Stop.Path != "E1/do.0" {
					t.Fatal("the run moved on")
				}
				if n := node(t, b, "E1/do.0"); n.Status == live.Skipped {
					t.Error("the refused value was injected")
				}
				// The text was changed: the first esc asks, the second
				// discards.
				b.press(keyEsc, keyEsc)
				wantOverlay(t, b, overlayNone)
				wantHeld(t, b, "E1/do.0", engine.StopStep, "breakpoint 1")
			}},
		{"JSON that does not parse is refused", func(b *bench) { b.debugTo(docFlow, "E1/do.0") },
			seq(keySkip, replaceText(`{"name": `), keySubmit), func(t *testing.T, b *bench) {
				wantOverlay(t, b, overlayEditor)
				wantScreen(t, b, "1:10", "fix the problems above first")
			}},
		{"esc closes the editor and leaves the run held", func(b *bench) { b.debugTo(docSimple, "") }, seq(keySkip, keyEsc), func(t *testing.T, b *bench) {
			wantOverlay(t, b, overlayNone)
			wantHeld(t, b, "S0", engine.StopStep, "entry")
		}},
		{"i at an error stop replaces the failure", func(b *bench) { b.debugTo(docFailing, "") },
			seq(keyContinue, keySkip, replaceText(`{"text": "mended"}`), keySubmit, keyContinue), func(t *testing.T, b *bench) {
				wantEnded(t, b, "ok")
				jsonEqual(t, node(t, b, "F1").Result, `{"text": "mended"}`)
			}},
		{"i with no run held says so", nil, seq(keySkip), func(t *testing.T, b *bench) {
			wantOverlay(t, b, overlayNone)
			wantNotice(t, b, "i injects a value where a run is held; no run is held")
		}},
		{"an ask waits without taking the keys; enter opens the answer editor", func(b *bench) { b.debugTo(docAsking, "") }, seq(keyNext), func(t *testing.T, b *bench) {
			wantOverlay(t, b, overlayNone)
			wantNotice(t, b, "A0 asks: Ship it?")
			wantScreen(t, b, "enter/i answer · :decline decline")
			b.press(keyUp, keyDown)
			wantOverlay(t, b, overlayNone)
			b.press(keyEnter)
			wantOverlay(t, b, overlayEditor)
			wantScreen(t, b, "A0 asks: Ship it?", `"ship": false`, "read by: A1 (A0.answer.ship)")
			if r := b.m.runPage.run; !r.held() || r.state.Stop.Kind != engine.StopAsk {
				t.Fatal("not held at the ask")
			}
		}},
		{"an answer goes on to the ask's result", func(b *bench) { b.debugTo(docAsking, "") },
			seq(keyNext, keySkip, replaceText(`{"ship": true}`), keySubmit), func(t *testing.T, b *bench) {
				wantHeld(t, b, "A0", engine.StopResult, "next")
				b.press(keyContinue)
				wantEnded(t, b, "ok")
				jsonEqual(t, node(t, b, "A1").Result, `{"shipped": true}`)
			}},
		{"an answer that breaks the ask's schema is refused", func(b *bench) { b.debugTo(docAsking, "") },
			seq(keyNext, keySkip, replaceText(`{"ship": "yes"}`), keySubmit), func(t *testing.T, b *bench) {
				wantOverlay(t, b, overlayEditor)
				wantScreen(t, b, "fix the problems above first")
				if r := b.m.runPage.run; !r.held() || r.state.Stop.Kind != engine.StopAsk {
					t.Fatal("the run moved on")
				}
			}},
		{"c twice at an ask opens the answer editor and types no c", func(b *bench) { b.debugTo(docAsking, "") }, seq(keyNext, keyContinue), func(t *testing.T, b *bench) {
			wantOverlay(t, b, overlayEditor)
			wantScreen(t, b, "c opened the editor: pressed again here, it is not typed")
			b.press(keyContinue)
			if got := b.m.panels.editor.Text(); strings.Contains(got, "c") {
				t.Errorf("the second c was typed: %q", got)
			}
			wantNoScreen(t, b, "c opened the editor")
			// The key after it types as any key does.
			b.press(keyContinue)
			if got := b.m.panels.editor.Text(); !strings.HasPrefix(got, "c") {
				t.Errorf("a third c was not typed: %q", got)
			}
		}},
		{"esc after a change asks first; esc again discards", func(b *bench) { b.debugTo(docAsking, "") },
			seq(keyNext, keySkip, replaceText(`{"ship": true}`), keyEsc), func(t *testing.T, b *bench) {
				wantOverlay(t, b, overlayEditor)
				wantScreen(t, b, "esc again discards your changes · ctrl+s accepts")
				// The key bar and the editor's frame say what esc does now.
				wantScreen(t, b, "esc discard changes · tab next field", "ctrl+s accept · esc discard changes")
				wantNoScreen(t, b, "esc cancel")
				// Another key goes on editing, and disarms the discard.
				b.press(keyEnd, keyEsc)
				wantOverlay(t, b, overlayEditor)
				b.press(keyEsc)
				wantOverlay(t, b, overlayNone)
				if r := b.m.runPage.run; !r.held() || r.state.Stop.Kind != engine.StopAsk {
					t.Fatal("discarding the answer moved the run")
				}
			}},
		{"at a round stop the editor says the value is the round's reply, given in the model's place", func(b *bench) { b.debugTo(docFlow, "E2/agent.1 round") },
			seq(keySkip), func(t *testing.T, b *bench) {
				wantOverlay(t, b, overlayEditor)
				wantScreen(t, b, "give the reply of E2/agent.1", "in the model's place: the model is not called")
				wantNoScreen(t, b, "replace what E2/agent.1 gave")
			}},
		{"at 80 columns the round editor says all of it", func(b *bench) {
			b.w, b.h = 80, 24
			b.update(tea.WindowSizeMsg{Width: b.w, Height: b.h})
			b.debugTo(docFlow, "E2/agent.1 round")
		}, seq(keySkip), func(t *testing.T, b *bench) {
			wantOverlay(t, b, overlayEditor)
			wantScreen(t, b, "give the reply of E2/agent.1 ", "in the model's place: the model is not called")
		}},
		{"n or c at an ask opens the answer editor; :decline declines", func(b *bench) { b.debugTo(docAsking, "") }, seq(keyNext, keyNext), func(t *testing.T, b *bench) {
			wantOverlay(t, b, overlayEditor)
			b.press(keyEsc, keyContinue)
			wantOverlay(t, b, overlayEditor)
			if r := b.m.runPage.run; !r.held() || r.state.Stop.Kind != engine.StopAsk {
				t.Fatal("moving on at the question left it")
			}
			b.press(keyEsc)
			b.press(command("decline")...)
			b.press(keyContinue)
			wantEnded(t, b, "ok")
			jsonEqual(t, node(t, b, "A1").Result, `{"shipped": false}`)
		}},
	})
}

// TestHitsAtAStop keeps the breakpoints panel open while a debug run goes
// from its breakpoint's first hit to its second: the panel counts each as
// the run is held there.
func TestHitsAtAStop(t *testing.T) {
	b := newBench(t, 120, 40)
	b.debugTo(docSimple, "S1")
	wantHeld(t, b, "S1", engine.StopStep, "breakpoint 1 (S1)")
	b.press(keyBreakPanel)
	wantScreen(t, b, "1  S1", "1 hit")
	// The panel has the keys; the command line goes on with the run.
	b.press(command("continue")...)
	wantHeld(t, b, "S1", engine.StopResult, "breakpoint 1 (S1)")
	wantScreen(t, b, "1  S1", "2 hits")
}

// TestHitsAfterTheRun checks the breakpoints panel still counts a
// breakpoint's hits once the run has ended, until the next run counts
// afresh.
func TestHitsAfterTheRun(t *testing.T) {
	b := newBench(t, 120, 40)
	b.debugTo(docSimple, "S1")
	b.press(keyContinue, keyContinue, keyBreakPanel)
	wantEnded(t, b, "ok")
	if bps := b.m.listBreakpoints(docSimple); len(bps) != 1 || bps[0].Hits != 2 {
		t.Fatalf("after the run the breakpoint has %d hits, want 2", bps[0].Hits)
	}
	wantScreen(t, b, "2 hits")
}

// TestAnswerInPlainRun answers the question of a plan run with r. A plain
// run stops only where the plan asks; once answered it should go on to
// its end.
func TestAnswerInPlainRun(t *testing.T) {
	b := newBench(t, 120, 40)
	b.toDoc(docAsking)
	b.press(keyRun)
	wantScreen(t, b, "A0 asks: Ship it?")
	b.press(keySkip)
	wantOverlay(t, b, overlayEditor)
	b.press(replaceText(`{"ship": true}`)...)
	b.press(keySubmit)
	if b.m.runPage.run.held() {
		t.Fatalf("after the answer a plain run (r) is held at %s (%s, reason %q): a plain run goes on to its end",
			b.m.runPage.run.state.Stop.Path, b.m.runPage.run.state.Stop.Kind, b.m.runPage.run.state.Reason)
	}
	wantEnded(t, b, "ok")
	jsonEqual(t, node(t, b, "A1").Result, `{"shipped": true}`)

	// :answer is the same answer, with the same outcome.
	b = newBench(t, 120, 40)
	b.toDoc(docAsking)
	b.press(keyRun)
	b.press(command(`answer {"ship": true}`)...)
	wantEnded(t, b, "ok")
	jsonEqual(t, node(t, b, "A1").Result, `{"shipped": true}`)
}

// TestAbortAndPauseKeys aborts and pauses runs held and going.
func TestAbortAndPauseKeys(t *testing.T) {
	runCases(t, []benchCase{
		{"a once only says what a again does; another key keeps the run", func(b *bench) { b.debugTo(docFlow, "E1/do.1") }, seq(keyAbort), func(t *testing.T, b *bench) {
			wantNotice(t, b, "a again aborts the run · any other key keeps it")
			if !b.m.runPage.run.held() {
				t.Fatal("the first a moved the run")
			}
			// At 80x24 the warning has the status line, whole.
			b.update(tea.WindowSizeMsg{Width: 80, Height: 24})
			wantScreen(t, b, "\n a again aborts the run · any other key keeps it")
			b.update(tea.WindowSizeMsg{Width: 120, Height: 40})
			b.press(keyDown)
			wantHeld(t, b, "E1/do.1", engine.StopStep, "breakpoint")
			b.press(keyDown, keyAbort)
			wantNotice(t, b, "a again aborts the run")
			if r := b.m.runPage.run; !r.held() || r.state.Stop.Path != "E1/do.1" {
				t.Fatal("a after another key moved the run")
			}
		}},
		{"a twice aborts a held run", func(b *bench) { b.debugTo(docFlow, "E1/do.1") }, seq(keyAbort, keyAbort), func(t *testing.T, b *bench) {
			wantEnded(t, b, "aborted")
			wantNotice(t, b, "the run aborted")
			wantScreen(t, b, "■ aborted")
			if n := node(t, b, "E2"); n.Status != live.Pending {
				t.Errorf("E2 is %s after the abort, want pending", n.Status)
			}
			// The item the run was aborted at, held before it started,
			// ended aborted: not an item still to run.
			if n := node(t, b, "E1/do.1"); n.Status != live.Failed || !n.Aborted {
				t.Errorf("E1/do.1 is %s (aborted %v) after the abort at its stop, want failed, aborted", n.Status, n.Aborted)
			}
			wantScreen(t, b, "■ do.1", "■ aborted")
		}},
		{"a twice aborts a run that goes on", func(b *bench) { b.goSlow() }, nil, func(t *testing.T, b *bench) {
			b.send(keyAbort, keyAbort)
			wantNotice(t, b, "aborting the run")
			b.settle()
			wantEnded(t, b, "aborted")
		}},
		{"a with no run says so", nil, seq(keyAbort), func(t *testing.T, b *bench) {
			wantNotice(t, b, "no run is going")
		}},
		{"a after the run ended says so", func(b *bench) { b.runToEnd(docSimple) }, seq(keyAbort), func(t *testing.T, b *bench) {
			wantNotice(t, b, "no run is going")
			wantEnded(t, b, "ok")
		}},
		{"z pauses a run that goes on at its next stop", func(b *bench) { b.goSlow() }, nil, func(t *testing.T, b *bench) {
			b.send(keyPause)
			wantNotice(t, b, "pausing at the next stop")
			wantScreen(t, b, "● running")
			b.finish()
			wantHeld(t, b, "W0", engine.StopResult, "pause")
			b.press(keyContinue)
			wantEnded(t, b, "ok")
		}},
		{"z while held says there is nothing to pause", func(b *bench) { b.debugTo(docSimple, "") }, seq(keyPause), func(t *testing.T, b *bench) {
			wantNotice(t, b, "no run is going to pause")
			wantHeld(t, b, "S0", engine.StopStep, "entry")
		}},
		{"z with no run says there is nothing to pause", nil, seq(keyPause), func(t *testing.T, b *bench) {
			wantNotice(t, b, "no run is going to pause")
		}},
	})
}

// TestBreakpointKeys sets breakpoints with b on plan and run rows, turns
// break on error with x, and works the panel B opens.
func TestBreakpointKeys(t *testing.T) {
	book := func(b *bench) []string {
		var out []string
		for _, bp := range b.m.breakpoints(b.m.planPage.current).List() {
			s := bp.Spec()
			if !bp.Enabled {
				s += " (off)"
			}
			out = append(out, s)
		}
		return out
	}
	wantBook := func(t *testing.T, b *bench, want ...string) {
		t.Helper()
		if got := book(b); strings.Join(got, "; ") != strings.Join(want, "; ") {
			t.Errorf("breakpoints %q, want %q", got, want)
		}
	}
	runCases(t, []benchCase{
		{"b on a plan row sets a breakpoint and marks the row", func(b *bench) { b.toDoc(docSimple) }, seq(keyDown, keyDown, keyBreak), func(t *testing.T, b *bench) {
			wantBook(t, b, "S1")
			wantNotice(t, b, "breakpoint 1 at S1")
			if !breakMarked(treeLine(t, b.m.planPage.tree().View(), "S1  builtin__reshape")) {
				t.Error("S1 is not marked ●")
			}
			if breakMarked(treeLine(t, b.m.planPage.tree().View(), "S0  builtin__reshape")) {
				t.Error("S0 is marked ●")
			}
		}},
		{"b again clears it", func(b *bench) { b.toDoc(docSimple) }, seq(keyDown, keyDown, keyBreak, keyBreak), func(t *testing.T, b *bench) {
			wantBook(t, b)
			wantNotice(t, b, "breakpoint 1 at S1 cleared")
			if breakMarked(treeLine(t, b.m.planPage.tree().View(), "S1  builtin__reshape")) {
				t.Error("S1 is still marked ●")
			}
		}},
		{"b on a map's body row breaks in every item", nil, seq(keyDown, keyDown, keyDown, keyBreak, keyDebug, keySubmit), func(t *testing.T, b *bench) {
			wantBook(t, b, "E1/do.*")
			wantHeld(t, b, "E1/do.0", engine.StopStep, "breakpoint 1 (E1/do.*)")
			// The items after the first have no rows yet: a row is marked
			// as it comes.
			if !breakMarked(treeLine(t, b.m.runPage.tree.View(), "do.0")) {
				t.Error("the run row do.0 is not marked ●")
			}
			b.press(keyContinue, keyContinue)
			wantHeld(t, b, "E1/do.1", engine.StopStep, "breakpoint 1 (E1/do.*)")
			if !breakMarked(treeLine(t, b.m.runPage.tree.View(), "do.1")) {
				t.Error("the run row do.1 is not marked ●")
			}
		}},
		{"a breakpoint no path can match is flagged on the status line and in the panel", func(b *bench) { b.toDoc(docSimple) },
			append(command("break S1/agent.1"), keyBreakPanel), func(t *testing.T, b *bench) {
				wantBook(t, b, "S1/agent.1")
				const flag = "no path of the plan matches S1/agent.1, so it never stops; the nearest that would: S1"
				wantNotice(t, b, "breakpoint 1: "+flag)
				wantScreen(t, b, "✗ "+flag[:40])
				b.press(keyEsc, command("break S1 result"))
				wantNotice(t, b, "breakpoint 2 at S1 result")
			}},
		{"a kept breakpoint no path can match is flagged as the plan opens", func(b *bench) {
			writeTestFile(b.t, filepath.Join(b.p.dir, ".stepwise", "breakpoints", "simple.json"), `[{"id": 1, "pattern": "S1/agent.1", "enabled": true}]`)
		}, seq(keyNextPlan), func(t *testing.T, b *bench) {
			wantNotice(t, b, "kept breakpoint 1: no path of the plan matches S1/agent.1, so it never stops; the nearest that would: S1")
		}},
		{"a kept breakpoint whose condition reads no step of the plan is flagged as the plan opens, and in the panel", func(b *bench) {
			writeTestFile(b.t, filepath.Join(b.p.dir, ".stepwise", "breakpoints", "simple.json"),
				`[{"id": 1, "pattern": "S1", "enabled": true, "condition": {"value": "{{nope.x}}", "op": "eq", "to": 1}}]`)
		}, seq(keyNextPlan, keyBreakPanel), func(t *testing.T, b *bench) {
			const flag = "the condition reads 'nope.x', so it never holds: the plan has no step 'nope'"
			wantNotice(t, b, "kept breakpoint 1: "+flag)
			wantScreen(t, b, "✗ 1 S1: "+flag[:40])
		}},
		{"b on the plan's own row is refused", nil, seq(keyBreak), func(t *testing.T, b *bench) {
			wantBook(t, b)
			wantNotice(t, b, "select a step (or, in a run, any row) to break at")
		}},
		{"b on a held run's row takes effect in that run", func(b *bench) { b.debugTo(docFlow, "E1/do.0 step") },
			seq(keyDown, keyBreak, keyContinue), func(t *testing.T, b *bench) {
				wantBook(t, b, "E1/do.0 step", "E2")
				wantHeld(t, b, "E2", engine.StopStep, "breakpoint 2 (E2)")
				if !breakMarked(treeLine(t, b.m.runPage.tree.View(), "E2  agent")) {
					t.Error("E2 is not marked ●")
				}
				if !breakMarked(treeLine(t, b.m.runPage.tree.View(), "do.0  user__lookup")) {
					t.Error("do.0 is not marked ●")
				}
				if breakMarked(treeLine(t, b.m.runPage.tree.View(), "do.1  user__lookup")) {
					t.Error("do.1 is marked ●")
				}
			}},
		{"b on a finished run's row is kept for the next run", func(b *bench) { b.runToEnd(docSimple) },
			seq(keyDown, keyBreak, keyPlanView), func(t *testing.T, b *bench) {
				wantBook(t, b, "S1")
				if b.m.runShown() {
					t.Fatal("P did not show the plan")
				}
				if !breakMarked(treeLine(t, b.m.planPage.tree().View(), "S1  builtin__reshape")) {
					t.Error("the plan row S1 is not marked ●")
				}
				b.press(keyDebug)
				wantHeld(t, b, "S1", engine.StopStep, "breakpoint 1 (S1)")
			}},
		{"breakpoints are kept on disk for the plan", func(b *bench) { b.toDoc(docSimple) }, seq(keyDown, keyBreak), func(t *testing.T, b *bench) {
			// The second workbench opens on the plan the first showed.
			b2 := newBenchOn(t, b.p, 120, 40)
			wantDocument(t, b2.m, docSimple)
			wantBook(t, b2, "S0")
		}},
		{"x: a failing step holds a debug run at an error stop", func(b *bench) { b.toDoc(docFailing) }, seq(keyDebug, keyContinue), func(t *testing.T, b *bench) {
			wantHeld(t, b, "F1", engine.StopError, "error")
			if !strings.Contains(b.m.runPage.run.state.Stop.Error, "exited with status 3") {
				t.Errorf("stop error %q", b.m.runPage.run.state.Stop.Error)
			}
		}},
		{"x turns break on error off", func(b *bench) { b.toDoc(docFailing) }, seq(keyBreakErr, keyDebug, keyContinue), func(t *testing.T, b *bench) {
			wantEnded(t, b, "failed")
			if b.m.breakpoints(docFailing).BreaksOnError() {
				t.Error("break on error is still on in the table")
			}
		}},
		{"x twice turns it on again", func(b *bench) { b.toDoc(docFailing) }, seq(keyBreakErr, keyBreakErr), func(t *testing.T, b *bench) {
			wantNotice(t, b, "break on error is on")
			b.press(keyDebug, keyContinue)
			wantHeld(t, b, "F1", engine.StopError, "error")
		}},
		{"x while held changes the running session", func(b *bench) { b.debugTo(docFailing, "") }, seq(keyBreakErr, keyContinue), func(t *testing.T, b *bench) {
			wantEnded(t, b, "failed")
		}},
		{"x says what it did", func(b *bench) { b.toDoc(docFailing) }, seq(keyBreakErr), func(t *testing.T, b *bench) {
			wantNotice(t, b, "break on error is off")
		}},
		{"B lists the breakpoints", func(b *bench) { b.toDoc(docSimple) }, seq(keyDown, keyBreak, keyDown, keyBreak, keyBreakPanel), func(t *testing.T, b *bench) {
			wantOverlay(t, b, overlayBreakpoints)
			wantScreen(t, b, "Breakpoints 2", "break on error: on (x)", "● 1  S0", "● 2  S1", "space on/off · D clear")
		}},
		{"space in the panel turns a breakpoint off and marks its rows ○", func(b *bench) { b.toDoc(docSimple) },
			seq(keyDown, keyBreak, keyBreakPanel, keySpace), func(t *testing.T, b *bench) {
				wantBook(t, b, "S0 (off)")
				wantScreen(t, b, "○ 1  S0")
				b.press(keyEsc)
				if line := treeLine(t, b.m.planPage.tree().View(), "S0  builtin__reshape"); breakMarked(line) || !breakOffMarked(line) {
					t.Errorf("a disabled breakpoint's row is not marked ○: %q", line)
				}
				b.press(keyDebug)
				wantHeld(t, b, "S0", engine.StopStep, "entry")
				if line := treeLine(t, b.m.runPage.tree.View(), "S1  builtin__reshape"); breakOffMarked(line) {
					t.Errorf("S1 is marked ○: %q", line)
				}
				b.press(keyNext)
				if line := treeLine(t, b.m.runPage.tree.View(), "S0  builtin__reshape"); !breakOffMarked(line) {
					t.Errorf("the run row of a disabled breakpoint is not marked ○: %q", line)
				}
			}},
		{"b on a row whose breakpoint is disabled enables it", func(b *bench) { b.toDoc(docSimple) },
			seq(keyDown, keyBreak, keyBreakPanel, keySpace, keyEsc, keyBreak), func(t *testing.T, b *bench) {
				wantBook(t, b, "S0")
				wantNotice(t, b, "breakpoint 1 at S0 enabled")
				if !breakMarked(treeLine(t, b.m.planPage.tree().View(), "S0  builtin__reshape")) {
					t.Error("S0 is not marked ●")
				}
			}},
		{"D on a row clears its breakpoints, disabled ones too", func(b *bench) { b.toDoc(docSimple) },
			append(command("break S0 result"), keyDown, keyBreak, keyBreakPanel, keySpace, keyEsc, keyDelete), func(t *testing.T, b *bench) {
				wantBook(t, b)
				wantNotice(t, b, "cleared breakpoints 1 at S0 result, 2 at S0")
				if line := treeLine(t, b.m.planPage.tree().View(), "S0  builtin__reshape"); breakMarked(line) || breakOffMarked(line) {
					t.Errorf("S0 is still marked: %q", line)
				}
			}},
		{"D on a row without a breakpoint says so", func(b *bench) { b.toDoc(docSimple) }, seq(keyDown, keyDelete), func(t *testing.T, b *bench) {
			wantNotice(t, b, "no breakpoint on S0; B lists them all")
		}},
		{"D on a plan row clears a breakpoint inside its step", func(b *bench) { b.toDoc(docFlow) },
			append(command("break E2/agent.2 round"), append(command("goto E2"), keyDelete)...), func(t *testing.T, b *bench) {
				wantBook(t, b)
				wantNotice(t, b, "cleared breakpoint 1 at E2/agent.2 round")
			}},
		{"D on a held run's row clears its breakpoint in that run", func(b *bench) { b.debugTo(docSimple, "S1") },
			seq(keyDelete), func(t *testing.T, b *bench) {
				wantHeld(t, b, "S1", engine.StopStep, "breakpoint 1 (S1)")
				wantBook(t, b)
				wantNotice(t, b, "cleared breakpoint 1 at S1")
				if breakMarked(treeLine(t, b.m.runPage.tree.View(), "S1  builtin__reshape")) {
					t.Error("S1 is still marked ●")
				}
			}},
		{"b on a held run's row marked ○ by a breakpoint with a kind enables it", func(b *bench) { b.debugTo(docSimple, "S1 step") },
			append(command("disable 1"), keyBreak), func(t *testing.T, b *bench) {
				wantHeld(t, b, "S1", engine.StopStep, "breakpoint 1 (S1)")
				wantBook(t, b, "S1 step")
				wantNotice(t, b, "breakpoint 1 at S1 step enabled")
				if !breakMarked(treeLine(t, b.m.runPage.tree.View(), "S1  builtin__reshape")) {
					t.Error("S1 is not marked ●")
				}
			}},
		{"b on a held run's row marked ○ by a wider pattern enables it", func(b *bench) { b.debugTo(docSimple, "S1/**") },
			append(command("disable 1"), keyBreak), func(t *testing.T, b *bench) {
				wantBook(t, b, "S1/**")
				wantNotice(t, b, "breakpoint 1 at S1/** enabled")
			}},
		{"space again turns it on", func(b *bench) { b.toDoc(docSimple) },
			seq(keyDown, keyBreak, keyBreakPanel, keySpace, keySpace), func(t *testing.T, b *bench) {
				wantBook(t, b, "S0")
			}},
		{"D deletes the selected breakpoint", func(b *bench) { b.toDoc(docSimple) },
			seq(keyDown, keyBreak, keyDown, keyBreak, keyBreakPanel, keyDown, keyDelete), func(t *testing.T, b *bench) {
				wantBook(t, b, "S0")
				wantScreen(t, b, "Breakpoints 1")
			}},
		{"x in the panel turns break on error off", func(b *bench) { b.toDoc(docFailing) }, seq(keyBreakPanel, keyBreakErr), func(t *testing.T, b *bench) {
			wantScreen(t, b, "break on error: off (x)")
			if b.m.breakpoints(docFailing).BreaksOnError() {
				t.Error("break on error is still on")
			}
		}},
		{"esc closes the panel", func(b *bench) { b.toDoc(docSimple) }, seq(keyBreakPanel, keyEsc), func(t *testing.T, b *bench) {
			wantOverlay(t, b, overlayNone)
		}},
		{"the panel takes the run keys and says its own", func(b *bench) { b.debugTo(docSimple, "") }, seq(keyBreakPanel, keyNext, keyContinue), func(t *testing.T, b *bench) {
			wantOverlay(t, b, overlayBreakpoints)
			wantHeld(t, b, "S0", engine.StopStep, "entry")
			wantScreen(t, b, "space on/off · D clear · x break on error · : command · esc close")
		}},
		{": over the panel opens the command line, and a space typed there is text", func(b *bench) { b.debugTo(docSimple, "") },
			seq(keyBreakPanel), func(t *testing.T, b *bench) {
				b.press(command("break S1")...)
				wantBook(t, b, "S1")
				b.press(command("next")...)
				wantOverlay(t, b, overlayBreakpoints)
				wantHeld(t, b, "S0", engine.StopResult, "next")
			}},
		{":breakpoints lists them in the output pane, no panel", func(b *bench) { b.toDoc(docSimple) }, seq(keyDown, keyBreak), func(t *testing.T, b *bench) {
			b.press(command("breakpoints")...)
			if b.m.overlays.isOpen(&b.m.panels.breakpoints) {
				t.Error(":breakpoints opened the panel")
			}
			wantNotice(t, b, "1 breakpoint: 1 S0")
			b.press(keyOutput)
			wantScreen(t, b, "› :breakpoints", "● 1 S0 (0 hits)")
		}},
		{"abort does not pass the panel", func(b *bench) { b.debugTo(docSimple, "") }, seq(keyBreakPanel, keyAbort, keyAbort), func(t *testing.T, b *bench) {
			wantOverlay(t, b, overlayBreakpoints)
			wantHeld(t, b, "S0", engine.StopStep, "entry")
		}},
	})
}

// TestViewKeys covers P, tab and shift+tab, [ and ], the inspector's keys
// (<, >, /, ctrl+n, ctrl+p), folding (h, l, space), ? and esc in the run
// view.
func TestViewKeys(t *testing.T) {
	runCases(t, []benchCase{
		{"P with no run says how to get one", nil, seq(keyPlanView), func(t *testing.T, b *bench) {
			wantNotice(t, b, "no run to show yet")
			if b.m.runShown() {
				t.Error("run view without a run")
			}
		}},
		{"P shows the plan, and P again the run", func(b *bench) { b.runToEnd(docSimple) }, seq(keyPlanView), func(t *testing.T, b *bench) {
			if b.m.runShown() {
				t.Fatal("P did not show the plan")
			}
			if b.m.notice.text != "" {
				t.Errorf("the plan view keeps the run's notice %q", b.m.notice.text)
			}
			wantScreen(t, b, "Steps", "Problems")
			b.press(keyPlanView)
			if !b.m.runShown() {
				t.Fatal("P did not show the run again")
			}
			wantScreen(t, b, "Run simple ✓ ok")
		}},
		{"P while held shows the plan and the run keys still work", func(b *bench) { b.debugTo(docSimple, "") }, seq(keyPlanView, keyNext), func(t *testing.T, b *bench) {
			wantHeld(t, b, "S0", engine.StopResult, "next")
		}},
		{"tab in the run view goes to the inspector and back: no bottom pane", func(b *bench) { b.runToEnd(docSimple) }, seq(keyTab), func(t *testing.T, b *bench) {
			if b.m.page.focused() != paneDetail || !b.m.runPage.inspector.Focused() {
				t.Fatalf("focus %d, want the inspector", b.m.page.focused())
			}
			b.press(keyTab)
			if b.m.page.focused() != paneTree || !b.m.runPage.tree.Focused() {
				t.Fatalf("focus %d, want the run tree", b.m.page.focused())
			}
			b.press(keyTab, keyShiftTab)
			if b.m.page.focused() != paneTree {
				t.Fatalf("shift+tab from the inspector: focus %d, want the tree", b.m.page.focused())
			}
		}},
		{"] shows the next plan and leaves the run view", func(b *bench) { b.runToEnd(docSimple) }, seq(keyNextPlan), func(t *testing.T, b *bench) {
			wantDocument(t, b.m, docFailing)
			if b.m.runShown() {
				t.Error("the run of another plan is still on show")
			}
			b.press(keyPrevPlan, keyPlanView)
			if !b.m.runShown() {
				t.Error("P does not bring back the run of the plan")
			}
		}},
		{"[ with a run held shows another plan; P brings the held run back", func(b *bench) { b.debugTo(docSimple, "") }, seq(keyPrevPlan), func(t *testing.T, b *bench) {
			wantDocument(t, b.m, docFlow)
			b.press(keyPlanView)
			wantDocument(t, b.m, docSimple)
			wantHeld(t, b, "S0", engine.StopStep, "entry")
		}},
		{"> and < cycle the inspector's tabs", func(b *bench) { b.runToEnd(docSimple) }, seq(keyTab), func(t *testing.T, b *bench) {
			tabs := b.m.runPage.inspector.Tabs()
			if len(tabs) < 2 {
				t.Fatalf("tabs %v", tabs)
			}
			first := b.m.runPage.inspector.Tab()
			b.press(keyNextTab)
			if b.m.runPage.inspector.Tab() == first {
				t.Errorf("> stayed on %v", first)
			}
			b.press(keyPrevTab)
			if b.m.runPage.inspector.Tab() != first {
				t.Errorf("< went to %v, want %v", b.m.runPage.inspector.Tab(), first)
			}
		}},
		{"< and > turn the inspector's tabs from the tree too; , and . are the same keys", func(b *bench) { b.runToEnd(docSimple) }, nil, func(t *testing.T, b *bench) {
			first := b.m.runPage.inspector.Tab()
			b.press(keyNextTab)
			if b.m.runPage.inspector.Tab() == first {
				t.Errorf("> from the tree stayed on %v", first)
			}
			wantFocus(t, b.m, paneTree)
			b.press(tea.KeyPressMsg{Code: ',', Text: ","})
			if b.m.runPage.inspector.Tab() != first {
				t.Errorf(", went to %v, want %v", b.m.runPage.inspector.Tab(), first)
			}
			b.press(tea.KeyPressMsg{Code: '.', Text: "."})
			if b.m.runPage.inspector.Tab() == first {
				t.Error(". did not turn the tab")
			}
		}},
		{"the movement keys move through the run tree", func(b *bench) { b.runToEnd(docFlow) }, seq(keyHome), func(t *testing.T, b *bench) {
			sel := func() string { r, _ := b.m.runPage.tree.Selected(); return r.Path }
			steps := []struct {
				key  tea.Msg
				want string
			}{
				{keyDown, "E1"}, {keyArrowDn, "E1/do.0"}, {keyUp, "E1"}, {keyBottom, "output"}, {keyHome, "E0"},
				{keyEnd, "output"}, {keyArrowUp, "E2/agent.2/repair"}, {keyPgUp, "E0"}, {keyPgDown, "output"},
				{tea.KeyPressMsg{Code: 'u', Mod: tea.ModCtrl}, "E0"}, {tea.KeyPressMsg{Code: 'd', Mod: tea.ModCtrl}, "output"},
			}
			for _, s := range steps {
				b.press(s.key)
				if got := sel(); got != s.want {
					t.Fatalf("after %v: selected %s, want %s", s.key, got, s.want)
				}
			}
			// The inspector follows the selection.
			wantScreen(t, b, "Inspector output")
		}},
		{"the movement keys scroll the inspector when it has the focus", func(b *bench) { b.runToEnd(docFlow) }, seq(keyHome, repeat(keyDown, 5), keyTab), func(t *testing.T, b *bench) {
			if b.m.runPage.inspector.Len() < 10 {
				t.Fatalf("the inspector has %d lines", b.m.runPage.inspector.Len())
			}
			b.press(keyDown, keyDown)
			if c := b.m.runPage.inspector.Cursor(); c != 2 {
				t.Errorf("cursor %d after j j, want 2", c)
			}
			b.press(keyBottom)
			if c := b.m.runPage.inspector.Cursor(); c != b.m.runPage.inspector.Len()-1 {
				t.Errorf("cursor %d after G, want the last line %d", c, b.m.runPage.inspector.Len()-1)
			}
			b.press(keyHome)
			if c := b.m.runPage.inspector.Cursor(); c != 0 {
				t.Errorf("cursor %d after home", c)
			}
			if r, _ := b.m.runPage.tree.Selected(); r.Path != "E2" {
				t.Errorf("the tree's selection moved to %s", r.Path)
			}
		}},
		{"the inspector has a Stop tab at a held stop", func(b *bench) { b.debugTo(docFlow, "E1/do.1") }, seq(keyTab), func(t *testing.T, b *bench) {
			if !b.m.runPage.inspector.SelectTab(inspector.TabStop) {
				t.Fatalf("no Stop tab in %v", b.m.runPage.inspector.Tabs())
			}
			for range len(b.m.runPage.inspector.Tabs()) {
				if b.m.runPage.inspector.Tab() == inspector.TabStop {
					break
				}
				b.press(keyNextTab)
			}
			if b.m.runPage.inspector.Tab() != inspector.TabStop {
				t.Fatal("> never reaches the Stop tab")
			}
			wantScreen(t, b, "[Stop]", "breakpoint 1 (E1/do.1)")
		}},
		{"the inspector keeps the tab chosen at one stop at the next", func(b *bench) { b.debugTo(docFlow, "E1/do.*") }, seq(keyTab), func(t *testing.T, b *bench) {
			wantHeld(t, b, "E1/do.0", engine.StopStep, "breakpoint 1 (E1/do.*)")
			if got := b.m.runPage.inspector.Tab(); got != inspector.TabInput {
				t.Errorf("the first stop opens the %v tab, want the tab it is about", got)
			}
			for range len(b.m.runPage.inspector.Tabs()) {
				if b.m.runPage.inspector.Tab() == inspector.TabScope {
					break
				}
				b.press(keyNextTab)
			}
			if b.m.runPage.inspector.Tab() != inspector.TabScope {
				t.Fatalf("> never reaches the Scope tab of %v", b.m.runPage.inspector.Tabs())
			}
			// The result stop at the same row, then a stop at another.
			for _, at := range []struct {
				path string
				kind engine.StopKind
			}{{"E1/do.0", engine.StopResult}, {"E1/do.1", engine.StopStep}} {
				b.press(keyContinue)
				wantHeld(t, b, at.path, at.kind, "breakpoint 1 (E1/do.*)")
				if got := b.m.runPage.inspector.Tab(); got != inspector.TabScope {
					t.Errorf("the %s stop at %s shows the %v tab, want the Scope tab chosen", at.kind, at.path, got)
				}
			}
			wantScreen(t, b, "[Scope]")
		}},
		{"/ searches the inspector; ctrl+n and ctrl+p move between matches", func(b *bench) { b.runToEnd(docFlow) },
			seq(repeat(keyDown, 5), keyTab, keySearch, typeText("count")), func(t *testing.T, b *bench) {
				if !b.m.runPage.inspector.Capturing() {
					t.Fatal("the search box is not open")
				}
				n, cur := b.m.runPage.inspector.Hits()
				if n < 1 || cur != 0 {
					t.Fatalf("%d hits, current %d", n, cur)
				}
				b.press(keyEsc)
				if b.m.runPage.inspector.Capturing() {
					t.Fatal("esc left the search box open")
				}
				b.press(keyNextHit)
				if _, c := b.m.runPage.inspector.Hits(); n > 1 && c != 1 {
					t.Errorf("ctrl+n: current %d, want 1", c)
				}
				b.press(keyPrevHit)
				if _, c := b.m.runPage.inspector.Hits(); c != 0 {
					t.Errorf("ctrl+p: current %d, want 0", c)
				}
			}},
		{"keys typed into the inspector's search are not commands", func(b *bench) { b.runToEnd(docSimple) },
			seq(keyTab, keySearch, typeText("qrg")), func(t *testing.T, b *bench) {
				if b.quit || len(b.seen) != 1 {
					t.Error("a key in the search box acted on the workbench")
				}
			}},
		{"h folds a run row, l unfolds it, space toggles", func(b *bench) { b.runToEnd(docFlow) }, seq(keyHome, keyDown), func(t *testing.T, b *bench) {
			rows := b.m.runPage.run.tree.Len()
			if r, _ := b.m.runPage.tree.Selected(); r.Path != "E1" {
				t.Fatalf("selected %s, want E1", r.Path)
			}
			b.press(keyFold)
			if got := b.m.runPage.run.tree.Len(); got != rows-3 {
				t.Errorf("h: %d rows, want %d", got, rows-3)
			}
			wantNoScreen(t, b, "do.0  user__lookup")
			b.press(keyUnfold)
			if got := b.m.runPage.run.tree.Len(); got != rows {
				t.Errorf("l: %d rows, want %d", got, rows)
			}
			b.press(keySpace)
			if got := b.m.runPage.run.tree.Len(); got != rows-3 {
				t.Errorf("space: %d rows, want %d", got, rows-3)
			}
			b.press(keySpace, keyUnfold)
			if r, _ := b.m.runPage.tree.Selected(); r.Path != "E1/do.0" {
				t.Errorf("l on an open row selected %s, want its first child", r.Path)
			}
			b.press(keyFold)
			if r, _ := b.m.runPage.tree.Selected(); r.Path != "E1" {
				t.Errorf("h on a leaf selected %s, want its parent", r.Path)
			}
		}},
		{"h, l and space fold the plan tree as they fold the run tree", nil, seq(keyDown, keyDown, keyFold), func(t *testing.T, b *bench) {
			wantRow(t, b.m, 2, "E1")
			treeLine(t, b.m.planPage.tree().View(), "▸ E1  map")
			wantNoScreen(t, b, "do  user__lookup")
			b.press(keySpace)
			treeLine(t, b.m.planPage.tree().View(), "▾ E1  map")
			treeLine(t, b.m.planPage.tree().View(), "do  user__lookup")
			b.press(keyFold, keyUnfold, keyUnfold)
			if r := b.m.planPage.tree().Selected(); r.Path != "E1/do.*" {
				t.Errorf("l on an open row selected %s, want its first child", r.Path)
			}
		}},
		{"? opens help over a held run, and n does not move the run", func(b *bench) { b.debugTo(docSimple, "") }, seq(keyHelp, keyNext), func(t *testing.T, b *bench) {
			wantOverlay(t, b, overlayHelp)
			wantScreen(t, b, "Keys", "Debug", "n next")
			b.press(keyEsc)
			wantOverlay(t, b, overlayNone)
			wantHeld(t, b, "S0", engine.StopStep, "entry")
		}},
		{"esc with nothing open changes nothing", func(b *bench) { b.runToEnd(docSimple) }, seq(keyEsc), func(t *testing.T, b *bench) {
			wantOverlay(t, b, overlayNone)
			if !b.m.runShown() || b.quit {
				t.Error("esc left the run view or quit")
			}
		}},
	})
}

// TestQuitKeys: q and ctrl+c quit at once with no run going; with one, the
// first press warns and the second aborts the run and quits.
func TestQuitKeys(t *testing.T) {
	for _, quit := range []tea.KeyPressMsg{keyQuit, keyCtrlC} {
		runCases(t, []benchCase{
			{quit.String() + " with no run quits", nil, seq(quit), func(t *testing.T, b *bench) {
				if !b.quit {
					t.Error("did not quit")
				}
			}},
			{quit.String() + " after a run ended quits", func(b *bench) { b.runToEnd(docSimple) }, seq(quit), func(t *testing.T, b *bench) {
				if !b.quit {
					t.Error("did not quit")
				}
			}},
			{quit.String() + " with a run held warns first", func(b *bench) { b.debugTo(docSimple, "") }, seq(quit), func(t *testing.T, b *bench) {
				if b.quit {
					t.Fatal("quit at once")
				}
				wantNotice(t, b, "a run is going: q again aborts it and quits")
				if !b.m.runPage.run.held() {
					t.Fatal("the first press moved the run")
				}
				b.update(tea.WindowSizeMsg{Width: 80, Height: 24})
				wantScreen(t, b, "\n a run is going: q again aborts it and quits · any other key keeps it")
				b.update(tea.WindowSizeMsg{Width: 120, Height: 40})
				b.press(quit)
				if !b.quit {
					t.Fatal("the second press did not quit")
				}
				// Quitting cancels the run.
				if r := b.m.runPage.run; r.session.Wait().Status != "aborted" {
					t.Error("the run was not aborted")
				}
			}},
			{quit.String() + " with a run going warns first", func(b *bench) { b.goSlow() }, nil, func(t *testing.T, b *bench) {
				b.send(quit)
				if b.quit {
					t.Fatal("quit at once")
				}
				wantNotice(t, b, "a run is going")
				b.send(quit)
				b.until("the program to quit", func(model) bool { return b.quit })
				b.settle()
				wantEnded(t, b, "aborted")
			}},
			{quit.String() + ", another key, " + quit.String() + " warns again", func(b *bench) { b.debugTo(docSimple, "") }, seq(quit, keyDown, quit), func(t *testing.T, b *bench) {
				if b.quit {
					t.Error("quit after a key came between the presses")
				}
			}},
		})
	}
}

// TestStatusLineKeepsOneLine checks a multi-line error (the inputs a
// plan refuses) keeps the status line to one line: the key hints stay on
// the last line.
func TestStatusLineKeepsOneLine(t *testing.T) {
	b := newBench(t, 100, 24)
	b.press(command(`run {"topic": 3}`)...)
	if st := b.m.runPage.run.state; !st.Finished || st.Status != "refused" {
		t.Fatalf("the run %s, want refused", st.Status)
	}
	lines := strings.Split(b.screen(), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, "r run · g debug") {
		t.Fatalf("the notice %q has a newline, which would push the key hints off the screen; last line %q",
			b.m.notice.text, last)
	}
}

// TestShiftTabInRunView: in the run view the bottom pane is left out (no
// threads held), so tab goes tree, inspector, tree; shift+tab from the
// tree should go to the inspector the same way.
func TestShiftTabInRunView(t *testing.T) {
	b := newBench(t, 120, 40)
	b.runToEnd(docSimple)
	b.press(keyShiftTab)
	if b.m.page.focused() != paneDetail {
		t.Fatalf("shift+tab from the run tree leaves the focus on pane %d, not on the inspector", b.m.page.focused())
	}
}

// TestCommandLine types lines at the : command line: every verb of the
// command language the workbench carries out.
func TestCommandLine(t *testing.T) {
	book := func(b *bench) string {
		var out []string
		for _, bp := range b.m.breakpoints(b.m.planPage.current).List() {
			s := itoa(bp.ID) + " " + bp.Spec()
			if !bp.Enabled {
				s += " (off)"
			}
			out = append(out, s)
		}
		return strings.Join(out, "; ")
	}
	wantBook := func(t *testing.T, b *bench, want string) {
		t.Helper()
		if got := book(b); got != want {
			t.Errorf("breakpoints %q, want %q", got, want)
		}
	}
	runCases(t, []benchCase{
		{": opens the command line and takes the keys", nil, seq(keyColon, typeText("rq")), func(t *testing.T, b *bench) {
			if !b.m.cmdline.Active() || b.m.cmdline.Value() != "rq" {
				t.Fatalf("command line active %v, value %q", b.m.cmdline.Active(), b.m.cmdline.Value())
			}
			wantNoRun(t, b)
			wantScreen(t, b, ":rq")
			b.press(keyEsc)
			if b.m.cmdline.Active() {
				t.Error("esc left the command line open")
			}
		}},
		{"a line that does not parse stays open with the error", nil, command("frobnicate"), func(t *testing.T, b *bench) {
			if !b.m.cmdline.Active() || b.m.cmdline.Err() == nil {
				t.Fatalf("active %v, err %v", b.m.cmdline.Active(), b.m.cmdline.Err())
			}
		}},
		{"break with kinds stops only at those kinds", nil, seq(command("break E1/do.* result"), keyDebug, keySubmit), func(t *testing.T, b *bench) {
			wantBook(t, b, "1 E1/do.* result")
			wantHeld(t, b, "E1/do.0", engine.StopResult, "breakpoint 1 (E1/do.*)")
		}},
		{"break with an if condition stops where it holds", nil, seq(command("break E1/do.* step if {{item}} eq b"), keyDebug, keySubmit), func(t *testing.T, b *bench) {
			wantBook(t, b, "1 E1/do.* step if {{item}} eq b")
			wantHeld(t, b, "E1/do.1", engine.StopStep, "breakpoint 1")
			b.press(command("print item")...)
			wantNotice(t, b, `item = "b"`)
		}},
		{"break with a bad kind is refused at the line", nil, command("break E1 stopp"), func(t *testing.T, b *bench) {
			if b.m.cmdline.Err() == nil || !strings.Contains(b.m.cmdline.Err().Error(), "is not a stop kind") {
				t.Errorf("err %v", b.m.cmdline.Err())
			}
			wantBook(t, b, "")
		}},
		{"break with no pattern is refused at the line", nil, command("break"), func(t *testing.T, b *bench) {
			if b.m.cmdline.Err() == nil || !strings.Contains(b.m.cmdline.Err().Error(), "break takes a PATTERN") {
				t.Errorf("err %v", b.m.cmdline.Err())
			}
			wantBook(t, b, "")
		}},
		{"cond sets a breakpoint's condition, and removes it", nil,
			seq(command("break E1/do.* step"), command("cond 1 {{item}} eq c"), keyDebug, keySubmit), func(t *testing.T, b *bench) {
				wantHeld(t, b, "E1/do.2", engine.StopStep, "breakpoint 1")
				b.press(keyAbort)
				b.press(command("cond 1")...)
				wantNotice(t, b, "breakpoint 1 has no condition now")
				wantBook(t, b, "1 E1/do.* step")
			}},
		{"clear removes a breakpoint", func(b *bench) { b.toDoc(docSimple) }, seq(command("break S1"), command("clear 1"), keyDebug), func(t *testing.T, b *bench) {
			wantBook(t, b, "")
			wantHeld(t, b, "S0", engine.StopStep, "entry")
		}},
		{"clear of a breakpoint that is not there says so", nil, command("clear 7"), func(t *testing.T, b *bench) {
			wantNotice(t, b, "there is no breakpoint 7")
		}},
		{"disable and enable turn a breakpoint off and on", func(b *bench) { b.toDoc(docSimple) }, seq(command("break S1"), command("disable 1")), func(t *testing.T, b *bench) {
			wantBook(t, b, "1 S1 (off)")
			if breakMarked(treeLine(t, b.m.planPage.tree().View(), "S1  builtin__reshape")) {
				t.Error("a disabled breakpoint marks its row")
			}
			b.press(command("enable 1")...)
			wantBook(t, b, "1 S1")
			if !breakMarked(treeLine(t, b.m.planPage.tree().View(), "S1  builtin__reshape")) {
				t.Error("an enabled breakpoint does not mark its row")
			}
		}},
		{"errors off and on", func(b *bench) { b.toDoc(docFailing) }, seq(command("errors off"), keyDebug, keyContinue), func(t *testing.T, b *bench) {
			wantEnded(t, b, "failed")
			b.press(command("errors on")...)
			wantNotice(t, b, "break on error is on")
			b.press(keyDebug, keyContinue)
			wantHeld(t, b, "F1", engine.StopError, "error")
		}},
		{"bp lists the breakpoints", nil, command("bp"), func(t *testing.T, b *bench) {
			wantOverlay(t, b, overlayNone)
			wantNotice(t, b, breakpoints.Empty)
		}},
		{"goto selects a plan row", nil, command("goto E2"), func(t *testing.T, b *bench) {
			wantRow(t, b.m, 4, "E2")
		}},
		{"a goto that went replaces the last notice and says where", nil, command("goto nosuch"), func(t *testing.T, b *bench) {
			wantNotice(t, b, "no step at nosuch")
			b.press(command("goto E2")...)
			wantNotice(t, b, "at E2 in the plan")
			if strings.Contains(b.m.notice.text, "no step") {
				t.Errorf("the status line still says %q", b.m.notice.text)
			}
			if out := b.m.panels.output.Text(); !strings.Contains(out, "at E2 in the plan") {
				t.Errorf("the output pane does not say where the goto went:\n%s", out)
			}
		}},
		{"goto selects a row of the run on show", func(b *bench) { b.runToEnd(docFlow) }, command("goto E1/do.1"), func(t *testing.T, b *bench) {
			if r, _ := b.m.runPage.tree.Selected(); r.Path != "E1/do.1" {
				t.Errorf("selected %s", r.Path)
			}
			wantScreen(t, b, "Inspector E1/do.1")
		}},
		{"help COMMAND says what it does", nil, command("help until"), func(t *testing.T, b *bench) {
			wantNotice(t, b, "until PATTERN: ")
			wantOverlay(t, b, overlayNone)
		}},
		{"goto a path that is nowhere says so", nil, command("goto E9"), func(t *testing.T, b *bench) {
			wantNotice(t, b, "no step at E9")
		}},
		{"a new run clears what was said of the last", func(b *bench) { b.toDoc(docSlow) }, nil, func(t *testing.T, b *bench) {
			b.m.notify(noticeInfo, "the run ended ok")
			b.send(keyRun)
			b.until("the slow plan to run", func(m model) bool {
				n, ok := m.runPage.run.tree.Node("W0")
				return ok && n.Status == live.Running
			})
			if strings.Contains(b.m.notice.text, "the run ended") {
				t.Errorf("the new run's status line still says %q", b.m.notice.text)
			}
		}},
		{"switching plans clears what was said of the last", func(b *bench) { b.runToEnd(docSimple) }, seq(keyNextPlan), func(t *testing.T, b *bench) {
			if b.m.notice.text != "" {
				t.Errorf("the next plan's status line says %q", b.m.notice.text)
			}
		}},
		{"goto a path that is nowhere leaves the run on show", func(b *bench) { b.runToEnd(docFlow) }, command("goto E9"), func(t *testing.T, b *bench) {
			wantNotice(t, b, "no step at E9")
			if !b.m.runShown() {
				t.Error("a failed goto switched from the run to the plan")
			}
		}},
		{"print, stack and where read the held stop", func(b *bench) { b.debugTo(docFlow, "E1/do.0") }, command("print E0.topic"), func(t *testing.T, b *bench) {
			wantNotice(t, b, `E0.topic = "bugs"`)
			b.press(command("stack")...)
			wantNotice(t, b, "E1/do.0 (")
			wantNotice(t, b, " ← ")
			b.press(command("where")...)
			wantNotice(t, b, "held at E1/do.0 (step): breakpoint 1 (E1/do.0)")
			b.press(command("threads")...)
			wantNotice(t, b, "2 live, 1 held: main at E1 (step), ▶ E1/do.0 (step)")
			b.press(command("print nothing.here")...)
			if strings.Contains(b.m.notice.text, " = ") {
				t.Errorf("print of an unknown path: %q", b.m.notice.text)
			}
		}},
		{"print, stack and where with no run held say so", nil, command("print E0"), func(t *testing.T, b *bench) {
			wantNotice(t, b, "print reads the scope of a held run; no run is held")
			b.press(command("stack")...)
			wantNotice(t, b, "no run is held")
			b.press(command("where")...)
			wantNotice(t, b, "no run is held")
		}},
		{"run with JSON inputs runs without the form", nil, command(`run {"topic": "cats"}`), func(t *testing.T, b *bench) {
			wantOverlay(t, b, overlayNone)
			wantEnded(t, b, "ok")
			jsonEqual(t, node(t, b, "E0").Result, `{"items": ["a", "b", "c"], "topic": "cats"}`)
		}},
		{"run without inputs opens the form", nil, command("run"), func(t *testing.T, b *bench) {
			wantOverlay(t, b, overlayForm)
		}},
		{"run with inputs the plan refuses says why", nil, command(`run {"topic": 3}`), func(t *testing.T, b *bench) {
			if st := b.m.runPage.run.state; st.Status != "refused" {
				t.Errorf("status %q", st.Status)
			}
			wantNotice(t, b, `"topic": got number, want string`)
		}},
		{"debug with JSON inputs holds the run at its first stop", nil, command(`debug {"topic": "cats"}`), func(t *testing.T, b *bench) {
			wantHeld(t, b, "E0", engine.StopStep, "entry")
			b.press(command("print input.topic")...)
			wantNotice(t, b, `input.topic = "cats"`)
		}},
		{"until runs to a path, and watch reads one at every stop", func(b *bench) { b.debugTo(docFlow, "") }, command("watch stop.path"), func(t *testing.T, b *bench) {
			wantNotice(t, b, `watch 1: stop.path = "E0"`)
			b.press(command("until E1/do.1")...)
			wantHeld(t, b, "E1/do.1", engine.StopStep, "until")
			b.press(command("watches")...)
			wantNotice(t, b, `watches: 1 stop.path = "E1/do.1"`)
			b.press(command("thread E1/do.7")...)
			wantNotice(t, b, "no thread of the run is named E1/do.7")
		}},
		{"until a path no stop of the plan has warns, and runs on", func(b *bench) {
			b.debugTo(docFlow, "")
			b.press(command("break E2 step")...)
		}, command("until nomatch/**"), func(t *testing.T, b *bench) {
			wantHeld(t, b, "E2", engine.StopStep, "breakpoint")
			if out := b.m.panels.output.Text(); !strings.Contains(out, "until nomatch/**: no path of the plan matches nomatch/**, so it never stops; the nearest that would:") {
				t.Errorf("the output pane does not warn of the pattern:\n%s", out)
			}
		}},
		{"the movement verbs move a held run", func(b *bench) { b.debugTo(docFlow, "E1 step") }, command("step"), func(t *testing.T, b *bench) {
			wantHeld(t, b, "E1/do.0", engine.StopStep, "step")
			b.press(command("out")...)
			wantHeld(t, b, "E1", engine.StopResult, "step out")
			b.press(command("next")...)
			wantHeld(t, b, "E2", engine.StopStep, "next")
			b.press(command("next")...)
			wantHeld(t, b, "E2", engine.StopResult, "next")
			b.press(command("next")...)
			wantEnded(t, b, "ok")
		}},
		{"inject at a stop injects and moves on", func(b *bench) { b.debugTo(docFlow, "E1/do.0 step") }, command(`inject {"name": "zed"}`), func(t *testing.T, b *bench) {
			wantHeld(t, b, "E1", engine.StopResult, "next")
			jsonEqual(t, node(t, b, "E1/do.0").Result, `{"name": "zed"}`)
		}},
		{"inject of a value that breaks the schema is refused and the run stays", func(b *bench) { b.debugTo(docFlow, "E1/do.0 step") }, command(`inject {"name": 1}`), func(t *testing.T, b *bench) {
			wantNotice(t, b, "the value does not fit the schema that applies here")
			wantHeld(t, b, "E1/do.0", engine.StopStep, "breakpoint 1")
		}},
		{"replace at an error stop replaces the failure", func(b *bench) { b.debugTo(docFailing, "") },
			seq(keyContinue, command(`replace {"text": "mended"}`), keyContinue), func(t *testing.T, b *bench) {
				wantEnded(t, b, "ok")
				jsonEqual(t, node(t, b, "F1").Result, `{"text": "mended"}`)
			}},
		{"answer and decline at an ask, once its editor is closed", func(b *bench) { b.debugTo(docAsking, "") },
			seq(keyNext, keyEsc, command(`answer {"ship": true}`), command("next")), func(t *testing.T, b *bench) {
				wantHeld(t, b, "A1", engine.StopStep, "next")
				jsonEqual(t, node(t, b, "A0").Result, `{"answer": {"ship": true}, "answered": true}`)
				b2 := newBench(t, 120, 40)
				b2.debugTo(docAsking, "")
				b2.press(keyNext, keyEsc, command("decline"), keyContinue)
				wantEnded(t, b2, "ok")
				jsonEqual(t, node(t, b2, "A1").Result, `{"shipped": false}`)
			}},
		{"abort aborts", func(b *bench) { b.debugTo(docSimple, "") }, command("abort"), func(t *testing.T, b *bench) {
			wantEnded(t, b, "aborted")
		}},
		{"pause with no run going says so", nil, command("pause"), func(t *testing.T, b *bench) {
			wantNotice(t, b, "no run is going to pause")
		}},
		{"tools opens the catalog", nil, command("tools"), func(t *testing.T, b *bench) {
			wantOverlay(t, b, overlayCatalog)
		}},
		{"runs opens the runs panel", nil, command("runs"), func(t *testing.T, b *bench) {
			wantOverlay(t, b, overlayRuns)
			wantScreen(t, b, "no earlier runs of this plan")
		}},
		{"help opens the help", nil, command("help"), func(t *testing.T, b *bench) {
			wantOverlay(t, b, overlayHelp)
		}},
		{"new writes a plan from the skeleton and shows it", nil, command("new fresh"), func(t *testing.T, b *bench) {
			wantNotice(t, b, "created .stepwise/plans/fresh.yaml")
			if b.m.planPage.count() != len(planNames)+1 || b.m.planPage.document().Name() != "fresh" {
				t.Fatalf("%d plans, showing %s", b.m.planPage.count(), b.m.planPage.document().Name())
			}
			if d := b.m.planPage.document(); !d.Report.OK() {
				t.Errorf("the skeleton has problems: %v", d.Report.Problems)
			}
			wantScreen(t, b, "[fresh ✓]")
		}},
		{"new puts the plan's tab at its place by name, the run on show kept", func(b *bench) { b.runToEnd(docSimple) }, command("new aaa_first"), func(t *testing.T, b *bench) {
			if b.m.planPage.current != 0 || b.m.planPage.document().Name() != "aaa_first" {
				t.Fatalf("the new plan is tab %d of %d", b.m.planPage.current, b.m.planPage.count())
			}
			if d := b.m.planPage.documentAt(b.m.runPage.run.doc); d.Name() != "simple" {
				t.Errorf("the run on show points at %s", d.Name())
			}
			wantScreen(t, b, "[aaa_first ✓] flow ✓")
		}},
		{"new will not write over a plan", nil, command("new simple"), func(t *testing.T, b *bench) {
			wantNotice(t, b, "simple exists already: open it instead (")
			if b.m.planPage.count() != len(planNames) {
				t.Error("a plan was added")
			}
		}},
		{"new refuses a name that is no identifier", nil, command("new no/good"), func(t *testing.T, b *bench) {
			if b.m.cmdline.Err() == nil || !strings.Contains(b.m.cmdline.Err().Error(), "is not a plan identifier") {
				t.Errorf("err %v", b.m.cmdline.Err())
			}
			if b.m.planPage.count() != len(planNames) {
				t.Error("a plan was added")
			}
		}},
		{"open shows an earlier run", func(b *bench) { b.runToEnd(docSimple) }, nil, func(t *testing.T, b *bench) {
			id := b.p.waitRecorded(t, "simple", 1)[0].ID
			b.press(keyPlanView)
			b.press(command("open " + id)...)
			if b.m.runPage.run.stored != id || !b.m.runShown() {
				t.Fatalf("showing %q, run view %v", b.m.runPage.run.stored, b.m.runShown())
			}
			wantScreen(t, b, "run "+format.ShortID(id)+" (earlier, read-only) ✓ ok")
		}},
		{"open of an unknown run says so", nil, command("open 0123456789abcdef"), func(t *testing.T, b *bench) {
			wantNotice(t, b, "0123456789abcdef")
			wantNoRun(t, b)
		}},
		{"fork and diff of an opened run", func(b *bench) { b.runToEnd(docSimple); b.press(keyRun) }, nil, func(t *testing.T, b *bench) {
			runs := b.p.waitRecorded(t, "simple", 2)
			b.press(command("open " + runs[1].ID)...)
			b.press(command("diff " + runs[0].ID)...)
			wantOverlay(t, b, overlayDiff)
			wantScreen(t, b, "Diff A "+runs[1].ID[:12]+" · B "+runs[0].ID[:12], "0 differ · 2 same")
			b.press(keyEsc)
			b.press(command("fork S1")...)
			wantOverlay(t, b, overlayEditor)
			b.press(keySubmit)
			wantNotice(t, b, "forked "+format.ShortID(runs[1].ID)+" from S1: 1 step reused, the run ok")
		}},
		{"fork and diff with no earlier run on show say so", nil, command("fork E1"), func(t *testing.T, b *bench) {
			wantNotice(t, b, "f forks a recorded run")
			b.press(command("diff 0123")...)
			wantNotice(t, b, "diff compares the earlier run on show with another")
		}},
		{"quit quits, aborting a held run", func(b *bench) { b.debugTo(docSimple, "") }, command("quit"), func(t *testing.T, b *bench) {
			if !b.quit {
				t.Fatal("did not quit")
			}
			if st := b.m.runPage.run.session.Wait(); st.Status != "aborted" {
				t.Errorf("the run %s", st.Status)
			}
		}},
	})
}

// TestKeyAfterCommandLine types a line at the : command line and a key at
// once after it: the line is carried out within the enter key, so the key
// after it (a fast typist's, a paste's, a script's) finds it done.
func TestKeyAfterCommandLine(t *testing.T) {
	b := newBench(t, 120, 40)
	b.toDoc(docSimple)
	b.send(command("break S1"))
	b.send(keyDebug)
	b.settle()
	if r := b.m.runPage.run; r.held() && r.state.Stop.Path == "S0" {
		t.Fatalf("':break S1' then enter then g started the debug run before the breakpoint was set, so it is held at S0 (%s) instead of S1",
			r.state.Reason)
	}
	wantHeld(t, b, "S1", engine.StopStep, "breakpoint 1 (S1)")
}

// exitPlan ends at its gate before its last step.
const exitPlan = `identifier: gated
name: Gated
description: Stops at its gate when there is nothing to do.
steps:
  - id: G0
    tool_name: builtin__reshape
    input: { shape: { count: 0 } }
  - id: G1
    tool_name: exit
    input:
      when: { value: "{{G0.count}}", op: eq, to: 0 }
      status: success
      message: "Nothing to do: the queue is empty."
  - id: G2
    tool_name: builtin__reshape
    input: { shape: { done: true } }
`

// TestExitShown: a run an exit gate ends says the gate's message on the
// status line, and the steps the exit cut off show as skipped, not
// pending.
func TestExitShown(t *testing.T) {
	b := newBenchWithPlan(t, "gated", exitPlan)
	b.press(keyRun)
	wantNotice(t, b, "the run exited at G1 (success): Nothing to do: the queue is empty.")
	n, ok := b.m.runPage.run.tree.Node("G2")
	if !ok || n.Status != live.Skipped || !n.CutOff {
		t.Errorf("G2, which the exit cut off, is %q (cut off %v), want skipped by the exit", n.Status, n.CutOff)
	}
	// The rows say why: the skipped step that the exit cut off, and the
	// exit's step what it said.
	b.press(command("goto G2")...)
	wantScreen(t, b, "skipped: an exit ended the run before it")
	b.press(command("goto G1")...)
	b.m.runPage.inspector.SelectTab(inspector.TabResult)
	wantScreen(t, b, "Exit  success", "Nothing to do: the queue is empty.")
}

// TestHelpOpensAtItsTop: help scrolled down and closed opens at its top
// the next time.
func TestHelpOpensAtItsTop(t *testing.T) {
	b := newBench(t, 80, 24)
	b.press(keyHelp, keyBottom)
	if b.m.panels.help.View() == "" || !strings.Contains(b.screen(), "/") {
		t.Fatal("help did not open")
	}
	scrolled := b.screen()
	b.press(keyEsc, keyHelp)
	if b.screen() == scrolled {
		t.Errorf("help opened where it was left:\n%s", scrolled)
	}
	b.press(keyEsc)
	b.press(keyHelp)
	first := b.screen()
	b.press(keyEsc, keyHelp)
	if b.screen() != first {
		t.Error("help opened unscrolled twice shows two screens")
	}
}
