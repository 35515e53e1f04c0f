package plans

import (
	"fmt"
	"sort"
	"strings"

	"github.com/stepwise-dev/stepwise/plans/strict"
	"github.com/stepwise-dev/stepwise/plans/yamlpos"
)

var (
	agentFields = []string{"prompt", "output_schema", "tools", "max_iterations", "model", "system_prompt",
		"validation_exhaustion", "structured_output", "llm_timeout_seconds", "max_tool_calls", "max_fan_out", "tool_timeout"}
	exhaustionFields = []string{"threshold", "mode", "default_output"}
	askFields        = []string{"prompt", "output_schema", "when_unanswered", "default"}
)

// agent decodes and checks an agent step's input: every rule seeds/000 says
// is checked at load time, and the rules and types of the seeds/002
// controls.
func (d *decoder) agent(in *yamlpos.Node, s *Step) *AgentInput {
	o, ok := d.object(in, "the agent input", s.Path, agentFields)
	if !ok {
		return nil
	}
	a := &AgentInput{}
	if o.require("prompt") {
		a.Prompt = o.stringValue("prompt")
	}
	if o.require("output_schema") {
		a.OutputSchema = d.objectSchema(&o, "output_schema")
	}
	if n := o.get("tools"); n != nil {
		a.Tools = &ToolPatterns{Pos: d.pos(n)}
		a.Tools.Patterns, _ = o.stringList("tools")
		if n.Kind == yamlpos.SequenceNode && len(n.Content()) == 0 {
			d.r.problem(CodeInvalidValue, d.pos(n), s.Path, "'tools' is empty: [] is not \"no tools\"; omit 'tools' to give the agent the whole catalog, or list the tools it needs")
		}
		for _, p := range a.Tools.Patterns {
			if code, msg := patternProblem(p.Value); code != "" {
				d.r.problem(code, p.Pos, s.Path, "%s", msg)
			}
		}

	}
	a.MaxIterations = o.wholeNumber("max_iterations")
	a.Model = o.str("model")
	a.SystemPrompt = o.stringValue("system_prompt")
	a.LLMTimeoutSeconds = o.wholeNumber("llm_timeout_seconds")
	a.MaxToolCalls = o.wholeNumber("max_tool_calls")
	a.MaxFanOut = o.wholeNumber("max_fan_out")
	a.ToolTimeout = o.wholeNumber("tool_timeout")
	if n := o.get("validation_exhaustion"); n != nil {
		a.ValidationExhaustion = d.exhaustion(n, s, a)
	}
	a.StructuredOutput = o.str("structured_output")
	if f := a.StructuredOutput; f.Set && f.Value != "strict" {
		d.r.problem(CodeInvalidValue, f.Pos, s.Path, "'structured_output' has one value, strict, not '%s'; omit the field to leave strict mode off", f.Value)
	} else if f.Set {
		d.strictAtLoad(s, a)
	}
	if a.MaxIterations.Set && a.MaxIterations.Value == 1 {
		for _, f := range []struct {
			name string
			set  bool
			pos  Pos
		}{
			{"tools", a.Tools != nil, o.keyPos("tools")},
			{"max_tool_calls", a.MaxToolCalls.Set, a.MaxToolCalls.Pos},
			{"max_fan_out", a.MaxFanOut.Set, a.MaxFanOut.Pos},
			{"tool_timeout", a.ToolTimeout.Set, a.ToolTimeout.Pos},
		} {
			if f.set {
				d.r.note(CodeNoEffect, f.pos, s.Path, "'%s' has no effect with max_iterations: 1: the only round is the answer round, which has no tools", f.name)
			}
		}
	}
	return a
}

// patternProblem says what is wrong with an agent tools entry in itself,
// before any catalog is consulted: the code and message of the problem, or
// "" when the entry is well formed. The catalog layer resolves only the
// entries this accepts.
func patternProblem(p string) (code, msg string) {
	switch {
	case p == PlannerTool:
		return CodeUnavailableToAgent, "plan_and_execute is never available inside an agent: nested planning loops have no cost boundary; compose with plan__* tools instead"
	case IsControl(p):
		return CodeUnavailableToAgent, fmt.Sprintf("'%s' is a control step, not a tool an agent can call", p)
	case !madeOf(p, toolPatternByte):
		return CodeInvalidValue, fmt.Sprintf("'tools' pattern '%s' may hold only letters, digits, '_', '-', '.' and the wildcard '*'", p)
	case strings.HasPrefix(p, "workbench__"):
		return CodeWorkbenchTool, fmt.Sprintf("'%s' names workbench tools, which exist only inside the workbench's chat agent, never in a plan", p)
	case !strings.Contains(p, "__") && !strings.Contains(p, "*"):
		return CodeMalformedToolName, fmt.Sprintf("'tools' entry '%s' is not a tool name: catalog tools are namespaced (server__tool, user__name, builtin__name, plan__identifier); a pattern uses '*', as in '%s__*'", p, p)
	}
	return "", ""
}

