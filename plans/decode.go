package plans

import (
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/stepwise-dev/stepwise/plans/suggest"
	"github.com/stepwise-dev/stepwise/plans/template"
	"github.com/stepwise-dev/stepwise/plans/yamlpos"
)

// decoder turns yamlpos.Nodes into plan values, reporting every shape problem
// with its position instead of stopping at the first.
type decoder struct {
	file string
	// fileName is file, which every Value of the file points to rather
	// than holding a copy of its string header.
	fileName *string
	lines    *sourceLines // the source, for placing template tags inside strings
	r        *Report
	dialect  Dialect
	// runeStarts holds, for each long line a value was placed on, the byte
	// offset of every lineStep-th character, so that placing the values of
	// a plan written on one line costs no count from the line's start each,
	// and a line of n bytes costs n/lineStep offsets rather than n.
	runeStarts map[int][]int32
	// schemas are the schemas compiled so far, by canonical JSON text: a
	// plan repeats a schema across steps (one output schema for every
	// review agent), and compiling is most of what a schema costs.
	schemas    map[string]*loadedSchema
	schemaKeys *schemaKeys
	slabs      *slabs // shared with the quiet decoders made from this one
	parts      *controlParts
	// asWritten is set on the quiet decoder that decodes a control step's
	// input as written, which takes the values of the parts its grammar
	// decoded rather than decoding them again. writtenInputs is that
	// decoder, made on the first control step and kept for the next.
	asWritten     bool
	writtenInputs *decoder
	steps         int // how many steps it decoded, for sizing the checks' sets
}

// controlParts are the values decoded, while a control step is decoded, from
// the nodes of its input: its grammar decodes its parts (a map's over, the
// inputs of its body's steps) first, and the input as written, which the
// step keeps for showing, takes their values instead of decoding the half of
// a plan that control steps hold a second time.
type controlParts struct {
	recording bool
	byNode    map[*yamlpos.Node]*Value
}

// maxKeptParts is the most parts whose map is cleared for the next control
// step rather than dropped: clearing costs what the map grew to, and one
// step of many parts must not make every later step pay for them.
const maxKeptParts = 256

// reset forgets the parts of the control step just decoded.
func (p *controlParts) reset() {
	if len(p.byNode) > maxKeptParts {
		p.byNode = nil
		return
	}
	clear(p.byNode)
}

func newDecoder(file string, src string, r *Report, dialect Dialect) *decoder {
	return &decoder{file: file, fileName: &file, lines: &sourceLines{text: src}, r: r, dialect: dialect, runeStarts: map[int][]int32{}, schemas: map[string]*loadedSchema{}, schemaKeys: &schemaKeys{}, slabs: &slabs{}, parts: &controlParts{}}
}

// quiet returns a decoder that reports to a report of its own: for reading
// a value a second time, in another shape, without reporting its problems
// twice (the report is dropped), or for sorting problems from notes before
// they are reported (see uncheckedSchema).
func (d *decoder) quiet() *decoder {
	return &decoder{file: d.file, fileName: d.fileName, lines: d.lines, r: &Report{}, dialect: d.dialect, runeStarts: d.runeStarts, schemas: d.schemas, schemaKeys: d.schemaKeys, slabs: d.slabs, parts: d.parts}
}

// asWrittenDecoder returns the quiet decoder that decodes control steps'
// inputs as written (see stepBody), its report emptied of the last one's
// problems, which are the grammar's to report.
func (d *decoder) asWrittenDecoder() *decoder {
	q := d.writtenInputs
	if q == nil {
		q = d.quiet()
		q.asWritten = true
		d.writtenInputs = q
	}
	q.r.Problems, q.r.Notes = q.r.Problems[:0], q.r.Notes[:0]
	return q
}

func (d *decoder) pos(n *yamlpos.Node) Pos {
	if n == nil {
		return Pos{File: d.file}
	}
	return nodePos(d.file, n)
}

// nodePos is the position of node n in file.
func nodePos(file string, n *yamlpos.Node) Pos {
	return Pos{File: file, Line: int(n.Line), Col: int(n.Column)}
}

// resolve follows aliases, so that anchors in plan files behave as if the
// anchored text were written out.
func resolve(n *yamlpos.Node) *yamlpos.Node {
	for n != nil && n.Kind == yamlpos.AliasNode {
		n = n.Alias()
	}
	return n
}

