//go:build unix

package tools

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// isolateGit keeps the machine's git configuration out of the test: no
// global or system config, a fixed identity, and a HOME of its own. The
// tools inherit the same environment.
func isolateGit(t *testing.T) {
	t.Helper()
	home := t.TempDir()
	for k, v := range map[string]string{
		"HOME": home, "GIT_CONFIG_GLOBAL": os.DevNull, "GIT_CONFIG_NOSYSTEM": "1",
		"GIT_AUTHOR_NAME": "Ada", "GIT_AUTHOR_EMAIL": "ada@example.com",
		"GIT_COMMITTER_NAME": "Ada", "GIT_COMMITTER_EMAIL": "ada@example.com",
	} {
		t.Setenv(k, v)
	}
	// A git hook running the tests would point these at its own repository.
	for _, k := range []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"} {
		t.Setenv(k, "") // restored when the test ends
		os.Unsetenv(k)
	}
}

// gitRun runs git in dir, failing the test when it fails.
func gitRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// commitAt commits everything in dir with subject at a fixed time, one
// minute per step, so that git log's order never depends on the clock.
func commitAt(t *testing.T, dir string, minute int, subject string) {
	t.Helper()
	date := fmt.Sprintf("2026-01-01T10:%02d:00Z", minute)
	t.Setenv("GIT_AUTHOR_DATE", date)
	t.Setenv("GIT_COMMITTER_DATE", date)
	gitRun(t, dir, "add", "-A", "--", ".", ":(exclude).stepwise")
	gitRun(t, dir, "commit", "-q", "-m", subject)
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// gitProject makes a project with the github pack enabled whose root is a
// git repository with this history:
//
//	v1: initial
//	feature (from v1): "Change a, rename old (#42)", "Add docs"
//	main: "Main side", then the merge of feature, tagged v2
//
// and returns its runtime and root.
func gitProject(t *testing.T) (*Runtime, string) {
	t.Helper()
	isolateGit(t)
	rt, root := newRuntime(t, map[string]string{".stepwise/config.toml": "[tools]\npacks = [\"github\"]\n"}, nil)
	gitRun(t, root, "init", "-q", "-b", "main")
	writeFiles(t, root, map[string]string{
		"a.txt":      "one\n",
		"old.txt":    "a file that moves\nwith enough lines\nto be a rename\n",
		"gone.txt":   "going\n",
		"bin.dat":    "\x00\x01\x02",
		"keep.go":    "package keep // TODO: one\n\nfunc f() {} // TODO: two\n",
		"we:ird.txt": "TODO in a file with a colon\n",
		"héllo.txt":  "héllo\n",
	})
	commitAt(t, root, 0, "initial")
	gitRun(t, root, "tag", "v1")

	gitRun(t, root, "checkout", "-q", "-b", "feature")
	if err := os.MkdirAll(filepath.Join(root, "new"), 0o755); err != nil {
		t.Fatal(err)
	}
	gitRun(t, root, "mv", "old.txt", "new/renamed.txt")
	gitRun(t, root, "rm", "-q", "gone.txt")
	writeFiles(t, root, map[string]string{"a.txt": "two\n", "bin.dat": "\x00\x03"})
	commitAt(t, root, 1, "Change a, rename old (#42)")
	writeFiles(t, root, map[string]string{"docs/added.md": "# Docs\nTODO: write\n"})
	commitAt(t, root, 2, "Add docs")

	gitRun(t, root, "checkout", "-q", "main")
	writeFiles(t, root, map[string]string{"z.txt": "main side\n"})
	commitAt(t, root, 3, "Main side")
	t.Setenv("GIT_AUTHOR_DATE", "2026-01-01T10:04:00Z")
	t.Setenv("GIT_COMMITTER_DATE", "2026-01-01T10:04:00Z")
	gitRun(t, root, "merge", "-q", "--no-ff", "-m", "Merge branch 'feature'", "feature")
	gitRun(t, root, "tag", "v2")
	return rt, root
}

func TestGitChangedFiles(t *testing.T) {
	rt, _ := gitProject(t)
	renamedFrom := "old.txt"
	all := []changedFile{
		{Path: "a.txt", Status: "modified", Additions: 1, Deletions: 1},
		{Path: "bin.dat", Status: "modified", Binary: true},
		{Path: "docs/added.md", Status: "added", Additions: 2},
		{Path: "gone.txt", Status: "deleted", Deletions: 1},
		{Path: "new/renamed.txt", Status: "renamed", OldPath: &renamedFrom},
	}
	tests := []struct {
		name   string
		input  map[string]any
		want   []changedFile
		errMsg string
	}{
		{"every change", map[string]any{"base": "v1", "head": "feature", "prefix": ""}, all, ""},
		{"a prefix keeps the paths under it", map[string]any{"base": "v1", "head": "feature", "prefix": "docs/"}, all[2:3], ""},
		{"the merge-base diff leaves main's own changes out", map[string]any{"base": "feature", "head": "v2", "prefix": ""}, []changedFile{{Path: "z.txt", Status: "added", Additions: 1}}, ""},
		{"nothing changed is no error", map[string]any{"base": "v2", "head": "v2", "prefix": ""}, nil, ""},
		{"a bad ref fails loudly", map[string]any{"base": "nope", "head": "v2", "prefix": ""}, nil, "git diff: a ref or commit the call names is not in the repository at "},
		{"a ref that would be an option is refused", map[string]any{"base": "--output=x", "head": "v2", "prefix": ""}, nil, `input base: "--output=x" is not a ref (it starts with -)`},
		{"a missing input never reaches git", map[string]any{"base": "v1", "head": "v2"}, nil, "input does not match builtin__git_changed_files's input_schema"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := packResult(t, rt, "builtin__git_changed_files", tc.input, tc.errMsg)
			if !ok {
				return
			}
			var files []string
			for _, c := range tc.want {
				files = append(files, c.Path)
			}
			want := mustResult(t, map[string]any{"files": orEmpty(files), "count": len(tc.want), "changes": orEmpty(tc.want)})
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got  %v\nwant %v", got, want)
			}
		})
	}
}

