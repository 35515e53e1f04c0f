package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stepwise-dev/stepwise/engine/chat"
	"github.com/stepwise-dev/stepwise/engine/config"
)

// chatServer speaks the Chat Completions wire format on 127.0.0.1:0: it
// answers each POST to .../chat/completions with the next of its
// responses and records every request.
type chatServer struct {
	*httptest.Server
	t *testing.T

	mu        sync.Mutex
	responses []chatResponse
	requests  []chatRequest
}

// chatRequest is one request as the server saw it.
type chatRequest struct {
	path, auth string
	body       map[string]any
}

// chatResponse is how the server answers one request.
type chatResponse struct {
	// status, when set, answers with it and body instead of a stream.
	status int
	body   string
	header map[string]string
	// chunks are streamed as SSE data events, each flushed at once,
	// followed by data: [DONE].
	chunks []string
	// afterFirst, when set, holds the stream after its first chunk until
	// it is closed.
	afterFirst chan struct{}
	// abort breaks the connection off after the chunks, with no [DONE].
	abort bool
	// noDone ends the stream cleanly after the chunks, with no [DONE];
	// splitDone sends [DONE] in two writes, flushed apart; stall sends
	// nothing more after the chunks, and waits for the client to go.
	noDone, splitDone, stall bool
	// hang writes nothing and waits for the client to go; released is
	// closed when the handler has returned.
	hang     bool
	released chan struct{}
}

func newChatServer(t *testing.T, responses ...chatResponse) *chatServer {
	t.Helper()
	s := &chatServer{t: t, responses: responses}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *chatServer) serve(w http.ResponseWriter, r *http.Request) {
	data, _ := io.ReadAll(r.Body)
	var body map[string]any
	if err := json.Unmarshal(data, &body); err != nil {
		s.t.Errorf("request body is not JSON: %v: %s", err, data)
	}
	s.mu.Lock()
	s.requests = append(s.requests, chatRequest{path: r.URL.Path, auth: r.Header.Get("Authorization"), body: body})
	if len(s.responses) == 0 {
		s.mu.Unlock()
		s.t.Errorf("request %d has no response left", len(s.requests))
		http.Error(w, `{"error":{"message":"no response left"}}`, http.StatusTeapot)
		return
	}
	resp := s.responses[0]
	s.responses = s.responses[1:]
	s.mu.Unlock()

	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		s.t.Errorf("request %s %s; want POST .../chat/completions", r.Method, r.URL.Path)
	}
	for k, v := range resp.header {
		w.Header().Set(k, v)
	}
	switch {
	case resp.hang:
		defer close(resp.released)
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
			s.t.Error("the client never gave up on a hanging response")
		}
		return
	case resp.status != 0:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(resp.status)
		io.WriteString(w, resp.body)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	flusher := w.(http.Flusher)
	for i, c := range resp.chunks {
		fmt.Fprintf(w, "data: %s\n\n", c)
		flusher.Flush()
		if i == 0 && resp.afterFirst != nil {
			select {
			case <-resp.afterFirst:
			case <-time.After(5 * time.Second):
				s.t.Error("the first chunk was not delivered while the stream was open")
			}
		}
	}
	switch {
	case resp.abort:
		panic(http.ErrAbortHandler)
	case resp.stall:
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
			s.t.Error("the client never gave up on a stalled stream")
		}
	case resp.noDone:
	case resp.splitDone:
		io.WriteString(w, "data: [DO")
		flusher.Flush()
		time.Sleep(20 * time.Millisecond)
		io.WriteString(w, "NE]\n\n")
	default:
		io.WriteString(w, "data: [DONE]\n\n")
	}
}

// bodies returns the request bodies received so far.
func (s *chatServer) bodies() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]map[string]any, len(s.requests))
	for i, r := range s.requests {
		out[i] = r.body
	}
	return out
}

func (s *chatServer) received() []chatRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]chatRequest(nil), s.requests...)
}

// chunk is a streamed chunk carrying delta (a JSON object) for choice 0.
func chunk(delta string) string {
	return `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":` + delta + `,"finish_reason":null}]}`
}

// finish is the chunk that ends choice 0 with reason.
func finish(reason string) string {
	return `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"` + reason + `"}]}`
}

// usageChunk is the last chunk that include_usage asks for.
func usageChunk(prompt, completion, cached int) string {
	return fmt.Sprintf(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],`+
		`"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d,"prompt_tokens_details":{"cached_tokens":%d}}}`,
		prompt, completion, prompt+completion, cached)
}

// text streams a plain answer in the given pieces.
func text(pieces ...string) chatResponse {
	chunks := []string{chunk(`{"role":"assistant","content":""}`)}
	for _, p := range pieces {
		q, _ := json.Marshal(p)
		chunks = append(chunks, chunk(`{"content":`+string(q)+`}`))
	}
	return chatResponse{chunks: append(chunks, finish("stop"), usageChunk(10, 2, 0))}
}

// failing answers with an HTTP error and an OpenAI error object.
func failing(status int, message string, header map[string]string) chatResponse {
	body := fmt.Sprintf(`{"error":{"message":%q,"type":"invalid_request_error","param":null,"code":null}}`, message)
	return chatResponse{status: status, body: body, header: header}
}

