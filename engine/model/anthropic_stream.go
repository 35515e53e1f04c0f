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
	"strings"
	"sync"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/stepwise-dev/stepwise/engine/chat"
)

// stream sends the request body and reads the streamed message, telling
// onDelta of each piece of text and thinking as it arrives.
//
// The request goes through the SDK's client (auth, base URL, headers, error
// objects) but not through MessageService.NewStreaming, nor the SDK's
// event stream: the events are read by sseReader and decoded by
// decodeEvent into streamEvent, the few fields stepwise reads, which costs
// a fraction of the SDK's reflection-driven decoding and keeps a round
// within its time budget (BenchmarkAnthropicRound); and NewStreaming
// writes a deprecation warning to the process's stderr for some models,
// which would land in the middle of the workbench's screen.
func (p *anthropicProvider) stream(ctx context.Context, model string, body []byte, maxTokens int64, onDelta func(chat.Delta)) (chat.Reply, error) {
	var res *http.Response
	if err := p.client.Post(ctx, "v1/messages", body, &res); err != nil {
		return chat.Reply{}, p.failure(ctx, model, err)
	}
	defer res.Body.Close()
	m, damaged, err := readMessage(res, func(m *streamedMessage) error { return overReplyLimit(ctx, p.name, model, m.size) }, onDelta)
	switch {
	case damaged != nil:
		return chat.Reply{}, &Error{Provider: p.name, Model: model, Message: damaged.Error(), Transient: true}
	case errors.As(err, new(*Error)):
		// The reply passed [limits] model_reply_bytes: the error says so.
		return chat.Reply{}, err
	case err != nil:
		return chat.Reply{}, p.failure(ctx, model, err)
	}
	return m.reply(p.name, model, maxTokens)
}

// readMessage reads the events of res's body until it ends, fails (err:
// the body could not be read, an event could not be decoded, the server
// sent an error event, or check, called after each event, refused the
// message so far) or turns out damaged (an event out of order, malformed
// tool input).
func readMessage(res *http.Response, check func(*streamedMessage) error, onDelta func(chat.Delta)) (m *streamedMessage, damaged, err error) {
	m = &streamedMessage{}
	buf := sseBuffers.Get().(*[]byte)
	defer sseBuffers.Put(buf)
	r := newSSEReader(res.Body, *buf)
	var e streamEvent
	for r.next() {
		switch string(r.name) {
		case "ping", "":
			// The SDK's stream skipped these too: a keep-alive, and data
			// that names no event.
			continue
		case "error":
			return m, nil, streamError(res, bytes.TrimSuffix(r.data, []byte("\n")))
		}
		if len(bytes.TrimSuffix(r.data, []byte("\n"))) == 0 {
			continue
		}
		e = streamEvent{}
		if err := decodeEvent(r.data, &e); err != nil {
			return m, nil, err
		}
		d, err := m.add(&e)
		if err != nil {
			return m, err, nil
		}
		if err := check(m); err != nil {
			return m, nil, err
		}
		if onDelta != nil && (d.Text != "" || d.Reasoning != "") {
			onDelta(d)
		}
	}
	return m, nil, r.err()
}

// streamError is the error an error event in the middle of a stream
// stands for: the API's error object with the response's status (200),
// as the SDK's stream made it, or the event's data when it holds none.
func streamError(res *http.Response, data []byte) error {
	e := &anthropic.Error{Request: res.Request, Response: res, StatusCode: res.StatusCode, RequestID: res.Header.Get("request-id")}
	if e.UnmarshalJSON(data) != nil {
		return fmt.Errorf("received error while streaming: %s", data)
	}
	return e
}

// sseReader reads a text/event-stream as the SDK's decoder did: lines end
// in LF or CRLF, an empty line ends an event, "event:" names it, each
// "data:" line adds its value and a newline to its data, a line that
// begins with a colon is a comment, other fields are ignored, one space
// after the colon is dropped, and an event the stream ends in the middle
// of is not dispatched.
type sseReader struct {
	scn  *bufio.Scanner
	name []byte // the current event's name
	data []byte // its data
}

// maxSSELine is the longest line sseReader takes, as the SDK's decoder.
const maxSSELine = bufio.MaxScanTokenSize << 9

// newSSEReader reads r with buf as its first line buffer.
func newSSEReader(r io.Reader, buf []byte) *sseReader {
	scn := bufio.NewScanner(r)
	scn.Buffer(buf, maxSSELine)
	return &sseReader{scn: scn}
}

// sseBuffers holds line buffers for sseReader, which would otherwise
// allocate one for each streamed message.
var sseBuffers = sync.Pool{New: func() any { b := make([]byte, 4096); return &b }}

