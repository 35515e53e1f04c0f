package config

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"

	"github.com/stepwise-dev/stepwise/plans/suggest"
	"github.com/stepwise-dev/stepwise/plans/yamlpos"
)

// position is where a key and its value sit in a configuration file, and the
// directory that relative paths written there resolve against.
type position struct {
	file            string
	base            string
	keyLine, keyCol int
	valLine, valCol int
}

// layer is one configuration file, decoded, with the position of every key
// it sets.
type layer struct {
	cfg   Config
	index map[string]position
}

// decodeLayer decodes one configuration file. Keys stepwise does not know
// are warnings, so that a file written for a newer version still loads;
// syntax and type errors are errors, and a file with errors yields no layer.
func decodeLayer(file, base string, data []byte) (l *layer, warnings, errs []Diagnostic) {
	l = &layer{}
	err := decodeStrict(data, &l.cfg)
	var strictErr *toml.StrictMissingError
	var decodeErr *toml.DecodeError
	switch {
	case err == nil:
	case errors.As(err, &strictErr):
		index, parts := indexPositions(file, base, data)
		for i := range strictErr.Errors {
			warnings = append(warnings, unknownKeyDiagnostic(file, &strictErr.Errors[i], index, parts))
		}
	case errors.As(err, &decodeErr):
		index, parts := indexPositions(file, base, data)
		placed := func(e *toml.DecodeError) Diagnostic {
			line, col := e.Position()
			return Diagnostic{
				Pos:     yamlpos.Pos{File: file, Line: line, Col: col},
				Key:     formatKey(keyAt(e.Key(), line, col, index, parts)),
				Message: describeDecodeError(e),
			}
		}
		errs = append(errs, placed(decodeErr))
		// The decoder stops at the first value of a wrong type. Such a
		// value written on a key's own line is left out and the file
		// decoded again, so that one reading tells every one of them; a
		// syntax error, or a value over several lines, ends it there.
		for len(errs) < maxTypeErrors && isTypeMismatch(decodeErr) {
			line, _ := decodeErr.Position()
			var ok bool
			if data, ok = withoutKeyLine(data, line); !ok {
				break
			}
			if err := decodeStrict(data, &Config{}); !errors.As(err, &decodeErr) || !isTypeMismatch(decodeErr) {
				break
			}
			errs = append(errs, placed(decodeErr))
		}
		return nil, warnings, errs
	default:
		return nil, warnings, []Diagnostic{{Pos: yamlpos.Pos{File: file}, Message: err.Error()}}
	}
	var parts map[string][]string
	l.index, parts = indexPositions(file, base, data)
	warnings = append(warnings, caseMismatches(file, l.index, parts)...)
	return l, warnings, nil
}

// caseMismatches reports keys that differ from a known key only in case.
// TOML keys are case-sensitive, so such a key is unknown and its value is not
// used; but the decoder matches field names without case and so does not
// report it.
func caseMismatches(file string, index map[string]position, parts map[string][]string) []Diagnostic {
	var ds []Diagnostic
	seen := map[string]bool{}
	for _, path := range sortedKeys(parts) {
		key := parts[path]
		i, known := firstUnknown(key)
		if i < 0 {
			continue
		}
		match := ""
		for _, k := range known {
			if strings.EqualFold(k, key[i]) {
				match = k
			}
		}
		unknown := formatKey(key[:i+1])
		if match == "" || seen[unknown] {
			continue // the decoder reports it
		}
		seen[unknown] = true
		pos, ok := index[unknown]
		if !ok {
			pos = index[path]
		}
		ds = append(ds, Diagnostic{
			Pos: yamlpos.Pos{File: file, Line: pos.keyLine, Col: pos.keyCol}, Key: unknown,
			Message: fmt.Sprintf("unknown key; did you mean '%s'? (keys are case-sensitive)", match),
		})
	}
	return ds
}

// maxTypeErrors is the most values of a wrong type one file's reading
// tells.
const maxTypeErrors = 20

// isTypeMismatch reports whether e is a value of the wrong type for its
// key, rather than a syntax error.
func isTypeMismatch(e *toml.DecodeError) bool {
	return mismatchRE().MatchString(strings.TrimPrefix(e.Error(), "toml: "))
}

// keyLineRE is a line that sets a key: a bare, dotted or quoted key, then
// "=".
var keyLineRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\s*[A-Za-z0-9_\-."' ]+=`)
})

