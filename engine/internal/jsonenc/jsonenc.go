// Package jsonenc writes JSON by hand, byte for byte as encoding/json
// writes it, for the hot paths that would otherwise spend most of their
// time in its reflection: the run store's event payloads and the request
// bodies sent to the Messages API. Plain decoded data (maps, lists,
// strings, numbers and literals) is written directly; anything else goes
// through encoding/json, so its output and its errors stay the standard
// library's.
package jsonenc

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxDepth is how deep Encoder.AppendValue writes by hand; a value nested
// deeper goes through encoding/json whole, which also refuses a cycle.
const maxDepth = 64

// Encoder appends JSON values. Its zero value is ready; one Encoder reused
// keeps the scratch it sorts map keys in. It is not safe for concurrent
// use.
type Encoder struct {
	// LeaveHTML writes <, > and & as they are, as an encoding/json
	// Encoder told SetEscapeHTML(false) does: for text a model or a
	// person reads, never put into HTML.
	LeaveHTML bool
	// fields is scratch for sorting a map's entries by key, shared by
	// nested maps, each using the part past its parent's. Keeping each
	// value beside its key spares looking it up again.
	fields []field
	// shapes are the keys of the last shapeWays maps of each size up to
	// maxShapeKeys written with other keys, in order; lastWay is, for
	// each size, the way of the shape last written, which a map of a new
	// shape does not take.
	shapes  [maxShapeKeys + 1][shapeWays]mapShape
	lastWay [maxShapeKeys + 1]uint8
}

// shapeWays is how many shapes of one size an Encoder keeps: records of
// a few kinds alternate in a run's payloads, two-key inputs and two-key
// results say, and with one shape a size each took the place of the
// other, every map then written the slow way.
const shapeWays = 4

// maxShapeKeys is the most keys of a map whose shape an Encoder keeps.
const maxShapeKeys = 8

// mapShape is the keys of a map written, sorted, and their JSON as member
// names. Plain data holds many maps of the same keys (a list of records,
// the input of each item of a map step): a map as large as a shape that
// holds each of its keys has no others, and looking them up costs a
// fraction of ranging over the map and sorting its keys.
type mapShape struct {
	keys []string
	// names is each key's JSON and a colon, one after the other, the
	// i-th ending at ends[i], as written with HTML escaped or not.
	names []byte
	ends  [maxShapeKeys]int
	html  bool
	// inUse is set while a map of this shape is written, so that a map
	// nested in it, of the same size and other keys, leaves the keys
	// being read as they are.
	inUse bool
}

// maxShapeBytes bounds the JSON of a shape's keys, so that an Encoder
// keeps no long key alive; a map of longer keys has no shape kept.
const maxShapeBytes = 256

// set makes s the shape of fields, sorted by key, or none if their names
// are longer than maxShapeBytes.
func (s *mapShape) set(fields []field, html bool) {
	s.keys, s.names, s.html = s.keys[:0], s.names[:0], html
	for i, f := range fields {
		if len(s.names)+len(f.key) > maxShapeBytes {
			clear(s.keys)
			s.keys, s.names = s.keys[:0], s.names[:0]
			return
		}
		s.keys = append(s.keys, f.key)
		s.names = append(appendString(s.names, f.key, html), ':')
		s.ends[i] = len(s.names)
	}
}

// appendShaped appends x's JSON when x has s's keys: ok is false, and b
// as it was, when it has not.
func (e *Encoder) appendShaped(b []byte, s *mapShape, x map[string]any, depth int) (_ []byte, ok bool, err error) {
	var values [maxShapeKeys]any
	for i, k := range s.keys {
		v, found := x[k]
		if !found {
			return b, false, nil
		}
		values[i] = v
	}
	inUse := s.inUse
	s.inUse = true
	b = append(b, '{')
	from := 0
	for i := range s.keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, s.names[from:s.ends[i]]...)
		from = s.ends[i]
		if b, err = e.appendValue(b, values[i], depth+1); err != nil {
			break
		}
	}
	s.inUse = inUse
	if err != nil {
		return b, true, err
	}
	return append(b, '}'), true, nil
}

