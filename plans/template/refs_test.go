package template

import (
	"reflect"
	"testing"
)

var refTests = []struct {
	name string
	src  string
	want []Ref
}{
	{"literal has none", "plain", []Ref{}},
	{"variables in order", "a {{E0.values.0.id}} b {{ input.team }}", []Ref{
		{Offset: 2, Path: []string{"E0", "values", "0", "id"}, Kind: RefVariable},
		{Offset: 23, Path: []string{"input", "team"}, Kind: RefVariable},
	}},
	{"bare key outside sections is a root read", "{{input}}", []Ref{
		{Offset: 0, Path: []string{"input"}, Kind: RefVariable},
	}},
	{"section body", "{{#E1.values}}{{title}}{{.}}{{E9.summary}}{{^@last}}, {{/@last}}{{/E1.values}}", []Ref{
		{Offset: 0, Path: []string{"E1", "values"}, Kind: RefSection},
		{Offset: 14, Path: []string{"title"}, Kind: RefVariable, InSection: true, ItemRead: true},
		{Offset: 23, Path: nil, Kind: RefVariable, InSection: true, ItemRead: true},
		{Offset: 28, Path: []string{"E9", "summary"}, Kind: RefVariable, InSection: true},
		{Offset: 42, Path: []string{"@last"}, Kind: RefInverted, InSection: true, LoopVar: true},
	}},
	{"nested sections", "{{#E0.values}}{{#labels}}{{@index}}{{/labels}}{{/E0.values}}", []Ref{
		{Offset: 0, Path: []string{"E0", "values"}, Kind: RefSection},
		{Offset: 14, Path: []string{"labels"}, Kind: RefSection, InSection: true, ItemRead: true},
		{Offset: 25, Path: []string{"@index"}, Kind: RefVariable, InSection: true, LoopVar: true},
	}},
	{"top-level inverted section has no item", "{{^E1.values}}{{title}} none{{/E1.values}}", []Ref{
		{Offset: 0, Path: []string{"E1", "values"}, Kind: RefInverted},
		{Offset: 14, Path: []string{"title"}, Kind: RefVariable, InSection: true},
	}},
	{"loop variable section has no item", "{{#@first}}{{title}}{{/@first}}", []Ref{
		{Offset: 0, Path: []string{"@first"}, Kind: RefSection, LoopVar: true},
		{Offset: 11, Path: []string{"title"}, Kind: RefVariable, InSection: true},
	}},
	{"dot outside item sections is no item read", "{{.}}{{^a}}{{.}}{{/a}}{{#@first}}{{.}}{{/@first}}", []Ref{
		{Offset: 0, Path: nil, Kind: RefVariable},
		{Offset: 5, Path: []string{"a"}, Kind: RefInverted},
		{Offset: 11, Path: nil, Kind: RefVariable, InSection: true},
		{Offset: 22, Path: []string{"@first"}, Kind: RefSection, LoopVar: true},
		{Offset: 33, Path: nil, Kind: RefVariable, InSection: true},
	}},
	{"loop variable outside sections", "{{@index}}", []Ref{
		{Offset: 0, Path: []string{"@index"}, Kind: RefVariable, LoopVar: true},
	}},
	{"closers are not refs", "{{#a}}{{/a}}{{^b}}{{/b}}", []Ref{
		{Offset: 0, Path: []string{"a"}, Kind: RefSection},
		{Offset: 12, Path: []string{"b"}, Kind: RefInverted},
	}},
	{"dot section", "{{#E0.grid}}{{#.}}{{.}}{{/.}}{{/E0.grid}}", []Ref{
		{Offset: 0, Path: []string{"E0", "grid"}, Kind: RefSection},
		{Offset: 12, Path: nil, Kind: RefSection, InSection: true, ItemRead: true},
		{Offset: 18, Path: nil, Kind: RefVariable, InSection: true, ItemRead: true},
	}},
}

func TestRefs(t *testing.T) {
	for _, tt := range refTests {
		t.Run(tt.name, func(t *testing.T) {
			tpl, err := Parse(tt.src)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.src, err)
			}
			got := tpl.Refs()
			if len(got) != len(tt.want) {
				t.Fatalf("Refs(%q) = %+v, want %+v", tt.src, got, tt.want)
			}
			for i := range got {
				g, w := got[i], tt.want[i]
				if len(g.Path) == 0 && len(w.Path) == 0 {
					g.Path, w.Path = nil, nil
				}
				if !reflect.DeepEqual(g, w) {
					t.Errorf("Refs(%q)[%d] = %+v, want %+v", tt.src, i, g, w)
				}
				if tt.src[g.Offset:g.Offset+2] != "{{" {
					t.Errorf("Refs(%q)[%d].Offset %d is not at a tag", tt.src, i, g.Offset)
				}
			}
		})
	}
}

func TestRefsAreCopies(t *testing.T) {
	tpl, err := Parse("{{E0.x}}")
	if err != nil {
		t.Fatal(err)
	}
	tpl.Refs()[0].Path[0] = "E9"
	if got, err := tpl.Render(MapScope{"E0": map[string]any{"x": 1}}); err != nil || got != 1 {
		t.Errorf("Render after changing a Ref = %v, %v; want 1", got, err)
	}
	if got := tpl.Refs()[0].Root(); got != "E0" {
		t.Errorf("Refs()[0].Root() = %q after changing a copy, want E0", got)
	}
}

func TestRefMethods(t *testing.T) {
	tests := []struct {
		name   string
		ref    Ref
		root   string
		dotted string
	}{
		{"dotted path", Ref{Path: []string{"E0", "values", "0", "id"}}, "E0", "E0.values.0.id"},
		{"bare key", Ref{Path: []string{"title"}}, "title", "title"},
		{"current item", Ref{}, "", "."},
		{"loop variable", Ref{Path: []string{"@index"}, LoopVar: true}, "@index", "@index"},
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
