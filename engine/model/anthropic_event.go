package model

import (
	"bytes"
	"encoding/json"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// decodeEvent decodes the data of one streamed event into e, which must be
// zero, exactly as encoding/json would: by hand for what the event shapes
// hold (a round's twenty-odd events cost most of its time through
// encoding/json's reflection, see BenchmarkAnthropicRound), and through
// encoding/json itself for anything the hand decoder does not take (a type
// it does not expect, a key that matches a field only case-insensitively,
// deep nesting, invalid JSON), so that the result and the errors are
// encoding/json's (FuzzAnthropicEvent holds the two to the same result).
func decodeEvent(data []byte, e *streamEvent) error {
	d := eventDecoder{data: data}
	if d.event(e) {
		return nil
	}
	*e = streamEvent{}
	return json.Unmarshal(data, e)
}

// eventDecoder reads one event's JSON into a streamEvent. Each method
// reports false when the JSON is not what it takes, and decodeEvent falls
// back to encoding/json.
type eventDecoder struct {
	data  []byte
	i     int
	depth int    // of the value being skipped
	key   []byte // a key with escapes, unquoted
}

// The keys of each object of streamEvent. A key that is none of them but
// equals one case-insensitively is one encoding/json would decode into
// that field, and the hand decoder leaves the event to encoding/json.
var (
	eventKeys        = []string{"type", "index", "message", "content_block", "delta", "usage"}
	messageKeys      = []string{"usage"}
	contentBlockKeys = []string{"type", "text", "thinking", "signature", "data", "id", "name"}
	deltaKeys        = []string{"type", "text", "partial_json", "thinking", "signature", "stop_reason"}
	usageKeys        = []string{"input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"}
)

func (d *eventDecoder) event(e *streamEvent) bool {
	return d.fields(eventKeys, func(key []byte) bool {
		switch string(key) {
		case "type":
			return d.name(&e.Type)
		case "index":
			return d.int(&e.Index)
		case "message":
			return d.message(e)
		case "content_block":
			return d.contentBlock(e)
		case "delta":
			return d.delta(e)
		case "usage":
			return d.usage(&e.Usage)
		}
		return false
	}) && d.end()
}

// end says whether nothing but white space follows the event's object.
func (d *eventDecoder) end() bool {
	d.space()
	return d.i == len(d.data)
}

func (d *eventDecoder) message(e *streamEvent) bool {
	return d.fields(messageKeys, func(key []byte) bool {
		if string(key) == "usage" {
			return d.usage(&e.Message.Usage)
		}
		return false
	})
}

func (d *eventDecoder) contentBlock(e *streamEvent) bool {
	cb := &e.ContentBlock
	return d.fields(contentBlockKeys, func(key []byte) bool {
		switch string(key) {
		case "type":
			return d.name(&cb.Type)
		case "text":
			return d.string(&cb.Text)
		case "thinking":
			return d.string(&cb.Thinking)
		case "signature":
			return d.string(&cb.Signature)
		case "data":
			return d.string(&cb.Data)
		case "id":
			return d.string(&cb.ID)
		case "name":
			return d.string(&cb.Name)
		}
		return false
	})
}

func (d *eventDecoder) delta(e *streamEvent) bool {
	dl := &e.Delta
	return d.fields(deltaKeys, func(key []byte) bool {
		switch string(key) {
		case "type":
			return d.name(&dl.Type)
		case "text":
			return d.string(&dl.Text)
		case "partial_json":
			return d.string(&dl.PartialJSON)
		case "thinking":
			return d.string(&dl.Thinking)
		case "signature":
			return d.string(&dl.Signature)
		case "stop_reason":
			return d.name((*string)(&dl.StopReason))
		}
		return false
	})
}

func (d *eventDecoder) usage(u *eventUsage) bool {
	return d.fields(usageKeys, func(key []byte) bool {
		switch string(key) {
		case "input_tokens":
			return d.intPointer(&u.InputTokens)
		case "output_tokens":
			return d.int(&u.OutputTokens)
		case "cache_creation_input_tokens":
			return d.intPointer(&u.CacheCreationInputTokens)
		case "cache_read_input_tokens":
			return d.intPointer(&u.CacheReadInputTokens)
		}
		return false
	})
}

// fields decodes an object key by key: field decodes the value of each of
// keys, saying false when it cannot; any other key's value is skipped,
// unless encoding/json would take it for one of keys. null leaves the
// object as it is, as encoding/json does.
func (d *eventDecoder) fields(keys []string, field func(key []byte) bool) bool {
	if d.null() {
		return true
	}
	if !d.char('{') {
		return false
	}
	for first := true; ; first = false {
		key, more, ok := d.nextKey(first)
		if !ok || !more {
			return ok
		}
		if known(key, keys) {
			ok = field(key)
		} else {
			ok = d.unknown(key, keys)
		}
		if !ok {
			return false
		}
	}
}

// known says whether key is one of keys, exactly.
func known(key []byte, keys []string) bool {
	for _, k := range keys {
		if string(key) == k {
			return true
		}
	}
	return false
}

// unknown skips the value of a key that is none of keys, unless
// encoding/json would take it for one of them.
func (d *eventDecoder) unknown(key []byte, keys []string) bool {
	for _, k := range keys {
		if bytes.EqualFold(key, []byte(k)) {
			return false
		}
	}
	return d.skip()
}

// space skips white space.
func (d *eventDecoder) space() {
	for d.i < len(d.data) {
		switch d.data[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// char takes c, after white space.
func (d *eventDecoder) char(c byte) bool {
	d.space()
	if d.i < len(d.data) && d.data[d.i] == c {
		d.i++
		return true
	}
	return false
}

// null takes a null, after white space.
func (d *eventDecoder) null() bool {
	d.space()
	if bytes.HasPrefix(d.data[d.i:], []byte("null")) {
		d.i += 4
		return true
	}
	return false
}

// nextKey reads the next key of an object whose '{' has been read, and
// the colon after it; more is false at the object's end.
func (d *eventDecoder) nextKey(first bool) (key []byte, more, ok bool) {
	if d.char('}') {
		return nil, false, true
	}
	if !first && !d.char(',') {
		return nil, false, false
	}
	d.space()
	raw, escaped, ok := d.rawString()
	if !ok || !d.char(':') {
		return nil, false, false
	}
	if escaped || !utf8.Valid(raw) {
		d.key = unquoteJSON(d.key[:0], raw)
		raw = d.key
	}
	return raw, true, true
}

// rawString reads a string, checking it as encoding/json's scanner does,
// and returns what is between its quotes and whether that holds escapes.
func (d *eventDecoder) rawString() (raw []byte, escaped, ok bool) {
	if d.i >= len(d.data) || d.data[d.i] != '"' {
		return nil, false, false
	}
	start := d.i + 1
	for i := start; i < len(d.data); i++ {
		switch c := d.data[i]; {
		case c == '"':
			d.i = i + 1
			return d.data[start:i], escaped, true
		case c < ' ':
			return nil, false, false
		case c == '\\':
			escaped = true
			if i+1 >= len(d.data) {
				return nil, false, false
			}
			i++
			switch d.data[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if hex4(d.data[i+1:]) < 0 {
					return nil, false, false
				}
				i += 4
			default:
				return nil, false, false
			}
		}
	}
	return nil, false, false
}

// string reads a string field: null leaves it as it is.
func (d *eventDecoder) string(s *string) bool {
	if d.null() {
		return true
	}
	raw, escaped, ok := d.rawString()
	if !ok {
		return false
	}
	if escaped || !utf8.Valid(raw) {
		raw = unquoteJSON(nil, raw)
	}
	*s = string(raw)
	return true
}

// name reads a string field that holds a type or a stop reason: the names
// the API sends are the constants below, not new strings.
func (d *eventDecoder) name(s *string) bool {
	start := d.i
	d.space()
	if raw, escaped, ok := d.rawString(); ok && !escaped {
		for _, n := range eventNames {
			if string(raw) == n {
				*s = n
				return true
			}
		}
	}
	d.i = start
	return d.string(s)
}

// eventNames are the event, block and delta types and stop reasons.
var eventNames = []string{
	"content_block_delta", "text_delta", "thinking_delta", "input_json_delta", "signature_delta",
	"content_block_start", "content_block_stop", "message_start", "message_delta", "message_stop",
	"text", "thinking", "redacted_thinking", "tool_use",
	"end_turn", "max_tokens", "stop_sequence", "refusal", "pause_turn",
}

// int reads an integer field as encoding/json would into an int64, null
// leaving it as it is; a number with a fraction or an exponent, or one
// that may not fit, is left to encoding/json.
func (d *eventDecoder) int(n *int64) bool {
	if d.null() {
		return true
	}
	v, ok := d.integer()
	if ok {
		*n = v
	}
	return ok
}

// intPointer reads an integer into *p, allocating it if nil, as
// encoding/json does; null makes *p nil.
func (d *eventDecoder) intPointer(p **int64) bool {
	if d.null() {
		*p = nil
		return true
	}
	v, ok := d.integer()
	if ok {
		if *p == nil {
			*p = new(int64)
		}
		**p = v
	}
	return ok
}

// integer reads -?(0|[1-9][0-9]*) of at most 18 digits, which int64 holds.
func (d *eventDecoder) integer() (int64, bool) {
	d.space()
	i, neg := d.i, false
	if i < len(d.data) && d.data[i] == '-' {
		neg = true
		i++
	}
	start := i
	var v int64
	for ; i < len(d.data) && d.data[i] >= '0' && d.data[i] <= '9'; i++ {
		v = v*10 + int64(d.data[i]-'0')
	}
	digits := i - start
	if digits == 0 || digits > 18 || digits > 1 && d.data[start] == '0' {
		return 0, false
	}
	if i < len(d.data) && (d.data[i] == '.' || d.data[i] == 'e' || d.data[i] == 'E') {
		return 0, false
	}
	d.i = i
	if neg {
		v = -v
	}
	return v, true
}

// maxSkipDepth is how deep a skipped value may nest before the event is
// left to encoding/json.
const maxSkipDepth = 64

// skip reads any JSON value, checking it.
func (d *eventDecoder) skip() bool {
	d.space()
	if d.i >= len(d.data) {
		return false
	}
	switch c := d.data[d.i]; {
	case c == '"':
		_, _, ok := d.rawString()
		return ok
	case c == '{' || c == '[':
		if d.depth++; d.depth > maxSkipDepth {
			return false
		}
		d.i++
		closing := byte('}')
		if c == '[' {
			closing = ']'
		}
		for first := true; ; first = false {
			if d.char(closing) {
				d.depth--
				return true
			}
			if !first && !d.char(',') {
				return false
			}
			if c == '{' {
				d.space()
				if _, _, ok := d.rawString(); !ok || !d.char(':') {
					return false
				}
			}
			if !d.skip() {
				return false
			}
		}
	case c == '-' || c >= '0' && c <= '9':
		return d.number()
	}
	for _, lit := range []string{"true", "false", "null"} {
		if bytes.HasPrefix(d.data[d.i:], []byte(lit)) {
			d.i += len(lit)
			return true
		}
	}
	return false
}

// number reads a JSON number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (d *eventDecoder) number() bool {
	i := d.i
	digits := func() bool {
		start := i
		for i < len(d.data) && d.data[i] >= '0' && d.data[i] <= '9' {
			i++
		}
		return i > start
	}
	if d.data[i] == '-' {
		i++
	}
	switch {
	case i < len(d.data) && d.data[i] == '0':
		i++
	case !digits():
		return false
	}
	if i < len(d.data) && d.data[i] == '.' {
		i++
		if !digits() {
			return false
		}
	}
	if i < len(d.data) && (d.data[i] == 'e' || d.data[i] == 'E') {
		i++
		if i < len(d.data) && (d.data[i] == '+' || d.data[i] == '-') {
			i++
		}
		if !digits() {
			return false
		}
	}
	d.i = i
	return true
}

// hex4 is the value of the four hex digits b begins with, -1 when it does
// not.
func hex4(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// unquoteJSON appends the string raw (between its quotes, checked by
// rawString) stands for to dst, as encoding/json unquotes: escapes
// resolved, a surrogate pair made one rune and a lone surrogate U+FFFD,
// and each byte of invalid UTF-8 U+FFFD.
func unquoteJSON(dst, raw []byte) []byte {
	for r := 0; r < len(raw); {
		c := raw[r]
		switch {
		case c == '\\':
			r++
			switch e := raw[r]; e {
			case 'b':
				dst = append(dst, '\b')
			case 'f':
				dst = append(dst, '\f')
			case 'n':
				dst = append(dst, '\n')
			case 'r':
				dst = append(dst, '\r')
			case 't':
				dst = append(dst, '\t')
			case 'u':
				rr := hex4(raw[r+1:])
				r += 5
				if utf16.IsSurrogate(rr) {
					if r+1 < len(raw) && raw[r] == '\\' && raw[r+1] == 'u' {
						if dec := utf16.DecodeRune(rr, hex4(raw[r+2:])); dec != unicode.ReplacementChar {
							dst = utf8.AppendRune(dst, dec)
							r += 6
							continue
						}
					}
					rr = unicode.ReplacementChar
				}
				dst = utf8.AppendRune(dst, rr)
				continue
			default: // '"', '\\', '/'
				dst = append(dst, e)
			}
			r++
		case c < utf8.RuneSelf:
			dst = append(dst, c)
			r++
		default:
			rr, size := utf8.DecodeRune(raw[r:])
			dst = utf8.AppendRune(dst, rr)
			r += size
		}
	}
	return dst
}