// field is one entry of a map being written.
type field struct {
	key   string
	value any
}

// AppendValue appends v's JSON to b. On an error (a value encoding/json
// refuses: NaN, a channel, a cycle) the bytes appended so far are left
// in the returned slice's tail, so a caller that falls back cuts b back
// to its own length.
func (e *Encoder) AppendValue(b []byte, v any) ([]byte, error) {
	return e.appendValue(b, v, 0)
}

func (e *Encoder) appendValue(b []byte, v any, depth int) ([]byte, error) {
	if depth > maxDepth {
		return e.appendMarshalled(b, v)
	}
	var err error
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return appendString(b, x, !e.LeaveHTML), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case float64:
		return appendFloat(b, x, 64)
	case float32:
		return appendFloat(b, float64(x), 32)
	case int:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case int32:
		return strconv.AppendInt(b, int64(x), 10), nil
	case uint64:
		return strconv.AppendUint(b, x, 10), nil
	case map[string]any:
		if x == nil {
			return append(b, "null"...), nil
		}
		var shape *mapShape
		if n := len(x); n <= maxShapeKeys {
			ways := &e.shapes[n]
			for i := range ways {
				// The way last written first: a run of records of one
				// shape finds it at once.
				w := (int(e.lastWay[n]) + i) % shapeWays
				s := &ways[w]
				if s.html != !e.LeaveHTML || len(s.keys) != n {
					continue
				}
				var ok bool
				if b, ok, err = e.appendShaped(b, s, x, depth); ok {
					e.lastWay[n] = uint8(w)
					return b, err
				}
			}
			// A new shape takes the way after the last written's, the
			// least recently written of those kept when records of a
			// few shapes take turns.
			w := (int(e.lastWay[n]) + 1) % shapeWays
			shape, e.lastWay[n] = &ways[w], uint8(w)
		}
		base := len(e.fields)
		e.fields = slices.Grow(e.fields, len(x))
		for k, v := range x {
			e.fields = append(e.fields, field{k, v})
		}
		// A nested map may grow e.fields into a new array; this map's
		// entries are read from the array they were sorted in.
		fields := e.fields[base:]
		slices.SortFunc(fields, func(a, b field) int { return strings.Compare(a.key, b.key) })
		if shape != nil && !shape.inUse {
			shape.set(fields, !e.LeaveHTML)
		}
		b = append(b, '{')
		for i := range fields {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, fields[i].key, !e.LeaveHTML)
			b = append(b, ':')
			if b, err = e.appendValue(b, fields[i].value, depth+1); err != nil {
				break
			}
		}
		// Cleared in the array e.fields holds now, so that no value
		// written is kept alive by the scratch.
		clear(e.fields[base:])
		e.fields = e.fields[:base]
		if err != nil {
			return b, err
		}
		return append(b, '}'), nil
	case []any:
		if x == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '[')
		for i, el := range x {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = e.appendValue(b, el, depth+1); err != nil {
				return b, err
			}
		}
		return append(b, ']'), nil
	}
	return e.appendMarshalled(b, v)
}

// appendMarshalled appends v through encoding/json, escaping HTML as e
// does.
func (e *Encoder) appendMarshalled(b []byte, v any) ([]byte, error) {
	if !e.LeaveHTML {
		return appendMarshalled(b, v)
	}
	buf := bytes.NewBuffer(b)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return b, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// appendMarshalled appends v through encoding/json.
func appendMarshalled(b []byte, v any) ([]byte, error) {
	j, err := json.Marshal(v)
	if err != nil {
		return b, err
	}
	return append(b, j...), nil
}

// AppendFloat64 appends f as encoding/json writes a float64, without
// boxing it in an any as AppendValue would (an allocation per number);
// NaN and infinities are not JSON, and their error is encoding/json's.
func AppendFloat64(b []byte, f float64) ([]byte, error) {
	return appendFloat(b, f, 64)
}

// appendFloat writes a float as encoding/json does (ES6 number
// formatting: exponent notation for the very small and very large, with
// e-07 written e-7); NaN and infinities are not JSON, and their error is
// encoding/json's.
func appendFloat(b []byte, f float64, bits int) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		if bits == 32 {
			return appendMarshalled(b, float32(f))
		}
		return appendMarshalled(b, f)
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	b = strconv.AppendFloat(b, f, format, -1, bits)
	if n := len(b); format == 'e' && n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		b[n-2] = b[n-1]
		b = b[:n-1]
	}
	return b, nil
}

