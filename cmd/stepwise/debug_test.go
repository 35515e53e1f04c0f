package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// debugCLI runs stepwise debug with the given stdin, read whole at once.
func debugCLI(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), append([]string{"debug"}, args...), strings.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), code
}

// debugTurns runs stepwise debug --json as a program drives it: it waits
// for the first stop, then writes each line of script once the line
// before it has been answered (a pausing answer is followed by the stop
// it comes to, which is waited for too), and then closes stdin.
func debugTurns(t *testing.T, script []string, args ...string) (string, string, int) {
	t.Helper()
	c := startDebug(t, args...)
	c.until(func(l map[string]any) bool { return l["reason"] != nil })
	for _, line := range script {
		if !c.send(line) {
			break // the run has ended and stopped reading
		}
		if answer := c.next(); answer["pausing"] == true {
			c.next()
		}
	}
	return c.end()
}

// debugConversation is a running stepwise debug --json whose stdin a test
// writes a line at a time, reading each answer as it comes.
type debugConversation struct {
	t      *testing.T
	feed   *io.PipeWriter
	out    *lineFeed
	errOut bytes.Buffer
	code   chan int
}

func startDebug(t *testing.T, args ...string) *debugConversation {
	t.Helper()
	stdin, feed := io.Pipe()
	c := &debugConversation{t: t, feed: feed, out: &lineFeed{lines: make(chan string, 1024)}, code: make(chan int, 1)}
	go func() {
		c.code <- run(context.Background(), append([]string{"debug", "--json"}, args...), stdin, c.out, &c.errOut)
		stdin.Close()
		close(c.out.lines)
	}()
	return c
}

// send writes a line to stdin; false once the driver reads no more.
func (c *debugConversation) send(line string) bool {
	_, err := io.WriteString(c.feed, line+"\n")
	return err == nil
}

// next is the next JSON line on stdout; nil once the driver has ended.
func (c *debugConversation) next() map[string]any {
	c.t.Helper()
	select {
	case line, ok := <-c.out.lines:
		if !ok {
			return nil
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			c.t.Fatalf("not one JSON object a line: %q", line)
		}
		return v
	case <-time.After(20 * time.Second):
		c.t.Fatalf("no answer in 20s\n%s\n%s", c.out.text(), c.errOut.String())
		return nil
	}
}

// until reads lines up to the first that ok accepts, and returns it.
func (c *debugConversation) until(ok func(map[string]any) bool) map[string]any {
	c.t.Helper()
	for {
		l := c.next()
		if l == nil {
			c.t.Fatalf("the driver ended first\n%s\n%s", c.out.text(), c.errOut.String())
		}
		if ok(l) {
			return l
		}
	}
}

// ask sends a line and returns its answer.
func (c *debugConversation) ask(line string) map[string]any {
	c.t.Helper()
	c.send(line)
	return c.next()
}

// end closes stdin and waits for the driver to end.
func (c *debugConversation) end() (string, string, int) {
	c.feed.Close()
	for range c.out.lines {
	}
	code := <-c.code
	return c.out.text(), c.errOut.String(), code
}

// lineFeed is stdout that hands each line on as it is written.
type lineFeed struct {
	mu      sync.Mutex
	all     bytes.Buffer
	partial []byte
	lines   chan string
}

func (f *lineFeed) Write(b []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.all.Write(b)
	f.partial = append(f.partial, b...)
	for {
		i := bytes.IndexByte(f.partial, '\n')
		if i < 0 {
			return len(b), nil
		}
		f.lines <- string(f.partial[:i])
		f.partial = f.partial[i+1:]
	}
}

func (f *lineFeed) text() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.all.String()
}

// stopsOf lists the stops and answers --json printed, in short: "stop
// KIND PATH (REASON)", "value V", "breakpoint", "error", "end STATUS".
func stopsOf(t *testing.T, out string) []string {
	t.Helper()
	var got []string
	for _, l := range jsonLines(t, out) {
		switch {
		case l["finished"] == true:
			got = append(got, "end "+l["status"].(string))
		case l["reason"] != nil:
			stop := l["stop"].(map[string]any)
			got = append(got, fmt.Sprintf("stop %s %s (%s)", stop["kind"], stop["path"], l["reason"]))
		case l["error"] != nil:
			got = append(got, "error")
		case l["value"] != nil:
			got = append(got, fmt.Sprintf("value %v", l["value"]))
		case l["breakpoint"] != nil:
			got = append(got, "breakpoint")
		}
	}
	return got
}

// jsonLines decodes the objects --json printed, one a line.
func jsonLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var lines []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var v map[string]any
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("not one JSON object a line: %q", sc.Text())
		}
		lines = append(lines, v)
	}
	return lines
}

// loopPlan maps three items, then reads the last.
const loopPlan = `
identifier: loop
name: Loop
description: A map, then a step that reads it.
steps:
  - id: E1
    tool_name: map
    input:
      over: [a, b, c]
      do:
        - id: A
          tool_name: builtin__reshape
          input: { shape: { v: "{{item}}" } }
  - id: E2
    tool_name: builtin__reshape
    input: { shape: { last: "{{E1.results.2.v}}", count: "{{E1.count}}" } }
output: { last: "{{E2.last}}", count: "{{E2.count}}" }
`

// TestDebugDriver drives a session through stepwise debug --json: a
// breakpoint set on the command line, one set at a stop with a condition,
// print, an inject that changes what a later step sees, and the end.
func TestDebugDriver(t *testing.T) {
	dir := runProject(t)
	os.WriteFile(filepath.Join(dir, ".stepwise", "plans", "loop.yaml"), []byte(loopPlan), 0o644)
	script := []string{
		`break E1/do.*/A step if {{item}} eq c`,
		`continue`,
		`print item`,
		`continue`,
		`print item`,
		`where`,
		`inject {"v": "zzz"}`,
		`continue`,
	}
	out, errOut, code := debugTurns(t, script, "loop", "--break", "E1/do.0/A step")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	lines := jsonLines(t, out)
	// The run is held at its first stop; inject decides at the stop, then
	// goes on to the next stop at the same depth or shallower: the map's
	// result. where says the stop once.
	want := "breakpoint, stop step E1 (entry), breakpoint, stop step E1/do.0/A (breakpoint 1 (E1/do.0/A)), value a, " +
		"stop step E1/do.2/A (breakpoint 2 (E1/do.*/A)), value c, stop step E1/do.2/A (breakpoint 2 (E1/do.*/A)), stop result E1 (next), end ok"
	if got := strings.Join(stopsOf(t, out), ", "); got != want {
		t.Errorf("session lines\n got %s\nwant %s", got, want)
	}
	end := lines[len(lines)-1]
	if b, _ := json.Marshal(end["output"]); end["finished"] != true || string(b) != `{"count":3,"last":"zzz"}` {
		t.Errorf("the last line: %v", end)
	}
	// A --break that does not parse refuses the session before it runs.
	if _, errOut, code := debugCLI(t, "", "loop", "--break", "E1 nonsense"); code != exitUsage || !strings.Contains(errOut, "--break E1 nonsense: 'nonsense' is not a stop kind") {
		t.Errorf("a bad --break: exit %d\n%s", code, errOut)
	}
	// The breakpoints are kept for the next session.
	kept, err := os.ReadFile(filepath.Join(dir, ".stepwise", "breakpoints", "loop.json"))
	if err != nil || !strings.Contains(string(kept), `"pattern": "E1/do.*/A"`) {
		t.Errorf("kept breakpoints: %v\n%s", err, kept)
	}
}
