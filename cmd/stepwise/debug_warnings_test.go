package main

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestDebugTellsWarnings: stepwise debug, fork --debug and replay --debug
// tell every warning of the run that stepwise run, fork and replay tell
// (a failover, a call that answered after failed attempts, a [limits]
// model_input_bytes cut), as the run gives them: in text, each the line
// the command without the debugger writes, before the stop or the end
// that follows it; with --json, each a line {"path": PATH, "warning": ...}
// or, for a failover, {"model": MODEL, "warning": ...}, before the end
// state.
func TestDebugTellsWarnings(t *testing.T) {
	writeProject(t, warningsProjectFiles())
	runID := regexp.MustCompile(`"run_id": "([0-9a-f]+)"`)
	out, errOut, code := runCLI(t, "run", "twice", "--json", "-q")
	twice := warningLines(errOut)
	if code != 0 || len(twice) != 4 {
		t.Fatalf("run twice: exit %d, stderr:\n%s", code, errOut)
	}
	twiceRun := runID.FindStringSubmatch(out)[1]
	out, errOut, code = runCLI(t, "run", "agentic", "--json", "-q")
	if code != 0 || len(warningLines(errOut)) != 1 {
		t.Fatalf("run agentic: exit %d, stderr:\n%s", code, errOut)
	}
	agenticRun := runID.FindStringSubmatch(out)[1]

	for _, c := range []struct {
		name string
		// plain is the command without the debugger, whose warnings the
		// debugger is to tell; debug is the same under it.
		plain, debug []string
	}{
		{"debug", []string{"run", "twice"}, []string{"debug", "twice", "--continue"}},
		{"fork --debug", []string{"fork", twiceRun, "--from", "E1"}, []string{"fork", twiceRun, "--from", "E1", "--debug", "--continue"}},
		{"replay --debug", []string{"replay", agenticRun}, []string{"replay", agenticRun, "--debug", "--continue"}},
	} {
		_, errOut, _ := runCLI(t, append(c.plain, "-q")...)
		want := warningLines(errOut)
		if len(want) == 0 {
			t.Fatalf("%s: %s tells no warning:\n%s", c.name, strings.Join(c.plain, " "), errOut)
		}

		_, errOut, code := rerunCLI(t, "", c.debug...)
		if got := warningLines(errOut); code != 0 || !slices.Equal(got, want) || !strings.Contains(errOut, strings.Join(want, "\n")+"\nrun finished: ok\n") {
			t.Errorf("%s: exit %d, warnings %q, want %q before the end; stderr:\n%s", c.name, code, got, want, errOut)
		}

		out, errOut, code := rerunCLI(t, "", append(c.debug, "--json")...)
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		var told []string
		for _, line := range lines[:len(lines)-1] {
			var answer struct {
				Path, Model, File, Warning string
				Line, Col                  int
			}
			if err := json.Unmarshal([]byte(line), &answer); err != nil || answer.Warning == "" {
				t.Errorf("%s --json: not a warning line: %s", c.name, line)
				continue
			}
			// The line the text says, from the JSON.
			switch {
			case answer.Path != "":
				told = append(told, "warning: "+answer.Path+": "+answer.Warning)
			case answer.Model != "":
				told = append(told, "warning: "+answer.Warning)
			case answer.File != ".stepwise/config.toml" || answer.Line != 9 || answer.Col != 1 || answer.Warning != "settings.nonsense: unknown key":
				// The configuration's warning is placed, as validate
				// --json places it.
				t.Errorf("%s --json: not the configuration's warning: %s", c.name, line)
			}
		}
		if code != 0 || !slices.Equal(told, want) || !strings.Contains(lines[len(lines)-1], `"finished":true`) || len(warningLines(errOut)) > 0 {
			t.Errorf("%s --json: exit %d, warnings %q, want %q before the end; stdout:\n%s\nstderr:\n%s", c.name, code, told, want, out, errOut)
		}
	}

	// Stepped through, each warning comes between the stops it came
	// between, on lines of its own.
	_, errOut, code = debugCLI(t, "n\nn\nn\nn\n", "twice")
	lines := strings.Split(errOut, "\n")
	order := append([]string{"stopped at E0 (step) by entry"}, twice[:2]...)
	order = append(append(append(order, "stopped at E0 (result) by next", "stopped at E1 (step) by next"), twice[2:]...), "stopped at E1 (result) by next", "run finished: ok")
	at := -1
	for _, line := range order {
		i := slices.Index(lines, line)
		if i <= at {
			t.Fatalf("stepped: exit %d, %q is not a line after %q; stderr:\n%s", code, line, lines[max(at, 0)], errOut)
		}
		at = i
	}
}

// warningLines are the lines of stderr that warn of something the run did:
// "warning: ..." (the configuration's lines start with the file's name).
func warningLines(stderr string) []string {
	var out []string
	for line := range strings.Lines(stderr) {
		if strings.HasPrefix(line, "warning: ") {
			out = append(out, strings.TrimSuffix(line, "\n"))
		}
	}
	return out
}
