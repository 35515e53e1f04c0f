package yamlpos

import (
	"math"
	"strings"
	"unicode/utf8"
)

// yaml.v3 reads a plan at some 10 MB/s, most of a 1,000-step plan's load.
// Plans use a small part of YAML, so fastParse reads that part by hand,
// building the Nodes of the very tree yaml.v3 would (kinds, tags, styles,
// values, lines and columns; comments, which nothing reads, are not kept),
// and gives up on
// anything else: a text it refuses goes to yaml.v3, which reads it as it
// always has, and reports its errors. Giving up is always safe; accepting
// is right only where yaml.v3 accepts the same text into the same tree,
// which FuzzFastParse and TestFastParseMatchesYAMLv3 check.
//
// The part it reads: block mappings whose keys are one-line plain or quoted
// scalars; block sequences, compact ("- key: value") and indentless ones;
// flow mappings and sequences over one or several lines; one-line plain,
// single- and double-quoted scalars; literal and folded block scalars with
// chomping; comments. It gives up on anchors, aliases, tags, directives,
// document markers, complex keys, empty values, scalars over several lines
// outside block scalars, tabs, carriage returns and control characters.

// fastParse reads src, one YAML document in the part of YAML described
// above, and returns its top value; ok is false when the text is not in
// that part.
func fastParse(src string) (root *Node, ok bool) {
	return new(fastParser).parse(src)
}

// parse reads src as fastParse says, with a reader that has read nothing
// yet (a new one, or one released).
func (p *fastParser) parse(src string) (root *Node, ok bool) {
	if len(src) > math.MaxInt32 || !fastCharsOK(src) { // a Node's place is two int32s
		return nil, false
	}
	p.src, p.line, p.col = src, 1, 1
	indent, more := p.nextContentLine()
	if !more {
		return nil, false // empty or only comments: yaml.v3 says what that is
	}
	p.pos += indent
	switch c := p.src[p.pos]; {
	case c == '[' || c == '{':
		root = p.flowCollection()
		if root == nil || !p.finishLine() {
			return nil, false
		}
	case p.blockEntryAt(p.pos):
		root = p.blockSequence(indent, false)
	default:
		root = p.blockMapping(indent)
	}
	if root == nil {
		return nil, false
	}
	// Anything after the top value but comments is more than one value.
	if _, more := p.nextContentLine(); more {
		return nil, false
	}
	return root, true
}

// fastCharsOK says whether src holds only what fastParse reads: valid
// UTF-8 of the characters yaml.v3 calls printable, without tabs, carriage
// returns, byte order marks or the line breaks YAML knows besides '\n';
// and no line that starts with a directive or a document marker.
func fastCharsOK(src string) bool {
	for i := 0; i < len(src); i++ { // i is at a line's start
		if c := src[i]; c == '%' || ((c == '-' || c == '.') && len(src) >= i+3 && src[i+1] == c && src[i+2] == c && (len(src) == i+3 || src[i+3] == ' ' || src[i+3] == '\n')) {
			return false
		}
		// The rest of the line, printable ASCII taken a byte at a time
		// without decoding: nearly all of a plan is.
		for ; i < len(src) && src[i] != '\n'; i++ {
			c := src[i]
			if c >= 0x20 && c <= 0x7E {
				continue
			}
			if c < utf8.RuneSelf {
				return false
			}
			r, size := utf8.DecodeRuneInString(src[i:])
			if r == utf8.RuneError || r < 0xA0 || r == 0x2028 || r == 0x2029 || r == 0xFEFF || r == 0xFFFE || r == 0xFFFF {
				return false
			}
			i += size - 1
		}
	}
	return true
}

// fastParser is a position in the text being read. Columns count
// characters from 1, as yaml.v3's do; indentation, made of spaces alone,
// counts bytes from 0.
type fastParser struct {
	src       string // the text; values are slices of it
	pos       int    // the byte being read
	line      int    // the line of pos, from 1
	lineStart int    // where pos's line starts
	// colPos and col are the last column worked out, kept so that placing
	// the values of a long line costs one pass over it, not one each.
	colPos, col int
	depth       int // how many collections pos is in
	// open holds the children read so far of the collections being read,
	// innermost last: a collection's list is made once, its length known,
	// when it closes, rather than grown as its children come.
	open []*Node
	// nodes, lists and headers are the rest of the blocks that nodes, the
	// collections' lists of children and the headers of those lists are
	// cut from; the blocks come from nodeBlocks, listBlocks and
	// headerBlocks.
	nodes        []Node
	lists        []*Node
	headers      [][]*Node
	blockText    []byte // the text of the block scalar being read
	nodeBlocks   blocks[Node]
	listBlocks   blocks[*Node]
	headerBlocks blocks[[]*Node]
}

