package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/tui"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// isolate points the configuration at empty global directories, so that
// the machine's own config never leaks into a test.
func isolate(t testing.TB, dir string) {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "config"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, "data"))
	t.Setenv("STEPWISE_STORAGE", "")
	t.Chdir(dir)
}

// runCLI runs the command line in process and returns stdout, stderr and
// the exit code.
func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(""), &out, &errOut)
	return out.String(), errOut.String(), code
}

// golden compares got with testdata/golden/name, or rewrites it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join(goldenDir, name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (run go test -update after checking):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

var goldenDir, _ = filepath.Abs("testdata/golden")

func TestValidate(t *testing.T) {
	tests := []struct {
		name     string
		dir      string
		args     []string
		wantCode int
	}{
		{"valid plan by file", "testdata/project", []string{"validate", "--json", ".stepwise/plans/triage.yaml"}, 0},
		{"valid plan by identifier", "testdata/project", []string{"validate", "--json", "triage"}, 0},
		{"broken plan", "testdata/project", []string{"validate", "--json", ".stepwise/plans/broken.yaml"}, 1},
		{"skipped plan by identifier", "testdata/project", []string{"validate", "--json", "broken"}, 1},
		{"requires_servers are notes", "testdata/project", []string{"validate", "--json", "hidden"}, 0},
		{"explain", "testdata/project", []string{"validate", "--json", "--explain", "triage"}, 0},
		{"several plans, one failing", "testdata/project", []string{"validate", "triage", "broken"}, 1},
		{"graph project", "testdata/graphproject", []string{"validate", "--json", ".graph/plans/pr_digest.yaml"}, 0},
		{"no such plan", "testdata/project", []string{"validate", "nothing"}, 1},
		{"a missing plan does not stop the others", "testdata/project", []string{"validate", "nothing", "triage"}, 1},
		{"a missing plan in JSON", "testdata/project", []string{"validate", "--json", "nothing", "triage"}, 1},
		{"a file is checked in its own project", "testdata/project", []string{"validate", "--json", "../graphproject/.graph/plans/pr_digest.yaml"}, 0},
		{"a file outside any project is checked in the working directory", "testdata/project", []string{"validate", "../outside/plan.yaml"}, 0},
		{"an input the input_schema does not declare", "testdata/project", []string{"validate", "../outside/undeclared_input.yaml"}, 1},
		{"a plan that does not parse, by its file name", "testdata/project", []string{"validate", "unparsable"}, 1},
		{"plan calls that cycle are a note", "testdata/project", []string{"validate", "loop_a", "loop_b"}, 0},
		{"a plan shadowed by an earlier one is a note", "testdata/project", []string{"validate", ".stepwise/plans/triage_copy.yaml"}, 0},
		{"mistyped command", "testdata/project", []string{"valdate", "triage"}, 2},
		{"tools without a subcommand", "testdata/project", []string{"tools", "frob"}, 2},
		{"no arguments checks every plan of the project", "testdata/project", []string{"validate"}, 1},
		{"no arguments outside a project", "testdata/outside", []string{"validate"}, 2},
		{"unknown flag", "testdata/project", []string{"validate", "--jsn", "triage"}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			isolate(t, tc.dir)
			stdout, stderr, code := runCLI(t, tc.args...)
			if code != tc.wantCode {
				t.Errorf("exit code %d, want %d\nstderr:\n%s", code, tc.wantCode, stderr)
			}
			// With --json, a script reads stdout alone: stderr has
			// nothing but a usage error.
			if slices.Contains(tc.args, "--json") && tc.wantCode != exitUsage && stderr != "" {
				t.Errorf("with --json, stderr says:\n%s", stderr)
			}
			name := strings.ReplaceAll(tc.name, " ", "_")
			golden(t, name+".stdout", stdout)
			golden(t, name+".stderr", stderr)
		})
	}
}

