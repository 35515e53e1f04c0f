package tools

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stepwise-dev/stepwise/engine/config"
	"github.com/stepwise-dev/stepwise/plans"
)

// projectConfig writes files (path relative to a temporary project root ->
// text) and loads the configuration of that project, with the global
// configuration pointed at an empty directory; env is what ${VAR} in
// config.toml sees. It returns the configuration and the project root.
func projectConfig(t *testing.T, files map[string]string, env map[string]string) (*config.Config, string) {
	t.Helper()
	root := t.TempDir()
	for name, text := range files {
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(root, ".stepwise"), 0o755); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	lookup := map[string]string{"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, "config"), "XDG_DATA_HOME": filepath.Join(home, "data")}
	for k, v := range env {
		lookup[k] = v
	}
	cfg, _, err := config.Load(config.Options{Dir: root, LookupEnv: func(k string) (string, bool) { v, ok := lookup[k]; return v, ok }})
	if err != nil {
		t.Fatal(err)
	}
	return cfg, root
}

// project loads the catalog of a project of files (see projectConfig).
func project(t *testing.T, files map[string]string) *Catalog {
	t.Helper()
	cfg, _ := projectConfig(t, files, nil)
	return Load(cfg)
}

// newRuntime loads a project of files (see projectConfig) and returns its
// runtime, closed when the test ends, and the project root. A tool or plan
// file of the project that does not load fails the test.
func newRuntime(t *testing.T, files map[string]string, env map[string]string) (*Runtime, string) {
	t.Helper()
	cfg, root := projectConfig(t, files, env)
	cat := Load(cfg)
	for _, sk := range cat.Skipped {
		t.Fatalf("test project: %s: %s", sk.File, sk.Reason)
	}
	rt := NewRuntime(cfg, cat)
	t.Cleanup(func() { rt.Close() })
	return rt, root
}

func plan(id, body string) string {
	return "identifier: " + id + "\nname: " + id + "\ndescription: the " + id + " plan\n" + body
}

const tinySteps = "steps:\n  - id: E0\n    tool_name: builtin__reshape\n    input: {shape: {a: 1}}\n"

func TestLoad(t *testing.T) {
	c := project(t, map[string]string{
		".stepwise/config.toml": "[mcp.tracker]\ncommand = \"tracker\"\n",
		".stepwise/tools/a_stamp.yaml": "name: stamp\ndescription: Print the date.\nkind: exec\ncommand: date\nread_only: true\n" +
			"input_schema: {type: object}\noutput_schema: {type: object, properties: {text: {type: string}}}\n",
		".stepwise/tools/b_stamp.yaml":  "name: stamp\ndescription: A second stamp.\nkind: exec\ncommand: date\n",
		".stepwise/tools/shape.yml":     "name: shape\ndescription: Rename.\nkind: reshape\nshape: {x: \"{{input.y}}\"}\n",
		".stepwise/tools/broken.yaml":   "name: broken\ndescription: no command\nkind: exec\n",
		".stepwise/tools/notes.txt":     "not a tool file",
		".stepwise/plans/a_first.yaml":  plan("first", "input_schema: {type: object, properties: {q: {type: string}}}\n"+tinySteps),
		".stepwise/plans/b_first.yaml":  plan("first", tinySteps),
		".stepwise/plans/pure.yaml":     plan("pure", "read_only: true\n"+tinySteps),
		".stepwise/plans/hidden.yaml":   plan("hidden", "requires_servers: [linear]\n"+tinySteps),
		".stepwise/plans/caller.yaml":   plan("caller", "steps:\n  - id: E0\n    tool_name: plan__hidden\n    input: {}\n"),
		".stepwise/plans/chain.yaml":    plan("chain", "steps:\n  - id: E0\n    tool_name: plan__caller\n    input: {}\n"),
		".stepwise/plans/ok_tools.yaml": plan("ok_tools", "steps:\n  - id: E0\n    tool_name: tracker__list\n    input: {}\n  - id: E1\n    tool_name: user__stamp\n    input: {}\n"),
		".stepwise/plans/broken.yaml":   plan("broken", "steps:\n  - id: E0\n    tool_name: mapp\n    input: {}\n"),
	})

	names := func(ts []plans.ToolInfo) []string {
		var out []string
		for _, t := range ts {
			out = append(out, t.Name)
		}
		return out
	}
	wantTools := []string{"builtin__infer", "builtin__reshape", "plan__broken", "plan__caller", "plan__chain", "plan__first", "plan__hidden", "plan__ok_tools", "plan__pure", "user__broken", "user__shape", "user__stamp"}
	if got := names(c.Tools()); !slices.Equal(got, wantTools) {
		t.Errorf("Tools() = %v\nwant %v", got, wantTools)
	}
	if got := c.Servers(); !slices.Equal(got, []string{"tracker"}) {
		t.Errorf("Servers() = %v", got)
	}
	if c.Models() != nil {
		t.Errorf("Models() = %v, want nil with no [models] configured", c.Models())
	}

	stamp, _ := c.Tool("user__stamp")
	if stamp.Description != "Print the date." || stamp.ReadOnly == nil || !*stamp.ReadOnly || stamp.OutputSchema == nil {
		t.Errorf("user__stamp = %+v: the first definition should win, with its read-only hint and output schema", stamp)
	}
	if shape, _ := c.Tool("user__shape"); shape.ReadOnly == nil || !*shape.ReadOnly {
		t.Errorf("user__shape: a reshape tool is read-only by nature, got %+v", shape.ReadOnly)
	}
	if first, _ := c.Tool("plan__first"); first.InputSchema == nil {
		t.Errorf("plan__first should be the first file's plan, with its input schema")
	}
	// A plan may call anything: read-only only when it says so.
	if first, _ := c.Tool("plan__first"); first.ReadOnly != nil {
		t.Errorf("plan__first declares nothing, yet has the read-only hint %v", *first.ReadOnly)
	}
	if pure, _ := c.Tool("plan__pure"); pure.ReadOnly == nil || !*pure.ReadOnly {
		t.Errorf("plan__pure declares read_only: true, got %v", pure.ReadOnly)
	}

	unusable := map[string]string{
		"plan__broken": "plan 'broken' has problems (first: ",
		"plan__hidden": "requires MCP servers that are not configured: linear",
		"plan__caller": "plan 'caller' does not resolve",
		"plan__chain":  "plan 'chain' does not resolve",
		"user__broken": "its tool file has problems (first: ",
	}
	for _, tool := range c.Tools() {
		want, bad := unusable[tool.Name]
		switch {
		case bad && !strings.Contains(tool.Unusable, want):
			t.Errorf("%s.Unusable = %q, want it to contain %q", tool.Name, tool.Unusable, want)
		case !bad && tool.Unusable != "":
			t.Errorf("%s.Unusable = %q, want usable", tool.Name, tool.Unusable)
		}
	}

	var skipped []string
	for _, s := range c.Skipped {
		skipped = append(skipped, filepath.Base(s.File)+": "+s.Reason)
	}
	for _, want := range []string{"b_stamp.yaml: user__stamp is already defined by", "broken.yaml: ", "b_first.yaml: plan 'first' is already defined by"} {
		if !slices.ContainsFunc(skipped, func(s string) bool { return strings.HasPrefix(s, want) }) {
			t.Errorf("Skipped lacks %q; got %q", want, skipped)
		}
	}
	if file, ok := c.SkippedPlan("broken"); !ok || filepath.Base(file) != "broken.yaml" {
		t.Errorf("SkippedPlan(broken) = %q, %v", file, ok)
	}
	if got := len(c.PlanFiles()); got != 8 {
		t.Errorf("PlanFiles() has %d files, want the 8 plan files", got)
	}
	if _, ok := c.Tool("map"); !ok {
		t.Error("Tool(map) should describe the control step")
	}
	if got := len(c.Listing()); got != len(ControlTools())+len(wantTools) {
		t.Errorf("Listing() has %d entries, want controls and tools", got)
	}
}

func TestModels(t *testing.T) {
	c := project(t, map[string]string{
		".stepwise/config.toml": "[providers.s]\ntype = \"script\"\nfile = \"r.yaml\"\n[models]\ndefault = { provider = \"s\", model = \"m\" }\n" +
			"[models.named.fast]\nprovider = \"s\"\nmodel = \"m2\"\n",
	})
	for _, name := range []string{"default", "chat", "judge", "fast"} {
		if !slices.Contains(c.Models(), name) {
			t.Errorf("Models() = %v lacks %s", c.Models(), name)
		}
	}
}

// TestResolveAgainstProject runs the catalog layer of validation against a
// real project's catalog: the same checks `stepwise validate` makes.
func TestResolveAgainstProject(t *testing.T) {
	c := project(t, map[string]string{
		".stepwise/config.toml":       "[mcp.tracker]\ncommand = \"tracker\"\n",
		".stepwise/tools/notify.yaml": "name: notify\ndescription: Tell someone.\nkind: exec\ncommand: echo\n",
		".stepwise/plans/weekly.yaml": plan("weekly", tinySteps),
		".stepwise/plans/broken.yaml": plan("broken", "steps:\n  - id: E0\n    tool_name: mapp\n    input: {}\n"),
	})
	src := plan("caller", "requires_servers: [linear]\nsteps:\n"+
		"  - id: E0\n    tool_name: user__notfy\n    input: {}\n"+
		"  - id: E1\n    tool_name: tracker__list_issues\n    input: {}\n"+
		"  - id: E2\n    tool_name: linear__list_issues\n    input: {}\n"+
		"  - id: E3\n    tool_name: sentry__events\n    input: {}\n"+
		"  - id: E4\n    tool_name: plan__broken\n    input: {}\n"+
		"  - id: E5\n    tool_name: agent\n    input:\n      prompt: go\n      output_schema: {type: object}\n"+
		"      tools: [\"tracker__*\", \"user__*\", \"plan__weekly\", \"grafana__*\", \"*__search\"]\n"+
		"  - id: E6\n    tool_name: builtin__infer\n    input: {instructoin: \"sum up {{E1}}\"}\n")
	p, r := plans.Load("caller.yaml", []byte(src), plans.Stepwise)
	if !r.OK() {
		t.Fatalf("the plan must load cleanly: %v", r.Problems)
	}
	got := plans.Resolve(p, c)
	var problems, notes []string
	for _, pr := range got.Problems {
		problems = append(problems, pr.Code+" "+pr.Path)
	}
	for _, n := range got.Notes {
		notes = append(notes, n.Code+" "+n.Path)
	}
	wantProblems := []string{
		"unresolved_tool E0",    // user__notfy: did you mean user__notify
		"unresolved_tool E3",    // sentry is not configured and not declared
		"unresolved_tool E4",    // plan__broken has problems of its own
		"unresolved_pattern E5", // grafana__* needs a server
		"missing_field E6",      // builtin__infer needs instruction (its schema is open, as graph's: instructoin is an extra input)
	}
	wantNotes := []string{"missing_server ", "missing_server E2"}
	if !slices.Equal(problems, wantProblems) {
		t.Errorf("problems = %q\nwant %q\n%v", problems, wantProblems, got.Problems)
	}
	if !slices.Equal(notes, wantNotes) {
		t.Errorf("notes = %q\nwant %q", notes, wantNotes)
	}
	if msg := got.Problems[0].Message; !strings.Contains(msg, "did you mean 'user__notify'?") {
		t.Errorf("E0: %s", msg)
	}
	if msg := got.Problems[2].Message; !strings.Contains(msg, "plan 'broken' has problems") {
		t.Errorf("E4: %s", msg)
	}
}

// TestResolveStepTimeoutByToolKind checks that the catalog knows each user
// tool's kind, so that a step's timeout_secs, which only an exec tool
// honours, is refused on a prompt or reshape tool where it is written, with
// the bounds that apply to that tool.
func TestResolveStepTimeoutByToolKind(t *testing.T) {
	c := project(t, map[string]string{
		".stepwise/config.toml":       "",
		".stepwise/tools/notify.yaml": "name: notify\ndescription: Tell someone.\nkind: exec\ncommand: echo\n",
		".stepwise/tools/sum.yaml":    "name: sum\ndescription: Sum up.\nkind: prompt\nprompt: \"Sum up {{input.text}}\"\n",
		".stepwise/tools/pick.yaml":   "name: pick\ndescription: Pick.\nkind: reshape\nshape: {a: 1}\n",
	})
	step := func(id, tool string) string {
		return "  - id: " + id + "\n    tool_name: " + tool + "\n    input: {}\n    timeout_secs: 5\n"
	}
	src := plan("caller", "steps:\n"+step("E0", "user__notify")+step("E1", "user__sum")+step("E2", "user__pick"))
	p, r := plans.Load("caller.yaml", []byte(src), plans.Stepwise)
	if !r.OK() {
		t.Fatalf("the plan must load cleanly: %v", r.Problems)
	}
	var got []string
	for _, pr := range c.Resolve(p).Problems {
		got = append(got, pr.String())
	}
	want := []string{
		"caller.yaml:12:19: step E1: 'timeout_secs' bounds the call of an exec or MCP tool, and user__sum is a prompt tool: remove it (its model call is bounded by [settings] llm_timeout_seconds and llm_idle_timeout_seconds)",
		"caller.yaml:16:19: step E2: 'timeout_secs' bounds the call of an exec or MCP tool, and user__pick is a reshape tool: remove it (it builds its value in process, bounded in size by [limits] value_bytes)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("problems:\n got %q\nwant %q", got, want)
	}
}

// TestCatalogResolve holds the catalog's remembered resolution to
// plans.Resolve: the same report for the plan asked about again, whatever
// a caller did to the copy it was given, and a fresh one for another plan.
func TestCatalogResolve(t *testing.T) {
	c := project(t, map[string]string{".stepwise/config.toml": ""})
	load := func(src string) *plans.Plan {
		p, r := plans.Load("p.yaml", []byte(src), plans.Stepwise)
		if !r.OK() {
			t.Fatalf("the plan must load cleanly: %v", r.Problems)
		}
		return p
	}
	broken := load(plan("broken", "steps:\n  - id: E0\n    tool_name: user__nothing\n    input: {}\n"))
	fine := load(plan("fine", tinySteps))
	want := plans.Resolve(broken, c)
	if len(want.Problems) == 0 {
		t.Fatal("the broken plan must have a problem to remember")
	}
	first := c.Resolve(broken)
	if !reflect.DeepEqual(first, want) {
		t.Fatalf("first Resolve = %v, want %v", first, want)
	}
	first.Problems[0].Message = "changed by the caller"
	if again := c.Resolve(broken); !reflect.DeepEqual(again, want) {
		t.Errorf("Resolve again = %v, want %v", again, want)
	}
	if other := c.Resolve(fine); !reflect.DeepEqual(other, plans.Resolve(fine, c)) || len(other.Problems) > 0 {
		t.Errorf("Resolve of another plan = %v", other)
	}
	if back := c.Resolve(broken); !reflect.DeepEqual(back, want) {
		t.Errorf("Resolve of the first plan after another = %v, want %v", back, want)
	}
}

func TestCallCycle(t *testing.T) {
	call := func(callee string) string {
		return "steps:\n  - id: E0\n    tool_name: plan__" + callee + "\n    input: {}\n"
	}
	c := project(t, map[string]string{
		".stepwise/plans/a.yaml":    plan("a", call("b")),
		".stepwise/plans/b.yaml":    plan("b", "steps:\n  - id: E0\n    tool_name: map\n    input:\n      over: \"{{input.xs}}\"\n      do: {tool_name: plan__a, input: {}}\n"),
		".stepwise/plans/self.yaml": plan("self", call("self")),
		".stepwise/plans/leaf.yaml": plan("leaf", tinySteps),
		".stepwise/plans/top.yaml":  plan("top", call("leaf")),
	})
	for _, tc := range []struct {
		id   string
		want []string
	}{
		{"a", []string{"a", "b", "a"}},
		{"b", []string{"b", "a", "b"}},
		{"self", []string{"self", "self"}},
		{"top", nil},
	} {
		e, ok := c.Plan(tc.id)
		if !ok {
			t.Fatalf("no plan %s", tc.id)
		}
		if got := c.CallCycle(e.Plan); !slices.Equal(got, tc.want) {
			t.Errorf("CallCycle(%s) = %v, want %v", tc.id, got, tc.want)
		}
	}
}

func TestPromptToolWithAnUnknownModel(t *testing.T) {
	rt, _ := newRuntime(t, map[string]string{
		".stepwise/config.toml":      "[providers.s]\ntype = \"script\"\nfile = \"r.yaml\"\n[models]\ndefault = { provider = \"s\", model = \"m\" }\n[models.named.nano]\nprovider = \"s\"\nmodel = \"n\"\n",
		".stepwise/tools/fast.yaml":  "name: fast\ndescription: d\nkind: prompt\nprompt: hi\nmodel: nano\n",
		".stepwise/tools/turbo.yaml": "name: turbo\ndescription: d\nkind: prompt\nprompt: hi\nmodel: nanno\n",
	}, nil)
	fast, _ := rt.cat.Load().Tool("user__fast")
	turbo, _ := rt.cat.Load().Tool("user__turbo")
	if fast.Unusable != "" {
		t.Errorf("user__fast: %s", fast.Unusable)
	}
	if want := "its model 'nanno' is not configured; did you mean 'nano'?"; !strings.HasPrefix(turbo.Unusable, want) {
		t.Errorf("user__turbo: %q, want it to start %q", turbo.Unusable, want)
	}
}
