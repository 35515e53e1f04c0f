package plans

import (
	"bytes"
	"encoding/json"
	"testing"
)

// schemaTexts are schemas compilesSurely must vouch for (sure) or leave to
// the compiler, as JSON.
var schemaTexts = []struct {
	text string
	sure bool
}{
	{`true`, true},
	{`{}`, true},
	{`{"type": "object", "additionalProperties": false, "required": ["a", "b"], "properties": {"a": {"type": ["string", "null"], "maxLength": 80}, "b": {"type": "array", "items": {"enum": [1, "x", null]}, "minItems": 1, "uniqueItems": true}}}`, true},
	{`{"anyOf": [{"type": "integer", "minimum": -3, "exclusiveMaximum": 1e3, "multipleOf": 0.5}, {"const": {"k": [1]}}], "description": "d", "title": "t", "default": 2, "examples": [1], "format": "date-time", "$comment": "c"}`, true},
	{`{"not": {"type": "string"}, "propertyNames": {"maxLength": 3}, "contains": true, "deprecated": true, "readOnly": false, "writeOnly": false, "minProperties": 0, "maxProperties": 9}`, true},
	{`{"type": "strin"}`, false},
	{`{"type": []}`, false},
	{`{"type": ["string", "string"]}`, false},
	{`{"required": ["a", "a"]}`, false},
	{`{"required": ["a", "b", "c", "d", "e", "f", "g", "h", "i", "a"]}`, false},
	{`{"required": "a"}`, false},
	{`{"minLength": -1}`, false},
	{`{"minLength": 1.5}`, false},
	{`{"maxItems": 12345678901234567890}`, false},
	{`{"multipleOf": 0}`, false},
	{`{"minimum": "3"}`, false},
	{`{"allOf": []}`, false},
	{`{"properties": {"a": {"type": 3}}}`, false},
	{`{"items": [{"type": "string"}]}`, false},
	{`{"pattern": "("}`, false},
	{`{"$ref": "#/$defs/x"}`, false},
	{`{"$schema": "http://json-schema.org/draft-07/schema#"}`, false},
	{`{"$id": "other.json"}`, false},
	{`{"nullable": true}`, false},
	{`3`, false},
}

// decodeSchema reads a schema text as Value.Literal gives a schema: numbers
// as json.Number.
func decodeSchema(text []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	var raw any
	err := dec.Decode(&raw)
	return raw, err
}

// TestCompilesSurely checks that compilesSurely vouches for the schemas it
// should, that each compiles, and that it leaves the rest (wrong ones, and
// right ones that reach outside the schema or compile a pattern) to the
// compiler.
func TestCompilesSurely(t *testing.T) {
	for _, tc := range schemaTexts {
		raw, err := decodeSchema([]byte(tc.text))
		if err != nil {
			t.Fatalf("%s: %v", tc.text, err)
		}
		if got := compilesSurely(raw); got != tc.sure {
			t.Errorf("compilesSurely(%s) = %v, want %v", tc.text, got, tc.sure)
		}
		if _, err := CompileSchema(raw); tc.sure && err != nil {
			t.Errorf("%s is vouched for and does not compile: %v", tc.text, err)
		}
	}
}

// TestSchemaLoadedSurelyChecks checks that a schema Load vouched for and
// did not compile checks instances on first use, and that a plan's broken
// schema is still reported where it is wrong.
func TestSchemaLoadedSurelyChecks(t *testing.T) {
	src := head + "  - id: A\n    tool_name: agent\n    input:\n      prompt: go\n      output_schema: {type: object, required: [x], properties: {x: {type: string}}}\n"
	p, r := Load("plan.yaml", []byte(src), Stepwise)
	if !r.OK() {
		t.Fatalf("problems:%s", formatProblems(r.Problems))
	}
	sc := p.Steps[0].Control.(*AgentInput).OutputSchema
	if got := sc.Check(map[string]any{"x": 1}); len(got) != 1 || got[0].Location != "/x" {
		t.Errorf("checking {x: 1} gave %v, want one violation at /x", got)
	}
	if got := sc.Check(map[string]any{"x": "ok"}); len(got) != 0 {
		t.Errorf("checking {x: ok} gave %v, want none", got)
	}
}

// FuzzCompilesSurely holds compilesSurely to the compiler: every schema it
// vouches for compiles.
func FuzzCompilesSurely(f *testing.F) {
	for _, tc := range schemaTexts {
		f.Add([]byte(tc.text))
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		raw, err := decodeSchema(text)
		if err != nil || !compilesSurely(raw) {
			return
		}
		if _, err := CompileSchema(raw); err != nil {
			t.Errorf("%s is vouched for and does not compile: %v", text, err)
		}
	})
}