// The sizes of new blocks, given how many elements the blocks so far
// hold.
func nodeBlockSize(held int) int   { return min(max(8, held), 256) }
func listBlockSize(held int) int   { return min(max(32, held), 1024) }
func headerBlockSize(held int) int { return min(max(8, held), 256) }

// maxSlabList is the longest list of children cut from a shared block.
const maxSlabList = 64

// children returns the children of the collection whose first child went
// to p.open at from, in a list of its own behind a header, both cut from
// slabs, and takes them off p.open.
func (p *fastParser) children(from int) *[]*Node {
	n := len(p.open) - from
	if n == 0 {
		return nil
	}
	var list []*Node
	switch {
	case n > maxSlabList:
		// A long list takes a block of its own, rather than leaving the
		// rest of the current one unused.
		list = p.listBlocks.next(n, func(int) int { return n })[:n:n]
	default:
		if n > len(p.lists) {
			p.lists = p.listBlocks.next(n, listBlockSize)
		}
		// The capacity is the length, so that appending to a list copies
		// it rather than writing over the next one.
		list, p.lists = p.lists[:n:n], p.lists[n:]
	}
	copy(list, p.open[from:])
	p.open = p.open[:from]
	if len(p.headers) == 0 {
		p.headers = p.headerBlocks.next(1, headerBlockSize)
	}
	header := &p.headers[0]
	p.headers = p.headers[1:]
	*header = list
	return header
}

// fastMaxDepth is how deeply the collections of a text the fast reader
// takes may nest: half of MaxDepth, so that a text it takes is well within
// the limit and needs no depth scan, whose count errs a level or two
// deep.
const fastMaxDepth = MaxDepth / 2

// enter notes that a collection opens at pos, and says whether the reader
// takes one that deep. leave notes that it closed.
func (p *fastParser) enter() bool {
	p.depth++
	return p.depth <= fastMaxDepth
}

func (p *fastParser) leave() { p.depth-- }

// node makes a node of the given kind at byte offset at of the current
// line.
func (p *fastParser) node(kind Kind, tag Tag, value string, style Style, at int) *Node {
	if len(p.nodes) == 0 {
		p.nodes = p.nodeBlocks.next(1, nodeBlockSize)
	}
	n := &p.nodes[0]
	p.nodes = p.nodes[1:]
	*n = Node{Kind: kind, Tag: tag, Value: value, Style: style, Line: int32(p.line), Column: int32(p.column(at))}
	return n
}

// column is the column of byte offset at of the current line.
func (p *fastParser) column(at int) int {
	if p.colPos < p.lineStart || p.colPos > at {
		p.colPos, p.col = p.lineStart, 1
	}
	for i := p.colPos; i < at; i++ {
		if p.src[i]&0xC0 != 0x80 {
			p.col++
		}
	}
	p.colPos = at
	return p.col
}

// newLine moves pos to the start of the line after the '\n' at pos.
func (p *fastParser) newLine() {
	p.pos++
	p.line++
	p.lineStart = p.pos
}

// atEOL says whether pos is at the end of a line or of the text.
func (p *fastParser) atEOL() bool { return p.pos == len(p.src) || p.src[p.pos] == '\n' }

// blankAt says whether offset i is a space, a line's end or the text's
// end: what must follow an indicator for it to be one.
func (p *fastParser) blankAt(i int) bool {
	return i >= len(p.src) || p.src[i] == ' ' || p.src[i] == '\n'
}

// blockEntryAt says whether a block sequence entry ("- ") starts at i.
func (p *fastParser) blockEntryAt(i int) bool { return p.src[i] == '-' && p.blankAt(i+1) }

// skipSpaces moves pos past spaces on the line.
func (p *fastParser) skipSpaces() {
	for p.pos < len(p.src) && p.src[p.pos] == ' ' {
		p.pos++
	}
}

