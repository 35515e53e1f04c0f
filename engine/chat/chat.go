// Package chat is a conversation with a language model as values:
// messages of typed content blocks, the request a call sends, the reply
// and streamed deltas that come back, and token usage, with the JSON that
// recorded runs hold (including the shapes older runs wrote). It holds no
// provider and makes no call: engine/model does that. It exists apart so
// that front ends, the store and the debugger can read and show a
// conversation without importing the providers.
package chat

import (
	"bytes"
	"encoding/json"
	"slices"
	"time"

	"github.com/stepwise-dev/stepwise/engine/config"
)

// ToolCall is one tool call a model asked for.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// ToolDef is a tool offered to a model.
type ToolDef struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	InputSchema any    `json:"input_schema,omitempty"`
}

// ResponseFormat asks for an answer in JSON conforming to Schema.
type ResponseFormat struct {
	Name   string `json:"name"`
	Schema any    `json:"schema"`
	// Strict asks the provider to enforce the schema where it can.
	Strict bool `json:"strict,omitempty"`
}

// Request is one model call.
type Request struct {
	// Step is the path of the step making the call ("E1", "E3/do.2",
	// "solver" for a plan's finish). Script replies match on it.
	Step string `json:"step"`
	// Role is the role the call is made in; a script reply's role must fit.
	Role     string    `json:"role"`
	Messages []Message `json:"messages"`
	// CacheAt are the indexes of the messages whose last block ends a
	// prefix the provider should cache: the request up to there is sent
	// again, byte for byte, by a later one. They are kept beside the
	// messages, not on their blocks, so that an agent passes its history
	// as it is each round instead of copying it to mark it. Recorded, each
	// is written as "cache": true on the block it ends (see MarshalJSON).
	CacheAt []int     `json:"-"`
	Tools   []ToolDef `json:"tools,omitempty"`
	// ToolChoice is ToolChoiceAuto (the model may call Tools) or
	// ToolChoiceNone (Tools are offered for the request's shape only: the
	// model must answer). An agent's last round sends its tools with
	// ToolChoiceNone rather than withdrawing them, so that the request
	// keeps the prefix a provider cached (tools come first in it).
	ToolChoice  string          `json:"tool_choice,omitempty"`
	Format      *ResponseFormat `json:"format,omitempty"`
	Temperature *float64        `json:"temperature,omitempty"`
	// MaxTokens, Thinking and Effort are the settings of the model entry
	// that serves the call, set per candidate by Models.Call. The
	// anthropic provider sends them; the others do not.
	MaxTokens int              `json:"max_tokens,omitempty"`
	Thinking  *config.Thinking `json:"thinking,omitempty"`
	Effort    string           `json:"effort,omitempty"`
	// Timeout bounds each attempt: an agent step's own
	// llm_timeout_seconds. Zero takes [settings] llm_timeout_seconds.
	Timeout time.Duration `json:"-"`
}

// CacheBreakpoint reports whether message i ends in a cache breakpoint.
func (req Request) CacheBreakpoint(i int) bool {
	return slices.Contains(req.CacheAt, i) && i < len(req.Messages) && len(req.Messages[i].Blocks) > 0
}

