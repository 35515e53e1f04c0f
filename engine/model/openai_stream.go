package model

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/respjson"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/stepwise-dev/stepwise/engine/chat"
)

// stream sends params and reads the streamed answer, telling onDelta of
// each piece of text and reasoning as it arrives.
func (p *openAIProvider) stream(ctx context.Context, model string, params openai.ChatCompletionNewParams, onDelta func(chat.Delta)) (chat.Reply, error) {
	resp := new(response)
	ctx = context.WithValue(ctx, responseKey{}, resp)
	s := p.chat.NewStreaming(ctx, params)
	defer s.Close()
	var a answer
	chunks := 0
	for s.Next() {
		chunks++
		d := a.add(s.Current())
		if err := overReplyLimit(ctx, p.name, model, a.size); err != nil {
			return chat.Reply{}, err
		}
		if onDelta != nil && (d.Text != "" || d.Reasoning != "") {
			onDelta(d)
		}
	}
	if err := s.Err(); err != nil {
		return chat.Reply{}, p.failure(ctx, model, err, resp.status)
	}
	if chunks == 0 {
		// A server that ignored stream: true, or broke off before its
		// first chunk: there is no answer to give.
		return chat.Reply{}, &Error{Provider: p.name, Model: model, Message: "the server sent no streamed answer", Transient: true}
	}
	if a.finish == "" && !resp.terminated.Load() {
		// The connection ended mid-answer: what streamed is a part,
		// and another attempt may get the whole.
		return chat.Reply{}, &Error{Provider: p.name, Model: model, Transient: true,
			Message: "the stream ended before the answer was complete (no finish reason, and no [DONE])"}
	}
	return a.reply(), nil
}

// answer accumulates the chunks of one streamed completion. Only the first
// choice is read: requests never ask for more.
type answer struct {
	text, refusal, reasoning strings.Builder
	calls                    []*toolCallParts // in order of first appearance
	// latest maps a tool call index to the latest call at that index in
	// calls. Servers that number every call 0 and tell them apart by id
	// start a new call at an index already seen.
	latest map[int64]int
	finish string
	usage  chat.Usage
	size   int64 // the bytes of text, refusal, reasoning and tool calls so far
}

// toolCallParts is a tool call as its deltas arrive.
type toolCallParts struct {
	id, name string
	args     strings.Builder
}

// add takes in one chunk and returns what of it is to be streamed.
func (a *answer) add(chunk openai.ChatCompletionChunk) chat.Delta {
	if chunk.JSON.Usage.Valid() {
		u := chunk.Usage
		cached := u.PromptTokensDetails.CachedTokens
		a.usage = chat.Usage{
			InputTokens:          int(max(u.PromptTokens-cached, 0)),
			OutputTokens:         int(u.CompletionTokens),
			CacheReadInputTokens: int(cached),
		}
	}
	var d chat.Delta
	for _, c := range chunk.Choices {
		if c.Index != 0 {
			continue
		}
		if c.FinishReason != "" {
			a.finish = c.FinishReason
		}
		delta := c.Delta
		d.Text = delta.Content + delta.Refusal
		a.text.WriteString(delta.Content)
		a.refusal.WriteString(delta.Refusal)
		d.Reasoning = reasoningOf(delta.JSON.ExtraFields)
		a.reasoning.WriteString(d.Reasoning)
		a.size += int64(len(d.Text) + len(d.Reasoning))
		for _, tc := range delta.ToolCalls {
			a.addToolCall(tc)
		}
	}
	return d
}

