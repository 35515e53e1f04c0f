package plans

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/stepwise-dev/stepwise/plans/template"
)

// Kind is the JSON kind of a Value: a byte, which with Bool takes one
// word of a Value rather than two.
type Kind uint8

// The kinds of Value.
const (
	Null Kind = iota
	Bool
	Number
	String
	List
	Map
)

func (k Kind) String() string {
	switch k {
	case Bool:
		return "a boolean"
	case Number:
		return "a number"
	case String:
		return "a string"
	case List:
		return "a list"
	case Map:
		return "a mapping"
	}
	return "null"
}

// Value is a JSON-shaped value as written in a plan file, with the position
// of every node. String values that contain template tags carry their parsed
// Template; rendering a Value against a scope gives the JSON value a step
// receives.
type Value struct {
	// file, line and col are where the value starts, read with Pos: the
	// name of its file, shared by every value of the file, and a line and
	// column in int32s as a yamlpos.Node holds them, half a Pos's size.
	file      *string
	line, col int32
	Kind      Kind
	Bool      bool
	// String is a string's text, and a number's as JSON writes it: one
	// field for both keeps a Value 16 bytes smaller, and a plan holds
	// thousands. Read it for a Number only after checking Kind.
	String string

	// collection is a list's items or a mapping's entries; nil for a
	// scalar and an empty collection. Most values are scalars, and the two
	// slices behind one pointer keep a Value 40 bytes smaller.
	collection *collection

	// templated is set for a string that holds "{{" (decoded with
	// templates), nil for any other value, which is most of them: its
	// template and layout behind one pointer keep a Value a word smaller.
	templated *templateString
}

// Pos is where the value starts in its file; the zero Pos for nil.
func (v *Value) Pos() Pos {
	switch {
	case v == nil:
		return Pos{}
	case v.file == nil:
		return Pos{Line: int(v.line), Col: int(v.col)}
	}
	return Pos{File: *v.file, Line: int(v.line), Col: int(v.col)}
}

// collection is what a list or a mapping holds.
type collection struct {
	list    []*Value
	entries []Entry // in the order written
}

// List is a list's items; nil for any other value.
func (v *Value) List() []*Value {
	if v == nil || v.collection == nil {
		return nil
	}
	return v.collection.list
}

// Map is a mapping's entries, in the order written; nil for any other
// value.
func (v *Value) Map() []Entry {
	if v == nil || v.collection == nil {
		return nil
	}
	return v.collection.entries
}

// templateString is what a string that holds "{{" carries beyond its text.
type templateString struct {
	template *template.Template // nil for a string whose tags are all literal, or do not parse
	layout   scalarLayout
}

// Template is the parsed template of a string with tags; nil for any other
// value.
func (v *Value) Template() *template.Template {
	if v == nil || v.templated == nil {
		return nil
	}
	return v.templated.template
}

// scalarLayout records how a string was written, so that a byte offset
// inside the string (a template tag) maps back to a line and column.
type scalarLayout struct {
	kind   layoutKind
	indent int32 // a literal block's indentation, in columns
	// placing is what places the characters of a long string, or of one
	// whose layout is unknown; nil for the rest, which are most template
	// strings, and which it would make three times the size.
	placing *placing
}

// placing is what PosAt reads, beyond a string's layout, to place an offset
// in a long string or in one whose layout is unknown.
type placing struct {
	// tags places each "{{" of a string whose layout is unknown (folded,
	// spanning lines, escaped), in order: the i-th "{{" of the text is the
	// i-th "{{" of the file from where the string starts, since no escape
	// or folding makes or breaks one.
	tags []linePos
	// index counts what PosAt needs at an offset of the string; nil for a
	// string shorter than indexedLength, which PosAt counts from its start.
	index *runeIndex
}

// linePos is a line and column in the value's file: a Pos without the file
// name, a quarter of its size, for strings that place a million tags.
type linePos struct {
	line, col int32
}

// layoutKind says how the characters of a string sit in the file.
type layoutKind uint8

const (
	layoutUnknown layoutKind = iota // not placeable inside: positions fall back to the start
	layoutPlain                     // one line, plain: the text as written
	layoutSingle                    // one line, single-quoted: '' stands for '
	layoutDouble                    // one line, double-quoted, without escapes
	layoutBlock                     // a literal block (|): each line after indent columns
)

