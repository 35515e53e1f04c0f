package plans

import (
	"cmp"
	"slices"
	"testing"
)

// TestUnknownFieldsByDialect loads each file as both dialects: an unknown
// field where graph ignores one is a note in a graph project and a problem
// in a stepwise one; where graph refuses one too, it is a problem in both.
func TestUnknownFieldsByDialect(t *testing.T) {
	const graphSuffix = "; graph ignores it, and so does stepwise"
	cases := []struct {
		name    string
		tool    bool // a tool file, else a plan
		src     string
		want    Problem
		refused bool   // graph refuses it too: a problem in both dialects
		why     string // what the graph note adds; graphSuffix when empty
	}{
		{
			name: "a plan's field",
			src:  head + "  - id: E0\n    tool_name: user__x\n    input: {}\nversion: 2\n",
			want: prob(CodeUnknownField, 8, 1, "", "unknown field 'version' in a plan (fields: identifier, name, description, exemplars, requires_servers, read_only, input_schema, steps, solver, output)"),
		},
		{
			name: "a step's field, with did-you-mean",
			src:  head + "  - id: E0\n    tool_name: user__x\n    input: {}\n    reasonning: why\n",
			want: prob(CodeUnknownField, 8, 5, "E0", "unknown field 'reasonning' in a step; did you mean 'reasoning'?"),
		},
		{
			name: "a body call's field",
			src:  head + "  - id: E0\n    tool_name: map\n    input:\n      over: \"{{input.xs}}\"\n      do: {tool_name: user__x, input: {}, note: n}\n",
			want: prob(CodeUnknownField, 9, 43, "E0/do.*", "unknown field 'note' in a body call (fields: tool_name, input, reasoning, timeout_secs)"),
		},
		{
			name: "the solver's field",
			src:  head + "  - id: E0\n    tool_name: user__x\n    input: {}\nsolver:\n  query_to_answer: q\n  dta: {}\n",
			want: prob(CodeUnknownField, 10, 3, "", "unknown field 'dta' in the solver; did you mean 'data'?"),
		},
		{
			name: "a tool file's field, with did-you-mean",
			tool: true,
			src:  "name: x\ndescription: d\nkind: prompt\nprompt: p\nsytem: be brief\n",
			want: toolProb(CodeUnknownField, 5, 1, "unknown field 'sytem' in a tool file; did you mean 'system'?"),
		},
		{
			name: "another kind's field in a tool file",
			tool: true,
			src:  "name: x\ndescription: d\nkind: exec\ncommand: ls\nmodel: fast\n",
			want: toolProb(CodeUnknownField, 5, 1, "'model' belongs to prompt tools, not exec tools"),
		},
		{
			name: "an exec tool's output_schema that does not compile",
			tool: true,
			src:  "name: x\ndescription: d\nkind: exec\ncommand: ls\noutput_schema: {type: object, properties: {a: {type: string, title: }}}\n",
			want: toolProb(CodeInvalidSchema, 5, 69, "'output_schema' is not a valid JSON Schema at 'properties.a.title': got null, want string"),
			why:  "; graph never compiles an exec or reshape tool's output_schema, so stepwise leaves this one uncompiled",
		},
		{
			name: "an input_schema that does not compile",
			tool: true,
			src:  "name: x\ndescription: d\nkind: reshape\ncaller_shape: true\ninput_schema: {type: obj}\n",
			want: toolProb(CodeInvalidSchema, 5, 22, "'input_schema' is not a valid JSON Schema at 'type': 'obj' is not a JSON Schema type (array, boolean, integer, null, number, object, string)"),
			why:  "; graph skips a tool's input checks when its input_schema does not compile, and so does stepwise",
		},
		{
			name:    "a prompt tool's output_schema that does not compile, which graph refuses at every call",
			tool:    true,
			src:     "name: x\ndescription: d\nkind: prompt\nprompt: p\noutput_schema: {type: obj}\n",
			want:    toolProb(CodeInvalidSchema, 5, 23, "'output_schema' is not a valid JSON Schema at 'type': 'obj' is not a JSON Schema type (array, boolean, integer, null, number, object, string)"),
			refused: true,
		},
		{
			name:    "an agent input's field, which graph refuses",
			src:     head + "  - id: E0\n    tool_name: agent\n    input:\n      prompt: p\n      output_schema: {type: object}\n      max_iteration: 3\n",
			want:    prob(CodeUnknownField, 10, 7, "E0", "unknown field 'max_iteration' in the agent input; did you mean 'max_iterations'?"),
			refused: true,
		},
	}
	for _, tc := range cases {
		load := func(d Dialect) Report {
			if tc.tool {
				_, r := LoadToolFile("tool.yaml", []byte(tc.src), d)
				return r
			}
			_, r := Load("plan.yaml", []byte(tc.src), d)
			return r
		}
		t.Run(tc.name+", stepwise", func(t *testing.T) {
			r := load(Stepwise)
			if !slices.Equal(r.Problems, []Problem{tc.want}) {
				t.Errorf("problems:\n got: %s\nwant: %s", formatProblems(r.Problems), formatProblems([]Problem{tc.want}))
			}
		})
		t.Run(tc.name+", graph", func(t *testing.T) {
			r := load(Graph)
			if tc.refused {
				if !slices.Equal(r.Problems, []Problem{tc.want}) {
					t.Errorf("problems:\n got: %s\nwant: %s", formatProblems(r.Problems), formatProblems([]Problem{tc.want}))
				}
				return
			}
			note := tc.want
			note.Message += cmp.Or(tc.why, graphSuffix)
			if !r.OK() {
				t.Errorf("problems: %s", formatProblems(r.Problems))
			}
			if !slices.Contains(r.Notes, note) {
				t.Errorf("no note %s\nnotes: %s", note, formatProblems(r.Notes))
			}
		})
	}
}
