package debugger

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/config"
	"github.com/stepwise-dev/stepwise/engine/tools"
	"github.com/stepwise-dev/stepwise/plans"
)

// approvalCatalog loads the catalog of a project of files, with an exec
// tool that says nothing of being read-only, one that says it is, and
// three plans, one declared read-only.
func approvalCatalog(tb testing.TB) *tools.Catalog {
	tb.Helper()
	dir := tb.TempDir()
	files := map[string]string{
		".stepwise/config.toml":      "[storage]\nbackend = \"memory\"\n",
		".stepwise/tools/post.yaml":  "name: post\ndescription: Posts.\nkind: exec\ncommand: \"true\"\ninput_schema: {type: object, required: [text], properties: {text: {type: string}}}\n",
		".stepwise/tools/peek.yaml":  "name: peek\ndescription: Reads.\nkind: exec\ncommand: \"true\"\nread_only: true\n",
		".stepwise/plans/busy.yaml":  "identifier: busy\nname: busy\ndescription: b\nsteps:\n  - id: E0\n    tool_name: user__post\n    input: {}\n",
		".stepwise/plans/quiet.yaml": "identifier: quiet\nname: quiet\ndescription: q\nread_only: true\nsteps:\n  - id: E0\n    tool_name: user__peek\n    input: {}\n",
		// offers has an agent offered the read-only peek by name, one
		// offered user__p*, which a call of peek or of post may be, and a
		// call of the read-only plan.
		".stepwise/plans/offers.yaml": `identifier: offers
name: offers
description: o
steps:
  - id: E0
    tool_name: agent
    input: { prompt: "Peek.", tools: ["user__peek"], output_schema: { type: object } }
  - id: E1
    tool_name: agent
    input: { prompt: "Peek or post.", tools: ["user__p*"], output_schema: { type: object } }
  - id: E2
    tool_name: plan__quiet
    input: {}
`,
	}
	for name, text := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	cfg, _, err := config.Load(config.Options{Dir: dir, LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		tb.Fatal(err)
	}
	cat := tools.Load(cfg)
	for _, sk := range cat.Skipped {
		tb.Fatalf("%s: %s", sk.File, sk.Reason)
	}
	return cat
}

// TestApprovalsHold checks which calls the policy holds: matched by path
// (a plain step by PATH/TOOL too), never a read-only tool's, never a
// control step or the finish.
func TestApprovalsHold(t *testing.T) {
	a, err := NewApprovals([]string{"**/user__*", "**/plan__*", "E7", "**/builtin__*"}, approvalCatalog(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	step := &plans.Step{}
	for _, tc := range []struct {
		name string
		stop engine.Stop
		want bool
	}{
		{"an agent's call of a tool that says nothing", engine.Stop{Kind: engine.StopTool, Path: "E1/agent.1/user__post", Tool: "user__post"}, true},
		{"its second call in the round, user__post.2", engine.Stop{Kind: engine.StopTool, Path: "E1/agent.1/user__post.2", Tool: "user__post"}, true},
		{"a plain step, by PATH/TOOL", engine.Stop{Kind: engine.StopStep, Path: "E0", Tool: "user__post", Step: step}, true},
		{"a map item's body call, by PATH/TOOL", engine.Stop{Kind: engine.StopStep, Path: "E1/do.3", Tool: "user__post", Step: step}, true},
		{"a plain step, by its path", engine.Stop{Kind: engine.StopStep, Path: "E7", Tool: "user__post", Step: step}, true},
		{"a tool declared read-only", engine.Stop{Kind: engine.StopTool, Path: "E1/agent.1/user__peek", Tool: "user__peek"}, false},
		{"a pure builtin", engine.Stop{Kind: engine.StopStep, Path: "E0", Tool: "builtin__reshape", Step: step}, false},
		{"builtin__infer, a model call", engine.Stop{Kind: engine.StopTool, Path: "E1/agent.1/builtin__infer", Tool: "builtin__infer"}, false},
		{"a plan that declares nothing", engine.Stop{Kind: engine.StopStep, Path: "E2", Tool: "plan__busy", Step: step}, true},
		{"a plan declared read-only", engine.Stop{Kind: engine.StopStep, Path: "E2", Tool: "plan__quiet", Step: step}, false},
		{"a tool nothing lists", engine.Stop{Kind: engine.StopTool, Path: "E1/agent.1/user__gone", Tool: "user__gone"}, true},
		{"a control step calls no tool", engine.Stop{Kind: engine.StopStep, Path: "E7", Tool: plans.ControlMap, Step: step}, false},
		{"the finish", engine.Stop{Kind: engine.StopStep, Path: "E7", Tool: "solver"}, false},
		{"a result stop is after the call", engine.Stop{Kind: engine.StopResult, Path: "E1/agent.1/user__post", Tool: "user__post"}, false},
	} {
		if got := a.Holds(context.Background(), &tc.stop); got != tc.want {
			t.Errorf("%s (%s at %s): holds %v, want %v", tc.name, tc.stop.Tool, tc.stop.Path, got, tc.want)
		}
	}
	if _, err := NewApprovals([]string{"E1//x"}, nil, nil); err == nil {
		t.Error("a pattern with an empty segment was taken")
	}
	var none *Approvals
	if none.Holds(context.Background(), &engine.Stop{Kind: engine.StopTool, Path: "E1/agent.1/user__post", Tool: "user__post"}) {
		t.Error("no policy holds a call")
	}
}

// BenchmarkToolStop is what the session adds to a tool call's stop that
// it does not hold, the called tool looked up in the catalog: with no
// gate, and with a gate that matches the call of a read-only tool, which
// it lets through. Neither may allocate.
func BenchmarkToolStop(b *testing.B) {
	cat := approvalCatalog(b)
	st := &engine.Stop{Kind: engine.StopTool, Path: "E1/do.3/agent.2/user__peek", Tool: "user__peek"}
	for _, bc := range []struct {
		name  string
		gated bool
	}{{"ungated", false}, {"gated read-only", true}} {
		b.Run(bc.name, func(b *testing.B) {
			s := &Session{bps: NewBreakpoints(), hits: map[int]int{}, conditionErrors: map[int]string{}, states: make(chan State, 1), tools: toolLookup{catalog: cat}}
			if bc.gated {
				a, err := NewApprovals([]string{"**/user__*"}, cat, nil)
				if err != nil {
					b.Fatal(err)
				}
				s.Approve(a)
			}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if d := s.hook(ctx, st); d.Action != engine.Proceed {
					b.Fatal(d)
				}
			}
		})
	}
}

// TestApprovalStop holds a gated call as a session stop: the state says
// so, with the tool's input schema; edits that do not fit the schema are
// refused with the run held; going on from the stop approves the call.
func TestApprovalStop(t *testing.T) {
	cat := approvalCatalog(t)
	s := &Session{bps: NewBreakpoints(), hits: map[int]int{}, conditionErrors: map[int]string{}, states: make(chan State, 1), tools: toolLookup{catalog: cat}}
	s.wake = sync.NewCond(&s.mu)
	a, err := NewApprovals([]string{"**/builtin__*", "E1"}, cat, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Approve(a)
	ctx := context.Background()
	// builtin__reshape is read-only: a gate lets it through.
	if d := s.hook(ctx, &engine.Stop{Kind: engine.StopTool, Path: "E1/agent.1/builtin__reshape", Tool: "builtin__reshape"}); d.Action != engine.Proceed {
		t.Fatalf("a read-only call was decided %v", d.Action)
	}
	decided := make(chan engine.Decision, 1)
	go func() {
		decided <- s.hook(ctx, &engine.Stop{Kind: engine.StopStep, Path: "E1", Tool: "user__post", Step: &plans.Step{}, Input: map[string]any{"text": "hi"}})
	}()
	st := <-s.states
	if st.Reason != ReasonApproval || !st.Stop.Approval || st.Stop.InputSchema == nil {
		t.Fatalf("held for %q, approval %v, input schema %v", st.Reason, st.Stop.Approval, st.Stop.InputSchema)
	}
	for _, bad := range []struct {
		args any
		want string
	}{
		{"x", "a tool call's arguments are a JSON object"},
		{map[string]any{"text": 5}, "the arguments do not fit user__post's input schema: /text: got number, want string"},
	} {
		if _, err := s.Do(Command{Decision: engine.Decision{Action: engine.Edit, Value: bad.args}}); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("edit %v: %v, want %q", bad.args, err, bad.want)
		}
	}
	// The run would go on to its next stop; here it ends there.
	done := make(chan engine.Decision, 1)
	go func() {
		done <- <-decided
		s.states <- State{Reason: ReasonFinished, Finished: true}
	}()
	if _, err := s.Do(Command{Move: Continue}); err != nil {
		t.Fatal(err)
	}
	if d := <-done; d.Action != engine.Approve {
		t.Errorf("continuing from a held call decided %v, want approve", d.Action)
	}
}

// TestApprovalsUnheld checks which approval patterns are said to hold no
// call of a plan: those no call's path matches (a plain step's by PATH/TOOL
// too), with the nearest that would hold one, and those whose every call
// is of a tool the catalog lists as read-only. A tool known only as a
// pattern (user__p*), or an MCP server's (the demo's tracker), may not be
// read-only, so a pattern that reaches one holds.
func TestApprovalsUnheld(t *testing.T) {
	const (
		noCall   = "no tool call of the plan is at a path it matches, so it holds none; the nearest that would: "
		readOnly = "every tool call of the plan at a path it matches is of a read-only tool ("
	)
	demo := demoCatalog(t)
	triage, _ := demo.Plan("triage_queue")
	cat := approvalCatalog(t)
	offers, _ := cat.Plan("offers")
	for _, tc := range []struct {
		pattern string
		catalog *tools.Catalog
		plan    *plans.Plan
		want    string // "" for a pattern that holds a call
	}{
		{"**/tracker__*", demo, triage.Plan, ""},
		{"open_issues", demo, triage.Plan, ""},
		{"post/**", demo, triage.Plan, ""},
		{"**/tracker__add_comment", demo, triage.Plan, ""},
		{"**/nomatch__*", demo, triage.Plan, noCall + "**/tracker__list_issues"},
		{"assess/do.3/agent.2/tracker__search", demo, triage.Plan, noCall + "assess/do.3/verdict/agent.2/tracker__search"},
		{"assess/do.*/verdict/agent.*/tracker__serch", demo, triage.Plan, noCall + "assess/do.*/verdict/agent.*/tracker__search"},
		{"**/card", demo, triage.Plan, readOnly + "builtin__reshape)"},
		{"assess/do.*/card/builtin__reshape", demo, triage.Plan, readOnly + "builtin__reshape)"},
		{"post/then/post_triage_notes/**/user__*", demo, triage.Plan, readOnly + "user__triage_note, user__utc_now)"},
		{"E0/**", cat, offers.Plan, readOnly + "user__peek)"},
		{"E1/**/user__peek", cat, offers.Plan, ""},
		{"**/user__peek", cat, offers.Plan, ""},
		{"E2", cat, offers.Plan, readOnly + "plan__quiet)"},
		{"E2/**", cat, offers.Plan, readOnly + "plan__quiet, user__peek)"},
	} {
		a, err := NewApprovals([]string{tc.pattern}, tc.catalog, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := a.Unheld(PlanShapes(tc.plan, tc.catalog))
		switch {
		case tc.want == "" && len(got) > 0:
			t.Errorf("%s: said to hold none: %s", tc.pattern, got[0].Warning)
		case tc.want != "" && (len(got) != 1 || got[0].Pattern != tc.pattern || !strings.HasPrefix(got[0].Warning, tc.want)):
			t.Errorf("%s: %+v, want %q", tc.pattern, got, tc.want)
		}
	}
	// Each pattern is judged on its own.
	a, _ := NewApprovals([]string{"**/tracker__*", "**/card", "**/nomatch"}, demo, nil)
	if got := a.Unheld(PlanShapes(triage.Plan, demo)); len(got) != 2 || got[0].Pattern != "**/card" || got[1].Pattern != "**/nomatch" {
		t.Errorf("two of three patterns hold none: %+v", got)
	}
}
