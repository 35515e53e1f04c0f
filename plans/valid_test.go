package plans

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stepwise-dev/stepwise/plans/yamlpos"
)

// corpus loads every plan under testdata/valid.
func corpus(t testing.TB) map[string][]byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "valid", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[f] = src
	}
	return out
}

func TestLoadValidCorpus(t *testing.T) {
	files := corpus(t)
	if len(files) < 10 {
		t.Fatalf("the valid corpus has %d plans; it should have at least 10", len(files))
	}
	for name, src := range files {
		t.Run(filepath.Base(name), func(t *testing.T) {
			p, r := Load(name, src, Stepwise)
			if p == nil {
				t.Fatal("Load returned no plan")
			}
			if !r.OK() {
				t.Errorf("problems:%s", formatProblems(r.Problems))
			}
		})
	}
}

// TestLoadValidCorpusCoverage keeps the corpus honest: between them its
// plans must exercise every feature the static layer accepts, so that a
// regression that refuses one of them shows up in TestLoadValidCorpus.
func TestLoadValidCorpusCoverage(t *testing.T) {
	seen := map[string]bool{}
	mark := func(feature string) { seen[feature] = true }
	for name, src := range corpus(t) {
		p, r := Load(name, src, Stepwise)
		if p == nil {
			continue
		}
		mark("finish " + p.FinishMode().String())
		if so := p.Solver; so != nil && so.QueryToAnswer == nil && so.Data == nil {
			mark("solver without query_to_answer or data")
		}
		if p.InputSchema != nil {
			mark("input_schema")
		}
		for _, n := range r.Notes {
			if n.Code == CodeCamelCase {
				mark("camelCase")
			}
		}
		text := string(src)
		for _, s := range []string{"{{#@first}}", "{{^@last}}", "{{@index}}", "{{^"} {
			if strings.Contains(text, s) {
				mark("section " + s)
			}
		}
		WalkSteps(p, func(s *Step) {
			name := s.ToolName.Value
			mark("step " + name)
			if s.Input != nil && s.Control == nil {
				s.Input.walkTemplates(func(v *Value) {
					if v.Template().IsSplice() {
						mark("typed splice")
					}
				})
			}
			inBody := strings.Contains(s.Path, "/")
			switch c := s.Control.(type) {
			case *ExitInput:
				if strings.Contains(s.Path, "/then/") || strings.Contains(s.Path, "/else/") {
					mark("exit in a decide branch")
				}
				if c.Gate == nil && c.Infer == nil {
					mark("unconditional exit")
				}
				if c.Gate != nil {
					mark("op " + c.Gate.Op.Value)
				}
			case *DecideInput:
				if c.Infer != nil && c.Model != nil && c.Model.Template() != nil {
					mark("decide templated model")
				}
				if c.Gate != nil {
					mark("op " + c.Gate.Op.Value)
				}
			case *FilterInput:
				if c.Gate != nil {
					mark("op " + c.Gate.Op.Value)
				}
				if strings.Contains(s.Path, "/do.*") && c.Over != nil && c.Over.HasTemplates() && c.Gate != nil {
					mark("filter in a map body")
				}
				if c.Infer != nil && c.Concurrency.Set {
					mark("filter infer with concurrency")
				}
			case *AgentInput:
				if c.Tools != nil && c.MaxIterations.Set && c.Model.Set && c.SystemPrompt != nil &&
					c.ValidationExhaustion != nil && c.StructuredOutput.Set && c.LLMTimeoutSeconds.Set &&
					c.MaxToolCalls.Set && c.MaxFanOut.Set && c.ToolTimeout.Set {
					mark("agent with every control")
				}
				if inBody {
					mark("agent in a body")
				}
			case *AskInput:
				if c.Default != nil && c.WhenUnanswered.Value == "default" {
					mark("ask with default")
				}
				if inBody {
					mark("ask in a body")
				}
			case *ReduceInput:
				if c.Initial != nil {
					mark("reduce initial")
				}
			case *MapInput:
				if c.Concurrency.Set {
					mark("map concurrency")
				}
			}
			for _, b := range Bodies(s) {
				if b.Single {
					mark("single-call body")
				} else {
					mark("step-list body")
				}
			}
		})
	}
	want := []string{
		"finish solver", "finish output", "finish silent", "solver without query_to_answer or data", "input_schema", "camelCase",
		"section {{#@first}}", "section {{^@last}}", "section {{@index}}", "section {{^", "typed splice",
		"step exit", "step decide", "step filter", "step map", "step reduce", "step agent", "step ask",
		"step plan_and_execute",
		"exit in a decide branch", "unconditional exit", "decide templated model", "filter in a map body",
		"filter infer with concurrency", "agent with every control", "agent in a body", "ask with default",
		"ask in a body", "reduce initial", "map concurrency", "single-call body", "step-list body",
	}
	for _, op := range GateOps {
		want = append(want, "op "+op)
	}
	for _, f := range want {
		if !seen[f] {
			t.Errorf("no plan in testdata/valid exercises %q", f)
		}
	}
}

// noteCase is a plan that loads without problems but with notes: want is
// every note, in report order.
type noteCase struct {
	name string
	src  string
	want []Problem
}

// openInputs is the top level of a plan whose input_schema declares limit
// and topic and lets a run pass others. Its nine lines put the first step on
// line 10.
const openInputs = "identifier: t\nname: T\ndescription: d\ninput_schema:\n  type: object\n  properties:\n    limit: {type: integer}\n    topic: {type: string}\nsteps:\n"

// toolsCaveat is the strict-output caveat of a step that can call tools.
const toolsCaveat = "this step can call tools (those its 'tools' list names, or the whole catalog without one), so its answer " +
	"is held to the schema only on its final round, when stepwise lets no tool be called and forces the schema; earlier rounds are assessed at run time"

