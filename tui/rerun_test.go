package tui

import (
	"testing"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/tui/format"
)

// TestRerunsUnderTheDebugger replays and forks runs under the debugger
// (Y, F) and forks the run just ended (f): a replay's ask is the
// record's to answer, a replay ends with its verdict, the tree's title
// says what the run is again of, and a fork stops at what it runs again,
// not at the steps it reuses, unless a breakpoint asks.
func TestRerunsUnderTheDebugger(t *testing.T) {
	t.Run("going on at a replay's ask gives the recorded answer", func(t *testing.T) {
		t.Parallel()
		b := newBench(t, 120, 40)
		b.runToEnd(docAsking)
		b.press(keySkip, replaceText(`{"ship": true}`), keySubmit)
		wantEnded(t, b, "ok")
		id := b.p.waitRecorded(t, "asking", 1)[0].ID
		b.press(keyReplayDbg)
		wantHeld(t, b, "A0", engine.StopStep, "entry")
		b.press(keyContinue)
		if st := b.m.runPage.run.state; !b.m.runPage.run.held() || st.Stop.Path != "A0" || st.Stop.Kind != engine.StopAsk {
			t.Fatalf("the replay is not held at A0's ask: %+v", st)
		}
		wantNotice(t, b, `going on answers as the record did: {"ship":true} · A0 asks: Ship it?`)
		wantScreen(t, b, "n/c recorded answer · i answer otherwise · a abort")
		b.press(keyContinue)
		wantOverlay(t, b, overlayNone)
		wantEnded(t, b, "ok")
		wantNotice(t, b, "the replay of "+format.ShortID(id)+" matches the record")
		jsonEqual(t, node(t, b, "A1").Result, `{"shipped": true}`)
		if n := node(t, b, "A0"); format.Mark(n.Decided, n.Reused) != format.MarkReplayed {
			t.Errorf("the ask the record answered is marked %q, want ↺", format.Mark(n.Decided, n.Reused))
		}
		// The runs list does not mark the replay decided by hand.
		runs := b.p.waitRecorded(t, "asking", 2)
		if runs[0].Decided > 0 {
			t.Errorf("the replay %s is listed as decided by hand", runs[0].ID)
		}
	})
	t.Run("i at a replay's ask answers otherwise, by hand, and the replay diverges", func(t *testing.T) {
		t.Parallel()
		b := newBench(t, 120, 40)
		b.runToEnd(docAsking)
		b.press(keySkip, replaceText(`{"ship": true}`), keySubmit)
		b.p.waitRecorded(t, "asking", 1)
		b.press(keyReplayDbg, keyContinue, keySkip)
		wantOverlay(t, b, overlayEditor)
		b.press(replaceText(`{"ship": false}`), keySubmit, keyContinue)
		wantEnded(t, b, "aborted")
		wantNotice(t, b, "the replay diverged")
		if n := node(t, b, "A0"); format.Mark(n.Decided, n.Reused) != format.MarkDecided {
			t.Errorf("the ask answered by hand is marked %q, want ✎", format.Mark(n.Decided, n.Reused))
		}
	})
	t.Run("Y ends with the replay's verdict, and the title says what it replays", func(t *testing.T) {
		t.Parallel()
		b := newBench(t, 120, 40)
		b.runToEnd(docFlow)
		id := b.p.waitRecorded(t, "flow", 1)[0].ID
		b.press(keyReplayDbg)
		wantScreen(t, b, "Run flow replay of "+format.ShortID(id)+" ⏸ held")
		b.press(keyContinue)
		wantEnded(t, b, "ok")
		wantNotice(t, b, "the replay of "+format.ShortID(id)+" matches the record (3 model calls answered from it)")
		wantScreen(t, b, "Run flow replay of "+format.ShortID(id)+" ✓ ok")
	})
	t.Run("f forks the run just ended from the selected step", func(t *testing.T) {
		t.Parallel()
		b := newBench(t, 120, 40)
		b.debugTo(docSimple, "")
		b.press(command("goto S1")...)
		b.press(keyFork)
		wantNotice(t, b, "the run is going: it can be forked once it ends")
		wantOverlay(t, b, overlayNone)
		b.press(keyContinue)
		wantEnded(t, b, "ok")
		id := b.p.waitRecorded(t, "simple", 1)[0].ID
		b.press(command("goto S1")...)
		b.press(keyFork)
		wantOverlay(t, b, overlayEditor)
		wantScreen(t, b, "fork from S1", `"echo": "hello"`)
		b.press(keySubmit)
		wantNotice(t, b, "forked "+format.ShortID(id)+" from S1: 1 step reused, the run ok")
		wantScreen(t, b, "Run simple fork of "+format.ShortID(id)+" from S1 ✓ ok")
	})
	t.Run("F forks the run just ended and stops first at what runs again", func(t *testing.T) {
		t.Parallel()
		b := newBench(t, 120, 40)
		b.runToEnd(docSimple)
		id := b.p.waitRecorded(t, "simple", 1)[0].ID
		b.press(command("goto S1")...)
		b.press(keyForkDebug, keySubmit)
		// S0 is reused: the fork is held before S1, which runs again.
		wantHeld(t, b, "S1", engine.StopStep, "entry")
		wantScreen(t, b, "Run simple fork of "+format.ShortID(id)+" from S1 ⏸ held")
		wantNoScreen(t, b, "going on reuses")
		if n := node(t, b, "S0"); format.Mark(n.Decided, n.Reused) != format.MarkReused {
			t.Errorf("S0 is marked %q before the fork's first stop, want ⇢", format.Mark(n.Decided, n.Reused))
		}
		b.press(keyContinue)
		wantNotice(t, b, "forked "+format.ShortID(id)+" from S1: 1 step reused, the run ok")
	})
	t.Run("F stops at a step it reuses where a breakpoint asks", func(t *testing.T) {
		t.Parallel()
		b := newBench(t, 120, 40)
		b.runToEnd(docSimple)
		b.p.waitRecorded(t, "simple", 1)
		b.press(command("break S0")...)
		b.press(command("goto S1")...)
		b.press(keyForkDebug, keySubmit)
		wantHeld(t, b, "S0", engine.StopStep, "breakpoint")
		wantScreen(t, b, "going on reuses its recorded result")
		b.press(keyContinue)
		wantEnded(t, b, "ok")
	})
}
