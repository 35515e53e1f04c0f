package yamlpos

import (
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestQuoteFlowQuestionMarks(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"a flow mapping value", "a: {type: boolean, description: Keep this one?}\n", "a: {type: boolean, description: \"Keep this one?\"}\n"},
		{"before the closing brace with a space", "a: { d: Why? }\n", "a: { d: \"Why?\" }\n"},
		{"two on a line, and an escape", "a: [x?, say \"hi\"?, z]\n", "a: [\"x?\", \"say \\\"hi\\\"?\", z]\n"},
		{"non-ASCII before it", "é: {q: ça va?}\n", "é: {q: \"ça va?\"}\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, _, ok := quoteFlowQuestionMarks([]byte(tc.src))
			if !ok || string(got) != tc.want {
				t.Errorf("got %q (ok %v), want %q", got, ok, tc.want)
			}
		})
	}
	if _, _, ok := quoteFlowQuestionMarks([]byte("a: Why?\nb: {c: d}\n")); ok {
		t.Error("a '?' outside flow collections needs no quoting")
	}
}

// TestUnquotePositions checks that a document read through the quoted copy
// has the positions and styles of the file as written: the same tree yaml.v3
// gives for the same document with the values quoted by hand, columns moved.
func TestUnquotePositions(t *testing.T) {
	src := "k: {a: Why?, b: [x, y?], c: 1}\n"
	fixed, quotes, ok := quoteFlowQuestionMarks([]byte(src))
	if !ok {
		t.Fatal("nothing quoted")
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(fixed, &doc); err != nil {
		t.Fatal(err)
	}
	unquote(&doc, quotes)
	type at struct {
		value    string
		col      int
		style    yaml.Style
		isScalar bool
	}
	var got []at
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.ScalarNode {
			got = append(got, at{n.Value, n.Column, n.Style, true})
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(&doc)
	want := []at{
		{"k", 1, 0, true}, {"a", 5, 0, true}, {"Why?", 8, 0, true}, {"b", 14, 0, true},
		{"x", 18, 0, true}, {"y?", 21, 0, true}, {"c", 26, 0, true}, {"1", 29, 0, true},
	}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("scalar %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}