var noteCases = []noteCase{
	{
		// Without additionalProperties: false a run may pass inputs the
		// schema does not name, so reading one is worth a note, not a
		// problem: graph's plans do it and must keep validating.
		name: "reads of undeclared inputs when the schema allows others",
		src: openInputs + "  - id: fetch\n    tool_name: user__x\n    input: {n: \"{{input.limt.x}}\", q: \"{{input.topic}}\"}\n" +
			"  - id: pick\n    tool_name: decide\n    input:\n      if: {value: \"{{input.verbose}}\", op: eq, to: true}\n      then: {tool_name: user__y, input: {}}\n" +
			"  - id: each\n    tool_name: map\n    input:\n      over: \"{{input.topics}}\"\n      do: {tool_name: user__z, input: {i: \"{{item}}\"}}\n" +
			"solver:\n  query_to_answer: \"{{input.lmit}}\"\n",
		want: []Problem{
			prob(CodeUndeclaredInput, 12, 17, "fetch", "reads input.limt.x, which input_schema does not declare, so a run may pass it unchecked; did you mean input.limit.x?"),
			prob(CodeUndeclaredInput, 16, 20, "pick", "reads input.verbose, which input_schema does not declare, so a run may pass it unchecked; declare it under input_schema's properties (declared: limit, topic)"),
			prob(CodeUndeclaredInput, 21, 14, "each", "reads input.topics, which input_schema does not declare, so a run may pass it unchecked; did you mean input.topic?"),
			prob(CodeUndeclaredInput, 24, 21, "", "reads input.lmit, which input_schema does not declare, so a run may pass it unchecked; did you mean input.limit?"),
		},
	},
	{
		name: "reads of undeclared inputs in the output when the schema allows others",
		src:  openInputs + "  - id: fetch\n    tool_name: user__x\n    input: {}\noutput:\n  n: \"{{#input.tpoic}}{{.}}{{/input.tpoic}}\"\n",
		want: []Problem{
			prob(CodeUndeclaredInput, 14, 7, "", "reads input.tpoic, which input_schema does not declare, so a run may pass it unchecked; did you mean input.topic?"),
		},
	},
	{
		name: "no input_schema: reads of inputs are not checked",
		src:  head + "  - id: fetch\n    tool_name: user__x\n    input: {n: \"{{input.limt}}\"}\n",
	},
	{
		name: "an input_schema without properties: reads of inputs are not checked",
		src:  "identifier: t\nname: T\ndescription: d\ninput_schema: {type: object}\nsteps:\n  - id: fetch\n    tool_name: user__x\n    input: {n: \"{{input.limt}}\"}\n",
	},
	{
		name: "an input_schema that names inputs elsewhere than properties: reads of inputs are not checked",
		src:  "identifier: t\nname: T\ndescription: d\ninput_schema: {type: object, additionalProperties: false, properties: {limit: {}}, patternProperties: {\"^x_\": {}}}\nsteps:\n  - id: fetch\n    tool_name: user__x\n    input: {n: \"{{input.x_limit}}\", m: \"{{input.limit.deep}}\"}\n",
	},
	{
		name: "camelCase at the top level",
		src:  "identifier: t\nname: T\ndescription: d\nrequiresServers: [linear]\ninputSchema: {type: object}\nsteps:\n  - id: E0\n    tool_name: linear__list\n    input: {}\n",
		want: []Problem{
			prob(CodeCamelCase, 4, 1, "", "'requiresServers' is spelled 'requires_servers'; the camelCase spelling loads, snake_case is the one to write"),
			prob(CodeCamelCase, 5, 1, "", "'inputSchema' is spelled 'input_schema'; the camelCase spelling loads, snake_case is the one to write"),
		},
	},
	{
		name: "camelCase in a step and its ask input",
		src:  head + "  - id: E0\n    toolName: ask\n    input:\n      prompt: Go?\n      outputSchema: {type: object, properties: {go: {type: boolean}}}\n      whenUnanswered: default\n      default: {go: false}\n",
		want: []Problem{
			prob(CodeCamelCase, 6, 5, "E0", "'toolName' is spelled 'tool_name'; the camelCase spelling loads, snake_case is the one to write"),
			prob(CodeCamelCase, 9, 7, "E0", "'outputSchema' is spelled 'output_schema'; the camelCase spelling loads, snake_case is the one to write"),
			prob(CodeCamelCase, 10, 7, "E0", "'whenUnanswered' is spelled 'when_unanswered'; the camelCase spelling loads, snake_case is the one to write"),
		},
	},
	{
		name: "camelCase in a body call",
		src:  head + "  - id: E0\n    tool_name: map\n    input:\n      over: \"{{input.xs}}\"\n      do:\n        toolName: user__x\n        input: {}\n",
		want: []Problem{
			prob(CodeCamelCase, 10, 9, "E0/do.*", "'toolName' is spelled 'tool_name'; the camelCase spelling loads, snake_case is the one to write"),
		},
	},
	{
		name: "camelCase in the solver",
		src:  head + "  - id: E0\n    tool_name: user__x\n    input: {}\nsolver:\n  queryToAnswer: sum up\n  systemPrompt: be brief\n  data: {x: \"{{E0}}\"}\n",
		want: []Problem{
			prob(CodeCamelCase, 9, 3, "", "'queryToAnswer' is spelled 'query_to_answer'; the camelCase spelling loads, snake_case is the one to write"),
			prob(CodeCamelCase, 10, 3, "", "'systemPrompt' is spelled 'system_prompt'; the camelCase spelling loads, snake_case is the one to write"),
		},
	},
	{
		name: "camelCase agent controls",
		src:  head + "  - id: E0\n    tool_name: agent\n    input:\n      prompt: go\n      outputSchema: {type: object, additionalProperties: false}\n      llmTimeoutSeconds: 30\n      maxFanOut: 1\n      toolTimeout: 5\n      structuredOutput: strict\n",
		want: []Problem{
			prob(CodeCamelCase, 9, 7, "E0", "'outputSchema' is spelled 'output_schema'; the camelCase spelling loads, snake_case is the one to write"),
			prob(CodeCamelCase, 10, 7, "E0", "'llmTimeoutSeconds' is spelled 'llm_timeout_seconds'; the camelCase spelling loads, snake_case is the one to write"),
			prob(CodeCamelCase, 11, 7, "E0", "'maxFanOut' is spelled 'max_fan_out'; the camelCase spelling loads, snake_case is the one to write"),
			prob(CodeCamelCase, 12, 7, "E0", "'toolTimeout' is spelled 'tool_timeout'; the camelCase spelling loads, snake_case is the one to write"),
			prob(CodeCamelCase, 13, 7, "E0", "'structuredOutput' is spelled 'structured_output'; the camelCase spelling loads, snake_case is the one to write"),
			prob("tools_runtime_assessed", 13, 25, "E0", "structured_output caveat — "+toolsCaveat),
		},
	},
	{
		name: "plan_and_execute as a step",
		src:  head + "  - id: E0\n    tool_name: plan_and_execute\n    input: {query: \"what changed?\"}\n",
		want: []Problem{
			prob(CodeUnsupportedTool, 6, 16, "E0", "plan_and_execute (the LLM planner) is not available in stepwise yet; this step fails if it runs"),
		},
	},
	{
		name: "plan_and_execute in a decide branch",
		src:  head + "  - id: E0\n    tool_name: decide\n    input:\n      infer: complicated?\n      then: {tool_name: plan_and_execute, input: {query: \"{{input.q}}\"}}\n",
		want: []Problem{
			prob(CodeUnsupportedTool, 9, 25, "E0/then", "plan_and_execute (the LLM planner) is not available in stepwise yet; this step fails if it runs"),
		},
	},
	{
		name: "exit model without infer",
		src:  head + "  - id: E0\n    tool_name: exit\n    input:\n      when: {value: \"{{input.n}}\", op: eq, to: 0}\n      model: judge\n      status: success\n",
		want: []Problem{
			prob(CodeIgnoredField, 9, 7, "E0", "'model' is ignored without 'infer': it picks the model for the infer verdict"),
		},
	},
	{
		name: "to with op empty",
		src:  head + "  - id: E0\n    tool_name: exit\n    input:\n      when: {value: \"{{input.xs}}\", op: empty, to: []}\n      status: success\n",
		want: []Problem{
			prob(CodeIgnoredField, 8, 48, "E0", "'to' is ignored with op empty, which tests 'value' alone"),
		},
	},
	{
		name: "filter concurrency with where",
		src:  head + "  - id: E0\n    tool_name: filter\n    input:\n      over: \"{{input.xs}}\"\n      where: {value: \"{{item}}\", op: not_empty}\n      concurrency: 3\n",
		want: []Problem{
			prob(CodeIgnoredField, 10, 20, "E0", "'concurrency' is ignored with 'where': it bounds infer verdicts in flight, and a where gate makes none"),
		},
	},
	{
		name: "ask default without when_unanswered default",
		src:  head + "  - id: E0\n    tool_name: ask\n    input:\n      prompt: Go?\n      output_schema: {type: object, properties: {go: {type: boolean}}}\n      default: {go: false}\n",
		want: []Problem{
			prob(CodeIgnoredField, 10, 16, "E0", "'default' is ignored without 'when_unanswered: default'"),
		},
	},
	{
		name: "default_output without mode default",
		src:  head + "  - id: E0\n    tool_name: agent\n    input:\n      prompt: go\n      output_schema: {type: object}\n      validation_exhaustion: {threshold: 3, default_output: {}}\n",
		want: []Problem{
			prob(CodeIgnoredField, 10, 61, "E0", "'validation_exhaustion.default_output' is ignored without 'mode: default'"),
		},
	},
	{
		name: "tool limits with a single round",
		src:  head + "  - id: E0\n    tool_name: agent\n    input:\n      prompt: go\n      output_schema: {type: object}\n      max_iterations: 1\n      tools: [\"user__*\"]\n      max_tool_calls: 3\n      tool_timeout: 10\n",
		want: []Problem{
			prob(CodeNoEffect, 11, 7, "E0", "'tools' has no effect with max_iterations: 1: the only round is the answer round, which has no tools"),
			prob(CodeNoEffect, 12, 23, "E0", "'max_tool_calls' has no effect with max_iterations: 1: the only round is the answer round, which has no tools"),
			prob(CodeNoEffect, 13, 21, "E0", "'tool_timeout' has no effect with max_iterations: 1: the only round is the answer round, which has no tools"),
		},
	},
	{
		name: "strict with caveats",
		src:  head + "  - id: E0\n    tool_name: agent\n    input:\n      prompt: go\n      output_schema:\n        type: object\n        additionalProperties: false\n        required: [a]\n        properties:\n          a: {type: string, pattern: \"^x\"}\n          b: {type: string}\n      structured_output: strict\n",
		want: []Problem{
			prob("unenforced_pattern", 14, 14, "E0", "structured_output caveat — 'pattern' at 'properties.a' is silently ignored or rejected by the API — either way enforced post-hoc by stepwise"),
			prob("optional_emission", 15, 14, "E0", "structured_output caveat — 'b' at 'properties.b' is optional — under strict mode a model may leave it out more often; list it in 'required' if every answer needs it"),
			prob("tools_runtime_assessed", 16, 26, "E0", "structured_output caveat — "+toolsCaveat),
		},
	},
	{
		name: "agents that could ask for strict output",
		src:  head + "  - id: E0\n    tool_name: agent\n    input:\n      prompt: go\n      output_schema: {type: object, additionalProperties: false, required: [a], properties: {a: {type: string}}}\n  - id: E1\n    tool_name: agent\n    input:\n      prompt: go\n      output_schema: {type: object, properties: {a: {type: string}}}\n",
		want: []Problem{
			prob(CodeStrictEligible, 1, 1, "", "1 of 2 agent steps not asking for structured_output: strict could use it (Anthropic rules: 1, OpenAI rules: 1); --explain gives the detail"),
		},
	},
	{
		// E0 and E2 write one schema text, judged once for both; E1's
		// differs and is not usable, so it must not take their verdict.
		name: "agents that share a schema strict could use",
		src:  head + "  - id: E0\n    tool_name: agent\n    input:\n      prompt: go\n      output_schema: {type: object, additionalProperties: false, required: [a], properties: {a: {type: string}}}\n  - id: E1\n    tool_name: agent\n    input:\n      prompt: go\n      output_schema: {type: object, properties: {a: {type: string}}}\n  - id: E2\n    tool_name: agent\n    input:\n      prompt: go\n      output_schema: {properties: {a: {type: string}}, required: [a], additionalProperties: false, type: object}\n",
		want: []Problem{
			prob(CodeStrictEligible, 1, 1, "", "2 of 3 agent steps not asking for structured_output: strict could use it (Anthropic rules: 2, OpenAI rules: 2); --explain gives the detail"),
		},
	},
	{
		name: "output_schema with properties but no type",
		src:  head + "  - id: E0\n    tool_name: agent\n    input:\n      prompt: go\n      output_schema: {properties: {a: {type: string}}}\n",
		want: []Problem{
			prob(CodeInvalidSchema, 9, 22, "E0", "'output_schema' declares properties without 'type: object'; it is read as an object, but write the type out: it is also what the provider is held to"),
		},
	},
}

