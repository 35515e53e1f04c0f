package plans

import (
	"encoding/json"
	"slices"
	"strconv"
)

// compilesSurely reports whether raw (plain JSON data, as Value.Literal
// gives it) is a JSON Schema that the compiler accepts without fail: a
// boolean, or a mapping of the draft 2020-12 keywords below only, each
// holding what the meta-schema asks of it. Those keywords reach nothing
// outside the schema ($ref, $id, $schema are not among them) and compile
// no regular expression (pattern is not among them), so the schema passes
// the meta-schema and compiles. Load compiles such a schema on its first
// Check rather than at load: compiling and meta-validating a schema costs
// more than decoding the rest of its step. Any other schema is compiled at
// load, where the compiler says what is wrong with it; false says nothing
// more than that. FuzzCompilesSurely holds it to the compiler.
func compilesSurely(raw any) bool {
	switch s := raw.(type) {
	case bool:
		return true
	case map[string]any:
		for k, v := range s {
			if !keywordSure(k, v) {
				return false
			}
		}
		return true
	}
	return false
}

// keywordSure reports whether keyword k holding v is one compilesSurely
// knows and v is what the 2020-12 meta-schema asks of it.
func keywordSure(k string, v any) bool {
	switch k {
	case "properties":
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		for _, sub := range m {
			if !compilesSurely(sub) {
				return false
			}
		}
		return true
	case "items", "additionalProperties", "not", "propertyNames", "contains":
		return compilesSurely(v)
	case "allOf", "anyOf", "oneOf":
		l, ok := v.([]any)
		return ok && len(l) > 0 && !slices.ContainsFunc(l, func(sub any) bool { return !compilesSurely(sub) })
	case "type":
		switch t := v.(type) {
		case string:
			return slices.Contains(jsonTypes, t)
		case []any:
			return len(t) > 0 && uniqueStrings(t, jsonTypes)
		}
		return false
	case "required":
		l, ok := v.([]any)
		return ok && uniqueStrings(l, nil)
	case "enum", "examples":
		_, ok := v.([]any)
		return ok
	case "const", "default":
		return true
	case "title", "description", "$comment", "format":
		_, ok := v.(string)
		return ok
	case "uniqueItems", "deprecated", "readOnly", "writeOnly":
		_, ok := v.(bool)
		return ok
	case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		_, err := strconv.ParseFloat(string(n), 64)
		return err == nil
	case "multipleOf":
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		f, err := strconv.ParseFloat(string(n), 64)
		return err == nil && f > 0
	case "minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties":
		// A short run of digits is a non-negative integer that fits an int
		// wherever the compiler reads it.
		n, ok := v.(json.Number)
		return ok && len(n) > 0 && len(n) <= 9 && !slices.ContainsFunc([]byte(n), func(c byte) bool { return c < '0' || c > '9' })
	}
	return false
}

// uniqueStrings reports whether l holds only strings, no two equal, each
// one of allowed where allowed is not nil. A short list is searched in
// order, a long one through a set, so that the check stays linear.
func uniqueStrings(l []any, allowed []string) bool {
	var seen map[string]bool
	if len(l) > smallMapping {
		seen = make(map[string]bool, len(l))
	}
	for i, x := range l {
		s, ok := x.(string)
		switch {
		case !ok, allowed != nil && !slices.Contains(allowed, s):
			return false
		case seen == nil && slices.Contains(l[:i], x), seen[s]:
			return false
		}
		if seen != nil {
			seen[s] = true
		}
	}
	return true
}
