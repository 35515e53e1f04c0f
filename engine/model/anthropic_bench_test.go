package model

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/stepwise-dev/stepwise/engine/chat"
	"github.com/stepwise-dev/stepwise/engine/config"
)

// BenchmarkAnthropicRound measures what one agent round costs outside the
// model, with no HTTP: building the request body of a round that carries a
// system prompt, a task, an earlier round's thinking, tool calls and
// results, and three tools; then reading a streamed reply (thinking, text
// and two tool calls in pieces, as recorded SSE bytes) through the event
// reader and decoder into a Reply: all the provider does for a round but
// the HTTP exchange. The budget is 50µs.
func BenchmarkAnthropicRound(b *testing.B) {
	schema := map[string]any{"type": "object", "additionalProperties": false, "required": []any{"id"},
		"properties": map[string]any{"id": map[string]any{"type": "string", "description": "the issue key"}}}
	req := chat.Request{
		Messages: []chat.Message{
			{Role: chat.RoleSystem, Blocks: []chat.Block{{Type: chat.BlockText, Text: "You are an agent. Answer with JSON that matches the schema."}}},
			chat.TextMessage(chat.RoleUser, "Summarise the open issues of the tracker and count them."),
			{Role: chat.RoleAssistant, Blocks: []chat.Block{
				{Type: chat.BlockThinking, Text: "I should list the issues first, then fetch each.", Signature: "EqQBCkYIARgCIkD1bm9uY2UK"},
				{Type: chat.BlockToolUse, ID: "toolu_01", Name: "tracker__list_issues", Input: json.RawMessage(`{"state":"open"}`)},
			}},
			{Role: chat.RoleTool, Blocks: []chat.Block{{Type: chat.BlockToolResult, ID: "toolu_01", Text: `[{"id":"A-1","title":"Crash on start"},{"id":"A-2","title":"Slow search"}]`}}},
		},
		CacheAt: []int{0, 3},
		Tools: []chat.ToolDef{
			{Name: "tracker__list_issues", Description: "List issues.", InputSchema: map[string]any{"type": "object", "properties": map[string]any{"state": map[string]any{"type": "string"}}}},
			{Name: "tracker__get_issue", Description: "Get one issue.", InputSchema: schema},
			{Name: "tracker__search", Description: "Search issues.", InputSchema: schema},
		},
		Format:    &chat.ResponseFormat{Name: "answer", Schema: map[string]any{"type": "object", "properties": map[string]any{"count": map[string]any{"type": "integer"}}}},
		MaxTokens: 16000,
		Thinking:  &config.Thinking{Type: config.ThinkingEnabled, BudgetTokens: 4000},
	}
	sse := []byte(sseText(answerEvents("tool_use", streamUsage{input: 1200, output: 80, cacheRead: 900},
		thinkingBlock("EqQBCkYIARgCIkD2", "Two issues. ", "Fetch both ", "in parallel."),
		textBlock("Fetching ", "both issues."),
		toolUseBlock("toolu_02", "tracker__get_issue", `{"id"`, `: "A-1"}`),
		toolUseBlock("toolu_03", "tracker__get_issue", `{"id": `, `"A-2"}`))))
	p := &anthropicProvider{name: "claude", strictEndpoint: true}
	var deltas int
	onDelta := func(chat.Delta) { deltas++ }

	b.ReportAllocs()
	for b.Loop() {
		out, err := p.output("claude-test", req)
		if err != nil {
			b.Fatal(err)
		}
		body, err := anthropicBody("claude-test", req, out)
		if err != nil || len(body) == 0 {
			b.Fatal(err)
		}
		res := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: io.NopCloser(bytes.NewReader(sse))}
		m, damaged, err := readMessage(res, func(*streamedMessage) error { return nil }, onDelta)
		if damaged != nil || err != nil {
			b.Fatal(damaged, err)
		}
		r, err := m.reply("claude", "claude-test", anthropicMaxTokens(req))
		if err != nil || len(r.ToolCalls) != 2 || len(r.Thinking) != 1 {
			b.Fatalf("reply %+v, %v", r, err)
		}
	}
}
