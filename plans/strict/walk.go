package strict

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// walker carries one walk through a schema under one or more rule sets:
// the notes so far of each, the schemas already walked, and the
// whole-schema tallies the limits are judged on. The walk, the tallies
// and the depth are the same under every rule set; only what each rule set
// notes of them differs, so one walk judges them all.
type walker struct {
	rules []*ruleSet
	root  map[string]any
	notes [][]Note // by index in rules
	keys  []string // the keys of the schemas being walked, innermost last (see sortedKeys)
	// open holds the JSON pointers of the schemas being walked, each an
	// ancestor of the current one; a $ref to one of them is recursive.
	open map[string]bool
	// depths holds the object levels from each schema entered down, by JSON
	// pointer, so that a $ref target is walked once however many refs lead
	// to it.
	depths map[string]int

	optionals, optionalUnions     int
	properties, enumValues, chars int
}

// newWalker starts a walk over root under rules.
func newWalker(rules []*ruleSet, root map[string]any) *walker {
	return &walker{
		rules:  rules,
		root:   root,
		notes:  make([][]Note, len(rules)),
		open:   make(map[string]bool),
		depths: make(map[string]int),
	}
}

// refuse records a refusal of the i-th rule set at the schema ptr points
// to.
func (w *walker) refuse(i int, code Code, ptr, message string) {
	w.notes[i] = append(w.notes[i], Note{Code: code, Refusal: true, Location: location(ptr), Message: message})
}

// caveat records a caveat of the i-th rule set at the schema ptr points
// to.
func (w *walker) caveat(i int, code Code, ptr, message string) {
	w.notes[i] = append(w.notes[i], Note{Code: code, Location: location(ptr), Message: message})
}

// unenforced records that the i-th rule set leaves what, at ptr, to
// Stepwise's own check.
func (w *walker) unenforced(i int, code Code, ptr, what string) {
	w.caveat(i, code, ptr, fmt.Sprintf(
		"'%s' at '%s' is silently ignored or rejected by the API — either way enforced post-hoc by stepwise",
		what, location(ptr)))
}

// rejectKeyword records that the provider of the i-th rule set rejects
// keyword at ptr.
func (w *walker) rejectKeyword(i int, ptr, keyword string) {
	// oneOf has a supported spelling, so its fix is a rewrite, not removal.
	if keyword == "oneOf" {
		w.refuse(i, UnsupportedKeyword, ptr, fmt.Sprintf(
			"write 'oneOf' at '%s' as 'anyOf' (%s's strict mode rejects 'oneOf')", location(ptr), w.rules[i].provider))
		return
	}
	w.refuse(i, UnsupportedKeyword, ptr, fmt.Sprintf(
		"remove '%s' at '%s' (%s's strict mode rejects it)", keyword, location(ptr), w.rules[i].provider))
}

// walk checks the schema v found at ptr and everything below it, and returns
// the number of object levels from v down, counting v itself.
func (w *walker) walk(v any, ptr string) int {
	if depth, done := w.depths[ptr]; done {
		return depth
	}
	// Marking the schema entered before walking it keeps a later ref from
	// walking it again; a ref back into it is caught by open first.
	w.depths[ptr] = 0
	node, ok := v.(map[string]any)
	if !ok {
		for i := range w.rules {
			w.refuse(i, UnsupportedKeyword, ptr, fmt.Sprintf(
				"replace '%s' at '%s' with a schema object (strict mode needs one for every value)",
				describe(v), location(ptr)))
		}
		return 0
	}
	w.open[ptr] = true
	depth := w.schema(node, ptr)
	delete(w.open, ptr)
	w.depths[ptr] = depth
	return depth
}