func TestToolsList(t *testing.T) {
	isolate(t, "testdata/project")
	stdout, stderr, code := runCLI(t, "tools", "list", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	golden(t, "tools_list.stdout", stdout)
	golden(t, "tools_list.stderr", stderr)

	stdout, _, code = runCLI(t, "tools", "list")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	golden(t, "tools_list_text.stdout", stdout)
}

func TestToolsShow(t *testing.T) {
	isolate(t, "testdata/project")
	for _, name := range []string{"user__summarize", "builtin__infer", "map", "plan__triage"} {
		t.Run(name, func(t *testing.T) {
			stdout, stderr, code := runCLI(t, "tools", "show", "--json", name)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			golden(t, "tools_show_"+name+".stdout", stdout)
		})
	}
	_, stderr, code := runCLI(t, "tools", "show", "tracker__list_issues")
	if code != 1 || !strings.Contains(stderr, "tool of MCP server 'tracker'") {
		t.Errorf("MCP tool: exit %d, stderr %q", code, stderr)
	}
	for name, want := range map[string]string{
		"user__nothing":    "no tool named 'user__nothing' (stepwise tools list shows the catalog)",
		"summarize":        "no tool named 'summarize'; did you mean 'user__summarize'?",
		"user__sumarize":   "no tool named 'user__sumarize'; did you mean 'user__summarize'?",
		"git_log":          `no tool named 'git_log': builtin__git_log belongs to the github tool pack, which is not enabled: add "github" to packs under [tools] in config.toml`,
		"builtin__git_log": `no tool named 'builtin__git_log': it belongs to the github tool pack, which is not enabled`,
	} {
		_, stderr, code = runCLI(t, "tools", "show", name)
		if code != 1 || !strings.Contains(stderr, want) {
			t.Errorf("tools show %s: exit %d, stderr %q, want %q", name, code, stderr, want)
		}
	}
}

// TestWorkbenchFromElsewhere opens a project from another working
// directory, as the workbench opens its demo: a plan must not be taken for
// another file that shadows it because its shown path is relative to the
// project.
func TestWorkbenchFromElsewhere(t *testing.T) {
	project, err := filepath.Abs("testdata/project")
	if err != nil {
		t.Fatal(err)
	}
	isolate(t, t.TempDir())
	var errOut bytes.Buffer
	w, err := openWorkbench([]string{project}, &streams{out: &errOut, err: &errOut})
	defer w.close()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range w.opts.Documents {
		for _, n := range d.Report.Notes {
			if n.Code == plans.CodeShadowedPlan && !strings.Contains(d.File, "triage_copy") {
				t.Errorf("%s: %s", d.File, n.Message)
			}
		}
	}
}

// TestWorkbenchReloadOfAGoneFile reads a plan file again after it went
// away, as the workbench does when a file it shows changes: the document
// says so as its one problem, and the workbench keeps going.
func TestWorkbenchReloadOfAGoneFile(t *testing.T) {
	project, err := filepath.Abs("testdata/project")
	if err != nil {
		t.Fatal(err)
	}
	isolate(t, t.TempDir())
	var errOut bytes.Buffer
	w, err := openWorkbench([]string{project}, &streams{out: &errOut, err: &errOut})
	defer w.close()
	if err != nil {
		t.Fatal(err)
	}
	gone := filepath.Join(t.TempDir(), "gone.yaml")
	d := tui.LoadDocument(w.opts.Workspace, gone)
	if d.Plan != nil || len(d.Report.Problems) != 1 || d.Report.Problems[0].Code != plans.CodeUnreadable || d.Path != gone {
		t.Errorf("a gone file loads as %+v", d)
	}
}

// TestValidatePackNotEnabled checks that a plan calling a tool of a pack
// the configuration does not enable says which pack to enable, and
// validates once it is.
func TestValidatePackNotEnabled(t *testing.T) {
	plan := "identifier: log\nname: Log\ndescription: The last commits.\nsteps:\n  - id: E1\n    tool_name: builtin__git_log\n    input: { base: HEAD~1 }\n"
	tests := []struct {
		name   string
		config string
		code   int
		want   string
	}{
		{"not enabled", "", 1, `.stepwise/plans/log.yaml:6:16: step E1: unknown tool 'builtin__git_log': it belongs to the github tool pack, which is not enabled: add "github" to packs under [tools] in config.toml`},
		{"enabled", "[tools]\npacks = [\"github\"]\n", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scratchProject(t, tt.config)
			if err := os.MkdirAll(filepath.Join(".stepwise", "plans"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(".stepwise", "plans", "log.yaml"), []byte(plan), 0o644); err != nil {
				t.Fatal(err)
			}
			_, errOut, code := runCLI(t, "validate", ".stepwise/plans/log.yaml")
			if code != tt.code || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, want %d; stderr lacks %q:\n%s", code, tt.code, tt.want, errOut)
			}
		})
	}
}

// TestHelpOnStdout: help asked for is the command's deliverable, on
// stdout with nothing on stderr; a usage error is on stderr alone.
func TestHelpOnStdout(t *testing.T) {
	isolate(t, "testdata/project")
	for _, args := range [][]string{{"--help"}, {"run", "--help"}, {"help", "fork"}, {"runs", "-h"}} {
		out, errOut, code := runCLI(t, args...)
		if code != 0 || !strings.Contains(out, "Usage:") || errOut != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
	out, errOut, code := runCLI(t, "run")
	if code != exitUsage || out != "" || !strings.Contains(errOut, "run takes PLAN") {
		t.Errorf("a usage error: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestValidateProjectOK: with no PLAN, validate checks each plan of the
// project, says so plan by plan, and sums up.
func TestValidateProjectOK(t *testing.T) {
	writeProject(t, map[string]string{"plans/wait.yaml": waitProjectFiles(0)["plans/wait.yaml"], "plans/slow.yaml": progressProjectFiles(0, false)["plans/slow.yaml"]})
	_, errOut, code := runCLI(t, "validate")
	want := "✓ .stepwise/plans/slow.yaml: no problems\n✓ .stepwise/plans/wait.yaml: no problems\n✓ 2 plans, no problems\n"
	if code != 0 || errOut != want {
		t.Errorf("exit %d, stderr:\n%s\nwant:\n%s", code, errOut, want)
	}
}
