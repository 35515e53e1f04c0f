package strict

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// decode turns JSON text into the decoded form Check takes.
func decode(t testing.TB, text string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		t.Fatalf("decode schema: %v", err)
	}
	return v
}

// object builds a schema object with additionalProperties: false and the
// given properties, listing required as required.
func object(props map[string]any, required ...string) map[string]any {
	req := make([]any, len(required))
	for i, r := range required {
		req[i] = r
	}
	return map[string]any{
		"type":                 "object",
		"additionalProperties": false,
		"properties":           props,
		"required":             req,
	}
}

// optionals builds a root object with n optional properties of type typ,
// next to one required property. The count-shaped rows of the brief's table
// are built here because n properties written out would hide the count.
func optionals(n int, typ any) map[string]any {
	props := map[string]any{"id": map[string]any{"type": "string"}}
	for i := range n {
		props[fmt.Sprintf("opt%02d", i+1)] = map[string]any{"type": typ}
	}
	return object(props, "id")
}

// nested builds objects nested levels deep, the root being level 1, each
// holding the next in the required property "child".
func nested(levels int) map[string]any {
	inner := object(map[string]any{"leaf": map[string]any{"type": "string"}}, "leaf")
	for range levels - 1 {
		inner = object(map[string]any{"child": inner}, "child")
	}
	return inner
}

// nullUnion is a type list that allows null.
var nullUnion = []any{"string", "null"}

// outcome is what one rule set should answer.
type outcome struct {
	usable bool
	codes  []Code
}

// TestCheckBriefTable reproduces the brief's table of 14 schemas, under both
// rule sets.
func TestCheckBriefTable(t *testing.T) {
	used := outcome{usable: true}
	refused := func(c Code) outcome { return outcome{codes: []Code{c}} }
	noted := func(c Code) outcome { return outcome{usable: true, codes: []Code{c}} }
	tests := []struct {
		name      string
		schema    any
		anthropic outcome
		openai    outcome
	}{
		{
			name: "all required plain types",
			schema: decode(t, `{
				"type": "object", "additionalProperties": false,
				"required": ["name", "count", "done", "tags", "owner"],
				"properties": {
					"name": {"type": "string"},
					"count": {"type": "integer"},
					"done": {"type": "boolean"},
					"tags": {"type": "array", "items": {"type": "string"}},
					"owner": {
						"type": "object", "additionalProperties": false,
						"required": ["id"], "properties": {"id": {"type": "string"}}
					}
				}
			}`),
			anthropic: used,
			openai:    used,
		},
		{
			name:      "no schema at all",
			schema:    nil,
			anthropic: refused(NoSchema),
			openai:    refused(NoSchema),
		},
		{
			name:      "root is not an object",
			schema:    decode(t, `{"type": "array", "items": {"type": "string"}}`),
			anthropic: refused(NoSchema),
			openai:    refused(NoSchema),
		},
		{
			name: "object without additionalProperties false",
			schema: decode(t, `{
				"type": "object", "required": ["name"],
				"properties": {"name": {"type": "string"}}
			}`),
			anthropic: refused(MissingAdditionalProperties),
			openai:    refused(MissingAdditionalProperties),
		},
		{
			name: "nested object without additionalProperties false",
			schema: decode(t, `{
				"type": "object", "additionalProperties": false, "required": ["owner"],
				"properties": {
					"owner": {"type": "object", "required": ["id"], "properties": {"id": {"type": "string"}}}
				}
			}`),
			anthropic: refused(MissingAdditionalProperties),
			openai:    refused(MissingAdditionalProperties),
		},
		{
			name: "one optional property",
			schema: decode(t, `{
				"type": "object", "additionalProperties": false, "required": ["name"],
				"properties": {"name": {"type": "string"}, "reason": {"type": "string"}}
			}`),
			anthropic: noted(OptionalEmission),
			openai:    refused(NotAllRequired),
		},
		{
			name: "optional written as a null union all required",
			schema: decode(t, `{
				"type": "object", "additionalProperties": false, "required": ["reason", "owner"],
				"properties": {
					"reason": {"type": ["string", "null"]},
					"owner": {"anyOf": [{"type": "string"}, {"type": "null"}]}
				}
			}`),
			anthropic: used,
			openai:    noted(NullUnionEmission),
		},
		{
			name:      "25 optional properties",
			schema:    optionals(25, "string"),
			anthropic: refused(TooManyOptionals),
			openai:    refused(NotAllRequired),
		},
		{
			name: "minimum and maximum",
			schema: decode(t, `{
				"type": "object", "additionalProperties": false, "required": ["count"],
				"properties": {"count": {"type": "integer", "minimum": 0, "maximum": 10}}
			}`),
			anthropic: refused(UnsupportedKeyword),
			openai:    used,
		},
		{
			name: "minLength",
			schema: decode(t, `{
				"type": "object", "additionalProperties": false, "required": ["reason"],
				"properties": {"reason": {"type": "string", "minLength": 10}}
			}`),
			anthropic: noted(UnenforcedKeyword),
			openai:    used,
		},
		{
			name: "pattern",
			schema: decode(t, `{
				"type": "object", "additionalProperties": false, "required": ["code"],
				"properties": {"code": {"type": "string", "pattern": "^[A-Z]{3}$"}}
			}`),
			anthropic: noted(UnenforcedPattern),
			openai:    used,
		},
		{
			name: "recursive ref to the root",
			schema: decode(t, `{
				"type": "object", "additionalProperties": false, "required": ["name"],
				"properties": {
					"name": {"type": "string"},
					"children": {"type": "array", "items": {"$ref": "#"}}
				}
			}`),
			anthropic: refused(UnsupportedKeyword),
			openai:    refused(NotAllRequired),
		},
		{
			name:      "17 optional properties whose type is a union",
			schema:    optionals(17, nullUnion),
			anthropic: refused(TooManyUnions),
			openai:    refused(NotAllRequired),
		},
		{
			name:      "objects nested 11 deep",
			schema:    nested(11),
			anthropic: used,
			openai:    refused(ExceedsProviderLimit),
		},
	}
	for _, tt := range tests {
		for _, rc := range []struct {
			rules Rules
			want  outcome
		}{{Anthropic, tt.anthropic}, {OpenAI, tt.openai}} {
			t.Run(tt.name+"/"+rc.rules.String(), func(t *testing.T) {
				v := Check(tt.schema, rc.rules, Context{})
				checkEachAgrees(t, tt.schema, Context{})
				if v.Usable != rc.want.usable || !slices.Equal(v.Codes(), rc.want.codes) {
					t.Errorf("got usable=%v codes=%v, want usable=%v codes=%v\nnotes: %+v",
						v.Usable, v.Codes(), rc.want.usable, rc.want.codes, v.Notes)
				}
			})
		}
	}
}