// schema checks one schema object: its keywords, its object rules, then its
// subschemas in walk order. It returns the object levels from node down.
func (w *walker) schema(node map[string]any, ptr string) int {
	keys := w.sortedKeys(node)
	for _, key := range keys {
		w.keyword(node, key, ptr)
	}
	w.release(keys)
	nullable := allowsNull(node)
	for i, r := range w.rules {
		if r.notesNullUnions && nullable {
			w.caveat(i, NullUnionEmission, ptr, fmt.Sprintf(
				"the value at '%s' allows null — under strict mode a model may answer null more often",
				location(ptr)))
		}
	}
	object := isObject(node)
	below := 0
	if object {
		below = w.object(node, ptr)
	}
	if items, has := node["items"]; has {
		if _, tuple := items.([]any); !tuple {
			below = max(below, w.walk(items, join(ptr, "items")))
		}
	}
	for _, key := range []string{"anyOf", "oneOf", "allOf"} {
		branches, _ := node[key].([]any)
		for i, branch := range branches {
			below = max(below, w.walk(branch, join(ptr, key, strconv.Itoa(i))))
		}
	}
	if ref, has := node["$ref"]; has {
		below = max(below, w.follow(ref, ptr))
	}
	for _, key := range []string{"$defs", "definitions"} {
		defs, _ := node[key].(map[string]any)
		names := w.sortedKeys(defs)
		for _, name := range names {
			w.chars += utf8.RuneCountInString(name)
			// A definition adds depth only where a $ref uses it.
			w.walk(defs[name], join(ptr, key, name))
		}
		w.release(names)
	}
	if object {
		return below + 1
	}
	return below
}

// keyword checks one keyword of node whose treatment is not structural,
// under each rule set.
func (w *walker) keyword(node map[string]any, key, ptr string) {
	value := node[key]
	switch key {
	case "enum":
		w.enum(value, ptr)
		return
	case "const":
		if s, ok := value.(string); ok {
			w.chars += utf8.RuneCountInString(s)
		}
		return
	}
	for i, r := range w.rules {
		switch key {
		case "pattern":
			if r.patternUnenforced {
				w.unenforced(i, UnenforcedPattern, ptr, "pattern")
			}
		case "format":
			if s, ok := value.(string); !ok || !r.formats[s] {
				w.unenforced(i, UnenforcedFormat, ptr, "format: "+describe(value))
			}
		case "minItems":
			if n, ok := number(value); !ok || n > r.maxEnforcedMinItems {
				w.unenforced(i, UnenforcedKeyword, ptr, "minItems")
			}
		case "items":
			if _, tuple := value.([]any); tuple {
				w.refuse(i, UnsupportedKeyword, ptr, fmt.Sprintf(
					"write 'items' at '%s' as one schema (%s's strict mode rejects a list of item schemas)",
					location(ptr), r.provider))
			}
		case "anyOf":
			if ptr == "" && r.rejectsRootAnyOf {
				w.refuse(i, UnsupportedKeyword, ptr, fmt.Sprintf(
					"remove 'anyOf' at '%s' (%s's strict mode needs a plain object at the top level)",
					location(ptr), r.provider))
			}
		case "allOf":
			if r.keywords[key] == refused {
				w.rejectKeyword(i, ptr, key)
			} else if r.rejectsAllOfRef && hasRefBranch(value) {
				w.refuse(i, UnsupportedKeyword, ptr, fmt.Sprintf(
					"write out the '$ref' inside 'allOf' at '%s' (%s's strict mode rejects a reference there)",
					location(ptr), r.provider))
			}
		default:
			switch r.keywords[key] {
			case refused:
				w.rejectKeyword(i, ptr, key)
			case unenforced:
				w.unenforced(i, UnenforcedKeyword, ptr, key)
			}
		}
	}
}

