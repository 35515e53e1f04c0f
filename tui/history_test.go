package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/tui/format"
	"github.com/stepwise-dev/stepwise/tui/live"
)

// twoRuns runs the simple plan twice and waits until the store has both;
// it returns their ids, newest first.
func (b *bench) twoRuns() (newest, older string) {
	b.t.Helper()
	b.runToEnd(docSimple)
	b.press(keyRun)
	runs := b.p.waitRecorded(b.t, "simple", 2)
	return runs[0].ID, runs[1].ID
}

// TestRunsKey opens the runs panel with R and works it: enter opens a
// run read-only, y replays one, d then d on another diffs them; f forks
// the run on show from the selected row.
func TestRunsKey(t *testing.T) {
	t.Run("R lists the plan's recorded runs", func(t *testing.T) {
		t.Parallel()
		b := newBench(t, 120, 40)
		newest, older := b.twoRuns()
		b.press(keyRuns)
		wantOverlay(t, b, overlayRuns)
		if b.m.panels.runs.Len() != 2 {
			t.Fatalf("the panel lists %d runs, want 2", b.m.panels.runs.Len())
		}
		wantScreen(t, b, "Runs 2 runs", newest[:12], older[:12], "✓ ok")
		// Another plan's runs are not listed.
		b.press(keyEsc, keyNextPlan, keyRuns)
		wantScreen(t, b, "no earlier runs of this plan: r runs it")
	})
	t.Run("R uses a wide window's width, and a click lands on the row under it", func(t *testing.T) {
		t.Parallel()
		b := newBench(t, 160, 40)
		newest, older := b.twoRuns()
		b.press(keyRuns)
		if w := b.m.panels.runs.Width; w != 156 {
			t.Errorf("the runs panel is %d wide in 160 columns, want 156", w)
		}
		// The second row, drawn two lines under the panel's header.
		lines := strings.Split(b.screen(), "\n")
		y := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, older[:12]) })
		if y < 0 || !strings.Contains(b.screen(), newest[:12]) {
			t.Fatalf("the runs are not listed:\n%s", b.screen())
		}
		b.press(tea.MouseClickMsg{X: 10, Y: y, Button: tea.MouseLeft})
		if r, _ := b.m.panels.runs.Selected(); r.ID != older {
			t.Errorf("the click at line %d selected %s, want %s", y, r.ID, older)
		}
	})
	t.Run("enter opens a run read-only", func(t *testing.T) {
		t.Parallel()
		b := newBench(t, 120, 40)
		newest, _ := b.twoRuns()
		b.press(keyRuns, keyHome, keyEnter)
		wantOverlay(t, b, overlayNone)
		r := b.m.runPage.run
		if r.stored != newest || r.session != nil || r.active() || !b.m.runShown() {
			t.Fatalf("showing %q (session %v, active %v, run view %v)", r.stored, r.session != nil, r.active(), b.m.runShown())
		}
		wantNotice(t, b, "f forks it from the selected step · y replays it · w shows its timeline · P shows the plan")
		wantScreen(t, b, "run "+format.ShortID(newest)+" (earlier, read-only) ✓ ok", "S0  builtin__reshape", "S1  builtin__reshape")
		jsonEqual(t, node(t, b, "S1").Result, `{"echo": "hello"}`)
		// Read-only: the run keys say there is nothing to move.
		b.press(keyNext)
		wantNotice(t, b, "no run is held")
		b.press(keyAbort)
		wantNotice(t, b, "no run is going")
	})
	t.Run("an opened run of a plan with model calls shows them", func(t *testing.T) {
		t.Parallel()
		b := newBench(t, 120, 40)
		b.runToEnd(docFlow)
		id := b.p.waitRecorded(t, "flow", 1)[0].ID
		b.press(keyPlanView, keyRuns, keyEnter)
		if b.m.runPage.run.stored != id {
			t.Fatalf("showing %q", b.m.runPage.run.stored)
		}
		for _, p := range []string{"E1/do.2", "E2/agent.1/builtin__reshape", "E2/agent.2/repair"} {
			if n := node(t, b, p); n.Status != live.OK {
				t.Errorf("%s is %s", p, n.Status)
			}
		}
		if tot := b.m.runPage.run.tree.Totals(); tot.Spend.Calls != 3 {
			t.Errorf("%d model calls, want 3", tot.Spend.Calls)
		}
		// At 120 columns the tree shows time and cost; tokens need more.
		wantScreen(t, b, "E2  agent", "$0.0003")
	})
	t.Run("y replays the selected run", func(t *testing.T) {
		t.Parallel()
		b := newBench(t, 120, 40)
		b.runToEnd(docFlow)
		id := b.p.waitRecorded(t, "flow", 1)[0].ID
		b.press(keyRuns, keyReplay)
		wantOverlay(t, b, overlayNone)
		wantNotice(t, b, "the replay of "+format.ShortID(id)+" matches the record (3 model calls answered from it)")
		if r := b.m.runPage.run; !r.state.Finished || r.busy || r.active() {
			t.Fatalf("finished %v busy %v", r.state.Finished, r.busy)
		}
		// The replay is recorded as a run of its own.
		b.p.waitRecorded(t, "flow", 2)
	})
	t.Run("y on a run aborted at a stop replays it up to the abort", func(t *testing.T) {
		t.Parallel()
		b := newBench(t, 120, 40)
		b.debugTo(docFlow, "E1/do.1")
		b.press(keyAbort, keyAbort)
		b.until("the debug run to end", func(m model) bool { return m.runPage.run.state.Finished })
		id := b.p.waitRecorded(t, "flow", 1)[0].ID
		b.press(keyReplay)
		wantNotice(t, b, "the replay of "+format.ShortID(id)+" matches the record up to its abort at E1/do.1")
	})
	t.Run("y on an opened run replays it", func(t *testing.T) {
		t.Parallel()
		b := newBench(t, 120, 40)
		newest, _ := b.twoRuns()
		b.press(keyRuns, keyHome, keyEnter, keyReplay)
		wantNotice(t, b, "the replay of "+format.ShortID(newest)+" matches the record")
	})
	t.Run("y and Y on the run just ended replay it", func(t *testing.T) {
		t.Parallel()
		b := newBench(t, 120, 40)
		b.debugTo(docSimple, "")
		b.press(keyReplay)
		wantNotice(t, b, "the run is going: it can be replayed once it ends")
		b.press(command("continue")...)
		b.until("the debug run to end", func(m model) bool { return m.runPage.run.state.Finished })
		id := b.p.waitRecorded(t, "simple", 1)[0].ID
		b.press(keyReplay)
		wantNotice(t, b, "the replay of "+format.ShortID(id)+" matches the record")

		b = newBench(t, 120, 40)
		b.runToEnd(docSimple)
		b.p.waitRecorded(t, "simple", 1)
		b.press(keyReplayDbg)
		if r := b.m.runPage.run; !r.held() || !r.debug || r.rerun != "replay" {
			t.Fatalf("Y on the run just ended does not hold its replay: %+v", r.state)
		}
	})
	t.Run("Y in the runs panel replays the selected run under the debugger", func(t *testing.T) {
		t.Parallel()
		b := newBench(t, 120, 40)
		b.twoRuns()
		b.press(keyRuns)
		wantScreen(t, b, "Y under the debugger")
		b.press(keyHome, keyReplayDbg)
		wantOverlay(t, b, overlayNone)
		if r := b.m.runPage.run; !r.held() || !r.debug || r.rerun != "replay" {
			t.Fatalf("Y in the panel does not hold a replay: %+v", r.state)
		}
	})
	t.Run("d marks a run and d on another diffs them", func(t *testing.T) {
		t.Parallel()
		b := newBench(t, 120, 40)
		newest, older := b.twoRuns()
		b.press(keyRuns, keyHome, keyDiff)
		if b.m.panels.runs.Marked() != newest {
			t.Fatalf("marked %q, want the newest run", b.m.panels.runs.Marked())
		}
		b.press(keyDown, keyDiff)
		wantOverlay(t, b, overlayDiff)
		wantScreen(t, b, "Diff A "+newest[:12]+" · B "+older[:12], "0 differ · 2 same")
		// The footer says the diff's own keys, not the tree's under it.
		wantScreen(t, b, "j/k move · enter values · space same steps · : command · esc close")
		wantNoScreen(t, b, "tab pane")
		if n := len(b.m.panels.diff.Steps()); n != 2 {
			t.Errorf("the diff compares %d steps, want 2", n)
		}
		b.press(keyEsc)
		wantOverlay(t, b, overlayNone)
	})
	t.Run("d on the marked run unmarks it; esc clears a mark before it closes", func(t *testing.T) {
		t.Parallel()
		b := newBench(t, 120, 40)
		b.twoRuns()
		b.press(keyRuns, keyDiff, keyDiff)
		if b.m.panels.runs.Marked() != "" {
			t.Error("d twice left a mark")
		}
		b.press(keyDiff, keyEsc)
		wantOverlay(t, b, overlayRuns)
		if b.m.panels.runs.Marked() != "" {
			t.Error("esc left the mark")
		}
		b.press(keyEsc)
		wantOverlay(t, b, overlayNone)
	})
	t.Run("f forks the opened run from the selected step", func(t *testing.T) {
		t.Parallel()
		b := newBench(t, 120, 40)
		newest, _ := b.twoRuns()
		b.press(keyRuns, keyHome, keyEnter, keyDown, keyFork)
		// The editor opens on S1's recorded result; kept as it is, S1
		// runs again.
		wantOverlay(t, b, overlayEditor)
		wantScreen(t, b, "fork from S1", `"echo": "hello"`)
		b.press(keySubmit)
		wantNotice(t, b, "forked "+format.ShortID(newest)+" from S1: 1 step reused, the run ok")
		runs := b.p.waitRecorded(t, "simple", 3)
		// The fork is recorded as a run of its own, with the result of
		// the step it ran again.
		b.press(keyRuns, keyHome, keyEnter)
		if b.m.runPage.run.stored != runs[0].ID {
			t.Fatalf("showing %q, want the fork %q", b.m.runPage.run.stored, runs[0].ID)
		}
		jsonEqual(t, node(t, b, "S1").Result, `{"echo": "hello"}`)
	})
	t.Run("f from a map item's row of a flow run forks there and calls the model again", func(t *testing.T) {
		t.Parallel()
		b := newBench(t, 120, 40)
		b.runToEnd(docFlow)
		id := b.p.waitRecorded(t, "flow", 1)[0].ID
		b.press(keyRuns, keyEnter, command("goto E1/do.1"), keyFork, keySubmit)
		// The map's other items are reused as E0 is: only item 1 runs.
		wantNotice(t, b, "forked "+format.ShortID(id)+" from E1/do.1: 3 steps reused, the run ok")
	})
	t.Run("f checks the value it forks with against the step's output schema", func(t *testing.T) {
		t.Parallel()
		b := newBench(t, 120, 40)
		b.runToEnd(docFlow)
		b.p.waitRecorded(t, "flow", 1)
		b.press(keyRuns, keyEnter, command("goto E1/do.1"), keyFork)
		b.press(replaceText(`{"name": 5}`)...)
		b.press(keySubmit)
		wantOverlay(t, b, overlayEditor)
		wantScreen(t, b, "fix the problems above first", "/name")
	})
	t.Run("f from a round's row forks from its step", func(t *testing.T) {
		t.Parallel()
		b := newBench(t, 120, 40)
		b.runToEnd(docFlow)
		b.p.waitRecorded(t, "flow", 1)
		b.press(keyRuns, keyEnter, command("goto E2/agent.1"), keyFork, keySubmit)
		wantNotice(t, b, "from E2: ")
	})
	t.Run("f with the value changed forks with it; the diff opens the row into its values", func(t *testing.T) {
		t.Parallel()
		b := newBench(t, 120, 40)
		b.runToEnd(docSimple)
		id := b.p.waitRecorded(t, "simple", 1)[0].ID
		b.press(keyRuns, keyEnter, command("goto S0"), keyFork)
		b.press(replaceText(`{"greeting": "bye"}`)...)
		b.press(keySubmit)
		wantNotice(t, b, "forked "+format.ShortID(id)+" from S0: 0 steps reused, the run ok, its value set at S0")
		fork := b.p.waitRecorded(t, "simple", 2)[0].ID
		jsonEqual(t, node(t, b, "S1").Result, `{"echo": "bye"}`)
		b.press(command("open " + id)...)
		b.press(command("diff " + fork)...)
		wantOverlay(t, b, overlayDiff)
		wantScreen(t, b, "2 differ · 0 same · enter shows the values")
		b.press(keyEnter)
		if d, ok := b.m.panels.diff.Opened(); !ok || d.Path != "S0" {
			t.Fatalf("enter opened %v", d.Path)
		}
		wantScreen(t, b, "S0  ok → skipped", "greeting", `"hello"`, `"bye"`, "esc back to the steps")
		b.press(keyEsc)
		wantOverlay(t, b, overlayDiff)
		b.press(keyEsc)
		wantOverlay(t, b, overlayNone)
	})
	t.Run("the status line, the runs panel and the diff count alike", func(t *testing.T) {
		t.Parallel()
		b := newBench(t, 120, 40)
		b.runToEnd(docFlow)
		wantEnded(t, b, "ok")
		shown := b.m.runPage.run.tree.Totals().Spend.Tokens()
		rec := b.p.waitRecorded(t, "flow", 1)[0]
		b.press(keyRuns, keyEnter)
		b.press(command("diff " + rec.ID)...)
		wantOverlay(t, b, overlayDiff)
		a, _ := debugger.Count(b.m.panels.diff.Steps())
		if shown == 0 || rec.Usage.Tokens != shown || a.Tokens != shown || a.Steps != rec.StepsExecuted {
			t.Errorf("tokens: status line %d, runs %d, diff %d; steps: runs %d, diff %d", shown, rec.Usage.Tokens, a.Tokens, rec.StepsExecuted, a.Steps)
		}
		wantScreen(t, b, format.Tokens(shown)+" tok", fmt.Sprintf("%d steps", rec.StepsExecuted), format.Tokens(shown)+" tokens")
	})
	t.Run("F forks under the debugger, Y replays under it", func(t *testing.T) {
		t.Parallel()
		b := newBench(t, 120, 40)
		b.runToEnd(docSimple)
		id := b.p.waitRecorded(t, "simple", 1)[0].ID
		b.press(keyRuns, keyEnter, command("goto S1"), keyForkDebug, keySubmit)
		// No breakpoint is set: the fork holds at its first stop that
		// runs again, past S0, which it reuses.
		if r := b.m.runPage.run; !r.held() || !r.debug || r.state.Stop.Path != "S1" {
			t.Fatalf("the fork is not held at S1: %+v", r.state)
		}
		b.press(keyContinue)
		wantNotice(t, b, "forked "+format.ShortID(id)+" from S1: 1 step reused, the run ok")
		b.press(command("open " + id)...)
		b.press(keyReplayDbg)
		if r := b.m.runPage.run; !r.held() || !r.debug || r.state.Stop.Path != "S0" {
			t.Fatalf("the replay is not held at S0: %+v", r.state)
		}
		b.press(keyContinue)
		wantEnded(t, b, "ok")
		b.p.waitRecorded(t, "simple", 3)
	})
	t.Run("a fork asks its asks", func(t *testing.T) {
		t.Parallel()
		b := newBench(t, 120, 40)
		b.runToEnd(docAsking)
		b.press(keySkip)
		wantOverlay(t, b, overlayEditor)
		b.press(replaceText(`{"ship": true}`)...)
		b.press(keySubmit)
		wantEnded(t, b, "ok")
		id := b.p.waitRecorded(t, "asking", 1)[0].ID
		b.press(keyRuns, keyEnter, command("goto A0"), keyFork, keySubmit)
		// A0 runs again: its question is put, as a run puts it.
		wantNotice(t, b, "A0 asks: Ship it?")
		b.press(keySkip)
		wantOverlay(t, b, overlayEditor)
		wantScreen(t, b, "Ship it?")
		b.press(replaceText(`{"ship": false}`)...)
		b.press(keySubmit)
		wantNotice(t, b, "forked "+format.ShortID(id)+" from A0: 0 steps reused, the run ok")
		jsonEqual(t, node(t, b, "A1").Result, `{"shipped": false}`)
	})
	t.Run("a replay marks the answer it gives again as replayed, not by hand", func(t *testing.T) {
		t.Parallel()
		b := newBench(t, 120, 40)
		b.runToEnd(docAsking)
		b.press(keySkip)
		b.press(replaceText(`{"ship": true}`)...)
		b.press(keySubmit)
		wantEnded(t, b, "ok")
		b.p.waitRecorded(t, "asking", 1)
		if n := node(t, b, "A0"); format.Mark(n.Decided, n.Reused) != format.MarkDecided {
			t.Errorf("the answered ask is marked %q in its own run, want ✎", format.Mark(n.Decided, n.Reused))
		}
		b.press(keyRuns, keyEnter, keyReplay)
		wantNotice(t, b, "matches the record")
		if n := node(t, b, "A0"); format.Mark(n.Decided, n.Reused) != format.MarkReplayed {
			t.Errorf("the replayed ask is marked %q (decided %q, reused %q), want ↺", format.Mark(n.Decided, n.Reused), n.Decided, n.Reused)
		}
	})
	t.Run("f on a run going on says it forks once the run ends", func(t *testing.T) {
		t.Parallel()
		b := newBench(t, 120, 40)
		b.goSlow()
		b.send(keyFork)
		b.until("f to answer", func(m model) bool {
			return strings.Contains(m.notice.text, "the run is going: it can be forked once it ends")
		})
		b.finish()
	})
	t.Run("f in the plan view does nothing", func(t *testing.T) {
		t.Parallel()
		b := newBench(t, 120, 40)
		b.press(keyFork)
		wantNoRun(t, b)
		if b.m.notice.text != "" {
			t.Errorf("notice %q", b.m.notice.text)
		}
	})
	t.Run("R with a run held lists the runs, takes the run keys, and : moves it", func(t *testing.T) {
		t.Parallel()
		b := newBench(t, 120, 40)
		b.debugTo(docSimple, "")
		b.press(keyRuns)
		wantOverlay(t, b, overlayRuns)
		b.press(keyNext)
		wantHeld(t, b, "S0", engine.StopStep, "entry")
		b.press(command("next")...)
		wantOverlay(t, b, overlayRuns)
		wantHeld(t, b, "S0", engine.StopResult, "next")
	})
	t.Run("opening an earlier run while one is held is refused", func(t *testing.T) {
		t.Parallel()
		b := newBench(t, 120, 40)
		b.runToEnd(docSimple)
		b.p.waitRecorded(t, "simple", 1)
		b.press(keyDebug, keyRuns)
		wantOverlay(t, b, overlayRuns)
		if b.m.panels.runs.Len() < 1 {
			t.Fatal("no runs listed")
		}
		b.press(keyHome)
		b.press(keyEnter)
		wantNotice(t, b, "a run is going; it must end (a aborts it) before another is shown")
		wantHeld(t, b, "S0", engine.StopStep, "entry")
	})
	t.Run("R with no run store says so", func(t *testing.T) {
		t.Parallel()
		b := newBenchOn(t, openTestProject(t, "memory"), 120, 40)
		b.press(keyRuns)
		wantOverlay(t, b, overlayNone)
		wantNotice(t, b, "no run store: runs are not recorded")
	})
}