const hexDigits = "0123456789abcdef"

// Byte masks for scanning eight bytes of a string at once.
const (
	lowBits  = 0x0101010101010101
	highBits = 0x8080808080808080
)

// wordNeedsCare reports whether any of the eight bytes in w is one
// AppendString cannot copy as it is: a control byte, '"', '\\', '<', '>',
// '&', or a byte of a multi-byte (or invalid) UTF-8 sequence. A byte
// equal to c makes w^(lowBits*c) have a zero byte, and (v-lowBits)&^v has
// the high bit set in some byte exactly when v has a zero byte; a byte
// under 0x20 shows the same way in (w-lowBits*0x20)&^w. The borrows can
// mark the wrong byte, but never a clean word.
func wordNeedsCare(w uint64) bool {
	q := w ^ (lowBits * '"')
	bs := w ^ (lowBits * '\\')
	lt := w ^ (lowBits * '<')
	gt := w ^ (lowBits * '>')
	amp := w ^ (lowBits * '&')
	return ((w-lowBits*0x20)&^w|
		(q-lowBits)&^q|
		(bs-lowBits)&^bs|
		(lt-lowBits)&^lt|
		(gt-lowBits)&^gt|
		(amp-lowBits)&^amp|
		w)&highBits != 0
}

// loadWord reads s's first eight bytes as a little-endian word; the
// compiler makes the shifts one load.
func loadWord(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// asciiSafe marks the ASCII bytes AppendString copies as they are.
var asciiSafe = func() (safe [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		safe[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return safe
}()

// AppendString appends s as a JSON string the way encoding/json writes it
// by default: HTML-safe (<, > and & escaped), U+2028 and U+2029 escaped,
// and invalid UTF-8 made U+FFFD. It looks at eight bytes at a time and
// appends each run of bytes that need no escaping whole, since most
// strings it is given have nothing to escape.
func AppendString(b []byte, s string) []byte {
	return appendString(b, s, true)
}

// appendString appends s as a JSON string, with <, > and & escaped if
// html. The word scan treats <, > and & as needing care either way; a
// word holding one is then gone through a byte at a time.
func appendString(b []byte, s string, html bool) []byte {
	b = append(b, '"')
	start := 0
	// Bytes before scanned are gone through one at a time: they are in
	// the word that needed care, and scanning them again as words would
	// cost more than it saves. In text where every word needs care
	// (accented or non-Latin text) the words are not worth scanning, so
	// each scan that finds no clean word doubles how far the next is put
	// off, up to 64 bytes.
	scanned, putOff := 0, 8
	for i := 0; i < len(s); {
		if i >= scanned {
			from := i
			for i+8 <= len(s) && !wordNeedsCare(loadWord(s[i:])) {
				i += 8
			}
			if i == len(s) {
				break
			}
			if i == from {
				putOff = min(2*putOff, 64)
			} else {
				putOff = 8
			}
			scanned = i + putOff
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if asciiSafe[c] || !html && (c == '<' || c == '>' || c == '&') {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		// A two-byte sequence (a lead byte of C2 to DF and a continuation
		// byte) is always valid and never U+2028 or U+2029: the accented
		// letters of most text, copied without decoding them.
		if c >= 0xC2 && c < 0xE0 && i+1 < len(s) && s[i+1]&0xC0 == 0x80 {
			i += 2
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
