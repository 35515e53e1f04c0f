package main

import (
	"strings"
	"testing"
)

// TestWorkbenchReplayAnswersItsAsk drives the real binary in tmux on the
// demo: a run of triage_queue answered at its confirm ask, then Y replays
// it under the debugger. The tree's title says it is a replay; at the ask
// c goes on with the recorded answer (no editor opens), and the replay
// ends saying it matches its record, as y says it.
func TestWorkbenchReplayAnswersItsAsk(t *testing.T) {
	demoProject(t)
	s := startWorkbenchOn(t, 160, 48, "Triage the open queue")

	s.keys("r")
	s.waitFor("inputs of triage_queue")
	s.typed("Priya")
	s.keys("C-s")
	s.waitFor("held at confirm (ask)")
	s.keys("i")
	s.waitFor("answer the question at confirm")
	s.keys("C-s")
	s.waitFor("w timeline · $ spend")

	s.keys("Y")
	screen := s.waitFor("held at")
	if !strings.Contains(screen, "Run triage_queue replay of ") {
		t.Errorf("the tree's title does not say the run is a replay:\n%s", screen)
	}
	s.keys("c")
	screen = s.waitFor("held at confirm (ask)")
	if !strings.Contains(screen, `going on answers as the record did: {"post":false}`) {
		t.Errorf("the status line does not say what going on answers:\n%s", screen)
	}
	s.keys("c")
	screen = s.waitFor("matches the record")
	if strings.Contains(screen, "answer the question at confirm") {
		t.Errorf("c at the replay's ask opened the answer editor:\n%s", screen)
	}
	s.keys("q")
}
