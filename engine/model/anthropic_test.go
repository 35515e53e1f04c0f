package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/stepwise-dev/stepwise/engine/chat"
	"github.com/stepwise-dev/stepwise/engine/config"
)

// openAnthropic opens a provider of type anthropic pointed at srv.
func openAnthropic(t *testing.T, srv *messagesServer, pc config.Provider) *anthropicProvider {
	t.Helper()
	pc.Type = config.ProviderAnthropic
	pc.BaseURL = srv.URL
	if pc.APIKey == "" {
		pc.APIKey = "sk-ant-test"
	}
	p, err := newAnthropicProvider("claude", pc)
	if err != nil {
		t.Fatal(err)
	}
	return p.(*anthropicProvider)
}

// requestBody decodes request i's body.
func requestBody(t *testing.T, srv *messagesServer, i int) map[string]any {
	t.Helper()
	var body map[string]any
	if err := json.Unmarshal(srv.body(t, i), &body); err != nil {
		t.Fatalf("request %d: %v", i+1, err)
	}
	return body
}

// field renders a field of a decoded body as compact JSON, "" when absent.
func field(body map[string]any, key string) string {
	v, ok := body[key]
	if !ok {
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// collect returns an onDelta that gathers the streamed text and thinking.
func collect() (func(chat.Delta), *strings.Builder, *strings.Builder) {
	var text, thinking strings.Builder
	return func(d chat.Delta) {
		text.WriteString(d.Text)
		thinking.WriteString(d.Reasoning)
	}, &text, &thinking
}

func TestAnthropicComplete(t *testing.T) {
	tests := []struct {
		name         string
		turn         serverTurn
		wantText     string
		wantThinking []chat.Block
		wantCalls    string // the tool calls as JSON
		wantFinish   string
		wantUsage    chat.Usage
		wantStreamed string // text deltas, then "|", then thinking deltas
	}{
		{
			name:       "a text answer",
			turn:       streamedTurn("end_turn", streamUsage{input: 20, output: 5}, textBlock(`{"ok"`, `: true}`)),
			wantText:   `{"ok": true}`,
			wantFinish: "stop", wantUsage: chat.Usage{InputTokens: 20, OutputTokens: 5},
			wantStreamed: `{"ok": true}|`,
		},
		{
			name: "thinking with its signature, redacted thinking, then text",
			turn: streamedTurn("end_turn", streamUsage{input: 30, output: 90, cacheWrite: 1200, cacheRead: 800},
				thinkingBlock("c2lnbmF0dXJl", "First, ", "the facts."),
				redactedThinkingBlock("EncRypTed=="),
				textBlock("done")),
			wantText: "done",
			wantThinking: []chat.Block{
				{Type: chat.BlockThinking, Text: "First, the facts.", Signature: "c2lnbmF0dXJl"},
				{Type: chat.BlockRedactedThinking, Data: "EncRypTed=="},
			},
			wantFinish:   "stop",
			wantUsage:    chat.Usage{InputTokens: 30, OutputTokens: 90, CacheCreationInputTokens: 1200, CacheReadInputTokens: 800},
			wantStreamed: "done|First, the facts.",
		},
		{
			name: "parallel tool calls with input streamed in pieces",
			turn: streamedTurn("tool_use", streamUsage{input: 10, output: 30},
				textBlock("Looking."),
				toolUseBlock("toolu_a", "tracker__get_issue", `{"id"`, `: "A-1"}`),
				toolUseBlock("toolu_b", "tracker__get_issue", `{"id": "A-2"}`),
				toolUseBlock("toolu_c", "tracker__list_issues")),
			wantText:     "Looking.",
			wantCalls:    `[{"id":"toolu_a","name":"tracker__get_issue","arguments":{"id":"A-1"}},{"id":"toolu_b","name":"tracker__get_issue","arguments":{"id":"A-2"}},{"id":"toolu_c","name":"tracker__list_issues","arguments":{}}]`,
			wantFinish:   "tool_calls",
			wantUsage:    chat.Usage{InputTokens: 10, OutputTokens: 30},
			wantStreamed: "Looking.|",
		},
		{
			name:       "a refusal",
			turn:       streamedTurn("refusal", streamUsage{input: 10, output: 3}, textBlock("I can't help with that.")),
			wantText:   "I can't help with that.",
			wantFinish: "refusal", wantUsage: chat.Usage{InputTokens: 10, OutputTokens: 3},
			wantStreamed: "I can't help with that.|",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newMessagesServer(t, tt.turn)
			p := openAnthropic(t, srv, config.Provider{})
			onDelta, text, thinking := collect()
			r, err := p.Complete(context.Background(), "claude-test", chat.Request{Messages: user("go")}, onDelta)
			if err != nil {
				t.Fatalf("Complete: %v", err)
			}
			if r.Text != tt.wantText || r.FinishReason != tt.wantFinish || r.Usage != tt.wantUsage {
				t.Errorf("reply %q, finish %q, usage %+v; want %q, %q, %+v", r.Text, r.FinishReason, r.Usage, tt.wantText, tt.wantFinish, tt.wantUsage)
			}
			if got, _ := json.Marshal(r.Thinking); len(tt.wantThinking) > 0 || r.Thinking != nil {
				if want, _ := json.Marshal(tt.wantThinking); !bytes.Equal(got, want) {
					t.Errorf("thinking %s, want %s", got, want)
				}
			}
			if calls, _ := json.Marshal(r.ToolCalls); tt.wantCalls != "" && string(calls) != tt.wantCalls || tt.wantCalls == "" && r.ToolCalls != nil {
				t.Errorf("tool calls %s, want %s", calls, tt.wantCalls)
			}
			if got := text.String() + "|" + thinking.String(); got != tt.wantStreamed {
				t.Errorf("streamed %q, want %q", got, tt.wantStreamed)
			}
			body := requestBody(t, srv, 0)
			if body["stream"] != true || body["model"] != "claude-test" || field(body, "max_tokens") != "8192" {
				t.Errorf("request %s", srv.body(t, 0))
			}
		})
	}
}

// TestAnthropicRequest checks the request bodies: system blocks, cache
// breakpoints, tool messages as tool_result blocks, merged neighbours,
// tools with their schemas, tool_choice none, and the model entry's
// settings.
func TestAnthropicRequest(t *testing.T) {
	toolSchema := map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "string"}}, "required": []any{"id"}, "additionalProperties": false}
	temp := 0.3
	conversation := []chat.Message{
		chat.TextMessage(chat.RoleSystem, "You are careful."),
		chat.TextMessage(chat.RoleUser, "Summarise A-1."),
		{Role: chat.RoleAssistant, Blocks: []chat.Block{
			{Type: chat.BlockThinking, Text: "I need the issue.", Signature: "sig-1"},
			{Type: chat.BlockRedactedThinking, Data: "opaque"},
			// Reasoning another provider returned has no signature and
			// cannot be checked: it is left out.
			{Type: chat.BlockThinking, Text: "unsigned"},
			chat.TextBlock(""),
			{Type: chat.BlockToolUse, ID: "toolu_1", Name: "get", Input: json.RawMessage(`{"id":"A-1"}`)},
			{Type: chat.BlockToolUse, ID: "toolu_2", Name: "get", Input: json.RawMessage(`{"id":"A-2"}`)},
		}},
		{Role: chat.RoleTool, Blocks: []chat.Block{
			chat.ToolResultBlock("toolu_1", `{"title":"Crash"}`, false),
			{Type: chat.BlockToolResult, ID: "toolu_2", Text: "Error: no such issue", IsError: true},
		}},
		chat.TextMessage(chat.RoleUser, "This is your last turn."),
	}
	tests := []struct {
		name string
		req  chat.Request
		want map[string]string // body field: compact JSON; "" for absent
	}{
		{
			name: "a round with history, tools and thinking",
			req: chat.Request{Messages: conversation, CacheAt: []int{0, 3}, MaxTokens: 16000, Temperature: &temp,
				Tools:    []chat.ToolDef{{Name: "get", Description: "Get an issue.", InputSchema: toolSchema}},
				Thinking: &config.Thinking{Type: config.ThinkingEnabled, BudgetTokens: 4000}, Effort: "high"},
			want: map[string]string{
				"system": `[{"cache_control":{"type":"ephemeral"},"text":"You are careful.","type":"text"}]`,
				"messages": `[{"content":[{"text":"Summarise A-1.","type":"text"}],"role":"user"},` +
					`{"content":[{"signature":"sig-1","thinking":"I need the issue.","type":"thinking"},{"data":"opaque","type":"redacted_thinking"},` +
					`{"id":"toolu_1","input":{"id":"A-1"},"name":"get","type":"tool_use"},{"id":"toolu_2","input":{"id":"A-2"},"name":"get","type":"tool_use"}],"role":"assistant"},` +
					`{"content":[{"content":[{"text":"{\"title\":\"Crash\"}","type":"text"}],"tool_use_id":"toolu_1","type":"tool_result"},` +
					`{"cache_control":{"type":"ephemeral"},"content":[{"text":"Error: no such issue","type":"text"}],"is_error":true,"tool_use_id":"toolu_2","type":"tool_result"},` +
					`{"text":"This is your last turn.","type":"text"}],"role":"user"}]`,
				"tools":         `[{"description":"Get an issue.","input_schema":{"additionalProperties":false,"properties":{"id":{"type":"string"}},"required":["id"],"type":"object"},"name":"get"}]`,
				"tool_choice":   "",
				"max_tokens":    "16000",
				"thinking":      `{"budget_tokens":4000,"display":"summarized","type":"enabled"}`,
				"output_config": `{"effort":"high"}`,
				// The API version the SDK speaks refuses sampling
				// parameters.
				"temperature": "",
			},
		},
		{
			name: "the last round keeps its tools and chooses none",
			req: chat.Request{Messages: user("go"), ToolChoice: chat.ToolChoiceNone,
				Tools:    []chat.ToolDef{{Name: "get", InputSchema: toolSchema}, {Name: "list"}},
				Thinking: &config.Thinking{Type: config.ThinkingAdaptive}},
			want: map[string]string{
				"tools":       `[{"input_schema":{"additionalProperties":false,"properties":{"id":{"type":"string"}},"required":["id"],"type":"object"},"name":"get"},{"input_schema":{"properties":{},"type":"object"},"name":"list"}]`,
				"tool_choice": `{"type":"none"}`,
				"max_tokens":  "8192",
				"thinking":    `{"display":"summarized","type":"adaptive"}`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newMessagesServer(t, streamedTurn("end_turn", streamUsage{}, textBlock("ok")))
			p := openAnthropic(t, srv, config.Provider{})
			if _, err := p.Complete(context.Background(), "claude-test", tt.req, nil); err != nil {
				t.Fatalf("Complete: %v", err)
			}
			body := requestBody(t, srv, 0)
			for key, want := range tt.want {
				if got := field(body, key); got != want {
					t.Errorf("%s =\n%s\nwant\n%s", key, got, want)
				}
			}
		})
	}

	t.Run("a tool schema built in Go goes with its numbers, its keywords in order", func(t *testing.T) {
		// The SDK's encoder wrote the json.Number of a converted schema as
		// a string ("minimum":"1"), and the keywords beyond properties,
		// required and type in map order, so the tool list was not the
		// same bytes from one round to the next.
		type schema struct {
			Type       string         `json:"type"`
			Properties map[string]any `json:"properties"`
			MinProps   int            `json:"minProperties"`
			MaxProps   int            `json:"maxProperties"`
			Defs       map[string]any `json:"$defs"`
			Comment    string         `json:"$comment"`
		}
		tool := chat.ToolDef{Name: "count", InputSchema: schema{Type: "object", Properties: map[string]any{"n": map[string]any{"type": "integer", "minimum": 1}},
			MinProps: 1, MaxProps: 3, Defs: map[string]any{}, Comment: "<counts> & more"}}
		srv := newMessagesServer(t, streamedTurn("end_turn", streamUsage{}, textBlock("ok")), streamedTurn("end_turn", streamUsage{}, textBlock("ok")))
		p := openAnthropic(t, srv, config.Provider{})
		for range 2 {
			if _, err := p.Complete(context.Background(), "claude-test", chat.Request{Messages: user("go"), Tools: []chat.ToolDef{tool}}, nil); err != nil {
				t.Fatalf("Complete: %v", err)
			}
		}
		want := `"tools":[{"input_schema":{"properties":{"n":{"minimum":1,"type":"integer"}},"type":"object","$comment":"\u003ccounts\u003e \u0026 more","$defs":{},"maxProperties":3,"minProperties":1},"name":"count"}]`
		for i := range 2 {
			if body := srv.body(t, i); !bytes.Contains(body, []byte(want)) {
				t.Errorf("request %d: %s\nwant %s", i+1, body, want)
			}
		}
	})

	t.Run("bad input is an error that says where", func(t *testing.T) {
		srv := newMessagesServer(t)
		p := openAnthropic(t, srv, config.Provider{})
		for _, tc := range []struct {
			req  chat.Request
			want string
		}{
			{chat.Request{Messages: []chat.Message{{Role: "critic", Blocks: []chat.Block{chat.TextBlock("x")}}}}, `message 0: role "critic" is not system, user, assistant or tool`},
			{chat.Request{Messages: []chat.Message{{Role: chat.RoleAssistant, Blocks: []chat.Block{{Type: chat.BlockToolUse, ID: "t1", Name: "get", Input: json.RawMessage(`"A-1"`)}}}}}, `message 0 (assistant): tool_use t1 (get): input is not a JSON object: "A-1"`},
			{chat.Request{Messages: []chat.Message{{Role: chat.RoleUser, Blocks: []chat.Block{{Type: "image"}}}}}, `block type "image" is not text`},
			{chat.Request{Messages: user("go"), Tools: []chat.ToolDef{{Name: "get", InputSchema: []any{1}}}}, "tool get: input schema is not a JSON object"},
		} {
			_, err := p.Complete(context.Background(), "claude-test", tc.req, nil)
			wantError(t, err, "model claude/claude-test: ", tc.want)
			if IsTransient(err) {
				t.Errorf("%v is transient", err)
			}
		}
		if srv.count() != 0 {
			t.Errorf("%d requests sent for bad input", srv.count())
		}
	})
}

