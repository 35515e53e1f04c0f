package strict

import "fmt"

// Rules names the rule set a schema is checked under: each model provider
// accepts a different subset of JSON Schema for strict structured output.
type Rules int

const (
	// Anthropic is the rule set of Anthropic's structured outputs. Files are
	// checked with it when they are loaded.
	Anthropic Rules = iota
	// OpenAI is the rule set of OpenAI's strict structured outputs.
	OpenAI
)

// String returns the rule set's name as the run record writes it
// ("anthropic", "openai").
func (r Rules) String() string {
	switch r {
	case Anthropic:
		return "anthropic"
	case OpenAI:
		return "openai"
	}
	return fmt.Sprintf("Rules(%d)", int(r))
}

// Code names the reason for a Note. The codes are part of the product's
// documented surface: validate output and run records print them.
type Code string

const (
	// NoSchema means the step has no schema, or its top level is not
	// type: object.
	NoSchema Code = "no_schema"
	// MissingAdditionalProperties means an object in the schema does not say
	// additionalProperties: false.
	MissingAdditionalProperties Code = "missing_additional_properties"
	// UnsupportedKeyword means the schema uses a keyword that the provider
	// rejects.
	UnsupportedKeyword Code = "unsupported_keyword"
	// TooManyOptionals means more than 24 properties are optional.
	TooManyOptionals Code = "too_many_optionals"
	// TooManyUnions means more than 16 optional properties have a union type.
	TooManyUnions Code = "too_many_unions"
	// NotAllRequired means a property is not listed in required; OpenAI
	// requires every property to be listed.
	NotAllRequired Code = "not_all_required"
	// ExceedsProviderLimit means the schema is larger than one of OpenAI's
	// limits, such as 10 levels of nesting.
	ExceedsProviderLimit Code = "exceeds_provider_limit"
	// UnenforcedKeyword means a keyword that the provider does not enforce.
	UnenforcedKeyword Code = "unenforced_keyword"
	// UnenforcedPattern means a pattern that the provider does not enforce.
	UnenforcedPattern Code = "unenforced_pattern"
	// UnenforcedFormat means a format value that the provider does not
	// enforce. Stepwise's loader accepts format in every schema (plans
	// written for other tools use it), so this caveat does occur.
	UnenforcedFormat Code = "unenforced_format"
	// OptionalEmission means the schema has an optional property; under
	// strict mode a model may leave it out more often.
	OptionalEmission Code = "optional_emission"
	// NullUnionEmission means a property allows null; under strict mode a
	// model may answer null more often.
	NullUnionEmission Code = "null_union_emission"
	// UnsupportedContextTools means the request carries tools, so its answer
	// is not restricted to the schema.
	UnsupportedContextTools Code = "unsupported_context_tools"
	// ToolsRuntimeAssessed means the step can call tools; shown when the file
	// is loaded, because whether the answer is restricted is decided per
	// request at run time.
	ToolsRuntimeAssessed Code = "tools_runtime_assessed"
)

// Note is one finding about a schema: a refusal, which keeps strict mode from
// being used, or a caveat, which lets it be used with part of the schema left
// to Stepwise's own check.
type Note struct {
	Code Code
	// Refusal is true when the finding makes the schema unusable for strict
	// mode, and false for a caveat ("used, with a note").
	Refusal bool
	// Location says where in the schema the finding is: "the schema root",
	// "properties.reason", "properties.items.items", "$defs.node".
	Location string
	// Message is a sentence a plan author can act on. A refusal's message
	// is phrased as the fix.
	Message string
}

// Verdict is the answer of Check.
type Verdict struct {
	// Usable is true when no note is a refusal.
	Usable bool
	// Notes are in schema walk order, properties sorted by name, followed by
	// whole-schema limits and then the context's notes. A refused verdict
	// holds only refusals.
	Notes []Note
}

// Codes returns the distinct codes of the verdict's notes, in order of first
// appearance.
func (v Verdict) Codes() []Code {
	var codes []Code
	for _, n := range v.Notes {
		seen := false
		for _, c := range codes {
			if c == n.Code {
				seen = true
				break
			}
		}
		if !seen {
			codes = append(codes, n.Code)
		}
	}
	return codes
}

