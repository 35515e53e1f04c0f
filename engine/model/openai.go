package model

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"sync"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/stepwise-dev/stepwise/engine/chat"
	"github.com/stepwise-dev/stepwise/engine/config"
	"github.com/stepwise-dev/stepwise/plans/strict"
)

// The reasons Reply.DowngradeReason gives for strict structured output that
// was asked for and not sent. They are the run record's documented codes.
const (
	// DowngradeGateIneligible: the schema cannot be used under the rules of
	// the provider in use.
	DowngradeGateIneligible = "gate_ineligible"
	// DowngradeContextTools: the request carries tools, so its answer is
	// not restricted to the schema.
	DowngradeContextTools = "unsupported_context_tools"
	// DowngradeCompatEndpoint: the provider talks to a custom base_url
	// that the configuration does not say enforces strict mode
	// (strict_base_url).
	DowngradeCompatEndpoint = "compat_endpoint"
	// DowngradeAPIRejectedSchema: the server refused the request with
	// strict mode, and it was sent again without it (for openai, asking
	// only for a JSON object).
	DowngradeAPIRejectedSchema = "api_rejected_schema"
	// DowngradeGrammarUnavailable: Anthropic could not prepare the
	// schema's grammar at that moment, and the request was sent again
	// without strict mode.
	DowngradeGrammarUnavailable = "grammar_unavailable"
	// DowngradeServiceUnavailable: Anthropic answered a strict request
	// that it was overloaded, and the request was sent again without
	// strict mode.
	DowngradeServiceUnavailable = "service_unavailable"
)

// noAPIKey is the key sent to an openai_compat server configured without
// one: the SDK sends no request without a key, and a local server that
// needs none ignores it.
const noAPIKey = "stepwise-no-key"

// responseHeaderTimeout bounds the wait for a server's response headers
// when the call itself sets no timeout. A streamed answer's body is not
// bounded by it: the headers come before the first token.
const responseHeaderTimeout = 10 * time.Minute

// apiKey is the key a provider sends: its api_key, or, where none is needed
// (a gateway or a local server may need none), noAPIKey, since the SDKs
// send no request without one. required says that the provider's own API
// is the endpoint, which refuses a call without a key; envVar names the
// variable the error suggests reading it from.
func apiKey(name string, pc config.Provider, required bool, envVar string) (string, error) {
	switch {
	case pc.APIKey != "":
		return pc.APIKey, nil
	case required:
		return "", fmt.Errorf(`provider %s has no api_key: set api_key = "${%s}" under [providers.%s]`, name, envVar, name)
	}
	return noAPIKey, nil
}

// providerHTTPClient is the HTTP client a provider calls its API with: the
// default transport, with response headers bounded by
// responseHeaderTimeout, the silence of a response by its attempt's idle
// bound (idleTransport), and the body of an error response by
// errorBodyLimit (errorBodyTransport).
func providerHTTPClient() *http.Client {
	transport := http.DefaultTransport
	if t, ok := transport.(*http.Transport); ok {
		t = t.Clone()
		t.ResponseHeaderTimeout = responseHeaderTimeout
		transport = t
	}
	return &http.Client{Transport: idleTransport{base: errorBodyTransport{base: transport}}}
}

// openAIProvider serves the openai and openai_compat provider types over
// the Chat Completions API, always streaming.
//
// Reasoning: an openai_compat server's reasoning (reasoning_content, or
// reasoning, in the streamed delta) is kept as Reply.Thinking and replayed
// on later assistant messages as reasoning_content, the field the servers
// that stream it read back. The OpenAI API neither streams its models'
// reasoning on Chat Completions nor accepts it back, so type openai sends
// none.
type openAIProvider struct {
	name string
	// compat is true for type openai_compat.
	compat bool
	// strictEndpoint is true when strict mode may be sent: the SDK's own
	// endpoint, or a base_url the configuration says enforces it.
	strictEndpoint bool
	chat           openai.ChatCompletionService
	// rejected holds the formats (formatKey) a server refused json_schema
	// for, so that later calls with the same model and schema go straight
	// to json_object instead of paying for a refused request each time.
	rejected sync.Map
}

