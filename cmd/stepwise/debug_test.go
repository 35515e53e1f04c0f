package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// debugCLI runs stepwise debug with the given stdin.
func debugCLI(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), append([]string{"debug"}, args...), strings.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), code
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
	stdin := strings.Join([]string{
		`break E1/do.*/A step if {{item}} eq c`,
		`print item`,
		`continue`,
		`print item`,
		`where`,
		`inject {"v": "zzz"}`,
		`continue`,
	}, "\n") + "\n"
	out, errOut, code := debugCLI(t, stdin, "loop", "--break", "E1/do.0/A step", "--json")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	lines := jsonLines(t, out)
	var kinds []string
	for _, l := range lines {
		switch {
		case l["reason"] != nil:
			stop, _ := l["stop"].(map[string]any)
			path := ""
			if stop != nil {
				path = stop["path"].(string)
			}
			kinds = append(kinds, "stop "+path)
		case l["value"] != nil:
			kinds = append(kinds, "value "+l["value"].(string))
		case l["breakpoint"] != nil:
			kinds = append(kinds, "breakpoint")
		}
	}
	// inject decides at the stop, then goes on to the next stop at the
	// same depth or shallower: the step after the map.
	// where says the stop once.
	want := "breakpoint, stop E1/do.0/A, breakpoint, value a, stop E1/do.2/A, value c, stop E1/do.2/A, stop E2, stop "
	if got := strings.Join(kinds, ", "); got != want {
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