// nextContentLine moves pos, which is at a line's start, to the start of
// the next line holding more than spaces and a comment, and returns its
// indentation; more is false at the end of the text.
func (p *fastParser) nextContentLine() (indent int, more bool) {
	for p.pos < len(p.src) {
		p.skipSpaces()
		switch {
		case p.pos == len(p.src):
		case p.src[p.pos] == '#':
			for !p.atEOL() {
				p.pos++
			}
			if p.pos < len(p.src) {
				p.newLine()
			}
		case p.src[p.pos] == '\n':
			p.newLine()
		default:
			indent = p.pos - p.lineStart
			p.pos = p.lineStart
			return indent, true
		}
	}
	return 0, false
}

// finishLine moves pos past what may follow a value on its line (spaces
// and a comment) to the next line's start. It is false when something
// else follows.
func (p *fastParser) finishLine() bool {
	p.skipSpaces()
	if p.pos < len(p.src) && p.src[p.pos] == '#' {
		if p.pos > p.lineStart && p.src[p.pos-1] != ' ' {
			return false // yaml.v3 reads it as a comment; YAML does not
		}
		for !p.atEOL() {
			p.pos++
		}
	}
	if !p.atEOL() {
		return false
	}
	if p.pos < len(p.src) {
		p.newLine()
	}
	return true
}

// maxKeyBytes bounds a key and what follows it up to its ':'. yaml.v3
// looks no further than 1,024 characters for the ':' of a key.
const maxKeyBytes = 1000

// blockMapping reads the block mapping whose first key is at pos, its keys
// at indentation indent. It returns with pos at the start of the first
// line after the mapping.
func (p *fastParser) blockMapping(indent int) *Node {
	defer p.leave()
	if !p.enter() {
		return nil
	}
	m := p.node(MappingNode, MapTag, "", 0, p.pos)
	from := len(p.open)
	for {
		key := p.blockKey()
		if key == nil || p.pos == len(p.src) || p.src[p.pos] != ':' || !p.blankAt(p.pos+1) {
			return nil
		}
		p.pos++
		value := p.blockValue(indent, true)
		if value == nil {
			return nil
		}
		p.open = append(p.open, key, value)
		next, more := p.nextContentLine()
		if !more || next < indent {
			m.content = p.children(from)
			return m
		}
		if next > indent {
			return nil
		}
		p.pos += indent
	}
}

// blockKey reads a key of a block mapping: a plain or quoted scalar on one
// line, followed on that line by its ':', at pos on return.
func (p *fastParser) blockKey() *Node {
	start := p.pos
	var key *Node
	if c := p.src[p.pos]; c == '"' || c == '\'' {
		key = p.quoted()
	} else {
		key = p.plain(false)
	}
	if key == nil {
		return nil
	}
	p.skipSpaces()
	if p.pos-start > maxKeyBytes || p.pos == len(p.src) || p.src[p.pos] != ':' {
		return nil
	}
	return key
}

// blockValue reads the value after a block mapping's ':' or a block
// sequence's '-', at pos, in a collection at indentation indent; inMapping
// says which of the two it is. It returns with pos at the start of the
// line after the value.
func (p *fastParser) blockValue(indent int, inMapping bool) *Node {
	p.skipSpaces()
	if p.atEOL() || p.src[p.pos] == '#' {
		// The value is on the lines below.
		if !p.finishLine() {
			return nil
		}
		next, more := p.nextContentLine()
		if !more {
			return nil
		}
		p.pos += next
		switch {
		case next > indent && p.blockEntryAt(p.pos):
			return p.blockSequence(next, false)
		case next > indent:
			return p.blockMapping(next)
		case next == indent && inMapping && p.blockEntryAt(p.pos):
			return p.blockSequence(next, true)
		}
		return nil // an empty value
	}
	start := p.pos
	var value *Node
	switch c := p.src[p.pos]; c {
	case '[', '{':
		value = p.flowCollection()
	case '|', '>':
		return p.blockScalar(indent)
	case '"', '\'':
		value = p.quoted()
	default:
		value = p.plain(false)
	}
	if value == nil {
		return nil
	}
	if value.Kind == ScalarNode && !inMapping {
		// "- key: value" opens a mapping in the sequence item.
		at := p.pos
		p.skipSpaces()
		if p.pos < len(p.src) && p.src[p.pos] == ':' && p.blankAt(p.pos+1) {
			p.pos = start
			return p.blockMapping(start - p.lineStart)
		}
		p.pos = at
	}
	if !p.finishLine() {
		return nil
	}
	return value
}

