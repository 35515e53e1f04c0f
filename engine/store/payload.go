package store

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/stepwise-dev/stepwise/engine"
)

// payloadEncoder writes event payloads as JSON, byte for byte as
// encoding/json does. The step and tool payloads, which a large map run is
// almost entirely made of, run_start (whose inputs may be as large), and
// the plain values in them (maps, slices,
// strings, numbers) are written without reflection, in a third of the time;
// any other value goes through encoding/json. TestPayloadEncoder holds it
// to encoding/json's output, and to the payload types' fields.
type payloadEncoder struct {
	keys []string // scratch for sorting map keys, shared by nested maps
}

// append appends p's JSON to b. ok is false when p needs encoding/json
// whole (an unknown payload type, or a value it cannot encode, whose error
// encoding/json then reports); b is then returned as it was.
func (pe *payloadEncoder) append(b []byte, p any) (out []byte, ok bool) {
	start := len(b)
	switch v := p.(type) {
	case engine.StepStarted:
		b, ok = pe.stepStarted(b, &v)
	case *engine.StepStarted:
		if v != nil {
			b, ok = pe.stepStarted(b, v)
		}
	case engine.StepEnded:
		b, ok = pe.stepEnded(b, &v)
	case *engine.StepEnded:
		if v != nil {
			b, ok = pe.stepEnded(b, v)
		}
	case engine.ToolStarted:
		b, ok = pe.toolStarted(b, &v)
	case *engine.ToolStarted:
		if v != nil {
			b, ok = pe.toolStarted(b, v)
		}
	case engine.RunStarted:
		b, ok = pe.runStarted(b, &v)
	case *engine.RunStarted:
		if v != nil {
			b, ok = pe.runStarted(b, v)
		}
	case engine.ToolEnded:
		b, ok = pe.toolEnded(b, &v)
	case *engine.ToolEnded:
		if v != nil {
			b, ok = pe.toolEnded(b, v)
		}
	}
	if !ok {
		return b[:start], false
	}
	return b, true
}

func (pe *payloadEncoder) runStarted(b []byte, p *engine.RunStarted) ([]byte, bool) {
	b = append(b, `{"plan":`...)
	b = appendString(b, p.Plan)
	b = append(b, `,"file":`...)
	b = appendString(b, p.File)
	if p.Project != "" {
		b = append(b, `,"project":`...)
		b = appendString(b, p.Project)
	}
	b = append(b, `,"hash":`...)
	b = appendString(b, p.Hash)
	b = append(b, `,"inputs":`...)
	b, ok := pe.value(b, p.Inputs)
	if p.Parent != "" {
		b = append(b, `,"parent":`...)
		b = appendString(b, p.Parent)
	}
	return append(b, '}'), ok
}

func (pe *payloadEncoder) stepStarted(b []byte, p *engine.StepStarted) ([]byte, bool) {
	b = append(b, `{"tool":`...)
	b = appendString(b, p.Tool)
	ok := true
	if p.Input != nil {
		b = append(b, `,"input":`...)
		b, ok = pe.value(b, p.Input)
	}
	return append(b, '}'), ok
}

func (pe *payloadEncoder) stepEnded(b []byte, p *engine.StepEnded) ([]byte, bool) {
	b = append(b, `{"tool":`...)
	b = appendString(b, p.Tool)
	b = append(b, `,"status":`...)
	b = appendString(b, p.Status)
	ok := true
	if p.Result != nil {
		b = append(b, `,"result":`...)
		b, ok = pe.value(b, p.Result)
	}
	if p.Error != "" {
		b = append(b, `,"error":`...)
		b = appendString(b, p.Error)
	}
	b = append(b, `,"ms":`...)
	b, fine := appendFloat(b, p.Ms, 64)
	return append(b, '}'), ok && fine
}

func (pe *payloadEncoder) toolStarted(b []byte, p *engine.ToolStarted) ([]byte, bool) {
	b = append(b, `{"tool":`...)
	b = appendString(b, p.Tool)
	b = append(b, `,"args":`...)
	b, ok := pe.value(b, p.Args)
	return append(b, '}'), ok
}

func (pe *payloadEncoder) toolEnded(b []byte, p *engine.ToolEnded) ([]byte, bool) {
	b = append(b, `{"tool":`...)
	b = appendString(b, p.Tool)
	b = append(b, `,"ms":`...)
	b, ok := appendFloat(b, p.Ms, 64)
	b = append(b, `,"is_error":`...)
	b = strconv.AppendBool(b, p.IsError)
	if p.Result != nil {
		var fine bool
		b = append(b, `,"result":`...)
		b, fine = pe.value(b, p.Result)
		ok = ok && fine
	}
	if p.Error != "" {
		b = append(b, `,"error":`...)
		b = appendString(b, p.Error)
	}
	if p.Injected {
		b = append(b, `,"injected":true`...)
	}
	return append(b, '}'), ok
}

// value appends the JSON of a value held in an any.
func (pe *payloadEncoder) value(b []byte, v any) ([]byte, bool) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), true
	case string:
		return appendString(b, x), true
	case bool:
		return strconv.AppendBool(b, x), true
	case float64:
		return appendFloat(b, x, 64)
	case float32:
		return appendFloat(b, float64(x), 32)
	case int:
		return strconv.AppendInt(b, int64(x), 10), true
	case int64:
		return strconv.AppendInt(b, x, 10), true
	case int32:
		return strconv.AppendInt(b, int64(x), 10), true
	case uint64:
		return strconv.AppendUint(b, x, 10), true
	case map[string]any:
		if x == nil {
			return append(b, "null"...), true
		}
		base := len(pe.keys)
		for k := range x {
			pe.keys = append(pe.keys, k)
		}
		keys := pe.keys[base:]
		slices.Sort(keys)
		b = append(b, '{')
		ok := true
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			if b, ok = pe.value(b, x[k]); !ok {
				break
			}
		}
		clear(keys)
		pe.keys = pe.keys[:base]
		return append(b, '}'), ok
	case []any:
		if x == nil {
			return append(b, "null"...), true
		}
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = pe.value(b, e); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	}
	j, err := json.Marshal(v)
	if err != nil {
		return b, false
	}
	return append(b, j...), true
}

// appendFloat writes a float as encoding/json does (ES6 number
// formatting); NaN and infinities are not JSON.
func appendFloat(b []byte, f float64, bits int) ([]byte, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, false
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	b = strconv.AppendFloat(b, f, format, -1, bits)
	if format == 'e' {
		// e-09 is written e-9.
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, true
}

const hexDigits = "0123456789abcdef"

// appendString writes a JSON string as encoding/json does by default:
// <, > and & escaped for HTML, invalid UTF-8 replaced, U+2028 and U+2029
// escaped.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
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
