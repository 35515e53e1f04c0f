// Package template is the Stepwise template language: the small, strict,
// logic-less dialect that moves data between plan steps. Plan inputs, solver
// templates and user-tool arguments all use it.
//
// A Template is parsed once (Parse) into an immutable tree and rendered many
// times against a Scope, possibly from many goroutines at once. Rendering is a
// pure function of the template and the scope: it reads no clock, no globals
// and no randomness.
//
// # Tags
//
//	{{path}}              a variable: the value at path
//	{{#path}}…{{/path}}   a section: iterate a list, or gate on truthiness
//	{{^path}}…{{/path}}   an inverted section: render when the value is falsy
//
// Whitespace just inside the braces and after a section sigil is allowed, so
// {{ E0.x }} and {{# E0.values }} are the same tags as {{E0.x}} and
// {{#E0.values}}. A lone "{" or "}}" outside a tag is plain text. There is no
// escape for a literal "{{": every "{{" opens a tag.
//
// # Paths
//
// A path is dot-separated segments. The first segment of a root-anchored path
// names a root of the scope (a step id, input, item, index or accumulator).
// Segments are made of letters, digits, '_', '-' and '$'. A segment of
// digits indexes a list (leading zeros are allowed; an index past the end is
// an EmptyDataError) and is a plain key on an object. The segment "length"
// gives the length of a list, or the rune count of a string; on an object it
// reads a key literally named "length", and an object without one is a
// BadPathError. Because a length is a number, walking past it fails the way
// walking into any number fails, so in practice "length" ends a path.
//
// {{.}} is the current section item. {{@index}} (0-based), {{@first}} and
// {{@last}} are loop variables; they stand alone (no segments after them) and
// work both as variables and as sections, as in the comma idiom
//
//	{{#E1.values}}{{title}}{{^@last}}, {{/@last}}{{/E1.values}}
//
// # Typed splice and text
//
// A template that is exactly one variable tag, with nothing around it (not
// even whitespace), is a typed splice: Render returns the raw value, so
// numbers stay numbers and lists stay lists. The value is shared with the
// scope, not copied. Every other template renders to a string in which
// strings appear raw, numbers as their JSON text (a json.Number verbatim,
// floats exactly as encoding/json prints them), booleans as true and false,
// null as null, and lists and objects as compact JSON with sorted keys and
// no HTML escaping. A NaN or infinite float has no JSON text and is an error
// in text, though a splice returns it as is.
//
// # Sections and scoping
//
// A section over a list renders its body once per element, with that element
// as the current item; an empty list renders nothing. Any other truthy value
// renders the body once with the value itself as the current item. The falsy
// values are: missing, null, false, "", the empty list and the empty object.
// Numbers, zero included, are truthy: sections test presence, not
// arithmetic. An inverted section renders its body exactly when the section
// would not, and pushes no item.
//
// Inside the body of a section, a bare (single-segment) key reads the current
// item first, then the items of enclosing sections from the inside out, then
// the roots; only object items have keys. A bare key found nowhere renders
// empty, because list items legitimately omit optional fields. A dotted path
// is root-anchored everywhere, inside sections too. A section whose path does
// not resolve (missing root, bad path, empty data) is simply falsy: sections
// are conditionals.
//
// Only sections over a value push an item. Inverted sections push none (the
// value they test is falsy, so there is nothing to read), and neither do
// sections on loop variables, which gate inside the current iteration: in
// {{#@first}}{{.}}{{/@first}} the dot is still the list element. A bare key
// under no item-pushing section is an ordinary root read, and a {{.}} there
// reads nothing: it renders empty, is falsy as a section, and is nil as a
// splice. Static checks see such a {{.}} as a Ref with ItemRead unset and
// report it, as they report loop variables outside any section.
//
// Loop variables belong to the nearest enclosing section that iterates a
// list; sections over non-list values are transparent to them, so
// {{#owner}}{{@index}}{{/owner}} inside a list section still counts the list.
// With no list section around them they describe a single iteration: @index
// is 0 and @first and @last are true. Reporting loop variables outside any
// section is left to static checks, which see them through Refs.
//
// # Errors
//
// Parse reports unsupported or malformed syntax as a *SyntaxError carrying
// the byte offset of the problem: comments, partials, inheritance, triple
// braces, {{&…}}, delimiter changes, unbalanced sections, empty tags, empty
// path segments, spaces inside a path, unknown loop variables, and anything
// else that is not a path.
//
// A root-anchored variable that does not resolve is a typed error, never a
// silent empty string:
//
//   - *MissingStepError: the first segment names no root of the scope. The
//     message lists the roots that do exist.
//   - *BadPathError: the data exists but the path walks off it (an object
//     without the key, a segment on a scalar, a non-numeric segment on a
//     list). For objects the message lists the keys that exist.
//   - *EmptyDataError: the path is plausible but the data ran out (an empty
//     list, an index out of range, walking into null, or walking into an
//     empty object, which has no keys to suggest).
package template
