package model

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stepwise-dev/stepwise/engine/chat"
)

// TestModelReplyLimit checks that [limits] model_reply_bytes stops a reply
// while it streams, from either kind of server, whatever the reply is made
// of: the call fails naming the key, is not retried, and no more than the
// limit reaches the caller.
func TestModelReplyLimit(t *testing.T) {
	const limit = 1000
	piece := strings.Repeat("x", 100)
	pieces := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = piece
		}
		return out
	}
	openAIArgs := func(n int) chatResponse {
		chunks := []string{chunk(`{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"lookup","arguments":"{\"q\":\""}}]}`)}
		for range n {
			chunks = append(chunks, chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"`+piece+`"}}]}`))
		}
		chunks = append(chunks, chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"\"}"}}]}`), finish("tool_calls"))
		return chatResponse{chunks: chunks}
	}
	anthropicArgs := func(n int) serverTurn {
		parts := append([]string{`{"q":"`}, pieces(n)...)
		return streamedTurn("tool_use", streamUsage{}, toolUseBlock("toolu_a", "lookup", append(parts, `"}`)...))
	}
	tests := []struct {
		name      string
		openai    *chatResponse
		anthropic *serverTurn
		fails     bool
	}{
		{name: "openai text under the limit", openai: new(text(pieces(9)...))},
		{name: "openai text over the limit", openai: new(text(pieces(50)...)), fails: true},
		{name: "openai tool arguments over the limit", openai: new(openAIArgs(50)), fails: true},
		{name: "anthropic text under the limit", anthropic: new(streamedTurn("end_turn", streamUsage{}, textBlock(pieces(9)...)))},
		{name: "anthropic text over the limit", anthropic: new(streamedTurn("end_turn", streamUsage{}, textBlock(pieces(50)...))), fails: true},
		{name: "anthropic thinking over the limit", anthropic: new(streamedTurn("end_turn", streamUsage{}, thinkingBlock("sig", pieces(50)...), textBlock("ok"))), fails: true},
		{name: "anthropic tool input over the limit", anthropic: new(anthropicArgs(50)), fails: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var provider string
			var requests func() int
			if tt.openai != nil {
				// Three answers, so that a retry would succeed: the test
				// sees it if one is made.
				srv := newChatServer(t, *tt.openai, text("retried"), text("retried"))
				provider = fmt.Sprintf("type = \"openai_compat\"\nbase_url = \"%s/v1\"", srv.URL)
				requests = func() int { return len(srv.bodies()) }
			} else {
				again := streamedTurn("end_turn", streamUsage{}, textBlock("retried"))
				srv := newMessagesServer(t, *tt.anthropic, again, again)
				provider = fmt.Sprintf("type = \"anthropic\"\nbase_url = %q\napi_key = \"k\"", srv.URL)
				requests = srv.count
			}
			cfg := project(t, fmt.Sprintf("[limits]\nmodel_reply_bytes = %d\n[providers.a]\n%s\n[models]\ndefault = { provider = \"a\", model = \"m\" }\n",
				limit, provider), nil)
			onDelta, streamed, thinking := collect()
			r, err := New(cfg, Options{Backoff: noBackoff}).Call(context.Background(), "chat", chat.Request{Step: "E1", Messages: user("hi")}, onDelta)
			if !tt.fails {
				if err != nil || r.Text != strings.Repeat(piece, 9) {
					t.Fatalf("reply %q, error %v; want the whole text", r.Text, err)
				}
				return
			}
			wantError(t, err, "model a/m: the reply passed 1000 bytes ([limits] model_reply_bytes) while it streamed, and was stopped")
			if IsTransient(err) {
				t.Errorf("error %v is transient", err)
			}
			if n := requests(); n != 1 {
				t.Errorf("%d requests, want 1: a reply over the limit is not retried", n)
			}
			if n := streamed.Len() + thinking.Len(); n > limit {
				t.Errorf("%d bytes streamed to the caller, more than the limit", n)
			}
		})
	}
}

// TestScriptReplyLimit checks that a scripted reply is held to [limits]
// model_reply_bytes as a server's is, so that the limit can be tried
// offline: whether it comes at once or over a delay, as text, as JSON or
// as a tool call's arguments, from a script provider or from the file
// stepwise run --script gives, the call fails naming the key, with no
// more than the limit streamed and no retry.
func TestScriptReplyLimit(t *testing.T) {
	const limit = 1000
	big := strings.Repeat("b", 1500)
	tests := []struct {
		name  string
		reply string
		fails bool
	}{
		{name: "text under the limit", reply: `{text: "` + strings.Repeat("b", 900) + `"}`},
		{name: "text over the limit", reply: `{text: "` + big + `"}`, fails: true},
		{name: "delayed text over the limit", reply: `{text: "` + big + `", delay_ms: 20}`, fails: true},
		{name: "reasoning over the limit", reply: `{text: "ok", reasoning: "` + big + `"}`, fails: true},
		{name: "json over the limit", reply: `{json: {b: "` + big + `"}}`, fails: true},
		{name: "tool arguments over the limit", reply: `{tool_calls: [{name: lookup, arguments: {q: "` + big + `"}}]}`, fails: true},
	}
	for _, tt := range tests {
		for _, via := range []string{"provider", "--script"} {
			t.Run(tt.name+" via "+via, func(t *testing.T) {
				// A second reply, so that a retry would succeed: the test
				// sees it if one is made.
				replies := "replies:\n  - reply: " + tt.reply + "\n  - reply: {text: retried}\n"
				cfg := project(t, fmt.Sprintf("[limits]\nmodel_reply_bytes = %d\n[providers.s]\ntype = \"script\"\nfile = \"replies.yaml\"\n[models]\ndefault = { provider = \"s\", model = \"m\" }\n", limit),
					map[string]string{"replies.yaml": replies})
				opts := Options{Backoff: noBackoff}
				if via == "--script" {
					opts.ScriptFile = writeFile(t, t.TempDir(), "replies.yaml", replies)
				}
				onDelta, streamed, thinking := collect()
				r, err := New(cfg, opts).Call(context.Background(), "chat", chat.Request{Step: "E1", Messages: user("hi")}, onDelta)
				if !tt.fails {
					if err != nil || r.Text != strings.Repeat("b", 900) {
						t.Fatalf("reply %q, error %v; want the whole text", r.Text, err)
					}
					return
				}
				provider := "s"
				if via == "--script" {
					provider = ScriptProviderName
				}
				wantError(t, err, "model "+provider+"/m: the reply passed 1000 bytes ([limits] model_reply_bytes) while it streamed, and was stopped")
				if IsTransient(err) {
					t.Errorf("error %v is transient", err)
				}
				if n := streamed.Len() + thinking.Len(); n > limit {
					t.Errorf("%d bytes streamed to the caller, more than the limit", n)
				}
			})
		}
	}
}
