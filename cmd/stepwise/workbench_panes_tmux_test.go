package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestWorkbenchThreadsAt80x24 drives the real binary on the demo at 80x24
// to a round of an item's agent, with a watch set: the threads pane says
// where each thread is below its id and the kind of its stop, whole; the
// watch pane beside it is as narrow as its one line; the round's row reads
// as every round's does.
func TestWorkbenchThreadsAt80x24(t *testing.T) {
	demoProject(t)
	dir, _ := os.Getwd()
	env := childEnv()
	s := startTmux(t, 80, 24, append(env, os.Args[0], dir)...)
	s.waitFor("incident_brief")
	s.keys("]", "]", "]")
	s.waitFor("[triage_queue")
	for _, line := range []string{"break assess/do.*/verdict/agent.2 round", "watch item.id"} {
		s.keys(":")
		s.typed(line)
		s.keys("Enter")
	}
	s.waitFor("watch 1: item.id")
	s.keys("g")
	s.waitFor("inputs of triage_queue")
	s.typed("Priya")
	// With a breakpoint set, the debug run goes straight to it.
	s.keys("C-s")
	screen := s.waitFor("/verdict/agent.2 (round)")
	if !regexp.MustCompile(`▶ do\.\d  verdict/agent\.2 round`).MatchString(screen) {
		t.Errorf("the current thread does not say where it is below its id, and its stop's kind:\n%s", screen)
	}
	if !strings.Contains(screen, "● main  assess step") {
		t.Errorf("the plan's own thread does not say where it is:\n%s", screen)
	}
	for _, line := range strings.Split(screen, "\n") {
		if i := strings.Index(line, "╭─ Watches"); i >= 0 {
			if col := utf8.RuneCountInString(line[:i]); col < 52 {
				t.Errorf("the watch pane starts at column %d for one short watch:\n%s", col, screen)
			}
		}
	}
	if strings.Contains(screen, "✻ agent.2") {
		t.Errorf("a round's row reads as an agent step:\n%s", screen)
	}
}
