package model

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/stepwise-dev/stepwise/engine/config"
	"github.com/stepwise-dev/stepwise/plans/strict"
)

// anthropicProvider serves the anthropic provider type over the Messages
// API, always streaming.
//
// Messages go as Anthropic's content blocks: thinking with its signature and
// redacted thinking go back verbatim, a tool message becomes a user message
// of tool_result blocks, and a block marked Cache carries a cache_control
// breakpoint. The model entry's max_tokens, thinking and effort come with
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
	key := pc.APIKey
	if key == "" {
		if pc.BaseURL == "" {
			return nil, fmt.Errorf(`provider %s has no api_key: set api_key = "${ANTHROPIC_API_KEY}" under [providers.%s]`, name, name)
		}
		// A gateway may need no key; the SDK sends no request without one.
		key = noAPIKey
	}
	transport := http.DefaultTransport
	if t, ok := transport.(*http.Transport); ok {
		t = t.Clone()
		t.ResponseHeaderTimeout = responseHeaderTimeout
		transport = t
	}
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithHTTPClient(&http.Client{Transport: transport}),
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
func (p *anthropicProvider) Complete(ctx context.Context, model string, req Request, onDelta func(Delta)) (Reply, error) {
	out, err := p.output(model, req)
	if err != nil {
		return Reply{}, &Error{Provider: p.name, Model: model, Message: err.Error()}
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
			req.Messages = WithoutThinking(req.Messages)
		}
		reply, err = p.send(ctx, model, req, out, onDelta)
		reply.StrictToolsRefused = toolsRefused
	}
	if err != nil {
		return Reply{}, err
	}
	reply.StrictRequested = out.requested
	reply.StrictSent = out.strict
	reply.DowngradeReason = out.downgrade
	return reply, nil
}

