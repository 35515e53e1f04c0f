package plans

// The JSON Schemas of plan and tool files, for editors: yaml-language-server
// completes and checks a file while it is typed. They are made from the
// field lists the decoder checks files against, so that a field the loader
// takes is one the schema offers; what the loader checks beyond the shape
// (templates, references, the catalog) stays the loader's, and a value
// that may be a template ("{{input.limit}}") is left untyped.

// jsonSchemaDraft is the JSON Schema dialect the schemas are written in.
const jsonSchemaDraft = "https://json-schema.org/draft/2020-12/schema"

// fieldDocs describe the fields, for the editor's hover and completion.
var fieldDocs = map[string]string{
	"identifier":       "The plan's name as a tool: plan__<identifier>. Letters, digits, '_' and '-'.",
	"name":             "A short human name.",
	"description":      "What it does, for people and for the models that pick tools.",
	"exemplars":        "Requests this plan answers, for the planner.",
	"requires_servers": "The MCP servers (names under [mcp.*]) the plan's tools come from.",
	"read_only":        "The plan (or tool) changes nothing outside the run; it is never held for approval.",
	"input_schema":     "A JSON Schema of the inputs ({{input.*}}).",
	"steps":            "The steps, run in order.",
	"solver":           "The model call that writes the plan's answer from the steps' results.",
	"output":           "The plan's result, a template over the steps' results; give solver or output, not both.",
	"id":               "The step's id: later templates read its result as {{id}}.",
	"tool_name":        "The tool the step calls (builtin__*, user__*, plan__*, <server>__*) or a control: agent, ask, decide, exit, filter, map, reduce.",
	"input":            "The tool's arguments, templates over earlier results.",
	"reasoning":        "Why the step is there, for people reading the plan.",
	"timeout_secs":     "Bounds the call of an exec or MCP tool, in seconds.",
	"query_to_answer":  "The solver's request, a template.",
	"system_prompt":    "The model's system prompt.",
	"data":             "Values the solver is given beside its request.",
	"over":             "The list to go over, a template.",
	"do":               "The body: a tool call ({tool_name, input}) or a list of steps, run for each item.",
	"concurrency":      "How many items run at once.",
	"initial":          "The accumulator before the first item.",
	"when":             "A gate: exit when it holds.",
	"if":               "A gate: run then when it holds, else otherwise.",
	"where":            "A gate: keep the items it holds for.",
	"infer":            "A yes/no question the judge role answers, in place of a gate.",
	"model":            "A role or named model of the configuration.",
	"then":             "A tool call or a list of steps.",
	"else":             "A tool call or a list of steps.",
	"status":           "How the exit ends the run.",
	"message":          "What the exit says.",
	"prompt":           "The request, a template.",
	"output_schema":    "A JSON Schema of the answer.",
	"tools":            "Tool names or patterns (tracker__*) the agent may call; left out, the whole catalog.",
	"when_unanswered":  "What an ask nobody answers does: fail the run, or take default.",
	"default":          "The answer an unanswered ask takes.",
	"kind":             "How the tool runs: exec (a command), prompt (a model call) or reshape (a template).",
	"command":          "The program an exec tool runs.",
	"args":             "Its arguments, templates over {{input.*}}.",
	"env":              "Environment variables of the command.",
	"cwd":              "The directory the command runs in.",
	"shape":            "The value a reshape tool returns, a template over {{input.*}}.",
	"output_example":   "An example result, for editors and skeletons.",
}

// fieldTypes are the fields whose value has one JSON type wherever it
// appears, template or not.
var fieldTypes = map[string]any{
	"identifier":       map[string]any{"type": "string", "pattern": "^[A-Za-z0-9_-]+$"},
	"name":             map[string]any{"type": "string"},
	"description":      map[string]any{"type": "string"},
	"exemplars":        map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
	"requires_servers": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
	"read_only":        map[string]any{"type": "boolean"},
	"input_schema":     map[string]any{"type": "object"},
	"output_schema":    map[string]any{"type": "object"},
	"id":               map[string]any{"type": "string"},
	"tool_name":        map[string]any{"type": "string"},
	"reasoning":        map[string]any{"type": "string"},
	"timeout_secs":     map[string]any{"type": "integer", "minimum": 1},
	"tools":            map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
	"status":           map[string]any{"enum": []any{"success", "error"}},
	"when_unanswered":  map[string]any{"enum": []any{"fail", "default"}},
	"kind":             map[string]any{"enum": []any{ToolExec, ToolPrompt, ToolReshape}},
	"command":          map[string]any{"type": "string"},
}

// closedObject is the schema of an object of fields and no others, each
// described and typed where fieldDocs and fieldTypes say; extra gives a
// field its own schema instead (a map), or a definition it is ($ref).
func closedObject(fields []string, required []string, extra map[string]any) map[string]any {
	props := map[string]any{}
	for _, f := range fields {
		p := map[string]any{}
		if t, ok := fieldTypes[f].(map[string]any); ok {
			for k, v := range t {
				p[k] = v
			}
		}
		switch e := extra[f].(type) {
		case map[string]any:
			p = e
		case string:
			p = map[string]any{"$ref": e}
		}
		if d := fieldDocs[f]; d != "" {
			p["description"] = d
		}
		props[f] = p
	}
	o := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		o["required"] = required
	}
	return o
}