// kindOf names the JSON kind of a node for wrong_type messages.
func kindOf(n *yamlpos.Node) string {
	n = resolve(n)
	if n == nil {
		return "nothing"
	}
	return kindName(n.Kind, n.Tag)
}

// kindName names the JSON kind of a node of the given kind and tag, in
// either reader's tree.
func kindName(kind yamlpos.Kind, tag yamlpos.Tag) string {
	switch {
	case kind == yamlpos.MappingNode:
		return "a mapping"
	case kind == yamlpos.SequenceNode:
		return "a list"
	}
	switch tag {
	case yamlpos.NullTag:
		return "null"
	case yamlpos.BoolTag:
		return "a boolean"
	case yamlpos.IntTag, yamlpos.FloatTag:
		return "a number"
	}
	return "a string"
}

// smallMapping is the most keys a mapping may have for decoding to look
// for a repeated key without a set.
const smallMapping = 8

// value decodes any node into a Value. With templates set, strings that hold
// template tags are parsed; their syntax errors are problems at the tag.
// While a control step is decoded, the value is recorded as a part of its
// input (see controlParts).
func (d *decoder) value(n *yamlpos.Node, path string, templates bool) *Value {
	v := d.decodeValue(n, path, templates)
	if d.parts.recording && v != nil {
		d.parts.byNode[n] = v
	}
	return v
}

// decodeValue decodes a node and what it holds into a Value.
func (d *decoder) decodeValue(n *yamlpos.Node, path string, templates bool) *Value {
	if d.asWritten {
		if v, ok := d.parts.byNode[n]; ok {
			return v
		}
	}
	n = resolve(n)
	if n == nil {
		return nil
	}
	v := &d.slabs.values.take(1)[0]
	v.file, v.line, v.col = d.fileName, n.Line, n.Column
	switch n.Kind {
	case yamlpos.MappingNode:
		v.Kind = Map
		m := d.expandMerges(n, path)
		// The entries are cut in one piece, and a mapping of a few keys
		// is searched for a repeated key in order rather than through a
		// set: most mappings of a plan are small, and a set apiece is most
		// of what decoding them allocates.
		content := m.Content()
		size := len(content) / 2
		if size == 0 {
			break
		}
		entries := d.slabs.entries.take(size)[:0]
		var seen map[string]bool
		if size > smallMapping {
			seen = make(map[string]bool, size)
		}
		for i := 0; i+1 < len(content); i += 2 {
			k, val := resolve(content[i]), content[i+1]
			switch {
			case k.Kind != yamlpos.ScalarNode:
				d.r.problem(CodeWrongType, d.pos(k), path, "a key must be a string, not %s", kindOf(k))
			case seen[k.Value] || seen == nil && slices.ContainsFunc(entries, func(e Entry) bool { return e.Key == k.Value }):
				d.r.problem(CodeDuplicateField, d.pos(k), path, "key '%s' is written twice in this mapping", k.Value)
			default:
				if seen != nil {
					seen[k.Value] = true
				}
				entries = append(entries, Entry{Key: k.Value, line: k.Line, col: k.Column, Value: d.decodeValue(val, path, templates)})
			}
		}
		v.collection = &d.slabs.collections.take(1)[0]
		v.collection.entries = entries
	case yamlpos.SequenceNode:
		v.Kind = List
		content := n.Content()
		if len(content) == 0 {
			break
		}
		items := d.slabs.valueRefs.take(len(content))
		for i, c := range content {
			items[i] = d.decodeValue(c, path, templates)
		}
		v.collection = &d.slabs.collections.take(1)[0]
		v.collection.list = items
	case yamlpos.ScalarNode:
		d.scalar(n, v, path, templates)
	}
	return v
}

