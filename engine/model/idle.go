package model

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// idleKey carries, in an attempt's context, how long its response may go
// without a byte: [settings] llm_idle_timeout_seconds.
type idleKey struct{}

// withIdleTimeout is ctx with the idle bound d for the responses of the
// requests made under it.
func withIdleTimeout(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, idleKey{}, d)
}

// IdleError is a response that went silent: no byte for Idle. A stream
// that stalls after its first delta would otherwise hold the call until
// the attempt's whole time runs out.
type IdleError struct{ Idle time.Duration }

func (e *IdleError) Error() string {
	return fmt.Sprintf("the server sent nothing for %s (llm_idle_timeout_seconds)", e.Idle)
}

// idleTransport bounds the silence of each response body by the idle
// bound its request's context carries: when it passes, the request is
// cancelled and the body's reader gets an *IdleError.
type idleTransport struct{ base http.RoundTripper }

func (t idleTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	idle, _ := req.Context().Value(idleKey{}).(time.Duration)
	if idle <= 0 {
		return t.base.RoundTrip(req)
	}
	ctx, cancel := context.WithCancel(req.Context())
	resp, err := t.base.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, err
	}
	b := &idleBody{ReadCloser: resp.Body, idle: idle, cancel: cancel}
	b.timer = time.AfterFunc(idle, b.expire)
	resp.Body = b
	return resp, nil
}

// idleBody is a response body whose silence is bounded: each read that
// brings bytes starts the bound again.
type idleBody struct {
	io.ReadCloser
	idle   time.Duration
	cancel context.CancelFunc
	timer  *time.Timer

	mu      sync.Mutex
	expired bool
}

func (b *idleBody) expire() {
	b.mu.Lock()
	b.expired = true
	b.mu.Unlock()
	b.cancel()
}

func (b *idleBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.mu.Lock()
	expired := b.expired
	b.mu.Unlock()
	if expired {
		return n, &IdleError{Idle: b.idle}
	}
	if n > 0 {
		b.timer.Reset(b.idle)
	}
	return n, err
}

func (b *idleBody) Close() error {
	b.timer.Stop()
	b.cancel()
	return b.ReadCloser.Close()
}