// next reads the next event into name and data; false at the end of the
// stream or when it fails (err).
func (r *sseReader) next() bool {
	r.name, r.data = r.name[:0], r.data[:0]
	for r.scn.Scan() {
		line := r.scn.Bytes()
		if len(line) == 0 {
			if len(r.name) == 0 && len(r.data) == 0 {
				continue
			}
			return true
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		switch string(field) {
		case "event":
			r.name = append(r.name[:0], value...)
		case "data":
			r.data = append(r.data, value...)
			r.data = append(r.data, '\n')
		}
	}
	return false
}

// err is why next stopped, nil at the end of the stream.
func (r *sseReader) err() error {
	return r.scn.Err()
}

// streamEvent is one event of a streamed message: message_start (Message),
// content_block_start (Index, ContentBlock), content_block_delta (Index,
// Delta), content_block_stop (Index), message_delta (Delta.StopReason,
// Usage) or message_stop. Ping and error events never reach it:
// readMessage skips the one and fails with the other. decodeEvent fills
// it as encoding/json would through these tags.
type streamEvent struct {
	Type    string `json:"type"`
	Index   int64  `json:"index"`
	Message struct {
		Usage eventUsage `json:"usage"`
	} `json:"message"`
	ContentBlock struct {
		Type      string `json:"type"`
		Text      string `json:"text"`
		Thinking  string `json:"thinking"`
		Signature string `json:"signature"`
		Data      string `json:"data"`
		ID        string `json:"id"`
		Name      string `json:"name"`
	} `json:"content_block"`
	Delta struct {
		Type        string               `json:"type"`
		Text        string               `json:"text"`
		PartialJSON string               `json:"partial_json"`
		Thinking    string               `json:"thinking"`
		Signature   string               `json:"signature"`
		StopReason  anthropic.StopReason `json:"stop_reason"`
	} `json:"delta"`
	Usage eventUsage `json:"usage"`
}

// eventUsage is the usage of message_start and message_delta. The input
// figures are pointers because message_delta sends them only when they
// changed.
type eventUsage struct {
	InputTokens              *int64 `json:"input_tokens"`
	OutputTokens             int64  `json:"output_tokens"`
	CacheCreationInputTokens *int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     *int64 `json:"cache_read_input_tokens"`
}

// streamedMessage accumulates the events of one streamed message. It is
// ours rather than the SDK's Message.Accumulate, which also quietly makes
// malformed tool input {}, a call the model never made.
type streamedMessage struct {
	blocks  []*streamedBlock // by index
	stop    anthropic.StopReason
	usage   chat.Usage
	started bool  // message_start arrived
	stopped bool  // message_stop arrived
	size    int64 // the bytes of the blocks' text, thinking, signatures and tool calls so far
}

// streamedBlock is one content block as its deltas arrive.
type streamedBlock struct {
	typ             string
	text, signature strings.Builder // text or thinking; a thinking block's signature
	data            string          // redacted thinking
	id, name        string          // tool_use
	input           strings.Builder // tool_use input, partial JSON until the block stops
}

// add takes in one event and returns what of it is to be streamed. An
// event out of order (a block index the stream has not started, a second
// start of one) is an error: the stream is damaged.
func (m *streamedMessage) add(e *streamEvent) (chat.Delta, error) {
	switch e.Type {
	case "message_start":
		m.started = true
		m.usage = chat.Usage{OutputTokens: int(e.Message.Usage.OutputTokens)}
		m.addUsage(e.Message.Usage)
	case "content_block_start":
		if e.Index != int64(len(m.blocks)) {
			return chat.Delta{}, fmt.Errorf("malformed stream: content block %d started after %d blocks", e.Index, len(m.blocks))
		}
		cb := &e.ContentBlock
		m.size += int64(len(cb.Text) + len(cb.Thinking) + len(cb.Signature) + len(cb.Data) + len(cb.ID) + len(cb.Name))
		b := &streamedBlock{typ: cb.Type, data: cb.Data, id: cb.ID, name: cb.Name}
		b.text.WriteString(cb.Text + cb.Thinking)
		b.signature.WriteString(cb.Signature)
		m.blocks = append(m.blocks, b)
	case "content_block_delta":
		if e.Index < 0 || e.Index >= int64(len(m.blocks)) {
			return chat.Delta{}, fmt.Errorf("malformed stream: a delta for content block %d, of %d started", e.Index, len(m.blocks))
		}
		b := m.blocks[e.Index]
		d := &e.Delta
		m.size += int64(len(d.Text) + len(d.Thinking) + len(d.Signature) + len(d.PartialJSON))
		switch d.Type {
		case "text_delta":
			b.text.WriteString(d.Text)
			return chat.Delta{Text: d.Text}, nil
		case "thinking_delta":
			b.text.WriteString(d.Thinking)
			return chat.Delta{Reasoning: d.Thinking}, nil
		case "signature_delta":
			b.signature.WriteString(d.Signature)
		case "input_json_delta":
			b.input.WriteString(d.PartialJSON)
		}
	case "content_block_stop":
		if e.Index < 0 || e.Index >= int64(len(m.blocks)) {
			return chat.Delta{}, fmt.Errorf("malformed stream: content block %d stopped, of %d started", e.Index, len(m.blocks))
		}
		if b := m.blocks[e.Index]; b.typ == "tool_use" && b.input.Len() > 0 && !json.Valid([]byte(b.input.String())) {
			// A corrupted stream, not the model's word: the API holds
			// tool input to JSON. It cannot go back to the model as it is
			// (the API takes tool input only as an object), so the
			// attempt fails, as a transient fault another may not have.
			return chat.Delta{}, fmt.Errorf("malformed stream: the input of tool call %s (%s) is not JSON: %.120s", b.id, b.name, b.input.String())
		}
	case "message_delta":
		m.stop = e.Delta.StopReason
		// The counts are running totals for the message so far.
		m.usage.OutputTokens = int(e.Usage.OutputTokens)
		m.addUsage(e.Usage)
	case "message_stop":
		m.stopped = true
	}
	return chat.Delta{}, nil
}

// addUsage takes the input figures u has.
func (m *streamedMessage) addUsage(u eventUsage) {
	if u.InputTokens != nil {
		m.usage.InputTokens = int(*u.InputTokens)
	}
	if u.CacheCreationInputTokens != nil {
		m.usage.CacheCreationInputTokens = int(*u.CacheCreationInputTokens)
	}
	if u.CacheReadInputTokens != nil {
		m.usage.CacheReadInputTokens = int(*u.CacheReadInputTokens)
	}
}

// reply is the accumulated message, or the error its stop reason is: a
// stream without message_stop is no answer, and neither is a message cut
// off at max_tokens.
func (m *streamedMessage) reply(provider, model string, maxTokens int64) (chat.Reply, error) {
	fail := func(transient bool, format string, args ...any) (chat.Reply, error) {
		return chat.Reply{}, &Error{Provider: provider, Model: model, Message: fmt.Sprintf(format, args...), Transient: transient}
	}
	switch {
	case !m.started:
		// A gateway that ignored stream: true, or broke off before the
		// first event: there is no answer to give.
		return fail(true, "the server sent no streamed message (no message_start)")
	case !m.stopped:
		return fail(true, "the stream ended before the message was complete (no message_stop)")
	}
	switch m.stop {
	case anthropic.StopReasonMaxTokens:
		return fail(false, "the reply reached max_tokens (%d) before it was complete; raise max_tokens under this model's entry in config.toml ([models.*] or [models.named.*])", maxTokens)
	case anthropic.StopReasonModelContextWindowExceeded:
		return fail(false, "the conversation no longer fits the model's context window")
	}
	r := chat.Reply{Usage: m.usage}
	var text strings.Builder
	for _, b := range m.blocks {
		switch b.typ {
		case "text":
			text.WriteString(b.text.String())
		case "thinking":
			r.Thinking = append(r.Thinking, chat.Block{Type: chat.BlockThinking, Text: b.text.String(), Signature: b.signature.String()})
		case "redacted_thinking":
			r.Thinking = append(r.Thinking, chat.Block{Type: chat.BlockRedactedThinking, Data: b.data})
		case "tool_use":
			input := json.RawMessage(b.input.String())
			if len(input) == 0 {
				input = json.RawMessage("{}")
			}
			r.ToolCalls = append(r.ToolCalls, chat.ToolCall{ID: b.id, Name: b.name, Arguments: input})
		}
	}
	r.Text = text.String()
	switch {
	case m.stop == anthropic.StopReasonRefusal:
		r.FinishReason = "refusal"
	case len(r.ToolCalls) > 0:
		r.FinishReason = "tool_calls"
	default:
		r.FinishReason = "stop"
	}
	return r, nil
}

// failure turns a failed request or stream into the error Complete
// returns: an *Error, transient for what a retry may cure, or the
// context's error when the caller cancelled. The message is the server's
// own account, never the SDK's rendering of the request, which names
// headers.
func (p *anthropicProvider) failure(ctx context.Context, model string, err error) error {
	if stopped, ok := interrupted(ctx, p.name, model, err); ok {
		return stopped
	}
	if cut, ok := cutErrorBody(p.name, model, err); ok {
		return cut
	}
	e := &Error{Provider: p.name, Model: model}
	var api *anthropic.Error
	var syntax *json.SyntaxError
	switch {
	case errors.As(err, &api) && api.StatusCode == http.StatusOK:
		// An error event in the middle of a stream: the server failed
		// while it answered (overloaded_error under load).
		e.Message = apiErrorText(api)
		e.Transient = true
	case errors.As(err, &api):
		e.Status = api.StatusCode
		e.Message = apiErrorText(api)
		e.Transient = transientStatus(api.StatusCode)
		if api.Response != nil {
			e.RetryAfter = retryAfter(api.Response.Header, time.Now())
		}
	case errors.As(err, &syntax):
		e.Message = "malformed response: " + err.Error()
	default:
		// The connection failed, or broke off while the answer streamed.
		e.Message, e.Transient = err.Error(), true
	}
	return e
}

// apiErrorText is the error type and message of the API's error object,
// "overloaded_error: Overloaded", or the HTTP status when there is none.
func apiErrorText(e *anthropic.Error) string {
	typ := string(e.Type())
	switch {
	case typ != "" && e.Message != "":
		return typ + ": " + e.Message
	case e.Message != "":
		return e.Message
	case typ != "":
		return typ
	}
	return strings.ToLower(http.StatusText(e.StatusCode))
}
