package model

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
)

// TestMessagesServerWireFormat reads the test server's answers with the
// SDK's own decoder and accumulator, so that the provider's tests rest on
// a server that speaks the format the SDK reads: if the fake drifted from
// what the SDK expects, every provider test would prove nothing.
func TestMessagesServerWireFormat(t *testing.T) {
	srv := newMessagesServer(t,
		streamedTurn("tool_use", streamUsage{input: 12, output: 40, cacheWrite: 3, cacheRead: 7},
			thinkingBlock("sig-1", "Let me ", "think."),
			redactedThinkingBlock("ENCRYPTED"),
			textBlock("Checking", " the weather."),
			toolUseBlock("toolu_1", "weather", `{"city":`, ` "Paris"}`),
		),
		errorTurn(529, "overloaded_error", "Overloaded", nil),
		midStreamError("overloaded_error", "Overloaded", textBlock("Hal")),
		cutTurn(textBlock("Hal")),
	)
	client := anthropic.NewClient(option.WithoutEnvironmentDefaults(), option.WithAPIKey("k"),
		option.WithBaseURL(srv.URL), option.WithMaxRetries(0))
	params := anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 100,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}}
	read := func() (anthropic.Message, error) {
		s := client.Messages.NewStreaming(context.Background(), params)
		defer s.Close()
		var m anthropic.Message
		for s.Next() {
			if err := m.Accumulate(s.Current()); err != nil {
				return m, err
			}
		}
		return m, s.Err()
	}

	m, err := read()
	if err != nil {
		t.Fatalf("streamed turn: %v", err)
	}
	if len(m.Content) != 4 || m.StopReason != "tool_use" {
		t.Fatalf("message = %d blocks, stop %q; want 4 and tool_use", len(m.Content), m.StopReason)
	}
	if b := m.Content[0]; b.Type != "thinking" || b.Thinking != "Let me think." || b.Signature != "sig-1" {
		t.Errorf("block 0 = %+v", b)
	}
	if b := m.Content[1]; b.Type != "redacted_thinking" || b.Data != "ENCRYPTED" {
		t.Errorf("block 1 = %+v", b)
	}
	if b := m.Content[2]; b.Type != "text" || b.Text != "Checking the weather." {
		t.Errorf("block 2 = %+v", b)
	}
	if b := m.Content[3]; b.Type != "tool_use" || b.ID != "toolu_1" || string(b.Input) != `{"city": "Paris"}` {
		t.Errorf("block 3 = %+v, input %s", b, b.Input)
	}
	if u := m.Usage; u.InputTokens != 12 || u.OutputTokens != 40 || u.CacheCreationInputTokens != 3 || u.CacheReadInputTokens != 7 {
		t.Errorf("usage = %+v", u)
	}
	if got := srv.header(0, "Authorization"); got != "Bearer k" {
		t.Errorf("authorization = %q", got)
	}

	var apiErr *anthropic.Error
	if _, err := read(); !errors.As(err, &apiErr) || apiErr.StatusCode != 529 {
		t.Errorf("529: error = %v", err)
	}
	if _, err := read(); !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusOK || apiErr.Type() != "overloaded_error" {
		t.Errorf("error event: error = %v", err)
	}
	if _, err := read(); err == nil {
		t.Error("cut stream: no error")
	}
}