// blockSequence reads the block sequence whose first '-' is at pos, at
// indentation indent. An indentless one ("key:\n- a") shares the
// indentation of the mapping it is a value of, and ends at that mapping's
// next key. It returns with pos at the start of the first line after the
// sequence.
func (p *fastParser) blockSequence(indent int, indentless bool) *Node {
	defer p.leave()
	if !p.enter() {
		return nil
	}
	s := p.node(SequenceNode, SeqTag, "", 0, p.pos)
	from := len(p.open)
	for {
		p.pos++ // the '-'
		item := p.blockValue(indent, false)
		if item == nil {
			return nil
		}
		p.open = append(p.open, item)
		next, more := p.nextContentLine()
		if !more || next < indent {
			s.content = p.children(from)
			return s
		}
		if next > indent {
			return nil
		}
		if !p.blockEntryAt(p.pos + next) {
			if indentless {
				s.content = p.children(from)
				return s
			}
			return nil
		}
		p.pos += next
	}
}

// blockScalar reads a literal or folded block scalar whose indicator is at
// pos, in a collection at indentation parentIndent, as yaml.v3's scanner
// does (yaml_parser_scan_block_scalar). It returns with pos at the start of
// the first line after the scalar.
func (p *fastParser) blockScalar(parentIndent int) *Node {
	literal := p.src[p.pos] == '|'
	style := FoldedStyle
	if literal {
		style = LiteralStyle
	}
	n := p.node(ScalarNode, StrTag, "", style, p.pos)
	p.pos++
	chomping := 0
	switch {
	case p.pos < len(p.src) && p.src[p.pos] == '+':
		chomping = 1
		p.pos++
	case p.pos < len(p.src) && p.src[p.pos] == '-':
		chomping = -1
		p.pos++
	}
	// An indentation indicator, or a comment not set off by a space, is
	// left to yaml.v3.
	if !p.finishLine() || p.pos == len(p.src) {
		return nil
	}
	// The value is written to the reader's buffer, kept from one block
	// scalar to the next, and copied out once, at its length: grown in a
	// builder of its own, it took a few allocations a prompt.
	value := p.blockText[:0]
	var (
		indent                      int
		leadingBreak                bool // whether a line break ends the last line read
		trailingBreaks              int  // empty lines since
		leadingBlank, trailingBlank bool
		contentLines                int
	)
	// breaks reads the empty lines ahead, and the indentation of the line
	// after them, working the scalar's indentation out on its first call.
	breaks := func() {
		maxIndent := 0
		for {
			for (indent == 0 || p.pos-p.lineStart < indent) && p.pos < len(p.src) && p.src[p.pos] == ' ' {
				p.pos++
			}
			maxIndent = max(maxIndent, p.pos-p.lineStart)
			if p.pos == len(p.src) || p.src[p.pos] != '\n' {
				break
			}
			p.newLine()
			trailingBreaks++
		}
		if indent == 0 {
			indent = max(maxIndent, parentIndent+1, 1)
		}
	}
	breaks()
	for p.pos-p.lineStart == indent && p.pos < len(p.src) {
		trailingBlank = p.src[p.pos] == ' '
		if !literal && leadingBreak && !leadingBlank && !trailingBlank {
			if trailingBreaks == 0 {
				value = append(value, ' ')
			}
		} else if leadingBreak {
			value = append(value, '\n')
		}
		leadingBreak = false
		for ; trailingBreaks > 0; trailingBreaks-- {
			value = append(value, '\n')
		}
		leadingBlank = p.src[p.pos] == ' '
		start := p.pos
		for !p.atEOL() {
			p.pos++
		}
		value = append(value, p.src[start:p.pos]...)
		contentLines++
		if p.pos < len(p.src) {
			p.newLine()
			leadingBreak = true
		}
		breaks()
	}
	if contentLines == 0 {
		return nil
	}
	if chomping != -1 && leadingBreak {
		value = append(value, '\n')
	}
	if chomping == 1 {
		for ; trailingBreaks > 0; trailingBreaks-- {
			value = append(value, '\n')
		}
	}
	n.Value = string(value)
	p.blockText = value
	if p.pos < len(p.src) {
		p.pos = p.lineStart // the scalar ended at a line less indented
	}
	return n
}

