package main

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"syscall"
	"testing"
)

// TestValidateDeepFileStaysSmall runs `stepwise validate` as a real process
// on files nested a million levels deep (2 MB of brackets or dashes) and
// checks that it ends with an error that places the nesting and names the
// limit, having used little memory: the depth is refused before any parser
// sees the text.
func TestValidateDeepFileStaysSmall(t *testing.T) {
	const maxRSS = 200 << 20
	bin := stepwiseBinary(t)
	head := "identifier: deep\nname: Deep\ndescription: Nested too deep.\nsteps: "
	tests := []struct {
		name string
		body []byte
		want string
	}{
		{"flow", append(bytes.Repeat([]byte("["), 1_000_000), bytes.Repeat([]byte("]"), 1_000_000)...), `deep\.yaml:4:1007: YAML: values nest 1000001 levels deep here; the limit is 1000`},
		{"block", append([]byte("\n"), append(bytes.Repeat([]byte("- "), 1_000_000), "x\n"...)...), `deep\.yaml:5:2001: YAML: values nest 1000002 levels deep here; the limit is 1000`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			isolate(t, dir)
			if err := os.WriteFile("deep.yaml", append([]byte(head), tc.body...), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(bin, "validate", "deep.yaml")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			if code := cmd.ProcessState.ExitCode(); code != 1 {
				t.Fatalf("exit code %d (%v), want 1\nstderr:\n%.2000s", code, err, stderr.String())
			}
			if !regexp.MustCompile(tc.want).Match(stderr.Bytes()) {
				t.Errorf("stderr does not match %q:\n%.2000s", tc.want, stderr.String())
			}
			rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10 // Linux counts KiB
			if rss > maxRSS {
				t.Errorf("stepwise validate peaked at %d MiB, over %d MiB", rss>>20, maxRSS>>20)
			}
		})
	}
}