// objectSchema decodes a schema that must describe an object, as agent and
// ask output schemas must.
func (d *decoder) objectSchema(o *object, name string) *Schema {
	sc := o.schema(name)
	if sc == nil || !sc.compiles() {
		return sc
	}
	typed, implied := objectTyped(sc.Raw)
	switch {
	case implied:
		d.r.note(CodeInvalidSchema, sc.Pos, o.path, "'%s' declares properties without 'type: object'; it is read as an object, but write the type out: it is also what the provider is held to", name)
	case !typed:
		d.r.problem(CodeInvalidSchema, sc.Pos, o.path, "'%s' must be an object-typed JSON Schema (type: object)", name)
	}
	return sc
}

// exhaustion decodes validation_exhaustion with the rules of seeds/002,
// whose messages it keeps.
func (d *decoder) exhaustion(n *yamlpos.Node, s *Step, a *AgentInput) *ValidationExhaustion {
	o, ok := d.object(n, "validation_exhaustion", s.Path, exhaustionFields)
	if !ok {
		return nil
	}
	e := &ValidationExhaustion{Pos: d.pos(n)}
	e.Threshold = o.wholeNumber("threshold")
	e.Mode = o.str("mode")
	if e.Mode.Set && e.Mode.Value != "fail" && e.Mode.Value != "default" {
		d.r.problem(CodeInvalidValue, e.Mode.Pos, s.Path, "'validation_exhaustion.mode' must be fail or default, not '%s'", e.Mode.Value)
	}
	if dn := o.get("default_output"); dn != nil {
		e.DefaultOutput = d.value(dn, s.Path, false)
	}
	isDefault := e.Mode.Value == "default"
	switch {
	case isDefault && e.DefaultOutput == nil:
		d.r.problem(CodeMissingField, e.Mode.Pos, s.Path, "'validation_exhaustion.mode: default' requires 'default_output' (nothing to substitute on exhaustion)")
	case e.DefaultOutput != nil && !isDefault:
		d.r.note(CodeIgnoredField, e.DefaultOutput.Pos(), s.Path, "'validation_exhaustion.default_output' is ignored without 'mode: default'")
	}
	if e.DefaultOutput != nil && isDefault {
		switch sc := a.OutputSchema; {
		case sc == nil:
			d.r.problem(CodeMissingField, e.DefaultOutput.Pos(), s.Path, "'validation_exhaustion.default_output' requires the step to declare 'output_schema' (an undeclared schema makes the default unvalidatable)")
		case sc.compiles():
			if vs := sc.Check(e.DefaultOutput.Literal()); len(vs) > 0 {
				d.r.problem(CodeDefaultMismatch, e.DefaultOutput.At(vs[0].Location).Pos(), s.Path, "'validation_exhaustion.default_output' does not validate against the step's own 'output_schema': %s", joinViolations(vs))
			}
		}
	}
	return e
}

// strictAtLoad applies Anthropic's rules to a step asking for strict output,
// as seeds/002 prescribes: a refusal is a problem, a caveat a note, each
// under the code the rules give it (missing_additional_properties,
// unenforced_keyword, ...), so a script can tell them apart, and each at
// the part of the schema it is about (the schema's root and the step as a
// whole are placed at 'structured_output' itself).
func (d *decoder) strictAtLoad(s *Step, a *AgentInput) {
	var schema any
	pos := a.StructuredOutput.Pos
	if a.OutputSchema != nil {
		schema = a.OutputSchema.Raw
	}
	v := strict.Check(schema, strict.Anthropic, strict.Context{HasTools: a.Iterations() > 1})
	for _, n := range v.Notes {
		at := pos
		if a.OutputSchema != nil && n.Location != "" && n.Location != "the schema root" {
			at = a.OutputSchema.Value.At("/" + strings.ReplaceAll(n.Location, ".", "/")).Pos()
		}
		if n.Refusal {
			d.r.problem(string(n.Code), at, s.Path, "'structured_output: strict' is not eligible for this step's schema — %s", n.Message)
		} else {
			d.r.note(string(n.Code), at, s.Path, "structured_output caveat — %s", n.Message)
		}
	}
}

