package plans

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/stepwise-dev/stepwise/plans/strict"
	"github.com/stepwise-dev/stepwise/plans/suggest"
)

// Schema is a JSON Schema written in a plan or tool file: the literal value
// as written (schemas are never templates) and its compiled form.
type Schema struct {
	Pos   Pos
	Value *Value
	Raw   any // the schema as plain JSON data
	// Compiled is the compiled form where whoever made the Schema compiled
	// it. Load leaves it nil and sets loaded instead, so that a schema it
	// proved sound is compiled on its first Check rather than at load.
	Compiled *jsonschema.Schema
	loaded   *loadedSchema
}

// loadedSchema is one schema text of a loaded file, shared by every place
// that writes it: compiled at load where the text may be wrong, so that
// its problems are reported, and on first use where compilesSurely proved
// it compiles.
type loadedSchema struct {
	raw      any
	once     sync.Once
	compiled *jsonschema.Schema
	err      error

	strictOnce sync.Once
	// strictUsable says, by rule set, whether strict structured output
	// could use the schema when no tools are offered.
	strictUsable [strict.OpenAI + 1]bool
}

// usableStrict reports whether strict structured output could use the
// schema under rules, when no tools are offered. A schema text of a loaded
// file is judged once, however many steps write it and however often it is
// asked: every load counts the agent steps strict could serve (see
// strictSummary).
func (s *Schema) usableStrict(rules strict.Rules) bool {
	l := s.loaded
	if l == nil {
		return strict.Check(s.Raw, rules, strict.Context{}).Usable
	}
	l.strictOnce.Do(func() {
		for r, v := range strict.CheckEach(l.raw, strict.Context{}) {
			l.strictUsable[r] = v.Usable
		}
	})
	return l.strictUsable[rules]
}

// compile compiles the schema once; every later call returns what the
// first gave. Steps may check against one schema from many goroutines.
func (l *loadedSchema) compile() (*jsonschema.Schema, error) {
	l.once.Do(func() { l.compiled, l.err = CompileSchema(l.raw) })
	return l.compiled, l.err
}

// compiles reports whether the schema compiles: Load reports a schema that
// does not, and leaves it with nothing to check against.
func (s *Schema) compiles() bool {
	return s.Compiled != nil || s.loaded != nil
}

// Violation is one way an instance fails a schema.
type Violation struct {
	Location string // JSON pointer into the instance; "" is the root
	Message  string
}

func (v Violation) String() string {
	loc := v.Location
	if loc == "" {
		loc = "/"
	}
	return loc + ": " + v.Message
}

// Check validates instance (plain JSON data) against the schema and returns
// every violation; none means it conforms.
func (s *Schema) Check(instance any) []Violation {
	if s == nil || !s.compiles() {
		return nil
	}
	compiled := s.Compiled
	if s.loaded != nil {
		var err error
		// compilesSurely proved the text compiles, so an error here is the
		// proof's fault; it is reported rather than passing every instance.
		if compiled, err = s.loaded.compile(); err != nil {
			return []Violation{{Message: "the schema does not compile: " + err.Error()}}
		}
	}
	err := compiled.Validate(instance)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []Violation{{Message: err.Error()}}
	}
	var out []Violation
	for _, u := range leafErrors(ve) {
		out = append(out, Violation{Location: u.InstanceLocation, Message: u.Error.String()})
	}
	if len(out) == 0 {
		out = append(out, Violation{Message: ve.Error()})
	}
	return out
}

// leafErrors returns the innermost failures of a validation error, in
// order. The enclosing units only summarise them ("'allOf' failed"), and
// the basic output does not reliably reach the leaves when the failure sits
// behind a $ref or $dynamicRef (as every meta-schema failure does).
func leafErrors(ve *jsonschema.ValidationError) []jsonschema.OutputUnit {
	var out []jsonschema.OutputUnit
	var walk func(u jsonschema.OutputUnit)
	walk = func(u jsonschema.OutputUnit) {
		if len(u.Errors) == 0 {
			if u.Error != nil {
				out = append(out, u)
			}
			return
		}
		for _, c := range u.Errors {
			walk(c)
		}
	}
	walk(*ve.DetailedOutput())
	return out
}

