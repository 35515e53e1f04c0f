package model

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// errorBodyLimit bounds what is read of the body of a response that is not
// a success. The providers' SDKs read an error body whole, to decode the
// API's error object of a few hundred bytes; a server, or a proxy in front
// of it, that answers an error with a body of gigabytes would otherwise
// have all of it read into memory.
const errorBodyLimit = 64 << 10

// errorBodyCut is the read of an error response's body that passed
// errorBodyLimit: the read stops there, and the call fails with the
// response's status.
type errorBodyCut struct {
	status int
	header http.Header // for Retry-After
}

func (e *errorBodyCut) Error() string {
	return fmt.Sprintf("%s (the server's error body passed %d bytes and was cut there)", strings.ToLower(http.StatusText(e.status)), errorBodyLimit)
}

// cutErrorBody is the *Error of a call whose error body was cut, classed
// by its status as the providers class an error they could read; ok is
// false for any other failure.
func cutErrorBody(provider, model string, err error) (e *Error, ok bool) {
	var cut *errorBodyCut
	if !errors.As(err, &cut) {
		return nil, false
	}
	return &Error{Provider: provider, Model: model, Status: cut.status, Message: cut.Error(),
		Transient: transientStatus(cut.status), RetryAfter: retryAfter(cut.header, time.Now())}, true
}

// errorBodyTransport bounds the body of each response that is not a
// success by errorBodyLimit; a success (a streamed answer) is bounded by
// [limits] model_reply_bytes as it is read instead.
type errorBodyTransport struct{ base http.RoundTripper }

func (t errorBodyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp, err
	}
	resp.Body = &errorBody{ReadCloser: resp.Body, left: errorBodyLimit, cut: &errorBodyCut{status: resp.StatusCode, header: resp.Header}}
	return resp, nil
}

// errorBody reads at most errorBodyLimit bytes of a body; a read past them
// fails with cut, unless the body ends right there.
type errorBody struct {
	io.ReadCloser
	left int
	cut  *errorBodyCut
}

func (b *errorBody) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if b.left == 0 {
		// The bound is reached: one byte more says whether the body goes
		// on past it or ends there.
		var one [1]byte
		n, err := io.ReadFull(b.ReadCloser, one[:])
		if n == 0 && (err == io.EOF || err == io.ErrUnexpectedEOF) {
			return 0, io.EOF
		}
		if n == 0 {
			return 0, err
		}
		return 0, b.cut
	}
	if len(p) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= n
	return n, err
}