// strictSchema passes OpenAI's strict rules.
var strictSchema = map[string]any{
	"type":                 "object",
	"properties":           map[string]any{"answer": map[string]any{"type": "string"}},
	"required":             []any{"answer"},
	"additionalProperties": false,
}

// looseSchema does not: it lets the model invent keys.
var looseSchema = map[string]any{
	"type":       "object",
	"properties": map[string]any{"answer": map[string]any{"type": "string"}},
	"required":   []any{"answer"},
}

// jsonOf decodes a JSON text for comparison with a request body.
func jsonOf(t *testing.T, text string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		t.Fatalf("bad JSON in test: %v: %s", err, text)
	}
	return v
}

// wantBody checks the keys of one request body against JSON texts; the
// text "-" means the key must be absent.
func wantBody(t *testing.T, i int, body map[string]any, want map[string]string) {
	t.Helper()
	for key, text := range want {
		got, ok := body[key]
		if text == "-" {
			if ok {
				t.Errorf("request %d: %s = %v; want none", i, key, got)
			}
			continue
		}
		if w := jsonOf(t, text); !ok || !reflect.DeepEqual(got, w) {
			g, _ := json.Marshal(got)
			t.Errorf("request %d: %s =\n  %s\nwant\n  %s", i, key, g, text)
		}
	}
}

// wantStreaming checks what every request must carry.
func wantStreaming(t *testing.T, i int, body map[string]any, model string) {
	t.Helper()
	wantBody(t, i, body, map[string]string{
		"model":          fmt.Sprintf("%q", model),
		"stream":         "true",
		"stream_options": `{"include_usage":true}`,
	})
}

func openTestProvider(t *testing.T, pc config.Provider) *openAIProvider {
	t.Helper()
	p, err := newOpenAIProvider("local", pc)
	if err != nil {
		t.Fatal(err)
	}
	return p.(*openAIProvider)
}

