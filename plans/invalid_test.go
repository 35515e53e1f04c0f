package plans

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// head is the top level every step-focused case shares. It is four lines
// long, so the first step of a case written as head + "  - id: ..." starts
// on line 5.
const head = "identifier: t\nname: T\ndescription: d\nsteps:\n"

// prob builds an expected problem (or note) of a file loaded as plan.yaml.
func prob(code string, line, col int, path, msg string) Problem {
	return Problem{Code: code, Pos: Pos{File: "plan.yaml", Line: line, Col: col}, Path: path, Message: msg}
}

// invalidCase is a plan that Load must refuse. want is every problem of
// the report, in report order; notes are notes that must be among the
// report's notes.
type invalidCase struct {
	name  string
	src   string
	want  []Problem
	notes []Problem
}

var invalidCases = []invalidCase{
	// ---- the document ----
	{
		name: "yaml syntax: unclosed flow list",
		src:  "identifier: a\nname: [b\n",
		want: []Problem{
			prob(CodeYAMLSyntax, 2, 7, "", "YAML: sequence end token ']' not found"),
		},
	},
	{
		name: "yaml syntax: mapping value in wrong place",
		src:  "identifier: a\n  name: b\n",
		want: []Problem{
			prob(CodeYAMLSyntax, 1, 13, "", "YAML: mapping value is not allowed in this context"),
		},
	},
	{
		name: "yaml syntax: tab indentation",
		src:  "identifier: a\nname: b\n\tdescription: c\n",
		want: []Problem{
			prob(CodeYAMLSyntax, 3, 1, "", "YAML: a tab indents this line; YAML indents with spaces only"),
		},
	},
	{
		name: "yaml syntax: unknown anchor",
		src:  head + "  - id: E0\n    tool_name: user__x\n    input: *nowhere\n",
		want: []Problem{
			prob(CodeYAMLSyntax, 7, 12, "", "YAML: unknown anchor 'nowhere' referenced"),
		},
	},
	{
		name: "yaml syntax: unclosed flow mapping in a step",
		src:  head + "  - id: E0\n    tool_name: user__x\n    input: {a: 1\n  - id: E1\n    tool_name: user__y\n    input: {}\n",
		want: []Problem{
			prob(CodeYAMLSyntax, 8, 3, "", "YAML: ',' or '}' must be specified"),
		},
	},
	{
		name: "empty file",
		src:  "",
		want: []Problem{
			prob(CodeYAMLSyntax, 1, 1, "", "the file is empty; a plan needs identifier, name, description and steps"),
		},
	},
	{
		name: "comments only",
		src:  "# a plan will go here\n\n",
		want: []Problem{
			prob(CodeYAMLSyntax, 1, 1, "", "the file is empty; a plan needs identifier, name, description and steps"),
		},
	},
	{
		name: "two documents",
		src:  head + "  - id: E0\n    tool_name: user__x\n    input: {}\n---\nidentifier: u\n",
		want: []Problem{
			prob(CodeYAMLSyntax, 8, 1, "", "a plan file holds one YAML document; move this one to a file of its own"),
		},
	},
	{
		name: "plan is a list",
		src:  "- id: E0\n  tool_name: user__x\n",
		want: []Problem{
			prob(CodeWrongType, 1, 1, "", "a plan must be a mapping, not a list"),
		},
	},
	{
		name: "plan is a scalar",
		src:  "just text\n",
		want: []Problem{
			prob(CodeWrongType, 1, 1, "", "a plan must be a mapping, not a string"),
		},
	},

	{
		name: "alias inside the value it names",
		src:  head + "  - id: E0\n    tool_name: user__x\n    input: &args {again: *args}\n",
		want: []Problem{
			prob(CodeYAMLSyntax, 7, 26, "", "alias *args refers to a value that contains it; a value cannot contain itself"),
		},
	},
	{
		name: "alias cycle through a body",
		src:  head + "  - &loop\n    id: E0\n    tool_name: decide\n    input:\n      infer: again?\n      then: [*loop]\n",
		want: []Problem{
			prob(CodeYAMLSyntax, 10, 14, "", "alias *loop refers to a value that contains it; a value cannot contain itself"),
		},
	},
	{
		name: "aliases that expand exponentially",
		src:  laughs(),
		want: []Problem{
			prob(CodeYAMLSyntax, 1, 1, "", "aliases expand this file from the 150 values it spells out to more than 100300; write the repeated parts out instead"),
		},
	},

	// ---- top level ----
	{
		name: "missing every required field",
		src:  "exemplars: [hi]\n",
		want: []Problem{
			prob(CodeMissingField, 1, 1, "", "a plan needs 'identifier'"),
			prob(CodeMissingField, 1, 1, "", "a plan needs 'name'"),
			prob(CodeMissingField, 1, 1, "", "a plan needs 'description'"),
			prob(CodeMissingField, 1, 1, "", "a plan needs 'steps'"),
		},
	},
	{
		name: "missing identifier",
		src:  "name: T\ndescription: d\nsteps:\n  - id: E0\n    tool_name: user__x\n    input: {}\n",
		want: []Problem{
			prob(CodeMissingField, 1, 1, "", "a plan needs 'identifier'"),
		},
	},
	{
		name: "unknown top-level field with did-you-mean",
		src:  "identifier: t\nname: T\ndescripton: d\nsteps:\n  - id: E0\n    tool_name: user__x\n    input: {}\n",
		want: []Problem{
			prob(CodeMissingField, 1, 1, "", "a plan needs 'description'"),
			prob(CodeUnknownField, 3, 1, "", "unknown field 'descripton' in a plan; did you mean 'description'?"),
		},
	},
	{
		name: "unknown top-level field without a close match",
		src:  head + "  - id: E0\n    tool_name: user__x\n    input: {}\nversion: 2\n",
		want: []Problem{
			prob(CodeUnknownField, 8, 1, "", "unknown field 'version' in a plan (fields: identifier, name, description, exemplars, requires_servers, read_only, input_schema, steps, solver, output)"),
		},
	},
	{
		name: "camelCase and snake_case spelling of one field",
		src:  head + "  - id: E0\n    tool_name: user__x\n    input: {}\nrequires_servers: [linear]\nrequiresServers: [github]\n",
		want: []Problem{
			prob(CodeDuplicateField, 9, 1, "", "'requiresServers' and 'requires_servers' (line 8) are two spellings of one field; keep 'requires_servers'"),
		},
		notes: []Problem{
			prob(CodeCamelCase, 9, 1, "", "'requiresServers' is spelled 'requires_servers'; the camelCase spelling loads, snake_case is the one to write"),
		},
	},
	{
		name: "identifier not tool-name-safe",
		src:  "identifier: weekly report\nname: T\ndescription: d\nsteps:\n  - id: E0\n    tool_name: user__x\n    input: {}\n",
		want: []Problem{
			prob(CodeInvalidValue, 1, 13, "", "identifier 'weekly report' must be tool-name-safe: letters, digits, '_' and '-' only (it becomes plan__weekly report)"),
		},
	},
	{
		name: "identifier is a number",
		src:  "identifier: 42\nname: T\ndescription: d\nsteps:\n  - id: E0\n    tool_name: user__x\n    input: {}\n",
		want: []Problem{
			prob(CodeWrongType, 1, 13, "", "'identifier' must be a string, not a number ('42')"),
		},
	},
	{
		name: "name is a mapping",
		src:  "identifier: t\nname: {first: T}\ndescription: d\nsteps:\n  - id: E0\n    tool_name: user__x\n    input: {}\n",
		want: []Problem{
			prob(CodeWrongType, 2, 7, "", "'name' must be a string, not a mapping"),
		},
	},
	{
		name: "exemplars not a list",
		src:  head + "  - id: E0\n    tool_name: user__x\n    input: {}\nexemplars: what is urgent\n",
		want: []Problem{
			prob(CodeWrongType, 8, 12, "", "'exemplars' must be a list of strings, not a string"),
		},
	},
	{
		name: "requires_servers item not a string",
		src:  head + "  - id: E0\n    tool_name: user__x\n    input: {}\nrequires_servers: [linear, {name: github}]\n",
		want: []Problem{
			prob(CodeWrongType, 8, 28, "", "'requires_servers' must be a list of strings; this item is a mapping"),
		},
	},
	{
		name: "steps not a list",
		src:  "identifier: t\nname: T\ndescription: d\nsteps: {E0: user__x}\n",
		want: []Problem{
			prob(CodeWrongType, 4, 8, "", "'steps' must be a list of steps, not a mapping"),
		},
	},
	{
		name: "steps empty",
		src:  "identifier: t\nname: T\ndescription: d\nsteps: []\n",
		want: []Problem{
			prob(CodeNoSteps, 4, 8, "", "plan has no steps"),
		},
	},
	{
		name: "steps null",
		src:  "identifier: t\nname: T\ndescription: d\nsteps:\n",
		want: []Problem{
			prob(CodeWrongType, 4, 7, "", "'steps' must be a list of steps, not null"),
		},
	},
	{
		name: "a sequence as a key of a step input",
		src:  head + "  - id: E0\n    tool_name: user__x\n    input: {? [a, b] : c}\n",
		want: []Problem{
			prob(CodeWrongType, 7, 15, "E0", "a key must be a string, not a list"),
		},
	},
	{
		name: "a mapping as a field name of a step",
		src:  head + "  - id: E0\n    tool_name: user__x\n    input: {}\n    ? {a: b}\n    : c\n",
		want: []Problem{
			prob(CodeWrongType, 8, 7, "E0", "a field name must be a string, not a mapping"),
		},
	},
	{
		name: "a field written twice in a control step is reported once",
		src:  head + "  - id: E0\n    tool_name: ask\n    input:\n      prompt: a\n      prompt: b\n      output_schema: {type: object}\n",
		want: []Problem{
			prob(CodeDuplicateField, 9, 7, "E0", "'prompt' is already set at line 8; keep one"),
		},
	},
	{
		name: "merge key at top level brings its fields",
		src:  "base: &b {name: T}\n<<: *b\nidentifier: t\n",
		want: []Problem{
			prob(CodeUnknownField, 1, 1, "", "unknown field 'base' in a plan (fields: identifier, name, description, exemplars, requires_servers, read_only, input_schema, steps, solver, output)"),
			prob(CodeMissingField, 1, 1, "", "a plan needs 'description'"),
			prob(CodeMissingField, 1, 1, "", "a plan needs 'steps'"),
		},
	},
	{
		name: "merge key of a scalar",
		src:  head + "  - id: E0\n    tool_name: user__x\n    input: {<<: 3, a: 1}\n",
		want: []Problem{
			prob(CodeWrongType, 7, 17, "E0", "'<<' merges mappings (or a list of them), not a number"),
		},
	},

	// ---- finish ----
	{
		name: "solver and output together",
		src:  head + "  - id: E0\n    tool_name: user__x\n    input: {}\nsolver:\n  query_to_answer: sum it up\n  data: {x: \"{{E0}}\"}\noutput:\n  x: \"{{E0}}\"\n",
		want: []Problem{
			prob(CodeExclusiveFields, 11, 1, "", "'solver' and 'output' are mutually exclusive: a plan finishes with a report or with structured output, not both"),
		},
	},
	{
		name: "solver unknown field with did-you-mean",
		src:  head + "  - id: E0\n    tool_name: user__x\n    input: {}\nsolver:\n  query_to_answer: sum it up\n  data: {x: \"{{E0}}\"}\n  sytem_prompt: be brief\n",
		want: []Problem{
			prob(CodeUnknownField, 11, 3, "", "unknown field 'sytem_prompt' in the solver; did you mean 'system_prompt'?"),
		},
	},
	{
		name: "solver not a mapping",
		src:  head + "  - id: E0\n    tool_name: user__x\n    input: {}\nsolver: write a report\n",
		want: []Problem{
			prob(CodeWrongType, 8, 9, "", "the solver must be a mapping, not a string"),
		},
	},
	{
		name: "solver data not a mapping",
		src:  head + "  - id: E0\n    tool_name: user__x\n    input: {}\nsolver:\n  query_to_answer: sum it up\n  data: \"{{E0}}\"\n",
		want: []Problem{
			prob(CodeWrongType, 10, 9, "", "'data' must be a mapping, not a string"),
		},
	},
	{
		name: "solver query_to_answer not a string",
		src:  head + "  - id: E0\n    tool_name: user__x\n    input: {}\nsolver:\n  query_to_answer: [a, b]\n  data: {x: 1}\n",
		want: []Problem{
			prob(CodeWrongType, 9, 20, "", "'query_to_answer' must be a string, not a list"),
		},
	},
	{
		name: "output not a mapping",
		src:  head + "  - id: E0\n    tool_name: user__x\n    input: {}\noutput: \"{{E0}}\"\n",
		want: []Problem{
			prob(CodeWrongType, 8, 9, "", "'output' must be a mapping, not a string"),
		},
	},
	{
		name: "output reads an unknown step",
		src:  head + "  - id: fetch\n    tool_name: user__x\n    input: {}\noutput:\n  count: \"{{fetsh.count}}\"\n",
		want: []Problem{
			prob(CodeUnknownReference, 9, 11, "", "references fetsh, which is not `input` or an earlier step; did you mean fetch?"),
		},
	},
	{
		name: "solver reads a step inside a map body",
		src:  head + "  - id: E0\n    tool_name: map\n    input:\n      over: \"{{input.ids}}\"\n      do:\n        - id: E00\n          tool_name: user__x\n          input: {id: \"{{item}}\"}\nsolver:\n  query_to_answer: \"Report on {{E00.title}}\"\n  data: {all: \"{{E0.results}}\"}\n",
		want: []Problem{
			prob(CodeBodyScope, 14, 31, "", "references E00, which is inside the map body of E0 and invisible outside it; read {{E0.results}} instead"),
		},
	},
	{
		name: "solver reads item",
		src:  head + "  - id: E0\n    tool_name: user__x\n    input: {}\nsolver:\n  query_to_answer: summarize\n  data: {it: \"{{item}}\"}\n",
		want: []Problem{
			prob(CodePseudoRootScope, 10, 15, "", "'item' exists only inside a map, reduce or filter body"),
		},
	},

	// ---- input_schema ----
	{
		name: "input_schema does not compile",
		src:  "identifier: t\nname: T\ndescription: d\ninput_schema:\n  type: objekt\nsteps:\n  - id: E0\n    tool_name: user__x\n    input: {}\n",
		want: []Problem{
			prob(CodeInvalidSchema, 5, 9, "", "'input_schema' is not a valid JSON Schema at 'type': 'objekt' is not a JSON Schema type (array, boolean, integer, null, number, object, string); did you mean 'object'?"),
		},
	},
	{
		name: "input_schema is not an object schema",
		src:  "identifier: t\nname: T\ndescription: d\ninput_schema:\n  type: string\nsteps:\n  - id: E0\n    tool_name: user__x\n    input: {}\n",
		want: []Problem{
			prob(CodeInvalidSchema, 5, 3, "", "'input_schema' must describe an object (type: object): inputs are read as {{input.<name>}}"),
		},
	},
	{
		name: "input_schema is a list",
		src:  "identifier: t\nname: T\ndescription: d\ninput_schema: [project]\nsteps:\n  - id: E0\n    tool_name: user__x\n    input: {}\n",
		want: []Problem{
			prob(CodeInvalidSchema, 4, 15, "", "'input_schema' must be a JSON Schema (a mapping), not a list"),
		},
	},
	{
		name: "input_schema with remote ref",
		src:  "identifier: t\nname: T\ndescription: d\ninput_schema:\n  type: object\n  properties:\n    p: {$ref: \"https://example.com/p.json\"}\nsteps:\n  - id: E0\n    tool_name: user__x\n    input: {}\n",
		want: []Problem{
			prob(CodeInvalidSchema, 5, 3, "", "'input_schema' is not a valid JSON Schema: $ref to https://example.com/p.json leaves the schema; only local references (#/...) are allowed"),
		},
	},

	// ---- steps ----
	{
		name: "step is a string",
		src:  head + "  - user__x\n",
		want: []Problem{
			prob(CodeWrongType, 5, 5, "", "a step must be a mapping, not a string"),
		},
	},
	{
		name: "step missing id",
		src:  head + "  - tool_name: user__x\n    input: {}\n",
		want: []Problem{
			prob(CodeMissingField, 5, 5, "", "a step needs 'id' (letters, digits and '_', not starting with a digit)"),
		},
	},
	{
		name: "step missing tool_name and input",
		src:  head + "  - id: E0\n    reasoning: nothing yet\n",
		want: []Problem{
			prob(CodeMissingField, 5, 5, "E0", "a step needs 'tool_name'"),
			prob(CodeMissingField, 5, 5, "E0", "a step needs 'input'"),
		},
	},
	{
		name: "step id starts with a digit",
		src:  head + "  - id: 1st\n    tool_name: user__x\n    input: {}\n",
		want: []Problem{
			prob(CodeInvalidID, 5, 9, "1st", "id '1st' is not an identifier: use letters, digits and '_', not starting with a digit"),
		},
	},
	{
		name: "step id with a hyphen",
		src:  head + "  - id: fetch-issues\n    tool_name: user__x\n    input: {}\n",
		want: []Problem{
			prob(CodeInvalidID, 5, 9, "fetch-issues", "id 'fetch-issues' is not an identifier: use letters, digits and '_', not starting with a digit"),
		},
	},
	{
		name: "step id is a number",
		src:  head + "  - id: 7\n    tool_name: user__x\n    input: {}\n",
		want: []Problem{
			prob(CodeWrongType, 5, 9, "7", "'id' must be a string, not a number ('7')"),
		},
	},
	{
		name: "step id shadows input",
		src:  head + "  - id: input\n    tool_name: user__x\n    input: {}\n",
		want: []Problem{
			prob(CodeReservedID, 5, 9, "input", "id 'input' shadows the template root 'input'; reserved roots are input, item, index, accumulator, length"),
		},
	},
	{
		name: "step id shadows length",
		src:  head + "  - id: length\n    tool_name: user__x\n    input: {}\n",
		want: []Problem{
			prob(CodeReservedID, 5, 9, "length", "id 'length' shadows the template root 'length'; reserved roots are input, item, index, accumulator, length"),
		},
	},
	{
		name: "body step id shadows accumulator",
		src:  head + "  - id: E0\n    tool_name: reduce\n    input:\n      over: \"{{input.xs}}\"\n      do:\n        - id: accumulator\n          tool_name: user__x\n          input: {}\n",
		want: []Problem{
			prob(CodeReservedID, 10, 15, "E0/do.*/accumulator", "id 'accumulator' shadows the template root 'accumulator'; reserved roots are input, item, index, accumulator, length"),
		},
	},
	{
		name: "duplicate top-level ids",
		src:  head + "  - id: E0\n    tool_name: user__x\n    input: {}\n  - id: E0\n    tool_name: user__y\n    input: {}\n",
		want: []Problem{
			prob(CodeDuplicateID, 8, 9, "E0", "id 'E0' is already used by the step at line 5; ids are unique across the plan, bodies included"),
		},
	},
	{
		name: "body id reuses a top-level id",
		src:  head + "  - id: E0\n    tool_name: user__x\n    input: {}\n  - id: E1\n    tool_name: map\n    input:\n      over: \"{{E0.xs}}\"\n      do:\n        - id: E0\n          tool_name: user__y\n          input: {}\n",
		want: []Problem{
			prob(CodeDuplicateID, 13, 15, "E1/do.*/E0", "id 'E0' is already used by the step at line 5; ids are unique across the plan, bodies included"),
		},
	},
	{
		name: "same id in then and else",
		src:  head + "  - id: E1\n    tool_name: decide\n    input:\n      if: {value: \"{{input.n}}\", op: gt, to: 1}\n      then:\n        - id: note\n          tool_name: user__a\n          input: {}\n      else:\n        - id: note\n          tool_name: user__b\n          input: {}\n",
		want: []Problem{
			prob(CodeDuplicateID, 14, 15, "E1/else/note", "id 'note' is already used by the step at line 10; ids are unique across the plan, bodies included"),
		},
	},
	{
		name: "unknown step field with did-you-mean",
		src:  head + "  - id: E0\n    tool_nmae: user__x\n    input: {}\n",
		want: []Problem{
			prob(CodeMissingField, 5, 5, "E0", "a step needs 'tool_name'"),
			prob(CodeUnknownField, 6, 5, "E0", "unknown field 'tool_nmae' in a step; did you mean 'tool_name'?"),
		},
	},
	{
		name: "unknown step field without a close match",
		src:  head + "  - id: E0\n    tool_name: user__x\n    input: {}\n    retries: 3\n",
		want: []Problem{
			prob(CodeUnknownField, 8, 5, "E0", "unknown field 'retries' in a step (fields: id, tool_name, input, reasoning, timeout_secs)"),
		},
	},
	{
		name: "a step's timeout_secs of zero",
		src:  head + "  - id: E0\n    tool_name: user__x\n    input: {}\n    timeout_secs: 0\n",
		want: []Problem{
			prob(CodeInvalidValue, 8, 19, "E0", "'timeout_secs' must be a whole number above 0, not 0"),
		},
	},
	{
		name: "a timeout_secs on a step that calls no exec or MCP tool",
		src:  head + "  - id: E0\n    tool_name: builtin__reshape\n    input: { shape: {} }\n    timeout_secs: 5\n",
		want: []Problem{
			prob(CodeInvalidValue, 8, 19, "E0", "'timeout_secs' bounds the call of an exec or MCP tool, and builtin__reshape is neither: remove it (an agent step bounds its calls with tool_timeout and llm_timeout_seconds in its input)"),
		},
	},
	{
		name: "step both spellings of tool_name",
		src:  head + "  - id: E0\n    tool_name: user__x\n    toolName: user__y\n    input: {}\n",
		want: []Problem{
			prob(CodeDuplicateField, 7, 5, "E0", "'toolName' and 'tool_name' (line 6) are two spellings of one field; keep 'tool_name'"),
		},
		notes: []Problem{
			prob(CodeCamelCase, 7, 5, "E0", "'toolName' is spelled 'tool_name'; the camelCase spelling loads, snake_case is the one to write"),
		},
	},
	{
		name: "tool_name is a list",
		src:  head + "  - id: E0\n    tool_name: [user__x]\n    input: {}\n",
		want: []Problem{
			prob(CodeWrongType, 6, 16, "E0", "'tool_name' must be a string, not a list"),
		},
	},
	{
		name: "reasoning is a number",
		src:  head + "  - id: E0\n    tool_name: user__x\n    input: {}\n    reasoning: 3\n",
		want: []Problem{
			prob(CodeWrongType, 8, 16, "E0", "'reasoning' must be a string, not a number ('3')"),
		},
	},
	{
		name: "catalog tool input is a string",
		src:  head + "  - id: E0\n    tool_name: user__x\n    input: \"{{input.q}}\"\n",
		want: []Problem{
			prob(CodeWrongType, 7, 12, "E0", "'input' must be a mapping of the tool's arguments, not a string"),
		},
	},
	{
		name: "key written twice in a tool input",
		src:  head + "  - id: E0\n    tool_name: user__x\n    input:\n      q: a\n      q: b\n",
		want: []Problem{
			prob(CodeDuplicateField, 9, 7, "E0", "key 'q' is written twice in this mapping"),
		},
	},
	{
		name: "key written twice in a tool input of many keys",
		src:  head + "  - id: E0\n    tool_name: user__x\n    input: {a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7, h: 8, i: 9, c: 10}\n",
		want: []Problem{
			prob(CodeDuplicateField, 7, 67, "E0", "key 'c' is written twice in this mapping"),
		},
	},
	{
		name: "control input is a string",
		src:  head + "  - id: E0\n    tool_name: map\n    input: \"{{input.xs}}\"\n",
		want: []Problem{
			prob(CodeWrongType, 7, 12, "E0", "the map input must be a mapping, not a string"),
		},
	},

	{
		name: "agent input is null",
		src:  head + "  - id: E0\n    tool_name: agent\n    input:\n",
		want: []Problem{
			prob(CodeWrongType, 7, 11, "E0", "the agent input must be a mapping, not null"),
		},
	},
	{
		name: "ask input is a list",
		src:  head + "  - id: E0\n    tool_name: ask\n    input: [\"Which channel?\"]\n",
		want: []Problem{
			prob(CodeWrongType, 7, 12, "E0", "the ask input must be a mapping, not a list"),
		},
	},

	// ---- tool names ----
	{
		name: "tool name without a namespace",
		src:  head + "  - id: E0\n    tool_name: list_issues\n    input: {}\n",
		want: []Problem{
			prob(CodeMalformedToolName, 6, 16, "E0", "'list_issues' is not a tool name; catalog tools are namespaced (server__tool, user__name, builtin__name, plan__identifier), control steps are exit, ask, agent, decide, filter, map, reduce"),
		},
	},
	{
		name: "tool name close to a control step",
		src:  head + "  - id: E0\n    tool_name: mapp\n    input: {}\n",
		want: []Problem{
			prob(CodeMalformedToolName, 6, 16, "E0", "'mapp' is not a tool name; did you mean 'map'?"),
		},
	},
	{
		name: "tool name with an empty tool part",
		src:  head + "  - id: E0\n    tool_name: linear__\n    input: {}\n",
		want: []Problem{
			prob(CodeMalformedToolName, 6, 16, "E0", "'linear__' is not a tool name; catalog tools are namespaced (server__tool, user__name, builtin__name, plan__identifier), control steps are exit, ask, agent, decide, filter, map, reduce"),
		},
	},
	{
		name: "tool name with a space",
		src:  head + "  - id: E0\n    tool_name: linear__list issues\n    input: {}\n",
		want: []Problem{
			prob(CodeMalformedToolName, 6, 16, "E0", "'linear__list issues' is not a tool name; catalog tools are namespaced (server__tool, user__name, builtin__name, plan__identifier), control steps are exit, ask, agent, decide, filter, map, reduce"),
		},
	},
	{
		name: "workbench tool",
		src:  head + "  - id: E0\n    tool_name: workbench__open_plan\n    input: {}\n",
		want: []Problem{
			prob(CodeWorkbenchTool, 6, 16, "E0", "'workbench__open_plan' is a workbench tool: workbench__* tools exist only inside the workbench's chat agent, never in a plan"),
		},
	},
	{
		name: "workbench tool in a decide branch",
		src:  head + "  - id: E0\n    tool_name: decide\n    input:\n      infer: is it late?\n      then:\n        tool_name: workbench__notify\n        input: {}\n",
		want: []Problem{
			prob(CodeWorkbenchTool, 10, 20, "E0/then", "'workbench__notify' is a workbench tool: workbench__* tools exist only inside the workbench's chat agent, never in a plan"),
		},
	},

	// ---- bodies ----
	{
		name: "single-call body with an id",
		src:  head + "  - id: E0\n    tool_name: map\n    input:\n      over: \"{{input.xs}}\"\n      do:\n        id: E00\n        tool_name: user__x\n        input: {}\n",
		want: []Problem{
			prob(CodeUnknownField, 10, 9, "E0/do.*", "a single-call body has no id; to name its step, write the body as a list of steps"),
		},
	},
	{
		name: "body is a string",
		src:  head + "  - id: E0\n    tool_name: decide\n    input:\n      infer: is it late?\n      then: user__x\n",
		want: []Problem{
			prob(CodeWrongType, 9, 13, "E0", "'then' must be a tool call ({tool_name, input}) or a list of steps, not a string"),
		},
	},
	{
		name: "body is an empty list",
		src:  head + "  - id: E0\n    tool_name: map\n    input:\n      over: \"{{input.xs}}\"\n      do: []\n",
		want: []Problem{
			prob(CodeMissingField, 9, 11, "E0", "'do' is an empty list; a body needs a tool call or at least one step"),
		},
	},
	{
		name: "body step missing id",
		src:  head + "  - id: E0\n    tool_name: decide\n    input:\n      infer: is it late?\n      then:\n        - tool_name: user__x\n          input: {}\n",
		want: []Problem{
			prob(CodeMissingField, 10, 11, "E0/then", "a step needs 'id' (letters, digits and '_', not starting with a digit)"),
		},
	},
	{
		name: "single-call body missing input",
		src:  head + "  - id: E0\n    tool_name: map\n    input:\n      over: \"{{input.xs}}\"\n      do:\n        tool_name: user__x\n",
		want: []Problem{
			prob(CodeMissingField, 10, 9, "E0/do.*", "a body call needs 'input'"),
		},
	},
	{
		name: "single-call body unknown field",
		src:  head + "  - id: E0\n    tool_name: map\n    input:\n      over: \"{{input.xs}}\"\n      do:\n        tool_name: user__x\n        inputs: {}\n        input: {}\n",
		want: []Problem{
			prob(CodeUnknownField, 11, 9, "E0/do.*", "unknown field 'inputs' in a body call; did you mean 'input'?"),
		},
	},

	// ---- nesting ----
	{
		name: "decide in a decide branch",
		src:  head + "  - id: E0\n    tool_name: decide\n    input:\n      infer: is it late?\n      then:\n        - id: E1\n          tool_name: decide\n          input:\n            infer: very late?\n            then: {tool_name: user__x, input: {}}\n",
		want: []Problem{
			prob(CodeNestedControl, 11, 22, "E0/then/E1", "decide cannot appear inside a decide branch; for nested control flow, put it in a plan and call it as plan__<identifier>"),
		},
	},
	{
		name: "map in a map body",
		src:  head + "  - id: E0\n    tool_name: map\n    input:\n      over: \"{{input.groups}}\"\n      do:\n        tool_name: map\n        input:\n          over: \"{{item.members}}\"\n          do: {tool_name: user__x, input: {}}\n",
		want: []Problem{
			prob(CodeNestedControl, 10, 20, "E0/do.*", "map cannot appear inside a map body; for nested control flow, put it in a plan and call it as plan__<identifier>"),
		},
	},
	{
		name: "reduce in a decide else branch",
		src:  head + "  - id: E0\n    tool_name: decide\n    input:\n      infer: is it late?\n      then: {tool_name: user__x, input: {}}\n      else:\n        - id: E1\n          tool_name: reduce\n          input:\n            over: \"{{input.xs}}\"\n            do: {tool_name: user__x, input: {}}\n",
		want: []Problem{
			prob(CodeNestedControl, 12, 22, "E0/else/E1", "reduce cannot appear inside a decide branch; for nested control flow, put it in a plan and call it as plan__<identifier>"),
		},
	},
	{
		name: "exit in a map body",
		src:  head + "  - id: E0\n    tool_name: map\n    input:\n      over: \"{{input.xs}}\"\n      do:\n        - id: stop\n          tool_name: exit\n          input: {status: error}\n",
		want: []Problem{
			prob(CodeNestedControl, 11, 22, "E0/do.*/stop", "exit cannot appear inside a map body (it may appear in a decide branch); to stop on a condition, filter first or exit after the map"),
		},
	},
	{
		name: "exit in a reduce body single call",
		src:  head + "  - id: E0\n    tool_name: reduce\n    input:\n      over: \"{{input.xs}}\"\n      do:\n        tool_name: exit\n        input: {status: success}\n",
		want: []Problem{
			prob(CodeNestedControl, 10, 20, "E0/do.*", "exit cannot appear inside a reduce body (it may appear in a decide branch); to stop on a condition, filter first or exit after the reduce"),
		},
	},

	// ---- exit ----
	{
		name: "exit missing status",
		src:  head + "  - id: E0\n    tool_name: exit\n    input:\n      message: done\n",
		want: []Problem{
			prob(CodeMissingField, 8, 7, "E0", "the exit input needs 'status'"),
		},
	},
	{
		name: "exit status misspelled",
		src:  head + "  - id: E0\n    tool_name: exit\n    input:\n      status: sucess\n",
		want: []Problem{
			prob(CodeInvalidValue, 8, 15, "E0", "'status' must be success or error, not 'sucess'; did you mean 'success'?"),
		},
	},
	{
		name: "exit status not a value",
		src:  head + "  - id: E0\n    tool_name: exit\n    input:\n      status: abort\n",
		want: []Problem{
			prob(CodeInvalidValue, 8, 15, "E0", "'status' must be success or error, not 'abort'"),
		},
	},
	{
		name: "exit when and infer together",
		src:  head + "  - id: E0\n    tool_name: exit\n    input:\n      when: {value: \"{{input.n}}\", op: eq, to: 0}\n      infer: is it empty?\n      status: success\n",
		want: []Problem{
			prob(CodeExclusiveFields, 9, 7, "E0", "'when' and 'infer' are mutually exclusive: a gate is a comparison or a question, not both"),
		},
	},
	{
		name: "exit unknown field with did-you-mean",
		src:  head + "  - id: E0\n    tool_name: exit\n    input:\n      status: success\n      mesage: bye\n",
		want: []Problem{
			prob(CodeUnknownField, 9, 7, "E0", "unknown field 'mesage' in the exit input; did you mean 'message'?"),
		},
	},
	{
		name: "exit output not a mapping",
		src:  head + "  - id: E0\n    tool_name: exit\n    input:\n      status: success\n      output: [1, 2]\n",
		want: []Problem{
			prob(CodeWrongType, 9, 15, "E0", "'output' must be a mapping, not a list"),
		},
	},
	{
		name: "exit message not a string",
		src:  head + "  - id: E0\n    tool_name: exit\n    input:\n      status: error\n      message: {text: no}\n",
		want: []Problem{
			prob(CodeWrongType, 9, 16, "E0", "'message' must be a string, not a mapping"),
		},
	},

	// ---- decide ----
	{
		name: "decide with neither if nor infer",
		src:  head + "  - id: E0\n    tool_name: decide\n    input:\n      then: {tool_name: user__x, input: {}}\n",
		want: []Problem{
			prob(CodeMissingField, 8, 7, "E0", "the decide input needs exactly one of 'if' (a comparison) or 'infer' (a yes/no question for the judge role)"),
		},
	},
	{
		name: "decide with if and infer",
		src:  head + "  - id: E0\n    tool_name: decide\n    input:\n      if: {value: \"{{input.n}}\", op: gt, to: 0}\n      infer: more than none?\n      then: {tool_name: user__x, input: {}}\n",
		want: []Problem{
			prob(CodeExclusiveFields, 9, 7, "E0", "'if' and 'infer' are mutually exclusive: a gate is a comparison or a question, not both"),
		},
	},
	{
		name: "decide missing then",
		src:  head + "  - id: E0\n    tool_name: decide\n    input:\n      infer: is it late?\n      else: {tool_name: user__x, input: {}}\n",
		want: []Problem{
			prob(CodeMissingField, 8, 7, "E0", "the decide input needs 'then'"),
		},
	},
	{
		name: "decide infer not a string",
		src:  head + "  - id: E0\n    tool_name: decide\n    input:\n      infer: [is it late]\n      then: {tool_name: user__x, input: {}}\n",
		want: []Problem{
			prob(CodeWrongType, 8, 14, "E0", "'infer' must be a string, not a list"),
		},
	},
	{
		name: "decide unknown field with did-you-mean",
		src:  head + "  - id: E0\n    tool_name: decide\n    input:\n      infer: is it late?\n      then: {tool_name: user__x, input: {}}\n      esle: {tool_name: user__y, input: {}}\n",
		want: []Problem{
			prob(CodeUnknownField, 10, 7, "E0", "unknown field 'esle' in the decide input; did you mean 'else'?"),
		},
	},

	// ---- gates ----
	{
		name: "gate is a string",
		src:  head + "  - id: E0\n    tool_name: exit\n    input:\n      when: \"{{input.n}} > 3\"\n      status: error\n",
		want: []Problem{
			prob(CodeWrongType, 8, 13, "E0", "the 'when' gate ({value, op, to}) must be a mapping, not a string"),
		},
	},
	{
		name: "gate unknown field with did-you-mean",
		src:  head + "  - id: E0\n    tool_name: decide\n    input:\n      if: {vaule: \"{{input.n}}\", op: gt, to: 1}\n      then: {tool_name: user__x, input: {}}\n",
		want: []Problem{
			prob(CodeMissingField, 8, 11, "E0", "the 'if' gate ({value, op, to}) needs 'value'"),
			prob(CodeUnknownField, 8, 12, "E0", "unknown field 'vaule' in the 'if' gate ({value, op, to}); did you mean 'value'?"),
		},
	},
	{
		name: "gate missing op",
		src:  head + "  - id: E0\n    tool_name: exit\n    input:\n      when: {value: \"{{input.n}}\", to: 1}\n      status: error\n",
		want: []Problem{
			prob(CodeMissingField, 8, 13, "E0", "the 'when' gate ({value, op, to}) needs 'op'"),
		},
	},
	{
		name: "gate unknown op with did-you-mean",
		src:  head + "  - id: E0\n    tool_name: exit\n    input:\n      when: {value: \"{{input.n}}\", op: gtt, to: 1}\n      status: error\n",
		want: []Problem{
			prob(CodeInvalidValue, 8, 40, "E0", "unknown op 'gtt'; did you mean 'gt'? (ops: eq, ne, gt, lt, gte, lte, empty, not_empty, contains)"),
		},
	},
	{
		name: "gate unknown op without a close match",
		src:  head + "  - id: E0\n    tool_name: exit\n    input:\n      when: {value: \"{{input.n}}\", op: greater_than, to: 1}\n      status: error\n",
		want: []Problem{
			prob(CodeInvalidValue, 8, 40, "E0", "unknown op 'greater_than' (ops: eq, ne, gt, lt, gte, lte, empty, not_empty, contains)"),
		},
	},
	{
		name: "gate eq without to",
		src:  head + "  - id: E0\n    tool_name: exit\n    input:\n      when: {value: \"{{input.n}}\", op: eq}\n      status: error\n",
		want: []Problem{
			prob(CodeMissingField, 8, 13, "E0", "the 'when' gate ({value, op, to}) needs 'to'"),
		},
	},
	{
		name: "gate missing value",
		src:  head + "  - id: E0\n    tool_name: exit\n    input:\n      when: {op: empty}\n      status: error\n",
		want: []Problem{
			prob(CodeMissingField, 8, 13, "E0", "the 'when' gate ({value, op, to}) needs 'value'"),
		},
	},
	{
		name: "gate ordering op on a string literal",
		src:  head + "  - id: E0\n    tool_name: exit\n    input:\n      when: {value: \"{{input.n}}\", op: gte, to: ten}\n      status: error\n",
		want: []Problem{
			prob(CodeWrongType, 8, 49, "E0", "op gte orders numbers, but 'to' is a string"),
		},
	},
	{
		name: "gate ordering op with a non-number value",
		src:  head + "  - id: E0\n    tool_name: exit\n    input:\n      when: {value: [1, 2], op: lt, to: 3}\n      status: error\n",
		want: []Problem{
			prob(CodeWrongType, 8, 21, "E0", "op lt orders numbers, but 'value' is a list"),
		},
	},
	{
		name: "gate ordering op on a boolean",
		src:  head + "  - id: E0\n    tool_name: decide\n    input:\n      if: {value: \"{{input.n}}\", op: lte, to: true}\n      then: {tool_name: user__x, input: {}}\n",
		want: []Problem{
			prob(CodeWrongType, 8, 47, "E0", "op lte orders numbers, but 'to' is a boolean"),
		},
	},

	// ---- filter ----
	{
		name: "filter missing over",
		src:  head + "  - id: E0\n    tool_name: filter\n    input:\n      where: {value: \"{{item.ok}}\", op: eq, to: true}\n",
		want: []Problem{
			prob(CodeMissingField, 8, 7, "E0", "the filter input needs 'over'"),
		},
	},
	{
		name: "filter with neither where nor infer",
		src:  head + "  - id: E0\n    tool_name: filter\n    input:\n      over: \"{{input.xs}}\"\n",
		want: []Problem{
			prob(CodeMissingField, 8, 7, "E0", "the filter input needs exactly one of 'where' (a comparison) or 'infer' (a yes/no question for the judge role)"),
		},
	},
	{
		name: "filter with where and infer",
		src:  head + "  - id: E0\n    tool_name: filter\n    input:\n      over: \"{{input.xs}}\"\n      where: {value: \"{{item.ok}}\", op: eq, to: true}\n      infer: \"is {{item}} relevant?\"\n",
		want: []Problem{
			prob(CodeExclusiveFields, 10, 7, "E0", "'where' and 'infer' are mutually exclusive: a gate is a comparison or a question, not both"),
		},
	},
	{
		name: "filter concurrency zero",
		src:  head + "  - id: E0\n    tool_name: filter\n    input:\n      over: \"{{input.xs}}\"\n      infer: \"is {{item}} relevant?\"\n      concurrency: 0\n",
		want: []Problem{
			prob(CodeInvalidValue, 10, 20, "E0", "'concurrency' must be a whole number above 0, not 0"),
		},
	},
	{
		name: "filter concurrency a string",
		src:  head + "  - id: E0\n    tool_name: filter\n    input:\n      over: \"{{input.xs}}\"\n      infer: \"is {{item}} relevant?\"\n      concurrency: four\n",
		want: []Problem{
			prob(CodeWrongType, 10, 20, "E0", "'concurrency' must be a whole number above 0, not a string ('four')"),
		},
	},
	{
		name: "filter unknown field with did-you-mean",
		src:  head + "  - id: E0\n    tool_name: filter\n    input:\n      over: \"{{input.xs}}\"\n      were: {value: \"{{item.ok}}\", op: eq, to: true}\n",
		want: []Problem{
			prob(CodeMissingField, 8, 7, "E0", "the filter input needs exactly one of 'where' (a comparison) or 'infer' (a yes/no question for the judge role)"),
			prob(CodeUnknownField, 9, 7, "E0", "unknown field 'were' in the filter input; did you mean 'where'?"),
		},
	},

	// ---- map / reduce ----
	{
		name: "map missing over and do",
		src:  head + "  - id: E0\n    tool_name: map\n    input:\n      concurrency: 2\n",
		want: []Problem{
			prob(CodeMissingField, 8, 7, "E0", "the map input needs 'over'"),
			prob(CodeMissingField, 8, 7, "E0", "the map input needs 'do'"),
		},
	},
	{
		name: "map concurrency negative",
		src:  head + "  - id: E0\n    tool_name: map\n    input:\n      over: \"{{input.xs}}\"\n      concurrency: -2\n      do: {tool_name: user__x, input: {}}\n",
		want: []Problem{
			prob(CodeInvalidValue, 9, 20, "E0", "'concurrency' must be a whole number above 0, not -2"),
		},
	},
	{
		name: "map concurrency a float",
		src:  head + "  - id: E0\n    tool_name: map\n    input:\n      over: \"{{input.xs}}\"\n      concurrency: 2.5\n      do: {tool_name: user__x, input: {}}\n",
		want: []Problem{
			prob(CodeWrongType, 9, 20, "E0", "'concurrency' must be a whole number above 0, not '2.5', which is not whole"),
		},
	},
	{
		name: "map unknown field with did-you-mean",
		src:  head + "  - id: E0\n    tool_name: map\n    input:\n      over: \"{{input.xs}}\"\n      concurency: 2\n      do: {tool_name: user__x, input: {}}\n",
		want: []Problem{
			prob(CodeUnknownField, 9, 7, "E0", "unknown field 'concurency' in the map input; did you mean 'concurrency'?"),
		},
	},
	{
		name: "map initial belongs to reduce",
		src:  head + "  - id: E0\n    tool_name: map\n    input:\n      over: \"{{input.xs}}\"\n      initial: 0\n      do: {tool_name: user__x, input: {}}\n",
		want: []Problem{
			prob(CodeUnknownField, 9, 7, "E0", "unknown field 'initial' in the map input (fields: over, do, concurrency)"),
		},
	},
	{
		name: "reduce with concurrency",
		src:  head + "  - id: E0\n    tool_name: reduce\n    input:\n      over: \"{{input.xs}}\"\n      concurrency: 4\n      do: {tool_name: user__x, input: {}}\n",
		want: []Problem{
			prob(CodeUnknownField, 9, 7, "E0", "reduce has no 'concurrency': every item reads the accumulator the previous one produced, so a fold is sequential; map concurrently first, then reduce over its results"),
		},
	},
	{
		name: "reduce unknown field with did-you-mean",
		src:  head + "  - id: E0\n    tool_name: reduce\n    input:\n      over: \"{{input.xs}}\"\n      intial: 0\n      do: {tool_name: user__x, input: {}}\n",
		want: []Problem{
			prob(CodeUnknownField, 9, 7, "E0", "unknown field 'intial' in the reduce input; did you mean 'initial'?"),
		},
	},
	{
		name: "reduce missing over",
		src:  head + "  - id: E0\n    tool_name: reduce\n    input:\n      initial: {total: 0}\n      do: {tool_name: user__x, input: {}}\n",
		want: []Problem{
			prob(CodeMissingField, 8, 7, "E0", "the reduce input needs 'over'"),
		},
	},
	{
		name: "reduce missing do",
		src:  head + "  - id: E0\n    tool_name: reduce\n    input:\n      over: \"{{input.xs}}\"\n",
		want: []Problem{
			prob(CodeMissingField, 8, 7, "E0", "the reduce input needs 'do'"),
		},
	},

	// ---- templates ----
	{
		name: "template unclosed tag in a plain string",
		src:  head + "  - id: E0\n    tool_name: user__x\n    input:\n      q: team {{input.team\n",
		want: []Problem{
			prob(CodeTemplateSyntax, 8, 15, "E0", "unclosed tag '{{': add '}}' after the path"),
		},
	},
	{
		name: "template unclosed tag in a quoted string",
		src:  head + "  - id: E0\n    tool_name: user__x\n    input: {q: \"team {{input.team\"}\n",
		want: []Problem{
			prob(CodeTemplateSyntax, 7, 22, "E0", "unclosed tag '{{': add '}}' after the path"),
		},
	},
	{
		name: "template error in a literal block",
		src:  head + "  - id: E0\n    tool_name: user__x\n    input:\n      body: |\n        Hello,\n        the team is {{input.team..name}}.\n",
		want: []Problem{
			prob(CodeTemplateSyntax, 10, 34, "E0", "empty segment in path 'input.team..name': separate keys with exactly one dot, e.g. E0.values.0"),
		},
	},
	{
		name: "template comment tag",
		src:  head + "  - id: E0\n    tool_name: user__x\n    input: {q: \"{{! note }}\"}\n",
		want: []Problem{
			prob(CodeTemplateSyntax, 7, 17, "E0", "comments ({{! … }}) are not supported: the template language is logic-less"),
		},
	},
	{
		name: "template partial tag",
		src:  head + "  - id: E0\n    tool_name: user__x\n    input: {q: \"x {{> header}}\"}\n",
		want: []Problem{
			prob(CodeTemplateSyntax, 7, 19, "E0", "partials ({{> … }}) are not supported: the template language is logic-less; put shared text in a step"),
		},
	},
	{
		name: "template unclosed section",
		src:  head + "  - id: E0\n    tool_name: user__x\n    input: {q: \"{{#input.xs}}{{name}}\"}\n",
		want: []Problem{
			prob(CodeTemplateSyntax, 7, 17, "E0", "unclosed section 'input.xs': add {{/input.xs}}"),
		},
	},
	{
		name: "template closer that does not match",
		src:  head + "  - id: E0\n    tool_name: user__x\n    input: {q: \"{{#input.xs}}{{name}}{{/input.ys}}\"}\n",
		want: []Problem{
			prob(CodeTemplateSyntax, 7, 38, "E0", "'{{/input.ys}}' does not match the open section 'input.xs': close that section first with {{/input.xs}}"),
		},
	},
	{
		name: "template function call",
		src:  head + "  - id: E0\n    tool_name: user__x\n    input: {q: \"{{upper input.team}}\"}\n",
		want: []Problem{
			prob(CodeTemplateSyntax, 7, 24, "E0", "space inside path 'upper input.team': a tag holds one path, and the template language has no functions or arguments"),
		},
	},
	{
		name: "template position after non-ASCII text",
		src:  head + "  - id: E0\n    tool_name: user__x\n    input: {q: \"équipe ü {{input.team\"}\n",
		want: []Problem{
			prob(CodeTemplateSyntax, 7, 26, "E0", "unclosed tag '{{': add '}}' after the path"),
		},
	},
	{
		name: "template position after a doubled single quote",
		src:  head + "  - id: E0\n    tool_name: user__x\n    input:\n      q: 'it''s {{input.team'\n",
		want: []Problem{
			prob(CodeTemplateSyntax, 8, 17, "E0", "unclosed tag '{{': add '}}' after the path"),
		},
	},
	{
		name: "template position in a block with an indentation indicator",
		src:  head + "  - id: E0\n    tool_name: user__x\n    input:\n      q: |2\n          indented {{input.team\n",
		want: []Problem{
			prob(CodeTemplateSyntax, 9, 20, "E0", "unclosed tag '{{': add '}}' after the path"),
		},
	},
	{
		name: "template position in a block after a blank line",
		src:  head + "  - id: E0\n    tool_name: user__x\n    input:\n      q: |\n\n        then {{input.team\n",
		want: []Problem{
			prob(CodeTemplateSyntax, 10, 14, "E0", "unclosed tag '{{': add '}}' after the path"),
		},
	},
	{
		name: "template placed after an escape in a double-quoted string",
		src:  head + "  - id: E0\n    tool_name: user__x\n    input:\n      q: \"say \\\"hi\\\" {{input.team\"\n",
		want: []Problem{
			prob(CodeTemplateSyntax, 8, 22, "E0", "unclosed tag '{{': add '}}' after the path"),
		},
	},
	{
		name: "template placed in a folded block",
		src:  head + "  - id: E0\n    tool_name: user__x\n    input:\n      q: >\n        folded\n        then {{input.team\n",
		want: []Problem{
			prob(CodeTemplateSyntax, 10, 14, "E0", "unclosed tag '{{': add '}}' after the path"),
		},
	},
	{
		name: "template placed in a multi-line plain string",
		src:  head + "  - id: E0\n    tool_name: user__x\n    input:\n      q: team and\n        more {{input.team\n",
		want: []Problem{
			prob(CodeTemplateSyntax, 9, 14, "E0", "unclosed tag '{{': add '}}' after the path"),
		},
	},
	{
		name: "template error in a gate value",
		src:  head + "  - id: E0\n    tool_name: exit\n    input:\n      when: {value: \"{{input.n}\", op: eq, to: 0}\n      status: success\n",
		want: []Problem{
			prob(CodeTemplateSyntax, 8, 22, "E0", "unclosed tag '{{': add '}}' after the path"),
		},
	},
	{
		name: "template error in an agent prompt",
		src:  head + "  - id: E0\n    tool_name: agent\n    input:\n      prompt: \"Look at {{}}\"\n      output_schema: {type: object}\n",
		want: []Problem{
			prob(CodeTemplateSyntax, 8, 24, "E0", "empty tag '{{}}': put a path between the braces, e.g. {{input.name}}"),
		},
	},
	{
		name: "template error in output",
		src:  head + "  - id: E0\n    tool_name: user__x\n    input: {}\noutput:\n  n: \"{{{E0.n}}}\"\n",
		want: []Problem{
			prob(CodeTemplateSyntax, 9, 7, "", "triple braces ({{{ … }}}) are not supported: values are never HTML-escaped, so write {{path}}"),
		},
	},

	// ---- references ----
	{
		name: "reference forward",
		src:  head + "  - id: E0\n    tool_name: user__x\n    input: {a: \"{{E1.id}}\"}\n  - id: E1\n    tool_name: user__y\n    input: {}\n",
		want: []Problem{
			prob(CodeForwardReference, 7, 17, "E0", "references E1, which is not `input` or an earlier step (E1 runs later, at line 8)"),
		},
	},
	{
		name: "reference to itself",
		src:  head + "  - id: E0\n    tool_name: user__x\n    input: {a: \"{{E0.id}}\"}\n",
		want: []Problem{
			prob(CodeForwardReference, 7, 17, "E0", "references its own result (E0); a step reads only `input` and earlier steps"),
		},
	},
	{
		name: "reference to nothing with did-you-mean",
		src:  head + "  - id: fetch\n    tool_name: user__x\n    input: {}\n  - id: E1\n    tool_name: user__y\n    input: {a: \"{{fecth.items}}\"}\n",
		want: []Problem{
			prob(CodeUnknownReference, 10, 17, "E1", "references fecth, which is not `input` or an earlier step; did you mean fetch?"),
		},
	},
	{
		name: "reference to nothing without a close match",
		src:  head + "  - id: fetch\n    tool_name: user__x\n    input: {}\n  - id: E1\n    tool_name: user__y\n    input: {a: \"{{zebra.items}}\"}\n",
		want: []Problem{
			prob(CodeUnknownReference, 10, 17, "E1", "references zebra, which is not `input` or an earlier step (available: input, fetch)"),
		},
	},
	{
		name: "reference into a decide branch",
		src:  head + "  - id: E0\n    tool_name: decide\n    input:\n      infer: is it late?\n      then:\n        - id: E00\n          tool_name: user__x\n          input: {}\n  - id: E1\n    tool_name: user__y\n    input: {a: \"{{E00.id}}\"}\n",
		want: []Problem{
			prob(CodeBodyScope, 15, 17, "E1", "references E00, which is inside the then branch of E0 and invisible outside it; read {{E0.result}} instead"),
		},
	},
	{
		name: "reference into a map body",
		src:  head + "  - id: E0\n    tool_name: map\n    input:\n      over: \"{{input.xs}}\"\n      do:\n        - id: E00\n          tool_name: user__x\n          input: {}\n  - id: E1\n    tool_name: user__y\n    input: {a: \"{{E00.id}}\"}\n",
		want: []Problem{
			prob(CodeBodyScope, 15, 17, "E1", "references E00, which is inside the map body of E0 and invisible outside it; read {{E0.results}} instead"),
		},
	},
	{
		name: "reference from then into else",
		src:  head + "  - id: E0\n    tool_name: decide\n    input:\n      infer: is it late?\n      then:\n        - id: A\n          tool_name: user__x\n          input: {b: \"{{B.id}}\"}\n      else:\n        - id: B\n          tool_name: user__y\n          input: {}\n",
		want: []Problem{
			prob(CodeBodyScope, 12, 23, "E0/then/A", "references B, which is inside the else branch of E0 and invisible outside it; read {{E0.result}} instead"),
		},
	},
	{
		name: "reference forward inside a body",
		src:  head + "  - id: E0\n    tool_name: map\n    input:\n      over: \"{{input.xs}}\"\n      do:\n        - id: A\n          tool_name: user__x\n          input: {b: \"{{B.id}}\"}\n        - id: B\n          tool_name: user__y\n          input: {}\n",
		want: []Problem{
			prob(CodeForwardReference, 12, 23, "E0/do.*/A", "references B, which is not `input` or an earlier step (B runs later, at line 13)"),
		},
	},
	{
		name: "reference in a mixed string among text",
		src:  head + "  - id: E0\n    tool_name: user__x\n    input: {q: \"team {{input.team}} by {{E9.owner}}\"}\n",
		want: []Problem{
			prob(CodeUnknownReference, 7, 40, "E0", "references E9, which is not `input` or an earlier step (available: input)"),
		},
	},
	{
		name: "reference forward in an exit message",
		src:  head + "  - id: E0\n    tool_name: exit\n    input:\n      status: success\n      message: \"done: {{E1.n}}\"\n  - id: E1\n    tool_name: user__x\n    input: {}\n",
		want: []Problem{
			prob(CodeForwardReference, 9, 23, "E0", "references E1, which is not `input` or an earlier step (E1 runs later, at line 10)"),
		},
	},
	{
		name: "reference forward in an agent prompt",
		src:  head + "  - id: E0\n    tool_name: agent\n    input:\n      prompt: \"Use {{E1.notes}}\"\n      output_schema: {type: object}\n  - id: E1\n    tool_name: user__x\n    input: {}\n",
		want: []Problem{
			prob(CodeForwardReference, 8, 20, "E0", "references E1, which is not `input` or an earlier step (E1 runs later, at line 10)"),
		},
	},
	{
		name: "reference to nothing in an ask default",
		src:  head + "  - id: E0\n    tool_name: ask\n    input:\n      prompt: Which?\n      output_schema:\n        type: object\n        properties:\n          c: {type: string}\n      when_unanswered: default\n      default: {c: \"{{E7.c}}\"}\n",
		want: []Problem{
			prob(CodeUnknownReference, 14, 21, "E0", "references E7, which is not `input` or an earlier step (available: input)"),
		},
	},
	{
		name: "item outside any body",
		src:  head + "  - id: E0\n    tool_name: user__x\n    input: {a: \"{{item.id}}\"}\n",
		want: []Problem{
			prob(CodePseudoRootScope, 7, 17, "E0", "'item' exists only inside a map, reduce or filter body"),
		},
	},
	{
		name: "index in a decide branch",
		src:  head + "  - id: E0\n    tool_name: decide\n    input:\n      infer: is it late?\n      then: {tool_name: user__x, input: {n: \"{{index}}\"}}\n",
		want: []Problem{
			prob(CodePseudoRootScope, 9, 46, "E0/then", "'index' exists only inside a map, reduce or filter body"),
		},
	},
	{
		name: "accumulator in a map body",
		src:  head + "  - id: E0\n    tool_name: map\n    input:\n      over: \"{{input.xs}}\"\n      do: {tool_name: user__x, input: {acc: \"{{accumulator}}\"}}\n",
		want: []Problem{
			prob(CodePseudoRootScope, 9, 46, "E0/do.*", "'accumulator' exists only inside a reduce body"),
		},
	},
	{
		name: "item in map over",
		src:  head + "  - id: E0\n    tool_name: map\n    input:\n      over: \"{{item.children}}\"\n      do: {tool_name: user__x, input: {}}\n",
		want: []Problem{
			prob(CodePseudoRootScope, 8, 14, "E0", "'item.children' cannot be read here: this map's item exists only per item, after 'over' has rendered"),
		},
	},
	{
		name: "accumulator in reduce initial",
		src:  head + "  - id: E0\n    tool_name: reduce\n    input:\n      over: \"{{input.xs}}\"\n      initial: {seed: \"{{accumulator}}\"}\n      do: {tool_name: user__x, input: {}}\n",
		want: []Problem{
			prob(CodePseudoRootScope, 9, 24, "E0", "'accumulator' cannot be read here: this reduce's accumulator exists only per item, after 'over' has rendered"),
		},
	},
	{
		name: "index in filter over",
		src:  head + "  - id: E0\n    tool_name: filter\n    input:\n      over: \"{{index}}\"\n      where: {value: \"{{item}}\", op: not_empty}\n",
		want: []Problem{
			prob(CodePseudoRootScope, 8, 14, "E0", "'index' cannot be read here: this filter's index exists only per item, after 'over' has rendered"),
		},
	},
	{
		name: "item in filter over at top level",
		src:  head + "  - id: E0\n    tool_name: filter\n    input:\n      over: \"{{item.files}}\"\n      where: {value: \"{{item}}\", op: not_empty}\n",
		want: []Problem{
			prob(CodePseudoRootScope, 8, 14, "E0", "'item.files' cannot be read here: this filter's item exists only per item, after 'over' has rendered"),
		},
	},
	{
		name: "item in an exit gate",
		src:  head + "  - id: E0\n    tool_name: exit\n    input:\n      when: {value: \"{{item}}\", op: empty}\n      status: success\n",
		want: []Problem{
			prob(CodePseudoRootScope, 8, 22, "E0", "'item' exists only inside a map, reduce or filter body"),
		},
	},
	{
		name: "loop variable outside a section",
		src:  head + "  - id: E0\n    tool_name: user__x\n    input: {q: \"n={{@index}}\"}\n",
		want: []Problem{
			prob(CodeLoopVariableScope, 7, 19, "E0", "'@index' is defined only inside a section ({{#list}}…{{/list}})"),
		},
	},
	{
		name: "loop variable @last outside a section in solver",
		src:  head + "  - id: E0\n    tool_name: user__x\n    input: {}\nsolver:\n  query_to_answer: \"{{#@last}}end{{/@last}}\"\n  data: {x: \"{{E0}}\"}\n",
		want: []Problem{
			prob(CodeLoopVariableScope, 9, 21, "", "'@last' is defined only inside a section ({{#list}}…{{/list}})"),
		},
	},
	{
		name: "forward root inside a section",
		src:  head + "  - id: E0\n    tool_name: user__x\n    input: {q: \"{{#input.xs}}{{title}} {{E5.summary}}{{/input.xs}}\"}\n",
		want: []Problem{
			prob(CodeUnknownReference, 7, 40, "E0", "references E5, which is not `input` or an earlier step (available: input); in a section, dotted paths start at a root: read the item's fields with bare keys or a nested section"),
		},
	},
	{
		name: "dotted path inside a section is root-anchored",
		src:  head + "  - id: E0\n    tool_name: user__x\n    input: {}\n  - id: E1\n    tool_name: user__y\n    input: {q: \"{{#E0.items}}{{title}} by {{author.name}}{{/E0.items}}\"}\n",
		want: []Problem{
			prob(CodeUnknownReference, 10, 43, "E1", "references author, which is not `input` or an earlier step (available: input, E0); in a section, dotted paths start at a root: read the item's fields with bare keys or a nested section"),
		},
	},
	{
		name: "body step reads the map it belongs to",
		src:  head + "  - id: E0\n    tool_name: map\n    input:\n      over: \"{{input.xs}}\"\n      do: {tool_name: user__x, input: {n: \"{{E0.count}}\"}}\n",
		want: []Problem{
			prob(CodeForwardReference, 9, 44, "E0/do.*", "references E0, the map step this body belongs to; its result exists only once the whole map has run, so read it from a later step"),
		},
	},
	{
		name: "reference to a decide's own body from its gate",
		src:  head + "  - id: E0\n    tool_name: decide\n    input:\n      if: {value: \"{{E00.ok}}\", op: eq, to: true}\n      then:\n        - id: E00\n          tool_name: user__x\n          input: {}\n",
		want: []Problem{
			prob(CodeBodyScope, 8, 20, "E0", "references E00, which is inside the then branch of E0, this very step, and has not run when this renders; a later step can read {{E0.result}}"),
		},
	},

	// ---- agent ----
	{
		name: "agent prompt not a string",
		src:  head + "  - id: E0\n    tool_name: agent\n    input:\n      prompt: {task: review}\n      output_schema: {type: object}\n",
		want: []Problem{
			prob(CodeWrongType, 8, 15, "E0", "'prompt' must be a string, not a mapping"),
		},
	},
	{
		name: "agent missing prompt and output_schema",
		src:  head + "  - id: E0\n    tool_name: agent\n    input:\n      tools: [\"linear__*\"]\n",
		want: []Problem{
			prob(CodeMissingField, 8, 7, "E0", "the agent input needs 'prompt'"),
			prob(CodeMissingField, 8, 7, "E0", "the agent input needs 'output_schema'"),
		},
	},
	{
		name: "agent output_schema not an object type",
		src:  head + "  - id: E0\n    tool_name: agent\n    input:\n      prompt: list them\n      output_schema: {type: array, items: {type: string}}\n",
		want: []Problem{
			prob(CodeInvalidSchema, 9, 22, "E0", "'output_schema' must be an object-typed JSON Schema (type: object)"),
		},
	},
	{
		name: "agent output_schema a string",
		src:  head + "  - id: E0\n    tool_name: agent\n    input:\n      prompt: list them\n      output_schema: object\n",
		want: []Problem{
			prob(CodeInvalidSchema, 9, 22, "E0", "'output_schema' must be a JSON Schema (a mapping), not a string"),
		},
	},
	{
		name: "agent output_schema does not compile",
		src:  head + "  - id: E0\n    tool_name: agent\n    input:\n      prompt: list them\n      output_schema:\n        type: object\n        required: yes\n",
		want: []Problem{
			prob(CodeInvalidSchema, 11, 19, "E0", "'output_schema' is not a valid JSON Schema at 'required': got string, want array"),
		},
	},
	{
		name: "agent output_schema without a type",
		src:  head + "  - id: E0\n    tool_name: agent\n    input:\n      prompt: list them\n      output_schema: {description: anything}\n",
		want: []Problem{
			prob(CodeInvalidSchema, 9, 22, "E0", "'output_schema' must be an object-typed JSON Schema (type: object)"),
		},
	},
	{
		name: "agent tools empty",
		src:  head + "  - id: E0\n    tool_name: agent\n    input:\n      prompt: list them\n      output_schema: {type: object}\n      tools: []\n",
		want: []Problem{
			prob(CodeInvalidValue, 10, 14, "E0", "'tools' is empty: [] is not \"no tools\"; omit 'tools' to give the agent the whole catalog, or list the tools it needs"),
		},
	},
	{
		name: "agent tools a string",
		src:  head + "  - id: E0\n    tool_name: agent\n    input:\n      prompt: list them\n      output_schema: {type: object}\n      tools: \"linear__*\"\n",
		want: []Problem{
			prob(CodeWrongType, 10, 14, "E0", "'tools' must be a list of strings, not a string"),
		},
	},
	{
		name: "agent tools include plan_and_execute",
		src:  head + "  - id: E0\n    tool_name: agent\n    input:\n      prompt: list them\n      output_schema: {type: object}\n      tools: [\"linear__*\", plan_and_execute]\n",
		want: []Problem{
			prob(CodeUnavailableToAgent, 10, 28, "E0", "plan_and_execute is never available inside an agent: nested planning loops have no cost boundary; compose with plan__* tools instead"),
		},
	},
	{
		name: "agent tools include a control step",
		src:  head + "  - id: E0\n    tool_name: agent\n    input:\n      prompt: list them\n      output_schema: {type: object}\n      tools: [map]\n",
		want: []Problem{
			prob(CodeUnavailableToAgent, 10, 15, "E0", "'map' is a control step, not a tool an agent can call"),
		},
	},
	{
		name: "agent tools naming workbench tools",
		src:  head + "  - id: E0\n    tool_name: agent\n    input:\n      prompt: list them\n      output_schema: {type: object}\n      tools: [\"workbench__*\"]\n",
		want: []Problem{
			prob(CodeWorkbenchTool, 10, 15, "E0", "'workbench__*' names workbench tools, which exist only inside the workbench's chat agent, never in a plan"),
		},
	},
	{
		name: "agent tools entry without a namespace",
		src:  head + "  - id: E0\n    tool_name: agent\n    input:\n      prompt: list them\n      output_schema: {type: object}\n      tools: [search]\n",
		want: []Problem{
			prob(CodeMalformedToolName, 10, 15, "E0", "'tools' entry 'search' is not a tool name: catalog tools are namespaced (server__tool, user__name, builtin__name, plan__identifier); a pattern uses '*', as in 'search__*'"),
		},
	},
	{
		name: "agent tools pattern with a slash",
		src:  head + "  - id: E0\n    tool_name: agent\n    input:\n      prompt: list them\n      output_schema: {type: object}\n      tools: [\"linear/*\"]\n",
		want: []Problem{
			prob(CodeInvalidValue, 10, 15, "E0", "'tools' pattern 'linear/*' may hold only letters, digits, '_', '-', '.' and the wildcard '*'"),
		},
	},
	{
		name: "agent max_iterations zero",
		src:  head + "  - id: E0\n    tool_name: agent\n    input:\n      prompt: list them\n      output_schema: {type: object}\n      max_iterations: 0\n",
		want: []Problem{
			prob(CodeInvalidValue, 10, 23, "E0", "'max_iterations' must be a whole number above 0, not 0"),
		},
	},
	{
		name: "agent max_iterations a string",
		src:  head + "  - id: E0\n    tool_name: agent\n    input:\n      prompt: list them\n      output_schema: {type: object}\n      max_iterations: \"8\"\n",
		want: []Problem{
			prob(CodeWrongType, 10, 23, "E0", "'max_iterations' must be a whole number above 0, not a string ('8')"),
		},
	},
	{
		name: "agent llm_timeout_seconds zero",
		src:  head + "  - id: E0\n    tool_name: agent\n    input:\n      prompt: list them\n      output_schema: {type: object}\n      llm_timeout_seconds: 0\n",
		want: []Problem{
			prob(CodeInvalidValue, 10, 28, "E0", "'llm_timeout_seconds' must be a whole number above 0, not 0"),
		},
	},
	{
		name: "agent max_tool_calls negative",
		src:  head + "  - id: E0\n    tool_name: agent\n    input:\n      prompt: list them\n      output_schema: {type: object}\n      max_tool_calls: -5\n",
		want: []Problem{
			prob(CodeInvalidValue, 10, 23, "E0", "'max_tool_calls' must be a whole number above 0, not -5"),
		},
	},
	{
		name: "agent max_fan_out a float",
		src:  head + "  - id: E0\n    tool_name: agent\n    input:\n      prompt: list them\n      output_schema: {type: object}\n      max_fan_out: 1.5\n",
		want: []Problem{
			prob(CodeWrongType, 10, 20, "E0", "'max_fan_out' must be a whole number above 0, not '1.5', which is not whole"),
		},
	},
	{
		name: "agent tool_timeout with a unit",
		src:  head + "  - id: E0\n    tool_name: agent\n    input:\n      prompt: list them\n      output_schema: {type: object}\n      tool_timeout: 30s\n",
		want: []Problem{
			prob(CodeWrongType, 10, 21, "E0", "'tool_timeout' must be a whole number above 0, not a string ('30s')"),
		},
	},
	{
		name: "agent model not a string",
		src:  head + "  - id: E0\n    tool_name: agent\n    input:\n      prompt: list them\n      output_schema: {type: object}\n      model: [fast]\n",
		want: []Problem{
			prob(CodeWrongType, 10, 14, "E0", "'model' must be a string, not a list"),
		},
	},
	{
		name: "agent unknown field with did-you-mean",
		src:  head + "  - id: E0\n    tool_name: agent\n    input:\n      prompt: list them\n      output_schema: {type: object}\n      max_iteration: 3\n",
		want: []Problem{
			prob(CodeUnknownField, 10, 7, "E0", "unknown field 'max_iteration' in the agent input; did you mean 'max_iterations'?"),
		},
	},
	{
		name: "agent both spellings of output_schema",
		src:  head + "  - id: E0\n    tool_name: agent\n    input:\n      prompt: list them\n      outputSchema: {type: object}\n      output_schema: {type: object}\n",
		want: []Problem{
			prob(CodeDuplicateField, 10, 7, "E0", "'output_schema' and 'outputSchema' (line 9) are two spellings of one field; keep 'output_schema'"),
		},
		notes: []Problem{
			prob(CodeCamelCase, 9, 7, "E0", "'outputSchema' is spelled 'output_schema'; the camelCase spelling loads, snake_case is the one to write"),
		},
	},
	{
		name: "agent validation_exhaustion mode default without default_output",
		src:  head + "  - id: E0\n    tool_name: agent\n    input:\n      prompt: classify\n      output_schema: {type: object}\n      validation_exhaustion:\n        threshold: 2\n        mode: default\n",
		want: []Problem{
			prob(CodeMissingField, 12, 15, "E0", "'validation_exhaustion.mode: default' requires 'default_output' (nothing to substitute on exhaustion)"),
		},
	},
	{
		name: "agent validation_exhaustion default_output without output_schema",
		src:  head + "  - id: E0\n    tool_name: agent\n    input:\n      prompt: classify\n      validation_exhaustion:\n        mode: default\n        default_output: {category: other}\n",
		want: []Problem{
			prob(CodeMissingField, 8, 7, "E0", "the agent input needs 'output_schema'"),
			prob(CodeMissingField, 11, 25, "E0", "'validation_exhaustion.default_output' requires the step to declare 'output_schema' (an undeclared schema makes the default unvalidatable)"),
		},
	},
	{
		name: "agent validation_exhaustion default_output not conforming",
		src:  head + "  - id: E0\n    tool_name: agent\n    input:\n      prompt: classify\n      output_schema:\n        type: object\n        required: [category]\n        properties:\n          category: {type: string}\n      validation_exhaustion:\n        mode: default\n        default_output: {category: 3}\n",
		want: []Problem{
			prob(CodeDefaultMismatch, 16, 36, "E0", "'validation_exhaustion.default_output' does not validate against the step's own 'output_schema': /category: got number, want string"),
		},
	},
	{
		name: "agent validation_exhaustion threshold zero",
		src:  head + "  - id: E0\n    tool_name: agent\n    input:\n      prompt: classify\n      output_schema: {type: object}\n      validation_exhaustion: {threshold: 0}\n",
		want: []Problem{
			prob(CodeInvalidValue, 10, 42, "E0", "'threshold' must be a whole number above 0, not 0"),
		},
	},
	{
		name: "agent validation_exhaustion bad mode",
		src:  head + "  - id: E0\n    tool_name: agent\n    input:\n      prompt: classify\n      output_schema: {type: object}\n      validation_exhaustion: {mode: retry}\n",
		want: []Problem{
			prob(CodeInvalidValue, 10, 37, "E0", "'validation_exhaustion.mode' must be fail or default, not 'retry'"),
		},
	},
	{
		name: "agent validation_exhaustion unknown field",
		src:  head + "  - id: E0\n    tool_name: agent\n    input:\n      prompt: classify\n      output_schema: {type: object}\n      validation_exhaustion: {treshold: 2}\n",
		want: []Problem{
			prob(CodeUnknownField, 10, 31, "E0", "unknown field 'treshold' in validation_exhaustion; did you mean 'threshold'?"),
		},
	},
	{
		name: "agent validation_exhaustion not a mapping",
		src:  head + "  - id: E0\n    tool_name: agent\n    input:\n      prompt: classify\n      output_schema: {type: object}\n      validation_exhaustion: 3\n",
		want: []Problem{
			prob(CodeWrongType, 10, 30, "E0", "validation_exhaustion must be a mapping, not a number"),
		},
	},
	{
		name: "agent structured_output not strict",
		src:  head + "  - id: E0\n    tool_name: agent\n    input:\n      prompt: classify\n      output_schema: {type: object}\n      structured_output: json\n",
		want: []Problem{
			prob(CodeInvalidValue, 10, 26, "E0", "'structured_output' has one value, strict, not 'json'; omit the field to leave strict mode off"),
		},
	},
	{
		name: "agent structured_output strict refused",
		src:  head + "  - id: E0\n    tool_name: agent\n    input:\n      prompt: classify\n      output_schema:\n        type: object\n        required: [category]\n        properties:\n          category: {type: string}\n      structured_output: strict\n",
		want: []Problem{
			prob("missing_additional_properties", 14, 26, "E0", "'structured_output: strict' is not eligible for this step's schema — add 'additionalProperties: false' at 'the schema root'"),
		},
	},
	{
		name: "agent structured_output strict refused minimum",
		src:  head + "  - id: E0\n    tool_name: agent\n    input:\n      prompt: score it\n      max_iterations: 1\n      output_schema:\n        type: object\n        additionalProperties: false\n        required: [score]\n        properties:\n          score: {type: integer, minimum: 0}\n      structured_output: strict\n",
		want: []Problem{
			prob("unsupported_keyword", 15, 18, "E0", "'structured_output: strict' is not eligible for this step's schema — remove 'minimum' at 'properties.score' (Anthropic's strict mode rejects it)"),
		},
	},
	{
		name: "agent in a map body with a bad budget",
		src:  head + "  - id: E0\n    tool_name: map\n    input:\n      over: \"{{input.incidents}}\"\n      do:\n        tool_name: agent\n        input:\n          prompt: \"Diagnose {{item.id}}\"\n          output_schema: {type: object}\n          max_iterations: 0\n",
		want: []Problem{
			prob(CodeInvalidValue, 14, 27, "E0/do.*", "'max_iterations' must be a whole number above 0, not 0"),
		},
	},
	{
		name: "agent in a map body list reading accumulator",
		src:  head + "  - id: E0\n    tool_name: map\n    input:\n      over: \"{{input.incidents}}\"\n      do:\n        - id: diagnose\n          tool_name: agent\n          input:\n            prompt: \"Diagnose {{item.id}} after {{accumulator}}\"\n            output_schema: {type: object}\n",
		want: []Problem{
			prob(CodePseudoRootScope, 13, 49, "E0/do.*/diagnose", "'accumulator' exists only inside a reduce body"),
		},
	},

	{
		name: "filter in a map body with an unknown op",
		src:  head + "  - id: E0\n    tool_name: map\n    input:\n      over: \"{{input.prs}}\"\n      do:\n        tool_name: filter\n        input:\n          over: \"{{item.files}}\"\n          where: {value: \"{{item.size}}\", op: bigger, to: 10}\n",
		want: []Problem{
			prob(CodeInvalidValue, 13, 47, "E0/do.*", "unknown op 'bigger' (ops: eq, ne, gt, lt, gte, lte, empty, not_empty, contains)"),
		},
	},
	{
		name: "filter in a decide branch without a gate",
		src:  head + "  - id: E0\n    tool_name: decide\n    input:\n      infer: any?\n      then:\n        - id: keep\n          tool_name: filter\n          input: {over: \"{{input.xs}}\"}\n",
		want: []Problem{
			prob(CodeMissingField, 12, 18, "E0/then/keep", "the filter input needs exactly one of 'where' (a comparison) or 'infer' (a yes/no question for the judge role)"),
		},
	},
	{
		name: "template syntax error in a body step",
		src:  head + "  - id: E0\n    tool_name: reduce\n    input:\n      over: \"{{input.xs}}\"\n      do:\n        - id: add\n          tool_name: user__add\n          input: {a: \"{{accumulator\", b: \"{{item}}\"}\n",
		want: []Problem{
			prob(CodeTemplateSyntax, 12, 23, "E0/do.*/add", "unclosed tag '{{': add '}}' after the path"),
		},
	},
	{
		name: "agent in a reduce body with empty tools",
		src:  head + "  - id: E0\n    tool_name: reduce\n    input:\n      over: \"{{input.xs}}\"\n      do:\n        tool_name: agent\n        input:\n          prompt: \"fold {{item}} into {{accumulator}}\"\n          output_schema: {type: object}\n          tools: []\n",
		want: []Problem{
			prob(CodeInvalidValue, 14, 18, "E0/do.*", "'tools' is empty: [] is not \"no tools\"; omit 'tools' to give the agent the whole catalog, or list the tools it needs"),
		},
	},
	{
		name: "agent in a decide branch with strict refused",
		src:  head + "  - id: E0\n    tool_name: decide\n    input:\n      infer: deep dive?\n      then:\n        - id: dive\n          tool_name: agent\n          input:\n            prompt: dig\n            output_schema: {type: object, properties: {x: {type: string}}}\n            structured_output: strict\n",
		want: []Problem{
			prob("missing_additional_properties", 15, 32, "E0/then/dive", "'structured_output: strict' is not eligible for this step's schema — add 'additionalProperties: false' at 'the schema root'"),
		},
	},

	// ---- ask ----
	{
		name: "ask missing prompt",
		src:  head + "  - id: E0\n    tool_name: ask\n    input:\n      output_schema: {type: object, properties: {ok: {type: boolean}}}\n",
		want: []Problem{
			prob(CodeMissingField, 8, 7, "E0", "the ask input needs 'prompt'"),
		},
	},
	{
		name: "ask nested object property",
		src:  head + "  - id: E0\n    tool_name: ask\n    input:\n      prompt: Where?\n      output_schema:\n        type: object\n        properties:\n          place:\n            type: object\n            properties: {city: {type: string}}\n",
		want: []Problem{
			prob(CodeInvalidSchema, 13, 13, "E0", "ask answers are flat forms: property 'place' is of type object; use string, number, integer, boolean or an enum (nested data belongs in a tool result)"),
		},
	},
	{
		name: "ask nested data through additionalProperties",
		src:  head + "  - id: E0\n    tool_name: ask\n    input:\n      prompt: Where?\n      output_schema:\n        type: object\n        additionalProperties: {type: object}\n",
		want: []Problem{
			prob(CodeInvalidSchema, 10, 9, "E0", "ask answers are flat forms: 'additionalProperties' is of type object; use string, number, integer, boolean or an enum, or false"),
		},
	},
	{
		name: "ask patternProperties",
		src:  head + "  - id: E0\n    tool_name: ask\n    input:\n      prompt: Where?\n      output_schema:\n        type: object\n        patternProperties: {\"^x\": {type: string}}\n",
		want: []Problem{
			prob(CodeInvalidSchema, 10, 9, "E0", "ask answers are flat forms with named properties: 'patternProperties' asks for fields nobody can be prompted for; list the properties"),
		},
	},
	{
		name: "ask array property",
		src:  head + "  - id: E0\n    tool_name: ask\n    input:\n      prompt: Which?\n      output_schema:\n        type: object\n        properties:\n          picks: {type: array, items: {type: string}}\n",
		want: []Problem{
			prob(CodeInvalidSchema, 12, 18, "E0", "ask answers are flat forms: property 'picks' is of type array; use string, number, integer, boolean or an enum (nested data belongs in a tool result)"),
		},
	},
	{
		name: "ask union type property",
		src:  head + "  - id: E0\n    tool_name: ask\n    input:\n      prompt: How many?\n      output_schema:\n        type: object\n        properties:\n          n: {type: [integer, string]}\n",
		want: []Problem{
			prob(CodeInvalidSchema, 12, 14, "E0", "ask answers are flat forms: property 'n' has a union type [integer string]; use string, number, integer, boolean or an enum (nested data belongs in a tool result)"),
		},
	},
	{
		name: "ask property without a type",
		src:  head + "  - id: E0\n    tool_name: ask\n    input:\n      prompt: Anything?\n      output_schema:\n        type: object\n        properties:\n          note: {description: free text}\n",
		want: []Problem{
			prob(CodeInvalidSchema, 12, 17, "E0", "ask answers are flat forms: property 'note' has no type; use string, number, integer, boolean or an enum (nested data belongs in a tool result)"),
		},
	},
	{
		name: "ask output_schema not an object",
		src:  head + "  - id: E0\n    tool_name: ask\n    input:\n      prompt: Name?\n      output_schema: {type: string}\n",
		want: []Problem{
			prob(CodeInvalidSchema, 9, 22, "E0", "'output_schema' must be an object-typed JSON Schema (type: object)"),
		},
	},
	{
		name: "ask when_unanswered bad value",
		src:  head + "  - id: E0\n    tool_name: ask\n    input:\n      prompt: Ship?\n      output_schema: {type: object, properties: {ok: {type: boolean}}}\n      when_unanswered: skip\n",
		want: []Problem{
			prob(CodeInvalidValue, 10, 24, "E0", "'when_unanswered' must be fail or default, not 'skip'"),
		},
	},
	{
		name: "ask when_unanswered default without default",
		src:  head + "  - id: E0\n    tool_name: ask\n    input:\n      prompt: Ship?\n      output_schema: {type: object, properties: {ok: {type: boolean}}}\n      when_unanswered: default\n",
		want: []Problem{
			prob(CodeMissingField, 10, 24, "E0", "'when_unanswered: default' requires 'default', the answer used when nobody can be asked"),
		},
	},
	{
		name: "ask default not conforming",
		src:  head + "  - id: E0\n    tool_name: ask\n    input:\n      prompt: Ship?\n      output_schema:\n        type: object\n        required: [ok]\n        properties:\n          ok: {type: boolean}\n      when_unanswered: default\n      default: {ok: maybe}\n",
		want: []Problem{
			prob(CodeDefaultMismatch, 15, 21, "E0", "'default' does not conform to 'output_schema': /ok: got string, want boolean"),
		},
	},
	{
		name: "ask in a map body with a default that does not conform",
		src:  head + "  - id: E0\n    tool_name: map\n    input:\n      over: \"{{input.people}}\"\n      do:\n        tool_name: ask\n        input:\n          prompt: \"Keep {{item.name}}?\"\n          output_schema: {type: object, properties: {keep: {type: boolean}}}\n          when_unanswered: default\n          default: {keep: 1}\n",
		want: []Problem{
			prob(CodeDefaultMismatch, 15, 27, "E0/do.*", "'default' does not conform to 'output_schema': /keep: got number, want boolean"),
		},
	},
	{
		name: "ask default missing a required property",
		src:  head + "  - id: E0\n    tool_name: ask\n    input:\n      prompt: Which channel?\n      output_schema:\n        type: object\n        required: [channel]\n        properties:\n          channel: {enum: [stable, beta]}\n      when_unanswered: default\n      default: {}\n",
		want: []Problem{
			prob(CodeDefaultMismatch, 15, 16, "E0", "'default' does not conform to 'output_schema': /: missing property 'channel'"),
		},
	},
	{
		name: "ask unknown field with did-you-mean",
		src:  head + "  - id: E0\n    tool_name: ask\n    input:\n      prompt: Ship?\n      output_schema: {type: object, properties: {ok: {type: boolean}}}\n      when_unaswered: fail\n",
		want: []Problem{
			prob(CodeUnknownField, 10, 7, "E0", "unknown field 'when_unaswered' in the ask input; did you mean 'when_unanswered'?"),
		},
	},
	{
		name: "ask in a decide branch with a nested property",
		src:  head + "  - id: E0\n    tool_name: decide\n    input:\n      infer: is a human needed?\n      then:\n        - id: confirm\n          tool_name: ask\n          input:\n            prompt: Which reviewers?\n            output_schema:\n              type: object\n              properties:\n                reviewers: {type: array, items: {type: string}}\n",
		want: []Problem{
			prob(CodeInvalidSchema, 17, 28, "E0/then/confirm", "ask answers are flat forms: property 'reviewers' is of type array; use string, number, integer, boolean or an enum (nested data belongs in a tool result)"),
		},
	},
	{
		name: "ask in a decide branch single call bad when_unanswered",
		src:  head + "  - id: E0\n    tool_name: decide\n    input:\n      infer: is a human needed?\n      then:\n        tool_name: ask\n        input:\n          prompt: Go?\n          output_schema: {type: object, properties: {go: {type: boolean}}}\n          when_unanswered: later\n",
		want: []Problem{
			prob(CodeInvalidValue, 14, 28, "E0/then", "'when_unanswered' must be fail or default, not 'later'"),
		},
	},

	// ---- inputs the input_schema does not declare ----
	{
		// Every place a template renders: a tool's input, exit's gate,
		// message and output, decide's infer and model and its branch,
		// filter's over and where, map's over and body, reduce's over and
		// initial, agent's prompt and system prompt, ask's prompt and
		// default, the output; sections and nested paths included.
		name: "reads of undeclared inputs when the schema forbids others",
		src: closedInputs + "  - id: fetch\n    tool_name: user__x\n    input: {n: \"{{input.limt}}\", q: \"{{input.topic}} {{input.limt.x}}\"}\n" +
			"  - id: stop\n    tool_name: exit\n    input:\n      when: {value: \"{{input.lmit}}\", op: gt, to: \"{{input.limit}}\"}\n      status: error\n      message: \"{{input.tpoic}}\"\n      output: {l: \"{{input.lmt}}\"}\n" +
			"  - id: pick\n    tool_name: decide\n    input:\n      infer: \"is {{input.topik}} late?\"\n      model: \"{{input.modle}}\"\n      then: {tool_name: user__y, input: {t: \"{{input.topc}}\"}}\n" +
			"  - id: keep\n    tool_name: filter\n    input:\n      over: \"{{input.limits}}\"\n      where: {value: \"{{item.n}}\", op: lt, to: \"{{input.limt}}\"}\n" +
			"  - id: each\n    tool_name: map\n    input:\n      over: \"{{input.limt.xs}}\"\n      do: {tool_name: user__z, input: {i: \"{{item}}\", t: \"{{input.tpic}}\"}}\n" +
			"  - id: sum\n    tool_name: reduce\n    input:\n      over: \"{{fetch.items}}\"\n      initial: \"{{input.limitt}}\"\n      do: {tool_name: user__z, input: {a: \"{{accumulator}}\"}}\n" +
			"  - id: think\n    tool_name: agent\n    input:\n      prompt: \"{{#input.topics}}{{.}}{{/input.topics}}\"\n      system_prompt: \"{{input.persona}}\"\n      output_schema: {type: object}\n" +
			"  - id: q\n    tool_name: ask\n    input:\n      prompt: \"{{input.tpoic}}?\"\n      output_schema: {type: object, properties: {go: {type: boolean}}}\n      when_unanswered: default\n      default: {go: \"{{input.limt}}\"}\n" +
			"output:\n  n: \"{{input.limt}}\"\n",
		want: []Problem{
			prob(CodeUndeclaredInput, 13, 17, "fetch", "reads input.limt, but input_schema does not declare 'limt' and forbids other inputs (additionalProperties: false); did you mean input.limit?"),
			prob(CodeUndeclaredInput, 13, 54, "fetch", "reads input.limt.x, but input_schema does not declare 'limt' and forbids other inputs (additionalProperties: false); did you mean input.limit.x?"),
			prob(CodeUndeclaredInput, 17, 22, "stop", "reads input.lmit, but input_schema does not declare 'lmit' and forbids other inputs (additionalProperties: false); did you mean input.limit?"),
			prob(CodeUndeclaredInput, 19, 17, "stop", "reads input.tpoic, but input_schema does not declare 'tpoic' and forbids other inputs (additionalProperties: false); did you mean input.topic?"),
			prob(CodeUndeclaredInput, 20, 20, "stop", "reads input.lmt, but input_schema does not declare 'lmt' and forbids other inputs (additionalProperties: false); declare it under input_schema's properties (declared: limit, topic)"),
			prob(CodeUndeclaredInput, 24, 18, "pick", "reads input.topik, but input_schema does not declare 'topik' and forbids other inputs (additionalProperties: false); did you mean input.topic?"),
			prob(CodeUndeclaredInput, 25, 15, "pick", "reads input.modle, but input_schema does not declare 'modle' and forbids other inputs (additionalProperties: false); declare it under input_schema's properties (declared: limit, topic)"),
			prob(CodeUndeclaredInput, 26, 46, "pick/then", "reads input.topc, but input_schema does not declare 'topc' and forbids other inputs (additionalProperties: false); did you mean input.topic?"),
			prob(CodeUndeclaredInput, 30, 14, "keep", "reads input.limits, but input_schema does not declare 'limits' and forbids other inputs (additionalProperties: false); did you mean input.limit?"),
			prob(CodeUndeclaredInput, 31, 49, "keep", "reads input.limt, but input_schema does not declare 'limt' and forbids other inputs (additionalProperties: false); did you mean input.limit?"),
			prob(CodeUndeclaredInput, 35, 14, "each", "reads input.limt.xs, but input_schema does not declare 'limt' and forbids other inputs (additionalProperties: false); did you mean input.limit.xs?"),
			prob(CodeUndeclaredInput, 36, 59, "each/do.*", "reads input.tpic, but input_schema does not declare 'tpic' and forbids other inputs (additionalProperties: false); did you mean input.topic?"),
			prob(CodeUndeclaredInput, 41, 17, "sum", "reads input.limitt, but input_schema does not declare 'limitt' and forbids other inputs (additionalProperties: false); did you mean input.limit?"),
			prob(CodeUndeclaredInput, 46, 16, "think", "reads input.topics, but input_schema does not declare 'topics' and forbids other inputs (additionalProperties: false); did you mean input.topic?"),
			prob(CodeUndeclaredInput, 47, 23, "think", "reads input.persona, but input_schema does not declare 'persona' and forbids other inputs (additionalProperties: false); declare it under input_schema's properties (declared: limit, topic)"),
			prob(CodeUndeclaredInput, 52, 16, "q", "reads input.tpoic, but input_schema does not declare 'tpoic' and forbids other inputs (additionalProperties: false); did you mean input.topic?"),
			prob(CodeUndeclaredInput, 55, 22, "q", "reads input.limt, but input_schema does not declare 'limt' and forbids other inputs (additionalProperties: false); did you mean input.limit?"),
			prob(CodeUndeclaredInput, 57, 7, "", "reads input.limt, but input_schema does not declare 'limt' and forbids other inputs (additionalProperties: false); did you mean input.limit?"),
		},
	},
	{
		name: "a solver reading undeclared inputs when the schema forbids others",
		src: closedInputs + "  - id: fetch\n    tool_name: user__x\n    input: {n: \"{{input.limit}}\"}\n" +
			"solver:\n  query_to_answer: \"Report on {{input.tpoic}}\"\n  system_prompt: \"{{input.persona}}\"\n  data: {l: \"{{input.limt.max}}\", f: \"{{fetch}}\"}\n",
		want: []Problem{
			prob(CodeUndeclaredInput, 15, 31, "", "reads input.tpoic, but input_schema does not declare 'tpoic' and forbids other inputs (additionalProperties: false); did you mean input.topic?"),
			prob(CodeUndeclaredInput, 16, 19, "", "reads input.persona, but input_schema does not declare 'persona' and forbids other inputs (additionalProperties: false); declare it under input_schema's properties (declared: limit, topic)"),
			prob(CodeUndeclaredInput, 17, 14, "", "reads input.limt.max, but input_schema does not declare 'limt' and forbids other inputs (additionalProperties: false); did you mean input.limit.max?"),
		},
	},
	{
		name: "reading an input when the schema declares none and forbids others",
		src:  "identifier: t\nname: T\ndescription: d\ninput_schema: {type: object, additionalProperties: false}\nsteps:\n  - id: E0\n    tool_name: user__x\n    input: {a: \"{{input.team}}\"}\n",
		want: []Problem{
			prob(CodeUndeclaredInput, 8, 17, "E0", "reads input.team, but input_schema does not declare 'team' and forbids other inputs (additionalProperties: false); declare it under input_schema's properties (it declares none)"),
		},
	},
}

