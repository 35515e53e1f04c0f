package template

import (
	"fmt"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Parse parses src into a Template. Every problem is a *SyntaxError whose
// Offset points at the byte of src where the problem starts.
func Parse(src string) (*Template, error) {
	if err := checkLength(src); err != nil {
		return nil, err
	}
	if !strings.Contains(src, "{{") {
		return &Template{src: src, literal: true, boxed: src}, nil
	}
	// The lists are sized once: one node per tag and one for the text after
	// the last, and each path's segments; a template of a few tags holds
	// them in its own allocation.
	tags, segs := countTags(src)
	var t *Template
	if tags <= roomTags && segs <= roomSegs {
		r := &roomyTemplate{}
		t = &r.Template
		t.nodes, t.segs = r.nodes[:0], r.segs[:0]
	} else {
		t = &Template{nodes: make([]node, 0, tags+1), segs: make([]string, 0, segs)}
	}
	if err := t.parse(src); err != nil {
		return nil, err
	}
	return t, nil
}

// Parser parses templates that live and die together, such as those of one
// plan, cutting each Template and its lists from blocks it shares among
// them: a plan holds thousands of templates, and an allocation apiece was
// half of what loading a plan allocated one by one. The zero Parser is
// ready to use; a Parser is not safe for concurrent use.
type Parser struct {
	templates []Template
	nodes     []node
	segs      []string
	made      int // how many templates the blocks so far held, to size the next
}

// maxBlockTemplates is the most templates a Parser's block holds, so that a
// template kept alone keeps few of its neighbours alive; the blocks of
// nodes and segments hold four times as many.
const maxBlockTemplates = 256

// Parse parses src as the package's Parse does, into a Template cut from
// the parser's blocks.
func (p *Parser) Parse(src string) (*Template, error) {
	if err := checkLength(src); err != nil {
		return nil, err
	}
	if len(p.templates) == 0 {
		size := min(max(8, p.made), maxBlockTemplates)
		p.templates = make([]Template, size)
		p.made += size
	}
	t := &p.templates[0]
	p.templates = p.templates[1:]
	if !strings.Contains(src, "{{") {
		*t = Template{src: src, literal: true, boxed: src}
		return t, nil
	}
	tags, segs := countTags(src)
	t.nodes, t.segs = cut(&p.nodes, tags+1, p.made), cut(&p.segs, segs, p.made)
	if err := t.parse(src); err != nil {
		return nil, err
	}
	return t, nil
}

// cut returns an empty slice with room for n elements from the front of
// *free, its capacity n, so that appending past it copies rather than
// writing over the next cut. When *free is short of n it starts a new
// block, four elements for each template made so far up to a full block of
// templates; a list of more than a quarter of a block is made alone.
func cut[T any](free *[]T, n, made int) []T {
	if n > len(*free) {
		size := 4 * min(made, maxBlockTemplates)
		if n > size/4 {
			return make([]T, 0, n)
		}
		*free = make([]T, size)
	}
	out := (*free)[:0:n]
	*free = (*free)[n:]
	return out
}

// checkLength refuses a source too long for a node's offsets.
func checkLength(src string) error {
	if len(src) > math.MaxUint32 {
		return &SyntaxError{Offset: 0, Msg: fmt.Sprintf("a template of %d bytes is too long: the limit is 4 GiB; split the text across several values", len(src))}
	}
	return nil
}

// parse parses src, which holds a "{{", into t, whose lists are empty with
// room for the nodes and segments countTags counts.
func (t *Template) parse(src string) error {
	p := parser{src: src, nodes: t.nodes, segs: t.segs}
	if err := p.body(opener{}); err != nil {
		return err
	}
	t.src, t.nodes, t.segs = src, p.nodes, p.segs
	if first, last := &t.nodes[0], &t.nodes[len(t.nodes)-1]; len(t.nodes) == 2 && first.kind == varNode && first.tag == 0 && last.text == last.tag {
		t.spliced = true
	}
	return nil
}

// countTags counts the tags of src and the segments of their paths, as Parse
// will find them: each "{{" up to the next "}}", whose dots separate
// segments, but for a closer's, which Parse keeps none of. A malformed tag
// may count wrong, but it fails the parse.
func countTags(src string) (tags, segs int) {
	for {
		open := strings.Index(src, "{{")
		if open < 0 {
			return tags, segs
		}
		src = src[open+2:]
		end := strings.Index(src, "}}")
		if end < 0 {
			return tags, segs
		}
		tags++
		if inner := strings.TrimLeft(src[:end], " \t\n\r\v\f"); !strings.HasPrefix(inner, "/") {
			segs += 1 + strings.Count(inner, ".")
		}
		src = src[end+2:]
	}
}

// parser holds the state of one Parse call.
type parser struct {
	src      string
	pos      int      // where scanning resumes
	nodes    []node   // the flat tree, as far as it is parsed
	segs     []string // Template.segs, as far as it is parsed
	sections int      // open sections of either kind around pos
	items    int      // open sections that push an item: not inverted ones, nor those on loop variables
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
	kind     tagKind
	offset   int      // byte offset of "{{"
	text     string   // the path text as written; for closers not yet checked
	textAt   int      // byte offset of text
	pathKind pathKind // for every kind but closeTag
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

// body appends the nodes up to and including the closer of open, or the
// end of the source at the top level.
func (p *parser) body(open opener) error {
	for {
		text, segs := uint32(p.pos), uint32(len(p.segs))
		i := strings.Index(p.src[p.pos:], "{{")
		if i < 0 {
			if open.text != "" {
				return p.errorf(open.offset, "unclosed section '%s': add {{/%s}}", open.text, open.text)
			}
			p.pos = len(p.src)
			p.nodes = append(p.nodes, node{kind: textNode, text: text, tag: uint32(p.pos), segs: segs})
			return nil
		}
		t, err := p.tag(p.pos + i)
		if err != nil {
			return err
		}
		n := node{
			text:      text,
			tag:       uint32(t.offset),
			pathKind:  t.pathKind,
			inSection: p.sections > 0,
			underItem: p.items > 0,
			pathStart: uint32(t.textAt),
			pathEnd:   uint32(t.textAt + len(t.text)),
			segs:      segs,
		}
		switch t.kind {
		case closeTag:
			if open.text == "" {
				return p.errorf(t.offset, "'{{/%s}}' closes no open section: remove it, or open the section with {{#%s}}", t.text, t.text)
			}
			if t.text != open.text {
				return p.errorf(t.offset, "'{{/%s}}' does not match the open section '%s': close that section first with {{/%s}}", t.text, open.text, open.text)
			}
			// The closer's node only carries the text before it.
			p.nodes = append(p.nodes, node{kind: textNode, text: n.text, tag: n.tag, segs: segs})
			return nil
		case varTag:
			n.kind = varNode
			p.nodes = append(p.nodes, n)
		default:
			n.kind = sectionNode
			if t.kind == invertedTag {
				n.kind = invertedNode
			}
			at := len(p.nodes)
			p.nodes = append(p.nodes, n)
			pushes := t.kind == sectionTag && !t.pathKind.loopVar()
			p.sections++
			if pushes {
				p.items++
			}
			if err := p.body(opener{text: t.text, offset: t.offset}); err != nil {
				return err
			}
			p.sections--
			if pushes {
				p.items--
			}
			p.nodes[at].body = uint32(len(p.nodes) - at - 1)
		}
	}
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
		t.text, t.textAt = text, textAt
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
		t.pathKind, err = p.path(text, textAt)
		return t, err
	}
	t.text, t.textAt = content, at
	var err error
	t.pathKind, err = p.path(content, at)
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

// path checks the path text s, which starts at offset in the source,
// records its segments, and returns its kind.
func (p *parser) path(s string, offset int) (pathKind, error) {
	if s == "." {
		return dotPath, nil
	}
	firstDot := -1
	segStart := 0
	for i := 0; i < len(s); {
		// Letters, digits, '_', '-' and '$' in ASCII, which are most of
		// every path, are taken without decoding a rune.
		if c := s[i]; 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '$' {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '.':
			if i == segStart {
				return 0, p.errorf(offset+i, "empty segment in path '%s': separate keys with exactly one dot, e.g. E0.values.0", s)
			}
			if firstDot < 0 {
				firstDot = i
			}
			p.segs = append(p.segs, s[segStart:i])
			segStart = i + 1
		case r == '@':
			if i != 0 {
				return 0, p.errorf(offset+i, "'@' in path '%s': loop variables (@index, @first, @last) stand alone in their tag", s)
			}
		case r < utf8.RuneSelf && isSpace(byte(r)):
			return 0, p.errorf(offset+i, "space inside path '%s': a tag holds one path, and the template language has no functions or arguments", s)
		case r == '_' || r == '-' || r == '$' || unicode.IsLetter(r) || unicode.IsDigit(r):
		default:
			return 0, p.errorf(offset+i, "unexpected %s in path '%s': %s", describe(r, size), s, hint(r))
		}
		i += size
	}
	if segStart == len(s) {
		return 0, p.errorf(offset+len(s)-1, "empty segment in path '%s': remove the trailing dot", s)
	}
	p.segs = append(p.segs, s[segStart:])
	if s[0] == '@' {
		if firstDot >= 0 {
			return 0, p.errorf(offset, "loop variable '%s' has no fields: write {{%s}} alone", s[:firstDot], s[:firstDot])
		}
		switch s {
		case "@index":
			return indexPath, nil
		case "@first":
			return firstPath, nil
		case "@last":
			return lastPath, nil
		}
		return 0, p.errorf(offset, "unknown loop variable '%s': use @index, @first or @last", s)
	}
	if firstDot < 0 && p.items > 0 {
		return barePath, nil
	}
	return rootPath, nil
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