func TestLoadNotes(t *testing.T) {
	for _, tc := range noteCases {
		t.Run(tc.name, func(t *testing.T) {
			_, r := Load("plan.yaml", []byte(tc.src), Stepwise)
			if !r.OK() {
				t.Errorf("problems:%s", formatProblems(r.Problems))
			}
			if !slices.Equal(r.Notes, tc.want) {
				t.Errorf("notes:\n got: %s\nwant: %s", formatProblems(r.Notes), formatProblems(tc.want))
			}
		})
	}
}

// allowedCases are plans on the edge of a rule, on its allowed side: each
// loads with no problems at all.
var allowedCases = []struct{ name, src string }{
	{"exit in a decide branch", head + "  - id: E0\n    tool_name: decide\n    input:\n      infer: done?\n      then:\n        - id: bail\n          tool_name: exit\n          input: {status: error, message: stop}\n      else: {tool_name: exit, input: {status: success}}\n"},
	{"filter in a map body reading the outer item in over", head + "  - id: E0\n    tool_name: map\n    input:\n      over: \"{{input.prs}}\"\n      do:\n        - id: big\n          tool_name: filter\n          input:\n            over: \"{{item.files}}\"\n            where: {value: \"{{item.additions}}\", op: gt, to: \"{{index}}\"}\n        - id: note\n          tool_name: user__note\n          input: {pr: \"{{item.id}}\", files: \"{{big.items}}\"}\n"},
	{"filter in a reduce body reading the accumulator", head + "  - id: E0\n    tool_name: reduce\n    input:\n      over: \"{{input.groups}}\"\n      do:\n        tool_name: filter\n        input:\n          over: \"{{item.members}}\"\n          where: {value: \"{{accumulator}}\", op: contains, to: \"{{item}}\"}\n"},
	{"agent in a reduce body reading the accumulator", head + "  - id: E0\n    tool_name: reduce\n    input:\n      over: \"{{input.xs}}\"\n      do:\n        tool_name: agent\n        input:\n          prompt: \"Merge {{item}} into {{accumulator}} (item {{index}})\"\n          output_schema: {type: object}\n"},
	{"ask in a map body reading the item", head + "  - id: E0\n    tool_name: map\n    input:\n      over: \"{{input.people}}\"\n      do:\n        tool_name: ask\n        input:\n          prompt: \"Keep {{item.name}}?\"\n          output_schema: {type: object, properties: {keep: {type: boolean}}}\n"},
	{"ask default with templates is not checked at load", head + "  - id: E0\n    tool_name: ask\n    input:\n      prompt: Go?\n      output_schema: {type: object, required: [go], properties: {go: {type: boolean}}}\n      when_unanswered: default\n      default: {go: \"{{input.go}}\"}\n"},
	{"agent and ask in a decide branch", head + "  - id: E0\n    tool_name: decide\n    input:\n      infer: needs a human?\n      then:\n        - id: q\n          tool_name: ask\n          input: {prompt: \"Why?\", output_schema: {type: object, properties: {why: {type: string}}}}\n        - id: a\n          tool_name: agent\n          input: {prompt: \"Act on {{q.answer.why}}\", output_schema: {type: object}}\n"},
	{"sections with bare keys, dot and loop variables", head + "  - id: E0\n    tool_name: user__x\n    input: {}\n  - id: E1\n    tool_name: user__y\n    input: {q: \"{{#E0.items}}{{#@first}}[{{/@first}}{{.}}:{{name}} #{{@index}}{{^@last}}, {{/@last}}{{/E0.items}}{{^E0.items}}none{{/E0.items}}\"}\n"},
	{"reading control step results after them", head + "  - id: E0\n    tool_name: decide\n    input:\n      infer: late?\n      then:\n        - id: E00\n          tool_name: user__x\n          input: {}\n        - id: E01\n          tool_name: user__y\n          input: {prev: \"{{E00.id}}\"}\n  - id: E1\n    tool_name: map\n    input:\n      over: \"{{E0.result.items}}\"\n      do: {tool_name: user__x, input: {i: \"{{item}}\"}}\n  - id: E2\n    tool_name: user__z\n    input: {branch: \"{{E0.branch}}\", results: \"{{E1.results}}\", n: \"{{E1.count}}\"}\n"},
	{"decide with a templated model", head + "  - id: E0\n    tool_name: decide\n    input:\n      infer: late?\n      model: \"{{input.model}}\"\n      then: {tool_name: user__x, input: {}}\n"},
	{"a gate ordering a template against a number", head + "  - id: E0\n    tool_name: exit\n    input:\n      when: {value: \"{{input.n}}\", op: gt, to: 1.5}\n      status: error\n"},
	{"anchors and aliases", head + "  - id: E0\n    tool_name: user__x\n    input: &args {team: \"{{input.team}}\"}\n  - id: E1\n    tool_name: user__y\n    input: *args\n"},
	{"a boolean input_schema", "identifier: t\nname: T\ndescription: d\ninput_schema: true\nsteps:\n  - id: E0\n    tool_name: user__x\n    input: {}\n"},
	{"a silent plan", head + "  - id: E0\n    tool_name: user__deploy\n    input: {env: prod}\n"},
	{"an explicit key overrides a merged one", head + "  - id: E0\n    tool_name: user__x\n    input: &base {entry: a, level: 1}\n  - id: E1\n    tool_name: user__y\n    input: {<<: *base, entry: b}\n"},
	{"a control step's input merged from an anchor", head + "  - id: E0\n    tool_name: exit\n    input: &ex {when: {value: 1, op: eq, to: 2}, status: success}\n  - id: E1\n    tool_name: exit\n    input: {<<: *ex, message: hi}\n"},
	{"a step merged from an anchor", head + "  - &common\n    id: E0\n    tool_name: user__x\n    input: {}\n  - <<: *common\n    id: E1\n"},
	{"an agent's schema merged from a list of anchors", head + "  - id: E0\n    tool_name: user__x\n    input: &a {prompt: go}\n  - id: E1\n    tool_name: user__y\n    input: &b {output_schema: {type: object}}\n  - id: E2\n    tool_name: agent\n    input: {<<: [*a, *b], max_iterations: 2}\n"},
	{"whole numbers written as floats", head + "  - id: E0\n    tool_name: agent\n    input: {prompt: go, output_schema: {type: object}, max_iterations: 1e1, llm_timeout_seconds: 60.0}\n"},
	{"a %YAML 1.2 directive", "%YAML 1.2\n---\n" + head + "  - id: E0\n    tool_name: user__x\n    input: {}\n"},
	{"an explicit key before the merge overrides it too", head + "  - id: E0\n    tool_name: user__x\n    input: &base {entry: a}\n  - id: E1\n    tool_name: user__y\n    input: {entry: b, <<: *base}\n"},
}

