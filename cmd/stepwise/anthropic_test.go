package main

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stepwise-dev/stepwise/debugger/workspace"
)

// messagesServer answers POST /v1/messages with the Messages API's
// streamed answers, one scripted answer per request, and keeps every
// request body and Authorization header.
type messagesServer struct {
	*httptest.Server
	mu sync.Mutex
	// answers are SSE bodies; "401" answers with an authentication
	// error, and one that begins with stallMark sends the rest and then
	// nothing more, until the client goes away.
	answers []string
	bodies  []string
	auth    []string
}

func newMessagesServer(t *testing.T, answers ...string) *messagesServer {
	t.Helper()
	s := &messagesServer{answers: answers}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		n := len(s.bodies)
		s.bodies = append(s.bodies, string(raw))
		s.auth = append(s.auth, r.Header.Get("Authorization"))
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path != "/v1/messages" || n >= len(s.answers):
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"type":"error","error":{"type":"invalid_request_error","message":"unexpected request"}}`)
		case s.answers[n] == "401":
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`)
		default:
			w.Header().Set("Content-Type", "text/event-stream")
			body, stalls := strings.CutPrefix(s.answers[n], stallMark)
			fmt.Fprint(w, body)
			if stalls {
				w.(http.Flusher).Flush()
				<-r.Context().Done()
			}
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// stallMark begins a messagesServer answer that goes silent after its
// body: a server that stalls mid-answer.
const stallMark = "stall:"

// stalledText is the answer of a server that streams text and then goes
// silent before the text's block ends.
func stalledText(text string) string {
	full := sseMessage("end_turn", 10, 3, sseText(text))
	return stallMark + full[:strings.Index(full, "event: content_block_stop")]
}

// sseMessage is the SSE body of a streamed message of the given content
// blocks, each [content_block_start data, delta data...].
func sseMessage(stop string, input, output int, blocks ...[]string) string {
	var b strings.Builder
	event := func(name, data string) { fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", name, data) }
	event("message_start", fmt.Sprintf(`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-test","stop_reason":null,"usage":{"input_tokens":%d,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}`, input))
	event("ping", `{"type":"ping"}`)
	for i, bl := range blocks {
		event("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":%s}`, i, bl[0]))
		for _, d := range bl[1:] {
			event("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":%s}`, i, d))
		}
		event("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, i))
	}
	event("message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%q,"stop_sequence":null},"usage":{"output_tokens":%d}}`, stop, output))
	event("message_stop", `{"type":"message_stop"}`)
	return b.String()
}

func sseThinking(text, signature string) []string {
	return []string{`{"type":"thinking","thinking":"","signature":""}`,
		fmt.Sprintf(`{"type":"thinking_delta","thinking":%q}`, text), fmt.Sprintf(`{"type":"signature_delta","signature":%q}`, signature)}
}

func sseText(pieces ...string) []string {
	out := []string{`{"type":"text","text":""}`}
	for _, p := range pieces {
		out = append(out, fmt.Sprintf(`{"type":"text_delta","text":%q}`, p))
	}
	return out
}

func sseToolUse(id, name, input string) []string {
	return []string{fmt.Sprintf(`{"type":"tool_use","id":%q,"name":%q,"input":{}}`, id, name), fmt.Sprintf(`{"type":"input_json_delta","partial_json":%q}`, input)}
}

// claudeKey is the key of the test configs; it must never be shown.
const claudeKey = "sk-ant-api03-cmd-test-key"

// claudeProject writes a project whose models are served by an anthropic
// provider at srv, the way a graph project's config says it.
func claudeProject(t *testing.T, srv *messagesServer, extra string) string {
	t.Helper()
	t.Setenv("SW_TEST_CLAUDE_KEY", claudeKey)
	t.Setenv("ANTHROPIC_BASE_URL", "")
	scratchProject(t, fmt.Sprintf(`[providers.claude]
type = "anthropic"
api_key = "${SW_TEST_CLAUDE_KEY}"
base_url = %q
strict_base_url = true

[models]
default = { provider = "claude", model = "claude-test", max_tokens = 4096, thinking = { budget_tokens = 1024 } }

[pricing.claude-test]
input = 3.0
output = 15.0
%s`, srv.URL, extra))
	wd, _ := os.Getwd()
	return wd
}