// joinViolations renders violations for a one-line message.
func joinViolations(vs []Violation) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = v.String()
	}
	return strings.Join(parts, "; ")
}

// noRemoteRefs refuses every $ref that leaves the schema: a plan must not
// read files or the network while it is being checked.
type noRemoteRefs struct{}

func (noRemoteRefs) Load(url string) (any, error) {
	return nil, fmt.Errorf("$ref to %s leaves the schema; only local references (#/...) are allowed", url)
}

// SchemaError is a JSON Schema that does not compile. Violations, when
// there are any, are the places where the schema breaks the JSON Schema
// meta-schema, each at a JSON pointer into the schema; otherwise Reason says
// what went wrong (a $ref that leads nowhere, for one).
type SchemaError struct {
	Violations []Violation
	Reason     string
}

func (e *SchemaError) Error() string {
	if len(e.Violations) > 0 {
		return "not a valid JSON Schema: " + joinViolations(e.Violations)
	}
	return "not a valid JSON Schema: " + e.Reason
}

// CompileSchema compiles raw (plain JSON data) as a JSON Schema, draft
// 2020-12 unless the schema names another with $schema. Its errors are
// *SchemaError.
func CompileSchema(raw any) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.UseLoader(noRemoteRefs{})
	const url = "stepwise:///schema.json"
	if err := c.AddResource(url, raw); err != nil {
		return nil, schemaError(err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, schemaError(err)
	}
	return s, nil
}

// schemaError rewords the compiler's errors for a plan author: one
// violation per place in the schema (the first message wins where the
// meta-schema's alternatives give several), and no internal resource URL.
func schemaError(err error) *SchemaError {
	var sve *jsonschema.SchemaValidationError
	if errors.As(err, &sve) {
		var ve *jsonschema.ValidationError
		if errors.As(sve.Err, &ve) {
			e := &SchemaError{}
			seen := map[string]bool{}
			for _, u := range leafErrors(ve) {
				if !seen[u.InstanceLocation] {
					seen[u.InstanceLocation] = true
					e.Violations = append(e.Violations, Violation{Location: u.InstanceLocation, Message: u.Error.String()})
				}
			}
			if len(e.Violations) > 0 {
				return e
			}
		}
	}
	// A refused $ref arrives wrapped as "failing loading <url>: <why>"; the
	// why already names the url and says what to do.
	var lue *jsonschema.LoadURLError
	if errors.As(err, &lue) {
		return &SchemaError{Reason: lue.Err.Error()}
	}
	return &SchemaError{Reason: strings.ReplaceAll(err.Error(), "stepwise:///schema.json", "the schema")}
}

// loadSchema returns the one loadedSchema of the schema v's text in the
// file (raw is v's data), compiled already unless compilesSurely proved it
// compiles, and the error compiling it gave.
func (d *decoder) loadSchema(v *Value, raw any) (*loadedSchema, error) {
	l := &loadedSchema{raw: raw}
	k := d.schemaKeys
	k.text = k.appendKey(k.text[:0], v)
	// Looking the text up as a string(bytes) conversion copies nothing;
	// only a new schema's key is copied, to be kept.
	if shared, ok := d.schemas[string(k.text)]; ok {
		l = shared
	} else {
		d.schemas[string(k.text)] = l
	}
	if compilesSurely(raw) {
		return l, nil
	}
	if _, err := l.compile(); err != nil {
		return nil, err
	}
	return l, nil
}

// schemaKeys writes the keys of a file's schemas in buffers kept from one
// schema to the next, so that a key costs an allocation only when it is new.
type schemaKeys struct {
	text    []byte
	entries []*Entry // the sorted entries of the mappings being written, innermost last
}