// closedInputs is the top level of a plan whose input_schema declares
// limit and topic and forbids any other input. Its ten lines put the first
// step on line 11.
const closedInputs = "identifier: t\nname: T\ndescription: d\ninput_schema:\n  type: object\n  additionalProperties: false\n  properties:\n    limit: {type: integer}\n    topic: {type: string}\nsteps:\n"

// laughs is a plan whose nested aliases expand ten-fold per level: ten
// levels written in a dozen lines stand for ten billion values.
func laughs() string {
	var b strings.Builder
	b.WriteString("identifier: t\nname: T\ndescription: d\nl0: &l0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&b, "l%d: &l%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d, ", i-1), 10), ", "))
	}
	b.WriteString("steps:\n  - id: E0\n    tool_name: user__x\n    input: {v: *l10}\n")
	return b.String()
}

func TestLoadInvalid(t *testing.T) {
	seen := map[string]bool{}
	for _, tc := range invalidCases {
		if seen[tc.name] {
			t.Fatalf("two cases are named %q", tc.name)
		}
		seen[tc.name] = true
		t.Run(tc.name, func(t *testing.T) {
			_, r := Load("plan.yaml", []byte(tc.src), Stepwise)
			if len(tc.want) == 0 {
				t.Fatal("an invalid case must expect at least one problem")
			}
			if !slices.Equal(r.Problems, tc.want) {
				t.Errorf("problems:\n got: %s\nwant: %s", formatProblems(r.Problems), formatProblems(tc.want))
			}
			for _, n := range tc.notes {
				if !slices.Contains(r.Notes, n) {
					t.Errorf("missing note %s\nnotes: %s", n, formatProblems(r.Notes))
				}
			}
		})
	}
}