func TestModelsTest(t *testing.T) {
	t.Run("a model that works", func(t *testing.T) {
		answer := sseMessage("end_turn", 40, 12, sseThinking("Easy.", "sig"), sseText(`{"ok": true}`))
		srv := newMessagesServer(t, answer, answer)
		claudeProject(t, srv, "")
		out, errOut, code := runCLI(t, "models", "test", "--json")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var env workspace.ModelTest
		if err := json.Unmarshal([]byte(out), &env); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if !env.OK || env.Name != "chat" || env.Entry != "models.default" || env.AnsweredBy != "claude/claude-test" || env.Error != nil || env.Answer != `{"ok": true}` {
			t.Errorf("envelope %s", out)
		}
		if env.Strict == nil || !env.Strict.Requested || !env.Strict.Sent || env.Thinking == nil || !env.Thinking.Shown || env.Thinking.Configured == nil {
			t.Errorf("strict %+v, thinking %+v", env.Strict, env.Thinking)
		}
		if env.Usage == nil || env.Usage.InputTokens != 40 || env.Usage.OutputTokens != 12 || !strings.Contains(env.Caching, "cache breakpoints") {
			t.Errorf("usage %+v, caching %q", env.Usage, env.Caching)
		}
		if len(srv.bodies) != 1 || !strings.Contains(srv.bodies[0], `"output_config":{"format":{"schema":`) || srv.auth[0] != "Bearer "+claudeKey {
			t.Errorf("request %v, auth %v", srv.bodies, srv.auth)
		}
		out, errOut, code = runCLI(t, "models", "test", "default")
		if code != 0 || out != "" {
			t.Fatalf("exit %d, stdout %q: %s", code, out, errOut)
		}
		for _, want := range []string{
			"default (models.default): claude/claude-test [anthropic, " + srv.URL + ", max_tokens 4096, thinking 1024 tokens]\n",
			"  answered by claude/claude-test in ",
			"ms: key, endpoint and model work\n  strict output: sent\n  thinking: configured, and the reply showed it\n  caching: cache breakpoints are sent",
		} {
			if !strings.Contains(errOut, want) {
				t.Errorf("stderr lacks %q:\n%s", want, errOut)
			}
		}
		_, errOut, code = runCLI(t, "models", "test")
		if code != 1 || !strings.Contains(errOut, "unexpected request") || !strings.Contains(errOut, "stepwise: chat: claude/claude-test does not work") {
			// The server has answered its scripted calls: another fails,
			// and says why.
			t.Errorf("a third call: exit %d: %s", code, errOut)
		}
	})
	t.Run("a key the server refuses", func(t *testing.T) {
		srv := newMessagesServer(t, "401")
		claudeProject(t, srv, "")
		out, errOut, code := runCLI(t, "models", "test", "--json", "chat")
		var env workspace.ModelTest
		json.Unmarshal([]byte(out), &env)
		if code != 1 || env.OK || env.Error == nil || !strings.Contains(*env.Error, "model claude/claude-test: 401 authentication_error: invalid x-api-key") {
			t.Errorf("exit %d, envelope %s, stderr %s", code, out, errOut)
		}
		_, errText, _ := runCLI(t, "models", "test", "chat")
		for _, s := range []string{out, errOut, errText} {
			if strings.Contains(s, claudeKey) {
				t.Errorf("the key is shown:\n%s", s)
			}
		}
	})
	t.Run("an unknown name", func(t *testing.T) {
		srv := newMessagesServer(t)
		claudeProject(t, srv, "")
		_, errOut, code := runCLI(t, "models", "test", "chta")
		if code != 1 || !strings.Contains(errOut, `model "chta" is not configured`) || !strings.Contains(errOut, "did you mean 'chat'?") || len(srv.bodies) != 0 {
			t.Errorf("exit %d: %s", code, errOut)
		}
		if _, _, code := runCLI(t, "models", "test", "a", "b"); code != 2 {
			t.Errorf("two names: exit %d, want 2", code)
		}
	})
}

