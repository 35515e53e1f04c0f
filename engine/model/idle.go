package model

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
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

// idleTransport bounds the silence of each response by the idle bound its
// request's context carries, from the moment the request is written: the
// wait for the response's headers, then each wait for more of its body.
// When the bound passes, the request is cancelled, and RoundTrip or the
// body's reader returns an *IdleError.
type idleTransport struct{ base http.RoundTripper }

func (t idleTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	idle, _ := req.Context().Value(idleKey{}).(time.Duration)
	if idle <= 0 {
		return t.base.RoundTrip(req)
	}
	ctx, cancel := context.WithCancel(req.Context())
	b := &idleBody{idle: idle, cancel: cancel}
	// The server owes a byte once the request is written, not before: a
	// long request on a slow link is no silence of the server's.
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { b.arm() }})
	resp, err := t.base.RoundTrip(req.WithContext(ctx))
	if err != nil {
		expired := b.stop()
		cancel()
		if expired {
			return nil, &IdleError{Idle: idle}
		}
		return nil, err
	}
	b.ReadCloser = resp.Body
	b.arm() // the headers were bytes: the silence starts again
	resp.Body = b
	return resp, nil
}

// idleBody is a response body whose silence is bounded: each read that
// brings bytes starts the bound again.
type idleBody struct {
	io.ReadCloser
	idle   time.Duration
	cancel context.CancelFunc

	mu      sync.Mutex
	timer   *time.Timer // nil until the request is written
	expired bool
}

// arm starts the bound again, or for the first time.
func (b *idleBody) arm() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.timer == nil {
		b.timer = time.AfterFunc(b.idle, b.expire)
	} else if !b.expired {
		b.timer.Reset(b.idle)
	}
}

// stop stops the bound and reports whether it had passed.
func (b *idleBody) stop() (expired bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.timer != nil {
		b.timer.Stop()
	}
	return b.expired
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
	defer b.mu.Unlock()
	if b.expired {
		return n, &IdleError{Idle: b.idle}
	}
	if n > 0 {
		b.timer.Reset(b.idle)
	}
	return n, err
}

func (b *idleBody) Close() error {
	b.stop()
	b.cancel()
	return b.ReadCloser.Close()
}