// shortNames returns n distinct property names, shortest first, so that a
// test of the property count stays under the character limit.
func shortNames(n int) []string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	names := make([]string, 0, n)
	for length := 1; len(names) < n; length++ {
		idx := make([]int, length)
		for len(names) < n {
			var b strings.Builder
			for _, i := range idx {
				b.WriteByte(alphabet[i])
			}
			names = append(names, b.String())
			k := length - 1
			for k >= 0 && idx[k] == len(alphabet)-1 {
				idx[k] = 0
				k--
			}
			if k < 0 {
				break
			}
			idx[k]++
		}
	}
	return names
}

// manyProperties builds a root object with n required string properties.
func manyProperties(n int) map[string]any {
	names := shortNames(n)
	props := make(map[string]any, n)
	for _, name := range names {
		props[name] = map[string]any{"type": "string"}
	}
	return object(props, names...)
}

// enumOf builds an enum property schema of n values made by value.
func enumOf(n int, value func(i int) any) map[string]any {
	values := make([]any, n)
	for i := range values {
		values[i] = value(i)
	}
	return map[string]any{"enum": values}
}

// numberValue returns i as a decoded JSON number.
func numberValue(i int) any { return float64(i) }

// fixedString returns a function making distinct strings of length n.
func fixedString(n int) func(int) any {
	return func(i int) any {
		s := fmt.Sprintf("%d", i)
		return s + strings.Repeat("x", n-len(s))
	}
}

