package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/stepwise-dev/stepwise/engine/chat"
	"github.com/stepwise-dev/stepwise/engine/config"
	"github.com/stepwise-dev/stepwise/engine/internal/jsonenc"
	"github.com/stepwise-dev/stepwise/plans/strict"
)

// anthropicProvider serves the anthropic provider type over the Messages
// API, always streaming.
//
// Messages go as Anthropic's content blocks: thinking with its signature and
// redacted thinking go back verbatim, a tool message becomes a user message
// of tool_result blocks, and the last block of a message in the request's
// CacheAt carries a cache_control breakpoint. The model entry's max_tokens, thinking and effort come with
// each request (Request.MaxTokens, Thinking, Effort). A temperature is never
// sent: the API version the SDK speaks refuses sampling parameters.
type anthropicProvider struct {
	name string
	// strictEndpoint is true when strict mode may be sent: the API's own
	// endpoint, or a base_url the configuration says enforces it.
	strictEndpoint bool
	client         anthropic.Client
	// refused holds the output formats and tool sets (strictKey) whose
	// strict request the server refused, so that later calls, the rest of
	// the step's rounds among them, go without strict mode at once.
	refused sync.Map
}

// newAnthropicProvider opens a provider of type anthropic. The SDK's
// environment defaults (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL and the rest)
// are not read here: the configuration has already taken
// ANTHROPIC_BASE_URL in, and api_key = "${ANTHROPIC_API_KEY}" is how a key
// comes from the environment.
func newAnthropicProvider(name string, pc config.Provider) (Provider, error) {
	key, err := apiKey(name, pc, pc.BaseURL == "", "ANTHROPIC_API_KEY")
	if err != nil {
		return nil, err
	}
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithHTTPClient(providerHTTPClient()),
		option.WithAPIKey(key),
		// Models retries, with its own backoff and failover; the SDK's
		// retries would multiply its attempts.
		option.WithMaxRetries(0),
	}
	if pc.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(pc.BaseURL))
	}
	return &anthropicProvider{
		name:           name,
		strictEndpoint: pc.BaseURL == "" || pc.StrictBaseURL,
		client:         anthropic.NewClient(opts...),
	}, nil
}

// Complete streams one message. A strict request that the server refuses
// (its schema, or its grammar not ready) is sent again at once, within
// this attempt, without strict mode, and the refusal is remembered. When
// the strict tools were refused, the thinking of the earlier turns goes
// too (they were made with the strict tool list, see seeds/002), and the
// reply says so in StrictToolsRefused. A strict answer format that meets
// an overloaded server is sent again without it, keeping the tools as they
// were: overload says nothing about the schema.
func (p *anthropicProvider) Complete(ctx context.Context, model string, req chat.Request, onDelta func(chat.Delta)) (chat.Reply, error) {
	out, err := p.output(model, req)
	if err != nil {
		return chat.Reply{}, &Error{Provider: p.name, Model: model, Message: err.Error()}
	}
	reply, err := p.send(ctx, model, req, out, onDelta)
	switch reason := strictRefusal(err); {
	case reason == DowngradeServiceUnavailable && out.strict:
		out.strict, out.downgrade = false, reason
		reply, err = p.send(ctx, model, req, out, onDelta)
	case reason != "" && reason != DowngradeServiceUnavailable && (out.strict || out.strictTools):
		p.remember(out)
		toolsRefused := out.strictTools
		out = out.withoutStrict(reason)
		if toolsRefused {
			req.Messages = chat.WithoutThinking(req.Messages)
		}
		reply, err = p.send(ctx, model, req, out, onDelta)
		reply.StrictToolsRefused = toolsRefused
	}
	if err != nil {
		return chat.Reply{}, err
	}
	reply.StrictRequested = out.requested
	reply.StrictSent = out.strict
	reply.DowngradeReason = out.downgrade
	return reply, nil
}

// send builds the request for out and streams it.
func (p *anthropicProvider) send(ctx context.Context, model string, req chat.Request, out anthropicOutput, onDelta func(chat.Delta)) (chat.Reply, error) {
	body, err := anthropicBody(model, req, out)
	if err != nil {
		return chat.Reply{}, &Error{Provider: p.name, Model: model, Message: err.Error()}
	}
	return p.stream(ctx, model, body, anthropicMaxTokens(req), onDelta)
}

