//go:build linux

package main

import (
	"encoding/json"
	"io"
	"maps"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal of cols by rows: the terminal side a
// program writes to, and the side that reads what it wrote.
func openPTY(tb testing.TB, cols, rows uint16) (terminal, reader *os.File) {
	tb.Helper()
	reader, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		tb.Fatal(err)
	}
	fd := int(reader.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		tb.Fatal(err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		tb.Fatal(err)
	}
	terminal, err = os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		tb.Fatal(err)
	}
	if err := unix.IoctlSetWinsize(int(terminal.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Col: cols, Row: rows}); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { terminal.Close(); reader.Close() })
	return terminal, reader
}

// wideMapFiles is a project whose plan wide maps n items through an
// agent, sixteen at a time, each answered at once by a scripted reply.
func wideMapFiles(n int) map[string]string {
	replies, items := labelReplies(n, "usage: { input_tokens: 100, output_tokens: 10 }")
	return map[string]string{
		"config.toml":  scriptedConfig,
		"replies.yaml": replies,
		"plans/wide.yaml": `identifier: wide
name: Wide
description: A wide map of agents.
steps:
  - id: E0
    tool_name: builtin__reshape
    input:
      shape:
        items:
` + items + `  - id: E1
    tool_name: map
    input:
      over: "{{E0.items}}"
      concurrency: 16
      do:
        tool_name: agent
        input:
          prompt: "Label item {{item}}"
          output_schema: { type: object, required: [label], properties: { label: { type: string } } }
output: { count: "{{E1.count}}" }
`,
	}
}

// runOnPTY runs the built stepwise with args, its stderr an 80x24
// pseudo-terminal, and returns what the run cost and how many bytes it
// wrote to the terminal.
func runOnPTY(b *testing.B, bin string, args ...string) (processCost, int64) {
	b.Helper()
	terminal, reader := openPTY(b, 80, 24)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "TERM=xterm-256color")
	cmd.Stdout, cmd.Stderr = io.Discard, terminal
	read := make(chan int64)
	go func() {
		n, _ := io.Copy(io.Discard, reader)
		read <- n
	}()
	start := time.Now()
	if err := cmd.Run(); err != nil {
		b.Fatalf("stepwise %s: %v", strings.Join(args, " "), err)
	}
	wall := time.Since(start)
	// The reader ends once the terminal side has no writer left.
	terminal.Close()
	return processCost{wall: wall, cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}, <-read
}

// BenchmarkProgressOnTerminal runs a 10,000-item scripted map with
// stderr a pseudo-terminal, with the live progress block and with
// --quiet, in turn: progress-ms and quiet-ms are their wall times,
// overhead-% what the block adds (the target is under 1%), and
// cpu-overhead-% the same of the process's CPU time (progress-cpu-ms,
// quiet-cpu-ms). On a loaded machine the wall times move by more than
// the block costs: run it quiet, with -benchtime=10x or more.
func BenchmarkProgressOnTerminal(b *testing.B) {
	bin := stepwiseBinary(b)
	writeProject(b, wideMapFiles(10_000))
	var shown, quiet processCost
	var written int64
	for b.Loop() {
		c, n := runOnPTY(b, bin, "run", "wide")
		shown.wall, shown.cpu, written = shown.wall+c.wall, shown.cpu+c.cpu, written+n
		c, _ = runOnPTY(b, bin, "run", "wide", "--quiet")
		quiet.wall, quiet.cpu = quiet.wall+c.wall, quiet.cpu+c.cpu
	}
	per := func(d time.Duration) float64 { return float64(d) / float64(b.N) / 1e6 }
	b.ReportMetric(per(shown.wall), "progress-ms")
	b.ReportMetric(per(quiet.wall), "quiet-ms")
	b.ReportMetric((float64(shown.wall)/float64(quiet.wall)-1)*100, "overhead-%")
	b.ReportMetric((float64(shown.cpu)/float64(quiet.cpu)-1)*100, "cpu-overhead-%")
	b.ReportMetric(per(shown.cpu), "progress-cpu-ms")
	b.ReportMetric(per(quiet.cpu), "quiet-cpu-ms")
	b.ReportMetric(float64(written)/float64(b.N), "terminal-bytes")
}

// TestProgressBlockFitsTheTerminal draws the block on a terminal of 30 by
// 4: of six lines it shows two and says how many more there are, each cut
// to the width; the next frame takes the last one's place, each of its
// three lines erased from the bottom up.
func TestProgressBlockFitsTheTerminal(t *testing.T) {
	terminal, reader := openPTY(t, 30, 4)
	b := &liveBlock{out: terminal, fd: terminal.Fd()}
	lines := []string{"▸ E1 map " + strings.Repeat("x", 40), "▸ E2", "▸ E3", "▸ E4", "▸ E5", "  run 1.0s"}
	b.draw(lines)
	b.draw(lines[1:2])
	terminal.Close()
	out, _ := io.ReadAll(reader)
	// The terminal writes each line break as a carriage return and one.
	got := strings.ReplaceAll(string(out), "\r\n", "\n")
	want := "▸ E1 map " + strings.Repeat("x", 19) + "…\n▸ E2\n  … and 4 more\n" +
		"\r\x1b[A\x1b[2K\x1b[A\x1b[2K\x1b[A\x1b[2K▸ E2\n"
	if got != want {
		t.Errorf("the terminal got\n%q\nwant\n%q", got, want)
	}
}

// TestRunApproveUnheldEvents runs the binary with --approve and --events
// jsonl on a terminal (stdin and stderr a pseudo-terminal, as --approve
// wants): a pattern that can hold no call of the plan is said on stderr as
// a JSON line, as the events are, before the run's first; here one no
// call's path matches, in a plan that calls no tool an approval holds, and
// one that matches only a read-only builtin's call.
func TestRunApproveUnheldEvents(t *testing.T) {
	writeProject(t, map[string]string{"plans/pure.yaml": `identifier: pure
name: Pure
description: Calls a read-only builtin only.
steps:
  - id: E0
    tool_name: builtin__reshape
    input: { shape: { n: 1 } }
`})
	terminal, reader := openPTY(t, 400, 40)
	cmd := exec.Command(os.Args[0], "run", "pure", "--approve", "E9", "--approve", "E0", "--events", "jsonl")
	cmd.Env = append(os.Environ(), cliEnv+"=1")
	var stdout strings.Builder
	cmd.Stdin, cmd.Stdout, cmd.Stderr = terminal, &stdout, terminal
	read := make(chan string)
	go func() {
		// Reading ends in an error once the terminal side is closed.
		b, _ := io.ReadAll(reader)
		read <- string(b)
	}()
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	terminal.Close()
	var lines []map[string]any
	for _, l := range strings.Split(strings.ReplaceAll(<-read, "\r\n", "\n"), "\n") {
		if l != "" {
			var v map[string]any
			if err := json.Unmarshal([]byte(l), &v); err != nil {
				t.Fatalf("stderr has a line that is not JSON: %q", l)
			}
			lines = append(lines, v)
		}
	}
	want := []map[string]any{
		{"kind": "warning", "approve": "E9", "warning": "no tool call of the plan is at a path it matches, so it holds none; the plan calls no tool that is not read-only"},
		{"kind": "warning", "approve": "E0", "warning": "every tool call of the plan at a path it matches is of a read-only tool (builtin__reshape), and read-only tools are never held, so it holds none"},
	}
	if len(lines) < 3 || !maps.Equal(lines[0], want[0]) || !maps.Equal(lines[1], want[1]) || lines[2]["kind"] != "run_start" {
		t.Errorf("stderr:\n%v", lines)
	}
}
