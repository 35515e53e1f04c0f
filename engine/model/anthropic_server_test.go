package model

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// messagesServer is an HTTP server on 127.0.0.1:0 that answers POST
// /v1/messages the way the Messages API does when asked to stream: a
// text/event-stream of named events (message_start, then per content block
// content_block_start, its deltas and content_block_stop, each with the
// block's index, then message_delta and message_stop, with ping events in
// between), or an error status with the API's error object. Each request
// takes the next of its turns, in order; every request body is kept, byte
// for byte, for the tests to compare.
type messagesServer struct {
	*httptest.Server

	mu       sync.Mutex
	turns    []serverTurn
	next     int
	bodies   [][]byte
	requests []*http.Request
}

// serverTurn is what the server answers one request with.
type serverTurn struct {
	// status is the HTTP status of an error answer; 0 streams events.
	status int
	// errType and errMessage make the error object of an error status.
	errType, errMessage string
	// header is sent with the answer, e.g. retry-after.
	header map[string]string
	// events are the streamed events, in order.
	events []sseEvent
	// cut breaks the connection after the events, as a network failure
	// or a server crash mid-answer does: no message_stop, no clean end of
	// the response.
	cut bool
	// hang keeps the connection open after the events, sending nothing
	// more, until the client goes away: a server that stalls mid-answer.
	hang bool
	// silent answers nothing at all, not even its headers, until the
	// client goes away: a server that took the request and never answers.
	silent bool
}

// sseEvent is one server-sent event: its name and its JSON data.
type sseEvent struct {
	name string
	data string
}

// newMessagesServer starts a server that answers with turns, one per
// request; a request past the last turn gets a 500 that names the test's
// mistake.
func newMessagesServer(t testing.TB, turns ...serverTurn) *messagesServer {
	t.Helper()
	s := &messagesServer{turns: turns}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *messagesServer) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.bodies = append(s.bodies, body)
	s.requests = append(s.requests, r)
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		s.mu.Unlock()
		writeAPIError(w, http.StatusNotFound, "not_found_error", fmt.Sprintf("%s %s is not the Messages API", r.Method, r.URL.Path))
		return
	}
	if s.next >= len(s.turns) {
		s.mu.Unlock()
		writeAPIError(w, http.StatusInternalServerError, "api_error", fmt.Sprintf("the test scripted %d turns and this is request %d", len(s.turns), len(s.bodies)))
		return
	}
	turn := s.turns[s.next]
	s.next++
	s.mu.Unlock()
	if turn.silent {
		<-r.Context().Done()
		return
	}

	for k, v := range turn.header {
		w.Header().Set(k, v)
	}
	w.Header().Set("request-id", fmt.Sprintf("req_%d", len(s.bodies)))
	if turn.status != 0 {
		writeAPIError(w, turn.status, turn.errType, turn.errMessage)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher := w.(http.Flusher)
	for _, e := range turn.events {
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", e.name, e.data)
		flusher.Flush()
	}
	if turn.hang {
		<-r.Context().Done()
		return
	}
	if turn.cut {
		// Hijacking after the header has gone out closes the connection
		// without the chunked body's terminator: the client reads an
		// unexpected end of the body.
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.(*net.TCPConn).SetLinger(0)
			conn.Close()
		}
	}
}

// writeAPIError writes the Messages API's error object.
func writeAPIError(w http.ResponseWriter, status int, typ, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{
		"type":  "error",
		"error": map[string]string{"type": typ, "message": message},
	})
}

// body returns the body of request i (0-based).
func (s *messagesServer) body(t testing.TB, i int) []byte {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if i >= len(s.bodies) {
		t.Fatalf("request %d was not made: the server got %d", i+1, len(s.bodies))
	}
	return s.bodies[i]
}

// header returns a header of request i (0-based).
func (s *messagesServer) header(i int, key string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[i].Header.Get(key)
}

// count is the number of requests the server got.
func (s *messagesServer) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.bodies)
}

// A streamed turn is built from content blocks, as the API sends them.

// contentBlock is one block of a streamed answer: the content_block_start
// data and the deltas that follow it.
type contentBlock struct {
	start  string
	deltas []string
}

// textBlock streams text in the pieces given.
func textBlock(pieces ...string) contentBlock {
	b := contentBlock{start: `{"type":"text","text":""}`}
	for _, p := range pieces {
		b.deltas = append(b.deltas, fmt.Sprintf(`{"type":"text_delta","text":%s}`, jsonString(p)))
	}
	return b
}