// appendKey appends to b a text of the schema v that equal schemas share
// and different ones do not: mapping keys in order, strings quoted, numbers
// as written. It is a key rather than JSON, so that it is written from the
// Value without encoding/json's reflection, which cost more than the rest
// of loading a schema the compiler need not see.
func (k *schemaKeys) appendKey(b []byte, v *Value) []byte {
	switch v.Kind {
	case Bool:
		if v.Bool {
			return append(b, 't')
		}
		return append(b, 'f')
	case Number:
		return append(append(b, '#'), v.String...)
	case String:
		return strconv.AppendQuote(b, v.String)
	case List:
		b = append(b, '[')
		for _, item := range v.List() {
			b = append(k.appendKey(b, item), ',')
		}
		return append(b, ']')
	case Map:
		// The entries are sorted on the stack past those of the mappings
		// this one is inside, and read by index, since writing a value
		// inside may grow the stack into a new array.
		entries := v.Map()
		from := len(k.entries)
		for i := range entries {
			k.entries = append(k.entries, &entries[i])
		}
		slices.SortFunc(k.entries[from:], func(x, y *Entry) int { return strings.Compare(x.Key, y.Key) })
		b = append(b, '{')
		for i := range len(entries) {
			e := k.entries[from+i]
			b = append(k.appendKey(strconv.AppendQuote(b, e.Key), e.Value), ',')
		}
		clear(k.entries[from:])
		k.entries = k.entries[:from]
		return append(b, '}')
	}
	return append(b, 'n')
}

// jsonTypes are the values of a schema's type keyword.
var jsonTypes = []string{"array", "boolean", "integer", "null", "number", "object", "string"}

// schema decodes a field holding a JSON Schema, reporting one that does not
// compile, at the place in the schema that is wrong. It returns nil when the
// field is absent.
func (o *object) schema(name string) *Schema {
	n := o.get(name)
	if n == nil {
		return nil
	}
	v := o.d.value(n, o.path, false)
	s := &Schema{Pos: v.Pos(), Value: v, Raw: v.Literal()}
	if v.Kind != Map && v.Kind != Bool {
		o.d.r.problem(CodeInvalidSchema, v.Pos(), o.path, "'%s' must be a JSON Schema (a mapping), not %s", name, v.Kind)
		return s
	}
	loaded, err := o.d.loadSchema(v, s.Raw)
	if err != nil {
		se := err.(*SchemaError)
		if len(se.Violations) == 0 {
			o.d.r.problem(CodeInvalidSchema, v.Pos(), o.path, "'%s' is %v", name, se)
		}
		for _, viol := range se.Violations {
			at := v.At(viol.Location)
			where := "the schema root"
			if viol.Location != "" {
				where = strings.ReplaceAll(strings.TrimPrefix(viol.Location, "/"), "/", ".")
			}
			msg := viol.Message
			if strings.HasSuffix(viol.Location, "/type") && at.Kind == String {
				msg = fmt.Sprintf("'%s' is not a JSON Schema type (%s)%s", at.String, strings.Join(jsonTypes, ", "), suggest.DidYouMean(at.String, jsonTypes))
			}
			o.d.r.problem(CodeInvalidSchema, at.Pos(), o.path, "'%s' is not a valid JSON Schema at '%s': %s", name, where, msg)
		}
		return s
	}
	s.loaded = loaded
	return s
}

// objectTyped reports whether a schema describes an object: type object, or
// (leniently, with a note from the caller) properties without a type.
func objectTyped(raw any) (typed, implied bool) {
	m, ok := raw.(map[string]any)
	if !ok {
		return false, false
	}
	switch t := m["type"].(type) {
	case string:
		return t == "object", false
	case nil:
		_, hasProps := m["properties"]
		return false, hasProps
	}
	return false, false
}