func TestAnthropicErrors(t *testing.T) {
	tests := []struct {
		name       string
		turn       serverTurn
		status     int
		transient  bool
		retryAfter time.Duration
		message    string
		streamed   bool
	}{
		{
			name: "429 with retry-after", turn: errorTurn(429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit", map[string]string{"retry-after": "3"}),
			status: 429, transient: true, retryAfter: 3 * time.Second, message: "model claude/claude-test: 429 rate_limit_error: Number of request tokens",
		},
		{
			name: "529 overloaded", turn: errorTurn(529, "overloaded_error", "Overloaded", nil),
			status: 529, transient: true, message: "529 overloaded_error: Overloaded",
		},
		{
			name: "500", turn: errorTurn(500, "api_error", "Internal server error", nil),
			status: 500, transient: true, message: "500 api_error: Internal server error",
		},
		{
			name: "401 is not cured by a retry", turn: errorTurn(401, "authentication_error", "invalid x-api-key", nil),
			status: 401, message: "401 authentication_error: invalid x-api-key",
		},
		{
			name: "400", turn: errorTurn(400, "invalid_request_error", "messages: roles must alternate", nil),
			status: 400, message: "400 invalid_request_error: messages: roles must alternate",
		},
		{
			name: "an error event mid-stream", turn: midStreamError("overloaded_error", "Overloaded", textBlock("Hal")),
			transient: true, message: "model claude/claude-test: overloaded_error: Overloaded", streamed: true,
		},
		{
			name: "a connection cut mid-stream", turn: cutTurn(textBlock("Hal")),
			transient: true, message: "model claude/claude-test: ", streamed: true,
		},
		{
			name: "a stream that ends without message_stop", turn: endedEarly(textBlock("Hal")),
			transient: true, message: "the stream ended before the message was complete (no message_stop)", streamed: true,
		},
		{
			name: "a 200 that is not a stream", turn: serverTurn{events: nil},
			transient: true, message: "the server sent no streamed message (no message_start)",
		},
		{
			name: "a reply cut off at max_tokens", turn: streamedTurn("max_tokens", streamUsage{output: 8192}, textBlock(`{"summary": "it was`)),
			message: "the reply reached max_tokens (8192) before it was complete; raise max_tokens under this model's entry", streamed: true,
		},
		{
			name: "malformed tool input", turn: streamedTurn("tool_use", streamUsage{}, toolUseBlock("toolu_1", "get", `{"id": "A-`)),
			transient: true, message: `the input of tool call toolu_1 (get) is not JSON: {"id": "A-`,
		},
		{
			name: "a block delta before its start", turn: serverTurn{events: []sseEvent{{"content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"x"}}`}}},
			transient: true, message: "malformed stream: a delta for content block 2, of 0 started",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newMessagesServer(t, tt.turn)
			p := openAnthropic(t, srv, config.Provider{})
			streamed := false
			_, err := p.Complete(context.Background(), "claude-test", chat.Request{Messages: user("go")}, func(chat.Delta) { streamed = true })
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v (%T) is not an *Error", err, err)
			}
			if e.Status != tt.status || e.Transient != tt.transient || e.RetryAfter != tt.retryAfter {
				t.Errorf("status %d, transient %v, retry after %v; want %d, %v, %v", e.Status, e.Transient, e.RetryAfter, tt.status, tt.transient, tt.retryAfter)
			}
			wantError(t, err, tt.message)
			if streamed != tt.streamed {
				t.Errorf("streamed %v, want %v", streamed, tt.streamed)
			}
			if n := srv.count(); n != 1 {
				t.Errorf("%d requests; the SDK must not retry", n)
			}
		})
	}

	t.Run("connection refused", func(t *testing.T) {
		srv := newMessagesServer(t)
		p := openAnthropic(t, srv, config.Provider{})
		srv.Close()
		_, err := p.Complete(context.Background(), "claude-test", chat.Request{Messages: user("go")}, nil)
		if !IsTransient(err) {
			t.Errorf("error %v: want transient", err)
		}
	})
	t.Run("a deadline", func(t *testing.T) {
		srv := newMessagesServer(t)
		p := openAnthropic(t, srv, config.Provider{})
		ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
		defer cancel()
		_, err := p.Complete(ctx, "claude-test", chat.Request{Messages: user("go")}, nil)
		wantError(t, err, "model claude/claude-test: request timed out")
		if !IsTransient(err) {
			t.Errorf("error %v: want transient", err)
		}
	})
	t.Run("a server that stalls mid-answer", func(t *testing.T) {
		turn := cutTurn(textBlock("Hal"))
		turn.cut, turn.hang = false, true
		srv := newMessagesServer(t, turn)
		p := openAnthropic(t, srv, config.Provider{})
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		_, err := p.Complete(ctx, "claude-test", chat.Request{Messages: user("go")}, nil)
		wantError(t, err, "model claude/claude-test: request timed out")
		if !IsTransient(err) {
			t.Errorf("error %v: want transient", err)
		}
	})
	t.Run("no key and no base_url", func(t *testing.T) {
		_, err := newAnthropicProvider("claude", config.Provider{Type: config.ProviderAnthropic})
		wantError(t, err, `provider claude has no api_key: set api_key = "${ANTHROPIC_API_KEY}" under [providers.claude]`)
	})
}

func TestAnthropicStrict(t *testing.T) {
	eligible := map[string]any{"type": "object", "additionalProperties": false, "required": []any{"n"}, "properties": map[string]any{"n": map[string]any{"type": "integer"}}}
	ineligible := map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer", "minimum": 1}}}
	tool := chat.ToolDef{Name: "get", InputSchema: eligible}
	looseTool := chat.ToolDef{Name: "list", InputSchema: ineligible}
	ok := streamedTurn("end_turn", streamUsage{}, textBlock(`{"n": 1}`))
	tests := []struct {
		name string
		// compat leaves strict_base_url unset: the test server is a
		// custom base_url, which the other cases say enforces strict.
		compat   bool
		turns    []serverTurn
		req      chat.Request
		sent     bool
		reason   string
		format   []bool // per request: whether output_config.format was sent
		strictOn []string
		refused  bool // StrictToolsRefused
		fails    bool // the call fails, transient
	}{
		{
			name: "eligible: sent natively", turns: []serverTurn{ok},
			req:  chat.Request{Format: &chat.ResponseFormat{Name: "answer", Schema: eligible, Strict: true}},
			sent: true, format: []bool{true},
		},
		{
			name: "not asked for: nothing sent", turns: []serverTurn{ok},
			req:    chat.Request{Format: &chat.ResponseFormat{Name: "answer", Schema: eligible}},
			format: []bool{false},
		},
		{
			name: "a schema Anthropic's rules refuse", turns: []serverTurn{ok},
			req:    chat.Request{Format: &chat.ResponseFormat{Name: "answer", Schema: ineligible, Strict: true}},
			reason: DowngradeGateIneligible, format: []bool{false},
		},
		{
			name: "a custom base_url", compat: true, turns: []serverTurn{ok},
			req:    chat.Request{Format: &chat.ResponseFormat{Name: "answer", Schema: eligible, Strict: true}},
			reason: DowngradeCompatEndpoint, format: []bool{false},
		},
		{
			name: "tools the model may call: strict goes on the eligible tools", turns: []serverTurn{ok},
			req:    chat.Request{Format: &chat.ResponseFormat{Name: "answer", Schema: eligible, Strict: true}, Tools: []chat.ToolDef{tool, looseTool}},
			reason: DowngradeContextTools, format: []bool{false}, strictOn: []string{"get"},
		},
		{
			name: "the last round, tools chosen none: the answer is strict too", turns: []serverTurn{ok},
			req:  chat.Request{Format: &chat.ResponseFormat{Name: "answer", Schema: eligible, Strict: true}, Tools: []chat.ToolDef{tool}, ToolChoice: chat.ToolChoiceNone},
			sent: true, format: []bool{true}, strictOn: []string{"get"},
		},
		{
			name:   "the schema refused: sent again without strict",
			turns:  []serverTurn{errorTurn(400, "invalid_request_error", "output_config.format.schema: Invalid schema: The compiled grammar is too large", nil), ok},
			req:    chat.Request{Format: &chat.ResponseFormat{Name: "answer", Schema: eligible, Strict: true}},
			reason: DowngradeAPIRejectedSchema, format: []bool{true, false},
		},
		{
			name:   "the grammar not ready in time",
			turns:  []serverTurn{errorTurn(400, "invalid_request_error", "Grammar compilation timed out", nil), ok},
			req:    chat.Request{Format: &chat.ResponseFormat{Name: "answer", Schema: eligible, Strict: true}},
			reason: DowngradeGrammarUnavailable, format: []bool{true, false},
		},
		{
			name:   "overloaded",
			turns:  []serverTurn{errorTurn(529, "overloaded_error", "Overloaded", nil), ok},
			req:    chat.Request{Format: &chat.ResponseFormat{Name: "answer", Schema: eligible, Strict: true}},
			reason: DowngradeServiceUnavailable, format: []bool{true, false},
		},
		{
			name:  "overloaded with strict tools only: no second request, a transient error for Models to retry",
			turns: []serverTurn{errorTurn(529, "overloaded_error", "Overloaded", nil)},
			req:   chat.Request{Format: &chat.ResponseFormat{Name: "answer", Schema: eligible, Strict: true}, Tools: []chat.ToolDef{tool}},
			fails: true, format: []bool{false}, strictOn: []string{"get"},
		},
		{
			name:   "overloaded on the last round: the answer goes without strict, the tools stay strict",
			turns:  []serverTurn{errorTurn(529, "overloaded_error", "Overloaded", nil), ok},
			req:    chat.Request{Format: &chat.ResponseFormat{Name: "answer", Schema: eligible, Strict: true}, Tools: []chat.ToolDef{tool}, ToolChoice: chat.ToolChoiceNone},
			reason: DowngradeServiceUnavailable, format: []bool{true, false}, strictOn: []string{"get"},
		},
		{
			name:  "strict tools refused: sent again without them and without the earlier thinking",
			turns: []serverTurn{errorTurn(400, "invalid_request_error", "tools.0.input_schema: The compiled grammar is too large", nil), ok},
			req: chat.Request{Format: &chat.ResponseFormat{Name: "answer", Schema: eligible, Strict: true}, Tools: []chat.ToolDef{tool},
				Messages: []chat.Message{chat.TextMessage(chat.RoleUser, "go"), {Role: chat.RoleAssistant, Blocks: []chat.Block{{Type: chat.BlockThinking, Text: "hm", Signature: "s"}, {Type: chat.BlockToolUse, ID: "t1", Name: "get", Input: json.RawMessage(`{"n":1}`)}}},
					{Role: chat.RoleTool, Blocks: []chat.Block{chat.ToolResultBlock("t1", "1", false)}}}},
			reason: DowngradeContextTools, format: []bool{false, false}, strictOn: []string{"get"}, refused: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newMessagesServer(t, tt.turns...)
			p := openAnthropic(t, srv, config.Provider{StrictBaseURL: !tt.compat})
			if tt.req.Messages == nil {
				tt.req.Messages = user("go")
			}
			r, err := p.Complete(context.Background(), "claude-test", tt.req, nil)
			switch {
			case tt.fails && !IsTransient(err):
				t.Fatalf("error %v: want a transient one", err)
			case !tt.fails && err != nil:
				t.Fatalf("Complete: %v", err)
			case tt.fails:
				tt.req.Format.Strict = false // no reply to hold the record
			}
			if r.StrictRequested != tt.req.Format.Strict || r.StrictSent != tt.sent || r.DowngradeReason != tt.reason || r.StrictToolsRefused != tt.refused {
				t.Errorf("requested %v, sent %v, reason %q, tools refused %v; want %v, %v, %q, %v",
					r.StrictRequested, r.StrictSent, r.DowngradeReason, r.StrictToolsRefused, tt.req.Format.Strict, tt.sent, tt.reason, tt.refused)
			}
			if srv.count() != len(tt.format) {
				t.Fatalf("%d requests, want %d", srv.count(), len(tt.format))
			}
			for i, want := range tt.format {
				body := requestBody(t, srv, i)
				cfg, _ := body["output_config"].(map[string]any)
				if got := cfg["format"] != nil; got != want {
					t.Errorf("request %d: output_config %s; format sent %v, want %v", i+1, field(body, "output_config"), got, want)
				}
				if got := field(body, "output_config"); want && got != `{"format":{"schema":{"additionalProperties":false,"properties":{"n":{"type":"integer"}},"required":["n"],"type":"object"},"type":"json_schema"}}` {
					t.Errorf("request %d: output_config %s", i+1, got)
				}
			}
			var on []string
			sentTools, _ := requestBody(t, srv, 0)["tools"].([]any)
			for _, tl := range sentTools {
				if m := tl.(map[string]any); m["strict"] == true {
					on = append(on, m["name"].(string))
				}
			}
			if fmt.Sprint(on) != fmt.Sprint(tt.strictOn) && !(len(on) == 0 && len(tt.strictOn) == 0) {
				t.Errorf("strict tools %v, want %v", on, tt.strictOn)
			}
			if last := srv.body(t, len(tt.format)-1); !tt.refused && len(tt.strictOn) > 0 && !strings.Contains(string(last), `"strict":true`) {
				t.Errorf("the last request lost its strict tools: %s", last)
			}
			if tt.refused {
				last := requestBody(t, srv, len(tt.format)-1)
				if strings.Contains(field(last, "tools"), `"strict"`) || strings.Contains(field(last, "messages"), `"thinking"`) {
					t.Errorf("the request sent again keeps strict tools or the earlier thinking:\n%s", srv.body(t, len(tt.format)-1))
				}
				if !strings.Contains(field(requestBody(t, srv, 0), "messages"), `"thinking":"hm"`) {
					t.Errorf("the first request lost its thinking: %s", srv.body(t, 0))
				}
			}
		})
	}

	t.Run("a refused schema or tool list is remembered", func(t *testing.T) {
		srv := newMessagesServer(t,
			errorTurn(400, "invalid_request_error", "The compiled grammar is too large", nil), ok, ok,
			errorTurn(400, "invalid_request_error", "The compiled grammar is too large", nil), ok, ok)
		p := openAnthropic(t, srv, config.Provider{StrictBaseURL: true})
		answer := chat.Request{Messages: user("go"), Format: &chat.ResponseFormat{Name: "answer", Schema: eligible, Strict: true}}
		withTools := answer
		withTools.Tools = []chat.ToolDef{tool}
		for i, req := range []chat.Request{answer, answer, withTools, withTools} {
			r, err := p.Complete(context.Background(), "claude-test", req, nil)
			if err != nil {
				t.Fatalf("call %d: %v", i+1, err)
			}
			if i == 1 && r.DowngradeReason != DowngradeAPIRejectedSchema {
				t.Errorf("call 2: reason %q", r.DowngradeReason)
			}
			if i == 3 && r.StrictToolsRefused {
				t.Errorf("call 4 went with strict tools again")
			}
		}
		if srv.count() != 6 {
			t.Fatalf("%d requests, want 6", srv.count())
		}
		if strings.Contains(string(srv.body(t, 2)), `"format"`) || strings.Contains(string(srv.body(t, 5)), `"strict"`) {
			t.Errorf("a refused strict request was made again:\n%s\n%s", srv.body(t, 2), srv.body(t, 5))
		}
	})
}

// TestAnthropicThroughModels runs rounds the way the agent loop builds
// them, through Models with retries and the config's model settings: a
// round with thinking and parallel tool calls, a 429 and a 529 retried in
// between, then the answer round with tool_choice none. It checks that
// round 2's request begins with round 1's, byte for byte, that the
// thinking goes back with its signature, and that the key is sent to the
// server and nowhere else.
func TestAnthropicThroughModels(t *testing.T) {
	const key = "sk-ant-api03-secret-key-value"
	srv := newMessagesServer(t,
		streamedTurn("tool_use", streamUsage{input: 900, output: 60, cacheWrite: 850},
			thinkingBlock("EqQBCkYIARgCIkD", "Two issues; ", "fetch both."),
			toolUseBlock("toolu_a", "get", `{"id": "A-1"}`),
			toolUseBlock("toolu_b", "get", `{"id": "A-2"}`)),
		errorTurn(429, "rate_limit_error", "slow down", map[string]string{"retry-after": "0"}),
		errorTurn(529, "overloaded_error", "Overloaded", nil),
		streamedTurn("end_turn", streamUsage{input: 120, output: 12, cacheRead: 850},
			thinkingBlock("sig2", "Both fetched."),
			textBlock(`{"count": 2}`)),
	)
	cfg := project(t, fmt.Sprintf(`
[providers.claude]
type = "anthropic"
base_url = %q
api_key = %q

[models]
default = { provider = "claude", model = "claude-test", max_tokens = 12000, thinking = { budget_tokens = 2048 } }
`, srv.URL, key), nil)
	m := New(cfg, Options{Backoff: noBackoff})
	tools := []chat.ToolDef{{Name: "get", InputSchema: map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "string"}}}}}
	history := []chat.Message{
		chat.TextMessage(chat.RoleSystem, "Answer with JSON."),
		chat.TextMessage(chat.RoleUser, "Count the issues."),
	}
	r1, err := m.Call(context.Background(), "chat", chat.Request{Step: "E1", Messages: history, CacheAt: []int{0, 1}, Tools: tools}, nil)
	if err != nil {
		t.Fatalf("round 1: %v", err)
	}
	if len(r1.ToolCalls) != 2 || r1.Usage.CacheCreationInputTokens != 850 || r1.Provider != "claude" || r1.Model != "claude-test" {
		t.Fatalf("round 1 reply %+v", r1)
	}
	history = append(history, chat.AssistantMessage(r1), chat.Message{Role: chat.RoleTool, Blocks: []chat.Block{
		chat.ToolResultBlock("toolu_a", `{"id":"A-1"}`, false), chat.ToolResultBlock("toolu_b", `{"id":"A-2"}`, false)}})
	// As the agent does: the last message of the history carries the
	// breakpoint, and the last round adds its note after it.
	round2 := append(history, chat.TextMessage(chat.RoleUser, "Last turn: answer now."))
	r2, err := m.Call(context.Background(), "chat", chat.Request{Step: "E1", Messages: round2, CacheAt: []int{0, len(history) - 1}, Tools: tools, ToolChoice: chat.ToolChoiceNone}, nil)
	if err != nil {
		t.Fatalf("round 2: %v", err)
	}
	if r2.Text != `{"count": 2}` || r2.Usage.CacheReadInputTokens != 850 {
		t.Errorf("round 2 reply %+v", r2)
	}
	if srv.count() != 4 {
		t.Fatalf("%d requests, want 4 (a 429 and a 529 retried)", srv.count())
	}

	first, last := requestBody(t, srv, 0), requestBody(t, srv, 3)
	if field(first, "max_tokens") != "12000" || field(first, "thinking") != `{"budget_tokens":2048,"display":"summarized","type":"enabled"}` {
		t.Errorf("the model entry's settings were not sent: %s", srv.body(t, 0))
	}
	if field(first, "tools") != field(last, "tools") || field(first, "system") != field(last, "system") || field(last, "tool_choice") != `{"type":"none"}` {
		t.Errorf("round 2 does not keep round 1's tools and system, or does not choose none:\n%s\n%s", srv.body(t, 0), srv.body(t, 3))
	}
	// Round 2's messages begin with round 1's, byte for byte. The one
	// difference allowed is a cache_control marker: the breakpoint moves
	// to the end of each round's history, so it is stripped before the
	// comparison.
	m1, m2 := rawMessages(t, srv.body(t, 0)), rawMessages(t, srv.body(t, 3))
	for i := range m1 {
		if a, b := stripCacheControl(m1[i]), stripCacheControl(m2[i]); a != b {
			t.Errorf("message %d differs:\nround 1: %s\nround 2: %s", i, a, b)
		}
	}
	if want := `{"content":[{"signature":"EqQBCkYIARgCIkD","thinking":"Two issues; fetch both.","type":"thinking"},` +
		`{"id":"toolu_a","input":{"id":"A-1"},"name":"get","type":"tool_use"},{"id":"toolu_b","input":{"id":"A-2"},"name":"get","type":"tool_use"}],"role":"assistant"}`; string(m2[1]) != want {
		t.Errorf("round 1's reply went back as\n%s\nwant\n%s", m2[1], want)
	}
	if !strings.Contains(string(m2[2]), `"cache_control":{"type":"ephemeral"},"content":[{"text":"{\"id\":\"A-2\"}"`) {
		t.Errorf("the breakpoint is not on the last block of the history: %s", m2[2])
	}

	for i := range srv.count() {
		if got := srv.header(i, "Authorization"); got != "Bearer "+key {
			t.Errorf("request %d: authorization %q", i+1, got)
		}
		if bytes.Contains(srv.body(t, i), []byte(key)) {
			t.Errorf("request %d: the key is in the body", i+1)
		}
	}
	for _, r := range []chat.Reply{r1, r2} {
		if b, _ := json.Marshal(r); bytes.Contains(b, []byte(key)) {
			t.Errorf("the key is in a reply: %s", b)
		}
	}
}

