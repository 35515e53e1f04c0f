package debugger

import (
	"encoding/json"
	"strings"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/chat"
	"github.com/stepwise-dev/stepwise/engine/path"
	"github.com/stepwise-dev/stepwise/engine/tools"
	"github.com/stepwise-dev/stepwise/plans"
)

// expectation is what a value injected or replaced at a stop must look
// like, and a value to start editing from.
type expectation struct {
	schema  *plans.Schema
	prefill any
}

// expect works out the schema that applies at a stop (the answer schema of
// an ask, an agent's output_schema at its repair, the declared output
// schema of the tool a step or call runs) and the value to prefill an
// editor with: the tool's declared example, else what the stop observed,
// else a skeleton built from the schema.
func expect(st *engine.Stop, catalog *tools.Catalog) expectation {
	var e expectation
	var example any
	switch {
	case st.Kind == engine.StopAsk && st.Ask != nil:
		e.schema = st.Ask.Schema
		example = st.Ask.Default
	case st.Kind == engine.StopRound && st.Step != nil:
		// Before the model is called, the value given is the round's
		// reply: as at an answering reply, an answer in the schema.
		if a, ok := st.Step.Control.(*plans.AgentInput); ok {
			e.schema = a.OutputSchema
		}
	case st.Kind == engine.StopReply && st.Step != nil:
		// A reply that answers (no tool call, its text the answer as
		// JSON) is edited as the answer, in the agent's output_schema:
		// a value without text or tool_calls replaces the reply with
		// itself as the answer (engine.ReplyFrom), so nobody edits JSON
		// escaped in a string.
		a, isAgent := st.Step.Control.(*plans.AgentInput)
		reply, isReply := st.Output.(chat.Reply)
		var answer map[string]any
		if isAgent && isReply && len(reply.ToolCalls) == 0 && json.Unmarshal([]byte(reply.Text), &answer) == nil && answer != nil {
			e.schema, example = a.OutputSchema, answer
		}
	case st.Kind == engine.StopRepair && st.Step != nil:
		if a, ok := st.Step.Control.(*plans.AgentInput); ok {
			e.schema = a.OutputSchema
		}
	case (st.Kind == engine.StopStep || st.Kind == engine.StopResult || st.Kind == engine.StopError) && st.Tool == "agent" && st.Step != nil:
		// An agent step's result is {output, iterations, tools_called,
		// final}, output in its schema; readers may read any of them, so
		// a value in its place has them all.
		if a, ok := st.Step.Control.(*plans.AgentInput); ok && a.OutputSchema != nil {
			e.schema = resultObject([]any{"output", "iterations", "tools_called", "final"}, map[string]any{
				"output":       a.OutputSchema.Raw,
				"iterations":   map[string]any{"type": "integer", "minimum": 0},
				"tools_called": map[string]any{"type": "array"},
				"final":        map[string]any{"type": "boolean"},
			})
		}
	case (st.Kind == engine.StopStep || st.Kind == engine.StopResult || st.Kind == engine.StopError) && st.Tool == plans.ControlAsk && st.Step != nil:
		// An ask step's result is {answer, answered, reason}, the answer
		// in its output_schema (engine's runAsk).
		if a, ok := st.Step.Control.(*plans.AskInput); ok && a.OutputSchema != nil {
			e.schema = resultObject([]any{"answer", "answered"}, map[string]any{
				"answer":   a.OutputSchema.Raw,
				"answered": map[string]any{"type": "boolean"},
				"reason":   map[string]any{"type": "string"},
			})
		}
	case st.Kind == engine.StopStep || st.Kind == engine.StopTool || st.Kind == engine.StopResult || st.Kind == engine.StopError:
		if catalog != nil && !plans.IsControl(st.Tool) {
			if info, ok := catalog.Tool(st.Tool); ok && info.OutputSchema != nil {
				if compiled, err := plans.CompileSchema(info.OutputSchema); err == nil {
					e.schema = &plans.Schema{Raw: info.OutputSchema, Compiled: compiled}
				}
				example = info.OutputExample
			}
		}
	}
	switch {
	case example != nil:
		e.prefill = example
	case st.Output != nil:
		e.prefill = st.Output
	case e.schema != nil:
		e.prefill = skeleton(e.schema.Raw)
	}
	return e
}

// resultObject is the schema of a control step's result: an object with
// the required properties, each in its schema; nil if it does not
// compile.
func resultObject(required []any, properties map[string]any) *plans.Schema {
	raw := map[string]any{"type": "object", "required": required, "properties": properties}
	compiled, err := plans.CompileSchema(raw)
	if err != nil {
		return nil
	}
	return &plans.Schema{Raw: raw, Compiled: compiled}
}

// skeleton builds the smallest value a schema describes: each required
// property of an object with a value of its type, the first enum value, ""
// for a string, 0 for a number, false, [] and null.
func skeleton(schema any) any {
	m, ok := schema.(map[string]any)
	if !ok {
		return nil
	}
	if enum, ok := m["enum"].([]any); ok && len(enum) > 0 {
		return enum[0]
	}
	if c, ok := m["const"]; ok {
		return c
	}
	t, _ := m["type"].(string)
	if list, ok := m["type"].([]any); ok && len(list) > 0 {
		t, _ = list[0].(string)
	}
	if t == "" && m["properties"] != nil {
		t = "object"
	}
	switch t {
	case "object":
		out := map[string]any{}
		props, _ := m["properties"].(map[string]any)
		required, _ := m["required"].([]any)
		for _, r := range required {
			name, _ := r.(string)
			out[name] = skeleton(props[name])
		}
		return out
	case "array":
		return []any{}
	case "string":
		return ""
	case "integer", "number":
		return 0
	case "boolean":
		return false
	}
	return nil
}

// check reports how a value fails the expectation's schema, or "".
func (e expectation) check(v any) string {
	if e.schema == nil {
		return ""
	}
	var msgs []string
	for _, viol := range e.schema.Check(v) {
		msgs = append(msgs, viol.String())
	}
	return strings.Join(msgs, "; ")
}

// ResultSchema is the schema a value given as the result of the step at
// run-time path p of plan must fit (a fork's --set, the workbench's fork
// editor), as at the step's result stop: an agent step's whole result, a
// tool's declared output schema; nil when none applies, or when no step
// of plan itself is at p.
func ResultSchema(plan *plans.Plan, catalog *tools.Catalog, p string) any {
	static := path.Static(p)
	var step *plans.Step
	plans.WalkSteps(plan, func(s *plans.Step) {
		if s.Path == static {
			step = s
		}
	})
	if step == nil {
		return nil
	}
	e := expect(&engine.Stop{Kind: engine.StopResult, Path: p, Tool: step.ToolName.Value, Step: step}, catalog)
	if e.schema == nil {
		return nil
	}
	return e.schema.Raw
}
