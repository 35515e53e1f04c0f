package engine_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/stepwise-dev/stepwise/engine"
)

// chatServer speaks the Chat Completions wire format over SSE: each request
// is answered by the next of its scripted streams, and every request body
// is kept.
type chatServer struct {
	mu      sync.Mutex
	streams [][]string // per request, the data lines of its SSE stream
	bodies  []map[string]any
}

func (s *chatServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	json.Unmarshal(raw, &body)
	s.mu.Lock()
	n := len(s.bodies)
	s.bodies = append(s.bodies, body)
	s.mu.Unlock()
	if r.URL.Path != "/v1/chat/completions" || n >= len(s.streams) {
		http.Error(w, `{"error":{"message":"unexpected request"}}`, http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for _, data := range s.streams[n] {
		fmt.Fprintf(w, "data: %s\n\n", data)
		w.(http.Flusher).Flush()
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// chunk is one chat.completion.chunk with the given choice delta (JSON)
// and finish reason.
func chunk(delta, finish string) string {
	f := "null"
	if finish != "" {
		f = `"` + finish + `"`
	}
	return `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + f + `}]}`
}

func usageChunk(prompt, completion, cached int) string {
	return fmt.Sprintf(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d,"prompt_tokens_details":{"cached_tokens":%d}}}`,
		prompt, completion, prompt+completion, cached)
}

// TestAgentOverTheWire runs an agent step against a Chat Completions server:
// a round of two parallel tool calls streamed in pieces, then a JSON answer
// streamed as text, with cached tokens in the usage.
func TestAgentOverTheWire(t *testing.T) {
	srv := &chatServer{streams: [][]string{
		{
			chunk(`{"role":"assistant","tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"builtin__reshape","arguments":"{\"sha"}}]}`, ""),
			chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"pe\":{\"n\":1}}"}},{"index":1,"id":"call_b","type":"function","function":{"name":"builtin__reshape","arguments":"{\"shape\":{\"n\":2}}"}}]}`, ""),
			chunk(`{}`, "tool_calls"),
			usageChunk(500, 40, 0),
		},
		{
			chunk(`{"role":"assistant","content":"{\"count\""}`, ""),
			chunk(`{"content":": 3}"}`, ""),
			chunk(`{}`, "stop"),
			usageChunk(700, 10, 400),
		},
	}}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	files := map[string]string{
		"config.toml": fmt.Sprintf(`
[providers.local]
type = "openai_compat"
base_url = %q

[models]
default = { provider = "local", model = "m" }

[pricing.m]
input = 1.0
output = 2.0

[storage]
backend = "memory"
`, hs.URL+"/v1"),
		"plans/p.yaml": agentPlan("      max_iterations: 2\n"),
	}
	for k, v := range agentTools {
		files[k] = v
	}
	o := newProject(t, files).run(t, "plans/p.yaml", nil, nil)
	wantOK(t, o)
	var result map[string]any
	json.Unmarshal([]byte(asJSON(t, o.res.Output.(map[string]any)["result"])), &result)
	if got := asJSONValue(result); got != `{"final":true,"iterations":2,"output":{"count":3},"tools_called":[{"round":1,"tool":"builtin__reshape"},{"round":1,"tool":"builtin__reshape"}]}` {
		t.Errorf("result %s", got)
	}
	u := o.res.Usage
	if u.Calls != 2 || u.InputTokens != 800 || u.CacheReadInputTokens != 400 || u.OutputTokens != 50 {
		t.Errorf("usage %+v", u)
	}
	if len(srv.bodies) != 2 {
		t.Fatalf("%d requests", len(srv.bodies))
	}
	first, second := srv.bodies[0], srv.bodies[1]
	if first["stream"] != true || first["model"] != "m" || len(first["tools"].([]any)) == 0 {
		t.Errorf("first request %v", first)
	}
	if !reflect.DeepEqual(second["tools"], first["tools"]) || second["tool_choice"] != "none" {
		t.Errorf("the last round sends tools %v with tool_choice %v; want round 1's tools with none", second["tools"], second["tool_choice"])
	}
	if format, _ := second["response_format"].(map[string]any); format["type"] != "json_schema" {
		t.Errorf("the last round does not force the schema: %v", second["response_format"])
	}
	m1, _ := json.Marshal(first["messages"])
	m2, _ := json.Marshal(second["messages"])
	if !strings.HasPrefix(string(m2), strings.TrimSuffix(string(m1), "]")) {
		t.Errorf("round 2's messages do not extend round 1's:\n%s\n%s", m1, m2)
	}
	msgs := second["messages"].([]any)
	results := []string{msgs[3].(map[string]any)["content"].(string), msgs[4].(map[string]any)["content"].(string)}
	if results[0] != `{"n":1}` || results[1] != `{"n":2}` {
		t.Errorf("tool results %v", results)
	}
	var deltas int
	for _, e := range o.events.of(engine.EventModelDelta) {
		if e.Path == "E1/agent.2" {
			deltas++
		}
	}
	if deltas < 2 {
		t.Errorf("%d deltas streamed for round 2; the answer came in two pieces", deltas)
	}
}