// TestFlowRunsTwice runs a plan whose agent answers from a script twice in
// one workbench: each run has models of its own, so the second finds the
// replies the first used.
func TestFlowRunsTwice(t *testing.T) {
	b := newBench(t, 120, 40)
	b.runToEnd(docFlow)
	wantEnded(t, b, "ok")
	b.press(keyRun, keySubmit)
	wantEnded(t, b, "ok")
	if len(b.seen) != 2 {
		t.Errorf("%d runs", len(b.seen))
	}
}

// TestReplayOnShow checks a replay and a fork stay on show once they end,
// with their outcome on the status line: the replay's summary and its
// last events come back separately, in either order.
func TestReplayOnShow(t *testing.T) {
	for i := range 5 {
		b := newBench(t, 120, 40)
		b.runToEnd(docSimple)
		b.p.waitRecorded(t, "simple", 1)
		b.press(keyRuns, keyReplay)
		wantNotice(t, b, "matches the record")
		if r := b.m.runPage.run; r.rerun != "replay" {
			t.Fatalf("try %d: after a replay that matched its record the workbench shows the run from before it (rerun %q, stored %q)",
				i+1, r.rerun, r.stored)
		}
	}
}

// TestRunsPanelAfterRunEnds keeps the runs panel open while a held run is
// moved on to its end: once the recorder has written the run, the panel
// lists it ended.
func TestRunsPanelAfterRunEnds(t *testing.T) {
	for i := range 5 {
		b := newBench(t, 120, 40)
		b.debugTo(docSimple, "")
		b.press(keyRuns)
		b.press(command("continue")...)
		wantEnded(t, b, "ok")
		wantOverlay(t, b, overlayRuns)
		if r, _ := b.m.panels.runs.Selected(); b.m.panels.runs.Len() != 1 || r.Status != "ok" || !strings.Contains(b.screen(), "✓ ok    ") {
			b.p.waitRecorded(t, "simple", 1)
			t.Fatalf("try %d: once the run ended the open runs panel lists %d runs (the first %q) though the store has it ended ok a moment later",
				i+1, b.m.panels.runs.Len(), r.Status)
		}
	}
}

