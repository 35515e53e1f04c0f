package template

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Render renders the template against s. A typed splice returns the raw
// value it names (shared with the scope, not copied); any other template
// returns its rendered text as a string.
func (t *Template) Render(s Scope) (any, error) {
	switch {
	case t.spliced:
		v, _, err := t.value(s)
		return v, err
	case t.literal:
		return t.boxed, nil
	}
	out, err := t.text(s)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// RenderString renders the template against s as text. A typed splice of a
// non-string value is serialized the way it would be in mixed text.
func (t *Template) RenderString(s Scope) (string, error) {
	switch {
	case t.spliced:
		v, ok, err := t.value(s)
		if err != nil || !ok {
			return "", err
		}
		if str, ok := v.(string); ok {
			return str, nil
		}
		var b strings.Builder
		splice := t.splice()
		if err := write(&b, v, &splice); err != nil {
			return "", err
		}
		return b.String(), nil
	case t.literal:
		return t.src, nil
	}
	return t.text(s)
}

// value resolves the one variable of a typed splice. Almost every splice is
// root-anchored and goes straight to resolve; the rest ({{.}} or a loop
// variable alone, which static checks reject) read from an empty section
// stack like any other tag.
func (t *Template) value(s Scope) (any, bool, error) {
	splice := t.splice()
	if splice.kind == rootPath {
		v, err := resolve(s, &splice)
		return v, err == nil, err
	}
	st := state{t: t, scope: s}
	return st.lookup(&splice)
}

// text renders a template that is neither literal nor a splice.
func (t *Template) text(s Scope) (string, error) {
	var st state
	st.t, st.scope, st.limit = t, s, valueLimit(s)
	st.out.Grow(len(t.src))
	if err := st.nodes(t.nodes); err != nil {
		return "", err
	}
	return st.out.String(), nil
}

// frame is one level of section nesting during a render: the item the
// section pushed and, for lists, where the iteration stands.
type frame struct {
	item  any
	list  bool // the section iterates a list, so the loop variables below are its own
	index int
	n     int
}

// state is the mutable part of one render; the Template itself is never
// written, which is what lets renders run concurrently.
type state struct {
	t      *Template
	scope  Scope
	frames []frame // allocated by the first section, so plain text never pays for it
	out    strings.Builder
	limit  int64 // the most bytes out may hold; 0: no bound
}

// fits reports whether n more bytes keep out within the limit.
func (st *state) fits(n int) error {
	if st.limit > 0 && int64(st.out.Len())+int64(n) > st.limit {
		return &TooLongError{Limit: st.limit}
	}
	return nil
}

// nodes renders nodes into st.out.
func (st *state) nodes(nodes []node) error {
	t := st.t
	for i := 0; i < len(nodes); i++ {
		n := &nodes[i]
		if n.text < n.tag {
			if err := st.fits(int(n.tag - n.text)); err != nil {
				return err
			}
			st.out.WriteString(t.src[n.text:n.tag])
		}
		switch n.kind {
		case varNode:
			p := t.pathOf(n, &nodes[i+1])
			v, ok, err := st.lookup(&p)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			if str, isString := v.(string); isString {
				// Checked before it is written: the string may be the one
				// that would pass the limit many times over.
				if err := st.fits(len(str)); err != nil {
					return err
				}
			}
			if err := write(&st.out, v, &p); err != nil {
				return err
			}
			if err := st.fits(0); err != nil {
				return err
			}
		case sectionNode, invertedNode:
			body := nodes[i+1 : i+1+int(n.body)]
			i += int(n.body)
			// A section that does not resolve is falsy rather than an
			// error: sections are conditionals.
			p := t.pathOf(n, &body[0])
			v, ok, err := st.lookup(&p)
			if err != nil || !ok {
				v = nil
			}
			switch {
			case n.kind == invertedNode:
				if truthy(v) {
					continue
				}
			case p.kind.loopVar():
				// A section on a loop variable is a gate inside the current
				// iteration: it keeps the list element as the item rather
				// than pushing a boolean or an index.
				if !truthy(v) {
					continue
				}
			default:
				if err := st.section(v, body); err != nil {
					return err
				}
				continue
			}
			if err := st.nodes(body); err != nil {
				return err
			}
		}
	}
	return nil
}

// section renders body once per element of a list, or once with v as the
// item when v is any other truthy value.
func (st *state) section(v any, body []node) error {
	if items, ok := v.([]any); ok {
		for i, item := range items {
			st.frames = append(st.frames, frame{item: item, list: true, index: i, n: len(items)})
			err := st.nodes(body)
			st.frames = st.frames[:len(st.frames)-1]
			if err != nil {
				return err
			}
		}
		return nil
	}
	if !truthy(v) {
		return nil
	}
	st.frames = append(st.frames, frame{item: v})
	err := st.nodes(body)
	st.frames = st.frames[:len(st.frames)-1]
	return err
}

// lookup finds the value of p. It reports ok=false, with no error, for a
// bare key that nothing has; every failure of a root-anchored path is an
// error.
func (st *state) lookup(p *path) (any, bool, error) {
	switch p.kind {
	case barePath:
		key := p.segs[0]
		for i := len(st.frames) - 1; i >= 0; i-- {
			if m, ok := st.frames[i].item.(map[string]any); ok {
				if v, ok := m[key]; ok {
					return v, true, nil
				}
			}
		}
		v, ok := st.scope.Lookup(key)
		return v, ok, nil
	case dotPath:
		// With no section item there is nothing to read; static checks
		// report such a {{.}}, and the render treats it like a bare key
		// found nowhere.
		if len(st.frames) == 0 {
			return nil, false, nil
		}
		return st.frames[len(st.frames)-1].item, true, nil
	case indexPath, firstPath, lastPath:
		f := frame{list: true, n: 1}
		for i := len(st.frames) - 1; i >= 0; i-- {
			if st.frames[i].list {
				f = st.frames[i]
				break
			}
		}
		switch p.kind {
		case indexPath:
			return f.index, true, nil
		case firstPath:
			return f.index == 0, true, nil
		}
		return f.index == f.n-1, true, nil
	}
	v, err := resolve(st.scope, p)
	return v, err == nil, err
}

// resolve walks a root-anchored path through s. It allocates nothing unless
// it fails, which keeps typed splices cheap.
func resolve(s Scope, p *path) (any, error) {
	v, ok := s.Lookup(p.segs[0])
	if !ok {
		roots := slices.Clone(s.Roots())
		slices.Sort(roots)
		return nil, &MissingStepError{Root: p.segs[0], Path: p.text(), Available: roots}
	}
	for i := 1; i < len(p.segs); i++ {
		seg := p.segs[i]
		switch c := v.(type) {
		case map[string]any:
			next, ok := c[seg]
			if !ok {
				return nil, offObject(c, p, i)
			}
			v = next
		case []any:
			switch idx := listIndex(seg); {
			case idx >= len(c):
				at := p.prefix(i)
				reason := fmt.Sprintf("index %s is out of range for '%s' (length %d)", seg, at, len(c))
				if len(c) == 0 {
					reason = fmt.Sprintf("'%s' is an empty list", at)
				}
				return nil, &EmptyDataError{Path: p.text(), At: at, Reason: reason}
			case idx >= 0:
				v = c[idx]
			case seg == "length":
				v = len(c)
			default:
				at := p.prefix(i)
				return nil, &BadPathError{Path: p.text(), At: at, Reason: fmt.Sprintf("'%s' is a list; use a numeric index or 'length'", at)}
			}
		case string:
			if seg != "length" {
				return nil, offScalar(v, p, i)
			}
			v = utf8.RuneCountInString(c)
		case nil:
			at := p.prefix(i)
			return nil, &EmptyDataError{Path: p.text(), At: at, Reason: fmt.Sprintf("'%s' is null", at)}
		default:
			return nil, offScalar(v, p, i)
		}
	}
	return v, nil
}

// offObject explains a key that the object m, reached by the first n
// segments of p, does not have.
func offObject(m map[string]any, p *path, n int) error {
	at := p.prefix(n)
	if len(m) == 0 {
		// An empty object offers no keys to suggest; like an empty list it
		// means the data ran out, not that the path is wrong.
		return &EmptyDataError{Path: p.text(), At: at, Reason: fmt.Sprintf("'%s' is an empty object", at)}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return &BadPathError{Path: p.text(), At: at, Available: keys}
}

// offScalar explains a segment applied to the scalar v, reached by the first
// n segments of p.
func offScalar(v any, p *path, n int) error {
	at := p.prefix(n)
	return &BadPathError{Path: p.text(), At: at, Reason: fmt.Sprintf("'%s' is %s, not an object or list", at, kind(v))}
}

// kind names the JSON kind of a scalar, with an article, for messages.
func kind(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number, float64, float32, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, uintptr:
		return "a number"
	}
	return fmt.Sprintf("a %T value", v)
}

// truthy is the section test: missing, null, false, "", the empty list and
// the empty object are falsy, everything else (numbers included) is truthy.
func truthy(v any) bool {
	switch c := v.(type) {
	case nil:
		return false
	case bool:
		return c
	case string:
		return c != ""
	case []any:
		return len(c) > 0
	case map[string]any:
		return len(c) > 0
	}
	return true
}

// write appends v to b as mixed text; p names the value in errors.
func write(b *strings.Builder, v any, p *path) error {
	var num [32]byte
	switch c := v.(type) {
	case string:
		b.WriteString(c)
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(c))
	case json.Number:
		b.WriteString(string(c))
	case float64:
		return writeFloat(b, c, 64, p)
	case float32:
		return writeFloat(b, float64(c), 32, p)
	case int:
		b.Write(strconv.AppendInt(num[:0], int64(c), 10))
	case int8:
		b.Write(strconv.AppendInt(num[:0], int64(c), 10))
	case int16:
		b.Write(strconv.AppendInt(num[:0], int64(c), 10))
	case int32:
		b.Write(strconv.AppendInt(num[:0], int64(c), 10))
	case int64:
		b.Write(strconv.AppendInt(num[:0], c, 10))
	case uint:
		b.Write(strconv.AppendUint(num[:0], uint64(c), 10))
	case uint8:
		b.Write(strconv.AppendUint(num[:0], uint64(c), 10))
	case uint16:
		b.Write(strconv.AppendUint(num[:0], uint64(c), 10))
	case uint32:
		b.Write(strconv.AppendUint(num[:0], uint64(c), 10))
	case uint64:
		b.Write(strconv.AppendUint(num[:0], c, 10))
	default:
		// Lists, objects and anything unusual go through encoding/json, with
		// HTML escaping off: the text feeds prompts and tools, not browsers.
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return fmt.Errorf("cannot write '%s' as text: %w", p.text(), err)
		}
		b.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	}
	return nil
}

// writeFloat appends f as encoding/json would print it (bits is 32 or 64),
// without going through an encoder for every number.
func writeFloat(b *strings.Builder, f float64, bits int, p *path) error {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return fmt.Errorf("cannot write '%s' as text: %v has no JSON form", p.text(), f)
	}
	// The same choice as encoding/json: plain notation for ordinary
	// magnitudes, exponent notation for tiny and huge ones.
	format := byte('f')
	if abs := math.Abs(f); abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	var num [32]byte
	out := strconv.AppendFloat(num[:0], f, format, -1, bits)
	if format == 'e' {
		// Shorten e-09 to e-9, as encoding/json does.
		if n := len(out); n >= 4 && out[n-4] == 'e' && out[n-3] == '-' && out[n-2] == '0' {
			out[n-2] = out[n-1]
			out = out[:n-1]
		}
	}
	b.Write(out)
	return nil
}