func TestMergeOverride(t *testing.T) {
	src := head + "  - id: E0\n    tool_name: user__x\n    input: &base {entry: a, level: 1}\n  - id: E1\n    tool_name: user__y\n    input: {<<: *base, entry: b}\n"
	p, r := Load("plan.yaml", []byte(src), Stepwise)
	if !r.OK() {
		t.Fatalf("problems:%s", formatProblems(r.Problems))
	}
	got := p.Steps[1].Input.Literal()
	want := map[string]any{"entry": "b", "level": json.Number("1")}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("input = %v, want %v", got, want)
	}
}

func TestLoadAllowed(t *testing.T) {
	for _, tc := range allowedCases {
		t.Run(tc.name, func(t *testing.T) {
			p, r := Load("plan.yaml", []byte(tc.src), Stepwise)
			if p == nil || !r.OK() {
				t.Errorf("problems:%s", formatProblems(r.Problems))
			}
		})
	}
}

// testCatalog is a fixed catalog: test data in the shape the engine fills
// from a project's configuration.
type testCatalog struct {
	tools   []ToolInfo
	servers []string
	models  []string
}

func (c testCatalog) Tools() []ToolInfo { return c.tools }
func (c testCatalog) Servers() []string { return c.servers }
func (c testCatalog) Models() []string  { return c.models }