// flowCollection reads the flow mapping or sequence that opens at pos, over
// as many lines as it takes. It returns with pos after its closing
// bracket.
func (p *fastParser) flowCollection() *Node {
	defer p.leave()
	if !p.enter() {
		return nil
	}
	isMapping := p.src[p.pos] == '{'
	kind, tag, closing := SequenceNode, SeqTag, byte(']')
	if isMapping {
		kind, tag, closing = MappingNode, MapTag, '}'
	}
	n := p.node(kind, tag, "", FlowStyle, p.pos)
	from := len(p.open)
	p.pos++
	for {
		if !p.flowSpace() {
			return nil
		}
		if p.src[p.pos] == closing {
			break
		}
		var value *Node
		if isMapping {
			key, hasValue := p.flowKey()
			if key == nil || !p.flowSpace() {
				return nil
			}
			p.open = append(p.open, key)
			if !hasValue {
				// A key alone ("{a, b: 1}") has a null value, placed
				// where the entry ends.
				value = p.node(ScalarNode, NullTag, "", 0, p.pos)
			}
		}
		if value == nil {
			value = p.flowValue()
			if value == nil || !p.flowSpace() {
				return nil
			}
		}
		p.open = append(p.open, value)
		if p.src[p.pos] == closing {
			break
		}
		if p.src[p.pos] != ',' {
			return nil
		}
		p.pos++
	}
	p.pos++
	n.content = p.children(from)
	return n
}

// flowKey reads the key of a flow mapping entry at pos: a plain or quoted
// scalar and, on its line, the ':' that ends it, when it has a value.
// hasValue is false for a key alone, which the entry's ',' or the
// mapping's '}' follows.
func (p *fastParser) flowKey() (key *Node, hasValue bool) {
	start := p.pos
	if c := p.src[p.pos]; c == '"' || c == '\'' {
		key = p.quoted()
	} else {
		key = p.plain(true)
	}
	if key == nil {
		return nil, false
	}
	p.skipSpaces()
	if p.pos < len(p.src) && p.src[p.pos] == ':' {
		if p.pos-start > maxKeyBytes {
			return nil, false
		}
		p.pos++
		return key, true
	}
	if !p.flowSpace() || p.src[p.pos] != ',' && p.src[p.pos] != '}' {
		return nil, false
	}
	return key, false
}

// flowValue reads a value in a flow collection at pos: a collection or a
// scalar.
func (p *fastParser) flowValue() *Node {
	switch p.src[p.pos] {
	case '[', '{':
		return p.flowCollection()
	case '"', '\'':
		return p.quoted()
	}
	return p.plain(true)
}

// flowSpace moves pos past spaces, line breaks and comments inside a flow
// collection. It is false at the end of the text, which leaves the
// collection open, and at a comment not set off by a space.
func (p *fastParser) flowSpace() bool {
	for p.pos < len(p.src) {
		switch p.src[p.pos] {
		case ' ':
			p.pos++
		case '\n':
			p.newLine()
		case '#':
			if p.pos > p.lineStart && p.src[p.pos-1] != ' ' {
				return false
			}
			for !p.atEOL() {
				p.pos++
			}
		default:
			return true
		}
	}
	return false
}

// plain reads a plain scalar at pos, in a flow collection or not, as
// yaml.v3's scanner does (yaml_parser_scan_plain_scalar), but on one line:
// one that goes on to the next is left to yaml.v3. It returns with pos
// right after the scalar's last character.
func (p *fastParser) plain(inFlow bool) *Node {
	start := p.pos
	switch c := p.src[start]; c {
	case ' ', '\n', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
		return nil
	case '-':
		if p.blankAt(start + 1) {
			return nil
		}
	}
	end := start
	for {
		for !p.blankAt(p.pos) {
			c := p.src[p.pos]
			if c == ':' && p.blankAt(p.pos+1) || inFlow && (c == ',' || c == '?' || c == '[' || c == ']' || c == '{' || c == '}') {
				break
			}
			p.pos++
			end = p.pos
		}
		if p.pos == len(p.src) || p.src[p.pos] != ' ' {
			break
		}
		p.skipSpaces()
		if p.atEOL() || p.src[p.pos] == '#' {
			break
		}
	}
	if p.atEOL() && p.pos < len(p.src) && !p.plainEndsAtLineEnd(inFlow) {
		return nil
	}
	p.pos = end
	value := p.src[start:end]
	return p.node(ScalarNode, plainTag(value), value, 0, start)
}