// defRef points at a definition of the schema.
func defRef(name string) string { return "#/$defs/" + name }

// PlanJSONSchema is the JSON Schema of a plan file of a stepwise project.
func PlanJSONSchema() map[string]any {
	s := closedObject(planFields, []string{"identifier", "name", "description", "steps"}, map[string]any{
		"steps":  map[string]any{"type": "array", "items": map[string]any{"$ref": defRef("step")}},
		"solver": defRef("solver"),
	})
	s["$schema"] = jsonSchemaDraft
	s["title"] = "Stepwise plan"
	s["$defs"] = planDefs()
	return s
}

func planDefs() map[string]any {
	gate := closedObject(gateFields, []string{"value", "op"}, map[string]any{
		"op": map[string]any{"enum": stringsAsAny(GateOps)},
	})
	body := map[string]any{"description": fieldDocs["do"], "oneOf": []any{
		map[string]any{"$ref": defRef("call")},
		map[string]any{"type": "array", "minItems": 1, "items": map[string]any{"$ref": defRef("step")}},
	}}
	inputs := map[string]map[string]any{
		ControlAgent: closedObject(agentFields, []string{"prompt", "output_schema"}, map[string]any{
			"validation_exhaustion": closedObject(exhaustionFields, nil, map[string]any{"mode": map[string]any{"enum": []any{"fail", "default"}}}),
			"structured_output":     map[string]any{"const": "strict"},
		}),
		ControlAsk:    closedObject(askFields, []string{"prompt", "output_schema"}, nil),
		ControlExit:   closedObject(exitFields, []string{"status"}, map[string]any{"when": defRef("gate")}),
		ControlDecide: closedObject(decideFields, []string{"then"}, map[string]any{"if": defRef("gate"), "then": defRef("body"), "else": defRef("body")}),
		ControlFilter: closedObject(filterFields, []string{"over"}, map[string]any{"where": defRef("gate")}),
		ControlMap:    closedObject(mapFields, []string{"over", "do"}, map[string]any{"do": defRef("body")}),
		ControlReduce: closedObject(reduceFields, []string{"over", "do"}, map[string]any{"do": defRef("body")}),
	}
	// The input's shape follows the tool: a control's own fields, or a
	// tool's arguments (an object the catalog checks).
	var byTool []any
	for _, name := range []string{ControlAgent, ControlAsk, ControlDecide, ControlExit, ControlFilter, ControlMap, ControlReduce} {
		byTool = append(byTool, map[string]any{
			"if":   map[string]any{"properties": map[string]any{"tool_name": map[string]any{"const": name}}, "required": []any{"tool_name"}},
			"then": map[string]any{"properties": map[string]any{"input": map[string]any{"$ref": defRef(name + "_input")}}},
		})
	}
	step := closedObject(stepFields, []string{"id", "tool_name", "input"}, map[string]any{"input": map[string]any{"type": "object", "description": fieldDocs["input"]}})
	step["allOf"] = byTool
	call := closedObject(callFields, []string{"tool_name", "input"}, map[string]any{"input": map[string]any{"type": "object", "description": fieldDocs["input"]}})
	call["allOf"] = byTool
	defs := map[string]any{
		"step":   step,
		"call":   call,
		"body":   body,
		"gate":   gate,
		"solver": closedObject(solverFields, nil, nil),
	}
	for name, in := range inputs {
		defs[name+"_input"] = in
	}
	return defs
}

// ToolFileJSONSchema is the JSON Schema of a user tool file: the fields
// every kind takes, and those of its kind.
func ToolFileJSONSchema() map[string]any {
	s := closedObject(toolFileAnyKind, []string{"name", "description", "kind"}, map[string]any{
		"name": map[string]any{"type": "string", "pattern": "^[A-Za-z0-9_-]+$"},
	})
	s["$schema"] = jsonSchemaDraft
	s["title"] = "Stepwise tool"
	var byKind []any
	for _, kind := range []string{ToolExec, ToolPrompt, ToolReshape} {
		allowed := map[string]any{}
		for _, f := range append(append([]string{}, toolFileCommon...), toolFileByKind[kind]...) {
			allowed[f] = true
		}
		then := map[string]any{"propertyNames": map[string]any{"enum": keysAsAny(allowed)}}
		switch kind {
		case ToolExec:
			then["required"] = []any{"command"}
		case ToolPrompt:
			then["required"] = []any{"prompt"}
		}
		byKind = append(byKind, map[string]any{
			"if":   map[string]any{"properties": map[string]any{"kind": map[string]any{"const": kind}}, "required": []any{"kind"}},
			"then": then,
		})
	}
	s["allOf"] = byKind
	return s
}

func stringsAsAny(list []string) []any {
	out := make([]any, len(list))
	for i, s := range list {
		out[i] = s
	}
	return out
}

// keysAsAny lists a set of tool file fields in the order the loader lists
// them.
func keysAsAny(set map[string]any) []any {
	var out []any
	for _, f := range toolFileAnyKind {
		if set[f] != nil {
			out = append(out, f)
		}
	}
	return out
}
