package chat

import (
	"encoding/json"
	"strings"
)

// The roles of a message.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	// RoleTool is a message of tool results, one tool_result block for
	// each call of the assistant message before it.
	RoleTool = "tool"
)

// The values of Request.ToolChoice.
const (
	ToolChoiceAuto = ""
	ToolChoiceNone = "none"
)

// BlockType is the kind of one block of a message's content.
type BlockType string

// The kinds of block. Providers that keep content flat (Chat Completions)
// map them to their own shape; Anthropic's Messages API takes them as they
// are.
const (
	BlockText BlockType = "text"
	// BlockThinking is reasoning a model showed, with the signature that
	// lets the provider check it when it comes back.
	BlockThinking BlockType = "thinking"
	// BlockRedactedThinking is reasoning the provider encrypted; it goes
	// back as it came, unread.
	BlockRedactedThinking BlockType = "redacted_thinking"
	BlockToolUse          BlockType = "tool_use"
	BlockToolResult       BlockType = "tool_result"
)

// Block is one piece of a message's content. Which fields a block uses
// depends on its Type.
type Block struct {
	Type BlockType `json:"type"`
	// Text is a text block's text, a thinking block's thinking, or a
	// tool_result's content.
	Text string `json:"text,omitempty"`
	// Signature is a thinking block's signature.
	Signature string `json:"signature,omitempty"`
	// Data is a redacted_thinking block's encrypted reasoning.
	Data string `json:"data,omitempty"`
	// ID is a tool_use block's call id, and the id of the call a
	// tool_result answers.
	ID string `json:"id,omitempty"`
	// Name and Input are a tool_use block's tool and arguments.
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// IsError marks a tool_result that reports a failure.
	IsError bool `json:"is_error,omitempty"`
	// Cache is a cache breakpoint as a recorded request writes it. A
	// request in memory never has it set: Request.MarshalJSON writes it from the
	// request's CacheAt and Request.UnmarshalJSON takes it back there.
	Cache bool `json:"cache,omitempty"`
}

// TextBlock is a text block.
func TextBlock(text string) Block { return Block{Type: BlockText, Text: text} }

// ToolUseBlock is call as a tool_use block.
func ToolUseBlock(call ToolCall) Block {
	return Block{Type: BlockToolUse, ID: call.ID, Name: call.Name, Input: call.Arguments}
}

// ToolResultBlock answers the call id with content; isError marks a
// failure the model should read as one.
func ToolResultBlock(id, content string, isError bool) Block {
	return Block{Type: BlockToolResult, ID: id, Text: content, IsError: isError}
}

// Message is one message of a conversation with a model: a role and its
// content as ordered blocks.
type Message struct {
	// Role is system, user, assistant or tool.
	Role   string  `json:"role"`
	Blocks []Block `json:"content"`
}

// TextMessage is a message of one text block.
func TextMessage(role, text string) Message {
	return Message{Role: role, Blocks: []Block{TextBlock(text)}}
}

// AssistantMessage is reply as the assistant message that goes back to the
// model in later rounds: its thinking first, as the provider returned it,
// then its text, then its tool calls.
func AssistantMessage(reply Reply) Message {
	blocks := make([]Block, 0, len(reply.Thinking)+1+len(reply.ToolCalls))
	blocks = append(blocks, reply.Thinking...)
	if reply.Text != "" {
		blocks = append(blocks, TextBlock(reply.Text))
	}
	for _, c := range reply.ToolCalls {
		blocks = append(blocks, ToolUseBlock(c))
	}
	return Message{Role: RoleAssistant, Blocks: blocks}
}

// Text is the text of the message's text blocks, one after another.
func (m Message) Text() string {
	var b strings.Builder
	for _, bl := range m.Blocks {
		if bl.Type == BlockText {
			b.WriteString(bl.Text)
		}
	}
	return b.String()
}

// ToolCalls are the calls of the message's tool_use blocks.
func (m Message) ToolCalls() []ToolCall {
	var calls []ToolCall
	for _, bl := range m.Blocks {
		if bl.Type == BlockToolUse {
			calls = append(calls, ToolCall{ID: bl.ID, Name: bl.Name, Arguments: bl.Input})
		}
	}
	return calls
}

// Thinking is the message's thinking and redacted thinking blocks.
func (m Message) Thinking() []Block {
	var out []Block
	for _, bl := range m.Blocks {
		if bl.Type == BlockThinking || bl.Type == BlockRedactedThinking {
			out = append(out, bl)
		}
	}
	return out
}

// Reasoning is the text of the message's thinking, for providers that
// take reasoning back as one string.
func (m Message) Reasoning() string { return thinkingText(m.Blocks) }

// WithoutThinking is msgs with the thinking and redacted thinking blocks of
// its assistant messages left out. The blocks are copied: msgs is the
// caller's history and stays as it was.
func WithoutThinking(msgs []Message) []Message {
	out := make([]Message, len(msgs))
	for i, m := range msgs {
		out[i] = m
		if m.Role != RoleAssistant {
			continue
		}
		out[i].Blocks = nil
		for _, b := range m.Blocks {
			if b.Type != BlockThinking && b.Type != BlockRedactedThinking {
				out[i].Blocks = append(out[i].Blocks, b)
			}
		}
	}
	return out
}

// thinkingText is the readable text of thinking blocks, for display and
// for providers that take reasoning back as one string.
func thinkingText(blocks []Block) string {
	var b strings.Builder
	for _, bl := range blocks {
		if bl.Type == BlockThinking {
			b.WriteString(bl.Text)
		}
	}
	return b.String()
}

// UnmarshalJSON reads a message as it is written now, and as runs recorded
// before messages were blocks wrote it (content a string, tool_calls,
// tool_call_id and reasoning beside it), so that those runs still replay.
func (m *Message) UnmarshalJSON(data []byte) error {
	var raw struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCalls  []ToolCall      `json:"tool_calls"`
		ToolCallID string          `json:"tool_call_id"`
		Reasoning  string          `json:"reasoning"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	*m = Message{Role: raw.Role}
	if len(raw.Content) > 0 && raw.Content[0] == '[' {
		return json.Unmarshal(raw.Content, &m.Blocks)
	}
	var text string
	if len(raw.Content) > 0 {
		if err := json.Unmarshal(raw.Content, &text); err != nil {
			return err
		}
	}
	if raw.Reasoning != "" {
		m.Blocks = append(m.Blocks, Block{Type: BlockThinking, Text: raw.Reasoning})
	}
	switch {
	case raw.ToolCallID != "":
		m.Blocks = append(m.Blocks, ToolResultBlock(raw.ToolCallID, text, false))
	case text != "":
		m.Blocks = append(m.Blocks, TextBlock(text))
	}
	for _, c := range raw.ToolCalls {
		m.Blocks = append(m.Blocks, ToolUseBlock(c))
	}
	return nil
}

// UnmarshalJSON reads a reply, taking the reasoning string that runs
// recorded before replies kept thinking blocks wrote as one thinking block.
func (r *Reply) UnmarshalJSON(data []byte) error {
	type plain Reply // without this method
	var raw struct {
		plain
		Reasoning string `json:"reasoning"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	*r = Reply(raw.plain)
	if raw.Reasoning != "" && len(r.Thinking) == 0 {
		r.Thinking = []Block{{Type: BlockThinking, Text: raw.Reasoning}}
	}
	return nil
}