// plainEndsAtLineEnd says, for a plain scalar that reaches the end of its
// line at pos, whether it ends there. Out of flow collections the block
// structure decides: a more indented line after it is refused where the
// structure is read. In one, the scalar goes on unless what comes next (a
// comment, or an indicator) ends it.
func (p *fastParser) plainEndsAtLineEnd(inFlow bool) bool {
	if !inFlow {
		return true
	}
	for i := p.pos; i < len(p.src); i++ {
		switch c := p.src[i]; c {
		case ' ', '\n':
		case '#', ',', '?', '[', ']', '{', '}':
			return true
		case ':':
			return p.blankAt(i + 1)
		default:
			return false
		}
	}
	return true
}

// quoted reads a single- or double-quoted scalar at pos that closes on its
// line. It returns with pos after the closing quote.
func (p *fastParser) quoted() *Node {
	start := p.pos
	quote := p.src[start]
	style := DoubleQuotedStyle
	if quote == '\'' {
		style = SingleQuotedStyle
	}
	p.pos++
	// Most quoted scalars hold no escape: their value is a slice of the
	// text, and a builder is started only at the first escape.
	var value strings.Builder
	escaped := false
	from := p.pos // the start of the text not yet written to value
	for {
		if p.atEOL() {
			return nil
		}
		c := p.src[p.pos]
		switch {
		case c == quote && quote == '\'' && p.pos+1 < len(p.src) && p.src[p.pos+1] == '\'':
			value.WriteString(p.src[from : p.pos+1])
			escaped = true
			p.pos += 2
			from = p.pos
			continue
		case c == quote:
		case c == '\\' && quote == '"':
			value.WriteString(p.src[from:p.pos])
			escaped = true
			if !p.escape(&value) {
				return nil
			}
			from = p.pos
			continue
		default:
			p.pos++
			continue
		}
		break
	}
	text := p.src[from:p.pos]
	if escaped {
		value.WriteString(text)
		text = value.String()
	}
	p.pos++
	return p.node(ScalarNode, StrTag, text, style, start)
}

// simpleEscapes are the escapes of double-quoted scalars that stand for
// one character, and hexEscapes those that give its code, with how many
// hexadecimal digits: yaml.v3's (yaml_parser_scan_flow_scalar).
var (
	simpleEscapes = map[byte]string{
		'0': "\x00", 'a': "\x07", 'b': "\x08", 't': "\t", 'n': "\n", 'v': "\x0B", 'f': "\x0C", 'r': "\r", 'e': "\x1B",
		' ': " ", '"': `"`, '\'': "'", '\\': `\`, 'N': "\u0085", '_': "\u00A0", 'L': "\u2028", 'P': "\u2029",
	}
	hexEscapes = map[byte]int{'x': 2, 'u': 4, 'U': 8}
)

// escape writes the character that the escape at pos (a backslash) in a
// double-quoted scalar stands for, and moves pos past the escape. It is
// false for an escape yaml.v3 does not know, and for a line continuation.
func (p *fastParser) escape(value *strings.Builder) bool {
	if p.pos+1 >= len(p.src) {
		return false
	}
	c := p.src[p.pos+1]
	if s, ok := simpleEscapes[c]; ok {
		value.WriteString(s)
		p.pos += 2
		return true
	}
	digits := hexEscapes[c]
	if digits == 0 || p.pos+2+digits > len(p.src) {
		return false
	}
	code := 0
	for _, h := range []byte(p.src[p.pos+2 : p.pos+2+digits]) {
		switch {
		case h >= '0' && h <= '9':
			code = code<<4 + int(h-'0')
		case h >= 'a' && h <= 'f':
			code = code<<4 + int(h-'a'+10)
		case h >= 'A' && h <= 'F':
			code = code<<4 + int(h-'A'+10)
		default:
			return false
		}
	}
	if code >= 0xD800 && code <= 0xDFFF || code > 0x10FFFF {
		return false
	}
	value.WriteRune(rune(code))
	p.pos += 2 + digits
	return true
}