func TestOpenAIComplete(t *testing.T) {
	temp := 0.3
	conversation := []chat.Message{
		chat.TextMessage("system", "Be brief."),
		chat.TextMessage("user", "Look it up."),
		chat.AssistantMessage(chat.Reply{ToolCalls: []chat.ToolCall{
			{ID: "call_0", Name: "lookup", Arguments: json.RawMessage(`{"q":"first"}`)},
			{ID: "call_1", Name: "lookup", Arguments: json.RawMessage(`{"q":"second"}`)},
		}, Thinking: []chat.Block{{Type: chat.BlockThinking, Text: "I should look."}}}),
		// One tool message answers both calls; Chat Completions takes a
		// message for each.
		{Role: "tool", Blocks: []chat.Block{chat.ToolResultBlock("call_0", "nothing", false), chat.ToolResultBlock("call_1", "Error: down", true)}},
	}
	conversationJSON := `[
		{"role":"system","content":"Be brief."},
		{"role":"user","content":"Look it up."},
		{"role":"assistant","tool_calls":[
			{"id":"call_0","type":"function","function":{"name":"lookup","arguments":"{\"q\":\"first\"}"}},
			{"id":"call_1","type":"function","function":{"name":"lookup","arguments":"{\"q\":\"second\"}"}}]%s},
		{"role":"tool","tool_call_id":"call_0","content":"nothing"},
		{"role":"tool","tool_call_id":"call_1","content":"Error: down"}]`
	tools := []chat.ToolDef{
		{Name: "lookup", Description: "Look a word up.", InputSchema: strictSchema},
		{Name: "fetch", InputSchema: looseSchema},
	}
	schemaJSON := `{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"],"additionalProperties":false}`
	looseJSON := `{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"]}`

	tests := []struct {
		name      string
		provider  config.Provider // BaseURL is filled in with the server's
		req       chat.Request
		responses []chatResponse
		want      chat.Reply
		deltas    []chat.Delta
		bodies    []map[string]string // per request, keys to check
	}{
		{
			name:     "text streams in deltas, with usage",
			provider: config.Provider{Type: config.ProviderOpenAICompat},
			req: chat.Request{
				Messages:    []chat.Message{chat.TextMessage("system", "Be brief."), chat.TextMessage("user", "Greet.")},
				Temperature: &temp,
			},
			responses: []chatResponse{{chunks: []string{
				chunk(`{"role":"assistant","content":""}`),
				chunk(`{"content":"Hel"}`),
				chunk(`{"content":"lo, "}`),
				chunk(`{"content":"world"}`),
				finish("stop"),
				usageChunk(100, 7, 40),
			}}},
			want:   chat.Reply{Text: "Hello, world", FinishReason: "stop", Usage: chat.Usage{InputTokens: 60, OutputTokens: 7, CacheReadInputTokens: 40}},
			deltas: []chat.Delta{{Text: "Hel"}, {Text: "lo, "}, {Text: "world"}},
			bodies: []map[string]string{{
				"messages":        `[{"role":"system","content":"Be brief."},{"role":"user","content":"Greet."}]`,
				"temperature":     "0.3",
				"tools":           "-",
				"response_format": "-",
			}},
		},
		{
			name:     "two parallel tool calls split across chunks",
			provider: config.Provider{Type: config.ProviderOpenAICompat},
			req:      chat.Request{Messages: conversation, Tools: tools},
			responses: []chatResponse{{chunks: []string{
				chunk(`{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"lookup","arguments":""}}]}`),
				chunk(`{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"fetch","arguments":"{\"an"}}]}`),
				chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"q\":"}}]}`),
				chunk(`{"tool_calls":[{"index":1,"function":{"arguments":"swer\":\"x\"}"}}]}`),
				chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"\"go\"}"}}]}`),
				finish("tool_calls"),
				usageChunk(50, 20, 0),
			}}},
			want: chat.Reply{
				ToolCalls: []chat.ToolCall{
					{ID: "call_a", Name: "lookup", Arguments: json.RawMessage(`{"q":"go"}`)},
					{ID: "call_b", Name: "fetch", Arguments: json.RawMessage(`{"answer":"x"}`)},
				},
				FinishReason: "tool_calls",
				Usage:        chat.Usage{InputTokens: 50, OutputTokens: 20},
			},
			bodies: []map[string]string{{
				// A compat server gets the reasoning back.
				"messages": fmt.Sprintf(conversationJSON, `,"reasoning_content":"I should look."`),
				// Strict was not asked for: no strict tools.
				"tools": `[
					{"type":"function","function":{"name":"lookup","description":"Look a word up.","parameters":` + schemaJSON + `}},
					{"type":"function","function":{"name":"fetch","parameters":` + looseJSON + `}}]`,
				"response_format": "-",
			}},
		},
		{
			name:      "openai gets no reasoning back",
			provider:  config.Provider{Type: config.ProviderOpenAI, APIKey: "sk-test"},
			req:       chat.Request{Messages: conversation},
			responses: []chatResponse{text("done")},
			want:      chat.Reply{Text: "done", FinishReason: "stop", Usage: chat.Usage{InputTokens: 10, OutputTokens: 2}},
			deltas:    []chat.Delta{{Text: "done"}},
			bodies:    []map[string]string{{"messages": fmt.Sprintf(conversationJSON, ""), "temperature": "-"}},
		},
		{
			name:     "reasoning deltas stream before the text",
			provider: config.Provider{Type: config.ProviderOpenAICompat},
			req:      chat.Request{Messages: user("6 times 7?")},
			responses: []chatResponse{{chunks: []string{
				chunk(`{"role":"assistant","content":null,"reasoning_content":"Six "}`),
				chunk(`{"content":null,"reasoning_content":"sevens."}`),
				chunk(`{"content":"","reasoning":"Easy."}`),
				chunk(`{"content":"42"}`),
				finish("stop"),
				usageChunk(12, 9, 0),
			}}},
			want:   chat.Reply{Text: "42", Thinking: []chat.Block{{Type: chat.BlockThinking, Text: "Six sevens.Easy."}}, FinishReason: "stop", Usage: chat.Usage{InputTokens: 12, OutputTokens: 9}},
			deltas: []chat.Delta{{Reasoning: "Six "}, {Reasoning: "sevens."}, {Reasoning: "Easy."}, {Text: "42"}},
		},
		{
			name:     "a refusal is the text, and the finish reason",
			provider: config.Provider{Type: config.ProviderOpenAICompat},
			req:      chat.Request{Messages: user("Do harm.")},
			responses: []chatResponse{{chunks: []string{
				chunk(`{"role":"assistant","content":null,"refusal":""}`),
				chunk(`{"refusal":"I can't "}`),
				chunk(`{"refusal":"help with that."}`),
				finish("stop"),
				usageChunk(5, 4, 0),
			}}},
			want:   chat.Reply{Text: "I can't help with that.", FinishReason: "refusal", Usage: chat.Usage{InputTokens: 5, OutputTokens: 4}},
			deltas: []chat.Delta{{Text: "I can't "}, {Text: "help with that."}},
		},
		{
			name:     "finish reason length",
			provider: config.Provider{Type: config.ProviderOpenAICompat},
			req:      chat.Request{Messages: user("Go on.")},
			responses: []chatResponse{{chunks: []string{
				chunk(`{"role":"assistant","content":"and on"}`),
				finish("length"),
				usageChunk(5, 100, 0),
			}}},
			want:   chat.Reply{Text: "and on", FinishReason: "length", Usage: chat.Usage{InputTokens: 5, OutputTokens: 100}},
			deltas: []chat.Delta{{Text: "and on"}},
		},
		{
			name:     "content_filter is a refusal",
			provider: config.Provider{Type: config.ProviderOpenAICompat},
			req:      chat.Request{Messages: user("Go on.")},
			responses: []chatResponse{{chunks: []string{
				chunk(`{"role":"assistant","content":"par"}`),
				finish("content_filter"),
			}}},
			want:   chat.Reply{Text: "par", FinishReason: "refusal"},
			deltas: []chat.Delta{{Text: "par"}},
		},
		{
			name:      "strict json_schema to an openai endpoint said to enforce it",
			provider:  config.Provider{Type: config.ProviderOpenAI, APIKey: "sk-test", StrictBaseURL: true},
			req:       chat.Request{Messages: user("Answer."), Format: &chat.ResponseFormat{Name: "verdict", Schema: strictSchema, Strict: true}},
			responses: []chatResponse{text(`{"answer":"yes"}`)},
			want:      chat.Reply{Text: `{"answer":"yes"}`, FinishReason: "stop", Usage: chat.Usage{InputTokens: 10, OutputTokens: 2}, StrictRequested: true, StrictSent: true},
			deltas:    []chat.Delta{{Text: `{"answer":"yes"}`}},
			bodies: []map[string]string{{
				"response_format": `{"type":"json_schema","json_schema":{"name":"verdict","schema":` + schemaJSON + `,"strict":true}}`,
			}},
		},
		{
			name:     "a refused json_schema is sent again as json_object",
			provider: config.Provider{Type: config.ProviderOpenAICompat, StrictBaseURL: true},
			req: chat.Request{
				Messages: []chat.Message{chat.TextMessage("system", "Judge."), chat.TextMessage("user", "Answer.")},
				Format:   &chat.ResponseFormat{Name: "verdict", Schema: strictSchema, Strict: true},
			},
			responses: []chatResponse{
				failing(400, "response_format json_schema is not supported", nil),
				text(`{"answer":"yes"}`),
			},
			want:   chat.Reply{Text: `{"answer":"yes"}`, FinishReason: "stop", Usage: chat.Usage{InputTokens: 10, OutputTokens: 2}, StrictRequested: true, DowngradeReason: "api_rejected_schema"},
			deltas: []chat.Delta{{Text: `{"answer":"yes"}`}},
			bodies: []map[string]string{
				{
					"messages":        `[{"role":"system","content":"Judge."},{"role":"user","content":"Answer."}]`,
					"response_format": `{"type":"json_schema","json_schema":{"name":"verdict","schema":` + schemaJSON + `,"strict":true}}`,
				},
				{
					"messages": fmt.Sprintf(`[{"role":"system","content":%q},{"role":"user","content":"Answer."}]`,
						"Judge.\n\nAnswer with a single JSON object and nothing else. It must match this JSON Schema:\n"+
							`{"additionalProperties":false,"properties":{"answer":{"type":"string"}},"required":["answer"],"type":"object"}`),
					"response_format": `{"type":"json_object"}`,
				},
			},
		},
		{
			name:      "compat endpoint: json_schema without strict",
			provider:  config.Provider{Type: config.ProviderOpenAICompat},
			req:       chat.Request{Messages: user("Answer."), Format: &chat.ResponseFormat{Schema: strictSchema, Strict: true}},
			responses: []chatResponse{text(`{"answer":"yes"}`)},
			want:      chat.Reply{Text: `{"answer":"yes"}`, FinishReason: "stop", Usage: chat.Usage{InputTokens: 10, OutputTokens: 2}, StrictRequested: true, DowngradeReason: "compat_endpoint"},
			deltas:    []chat.Delta{{Text: `{"answer":"yes"}`}},
			bodies: []map[string]string{{
				"response_format": `{"type":"json_schema","json_schema":{"name":"answer","schema":` + schemaJSON + `}}`,
			}},
		},
		{
			name:      "openai with a base_url is a compat endpoint too",
			provider:  config.Provider{Type: config.ProviderOpenAI, APIKey: "sk-test"},
			req:       chat.Request{Messages: user("Answer."), Format: &chat.ResponseFormat{Schema: strictSchema, Strict: true}},
			responses: []chatResponse{text(`{"answer":"yes"}`)},
			want:      chat.Reply{Text: `{"answer":"yes"}`, FinishReason: "stop", Usage: chat.Usage{InputTokens: 10, OutputTokens: 2}, StrictRequested: true, DowngradeReason: "compat_endpoint"},
			deltas:    []chat.Delta{{Text: `{"answer":"yes"}`}},
		},
		{
			name:      "strict_base_url sends strict to a compat endpoint",
			provider:  config.Provider{Type: config.ProviderOpenAICompat, StrictBaseURL: true},
			req:       chat.Request{Messages: user("Answer."), Format: &chat.ResponseFormat{Schema: strictSchema, Strict: true}},
			responses: []chatResponse{text(`{"answer":"yes"}`)},
			want:      chat.Reply{Text: `{"answer":"yes"}`, FinishReason: "stop", Usage: chat.Usage{InputTokens: 10, OutputTokens: 2}, StrictRequested: true, StrictSent: true},
			deltas:    []chat.Delta{{Text: `{"answer":"yes"}`}},
			bodies: []map[string]string{{
				"response_format": `{"type":"json_schema","json_schema":{"name":"answer","schema":` + schemaJSON + `,"strict":true}}`,
			}},
		},
		{
			name:      "an ineligible schema goes without strict",
			provider:  config.Provider{Type: config.ProviderOpenAICompat, StrictBaseURL: true},
			req:       chat.Request{Messages: user("Answer."), Format: &chat.ResponseFormat{Schema: looseSchema, Strict: true}},
			responses: []chatResponse{text(`{"answer":"yes"}`)},
			want:      chat.Reply{Text: `{"answer":"yes"}`, FinishReason: "stop", Usage: chat.Usage{InputTokens: 10, OutputTokens: 2}, StrictRequested: true, DowngradeReason: "gate_ineligible"},
			deltas:    []chat.Delta{{Text: `{"answer":"yes"}`}},
			bodies: []map[string]string{{
				"response_format": `{"type":"json_schema","json_schema":{"name":"answer","schema":` + looseJSON + `}}`,
			}},
		},
		{
			name:      "with tools the answer goes without strict, and eligible tools get it",
			provider:  config.Provider{Type: config.ProviderOpenAICompat, StrictBaseURL: true},
			req:       chat.Request{Messages: user("Answer."), Tools: tools, Format: &chat.ResponseFormat{Schema: strictSchema, Strict: true}},
			responses: []chatResponse{text(`{"answer":"yes"}`)},
			want:      chat.Reply{Text: `{"answer":"yes"}`, FinishReason: "stop", Usage: chat.Usage{InputTokens: 10, OutputTokens: 2}, StrictRequested: true, DowngradeReason: "unsupported_context_tools"},
			deltas:    []chat.Delta{{Text: `{"answer":"yes"}`}},
			bodies: []map[string]string{{
				"response_format": `{"type":"json_schema","json_schema":{"name":"answer","schema":` + schemaJSON + `}}`,
				"tools": `[
					{"type":"function","function":{"name":"lookup","description":"Look a word up.","parameters":` + schemaJSON + `,"strict":true}},
					{"type":"function","function":{"name":"fetch","parameters":` + looseJSON + `}}]`,
			}},
		},
		{
			name:      "json_schema without strict when strict is not asked for",
			provider:  config.Provider{Type: config.ProviderOpenAI, APIKey: "sk-test"},
			req:       chat.Request{Messages: user("Answer."), Format: &chat.ResponseFormat{Name: "my answer!", Schema: looseSchema}},
			responses: []chatResponse{text(`{"answer":"yes"}`)},
			want:      chat.Reply{Text: `{"answer":"yes"}`, FinishReason: "stop", Usage: chat.Usage{InputTokens: 10, OutputTokens: 2}},
			deltas:    []chat.Delta{{Text: `{"answer":"yes"}`}},
			bodies: []map[string]string{{
				"response_format": `{"type":"json_schema","json_schema":{"name":"my_answer_","schema":` + looseJSON + `}}`,
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newChatServer(t, tt.responses...)
			tt.provider.BaseURL = srv.URL + "/v1"
			p := openTestProvider(t, tt.provider)
			var deltas []chat.Delta
			got, err := p.Complete(context.Background(), "test-model", tt.req, func(d chat.Delta) { deltas = append(deltas, d) })
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(tt.want)
				t.Errorf("reply\n  %s\nwant\n  %s", g, w)
			}
			if !reflect.DeepEqual(deltas, tt.deltas) {
				t.Errorf("deltas %+v, want %+v", deltas, tt.deltas)
			}
			bodies := srv.bodies()
			if len(bodies) != len(tt.responses) {
				t.Fatalf("%d requests, want %d", len(bodies), len(tt.responses))
			}
			for i, b := range bodies {
				wantStreaming(t, i, b, "test-model")
				if i < len(tt.bodies) {
					wantBody(t, i, b, tt.bodies[i])
				}
			}
		})
	}
}

