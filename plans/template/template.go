package template

import "strings"

// Template is a parsed template. It is never modified after Parse, so one
// Template may render against many scopes concurrently.
type Template struct {
	src     string
	nodes   []node   // in source order; nil for a literal
	segs    []string // the segments of every path, in source order: substrings of src
	literal bool
	spliced bool // the template is a typed splice: its one variable is splice()
	boxed   any  // a literal's src converted to any once, so that its Render does not allocate
}

// roomyTemplate is a Template with room for the nodes and path segments of
// a few tags, so that it is made in one allocation: most templates of a
// plan hold a tag or two, and an allocation for each list was most of what
// parsing them cost.
type roomyTemplate struct {
	Template
	nodes [roomTags + 1]node // a node per tag, and one for the text after the last
	segs  [roomSegs]string
}

// roomTags and roomSegs are the most tags and path segments a roomyTemplate
// holds: "{{S1.items}} and {{S2.title}}" fits.
const (
	roomTags = 2
	roomSegs = 4
)

// Source returns the text the template was parsed from.
func (t *Template) Source() string { return t.src }

// IsLiteral reports whether the template has no tags at all, so rendering it
// always yields its source.
func (t *Template) IsLiteral() bool { return t.literal }

// IsSplice reports whether the whole template is exactly one variable tag,
// so Render returns the raw value rather than text.
func (t *Template) IsSplice() bool { return t.spliced }

// Refs yields every tag that reads a path (variables, section openers and
// inverted section openers, not closers), in source order, for static
// checking: range over t.Refs. Each Ref is made as it is yielded, so a
// template of a million tags is checked without a million Refs in memory at
// once. It is the iterator itself rather than a function returning one, so
// that ranging over it allocates neither the iterator nor the loop body.
func (t *Template) Refs(yield func(Ref) bool) {
	for i := range t.nodes {
		n := &t.nodes[i]
		var kind RefKind
		switch n.kind {
		case textNode:
			continue
		case sectionNode:
			kind = RefSection
		case invertedNode:
			kind = RefInverted
		}
		ref := Ref{
			Offset:    int(n.tag),
			Kind:      kind,
			InSection: n.inSection,
			ItemRead:  n.pathKind == barePath || n.pathKind == dotPath && n.underItem,
			LoopVar:   n.pathKind.loopVar(),
			path:      t.src[n.pathStart:n.pathEnd],
		}
		if !yield(ref) {
			return
		}
	}
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
	Offset    int     // byte offset of the tag's opening "{{" in the source
	Kind      RefKind // variable, section or inverted section
	InSection bool    // the tag sits inside the body of a section or inverted section
	ItemRead  bool    // a bare key or {{.}} under a section that has an item: it reads items before roots
	LoopVar   bool    // @index, @first or @last
	path      string  // the path as written, e.g. "E0.values.0.id", or "." for {{.}}
}

// Root returns the first segment of the path: a root name for root-anchored
// paths, and "" for {{.}}.
func (r Ref) Root() string {
	if r.path == "." {
		return ""
	}
	root, _, _ := strings.Cut(r.path, ".")
	return root
}

// String returns the path as written in the tag, e.g. "E0.values.0.id", or
// "." for {{.}}.
func (r Ref) String() string { return r.path }

// nodeKind tells the renderer what a node is; evaluation is one switch over
// it, the way text/template walks its tree.
type nodeKind uint8

const (
	textNode     nodeKind = iota // only text: the last node of a section body (its closer) or of the template
	varNode                      // text, then a variable
	sectionNode                  // text, then a section whose body is the nodes after it
	invertedNode                 // text, then an inverted section whose body is the nodes after it
)

// node is a tag and the literal text before it. The tree is flat: a
// section's body is the nodes that follow it, up to and including the
// textNode that stands for its closer. The text and the path as written
// are offsets into the source rather than strings, which keeps a node at 28
// bytes (and 16 per segment of its path, in one list for the template): a
// string of a million tags parses into two lists, not millions of objects.
type node struct {
	kind      nodeKind
	pathKind  pathKind
	inSection bool   // inside the body of a section or inverted section
	underItem bool   // inside a section that pushes an item
	text      uint32 // where the literal text before the tag starts; it ends at tag
	tag       uint32 // the byte offset of "{{", or the length of the source for the last node
	pathStart uint32 // the path text is src[pathStart:pathEnd]
	pathEnd   uint32
	segs      uint32 // the index in Template.segs of the path's first segment; the next node's is past its last
	body      uint32 // sections: how many nodes follow as the body, closer included
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

// loopVar reports whether k is @index, @first or @last.
func (k pathKind) loopVar() bool {
	return k == indexPath || k == firstPath || k == lastPath
}

// path is a parsed path as rendering reads it: its segments, split once at
// parse time, are substrings of the source. Its text is only wanted for
// error messages, so it is joined again then rather than kept.
type path struct {
	kind pathKind
	segs []string // none for {{.}}
}

// splice is the one variable of a typed splice, the path of its first
// node: it is made when rendered rather than kept, which spares each
// template of a plan a path's room.
func (t *Template) splice() path { return t.pathOf(&t.nodes[0], &t.nodes[1]) }

// pathOf returns the path of the tag of n, which next follows: a tag is
// never a last node, since a closer or the text after the last tag is.
func (t *Template) pathOf(n, next *node) path {
	return path{kind: n.pathKind, segs: t.segs[n.segs:next.segs]}
}

// text returns the path as written, e.g. "E0.values.0.id", or "." for
// {{.}}, for error messages.
func (p *path) text() string {
	if len(p.segs) == 0 {
		return "."
	}
	return strings.Join(p.segs, ".")
}

// prefix returns the dotted text of the first n segments, for error messages.
func (p *path) prefix(n int) string {
	return strings.Join(p.segs[:n], ".")
}
