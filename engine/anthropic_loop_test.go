package engine_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// messagesServer speaks the Messages API's streamed answers: each request
// is answered by the next of its scripted answers (an SSE body, or an
// error status with the API's error object), and every request body is
// kept as it was sent.
type messagesServer struct {
	mu      sync.Mutex
	answers []messagesAnswer
	bodies  []string
}

type messagesAnswer struct {
	status int    // 0: stream sse
	sse    string // the text/event-stream body
	errMsg string
}

func (s *messagesServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	n := len(s.bodies)
	s.bodies = append(s.bodies, string(raw))
	s.mu.Unlock()
	if r.URL.Path != "/v1/messages" || n >= len(s.answers) {
		http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"unexpected request"}}`, http.StatusBadRequest)
		return
	}
	a := s.answers[n]
	if a.status != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(a.status)
		fmt.Fprintf(w, `{"type":"error","error":{"type":"invalid_request_error","message":%q}}`, a.errMsg)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprint(w, a.sse)
}

// anthropicAnswer is the SSE body of a complete streamed message whose
// content blocks are given as [content_block_start data, delta data...].
func anthropicAnswer(stop string, input, output int, blocks ...[]string) messagesAnswer {
	var b strings.Builder
	event := func(name, data string) { fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", name, data) }
	event("message_start", fmt.Sprintf(`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-test","stop_reason":null,"usage":{"input_tokens":%d,"output_tokens":1}}}`, input))
	event("ping", `{"type":"ping"}`)
	for i, bl := range blocks {
		event("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":%s}`, i, bl[0]))
		for _, d := range bl[1:] {
			event("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":%s}`, i, d))
		}
		event("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, i))
	}
	event("message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%q},"usage":{"output_tokens":%d}}`, stop, output))
	event("message_stop", `{"type":"message_stop"}`)
	return messagesAnswer{sse: b.String()}
}

func thinking(text, signature string) []string {
	return []string{`{"type":"thinking","thinking":"","signature":""}`,
		fmt.Sprintf(`{"type":"thinking_delta","thinking":%q}`, text), fmt.Sprintf(`{"type":"signature_delta","signature":%q}`, signature)}
}

func toolUse(id, name, input string) []string {
	return []string{fmt.Sprintf(`{"type":"tool_use","id":%q,"name":%q,"input":{}}`, id, name), fmt.Sprintf(`{"type":"input_json_delta","partial_json":%q}`, input)}
}

// TestAgentOverTheMessagesAPI runs a strict agent step against the
// Messages API: round 1 with strict tools, thinking and a tool call; round
// 2's strict tools refused, so it is sent again without them and without
// round 1's thinking; round 3 the answer, with tool_choice none. The step
// keeps strict tools and round 1's thinking out of its later requests, and
// each request extends the one before it.
func TestAgentOverTheMessagesAPI(t *testing.T) {
	srv := &messagesServer{answers: []messagesAnswer{
		anthropicAnswer("tool_use", 500, 40, thinking("Round one thinks.", "sig-1"), toolUse("toolu_1", "plan__sub", `{"n": 1}`)),
		{status: 400, errMsg: "tools.0.input_schema: The compiled grammar is too large"},
		anthropicAnswer("tool_use", 600, 30, thinking("Round two thinks.", "sig-2"), toolUse("toolu_2", "plan__sub", `{"n": 2}`)),
		anthropicAnswer("end_turn", 700, 10, []string{`{"type":"text","text":""}`, `{"type":"text_delta","text":"{\"count\""}`, `{"type":"text_delta","text":": 2}"}`}),
	}}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	files := map[string]string{
		"config.toml": fmt.Sprintf(`
[providers.claude]
type = "anthropic"
base_url = %q
strict_base_url = true
api_key = "sk-ant-test"

[models]
default = { provider = "claude", model = "claude-test", thinking = { budget_tokens = 2048 } }

[storage]
backend = "memory"
`, hs.URL),
		"plans/p.yaml": strings.Replace(agentPlan("      max_iterations: 3\n      structured_output: strict\n"),
			`["builtin__reshape", "user__*", "plan__*"]`, `["plan__sub"]`, 1),
		"plans/sub.yaml": `
identifier: sub
input_schema:
  type: object
  additionalProperties: false
  required: [n]
  properties:
    n: { type: integer }
steps:
  - id: S0
    tool_name: builtin__reshape
    input: { shape: { ok: true } }
output: { ok: "{{S0.ok}}" }
`,
	}
	o := newProject(t, files).run(t, "plans/p.yaml", nil, nil)
	wantOK(t, o)
	if got := asJSON(t, o.res.Output.(map[string]any)["result"]); got != `{"final":true,"iterations":3,"output":{"count":2},"tools_called":[{"round":1,"tool":"plan__sub"},{"round":2,"tool":"plan__sub"}]}` {
		t.Errorf("result %s", got)
	}
	if len(srv.bodies) != 4 {
		t.Fatalf("%d requests, want 4", len(srv.bodies))
	}
	body := func(i int) map[string]json.RawMessage {
		var b map[string]json.RawMessage
		if err := json.Unmarshal([]byte(srv.bodies[i]), &b); err != nil {
			t.Fatal(err)
		}
		return b
	}
	if tools := string(body(0)["tools"]); !strings.Contains(tools, `"strict":true`) {
		t.Errorf("round 1 sends no strict tool: %s", tools)
	}
	if th := string(body(0)["thinking"]); th != `{"budget_tokens":2048,"display":"summarized","type":"enabled"}` {
		t.Errorf("thinking %s", th)
	}
	for i := 2; i < 4; i++ {
		b := srv.bodies[i]
		if strings.Contains(b, `"strict"`) || strings.Contains(b, "Round one thinks.") {
			t.Errorf("request %d keeps strict tools or round 1's thinking:\n%s", i+1, b)
		}
	}
	if !strings.Contains(srv.bodies[3], `"signature":"sig-2","thinking":"Round two thinks."`) {
		t.Errorf("round 2's thinking does not go back with its signature:\n%s", srv.bodies[3])
	}
	if tc := string(body(3)["tool_choice"]); tc != `{"type":"none"}` || string(body(3)["tools"]) != string(body(2)["tools"]) {
		t.Errorf("the last round: tool_choice %s, tools %s", tc, body(3)["tools"])
	}
	// Each request's messages begin with those of the request before it,
	// byte for byte, but for the cache_control marker, which moves to the
	// end of each round's history. Round 2 sent again is the exception the
	// refusal makes: it leaves round 1's thinking out.
	for _, pair := range [][2]int{{0, 1}, {2, 3}} {
		var a, b []json.RawMessage
		json.Unmarshal(body(pair[0])["messages"], &a)
		json.Unmarshal(body(pair[1])["messages"], &b)
		for i := range a {
			if x, y := stripCache(a[i]), stripCache(b[i]); x != y {
				t.Errorf("request %d message %d is not request %d's:\n%s\n%s", pair[1]+1, i, pair[0]+1, y, x)
			}
		}
	}
	if u := o.res.Usage; u.InputTokens != 1800 || u.OutputTokens != 80 {
		t.Errorf("usage %+v", u)
	}
}

var cacheControl = regexp.MustCompile(`"cache_control":\{"type":"ephemeral"\},?`)

func stripCache(raw json.RawMessage) string { return cacheControl.ReplaceAllString(string(raw), "") }