// strictRefusal says why a failed strict request should be sent again
// without strict mode, or "" when it should not: the server refused the
// request (400), saying its grammar could not be prepared in time or else
// refusing the schema, or answered overloaded (529) before streaming.
func strictRefusal(err error) string {
	e, ok := err.(*Error)
	if !ok {
		return ""
	}
	switch e.Status {
	case http.StatusBadRequest:
		msg := strings.ToLower(e.Message)
		if strings.Contains(msg, "grammar") && (strings.Contains(msg, "timed out") || strings.Contains(msg, "timeout")) {
			return DowngradeGrammarUnavailable
		}
		return DowngradeAPIRejectedSchema
	case statusOverloaded:
		return DowngradeServiceUnavailable
	}
	return ""
}

// statusOverloaded is the status the Messages API answers with when it is
// overloaded.
const statusOverloaded = 529

// anthropicOutput is what a request asks for the shape of its answer and
// its tool inputs, and what the run record says about strict mode.
type anthropicOutput struct {
	// schema is the answer's JSON Schema; nil without a format.
	schema map[string]any
	// strict sends schema as the output format; strictTools marks the
	// tools whose own schema passes Anthropic's rules strict.
	strict, strictTools bool
	// formatKey and toolsKey identify the strict format and the strict
	// tool list in anthropicProvider.refused.
	formatKey, toolsKey string
	requested           bool
	downgrade           string
}

// withoutStrict is out sent again without strict mode, for reason.
func (out anthropicOutput) withoutStrict(reason string) anthropicOutput {
	if out.strict {
		out.downgrade = reason
	}
	out.strict, out.strictTools = false, false
	return out
}

// remember records that the server refused out's strict format and tools.
func (p *anthropicProvider) remember(out anthropicOutput) {
	if out.strict {
		p.refused.Store(out.formatKey, true)
	}
	if out.strictTools {
		p.refused.Store(out.toolsKey, true)
	}
}

// output decides strict mode for req: asked for by Format.Strict, sent as
// the output format when the schema passes Anthropic's rules, the model
// may not call tools, the endpoint enforces it and the server has not
// refused this schema before; and on the tools whose schemas pass, when
// the request has tools. A request whose tools the model may call leaves
// its answer unrestricted (seeds/002: strict applies to the tool inputs
// there).
func (p *anthropicProvider) output(model string, req chat.Request) (anthropicOutput, error) {
	f := req.Format
	if f == nil {
		return anthropicOutput{}, nil
	}
	out := anthropicOutput{requested: f.Strict}
	if !out.requested {
		// Without strict mode the schema is not sent: the Messages API
		// has no unenforced schema format, and the agent's prompt states
		// the schema already.
		return out, nil
	}
	if f.Schema != nil {
		doc, err := plainJSON(f.Schema)
		if err != nil {
			return anthropicOutput{}, fmt.Errorf("response format %s: %w", f.Name, err)
		}
		out.schema, _ = doc.(map[string]any)
	}
	if len(req.Tools) > 0 && p.strictEndpoint {
		key, err := json.Marshal(req.Tools)
		if err != nil {
			return anthropicOutput{}, fmt.Errorf("tools: %w", err)
		}
		out.toolsKey = model + "\x00tools\x00" + string(key)
		_, refused := p.refused.Load(out.toolsKey)
		out.strictTools = !refused
	}
	var check any // a nil map must reach Check as no schema at all
	if out.schema != nil {
		check = out.schema
		key, _ := json.Marshal(out.schema)
		out.formatKey = model + "\x00format\x00" + string(key)
	}
	_, refused := p.refused.Load(out.formatKey)
	switch {
	case req.MayCallTools():
		out.downgrade = DowngradeContextTools
	case !strict.Check(check, strict.Anthropic, strict.Context{Runtime: true}).Usable:
		out.downgrade = DowngradeGateIneligible
	case !p.strictEndpoint:
		out.downgrade = DowngradeCompatEndpoint
	case refused:
		out.downgrade = DowngradeAPIRejectedSchema
	default:
		out.strict = true
	}
	return out, nil
}

// toolSchema is t's input schema as a JSON object: as it is when it is
// one already (tools' schemas are decoded JSON, and a round sends every
// tool), else through JSON; an empty object schema when there is none.
func toolSchema(t chat.ToolDef) (map[string]any, error) {
	switch s := t.InputSchema.(type) {
	case nil:
		return map[string]any{"type": "object", "properties": map[string]any{}}, nil
	case map[string]any:
		return s, nil
	}
	doc, err := plainJSON(t.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("tool %s: input schema: %w", t.Name, err)
	}
	m, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("tool %s: input schema is not a JSON object", t.Name)
	}
	return m, nil
}