// MarshalJSON writes req as runs have always recorded it: each cache
// breakpoint as "cache": true on the last block of its message. The
// marked blocks are copies; req's messages are the caller's history.
// <, > and & are written as they are, for the encoder that calls this
// escapes them or not as it was told to.
func (req Request) MarshalJSON() ([]byte, error) {
	type plain Request // without these methods
	p := plain(req)
	if len(req.CacheAt) > 0 {
		p.Messages = slices.Clone(req.Messages)
		for i := range p.Messages {
			if !req.CacheBreakpoint(i) {
				continue
			}
			blocks := slices.Clone(p.Messages[i].Blocks)
			blocks[len(blocks)-1].Cache = true
			p.Messages[i].Blocks = blocks
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(p); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// UnmarshalJSON reads a recorded request, taking the blocks marked
// "cache": true back into CacheAt.
func (req *Request) UnmarshalJSON(data []byte) error {
	type plain Request // without these methods
	if err := json.Unmarshal(data, (*plain)(req)); err != nil {
		return err
	}
	req.CacheAt = nil
	for i, m := range req.Messages {
		marked := false
		for j := range m.Blocks {
			marked = marked || m.Blocks[j].Cache
			m.Blocks[j].Cache = false
		}
		if marked {
			req.CacheAt = append(req.CacheAt, i)
		}
	}
	return nil
}

// MayCallTools reports whether the model may answer req with tool calls.
func (req Request) MayCallTools() bool {
	return len(req.Tools) > 0 && req.ToolChoice != ToolChoiceNone
}

// Usage is the token count of one call. The three input figures are
// disjoint: the prompt's real size is their sum.
type Usage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

// Total counts every token: input, output and both cache figures, as a
// run's tokens are counted wherever they are shown.
func (u Usage) Total() int {
	return u.InputTokens + u.OutputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
}

// Cached counts the input tokens a prompt cache wrote or read.
func (u Usage) Cached() int {
	return u.CacheCreationInputTokens + u.CacheReadInputTokens
}

// Add returns u plus v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		InputTokens:              u.InputTokens + v.InputTokens,
		OutputTokens:             u.OutputTokens + v.OutputTokens,
		CacheCreationInputTokens: u.CacheCreationInputTokens + v.CacheCreationInputTokens,
		CacheReadInputTokens:     u.CacheReadInputTokens + v.CacheReadInputTokens,
	}
}

// Reply is what a model answered.
type Reply struct {
	Text      string     `json:"text,omitempty"`
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// Thinking is the reasoning the model showed before its answer, as the
	// provider returned it: thinking blocks with their signatures and
	// redacted thinking. It goes back verbatim in later rounds.
	Thinking []Block `json:"thinking,omitempty"`
	Usage    Usage   `json:"usage"`
	// FinishReason is stop, tool_calls, length or refusal.
	FinishReason string `json:"finish_reason,omitempty"`
	// Provider and Model name what actually answered, after any failover.
	Provider string `json:"provider"`
	Model    string `json:"model"`
	// StrictRequested says whether the request asked for strict
	// structured output (Format.Strict), StrictSent whether it was sent,
	// and DowngradeReason why not when it was asked for and not sent.
	StrictRequested bool   `json:"strict_requested,omitempty"`
	StrictSent      bool   `json:"strict_sent,omitempty"`
	DowngradeReason string `json:"downgrade_reason,omitempty"`
	// StrictToolsRefused says that the server refused the request's
	// strict tool schemas and it was sent again without them, leaving out
	// the thinking of the earlier turns, which were made with the strict
	// tool list. The caller leaves that thinking out of its conversation
	// from then on (seeds/002).
	StrictToolsRefused bool `json:"strict_tools_refused,omitempty"`
	// Retries are why the attempts of the call that failed before this
	// reply failed, in order, a fallback's included: the engine records
	// them with the call (ModelCalled.Retries). The reply itself is kept
	// without them, so that a replay of it is not told of retries it did
	// not make.
	Retries []string `json:"-"`
}

// Reasoning is the text of the reply's thinking, for display.
func (r Reply) Reasoning() string { return thinkingText(r.Thinking) }

// Delta is a piece of a reply as it streams in.
type Delta struct {
	Text      string `json:"text,omitempty"`
	Reasoning string `json:"reasoning,omitempty"`
	// Reset says that what streamed so far is void: its attempt failed
	// (it ran out of time, the server went silent, the stream ended
	// short) and the request is being sent again.
	Reset bool `json:"reset,omitempty"`
	// Failure, with Reset, is why the attempt failed, for a reader
	// that cannot take the streamed text back and must say why it stands.
	Failure string `json:"failure,omitempty"`
}