// projectCatalog is a project with a few tools of each listed kind, the
// github and grafana servers, and the standard roles plus one named model.
var projectCatalog = testCatalog{
	tools: []ToolInfo{
		{Name: "builtin__infer", Source: "builtin"},
		{Name: "builtin__reshape", Source: "builtin"},
		{Name: "builtin__git_log", Source: "builtin"},
		{Name: "user__notify", Source: "user"},
		{Name: "user__summarize", Source: "user"},
		{Name: "plan__weekly_report", Source: "plan"},
		{Name: "plan__escalate", Source: "plan", Unusable: "it requires MCP server 'pagerduty', which is not configured"},
	},
	servers: []string{"github", "grafana"},
	models:  []string{"default", "chat", "judge", "repair", "fast"},
}

type resolveCase struct {
	name  string
	src   string
	cat   Catalog
	want  []Problem
	notes []Problem
}

var resolveCases = []resolveCase{
	{
		name: "every name resolves",
		cat:  projectCatalog,
		src:  head + "  - id: E0\n    tool_name: github__list_prs\n    input: {}\n  - id: E1\n    tool_name: map\n    input:\n      over: \"{{E0.prs}}\"\n      do:\n        - id: E10\n          tool_name: builtin__infer\n          input: {instruction: sum}\n        - id: E11\n          tool_name: plan__weekly_report\n          input: {}\n  - id: E2\n    tool_name: agent\n    input:\n      prompt: go\n      output_schema: {type: object}\n      tools: [\"github__*\", \"*__search\", user__notify, \"plan__*\", \"builtin__*\"]\n      model: fast\n  - id: E3\n    tool_name: plan_and_execute\n    input: {query: q}\n",
	},
	{
		name: "unknown user tool with did-you-mean",
		cat:  projectCatalog,
		src:  head + "  - id: E0\n    tool_name: user__notfy\n    input: {}\n",
		want: []Problem{
			prob(CodeUnresolvedTool, 6, 16, "E0", "unknown tool 'user__notfy'; did you mean 'user__notify'?"),
		},
	},
	{
		name: "unknown user tool without a close match",
		cat:  projectCatalog,
		src:  head + "  - id: E0\n    tool_name: user__deploy\n    input: {}\n",
		want: []Problem{
			prob(CodeUnresolvedTool, 6, 16, "E0", "unknown tool 'user__deploy' (user__ tools: user__notify, user__summarize)"),
		},
	},
	{
		name: "unknown builtin",
		cat:  projectCatalog,
		src:  head + "  - id: E0\n    tool_name: builtin__web_search\n    input: {}\n",
		want: []Problem{
			prob(CodeUnresolvedTool, 6, 16, "E0", "unknown tool 'builtin__web_search' (builtin__ tools: builtin__git_log, builtin__infer, builtin__reshape)"),
		},
	},
	{
		name: "unknown plan tool when there are none",
		cat:  testCatalog{},
		src:  head + "  - id: E0\n    tool_name: plan__triage\n    input: {}\n",
		want: []Problem{
			prob(CodeUnresolvedTool, 6, 16, "E0", "unknown tool 'plan__triage' (there are no plan__ tools)"),
		},
	},
	{
		name: "unknown tool in a decide branch",
		cat:  projectCatalog,
		src:  head + "  - id: E0\n    tool_name: decide\n    input:\n      infer: late?\n      then: {tool_name: user__sumarize, input: {}}\n",
		want: []Problem{
			prob(CodeUnresolvedTool, 9, 25, "E0/then", "unknown tool 'user__sumarize'; did you mean 'user__summarize'?"),
		},
	},
	{
		name: "MCP tool on an unconfigured server",
		cat:  projectCatalog,
		src:  head + "  - id: E0\n    tool_name: linear__list_issues\n    input: {}\n",
		want: []Problem{
			prob(CodeUnresolvedTool, 6, 16, "E0", "tool 'linear__list_issues' needs MCP server 'linear', which is not configured under [mcp.linear]"),
		},
	},
	{
		name: "MCP tool on a misspelled server",
		cat:  projectCatalog,
		src:  head + "  - id: E0\n    tool_name: githb__list_prs\n    input: {}\n",
		want: []Problem{
			prob(CodeUnresolvedTool, 6, 16, "E0", "tool 'githb__list_prs' needs MCP server 'githb', which is not configured under [mcp.githb]; did you mean 'github'?"),
		},
	},
	{
		name: "MCP tool on a server declared in requires_servers",
		cat:  projectCatalog,
		src:  head + "  - id: E0\n    tool_name: linear__list_issues\n    input: {}\nrequires_servers: [linear]\n",
		notes: []Problem{
			prob(CodeMissingServer, 6, 16, "E0", "tool 'linear__list_issues' needs MCP server 'linear', which is not configured under [mcp.linear] (declared in requires_servers)"),
			prob(CodeMissingServer, 8, 20, "", "requires MCP server 'linear', which is not configured under [mcp.linear]"),
		},
	},
	{
		name: "plan tool that cannot run",
		cat:  projectCatalog,
		src:  head + "  - id: E0\n    tool_name: map\n    input:\n      over: \"{{input.xs}}\"\n      do: {tool_name: plan__escalate, input: {}}\n",
		want: []Problem{
			prob(CodeUnresolvedTool, 9, 23, "E0/do.*", "tool 'plan__escalate' cannot run: it requires MCP server 'pagerduty', which is not configured"),
		},
	},
	{
		name: "agent pattern on an unconfigured server",
		cat:  projectCatalog,
		src:  head + "  - id: E1\n    tool_name: agent\n    input:\n      prompt: go\n      output_schema: {type: object}\n      tools: [\"linear__*\"]\n",
		want: []Problem{
			prob(CodeUnresolvedPattern, 10, 15, "E1", "`tools` pattern 'linear__*' needs MCP server 'linear', which is not configured under [mcp.linear]"),
		},
	},
	{
		name: "agent pattern on a server declared in requires_servers",
		cat:  projectCatalog,
		src:  "identifier: t\nname: T\ndescription: d\nrequires_servers: [linear]\nsteps:\n  - id: E1\n    tool_name: agent\n    input:\n      prompt: go\n      output_schema: {type: object}\n      tools: [\"linear__*\"]\n",
		notes: []Problem{
			prob(CodeMissingServer, 4, 20, "", "requires MCP server 'linear', which is not configured under [mcp.linear]"),
			prob(CodeMissingServer, 11, 15, "E1", "`tools` pattern 'linear__*' needs MCP server 'linear', which is not configured under [mcp.linear] (declared in requires_servers)"),
		},
	},
	{
		name: "agent user pattern matching nothing",
		cat:  testCatalog{tools: []ToolInfo{{Name: "builtin__infer"}}},
		src:  head + "  - id: E1\n    tool_name: agent\n    input:\n      prompt: go\n      output_schema: {type: object}\n      tools: [\"user__*\", \"builtin__infer\"]\n",
		want: []Problem{
			prob(CodeUnresolvedPattern, 10, 15, "E1", "`tools` pattern 'user__*' matches no tool (there are no user__ tools)"),
		},
	},
	{
		name: "agent user pattern with a typo",
		cat:  projectCatalog,
		src:  head + "  - id: E1\n    tool_name: agent\n    input:\n      prompt: go\n      output_schema: {type: object}\n      tools: [\"user__notif*\", \"user__summarise\"]\n",
		want: []Problem{
			prob(CodeUnresolvedPattern, 10, 31, "E1", "`tools` pattern 'user__summarise' matches no tool; did you mean 'user__summarize'?"),
		},
	},
	{
		name: "agent suffix pattern with no server and no tool",
		cat:  testCatalog{tools: []ToolInfo{{Name: "builtin__infer"}}},
		src:  head + "  - id: E1\n    tool_name: agent\n    input:\n      prompt: go\n      output_schema: {type: object}\n      tools: [\"*__search\"]\n",
		want: []Problem{
			prob(CodeUnresolvedPattern, 10, 15, "E1", "`tools` pattern '*__search' matches no tool and no configured MCP server"),
		},
	},
	{
		name: "agent exact builtin missing",
		cat:  testCatalog{tools: []ToolInfo{{Name: "builtin__reshape"}}},
		src:  head + "  - id: E1\n    tool_name: agent\n    input:\n      prompt: go\n      output_schema: {type: object}\n      tools: [builtin__infer]\n",
		want: []Problem{
			prob(CodeUnresolvedPattern, 10, 15, "E1", "`tools` pattern 'builtin__infer' matches no tool (builtin__ tools: builtin__reshape)"),
		},
	},
	{
		name: "agent names a plan tool that cannot run",
		cat:  projectCatalog,
		src:  head + "  - id: E1\n    tool_name: agent\n    input:\n      prompt: go\n      output_schema: {type: object}\n      tools: [plan__escalate]\n",
		want: []Problem{
			prob(CodeUnresolvedTool, 10, 15, "E1", "`tools` names 'plan__escalate', which cannot run: it requires MCP server 'pagerduty', which is not configured"),
		},
	},
	{
		name: "agent in a map body with an unconfigured pattern",
		cat:  projectCatalog,
		src:  head + "  - id: E0\n    tool_name: map\n    input:\n      over: \"{{input.xs}}\"\n      do:\n        tool_name: agent\n        input:\n          prompt: \"look at {{item}}\"\n          output_schema: {type: object}\n          tools: [\"sentry__*\"]\n",
		want: []Problem{
			prob(CodeUnresolvedPattern, 14, 19, "E0/do.*", "`tools` pattern 'sentry__*' needs MCP server 'sentry', which is not configured under [mcp.sentry]"),
		},
	},
	{
		name: "unknown models",
		cat:  projectCatalog,
		src:  head + "  - id: E0\n    tool_name: agent\n    input:\n      prompt: go\n      output_schema: {type: object}\n      model: gpt-9\n  - id: E1\n    tool_name: decide\n    input:\n      infer: late?\n      model: judge-xl\n      then: {tool_name: user__notify, input: {}}\n  - id: E2\n    tool_name: decide\n    input:\n      infer: late?\n      model: \"{{input.model}}\"\n      then: {tool_name: user__notify, input: {}}\n",
		notes: []Problem{
			prob(CodeUnknownModel, 10, 14, "E0", "model 'gpt-9' is not a role or a named model in this configuration (configured: default, chat, judge, repair, fast), so the call would fail here"),
			prob(CodeUnknownModel, 15, 14, "E1", "model 'judge-xl' is not a role or a named model in this configuration (configured: default, chat, judge, repair, fast), so the call would fail here"),
		},
	},
	{
		name: "a mistyped model name",
		cat:  projectCatalog,
		src:  head + "  - id: E0\n    tool_name: agent\n    input:\n      prompt: go\n      output_schema: {type: object}\n      model: fats\n",
		notes: []Problem{
			prob(CodeUnknownModel, 10, 14, "E0", "model 'fats' is not a role or a named model in this configuration (configured: default, chat, judge, repair, fast), so the call would fail here; did you mean 'fast'?"),
		},
	},
	{
		name: "a step's input keys against its tool's input schema",
		cat: testCatalog{tools: []ToolInfo{{Name: "user__send", InputSchema: map[string]any{
			"type": "object", "required": []any{"to", "body"}, "additionalProperties": false,
			"properties": map[string]any{"to": map[string]any{"type": "string"}, "body": map[string]any{"type": "string"}},
		}}, {Name: "user__open", InputSchema: map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{}}}}}},
		src: head + "  - id: E0\n    tool_name: user__send\n    input: {too: ops, body: \"{{input.text}}\"}\n  - id: E1\n    tool_name: user__open\n    input: {b: 1}\n",
		want: []Problem{
			prob(CodeMissingField, 7, 12, "E0", "tool 'user__send' needs input 'to' (its input_schema requires it)"),
			prob(CodeUnknownField, 7, 13, "E0", "tool 'user__send' takes no input 'too'; did you mean 'to'? (inputs: body, to)"),
		},
	},
	{
		name: "a step's timeout_secs on a user tool that is not an exec tool",
		cat:  testCatalog{tools: []ToolInfo{{Name: "user__ask", Kind: ToolPrompt}, {Name: "user__shape", Kind: ToolReshape}, {Name: "user__run", Kind: ToolExec}}, servers: []string{"github"}},
		src: head + "  - id: E0\n    tool_name: user__ask\n    input: {}\n    timeout_secs: 5\n" +
			"  - id: E1\n    tool_name: user__shape\n    input: {}\n    timeout_secs: 5\n" +
			"  - id: E2\n    tool_name: user__run\n    input: {}\n    timeout_secs: 5\n" +
			"  - id: E3\n    tool_name: github__search\n    input: {}\n    timeout_secs: 5\n",
		want: []Problem{
			prob(CodeInvalidValue, 8, 19, "E0", "'timeout_secs' bounds the call of an exec or MCP tool, and user__ask is a prompt tool: remove it (its model call is bounded by [settings] llm_timeout_seconds and llm_idle_timeout_seconds)"),
			prob(CodeInvalidValue, 12, 19, "E1", "'timeout_secs' bounds the call of an exec or MCP tool, and user__shape is a reshape tool: remove it (it builds its value in process, bounded in size by [limits] value_bytes)"),
		},
	},
	{
		name: "models are not checked without a model list",
		cat:  testCatalog{tools: projectCatalog.tools},
		src:  head + "  - id: E0\n    tool_name: agent\n    input:\n      prompt: go\n      output_schema: {type: object}\n      model: gpt-9\n",
	},
}

