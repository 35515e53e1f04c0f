package tui

import (
	"context"
	"encoding/json"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/debugger/workspace"
)

// TestDelveKeysDoWhatTheLineCommandsDo moves a debug run of the flow plan
// with the workbench's s, n, o and c, and another run of it with the same
// letters typed as stepwise debug's commands, from the same breakpoint:
// each key lands where its command does. p, then a path typed, prints
// what the command p PATH prints.
func TestDelveKeysDoWhatTheLineCommandsDo(t *testing.T) {
	b := newBench(t, 120, 40)
	b.debugTo(docFlow, "E1")

	table := debugger.NewBreakpoints()
	table.BreakOnError(false)
	if _, err := table.Set("E1", nil, nil); err != nil {
		t.Fatal(err)
	}
	// The line driver's run is in a project of its own: the bench waits
	// for every event of its project to reach the workbench.
	other := newTestProject(t)
	session, err := other.ws.Debug(other.docs[docFlow].Plan, table, workspace.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	line := session.Start(context.Background(), map[string]any{"topic": "bugs", "limit": 3})
	t.Cleanup(func() {
		if !line.Finished {
			session.Exec(debugger.Instruction{Verb: debugger.VerbAbort})
		}
	})
	exec := func(text string) debugger.Answer {
		t.Helper()
		in, err := debugger.ParseCommand(text)
		if err != nil {
			t.Fatal(err)
		}
		a, err := session.Exec(in)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		return a
	}
	where := func(st debugger.State) string {
		if st.Finished {
			return "finished " + string(st.Status)
		}
		return string(st.Stop.Kind) + " " + st.Stop.Path
	}
	letters := map[string]tea.KeyPressMsg{"s": keyStepIn, "n": keyNext, "o": keyStepOut, "c": keyContinue}
	for i, letter := range []string{"", "s", "p", "n", "p", "o", "s", "p", "s", "s", "p", "n", "c"} {
		switch letter {
		case "":
		case "p":
			b.press(keyPrint, typeText("stop.path"), keyEnter)
			a := exec("p stop.path")
			v, _ := json.Marshal(a.Value)
			wantNotice(t, b, "stop.path = "+string(v))
			continue
		default:
			b.press(letters[letter])
			line = *exec(letter).State
		}
		workbench := "finished " + string(b.m.runPage.run.state.Status)
		if b.m.runPage.run.held() {
			workbench = where(b.m.runPage.run.state)
		}
		if workbench != where(line) {
			t.Fatalf("after %d keys (%s): the workbench is at %s, stepwise debug at %s", i, letter, workbench, where(line))
		}
		t.Logf("%s → %s", letter, workbench)
	}
	if !line.Finished {
		t.Errorf("the sequence did not reach the end: %s", where(line))
	}
}