// enum tallies an enum's values and checks what each rule set says of one
// enum.
func (w *walker) enum(value any, ptr string) {
	values, _ := value.([]any)
	w.enumValues += len(values)
	chars, complex := 0, false
	for _, v := range values {
		switch v := v.(type) {
		case string:
			chars += utf8.RuneCountInString(v)
		case map[string]any, []any:
			complex = true
		}
	}
	w.chars += chars
	for i, r := range w.rules {
		if complex && r.rejectsComplexEnum {
			w.refuse(i, UnsupportedKeyword, ptr, fmt.Sprintf(
				"remove the object and list values from 'enum' at '%s' (%s's strict mode rejects them)",
				location(ptr), r.provider))
		}
		if r.largeEnum > 0 && len(values) > r.largeEnum && chars > r.maxLargeEnumChars {
			w.refuse(i, ExceedsProviderLimit, ptr, fmt.Sprintf(
				"cut 'enum' at '%s' to at most %d values or %d characters (it has %d values and %d characters)",
				location(ptr), r.largeEnum, r.maxLargeEnumChars, len(values), chars))
		}
	}
}

// object checks the rules for an object schema and walks its properties in
// name order. It returns the object levels below node.
func (w *walker) object(node map[string]any, ptr string) int {
	for i := range w.rules {
		switch extra, has := node["additionalProperties"]; {
		case !has:
			w.refuse(i, MissingAdditionalProperties, ptr, fmt.Sprintf(
				"add 'additionalProperties: false' at '%s'", location(ptr)))
		case extra != false:
			w.refuse(i, MissingAdditionalProperties, ptr, fmt.Sprintf(
				"set 'additionalProperties: false' at '%s' (it is '%s' now)", location(ptr), describe(extra)))
		}
	}
	props, _ := node["properties"].(map[string]any)
	required, _ := node["required"].([]any)
	below := 0
	names := w.sortedKeys(props)
	defer w.release(names)
	for _, name := range names {
		child := join(ptr, "properties", name)
		w.properties++
		w.chars += utf8.RuneCountInString(name)
		if !slices.Contains(required, any(name)) {
			w.optional(props[name], name, ptr, child)
		}
		below = max(below, w.walk(props[name], child))
	}
	return below
}

// optional tallies and notes, under each rule set, the optional property
// name, whose schema prop sits at child inside the object at ptr.
func (w *walker) optional(prop any, name, ptr, child string) {
	w.optionals++
	if w.isUnion(prop) {
		w.optionalUnions++
	}
	for i, r := range w.rules {
		if r.everyPropertyRequired {
			w.refuse(i, NotAllRequired, ptr, fmt.Sprintf(
				"list '%s' in 'required' at '%s' (%s requires every property; write an optional one as a union with null)",
				name, location(ptr), r.provider))
			continue
		}
		w.caveat(i, OptionalEmission, child, fmt.Sprintf(
			"'%s' at '%s' is optional — under strict mode a model may leave it out more often; list it in 'required' if every answer needs it",
			name, location(child)))
	}
}

// follow walks the target of the $ref ref found at ptr, and returns the
// object levels it adds; a recursive reference adds none.
func (w *walker) follow(ref any, ptr string) int {
	s, _ := ref.(string)
	target, key, problem := w.resolve(s)
	if problem != "" {
		for i := range w.rules {
			w.refuse(i, UnsupportedKeyword, ptr, fmt.Sprintf(
				"point '$ref' at '%s' to a schema in this one's '$defs' (%s)", location(ptr), problem))
		}
		return 0
	}
	if w.open[key] {
		for i, r := range w.rules {
			if r.rejectsRecursion {
				w.refuse(i, UnsupportedKeyword, ptr, fmt.Sprintf(
					"remove the recursive '$ref: %s' at '%s' (%s's strict mode rejects recursive schemas)",
					s, location(ptr), r.provider))
			}
		}
		return 0
	}
	return w.walk(target, key)
}

