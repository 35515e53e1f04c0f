package template

import (
	"fmt"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"
)

// manyTags is the count of tags past which Parse sizes its lists up front.
const manyTags = 64

// Parse parses src into a Template. Every problem is a *SyntaxError whose
// Offset points at the byte of src where the problem starts.
func Parse(src string) (*Template, error) {
	// A string of many tags has its lists sized once, so that they are not
	// copied again each time they outgrow themselves; a string of a few
	// grows them as it goes, without sizing for a worst case.
	p := parser{src: src}
	size := 0
	if tags := strings.Count(src, "{{"); tags > manyTags {
		p.refs = make([]Ref, 0, tags)
		size = 2*tags + 1 // a text node before each tag and after the last
	}
	nodes, err := p.body(opener{}, size)
	if err != nil {
		return nil, err
	}
	t := &Template{src: src, nodes: nodes, refs: p.refs, boxed: src}
	switch {
	case len(nodes) == 0 || len(nodes) == 1 && nodes[0].kind == textNode:
		t.literal = true
	case len(nodes) == 1 && nodes[0].kind == varNode:
		t.splice = &t.nodes[0].path
	}
	return t, nil
}

// parser holds the state of one Parse call.
type parser struct {
	src      string
	pos      int // where scanning resumes
	refs     []Ref
	sections int // open sections of either kind around pos
	items    int // open sections that push an item: not inverted ones, nor those on loop variables
}

// tagKind is the kind of one scanned tag.
type tagKind uint8

const (
	varTag tagKind = iota
	sectionTag
	invertedTag
	closeTag
)

// tag is one scanned "{{…}}".
type tag struct {
	kind   tagKind
	offset int    // byte offset of "{{"
	text   string // the path text as written; for closers not yet checked
	path   path   // the parsed path, for every kind but closeTag
}

// errorf builds the *SyntaxError for a problem at offset.
func (p *parser) errorf(offset int, format string, args ...any) *SyntaxError {
	return &SyntaxError{Offset: offset, Msg: fmt.Sprintf(format, args...)}
}

// opener is the section tag whose body is being parsed; the zero opener
// stands for the top level, which no path text can be mistaken for.
type opener struct {
	text   string
	offset int
}

// body parses nodes until the closer of open, or the end of the source at
// the top level.
func (p *parser) body(open opener, size int) ([]node, error) {
	nodes := make([]node, 0, size)
	for {
		i := strings.Index(p.src[p.pos:], "{{")
		if i < 0 {
			if p.pos < len(p.src) {
				nodes = append(nodes, node{kind: textNode, text: p.src[p.pos:]})
				p.pos = len(p.src)
			}
			if open.text != "" {
				return nil, p.errorf(open.offset, "unclosed section '%s': add {{/%s}}", open.text, open.text)
			}
			return nodes, nil
		}
		if i > 0 {
			nodes = append(nodes, node{kind: textNode, text: p.src[p.pos : p.pos+i]})
		}
		t, err := p.tag(p.pos + i)
		if err != nil {
			return nil, err
		}
		switch t.kind {
		case closeTag:
			if open.text == "" {
				return nil, p.errorf(t.offset, "'{{/%s}}' closes no open section: remove it, or open the section with {{#%s}}", t.text, t.text)
			}
			if t.text != open.text {
				return nil, p.errorf(t.offset, "'{{/%s}}' does not match the open section '%s': close that section first with {{/%s}}", t.text, open.text, open.text)
			}
			return nodes, nil
		case varTag:
			p.ref(t, RefVariable)
			nodes = append(nodes, node{kind: varNode, path: t.path})
		default:
			n := node{kind: sectionNode, path: t.path}
			kind := RefSection
			if t.kind == invertedTag {
				n.kind, kind = invertedNode, RefInverted
			}
			p.ref(t, kind)
			pushes := t.kind == sectionTag && !t.path.loopVar()
			p.sections++
			if pushes {
				p.items++
			}
			n.body, err = p.body(opener{text: t.text, offset: t.offset}, 0)
			if err != nil {
				return nil, err
			}
			p.sections--
			if pushes {
				p.items--
			}
			nodes = append(nodes, n)
		}
	}
}

// ref records the tag t for Refs, with the scoping flags static checks need.
func (p *parser) ref(t tag, kind RefKind) {
	k := t.path.kind
	p.refs = append(p.refs, Ref{
		Offset:    t.offset,
		Path:      t.path.segs,
		Kind:      kind,
		InSection: p.sections > 0,
		ItemRead:  k == barePath || k == dotPath && p.items > 0,
		LoopVar:   t.path.loopVar(),
	})
}

