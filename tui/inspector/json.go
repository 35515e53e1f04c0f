package inspector

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// jsonView is a JSON value laid out as pretty-printed lines, two spaces an
// indent level, with every non-empty object and array foldable to one line
// ({…} 12 keys). The value is read into a tree once; laying it out again
// for a fold or a new width walks the tree, not the value.
type jsonView struct {
	root *jnode
	// name prefixes the fold keys of the view's containers, so that two
	// views on one page fold apart.
	name string
	// foldFrom is the depth from which containers start folded until the
	// user unfolds them; the root is depth 0.
	foldFrom int
}

// noFold is a foldFrom under which nothing starts folded.
const noFold = math.MaxInt

// jnode is one value of the tree: a scalar, already in its JSON text, or
// an object or array of nodes.
type jnode struct {
	key    string // the member name, when the parent is an object
	keyed  bool
	kind   jkind
	scalar string // a scalar's JSON text
	kids   []*jnode
	ptr    string // the JSON pointer of the value
}

type jkind uint8

const (
	jString jkind = iota
	jLiteral
	jObject
	jArray
)

// newJSONView reads v: JSON data as the engine passes it around (maps,
// slices, json.Number, json.RawMessage), or any other value, which is read
// through its JSON encoding.
func newJSONView(name string, v any, foldFrom int) *jsonView {
	return &jsonView{root: readJSON(v, ""), name: name, foldFrom: foldFrom}
}

func readJSON(v any, ptr string) *jnode {
	switch x := v.(type) {
	case nil:
		return &jnode{kind: jLiteral, scalar: "null", ptr: ptr}
	case string:
		return &jnode{kind: jString, scalar: quote(x), ptr: ptr}
	case bool:
		return &jnode{kind: jLiteral, scalar: strconv.FormatBool(x), ptr: ptr}
	case json.Number:
		return &jnode{kind: jLiteral, scalar: x.String(), ptr: ptr}
	case float64:
		return &jnode{kind: jLiteral, scalar: strconv.FormatFloat(x, 'g', -1, 64), ptr: ptr}
	case int:
		return &jnode{kind: jLiteral, scalar: strconv.Itoa(x), ptr: ptr}
	case int64:
		return &jnode{kind: jLiteral, scalar: strconv.FormatInt(x, 10), ptr: ptr}
	case map[string]any:
		n := &jnode{kind: jObject, ptr: ptr}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		// Sorted, as encoding/json writes them, so a value reads the same
		// every time it is drawn.
		slices.Sort(keys)
		for _, k := range keys {
			c := readJSON(x[k], ptr+"/"+escapePointer(k))
			c.key, c.keyed = k, true
			n.kids = append(n.kids, c)
		}
		return n
	case []any:
		n := &jnode{kind: jArray, ptr: ptr}
		for i, e := range x {
			n.kids = append(n.kids, readJSON(e, ptr+"/"+strconv.Itoa(i)))
		}
		return n
	case json.RawMessage:
		var d any
		if decodeJSON(x, &d) != nil {
			return &jnode{kind: jString, scalar: quote(string(x)), ptr: ptr}
		}
		return readJSON(d, ptr)
	}
	raw, err := json.Marshal(v)
	var d any
	if err != nil || decodeJSON(raw, &d) != nil {
		return &jnode{kind: jString, scalar: quote(err.Error()), ptr: ptr}
	}
	return readJSON(d, ptr)
}

// decodeJSON reads JSON text keeping numbers as written.
func decodeJSON(raw []byte, v *any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return dec.Decode(v)
}

// parseJSON reads text as one JSON object or array, for text that may or
// may not be JSON (a model's answer); ok is false for anything else.
func parseJSON(text string) (any, bool) {
	t := strings.TrimSpace(text)
	if t == "" || (t[0] != '{' && t[0] != '[') {
		return nil, false
	}
	var v any
	if decodeJSON([]byte(t), &v) != nil {
		return nil, false
	}
	return v, true
}

