package store

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/stepwise-dev/stepwise/engine"
)

// TestPayloadEncoder holds the hand-written encoding of the step and tool
// payloads to encoding/json's, byte for byte.
func TestPayloadEncoder(t *testing.T) {
	values := []any{
		nil, "", "plain", `quote " backslash \ slash /`, "html <b>&amp;</b>", "ctl \x00\x01\b\f\n\r\t\x1f",
		"utf-8 é 日本 🎉", "bad \xff\xfe utf-8", "separators \u2028 \u2029",
		true, false, 0.0, math.Copysign(0, -1), 1.0, 1.5, -3.25, 1e-7, 1e-6, 123456789.125, 1e20, 1e21, 1.7976931348623157e308, 5e-324,
		float32(1.1), float32(1e-7), float32(3e21),
		0, -1, 42, int64(math.MaxInt64), int64(math.MinInt64), int32(-7), uint64(math.MaxUint64), int8(3), uint16(9),
		map[string]any{}, map[string]any{"b": 1, "a": []any{"x", nil, map[string]any{"z": true, "y": 2.5}}, "": "empty key", "<k>": "v"},
		[]any{}, []any{1, "two", []any{3}}, map[string]any(nil), []any(nil),
		map[string]string{"k": "v"}, []string{"a", "b"}, []int{1, 2}, json.RawMessage(`{"raw" : [1, 2]}`), json.Number("12.5"),
		struct {
			A int    `json:"a"`
			B string `json:"b,omitempty"`
		}{A: 1}, []byte("bytes"), &struct{ X int }{X: 3},
	}
	var payloads []any
	for _, v := range values {
		payloads = append(payloads,
			engine.StepStarted{Tool: "builtin__reshape", Input: v},
			&engine.StepStarted{Tool: "map <do>", Input: v},
			engine.StepEnded{Tool: "t", Status: "ok", Result: v, Ms: 0.25},
			&engine.StepEnded{Tool: "t", Status: "failed", Result: v, Error: "boom \"x\"", Ms: 1e21},
			engine.ToolStarted{Tool: "tracker__get", Args: v},
			engine.ToolEnded{Tool: "tracker__get", Ms: 12, IsError: true, Result: v, Error: "e"},
			&engine.ToolEnded{Tool: "tracker__get", Ms: 0, Result: v},
			engine.ToolEnded{Tool: "tracker__get", Result: v, Injected: true},
			engine.StepEnded{Tool: "t", Status: "skipped", Result: v, Ms: 300.5, HeldMs: 299.75, Decided: "inject"},
			engine.StepEnded{Tool: "t", Status: "skipped", Result: v, Reused: "replay"},
			engine.ToolEnded{Tool: "tracker__get", Result: v, Injected: true, HeldMs: 1.5, Decided: "edit", Reused: "fork"},
			engine.RunStarted{Plan: "p", File: "f.yaml", Hash: "ab", Inputs: map[string]any{"v": v}},
			engine.RunStarted{Plan: "p", File: ".stepwise/plans/f.yaml", Project: "/home/me/<proj> & co", Hash: "ab", Inputs: map[string]any{"v": v}},
			&engine.RunStarted{Plan: "p", Inputs: map[string]any{"v": v}, Parent: "0123"},
		)
	}
	payloads = append(payloads, engine.RunStarted{}, engine.RunStarted{Inputs: map[string]any{}})
	var enc payloadEncoder
	for _, p := range payloads {
		want, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("%#v: %v", p, err)
		}
		got, value, ok := enc.append([]byte("prefix"), p)
		if !ok {
			t.Errorf("%#v: not encoded by hand", p)
			continue
		}
		if string(got) != "prefix"+string(want) {
			t.Errorf("%#v:\n got %s\nwant %s", p, got[len("prefix"):], want)
		}
		// The value member the encoder says it wrote is the only one of
		// valueMembers that the payload's JSON has.
		var found []cut
		for name, c := range jsonMembers(string(want)) {
			if valueMembers[name] {
				found = append(found, c)
			}
		}
		if len(found) > 1 || (len(found) == 1) != (value != cut{}) || len(found) == 1 && found[0] != value {
			t.Errorf("%#v: value member at %v, the JSON has %v", p, value, found)
		}
	}
	// What JSON cannot hold goes to encoding/json whole, which says why.
	for _, p := range []any{
		engine.StepEnded{Ms: math.NaN()},
		engine.StepStarted{Input: map[string]any{"x": math.Inf(1)}},
		engine.ToolStarted{Args: []any{func() {}}},
		engine.Warning{Message: "not a step payload"},
		(*engine.StepStarted)(nil),
	} {
		if got, _, ok := enc.append([]byte("prefix"), p); ok || string(got) != "prefix" {
			t.Errorf("%#v: encoded as %s, want it left to encoding/json", p, got)
		}
	}
}