// resolve finds the schema a local $ref points to, and the JSON pointer it
// is walked under. problem says why a ref cannot be followed.
func (w *walker) resolve(ref string) (target any, key, problem string) {
	pointer, local := strings.CutPrefix(ref, "#")
	if !local || (pointer != "" && !strings.HasPrefix(pointer, "/")) {
		return nil, "", fmt.Sprintf("'%s' is outside this schema", ref)
	}
	target = w.root
	if pointer == "" {
		return target, "", ""
	}
	for _, raw := range strings.Split(pointer[1:], "/") {
		segment := unescapeSegment(raw)
		switch parent := target.(type) {
		case map[string]any:
			child, ok := parent[segment]
			if !ok {
				return nil, "", fmt.Sprintf("'%s' points at nothing", ref)
			}
			target = child
		case []any:
			i, err := strconv.Atoi(segment)
			if err != nil || i < 0 || i >= len(parent) {
				return nil, "", fmt.Sprintf("'%s' points at nothing", ref)
			}
			target = parent[i]
		default:
			return nil, "", fmt.Sprintf("'%s' points at nothing", ref)
		}
		key = join(key, segment)
	}
	return target, key, ""
}

// isUnion reports whether prop's type is a union: a type list of more than
// one type, or an anyOf or oneOf, looked up through $ref.
func (w *walker) isUnion(prop any) bool {
	var seen []string
	for {
		node, ok := prop.(map[string]any)
		if !ok {
			return false
		}
		if len(typeNames(node)) > 1 || node["anyOf"] != nil || node["oneOf"] != nil {
			return true
		}
		ref, isRef := node["$ref"].(string)
		if !isRef {
			return false
		}
		target, key, problem := w.resolve(ref)
		if problem != "" || slices.Contains(seen, key) {
			return false
		}
		seen = append(seen, key)
		prop = target
	}
}

// limits records, under each rule set, the whole-schema limits the walk's
// tallies exceed, given the object depth of the whole schema.
func (w *walker) limits(depth int) {
	for i, r := range w.rules {
		w.limitsOf(i, r, depth)
	}
}

// limitsOf records the limits of the i-th rule set, r, that the tallies
// exceed.
func (w *walker) limitsOf(i int, r *ruleSet, depth int) {
	if r.maxOptionals > 0 && w.optionals > r.maxOptionals {
		w.refuse(i, TooManyOptionals, "", fmt.Sprintf(
			"make at most %d properties optional (this schema has %d); list the rest in 'required'",
			r.maxOptionals, w.optionals))
	}
	if r.maxOptionalUnions > 0 && w.optionalUnions > r.maxOptionalUnions {
		w.refuse(i, TooManyUnions, "", fmt.Sprintf(
			"give at most %d optional properties a union type (this schema has %d); list the rest in 'required' or give each one type",
			r.maxOptionalUnions, w.optionalUnions))
	}
	if r.maxDepth > 0 && depth > r.maxDepth {
		w.refuse(i, ExceedsProviderLimit, "", fmt.Sprintf(
			"nest objects at most %d levels deep (this schema nests %d)", r.maxDepth, depth))
	}
	if r.maxProperties > 0 && w.properties > r.maxProperties {
		w.refuse(i, ExceedsProviderLimit, "", fmt.Sprintf(
			"declare at most %d properties in all (this schema has %d)", r.maxProperties, w.properties))
	}
	if r.maxEnumValues > 0 && w.enumValues > r.maxEnumValues {
		w.refuse(i, ExceedsProviderLimit, "", fmt.Sprintf(
			"declare at most %d enum values in all (this schema has %d)", r.maxEnumValues, w.enumValues))
	}
	if r.maxChars > 0 && w.chars > r.maxChars {
		w.refuse(i, ExceedsProviderLimit, "", fmt.Sprintf(
			"shorten property names, definition names, enum values and const values to at most %d characters in all (this schema has %d)",
			r.maxChars, w.chars))
	}
}

// isObject reports whether node describes an object: its type includes
// object, or it says no type and has properties.
func isObject(node map[string]any) bool {
	if _, typed := node["type"]; !typed {
		_, hasProperties := node["properties"]
		return hasProperties
	}
	return slices.Contains(typeNames(node), "object")
}

