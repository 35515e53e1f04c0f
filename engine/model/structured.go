package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/stepwise-dev/stepwise/engine/chat"
	"github.com/stepwise-dev/stepwise/plans"
)

// CallRecord records one model call made by a structured call, for the
// caller's usage ledger and events.
type CallRecord struct {
	// Name is the role or named model the call was made to.
	Name string
	// Role is the role the call was made in (repair for the repair pass).
	Role string
	// Repair marks the repair pass.
	Repair  bool
	Request chat.Request
	// Reply is zero when the call failed.
	Reply   chat.Reply
	Err     error
	Elapsed time.Duration
}

// StructuredError is an answer that still does not match its schema after
// the repair pass. The caller decides what that costs: an agent round sends
// the violations back to the model, builtin__infer fails the step.
type StructuredError struct {
	// Answer is the last answer's text, as the model wrote it.
	Answer string
	// Violations say what is wrong with it: the parse error, or one schema
	// violation each ("/severity: value must be one of ...").
	Violations []string
	// Repaired says whether the repair pass was made.
	Repaired bool
}

// Error says the answer failed and lists why.
func (e *StructuredError) Error() string {
	msg := "the answer does not match the output schema"
	if e.Repaired {
		msg += " after one repair pass"
	}
	return msg + ": " + strings.Join(e.Violations, "; ")
}

// Hooks are what a caller of Structured hears and decides along the way.
// Every field may be nil.
type Hooks struct {
	// OnCall hears of every model call, failed ones included.
	OnCall func(CallRecord)
	// OnDelta is passed to each call.
	OnDelta func(chat.Delta)
	// BeforeRepair is told of a refused answer before the repair pass,
	// with what is wrong with it. It may let the pass run (replaced
	// false), supply the repaired answer itself (replaced true; the value
	// is checked against the schema like a model's), or stop the call
	// with an error.
	BeforeRepair func(answer string, problems []string) (replacement any, replaced bool, err error)
}

// answerFormatName names the response format when the caller gives none.
const answerFormatName = "answer"

// Structured makes the call every schema-bound site shares (builtin__infer,
// prompt tools, infer gates, the solver): it asks for JSON matching schema,
// parses and validates the answer, and gives an answer that fails one
// repair pass in the repair role. It returns the valid value as plain JSON
// data (numbers as json.Number), or a *StructuredError.
//
// A nil schema is plain-text mode: the reply's text comes back as
// {"text": ...}, with no parsing and no repair.
//
// hooks.OnCall hears of every call before Structured returns.
func (m *Models) Structured(ctx context.Context, name string, req chat.Request, schema *plans.Schema, hooks Hooks) (any, error) {
	if schema == nil {
		reply, err := m.record(ctx, name, req, false, hooks)
		if err != nil {
			return nil, err
		}
		return map[string]any{"text": reply.Text}, nil
	}
	format := chat.ResponseFormat{Name: answerFormatName}
	if req.Format != nil && req.Format.Name != "" {
		format.Name = req.Format.Name
	}
	// Strict mode is the provider's business once eligibility is known;
	// here the schema is a request, and validation is the guarantee.
	format.Schema = schema.Raw
	req.Format = &format

	reply, err := m.record(ctx, name, req, false, hooks)
	if err != nil {
		return nil, err
	}
	value, problems := CheckAnswer(reply.Text, schema)
	if problems == nil {
		return value, nil
	}
	return m.Repair(ctx, req, schema, reply.Text, problems, hooks)
}

// Repair gives a refused answer its one repair pass in the repair role:
// hooks.BeforeRepair may supply the repaired answer instead, or stop it.
// refused is the request that got the answer; the pass keeps its step,
// response format name and timeout. It returns the repaired value, or a
// *StructuredError saying what is still wrong.
func (m *Models) Repair(ctx context.Context, refused chat.Request, schema *plans.Schema, answer string, problems []string, hooks Hooks) (any, error) {
	if hooks.BeforeRepair != nil {
		replacement, replaced, err := hooks.BeforeRepair(answer, problems)
		if err != nil {
			return nil, err
		}
		if replaced {
			if vs := schema.Check(replacement); len(vs) > 0 {
				return nil, &StructuredError{Answer: answer, Violations: violationStrings(vs), Repaired: true}
			}
			return replacement, nil
		}
	}
	format := chat.ResponseFormat{Name: answerFormatName, Schema: schema.Raw}
	if refused.Format != nil && refused.Format.Name != "" {
		format.Name = refused.Format.Name
	}
	repair := chat.Request{
		Step:     refused.Step,
		Role:     RoleRepair,
		Messages: repairMessages(schema, answer, problems),
		Format:   &format,
		Timeout:  refused.Timeout,
	}
	reply, err := m.record(ctx, RoleRepair, repair, true, hooks)
	if err != nil {
		return nil, err
	}
	value, problems := CheckAnswer(reply.Text, schema)
	if problems == nil {
		return value, nil
	}
	return nil, &StructuredError{Answer: reply.Text, Violations: problems, Repaired: true}
}

