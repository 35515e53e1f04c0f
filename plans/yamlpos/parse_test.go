package yamlpos

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// nodeDepth is how deeply a parsed tree nests, its leaves counted as a
// level, as scanDepth counts.
func nodeDepth(n *yaml.Node) int {
	deepest := 0
	for _, c := range n.Content {
		deepest = max(deepest, nodeDepth(c))
	}
	return deepest + 1
}

func TestScanDepth(t *testing.T) {
	tests := []struct {
		name, src string
		deepest   int
	}{
		{"empty", "", 0},
		{"a scalar", "a\n", 2},
		{"a mapping", "a: 1\nb: 2\n", 2},
		{"block nesting", "a:\n  b:\n    c: 1\n  d: 2\n", 4},
		{"a sequence under a key at its indentation", "a:\n- 1\n- 2\n", 3},
		{"compact sequences", "- - - x\n", 5},
		{"a flow value", "a: {b: [1, [2]]}\n", 5},
		{"flow over lines", "a: [1,\n  [2,\n    [3]]]\n", 5},
		{"brackets in quotes", "a: \"[[[{{\"\nb: '[[['' {{'\n", 2},
		{"brackets in a plain scalar", "a: x [[[ {{y}}\n", 2},
		{"brackets in a comment", "a: 1 # [[[\n# {{{\n", 2},
		{"brackets in a block scalar", "a: |\n  [[[\n    {{{\n\n  x\nb: 1\n", 2},
		{"a quoted scalar over lines", "a: \"x\n  [[[\n  y\"\nb: 1\n", 2},
		{"an anchored flow value", "a: &x [[1]]\n", 4},
		{"JSON", `{"a":{"b":["c",{"d":1}]}}`, 6},
		{"a second document starts afresh", "a:\n  b: 1\n---\nc: 1\n", 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := scanDepth([]byte(tc.src), MaxDepth)
			if got.deepest != tc.deepest || got.over != -1 {
				t.Errorf("scanDepth = %+v, want deepest %d, never over", got, tc.deepest)
			}
		})
	}
}

// TestScanDepthBoundsTheParse checks scanDepth against the depth yaml.v3
// finds in real files: it may count a level or two more, never fewer.
func TestScanDepthBoundsTheParse(t *testing.T) {
	files, _ := filepath.Glob("../testdata/valid/*.yaml")
	examples, _ := filepath.Glob("../examples/*/*.yaml")
	files = append(files, examples...)
	if len(files) < 10 {
		t.Fatalf("found only %d files to measure", len(files))
	}
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var doc yaml.Node
		if err := yaml.Unmarshal(src, &doc); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		parsed := nodeDepth(&doc) - 1 // the document node is no level
		if scanned := scanDepth(src, MaxDepth).deepest; scanned < parsed || scanned > parsed+2 {
			t.Errorf("%s: scanned depth %d, parsed %d", file, scanned, parsed)
		}
	}
}

// deepFlow is a flow sequence nested levels deep: 2 bytes a level.
func deepFlow(levels int) []byte {
	return append(bytes.Repeat([]byte("["), levels), bytes.Repeat([]byte("]"), levels)...)
}

// deepBlock is a block sequence nested levels deep in compact form.
func deepBlock(levels int) []byte {
	return append(bytes.Repeat([]byte("- "), levels), "x\n"...)
}