// ask decodes and checks an ask step's input.
func (d *decoder) ask(in *yamlpos.Node, s *Step) *AskInput {
	o, ok := d.object(in, "the ask input", s.Path, askFields)
	if !ok {
		return nil
	}
	a := &AskInput{}
	if o.require("prompt") {
		a.Prompt = o.stringValue("prompt")
	}
	if o.require("output_schema") {
		a.OutputSchema = d.objectSchema(&o, "output_schema")
		if a.OutputSchema != nil && a.OutputSchema.compiles() {
			d.flatAnswerSchema(a.OutputSchema, s.Path)
		}
	}
	a.WhenUnanswered = o.str("when_unanswered")
	if w := a.WhenUnanswered; w.Set && w.Value != "fail" && w.Value != "default" {
		d.r.problem(CodeInvalidValue, w.Pos, s.Path, "'when_unanswered' must be fail or default, not '%s'", w.Value)
	}
	a.Default = o.value("default")
	isDefault := a.WhenUnanswered.Value == "default"
	switch {
	case isDefault && a.Default == nil:
		d.r.problem(CodeMissingField, a.WhenUnanswered.Pos, s.Path, "'when_unanswered: default' requires 'default', the answer used when nobody can be asked")
	case a.Default != nil && !isDefault:
		d.r.note(CodeIgnoredField, a.Default.Pos(), s.Path, "'default' is ignored without 'when_unanswered: default'")
	}
	// A default with templates is checked after rendering, at run time: its
	// types are not known until the templates resolve.
	if a.Default != nil && !a.Default.HasTemplates() && a.OutputSchema != nil && a.OutputSchema.compiles() {
		if vs := a.OutputSchema.Check(a.Default.Literal()); len(vs) > 0 {
			d.r.problem(CodeDefaultMismatch, a.Default.At(vs[0].Location).Pos(), s.Path, "'default' does not conform to 'output_schema': %s", joinViolations(vs))
		}
	}
	return a
}

// flatAnswerSchema checks that an ask schema is a flat form: every property
// a string, number, integer, boolean or enum, the constraint every host
// (terminal, workbench, MCP elicitation) can ask for.
func (d *decoder) flatAnswerSchema(sc *Schema, path string) {
	root, _ := sc.Raw.(map[string]any)
	if _, ok := root["patternProperties"]; ok {
		d.r.problem(CodeInvalidSchema, sc.Pos, path, "ask answers are flat forms with named properties: 'patternProperties' asks for fields nobody can be prompted for; list the properties")
	}
	if extra, ok := root["additionalProperties"].(map[string]any); ok {
		if why := nonPrimitive(extra); why != "" {
			d.r.problem(CodeInvalidSchema, sc.Pos, path, "ask answers are flat forms: 'additionalProperties' %s; use string, number, integer, boolean or an enum, or false", why)
		}
	}
	props, _ := root["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if why := nonPrimitive(props[name]); why != "" {
			pos := sc.Pos
			if pv := sc.Value.Get("properties").Get(name); pv != nil {
				pos = pv.Pos()
			}
			d.r.problem(CodeInvalidSchema, pos, path, "ask answers are flat forms: property '%s' %s; use string, number, integer, boolean or an enum (nested data belongs in a tool result)", name, why)
		}
	}
}

// nonPrimitive says why a property schema is not a primitive, or "".
func nonPrimitive(prop any) string {
	m, ok := prop.(map[string]any)
	if !ok {
		return "is not a schema object"
	}
	switch t := m["type"].(type) {
	case string:
		switch t {
		case "string", "number", "integer", "boolean":
			return ""
		}
		return "is of type " + t
	case nil:
		if _, ok := m["enum"]; ok {
			return ""
		}
		if _, ok := m["const"]; ok {
			return ""
		}
		return "has no type"
	case []any:
		return fmt.Sprintf("has a union type %v", t)
	}
	return "has an unreadable type"
}

// strictSummary counts, for Explain and validate, how many agent steps that
// do not ask for strict output could have it under each rule set.
func strictSummary(p *Plan) (notAsking int, could map[strict.Rules]int) {
	could = map[strict.Rules]int{}
	WalkSteps(p, func(s *Step) {
		a, ok := s.Control.(*AgentInput)
		if !ok || a.StructuredOutput.Set || a.OutputSchema == nil {
			return
		}
		notAsking++
		for _, rules := range []strict.Rules{strict.Anthropic, strict.OpenAI} {
			if a.OutputSchema.usableStrict(rules) {
				could[rules]++
			}
		}
	})
	return notAsking, could
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
