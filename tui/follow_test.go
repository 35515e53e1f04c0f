package tui

import (
	"os"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/stepwise-dev/stepwise/tui/live"
)

var keyFollow = tea.KeyPressMsg{Code: 'l', Mod: tea.ModShift, Text: "L"}

// TestFollow checks the run tree's selection follows the running step
// of a run going on until the user moves it, that L makes it follow
// again, and that the status line says which.
func TestFollow(t *testing.T) {
	wantSelected := func(t *testing.T, b *bench, path string) {
		t.Helper()
		if got := b.m.runPage.selectedPath(); got != path {
			t.Errorf("selected %q, want %q", got, path)
		}
	}
	runCases(t, []benchCase{
		{"a run going on is followed", func(b *bench) { b.goSlow() }, nil, func(t *testing.T, b *bench) {
			wantSelected(t, b, "W0")
			wantScreen(t, b, "● running 1 step · following")
		}},
		{"moving the selection stops following", func(b *bench) { b.goSlow(); b.send(keyBottom) }, nil, func(t *testing.T, b *bench) {
			wantSelected(t, b, "W1")
			wantScreen(t, b, "● running 1 step · L follows")
		}},
		{"L follows again", func(b *bench) { b.goSlow(); b.send(keyBottom, keyFollow) }, nil, func(t *testing.T, b *bench) {
			wantSelected(t, b, "W0")
			wantScreen(t, b, "· following")
		}},
		{"a new run is followed", func(b *bench) {
			b.goSlow()
			b.send(keyBottom)
			b.finish()
			// The gate shut again, the next run waits at W0.
			if err := os.Remove(b.p.gate); err != nil {
				b.t.Fatal(err)
			}
			b.send(keyRun)
			b.until("the second run to wait at W0", func(m model) bool {
				n, ok := m.runPage.run.tree.Node("W0")
				return m.runPage.run.active() && ok && n.Status == live.Running
			})
		}, nil, func(t *testing.T, b *bench) {
			wantSelected(t, b, "W0")
		}},
		{"L with no run says so", nil, seq(keyFollow), func(t *testing.T, b *bench) {
			wantNotice(t, b, "no run to follow: r runs the plan, g debugs it")
		}},
		{"L after the run says so", func(b *bench) { b.runToEnd(docSimple) }, seq(keyFollow), func(t *testing.T, b *bench) {
			wantNotice(t, b, "the run is over: nothing runs to follow")
		}},
	})
}

var (
	keyNextFailed = tea.KeyPressMsg{Code: 'e', Mod: tea.ModShift, Text: "E"}
	keyNextHeld   = tea.KeyPressMsg{Code: 'h', Mod: tea.ModShift, Text: "H"}
	keySlowest    = tea.KeyPressMsg{Code: 't', Mod: tea.ModShift, Text: "T"}
)

