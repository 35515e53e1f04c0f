package chat

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestMessageJSON reads messages as they are written now and as runs
// recorded before messages were blocks wrote them, so that those runs
// still replay and inspect.
func TestMessageJSON(t *testing.T) {
	call := ToolCall{ID: "call_1", Name: "lookup", Arguments: json.RawMessage(`{"q":"x"}`)}
	tests := []struct {
		name string
		data string
		want Message
	}{
		{
			name: "text as written before",
			data: `{"role":"user","content":"hello"}`,
			want: TextMessage(RoleUser, "hello"),
		},
		{
			name: "an assistant's calls and reasoning without text, as written before",
			data: `{"role":"assistant","tool_calls":[{"id":"call_1","name":"lookup","arguments":{"q":"x"}}],"reasoning":"look first"}`,
			want: Message{Role: RoleAssistant, Blocks: []Block{{Type: BlockThinking, Text: "look first"}, ToolUseBlock(call)}},
		},
		{
			name: "a tool result, as written before",
			data: `{"role":"tool","tool_call_id":"call_1","content":"Error: no"}`,
			want: Message{Role: RoleTool, Blocks: []Block{ToolResultBlock("call_1", "Error: no", false)}},
		},
		{
			name: "an empty message, as written before",
			data: `{"role":"assistant"}`,
			want: Message{Role: RoleAssistant},
		},
		{
			name: "blocks",
			data: `{"role":"assistant","content":[{"type":"thinking","text":"hm","signature":"sig"},{"type":"redacted_thinking","data":"enc"},{"type":"text","text":"ok","cache":true}]}`,
			want: Message{Role: RoleAssistant, Blocks: []Block{
				{Type: BlockThinking, Text: "hm", Signature: "sig"}, {Type: BlockRedactedThinking, Data: "enc"}, {Type: BlockText, Text: "ok", Cache: true}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got Message
			if err := json.Unmarshal([]byte(tt.data), &got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("read %+v\nwant %+v", got, tt.want)
			}
			// What is written now reads back the same.
			data, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			var again Message
			if err := json.Unmarshal(data, &again); err != nil || !reflect.DeepEqual(again, got) {
				t.Errorf("%s read back as %+v (%v)", data, again, err)
			}
		})
	}
}

// TestReplyJSON reads the reasoning string of replies recorded before
// replies kept thinking blocks as one thinking block.
func TestReplyJSON(t *testing.T) {
	var old Reply
	if err := json.Unmarshal([]byte(`{"text":"42","reasoning":"six sevens","usage":{"input_tokens":3},"provider":"p","model":"m"}`), &old); err != nil {
		t.Fatal(err)
	}
	want := Reply{Text: "42", Thinking: []Block{{Type: BlockThinking, Text: "six sevens"}}, Usage: Usage{InputTokens: 3}, Provider: "p", Model: "m"}
	if !reflect.DeepEqual(old, want) {
		t.Errorf("read %+v\nwant %+v", old, want)
	}
	data, _ := json.Marshal(want)
	var again Reply
	if err := json.Unmarshal(data, &again); err != nil || !reflect.DeepEqual(again, want) {
		t.Errorf("%s read back as %+v (%v)", data, again, err)
	}
	if old.Reasoning() != "six sevens" {
		t.Errorf("reasoning %q", old.Reasoning())
	}
}

// TestAssistantMessage lays a reply out as the model gets it back: its
// thinking as returned, then its text, then its calls.
func TestAssistantMessage(t *testing.T) {
	call := ToolCall{ID: "c", Name: "t", Arguments: json.RawMessage(`{}`)}
	thinking := []Block{{Type: BlockThinking, Text: "a", Signature: "s"}, {Type: BlockRedactedThinking, Data: "d"}}
	got := AssistantMessage(Reply{Text: "hi", ToolCalls: []ToolCall{call}, Thinking: thinking})
	want := Message{Role: RoleAssistant, Blocks: []Block{thinking[0], thinking[1], TextBlock("hi"), ToolUseBlock(call)}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if got.Text() != "hi" || !reflect.DeepEqual(got.ToolCalls(), []ToolCall{call}) || !reflect.DeepEqual(got.Thinking(), thinking) {
		t.Errorf("accessors: %q %v %v", got.Text(), got.ToolCalls(), got.Thinking())
	}
}

// TestRequestJSON holds a request's record to the bytes runs recorded when
// cache breakpoints were flags on blocks: each breakpoint in CacheAt is
// "cache": true on the last block of its message, the messages themselves
// are left unmarked, and reading the record gives CacheAt back. An index
// past the messages marks nothing.
func TestRequestJSON(t *testing.T) {
	call := ToolCall{ID: "c1", Name: "get", Arguments: json.RawMessage(`{"q":"<a&b>"}`)}
	history := []Message{
		TextMessage(RoleSystem, "Answer <b>in JSON</b> & briefly."),
		TextMessage(RoleUser, "Count."),
		AssistantMessage(Reply{Thinking: []Block{{Type: BlockThinking, Text: "hm", Signature: "s"}}, ToolCalls: []ToolCall{call}}),
		{Role: RoleTool, Blocks: []Block{ToolResultBlock("c1", "1 & 2", false)}},
	}
	req := Request{Step: "E1", Role: "chat", Messages: history, CacheAt: []int{0, 2, 9}, ToolChoice: ToolChoiceNone}
	recorded := `{"step":"E1","role":"chat","messages":[` +
		`{"role":"system","content":[{"type":"text","text":"Answer <b>in JSON</b> & briefly.","cache":true}]},` +
		`{"role":"user","content":[{"type":"text","text":"Count."}]},` +
		`{"role":"assistant","content":[{"type":"thinking","text":"hm","signature":"s"},{"type":"tool_use","id":"c1","name":"get","input":{"q":"<a&b>"},"cache":true}]},` +
		`{"role":"tool","content":[{"type":"tool_result","text":"1 & 2","id":"c1"}]}],"tool_choice":"none"}`
	escaped := strings.NewReplacer("<", `\u003c`, ">", `\u003e`, "&", `\u0026`).Replace(recorded)

	if got, err := json.Marshal(req); err != nil || string(got) != escaped {
		t.Errorf("json.Marshal wrote\n%s (%v)\nwant\n%s", got, err, escaped)
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(req); err != nil || b.String() != recorded+"\n" {
		t.Errorf("an encoder that leaves HTML alone wrote\n%s (%v)\nwant\n%s", b.String(), err, recorded)
	}
	for i, m := range history {
		for _, bl := range m.Blocks {
			if bl.Cache {
				t.Errorf("writing the request marked message %d of the history", i)
			}
		}
	}

	var read Request
	if err := json.Unmarshal([]byte(recorded), &read); err != nil {
		t.Fatal(err)
	}
	want := req
	want.CacheAt = []int{0, 2}
	if !reflect.DeepEqual(read, want) {
		t.Errorf("read back\n%+v\nwant\n%+v", read, want)
	}
}