// TestCheck covers each code and each rule decision beyond the brief's
// table.
func TestCheck(t *testing.T) {
	str := map[string]any{"type": "string"}
	tests := []struct {
		name   string
		schema any
		rules  Rules
		ctx    Context
		usable bool
		codes  []Code
		// notes, when set, is the exact list of notes wanted.
		notes []Note
	}{
		// no_schema
		{
			name:   "no schema message",
			schema: nil,
			rules:  Anthropic,
			notes: []Note{{Code: NoSchema, Refusal: true, Location: "the schema root",
				Message: "give the step an 'output_schema' (or 'input_schema') with 'type: object' at its top level"}},
		},
		{
			name:   "root without type or properties",
			schema: decode(t, `{"anyOf": [{"type": "string"}, {"type": "integer"}]}`),
			rules:  OpenAI,
			notes: []Note{{Code: NoSchema, Refusal: true, Location: "the schema root",
				Message: "write 'type: object' at 'the schema root' (strict mode needs an object at the top level)"}},
		},
		{
			name:   "root is a list",
			schema: decode(t, `[{"type": "object"}]`),
			rules:  Anthropic,
			codes:  []Code{NoSchema},
		},
		{
			name:   "root is a boolean schema",
			schema: true,
			rules:  OpenAI,
			codes:  []Code{NoSchema},
		},
		{
			name:   "root is a nullable object",
			schema: decode(t, `{"type": ["object", "null"], "additionalProperties": false, "properties": {}}`),
			rules:  Anthropic,
			codes:  []Code{NoSchema},
		},
		{
			name:   "root is only a ref",
			schema: decode(t, `{"$ref": "#/$defs/a", "$defs": {"a": {"type": "object", "additionalProperties": false}}}`),
			rules:  OpenAI,
			codes:  []Code{NoSchema},
		},
		{
			name:   "root type written as a one-entry list",
			schema: decode(t, `{"type": ["object"], "additionalProperties": false, "properties": {}}`),
			rules:  OpenAI,
			usable: true,
		},
		{
			name:   "root without type but with properties is an object",
			schema: decode(t, `{"additionalProperties": false, "required": ["a"], "properties": {"a": {"type": "string"}}}`),
			rules:  OpenAI,
			usable: true,
		},
		{
			name:   "no schema with tools at run time says only no_schema",
			schema: nil,
			rules:  OpenAI,
			ctx:    Context{HasTools: true, Runtime: true},
			codes:  []Code{NoSchema},
		},

		// missing_additional_properties
		{
			name:   "brief's load error message",
			schema: decode(t, `{"type": "object", "required": ["a"], "properties": {"a": {"type": "string"}}}`),
			rules:  Anthropic,
			notes: []Note{{Code: MissingAdditionalProperties, Refusal: true, Location: "the schema root",
				Message: "add 'additionalProperties: false' at 'the schema root'"}},
		},
		{
			name: "nested missing additionalProperties names the property",
			schema: object(map[string]any{
				"owner": map[string]any{"type": "object", "required": []any{}, "properties": map[string]any{}},
			}, "owner"),
			rules: OpenAI,
			notes: []Note{{Code: MissingAdditionalProperties, Refusal: true, Location: "properties.owner",
				Message: "add 'additionalProperties: false' at 'properties.owner'"}},
		},
		{
			name:   "additionalProperties true",
			schema: decode(t, `{"type": "object", "additionalProperties": true, "properties": {}}`),
			rules:  Anthropic,
			notes: []Note{{Code: MissingAdditionalProperties, Refusal: true, Location: "the schema root",
				Message: "set 'additionalProperties: false' at 'the schema root' (it is 'true' now)"}},
		},
		{
			name:   "additionalProperties as a schema",
			schema: decode(t, `{"type": "object", "additionalProperties": {"type": "string"}, "properties": {}}`),
			rules:  OpenAI,
			notes: []Note{{Code: MissingAdditionalProperties, Refusal: true, Location: "the schema root",
				Message: "set 'additionalProperties: false' at 'the schema root' (it is 'a schema' now)"}},
		},
		{
			name: "object in array items",
			schema: object(map[string]any{
				"items": map[string]any{"type": "array", "items": map[string]any{"type": "object", "properties": map[string]any{}}},
			}, "items"),
			rules: Anthropic,
			notes: []Note{{Code: MissingAdditionalProperties, Refusal: true, Location: "properties.items.items",
				Message: "add 'additionalProperties: false' at 'properties.items.items'"}},
		},
		{
			name: "object in an anyOf branch",
			schema: object(map[string]any{
				"who": map[string]any{"anyOf": []any{str, map[string]any{"type": "object", "properties": map[string]any{}}}},
			}, "who"),
			rules: Anthropic,
			notes: []Note{{Code: MissingAdditionalProperties, Refusal: true, Location: "properties.who.anyOf.1",
				Message: "add 'additionalProperties: false' at 'properties.who.anyOf.1'"}},
		},
		{
			name: "nullable nested object still needs additionalProperties",
			schema: object(map[string]any{
				"who": map[string]any{"type": []any{"object", "null"}, "properties": map[string]any{}},
			}, "who"),
			rules: OpenAI,
			codes: []Code{MissingAdditionalProperties},
		},

		// unsupported_keyword
		{
			name:   "minimum message",
			schema: object(map[string]any{"count": map[string]any{"type": "integer", "minimum": 1.0}}, "count"),
			rules:  Anthropic,
			notes: []Note{{Code: UnsupportedKeyword, Refusal: true, Location: "properties.count",
				Message: "remove 'minimum' at 'properties.count' (Anthropic's strict mode rejects it)"}},
		},
		{
			name: "every numeric constraint under Anthropic",
			schema: object(map[string]any{"n": map[string]any{
				"type": "number", "exclusiveMinimum": 0.0, "exclusiveMaximum": 9.0, "multipleOf": 0.5,
			}}, "n"),
			rules: Anthropic,
			notes: []Note{
				{Code: UnsupportedKeyword, Refusal: true, Location: "properties.n",
					Message: "remove 'exclusiveMaximum' at 'properties.n' (Anthropic's strict mode rejects it)"},
				{Code: UnsupportedKeyword, Refusal: true, Location: "properties.n",
					Message: "remove 'exclusiveMinimum' at 'properties.n' (Anthropic's strict mode rejects it)"},
				{Code: UnsupportedKeyword, Refusal: true, Location: "properties.n",
					Message: "remove 'multipleOf' at 'properties.n' (Anthropic's strict mode rejects it)"},
			},
		},
		{
			name: "numeric constraints under OpenAI",
			schema: object(map[string]any{"n": map[string]any{
				"type": "number", "minimum": 0.0, "maximum": 9.0, "exclusiveMinimum": 0.0, "multipleOf": 0.5,
			}}, "n"),
			rules:  OpenAI,
			usable: true,
		},
		{
			name:   "recursion message",
			schema: decode(t, `{"type": "object", "additionalProperties": false, "required": ["children"], "properties": {"children": {"type": "array", "items": {"$ref": "#"}}}}`),
			rules:  Anthropic,
			notes: []Note{{Code: UnsupportedKeyword, Refusal: true, Location: "properties.children.items",
				Message: "remove the recursive '$ref: #' at 'properties.children.items' (Anthropic's strict mode rejects recursive schemas)"}},
		},
		{
			name:   "recursion all required under OpenAI",
			schema: decode(t, `{"type": "object", "additionalProperties": false, "required": ["children"], "properties": {"children": {"type": "array", "items": {"$ref": "#"}}}}`),
			rules:  OpenAI,
			usable: true,
		},
		{
			name:   "OpenAI refuses allOf",
			schema: object(map[string]any{"a": map[string]any{"allOf": []any{str}}}, "a"),
			rules:  OpenAI,
			notes: []Note{{Code: UnsupportedKeyword, Refusal: true, Location: "properties.a",
				Message: "remove 'allOf' at 'properties.a' (OpenAI's strict mode rejects it)"}},
		},
		{
			name:   "Anthropic accepts allOf without a ref",
			schema: object(map[string]any{"a": map[string]any{"allOf": []any{str}}}, "a"),
			rules:  Anthropic,
			usable: true,
		},
		{
			name: "Anthropic refuses a ref inside allOf",
			schema: decode(t, `{"type": "object", "additionalProperties": false, "required": ["a"],
				"properties": {"a": {"allOf": [{"$ref": "#/$defs/s"}]}},
				"$defs": {"s": {"type": "string"}}}`),
			rules: Anthropic,
			notes: []Note{{Code: UnsupportedKeyword, Refusal: true, Location: "properties.a",
				Message: "write out the '$ref' inside 'allOf' at 'properties.a' (Anthropic's strict mode rejects a reference there)"}},
		},
		{
			name: "OpenAI refuses composition and object keywords",
			schema: object(map[string]any{"a": map[string]any{
				"type": "object", "additionalProperties": false, "properties": map[string]any{},
				"not": str, "if": str, "then": str, "else": str,
				"dependentRequired": map[string]any{}, "dependentSchemas": map[string]any{},
				"patternProperties": map[string]any{}, "unevaluatedProperties": false,
				"propertyNames": str, "minProperties": 1.0, "maxProperties": 2.0,
			}}, "a"),
			rules: OpenAI,
			codes: []Code{UnsupportedKeyword},
		},
		{
			name: "Anthropic leaves object counts to stepwise",
			schema: object(map[string]any{"a": map[string]any{
				"type": "object", "additionalProperties": false, "properties": map[string]any{},
				"minProperties": 0.0,
			}}, "a"),
			rules:  Anthropic,
			usable: true,
			codes:  []Code{UnenforcedKeyword},
		},
		{
			name:   "Anthropic refuses not",
			schema: object(map[string]any{"a": map[string]any{"type": "string", "not": map[string]any{"const": "x"}}}, "a"),
			rules:  Anthropic,
			codes:  []Code{UnsupportedKeyword},
		},
		{
			name:   "oneOf is written as anyOf",
			schema: object(map[string]any{"a": map[string]any{"oneOf": []any{str, map[string]any{"type": "integer"}}}}, "a"),
			rules:  Anthropic,
			notes: []Note{{Code: UnsupportedKeyword, Refusal: true, Location: "properties.a",
				Message: "write 'oneOf' at 'properties.a' as 'anyOf' (Anthropic's strict mode rejects 'oneOf')"}},
		},
		{
			name:   "anyOf below the root is accepted",
			schema: object(map[string]any{"a": map[string]any{"anyOf": []any{str, map[string]any{"type": "integer"}}}}, "a"),
			rules:  OpenAI,
			usable: true,
		},
		{
			name: "OpenAI refuses anyOf at the root",
			schema: decode(t, `{"type": "object", "additionalProperties": false, "properties": {},
				"anyOf": [{"required": []}]}`),
			rules: OpenAI,
			notes: []Note{{Code: UnsupportedKeyword, Refusal: true, Location: "the schema root",
				Message: "remove 'anyOf' at 'the schema root' (OpenAI's strict mode needs a plain object at the top level)"}},
		},
		{
			name: "Anthropic accepts anyOf at the root of an object",
			schema: decode(t, `{"type": "object", "additionalProperties": false, "properties": {},
				"anyOf": [{"required": []}]}`),
			rules:  Anthropic,
			usable: true,
		},
		{
			name:   "tuple items",
			schema: object(map[string]any{"pair": map[string]any{"type": "array", "items": []any{str, str}}}, "pair"),
			rules:  OpenAI,
			notes: []Note{{Code: UnsupportedKeyword, Refusal: true, Location: "properties.pair",
				Message: "write 'items' at 'properties.pair' as one schema (OpenAI's strict mode rejects a list of item schemas)"}},
		},
		{
			name:   "prefixItems",
			schema: object(map[string]any{"pair": map[string]any{"type": "array", "prefixItems": []any{str}}}, "pair"),
			rules:  Anthropic,
			codes:  []Code{UnsupportedKeyword},
		},
		{
			name:   "boolean schema in place of a property",
			schema: object(map[string]any{"any": true}, "any"),
			rules:  Anthropic,
			notes: []Note{{Code: UnsupportedKeyword, Refusal: true, Location: "properties.any",
				Message: "replace 'true' at 'properties.any' with a schema object (strict mode needs one for every value)"}},
		},
		{
			name:   "ref outside the schema",
			schema: object(map[string]any{"a": map[string]any{"$ref": "other.json#/x"}}, "a"),
			rules:  OpenAI,
			notes: []Note{{Code: UnsupportedKeyword, Refusal: true, Location: "properties.a",
				Message: "point '$ref' at 'properties.a' to a schema in this one's '$defs' ('other.json#/x' is outside this schema)"}},
		},
		{
			name:   "ref to an anchor",
			schema: object(map[string]any{"a": map[string]any{"$ref": "#node"}}, "a"),
			rules:  Anthropic,
			codes:  []Code{UnsupportedKeyword},
		},
		{
			name:   "ref to nothing",
			schema: object(map[string]any{"a": map[string]any{"$ref": "#/$defs/missing"}}, "a"),
			rules:  Anthropic,
			notes: []Note{{Code: UnsupportedKeyword, Refusal: true, Location: "properties.a",
				Message: "point '$ref' at 'properties.a' to a schema in this one's '$defs' ('#/$defs/missing' points at nothing)"}},
		},
		{
			name:   "ref past the end of a list",
			schema: object(map[string]any{"a": map[string]any{"anyOf": []any{str}}, "b": map[string]any{"$ref": "#/properties/a/anyOf/3"}}, "a", "b"),
			rules:  OpenAI,
			codes:  []Code{UnsupportedKeyword},
		},
		{
			name:   "Anthropic refuses object values in enum",
			schema: object(map[string]any{"a": map[string]any{"enum": []any{"x", map[string]any{"k": "v"}}}}, "a"),
			rules:  Anthropic,
			notes: []Note{{Code: UnsupportedKeyword, Refusal: true, Location: "properties.a",
				Message: "remove the object and list values from 'enum' at 'properties.a' (Anthropic's strict mode rejects them)"}},
		},
		{
			name:   "OpenAI accepts object values in enum",
			schema: object(map[string]any{"a": map[string]any{"enum": []any{"x", map[string]any{"k": "v"}}}}, "a"),
			rules:  OpenAI,
			usable: true,
		},

		// too_many_optionals and too_many_unions
		{
			name:   "24 optional properties are used under Anthropic",
			schema: optionals(24, "string"),
			rules:  Anthropic,
			usable: true,
			codes:  []Code{OptionalEmission},
		},
		{
			name:   "25 optional properties message",
			schema: optionals(25, "string"),
			rules:  Anthropic,
			notes: []Note{{Code: TooManyOptionals, Refusal: true, Location: "the schema root",
				Message: "make at most 24 properties optional (this schema has 25); list the rest in 'required'"}},
		},
		{
			name: "optional properties are counted across nested objects",
			schema: object(map[string]any{
				"a": optionals(12, "string"),
				"b": optionals(13, "string"),
			}, "a", "b"),
			rules: Anthropic,
			codes: []Code{TooManyOptionals},
		},
		{
			name:   "16 optional unions are used under Anthropic",
			schema: optionals(16, nullUnion),
			rules:  Anthropic,
			usable: true,
			codes:  []Code{OptionalEmission},
		},
		{
			name:   "17 optional unions message",
			schema: optionals(17, nullUnion),
			rules:  Anthropic,
			notes: []Note{{Code: TooManyUnions, Refusal: true, Location: "the schema root",
				Message: "give at most 16 optional properties a union type (this schema has 17); list the rest in 'required' or give each one type"}},
		},
		{
			name:   "required unions do not count",
			schema: object(map[string]any{"a": map[string]any{"type": nullUnion}}, "a"),
			rules:  Anthropic,
			usable: true,
		},
		{
			name: "unions written as anyOf and through a ref count",
			schema: func() map[string]any {
				s := optionals(0, "string")
				props := s["properties"].(map[string]any)
				for i := range 9 {
					props[fmt.Sprintf("any%d", i)] = map[string]any{"anyOf": []any{str, map[string]any{"type": "integer"}}}
					props[fmt.Sprintf("ref%d", i)] = map[string]any{"$ref": "#/$defs/either"}
				}
				s["$defs"] = map[string]any{"either": map[string]any{"type": []any{"string", "integer"}}}
				return s
			}(),
			rules: Anthropic,
			codes: []Code{TooManyUnions},
		},
		{
			name: "a ref cycle without a union is not a union",
			schema: decode(t, `{"type": "object", "additionalProperties": false, "required": [],
				"properties": {"a": {"$ref": "#/$defs/x"}},
				"$defs": {"x": {"$ref": "#/$defs/y"}, "y": {"$ref": "#/$defs/x"}}}`),
			rules: OpenAI,
			codes: []Code{NotAllRequired},
		},

		// not_all_required
		{
			name: "not_all_required message",
			schema: decode(t, `{"type": "object", "additionalProperties": false, "required": ["name"],
				"properties": {"name": {"type": "string"}, "reason": {"type": "string"}}}`),
			rules: OpenAI,
			notes: []Note{{Code: NotAllRequired, Refusal: true, Location: "the schema root",
				Message: "list 'reason' in 'required' at 'the schema root' (OpenAI requires every property; write an optional one as a union with null)"}},
		},
		{
			name: "object without required lists every property",
			schema: decode(t, `{"type": "object", "additionalProperties": false,
				"properties": {"b": {"type": "string"}, "a": {"type": "string"}}}`),
			rules: OpenAI,
			notes: []Note{
				{Code: NotAllRequired, Refusal: true, Location: "the schema root",
					Message: "list 'a' in 'required' at 'the schema root' (OpenAI requires every property; write an optional one as a union with null)"},
				{Code: NotAllRequired, Refusal: true, Location: "the schema root",
					Message: "list 'b' in 'required' at 'the schema root' (OpenAI requires every property; write an optional one as a union with null)"},
			},
		},

		// exceeds_provider_limit
		{
			name:   "10 levels of objects are used under OpenAI",
			schema: nested(10),
			rules:  OpenAI,
			usable: true,
		},
		{
			name:   "11 levels message",
			schema: nested(11),
			rules:  OpenAI,
			notes: []Note{{Code: ExceedsProviderLimit, Refusal: true, Location: "the schema root",
				Message: "nest objects at most 10 levels deep (this schema nests 11)"}},
		},
		{
			name: "arrays between objects add no level",
			schema: object(map[string]any{
				"list": map[string]any{"type": "array", "items": nested(9)},
			}, "list"),
			rules:  OpenAI,
			usable: true,
		},
		{
			name: "a ref adds the levels of its target",
			schema: func() map[string]any {
				s := object(map[string]any{"deep": map[string]any{"$ref": "#/$defs/deep"}}, "deep")
				s["$defs"] = map[string]any{"deep": nested(10)}
				return s
			}(),
			rules: OpenAI,
			codes: []Code{ExceedsProviderLimit},
		},
		{
			name: "an unused definition adds no level",
			schema: func() map[string]any {
				s := object(map[string]any{"a": str}, "a")
				s["$defs"] = map[string]any{"deep": nested(10)}
				return s
			}(),
			rules:  OpenAI,
			usable: true,
		},
		{
			name:   "5000 properties are used under OpenAI",
			schema: manyProperties(5000),
			rules:  OpenAI,
			usable: true,
		},
		{
			name:   "5001 properties",
			schema: manyProperties(5001),
			rules:  OpenAI,
			notes: []Note{{Code: ExceedsProviderLimit, Refusal: true, Location: "the schema root",
				Message: "declare at most 5000 properties in all (this schema has 5001)"}},
		},
		{
			name:   "5001 properties are used under Anthropic",
			schema: manyProperties(5001),
			rules:  Anthropic,
			usable: true,
		},
		{
			name:   "1000 enum values are used under OpenAI",
			schema: object(map[string]any{"a": enumOf(500, numberValue), "b": enumOf(500, numberValue)}, "a", "b"),
			rules:  OpenAI,
			usable: true,
		},
		{
			name:   "1001 enum values",
			schema: object(map[string]any{"a": enumOf(500, numberValue), "b": enumOf(501, numberValue)}, "a", "b"),
			rules:  OpenAI,
			notes: []Note{{Code: ExceedsProviderLimit, Refusal: true, Location: "the schema root",
				Message: "declare at most 1000 enum values in all (this schema has 1001)"}},
		},
		{
			name:   "15000 characters are used under OpenAI",
			schema: object(map[string]any{"c": map[string]any{"const": strings.Repeat("x", 14999)}}, "c"),
			rules:  OpenAI,
			usable: true,
		},
		{
			name:   "15001 characters",
			schema: object(map[string]any{"c": map[string]any{"const": strings.Repeat("x", 15000)}}, "c"),
			rules:  OpenAI,
			notes: []Note{{Code: ExceedsProviderLimit, Refusal: true, Location: "the schema root",
				Message: "shorten property names, definition names, enum values and const values to at most 15000 characters in all (this schema has 15001)"}},
		},
		{
			name: "definition names and enum strings count as characters",
			schema: func() map[string]any {
				s := object(map[string]any{"e": enumOf(1, fixedString(7000))}, "e")
				s["$defs"] = map[string]any{strings.Repeat("d", 8000): str}
				return s
			}(),
			rules: OpenAI,
			codes: []Code{ExceedsProviderLimit},
		},
		{
			name:   "250 long enum values are used under OpenAI",
			schema: object(map[string]any{"e": enumOf(250, fixedString(31))}, "e"),
			rules:  OpenAI,
			usable: true,
		},
		{
			name:   "251 enum values within 7500 characters are used under OpenAI",
			schema: object(map[string]any{"e": enumOf(251, fixedString(29))}, "e"),
			rules:  OpenAI,
			usable: true,
		},
		{
			name:   "251 enum values over 7500 characters",
			schema: object(map[string]any{"e": enumOf(251, fixedString(30))}, "e"),
			rules:  OpenAI,
			notes: []Note{{Code: ExceedsProviderLimit, Refusal: true, Location: "properties.e",
				Message: "cut 'enum' at 'properties.e' to at most 250 values or 7500 characters (it has 251 values and 7530 characters)"}},
		},

		// unenforced_keyword, unenforced_pattern, unenforced_format
		{
			name:   "brief's caveat message",
			schema: object(map[string]any{"reason": map[string]any{"type": "string", "minLength": 10.0}}, "reason"),
			rules:  Anthropic,
			usable: true,
			notes: []Note{{Code: UnenforcedKeyword, Location: "properties.reason",
				Message: "'minLength' at 'properties.reason' is silently ignored or rejected by the API — either way enforced post-hoc by stepwise"}},
		},
		{
			name: "array and length constraints under Anthropic",
			schema: object(map[string]any{
				"s": map[string]any{"type": "string", "maxLength": 10.0},
				"l": map[string]any{"type": "array", "items": str, "minItems": 2.0, "maxItems": 5.0, "uniqueItems": true},
			}, "s", "l"),
			rules:  Anthropic,
			usable: true,
			notes: []Note{
				{Code: UnenforcedKeyword, Location: "properties.l",
					Message: "'maxItems' at 'properties.l' is silently ignored or rejected by the API — either way enforced post-hoc by stepwise"},
				{Code: UnenforcedKeyword, Location: "properties.l",
					Message: "'minItems' at 'properties.l' is silently ignored or rejected by the API — either way enforced post-hoc by stepwise"},
				{Code: UnenforcedKeyword, Location: "properties.l",
					Message: "'uniqueItems' at 'properties.l' is silently ignored or rejected by the API — either way enforced post-hoc by stepwise"},
				{Code: UnenforcedKeyword, Location: "properties.s",
					Message: "'maxLength' at 'properties.s' is silently ignored or rejected by the API — either way enforced post-hoc by stepwise"},
			},
		},
		{
			name: "minItems 0 and 1 are enforced under Anthropic",
			schema: object(map[string]any{
				"a": map[string]any{"type": "array", "items": str, "minItems": 0.0},
				"b": map[string]any{"type": "array", "items": str, "minItems": json.Number("1")},
				"c": map[string]any{"type": "array", "items": str, "minItems": 1},
			}, "a", "b", "c"),
			rules:  Anthropic,
			usable: true,
		},
		{
			name:   "minItems decoded as a json.Number above 1",
			schema: object(map[string]any{"a": map[string]any{"type": "array", "items": str, "minItems": json.Number("3")}}, "a"),
			rules:  Anthropic,
			usable: true,
			codes:  []Code{UnenforcedKeyword},
		},
		{
			name: "uniqueItems is refused under OpenAI",
			schema: object(map[string]any{
				"l": map[string]any{"type": "array", "items": str, "minItems": 2.0, "maxItems": 5.0, "uniqueItems": true},
			}, "l"),
			rules: OpenAI,
			codes: []Code{UnsupportedKeyword},
		},
		{
			name: "length constraints are accepted under OpenAI",
			schema: object(map[string]any{
				"s": map[string]any{"type": "string", "minLength": 1.0, "maxLength": 10.0, "pattern": "^a"},
				"l": map[string]any{"type": "array", "items": str, "minItems": 2.0, "maxItems": 5.0},
			}, "s", "l"),
			rules:  OpenAI,
			usable: true,
		},
		{
			name:   "pattern message",
			schema: object(map[string]any{"code": map[string]any{"type": "string", "pattern": "^[A-Z]+$"}}, "code"),
			rules:  Anthropic,
			usable: true,
			notes: []Note{{Code: UnenforcedPattern, Location: "properties.code",
				Message: "'pattern' at 'properties.code' is silently ignored or rejected by the API — either way enforced post-hoc by stepwise"}},
		},
		{
			name: "formats both rule sets enforce",
			schema: object(map[string]any{
				"a": map[string]any{"type": "string", "format": "date-time"},
				"b": map[string]any{"type": "string", "format": "email"},
				"c": map[string]any{"type": "string", "format": "uuid"},
			}, "a", "b", "c"),
			rules:  OpenAI,
			usable: true,
		},
		{
			name:   "uri is enforced under Anthropic",
			schema: object(map[string]any{"link": map[string]any{"type": "string", "format": "uri"}}, "link"),
			rules:  Anthropic,
			usable: true,
		},
		{
			name:   "uri is not enforced under OpenAI",
			schema: object(map[string]any{"link": map[string]any{"type": "string", "format": "uri"}}, "link"),
			rules:  OpenAI,
			usable: true,
			notes: []Note{{Code: UnenforcedFormat, Location: "properties.link",
				Message: "'format: uri' at 'properties.link' is silently ignored or rejected by the API — either way enforced post-hoc by stepwise"}},
		},
		{
			name:   "an unknown format under Anthropic",
			schema: object(map[string]any{"re": map[string]any{"type": "string", "format": "regex"}}, "re"),
			rules:  Anthropic,
			usable: true,
			codes:  []Code{UnenforcedFormat},
		},

		// optional_emission and null_union_emission
		{
			name: "optional_emission message on a nested property",
			schema: object(map[string]any{
				"owner": object(map[string]any{"id": str, "nick": str}, "id"),
			}, "owner"),
			rules:  Anthropic,
			usable: true,
			notes: []Note{{Code: OptionalEmission, Location: "properties.owner.properties.nick",
				Message: "'nick' at 'properties.owner.properties.nick' is optional — under strict mode a model may leave it out more often; list it in 'required' if every answer needs it"}},
		},
		{
			name: "null unions in a list, an anyOf and an enum",
			schema: object(map[string]any{
				"a": map[string]any{"type": "array", "items": map[string]any{"type": nullUnion}},
				"b": map[string]any{"anyOf": []any{str, map[string]any{"type": "null"}}},
				"c": map[string]any{"enum": []any{"x", nil}},
			}, "a", "b", "c"),
			rules:  OpenAI,
			usable: true,
			notes: []Note{
				{Code: NullUnionEmission, Location: "properties.a.items",
					Message: "the value at 'properties.a.items' allows null — under strict mode a model may answer null more often"},
				{Code: NullUnionEmission, Location: "properties.b",
					Message: "the value at 'properties.b' allows null — under strict mode a model may answer null more often"},
				{Code: NullUnionEmission, Location: "properties.c",
					Message: "the value at 'properties.c' allows null — under strict mode a model may answer null more often"},
			},
		},
		{
			name:   "null alone is not a union",
			schema: object(map[string]any{"a": map[string]any{"type": "null"}, "b": map[string]any{"enum": []any{nil}}}, "a", "b"),
			rules:  OpenAI,
			usable: true,
		},

		// $defs, refs and cycles
		{
			name: "definitions used twice are walked once",
			schema: decode(t, `{"type": "object", "additionalProperties": false, "required": ["a", "b"],
				"properties": {"a": {"$ref": "#/$defs/node"}, "b": {"$ref": "#/$defs/node"}},
				"$defs": {"node": {"type": "object", "required": ["id"], "properties": {"id": {"type": "string"}}}}}`),
			rules: OpenAI,
			notes: []Note{{Code: MissingAdditionalProperties, Refusal: true, Location: "$defs.node",
				Message: "add 'additionalProperties: false' at '$defs.node'"}},
		},
		{
			name: "the older definitions keyword",
			schema: decode(t, `{"type": "object", "additionalProperties": false, "required": ["a"],
				"properties": {"a": {"$ref": "#/definitions/n"}},
				"definitions": {"n": {"type": "integer", "maximum": 3}}}`),
			rules: Anthropic,
			notes: []Note{{Code: UnsupportedKeyword, Refusal: true, Location: "definitions.n",
				Message: "remove 'maximum' at 'definitions.n' (Anthropic's strict mode rejects it)"}},
		},
		{
			name: "an unused definition is still checked",
			schema: decode(t, `{"type": "object", "additionalProperties": false, "required": [], "properties": {},
				"$defs": {"spare": {"type": "object", "properties": {}}}}`),
			rules: Anthropic,
			codes: []Code{MissingAdditionalProperties},
		},
		{
			name: "a cycle between definitions is recursive under Anthropic",
			schema: decode(t, `{"type": "object", "additionalProperties": false, "required": ["a"],
				"properties": {"a": {"$ref": "#/$defs/a"}},
				"$defs": {
					"a": {"type": "object", "additionalProperties": false, "required": ["b"], "properties": {"b": {"$ref": "#/$defs/b"}}},
					"b": {"type": "array", "items": {"$ref": "#/$defs/a"}}
				}}`),
			rules: Anthropic,
			notes: []Note{{Code: UnsupportedKeyword, Refusal: true, Location: "$defs.b.items",
				Message: "remove the recursive '$ref: #/$defs/a' at '$defs.b.items' (Anthropic's strict mode rejects recursive schemas)"}},
		},
		{
			name: "a cycle between unused definitions is found",
			schema: decode(t, `{"type": "object", "additionalProperties": false, "required": [], "properties": {},
				"$defs": {
					"a": {"type": "array", "items": {"$ref": "#/$defs/b"}},
					"b": {"type": "array", "items": {"$ref": "#/$defs/a"}}
				}}`),
			rules: Anthropic,
			codes: []Code{UnsupportedKeyword},
		},
		{
			name: "a cycle between definitions is used under OpenAI",
			schema: decode(t, `{"type": "object", "additionalProperties": false, "required": ["a"],
				"properties": {"a": {"$ref": "#/$defs/a"}},
				"$defs": {
					"a": {"type": "object", "additionalProperties": false, "required": ["b"], "properties": {"b": {"$ref": "#/$defs/b"}}},
					"b": {"type": "array", "items": {"$ref": "#/$defs/a"}}
				}}`),
			rules:  OpenAI,
			usable: true,
		},
		{
			name: "a ref to a sibling is not recursive",
			schema: decode(t, `{"type": "object", "additionalProperties": false, "required": ["a", "b"],
				"properties": {"a": {"$ref": "#/properties/b"}, "b": {"type": "string", "maxLength": 3}}}`),
			rules:  Anthropic,
			usable: true,
			notes: []Note{{Code: UnenforcedKeyword, Location: "properties.b",
				Message: "'maxLength' at 'properties.b' is silently ignored or rejected by the API — either way enforced post-hoc by stepwise"}},
		},
		{
			name: "escaped pointer segments",
			schema: decode(t, `{"type": "object", "additionalProperties": false, "required": ["a"],
				"properties": {"a": {"$ref": "#/$defs/x~1y"}},
				"$defs": {"x/y": {"type": "integer", "minimum": 0}}}`),
			rules: Anthropic,
			notes: []Note{{Code: UnsupportedKeyword, Refusal: true, Location: "$defs.x/y",
				Message: "remove 'minimum' at '$defs.x/y' (Anthropic's strict mode rejects it)"}},
		},

		// tools
		{
			name:   "tools at load time",
			schema: object(map[string]any{"a": str}, "a"),
			rules:  Anthropic,
			ctx:    Context{HasTools: true},
			usable: true,
			notes: []Note{{Code: ToolsRuntimeAssessed, Location: "the schema root",
				Message: "this step can call tools (those its 'tools' list names, or the whole catalog without one), so its answer " +
					"is held to the schema only on its final round, when stepwise lets no tool be called and forces the schema; " +
					"earlier rounds are assessed at run time"}},
		},
		{
			name:   "tools at run time",
			schema: object(map[string]any{"a": str}, "a"),
			rules:  OpenAI,
			ctx:    Context{HasTools: true, Runtime: true},
			notes: []Note{{Code: UnsupportedContextTools, Refusal: true, Location: "the schema root",
				Message: "send the request without tools (this request carries tools, so its answer is not restricted to the schema)"}},
		},
		{
			name:   "no tools at run time",
			schema: object(map[string]any{"a": str}, "a"),
			rules:  OpenAI,
			ctx:    Context{Runtime: true},
			usable: true,
		},
		{
			name:   "tools at load time with caveats keeps both",
			schema: object(map[string]any{"a": str}),
			rules:  Anthropic,
			ctx:    Context{HasTools: true},
			usable: true,
			codes:  []Code{OptionalEmission, ToolsRuntimeAssessed},
		},
		{
			name:   "tools at load time on a refused schema drops the caveat",
			schema: object(map[string]any{"a": str}),
			rules:  OpenAI,
			ctx:    Context{HasTools: true},
			codes:  []Code{NotAllRequired},
		},
		{
			name:   "tools at run time follow the schema's refusals",
			schema: decode(t, `{"type": "object", "properties": {}}`),
			rules:  Anthropic,
			ctx:    Context{HasTools: true, Runtime: true},
			codes:  []Code{MissingAdditionalProperties, UnsupportedContextTools},
		},

		// ordering and rule values
		{
			name: "notes follow the walk in property name order",
			schema: object(map[string]any{
				"zeta":  map[string]any{"type": "integer", "minimum": 1.0},
				"alpha": map[string]any{"type": "object", "properties": map[string]any{}},
			}, "zeta", "alpha"),
			rules: Anthropic,
			notes: []Note{
				{Code: MissingAdditionalProperties, Refusal: true, Location: "properties.alpha",
					Message: "add 'additionalProperties: false' at 'properties.alpha'"},
				{Code: UnsupportedKeyword, Refusal: true, Location: "properties.zeta",
					Message: "remove 'minimum' at 'properties.zeta' (Anthropic's strict mode rejects it)"},
			},
		},
		{
			name:   "an unknown rule set is checked as Anthropic",
			schema: object(map[string]any{"n": map[string]any{"type": "integer", "minimum": 1.0}}, "n"),
			rules:  Rules(7),
			codes:  []Code{UnsupportedKeyword},
		},
		{
			name: "annotations pass",
			schema: decode(t, `{"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "t",
				"type": "object", "additionalProperties": false, "required": ["a"],
				"properties": {"a": {"type": "string", "description": "d", "default": "x", "examples": ["y"]}}}`),
			rules:  OpenAI,
			usable: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Check(tt.schema, tt.rules, tt.ctx)
			checkEachAgrees(t, tt.schema, tt.ctx)
			wantUsable := tt.usable
			if tt.notes != nil {
				if !reflect.DeepEqual(v.Notes, tt.notes) {
					t.Errorf("notes:\ngot  %+v\nwant %+v", v.Notes, tt.notes)
				}
			} else if !slices.Equal(v.Codes(), tt.codes) {
				t.Errorf("codes: got %v, want %v\nnotes: %+v", v.Codes(), tt.codes, v.Notes)
			}
			if v.Usable != wantUsable {
				t.Errorf("usable: got %v, want %v\nnotes: %+v", v.Usable, wantUsable, v.Notes)
			}
		})
	}
}

