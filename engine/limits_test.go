package engine_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stepwise-dev/stepwise/engine"
)

// doublingPlan is a plan of n steps, each doubling the string of the one
// before it: E0's is 64 bytes, Ek's 64·2^k.
func doublingPlan(n int) string {
	var b strings.Builder
	b.WriteString("identifier: doubling\nsteps:\n  - id: E0\n    tool_name: builtin__reshape\n    input: { shape: { s: \"" + strings.Repeat("x", 64) + "\" } }\n")
	for k := 1; k < n; k++ {
		fmt.Fprintf(&b, "  - id: E%d\n    tool_name: builtin__reshape\n    input: { shape: { s: \"{{E%d.s}}{{E%d.s}}\" } }\n", k, k-1, k-1)
	}
	return b.String()
}

// TestValueLimit checks that a plan whose value doubles at each step
// fails at the step whose value passes [limits] value_bytes, naming the
// step and the key, and that a value at the limit is whole.
func TestValueLimit(t *testing.T) {
	p := newProject(t, map[string]string{
		"config.toml":  testConfig + "\n[limits]\nvalue_bytes = 1048576\n",
		"plans/p.yaml": doublingPlan(30),
	})
	o := p.run(t, "plans/p.yaml", nil, nil)
	// E14's string is 64·2^14 bytes, 1 MiB exactly; E15's would be twice that.
	wantFailure(t, o, "plan failed at step E15 (builtin__reshape): the rendered text passed 1048576 bytes ([limits] value_bytes)")
	if got := stepResult(t, o, "E14"); len(got) != 1<<20+len(`{"s":""}`) {
		t.Errorf("E14's value is %d bytes, want all of 1 MiB", len(got))
	}
}

// TestPromptValueCut checks that a rendered value sent to a model in a
// prompt, past [limits] model_input_bytes, is cut with a marker saying so,
// at every site that sends one.
func TestPromptValueCut(t *testing.T) {
	long := strings.Repeat("é", 100) // 200 bytes
	tests := []struct {
		name, plan, replies, tools string
		role                       string
		warning                    string // the warning's path and what it says was cut
	}{
		{
			name:    "builtin__infer",
			plan:    "  - id: E1\n    tool_name: builtin__infer\n    input: { instruction: \"Sum up {{E0.long}}\" }\n",
			replies: "  - match: E1\n    reply: { text: done }\n",
			role:    "chat",
			warning: "E1: builtin__infer's instruction",
		},
		{
			name:    "an agent's prompt",
			plan:    "  - id: E1\n    tool_name: agent\n    input:\n      prompt: \"Sum up {{E0.long}}\"\n      output_schema: { type: object, properties: { n: { type: integer } } }\n",
			replies: "  - match: E1\n    reply: { json: { n: 1 } }\n",
			role:    "chat",
			warning: "E1: the agent's prompt",
		},
		{
			name:    "an infer gate",
			plan:    "  - id: E1\n    tool_name: exit\n    input: { infer: \"Stop at {{E0.long}}?\", status: success, message: stopped }\n",
			replies: "  - match: E1\n    role: judge\n    reply: { json: { verdict: false, reason: no } }\n",
			role:    "judge",
			warning: "E1: the judge's question",
		},
		{
			name:    "a prompt tool",
			plan:    "  - id: E1\n    tool_name: user__sum\n    input: { text: \"{{E0.long}}\" }\n",
			replies: "  - match: E1\n    reply: { text: done }\n",
			tools:   "name: sum\ndescription: Sum up.\nkind: prompt\nprompt: \"Sum up {{input.text}}\"\ninput_schema: { type: object, properties: { text: { type: string } } }\n",
			role:    "chat",
			warning: "E1: user__sum's prompt",
		},
		{
			name:    "the solver",
			plan:    "solver:\n  query_to_answer: \"Sum up {{E0.long}}\"\n  data: {}\n",
			replies: "  - match: solver\n    role: solver\n    reply: { text: done }\n",
			role:    "solver",
			warning: "solver: the solver's message",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{
				"config.toml":  testConfig + "\n[limits]\nmodel_input_bytes = 101\n",
				"plans/p.yaml": "identifier: cut\nsteps:\n  - id: E0\n    tool_name: builtin__reshape\n    input: { shape: { long: \"" + long + "\" } }\n" + tt.plan,
				"replies.yaml": "replies:\n" + tt.replies,
			}
			if tt.tools != "" {
				files["tools/sum.yaml"] = tt.tools
			}
			o := newProject(t, files).run(t, "plans/p.yaml", nil, nil)
			wantOK(t, o)
			var sent string
			for _, e := range o.events.of(engine.EventModelCall) {
				if call := e.Payload.(engine.ModelCalled); string(call.Role) == tt.role {
					msgs := call.Request.Messages
					sent = msgs[len(msgs)-1].Text()
				}
			}
			shown, marker, _ := strings.Cut(sent, "\n[truncated: showing ")
			if len(shown) > 101 || !strings.HasPrefix(marker, fmt.Sprint(len(shown), " of ")) || !strings.HasSuffix(marker, " bytes]") || !utf8.ValidString(sent) {
				t.Errorf("the model was sent %q", sent)
			}
			// Whoever reads the run learns of the cut too, not only the model.
			var warnings []string
			for _, e := range o.events.of(engine.EventWarning) {
				warnings = append(warnings, e.Path+": "+e.Payload.(engine.Warning).Message)
			}
			if len(warnings) != 1 || !strings.HasPrefix(warnings[0], tt.warning+" was cut to ") || !strings.HasSuffix(warnings[0], "bytes for the model ([limits] model_input_bytes); the record keeps it whole") {
				t.Errorf("warnings %q, want one of %s", warnings, tt.warning)
			}
		})
	}
}