// anthropicMaxTokens is the max_tokens a request for req carries.
func anthropicMaxTokens(req chat.Request) int64 {
	if req.MaxTokens > 0 {
		return int64(req.MaxTokens)
	}
	return config.DefaultMaxTokens
}

// anthropicBody is the Messages API request for req, streaming. It is
// written in a buffer kept for the next request and copied out at its
// size: growing a fresh buffer to a request's size cost more than all the
// rest of writing it.
func anthropicBody(model string, req chat.Request, out anthropicOutput) ([]byte, error) {
	buf := bodyBuffers.Get().(*[]byte)
	defer bodyBuffers.Put(buf)
	b, err := appendAnthropicBody((*buf)[:0], model, req, out)
	if err != nil {
		return nil, err
	}
	*buf = b
	return bytes.Clone(b), nil
}

// bodyBuffers holds the buffers anthropicBody writes in.
var bodyBuffers = sync.Pool{New: func() any { return new([]byte) }}

// appendAnthropicBody appends the Messages API request for req to b.
//
// The JSON is written by hand rather than through the SDK's
// MessageNewParams, whose encoder costs most of a round's time outside the
// model (BenchmarkAnthropicRound). It holds the keys, their order and the
// escaping the SDK's encoder wrote, so that the bytes sent are what they
// were. Schemas go through encoding/json, as maps did through the SDK's
// encoder, with two differences: the keywords of a tool's input schema
// beyond properties, required and type go in sorted order, where the
// SDK's went in map order, so a tool list is the same bytes from one
// round to the next; and a json.Number (a schema built from Go values,
// see plainJSON) goes as a number, where the SDK's encoder wrote a string.
func appendAnthropicBody(b []byte, model string, req chat.Request, out anthropicOutput) ([]byte, error) {
	b = append(b, `{"max_tokens":`...)
	b = strconv.AppendInt(b, anthropicMaxTokens(req), 10)
	b, err := appendAnthropicMessages(b, req)
	if err != nil {
		return nil, err
	}
	b = append(b, `,"model":`...)
	b = jsonenc.AppendString(b, model)
	if req.Effort != "" || out.strict {
		b = append(b, `,"output_config":{`...)
		if req.Effort != "" {
			b = append(b, `"effort":`...)
			b = jsonenc.AppendString(b, req.Effort)
			if out.strict {
				b = append(b, ',')
			}
		}
		if out.strict {
			b = append(b, `"format":{`...)
			if out.schema != nil {
				b = append(b, `"schema":`...)
				if b, err = appendJSONValue(b, out.schema); err != nil {
					return nil, fmt.Errorf("response format: %w", err)
				}
				b = append(b, ',')
			}
			b = append(b, `"type":"json_schema"}`...)
		}
		b = append(b, '}')
	}
	b = appendAnthropicSystem(b, req)
	if t := req.Thinking; t != nil {
		// Summarized thinking is what there is to show in the inspector;
		// some models omit it unless asked.
		if t.Adaptive() {
			b = append(b, `,"thinking":{"display":"summarized","type":"adaptive"}`...)
		} else {
			b = append(b, `,"thinking":{"budget_tokens":`...)
			b = strconv.AppendInt(b, int64(t.BudgetTokens), 10)
			b = append(b, `,"display":"summarized","type":"enabled"}`...)
		}
	}
	if len(req.Tools) > 0 {
		if req.ToolChoice == chat.ToolChoiceNone {
			b = append(b, `,"tool_choice":{"type":"none"}`...)
		}
		b = append(b, `,"tools":[`...)
		for i, t := range req.Tools {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendAnthropicTool(b, t, out.strictTools); err != nil {
				return nil, err
			}
		}
		b = append(b, ']')
	}
	return append(b, `,"stream":true}`...), nil
}

// cacheControl is the cache breakpoint of a block that ends a cached prefix.
const cacheControl = `,"cache_control":{"type":"ephemeral"}`

// appendAnthropicSystem appends the system messages' text blocks as the
// request's system blocks, if there are any.
func appendAnthropicSystem(b []byte, req chat.Request) []byte {
	n := 0
	for i, m := range req.Messages {
		if m.Role != chat.RoleSystem {
			continue
		}
		cached := req.CacheBreakpoint(i)
		for j, bl := range m.Blocks {
			if bl.Type != chat.BlockText || bl.Text == "" {
				continue
			}
			if n == 0 {
				b = append(b, `,"system":[`...)
			} else {
				b = append(b, ',')
			}
			n++
			b = append(b, `{"text":`...)
			b = jsonenc.AppendString(b, bl.Text)
			if cached && j == len(m.Blocks)-1 {
				b = append(b, cacheControl...)
			}
			b = append(b, `,"type":"text"}`...)
		}
	}
	if n > 0 {
		b = append(b, ']')
	}
	return b
}

