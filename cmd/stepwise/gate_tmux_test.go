package main

import (
	"slices"
	"strings"
	"testing"
)

// TestWorkbenchGatedSubPlan drives the real binary in tmux on the demo:
// triage_queue debugged under :gate with its verdicts posted, so that the
// called plan post_triage_notes holds each tracker__add_comment for
// approval. Held at the first, the item's rows are in plan order (note,
// then posted) and the item runs; a at the prompt approves the call and
// continues, to the next call held.
func TestWorkbenchGatedSubPlan(t *testing.T) {
	demoProject(t)
	s := startWorkbenchOn(t, 160, 60, "Triage the open queue")
	s.keys(":")
	s.typed("gate **/tracker__add_comment")
	s.keys("Enter")
	s.waitFor("for approval")
	s.keys(":")
	s.typed(`debug {"on_call":"Priya"}`)
	s.keys("Enter")
	s.waitFor("held at open_issues")
	s.keys("c")
	s.waitFor("held at confirm (ask)")
	s.keys("i")
	s.waitFor("answer the question at confirm")
	s.keys("C-g")
	s.typed(`{"post": true}`)
	s.keys("C-s")
	s.waitFor("held at confirm (result)")
	s.keys("c")
	s.waitFor("run tracker__add_comment at post/then/post_triage_notes/comments/do.0/posted with:")
	// The stop may reach the screen before the events of the step that
	// ran before it; the rows keep their order whichever comes first.
	screen := s.waitFor("✓ note ")
	// Under the called plan's map: its item, then the item's steps in
	// the plan's order, the one held for approval running and held.
	lines := strings.Split(screen, "\n")
	at := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, "⟳ comments") })
	want := []string{"◐ do.0", "✓ note", "◐ posted"}
	if at < 0 || at+len(want) >= len(lines) {
		t.Fatalf("no rows of the called plan's map:\n%s", screen)
	}
	for i, w := range want {
		if !strings.Contains(lines[at+1+i], w) {
			t.Errorf("row %d under comments is %q, want %q:\n%s", i+1, lines[at+1+i], w, screen)
		}
	}
	// a approves the call and continues: the next stop is the next call
	// held, not this one's result.
	s.keys("a")
	s.waitFor("run tracker__add_comment at post/then/post_triage_notes/comments/do.1/posted with:")
	s.keys("Escape")
	// q read with the Escape would be alt+q.
	s.waitFor("c continue")
	s.keys("q")
}
