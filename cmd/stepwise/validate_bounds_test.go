package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// builtBinary builds the stepwise command into a temporary directory, the
// way a user gets it: without the race detector or test instrumentation,
// whose own memory would swamp a measurement of the command's.
func builtBinary(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build stepwise with")
	}
	bin := filepath.Join(t.TempDir(), "stepwise")
	build := exec.Command(goTool, "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// peakRSSEnv makes the test binary a launcher that measures a command: with
// it set to a file name, TestMain runs the command its arguments name and
// writes the command's peak RSS, in bytes, to that file.
//
// The command cannot be measured from the test process itself. Go starts a
// child with vfork, so the child runs in the parent's memory until its
// exec, and Linux folds that memory's peak into the child's: a child of a
// test process that once held 200 MB reports at least 200 MB, however
// little it uses. The launcher is a fresh process holding nothing.
const peakRSSEnv = "STEPWISE_TEST_PEAK_RSS"

// runMeasured runs name with args through the launcher, in the test's
// working directory and environment, and returns the command's exit code,
// its stderr and its peak RSS in bytes.
func runMeasured(t *testing.T, name string, args ...string) (int, string, int64) {
	t.Helper()
	report := filepath.Join(t.TempDir(), "rss")
	cmd := exec.Command(os.Args[0], append([]string{name}, args...)...)
	cmd.Env = append(os.Environ(), peakRSSEnv+"="+report)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("start the launcher: %v", err)
	}
	text, err := os.ReadFile(report)
	if err != nil {
		t.Fatalf("the launcher reported no peak RSS (%v); stderr:\n%.2000s", err, stderr.String())
	}
	rss, err := strconv.ParseInt(string(text), 10, 64)
	if err != nil {
		t.Fatalf("the launcher's report %q: %v", text, err)
	}
	return cmd.ProcessState.ExitCode(), stderr.String(), rss
}

// launchMeasured is the launcher: it runs args[0] with the rest of args,
// passing its streams through, writes the command's peak RSS to the file
// report, and returns the command's exit code.
func launchMeasured(report string, args []string) int {
	os.Unsetenv(peakRSSEnv)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		fmt.Fprintln(os.Stderr, "launcher:", err)
		return 125
	}
	rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10 // Linux counts KiB
	if err := os.WriteFile(report, []byte(strconv.FormatInt(rss, 10)), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "launcher:", err)
		return 125
	}
	return cmd.ProcessState.ExitCode()
}

// TestValidateDeepFileStaysSmall runs `stepwise validate` as a real process
// on files nested a million levels deep (2 MB of brackets or dashes) and
// checks that it ends with an error that places the nesting and names the
// limit, having used little memory: the depth is refused before any parser
// sees the text.
func TestValidateDeepFileStaysSmall(t *testing.T) {
	const maxRSS = 200 << 20
	bin := builtBinary(t)
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
			code, stderr, rss := runMeasured(t, bin, "validate", "deep.yaml")
			if code != 1 {
				t.Fatalf("exit code %d, want 1\nstderr:\n%.2000s", code, stderr)
			}
			if !regexp.MustCompile(tc.want).MatchString(stderr) {
				t.Errorf("stderr does not match %q:\n%.2000s", tc.want, stderr)
			}
			if rss > maxRSS {
				t.Errorf("stepwise validate peaked at %d MiB, over %d MiB", rss>>20, maxRSS>>20)
			}
		})
	}
}

// TestValidateManyTagsStaysSmall runs `stepwise validate` as a real process
// on plans holding a million template tags, in one string on one line, in
// one literal block over many lines, in one folded block (whose tags are
// placed from the file rather than from the string), and over many values,
// and checks that it places the one bad reference after all of them and
// stays small: a tag costs a few dozen bytes, not hundreds.
func TestValidateManyTagsStaysSmall(t *testing.T) {
	const maxRSS = 200 << 20
	bin := builtBinary(t)
	head := "identifier: tags\nname: Tags\ndescription: A million tags.\n" +
		"input_schema:\n  type: object\n  properties:\n    x: {type: string}\n" +
		"steps:\n  - id: E1\n    tool_name: builtin__reshape\n    input:\n      shape:\n"
	hundred := strings.Repeat("{{input.x}} ", 100)
	var lines, values strings.Builder
	for i := range 10_000 {
		fmt.Fprintf(&lines, "          %s\n", hundred)
		fmt.Fprintf(&values, "        k%d: \"%s\"\n", i, hundred)
	}
	tests := []struct {
		name string
		body string
	}{
		{"one line", "        text: \"" + strings.Repeat("{{input.x}} ", 1_000_000) + "{{E9.a}}\"\n"},
		{"literal block", "        text: |\n" + lines.String() + "          {{E9.a}}\n"},
		{"folded block", "        text: >\n" + lines.String() + "          {{E9.a}}\n"},
		{"many values", values.String() + "        last: \"{{E9.a}}\"\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			isolate(t, dir)
			src := head + tc.body
			if err := os.WriteFile("tags.yaml", []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			// The file is ASCII, so the bad tag's column is its byte offset
			// in its line.
			bad := strings.LastIndex(src, "{{E9.a}}")
			line, col := strings.Count(src[:bad], "\n")+1, bad-strings.LastIndexByte(src[:bad], '\n')
			want := fmt.Sprintf("tags.yaml:%d:%d: step E1: references E9, which is not `input` or an earlier step (available: input)\n", line, col)

			code, stderr, rss := runMeasured(t, bin, "validate", "tags.yaml")
			if code != 1 {
				t.Fatalf("exit code %d, want 1\nstderr:\n%.2000s", code, stderr)
			}
			if !strings.Contains(stderr, want) {
				t.Errorf("stderr lacks %q:\n%.2000s", want, stderr)
			}
			if rss > maxRSS {
				t.Errorf("stepwise validate peaked at %d MiB, over %d MiB", rss>>20, maxRSS>>20)
			}
			t.Logf("peak RSS %d MiB", rss>>20)
		})
	}
}
