package jsonenc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
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
			if len(e.fields) != 0 {
				t.Fatalf("%s: key scratch left with %d keys", data, len(e.fields))
			}
			for _, f := range e.fields[:cap(e.fields)] {
				if f.key != "" || f.value != nil {
					t.Fatalf("%s: key scratch keeps %q", data, f.key)
				}
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
		if len(e.fields) != 0 {
			t.Errorf("%#v: key scratch left with %d keys", v, len(e.fields))
		}
	}
}

// TestAppendValueShapes writes maps of the same sizes through one
// Encoder, which keeps the keys of the last of each size: maps of the
// same keys, of other keys, of some of the same keys, nested in maps of
// their size, with HTML escaped and left alone, and a long key, each as
// encoding/json writes it.
func TestAppendValueShapes(t *testing.T) {
	long := strings.Repeat("k", 300)
	values := []any{
		map[string]any{"id": "a", "title": "<t>"},
		map[string]any{"id": "b", "title": "u"},
		map[string]any{"id": "c", "name": "v"},
		map[string]any{"title": "w", "id": "d"},
		map[string]any{"id": map[string]any{"x": 1, "y": 2}, "title": map[string]any{"id": 3, "title": 4}},
		map[string]any{"id": map[string]any{"id": 5, "title": 6}, "title": map[string]any{"x": 7, "y": 8}},
		map[string]any{"x": map[string]any{"id": 9, "title": 10}, "y": map[string]any{"x": 11, "y": 12}},
		[]any{map[string]any{"<": 1, "&": 2}, map[string]any{"<": 3, "&": 4}, map[string]any{"<": 5, ">": 6}},
		map[string]any{long: 1, "a": 2},
		map[string]any{long: 3, "a": 4},
		map[string]any{},
		map[string]any{"id": "e"},
		map[string]any{"ID": "f"},
		map[string]any{"<": "g"},
	}
	// One Encoder writes them all, escaping HTML, leaving it alone, then
	// escaping it again; the last map is written each way in turn, so
	// that a shape kept one way is met the other.
	var e Encoder
	check := func(what string, v any) {
		t.Helper()
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(!e.LeaveHTML)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		want := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		got, err := e.AppendValue(nil, v)
		if err != nil || string(got) != string(want) {
			t.Errorf("%s, HTML left alone %v: %s, %v; encoding/json writes %s", what, e.LeaveHTML, got, err, want)
		}
	}
	for round, leave := range []bool{false, true, false} {
		e.LeaveHTML = leave
		for i, v := range values {
			check(fmt.Sprintf("value %d, round %d", i, round), v)
		}
	}
	for _, leave := range []bool{true, false, true} {
		e.LeaveHTML = leave
		check("the last value again", values[len(values)-1])
	}
	e = Encoder{}
	e.AppendValue(nil, map[string]any{"a": 1, "b": 2})
	if _, err := e.AppendValue(nil, map[string]any{"a": math.NaN(), "b": 2}); err == nil {
		t.Fatal("NaN in a map of a kept shape: no error")
	}
	for n, ways := range e.shapes {
		for _, s := range ways {
			if s.inUse {
				t.Errorf("the shape of %d keys is left in use after an error", n)
			}
		}
	}
}

// TestShapesTakingTurns writes records of three shapes of two keys in
// turn, as a run's inputs and results alternate: the Encoder keeps each
// shape, and writes each record as encoding/json does.
func TestShapesTakingTurns(t *testing.T) {
	records := []map[string]any{
		{"id": 1, "title": "a"},
		{"item": map[string]any{"x": 1}, "index": 2},
		{"label": "bug", "priority": 3},
	}
	var e Encoder
	for round := range 3 {
		for _, r := range records {
			got, err := e.AppendValue(nil, r)
			want, _ := json.Marshal(r)
			if err != nil || string(got) != string(want) {
				t.Errorf("round %d: %s, %v; encoding/json writes %s", round, got, err, want)
			}
		}
	}
	kept := map[string]bool{}
	for _, s := range e.shapes[2] {
		kept[strings.Join(s.keys, ",")] = true
	}
	for _, want := range []string{"id,title", "index,item", "label,priority"} {
		if !kept[want] {
			t.Errorf("the shape %s is not kept: %v", want, kept)
		}
	}
}

// TestAppendStringMatchesEncodingJSON holds AppendString to encoding/json
// on every byte that needs care placed at every offset of a word and
// between clean runs of every length up to two words, so that each is
// seen by both the eight-byte scan and the byte loop after it.
func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	specials := []string{
		"\x00", "\x01", "\x1f", "\x7f", "\"", "\\", "/", "<", ">", "&", "\b", "\f", "\n", "\r", "\t",
		"é", "😀", "\u2028", "\u2029", "\u2027", "\u202a", "\ufffd",
		"\xff", "\x80", "\xc3", "\xc3(", "\xe2\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xf0\x9f\x98",
	}
	const clean = "abcdefghijklmnopqrstuvwxyz 0123456789"
	var cases []string
	for _, sp := range specials {
		for before := 0; before <= 17; before++ {
			for _, after := range []int{0, 1, 7, 8, 9, 16} {
				cases = append(cases, clean[:before]+sp+clean[:after], clean[:before]+sp+sp+clean[:after])
			}
		}
	}
	// A long run of words that need care puts the scanning off; what
	// follows it must still be seen byte by byte where it needs care.
	for n := 1; n <= 80; n++ {
		cases = append(cases, strings.Repeat("é", n)+clean+"<"+clean+"\u2028\x01", strings.Repeat("\n", n)+clean[:n%17]+"\xff\"")
	}
	for c := range 256 {
		cases = append(cases, string([]byte{byte(c)}), "12345678"+string([]byte{byte(c)})+"9")
	}
	for _, s := range cases {
		want, _ := json.Marshal(s)
		if got := AppendString([]byte("x"), s); string(got[1:]) != string(want) || got[0] != 'x' {
			t.Errorf("%q: %s, encoding/json writes %s", s, got[1:], want)
		}
	}
}

// BenchmarkAppendString appends strings like those of a map run's
// payloads, clean ones, and a long one with a quote near its end.
func BenchmarkAppendString(b *testing.B) {
	for _, c := range []struct{ name, s string }{
		{"short", "CHK-1234"},
		{"title", "#1234 checkout times out"},
		{"long", strings.Repeat("a plain sentence of text. ", 40) + `"quoted"`},
		{"accented", strings.Repeat("café crème ", 20)},
	} {
		b.Run(c.name, func(b *testing.B) {
			buf := make([]byte, 0, 2048)
			b.SetBytes(int64(len(c.s)))
			for b.Loop() {
				buf = AppendString(buf[:0], c.s)
			}
		})
	}
}

// BenchmarkAppendValue appends the input of one item of a map run, a map
// within a map, as the run store writes it in a step's and a call's
// events.
func BenchmarkAppendValue(b *testing.B) {
	v := map[string]any{"shape": map[string]any{"id": "CHK-1234", "title": "#1234 checkout times out"}}
	var e Encoder
	buf := make([]byte, 0, 256)
	for b.Loop() {
		buf, _ = e.AppendValue(buf[:0], v)
	}
}