// allowsNull reports whether node is a union that allows null: a type list
// with null and another type, an anyOf or oneOf with a branch of type null,
// or an enum with null and another value.
func allowsNull(node map[string]any) bool {
	if types := typeNames(node); len(types) > 1 && slices.Contains(types, "null") {
		return true
	}
	for _, key := range []string{"anyOf", "oneOf"} {
		branches, _ := node[key].([]any)
		for _, branch := range branches {
			if b, ok := branch.(map[string]any); ok {
				if types := typeNames(b); len(types) == 1 && types[0] == "null" {
					return true
				}
			}
		}
	}
	values, _ := node["enum"].([]any)
	return len(values) > 1 && slices.Contains(values, nil)
}

// hasRefBranch reports whether a list of schemas holds one with a $ref.
func hasRefBranch(value any) bool {
	branches, _ := value.([]any)
	for _, branch := range branches {
		if b, ok := branch.(map[string]any); ok {
			if _, has := b["$ref"]; has {
				return true
			}
		}
	}
	return false
}

// typeNames returns the type names node declares: none when it says no type,
// one for a string, each string of a list.
func typeNames(node map[string]any) []string {
	switch t := node["type"].(type) {
	case string:
		return []string{t}
	case []any:
		names := make([]string, 0, len(t))
		for _, v := range t {
			if s, ok := v.(string); ok {
				names = append(names, s)
			}
		}
		return names
	}
	return nil
}

// number reads a decoded JSON number, whichever way it was decoded.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// describe renders a decoded JSON value for a message.
func describe(v any) string {
	switch v.(type) {
	case map[string]any:
		return "a schema"
	case []any:
		return "a list"
	}
	return fmt.Sprint(v)
}

// escape and unescape convert a JSON pointer segment to and from its
// written form (RFC 6901).
var (
	escape   = strings.NewReplacer("~", "~0", "/", "~1")
	unescape = strings.NewReplacer("~1", "/", "~0", "~")
)

// unescapeSegment reads one written JSON pointer segment; most have nothing
// to unescape, and are returned as they are without a copy.
func unescapeSegment(s string) string {
	if !strings.Contains(s, "~") {
		return s
	}
	return unescape.Replace(s)
}

// sortedKeys returns the keys of m in order: the walk visits keywords,
// properties and definitions by name so that its notes are the same on every
// call. The keys are cut from the walker's stack of them, past those of the
// schemas being walked, so that a walk does not allocate a list per schema;
// release hands them back once they are read, innermost first.
func (w *walker) sortedKeys(m map[string]any) []string {
	from := len(w.keys)
	for k := range m {
		w.keys = append(w.keys, k)
	}
	keys := w.keys[from:len(w.keys):len(w.keys)]
	slices.Sort(keys)
	return keys
}

// release hands back the keys sortedKeys returned last. A walk below them
// may have moved the stack to a larger array; the keys still lie at the
// same length in it.
func (w *walker) release(keys []string) {
	from := len(w.keys) - len(keys)
	clear(w.keys[from:])
	w.keys = w.keys[:from]
}

// join appends segments to a JSON pointer, escaping each, in one string.
func join(ptr string, segments ...string) string {
	size := len(ptr)
	for i, s := range segments {
		if strings.ContainsAny(s, "~/") {
			segments[i] = escape.Replace(s)
		}
		size += 1 + len(segments[i])
	}
	var b strings.Builder
	b.Grow(size)
	b.WriteString(ptr)
	for _, s := range segments {
		b.WriteByte('/')
		b.WriteString(s)
	}
	return b.String()
}

// location renders a JSON pointer as notes name places: "the schema root",
// or the unescaped segments joined with dots ("properties.items.items").
func location(ptr string) string {
	if ptr == "" {
		return rootLocation
	}
	segments := strings.Split(ptr[1:], "/")
	for i, s := range segments {
		segments[i] = unescapeSegment(s)
	}
	return strings.Join(segments, ".")
}