// checkEachAgrees fails t when CheckEach's verdicts on schema, from one
// walk under both rule sets, differ from Check's under each: notes, their
// order and their wording included.
func checkEachAgrees(t *testing.T, schema any, ctx Context) {
	t.Helper()
	each := CheckEach(schema, ctx)
	for _, rules := range []Rules{Anthropic, OpenAI} {
		if one := Check(schema, rules, ctx); !reflect.DeepEqual(each[rules], one) {
			t.Errorf("%s: CheckEach gives\n%+v\nwhere Check gives\n%+v", rules, each[rules], one)
		}
	}
}

// TestLoadErrorText checks that a refusal joins into the brief's load error.
func TestLoadErrorText(t *testing.T) {
	v := Check(decode(t, `{"type": "object", "properties": {}}`), Anthropic, Context{})
	got := "'structured_output: strict' is not eligible for this step's schema — " + v.Refusals()[0].Message
	want := "'structured_output: strict' is not eligible for this step's schema — add 'additionalProperties: false' at 'the schema root'"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// TestCheckIsDeterministic checks that the same schema always gives the same
// notes, though it is held in maps.
func TestCheckIsDeterministic(t *testing.T) {
	schema := realisticSchema(t)
	checkEachAgrees(t, schema, Context{HasTools: true})
	for _, rules := range []Rules{Anthropic, OpenAI} {
		first := Check(schema, rules, Context{})
		for range 20 {
			if again := Check(schema, rules, Context{}); !reflect.DeepEqual(again, first) {
				t.Fatalf("%s: notes changed between calls:\n%+v\n%+v", rules, first.Notes, again.Notes)
			}
		}
	}
}

// TestRulesString checks the names the run record writes.
func TestRulesString(t *testing.T) {
	tests := []struct {
		name  string
		rules Rules
		want  string
	}{
		{name: "anthropic", rules: Anthropic, want: "anthropic"},
		{name: "openai", rules: OpenAI, want: "openai"},
		{name: "unknown", rules: Rules(9), want: "Rules(9)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.rules.String(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestVerdictParts checks the accessors on a verdict holding both kinds of
// note.
func TestVerdictParts(t *testing.T) {
	refusal := Note{Code: UnsupportedKeyword, Refusal: true}
	caveat := Note{Code: UnenforcedKeyword}
	v := Verdict{Notes: []Note{caveat, refusal, caveat, refusal}}
	tests := []struct {
		name string
		got  any
		want any
	}{
		{name: "codes", got: v.Codes(), want: []Code{UnenforcedKeyword, UnsupportedKeyword}},
		{name: "refusals", got: v.Refusals(), want: []Note{refusal, refusal}},
		{name: "caveats", got: v.Caveats(), want: []Note{caveat, caveat}},
		{name: "no codes", got: Verdict{}.Codes(), want: []Code(nil)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !reflect.DeepEqual(tt.got, tt.want) {
				t.Errorf("got %v, want %v", tt.got, tt.want)
			}
		})
	}
}

// realisticSchema decodes a 30-property answer schema of the kind plans declare:
// nested objects, lists of objects, enums, null unions, a shared definition.
func realisticSchema(t testing.TB) any {
	return decode(t, realisticSchemaJSON)
}

const realisticSchemaJSON = `{
	"type": "object", "additionalProperties": false,
	"required": ["id", "title", "summary", "category", "priority", "status", "owner", "reviewers",
		"tags", "created", "due", "estimate", "confidence", "blocked", "blocker", "steps", "risks",
		"links", "notes", "language", "source", "score", "approved", "approver", "version",
		"parent", "children", "metrics", "decision", "followup"],
	"properties": {
		"id": {"type": "string", "pattern": "^[a-z0-9-]+$"},
		"title": {"type": "string", "minLength": 3, "maxLength": 120},
		"summary": {"type": "string", "description": "Two or three sentences."},
		"category": {"type": "string", "enum": ["billing", "technical", "account", "other"]},
		"priority": {"type": "integer", "enum": [1, 2, 3, 4]},
		"status": {"type": "string", "enum": ["open", "in_progress", "blocked", "done"]},
		"owner": {"$ref": "#/$defs/person"},
		"reviewers": {"type": "array", "items": {"$ref": "#/$defs/person"}, "maxItems": 5},
		"tags": {"type": "array", "items": {"type": "string"}},
		"created": {"type": "string", "format": "date-time"},
		"due": {"type": ["string", "null"], "format": "date"},
		"estimate": {"type": "number", "minimum": 0},
		"confidence": {"type": "number"},
		"blocked": {"type": "boolean"},
		"blocker": {"anyOf": [{"type": "string"}, {"type": "null"}]},
		"steps": {"type": "array", "items": {
			"type": "object", "additionalProperties": false, "required": ["n", "action", "done"],
			"properties": {"n": {"type": "integer"}, "action": {"type": "string"}, "done": {"type": "boolean"}}
		}},
		"risks": {"type": "array", "items": {
			"type": "object", "additionalProperties": false, "required": ["risk", "level"],
			"properties": {"risk": {"type": "string"}, "level": {"type": "string", "enum": ["low", "medium", "high"]}}
		}},
		"links": {"type": "array", "items": {"type": "string", "format": "uri"}},
		"notes": {"type": ["string", "null"]},
		"language": {"type": "string", "enum": ["en", "de", "fr", "es"]},
		"source": {"type": "string", "const": "triage"},
		"score": {"type": "integer"},
		"approved": {"type": "boolean"},
		"approver": {"anyOf": [{"$ref": "#/$defs/person"}, {"type": "null"}]},
		"version": {"type": "integer"},
		"parent": {"type": ["string", "null"]},
		"children": {"type": "array", "items": {"type": "string"}},
		"metrics": {
			"type": "object", "additionalProperties": false, "required": ["tokens", "seconds"],
			"properties": {"tokens": {"type": "integer"}, "seconds": {"type": "number"}}
		},
		"decision": {"type": "string"},
		"followup": {"type": "boolean"}
	},
	"$defs": {
		"person": {
			"type": "object", "additionalProperties": false, "required": ["name", "email"],
			"properties": {"name": {"type": "string"}, "email": {"type": "string", "format": "email"}}
		}
	}
}`

// BenchmarkCheck measures one check of a realistic 30-property schema under
// each rule set.
func BenchmarkCheck(b *testing.B) {
	schema := realisticSchema(b)
	for _, rules := range []Rules{Anthropic, OpenAI} {
		b.Run(rules.String(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Check(schema, rules, Context{})
			}
		})
	}
	b.Run("each", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			CheckEach(schema, Context{})
		}
	})
}
