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
	stdin, feed := io.Pipe()
	out := &lineFeed{lines: make(chan string, 1024)}
	var errOut bytes.Buffer
	code := make(chan int, 1)
	go func() {
		code <- run(context.Background(), append([]string{"debug", "--json"}, args...), stdin, out, &errOut)
		close(out.lines)
	}()
	next := func() string {
		select {
		case line, ok := <-out.lines:
			if !ok {
				return ""
			}
			return line
		case <-time.After(10 * time.Second):
			t.Fatalf("no answer in 10s\n%s\n%s", out.all.String(), errOut.String())
			return ""
		}
	}
	for line := next(); !strings.HasPrefix(line, `{"reason"`) && line != ""; line = next() {
	}
	for _, line := range script {
		if _, err := io.WriteString(feed, line+"\n"); err != nil {
			break // the run has ended and stopped reading
		}
		if next() == `{"pausing":true}` {
			next()
		}
	}
	feed.Close()
	c := <-code
	return out.all.String(), errOut.String(), c
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

// TestDebugDriver drives a session through stepwise debug --json: a
// breakpoint set on the command line, one set at a stop with a condition,
// print, an inject that changes what a later step sees, and the end.
func TestDebugDriver(t *testing.T) {
	dir := runProject(t)
	os.WriteFile(filepath.Join(dir, ".stepwise", "plans", "loop.yaml"), []byte(`
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
`), 0o644)
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
