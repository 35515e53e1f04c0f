package store

import (
	"iter"
	"reflect"
	"strconv"
	"unsafe"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/internal/jsonenc"
)

// payloadEncoder writes event payloads as JSON, byte for byte as
// encoding/json does. The step and tool payloads, which a large map run is
// almost entirely made of, run_start (whose inputs may be as large), and
// the plain values in them (maps, slices,
// strings, numbers) are written without reflection, in a third of the time;
// any other value goes through encoding/json. TestPayloadEncoder holds it
// to encoding/json's output, and to the payload types' fields.
//
// A value two events share is encoded once: the engine gives the same map
// as a step's input and its call's arguments, and the same result to the
// call's end and the step's end, and never changes a payload once emitted
// (engine.Event.Payload), so the JSON of a map or slice is remembered by
// the value's identity until the next payload that holds it.
type payloadEncoder struct {
	enc  jsonenc.Encoder
	memo [memoSlots]memoEntry
	// valueAt is where value wrote the payload's value member in the
	// buffer, none when it wrote none.
	valueAt cut
}

// unknownValue is the value member of a payload whose encoder did not
// say where it lies, for valueCuts and member to find.
var unknownValue = cut{-1, -1}

// memoSlots is the number of values remembered, direct-mapped by their
// address: enough for the other items of a map at concurrency 64 that
// emit between a value's first event and its second.
const memoSlots = 256

// memoMaxBytes is the largest JSON remembered, and the most of a slot's
// buffer kept for the next value: a larger value is encoded each time, so
// that the memo holds no large value alive for long.
const memoMaxBytes = 4 << 10

// memoEntry is a value's JSON under its identity: a map's pointer, or a
// slice's array and length. ptr keeps the value alive while it is
// remembered, so that its address cannot be another value's meanwhile.
type memoEntry struct {
	ptr  unsafe.Pointer
	n    int
	json []byte
}

// append appends p's JSON to b, and says where in it (from its start)
// its value member lies: its step's input or result, its call's arguments
// or result, its run's inputs; each payload written by hand has one at
// most, and none of the other members of valueMembers, so that the
// writer finds a large payload's pieces and a run's inputs without
// scanning its JSON for them. ok is false when p needs encoding/json
// whole (an unknown payload type, or a value it cannot encode, whose error
// encoding/json then reports); b is then returned as it was.
func (pe *payloadEncoder) append(b []byte, p any) (out []byte, value cut, ok bool) {
	start := len(b)
	pe.valueAt = cut{}
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
		return b[:start], unknownValue, false
	}
	if pe.valueAt != (cut{}) {
		value = cut{pe.valueAt.lo - start, pe.valueAt.hi - start}
	}
	return b, value, true
}

func (pe *payloadEncoder) runStarted(b []byte, p *engine.RunStarted) ([]byte, bool) {
	b = append(b, `{"plan":`...)
	b = jsonenc.AppendString(b, p.Plan)
	b = append(b, `,"file":`...)
	b = jsonenc.AppendString(b, p.File)
	if p.Project != "" {
		b = append(b, `,"project":`...)
		b = jsonenc.AppendString(b, p.Project)
	}
	b = append(b, `,"hash":`...)
	b = jsonenc.AppendString(b, p.Hash)
	b = append(b, `,"inputs":`...)
	b, ok := pe.value(b, p.Inputs)
	if p.Parent != "" {
		b = append(b, `,"parent":`...)
		b = jsonenc.AppendString(b, p.Parent)
	}
	if p.Made != "" {
		b = append(b, `,"made":`...)
		b = jsonenc.AppendString(b, string(p.Made))
	}
	return append(b, '}'), ok
}

func (pe *payloadEncoder) stepStarted(b []byte, p *engine.StepStarted) ([]byte, bool) {
	b = append(b, `{"tool":`...)
	b = jsonenc.AppendString(b, p.Tool)
	ok := true
	if p.Input != nil {
		b = append(b, `,"input":`...)
		b, ok = pe.value(b, p.Input)
	}
	return append(b, '}'), ok
}

func (pe *payloadEncoder) stepEnded(b []byte, p *engine.StepEnded) ([]byte, bool) {
	b = append(b, `{"tool":`...)
	b = jsonenc.AppendString(b, p.Tool)
	b = append(b, `,"status":`...)
	b = jsonenc.AppendString(b, string(p.Status))
	ok := true
	if p.Result != nil {
		b = append(b, `,"result":`...)
		b, ok = pe.value(b, p.Result)
	}
	if p.Error != "" {
		b = append(b, `,"error":`...)
		b = jsonenc.AppendString(b, p.Error)
	}
	b = append(b, `,"ms":`...)
	b, err := jsonenc.AppendFloat64(b, p.Ms)
	ok = ok && err == nil
	if p.HeldMs != 0 {
		b = append(b, `,"held_ms":`...)
		b, err = jsonenc.AppendFloat64(b, p.HeldMs)
		ok = ok && err == nil
	}
	b = appendMarks(b, p.Decided, p.Reused)
	return append(b, '}'), ok
}

// appendMarks appends the decided and reused members of an end event.
func appendMarks(b []byte, decided, reused string) []byte {
	if decided != "" {
		b = append(b, `,"decided":`...)
		b = jsonenc.AppendString(b, decided)
	}
	if reused != "" {
		b = append(b, `,"reused":`...)
		b = jsonenc.AppendString(b, reused)
	}
	return b
}