// PosAt is the position of the byte at offset in a string value. It is exact
// for one-line plain and single-quoted strings, one-line double-quoted
// strings without escapes, and literal blocks. In anything else (folded
// blocks, strings that span lines, escapes) it places the offset from the
// template tag it is in or after, whose "{{" the decoder found in the file,
// and falls back to the start of the string before the first tag.
func (v *Value) PosAt(offset int) Pos {
	if v == nil || v.Kind != String || offset < 0 || offset > len(v.String) {
		return v.Pos()
	}
	start := v.Pos()
	if v.templated == nil {
		return start
	}
	layout := &v.templated.layout
	var x *runeIndex
	var tags []linePos
	if p := layout.placing; p != nil {
		x, tags = p.index, p.tags
	}
	if x == nil {
		x = &runeIndex{s: v.String}
	}
	at := func(line, col int) Pos { return Pos{File: start.File, Line: line, Col: col} }
	switch layout.kind {
	case layoutBlock:
		lineStart := x.lastNewlineBefore(offset) + 1
		return at(start.Line+1+x.newlinesBefore(offset), int(layout.indent)+1+x.runesBefore(offset)-x.runesBefore(lineStart))
	case layoutPlain:
		return at(start.Line, start.Col+x.runesBefore(offset))
	case layoutSingle:
		return at(start.Line, start.Col+1+x.runesBefore(offset)+x.quotesBefore(offset))
	case layoutDouble:
		return at(start.Line, start.Col+1+x.runesBefore(offset))
	}
	// Place the offset from the tag it is in or after, when the tags are
	// placed; else the start of the string is the best there is.
	tag := offset
	if !strings.HasPrefix(v.String[offset:], "{{") {
		tag = x.lastTagBefore(offset)
	}
	if tag < 0 {
		return start
	}
	if i := x.tagsBefore(tag); i < len(tags) {
		p := tags[i]
		return at(int(p.line), int(p.col)+x.runesBefore(offset)-x.runesBefore(tag))
	}
	return start
}

// Entry is one key of a mapping Value.
type Entry struct {
	Key string
	// line and col are where the key is written, read with KeyPos, in the
	// file of its value, which every value of a file shares: a pointer to
	// it in each entry made an Entry 8 bytes larger.
	line, col int32
	Value     *Value
}

// KeyPos is where the entry's key is written.
func (e *Entry) KeyPos() Pos {
	pos := e.Value.Pos() // the file's name; the zero Pos for nil
	pos.Line, pos.Col = int(e.line), int(e.col)
	return pos
}

// Get returns the value under key in a mapping, or nil.
func (v *Value) Get(key string) *Value {
	if v == nil || v.Kind != Map {
		return nil
	}
	for _, e := range v.Map() {
		if e.Key == key {
			return e.Value
		}
	}
	return nil
}

// At returns the value at a JSON pointer ("/properties/a/type") inside v,
// or the deepest value on the way there when the pointer leaves the tree,
// so that a problem found in plain JSON data can be placed in the file.
func (v *Value) At(pointer string) *Value {
	at := v
	if pointer == "" {
		return at
	}
	for _, seg := range strings.Split(strings.TrimPrefix(pointer, "/"), "/") {
		seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
		var next *Value
		switch at.Kind {
		case Map:
			next = at.Get(seg)
		case List:
			if i, err := strconv.Atoi(seg); err == nil && i >= 0 && i < len(at.List()) {
				next = at.List()[i]
			}
		}
		if next == nil {
			return at
		}
		at = next
	}
	return at
}

// HasTemplates reports whether any string in the value is a template.
func (v *Value) HasTemplates() bool {
	if v == nil {
		return false
	}
	switch v.Kind {
	case String:
		return v.Template() != nil
	case List:
		for _, x := range v.List() {
			if x.HasTemplates() {
				return true
			}
		}
	case Map:
		for _, e := range v.Map() {
			if e.Value.HasTemplates() {
				return true
			}
		}
	}
	return false
}

// Literal returns the value as plain JSON data without rendering: template
// strings stay as written. It is what a schema or a default is checked as.
func (v *Value) Literal() any {
	if v == nil {
		return nil
	}
	switch v.Kind {
	case Bool:
		return v.Bool
	case Number:
		return json.Number(v.String)
	case String:
		return v.String
	case List:
		out := make([]any, len(v.List()))
		for i, x := range v.List() {
			out[i] = x.Literal()
		}
		return out
	case Map:
		out := make(map[string]any, len(v.Map()))
		for _, e := range v.Map() {
			out[e.Key] = e.Value.Literal()
		}
		return out
	}
	return nil
}

// Render resolves every template in the value against scope, with typed
// splice: a string that is exactly one tag becomes the raw value it names.
// The first template error stops the render.
func (v *Value) Render(scope template.Scope) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch v.Kind {
	case String:
		t := v.Template()
		if t == nil {
			return v.String, nil
		}
		r, err := t.Render(scope)
		if err != nil {
			return nil, &RenderError{Pos: v.Pos(), Err: err}
		}
		return r, nil
	case List:
		out := make([]any, len(v.List()))
		for i, x := range v.List() {
			r, err := x.Render(scope)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	case Map:
		out := make(map[string]any, len(v.Map()))
		for _, e := range v.Map() {
			r, err := e.Value.Render(scope)
			if err != nil {
				return nil, err
			}
			out[e.Key] = r
		}
		return out, nil
	}
	return v.Literal(), nil
}

// RenderError is a template in a plan that failed to render: the
// template's error (a MissingStepError, BadPathError or EmptyDataError of
// package template) and where the template is written.
type RenderError struct {
	Pos Pos
	Err error
}

func (e *RenderError) Error() string { return e.Err.Error() }

// Unwrap returns the template's error, so errors.As finds its type.
func (e *RenderError) Unwrap() error { return e.Err }

// walkTemplates calls fn for every template string in the value.
func (v *Value) walkTemplates(fn func(*Value)) {
	if v == nil {
		return
	}
	switch v.Kind {
	case String:
		if v.Template() != nil {
			fn(v)
		}
	case List:
		for _, x := range v.List() {
			x.walkTemplates(fn)
		}
	case Map:
		for _, e := range v.Map() {
			e.Value.walkTemplates(fn)
		}
	}
}