func TestOpenAIErrors(t *testing.T) {
	tests := []struct {
		name       string
		response   chatResponse
		status     int
		transient  bool
		retryAfter time.Duration
		message    string
		streamed   bool // a delta came before the error
	}{
		{
			name:     "429 with Retry-After",
			response: failing(429, "Rate limit reached", map[string]string{"Retry-After": "2"}),
			status:   429, transient: true, retryAfter: 2 * time.Second, message: "model local/test-model: 429 Rate limit reached",
		},
		{
			name:     "500",
			response: failing(500, "The server had an error", nil),
			status:   500, transient: true, message: "500 The server had an error",
		},
		{
			name:     "503 from a proxy without an error object",
			response: chatResponse{status: 503, body: "<html>\n<h1>Service   Unavailable</h1>\n</html>"},
			status:   503, transient: true, message: "503 <html> <h1>Service Unavailable</h1> </html>",
		},
		{
			name:     "500 whose error is a string, not an object",
			response: chatResponse{status: 500, body: `{"error":"boom"}`},
			status:   500, transient: true, message: "500 internal server error (the server's error body is not an error object)",
		},
		{
			name:     "a FastAPI detail",
			response: chatResponse{status: 404, body: `{"detail":"model 'nope' not found"}`},
			status:   404, message: "404 model 'nope' not found",
		},
		{
			name:     "401",
			response: failing(401, "Incorrect API key provided", nil),
			status:   401, message: "401 Incorrect API key provided",
		},
		{
			name:     "403",
			response: failing(403, "Forbidden region", nil),
			status:   403, message: "403 Forbidden region",
		},
		{
			name:      "an error event in the stream",
			response:  chatResponse{chunks: []string{chunk(`{"content":"par"}`), `{"error":{"message":"overloaded","type":"server_error"}}`}},
			transient: true, message: "overloaded", streamed: true,
		},
		{
			name:      "a connection that breaks off mid-stream",
			response:  chatResponse{chunks: []string{chunk(`{"content":"par"}`)}, abort: true},
			transient: true, message: "model local/test-model: ", streamed: true,
		},
		{
			name:      "a stream that ends cleanly with neither a finish reason nor [DONE]",
			response:  chatResponse{chunks: []string{chunk(`{"content":"par"}`)}, noDone: true},
			transient: true, message: "the stream ended before the answer was complete (no finish reason, and no [DONE])", streamed: true,
		},
		{
			name:      "a stream with no chunks",
			response:  chatResponse{chunks: []string{}},
			transient: true, message: "no streamed answer",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newChatServer(t, tt.response)
			p := openTestProvider(t, config.Provider{Type: config.ProviderOpenAICompat, BaseURL: srv.URL})
			streamed := false
			_, err := p.Complete(context.Background(), "test-model", chat.Request{Messages: user("go")}, func(chat.Delta) { streamed = true })
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
			if n := len(srv.bodies()); n != 1 {
				t.Errorf("%d requests; the SDK must not retry", n)
			}
		})
	}
}