// orEmpty is s, or an empty slice for nil, as the tools answer [] for none.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// mustResult is v the way a tool result holds it.
func mustResult(t *testing.T, v any) any {
	t.Helper()
	out, err := toResult("test", v)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestGitDiff(t *testing.T) {
	rt, _ := gitProject(t)
	diff := func(input map[string]any) (string, error) {
		got, err := rt.Call(context.Background(), "builtin__git_diff", input)
		if err != nil {
			return "", err
		}
		return got.(map[string]any)["text"].(string), nil
	}
	whole, err := diff(map[string]any{"base": "v1", "head": "feature", "paths": ".", "exclude": "", "max_bytes": 100000})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"diff --git a/a.txt b/a.txt", "-one\n+two", "rename to new/renamed.txt", "+# Docs", "Binary files"} {
		if !strings.Contains(whole, s) {
			t.Errorf("the whole diff lacks %q:\n%s", s, whole)
		}
	}
	if strings.Contains(whole, "z.txt") || strings.Contains(whole, "truncated") {
		t.Errorf("the three-dot diff shows main's change or a marker:\n%s", whole)
	}

	tests := []struct {
		name          string
		input         map[string]any
		has, lacks    []string
		exactly       string
		errorStarting string
	}{
		{name: "paths scope the diff", input: map[string]any{"base": "v1", "head": "feature", "paths": "docs a.txt", "exclude": "", "max_bytes": 100000},
			has: []string{"docs/added.md", "a/a.txt"}, lacks: []string{"renamed", "gone.txt"}},
		{name: "excludes leave paths out", input: map[string]any{"base": "v1", "head": "feature", "paths": ".", "exclude": "docs bin.dat", "max_bytes": 100000},
			has: []string{"a/a.txt", "gone.txt"}, lacks: []string{"docs/added.md", "bin.dat"}},
		{name: "a cut diff ends with the marker", input: map[string]any{"base": "v1", "head": "feature", "paths": ".", "exclude": "", "max_bytes": 10},
			exactly: whole[:10] + fmt.Sprintf("\n\n[diff truncated: showing 10 of %d bytes]\n", len(whole))},
		{name: "a diff exactly at the budget is whole", input: map[string]any{"base": "v1", "head": "feature", "paths": ".", "exclude": "", "max_bytes": len(whole)},
			exactly: whole},
		{name: "an empty range is an empty diff", input: map[string]any{"base": "v2", "head": "v2", "paths": ".", "exclude": "", "max_bytes": 100},
			exactly: ""},
		{name: "a bad ref fails", input: map[string]any{"base": "v1", "head": "nope", "paths": ".", "exclude": "", "max_bytes": 100},
			errorStarting: "git diff: a ref or commit the call names is not in the repository at "},
		{name: "a negative budget is refused", input: map[string]any{"base": "v1", "head": "v2", "paths": ".", "exclude": "", "max_bytes": -1},
			errorStarting: "input max_bytes must not be negative, got -1"},
		{name: "max_bytes must be whole", input: map[string]any{"base": "v1", "head": "v2", "paths": ".", "exclude": "", "max_bytes": 1.5},
			errorStarting: "input does not match builtin__git_diff's input_schema: /max_bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := diff(tc.input)
			if tc.errorStarting != "" {
				if te := toolErr(t, err); !strings.HasPrefix(te.Error(), tc.errorStarting) {
					t.Errorf("error %q\nwant it to start %q", te.Error(), tc.errorStarting)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.has == nil && tc.lacks == nil && got != tc.exactly {
				t.Errorf("got  %q\nwant %q", got, tc.exactly)
			}
			for _, s := range tc.has {
				if !strings.Contains(got, s) {
					t.Errorf("lacks %q:\n%s", s, got)
				}
			}
			for _, s := range tc.lacks {
				if strings.Contains(got, s) {
					t.Errorf("has %q:\n%s", s, got)
				}
			}
		})
	}
}

func TestGitFile(t *testing.T) {
	rt, _ := gitProject(t)
	tests := []struct {
		name          string
		input         map[string]any
		want          string
		errorStarting string
	}{
		{"a file at a ref", map[string]any{"ref": "v1", "path": "a.txt"}, "one\n", ""},
		{"the same file at another ref", map[string]any{"ref": "feature", "path": "a.txt"}, "two\n", ""},
		{"cut to the budget, with the marker", map[string]any{"ref": "v1", "path": "a.txt", "max_bytes": 2}, "on\n\n[file truncated: showing 2 of 4 bytes]\n", ""},
		{"a cut never splits a character", map[string]any{"ref": "v1", "path": "héllo.txt", "max_bytes": 2}, "h\n\n[file truncated: showing 1 of 7 bytes]\n", ""},
		{"a file the ref lacks fails", map[string]any{"ref": "feature", "path": "gone.txt"}, "", "git show exited with status 128: fatal: path 'gone.txt' does not exist in 'feature'"},
		{"an empty path is refused", map[string]any{"ref": "v1", "path": ""}, "", `input path must name a file, got ""`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := packResult(t, rt, "builtin__git_file", tc.input, tc.errorStarting)
			if !ok {
				return
			}
			if want := map[string]any{"text": tc.want}; !reflect.DeepEqual(got, want) {
				t.Errorf("got  %q\nwant %q", got, want)
			}
		})
	}
}