// appendAnthropicMessages appends the conversation's messages, system
// messages aside: user and assistant messages, a tool message being a user
// message of tool_result blocks. Neighbours of one role merge into one
// message, as the API wants tool results right after the call and roles
// taking turns.
func appendAnthropicMessages(b []byte, req chat.Request) ([]byte, error) {
	open, openAssistant := false, false // a message is open, and whose
	for i, m := range req.Messages {
		var assistant bool
		switch m.Role {
		case chat.RoleSystem:
			continue
		case chat.RoleUser, chat.RoleTool:
		case chat.RoleAssistant:
			assistant = true
		default:
			return nil, fmt.Errorf("message %d: role %q is not system, user, assistant or tool", i, m.Role)
		}
		mark := len(b)
		merge := open && openAssistant == assistant
		switch {
		case merge:
		case open:
			b = appendRoleEnd(b, openAssistant)
			b = append(b, `,{"content":[`...)
		default:
			b = append(b, `,"messages":[{"content":[`...)
		}
		var n int
		var err error
		if b, n, err = appendAnthropicBlocks(b, m, req.CacheBreakpoint(i), merge); err != nil {
			return nil, fmt.Errorf("message %d (%s): %w", i, m.Role, err)
		}
		if n == 0 {
			// Nothing of it is sent: neither is its opening.
			b = b[:mark]
			continue
		}
		open, openAssistant = true, assistant
	}
	if open {
		b = appendRoleEnd(b, openAssistant)
		b = append(b, ']')
	}
	return b, nil
}

// appendRoleEnd closes a message's content and the message with its role.
func appendRoleEnd(b []byte, assistant bool) []byte {
	if assistant {
		return append(b, `],"role":"assistant"}`...)
	}
	return append(b, `],"role":"user"}`...)
}

// appendAnthropicBlocks appends a message's blocks, each after a comma but
// the first unless more (the blocks go on a merged neighbour's), and says
// how many it appended; cached puts a cache breakpoint on the message's
// last block. Empty text blocks, which the API refuses, are left out, and
// so is thinking without a signature: reasoning another provider returned,
// which the API cannot check. Thinking blocks cannot carry a cache
// breakpoint; the agent marks messages whose last block is never thinking.
func appendAnthropicBlocks(b []byte, m chat.Message, cached, more bool) ([]byte, int, error) {
	n := 0
	for j, bl := range m.Blocks {
		cache := cached && j == len(m.Blocks)-1
		switch bl.Type {
		case chat.BlockText:
			if bl.Text == "" {
				continue
			}
		case chat.BlockThinking:
			if bl.Signature == "" {
				continue
			}
		case chat.BlockRedactedThinking, chat.BlockToolUse, chat.BlockToolResult:
		default:
			return nil, 0, fmt.Errorf("block type %q is not text, thinking, redacted_thinking, tool_use or tool_result", bl.Type)
		}
		if n > 0 || more {
			b = append(b, ',')
		}
		n++
		switch bl.Type {
		case chat.BlockText:
			b = append(b, `{"text":`...)
			b = jsonenc.AppendString(b, bl.Text)
			if cache {
				b = append(b, cacheControl...)
			}
			b = append(b, `,"type":"text"}`...)
		case chat.BlockThinking:
			b = append(b, `{"signature":`...)
			b = jsonenc.AppendString(b, bl.Signature)
			b = append(b, `,"thinking":`...)
			b = jsonenc.AppendString(b, bl.Text)
			b = append(b, `,"type":"thinking"}`...)
		case chat.BlockRedactedThinking:
			b = append(b, `{"data":`...)
			b = jsonenc.AppendString(b, bl.Data)
			b = append(b, `,"type":"redacted_thinking"}`...)
		case chat.BlockToolUse:
			b = append(b, `{"id":`...)
			b = jsonenc.AppendString(b, bl.ID)
			b = append(b, `,"input":`...)
			var err error
			if b, err = appendToolInput(b, bl.Input); err != nil {
				return nil, 0, fmt.Errorf("tool_use %s (%s): input is not a JSON object: %.80s", bl.ID, bl.Name, bl.Input)
			}
			b = append(b, `,"name":`...)
			b = jsonenc.AppendString(b, bl.Name)
			if cache {
				b = append(b, cacheControl...)
			}
			b = append(b, `,"type":"tool_use"}`...)
		case chat.BlockToolResult:
			b = append(b, `{"tool_use_id":`...)
			b = jsonenc.AppendString(b, bl.ID)
			if bl.IsError {
				b = append(b, `,"is_error":true`...)
			}
			if cache {
				b = append(b, cacheControl...)
			}
			if bl.Text != "" {
				b = append(b, `,"content":[{"text":`...)
				b = jsonenc.AppendString(b, bl.Text)
				b = append(b, `,"type":"text"}]`...)
			}
			b = append(b, `,"type":"tool_result"}`...)
		}
	}
	return b, n, nil
}