// TestRunsSayHowTheyWereMade: a plain run of the workbench is recorded as
// a run, a debug run as debug, though both go through a session.
func TestRunsSayHowTheyWereMade(t *testing.T) {
	b := newBench(t, 120, 40)
	b.runToEnd(docSimple)
	b.p.waitRecorded(t, "simple", 1)
	b.press(keyDebug, keyContinue, keyContinue, keyContinue, keyContinue)
	b.until("the debug run to end", func(m model) bool { return m.runPage.run.state.Finished })
	runs := b.p.waitRecorded(t, "simple", 2)
	if runs[0].Made != engine.MadeDebug || runs[1].Made != engine.MadeRun {
		t.Errorf("recorded as %q then %q, want run then debug", runs[1].Made, runs[0].Made)
	}
}

// TestReopensOnThePlanShown: a second workbench on the project opens on
// the plan the first showed last.
func TestReopensOnThePlanShown(t *testing.T) {
	b := newBench(t, 120, 40)
	b.toDoc(docFailing)
	next := newModel(context.Background(), Options{Title: "test project", Documents: b.p.docs, Workspace: b.p.ws}, false)
	if next.planPage.current != docFailing {
		t.Errorf("the second workbench opens on %s, want failing", next.planPage.document().Name())
	}
}

// TestInputsKeptAcrossSessions runs the flow plan with a topic typed into
// its form, then opens a second workbench on the project: its form starts
// from the inputs the run store kept, said to be the last run's.
func TestInputsKeptAcrossSessions(t *testing.T) {
	b := newBench(t, 120, 40)
	b.toDoc(docFlow)
	b.press(keyRun)
	wantOverlay(t, b, overlayForm)
	b.press(typeText("cats")...)
	b.press(keySubmit)
	wantEnded(t, b, "ok")
	b.p.ws.Flush()

	// A second workbench on the project, the run store all it shares
	// with the first.
	next := newModel(context.Background(), Options{Title: "test project", Documents: b.p.docs, Workspace: b.p.ws}, false)
	sized, _ := next.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	next = sized.(model)
	next.planPage.show(docFlow)
	next.key(keyRun)
	if screen := ansi.Strip(next.render()); !strings.Contains(screen, "cats  last run's value: typing replaces it") {
		t.Errorf("the second workbench's form does not start from the last run's inputs:\n%s", screen)
	}
}