func TestResolve(t *testing.T) {
	for _, tc := range resolveCases {
		t.Run(tc.name, func(t *testing.T) {
			p, lr := Load("plan.yaml", []byte(tc.src), Stepwise)
			if p == nil || !lr.OK() {
				t.Fatalf("the plan must load cleanly:%s", formatProblems(lr.Problems))
			}
			r := Resolve(p, tc.cat)
			if !slices.Equal(r.Problems, tc.want) {
				t.Errorf("problems:\n got: %s\nwant: %s", formatProblems(r.Problems), formatProblems(tc.want))
			}
			if !slices.Equal(r.Notes, tc.notes) {
				t.Errorf("notes:\n got: %s\nwant: %s", formatProblems(r.Notes), formatProblems(tc.notes))
			}
		})
	}
}

// TestSchemaCompiledOncePerText checks that Load compiles each schema text
// of a file once: agents that write the same output schema (with its keys
// in another order) share one compiled schema, one that differs gets its
// own, and a broken schema written twice is reported at both places.
func TestSchemaCompiledOncePerText(t *testing.T) {
	agent := func(id, schema string) string {
		return "  - id: " + id + "\n    tool_name: agent\n    input:\n      prompt: go\n      output_schema: " + schema + "\n"
	}
	src := head +
		agent("A", "{type: object, properties: {x: {type: string}}}") +
		agent("B", "{properties: {x: {type: string}}, type: object}") +
		agent("C", "{type: object, properties: {y: {type: string}}}") +
		agent("D", "{type: object, properties: {x: {type: string, enum: [a, b]}, y: {description: why, type: integer}}, required: [x]}") +
		agent("E", "{required: [x], properties: {y: {type: integer, description: why}, x: {enum: [a, b], type: string}}, type: object}") +
		agent("F", "{required: [x], properties: {y: {type: integer, description: why}, x: {enum: [b, a], type: string}}, type: object}")
	p, r := Load("plan.yaml", []byte(src), Stepwise)
	if !r.OK() {
		t.Fatalf("problems:%s", formatProblems(r.Problems))
	}
	schema := func(i int) *Schema { return p.Steps[i].Control.(*AgentInput).OutputSchema }
	a, b, c := schema(0), schema(1), schema(2)
	if a.loaded == nil || a.loaded != b.loaded {
		t.Errorf("A and B write one schema and hold %p and %p", a.loaded, b.loaded)
	}
	if c.loaded == a.loaded {
		t.Error("C's schema differs from A's and shares its compiled form")
	}
	if d, e, f := schema(3), schema(4), schema(5); d.loaded != e.loaded || f.loaded == d.loaded {
		t.Errorf("D and E write one schema, their keys in other orders at every level, and F another: D %p, E %p, F %p", d.loaded, e.loaded, f.loaded)
	}
	if got := c.Check(map[string]any{"y": 1}); len(got) != 1 {
		t.Errorf("C's compiled schema checks %v, want one violation", got)
	}

	broken := "{type: object, properties: {x: {type: strin}}}"
	_, r = Load("plan.yaml", []byte(head+agent("A", broken)+agent("B", broken)), Stepwise)
	var lines []int
	for _, pr := range r.Problems {
		if pr.Code == CodeInvalidSchema {
			lines = append(lines, pr.Pos.Line)
		}
	}
	if len(lines) != 2 || lines[0] == lines[1] {
		t.Errorf("the broken schema is reported at lines %v, want two places:%s", lines, formatProblems(r.Problems))
	}
}