func (d *decoder) scalar(n *yamlpos.Node, v *Value, path string, templates bool) {
	switch n.Tag {
	case yamlpos.NullTag:
		v.Kind = Null
		return
	case yamlpos.BoolTag:
		// The forms YAML 1.2 resolves to a boolean are read here; a value
		// tagged !!bool by hand is left to yaml.v3.
		switch n.Value {
		case "true", "True", "TRUE":
			v.Kind, v.Bool = Bool, true
			return
		case "false", "False", "FALSE":
			v.Kind, v.Bool = Bool, false
			return
		}
		var b bool
		if n.Decode(&b) == nil {
			v.Kind, v.Bool = Bool, b
			return
		}
	case yamlpos.IntTag:
		if plainDecimal(n.Value) {
			v.Kind, v.String = Number, n.Value
			return
		}
		var i int64
		if n.Decode(&i) == nil {
			v.Kind, v.String = Number, strconv.FormatInt(i, 10)
			return
		}
		var u uint64
		if n.Decode(&u) == nil {
			v.Kind, v.String = Number, strconv.FormatUint(u, 10)
			return
		}
	case yamlpos.FloatTag:
		var f float64
		if n.Decode(&f) == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
			v.Kind, v.String = Number, strconv.FormatFloat(f, 'g', -1, 64)
			return
		}
	}
	v.Kind, v.String = String, n.Value
	if templates && strings.Contains(n.Value, "{{") {
		v.templated = &d.slabs.templated.take(1)[0]
		layout := d.layout(n)
		if len(n.Value) >= indexedLength {
			if layout.placing == nil {
				layout.placing = &d.slabs.placings.take(1)[0]
			}
			layout.placing.index = newRuneIndex(n.Value)
		}
		v.templated.layout = layout
		t, err := d.slabs.templates.Parse(n.Value)
		if err != nil {
			offset := 0
			if se, ok := err.(*template.SyntaxError); ok {
				offset = se.Offset
			}
			d.r.problem(CodeTemplateSyntax, v.PosAt(offset), path, "%v", err)
			return
		}
		if !t.IsLiteral() {
			v.templated.template = t
		}
	}
}

// plainDecimal reports whether s is an integer written as strconv writes
// an int64 (no sign but '-', no leading zero, no '_', short enough not to
// overflow), so that it is its own JSON number.
func plainDecimal(s string) bool {
	digits := strings.TrimPrefix(s, "-")
	if digits == "" || len(digits) > 18 || digits[0] == '0' && (len(digits) > 1 || len(s) > 1) {
		return false
	}
	for i := range len(digits) {
		if digits[i] < '0' || digits[i] > '9' {
			return false
		}
	}
	return true
}

// layout works out how a string scalar's characters sit in the source, so
// that a tag inside it can be placed. It checks the text against the source
// line rather than trusting the style alone: a plain or quoted scalar may
// span lines, and a quoted one may hold escapes, and then no column inside
// it can be computed from the decoded text.
func (d *decoder) layout(n *yamlpos.Node) scalarLayout {
	if n.Line < 1 || int(n.Line) > d.lines.count() || n.Column < 1 {
		return scalarLayout{}
	}
	if n.Style&yamlpos.LiteralStyle != 0 {
		return d.blockLayout(n)
	}
	rest := d.lineFrom(int(n.Line), int(n.Column))
	switch {
	case n.Style&yamlpos.SingleQuotedStyle != 0:
		if startsWith(rest, "'", strings.ReplaceAll(n.Value, "'", "''"), "'") {
			return scalarLayout{kind: layoutSingle}
		}
	case n.Style&yamlpos.DoubleQuotedStyle != 0:
		if startsWith(rest, `"`, n.Value, `"`) {
			return scalarLayout{kind: layoutDouble}
		}
	case n.Style == 0:
		if strings.HasPrefix(rest, n.Value) {
			return scalarLayout{kind: layoutPlain}
		}
	}
	p := &d.slabs.placings.take(1)[0]
	p.tags = d.findTags(n, strings.Count(n.Value, "{{"))
	return scalarLayout{placing: p}
}

// startsWith reports whether s starts with open, text and closing in turn,
// without joining them: text may be megabytes long.
func startsWith(s, open, text, closing string) bool {
	if !strings.HasPrefix(s, open) {
		return false
	}
	s = s[len(open):]
	return strings.HasPrefix(s, text) && strings.HasPrefix(s[len(text):], closing)
}