// tag scans the tag whose "{{" is at offset and leaves pos just after its
// "}}".
func (p *parser) tag(offset int) (tag, error) {
	t := tag{offset: offset}
	if strings.HasPrefix(p.src[offset:], "{{{") {
		return t, p.errorf(offset, "triple braces ({{{ … }}}) are not supported: values are never HTML-escaped, so write {{path}}")
	}
	start := offset + 2
	end := strings.Index(p.src[start:], "}}")
	if end < 0 {
		return t, p.errorf(offset, "unclosed tag '{{': add '}}' after the path")
	}
	inner := p.src[start : start+end]
	if strings.Contains(inner, "{{") {
		return t, p.errorf(offset, "unclosed tag '{{': add '}}' after the path, before the next '{{'")
	}
	p.pos = start + end + 2

	content, at := trim(inner, start)
	if content == "" {
		return t, p.errorf(offset, "empty tag '{{}}': put a path between the braces, e.g. {{input.name}}")
	}
	switch content[0] {
	case '!':
		return t, p.errorf(offset, "comments ({{! … }}) are not supported: the template language is logic-less")
	case '>':
		return t, p.errorf(offset, "partials ({{> … }}) are not supported: the template language is logic-less; put shared text in a step")
	case '<', '$':
		return t, p.errorf(offset, "inheritance ({{< … }}, {{$ … }}) is not supported: the template language is logic-less")
	case '&':
		return t, p.errorf(offset, "'{{&' is not supported: values are never HTML-escaped, so write {{path}}")
	case '=':
		return t, p.errorf(offset, "delimiter changes ({{= … =}}) are not supported: tags are always {{ and }}")
	case '#', '^', '/':
		sigil := content[0]
		text, textAt := trim(content[1:], at+1)
		if text == "" {
			if sigil == '/' {
				return t, p.errorf(offset, "closing tag '{{/}}' needs the path of the section it closes, e.g. {{/E0.values}}")
			}
			return t, p.errorf(offset, "section tag '{{%c}}' needs a path, e.g. {{%cE0.values}}…{{/E0.values}}", sigil, sigil)
		}
		t.text = text
		if sigil == '/' {
			// A closer only has to match its opener's text; the opener's path
			// was checked already, and a malformed closer cannot match it.
			t.kind = closeTag
			return t, nil
		}
		t.kind = sectionTag
		if sigil == '^' {
			t.kind = invertedTag
		}
		var err error
		t.path, err = p.path(text, textAt)
		return t, err
	}
	t.text = content
	var err error
	t.path, err = p.path(content, at)
	return t, err
}

// trim drops ASCII whitespace from both ends of s, which starts at offset
// in the source, and returns the rest with its own offset.
func trim(s string, offset int) (string, int) {
	i, j := 0, len(s)
	for i < j && isSpace(s[i]) {
		i++
	}
	for j > i && isSpace(s[j-1]) {
		j--
	}
	return s[i:j], offset + i
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// path parses the path text s, which starts at offset in the source.
func (p *parser) path(s string, offset int) (path, error) {
	if s == "." {
		return path{kind: dotPath, text: s}, nil
	}
	var segs []string
	segStart := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '.':
			if i == segStart {
				return path{}, p.errorf(offset+i, "empty segment in path '%s': separate keys with exactly one dot, e.g. E0.values.0", s)
			}
			segs = append(segs, s[segStart:i])
			segStart = i + 1
		case r == '@':
			if i != 0 {
				return path{}, p.errorf(offset+i, "'@' in path '%s': loop variables (@index, @first, @last) stand alone in their tag", s)
			}
		case r < utf8.RuneSelf && isSpace(byte(r)):
			return path{}, p.errorf(offset+i, "space inside path '%s': a tag holds one path, and the template language has no functions or arguments", s)
		case r == '_' || r == '-' || r == '$' || unicode.IsLetter(r) || unicode.IsDigit(r):
		default:
			return path{}, p.errorf(offset+i, "unexpected %s in path '%s': %s", describe(r, size), s, hint(r))
		}
		i += size
	}
	if segStart == len(s) {
		return path{}, p.errorf(offset+len(s)-1, "empty segment in path '%s': remove the trailing dot", s)
	}
	segs = append(segs, s[segStart:])

	pt := path{kind: rootPath, text: s, segs: segs}
	if s[0] == '@' {
		if len(segs) > 1 {
			return path{}, p.errorf(offset, "loop variable '%s' has no fields: write {{%s}} alone", segs[0], segs[0])
		}
		switch s {
		case "@index":
			pt.kind = indexPath
		case "@first":
			pt.kind = firstPath
		case "@last":
			pt.kind = lastPath
		default:
			return path{}, p.errorf(offset, "unknown loop variable '%s': use @index, @first or @last", s)
		}
		return pt, nil
	}
	if len(segs) == 1 && p.items > 0 {
		pt.kind = barePath
	}
	pt.index = make([]int, len(segs))
	for i, seg := range segs {
		pt.index[i] = listIndex(seg)
	}
	return pt, nil
}

// listIndex reads an all-digit segment as a list index. It returns -1 for
// any other segment, and saturates huge numbers so that they are simply out
// of range.
func listIndex(seg string) int {
	n := 0
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		if c < '0' || c > '9' {
			return -1
		}
		if n > (math.MaxInt-9)/10 {
			n = math.MaxInt
			continue
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// describe names a character for a message, spelling out the ones that
// would be confusing when quoted.
func describe(r rune, size int) string {
	if r == utf8.RuneError && size == 1 {
		return "invalid UTF-8 byte"
	}
	return fmt.Sprintf("character %q", r)
}

// hint says how to write what the author probably meant by r.
func hint(r rune) string {
	switch r {
	case '[', ']':
		return "index lists with a dot, e.g. E0.values.0"
	case '|':
		return "filters are not supported: the template language is logic-less"
	case '(', ')', ',':
		return "functions are not supported: the template language is logic-less"
	case '"', '\'', '`':
		return "literals are not supported: a tag holds one path"
	case '{', '}':
		return "a tag is one path between {{ and }}"
	}
	return "path segments are letters, digits, '_', '-' and '$', separated by dots"
}
