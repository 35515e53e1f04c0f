//go:build linux

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
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
			dir := t.TempDir()
			files := map[string]string{
				"tools/flood.yaml": "name: flood\ndescription: Prints 100 MB.\nkind: exec\ncommand: sh\nargs: [\"-c\", \"" + tc.script + "\"]\noutput: text\n",
				"plans/flood.yaml": "identifier: flood\nname: flood\ndescription: One flood.\nsteps:\n  - id: E0\n    tool_name: user__flood\n    input: {}\n",
			}
			for name, content := range files {
				path := filepath.Join(dir, ".stepwise", name)
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			isolate(t, dir)
			cmd := exec.Command(stepwiseBinary(t), "run", "flood", "--json")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if code := cmd.ProcessState.ExitCode(); code != 1 {
				t.Fatalf("exit %d (%v), want 1; stderr:\n%.2000s", code, err, stderr.String())
			}
			if !strings.Contains(stdout.String(), "[limits] tool_output_bytes") {
				t.Errorf("the envelope does not name the limit:\n%.2000s", stdout.String())
			}
			if n := stdout.Len(); n > 64<<10 {
				t.Errorf("the --json envelope is %d bytes", n)
			}
			usage, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
			if !ok {
				t.Fatalf("no rusage for the process: %T", cmd.ProcessState.SysUsage())
			}
			rss := usage.Maxrss << 10 // Linux reports KiB
			if rss > maxRSS {
				t.Errorf("peak RSS %d MB, want under %d MB", rss>>20, maxRSS>>20)
			}
			t.Logf("peak RSS %d MB", rss>>20)
		})
	}
}
