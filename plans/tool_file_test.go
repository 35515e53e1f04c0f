package plans

import (
	"slices"
	"testing"
)

// toolProb builds an expected problem of a file loaded as tool.yaml.
func toolProb(code string, line, col int, msg string) Problem {
	return Problem{Code: code, Pos: Pos{File: "tool.yaml", Line: line, Col: col}, Message: msg}
}

func TestLoadToolFileValid(t *testing.T) {
	cases := []struct {
		name     string
		src      string
		kind     string
		readOnly bool
		declared bool
	}{
		{
			name: "exec with every field",
			src: `name: git_log
description: Recent commits of a repository.
kind: exec
read_only: true
command: git
args: ["-C", "{{input.repo}}", "log", "-n", "{{input.count}}", "--format=%H %s"]
env: {GIT_PAGER: cat, HOME: "${HOME}"}
cwd: "{{input.repo}}"
timeout_secs: 20
output: text
input_schema:
  type: object
  required: [repo]
  properties:
    repo: {type: string}
    count: {type: integer, default: 10}
output_schema: {type: string}
output_example: "abc123 fix the build"
`,
			kind: ToolExec, readOnly: true, declared: true,
		},
		{
			name: "exec with json output",
			src:  "name: metrics\ndescription: Build metrics.\nkind: exec\ncommand: ./metrics.sh\noutput: json\n",
			kind: ToolExec,
		},
		{
			name: "prompt",
			src: `name: summarize
description: Summarise a text.
kind: prompt
model: fast
prompt: |
  Summarise this in {{input.lines}} lines:
  {{input.text}}
  {{#input.keywords}}Mention {{.}}.{{/input.keywords}}
`,
			kind:     ToolPrompt,
			readOnly: true, declared: true, // implied, as graph implies it
		},
		{
			// graph's builtin__infer, written as a tool file.
			name: "prompt with system, caller_output_schema and caller_model",
			src: `name: infer
description: Run an instruction.
kind: prompt
prompt: "{{input.instruction}}"
system: Answer in one line.
caller_output_schema: true
caller_model: true
input_schema:
  type: object
  required: [instruction]
  properties:
    instruction: {type: string}
    output_schema: {type: object}
read_only: false
`,
			kind:     ToolPrompt,
			readOnly: false, declared: true,
		},
		{
			name:     "reshape with a fixed shape",
			src:      "name: pick\ndescription: Keep the id and title.\nkind: reshape\nshape: {id: \"{{input.data.id}}\", title: \"{{input.data.title}}\"}\n",
			kind:     ToolReshape,
			readOnly: true, declared: true,
		},
		{
			name:     "reshape with the caller's shape",
			src:      "name: reshape_any\ndescription: Reshape by the caller's shape.\nkind: reshape\ncaller_shape: true\nread_only: false\n",
			kind:     ToolReshape,
			readOnly: false, declared: true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tf, r := LoadToolFile("tool.yaml", []byte(tc.src), Stepwise)
			if tf == nil || !r.OK() {
				t.Fatalf("problems:%s", formatProblems(r.Problems))
			}
			if tf.Kind.Value != tc.kind {
				t.Errorf("kind %q, want %q", tf.Kind.Value, tc.kind)
			}
			if want := "user__" + tf.Name.Value; tf.ToolName() != want {
				t.Errorf("ToolName() = %q, want %q", tf.ToolName(), want)
			}
			if ro, declared := tf.IsReadOnly(); ro != tc.readOnly || declared != tc.declared {
				t.Errorf("IsReadOnly() = %v, %v; want %v, %v", ro, declared, tc.readOnly, tc.declared)
			}
		})
	}
}

// TestToolFileGraphFields pins what the fields graph's tool files carry
// decode to, and the defaults when they are left out.
func TestToolFileGraphFields(t *testing.T) {
	cases := []struct {
		name                      string
		src                       string
		system                    string
		callerSchema, callerModel bool
		output                    string
	}{
		{
			name:   "prompt with all three",
			src:    "name: x\ndescription: d\nkind: prompt\nprompt: p\nsystem: \"Be {{terse}}.\"\ncaller_output_schema: true\ncaller_model: true\n",
			system: "Be {{terse}}.", callerSchema: true, callerModel: true,
		},
		{
			name: "prompt with none",
			src:  "name: x\ndescription: d\nkind: prompt\nprompt: p\n",
		},
		{
			name:   "exec without output reads json, as graph's does",
			src:    "name: x\ndescription: d\nkind: exec\ncommand: ls\n",
			output: "json",
		},
		{
			name:   "exec with output text",
			src:    "name: x\ndescription: d\nkind: exec\ncommand: ls\noutput: text\n",
			output: "text",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tf, r := LoadToolFile("tool.yaml", []byte(tc.src), Stepwise)
			if tf == nil || !r.OK() {
				t.Fatalf("problems:%s", formatProblems(r.Problems))
			}
			if tf.System.Value != tc.system || tf.CallerOutputSchema.Value != tc.callerSchema || tf.CallerModel.Value != tc.callerModel {
				t.Errorf("system %q, caller_output_schema %v, caller_model %v; want %q, %v, %v",
					tf.System.Value, tf.CallerOutputSchema.Value, tf.CallerModel.Value, tc.system, tc.callerSchema, tc.callerModel)
			}
			if tc.output != "" && tf.OutputFormat() != tc.output {
				t.Errorf("OutputFormat() = %q, want %q", tf.OutputFormat(), tc.output)
			}
		})
	}
}

