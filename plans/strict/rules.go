package strict

import "math"

// treatment is what a rule set does with a keyword that needs no closer look
// at its value.
type treatment int

// The zero treatment accepts a keyword without a note, as it does every
// keyword a rule set does not name.
const (
	// refused keywords are unsupported_keyword.
	refused treatment = iota + 1
	// unenforced keywords are unenforced_keyword caveats.
	unenforced
)

// ruleSet is one provider's rules, as data, so that the walk is written once.
// A zero limit means the provider has no such limit.
type ruleSet struct {
	// provider is the provider's name as messages write it.
	provider string
	// keywords maps keywords to their treatment; keywords whose treatment
	// depends on their value or place are handled by the walk.
	keywords map[string]treatment
	// formats are the format values the provider enforces.
	formats map[string]bool
	// maxEnforcedMinItems is the largest minItems the provider enforces.
	maxEnforcedMinItems float64
	// patternUnenforced makes every pattern an unenforced_pattern caveat.
	patternUnenforced bool
	// everyPropertyRequired refuses any property missing from required;
	// otherwise each optional property gets an optional_emission caveat.
	everyPropertyRequired bool
	// notesNullUnions gives each union that allows null a
	// null_union_emission caveat.
	notesNullUnions bool
	// rejectsRecursion refuses a $ref back to an enclosing schema.
	rejectsRecursion bool
	// rejectsRootAnyOf refuses anyOf at the top level.
	rejectsRootAnyOf bool
	// rejectsComplexEnum refuses object and array values in enum.
	rejectsComplexEnum bool
	// rejectsAllOfRef refuses a $ref among the branches of allOf.
	rejectsAllOfRef bool
	// maxOptionals and maxOptionalUnions bound the optional properties, and
	// the optional properties with a union type, in the whole schema.
	maxOptionals, maxOptionalUnions int
	// maxDepth bounds object nesting, the top level being level 1.
	maxDepth int
	// maxProperties, maxEnumValues and maxChars bound the whole schema's
	// properties, enum values, and characters in names and values.
	maxProperties, maxEnumValues, maxChars int
	// largeEnum and maxLargeEnumChars bound one enum: one with more than
	// largeEnum values may hold at most maxLargeEnumChars characters.
	largeEnum, maxLargeEnumChars int
}

// refusedByBoth lists keywords neither provider accepts in strict mode.
var refusedByBoth = []string{
	"$dynamicAnchor", "$dynamicRef", "$recursiveAnchor", "$recursiveRef",
	"additionalItems", "contains", "dependencies", "dependentRequired",
	"dependentSchemas", "else", "if", "maxContains", "minContains", "not",
	"oneOf", "patternProperties", "prefixItems", "propertyNames", "then",
	"unevaluatedItems", "unevaluatedProperties",
}

// keywordTable builds a keyword table from the shared refusals and a rule
// set's own entries.
func keywordTable(own map[string]treatment) map[string]treatment {
	table := make(map[string]treatment, len(refusedByBoth)+len(own))
	for _, k := range refusedByBoth {
		table[k] = refused
	}
	for k, t := range own {
		table[k] = t
	}
	return table
}

// commonFormats are the format values both providers enforce.
var commonFormats = []string{
	"date", "date-time", "duration", "email", "hostname", "ipv4", "ipv6", "time", "uuid",
}

// formatSet builds a set of format values from the common ones and extra.
func formatSet(extra ...string) map[string]bool {
	set := make(map[string]bool, len(commonFormats)+len(extra))
	for _, f := range commonFormats {
		set[f] = true
	}
	for _, f := range extra {
		set[f] = true
	}
	return set
}

// anthropicRules are Anthropic's structured-output rules.
var anthropicRules = &ruleSet{
	provider: "Anthropic",
	keywords: keywordTable(map[string]treatment{
		"minimum":          refused,
		"maximum":          refused,
		"exclusiveMinimum": refused,
		"exclusiveMaximum": refused,
		"multipleOf":       refused,
		"minLength":        unenforced,
		"maxLength":        unenforced,
		"maxItems":         unenforced,
		"uniqueItems":      unenforced,
		"minProperties":    unenforced,
		"maxProperties":    unenforced,
	}),
	formats:             formatSet("uri"),
	maxEnforcedMinItems: 1,
	patternUnenforced:   true,
	rejectsRecursion:    true,
	rejectsComplexEnum:  true,
	rejectsAllOfRef:     true,
	maxOptionals:        24,
	maxOptionalUnions:   16,
}

// openAIRules are OpenAI's strict structured-output rules.
var openAIRules = &ruleSet{
	provider: "OpenAI",
	keywords: keywordTable(map[string]treatment{
		"allOf":         refused,
		"minProperties": refused,
		"maxProperties": refused,
		"uniqueItems":   refused,
	}),
	formats:               formatSet(),
	maxEnforcedMinItems:   math.Inf(1),
	everyPropertyRequired: true,
	notesNullUnions:       true,
	rejectsRootAnyOf:      true,
	maxDepth:              10,
	maxProperties:         5000,
	maxEnumValues:         1000,
	maxChars:              15000,
	largeEnum:             250,
	maxLargeEnumChars:     7500,
}

// ruleSetFor returns the rules for r; values other than OpenAI get
// Anthropic's, the rules files are loaded with.
func ruleSetFor(r Rules) *ruleSet {
	if r == OpenAI {
		return openAIRules
	}
	return anthropicRules
}