// TestControlInputSharesItsParts checks that a control step's input as
// written holds the values its grammar decoded, down to the inputs of its
// body's steps, rather than copies of them, and that it reads as written
// all the same.
func TestControlInputSharesItsParts(t *testing.T) {
	src := head + `  - id: M
    tool_name: map
    input:
      over: "{{input.items}}"
      do:
        - id: L
          tool_name: user__log
          input: {entry: "big {{item.n}}", tags: [a, b]}
  - id: D
    tool_name: decide
    input:
      if: {value: "{{M.0}}", op: gt, to: 3}
      then: {tool_name: user__log, input: {entry: "{{M}}"}}
`
	p, r := Load("plan.yaml", []byte(src), Stepwise)
	if !r.OK() {
		t.Fatalf("problems:%s", formatProblems(r.Problems))
	}
	m, d := p.Steps[0], p.Steps[1]
	mi, di := m.Control.(*MapInput), d.Control.(*DecideInput)
	if got := m.Input.Get("over"); got != mi.Over {
		t.Errorf("the map's input holds over at %p, its grammar's is %p", got, mi.Over)
	}
	l := mi.Do.Steps[0]
	if got := m.Input.Get("do").List()[0].Get("input"); got != l.Input || l.Input.Get("entry").Template() == nil {
		t.Errorf("the map's input holds its body step's input at %p, the step's is %p, its template %v", got, l.Input, l.Input.Get("entry").Template())
	}
	if got := d.Input.Get("if").Get("value"); got != di.Gate.Value {
		t.Errorf("the decide's input holds the condition's value at %p, its grammar's is %p", got, di.Gate.Value)
	}
	if got := d.Input.Get("then").Get("input"); got != di.Then.Steps[0].Input {
		t.Errorf("the decide's input holds its call's input at %p, the call's is %p", got, di.Then.Steps[0].Input)
	}
	want := map[string]any{
		"over": "{{input.items}}",
		"do": []any{map[string]any{"id": "L", "tool_name": "user__log", "input": map[string]any{
			"entry": "big {{item.n}}", "tags": []any{"a", "b"}}}},
	}
	if got := m.Input.Literal(); !reflect.DeepEqual(got, want) {
		t.Errorf("the map's input as written reads\n%#v\nwant\n%#v", got, want)
	}
}

// TestControlPartsReset checks that the parts of a control step of many
// parts are dropped rather than cleared, so that the steps after it do not
// each pay for clearing a map that large, and that a small map is kept.
func TestControlPartsReset(t *testing.T) {
	nodes := make([]yamlpos.Node, maxKeptParts+1)
	p := controlParts{byNode: map[*yamlpos.Node]*Value{}}
	p.byNode[&nodes[0]] = &Value{}
	small := p.byNode
	p.reset()
	if len(p.byNode) != 0 || reflect.ValueOf(p.byNode).UnsafePointer() != reflect.ValueOf(small).UnsafePointer() {
		t.Errorf("a map of one part is not cleared and kept: %v", p.byNode)
	}
	for i := range nodes {
		p.byNode[&nodes[i]] = &Value{}
	}
	p.reset()
	if p.byNode != nil {
		t.Errorf("a map of %d parts is kept for the next step", len(nodes))
	}
}