var invalidToolFiles = []struct {
	name string
	src  string
	want []Problem
}{
	{
		name: "empty file",
		src:  "",
		want: []Problem{
			toolProb(CodeYAMLSyntax, 1, 1, "the file is empty; a tool file needs name, description and kind"),
		},
	},
	{
		name: "not a mapping",
		src:  "- name: x\n",
		want: []Problem{
			toolProb(CodeWrongType, 1, 1, "a tool file must be a mapping, not a list"),
		},
	},
	{
		name: "missing name, description and kind",
		src:  "command: ls\n",
		want: []Problem{
			toolProb(CodeMissingField, 1, 1, "a tool file needs 'name'"),
			toolProb(CodeMissingField, 1, 1, "a tool file needs 'description'"),
			toolProb(CodeMissingField, 1, 1, "a tool file needs 'kind'"),
		},
	},
	{
		name: "exec missing command",
		src:  "name: x\ndescription: d\nkind: exec\nargs: [a]\n",
		want: []Problem{
			toolProb(CodeMissingField, 1, 1, "a tool file needs 'command'"),
		},
	},
	{
		name: "bad kind with did-you-mean",
		src:  "name: x\ndescription: d\nkind: promt\nprompt: hi\n",
		want: []Problem{
			toolProb(CodeInvalidValue, 3, 7, "'kind' must be exec, prompt or reshape, not 'promt'; did you mean 'prompt'?"),
		},
	},
	{
		name: "bad kind without a close match",
		src:  "name: x\ndescription: d\nkind: script\n",
		want: []Problem{
			toolProb(CodeInvalidValue, 3, 7, "'kind' must be exec, prompt or reshape, not 'script'"),
		},
	},
	{
		name: "prompt field on an exec tool",
		src:  "name: x\ndescription: d\nkind: exec\ncommand: ls\nprompt: list it\n",
		want: []Problem{
			toolProb(CodeUnknownField, 5, 1, "'prompt' belongs to prompt tools, not exec tools"),
		},
	},
	{
		name: "exec fields on a reshape tool",
		src:  "name: x\ndescription: d\nkind: reshape\nshape: {a: 1}\ncommand: ls\ntimeout_secs: 3\n",
		want: []Problem{
			toolProb(CodeUnknownField, 5, 1, "'command' belongs to exec tools, not reshape tools"),
			toolProb(CodeUnknownField, 6, 1, "'timeout_secs' belongs to exec tools, not reshape tools"),
		},
	},
	{
		name: "reshape shape and caller_shape",
		src:  "name: x\ndescription: d\nkind: reshape\nshape: {a: \"{{input.a}}\"}\ncaller_shape: true\n",
		want: []Problem{
			toolProb(CodeExclusiveFields, 5, 1, "'shape' and 'caller_shape: true' are mutually exclusive: the shape is fixed in the file or given by each call"),
		},
	},
	{
		name: "reshape with neither shape nor caller_shape",
		src:  "name: x\ndescription: d\nkind: reshape\ncaller_shape: false\n",
		want: []Problem{
			toolProb(CodeMissingField, 1, 1, "a reshape tool needs 'shape', or 'caller_shape: true' to take the shape from each call"),
		},
	},
	{
		name: "template reading a step id",
		src:  "name: x\ndescription: d\nkind: exec\ncommand: echo\nargs: [\"{{E0.title}}\"]\n",
		want: []Problem{
			toolProb(CodeUnknownReference, 5, 9, "'E0.title' cannot be read in a tool file: a tool sees only its own input, as {{input.<name>}}"),
		},
	},
	{
		name: "template reading item in a prompt",
		src:  "name: x\ndescription: d\nkind: prompt\nprompt: |\n  Look at\n  {{item.body}}\n",
		want: []Problem{
			toolProb(CodeUnknownReference, 6, 3, "'item.body' cannot be read in a tool file: a tool sees only its own input, as {{input.<name>}}"),
		},
	},
	{
		name: "template reading a step in a reshape shape",
		src:  "name: x\ndescription: d\nkind: reshape\nshape:\n  id: \"{{fetch.id}}\"\n",
		want: []Problem{
			toolProb(CodeUnknownReference, 5, 8, "'fetch.id' cannot be read in a tool file: a tool sees only its own input, as {{input.<name>}}"),
		},
	},
	{
		name: "template syntax error in cwd",
		src:  "name: x\ndescription: d\nkind: exec\ncommand: ls\ncwd: \"{{input.dir\"\n",
		want: []Problem{
			toolProb(CodeTemplateSyntax, 5, 7, "unclosed tag '{{': add '}}' after the path"),
		},
	},
	{
		name: "bad output value",
		src:  "name: x\ndescription: d\nkind: exec\ncommand: ls\noutput: yaml\n",
		want: []Problem{
			toolProb(CodeInvalidValue, 5, 9, "'output' must be text or json, not 'yaml'"),
		},
	},
	{
		name: "output is not a string",
		src:  "name: x\ndescription: d\nkind: exec\ncommand: ls\noutput: [json]\n",
		want: []Problem{
			toolProb(CodeWrongType, 5, 9, "'output' must be a string, not a list"),
		},
	},
	{
		name: "timeout_secs zero",
		src:  "name: x\ndescription: d\nkind: exec\ncommand: ls\ntimeout_secs: 0\n",
		want: []Problem{
			toolProb(CodeInvalidValue, 5, 15, "'timeout_secs' must be a whole number above 0, not 0"),
		},
	},
	{
		name: "args not a list",
		src:  "name: x\ndescription: d\nkind: exec\ncommand: ls\nargs: -la\n",
		want: []Problem{
			toolProb(CodeWrongType, 5, 7, "'args' must be a list, not a string"),
		},
	},
	{
		name: "env not a mapping",
		src:  "name: x\ndescription: d\nkind: exec\ncommand: ls\nenv: [A=1]\n",
		want: []Problem{
			toolProb(CodeWrongType, 5, 6, "'env' must be a mapping, not a list"),
		},
	},
	{
		name: "read_only not a boolean",
		src:  "name: x\ndescription: d\nkind: exec\ncommand: ls\nread_only: yes\n",
		want: []Problem{
			toolProb(CodeWrongType, 5, 12, "'read_only' must be true or false, not a string ('yes')"),
		},
	},
	{
		name: "name not tool-name-safe",
		src:  "name: git log\ndescription: d\nkind: exec\ncommand: git\n",
		want: []Problem{
			toolProb(CodeInvalidValue, 1, 7, "tool name 'git log' must use letters, digits, '_' and '-' only (it becomes user__git log)"),
		},
	},
	{
		name: "unknown field with did-you-mean",
		src:  "name: x\ndescription: d\nkind: exec\ncomand: ls\n",
		want: []Problem{
			toolProb(CodeMissingField, 1, 1, "a tool file needs 'command'"),
			toolProb(CodeUnknownField, 4, 1, "unknown field 'comand' in a tool file; did you mean 'command'?"),
		},
	},
	{
		name: "input_schema does not compile",
		src:  "name: x\ndescription: d\nkind: exec\ncommand: ls\ninput_schema: {type: object, properties: 3}\n",
		want: []Problem{
			toolProb(CodeInvalidSchema, 5, 42, "'input_schema' is not a valid JSON Schema at 'properties': got number, want object"),
		},
	},
	{
		name: "prompt missing prompt",
		src:  "name: x\ndescription: d\nkind: prompt\nmodel: fast\n",
		want: []Problem{
			toolProb(CodeMissingField, 1, 1, "a tool file needs 'prompt'"),
		},
	},
	{
		name: "prompt fields of the wrong type",
		src:  "name: x\ndescription: d\nkind: prompt\nprompt: p\nsystem: [be, brief]\ncaller_output_schema: \"yes\"\ncaller_model: 1\n",
		want: []Problem{
			toolProb(CodeWrongType, 5, 9, "'system' must be a string, not a list"),
			toolProb(CodeWrongType, 6, 23, "'caller_output_schema' must be true or false, not a string ('yes')"),
			toolProb(CodeWrongType, 7, 15, "'caller_model' must be true or false, not a number ('1')"),
		},
	},
	{
		name: "a prompt field in an exec tool",
		src:  "name: x\ndescription: d\nkind: exec\ncommand: ls\ncaller_model: true\n",
		want: []Problem{
			toolProb(CodeUnknownField, 5, 1, "'caller_model' belongs to prompt tools, not exec tools"),
		},
	},
	{
		name: "two documents",
		src:  "name: x\ndescription: d\nkind: exec\ncommand: ls\n---\nname: y\n",
		want: []Problem{
			toolProb(CodeYAMLSyntax, 5, 1, "a tool file holds one YAML document; move this one to a file of its own"),
		},
	},
}

func TestLoadToolFileInvalid(t *testing.T) {
	for _, tc := range invalidToolFiles {
		t.Run(tc.name, func(t *testing.T) {
			_, r := LoadToolFile("tool.yaml", []byte(tc.src), Stepwise)
			if len(tc.want) == 0 {
				t.Fatal("an invalid case must expect at least one problem")
			}
			if !slices.Equal(r.Problems, tc.want) {
				t.Errorf("problems:\n got: %s\nwant: %s", formatProblems(r.Problems), formatProblems(tc.want))
			}
		})
	}
}