func TestParseRefusesDeepNesting(t *testing.T) {
	tests := []struct {
		name string
		src  []byte
		want string
	}{
		{"a million flow levels", append([]byte("a: 1\nb: "), deepFlow(1_000_000)...), "deep.yaml:2:1003: YAML: values nest 1000001 levels deep here; the limit is 1000"},
		{"a million block levels", deepBlock(1_000_000), "deep.yaml:1:2001: YAML: values nest 1000002 levels deep here; the limit is 1000"},
		{"flow inside block nesting", append([]byte("a:\n  b:\n    "), deepFlow(MaxDepth)...), "deep.yaml:3:1002: YAML: values nest 1003 levels deep here"},
		{"just past the limit", append([]byte("a: "), deepFlow(MaxDepth)...), "deep.yaml:1:1003: YAML: values nest 1001 levels deep here; the limit is 1000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root, _, problem := Parse("deep.yaml", tc.src)
			if root != nil || problem == nil || !strings.HasPrefix(problem.String(), tc.want) {
				t.Fatalf("Parse = %v, %v; want no document and %q", root, problem, tc.want)
			}
		})
	}
	// At the limit, the text is read.
	if root, _, problem := Parse("deep.yaml", append([]byte("a: "), deepFlow(MaxDepth-1)...)); root == nil || problem != nil {
		t.Errorf("%d levels: %v", MaxDepth-1, problem)
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name, src  string
		root       bool   // whether a document comes back
		second     int    // the line of a second document, 0 for none
		diagnostic string // the diagnostic, "" for none
	}{
		{"a mapping", "a: 1\n", true, 0, ""},
		{"empty", "", false, 0, ""},
		{"comments only", "# nothing\n", false, 0, ""},
		{"two documents", "a: 1\n---\nb: 2\n", true, 2, ""},
		{"YAML 1.2 declared", "%YAML 1.2\n---\na: 1\n", true, 0, ""},
		{"a question in a flow value", "a: {d: Why?}\n", true, 0, ""},
		{"placed at the token", "a:\n  b: [1, 2\nc: 3\n", false, 0, "f.yaml:3:1: YAML: "},
		{"a tab", "a:\n\tb: 1\n", false, 0, "f.yaml:2:1: YAML: a tab indents this line; YAML indents with spaces only"},
		{"an unknown anchor", "a: 1\nb: [x, *nowhere]\n", false, 0, "f.yaml:2:8: YAML: unknown anchor 'nowhere' referenced"},
		{"a broken second document", "a: 1\n---\nb: [\n", true, 0, "f.yaml:"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root, second, problem := Parse("f.yaml", []byte(tc.src))
			if (root != nil) != tc.root {
				t.Errorf("root = %v, want one: %v", root, tc.root)
			}
			switch {
			case tc.second == 0 && second != nil:
				t.Errorf("a second document at line %d", second.Line)
			case tc.second != 0 && (second == nil || second.Line != tc.second):
				t.Errorf("second = %v, want one at line %d", second, tc.second)
			}
			switch {
			case tc.diagnostic == "" && problem != nil:
				t.Errorf("diagnostic %q, want none", problem)
			case tc.diagnostic != "" && (problem == nil || !strings.HasPrefix(problem.String(), tc.diagnostic)):
				t.Errorf("diagnostic %v, want %q", problem, tc.diagnostic)
			}
		})
	}
}

func TestPosAndDiagnosticString(t *testing.T) {
	tests := []struct {
		name string
		d    Diagnostic
		want string
	}{
		{"placed", Diagnostic{Pos: Pos{File: "a.yaml", Line: 3, Col: 7}, Message: "bad"}, "a.yaml:3:7: bad"},
		{"a file", Diagnostic{Pos: Pos{File: "a.yaml"}, Message: "bad"}, "a.yaml: bad"},
		{"no file", Diagnostic{Pos: Pos{Line: 2, Col: 1}, Message: "bad"}, "2:1: bad"},
		{"nowhere", Diagnostic{Message: "bad"}, "bad"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.d.String(); got != tc.want {
				t.Errorf("String() = %q, want %q", got, tc.want)
			}
		})
	}
}

// FuzzParse feeds the YAML layer anything, deep and many-tagged text among
// the seeds: it must never panic, always place what it refuses, and never
// let a text past the depth scan reach yaml.v3's own depth limit.
func FuzzParse(f *testing.F) {
	f.Add([]byte("a: {b: [1, 2]}\n"))
	f.Add([]byte("a:\n  - b: |\n      [[[\n  - c: 'x''y'\n"))
	f.Add(deepFlow(MaxDepth + 1))
	f.Add(deepBlock(MaxDepth + 1))
	f.Add(append([]byte("t: \""), bytes.Repeat([]byte("{{a.b}} "), 1000)...))
	f.Fuzz(func(t *testing.T, src []byte) {
		root, _, problem := Parse("f.yaml", src)
		if problem != nil {
			if problem.File != "f.yaml" || problem.Line < 1 || problem.Col < 1 || problem.Message == "" {
				t.Fatalf("diagnostic without a place or a message: %#v", problem)
			}
			if strings.Contains(problem.Message, "exceeded max depth") {
				t.Fatalf("yaml.v3 met its depth limit behind the scan: %s", problem)
			}
			return
		}
		if root != nil && nodeDepth(root) > 2*MaxDepth+2 {
			t.Fatalf("a tree %d levels deep passed the scan", nodeDepth(root))
		}
	})
}
