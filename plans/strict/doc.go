// Package strict decides whether an agent step's JSON Schema can be sent to a
// model provider as strict structured output ("strict mode"), under the rule
// set of one provider.
//
// Check is a pure function of the schema, the rule set and the context: it
// reads nothing and changes nothing, so the loader can call it with
// Anthropic's rules when a file is loaded and the agent can call it again
// with the rules of the provider in use before each request. It answers with
// a Verdict: whether strict mode can be used, and a Note for each reason it
// cannot (a refusal) or each part of the schema the provider will not enforce
// (a caveat). Refusal messages are written as the fix, so that a caller can
// print "'structured_output: strict' is not eligible for this step's schema
// — " followed by the message.
//
// # Decisions shared by both rule sets
//
//   - A step without a schema, or whose schema's top level is not an object,
//     is refused with no_schema and nothing else is checked. The top level is
//     an object when it says type: object (or type: [object]), or says no
//     type and has properties. A nullable top level (type: [object, null])
//     and a top level that is only a $ref are refused too: both providers
//     want a plain object there.
//   - Every object, at any depth and in $defs, must say additionalProperties:
//     false. A missing one and one set to anything else (true, a schema) are
//     both missing_additional_properties, because both let the model invent
//     keys. A schema node is an object when its type includes object, or it
//     says no type and has properties.
//   - The schema is walked in a fixed order, so that the notes are the same
//     on every call: a node's own keywords in name order, then its
//     properties in name order, then items, anyOf, oneOf, allOf, the target
//     of its $ref, $defs and definitions. oneOf and allOf branches are
//     walked even where the keyword is refused, because the fix rewrites
//     them rather than removing them; subschemas under the other refused
//     keywords (not, if/then/else, patternProperties and the like) are not
//     walked, because the fix removes them.
//   - A local $ref (one starting with "#") is followed; its target is walked
//     once, however many references lead to it, and its notes carry the
//     target's location ("$defs.node"). A $ref that leads back to a schema
//     that encloses it is recursive. A $ref that leaves the schema, names an
//     anchor, or points at nothing is unsupported_keyword under both rule
//     sets, because neither provider can follow it.
//   - oneOf is refused under both rule sets (neither lists it; anyOf is the
//     supported union), as are prefixItems, a list-valued items,
//     additionalItems, unevaluatedItems, contains, minContains, maxContains,
//     dependentRequired, dependentSchemas, dependencies, patternProperties,
//     unevaluatedProperties, propertyNames, not, if, then, else and the
//     dynamic and recursive reference keywords.
//   - A boolean schema (true or false) or any other non-object where a schema
//     belongs is unsupported_keyword: strict mode needs a schema object for
//     every value.
//   - Keywords that only annotate (title, description, default, examples,
//     $comment and any keyword neither provider is known to reject) pass.
//   - A refused verdict carries only its refusals. Caveats describe how
//     strict mode behaves when it is used, and with a refusal it is not;
//     they come back once the refusals are fixed.
//   - Context: a step that can call tools gets the caveat
//     tools_runtime_assessed when its file is checked, because its answer is
//     held to the schema only on the final round, when Stepwise lets no tool
//     be called (tool choice none). A run-time request whose model may call
//     tools is refused with unsupported_context_tools, because its answer
//     is not restricted.
//
// # Anthropic
//
//   - Numeric constraints (minimum, maximum, exclusiveMinimum,
//     exclusiveMaximum, multipleOf) are unsupported_keyword.
//   - Recursive schemas are unsupported_keyword, reported at the $ref that
//     closes the cycle.
//   - Length and count constraints (minLength, maxLength, maxItems, minItems
//     above 1, uniqueItems, minProperties, maxProperties) are
//     unenforced_keyword caveats: the provider drops or refuses them and
//     Stepwise's own check enforces them.
//   - pattern is an unenforced_pattern caveat, because only a subset of
//     regular expressions is supported and Stepwise cannot tell which ahead
//     of time.
//   - format values date-time, time, date, duration, email, hostname, uri,
//     ipv4, ipv6 and uuid are enforced; any other is unenforced_format.
//   - anyOf, allOf, enum, const, $ref and $defs are accepted, except an allOf
//     with a $ref among its branches and an enum with object or array values,
//     which are unsupported_keyword.
//   - Optional properties are accepted with an optional_emission caveat
//     each, up to 24 in the whole schema; more is too_many_optionals. More
//     than 16 optional properties whose type is a union (a type list with
//     more than one entry, or anyOf, looked up through $ref) is
//     too_many_unions. A $defs entry referenced many times counts once.
//   - null in a union is accepted without a note.
//
// # OpenAI
//
//   - Every property must be listed in required: each one that is not is a
//     not_all_required refusal, reported at the object that holds it. An
//     optional value is written as a union with null instead.
//   - A union that allows null (a type list with null and another type, an
//     anyOf or oneOf branch of type null, or an enum with null and another
//     value) is a null_union_emission caveat.
//   - The top level must not be an anyOf, and allOf, minProperties,
//     maxProperties and uniqueItems are unsupported_keyword, as are the
//     keywords refused under both rule sets.
//   - Numeric constraints, minLength, maxLength, minItems, maxItems and
//     pattern are accepted without a note.
//   - format values date-time, time, date, duration, email, hostname, ipv4,
//     ipv6 and uuid are enforced; any other is unenforced_format.
//   - Recursive schemas are accepted.
//   - Limits, each exceeds_provider_limit: objects nested more than 10 levels
//     deep (the top level is level 1; arrays and unions between objects add
//     no level; a recursive $ref adds none); more than 5000 properties in
//     all; more than 1000 enum values in all; more than 15000 characters in
//     property names, definition names, string enum values and string const
//     values together; and one enum of more than 250 values whose strings
//     total more than 7500 characters.
//
// Rules values other than Anthropic and OpenAI are checked with Anthropic's
// rules, the rules a file is loaded with.
package strict
