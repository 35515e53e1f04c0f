package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// tmuxSession is the real binary running in a real terminal: a tmux server
// of the test's own (its own socket, no configuration read), one window of
// a fixed size.
type tmuxSession struct {
	t      *testing.T
	tmux   string
	socket string
}

// childEnv is the env(1) command line that runs stepwise in tmux with
// this test's own home and data directories, extra variables after them.
func childEnv(extra ...string) []string {
	return append([]string{"env", cliEnv + "=1", "GORACE=atexit_sleep_ms=0", "HOME=" + os.Getenv("HOME"),
		"XDG_CONFIG_HOME=" + os.Getenv("XDG_CONFIG_HOME"), "XDG_DATA_HOME=" + os.Getenv("XDG_DATA_HOME"),
		"TERM=xterm-256color"}, extra...)
}

// startWorkbenchOn starts the workbench in tmux on the project in the
// working directory and steps through its plans' tabs to the one whose
// name is shown as name.
func startWorkbenchOn(t *testing.T, width, height int, name string) *tmuxSession {
	t.Helper()
	dir, _ := os.Getwd()
	s := startTmux(t, width, height, append(childEnv("EDITOR=true"), os.Args[0], dir)...)
	s.waitFor("issue_timeline")
	for range 4 {
		if strings.Contains(s.screen(), name) {
			break
		}
		s.keys("]")
		time.Sleep(200 * time.Millisecond)
	}
	s.waitFor(name)
	return s
}

func startTmux(t *testing.T, width, height int, argv ...string) *tmuxSession {
	t.Helper()
	bin, err := exec.LookPath("tmux")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("tmux is needed to drive the workbench in a terminal; .ci/run installs it")
		}
		t.Skip("tmux is not installed")
	}
	s := &tmuxSession{t: t, tmux: bin, socket: filepath.Join(t.TempDir(), "tmux.sock")}
	args := append([]string{"-f", "/dev/null", "new-session", "-d", "-x", strconv.Itoa(width), "-y", strconv.Itoa(height)}, strings.Join(quoteAll(argv), " "))
	s.run(args...)
	// tmux holds an Escape for half a second to see whether a sequence
	// follows; the workbench should get it at once, as from a terminal.
	s.run("set-option", "-s", "escape-time", "0")
	t.Cleanup(func() { exec.Command(s.tmux, "-S", s.socket, "kill-server").Run() })
	return s
}