// Refusals returns the notes that keep strict mode from being used.
func (v Verdict) Refusals() []Note {
	return v.filter(true)
}

// Caveats returns the notes that let strict mode be used with part of the
// schema unenforced by the provider.
func (v Verdict) Caveats() []Note {
	return v.filter(false)
}

// filter returns the notes whose Refusal field equals refusal.
func (v Verdict) filter(refusal bool) []Note {
	var out []Note
	for _, n := range v.Notes {
		if n.Refusal == refusal {
			out = append(out, n)
		}
	}
	return out
}

// Context is what Check knows about the step and the moment of the check
// beyond the schema itself.
type Context struct {
	// HasTools is true when the step can call tools: it names some, or it
	// names none and gets the whole catalog, and it has more than one round.
	HasTools bool
	// Runtime is false when a file is being checked at load time, and true
	// when one request is being checked at run time.
	Runtime bool
}

// rootLocation is how notes name the top level of a schema.
const rootLocation = "the schema root"

// Check decides whether schema can be sent as strict structured output under
// rules, in the given context. schema is decoded JSON (maps, lists, strings,
// numbers, booleans); nil means the step has no schema.
func Check(schema any, rules Rules, ctx Context) Verdict {
	var v [1]Verdict
	check(schema, []*ruleSet{ruleSetFor(rules)}, ctx, v[:])
	return v[0]
}

// CheckEach decides what Check decides under every rule set, in one walk
// of schema: the verdicts, indexed by Rules.
func CheckEach(schema any, ctx Context) [OpenAI + 1]Verdict {
	var v [OpenAI + 1]Verdict
	check(schema, []*ruleSet{Anthropic: anthropicRules, OpenAI: openAIRules}, ctx, v[:])
	return v
}

// check writes to verdicts the verdict of each of rules on schema.
func check(schema any, rules []*ruleSet, ctx Context, verdicts []Verdict) {
	if schema == nil {
		for i := range rules {
			verdicts[i] = verdictOf([]Note{{
				Code:     NoSchema,
				Refusal:  true,
				Location: rootLocation,
				Message:  "give the step an 'output_schema' (or 'input_schema') with 'type: object' at its top level",
			}})
		}
		return
	}
	root, ok := schema.(map[string]any)
	if !ok || !isRootObject(root) {
		for i := range rules {
			verdicts[i] = verdictOf([]Note{{
				Code:     NoSchema,
				Refusal:  true,
				Location: rootLocation,
				Message:  "write 'type: object' at 'the schema root' (strict mode needs an object at the top level)",
			}})
		}
		return
	}
	w := newWalker(rules, root)
	depth := w.walk(root, "")
	w.limits(depth)
	for i := range rules {
		switch {
		case ctx.HasTools && ctx.Runtime:
			w.refuse(i, UnsupportedContextTools, "",
				"send the request without tools (this request carries tools, so its answer is not restricted to the schema)")
		case ctx.HasTools:
			w.caveat(i, ToolsRuntimeAssessed, "",
				"this step can call tools (those its 'tools' list names, or the whole catalog without one), so its answer "+
					"is held to the schema only on its final round, when stepwise lets no tool be called and forces the schema; "+
					"earlier rounds are assessed at run time")
		}
		verdicts[i] = verdictOf(w.notes[i])
	}
}

// verdictOf builds the verdict for notes, keeping only the refusals when
// there are any: caveats describe strict mode in use, and it will not be.
func verdictOf(notes []Note) Verdict {
	refusals := Verdict{Notes: notes}.Refusals()
	if len(refusals) > 0 {
		return Verdict{Usable: false, Notes: refusals}
	}
	return Verdict{Usable: true, Notes: notes}
}

// isRootObject reports whether the top level of a schema is a plain object:
// it says type: object, or says no type and lists properties.
func isRootObject(root map[string]any) bool {
	if _, typed := root["type"]; !typed {
		_, hasProperties := root["properties"]
		return hasProperties
	}
	types := typeNames(root)
	return len(types) == 1 && types[0] == "object"
}
