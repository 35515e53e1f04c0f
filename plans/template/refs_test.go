package template

import (
	"slices"
	"testing"
)

var refTests = []struct {
	name string
	src  string
	want []Ref
}{
	{"literal has none", "plain", []Ref{}},
	{"variables in order", "a {{E0.values.0.id}} b {{ input.team }}", []Ref{
		{Offset: 2, path: "E0.values.0.id", Kind: RefVariable},
		{Offset: 23, path: "input.team", Kind: RefVariable},
	}},
	{"bare key outside sections is a root read", "{{input}}", []Ref{
		{Offset: 0, path: "input", Kind: RefVariable},
	}},
	{"section body", "{{#E1.values}}{{title}}{{.}}{{E9.summary}}{{^@last}}, {{/@last}}{{/E1.values}}", []Ref{
		{Offset: 0, path: "E1.values", Kind: RefSection},
		{Offset: 14, path: "title", Kind: RefVariable, InSection: true, ItemRead: true},
		{Offset: 23, path: ".", Kind: RefVariable, InSection: true, ItemRead: true},
		{Offset: 28, path: "E9.summary", Kind: RefVariable, InSection: true},
		{Offset: 42, path: "@last", Kind: RefInverted, InSection: true, LoopVar: true},
	}},
	{"nested sections", "{{#E0.values}}{{#labels}}{{@index}}{{/labels}}{{/E0.values}}", []Ref{
		{Offset: 0, path: "E0.values", Kind: RefSection},
		{Offset: 14, path: "labels", Kind: RefSection, InSection: true, ItemRead: true},
		{Offset: 25, path: "@index", Kind: RefVariable, InSection: true, LoopVar: true},
	}},
	{"top-level inverted section has no item", "{{^E1.values}}{{title}} none{{/E1.values}}", []Ref{
		{Offset: 0, path: "E1.values", Kind: RefInverted},
		{Offset: 14, path: "title", Kind: RefVariable, InSection: true},
	}},
	{"loop variable section has no item", "{{#@first}}{{title}}{{/@first}}", []Ref{
		{Offset: 0, path: "@first", Kind: RefSection, LoopVar: true},
		{Offset: 11, path: "title", Kind: RefVariable, InSection: true},
	}},
	{"dot outside item sections is no item read", "{{.}}{{^a}}{{.}}{{/a}}{{#@first}}{{.}}{{/@first}}", []Ref{
		{Offset: 0, path: ".", Kind: RefVariable},
		{Offset: 5, path: "a", Kind: RefInverted},
		{Offset: 11, path: ".", Kind: RefVariable, InSection: true},
		{Offset: 22, path: "@first", Kind: RefSection, LoopVar: true},
		{Offset: 33, path: ".", Kind: RefVariable, InSection: true},
	}},
	{"loop variable outside sections", "{{@index}}", []Ref{
		{Offset: 0, path: "@index", Kind: RefVariable, LoopVar: true},
	}},
	{"closers are not refs", "{{#a}}{{/a}}{{^b}}{{/b}}", []Ref{
		{Offset: 0, path: "a", Kind: RefSection},
		{Offset: 12, path: "b", Kind: RefInverted},
	}},
	{"dot section", "{{#E0.grid}}{{#.}}{{.}}{{/.}}{{/E0.grid}}", []Ref{
		{Offset: 0, path: "E0.grid", Kind: RefSection},
		{Offset: 12, path: ".", Kind: RefSection, InSection: true, ItemRead: true},
		{Offset: 18, path: ".", Kind: RefVariable, InSection: true, ItemRead: true},
	}},
}

func TestRefs(t *testing.T) {
	for _, tt := range refTests {
		t.Run(tt.name, func(t *testing.T) {
			tpl, err := Parse(tt.src)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.src, err)
			}
			got := slices.Collect(tpl.Refs)
			if len(got) != len(tt.want) {
				t.Fatalf("Refs(%q) = %+v, want %+v", tt.src, got, tt.want)
			}
			for i := range got {
				g, w := got[i], tt.want[i]
				if g != w {
					t.Errorf("Refs(%q)[%d] = %+v, want %+v", tt.src, i, g, w)
				}
				if tt.src[g.Offset:g.Offset+2] != "{{" {
					t.Errorf("Refs(%q)[%d].Offset %d is not at a tag", tt.src, i, g.Offset)
				}
			}
		})
	}
}

// TestRefsStopsWhenTold checks that Refs honours a loop that stops early,
// as a range-over-func iterator must.
func TestRefsStopsWhenTold(t *testing.T) {
	tpl, err := Parse("{{E0.x}} {{E1.y}} {{E2.z}}")
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	for ref := range tpl.Refs {
		seen = append(seen, ref.String())
		if len(seen) == 2 {
			break
		}
	}
	if want := []string{"E0.x", "E1.y"}; !slices.Equal(seen, want) {
		t.Errorf("refs seen before break = %q, want %q", seen, want)
	}
}

func TestRefMethods(t *testing.T) {
	tests := []struct {
		name   string
		ref    Ref
		root   string
		dotted string
	}{
		{"dotted path", Ref{path: "E0.values.0.id"}, "E0", "E0.values.0.id"},
		{"bare key", Ref{path: "title"}, "title", "title"},
		{"current item", Ref{path: "."}, "", "."},
		{"loop variable", Ref{path: "@index", LoopVar: true}, "@index", "@index"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.ref.Root(); got != tt.root {
				t.Errorf("Root() = %q, want %q", got, tt.root)
			}
			if got := tt.ref.String(); got != tt.dotted {
				t.Errorf("String() = %q, want %q", got, tt.dotted)
			}
		})
	}
}

func TestRefKindString(t *testing.T) {
	tests := []struct {
		name string
		kind RefKind
		want string
	}{
		{"variable", RefVariable, "variable"},
		{"section", RefSection, "section"},
		{"inverted", RefInverted, "inverted section"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.kind.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
		})
	}
}
