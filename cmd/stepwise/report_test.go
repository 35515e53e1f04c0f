package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReportCommand records a failing run and writes its report to a
// file and to stdout, and checks the mistakes a user can make on the
// command line.
func TestReportCommand(t *testing.T) {
	runProject(t)
	_, errOut, code := runCLI(t, "run", "broken_run")
	id := regexp.MustCompile(`run ([0-9a-f]{16}) `).FindStringSubmatch(errOut)
	if code != 1 || id == nil {
		t.Fatalf("the run: exit %d, no run id in:\n%s", code, errOut)
	}
	run := id[1]
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
		wantFile   string
	}{
		{"to a file", []string{"report", run, "--html", "run.html"}, 0, "", "wrote run.html (", "run.html"},
		{"by a prefix, over an earlier page", []string{"report", run[:8], "--html", "run.html"}, 0, "", "wrote run.html (", "run.html"},
		{"to stdout", []string{"report", run, "--html", "-"}, 0, "<!DOCTYPE html>", "", ""},
		{"without --html", []string{"report", run}, 2, "", "needs --html FILE", ""},
		{"without a run", []string{"report", "--html", "run.html"}, 2, "", "takes one RUN id", ""},
		{"an unknown run", []string{"report", "zzzz", "--html", "zzzz.html"}, 1, "", "no run 'zzzz'", ""},
		{"a directory that is not there", []string{"report", run, "--html", filepath.Join("gone", "run.html")}, 1, "", "--html gone/run.html: ", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runCLI(t, tt.args...)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d\nstderr:\n%s", code, tt.wantCode, errOut)
			}
			if !strings.HasPrefix(out, tt.wantStdout) || (tt.wantStdout == "" && out != "") {
				t.Errorf("stdout begins %.80q, want %q", out, tt.wantStdout)
			}
			if !strings.Contains(errOut, tt.wantStderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.wantStderr, errOut)
			}
			if tt.wantFile == "" {
				return
			}
			page, err := os.ReadFile(tt.wantFile)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"<!DOCTYPE html>", run, "broken_run", "E0.issues.0.id"} {
				if !strings.Contains(string(page), want) {
					t.Errorf("the page lacks %q", want)
				}
			}
		})
	}
	// The page is written whole through a file beside it, which never
	// stays: in the directory, the page alone.
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".html") && e.Name() != "run.html" || strings.HasPrefix(e.Name(), ".run.html") {
			t.Errorf("%s is left in the project", e.Name())
		}
	}
}

// TestReportOfEveryKindOfRun writes the page of each example run the
// store holds: finished, exited, failed, interrupted, of another project
// and recorded before the store kept projects.
func TestReportOfEveryKindOfRun(t *testing.T) {
	isolate(t, "testdata/runsproject")
	recordRuns(t)
	tests := []struct {
		name, id, status string
	}{
		{"finished", finishedRun, "ok"},
		{"exited", exitedRun, "exited"},
		{"failed", failedRun, "failed"},
		{"interrupted", unfinishedRun, "interrupted"},
		{"of another project", otherRun, "ok"},
		{"recorded without a project", legacyRun, "exited"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runCLI(t, "report", tt.id, "--html", "-")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			for _, want := range []string{"<!DOCTYPE html>", "<code>" + tt.id + "</code>", `<span class="status s-` + tt.status + `">`, `<section id="steps">`, "</html>"} {
				if !strings.Contains(out, want) {
					t.Errorf("the page lacks %s", want)
				}
			}
		})
	}
}