// appendToolInput appends a tool call's input, {} when it has none, as
// encoding/json writes a json.RawMessage (compact, HTML-safe); it fails
// when the input is not a JSON object.
func appendToolInput(b []byte, input json.RawMessage) ([]byte, error) {
	if len(input) == 0 {
		return append(b, "{}"...), nil
	}
	if t := bytes.TrimLeft(input, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return nil, errors.New("not an object")
	}
	mark := len(b)
	w := bytes.NewBuffer(b)
	if err := json.Compact(w, input); err != nil {
		return nil, err
	}
	b = w.Bytes()
	if bytes.ContainsAny(b[mark:], "<>&\u2028\u2029") {
		var esc bytes.Buffer
		json.HTMLEscape(&esc, b[mark:])
		b = append(b[:mark], esc.Bytes()...)
	}
	return b, nil
}

// appendAnthropicTool appends t as a custom tool with its input schema,
// strict when strictTools and the schema passes Anthropic's rules. The
// input schema goes as the SDK sent it: properties, required, type
// "object", then the schema's other keywords.
func appendAnthropicTool(b []byte, t chat.ToolDef, strictTools bool) ([]byte, error) {
	schema, err := toolSchema(t)
	if err != nil {
		return nil, err
	}
	b = append(b, `{"input_schema":{`...)
	if p := schema["properties"]; p != nil {
		b = append(b, `"properties":`...)
		if b, err = appendJSONValue(b, p); err != nil {
			return nil, fmt.Errorf("tool %s: input schema: %w", t.Name, err)
		}
		b = append(b, ',')
	}
	var required []string
	if v, ok := schema["required"]; ok {
		switch names := v.(type) {
		case []string:
			required = names
		case []any:
			for _, n := range names {
				s, ok := n.(string)
				if !ok {
					return nil, fmt.Errorf("tool %s: input schema: required holds %v, not a property name", t.Name, n)
				}
				required = append(required, s)
			}
		default:
			return nil, fmt.Errorf("tool %s: input schema: required is not a list of property names", t.Name)
		}
	}
	if len(required) > 0 {
		b = append(b, `"required":[`...)
		for i, n := range required {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonenc.AppendString(b, n)
		}
		b = append(b, "],"...)
	}
	b = append(b, `"type":"object"`...)
	var extra []string
	for k := range schema {
		switch k {
		case "type", "properties", "required":
		default:
			extra = append(extra, k)
		}
	}
	slices.Sort(extra)
	for _, k := range extra {
		b = append(b, ',')
		b = jsonenc.AppendString(b, k)
		b = append(b, ':')
		if b, err = appendJSONValue(b, schema[k]); err != nil {
			return nil, fmt.Errorf("tool %s: input schema: %w", t.Name, err)
		}
	}
	b = append(b, `},"name":`...)
	b = jsonenc.AppendString(b, t.Name)
	if t.Description != "" {
		b = append(b, `,"description":`...)
		b = jsonenc.AppendString(b, t.Description)
	}
	if strictTools {
		// The rules read plain decoded JSON; a schema built in Go may
		// hold other types ([]string, structs).
		doc, err := plainJSON(schema)
		if err != nil {
			return nil, fmt.Errorf("tool %s: input schema: %w", t.Name, err)
		}
		if strict.Check(doc, strict.Anthropic, strict.Context{Runtime: true}).Usable {
			b = append(b, `,"strict":true`...)
		}
	}
	return append(b, '}'), nil
}

// appendJSONValue appends a schema value as encoding/json writes it (see
// jsonenc): a schema or two goes out each round, and a hand-written value
// keeps a round within its time budget.
func appendJSONValue(b []byte, v any) ([]byte, error) {
	var e jsonenc.Encoder
	return e.AppendValue(b, v)
}
