package template

import (
	"slices"
	"strings"
)

// Template is a parsed template. It is never modified after Parse, so one
// Template may render against many scopes concurrently.
type Template struct {
	src     string
	nodes   []node
	refs    []Ref
	literal bool
	splice  *path // the one variable of a typed splice; nil otherwise
	boxed   any   // src converted to any once, so a literal Render does not allocate
}

// Source returns the text the template was parsed from.
func (t *Template) Source() string { return t.src }

// IsLiteral reports whether the template has no tags at all, so rendering it
// always yields its source.
func (t *Template) IsLiteral() bool { return t.literal }

// IsSplice reports whether the whole template is exactly one variable tag,
// so Render returns the raw value rather than text.
func (t *Template) IsSplice() bool { return t.splice != nil }

// Refs returns every tag that reads a path (variables, section openers and
// inverted section openers, not closers), in source order, for static
// checking. The result is a copy the caller may keep or modify.
func (t *Template) Refs() []Ref {
	out := make([]Ref, len(t.refs))
	for i, r := range t.refs {
		r.Path = slices.Clone(r.Path)
		out[i] = r
	}
	return out
}

// RefKind says which kind of tag a Ref comes from.
type RefKind uint8

// The kinds of tag that read a path.
const (
	RefVariable RefKind = iota // {{path}}
	RefSection                 // {{#path}}
	RefInverted                // {{^path}}
)

// String returns the kind's name, for messages and test output.
func (k RefKind) String() string {
	switch k {
	case RefSection:
		return "section"
	case RefInverted:
		return "inverted section"
	}
	return "variable"
}

// Ref is one tag that reads a path, as static checks see it. A check that
// verifies roots ("input or an earlier step") should skip refs with ItemRead
// or LoopVar set: those do not name a root.
type Ref struct {
	Offset    int      // byte offset of the tag's opening "{{" in the source
	Path      []string // the segments, e.g. {"E0", "values", "0", "id"}; empty for {{.}}
	Kind      RefKind  // variable, section or inverted section
	InSection bool     // the tag sits inside the body of a section or inverted section
	ItemRead  bool     // a bare key or {{.}} under a section that has an item: it reads items before roots
	LoopVar   bool     // @index, @first or @last
}

// Root returns the first segment of the path: a root name for root-anchored
// paths, and "" for {{.}}.
func (r Ref) Root() string {
	if len(r.Path) == 0 {
		return ""
	}
	return r.Path[0]
}

// String returns the path as written in the tag, e.g. "E0.values.0.id", or
// "." for {{.}}.
func (r Ref) String() string {
	if len(r.Path) == 0 {
		return "."
	}
	return strings.Join(r.Path, ".")
}

// nodeKind tells the renderer what a node is; evaluation is one switch over
// it, the way text/template walks its tree.
type nodeKind uint8

const (
	textNode nodeKind = iota
	varNode
	sectionNode
	invertedNode
)

// node is one piece of the parse tree.
type node struct {
	kind nodeKind
	text string // textNode: the literal text
	path path   // the path a tag reads
	body []node // the body of a section or inverted section
}

// pathKind is decided at parse time, so rendering never has to work out
// again whether a path reads items, roots or loop state.
type pathKind uint8

const (
	rootPath  pathKind = iota // the first segment is a root
	barePath                  // one segment under an item-pushing section: items first, then roots
	dotPath                   // {{.}}: the current item
	indexPath                 // @index
	firstPath                 // @first
	lastPath                  // @last
)

// path is a parsed path. Its segments are substrings of the source, and list
// indices are parsed once here rather than on every render.
type path struct {
	kind  pathKind
	text  string   // the path as written, e.g. "E0.values.0.id"
	segs  []string // text split at dots
	index []int    // index[i] is segs[i] as a list index, or -1 when it is not all digits
}

// loopVar reports whether p is @index, @first or @last.
func (p *path) loopVar() bool {
	return p.kind == indexPath || p.kind == firstPath || p.kind == lastPath
}

// prefix returns the dotted text of the first n segments, for error messages.
func (p *path) prefix(n int) string {
	end := -1
	for _, s := range p.segs[:n] {
		end += len(s) + 1
	}
	return p.text[:end]
}
