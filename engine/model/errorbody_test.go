package model

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stepwise-dev/stepwise/engine/chat"
	"github.com/stepwise-dev/stepwise/engine/config"
)

// errorServer answers every request with status and an error object whose
// message is size bytes of 'x', and counts the bytes of the body it
// managed to write before the client went away.
type errorServer struct {
	*httptest.Server
	written atomic.Int64
	done    chan struct{} // closed when the handler has returned
}

func newErrorServer(t *testing.T, status, size int, header map[string]string) *errorServer {
	t.Helper()
	s := &errorServer{done: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(s.done)
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		write := func(b []byte) bool {
			n, err := w.Write(b)
			s.written.Add(int64(n))
			return err == nil
		}
		if !write([]byte(`{"error":{"type":"api_error","message":"`)) {
			return
		}
		chunk := []byte(strings.Repeat("x", 32<<10))
		for left := size; left > 0; left -= len(chunk) {
			if !write(chunk[:min(left, len(chunk))]) {
				return
			}
		}
		write([]byte(`"}}`))
	}))
	t.Cleanup(s.Close)
	return s
}

// TestErrorBodyBounded checks that a provider reads at most errorBodyLimit
// bytes of an error response's body: a 500 with a body of 100 MB fails the
// call with the status and a message that says the body was cut, having
// read (and the server written) a small part of it, while an error object
// that ends within the bound is read whole, as before.
func TestErrorBodyBounded(t *testing.T) {
	const prefix = len(`{"error":{"type":"api_error","message":"`) + len(`"}}`)
	providers := []struct {
		name string
		open func(t *testing.T, url string) Provider
	}{
		{"openai_compat", func(t *testing.T, url string) Provider {
			return openTestProvider(t, config.Provider{Type: config.ProviderOpenAICompat, BaseURL: url})
		}},
		{"anthropic", func(t *testing.T, url string) Provider {
			p, err := newAnthropicProvider("claude", config.Provider{Type: config.ProviderAnthropic, BaseURL: url, APIKey: "sk-ant-test"})
			if err != nil {
				t.Fatal(err)
			}
			return p
		}},
	}
	bodies := []struct {
		name      string
		status    int
		size      int // of the message
		header    map[string]string
		message   string
		transient bool
		retry     time.Duration
	}{
		{
			name: "a 500 with a 100 MB body", status: 500, size: 100 << 20, header: map[string]string{"Retry-After": "2"},
			message:   "500 internal server error (the server's error body passed 65536 bytes and was cut there)",
			transient: true, retry: 2 * time.Second,
		},
		{
			name: "a 400 whose body passes the bound by one byte", status: 400, size: errorBodyLimit - prefix + 1,
			message: "400 bad request (the server's error body passed 65536 bytes and was cut there)",
		},
		{
			name: "a 400 whose error object ends at the bound", status: 400, size: errorBodyLimit - prefix,
			message: strings.Repeat("x", 100),
		},
	}
	for _, pt := range providers {
		for _, bt := range bodies {
			t.Run(pt.name+"/"+bt.name, func(t *testing.T) {
				srv := newErrorServer(t, bt.status, bt.size, bt.header)
				p := pt.open(t, srv.URL)
				_, err := p.Complete(context.Background(), "m", chat.Request{Messages: user("go")}, nil)
				var e *Error
				if !errors.As(err, &e) {
					t.Fatalf("error %v (%T) is not an *Error", err, err)
				}
				wantError(t, err, bt.message)
				if e.Status != bt.status || e.Transient != bt.transient || e.RetryAfter != bt.retry {
					t.Errorf("status %d, transient %v, retry after %v; want %d, %v, %v", e.Status, e.Transient, e.RetryAfter, bt.status, bt.transient, bt.retry)
				}
				// The client has closed the connection: the server's
				// writes fail once the socket's buffers are full.
				select {
				case <-srv.done:
				case <-time.After(30 * time.Second):
					t.Fatalf("the server is still writing the body after the call failed (%d bytes written)", srv.written.Load())
				}
				written := srv.written.Load()
				t.Logf("the server wrote %d bytes of its body", written)
				if bt.size > errorBodyLimit && written > 16<<20 {
					t.Errorf("the server wrote %d bytes of its body before the client went away; want a small part of %d", written, bt.size)
				}
			})
		}
	}
}
