package config

import (
	"reflect"
)

// JSONSchema is the JSON Schema (draft 2020-12) of a config.toml, for
// editors: Taplo completes and checks the file while it is typed. It is
// made from the Config type the loader decodes the file into, so that a
// key the loader knows is one the schema offers; what the loader checks
// beyond the shape (a model's provider exists, ${VAR}s, paths) stays the
// loader's.
func JSONSchema() map[string]any {
	s := typeSchema(reflect.TypeFor[Config]())
	s["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	s["title"] = "Stepwise configuration (config.toml)"
	return s
}

// enums are the values of the string types that take a few.
var enums = map[reflect.Type][]string{
	reflect.TypeFor[ProviderType](): func() []string {
		out := make([]string, len(providerTypes))
		for i, t := range providerTypes {
			out[i] = string(t)
		}
		return out
	}(),
	reflect.TypeFor[Backend](): {string(BackendSQLite), string(BackendMemory)},
}

// typeSchema is the schema of the TOML values that decode into t.
func typeSchema(t reflect.Type) map[string]any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if values, ok := enums[t]; ok {
		list := make([]any, len(values))
		for i, v := range values {
			list[i] = v
		}
		return map[string]any{"enum": list}
	}
	switch t.Kind() {
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int64:
		return map[string]any{"type": "integer"}
	case reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Slice:
		return map[string]any{"type": "array", "items": typeSchema(t.Elem())}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": typeSchema(t.Elem())}
	case reflect.Struct:
		props := map[string]any{}
		for i := range t.NumField() {
			if k, ok := tomlKey(t.Field(i)); ok {
				props[k] = typeSchema(t.Field(i).Type)
			}
		}
		// An unknown key is a warning of the loader's, with a did-you-mean;
		// the editor flags it as it is typed.
		return map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	}
	// any: a free-form value (an output schema, a tool's arguments).
	return map[string]any{}
}