// newOpenAIProvider opens a provider of type openai or openai_compat. The
// SDK's environment defaults (OPENAI_BASE_URL, OPENAI_API_KEY and the
// like) are not read: the configuration says where a provider points, and
// api_key = "${OPENAI_API_KEY}" is how a key comes from the environment.
func newOpenAIProvider(name string, pc config.Provider) (Provider, error) {
	key, err := apiKey(name, pc, pc.Type == config.ProviderOpenAI && pc.BaseURL == "", "OPENAI_API_KEY")
	if err != nil {
		return nil, err
	}
	opts := []option.RequestOption{
		option.WithHTTPClient(providerHTTPClient()),
		option.WithEnvironmentProduction(),
		option.WithAPIKey(key),
		// Models retries, with its own backoff and failover; the SDK's
		// retries would multiply its attempts.
		option.WithMaxRetries(0),
		option.WithMiddleware(recordResponse),
	}
	if pc.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(pc.BaseURL))
	}
	custom := pc.Type == config.ProviderOpenAICompat || pc.BaseURL != ""
	return &openAIProvider{
		name:           name,
		compat:         pc.Type == config.ProviderOpenAICompat,
		strictEndpoint: !custom || pc.StrictBaseURL,
		chat:           openai.NewChatCompletionService(opts...),
	}, nil
}