// TestTreeFilterAndJumps filters the run tree, and the plan tree, with /
// while it has the focus (the letters typed are no commands), clears it
// with esc, and jumps with E, H and T.
func TestTreeFilterAndJumps(t *testing.T) {
	runCases(t, []benchCase{
		{"/ filters the run tree", func(b *bench) { b.runToEnd(docFlow) }, seq(keySearch, typeText("lookup"), keyEnter), func(t *testing.T, b *bench) {
			if b.m.runPage.tree.Filter() != "lookup" || b.m.runPage.inspector.Capturing() {
				t.Fatalf("filter %q", b.m.runPage.tree.Filter())
			}
			wantScreen(t, b, "/lookup", "do.2  user__lookup")
			wantNoScreen(t, b, "E2  agent", "E0  builtin__reshape")
			if len(b.seen) != 1 {
				t.Error("a letter typed into the filter started a run")
			}
		}},
		{"the next run starts unfiltered", func(b *bench) { b.runToEnd(docFlow) }, seq(keySearch, typeText("lookup"), keyEnter), func(t *testing.T, b *bench) {
			b.press(keyRun, keySubmit)
			wantEnded(t, b, "ok")
			if f := b.m.runPage.tree.Filter(); f != "" {
				t.Fatalf("the next run is filtered by %q", f)
			}
			wantScreen(t, b, "E2  agent", "E0  builtin__reshape")
		}},
		{":goto a row the filter hides clears it and selects the row", func(b *bench) { b.runToEnd(docFlow) }, seq(keySearch, typeText("lookup"), keyEnter), func(t *testing.T, b *bench) {
			b.press(command("goto E2")...)
			if !b.m.runShown() || b.m.runPage.selectedPath() != "E2" || b.m.runPage.tree.Filter() != "" {
				t.Fatalf("goto E2: run shown %v, selected %q, filter %q", b.m.runShown(), b.m.runPage.selectedPath(), b.m.runPage.tree.Filter())
			}
			wantNotice(t, b, "at E2 in the run (cleared the filter /lookup, which hid it)")
		}},
		{"esc shows every row again", func(b *bench) { b.runToEnd(docFlow) }, seq(keySearch, typeText("lookup"), keyEnter, keyEsc), func(t *testing.T, b *bench) {
			wantScreen(t, b, "E2  agent", "E0  builtin__reshape")
		}},
		{"/ in the inspector still searches it", func(b *bench) { b.runToEnd(docFlow) }, seq(keyTab, keySearch, typeText("count")), func(t *testing.T, b *bench) {
			if !b.m.runPage.inspector.Capturing() || b.m.runPage.tree.Filtering() {
				t.Error("/ in the inspector did not open its search")
			}
		}},
		{"E goes to the failed row", func(b *bench) { b.runToEnd(docFailing) }, seq(keyHome, keyNextFailed), func(t *testing.T, b *bench) {
			if got := b.m.runPage.selectedPath(); got != "F1" {
				t.Errorf("E selected %q, want F1", got)
			}
		}},
		{"E with no failure says so", func(b *bench) { b.runToEnd(docSimple) }, seq(keyNextFailed), func(t *testing.T, b *bench) {
			wantNotice(t, b, "no row of the run is failed")
			// A jump that goes somewhere next makes that old.
			b.press(keySlowest)
			if strings.Contains(b.m.notice.text, "no row of the run is failed") {
				t.Errorf("T left the notice %q", b.m.notice.text)
			}
		}},
		{"H after E says what it found instead", func(b *bench) { b.debugTo(docFlow, "E1/do.1") }, seq(keyNextFailed, keyNextHeld), func(t *testing.T, b *bench) {
			if got := b.m.runPage.selectedPath(); got != "E1/do.1" || b.m.notice.text != "held now: E1/do.1" {
				t.Errorf("H selected %q with the notice %q, want the stop E1/do.1 said", got, b.m.notice.text)
			}
			wantNoScreen(t, b, "no row of the run is failed")
		}},
		{"H goes to the stop", func(b *bench) { b.debugTo(docFlow, "E1/do.1") }, seq(keyHome, keyNextHeld), func(t *testing.T, b *bench) {
			if got := b.m.runPage.selectedPath(); got != "E1/do.1" {
				t.Errorf("H selected %q, want the stop E1/do.1", got)
			}
		}},
		{"T from the plan shows the run at its slowest row", func(b *bench) { b.runToEnd(docFlow) }, seq(keyPlanView, keySlowest), func(t *testing.T, b *bench) {
			r, _ := b.m.runPage.tree.Selected()
			if !b.m.runShown() || r.HasChildren || r.Duration == 0 {
				t.Errorf("T: run shown %v, selected %s (%v)", b.m.runShown(), r.Path, r.Duration)
			}
			wantNotice(t, b, "slowest: "+r.Path+", ")
		}},
		{"the jump keys without a run say so", nil, seq(keySlowest), func(t *testing.T, b *bench) {
			wantNotice(t, b, "no run to look through")
		}},
		{"/ filters the plan tree by tool", nil, seq(keySearch, typeText("lookup"), keyEnter), func(t *testing.T, b *bench) {
			if got := b.m.planPage.tree().Filter(); got != "lookup" || b.m.page.capturing() {
				t.Fatalf("filter %q, still typing %v", got, b.m.page.capturing())
			}
			// The match, under its map, and nothing else.
			wantScreen(t, b, "Steps /lookup", "E1  map", "do  user__lookup")
			wantNoScreen(t, b, "E0  builtin__reshape", "E2  agent")
			if len(b.seen) != 0 {
				t.Error("a letter typed into the filter started a run")
			}
		}},
		{"/ filters the plan tree by id, and moves among the rows left", nil, seq(keySearch, typeText("e2"), keyEnter, keyHome, keyDown), func(t *testing.T, b *bench) {
			wantScreen(t, b, "E2  agent")
			wantNoScreen(t, b, "E0  builtin__reshape", "E1  map")
			if got := b.m.planPage.selectedPath(); got != "E2" {
				t.Errorf("selected %q, want E2", got)
			}
		}},
		{"esc shows every plan row again", nil, seq(keySearch, typeText("lookup"), keyEnter, keyEsc), func(t *testing.T, b *bench) {
			wantScreen(t, b, "E0  builtin__reshape", "E2  agent")
			wantNoScreen(t, b, "/lookup")
		}},
		{"a filter nothing matches says so", nil, seq(keySearch, typeText("nothing")), func(t *testing.T, b *bench) {
			wantScreen(t, b, "no row matches nothing: esc shows every row")
		}},
		{"/ on the plan's detail says where it works", nil, seq(keyTab, keySearch), func(t *testing.T, b *bench) {
			wantNotice(t, b, "/ filters the tree: tab to it")
		}},
	})
}