// TestAnthropicKeyNeverInErrors checks every kind of failure for the key.
func TestAnthropicKeyNeverInErrors(t *testing.T) {
	const key = "sk-ant-api03-never-in-errors"
	srv := newMessagesServer(t,
		errorTurn(401, "authentication_error", "invalid x-api-key", nil),
		errorTurn(500, "api_error", "Internal server error", nil),
		midStreamError("overloaded_error", "Overloaded"),
		cutTurn(textBlock("x")))
	p := openAnthropic(t, srv, config.Provider{APIKey: key})
	for i := range 5 {
		if i == 4 {
			srv.Close()
		}
		_, err := p.Complete(context.Background(), "claude-test", chat.Request{Messages: user("go")}, nil)
		if err == nil {
			t.Fatalf("call %d: no error", i+1)
		}
		if strings.Contains(err.Error(), key) || strings.Contains(fmt.Sprintf("%#v", err), key) {
			t.Errorf("call %d: the key is in the error: %v", i+1, err)
		}
	}
}

// rawMessages returns the messages of a request body as the bytes sent.
func rawMessages(t *testing.T, body []byte) []json.RawMessage {
	t.Helper()
	var b struct {
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatal(err)
	}
	return b.Messages
}

var cacheControlRE = regexp.MustCompile(`"cache_control":\{"type":"ephemeral"\},?`)

func stripCacheControl(raw json.RawMessage) string {
	return cacheControlRE.ReplaceAllString(string(raw), "")
}

// TestAnthropicDefaultEndpoint checks that a provider without a base_url
// is pointed at the API's own endpoint (the SDK's environment defaults are
// off, so its base URL must be set explicitly), and that strict mode may
// be sent there.
func TestAnthropicDefaultEndpoint(t *testing.T) {
	var seen string
	p, err := newAnthropicProvider("claude", config.Provider{Type: config.ProviderAnthropic, APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	ap := p.(*anthropicProvider)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // nothing leaves the machine: the request is abandoned before it is sent
	ap.client.Options = append(ap.client.Options, option.WithMiddleware(func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		seen = r.URL.String()
		return nil, r.Context().Err()
	}))
	_, err = ap.Complete(ctx, "claude-test", chat.Request{Messages: user("go")}, nil)
	if seen != "https://api.anthropic.com/v1/messages" || !ap.strictEndpoint || err == nil {
		t.Errorf("request to %q, strict endpoint %v, error %v", seen, ap.strictEndpoint, err)
	}
}