// withoutKeyLine blanks line n (from 1) of data, keeping every other
// line and column where it was, when it is a key's line whose value ends
// on it (no multi-line string, brackets closed); ok is false otherwise.
func withoutKeyLine(data []byte, n int) (out []byte, ok bool) {
	lines := bytes.Split(data, []byte("\n"))
	if n < 1 || n > len(lines) {
		return nil, false
	}
	line := lines[n-1]
	if !keyLineRE().Match(line) || bytes.Contains(line, []byte(`"""`)) || bytes.Contains(line, []byte("'''")) ||
		bytes.Count(line, []byte("[")) != bytes.Count(line, []byte("]")) || bytes.Count(line, []byte("{")) != bytes.Count(line, []byte("}")) {
		return nil, false
	}
	lines[n-1] = bytes.Repeat([]byte(" "), len(line))
	return bytes.Join(lines, []byte("\n")), true
}

// decodeStrict runs the TOML decoder and turns a panic inside it into an
// error, so that no input can bring the caller down.
func decodeStrict(data []byte, cfg *Config) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("toml decoder failed on this file: %v", r)
		}
	}()
	return toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields().Decode(cfg)
}

// unknownKeyDiagnostic reports a key the decoder found no place for. The
// decoder names the whole key (all of [modles.chat]); the diagnostic names
// the first part that is unknown (modles) and suggests a known key of that
// table. Inside inline tables the key comes from keyAt.
func unknownKeyDiagnostic(file string, e *toml.DecodeError, index map[string]position, parts map[string][]string) Diagnostic {
	line, col := e.Position()
	key := keyAt(e.Key(), line, col, index, parts)
	d := Diagnostic{Pos: yamlpos.Pos{File: file, Line: line, Col: col}, Key: formatKey(key), Message: "unknown key"}
	if i, known := firstUnknown(key); i >= 0 {
		d.Key = formatKey(key[:i+1])
		d.Message += suggest.DidYouMean(key[i], known)
	}
	return d
}

// keyAt is the whole key of what stands at line:col, the key or the value
// of it, by the file's index, or the decoder's key when the index has
// nothing longer there: inside inline tables the decoder's key loses the
// tables around it.
func keyAt(key []string, line, col int, index map[string]position, parts map[string][]string) []string {
	for path, pos := range index {
		at := pos.keyLine == line && pos.keyCol == col || pos.valLine == line && pos.valCol == col
		if at && len(parts[path]) > len(key) {
			key = parts[path]
		}
	}
	return key
}

// firstUnknown returns the index of the first part of key that the
// configuration does not define, with the keys defined in its table; -1 when
// every part is defined or a free-form value (output_schema) takes them.
func firstUnknown(key []string) (int, []string) {
	t := reflect.TypeFor[Config]()
	for i, part := range key {
		t = derefType(t)
		switch t.Kind() {
		case reflect.Struct:
			f, ok := fieldByKey(t, part)
			if !ok {
				return i, structKeys(t)
			}
			t = f.Type
		case reflect.Map:
			t = t.Elem() // part is a name: a provider, a server, a model
		default:
			return -1, nil
		}
	}
	return -1, nil
}

func structKeys(t reflect.Type) []string {
	var keys []string
	for i := range t.NumField() {
		if k, ok := tomlKey(t.Field(i)); ok {
			keys = append(keys, k)
		}
	}
	return keys
}

// derefType strips pointers and slices, the way a TOML key path passes
// through them.
func derefType(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	return t
}

func fieldByKey(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		if k, ok := tomlKey(t.Field(i)); ok && k == key {
			return t.Field(i), true
		}
	}
	return reflect.StructField{}, false
}

// tomlKey returns the TOML key of a struct field, and false for fields that
// are not part of the file format.
func tomlKey(f reflect.StructField) (string, bool) {
	if !f.IsExported() {
		return "", false
	}
	name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
	if name == "" || name == "-" {
		return "", false
	}
	return name, true
}

