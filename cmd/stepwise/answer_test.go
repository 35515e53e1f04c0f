//go:build linux

package main

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// stallOnceProject writes a project with a solver plan whose model streams
// "PARTIAL-", goes silent past llm_idle_timeout_seconds, and answers in
// full when asked again.
func stallOnceProject(t *testing.T) {
	t.Helper()
	srv := newMessagesServer(t, stalledText("PARTIAL-"), sseMessage("end_turn", 10, 5, sseText("hello from ", "stallonce")))
	dir := claudeProject(t, srv, "\n[settings]\nllm_idle_timeout_seconds = 1\n")
	plan := `identifier: stallonce
name: Stall once
description: A solver whose first attempt stalls.
steps:
  - id: E0
    tool_name: builtin__reshape
    input: { shape: { n: 1 } }
solver:
  query_to_answer: "Say hello."
`
	if err := os.MkdirAll(filepath.Join(dir, ".stepwise", "plans"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".stepwise", "plans", "stallonce.yaml"), []byte(plan), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestAnswerOffTerminalIsTheFinalAnswer runs the binary with stdout a
// file, as `stepwise run PLAN -q > out.txt` does, on a solver whose first
// attempt streams part of an answer and goes silent: the file holds the
// final answer alone, not the part the retry voided.
func TestAnswerOffTerminalIsTheFinalAnswer(t *testing.T) {
	stallOnceProject(t)
	out, err := os.Create(filepath.Join(t.TempDir(), "out.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	var errOut strings.Builder
	cmd := exec.Command(os.Args[0], "run", "stallonce", "-q")
	cmd.Env = append(os.Environ(), cliEnv+"=1", "GORACE=atexit_sleep_ms=0")
	cmd.Stdout, cmd.Stderr = out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %s", err, errOut.String())
	}
	got, _ := os.ReadFile(out.Name())
	if string(got) != "hello from stallonce\n" {
		t.Errorf("stdout %q, want the final answer alone", got)
	}
	if strings.Contains(errOut.String(), "abandoned") {
		t.Errorf("stderr tells of an abandoned answer that stdout never had:\n%s", errOut.String())
	}
}

// TestAnswerOnTerminalSaysWhatWasAbandoned runs the binary with stdout and
// stderr a terminal: the answer streams, and when its first attempt goes
// silent, the part already shown ends its line, a warning says it is
// abandoned and why, and the retried answer follows, its line ended before
// the warning that its call was retried (which --quiet does not hide)
// starts one of its own.
func TestAnswerOnTerminalSaysWhatWasAbandoned(t *testing.T) {
	stallOnceProject(t)
	terminal, reader := openPTY(t, 400, 40)
	cmd := exec.Command(os.Args[0], "run", "stallonce", "-q")
	cmd.Env = append(os.Environ(), cliEnv+"=1", "GORACE=atexit_sleep_ms=0", "TERM=xterm-256color")
	cmd.Stdout, cmd.Stderr = terminal, terminal
	read := make(chan string)
	go func() {
		// Reading ends in an error once the terminal side is closed.
		b, _ := io.ReadAll(reader)
		read <- string(b)
	}()
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	terminal.Close()
	var screen string
	select {
	case screen = <-read:
	case <-time.After(10 * time.Second):
		t.Fatal("the terminal was never closed")
	}
	screen = strings.ReplaceAll(screen, "\r\n", "\n")
	want := regexp.MustCompile(`(?m)^PARTIAL-\nwarning: the solver's answer above is abandoned: the attempt failed \(model claude/claude-test: the server sent nothing for 1s \(llm_idle_timeout_seconds\)\) and is retried; the answer starts again below\nhello from stallonce\n` +
		`warning: solver: claude/claude-test answered after 1 failed attempt: model claude/claude-test: the server sent nothing for 1s \(llm_idle_timeout_seconds\)\n$`)
	if !want.MatchString(screen) {
		t.Errorf("the terminal got:\n%q", screen)
	}
}

// TestAnswerOnTerminalEventsJSONL: under --events jsonl, with the answer
// streaming to a terminal on stdout and stderr a pipe, the warning that
// its first attempt is abandoned is a JSON line among the events, as
// every line of stderr is.
func TestAnswerOnTerminalEventsJSONL(t *testing.T) {
	stallOnceProject(t)
	terminal, reader := openPTY(t, 400, 40)
	cmd := exec.Command(os.Args[0], "run", "stallonce", "--events", "jsonl")
	cmd.Env = append(os.Environ(), cliEnv+"=1", "GORACE=atexit_sleep_ms=0", "TERM=xterm-256color")
	var errOut strings.Builder
	cmd.Stdout, cmd.Stderr = terminal, &errOut
	read := make(chan string)
	go func() {
		// Reading ends in an error once the terminal side is closed.
		b, _ := io.ReadAll(reader)
		read <- string(b)
	}()
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %s", err, errOut.String())
	}
	terminal.Close()
	select {
	case screen := <-read:
		if screen = strings.ReplaceAll(screen, "\r\n", "\n"); screen != "PARTIAL-\nhello from stallonce\n" {
			t.Errorf("the terminal got %q", screen)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the terminal was never closed")
	}
	const abandoned = "the solver's answer above is abandoned: the attempt failed (model claude/claude-test: the server sent nothing for 1s (llm_idle_timeout_seconds)) and is retried; the answer starts again below"
	var warned bool
	for _, line := range strings.Split(strings.TrimSuffix(errOut.String(), "\n"), "\n") {
		var l map[string]any
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("stderr has a line that is not a JSON object: %q", line)
		}
		warned = warned || l["kind"] == "warning" && l["warning"] == abandoned
	}
	if !warned {
		t.Errorf("no warning line says the answer was abandoned:\n%s", errOut.String())
	}
}

// TestInterruptedAnswerEndsItsLine interrupts a run while its solver's
// answer streams to the terminal: what the terminal got of it ends with a
// line break, so that the shell's prompt does not run on from it.
func TestInterruptedAnswerEndsItsLine(t *testing.T) {
	runProject(t)
	slow := `replies:
  - match: solver
    role: solver
    reply: { text: "The first part of a long answer, and the rest of it that never comes.", delay_ms: 3000 }
`
	if err := os.WriteFile(filepath.Join(".stepwise", "replies.yaml"), []byte(slow), 0o644); err != nil {
		t.Fatal(err)
	}
	terminal, reader := openPTY(t, 400, 40)
	cmd := exec.Command(os.Args[0], "run", "narrate")
	cmd.Env = append(os.Environ(), cliEnv+"=1", "GORACE=atexit_sleep_ms=0")
	cmd.Stdout, cmd.Stderr = terminal, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	started, read := make(chan struct{}), make(chan string)
	go func() {
		var got strings.Builder
		buf := make([]byte, 256)
		for {
			n, err := reader.Read(buf)
			if n > 0 && got.Len() == 0 {
				close(started)
			}
			got.Write(buf[:n])
			if err != nil {
				// Reading ends in an error once the terminal side is closed.
				read <- got.String()
				return
			}
		}
	}()
	// The first of the answer's pieces comes after a fifth of its delay;
	// the signal goes once it has.
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the answer never began")
	}
	cmd.Process.Signal(os.Interrupt)
	cmd.Wait()
	terminal.Close()
	got := strings.ReplaceAll(<-read, "\r\n", "\n")
	if !strings.HasPrefix(got, "The first") || strings.Contains(got, "never comes") || !strings.HasSuffix(got, "\n") {
		t.Errorf("the terminal got of the interrupted answer: %q; want part of it, ending its line", got)
	}
}
