package tools

import "github.com/stepwise-dev/stepwise/plans"

// builtinTools are the always-on packs: llm (builtin__infer) and data
// (builtin__reshape). Their behaviour lives with the engine; these are the
// entries the catalog lists and validation resolves against.
func builtinTools() []plans.ToolInfo {
	readOnly := true
	return []plans.ToolInfo{
		{
			Name:   "builtin__infer",
			Source: "builtin",
			Description: "Generic LLM inference: run one self-contained instruction and return its answer.\n" +
				"Plain text as {\"text\": ...} by default; with output_schema, JSON validated against it (one repair pass). " +
				"Interpolate the data to analyse into the instruction with templates; inside a map body, interpolate {{item}} per call.",
			ReadOnly: &readOnly,
			InputSchema: map[string]any{
				"type":     "object",
				"required": []any{"instruction"},
				"properties": map[string]any{
					"instruction":   map[string]any{"type": "string", "description": "complete, self-contained instruction"},
					"output_schema": map[string]any{"type": "object", "description": "an object JSON Schema for the result; omit for {\"text\": ...}"},
					"model":         map[string]any{"type": "string", "description": "a named model or role to run on; omit for the chat role"},
				},
				// Open, as graph's is: a call may carry more inputs (data
				// the instruction interpolates, say). Only the rendered
				// instruction reaches the model, in graph as here.
			},
		},
		{
			Name:   "builtin__reshape",
			Source: "builtin",
			Description: "Build a value in a target JSON shape from the step's data.\n" +
				"Keys are literal; leaf strings are templates over the step's data, rendered once by the plan with typed splice. Moves data (rename, pick, nest, flatten); it computes nothing.",
			ReadOnly: &readOnly,
			InputSchema: map[string]any{
				"type":     "object",
				"required": []any{"shape"},
				"properties": map[string]any{
					"shape": map[string]any{"type": "object", "description": "the output shape; each leaf string is a template"},
				},
				"additionalProperties": false,
			},
		},
	}
}

// ControlTools describes the seven control steps the way tools are
// described, under the (control) source: they are not tools and cannot be
// called, but writing a step needs their input grammar as much as a tool's.
func ControlTools() []plans.ToolInfo {
	gate := map[string]any{
		"type":     "object",
		"required": []any{"value", "op"},
		"properties": map[string]any{
			"value": map[string]any{"description": "usually a template; typed splice keeps numbers numeric"},
			"op":    map[string]any{"enum": []any{"eq", "ne", "gt", "lt", "gte", "lte", "empty", "not_empty", "contains"}},
			"to":    map[string]any{"description": "the other side; omitted for empty and not_empty"},
		},
	}
	body := map[string]any{"description": "a single tool call {tool_name, input} without an id, or a list of steps"}
	str := func(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }
	whole := func(desc string) map[string]any {
		return map[string]any{"type": "integer", "minimum": 1, "description": desc}
	}
	obj := func(required []any, props map[string]any) map[string]any {
		return map[string]any{"type": "object", "required": required, "properties": props}
	}
	control := func(name, desc string, schema map[string]any) plans.ToolInfo {
		return plans.ToolInfo{Name: name, Source: "(control)", Description: desc, InputSchema: schema}
	}
	return []plans.ToolInfo{
		control(plans.ControlExit, "End the plan early with a success or error state when a gate holds (unconditionally when it has none).",
			obj([]any{"status"}, map[string]any{
				"when": gate, "infer": str("a yes/no question for the judge role"), "model": str("model for the infer verdict"),
				"status":  map[string]any{"enum": []any{"success", "error"}},
				"message": str("the plan's answer or error message; may use templates"),
				"output":  map[string]any{"type": "object", "description": "template map emitted as the plan's output"},
			})),
		control(plans.ControlAsk, "Put a question to the person running the plan; the answer conforms to a flat output_schema.",
			obj([]any{"prompt", "output_schema"}, map[string]any{
				"prompt": str("the question"), "output_schema": map[string]any{"type": "object", "description": "flat object of primitive properties"},
				"when_unanswered": map[string]any{"enum": []any{"fail", "default"}}, "default": map[string]any{"description": "the answer when nobody can be asked"},
			})),
		control(plans.ControlAgent, "Run a bounded tool-calling loop that returns JSON conforming to output_schema, or final: false.",
			obj([]any{"prompt", "output_schema"}, map[string]any{
				"prompt": str("the task"), "output_schema": map[string]any{"type": "object"},
				"tools":          map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "tool names or * patterns; omit for the whole catalog"},
				"max_iterations": whole("inference rounds, the answer round included; default 8"),
				"model":          str("model role or named model; default chat"), "system_prompt": str("appended to the built-in system prompt"),
				"validation_exhaustion": map[string]any{"type": "object", "description": "threshold (default 6), mode fail|default, default_output"},
				"structured_output":     map[string]any{"enum": []any{"strict"}},
				"llm_timeout_seconds":   whole("per model request; default 600"),
				"max_tool_calls":        whole("tool calls in one run of the step; default 20"),
				"max_fan_out":           whole("tool calls that start plan runs"),
				"tool_timeout":          whole("seconds one tool call may take; default 30"),
			})),
		control(plans.ControlDecide, "Fork into the then or else branch on a gate, then rejoin the plan.",
			obj([]any{"then"}, map[string]any{"if": gate, "infer": str("a yes/no question for the judge role"), "model": str("model for the infer verdict"), "then": body, "else": body})),
		control(plans.ControlFilter, "Partition a list by a per-item gate into items and dropped.",
			obj([]any{"over"}, map[string]any{"over": str("a template rendering to an array"), "where": gate, "infer": str("a yes/no question per item"), "model": str("model for the infer verdicts"), "concurrency": whole("infer verdicts in flight; default 1")})),
		control(plans.ControlMap, "Run a body once per item of a list; results come back in input order.",
			obj([]any{"over", "do"}, map[string]any{"over": str("a template rendering to an array"), "do": body, "concurrency": whole("items in flight; default 1")})),
		control(plans.ControlReduce, "Fold a list into one value: the body runs per item with {{accumulator}}.",
			obj([]any{"over", "do"}, map[string]any{"over": str("a template rendering to an array"), "do": body, "initial": map[string]any{"description": "starting accumulator; default null"}})),
	}
}