// TestOpenAIStreamEnd takes an answer whose stream ended with a finish
// reason or with [DONE], either one, [DONE] split across writes included.
func TestOpenAIStreamEnd(t *testing.T) {
	tests := []struct {
		name     string
		response chatResponse
	}{
		{"a finish reason without [DONE]", chatResponse{chunks: []string{chunk(`{"content":"42"}`), finish("stop")}, noDone: true}},
		{"[DONE] without a finish reason", chatResponse{chunks: []string{chunk(`{"content":"42"}`)}}},
		{"[DONE] split across writes", chatResponse{chunks: []string{chunk(`{"content":"42"}`)}, splitDone: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newChatServer(t, tt.response)
			p := openTestProvider(t, config.Provider{Type: config.ProviderOpenAICompat, BaseURL: srv.URL})
			reply, err := p.Complete(context.Background(), "test-model", chat.Request{Messages: user("go")}, nil)
			if err != nil || reply.Text != "42" {
				t.Errorf("reply %q, %v", reply.Text, err)
			}
		})
	}
}

func TestOpenAIConnectionRefused(t *testing.T) {
	srv := newChatServer(t)
	url := srv.URL
	srv.Close()
	p := openTestProvider(t, config.Provider{Type: config.ProviderOpenAICompat, BaseURL: url})
	_, err := p.Complete(context.Background(), "test-model", chat.Request{Messages: user("go")}, nil)
	if !IsTransient(err) {
		t.Errorf("error %v: want transient", err)
	}
}

