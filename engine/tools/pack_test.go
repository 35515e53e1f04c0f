//go:build unix

package tools

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stepwise-dev/stepwise/engine/config"
	"github.com/stepwise-dev/stepwise/plans"
)

// The tools of each opt-in pack, as graph names them.
var (
	githubPackTools = []string{
		"builtin__gh_pr_comment", "builtin__gh_pr_inline_comments", "builtin__gh_pr_meta", "builtin__gh_pr_review_threads",
		"builtin__gh_pr_thread_sync", "builtin__gh_pr_ticket", "builtin__gh_release",
		"builtin__git_changed_files", "builtin__git_diff", "builtin__git_file", "builtin__git_grep", "builtin__git_log",
	}
	slackPackTools = []string{"builtin__slack_post_message"}
	alwaysOn       = []string{"builtin__infer", "builtin__reshape"}
)

// The pack names config.Load accepts are exactly those the catalog builds.
func TestPackNamesMatchConfig(t *testing.T) {
	if got, want := packNames(), config.ToolPacks(); !slices.Equal(got, want) {
		t.Errorf("packs the catalog knows %v, packs config accepts %v", got, want)
	}
}

func TestCatalogPacks(t *testing.T) {
	tests := []struct {
		name  string
		packs string // the packs value in config.toml; "" leaves it out
		want  []string
	}{
		{"no packs: only the always-on tools", "", alwaysOn},
		{"github", `["github"]`, append(slices.Clone(alwaysOn), githubPackTools...)},
		{"slack", `["slack"]`, append(slices.Clone(alwaysOn), slackPackTools...)},
		{"both, repeated", `["slack", "github", "slack"]`, append(append(slices.Clone(alwaysOn), githubPackTools...), slackPackTools...)},
		{"naming an always-on pack changes nothing", `["llm", "data"]`, alwaysOn},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{".stepwise/plans/.keep": ""}
			if tc.packs != "" {
				files[".stepwise/config.toml"] = "[tools]\npacks = " + tc.packs + "\n"
			}
			c := project(t, files)
			var got []string
			for _, info := range c.Tools() {
				got = append(got, info.Name)
			}
			want := slices.Sorted(slices.Values(tc.want))
			if !slices.Equal(got, want) {
				t.Errorf("Tools() = %v\nwant %v", got, want)
			}
			if len(c.Skipped) > 0 {
				t.Errorf("Skipped = %v", c.Skipped)
			}
		})
	}
}

// Every pack tool's entry is complete, its schemas compile, and only the
// tools that post are not read-only, as in graph.
func TestPackToolEntries(t *testing.T) {
	posts := []string{"builtin__gh_pr_comment", "builtin__gh_pr_inline_comments", "builtin__gh_pr_thread_sync", "builtin__slack_post_message"}
	tools, err := enabledPackTools([]string{"github", "slack"})
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != len(githubPackTools)+len(slackPackTools) {
		t.Errorf("%d pack tools, want %d", len(tools), len(githubPackTools)+len(slackPackTools))
	}
	for name, pt := range tools {
		info := pt.info
		if info.Name != name || info.Source != "builtin" || info.Description == "" || info.ReadOnly == nil || pt.timeout <= 0 || pt.run == nil {
			t.Errorf("%s: incomplete entry %+v (timeout %v)", name, info, pt.timeout)
			continue
		}
		if got, want := *info.ReadOnly, !slices.Contains(posts, name); got != want {
			t.Errorf("%s: read_only %v, want %v", name, got, want)
		}
		for what, schema := range map[string]any{"input": info.InputSchema, "output": info.OutputSchema} {
			if schema == nil {
				continue
			}
			if _, err := plans.CompileSchema(schema); err != nil {
				t.Errorf("%s: %s schema does not compile: %v", name, what, err)
			}
		}
	}
}

// An unknown pack is refused where it is written; a Config made without
// config.Load still gets it reported, in Skipped.
func TestUnknownPack(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, ".stepwise", "config.toml")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("[tools]\npacks = [\"gitlab\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	env := map[string]string{"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, "config"), "XDG_DATA_HOME": filepath.Join(home, "data")}
	_, _, err := config.Load(config.Options{Dir: root, LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	want := file + `:2:10: tools.packs[0]: unknown tool pack "gitlab" (known: data, github, llm, slack); did you mean 'github'?`
	if err == nil || err.Error() != want {
		t.Errorf("config.Load: %v\nwant %s", err, want)
	}

	c := Load(&config.Config{Tools: config.Tools{Packs: []string{"github", "gitlab", "jira"}}})
	wantSkipped := []Skipped{{Reason: `tools.packs: unknown tool pack "gitlab", "jira" (known: data, github, llm, slack)`}}
	if !slices.Equal(c.Skipped, wantSkipped) {
		t.Errorf("Skipped = %v\nwant %v", c.Skipped, wantSkipped)
	}
	if _, ok := c.Tool("builtin__git_log"); !ok {
		t.Error("the known pack next to the unknown ones is not enabled")
	}
}

// A pack tool of a pack that is not enabled is an unknown tool that says
// which pack to enable.
func TestPackNotEnabled(t *testing.T) {
	rt, _ := newRuntime(t, map[string]string{".stepwise/config.toml": "[tools]\npacks = [\"slack\"]\n"}, nil)
	tests := []struct {
		tool string
		want string
	}{
		{"builtin__git_log", `builtin__git_log belongs to the github tool pack, which is not enabled: add "github" to packs under [tools] in config.toml`},
		{"builtin__gh_pr_meta", `builtin__gh_pr_meta belongs to the github tool pack, which is not enabled: add "github" to packs under [tools] in config.toml`},
		{"builtin__git_lgo", `no tool named 'builtin__git_lgo'`},
	}
	for _, tc := range tests {
		t.Run(tc.tool, func(t *testing.T) {
			_, err := rt.Call(context.Background(), tc.tool, map[string]any{"base": "HEAD"})
			if !errors.Is(err, ErrUnknownTool) || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error %v\nwant ErrUnknownTool starting %s", err, tc.want)
			}
		})
	}
}

// packResult calls a pack tool for one test case: with errorStarting set,
// it checks that the call fails with an error that starts so, and ok is
// false; else the call must succeed.
func packResult(t *testing.T, rt *Runtime, tool string, input map[string]any, errorStarting string) (got any, ok bool) {
	t.Helper()
	got, err := rt.Call(context.Background(), tool, input)
	if errorStarting != "" {
		if te := toolErr(t, err); !strings.HasPrefix(te.Error(), errorStarting) {
			t.Errorf("error %q\nwant it to start %q", te.Error(), errorStarting)
		}
		return nil, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return got, true
}