// findTags places the first count "{{" of the file from where node n
// starts, for a string whose characters cannot be placed one by one.
func (d *decoder) findTags(n *yamlpos.Node, count int) []linePos {
	tags := make([]linePos, 0, count)
	first, firstCol := int(n.Line), int(n.Column)
	for line := first; line <= d.lines.count() && len(tags) < count; line++ {
		text, col := d.lines.line(line), 1
		if line == first {
			text, col = d.lineFrom(line, firstCol), firstCol
		}
		for len(tags) < count {
			i := strings.Index(text, "{{")
			if i < 0 {
				break
			}
			col += utf8.RuneCountInString(text[:i])
			tags = append(tags, linePos{line: int32(line), col: int32(col)})
			text, col = text[i+2:], col+2
		}
	}
	return tags
}

// blockLayout measures a literal block's indentation on its first non-empty
// line, which starts on the line after the indicator. It is measured rather
// than taken from the first line's leading spaces because an indentation
// indicator (|2) can make some of those spaces part of the text.
func (d *decoder) blockLayout(n *yamlpos.Node) scalarLayout {
	rest := n.Value
	for i := 0; rest != ""; i++ {
		var l string
		l, rest, _ = strings.Cut(rest, "\n")
		if l == "" {
			continue
		}
		src := int(n.Line) + i // 0-based index of the source line holding text line i
		if src >= d.lines.count() {
			break
		}
		line := d.lines.line(src + 1)
		if !strings.HasSuffix(line, l) {
			break
		}
		return scalarLayout{kind: layoutBlock, indent: int32(utf8.RuneCountInString(line) - utf8.RuneCountInString(l))}
	}
	return scalarLayout{}
}

// sourceLines is the lines of a file, indexed on first use: only a string
// with a template tag is placed against its line, and a file without one
// should not pay for splitting its text.
type sourceLines struct {
	text   string
	starts []int // where each line of text starts; nil until indexed
}

// count is the number of lines, the last one after the last '\n' included.
func (l *sourceLines) count() int {
	if l.starts == nil {
		// IndexByte scans a word or more at a time, where a loop over the
		// bytes took a twentieth of a large plan's load.
		l.starts = make([]int, 1, strings.Count(l.text, "\n")+1)
		for at := 0; ; {
			i := strings.IndexByte(l.text[at:], '\n')
			if i < 0 {
				break
			}
			at += i + 1
			l.starts = append(l.starts, at)
		}
	}
	return len(l.starts)
}

// line is line n (1-based, at most count) without its line break and '\r'.
func (l *sourceLines) line(n int) string {
	last := n == l.count()
	end := len(l.text)
	if !last {
		end = l.starts[n] - 1
	}
	return strings.TrimSuffix(l.text[l.starts[n-1]:end], "\r")
}

// longLine is the length past which lineFrom indexes a line's characters
// rather than counting them each time.
const longLine = 512

// lineStep is how many characters apart the offsets of a long line's index
// are: lineFrom counts at most this many from the nearest one.
const lineStep = 64

// lineFrom is line n of the file (1-based, without its \r) from column col
// (1-based, in characters) on.
func (d *decoder) lineFrom(n, col int) string {
	text := d.lines.line(n)
	if len(text) < longLine {
		return yamlpos.SkipRunes(text, col-1)
	}
	starts, ok := d.runeStarts[n]
	if !ok {
		starts = make([]int32, 0, len(text)/lineStep+1)
		runes := 0
		for i := range text {
			if runes%lineStep == 0 {
				starts = append(starts, int32(i))
			}
			runes++
		}
		d.runeStarts[n] = starts
	}
	k := (col - 1) / lineStep
	if k >= len(starts) {
		return ""
	}
	return yamlpos.SkipRunes(text[starts[k]:], (col-1)%lineStep)
}

// expandMerges reports the merge keys of a mapping that do not merge a
// mapping, and returns the mapping with its merges expanded.
func (d *decoder) expandMerges(n *yamlpos.Node, path string) *yamlpos.Node {
	m, bad := expandMerges(n)
	for _, b := range bad {
		d.r.problem(CodeWrongType, d.pos(b), path, "'<<' merges mappings (or a list of them), not %s", kindOf(b))
	}
	return m
}