// TestStepTimeoutBoundsAnExecTool checks that a step's timeout_secs bounds
// its exec tool in place of the tool file's timeout_secs, and that the
// error says which bound fired.
func TestStepTimeoutBoundsAnExecTool(t *testing.T) {
	p := newProject(t, map[string]string{
		"config.toml": testConfig,
		"tools/nap.yaml": "name: nap\ndescription: Sleeps.\nkind: exec\ncommand: sleep\nargs: [\"30\"]\noutput: text\ntimeout_secs: 60\n" +
			"input_schema: { type: object, properties: {} }\n",
		"plans/p.yaml": "identifier: p\nsteps:\n  - id: E1\n    tool_name: user__nap\n    timeout_secs: 1\n    input: {}\n",
	})
	o := p.run(t, "plans/p.yaml", nil, nil)
	wantFailure(t, o, "plan failed at step E1 (user__nap): 'sleep' timed out after 1s (the step's timeout_secs)")
}

// TestCapText checks that a spend cap is said as it was given, every
// digit of it, where a cost would be rounded: a cap of $0.000001 is not
// "<$0.0001".
func TestCapText(t *testing.T) {
	for _, tc := range []struct {
		usd  float64
		want string
	}{
		{0.000001, "$0.000001"},
		{0.5, "$0.50"},
		{2.5, "$2.50"},
		{2, "$2.00"},
		{1.23456789, "$1.23456789"},
		{1e21, "$1000000000000000000000.00"},
	} {
		if got := engine.CapText(tc.usd); got != tc.want {
			t.Errorf("CapText(%v) = %s, want %s", tc.usd, got, tc.want)
		}
	}
	// The spend that reached a cap finer than four decimals is said
	// as finely.
	for _, tc := range []struct {
		spent, cap float64
		want       string
	}{
		{0.0000031, 0.000001, "cost $0.000003, and its cap is $0.000001 "},
		{0.61234, 0.5, "cost $0.6123, and its cap is $0.50 "},
		{0.00102, 0.001, "cost $0.00102, and its cap is $0.001 "},
		{0.001, 0.001, "cost $0.0010, and its cap is $0.001 "},
	} {
		if got := (&engine.SpendCapError{Spent: tc.spent, Cap: tc.cap}).Error(); !strings.Contains(got, tc.want) {
			t.Errorf("a spend of %v over a cap of %v: %s", tc.spent, tc.cap, got)
		}
	}
}