// TestPayloadFields fails when a payload type the encoder writes by hand
// gains, loses or renames a field: update payloadEncoder with it.
func TestPayloadFields(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want string
	}{
		{engine.StepStarted{}, `Tool json:"tool"; Input json:"input,omitempty"`},
		{engine.StepEnded{}, `Tool json:"tool"; Status json:"status"; Result json:"result,omitempty"; Error json:"error,omitempty"; Ms json:"ms"; HeldMs json:"held_ms,omitempty"; Decided json:"decided,omitempty"; Reused json:"reused,omitempty"`},
		{engine.ToolStarted{}, `Tool json:"tool"; Args json:"args"`},
		{engine.ToolEnded{}, `Tool json:"tool"; Ms json:"ms"; IsError json:"is_error"; Result json:"result,omitempty"; Error json:"error,omitempty"; Injected json:"injected,omitempty"; HeldMs json:"held_ms,omitempty"; Decided json:"decided,omitempty"; Reused json:"reused,omitempty"`},
		{engine.RunStarted{}, `Plan json:"plan"; File json:"file"; Project json:"project,omitempty"; Hash json:"hash"; Inputs json:"inputs"; Parent json:"parent,omitempty"; Made json:"made,omitempty"`},
	} {
		typ := reflect.TypeOf(tc.v)
		var fields []string
		for i := range typ.NumField() {
			f := typ.Field(i)
			fields = append(fields, f.Name+" "+string(f.Tag))
		}
		if got := strings.Join(fields, "; "); got != tc.want {
			t.Errorf("%s has fields %s; payloadEncoder writes %s", typ, got, tc.want)
		}
		if _, ok := tc.v.(json.Marshaler); ok {
			t.Errorf("%s marshals itself; payloadEncoder must defer to it", typ)
		}
	}
}

// FuzzPayloadEncoder holds the encoder to encoding/json on strings,
// numbers and nesting it was not written for.
func FuzzPayloadEncoder(f *testing.F) {
	f.Add("plain", 1.5, int64(3), true)
	f.Add("<&>\u2028\x00\xff\"\\", 1e21, int64(-1), false)
	f.Add("", 1e-7, int64(math.MaxInt64), true)
	f.Fuzz(func(t *testing.T, s string, fl float64, n int64, nested bool) {
		var v any = map[string]any{s: []any{s, fl, n, nil, true}, "k": s}
		if nested {
			v = []any{v, map[string]any{"": v}}
		}
		var enc payloadEncoder
		for _, p := range []any{
			engine.StepStarted{Tool: s, Input: v},
			engine.StepEnded{Tool: s, Status: engine.StepStatus(s), Result: v, Error: s, Ms: fl, HeldMs: fl, Decided: s, Reused: s},
			engine.ToolStarted{Tool: s, Args: v},
			engine.ToolEnded{Tool: s, Ms: fl, Result: v, Error: s, HeldMs: fl, Decided: s, Reused: s},
			engine.RunStarted{Plan: s, File: s, Project: s, Inputs: map[string]any{s: v}, Parent: s},
		} {
			want, err := json.Marshal(p)
			got, _, ok := enc.append(nil, p)
			if err != nil {
				if ok {
					t.Fatalf("%#v: encoded as %s, but encoding/json says %v", p, got, err)
				}
				continue
			}
			if !ok || string(got) != string(want) {
				t.Fatalf("%#v:\n got %s (%v)\nwant %s", p, got, ok, want)
			}
		}
	})
}

// TestPayloadEncoderSharedValues gives values to two payloads each, as the
// engine gives a step's input to its call and its call's result to the
// step, with the payloads of other values between them and slots of the
// memo shared: each payload is still encoding/json's.
func TestPayloadEncoderSharedValues(t *testing.T) {
	var values []any
	for i := range 3 * memoSlots {
		values = append(values,
			map[string]any{"id": i, "title": strings.Repeat("t", i)},
			[]any{i, "x"}, []any{}, map[string]any{},
			map[string]any{"big": strings.Repeat("b", memoMaxBytes+i)})
	}
	var payloads []any
	for _, v := range values {
		payloads = append(payloads, engine.StepStarted{Tool: "t", Input: v})
	}
	for i := range values {
		v := values[len(values)-1-i]
		payloads = append(payloads, engine.ToolStarted{Tool: "t", Args: v}, &engine.StepEnded{Tool: "t", Status: "ok", Result: v})
	}
	var enc payloadEncoder
	for _, p := range payloads {
		want, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		if got, _, ok := enc.append(nil, p); !ok || string(got) != string(want) {
			t.Fatalf("%#v:\n got %s\nwant %s", p, got, want)
		}
	}
}
