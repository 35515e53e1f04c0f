package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// graphFiles are a plan and a tool file as graph accepts them: a step with
// a field graph ignores, a tool with one too, and graph's prompt-tool fields.
var graphFiles = map[string]string{
	"plans/digest.yaml": `identifier: digest
name: Digest
description: Review a diff.
steps:
  - id: E0
    tool_name: user__review
    input: { diff: "+x" }
    reasonning: graph ignores this field
`,
	"tools/review.yaml": `name: review
description: Review a diff.
kind: prompt
prompt: "Review {{input.diff}}"
system: You review diffs.
caller_output_schema: true
caller_model: true
owner: graph ignores this field too
`,
}

// TestValidateUnknownFieldsByProject validates the same files in a .graph
// and a .stepwise project: notes with exit 0 in the first, problems with
// exit 1 in the second, in the human lines and in --json alike.
func TestValidateUnknownFieldsByProject(t *testing.T) {
	tests := []struct {
		name      string
		dir       string
		wantCode  int
		wantLines []string // stderr, in order
		wantNotes []string // --json codes at line:col
		wantProbs []string
	}{
		{
			name:     "graph project: notes",
			dir:      ".graph",
			wantCode: 0,
			wantLines: []string{
				".graph/plans/digest.yaml:8:5: note: step E0: unknown field 'reasonning' in a step; did you mean 'reasoning'?; graph ignores it, and so does stepwise",
				".graph/tools/review.yaml:8:1: note: unknown field 'owner' in a tool file (fields: ",
				"✓ .graph/plans/digest.yaml: no problems, 2 notes",
			},
			wantNotes: []string{"unknown_field 8:5", "unknown_field 8:1"},
		},
		{
			name:     "stepwise project: problems",
			dir:      ".stepwise",
			wantCode: 1,
			wantLines: []string{
				// The tool file has a problem of its own, so it is left out
				// of the catalog, and the step that calls it says why.
				".stepwise/plans/digest.yaml:6:16: step E0: tool 'user__review' cannot run: its tool file has problems (first: .stepwise/tools/review.yaml:8:1: unknown field 'owner' in a tool file",
				".stepwise/plans/digest.yaml:8:5: step E0: unknown field 'reasonning' in a step; did you mean 'reasoning'?",
				"✗ .stepwise/plans/digest.yaml: 2 problems",
			},
			wantProbs: []string{"unresolved_tool 6:16", "unknown_field 8:5"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for name, text := range graphFiles {
				path := filepath.Join(root, tc.dir, name)
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			isolate(t, root)
			plan := filepath.Join(tc.dir, "plans", "digest.yaml")
			_, stderr, code := runCLI(t, "validate", plan)
			if code != tc.wantCode {
				t.Errorf("exit code %d, want %d\nstderr:\n%s", code, tc.wantCode, stderr)
			}
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if len(lines) != len(tc.wantLines) {
				t.Fatalf("stderr:\n%s\nwant:\n%s", stderr, strings.Join(tc.wantLines, "\n"))
			}
			for i, want := range tc.wantLines {
				if !strings.HasPrefix(lines[i], want) {
					t.Errorf("line %d:\n got %s\nwant %s...", i+1, lines[i], want)
				}
			}
			stdout, _, _ := runCLI(t, "validate", "--json", plan)
			var env struct {
				OK       bool `json:"ok"`
				Problems []struct {
					Code      string `json:"code"`
					Line, Col int
				} `json:"problems"`
				Notes []struct {
					Code      string `json:"code"`
					Line, Col int
				} `json:"notes"`
			}
			if err := json.Unmarshal([]byte(stdout), &env); err != nil {
				t.Fatalf("%v in %s", err, stdout)
			}
			var notes, probs []string
			for _, n := range env.Notes {
				notes = append(notes, fmt.Sprintf("%s %d:%d", n.Code, n.Line, n.Col))
			}
			for _, p := range env.Problems {
				probs = append(probs, fmt.Sprintf("%s %d:%d", p.Code, p.Line, p.Col))
			}
			if !slices.Equal(notes, tc.wantNotes) || !slices.Equal(probs, tc.wantProbs) || env.OK != (tc.wantCode == 0) {
				t.Errorf("--json ok %v, notes %q, problems %q; want notes %q, problems %q", env.OK, notes, probs, tc.wantNotes, tc.wantProbs)
			}
		})
	}
}