func TestGitGrep(t *testing.T) {
	rt, _ := gitProject(t)
	match := func(path string, line int, text string) grepMatch {
		return grepMatch{Path: path, Line: int64(line), Text: text}
	}
	tests := []struct {
		name          string
		input         map[string]any
		want          []grepMatch
		truncated     bool
		errorStarting string
	}{
		{name: "matches at HEAD by default, paths with colons intact", input: map[string]any{"pattern": "TODO"},
			want: []grepMatch{match("docs/added.md", 2, "TODO: write"), match("keep.go", 1, "package keep // TODO: one"), match("keep.go", 3, "func f() {} // TODO: two"), match("we:ird.txt", 1, "TODO in a file with a colon")}},
		{name: "at another ref", input: map[string]any{"pattern": "TODO", "ref": "v1"},
			want: []grepMatch{match("keep.go", 1, "package keep // TODO: one"), match("keep.go", 3, "func f() {} // TODO: two"), match("we:ird.txt", 1, "TODO in a file with a colon")}},
		{name: "an extended regex, scoped by pathspecs", input: map[string]any{"pattern": "TODO: (one|two)", "paths": "keep.go docs"},
			want: []grepMatch{match("keep.go", 1, "package keep // TODO: one"), match("keep.go", 3, "func f() {} // TODO: two")}},
		{name: "capped, with truncated set", input: map[string]any{"pattern": "TODO", "max_matches": 1},
			want: []grepMatch{match("docs/added.md", 2, "TODO: write")}, truncated: true},
		{name: "no match is no error", input: map[string]any{"pattern": "no such text"}},
		{name: "a pattern that starts with a dash is a pattern", input: map[string]any{"pattern": "-one"}},
		{name: "a bad ref fails", input: map[string]any{"pattern": "x", "ref": "nope"}, errorStarting: "git grep: a ref or commit the call names is not in the repository at "},
		{name: "a bad regex fails", input: map[string]any{"pattern": "("}, errorStarting: "git grep exited with status 128: fatal: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := packResult(t, rt, "builtin__git_grep", tc.input, tc.errorStarting)
			if !ok {
				return
			}
			want := mustResult(t, map[string]any{"matches": orEmpty(tc.want), "count": len(tc.want), "truncated": tc.truncated})
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got  %v\nwant %v", got, want)
			}
		})
	}
}