// expandMerges returns mapping n with its merge keys (<<: *base, or
// <<: [*a, *b]) replaced by the keys they bring, as YAML defines them: a
// key written in the mapping wins over a merged one wherever it is written,
// and an earlier source wins over a later one. The merged keys follow the
// written ones. bad lists the merge values that are not mappings. n itself
// is not changed: an anchored mapping may be merged in many places.
func expandMerges(n *yamlpos.Node) (merged *yamlpos.Node, bad []*yamlpos.Node) {
	content := n.Content()
	hasMerge := false
	for i := 0; i+1 < len(content); i += 2 {
		if resolve(content[i]).Tag == yamlpos.MergeTag {
			hasMerge = true
		}
	}
	if !hasMerge {
		return n, nil
	}
	var out []*yamlpos.Node
	present := map[string]bool{}
	for i := 0; i+1 < len(content); i += 2 {
		if k := resolve(content[i]); k.Tag != yamlpos.MergeTag {
			out = append(out, content[i], content[i+1])
			present[k.Value] = true
		}
	}
	for i := 0; i+1 < len(content); i += 2 {
		if resolve(content[i]).Tag != yamlpos.MergeTag {
			continue
		}
		sources := []*yamlpos.Node{resolve(content[i+1])}
		if sources[0].Kind == yamlpos.SequenceNode {
			sources = nil
			for _, c := range resolve(content[i+1]).Content() {
				sources = append(sources, resolve(c))
			}
		}
		for _, src := range sources {
			if src.Kind != yamlpos.MappingNode {
				bad = append(bad, src)
				continue
			}
			srcMerged, srcBad := expandMerges(src)
			bad = append(bad, srcBad...)
			srcContent := srcMerged.Content()
			for j := 0; j+1 < len(srcContent); j += 2 {
				if k := resolve(srcContent[j]); !present[k.Value] {
					present[k.Value] = true
					out = append(out, srcContent[j], srcContent[j+1])
				}
			}
		}
	}
	merged = new(yamlpos.Node)
	*merged = *n
	merged.SetContent(out)
	return merged, bad
}

// object is a mapping being decoded against a fixed set of field names.
// Creating one reports unknown fields (with a did-you-mean), camelCase
// spellings (a note) and fields written in both spellings. It is a value
// its decoding function keeps on its stack, fields and all, since it lives
// only while that function runs: a plan's objects and their fields, cut
// from slabs, were a sixteenth of what loading it allocated.
type object struct {
	d    *decoder
	node *yamlpos.Node
	what string // "step", "the map input", ... for messages
	path string
	// fields are the fields written, by canonical snake_case name, the
	// first written of their grammar's names: a grammar has a handful, so
	// a list searched in order costs less than a map, and one no longer
	// than the largest grammar holds them all (TestObjectHoldsEveryGrammar).
	fields  [maxObjectFields]objectField
	written int
}

// maxObjectFields is the most fields of any grammar: a tool file's, which
// may hold the fields of every kind of tool.
const maxObjectFields = 20

// objectField is one field of an object: its key and value nodes.
type objectField struct {
	name       string // canonical
	key, value *yamlpos.Node
}

// field returns the field of the canonical name, or nil.
func (o *object) field(name string) *objectField {
	for i := range o.written {
		if o.fields[i].name == name {
			return &o.fields[i]
		}
	}
	return nil
}

var camelHump = regexp.MustCompile(`[A-Z]`)

// snakeCase converts a camelCase field name to its snake_case spelling.
func snakeCase(s string) string {
	return camelHump.ReplaceAllStringFunc(s, func(m string) string { return "_" + strings.ToLower(m) })
}

// object decodes node as a mapping with the given fields. ok is false,
// after reporting, when node is not a mapping. An unknown field is a
// problem.
func (d *decoder) object(node *yamlpos.Node, what, path string, fields []string) (o object, ok bool) {
	return d.decodeObject(node, what, path, fields, false)
}

// openObject decodes one of the mappings graph leaves open (a plan, a step,
// a body call, the solver, a tool file): graph ignores a field it does not
// know there, so in a graph project an unknown field is a note, while in a
// stepwise project it stays a problem, so that a typo cannot pass silently.
func (d *decoder) openObject(node *yamlpos.Node, what, path string, fields []string) (o object, ok bool) {
	return d.decodeObject(node, what, path, fields, true)
}