// TestOpenAIHang checks that a server that never answers is given up at the
// deadline with a transient error, and that the request is let go of.
func TestOpenAIHang(t *testing.T) {
	released := make(chan struct{})
	srv := newChatServer(t, chatResponse{hang: true, released: released})
	p := openTestProvider(t, config.Provider{Type: config.ProviderOpenAICompat, BaseURL: srv.URL})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := p.Complete(ctx, "test-model", chat.Request{Messages: user("go")}, nil)
	wantError(t, err, "model local/test-model: request timed out")
	if !IsTransient(err) {
		t.Errorf("error %v: want transient", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("gave up after %v", d)
	}
	select {
	case <-released:
	case <-time.After(5 * time.Second):
		t.Error("the server's handler is still waiting: the request was not let go of")
	}
}

// TestOpenAICancel checks that a cancelled call says so, and is not
// transient.
func TestOpenAICancel(t *testing.T) {
	released := make(chan struct{})
	srv := newChatServer(t, chatResponse{hang: true, released: released})
	p := openTestProvider(t, config.Provider{Type: config.ProviderOpenAICompat, BaseURL: srv.URL})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err := p.Complete(ctx, "test-model", chat.Request{Messages: user("go")}, nil)
	if !errors.Is(err, context.Canceled) || IsTransient(err) {
		t.Errorf("error %v: want context.Canceled, permanent", err)
	}
	<-released
}

// TestOpenAIStreamsAsItArrives holds the stream open after its first chunk
// until the first delta has reached the caller.
func TestOpenAIStreamsAsItArrives(t *testing.T) {
	first := make(chan struct{})
	srv := newChatServer(t, chatResponse{afterFirst: first, chunks: []string{
		chunk(`{"role":"assistant","content":"one "}`),
		chunk(`{"content":"two"}`),
		finish("stop"),
	}})
	p := openTestProvider(t, config.Provider{Type: config.ProviderOpenAICompat, BaseURL: srv.URL})
	var once sync.Once
	r, err := p.Complete(context.Background(), "test-model", chat.Request{Messages: user("go")}, func(chat.Delta) { once.Do(func() { close(first) }) })
	if err != nil || r.Text != "one two" {
		t.Fatalf("reply %q, error %v", r.Text, err)
	}
}

// TestOpenAIRejectedSchemaIsRemembered checks that after a server refuses
// a json_schema, the same model and schema go straight to json_object.
func TestOpenAIRejectedSchemaIsRemembered(t *testing.T) {
	srv := newChatServer(t,
		failing(400, "unknown response_format", nil),
		text(`{"answer":"a"}`),
		text(`{"answer":"b"}`),
		text(`{"answer":"c"}`),
	)
	p := openTestProvider(t, config.Provider{Type: config.ProviderOpenAICompat, BaseURL: srv.URL, StrictBaseURL: true})
	req := chat.Request{Messages: user("go"), Format: &chat.ResponseFormat{Schema: strictSchema, Strict: true}}
	for _, want := range []string{`{"answer":"a"}`, `{"answer":"b"}`} {
		r, err := p.Complete(context.Background(), "test-model", req, nil)
		if err != nil || r.Text != want || r.DowngradeReason != DowngradeAPIRejectedSchema || r.StrictSent {
			t.Fatalf("reply %+v, error %v", r, err)
		}
	}
	// Another model is asked with json_schema again.
	if _, err := p.Complete(context.Background(), "other-model", req, nil); err != nil {
		t.Fatal(err)
	}
	var formats []string
	for _, b := range srv.bodies() {
		f, _ := json.Marshal(b["response_format"].(map[string]any)["type"])
		formats = append(formats, string(f))
	}
	if want := `"json_schema" "json_object" "json_object" "json_schema"`; strings.Join(formats, " ") != want {
		t.Errorf("response formats %s, want %s", strings.Join(formats, " "), want)
	}
}

// TestOpenAIAPIKey checks what reaches the server as the key, and that an
// openai provider without one fails to open.
func TestOpenAIAPIKey(t *testing.T) {
	srv := newChatServer(t, text("a"), text("b"))
	for _, pc := range []config.Provider{
		{Type: config.ProviderOpenAICompat, BaseURL: srv.URL},
		{Type: config.ProviderOpenAI, BaseURL: srv.URL, APIKey: "sk-secret"},
	} {
		p := openTestProvider(t, pc)
		if _, err := p.Complete(context.Background(), "m", chat.Request{Messages: user("go")}, nil); err != nil {
			t.Fatal(err)
		}
	}
	var auths []string
	for _, r := range srv.received() {
		auths = append(auths, r.auth)
	}
	if want := []string{"Bearer " + noAPIKey, "Bearer sk-secret"}; !reflect.DeepEqual(auths, want) {
		t.Errorf("authorization %q, want %q", auths, want)
	}
	_, err := newOpenAIProvider("remote", config.Provider{Type: config.ProviderOpenAI})
	wantError(t, err, `provider remote has no api_key: set api_key = "${OPENAI_API_KEY}" under [providers.remote]`)
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		header map[string]string
		want   time.Duration
	}{
		{"none", nil, 0},
		{"seconds", map[string]string{"Retry-After": "2"}, 2 * time.Second},
		{"fractional seconds", map[string]string{"Retry-After": "0.5"}, 500 * time.Millisecond},
		{"an HTTP date", map[string]string{"Retry-After": "Thu, 01 Oct 2026 12:00:30 GMT"}, 30 * time.Second},
		{"a date in the past", map[string]string{"Retry-After": "Thu, 01 Oct 2026 11:00:00 GMT"}, 0},
		{"milliseconds win", map[string]string{"Retry-After": "2", "Retry-After-Ms": "1500"}, 1500 * time.Millisecond},
		{"garbage", map[string]string{"Retry-After": "soon"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.header {
				h.Set(k, v)
			}
			if got := retryAfter(h, now); got != tt.want {
				t.Errorf("retryAfter = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestOpenAIThroughModels runs calls through Models with a configuration
// loaded from a project whose providers are two compat servers.
func TestOpenAIThroughModels(t *testing.T) {
	tests := []struct {
		name      string
		a, b      []chatResponse
		want      string
		provider  string
		requestsA int
		requestsB int
		failovers int
	}{
		{
			name: "429 then 200 is retried",
			a:    []chatResponse{failing(429, "slow down", map[string]string{"Retry-After-Ms": "10"}), text("hello")},
			want: "hello", provider: "a/model-a", requestsA: 2,
		},
		{
			name: "three 500s fall over",
			a: []chatResponse{
				failing(500, "boom", nil), failing(500, "boom", nil), failing(500, "boom", nil),
			},
			b:    []chatResponse{text("from b")},
			want: "from b", provider: "b/model-b", requestsA: 3, requestsB: 1, failovers: 1,
		},
		{
			name: "a stream that ended short is sent again, never taken as the answer",
			a:    []chatResponse{{chunks: []string{chunk(`{"content":"hel"}`)}, noDone: true}, text("hello")},
			want: "hello", provider: "a/model-a", requestsA: 2,
		},
		{
			name: "a 400 does not fall over",
			a:    []chatResponse{failing(400, "bad request", nil)},
			want: "error: model a/model-a: 400 bad request", requestsA: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := newChatServer(t, tt.a...), newChatServer(t, tt.b...)
			cfg := project(t, fmt.Sprintf(`
[providers.a]
type = "openai_compat"
base_url = "%s/v1"

[providers.b]
type = "openai_compat"
base_url = "%s/v1"
api_key = "key-b"

[models]
default = { provider = "a", model = "model-a", fallbacks = [{ provider = "b", model = "model-b" }] }
`, a.URL, b.URL), nil)
			failovers := 0
			m := New(cfg, Options{Backoff: noBackoff, OnFailover: func(string, string, error) { failovers++ }})
			r, err := m.Call(context.Background(), "chat", chat.Request{Step: "E1", Messages: user("hi")}, nil)
			if want, ok := strings.CutPrefix(tt.want, "error: "); ok {
				wantError(t, err, want)
			} else if err != nil || r.Text != tt.want || r.Provider+"/"+r.Model != tt.provider {
				t.Errorf("reply %q from %s/%s, error %v; want %q from %s", r.Text, r.Provider, r.Model, err, tt.want, tt.provider)
			}
			if n := len(a.bodies()); n != tt.requestsA {
				t.Errorf("a got %d requests, want %d", n, tt.requestsA)
			}
			if n := len(b.bodies()); n != tt.requestsB {
				t.Errorf("b got %d requests, want %d", n, tt.requestsB)
			}
			if failovers != tt.failovers {
				t.Errorf("%d failovers, want %d", failovers, tt.failovers)
			}
			for i, r := range a.received() {
				if r.path != "/v1/chat/completions" {
					t.Errorf("a: request %d to %s", i, r.path)
				}
				wantStreaming(t, i, r.body, "model-a")
				wantBody(t, i, r.body, map[string]string{"messages": `[{"role":"user","content":"hi"}]`})
			}
			for i, r := range b.received() {
				wantStreaming(t, i, r.body, "model-b")
				if r.auth != "Bearer key-b" {
					t.Errorf("b: authorization %q", r.auth)
				}
			}
		})
	}
}

// TestOpenAIUnsetKey checks that an api_key naming an unset variable
// fails the call naming the variable, and fails it permanently.
func TestOpenAIUnsetKey(t *testing.T) {
	cfg := project(t, `
[providers.remote]
type = "openai"
api_key = "${STEPWISE_TEST_UNSET_KEY}"

[models]
default = { provider = "remote", model = "gpt-5" }
`, nil)
	_, err := New(cfg, Options{}).Call(context.Background(), "chat", chat.Request{Messages: user("hi")}, nil)
	wantError(t, err, "model remote/gpt-5: ", "STEPWISE_TEST_UNSET_KEY")
	if IsTransient(err) {
		t.Errorf("error %v is transient", err)
	}
}

// TestModelCallBounds checks the bounds [settings] puts on a model call
// that sets none of its own: each attempt's time, and the longest
// Retry-After waited for.
func TestModelCallBounds(t *testing.T) {
	hang := func() chatResponse { return chatResponse{hang: true, released: make(chan struct{})} }
	stalled := func() chatResponse { return chatResponse{chunks: []string{chunk(`{"content":"par"}`)}, stall: true} }
	tests := []struct {
		name      string
		settings  string
		responses []chatResponse
		want      string
		requests  int
	}{
		{
			name:      "an attempt runs out of llm_timeout_seconds, three times",
			settings:  "llm_timeout_seconds = 1",
			responses: []chatResponse{hang(), hang(), hang()},
			want:      "model a/model-a: timed out after 1s ([settings] llm_timeout_seconds) (gave up after 3 attempts)", requests: 3,
		},
		{
			name:      "a stream silent after its first delta runs out of llm_idle_timeout_seconds, three times",
			settings:  "llm_idle_timeout_seconds = 1",
			responses: []chatResponse{stalled(), stalled(), stalled()},
			want:      "model a/model-a: the server sent nothing for 1s (llm_idle_timeout_seconds) (gave up after 3 attempts)", requests: 3,
		},
		{
			name:      "a Retry-After past retry_after_cap_seconds is no wait",
			settings:  "retry_after_cap_seconds = 5",
			responses: []chatResponse{failing(429, "slow down", map[string]string{"Retry-After": "3600"})},
			want:      "model a/model-a: 429 slow down (the server asked to wait 1h0m0s before a retry, more than [settings] retry_after_cap_seconds = 5)", requests: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newChatServer(t, tt.responses...)
			cfg := project(t, fmt.Sprintf("[settings]\n%s\n[providers.a]\ntype = \"openai_compat\"\nbase_url = \"%s/v1\"\n[models]\ndefault = { provider = \"a\", model = \"model-a\" }\n",
				tt.settings, srv.URL), nil)
			m := New(cfg, Options{Backoff: noBackoff})
			_, err := m.Call(context.Background(), "chat", chat.Request{Step: "E1", Messages: user("hi")}, nil)
			if err == nil || err.Error() != tt.want {
				t.Errorf("error %v\nwant  %s", err, tt.want)
			}
			if n := len(srv.bodies()); n != tt.requests {
				t.Errorf("%d requests, want %d", n, tt.requests)
			}
		})
	}
}