func TestGitLog(t *testing.T) {
	rt, root := gitProject(t)
	sha := func(rev string) string { return gitRun(t, root, "rev-parse", rev) }
	short := func(rev string) string { return gitRun(t, root, "rev-parse", "--short", rev) }
	pr := int64(42)
	commit := func(rev, subject string, minute int, pr *int64) logCommit {
		return logCommit{SHA: sha(rev), ShortSHA: short(rev), Author: "Ada", Date: fmt.Sprintf("2026-01-01T10:%02d:00+00:00", minute), Subject: subject, PR: pr}
	}
	merge := commit("v2", "Merge branch 'feature'", 4, nil)
	mainSide := commit("v2^1", "Main side", 3, nil)
	docs := commit("feature", "Add docs", 2, nil)
	change := commit("feature^", "Change a, rename old (#42)", 1, &pr)
	tests := []struct {
		name          string
		input         map[string]any
		want          []logCommit
		total         int
		errorStarting string
	}{
		{name: "since a tag, newest first, merges left out", input: map[string]any{"base": "v1", "head": "v2"}, want: []logCommit{mainSide, docs, change}, total: 3},
		{name: "head defaults to HEAD", input: map[string]any{"base": "v1"}, want: []logCommit{mainSide, docs, change}, total: 3},
		{name: "merges kept when asked", input: map[string]any{"base": "v1", "head": "v2", "include_merges": true}, want: []logCommit{merge, mainSide, docs, change}, total: 4},
		{name: "capped: total still counts the range", input: map[string]any{"base": "v1", "head": "v2", "max_commits": 1}, want: []logCommit{mainSide}, total: 3},
		{name: "paths scope the log", input: map[string]any{"base": "v1", "head": "v2", "paths": "docs"}, want: []logCommit{docs}, total: 1},
		{name: "an empty range is no error", input: map[string]any{"base": "v2", "head": "v2"}},
		{name: "a bad ref fails loudly", input: map[string]any{"base": "v0"}, errorStarting: "git rev-list: a ref or commit the call names is not in the repository at "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := packResult(t, rt, "builtin__git_log", tc.input, tc.errorStarting)
			if !ok {
				return
			}
			want := mustResult(t, map[string]any{"commits": orEmpty(tc.want), "count": len(tc.want), "total": tc.total, "truncated": tc.total > len(tc.want)})
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got  %v\nwant %v", got, want)
			}
		})
	}
}
