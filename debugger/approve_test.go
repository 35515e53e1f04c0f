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
// tool that says nothing of being read-only, one that says it is, and two
// plans, one declared read-only.
func approvalCatalog(tb testing.TB) *tools.Catalog {
	tb.Helper()
	dir := tb.TempDir()
	files := map[string]string{
		".stepwise/config.toml":      "[storage]\nbackend = \"memory\"\n",
		".stepwise/tools/post.yaml":  "name: post\ndescription: Posts.\nkind: exec\ncommand: \"true\"\ninput_schema: {type: object, required: [text], properties: {text: {type: string}}}\n",
		".stepwise/tools/peek.yaml":  "name: peek\ndescription: Reads.\nkind: exec\ncommand: \"true\"\nread_only: true\n",
		".stepwise/plans/busy.yaml":  "identifier: busy\nname: busy\ndescription: b\nsteps:\n  - id: E0\n    tool_name: user__post\n    input: {}\n",
		".stepwise/plans/quiet.yaml": "identifier: quiet\nname: quiet\ndescription: q\nread_only: true\nsteps:\n  - id: E0\n    tool_name: user__peek\n    input: {}\n",
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
