package jsonenc

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

// FuzzAppendJSON holds AppendString and AppendValue to the bytes
// encoding/json writes: the fuzz input as a string, a map of ints as a
// schema written in Go holds, and the input decoded as JSON both ways
// (float64 and json.Number numbers), also as an encoding/json Encoder
// that leaves HTML alone writes it, and the key scratch to empty after
// each value.
func FuzzAppendJSON(f *testing.F) {
	for _, s := range []string{
		"", "plain", "\"\\/\b\f\n\r\t\x00\x1f\x7f", "<a href=\"x\">&amp;</a>", "é 😀 \u2028\u2029 \ufffd", "\xff\xc3(\xed\xa0\x80",
		`{"type":"object","additionalProperties":false,"required":["id"],"properties":{"id":{"type":"string","description":"<the> & key"}},"$defs":{}}`,
		`[null,true,false,0,-0,1,-1.5,0.1,1e-6,1e-7,123456789,1e20,1e21,1.7976931348623157e308,5e-324,12345678901234567890,[],{},[[{"":{}}]]]`,
		`{"b":1,"a":2,"B":3,"é":4,"\u0000":5,"<":6}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s := string(data)
		want, _ := json.Marshal(s)
		if got := AppendString([]byte("x"), s); string(got[1:]) != string(want) || got[0] != 'x' {
			t.Fatalf("string %q: %s, encoding/json writes %s", s, got, want)
		}
		// A schema written in Go holds ints.
		ints := map[string]any{"n": len(data), "m": -len(data) << 40, s: []any{int(len(s) % 3)}}
		wantInts, _ := json.Marshal(ints)
		var e Encoder
		if got, _ := e.AppendValue(nil, ints); string(got) != string(wantInts) {
			t.Fatalf("%v: %s, encoding/json writes %s", ints, got, wantInts)
		}
		for _, useNumber := range []bool{false, true} {
			dec := json.NewDecoder(bytes.NewReader(data))
			if useNumber {
				dec.UseNumber()
			}
			var doc any
			if dec.Decode(&doc) != nil {
				return
			}
			want, wantErr := json.Marshal(doc)
			got, err := e.AppendValue([]byte("x"), doc)
			if (err == nil) != (wantErr == nil) || err == nil && (string(got[1:]) != string(want) || got[0] != 'x') {
				t.Fatalf("%s (UseNumber %v): %s, %v; encoding/json writes %s, %v", data, useNumber, got, err, want, wantErr)
			}
			if len(e.keys) != 0 {
				t.Fatalf("%s: key scratch left with %d keys", data, len(e.keys))
			}
			var plain bytes.Buffer
			enc := json.NewEncoder(&plain)
			enc.SetEscapeHTML(false)
			wantErr = enc.Encode(doc)
			want = bytes.TrimSuffix(plain.Bytes(), []byte("\n"))
			leave := Encoder{LeaveHTML: true}
			got, err = leave.AppendValue([]byte("x"), doc)
			if (err == nil) != (wantErr == nil) || err == nil && (string(got[1:]) != string(want) || got[0] != 'x') {
				t.Fatalf("%s (UseNumber %v, HTML left alone): %s, %v; encoding/json writes %s, %v", data, useNumber, got, err, want, wantErr)
			}
		}
	})
}

// TestAppendValueErrors checks that what JSON cannot hold fails as
// encoding/json fails, and leaves the key scratch empty.
func TestAppendValueErrors(t *testing.T) {
	var e Encoder
	for _, v := range []any{
		math.NaN(),
		float32(math.Inf(1)),
		map[string]any{"a": 1, "b": map[string]any{"c": math.Inf(-1)}},
		[]any{func() {}},
	} {
		_, want := json.Marshal(v)
		if _, err := e.AppendValue(nil, v); err == nil || err.Error() != want.Error() {
			t.Errorf("%#v: error %v, want %v", v, err, want)
		}
		if len(e.keys) != 0 {
			t.Errorf("%#v: key scratch left with %d keys", v, len(e.keys))
		}
	}
}