func escapePointer(k string) string {
	if !strings.ContainsAny(k, "~/") {
		return k
	}
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

// quote writes s as a JSON string: quotes, backslashes and control
// characters escaped, everything else (HTML and non-ASCII text included)
// as it is, which is what a reader wants to see.
func quote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			switch {
			case r == utf8.RuneError && size == 1:
				b.WriteString(`\ufffd`)
			case r >= 0x80 && r < 0xa0, r == 0x2028, r == 0x2029:
				b.WriteString(`\u` + strconv.FormatInt(int64(r)+0x10000, 16)[1:])
			default:
				b.WriteString(s[i : i+size])
			}
			i += size
			continue
		}
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if c < 0x20 || c == 0x7f {
				b.WriteString(`\u00` + strconv.FormatInt(int64(c)+0x100, 16)[1:])
			} else {
				b.WriteByte(c)
			}
		}
		i++
	}
	b.WriteByte('"')
	return b.String()
}

// lay appends the view's lines at indent to the builder's page.
func (v *jsonView) lay(b *builder, indent int) {
	v.node(b, v.root, indent, 0, "", true)
}

func (v *jsonView) node(b *builder, n *jnode, indent, depth int, in string, last bool) {
	pad := strings.Repeat(" ", indent)
	var head []seg
	if n.keyed {
		head = append(head, seg{quote(n.key), b.p.key}, seg{": ", b.p.muted})
	}
	comma := seg{",", b.p.muted}
	if last {
		comma.text = ""
	}
	start := len(b.lines)
	mark := func(open string) {
		for i := start; i < len(b.lines); i++ {
			b.lines[i].in = in
		}
		if open != "" {
			b.lines[start].open = open
		}
	}
	if n.kind == jString || n.kind == jLiteral || len(n.kids) == 0 {
		body := seg{n.scalar, b.p.text}
		switch {
		case n.kind == jLiteral:
			body.paint = b.p.literal
		case n.kind == jObject:
			body = seg{"{}", b.p.muted}
		case n.kind == jArray:
			body = seg{"[]", b.p.muted}
		}
		b.lines = wrap(b.lines, append(head, body, comma), b.width, pad, pad+"  ")
		mark("")
		return
	}
	key := v.name + "#" + n.ptr
	open, shut, what := "{", "}", " key"
	if n.kind == jArray {
		open, shut, what = "[", "]", " item"
	}
	if len(n.kids) != 1 {
		what += "s"
	}
	if b.folded(key, depth >= v.foldFrom) {
		// A summary, not JSON: no comma after it.
		b.lines = wrap(b.lines, append(head, seg{open + "…" + shut, b.p.muted},
			seg{" " + strconv.Itoa(len(n.kids)) + what, b.p.muted}), b.width, pad, pad+"  ")
		mark(key)
		b.lines[start].shut = true
		return
	}
	b.lines = wrap(b.lines, append(head, seg{open, b.p.muted}), b.width, pad, pad+"  ")
	mark(key)
	for i, c := range n.kids {
		v.node(b, c, indent+2, depth+1, key, i == len(n.kids)-1)
	}
	end := len(b.lines)
	b.lines = wrap(b.lines, []seg{{shut, b.p.muted}, comma}, b.width, pad, pad)
	b.lines[end].in = key
}

// plainLines is the value pretty-printed as plain text, one line per
// line of JSON, unwrapped and unfolded: what the repair diff compares.
func plainLines(v any) []string {
	var out []string
	var walk func(n *jnode, indent int, last bool)
	walk = func(n *jnode, indent int, last bool) {
		head := strings.Repeat(" ", indent)
		if n.keyed {
			head += quote(n.key) + ": "
		}
		comma := ","
		if last {
			comma = ""
		}
		switch {
		case n.kind == jObject && len(n.kids) == 0:
			out = append(out, head+"{}"+comma)
		case n.kind == jArray && len(n.kids) == 0:
			out = append(out, head+"[]"+comma)
		case n.kind == jObject || n.kind == jArray:
			open, shut := "{", "}"
			if n.kind == jArray {
				open, shut = "[", "]"
			}
			out = append(out, head+open)
			for i, c := range n.kids {
				walk(c, indent+2, i == len(n.kids)-1)
			}
			out = append(out, strings.Repeat(" ", indent)+shut+comma)
		default:
			out = append(out, head+n.scalar+comma)
		}
	}
	walk(readJSON(v, ""), 0, true)
	return out
}