// mismatchRE and goTypeWords are built on the first decoding error, not
// when the program starts: every command pays for what its start builds.
var mismatchRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^cannot decode TOML (.+?) into (?:struct field \S+ of type )?(\S+)$`)
})

// describeDecodeError rewords the decoder's messages: a type mismatch names
// the TOML types involved rather than Go's.
func describeDecodeError(e *toml.DecodeError) string {
	msg := strings.TrimPrefix(e.Error(), "toml: ")
	m := mismatchRE().FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	want, ok := goTypeWords()[strings.TrimLeft(m[2], "*")]
	if !ok {
		return msg
	}
	return fmt.Sprintf("expected %s, found %s", want, tomlTypeWord(m[1]))
}

// goTypeWords maps the name of every Go type in Config to the TOML type a
// user must write for it.
var goTypeWords = sync.OnceValue(func() map[string]string {
	words := map[string]string{}
	var visit func(t reflect.Type)
	visit = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if _, seen := words[t.String()]; seen {
			return
		}
		switch t.Kind() {
		case reflect.String:
			words[t.String()] = "a string"
		case reflect.Bool:
			words[t.String()] = "a boolean"
		case reflect.Int, reflect.Int64:
			words[t.String()] = "an integer"
		case reflect.Float64:
			words[t.String()] = "a number"
		case reflect.Slice:
			words[t.String()] = "an array"
			visit(t.Elem())
		case reflect.Map:
			words[t.String()] = "a table"
			visit(t.Elem())
		case reflect.Struct:
			words[t.String()] = "a table"
			for i := range t.NumField() {
				if _, ok := tomlKey(t.Field(i)); ok {
					visit(t.Field(i).Type)
				}
			}
		}
	}
	visit(reflect.TypeFor[Config]())
	return words
})

func tomlTypeWord(t string) string {
	switch t {
	case "integer":
		return "an integer"
	case "array":
		return "an array"
	case "table", "inline table":
		return "a table"
	case "string", "float", "boolean":
		return "a " + t
	default:
		return "a " + t // the date and time types
	}
}

// formatKeyPart writes one key part as TOML would: bare when it can be,
// quoted otherwise.
func formatKeyPart(part string) string {
	if part == "" {
		return `""`
	}
	for i := 0; i < len(part); i++ {
		c := part[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return strconv.Quote(part)
		}
	}
	return part
}

// joinKey appends a key part to a dotted key path.
func joinKey(path, part string) string {
	if path == "" {
		return formatKeyPart(part)
	}
	return path + "." + formatKeyPart(part)
}

func formatKey(parts []string) string {
	var path string
	for _, p := range parts {
		path = joinKey(path, p)
	}
	return path
}

func indexKey(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

// indexPositions records where every key of a document sits, by dotted key
// path with array elements as path[i], and the key parts of each path (array
// indices left out). The document has already decoded without error, so it
// parses.
func indexPositions(file, base string, data []byte) (map[string]position, map[string][]string) {
	ix := &indexer{
		idx:        map[string]position{},
		parts:      map[string][]string{},
		file:       file,
		base:       base,
		lineStarts: lineStarts(data),
		arrays:     map[string]int{},
	}
	var p unstable.Parser
	p.Reset(data)
	table, tableParts := "", []string(nil)
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			table, tableParts = ix.header(e)
		case unstable.KeyValue:
			ix.keyValue(e, table, tableParts)
		}
	}
	return ix.idx, ix.parts
}

type indexer struct {
	idx        map[string]position
	parts      map[string][]string
	file, base string
	lineStarts []int
	arrays     map[string]int // elements seen so far of each array table
}

func lineStarts(data []byte) []int {
	starts := []int{0}
	for i, c := range data {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

func (ix *indexer) at(r unstable.Range) (line, col int) {
	off := int(r.Offset)
	i := sort.SearchInts(ix.lineStarts, off+1) - 1
	return i + 1, off - ix.lineStarts[i] + 1
}

// record notes a key's position; the first definition of a path wins, except
// that define overrides an implicit one (a prefix of a longer key).
func (ix *indexer) record(path string, parts []string, key, val unstable.Range, define bool) {
	if _, ok := ix.idx[path]; ok && !define {
		return
	}
	pos := position{file: ix.file, base: ix.base}
	pos.keyLine, pos.keyCol = ix.at(key)
	pos.valLine, pos.valCol = ix.at(val)
	ix.idx[path] = pos
	ix.parts[path] = slices.Clone(parts)
}

// header records a [table] or [[array table]] header and returns the path
// that the key-values after it live under, and its key parts.
func (ix *indexer) header(e *unstable.Node) (string, []string) {
	path := ""
	var parts []string
	it := e.Key()
	for it.Next() {
		k := it.Node()
		path = joinKey(path, string(k.Data))
		parts = append(parts, string(k.Data))
		if n, ok := ix.arrays[path]; ok && !(it.IsLast() && e.Kind == unstable.ArrayTable) {
			path = indexKey(path, n-1) // a sub-table of the latest element
		}
		ix.record(path, parts, k.Raw, k.Raw, it.IsLast())
	}
	if e.Kind == unstable.ArrayTable {
		n := ix.arrays[path]
		ix.arrays[path] = n + 1
		elem := indexKey(path, n)
		ix.idx[elem] = ix.idx[path]
		ix.parts[elem] = ix.parts[path]
		path = elem
	}
	return path, parts
}

func (ix *indexer) keyValue(e *unstable.Node, table string, tableParts []string) {
	path, parts := table, slices.Clone(tableParts)
	var last unstable.Range
	it := e.Key()
	for it.Next() {
		k := it.Node()
		path = joinKey(path, string(k.Data))
		parts = append(parts, string(k.Data))
		last = k.Raw
		if !it.IsLast() {
			ix.record(path, parts, k.Raw, k.Raw, false)
		}
	}
	ix.value(path, parts, last, e.Value())
}

// value records a value and, for inline tables and arrays, what is inside.
func (ix *indexer) value(path string, parts []string, key unstable.Range, v *unstable.Node) {
	switch v.Kind {
	case unstable.InlineTable:
		ix.record(path, parts, key, v.Raw, true)
		it := v.Children()
		for it.Next() {
			if kv := it.Node(); kv.Kind == unstable.KeyValue {
				ix.keyValue(kv, path, parts)
			}
		}
	case unstable.Array:
		ix.record(path, parts, key, key, true)
		it := v.Children()
		for i := 0; it.Next(); {
			el := it.Node()
			if el.Kind == unstable.Comment {
				continue
			}
			raw := el.Raw
			if el.Kind == unstable.Array {
				raw = key
			}
			ix.value(indexKey(path, i), parts, raw, el)
			i++
		}
	default:
		ix.record(path, parts, key, v.Raw, true)
	}
}

// recordTypes are entries replaced as a whole when a later layer sets them:
// mixing a model or a price from two files would pair keys that were never
// written together.
var recordTypes = map[reflect.Type]bool{
	reflect.TypeFor[ModelEntry](): true,
	reflect.TypeFor[NamedModel](): true,
	reflect.TypeFor[Price]():      true,
}

// mergeLayer lays l over cfg: tables merge key by key, records (see
// recordTypes), arrays and free-form values are replaced, and the origin of
// every key follows the value that won.
func mergeLayer(cfg *Config, origin map[string]position, l *layer) {
	clearTransports(cfg, l)
	var replaced []string
	mergeValue(reflect.ValueOf(cfg).Elem(), reflect.ValueOf(&l.cfg).Elem(), "", l.index, &replaced)
	dropUnder(origin, replaced)
	for k, pos := range l.index {
		origin[k] = pos
	}
}

// clearTransports makes an MCP server's transport a unit: a layer that sets
// url without command switches an earlier stdio server to HTTP (dropping its
// command, args and env), and one that sets command without url does the
// reverse. Without this, a project could not move a global server to another
// transport, since TOML cannot unset a key.
func clearTransports(cfg *Config, l *layer) {
	for name := range l.cfg.MCP {
		s, ok := cfg.MCP[name]
		if !ok {
			continue
		}
		base := joinKey("mcp", name)
		_, setsCommand := l.index[joinKey(base, "command")]
		_, setsURL := l.index[joinKey(base, "url")]
		switch {
		case setsURL && !setsCommand:
			s.Command, s.Args, s.Env = "", nil, nil
		case setsCommand && !setsURL:
			s.URL, s.Headers = "", nil
		default:
			continue
		}
		cfg.MCP[name] = s
	}
}

func mergeValue(dst, src reflect.Value, path string, present map[string]position, replaced *[]string) {
	t := dst.Type()
	switch {
	case t.Kind() == reflect.Struct && !recordTypes[t]:
		for i := range t.NumField() {
			key, ok := tomlKey(t.Field(i))
			if !ok {
				continue
			}
			p := joinKey(path, key)
			if _, ok := present[p]; ok {
				mergeValue(dst.Field(i), src.Field(i), p, present, replaced)
			}
		}
	case t.Kind() == reflect.Map:
		if dst.IsNil() {
			dst.Set(reflect.MakeMap(t))
		}
		for _, k := range src.MapKeys() {
			elem := reflect.New(t.Elem()).Elem()
			if cur := dst.MapIndex(k); cur.IsValid() {
				elem.Set(cur)
			}
			mergeValue(elem, src.MapIndex(k), joinKey(path, k.String()), present, replaced)
			dst.SetMapIndex(k, elem)
		}
	default:
		dst.Set(src)
		switch t.Kind() {
		case reflect.Slice, reflect.Interface, reflect.Pointer, reflect.Struct:
			*replaced = append(*replaced, path) // it may have had keys under it
		}
	}
}

// dropUnder deletes the origins of every key below one of the paths.
func dropUnder(origin map[string]position, paths []string) {
	if len(paths) == 0 {
		return
	}
	set := make(map[string]bool, len(paths))
	for _, p := range paths {
		set[p] = true
	}
	for k := range origin {
		for _, a := range ancestors(k) {
			if set[a] {
				delete(origin, k)
				break
			}
		}
	}
}

// ancestors returns the paths that contain path, nearest first: for
// a.b[2].c, a.b[2], a.b and a. Dots and brackets inside quoted key parts do
// not count.
func ancestors(path string) []string {
	var cuts []int
	quoted := false
	for i := 0; i < len(path); i++ {
		switch c := path[i]; {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case !quoted && (c == '.' || c == '[') && i > 0:
			cuts = append(cuts, i)
		}
	}
	out := make([]string, len(cuts))
	for i, c := range cuts {
		out[len(cuts)-1-i] = path[:c]
	}
	return out
}
