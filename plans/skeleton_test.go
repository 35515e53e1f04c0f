package plans_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.yaml.in/yaml/v3"

	"github.com/stepwise-dev/stepwise/engine/config"
	"github.com/stepwise-dev/stepwise/engine/tools"
	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/plans/examples"
)

// demo is the demo project written out and loaded through the real
// configuration and catalog code, as the workbench loads a project.
type demo struct {
	catalog *tools.Catalog
	files   []string // its plan files
}

func loadDemo(tb testing.TB) demo {
	tb.Helper()
	tmp := tb.TempDir()
	dir := filepath.Join(tmp, "desk")
	if err := examples.WriteProject(dir, "/usr/local/bin/stepwise"); err != nil {
		tb.Fatal(err)
	}
	env := map[string]string{"HOME": filepath.Join(tmp, "home"), "XDG_CONFIG_HOME": filepath.Join(tmp, "config"), "XDG_DATA_HOME": filepath.Join(tmp, "data")}
	cfg, _, err := config.Load(config.Options{Dir: dir, LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if err != nil {
		tb.Fatal(err)
	}
	d := demo{catalog: tools.Load(cfg), files: nil}
	d.files, err = filepath.Glob(filepath.Join(dir, examples.ProjectDir, "plans", "*.yaml"))
	if err != nil || len(d.files) < 3 {
		tb.Fatalf("demo plans: %v %v", d.files, err)
	}
	return d
}

// validate runs both layers of validation and returns the problems, one
// line each, and the notes' messages.
func (d demo) validate(tb testing.TB, file string, src []byte) (p *plans.Plan, problems, notes []string) {
	tb.Helper()
	p, r := plans.Load(file, src, plans.Stepwise)
	if p == nil {
		tb.Fatalf("%s does not load:\n%s\n%s", file, r.Problems, src)
	}
	r.Merge(plans.Resolve(p, d.catalog))
	for _, x := range r.Problems {
		problems = append(problems, x.String())
	}
	for _, x := range r.Notes {
		notes = append(notes, x.Message)
	}
	slices.Sort(notes)
	return p, problems, notes
}

func (d demo) tool(tb testing.TB, name string) plans.ToolInfo {
	tb.Helper()
	t, ok := d.catalog.Tool(name)
	if !ok {
		tb.Fatalf("no tool %s in the demo catalog", name)
	}
	return t
}

func TestNewPlanSkeleton(t *testing.T) {
	d := loadDemo(t)
	for _, tc := range []struct{ identifier, name string }{
		{"greet", "Greet"},
		{"weekly_report", "Weekly report"},
		{"on-call-handover", "On call handover"},
		{"yes", "Yes"}, // a YAML 1.1 boolean when unquoted
		{"2026_review", "2026 review"},
	} {
		t.Run(tc.identifier, func(t *testing.T) {
			src := plans.NewPlanSkeleton(tc.identifier)
			p, problems, notes := d.validate(t, "new.yaml", src)
			if len(problems)+len(notes) > 0 {
				t.Fatalf("the skeleton has problems or notes:\n%s\n%s\n%s", strings.Join(problems, "\n"), strings.Join(notes, "\n"), src)
			}
			if p.Identifier.Value != tc.identifier || p.Name.Value != tc.name {
				t.Errorf("identifier %q name %q, want %q %q", p.Identifier.Value, p.Name.Value, tc.identifier, tc.name)
			}
			if len(p.Steps) != 1 || p.Steps[0].ToolName.Value != "builtin__reshape" || p.FinishMode() != plans.FinishOutput {
				t.Errorf("want one builtin__reshape step and an output finish, got %d steps, finish %s", len(p.Steps), p.FinishMode())
			}
			if p.InputSchema == nil || len(p.InputSchema.Check(map[string]any{"topic": "plans"})) > 0 || len(p.InputSchema.Check(map[string]any{})) == 0 {
				t.Errorf("the input schema should require one string input, topic")
			}
			if !strings.Contains(string(src), "\n# ") {
				t.Error("the skeleton teaches nothing: it has no comments")
			}
		})
	}
}

func TestStepSkeleton(t *testing.T) {
	d := loadDemo(t)
	cases := []struct {
		name string
		tool string
		want string
	}{
		{"required and optional", "builtin__infer", `id: E9
tool_name: builtin__infer
input:
  instruction: ""  # complete, self-contained instruction
  # model: ""  # a named model or role to run on; omit for the chat role
  # output_schema: {}  # an object JSON Schema for the result; omit for {"text": ...}
`},
		{"no properties", "user__utc_now", "id: E9\ntool_name: user__utc_now\ninput: {}\n"},
		{"a plan's inputs", "plan__issue_timeline", `id: E9
tool_name: plan__issue_timeline
input:
  id: ""  # A tracker issue id, e.g. CHK-107.
`},
		{"defaults fill placeholders", "plan__incident_brief", `id: E9
tool_name: plan__incident_brief
input:
  symptom: ""  # What customers see, in a few words, e.g. "checkout timeouts".
  # max_related: 5  # How many matching issues to consider.
`},
		{"arrays and string defaults", "plan__post_triage_notes", `id: E9
tool_name: plan__post_triage_notes
input:
  findings: []  # The cards of a triage pass, as triage_queue's assess step makes them.
  # author: triage-desk  # Who signs the comments.
`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := plans.StepSkeleton(nil, "E9", d.tool(t, tc.tool)); got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}

	// A tool whose inputs are all optional (an MCP server's, say) gets an
	// empty mapping: comments alone would leave input null.
	optional := plans.ToolInfo{Name: "tracker__list_issues", Source: "tracker", InputSchema: map[string]any{
		"type": "object",
		"properties": map[string]any{
			"state": map[string]any{"type": "string", "enum": []any{"open", "closed"}},
			"limit": map[string]any{"type": "integer", "description": "at most\nthis many"},
		},
	}}
	want := `id: E9
tool_name: tracker__list_issues
input: {}
  # optional inputs; to give one, replace {} with a mapping:
  # limit: 0  # at most this many
  # state: open
`
	if got := plans.StepSkeleton(nil, "E9", optional); got != want {
		t.Errorf("all optional: got:\n%s\nwant:\n%s", got, want)
	}

	// Every tool of the catalog: the skeleton is one YAML mapping whose
	// input names exactly the tool's required inputs, and the catalog
	// layer finds nothing missing or unknown in it.
	for _, tool := range d.catalog.Listing() {
		t.Run(tool.Name, func(t *testing.T) {
			text := plans.StepSkeleton(nil, "E9", tool)
			var step struct {
				ID       string         `yaml:"id"`
				ToolName string         `yaml:"tool_name"`
				Input    map[string]any `yaml:"input"`
			}
			if err := yaml.Unmarshal([]byte(text), &step); err != nil {
				t.Fatalf("%v:\n%s", err, text)
			}
			schema, _ := tool.InputSchema.(map[string]any)
			var required []string
			list, _ := schema["required"].([]any)
			for _, r := range list {
				required = append(required, r.(string))
			}
			var keys []string
			for k := range step.Input {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			slices.Sort(required)
			if plans.IsControl(tool.Name) {
				// A control step's skeleton fills more than its required
				// inputs: TestStepSkeletonInserted checks it validates.
				return
			}
			if step.ID != "E9" || step.ToolName != tool.Name || step.Input == nil || !slices.Equal(keys, required) {
				t.Errorf("step %+v, want id E9, tool %s and inputs %v:\n%s", step, tool.Name, required, text)
			}
			src, err := plans.AppendStep(plans.NewPlanSkeleton("host"), text)
			if err != nil {
				t.Fatal(err)
			}
			_, problems, _ := d.validate(t, "host.yaml", src)
			for _, pr := range problems {
				if strings.Contains(pr, "step E9:") && (strings.Contains(pr, "needs input") || strings.Contains(pr, "takes no input")) {
					t.Errorf("%s\n%s", pr, text)
				}
			}
		})
	}
}

// TestStepSkeletonInserted inserts the skeleton of every entry of the
// catalog, control steps included, into a small plan, as the workbench's
// catalog does: the plan validates as it is, with nothing for the author
// to fix before the first run, into a plan with steps before the new one
// as into one without. Every placeholder of a control step says what to
// replace.
func TestStepSkeletonInserted(t *testing.T) {
	d := loadDemo(t)
	hosts := []struct{ name, src string }{
		{"after a step", string(plans.NewPlanSkeleton("host"))},
		{"as the first step", "identifier: host\nname: Host\ndescription: A plan with no steps yet.\nsteps: []\n"},
	}
	listing := append(d.catalog.Listing(), trackerTools(t)...)
	for _, name := range plans.ControlSteps {
		if !slices.ContainsFunc(listing, func(t plans.ToolInfo) bool { return t.Name == name }) {
			t.Errorf("the catalog does not list the control step %s", name)
		}
	}
	for _, tool := range listing {
		for _, host := range hosts {
			t.Run(tool.Name+"/"+host.name, func(t *testing.T) {
				before, _ := plans.Load("host.yaml", []byte(host.src), plans.Stepwise)
				step := plans.StepSkeleton(before, plans.NextStepID(before), tool)
				src, err := plans.AppendStep([]byte(host.src), step)
				if err != nil {
					t.Fatal(err)
				}
				_, problems, _ := d.validate(t, "host.yaml", src)
				if len(problems) > 0 {
					t.Errorf("problems:\n%s\n%s", strings.Join(problems, "\n"), src)
				}
				if !plans.IsControl(tool.Name) {
					return
				}
				for line := range strings.Lines(step) {
					if strings.HasPrefix(line, "  ") && !strings.HasPrefix(line, "  #") && !strings.Contains(line, "  # replace: ") {
						t.Errorf("a placeholder line says nothing of what to replace: %q", line)
					}
				}
			})
		}
	}
}

// trackerTools lists the demo's MCP server's tools as the catalog lists
// them once the server answers, from a tracker connected in memory.
func trackerTools(t *testing.T) []plans.ToolInfo {
	t.Helper()
	ctx := context.Background()
	serverSide, clientSide := mcp.NewInMemoryTransports()
	ss, err := examples.TrackerServer().Connect(ctx, serverSide, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "skeleton-test", Version: "0"}, nil).Connect(ctx, clientSide, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		cs.Close()
		ss.Wait()
	}()
	list, err := cs.ListTools(ctx, nil)
	if err != nil || len(list.Tools) == 0 {
		t.Fatalf("the tracker lists no tools: %v", err)
	}
	var out []plans.ToolInfo
	for _, tool := range list.Tools {
		out = append(out, plans.ToolInfo{Name: "tracker__" + tool.Name, Source: "tracker", InputSchema: tool.InputSchema})
	}
	return out
}

// TestControlSkeleton pins the skeleton of each control step: the lists and
// gates read the last step's result, or a literal list and the input when
// there is no step.
func TestControlSkeleton(t *testing.T) {
	d := loadDemo(t)
	host, _ := plans.Load("host.yaml", plans.NewPlanSkeleton("host"), plans.Stepwise)
	cases := []struct {
		name string
		plan *plans.Plan
		tool string
		want string
	}{
		{"map after a step", host, "map", `id: E2
tool_name: map
input:
  over: "{{E1.items}}"  # replace: the list to go over, from E1's result or another earlier step's
  do: {tool_name: builtin__reshape, input: {shape: {item: "{{item}}"}}}  # replace: the call (no id) or list of steps to run per item; {{item}} and {{index}} are the item and its place
  # concurrency: 1  # items in flight; default 1
`},
		{"map as the first step", nil, "map", `id: E1
tool_name: map
input:
  over: [first, second]  # replace: the list to go over, e.g. a list from an earlier step's result
  do: {tool_name: builtin__reshape, input: {shape: {item: "{{item}}"}}}  # replace: the call (no id) or list of steps to run per item; {{item}} and {{index}} are the item and its place
  # concurrency: 1  # items in flight; default 1
`},
		{"exit", host, "exit", `id: E2
tool_name: exit
input:
  when: {value: "{{E1}}", op: empty}  # replace: when the plan ends here (without when, it always does)
  status: success  # replace: success or error
  message: "Nothing to do."  # replace: the plan's answer, or the error; may use templates
  # infer: ""  # a yes/no question for the judge role
  # model: ""  # model for the infer verdict
  # output: {}  # template map emitted as the plan's output
`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := plans.StepSkeleton(tc.plan, plans.NextStepID(tc.plan), d.tool(t, tc.tool)); got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

// spliced reports whether out is src with one run of text inserted, and
// returns that text.
func spliced(src, out []byte) (string, bool) {
	if len(out) < len(src) {
		return "", false
	}
	pre := 0
	for pre < len(src) && src[pre] == out[pre] {
		pre++
	}
	post := 0
	for post < len(src)-pre && src[len(src)-1-post] == out[len(out)-1-post] {
		post++
	}
	if pre+post != len(src) {
		return "", false
	}
	return string(out[pre : len(out)-post]), true
}

// TestAppendStepDemoPlans appends a step to every demo plan: the new step
// is there, validation finds nothing new, and the file is the same text
// with the step inserted.
func TestAppendStepDemoPlans(t *testing.T) {
	d := loadDemo(t)
	for _, file := range d.files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			before, problems, notes := d.validate(t, file, src)
			if len(problems) > 0 {
				t.Fatalf("the demo plan has problems: %s", problems)
			}
			id := plans.NextStepID(before)
			step := plans.StepSkeleton(before, id, d.tool(t, "user__append_event"))
			out, err := plans.AppendStep(src, step)
			if err != nil {
				t.Fatal(err)
			}
			after, problems, notesAfter := d.validate(t, file, out)
			if len(problems) > 0 || !slices.Equal(notes, notesAfter) {
				t.Errorf("problems after appending:\n%s\nnotes %q, were %q\n%s", strings.Join(problems, "\n"), notesAfter, notes, out)
			}
			if len(after.Steps) != len(before.Steps)+1 {
				t.Fatalf("%d steps after appending to %d", len(after.Steps), len(before.Steps))
			}
			for i, s := range before.Steps {
				if a := after.Steps[i]; a.Path != s.Path || a.ToolName.Value != s.ToolName.Value || a.Pos != s.Pos {
					t.Errorf("step %d changed: %s %s at %v, was %s %s at %v", i, a.Path, a.ToolName.Value, a.Pos, s.Path, s.ToolName.Value, s.Pos)
				}
			}
			added := after.Steps[len(before.Steps)]
			if added.ID.Value != id || added.ToolName.Value != "user__append_event" || added.Input.Get("so_far") == nil {
				t.Errorf("the new step is %s calling %s", added.ID.Value, added.ToolName.Value)
			}
			if _, ok := spliced(src, out); !ok {
				t.Fatalf("the file changed beyond an insertion:\n%s", out)
			}
			// The demo indents its lists by two and separates steps by
			// a blank line.
			if !strings.Contains(string(out), "\n\n  - id: "+id+"\n    tool_name: user__append_event\n    input:\n      so_far: \"\"") {
				t.Errorf("the new step is not laid out like the others:\n%s", out)
			}
		})
	}
}

const reshape = "id: N1\ntool_name: builtin__reshape\ninput:\n  shape: {}\n"

const planHead = "identifier: edge\nname: Edge\ndescription: An edge case.\n"

func TestAppendStepEdgeCases(t *testing.T) {
	d := loadDemo(t)
	cases := []struct {
		name, src, want string
	}{
		{
			"end of file without a newline",
			planHead + "steps:\n  - id: A1\n    tool_name: builtin__reshape\n    input: {shape: {}}",
			planHead + "steps:\n  - id: A1\n    tool_name: builtin__reshape\n    input: {shape: {}}\n  - id: N1\n    tool_name: builtin__reshape\n    input:\n      shape: {}\n",
		},
		{
			"comments after the last step",
			planHead + "steps:\n  - id: A1\n    tool_name: builtin__reshape\n    input: {shape: {}}\n    # more to come\n  # - id: A2 (not yet)\n\n# the finish\noutput: {}\n",
			planHead + "steps:\n  - id: A1\n    tool_name: builtin__reshape\n    input: {shape: {}}\n    # more to come\n\n  - id: N1\n    tool_name: builtin__reshape\n    input:\n      shape: {}\n  # - id: A2 (not yet)\n\n# the finish\noutput: {}\n",
		},
		{
			"a block scalar with comment-like lines",
			planHead + "steps:\n  - id: A1\n    tool_name: builtin__infer\n    input:\n      instruction: |\n        Summarise.\n\n        # Heading\nsolver:\n  query_to_answer: x\n  data: {}\n",
			planHead + "steps:\n  - id: A1\n    tool_name: builtin__infer\n    input:\n      instruction: |\n        Summarise.\n\n        # Heading\n\n  - id: N1\n    tool_name: builtin__reshape\n    input:\n      shape: {}\nsolver:\n  query_to_answer: x\n  data: {}\n",
		},
		{
			"dashes at the key's column",
			planHead + "steps:\n- id: A1\n  tool_name: builtin__reshape\n  input: {shape: {}}\n- id: A2\n  tool_name: builtin__reshape\n  input: {shape: {}}\noutput: {}\n",
			planHead + "steps:\n- id: A1\n  tool_name: builtin__reshape\n  input: {shape: {}}\n- id: A2\n  tool_name: builtin__reshape\n  input: {shape: {}}\n- id: N1\n  tool_name: builtin__reshape\n  input:\n    shape: {}\noutput: {}\n",
		},
		{
			"four-space indentation",
			planHead + "steps:\n    -   id: A1\n        tool_name: builtin__reshape\n        input: {shape: {}}\n",
			planHead + "steps:\n    -   id: A1\n        tool_name: builtin__reshape\n        input: {shape: {}}\n    -   id: N1\n        tool_name: builtin__reshape\n        input:\n            shape: {}\n",
		},
		{
			"empty flow list",
			planHead + "steps: []\noutput: {}\n",
			planHead + "steps:\n  - id: N1\n    tool_name: builtin__reshape\n    input:\n      shape: {}\noutput: {}\n",
		},
		{
			"empty flow list with a comment",
			planHead + "steps: [ ]   # none yet\n",
			planHead + "steps: # none yet\n  - id: N1\n    tool_name: builtin__reshape\n    input:\n      shape: {}\n",
		},
		{
			"empty steps",
			planHead + "steps:\noutput: {}\n",
			planHead + "steps:\n  - id: N1\n    tool_name: builtin__reshape\n    input:\n      shape: {}\noutput: {}\n",
		},
		{
			"null steps",
			planHead + "steps: ~ # later\n",
			planHead + "steps: # later\n  - id: N1\n    tool_name: builtin__reshape\n    input:\n      shape: {}\n",
		},
		{
			"flow list with items",
			planHead + "steps: [{id: A1, tool_name: builtin__reshape, input: {shape: {q: \"a, ]b\"}}}]  # one\n",
			planHead + "steps: [{id: A1, tool_name: builtin__reshape, input: {shape: {q: \"a, ]b\"}}}, {id: N1, tool_name: builtin__reshape, input: {shape: {}}}]  # one\n",
		},
		{
			"flow list over lines with a trailing comma",
			planHead + "steps: [\n  {id: A1, tool_name: builtin__reshape, input: {shape: {}}},\n]\n",
			planHead + "steps: [\n  {id: A1, tool_name: builtin__reshape, input: {shape: {}}}, {id: N1, tool_name: builtin__reshape, input: {shape: {}}}\n]\n",
		},
		{
			"a flow document",
			"{identifier: edge, name: Edge, description: An edge case., steps: []}\n",
			"{identifier: edge, name: Edge, description: An edge case., steps: [{id: N1, tool_name: builtin__reshape, input: {shape: {}}}]}\n",
		},
		{
			"windows line ends",
			strings.ReplaceAll(planHead+"steps:\n  - id: A1\n    tool_name: builtin__reshape\n    input: {shape: {}}\n\n  - id: A2\n    tool_name: builtin__reshape\n    input: {shape: {}}\n", "\n", "\r\n"),
			strings.ReplaceAll(planHead+"steps:\n  - id: A1\n    tool_name: builtin__reshape\n    input: {shape: {}}\n\n  - id: A2\n    tool_name: builtin__reshape\n    input: {shape: {}}\n\n  - id: N1\n    tool_name: builtin__reshape\n    input:\n      shape: {}\n", "\n", "\r\n"),
		},
		{
			"a kept block scalar's trailing blank lines",
			planHead + "steps:\n  - id: A1\n    tool_name: builtin__infer\n    input:\n      instruction: |+\n        Keep these.\n\n\n",
			planHead + "steps:\n  - id: A1\n    tool_name: builtin__infer\n    input:\n      instruction: |+\n        Keep these.\n\n\n  - id: N1\n    tool_name: builtin__reshape\n    input:\n      shape: {}\n",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := plans.Load("edge.yaml", []byte(tc.src), plans.Stepwise)
			out, err := plans.AppendStep([]byte(tc.src), reshape)
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", out, tc.want)
			}
			after, problems, _ := d.validate(t, "edge.yaml", out)
			if len(problems) > 0 {
				t.Errorf("problems:\n%s", strings.Join(problems, "\n"))
			}
			if len(after.Steps) != len(before.Steps)+1 || after.Steps[len(after.Steps)-1].ID.Value != "N1" {
				t.Errorf("%d steps after appending to %d", len(after.Steps), len(before.Steps))
			}
			for i, s := range before.Steps {
				if got, want := after.Steps[i].Input.Literal(), s.Input.Literal(); !equalJSON(got, want) {
					t.Errorf("step %s's input changed: %v, was %v", s.Path, got, want)
				}
			}
		})
	}
}

func equalJSON(a, b any) bool {
	ya, _ := yaml.Marshal(a)
	yb, _ := yaml.Marshal(b)
	return string(ya) == string(yb)
}

func TestAppendStepErrors(t *testing.T) {
	cases := []struct {
		name, src, step string
		line            int
		want            string
	}{
		{"no steps", planHead + "output: {}\n", reshape, 1, "no 'steps' list"},
		{"steps is a mapping", planHead + "steps:\n  a: 1\n", reshape, 5, "'steps' must be a list of steps, not a mapping"},
		{"steps is a string", planHead + "steps: soon\n", reshape, 4, "not a string"},
		{"steps is an alias", "x: &s []\n" + planHead + "steps: *s\n", reshape, 5, "alias *s"},
		{"not YAML", planHead + "steps: [\n", reshape, 4, "fix the YAML"},
		{"not a mapping", "- a\n- b\n", reshape, 1, "a plan file is a mapping"},
		{"empty", "", reshape, 1, "empty"},
		{"the step is not a mapping", planHead + "steps: []\n", "- id: A1\n", 0, "not a YAML mapping"},
		{"the step is not YAML", planHead + "steps: []\n", "id: [\n", 0, "not a YAML mapping"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := plans.AppendStep([]byte(tc.src), tc.step)
			var ee *plans.EditError
			if !errors.As(err, &ee) {
				t.Fatalf("err = %v (%T), out:\n%s", err, err, out)
			}
			if ee.Pos.Line != tc.line || !strings.Contains(ee.Error(), tc.want) {
				t.Errorf("error %q at line %d, want %q at line %d", ee.Error(), ee.Pos.Line, tc.want, tc.line)
			}
			ee.Pos.File = "plans/edge.yaml"
			if tc.line > 0 && !strings.HasPrefix(ee.Error(), "plans/edge.yaml:") {
				t.Errorf("with a file the error reads %q", ee.Error())
			}
		})
	}
}

