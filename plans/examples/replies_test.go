package examples

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.yaml.in/yaml/v3"

	"github.com/stepwise-dev/stepwise/plans"
)

// scriptFile is the replies file of the script provider, as the brief of the
// demo specifies it; decoding it strictly catches a misspelt field.
type scriptFile struct {
	Replies []scriptReply `yaml:"replies"`
}

type scriptReply struct {
	Match string `yaml:"match"`
	Role  string `yaml:"role"`
	Reply struct {
		Text      *string          `yaml:"text"`
		JSON      any              `yaml:"json"`
		ToolCalls []scriptToolCall `yaml:"tool_calls"`
		Reasoning string           `yaml:"reasoning"`
		Usage     *struct {
			InputTokens  int `yaml:"input_tokens"`
			OutputTokens int `yaml:"output_tokens"`
		} `yaml:"usage"`
		DelayMS int `yaml:"delay_ms"`
	} `yaml:"reply"`
}

type scriptToolCall struct {
	Name      string         `yaml:"name"`
	Arguments map[string]any `yaml:"arguments"`
}

func readReplies(t *testing.T, file string) []scriptReply {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(src))
	dec.KnownFields(true)
	var f scriptFile
	if err := dec.Decode(&f); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return f.Replies
}

// asJSON turns YAML-decoded data into what it is on the wire: JSON data
// with json.Number numbers, the form schemas check.
func asJSON(t *testing.T, v any) any {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// itemIndex is the run-time index in a path, which a step's static path
// writes as do.*.
var itemIndex = regexp.MustCompile(`/do\.[0-9]+(/|$)`)

// agentRun is what the replies script for one run of one agent step.
type agentRun struct {
	step                   *plans.Step
	rounds, calls, fanOut  int
	answered, invalid, fix bool
	fetched                []string // ids passed to tracker__get_issue
}

// judgeSchema is the forced schema of an infer verdict.
var judgeSchema = map[string]any{
	"type": "object", "required": []any{"verdict", "reason"}, "additionalProperties": false,
	"properties": map[string]any{"verdict": map[string]any{"type": "boolean"}, "reason": map[string]any{"type": "string"}},
}

// TestRepliesRunThePlans plays the replies file against the plans with the
// default inputs, the way the script provider will answer them: every reply
// is for a step that makes model calls, every agent ends with an answer that
// passes its schema (one only after a repair pass), every tool call is one
// the agent may make and one the real tracker accepts, and every model call
// the plans make has a reply.
func TestRepliesRunThePlans(t *testing.T) {
	d := loadDemo(t)
	p, err := d.cfg.Provider("demo")
	if err != nil {
		t.Fatal(err)
	}
	replies := readReplies(t, p.File)
	cs := connectInMemory(t)

	steps := map[string]*plans.Step{}
	solvers := 0
	for _, pl := range d.plans {
		plans.WalkSteps(pl, func(s *plans.Step) { steps[s.Path] = s })
		if pl.Solver != nil {
			solvers++
		}
	}
	runs := map[string]*agentRun{}
	var runOrder []string
	replied := map[string]bool{} // static paths and "solver" that have replies
	for i, r := range replies {
		where := fmt.Sprintf("reply %d (match %q)", i+1, r.Match)
		role := r.Role
		if role == "" {
			role = "chat"
		}
		if !slices.Contains([]string{"chat", "repair", "judge", "solver"}, role) {
			t.Errorf("%s: unknown role %q", where, role)
			continue
		}
		hasText, hasJSON := r.Reply.Text != nil, r.Reply.JSON != nil
		if hasText && hasJSON {
			t.Errorf("%s: both text and json", where)
		}
		if !hasText && !hasJSON && len(r.Reply.ToolCalls) == 0 {
			t.Errorf("%s: an empty reply", where)
		}
		if role == "solver" {
			if !hasText || strings.TrimSpace(*r.Reply.Text) == "" {
				t.Errorf("%s: a solver reply needs text", where)
			}
			replied["solver"] = true
			continue
		}
		static := itemIndex.ReplaceAllString(r.Match, "/do.*$1")
		s, ok := steps[static]
		if !ok {
			t.Errorf("%s: matches no step of the demo's plans", where)
			continue
		}
		replied[static] = true
		var answer any
		if hasJSON {
			answer = asJSON(t, r.Reply.JSON)
		}
		switch {
		case role == "judge":
			if !hasInfer(s) {
				t.Errorf("%s: a judge reply for a step without an infer gate", where)
			}
			sc, err := plans.CompileSchema(judgeSchema)
			if err != nil {
				t.Fatal(err)
			}
			if !hasJSON {
				t.Errorf("%s: a verdict is JSON", where)
			} else if vs := (&plans.Schema{Compiled: sc}).Check(answer); len(vs) > 0 {
				t.Errorf("%s: verdict %v", where, vs)
			}
		case s.ToolName.Value == plans.ControlAgent:
			a := s.Control.(*plans.AgentInput)
			run := runs[r.Match]
			if run == nil {
				run = &agentRun{step: s}
				runs[r.Match] = run
				runOrder = append(runOrder, r.Match)
			}
			if run.answered {
				t.Errorf("%s: a reply after the agent's valid answer is never used", where)
			}
			if role == "repair" {
				if !run.invalid || run.fix {
					t.Errorf("%s: a repair reply with no refused answer before it", where)
				}
				if vs := a.OutputSchema.Check(answer); len(vs) > 0 {
					t.Errorf("%s: the repair does not pass the schema: %v", where, vs)
				}
				run.fix, run.answered = true, true
				continue
			}
			run.rounds++
			if len(r.Reply.ToolCalls) > 0 {
				for _, c := range r.Reply.ToolCalls {
					checkToolCall(t, where, d, cs, a, c, run)
				}
				continue
			}
			if !hasJSON {
				t.Errorf("%s: an agent's answer is JSON", where)
			} else if vs := a.OutputSchema.Check(answer); len(vs) > 0 {
				run.invalid = true
			} else {
				run.answered = true
			}
		case role == "chat" && (s.ToolName.Value == "builtin__infer" || strings.HasPrefix(s.ToolName.Value, "user__")):
			tf, isUser := d.catalog.UserTool(s.ToolName.Value)
			switch {
			case isUser && tf.Kind.Value != plans.ToolPrompt:
				t.Errorf("%s: %s is a %s tool and calls no model", where, s.ToolName.Value, tf.Kind.Value)
			case isUser && tf.OutputSchema != nil:
				if vs := tf.OutputSchema.Check(answer); !hasJSON || len(vs) > 0 {
					t.Errorf("%s: the answer does not pass %s's output_schema: %v", where, s.ToolName.Value, vs)
				}
			case s.Input.Get("output_schema") == nil && !hasText:
				t.Errorf("%s: without an output_schema, builtin__infer answers text", where)
			}
		default:
			t.Errorf("%s: a %s reply for step %s (%s), which makes no such call", where, role, s.Path, s.ToolName.Value)
		}
	}

	repaired := 0
	for _, m := range runOrder {
		run := runs[m]
		a := run.step.Control.(*plans.AgentInput)
		switch {
		case !run.answered:
			t.Errorf("%s: the agent never gets a valid answer", m)
		case run.fix:
			repaired++
		}
		if run.rounds > a.Iterations() {
			t.Errorf("%s: %d rounds scripted, max_iterations is %d", m, run.rounds, a.Iterations())
		}
		if a.MaxToolCalls.Set && run.calls > a.MaxToolCalls.Value {
			t.Errorf("%s: %d tool calls scripted, max_tool_calls is %d", m, run.calls, a.MaxToolCalls.Value)
		}
		if a.MaxFanOut.Set && run.fanOut > a.MaxFanOut.Value {
			t.Errorf("%s: %d plan runs scripted, max_fan_out is %d", m, run.fanOut, a.MaxFanOut.Value)
		}
	}
	if repaired == 0 {
		t.Error("no agent answer fails its schema first, so the demo never shows a repair pass")
	}

	// Every model call the plans make has a reply: agents, infer gates,
	// prompt tools and builtin__infer, and the solvers.
	for p, s := range steps {
		name := s.ToolName.Value
		tf, isUser := d.catalog.UserTool(name)
		if name == plans.ControlAgent || hasInfer(s) || name == "builtin__infer" || isUser && tf.Kind.Value == plans.ToolPrompt {
			if !replied[p] {
				t.Errorf("step %s (%s) makes model calls, and no reply answers them", p, name)
			}
		}
	}
	if solvers > 0 && !replied["solver"] {
		t.Error("no solver reply")
	}

	// The triage map runs one agent per open issue without an owner, among
	// the most urgent ones triage_queue looks at by default; each must have
	// its replies, reading its own issue.
	var open IssueList
	call(t, cs, "list_issues", map[string]any{"state": "open", "limit": 6}, &open)
	var unowned []string
	for _, is := range open.Issues {
		if is.Assignee == "" {
			unowned = append(unowned, is.ID)
		}
	}
	for i, id := range unowned {
		m := fmt.Sprintf("assess/do.%d/verdict", i)
		run := runs[m]
		if run == nil {
			t.Errorf("no replies for %s, the agent triaging %s", m, id)
			continue
		}
		if !slices.Contains(run.fetched, id) {
			t.Errorf("%s triages %s but reads %v", m, id, run.fetched)
		}
	}
}

func hasInfer(s *plans.Step) bool {
	switch c := s.Control.(type) {
	case *plans.ExitInput:
		return c.Infer != nil
	case *plans.DecideInput:
		return c.Infer != nil
	case *plans.FilterInput:
		return c.Infer != nil
	}
	return false
}

// checkToolCall checks one scripted tool call of an agent: the agent's tools
// allow it, and the tool accepts the arguments; tracker calls are made for
// real.
func checkToolCall(t *testing.T, where string, d *demo, cs *mcp.ClientSession, a *plans.AgentInput, c scriptToolCall, run *agentRun) {
	t.Helper()
	run.calls++
	allowed := a.Tools == nil
	if a.Tools != nil {
		for _, pat := range a.Tools.Patterns {
			if ok, _ := path.Match(pat.Value, c.Name); ok {
				allowed = true
			}
		}
	}
	if !allowed {
		t.Errorf("%s: the agent may not call %s", where, c.Name)
	}
	args := asJSON(t, c.Arguments)
	switch ns, tool, _ := strings.Cut(c.Name, "__"); ns {
	case "tracker":
		var out json.RawMessage
		if text, isErr := call(t, cs, tool, c.Arguments, &out); isErr {
			t.Errorf("%s: %s fails: %s", where, c.Name, text)
		}
		if tool == "get_issue" {
			run.fetched = append(run.fetched, fmt.Sprint(c.Arguments["id"]))
		}
	case "plan":
		run.fanOut++
		info, ok := d.catalog.Tool(c.Name)
		if !ok {
			t.Errorf("%s: no tool %s", where, c.Name)
			return
		}
		sc, err := plans.CompileSchema(info.InputSchema)
		if err != nil {
			t.Fatal(err)
		}
		if vs := (&plans.Schema{Compiled: sc}).Check(args); len(vs) > 0 {
			t.Errorf("%s: %s inputs: %v", where, c.Name, vs)
		}
	default:
		t.Errorf("%s: the demo's agents call tracker and plan tools, not %s", where, c.Name)
	}
}
