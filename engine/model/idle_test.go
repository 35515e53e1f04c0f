package model

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stepwise-dev/stepwise/engine/chat"
)

// TestIdleBeforeTheFirstByte checks that llm_idle_timeout_seconds bounds
// the wait for a response's first byte too, for every provider that
// streams over HTTP: a server that takes the request and never answers
// fails each attempt after the idle bound, not after the attempt's whole
// llm_timeout_seconds, with the words of a stream that went silent.
func TestIdleBeforeTheFirstByte(t *testing.T) {
	tests := []struct {
		name   string
		server func(t *testing.T) (provider string)
	}{
		{name: "openai_compat", server: func(t *testing.T) string {
			hang := func() chatResponse { return chatResponse{hang: true, released: make(chan struct{})} }
			srv := newChatServer(t, hang(), hang(), hang())
			return fmt.Sprintf("type = \"openai_compat\"\nbase_url = \"%s/v1\"", srv.URL)
		}},
		{name: "openai", server: func(t *testing.T) string {
			hang := func() chatResponse { return chatResponse{hang: true, released: make(chan struct{})} }
			srv := newChatServer(t, hang(), hang(), hang())
			return fmt.Sprintf("type = \"openai\"\nbase_url = \"%s/v1\"\napi_key = \"k\"", srv.URL)
		}},
		{name: "anthropic", server: func(t *testing.T) string {
			silent := serverTurn{silent: true}
			srv := newMessagesServer(t, silent, silent, silent)
			return fmt.Sprintf("type = \"anthropic\"\nbase_url = %q\napi_key = \"k\"", srv.URL)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := project(t, fmt.Sprintf("[settings]\nllm_idle_timeout_seconds = 1\nllm_timeout_seconds = 4\n[providers.a]\n%s\n[models]\ndefault = { provider = \"a\", model = \"m\" }\n",
				tt.server(t)), nil)
			start := time.Now()
			_, err := New(cfg, Options{Backoff: noBackoff}).Call(context.Background(), "chat", chat.Request{Step: "E1", Messages: user("hi")}, nil)
			want := "model a/m: the server sent nothing for 1s (llm_idle_timeout_seconds) (gave up after 3 attempts)"
			if err == nil || err.Error() != want {
				t.Errorf("error %v\nwant  %s", err, want)
			}
			if elapsed := time.Since(start); elapsed > 3*time.Second+2*time.Second {
				t.Errorf("three attempts took %s; each should have ended after the idle bound's 1s", elapsed.Round(time.Millisecond))
			}
		})
	}
}
