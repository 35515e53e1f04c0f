package yamlpos

import (
	"bytes"
	"errors"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	goccyyaml "github.com/goccy/go-yaml"
	goccyparser "github.com/goccy/go-yaml/parser"
	"go.yaml.in/yaml/v3"
)

var (
	yamlLine        = regexp.MustCompile(`^yaml: line (\d+): `)
	unknownAnchor   = regexp.MustCompile(`^unknown anchor '([^']+)' referenced`)
	yaml12Directive = regexp.MustCompile(`(?m)^%YAML 1\.2\b`)
)

// Read reads the YAML text of file, which holds one document, into Nodes.
// root is the document's top value, nil when the text holds none (it is
// empty, or only comments). second is the top of a second document when
// the text goes on to one, for the caller to report in its own words.
// problem is set when the text is not YAML, or nests deeper than MaxDepth;
// root may still be set then, when only a later document is broken. The
// scalars' values are slices of src, which the caller passes as a string,
// so that one copy of the text serves both.
//
// release hands the tree's memory back for a later Read to reuse: the
// caller calls it once nothing points into the tree any more, having
// copied out what it keeps (the scalars' values, strings that stay valid),
// or never, and the tree is collected as usual. It is never nil.
func Read(file string, src string) (root, second *Node, problem *Diagnostic, release func()) {
	if root, release, ok := readReleasable(src); ok {
		return root, nil, nil, release
	}
	yamlRoot, yamlSecond, problem := parseYAMLv3(file, []byte(src))
	return fromYAML(yamlRoot), fromYAML(yamlSecond), problem, func() {}
}

// Parse reads the YAML text of file as Read does, into yaml.v3's tree, for
// the callers that edit a file or read it through yaml.v3's decoder. The
// nodes carry no comments: nothing reads them, and the fast reader does
// not keep them.
func Parse(file string, src []byte) (root, second *yaml.Node, problem *Diagnostic) {
	if root, release, ok := readReleasable(string(src)); ok {
		defer release()
		return toYAML(root), nil, nil
	}
	return parseYAMLv3(file, src)
}

// parseYAMLv3 reads with yaml.v3 a text the fast reader does not take, as
// Parse says.
func parseYAMLv3(file string, src []byte) (root, second *yaml.Node, problem *Diagnostic) {
	// The fast reader, which nests no deeper than half the limit, gave
	// the text up; the depth is checked before any other parser runs:
	// parsers recurse (or worse) on nesting, so a small file of brackets
	// would otherwise cost far more than its size.
	if d := scanDepth(src, MaxDepth); d.over >= 0 {
		return nil, nil, &Diagnostic{Pos: posAt(file, src, d.over), Message: "YAML: values nest " + strconv.Itoa(d.deepest) + " levels deep here; the limit is " + strconv.Itoa(MaxDepth) + ": flatten the structure, or move the deep part to a file of its own"}
	}
	// yaml.v3 reads YAML 1.2 but refuses to be told so: it accepts only a
	// %YAML 1.1 directive. The directive changes nothing it does, so it is
	// read as 1.1, in a copy of the same length.
	if bytes.Contains(src, []byte("%YAML 1.2")) && yaml12Directive.Match(src) {
		src = yaml12Directive.ReplaceAll(src, []byte("%YAML 1.1"))
	}
	first, next, err := decodeDocuments(src)
	if err != nil && !errors.Is(err, io.EOF) {
		if fixed, quotes, ok := quoteFlowQuestionMarks(src); ok {
			if fixedFirst, fixedNext, fixedErr := decodeDocuments(fixed); fixedErr == nil {
				unquote(fixedFirst, quotes)
				unquote(fixedNext, quotes)
				first, next, err = fixedFirst, fixedNext, nil
			}
		}
	}
	if err != nil && !errors.Is(err, io.EOF) {
		problem = syntaxProblem(file, src, err)
	}
	if first != nil && len(first.Content) > 0 {
		root = first.Content[0]
		dropComments(root)
	}
	return root, next, problem
}

// dropComments clears the comments yaml.v3 attached to the tree under n,
// so that a tree comes out of Parse the same whichever reader read it.
func dropComments(n *yaml.Node) {
	n.HeadComment, n.LineComment, n.FootComment = "", "", ""
	for _, c := range n.Content {
		dropComments(c)
	}
}

// decodeDocuments reads the first YAML document of src and, when there is
// one, the second. err is io.EOF for an empty text, and a syntax error in
// either document otherwise.
func decodeDocuments(src []byte) (first, second *yaml.Node, err error) {
	dec := yaml.NewDecoder(bytes.NewReader(src))
	first = &yaml.Node{}
	if err := dec.Decode(first); err != nil {
		return nil, nil, err
	}
	second = &yaml.Node{}
	if err := dec.Decode(second); err != nil {
		if errors.Is(err, io.EOF) {
			return first, nil, nil
		}
		return first, nil, err
	}
	return first, second, nil
}

// maxPlacedBytes is the largest text whose syntax error goccy/go-yaml
// places. Its parser allocates some eighty times the text it reads, so past
// this the error stays at the line yaml.v3 names: placing an error must
// never cost much more than finding it.
const maxPlacedBytes = 512 << 10

// syntaxProblem turns yaml.v3's refusal into a diagnostic. yaml.v3 names
// only a line, and often the line where the enclosing construct began
// rather than the one at fault; goccy/go-yaml's parser points at the
// offending token, so its position (and its wording, which goes with it) is
// used when it also refuses the text. When the two parsers disagree,
// yaml.v3's verdict stands at the line it names. The depth check Parse
// makes first keeps goccy's parser, which slows down with the square of the
// nesting, from seeing deep text.
func syntaxProblem(file string, src []byte, err error) *Diagnostic {
	if len(src) <= maxPlacedBytes {
		if _, gerr := goccyparser.ParseBytes(src, 0); gerr != nil {
			var se *goccyyaml.SyntaxError
			if errors.As(gerr, &se) && se.Token != nil && se.Token.Position != nil && se.Token.Position.Line > 0 {
				msg := se.Message
				if strings.Contains(msg, "'\t'") {
					msg = "a tab indents this line; YAML indents with spaces only"
				}
				return &Diagnostic{Pos: Pos{File: file, Line: se.Token.Position.Line, Col: max(1, se.Token.Position.Column)}, Message: "YAML: " + msg}
			}
		}
	}
	msg := err.Error()
	pos := Pos{File: file, Line: 1, Col: 1}
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		pos.Line, _ = strconv.Atoi(m[1])
		msg = msg[len(m[0]):]
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	// yaml.v3 places an unknown anchor nowhere; the alias is in the text.
	if m := unknownAnchor.FindStringSubmatch(msg); m != nil {
		if at := bytes.Index(src, []byte("*"+m[1])); at >= 0 {
			pos = posAt(file, src, at)
		}
	}
	return &Diagnostic{Pos: pos, Message: "YAML: " + msg}
}

// posAt is the position of byte offset at in src.
func posAt(file string, src []byte, at int) Pos {
	lineStart := bytes.LastIndexByte(src[:at], '\n') + 1
	return Pos{File: file, Line: 1 + bytes.Count(src[:at], []byte("\n")), Col: 1 + utf8.RuneCount(src[lineStart:at])}
}