// record makes one call and tells onCall about it.
func (m *Models) record(ctx context.Context, name string, req chat.Request, repair bool, hooks Hooks) (chat.Reply, error) {
	name, req = callDefaults(name, req)
	start := time.Now()
	reply, err := m.Call(ctx, name, req, hooks.OnDelta)
	if hooks.OnCall != nil {
		hooks.OnCall(CallRecord{Name: name, Role: req.Role, Repair: repair, Request: req, Reply: reply, Err: err, Elapsed: time.Since(start)})
	}
	return reply, err
}

// CheckAnswer parses an answer and validates it. problems is nil for a
// valid answer and otherwise says what is wrong, one item a line.
func CheckAnswer(text string, schema *plans.Schema) (value any, problems []string) {
	value, err := ParseAnswer(text)
	if err != nil {
		return nil, []string{err.Error()}
	}
	vs := schema.Check(value)
	if len(vs) == 0 {
		return value, nil
	}
	return nil, violationStrings(vs)
}

// violationStrings says what is wrong, one item a violation. The validator
// reports in no fixed order; sorted, the repair prompt is the same bytes
// for the same answer, and messages do not flicker.
func violationStrings(vs []plans.Violation) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.String()
	}
	slices.Sort(out)
	return out
}

// ParseAnswer reads a model's answer as one JSON value, numbers as
// json.Number. It tolerates what models commonly wrap JSON in, whitespace
// around it and a single ```json fenced block, and nothing else: prose
// around the JSON is a refusal the repair pass should fix, not something to
// guess through.
func ParseAnswer(text string) (any, error) {
	s := strings.TrimSpace(text)
	if inner, ok := strings.CutPrefix(s, "```json"); ok {
		if body, ok := strings.CutSuffix(inner, "```"); ok && !strings.Contains(body, "```") {
			s = strings.TrimSpace(body)
		}
	}
	if s == "" {
		return nil, errors.New("the answer is empty; expected a JSON value")
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("the answer is not JSON: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("the answer is not JSON: more text follows the JSON value")
	}
	return v, nil
}

// repairSystemPrompt tells the repair model its one job. It is constant so
// that repair calls share a cacheable prefix.
const repairSystemPrompt = "You repair answers that were meant to be JSON matching a JSON Schema. " +
	"Reply with the corrected JSON value only: no explanation and no code fence. " +
	"Keep what the answer says; change only what the schema requires."

// repairMessages builds the repair pass's conversation: the schema, the
// refused answer and what is wrong with it.
func repairMessages(schema *plans.Schema, answer string, problems []string) []chat.Message {
	var b bytes.Buffer
	b.WriteString("The schema:\n")
	raw, err := json.MarshalIndent(schema.Raw, "", "  ")
	if err != nil {
		raw = fmt.Appendf(nil, "%v", schema.Raw)
	}
	b.Write(raw)
	b.WriteString("\n\nThe answer:\n")
	b.WriteString(answer)
	b.WriteString("\n\nWhat is wrong with it:\n")
	for _, p := range problems {
		b.WriteString("- ")
		b.WriteString(p)
		b.WriteByte('\n')
	}
	return []chat.Message{chat.TextMessage(chat.RoleSystem, repairSystemPrompt), chat.TextMessage(chat.RoleUser, b.String())}
}

// verdictSchema is the forced schema of an infer gate's verdict.
var verdictSchema = sync.OnceValues(func() (*plans.Schema, error) {
	raw := map[string]any{
		"type":                 "object",
		"required":             []any{"verdict", "reason"},
		"additionalProperties": false,
		"properties": map[string]any{
			"verdict": map[string]any{"type": "boolean"},
			"reason":  map[string]any{"type": "string"},
		},
	}
	c, err := plans.CompileSchema(raw)
	if err != nil {
		return nil, err
	}
	return &plans.Schema{Raw: raw, Compiled: c}, nil
})

// Verdict asks for an infer gate's yes or no, with the model's reason,
// through Structured with the verdict schema forced. An empty name, and an
// empty req.Role, mean the judge role.
func (m *Models) Verdict(ctx context.Context, name string, req chat.Request, hooks Hooks) (verdict bool, reason string, err error) {
	if name == "" {
		name = RoleJudge
	}
	if req.Role == "" {
		req.Role = RoleJudge
	}
	schema, err := verdictSchema()
	if err != nil {
		return false, "", fmt.Errorf("verdict schema: %w", err)
	}
	v, err := m.Structured(ctx, name, req, schema, hooks)
	if err != nil {
		return false, "", err
	}
	// The schema guarantees the shape; the checks only keep a broken
	// schema from panicking.
	obj, _ := v.(map[string]any)
	verdict, ok1 := obj["verdict"].(bool)
	reason, ok2 := obj["reason"].(string)
	if !ok1 || !ok2 {
		return false, "", fmt.Errorf("verdict: unexpected answer %v", v)
	}
	return verdict, reason, nil
}