func (s *tmuxSession) run(args ...string) string {
	s.t.Helper()
	out, err := exec.Command(s.tmux, append([]string{"-S", s.socket}, args...)...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// keys sends tmux key names (Enter, Escape, C-s) or, with literal, text as
// typed.
func (s *tmuxSession) keys(names ...string) {
	s.run(append([]string{"send-keys", "-t", "0"}, names...)...)
}
func (s *tmuxSession) typed(text string) { s.run("send-keys", "-t", "0", "-l", text) }

func (s *tmuxSession) screen() string { return s.run("capture-pane", "-p", "-t", "0") }

// waitFor waits until the screen shows want, and returns it; on a timeout
// the test fails showing the screen it last saw.
func (s *tmuxSession) waitFor(want string) string {
	s.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		screen := s.screen()
		if strings.Contains(screen, want) {
			return screen
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("the screen never showed %q; it shows:\n%s", want, screen)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func quoteAll(argv []string) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return out
}

// TestWorkbenchDebugSession drives the real binary in tmux through a debug
// session on the demo project: a breakpoint on a nested path (every item
// of a reduce), a debug run that reaches the first item, p printing its
// index, a value injected there in place of its result, the breakpoint
// again at the second item, continue, and the plan's output carrying the
// injected value.
func TestWorkbenchDebugSession(t *testing.T) {
	demoProject(t)
	s := startWorkbenchOn(t, 160, 48, "Issue timeline")

	s.keys(":")
	s.typed("break timeline/do.* step")
	s.keys("Enter")
	s.waitFor("breakpoint 1 at timeline/do.*")

	// g asks for the plan's inputs, then runs to the breakpoint.
	s.keys("g")
	s.waitFor("inputs of issue_timeline")
	s.typed("CHK-107")
	s.keys("C-s")
	screen := s.waitFor("held at timeline/do.0")
	if !strings.Contains(screen, "breakpoint 1") {
		t.Errorf("the status line does not say which breakpoint held the run:\n%s", screen)
	}

	// p opens the command line with print typed, as p is print in
	// stepwise debug.
	s.keys("p")
	s.waitFor(":print ")
	s.typed("index")
	s.keys("Enter")
	s.waitFor("index = 0")

	// i opens the inject editor, which says who reads the value.
	s.keys("i")
	s.waitFor("inject a result for timeline/do.0")
	s.keys("Escape")
	// A key the workbench reads with the Escape is alt+key: the next is
	// sent once the editor has closed, which a loaded machine may take
	// longer than any pause to show.
	s.waitFor("c continue")

	s.keys(":")
	s.typed(`inject {"text":"INJECTED BY THE TEST\n"}`)
	s.keys("Enter")
	s.waitFor("held at timeline/do.1")
	s.keys("c")
	s.waitFor("w timeline · $ spend")

	s.keys(":")
	s.typed("goto output")
	s.keys("Enter")
	screen = s.waitFor("INJECTED BY THE TEST")
	if !strings.Contains(screen, "✓ ok") {
		t.Errorf("the status line does not say the run ended ok:\n%s", screen)
	}
	s.keys("q")
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if exec.Command(s.tmux, "-S", s.socket, "has-session").Run() != nil {
			return // the workbench quit, and its window closed
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Errorf("q did not quit the workbench:\n%s", s.screen())
}

// TestWorkbenchKeepsTheDemo opens the workbench with no argument twice:
// the first session says where the demo is kept and runs a plan; after
// it quits, the second has that run among the plan's earlier runs, and
// replays it from the record, its plan file still there; stepwise replay
// finds it too.
func TestWorkbenchKeepsTheDemo(t *testing.T) {
	isolate(t, t.TempDir())
	kept := filepath.Join(os.Getenv("XDG_DATA_HOME"), "stepwise", "demo")
	env := childEnv()
	session := func() *tmuxSession {
		s := startTmux(t, 160, 48, append(env, os.Args[0])...)
		s.waitFor("issue_timeline")
		return s
	}
	toTimeline := func(s *tmuxSession) {
		s.keys("]")
		s.waitFor("Issue timeline")
	}
	quit := func(s *tmuxSession) {
		s.keys("q")
		for deadline := time.Now().Add(10 * time.Second); exec.Command(s.tmux, "-S", s.socket, "has-session").Run() == nil; time.Sleep(100 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("q did not quit the workbench:\n%s", s.screen())
			}
		}
	}

	s := session()
	// The status line may cut the path; the pane says it whole.
	s.waitFor("the demo project is kept in ")
	if _, err := os.Stat(filepath.Join(kept, ".stepwise", "config.toml")); err != nil {
		t.Fatalf("the demo is not kept in %s: %v", kept, err)
	}
	toTimeline(s)
	s.keys("r")
	s.waitFor("inputs of issue_timeline")
	s.typed("CHK-107")
	s.keys("C-s")
	s.waitFor("w timeline · $ spend")
	quit(s)

	s = session()
	// The workbench reopens on the plan it showed last.
	s.waitFor("Issue timeline")
	// The inputs form starts from what the last session's run ran with.
	s.keys("r")
	s.waitFor("CHK-107  last run's value: typing replaces it")
	s.keys("Escape")
	s.waitFor("j/k move")
	s.keys("R")
	screen := s.waitFor("Runs 1 run")
	id := ""
	for _, line := range strings.Split(screen, "\n") {
		if i := strings.Index(line, "▸"); i >= 0 && strings.Contains(line, "ok") {
			id = strings.Fields(line[i+len("▸"):])[0]
		}
	}
	if id == "" {
		t.Fatalf("the runs panel lists no run of the first session:\n%s", screen)
	}
	s.keys("Enter")
	s.waitFor("run " + id + " (earlier, read-only)")
	s.keys("y")
	s.waitFor("the replay of " + id + " matches the record")
	quit(s)

	out, errOut, code := runCLI(t, "replay", id)
	if code != 0 {
		t.Errorf("stepwise replay %s: exit %d\n%s%s", id, code, out, errOut)
	}
}

// TestWorkbenchAt80x24 drives the real binary on the demo at 80x24: ?
// shows a cheat sheet of every pane's keys on one screen, and / filters
// the plan tree while it has the focus, esc showing every row again.
func TestWorkbenchAt80x24(t *testing.T) {
	demoProject(t)
	dir, _ := os.Getwd()
	env := childEnv()
	s := startTmux(t, 80, 24, append(env, os.Args[0], dir)...)
	s.waitFor("incident_brief")

	s.keys("?")
	screen := s.waitFor("Global")
	for _, want := range []string{"Tree", "Inspector", "Run", "Debug", "j/k       move", "ctrl+k    palette", "q         quit", "pgdn every key in full"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the help's first page does not show %q:\n%s", want, screen)
		}
	}
	if lines := strings.Split(strings.TrimRight(screen, "\n"), "\n"); len(lines) > 24 || strings.Contains(screen, "…") {
		t.Errorf("the cheat sheet does not fit 80x24:\n%s", screen)
	}
	s.keys("Escape")
	s.waitFor("j/k move")

	s.keys("/")
	s.typed("exit")
	s.keys("Enter")
	screen = s.waitFor("Steps /exit")
	if !strings.Contains(screen, "nothing_found  exit") || strings.Contains(screen, "investigate  agent") {
		t.Errorf("the filtered plan tree:\n%s", screen)
	}
	s.keys("Escape")
	screen = s.waitFor("investigate  agent")
	if strings.Contains(screen, "/exit") {
		t.Errorf("esc left the filter:\n%s", screen)
	}

	// A question waits without taking the keys; the footer says how to
	// answer it, the warning of a says itself whole, and the breakpoints
	// panel lets no run key by.
	s.keys("]", "]", "]")
	s.waitFor("[triage_queue")
	s.keys("r")
	s.waitFor("inputs of triage_queue")
	s.typed("Priya")
	s.keys("C-s")
	s.waitFor("confirm asks: ")
	screen = s.waitFor("enter/i answer · :decline decline")
	if strings.Contains(screen, "ctrl+s accept") {
		t.Errorf("the answer editor opened by itself:\n%s", screen)
	}
	s.keys("a")
	s.waitFor("a again aborts the run · any other key keeps it")
	s.keys("j")
	s.waitFor("⏸ held at confirm (ask)")
	s.keys("B", "n")
	screen = s.waitFor("space on/off · D clear")
	if strings.Contains(screen, "ctrl+s accept") || !strings.Contains(screen, "⏸ held at confirm (ask)") {
		t.Errorf("n passed the breakpoints panel:\n%s", screen)
	}
	s.keys("Escape")
	s.waitFor("enter/i answer")
	s.keys(":")
	s.typed(`answer {"post": false}`)
	s.keys("Enter")
	s.waitFor("✓ ok")
}

// TestWorkbenchRefusesPipes opens the workbench with stdout a pipe, as a
// script would: it says what to use instead and exits with the usage code,
// drawing nothing.
func TestWorkbenchRefusesPipes(t *testing.T) {
	demoProject(t)
	out, errOut, code := runCLI(t)
	if code != exitUsage || out != "" || !strings.Contains(errOut, "needs an interactive terminal") || !strings.Contains(errOut, "stepwise run") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