func TestNextStepID(t *testing.T) {
	load := func(ids ...string) *plans.Plan {
		src := planHead + "steps:\n"
		for _, id := range ids {
			src += "  - id: " + id + "\n    tool_name: builtin__reshape\n    input: {shape: {}}\n"
		}
		p, _ := plans.Load("ids.yaml", []byte(src), plans.Stepwise)
		return p
	}
	cases := []struct {
		name string
		p    *plans.Plan
		want string
	}{
		{"no plan", nil, "E1"},
		{"E ids", load("E1", "E2"), "E3"},
		{"from zero", load("E0"), "E1"},
		{"S ids past nine", load("S1", "S9", "S10"), "S11"},
		{"words", load("fetch", "summarise"), "E1"},
		{"words then numbered", load("fetch", "step_4"), "step_5"},
		{"the last numbered style wins", load("E1", "S1", "done"), "S2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := plans.NextStepID(tc.p); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}

	// Body steps share the id space: E10 inside a map body is taken.
	src := planHead + "steps:\n  - id: E1\n    tool_name: map\n    input:\n      over: [1]\n      do:\n        - id: E10\n          tool_name: builtin__reshape\n          input: {shape: {}}\n"
	p, r := plans.Load("body.yaml", []byte(src), plans.Stepwise)
	if !r.OK() {
		t.Fatal(r.Problems)
	}
	if got := plans.NextStepID(p); got != "E11" {
		t.Errorf("with a body step E10: got %s, want E11", got)
	}
}

func FuzzAppendStep(f *testing.F) {
	d := loadDemo(f)
	for _, file := range d.files {
		src, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src, reshape)
	}
	for _, src := range []string{
		planHead + "steps: []\n",
		planHead + "steps:\n- id: A\n  tool_name: x__y\n  input: {}",
		planHead + "steps: [{id: A}, 'b''c', \"d\\\"]\"]\n",
		planHead + "steps:\n  - id: A\n    input:\n      p: |+\n        x\n\n# c\n",
		"{steps: [a, [b]]}",
	} {
		f.Add([]byte(src), reshape)
	}
	f.Add([]byte(planHead+"steps: []\n"), "id: x\ninput: {a: [1, {b: c}]}\n")
	f.Fuzz(func(t *testing.T, src []byte, step string) {
		out, err := plans.AppendStep(src, step)
		if err != nil {
			var ee *plans.EditError
			if !errors.As(err, &ee) {
				t.Fatalf("error %v is a %T, not an *EditError", err, err)
			}
			return
		}
		// A step was added to the first steps list, and nothing else
		// changed: AppendStep checks that itself; the count is checked
		// here again, independently.
		var before, after yaml.Node
		if yaml.Unmarshal(src, &before) != nil || yaml.Unmarshal(out, &after) != nil {
			return // only the loader's own workarounds read it
		}
		if n, m := stepCount(&before), stepCount(&after); m != n+1 {
			t.Fatalf("%d steps after appending to %d:\n%s", m, n, out)
		}
	})
}

// stepCount counts the items of the first top-level steps list; 0 when
// there is none.
func stepCount(doc *yaml.Node) int {
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return 0
	}
	root := doc.Content[0]
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "steps" {
			return len(root.Content[i+1].Content)
		}
	}
	return 0
}

// TestAppendStepKeepsBlockScalars appends a step holding a literal block
// with lines indented within it to a file indented by four: the step's
// nesting cannot be widened to the file's without changing the text, so it
// is kept as written.
func TestAppendStepKeepsBlockScalars(t *testing.T) {
	src := planHead + "steps:\n    - id: A1\n      tool_name: builtin__reshape\n      input: {shape: {}}\n"
	step := "id: N1\ntool_name: builtin__infer\ninput:\n  instruction: |\n    Steps:\n      1. read\n"
	out, err := plans.AppendStep([]byte(src), step)
	if err != nil {
		t.Fatal(err)
	}
	want := src + "    - id: N1\n      tool_name: builtin__infer\n      input:\n        instruction: |\n          Steps:\n            1. read\n"
	if string(out) != want {
		t.Errorf("got:\n%s\nwant:\n%s", out, want)
	}
	p, r := plans.Load("block.yaml", out, plans.Stepwise)
	if !r.OK() {
		t.Fatal(r.Problems)
	}
	if got := p.Steps[1].Input.Get("instruction").String; got != "Steps:\n  1. read\n" {
		t.Errorf("instruction %q", got)
	}
}