// Complete streams one chat completion. A request whose json_schema
// response format the server refuses (400 or 422) is sent again at once,
// within this attempt, asking for a JSON object and giving the schema in
// the system message.
func (p *openAIProvider) Complete(ctx context.Context, model string, req chat.Request, onDelta func(chat.Delta)) (chat.Reply, error) {
	out, err := p.output(model, req)
	if err != nil {
		return chat.Reply{}, &Error{Provider: p.name, Model: model, Message: err.Error()}
	}
	reply, err := p.send(ctx, model, req, out, onDelta)
	if out.kind == outputSchema && refusesSchema(err) {
		p.rejected.Store(out.key, true)
		out = out.asObject()
		reply, err = p.send(ctx, model, req, out, onDelta)
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
func (p *openAIProvider) send(ctx context.Context, model string, req chat.Request, out output, onDelta func(chat.Delta)) (chat.Reply, error) {
	params, err := p.params(model, req, out)
	if err != nil {
		return chat.Reply{}, &Error{Provider: p.name, Model: model, Message: err.Error()}
	}
	return p.stream(ctx, model, params, onDelta)
}

// refusesSchema reports whether err is the server refusing a request,
// which for a json_schema request is most often the schema or the
// response_format itself. 422 is how servers built on request validation
// refuse a parameter they do not know.
func refusesSchema(err error) bool {
	e, ok := err.(*Error)
	return ok && (e.Status == http.StatusBadRequest || e.Status == http.StatusUnprocessableEntity)
}

// outputKind is how a request asks for the shape of its answer.
type outputKind int

const (
	outputText   outputKind = iota // no response_format
	outputSchema                   // response_format json_schema
	outputObject                   // response_format json_object, the schema in the system message
)

// output is the response format of one request, and what the run record
// says about strict mode for it.
type output struct {
	kind   outputKind
	name   string
	schema map[string]any // nil when the format gives no object schema
	// schemaText is the schema as JSON, for the json_object instruction.
	schemaText string
	// key identifies the model and schema in openAIProvider.rejected.
	key string
	// requested, strict and downgrade become Reply.StrictRequested,
	// StrictSent and DowngradeReason.
	requested, strict bool
	downgrade         string
}

// asObject is out sent again after the server refused its json_schema.
func (out output) asObject() output {
	out.kind = outputObject
	if out.strict {
		out.downgrade = DowngradeAPIRejectedSchema
	}
	out.strict = false
	return out
}

// output decides the response format of req: none without a Format; else
// json_schema, strict when it was asked for and the schema, the request
// and the endpoint allow it; json_object when the server has refused this
// schema for this model before.
func (p *openAIProvider) output(model string, req chat.Request) (output, error) {
	f := req.Format
	if f == nil {
		return output{kind: outputText}, nil
	}
	out := output{kind: outputSchema, name: formatName(f.Name), requested: f.Strict}
	if f.Schema != nil {
		doc, err := plainJSON(f.Schema)
		if err != nil {
			return output{}, fmt.Errorf("response format %s: %w", out.name, err)
		}
		text, _ := json.Marshal(doc)
		out.schemaText = string(text)
		out.schema, _ = doc.(map[string]any)
	}
	out.key = model + "\x00" + out.name + "\x00" + out.schemaText
	if out.requested {
		out.downgrade = p.strictVerdict(out.schema, req.MayCallTools())
		out.strict = out.downgrade == ""
	}
	if out.schema == nil {
		// json_schema needs an object schema; without one, a JSON object
		// is all that can be asked for.
		out.kind = outputObject
	}
	if _, refused := p.rejected.Load(out.key); refused && out.kind == outputSchema {
		out = out.asObject()
	}
	return out, nil
}

// strictVerdict says why strict mode cannot be sent for schema, or "" when
// it can. When several reasons apply, the request's shape comes first,
// then the schema, then the endpoint: the order they are fixed in.
func (p *openAIProvider) strictVerdict(schema map[string]any, hasTools bool) string {
	var check any // a nil map must reach Check as no schema at all
	if schema != nil {
		check = schema
	}
	v := strict.Check(check, strict.OpenAI, strict.Context{HasTools: hasTools, Runtime: true})
	schemaRefused := false
	for _, n := range v.Refusals() {
		if n.Code != strict.UnsupportedContextTools {
			schemaRefused = true
		}
	}
	switch {
	case hasTools:
		return DowngradeContextTools
	case schemaRefused:
		return DowngradeGateIneligible
	case !p.strictEndpoint:
		return DowngradeCompatEndpoint
	}
	return ""
}

// formatNameChars are the characters a json_schema name may hold.
var formatNameChars = regexp.MustCompile(`[^a-zA-Z0-9_-]+`)

// formatName makes name acceptable as a json_schema name: letters, digits,
// underscores and dashes, at most 64 of them.
func formatName(name string) string {
	name = formatNameChars.ReplaceAllString(name, "_")
	if len(name) > 64 {
		name = name[:64]
	}
	if name == "" {
		return answerFormatName
	}
	return name
}

// plainJSON turns a schema into plain decoded JSON (maps, slices, strings,
// json.Number, booleans), whatever Go value it was given as.
func plainJSON(v any) (any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	return doc, nil
}

// objectInstruction is appended to the system message when the answer is
// asked for as a json_object: the mode itself only promises some JSON
// object, and the OpenAI API wants the word JSON in the messages.
func (out output) objectInstruction() string {
	if out.schemaText == "" {
		return "Answer with a single JSON object and nothing else."
	}
	return "Answer with a single JSON object and nothing else. It must match this JSON Schema:\n" + out.schemaText
}

// params builds the Chat Completions request for req.
func (p *openAIProvider) params(model string, req chat.Request, out output) (openai.ChatCompletionNewParams, error) {
	messages, err := p.messages(req.Messages, out)
	if err != nil {
		return openai.ChatCompletionNewParams{}, err
	}
	params := openai.ChatCompletionNewParams{
		Model:    model,
		Messages: messages,
		// The usage comes in a last chunk, which only this asks for.
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	if req.Temperature != nil {
		params.Temperature = openai.Float(*req.Temperature)
	}
	for _, t := range req.Tools {
		tool, err := p.tool(t, out)
		if err != nil {
			return openai.ChatCompletionNewParams{}, err
		}
		params.Tools = append(params.Tools, tool)
	}
	if len(req.Tools) > 0 && req.ToolChoice == chat.ToolChoiceNone {
		params.ToolChoice.OfAuto = openai.String(string(openai.ChatCompletionToolChoiceOptionAutoNone))
	}
	switch out.kind {
	case outputSchema:
		js := shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: out.name, Schema: out.schema}
		if out.strict {
			js.Strict = openai.Bool(true)
		}
		params.ResponseFormat.OfJSONSchema = &shared.ResponseFormatJSONSchemaParam{JSONSchema: js}
	case outputObject:
		params.ResponseFormat.OfJSONObject = &shared.ResponseFormatJSONObjectParam{}
	}
	return params, nil
}

// tool is t as a function tool. Its parameters are strict when the request
// asked for strict output, strict mode could be sent to this endpoint, and
// the tool's own schema passes OpenAI's rules: on a request with tools,
// that is where strict mode applies.
func (p *openAIProvider) tool(t chat.ToolDef, out output) (openai.ChatCompletionToolUnionParam, error) {
	params := map[string]any{"type": "object", "properties": map[string]any{}}
	if t.InputSchema != nil {
		doc, err := plainJSON(t.InputSchema)
		if err != nil {
			return openai.ChatCompletionToolUnionParam{}, fmt.Errorf("tool %s: input schema: %w", t.Name, err)
		}
		m, ok := doc.(map[string]any)
		if !ok {
			return openai.ChatCompletionToolUnionParam{}, fmt.Errorf("tool %s: input schema is not a JSON object", t.Name)
		}
		params = m
	}
	def := shared.FunctionDefinitionParam{Name: t.Name, Parameters: params}
	if t.Description != "" {
		def.Description = openai.String(t.Description)
	}
	if out.requested && p.strictEndpoint && strict.Check(params, strict.OpenAI, strict.Context{Runtime: true}).Usable {
		def.Strict = openai.Bool(true)
	}
	return openai.ChatCompletionFunctionTool(def), nil
}

// messages converts a conversation. For a json_object request the
// instruction to answer with the schema goes at the end of the first
// system message, or in a system message of its own in front when there
// is none. A tool message's results become one tool message each, the
// shape Chat Completions takes them in.
func (p *openAIProvider) messages(msgs []chat.Message, out output) ([]openai.ChatCompletionMessageParamUnion, error) {
	instructed := out.kind != outputObject
	var params []openai.ChatCompletionMessageParamUnion
	for _, m := range msgs {
		switch m.Role {
		case chat.RoleSystem:
			content := m.Text()
			if !instructed {
				content += "\n\n" + out.objectInstruction()
				instructed = true
			}
			params = append(params, openai.SystemMessage(content))
		case chat.RoleUser:
			params = append(params, openai.UserMessage(m.Text()))
		case chat.RoleAssistant:
			params = append(params, p.assistant(m))
		case chat.RoleTool:
			for _, b := range m.Blocks {
				if b.Type == chat.BlockToolResult {
					params = append(params, openai.ToolMessage(b.Text, b.ID))
				}
			}
		default:
			return nil, fmt.Errorf("message role %q is not system, user, assistant or tool", m.Role)
		}
	}
	if !instructed {
		params = append([]openai.ChatCompletionMessageParamUnion{openai.SystemMessage(out.objectInstruction())}, params...)
	}
	return params, nil
}

// assistant converts an assistant message with its tool calls, and its
// reasoning for a compat server.
func (p *openAIProvider) assistant(m chat.Message) openai.ChatCompletionMessageParamUnion {
	var a openai.ChatCompletionAssistantMessageParam
	text, calls := m.Text(), m.ToolCalls()
	if text != "" || len(calls) == 0 {
		a.Content.OfString = openai.String(text)
	}
	for _, c := range calls {
		args := string(c.Arguments)
		if args == "" {
			args = "{}"
		}
		a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
			OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
				ID:       c.ID,
				Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: args},
			},
		})
	}
	if reasoning := m.Reasoning(); p.compat && reasoning != "" {
		a.SetExtraFields(map[string]any{"reasoning_content": reasoning})
	}
	return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}
}
