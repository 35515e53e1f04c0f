package yamlpos

import (
	"math"

	"go.yaml.in/yaml/v3"
)

// Node is a value of a YAML document as the plan decoder reads it: what a
// yaml.Node holds but comments and anchors, in 40 bytes rather than 152.
// The fast reader makes a plan's nodes directly; a text it leaves to
// yaml.v3 has its tree copied into Nodes, so that the decoder reads one
// kind of tree whichever reader read the text. Making and clearing
// yaml.Nodes was half of what reading a plan cost.
type Node struct {
	Kind  Kind
	Style Style
	Tag   Tag
	// Line and Column are 1-based, Column counting characters. They are
	// int32, so that a Node is 8 bytes smaller: the fast reader takes no
	// text of 2 GiB, and no larger text is YAML that yaml.v3 can read in
	// memory.
	Line, Column int32
	// Value is a scalar's text, and an alias's anchor name.
	Value string
	// content is a collection's children, and an alias's one child, the
	// value it names, read with Content: behind a pointer, since most
	// Nodes are scalars, and a list's header in each made a Node 16 bytes
	// larger.
	content *[]*Node
}

// Content is a collection's children, keys and values in turn for a
// mapping, and an alias's one child, the value it names; nil for a scalar.
func (n *Node) Content() []*Node {
	if n.content == nil {
		return nil
	}
	return *n.content
}

// SetContent makes c the node's children.
func (n *Node) SetContent(c []*Node) {
	if len(c) == 0 {
		n.content = nil
		return
	}
	n.content = &c
}

// Alias is the value an alias names; nil for any other node.
func (n *Node) Alias() *Node {
	if n.Kind != AliasNode || n.content == nil {
		return nil
	}
	return (*n.content)[0]
}

// Kind is what a Node is: yaml.v3's kinds, in a byte.
type Kind uint8

// The kinds of Node.
const (
	DocumentNode = Kind(yaml.DocumentNode)
	SequenceNode = Kind(yaml.SequenceNode)
	MappingNode  = Kind(yaml.MappingNode)
	ScalarNode   = Kind(yaml.ScalarNode)
	AliasNode    = Kind(yaml.AliasNode)
)

// Style is how a Node is written: yaml.v3's style bits, in a byte.
type Style uint8

// The styles of Node; a plain scalar and a block collection have none.
const (
	DoubleQuotedStyle = Style(yaml.DoubleQuotedStyle)
	SingleQuotedStyle = Style(yaml.SingleQuotedStyle)
	LiteralStyle      = Style(yaml.LiteralStyle)
	FoldedStyle       = Style(yaml.FoldedStyle)
	FlowStyle         = Style(yaml.FlowStyle)
)

// Tag is a Node's resolved tag, of those YAML defines, in a byte.
type Tag uint8

// The tags of Node. OtherTag stands for a tag a file makes up (!thing),
// which the decoder reads as a string, and for an alias's, which has none.
const (
	OtherTag Tag = iota
	NullTag
	BoolTag
	IntTag
	FloatTag
	StrTag
	TimestampTag
	BinaryTag
	MergeTag
	SeqTag
	MapTag
)

// tagNames are the tags' names, as yaml.v3 writes them.
var tagNames = [...]string{NullTag: "!!null", BoolTag: "!!bool", IntTag: "!!int", FloatTag: "!!float", StrTag: "!!str", TimestampTag: "!!timestamp", BinaryTag: "!!binary", MergeTag: "!!merge", SeqTag: "!!seq", MapTag: "!!map"}

// String is the tag's name, as yaml.v3 writes it; "" for OtherTag.
func (t Tag) String() string { return tagNames[t] }

// TagOf is the Tag of the tag yaml.v3 names name.
func TagOf(name string) Tag {
	for t, n := range tagNames {
		if n == name && n != "" {
			return Tag(t)
		}
	}
	return OtherTag
}

// Decode decodes a scalar into v as yaml.v3 would: for the forms of
// booleans and numbers the decoder does not read itself.
func (n *Node) Decode(v any) error {
	return (&yaml.Node{Kind: yaml.Kind(n.Kind), Style: yaml.Style(n.Style), Tag: n.Tag.String(), Value: n.Value, Line: int(n.Line), Column: int(n.Column)}).Decode(v)
}

// fromYAML copies the tree yaml.v3 read under n into Nodes. An alias's child
// is the copy of the node it names, so that an alias inside the value it
// names, which the loader refuses, is still a cycle of the copy rather than
// an endless copying.
func fromYAML(n *yaml.Node) *Node {
	if n == nil {
		return nil
	}
	return (&yamlCopy{copies: map[*yaml.Node]*Node{}}).node(n)
}

// yamlCopy is a copy of a yaml.v3 tree in progress: the copy of each node
// made so far, so that an alias and the value it names share one.
type yamlCopy struct {
	copies map[*yaml.Node]*Node
}

func (c *yamlCopy) node(n *yaml.Node) *Node {
	if n == nil {
		return nil
	}
	if out, ok := c.copies[n]; ok {
		return out
	}
	out := &Node{Kind: Kind(n.Kind), Style: Style(n.Style), Tag: TagOf(n.Tag), Value: n.Value, Line: int32(min(n.Line, math.MaxInt32)), Column: int32(min(n.Column, math.MaxInt32))}
	c.copies[n] = out
	if n.Alias != nil {
		out.SetContent([]*Node{c.node(n.Alias)})
	}
	if len(n.Content) > 0 {
		content := make([]*Node, len(n.Content))
		for i, child := range n.Content {
			content[i] = c.node(child)
		}
		out.SetContent(content)
	}
	return out
}

// toYAML copies a tree the fast reader read into yaml.Nodes, for the
// callers that read or edit a file as yaml.v3's tree (Parse). The fast
// reader takes no aliases, so the tree has none.
func toYAML(n *Node) *yaml.Node {
	out := &yaml.Node{Kind: yaml.Kind(n.Kind), Style: yaml.Style(n.Style), Tag: n.Tag.String(), Value: n.Value, Line: int(n.Line), Column: int(n.Column)}
	if content := n.Content(); len(content) > 0 {
		out.Content = make([]*yaml.Node, len(content))
		for i, child := range content {
			out.Content[i] = toYAML(child)
		}
	}
	return out
}
