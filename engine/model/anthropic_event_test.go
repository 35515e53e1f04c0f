package model

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2/packages/ssestream"
)

// eventShapes are the data of every event the provider's tests stream, and
// of what the API adds to them (usage details, a ping with space).
func eventShapes() []string {
	var shapes []string
	add := func(events []sseEvent) {
		for _, e := range events {
			shapes = append(shapes, e.data)
		}
	}
	add(answerEvents("tool_use", streamUsage{input: 12, output: 40, cacheWrite: 3, cacheRead: 7},
		thinkingBlock("sig-1", "Let me ", "think."),
		redactedThinkingBlock("ENCRYPTED"),
		textBlock("Checking", " the weather.", "\"quoted\" \\ \n\t é 😀 \u2028 <&>"),
		toolUseBlock("toolu_1", "weather", `{"city":`, ` "Paris"}`),
		toolUseBlock("toolu_2", "list")))
	for _, stop := range []string{"end_turn", "max_tokens", "refusal", "stop_sequence", "pause_turn", "model_context_window_exceeded"} {
		add(answerEvents(stop, streamUsage{}))
	}
	add(midStreamError("overloaded_error", "Overloaded").events)
	return append(shapes,
		`{"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":472,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":0},"output_tokens":2,"service_tier":"standard"}}}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"input_tokens":10,"cache_creation_input_tokens":null,"cache_read_input_tokens":5,"output_tokens":15,"server_tool_use":{"web_search_requests":0}},"context_management":{"applied_edits":[]}}`,
		` { "index" : 3 , "delta" : { "text" : "a\u00e9\ud83d\ude00\/\b\f\r" , "type" : "text_delta" } , "type" : "content_block_delta" } `+"\n",
	)
}

// TestDecodeEventShapes holds the hand decoder to taking every event shape
// the API sends, so that FuzzAnthropicEvent compares it on them rather than
// finding that it leaves them all to encoding/json.
func TestDecodeEventShapes(t *testing.T) {
	for _, data := range eventShapes() {
		var fast, want streamEvent
		d := eventDecoder{data: []byte(data)}
		if !d.event(&fast) {
			t.Errorf("the hand decoder leaves %s to encoding/json", data)
			continue
		}
		if err := json.Unmarshal([]byte(data), &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(fast, want) {
			t.Errorf("%s:\nhand decoder %+v\nencoding/json %+v", data, fast, want)
		}
	}
}

// FuzzAnthropicEvent holds decodeEvent to encoding/json's result for any
// bytes: the same event, or the same error.
func FuzzAnthropicEvent(f *testing.F) {
	for _, data := range eventShapes() {
		f.Add([]byte(data))
	}
	for _, data := range []string{
		// What the hand decoder leaves to encoding/json, or must decode as
		// it does: keys that match only case-insensitively, escaped keys,
		// lone and paired surrogates, invalid UTF-8, duplicate keys, nulls,
		// numbers that are not int64s, wrong types, trailing bytes.
		`{"Type":"message_stop"}`, `{"\u0074ype":"ping","ſtop_reason":1,"delta":{"ſtop_reason":"x","stop_reaſon":"y"}}`,
		`{"type":"a\ud800b\udc00c\ud83d\ude00\ud800\u0041\\"}`, "{\"type\":\"\xff\xfe\xed\xa0\x80 é\"}",
		`{"type":"a","type":"b","delta":{"text":"x"},"delta":{"type":"y"}}`,
		`{"type":null,"index":null,"delta":null,"usage":{"input_tokens":null,"output_tokens":null}}`,
		`{"index":1.0}`, `{"index":1e2}`, `{"index":-0}`, `{"index":01}`, `{"index":99999999999999999999}`, `{"index":-9223372036854775808}`,
		`{"index":"1"}`, `{"delta":[]}`, `{"usage":{"input_tokens":true}}`, `{"message":"x"}`,
		`{"type":"x"} x`, `{"type":"x"`, `{"a":[1,{"b":[true,false,null,-1.5e+3,"\u12"]}]}`, `{"a":[1,]}`, `null`, ``, `[]`,
		`{"a":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`,
		"{\"type\":\"a\tb\"}", `{"type":"\x"}`, `{"type":"\'"}`,
	} {
		f.Add([]byte(data))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got, want streamEvent
		err := decodeEvent(data, &got)
		wantErr := json.Unmarshal(data, &want)
		if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
			t.Fatalf("%q: error %v, encoding/json's %v", data, err, wantErr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\ndecodeEvent %+v\nencoding/json %+v", data, got, want)
		}
	})
}

// TestSSEReader holds sseReader to the events the SDK's decoder reads from
// the same bytes.
func TestSSEReader(t *testing.T) {
	for _, body := range []string{
		sseText(answerEvents("end_turn", streamUsage{input: 1}, textBlock("a", "b"))),
		"event: a\r\ndata: {\"x\":1}\r\n\r\n",
		": a comment\nevent:tight\ndata:no space\ndata:  two spaces\n\n",
		"data: no event name\n\nevent: named\n\n",
		"event: multi\ndata: {\ndata: \"a\": 1\ndata: }\nid: 7\nretry: 10\n\n\n\n",
		"event\ndata\n\nevent: x\ndata: y",
		"event: last\ndata: z\n\n",
		"",
	} {
		var want []string
		dec := ssestream.NewDecoder(&http.Response{Body: io.NopCloser(strings.NewReader(body))})
		for dec.Next() {
			want = append(want, dec.Event().Type+"|"+string(dec.Event().Data))
		}
		var got []string
		r := newSSEReader(strings.NewReader(body), nil)
		for r.next() {
			got = append(got, string(r.name)+"|"+string(r.data))
		}
		if !reflect.DeepEqual(got, want) || r.err() != nil {
			t.Errorf("%q:\nsseReader %q (%v)\nthe SDK's decoder %q", body, got, r.err(), want)
		}
	}
	long := "event: big\ndata: " + strings.Repeat("x", maxSSELine) + "\n\n"
	r := newSSEReader(bytes.NewReader([]byte(long)), nil)
	if r.next() || r.err() == nil {
		t.Errorf("a line over %d bytes: no error", maxSSELine)
	}
}