func formatProblems(ps []Problem) string {
	if len(ps) == 0 {
		return "(none)"
	}
	s := ""
	for _, p := range ps {
		s += "\n  [" + p.Code + "] " + p.String()
	}
	return s
}

func TestProblemString(t *testing.T) {
	cases := []struct {
		p    Problem
		want string
	}{
		{prob(CodeForwardReference, 12, 7, "E2", "references E5, which is not `input` or an earlier step"), "plan.yaml:12:7: step E2: references E5, which is not `input` or an earlier step"},
		{prob(CodeNoSteps, 4, 8, "", "plan has no steps"), "plan.yaml:4:8: plan has no steps"},
		{Problem{Code: CodeUnresolvedTool, Path: "E1/do.*", Message: "unknown tool 'user__x'"}, "step E1/do.*: unknown tool 'user__x'"},
		{Problem{Code: CodeUnresolvedTool, Pos: Pos{File: "p.yaml"}, Message: "m"}, "p.yaml: m"},
		{Problem{Code: CodeUnresolvedTool, Pos: Pos{Line: 3, Col: 1}, Message: "m"}, "3:1: m"},
	}
	for _, tc := range cases {
		if got := tc.p.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
	}
}

// TestLoadInvalidFirstLine pins the compiler-style line of one problem of
// each family end to end, as `stepwise validate` prints it.
func TestLoadInvalidFirstLine(t *testing.T) {
	cases := map[string]string{
		"exit in a map body":                        "plan.yaml:11:22: step E0/do.*/stop: exit cannot appear inside a map body (it may appear in a decide branch); to stop on a condition, filter first or exit after the map",
		"reference into a map body":                 "plan.yaml:15:17: step E1: references E00, which is inside the map body of E0 and invisible outside it; read {{E0.results}} instead",
		"template error in a literal block":         "plan.yaml:10:34: step E0: empty segment in path 'input.team..name': separate keys with exactly one dot, e.g. E0.values.0",
		"agent structured_output strict refused":    "plan.yaml:14:26: step E0: 'structured_output: strict' is not eligible for this step's schema — add 'additionalProperties: false' at 'the schema root'",
		"unknown top-level field with did-you-mean": "plan.yaml:3:1: unknown field 'descripton' in a plan; did you mean 'description'?",
	}
	for _, tc := range invalidCases {
		want, ok := cases[tc.name]
		if !ok {
			continue
		}
		delete(cases, tc.name)
		_, r := Load("plan.yaml", []byte(tc.src), Stepwise)
		var lines []string
		for _, p := range r.Problems {
			lines = append(lines, p.String())
		}
		if !slices.Contains(lines, want) {
			t.Errorf("%s: no problem reads %q; got %q", tc.name, want, lines)
		}
	}
	for name := range cases {
		t.Errorf("no invalid case is named %q", name)
	}
}

// TestLoadFlowQuestionMark loads a plan whose ask schema describes a field
// with a question in a flow mapping, and checks that what follows it on the
// line is still placed where it is written.
func TestLoadFlowQuestionMark(t *testing.T) {
	src := head + "  - id: E0\n    tool_name: ask\n    input:\n      prompt: Keep it?\n" +
		"      output_schema: {type: object, properties: {keep: {type: boolean, description: Keep this one?}}, required: keep}\n"
	p, r := Load("plan.yaml", []byte(src), Stepwise)
	if p == nil {
		t.Fatalf("not loaded: %s", formatProblems(r.Problems))
	}
	want := []Problem{prob(CodeInvalidSchema, 9, 113, "E0", "")}
	got := r.Problems
	if len(got) != 1 || got[0].Pos != want[0].Pos || got[0].Code != want[0].Code {
		t.Fatalf("problems:%s\nwant one invalid_schema problem at 9:113 (required is not a list)", formatProblems(got))
	}
	desc := p.Steps[0].Control.(*AskInput).OutputSchema.Raw.(map[string]any)["properties"].(map[string]any)["keep"].(map[string]any)["description"]
	if desc != "Keep this one?" {
		t.Errorf("description = %q", desc)
	}
}