// reasoningOf reads a compat server's reasoning from a delta's fields that
// the SDK does not know: reasoning_content (DeepSeek, vLLM and others) or
// else reasoning (Ollama, gateways). A server that sends both sends the
// same text twice.
func reasoningOf(extra map[string]respjson.Field) string {
	for _, key := range []string{"reasoning_content", "reasoning"} {
		f, ok := extra[key]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal([]byte(f.Raw()), &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

// addToolCall takes in one tool call delta: the first for an index brings
// the id and the name, the rest pieces of the arguments.
func (a *answer) addToolCall(tc openai.ChatCompletionChunkChoiceDeltaToolCall) {
	if a.latest == nil {
		a.latest = map[int64]int{}
	}
	i, seen := a.latest[tc.Index]
	if !seen || (tc.ID != "" && a.calls[i].id != "" && tc.ID != a.calls[i].id) {
		a.calls = append(a.calls, &toolCallParts{})
		i = len(a.calls) - 1
		a.latest[tc.Index] = i
	}
	c := a.calls[i]
	if c.id == "" {
		c.id = tc.ID
	}
	if c.name == "" {
		c.name = tc.Function.Name
	}
	c.args.WriteString(tc.Function.Arguments)
	a.size += int64(len(tc.ID) + len(tc.Function.Name) + len(tc.Function.Arguments))
}

// reply is the accumulated answer.
func (a *answer) reply() chat.Reply {
	r := chat.Reply{Text: a.text.String() + a.refusal.String(), Usage: a.usage}
	if a.reasoning.Len() > 0 {
		r.Thinking = []chat.Block{{Type: chat.BlockThinking, Text: a.reasoning.String()}}
	}
	for i, c := range a.calls {
		id := c.id
		if id == "" {
			// A tool message must name the call it answers.
			id = "call_" + strconv.Itoa(i)
		}
		r.ToolCalls = append(r.ToolCalls, chat.ToolCall{ID: id, Name: c.name, Arguments: toolArguments(c.args.String())})
	}
	r.FinishReason = finishReason(a.finish, a.refusal.Len() > 0, len(r.ToolCalls) > 0)
	return r
}

// toolArguments makes a call's streamed arguments a JSON value: none is an
// empty object, and text that is not JSON is kept as a JSON string, so
// that the reply can still be recorded and the tool's input check tells
// the model what is wrong.
func toolArguments(args string) json.RawMessage {
	args = strings.TrimSpace(args)
	switch {
	case args == "":
		return json.RawMessage("{}")
	case json.Valid([]byte(args)):
		return json.RawMessage(args)
	}
	quoted, _ := json.Marshal(args)
	return quoted
}

// finishReason maps the server's finish reason onto stop, tool_calls,
// length and refusal. A refusal message wins over any reason; a server
// that says stop (or nothing) after tool calls means tool_calls.
func finishReason(reason string, refused, toolCalls bool) string {
	switch {
	case refused || reason == "content_filter":
		return "refusal"
	case reason == "length":
		return "length"
	case toolCalls || reason == "tool_calls" || reason == "function_call":
		return "tool_calls"
	}
	return "stop"
}

// failure turns a failed request or stream into the error Complete
// returns: an *Error, transient for what a retry may cure, or the
// context's error when the caller cancelled.
func (p *openAIProvider) failure(ctx context.Context, model string, err error, status int) error {
	if stopped, ok := interrupted(ctx, p.name, model, err); ok {
		return stopped
	}
	if cut, ok := cutErrorBody(p.name, model, err); ok {
		return cut
	}
	e := &Error{Provider: p.name, Model: model}
	var api *openai.Error
	var event *ssestream.StreamError
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &api):
		e.Status = api.StatusCode
		e.Message = apiMessage(api)
		e.Transient = transientStatus(api.StatusCode)
		if api.Response != nil {
			e.RetryAfter = retryAfter(api.Response.Header, time.Now())
		}
	case errors.As(err, &event):
		// An error event in the middle of a stream is the server failing
		// while it answered.
		e.Message, e.Transient = event.Message, true
	case status >= 400 && (errors.As(err, &syntax) || errors.As(err, &typ)):
		// An error status whose body is not the error object the SDK
		// expects ({"error": "boom"}): the status still says what kind
		// of failure it is.
		e.Status, e.Transient = status, transientStatus(status)
		e.Message = strings.ToLower(http.StatusText(status)) + " (the server's error body is not an error object)"
	case errors.As(err, &syntax), errors.As(err, &typ), errors.Is(err, bufio.ErrTooLong):
		e.Message = "malformed response: " + err.Error()
	default:
		// The connection failed, or broke off while the answer streamed.
		e.Message, e.Transient = err.Error(), true
	}
	return e
}

// interrupted is the error of a call that ended for no word of the
// server's: its response went silent, its attempt ran out of time (both
// transient), or its caller gave up. ok is false for any other failure,
// which the provider reads.
func interrupted(ctx context.Context, provider, model string, err error) (stopped error, ok bool) {
	var idle *IdleError
	switch {
	case errors.As(err, &idle):
		return &Error{Provider: provider, Model: model, Message: idle.Error(), Transient: true}, true
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return &Error{Provider: provider, Model: model, Message: "request timed out", Transient: true}, true
	case ctx.Err() != nil:
		return fmt.Errorf("model %s/%s: %w", provider, model, ctx.Err()), true
	}
	return nil, false
}

// responseKey carries, in a request's context, the *response that
// recordResponse writes what it saw of the response to.
type responseKey struct{}

// response is what recordResponse saw of one response: its HTTP status,
// and whether its stream reached its [DONE] terminator.
type response struct {
	status     int
	terminated atomic.Bool
}

// recordResponse is SDK middleware that notes each response's HTTP status,
// so that a failure the SDK cannot decode is still classed by its status,
// and watches its body for the stream's terminator, which the SDK's stream
// does not tell from a connection that ended.
func recordResponse(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	resp, err := next(req)
	if r, ok := req.Context().Value(responseKey{}).(*response); ok && resp != nil {
		r.status = resp.StatusCode
		resp.Body = &terminatorWatch{ReadCloser: resp.Body, seen: &r.terminated}
	}
	return resp, err
}

// sseTerminator is the data line that ends a Chat Completions stream.
var sseTerminator = []byte("data: [DONE]")

// terminatorWatch passes a body through, noting when sseTerminator goes
// by, a read's tail kept to find one split across reads.
type terminatorWatch struct {
	io.ReadCloser
	seen *atomic.Bool
	tail []byte
}

func (w *terminatorWatch) Read(p []byte) (int, error) {
	n, err := w.ReadCloser.Read(p)
	if n > 0 && !w.seen.Load() {
		w.tail = append(w.tail, p[:n]...)
		if bytes.Contains(w.tail, sseTerminator) {
			w.seen.Store(true)
		}
		if keep := len(sseTerminator) - 1; len(w.tail) > keep {
			w.tail = append(w.tail[:0], w.tail[len(w.tail)-keep:]...)
		}
	}
	return n, err
}

// transientStatus reports whether a retry may cure an HTTP status: rate
// limits, server errors, and the request timeouts and conflicts that the
// API asks clients to retry.
func transientStatus(status int) bool {
	return status == http.StatusTooManyRequests || status == http.StatusRequestTimeout ||
		status == http.StatusConflict || status >= 500
}

// apiMessage is the server's own account of an error: the message of its
// error object, or else the body as a compat server wrote it.
func apiMessage(e *openai.Error) string {
	if e.Message != "" {
		return e.Message
	}
	var body []byte
	if e.Response != nil && e.Response.Body != nil {
		body, _ = io.ReadAll(io.LimitReader(e.Response.Body, 64<<10))
	}
	var v struct {
		Error   any    `json:"error"`
		Detail  any    `json:"detail"`
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &v) == nil {
		for _, m := range []any{v.Error, v.Detail, v.Message} {
			switch m := m.(type) {
			case string:
				if m != "" {
					return m
				}
			case nil:
			default:
				if text, err := json.Marshal(m); err == nil {
					return string(text)
				}
			}
		}
	}
	if text := strings.Join(strings.Fields(string(body)), " "); text != "" && utf8.ValidString(text) {
		const most = 300
		if len(text) > most {
			text = strings.ToValidUTF8(text[:most], "") + "…"
		}
		return text
	}
	return strings.ToLower(http.StatusText(e.StatusCode))
}

// retryAfter reads how long the server asks to be left alone: the
// retry-after-ms header, or Retry-After in seconds or as an HTTP date.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if ms, err := strconv.ParseFloat(h.Get("Retry-After-Ms"), 64); err == nil && ms > 0 {
		return time.Duration(ms * float64(time.Millisecond))
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		return time.Duration(max(s, 0) * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return 0
}
