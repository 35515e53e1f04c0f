//go:build linux

package main

import (
	"strings"
	"testing"
)

// TestToolOutputFloodMemory runs the real binary on a plan whose exec tool
// prints 100 MB (text, and NUL bytes, which JSON writes six times over),
// and checks that the run fails naming [limits] tool_output_bytes, that
// its --json envelope is small, and that its peak memory stays far below
// what it would be holding the output.
func TestToolOutputFloodMemory(t *testing.T) {
	const maxRSS = 200 << 20
	for _, tc := range []struct{ name, script string }{
		{"text", "yes 'all work and no play' | head -c 100000000"},
		{"NUL bytes", "head -c 100000000 /dev/zero"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			writeProject(t, map[string]string{
				"tools/flood.yaml": "name: flood\ndescription: Prints 100 MB.\nkind: exec\ncommand: sh\nargs: [\"-c\", \"" + tc.script + "\"]\noutput: text\n",
				"plans/flood.yaml": "identifier: flood\nname: flood\ndescription: One flood.\nsteps:\n  - id: E0\n    tool_name: user__flood\n    input: {}\n",
			})
			m := runMeasured(t, nil, stepwiseBinary(t), "run", "flood", "--json")
			if m.code != 1 {
				t.Fatalf("exit %d, want 1; stderr:\n%.2000s", m.code, m.stderr)
			}
			if !strings.Contains(m.stdout, "[limits] tool_output_bytes") {
				t.Errorf("the envelope does not name the limit:\n%.2000s", m.stdout)
			}
			if n := len(m.stdout); n > 64<<10 {
				t.Errorf("the --json envelope is %d bytes", n)
			}
			if m.rss > maxRSS {
				t.Errorf("peak RSS %d MB, want under %d MB", m.rss>>20, maxRSS>>20)
			}
			t.Logf("peak RSS %d MB", m.rss>>20)
		})
	}
}