// unknownField reports a field that is not part of the grammar where it is
// written: a note when open and the file belongs to a graph project (see
// openObject), a problem otherwise.
func (d *decoder) unknownField(open bool, pos Pos, path, format string, args ...any) {
	if open && d.dialect == Graph {
		d.r.note(CodeUnknownField, pos, path, format+"; graph ignores it, and so does stepwise", args...)
		return
	}
	d.r.problem(CodeUnknownField, pos, path, format, args...)
}

func (d *decoder) decodeObject(node *yamlpos.Node, what, path string, fields []string, open bool) (o object, ok bool) {
	node = resolve(node)
	if node == nil || node.Kind != yamlpos.MappingNode {
		d.r.problem(CodeWrongType, d.pos(node), path, "%s must be a mapping, not %s", what, kindOf(node))
		return object{}, false
	}
	fieldsNode := d.expandMerges(node, path)
	o = object{d: d, node: node, what: what, path: path}
	content := fieldsNode.Content()
	for i := 0; i+1 < len(content); i += 2 {
		k, v := resolve(content[i]), content[i+1]
		name := k.Value
		if k.Kind != yamlpos.ScalarNode {
			d.r.problem(CodeWrongType, d.pos(k), path, "a field name must be a string, not %s", kindOf(k))
			continue
		}
		canonical := name
		if !slices.Contains(fields, name) {
			if snake := snakeCase(name); snake != name && slices.Contains(fields, snake) {
				canonical = snake
				d.r.note(CodeCamelCase, d.pos(k), path, "'%s' is spelled '%s'; the camelCase spelling loads, snake_case is the one to write", name, snake)
			} else {
				d.unknownField(open, d.pos(k), path, "unknown field '%s' in %s%s", name, what, fieldHint(name, fields))
				continue
			}
		}
		if f := o.field(canonical); f != nil {
			prev := f.key
			if prev.Value != name {
				d.r.problem(CodeDuplicateField, d.pos(k), path, "'%s' and '%s' (line %d) are two spellings of one field; keep '%s'", name, prev.Value, prev.Line, canonical)
			} else {
				d.r.problem(CodeDuplicateField, d.pos(k), path, "'%s' is already set at line %d; keep one", name, prev.Line)
			}
			continue
		}
		o.fields[o.written] = objectField{canonical, k, v}
		o.written++
	}
	return o, true
}

// fieldHint is the tail of an unknown-field message: a did-you-mean when a
// field is close, else the list of fields there are.
func fieldHint(name string, fields []string) string {
	if s := suggest.Closest(snakeCase(name), fields); s != "" {
		return "; did you mean '" + s + "'?"
	}
	return " (fields: " + strings.Join(fields, ", ") + ")"
}

func (o *object) has(name string) bool { return o.field(name) != nil }

// node returns the value node of a field, aliases resolved, or nil.
func (o *object) get(name string) *yamlpos.Node {
	if f := o.field(name); f != nil {
		return resolve(f.value)
	}
	return nil
}

// keyPos is the position of a field's key, or of the mapping when absent.
func (o *object) keyPos(name string) Pos {
	if f := o.field(name); f != nil {
		return o.d.pos(f.key)
	}
	return o.d.pos(o.node)
}

// require reports a missing field and says whether it is present.
func (o *object) require(name string) bool {
	if o.has(name) {
		return true
	}
	o.d.r.problem(CodeMissingField, o.d.pos(o.node), o.path, "%s needs '%s'", o.what, name)
	return false
}

// str decodes a string field.
func (o *object) str(name string) Field[string] {
	n := o.get(name)
	if n == nil {
		return Field[string]{}
	}
	if n.Kind != yamlpos.ScalarNode || n.Tag != yamlpos.StrTag {
		o.d.r.problem(CodeWrongType, o.d.pos(n), o.path, "'%s' must be a string, not %s", name, describeScalar(n))
		return Field[string]{Pos: o.d.pos(n)}
	}
	return Field[string]{Value: n.Value, Pos: o.d.pos(n), Set: true}
}