// claudeAgentPlan is an agent step with a tool, as a graph project would
// write it.
const claudeAgentPlan = `
identifier: count_issues
name: Count issues
description: An agent counts the issues it builds with a tool.
steps:
  - id: E1
    tool_name: agent
    input:
      prompt: "Build the list of issues with the tool, then count them."
      tools: ["builtin__reshape"]
      max_iterations: 3
      output_schema:
        type: object
        additionalProperties: false
        required: [count]
        properties:
          count: { type: integer }
output:
  count: "{{E1.output.count}}"
`

// TestRunAgainstTheMessagesAPI runs an agent plan with a tool end to end,
// stepwise run as a user would, against a server speaking the Messages
// API: a round of thinking and a tool call, then the answer. The key
// reaches the server and nothing else: not stdout, stderr, the events or
// the run store.
func TestRunAgainstTheMessagesAPI(t *testing.T) {
	srv := newMessagesServer(t,
		sseMessage("tool_use", 900, 60, sseThinking("I will build the list.", "sig-1"), sseToolUse("toolu_1", "builtin__reshape", `{"shape": {"issues": ["A-1", "A-2"]}}`)),
		sseMessage("end_turn", 1000, 20, sseThinking("Two.", "sig-2"), sseText(`{"count"`, `: 2}`)),
	)
	dir := claudeProject(t, srv, "")
	if err := os.MkdirAll(filepath.Join(dir, ".stepwise", "plans"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".stepwise", "plans", "count_issues.yaml"), []byte(claudeAgentPlan), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI(t, "run", "count_issues", "--json", "--events", "jsonl")
	if code != 0 {
		t.Fatalf("exit %d:\n%s\n%s", code, out, errOut)
	}
	var env struct {
		Output map[string]any `json:"output"`
		Usage  struct {
			Calls        int     `json:"calls"`
			InputTokens  int     `json:"input_tokens"`
			OutputTokens int     `json:"output_tokens"`
			CostUSD      float64 `json:"cost_usd"`
		} `json:"usage"`
	}
	if err := json.Unmarshal([]byte(out), &env); err != nil {
		t.Fatalf("stdout is not the envelope: %v\n%s", err, out)
	}
	if env.Output["count"] != 2.0 || env.Usage.Calls != 2 || env.Usage.InputTokens != 1900 || env.Usage.OutputTokens != 80 {
		t.Errorf("envelope %s", out)
	}
	if want := (1900*3.0 + 80*15.0) / 1e6; fmt.Sprintf("%.6f", env.Usage.CostUSD) != fmt.Sprintf("%.6f", want) {
		t.Errorf("cost %v, want %v", env.Usage.CostUSD, want)
	}
	// The events go to stderr, one JSON object a line; each round's
	// llm_call carries its reply, thinking and signature included.
	var thinking int
	for _, l := range strings.Split(errOut, "\n") {
		if strings.Contains(l, `"kind":"llm_call"`) && (strings.Contains(l, `"I will build the list.","signature":"sig-1"`) || strings.Contains(l, `"Two.","signature":"sig-2"`)) {
			thinking++
		}
	}
	if thinking != 2 {
		t.Errorf("%d llm_call events carry their round's thinking, want 2:\n%s", thinking, errOut)
	}
	if len(srv.bodies) != 2 {
		t.Fatalf("%d requests, want 2", len(srv.bodies))
	}
	if !strings.Contains(srv.bodies[1], `{"signature":"sig-1","thinking":"I will build the list.","type":"thinking"}`) ||
		!strings.Contains(srv.bodies[1], `"tool_use_id":"toolu_1"`) || !strings.Contains(srv.bodies[1], `"max_tokens":4096`) {
		t.Errorf("round 2's request:\n%s", srv.bodies[1])
	}
	for _, s := range []string{out, errOut} {
		if strings.Contains(s, claudeKey) {
			t.Errorf("the key is shown:\n%s", s)
		}
	}
	// The run store is a file under the data directory: the key must not
	// be in it, nor in anything else stepwise wrote there.
	data := os.Getenv("XDG_DATA_HOME")
	filepath.WalkDir(data, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := os.ReadFile(path)
		if strings.Contains(string(b), claudeKey) {
			t.Errorf("%s holds the key", path)
		}
		return nil
	})
}