// thinkingBlock streams thinking in the pieces given, then its signature.
func thinkingBlock(signature string, pieces ...string) contentBlock {
	b := contentBlock{start: `{"type":"thinking","thinking":"","signature":""}`}
	for _, p := range pieces {
		b.deltas = append(b.deltas, fmt.Sprintf(`{"type":"thinking_delta","thinking":%s}`, jsonString(p)))
	}
	b.deltas = append(b.deltas, fmt.Sprintf(`{"type":"signature_delta","signature":%s}`, jsonString(signature)))
	return b
}

// redactedThinkingBlock is encrypted thinking: it comes whole in its start
// event, with no deltas.
func redactedThinkingBlock(data string) contentBlock {
	return contentBlock{start: fmt.Sprintf(`{"type":"redacted_thinking","data":%s}`, jsonString(data))}
}

// toolUseBlock streams a tool call's input as the partial JSON pieces
// given (input_json_delta); together they must make the input object.
func toolUseBlock(id, name string, partialJSON ...string) contentBlock {
	b := contentBlock{start: fmt.Sprintf(`{"type":"tool_use","id":%s,"name":%s,"input":{}}`, jsonString(id), jsonString(name))}
	for _, p := range partialJSON {
		b.deltas = append(b.deltas, fmt.Sprintf(`{"type":"input_json_delta","partial_json":%s}`, jsonString(p)))
	}
	return b
}

// streamUsage is the usage a streamed turn reports: the input figures in
// message_start, the output tokens in message_delta.
type streamUsage struct {
	input, output, cacheWrite, cacheRead int
}

// streamedTurn is a complete streamed answer: message_start, a ping, the
// blocks in index order, message_delta with stopReason and the usage, and
// message_stop.
func streamedTurn(stopReason string, u streamUsage, blocks ...contentBlock) serverTurn {
	return serverTurn{events: answerEvents(stopReason, u, blocks...)}
}

// answerEvents are the events of a complete streamed answer.
func answerEvents(stopReason string, u streamUsage, blocks ...contentBlock) []sseEvent {
	events := []sseEvent{
		{"message_start", fmt.Sprintf(`{"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","content":[],"model":"claude-test","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":%d,"cache_creation_input_tokens":%d,"cache_read_input_tokens":%d,"output_tokens":1}}}`,
			u.input, u.cacheWrite, u.cacheRead)},
		{"ping", `{"type": "ping"}`},
	}
	for i, b := range blocks {
		events = append(events, sseEvent{"content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":%s}`, i, b.start)})
		for _, d := range b.deltas {
			events = append(events, sseEvent{"content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":%s}`, i, d)})
		}
		events = append(events, sseEvent{"content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, i)})
	}
	return append(events,
		sseEvent{"message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%s,"stop_sequence":null},"usage":{"output_tokens":%d}}`, jsonString(stopReason), u.output)},
		sseEvent{"message_stop", `{"type":"message_stop"}`},
	)
}

// errorTurn is an error status with the API's error object, such as 429
// rate_limit_error or 529 overloaded_error.
func errorTurn(status int, typ, message string, header map[string]string) serverTurn {
	return serverTurn{status: status, errType: typ, errMessage: message, header: header}
}

// midStreamError streams the start of an answer and then an error event,
// as the API does when it fails while answering (overloaded_error under
// load).
func midStreamError(typ, message string, blocks ...contentBlock) serverTurn {
	events := answerEvents("end_turn", streamUsage{}, blocks...)
	events = events[:len(events)-2] // no message_delta, no message_stop
	return serverTurn{events: append(events, sseEvent{"error",
		fmt.Sprintf(`{"type":"error","error":{"type":%s,"message":%s}}`, jsonString(typ), jsonString(message))})}
}

// cutTurn streams the start of an answer and breaks the connection.
func cutTurn(blocks ...contentBlock) serverTurn {
	events := answerEvents("end_turn", streamUsage{}, blocks...)
	return serverTurn{events: events[:len(events)-2], cut: true}
}

// endedEarly streams the start of an answer and ends the response
// cleanly, without message_delta and message_stop: a gateway that closed
// the stream early.
func endedEarly(blocks ...contentBlock) serverTurn {
	events := answerEvents("end_turn", streamUsage{}, blocks...)
	return serverTurn{events: events[:len(events)-2]}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// sseText renders events as the bytes of a text/event-stream body, for
// feeding the SDK's decoder from memory.
func sseText(events []sseEvent) string {
	var b strings.Builder
	for _, e := range events {
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", e.name, e.data)
	}
	return b.String()
}