// wholeNumber decodes a field that must be an integer above zero, the type
// of every count and limit in the grammar.
func (o *object) wholeNumber(name string) Field[int] {
	n := o.get(name)
	if n == nil {
		return Field[int]{}
	}
	var i int
	switch {
	case n.Kind == yamlpos.ScalarNode && n.Tag == yamlpos.IntTag && plainDecimal(n.Value):
		// The form nearly every count is written in, read without
		// yaml.v3's decoder.
		i, _ = strconv.Atoi(n.Value)
	case n.Kind == yamlpos.ScalarNode && n.Tag == yamlpos.FloatTag && wholeFloat(n, &i):
	case n.Kind != yamlpos.ScalarNode || n.Tag != yamlpos.IntTag || !decodeInt(n, &i):
		what := describeScalar(n)
		if n.Tag == yamlpos.FloatTag {
			what = "'" + n.Value + "', which is not whole"
		}
		o.d.r.problem(CodeWrongType, o.d.pos(n), o.path, "'%s' must be a whole number above 0, not %s", name, what)
		return Field[int]{Pos: o.d.pos(n)}
	}
	if i < 1 {
		o.d.r.problem(CodeInvalidValue, o.d.pos(n), o.path, "'%s' must be a whole number above 0, not %d", name, i)
		return Field[int]{Pos: o.d.pos(n)}
	}
	return Field[int]{Value: i, Pos: o.d.pos(n), Set: true}
}

// wholeFloat reads a float scalar that is a whole number (10.0, 1e1: the
// same JSON number as 10) into i, and says whether it is one.
func wholeFloat(n *yamlpos.Node, i *int) bool {
	var f float64
	if n.Decode(&f) != nil || f != math.Trunc(f) || math.Abs(f) >= 1<<53 {
		return false
	}
	*i = int(f)
	return true
}

// decodeInt reads an int scalar in a form yaml.v3 reads (0x10, 1_000)
// into i, and says whether it could. The decoder's target escapes, so it
// is a variable of its own, made only for these rare forms.
func decodeInt(n *yamlpos.Node, i *int) bool {
	var decoded int
	if n.Decode(&decoded) != nil {
		return false
	}
	*i = decoded
	return true
}

// describeScalar names a value for a type error, quoting short scalars so
// the author sees what was read.
func describeScalar(n *yamlpos.Node) string {
	if n.Kind == yamlpos.ScalarNode && n.Tag != yamlpos.NullTag && len(n.Value) <= 40 {
		return kindOf(n) + " ('" + n.Value + "')"
	}
	return kindOf(n)
}

// value decodes a field as a Value, templates parsed.
func (o *object) value(name string) *Value {
	n := o.get(name)
	if n == nil {
		return nil
	}
	return o.d.value(n, o.path, true)
}

// stringValue decodes a field that must be a (template) string.
func (o *object) stringValue(name string) *Value {
	n := o.get(name)
	if n == nil {
		return nil
	}
	if n.Kind != yamlpos.ScalarNode || n.Tag != yamlpos.StrTag {
		o.d.r.problem(CodeWrongType, o.d.pos(n), o.path, "'%s' must be a string, not %s", name, describeScalar(n))
		return nil
	}
	return o.d.value(n, o.path, true)
}

// mapping decodes a field that must be a mapping of templates.
func (o *object) mapping(name string) *Value {
	n := o.get(name)
	if n == nil {
		return nil
	}
	if n.Kind != yamlpos.MappingNode {
		o.d.r.problem(CodeWrongType, o.d.pos(n), o.path, "'%s' must be a mapping, not %s", name, kindOf(n))
		return nil
	}
	return o.d.value(n, o.path, true)
}

// stringList decodes a field that must be a list of strings.
func (o *object) stringList(name string) ([]Field[string], bool) {
	n := o.get(name)
	if n == nil {
		return nil, false
	}
	if n.Kind != yamlpos.SequenceNode {
		o.d.r.problem(CodeWrongType, o.d.pos(n), o.path, "'%s' must be a list of strings, not %s", name, kindOf(n))
		return nil, false
	}
	var out []Field[string]
	if len(n.Content()) > 0 {
		out = make([]Field[string], 0, len(n.Content()))
	}
	for _, c := range n.Content() {
		c = resolve(c)
		if c.Kind != yamlpos.ScalarNode || c.Tag != yamlpos.StrTag {
			o.d.r.problem(CodeWrongType, o.d.pos(c), o.path, "'%s' must be a list of strings; this item is %s", name, describeScalar(c))
			continue
		}
		out = append(out, Field[string]{Value: c.Value, Pos: o.d.pos(c), Set: true})
	}
	return out, true
}