func (pe *payloadEncoder) toolStarted(b []byte, p *engine.ToolStarted) ([]byte, bool) {
	b = append(b, `{"tool":`...)
	b = jsonenc.AppendString(b, p.Tool)
	b = append(b, `,"args":`...)
	b, ok := pe.value(b, p.Args)
	return append(b, '}'), ok
}

func (pe *payloadEncoder) toolEnded(b []byte, p *engine.ToolEnded) ([]byte, bool) {
	b = append(b, `{"tool":`...)
	b = jsonenc.AppendString(b, p.Tool)
	b = append(b, `,"ms":`...)
	b, err := jsonenc.AppendFloat64(b, p.Ms)
	ok := err == nil
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
		b = jsonenc.AppendString(b, p.Error)
	}
	if p.Injected {
		b = append(b, `,"injected":true`...)
	}
	if p.HeldMs != 0 {
		b = append(b, `,"held_ms":`...)
		b, err = jsonenc.AppendFloat64(b, p.HeldMs)
		ok = ok && err == nil
	}
	b = appendMarks(b, p.Decided, p.Reused)
	return append(b, '}'), ok
}

// value appends the JSON of a payload's value member, held in an any, and
// notes where it lies (valueAt); ok is false when encoding/json refuses
// it (NaN, a channel), and the caller then hands the whole payload to
// encoding/json to report why.
func (pe *payloadEncoder) value(b []byte, v any) ([]byte, bool) {
	start := len(b)
	b, ok := pe.memoized(b, v)
	pe.valueAt = cut{start, len(b)}
	return b, ok
}

// memoized appends the JSON of v, remembered when another payload shares
// it (see payloadEncoder).
func (pe *payloadEncoder) memoized(b []byte, v any) ([]byte, bool) {
	var ptr unsafe.Pointer
	n := 0
	switch x := v.(type) {
	case map[string]any:
		ptr, n = reflect.ValueOf(x).UnsafePointer(), len(x)
	case []any:
		ptr, n = unsafe.Pointer(unsafe.SliceData(x)), len(x)
	}
	if ptr == nil {
		b, err := pe.enc.AppendValue(b, v)
		return b, err == nil
	}
	m := &pe.memo[(uintptr(ptr)>>4^uintptr(n))%memoSlots]
	if m.ptr == ptr && m.n == n {
		// A value is shared by two payloads: once found, it is let go.
		m.ptr = nil
		return append(b, m.json...), true
	}
	start := len(b)
	b, err := pe.enc.AppendValue(b, v)
	if err != nil || len(b)-start > memoMaxBytes {
		return b, err == nil
	}
	m.ptr, m.n = ptr, n
	m.json = append(m.json[:0], b[start:]...)
	return b, true
}

// valueMembers are the members of a payload that carry a run's data
// rather than what happened to it: a step's input and result, a call's
// arguments, a run's inputs and output, a model call's request and reply.
// A large payload keeps its large value members in blobs (valueCuts), so
// that a value a step passes on to its tool call, or from its tool call to
// its result, is stored once.
var valueMembers = map[string]bool{
	"input": true, "result": true, "args": true, "inputs": true, "output": true, "answer": true,
	"request": true, "reply": true,
}

// valueBlobBytes is the size over which a value member of a payload over
// blobBytes is kept in blobs.
const valueBlobBytes = 4 << 10

// valueCuts appends to cuts where the top-level valueMembers over
// valueBlobBytes lie in p, a payload object as the encoders write it
// (compact JSON), in order. It is linear in the payload.
func valueCuts(p string, cuts []cut) []cut {
	for name, c := range jsonMembers(p) {
		if valueMembers[name] && c.hi-c.lo > valueBlobBytes {
			cuts = append(cuts, c)
		}
	}
	return cuts
}

// jsonMembers yields the name of each top-level member of p, a payload
// object as the encoders write it (compact JSON), and where its value
// lies, in order. It is linear in the payload.
func jsonMembers(p string) iter.Seq2[string, cut] {
	return func(yield func(string, cut) bool) {
		if len(p) < 2 || p[0] != '{' {
			return
		}
		i := 1
		for i < len(p) && p[i] != '}' {
			keyStart := i
			keyEnd := skipJSONValue(p, i) // the key is a string
			name := p[keyStart+1 : keyEnd-1]
			valueStart := keyEnd + 1 // past the colon
			valueEnd := skipJSONValue(p, valueStart)
			if !yield(name, cut{valueStart, valueEnd}) {
				return
			}
			i = valueEnd
			if i < len(p) && p[i] == ',' {
				i++
			}
		}
	}
}

// member is the JSON of p's top-level member name, nil when p has none.
func member(p []byte, name string) []byte {
	for n, c := range jsonMembers(bufferText(p)) {
		if n == name {
			return p[c.lo:c.hi]
		}
	}
	return nil
}

// skipJSONValue returns the index just past the JSON value that begins at
// p[i], in compact JSON.
func skipJSONValue(p string, i int) int {
	depth := 0
	for ; i < len(p); i++ {
		switch p[i] {
		case '"':
			for i++; i < len(p) && p[i] != '"'; i++ {
				if p[i] == '\\' {
					i++
				}
			}
			if depth == 0 {
				return i + 1
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
			if depth < 0 {
				return i
			}
		case ',':
			if depth == 0 {
				return i
			}
		}
	}
	return i
}