// send builds the request for out and streams it.
func (p *anthropicProvider) send(ctx context.Context, model string, req Request, out anthropicOutput, onDelta func(Delta)) (Reply, error) {
	params, err := anthropicParams(model, req, out)
	if err != nil {
		return Reply{}, &Error{Provider: p.name, Model: model, Message: err.Error()}
	}
	return p.stream(ctx, model, params, onDelta)
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
func (p *anthropicProvider) output(model string, req Request) (anthropicOutput, error) {
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

// anthropicParams builds the Messages API request for req.
func anthropicParams(model string, req Request, out anthropicOutput) (anthropic.MessageNewParams, error) {
	params := anthropic.MessageNewParams{Model: anthropic.Model(model), MaxTokens: int64(req.MaxTokens)}
	if params.MaxTokens <= 0 {
		params.MaxTokens = config.DefaultMaxTokens
	}
	var err error
	if params.System, params.Messages, err = anthropicMessages(req.Messages); err != nil {
		return anthropic.MessageNewParams{}, err
	}
	for _, t := range req.Tools {
		tool, err := anthropicTool(t, out.strictTools)
		if err != nil {
			return anthropic.MessageNewParams{}, err
		}
		params.Tools = append(params.Tools, anthropic.ToolUnionParam{OfTool: &tool})
	}
	if len(req.Tools) > 0 && req.ToolChoice == ToolChoiceNone {
		params.ToolChoice = anthropic.ToolChoiceUnionParam{OfNone: &anthropic.ToolChoiceNoneParam{}}
	}
	if t := req.Thinking; t != nil {
		// Summarized thinking is what there is to show in the inspector;
		// some models omit it unless asked.
		if t.Adaptive() {
			params.Thinking.OfAdaptive = &anthropic.ThinkingConfigAdaptiveParam{Display: anthropic.ThinkingConfigAdaptiveDisplaySummarized}
		} else {
			params.Thinking.OfEnabled = &anthropic.ThinkingConfigEnabledParam{BudgetTokens: int64(t.BudgetTokens), Display: anthropic.ThinkingConfigEnabledDisplaySummarized}
		}
	}
	if req.Effort != "" {
		params.OutputConfig.Effort = anthropic.OutputConfigEffort(req.Effort)
	}
	if out.strict {
		params.OutputConfig.Format = anthropic.JSONOutputFormatParam{Schema: out.schema}
	}
	return params, nil
}

// anthropicTool is t as a custom tool with its input schema, strict when
// strictTools and the schema passes Anthropic's rules.
func anthropicTool(t ToolDef, strictTools bool) (anthropic.ToolParam, error) {
	schema, err := toolSchema(t)
	if err != nil {
		return anthropic.ToolParam{}, err
	}
	in := anthropic.ToolInputSchemaParam{Properties: schema["properties"]}
	for k, v := range schema {
		switch k {
		case "type", "properties":
		case "required":
			switch names := v.(type) {
			case []string:
				in.Required = names
			case []any:
				for _, n := range names {
					s, ok := n.(string)
					if !ok {
						return anthropic.ToolParam{}, fmt.Errorf("tool %s: input schema: required holds %v, not a property name", t.Name, n)
					}
					in.Required = append(in.Required, s)
				}
			default:
				return anthropic.ToolParam{}, fmt.Errorf("tool %s: input schema: required is not a list of property names", t.Name)
			}
		default:
			if in.ExtraFields == nil {
				in.ExtraFields = map[string]any{}
			}
			in.ExtraFields[k] = v
		}
	}
	tool := anthropic.ToolParam{Name: t.Name, InputSchema: in}
	if t.Description != "" {
		tool.Description = anthropic.String(t.Description)
	}
	if strictTools {
		// The rules read plain decoded JSON; a schema built in Go may
		// hold other types ([]string, structs).
		doc, err := plainJSON(schema)
		if err != nil {
			return anthropic.ToolParam{}, fmt.Errorf("tool %s: input schema: %w", t.Name, err)
		}
		if strict.Check(doc, strict.Anthropic, strict.Context{Runtime: true}).Usable {
			tool.Strict = anthropic.Bool(true)
		}
	}
	return tool, nil
}

// toolSchema is t's input schema as a JSON object: as it is when it is
// one already (tools' schemas are decoded JSON, and a round sends every
// tool), else through JSON; an empty object schema when there is none.
func toolSchema(t ToolDef) (map[string]any, error) {
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

// anthropicMessages converts a conversation: system messages become the
// system blocks; the rest become user and assistant messages, a tool
// message being a user message of tool_result blocks. Neighbours of one
// role merge into one message, as the API wants tool results right after
// the call and roles taking turns.
func anthropicMessages(msgs []Message) ([]anthropic.TextBlockParam, []anthropic.MessageParam, error) {
	var system []anthropic.TextBlockParam
	var out []anthropic.MessageParam
	for i, m := range msgs {
		if m.Role == RoleSystem {
			for _, b := range m.Blocks {
				if b.Type == BlockText && b.Text != "" {
					tb := anthropic.TextBlockParam{Text: b.Text}
					if b.Cache {
						tb.CacheControl = anthropic.NewCacheControlEphemeralParam()
					}
					system = append(system, tb)
				}
			}
			continue
		}
		var assistant bool
		switch m.Role {
		case RoleUser, RoleTool:
		case RoleAssistant:
			assistant = true
		default:
			return nil, nil, fmt.Errorf("message %d: role %q is not system, user, assistant or tool", i, m.Role)
		}
		blocks, err := anthropicBlocks(m)
		if err != nil {
			return nil, nil, fmt.Errorf("message %d (%s): %w", i, m.Role, err)
		}
		if len(blocks) == 0 {
			continue
		}
		if n := len(out); n > 0 && (out[n-1].OfAssistant != nil) == assistant {
			if assistant {
				out[n-1].OfAssistant.Content = append(out[n-1].OfAssistant.Content, blocks...)
			} else {
				out[n-1].OfUser.Content = append(out[n-1].OfUser.Content, blocks...)
			}
			continue
		}
		if assistant {
			out = append(out, anthropic.NewAssistantMessage(blocks...))
		} else {
			out = append(out, anthropic.NewUserMessage(blocks...))
		}
	}
	return system, out, nil
}

// anthropicBlocks converts a message's blocks. Empty text blocks, which
// the API refuses, are left out, and so is thinking without a signature:
// reasoning another provider returned, which the API cannot check.
// Thinking blocks cannot carry a cache breakpoint; the agent marks the
// last block of a message, which is never thinking.
func anthropicBlocks(m Message) ([]anthropic.ContentBlockParamUnion, error) {
	var out []anthropic.ContentBlockParamUnion
	for _, b := range m.Blocks {
		var cache anthropic.CacheControlEphemeralParam
		if b.Cache {
			cache = anthropic.NewCacheControlEphemeralParam()
		}
		switch b.Type {
		case BlockText:
			if b.Text == "" {
				continue
			}
			out = append(out, anthropic.ContentBlockParamUnion{OfText: &anthropic.TextBlockParam{Text: b.Text, CacheControl: cache}})
		case BlockThinking:
			if b.Signature == "" {
				continue
			}
			out = append(out, anthropic.NewThinkingBlock(b.Signature, b.Text))
		case BlockRedactedThinking:
			out = append(out, anthropic.NewRedactedThinkingBlock(b.Data))
		case BlockToolUse:
			input := b.Input
			if len(input) == 0 {
				input = json.RawMessage("{}")
			}
			if trimmed := bytes.TrimSpace(input); !json.Valid(trimmed) || trimmed[0] != '{' {
				return nil, fmt.Errorf("tool_use %s (%s): input is not a JSON object: %.80s", b.ID, b.Name, input)
			}
			out = append(out, anthropic.ContentBlockParamUnion{OfToolUse: &anthropic.ToolUseBlockParam{ID: b.ID, Name: b.Name, Input: input, CacheControl: cache}})
		case BlockToolResult:
			r := &anthropic.ToolResultBlockParam{ToolUseID: b.ID, CacheControl: cache}
			if b.IsError {
				r.IsError = anthropic.Bool(true)
			}
			if b.Text != "" {
				r.Content = []anthropic.ToolResultBlockParamContentUnion{{OfText: &anthropic.TextBlockParam{Text: b.Text}}}
			}
			out = append(out, anthropic.ContentBlockParamUnion{OfToolResult: r})
		default:
			return nil, fmt.Errorf("block type %q is not text, thinking, redacted_thinking, tool_use or tool_result", b.Type)
		}
	}
	return out, nil
}
