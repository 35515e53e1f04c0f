package examples

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stepwise-dev/stepwise/engine/config"
	"github.com/stepwise-dev/stepwise/engine/tools"
	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/plans/template"
)

// demo is the demo project written out and loaded the way stepwise loads a
// project.
type demo struct {
	dir     string
	exe     string
	cfg     *config.Config
	catalog *tools.Catalog
	plans   []*plans.Plan // sorted by identifier
}

// loadDemo writes the project into a temporary directory and loads its
// configuration and catalog, with an environment of its own so that no
// global configuration of the machine running the test leaks in.
func loadDemo(t *testing.T) *demo {
	t.Helper()
	return loadDemoWith(t, "/usr/local/bin/stepwise")
}

func loadDemoWith(t *testing.T, exe string) *demo {
	t.Helper()
	tmp := t.TempDir()
	d := &demo{dir: filepath.Join(tmp, "desk"), exe: exe}
	if err := WriteProject(d.dir, d.exe); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"HOME":            filepath.Join(tmp, "home"),
		"XDG_CONFIG_HOME": filepath.Join(tmp, "xdg-config"),
		"XDG_DATA_HOME":   filepath.Join(tmp, "xdg-data"),
	}
	cfg, diags, err := config.Load(config.Options{
		Dir:       d.dir,
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
	})
	for _, diag := range diags {
		t.Errorf("config diagnostic: %s", diag.String())
	}
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	d.cfg = cfg
	d.catalog = tools.Load(cfg)
	for _, s := range d.catalog.Skipped {
		t.Errorf("catalog skipped %s: %s", s.File, s.Reason)
	}
	for _, e := range d.catalog.PlanEntries() {
		d.plans = append(d.plans, e.Plan)
	}
	return d
}

func TestWriteProjectLayout(t *testing.T) {
	d := loadDemo(t)
	if d.cfg.Project == nil || d.cfg.Project.Dir != filepath.Join(d.dir, ProjectDir) {
		t.Fatalf("project = %+v, want the one in %s", d.cfg.Project, d.dir)
	}
	for _, rel := range []string{"README.md", ".stepwise/config.toml", ".stepwise/replies/demo.yaml"} {
		if _, err := os.Stat(filepath.Join(d.dir, rel)); err != nil {
			t.Error(err)
		}
	}
	p, err := d.cfg.Provider("demo")
	if err != nil {
		t.Fatal(err)
	}
	if p.Type != config.ProviderScript {
		t.Errorf("demo provider type = %s, want script", p.Type)
	}
	if _, err := os.Stat(p.File); err != nil {
		t.Errorf("the script provider's replies file: %v", err)
	}
	ref, err := d.cfg.ResolveModel(config.RoleChat)
	if err != nil || ref.Provider != "demo" {
		t.Errorf("chat role = %+v, %v; want the demo provider", ref, err)
	}
	if _, ok := d.cfg.Price(ref.Model); !ok {
		t.Errorf("model %s has no price", ref.Model)
	}
	srv, err := d.cfg.MCPServer("tracker")
	if err != nil {
		t.Fatal(err)
	}
	if srv.Command != d.exe || !slices.Equal(srv.Args, []string{"__demo-mcp"}) {
		t.Errorf("tracker server = %q %q, want %q [__demo-mcp]", srv.Command, srv.Args, d.exe)
	}
	if got := len(d.plans); got < 3 {
		t.Errorf("the demo has %d plans, want at least 3", got)
	}
}

func TestWriteProjectRefusesToOverwrite(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string)
	}{
		{"a project", func(t *testing.T, dir string) {
			if err := WriteProject(dir, "/usr/bin/stepwise"); err != nil {
				t.Fatal(err)
			}
		}},
		{"an empty .stepwise", func(t *testing.T, dir string) {
			if err := os.MkdirAll(filepath.Join(dir, ProjectDir), 0o755); err != nil {
				t.Fatal(err)
			}
		}},
		{"a README of its own", func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("mine"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tt.setup(t, dir)
			before := listTree(t, dir)
			err := WriteProject(dir, "/opt/other/stepwise")
			if !errors.Is(err, ErrProjectExists) {
				t.Fatalf("err = %v, want ErrProjectExists", err)
			}
			if after := listTree(t, dir); !slices.Equal(before, after) {
				t.Errorf("the directory changed:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
}

func listTree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		out = append(out, p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestWriteProjectExecutablePath checks that the path reaches [mcp.tracker]
// intact whatever characters it holds: config.toml is TOML, not a template.
func TestWriteProjectExecutablePath(t *testing.T) {
	for _, exe := range []string{
		"/usr/local/bin/stepwise",
		`/opt/back\slash/stepwise`,
		`/tmp/a"quote/stepwise`,
		"/tmp/ünïcode dir/stepwise",
	} {
		t.Run(exe, func(t *testing.T) {
			d := loadDemoWith(t, exe)
			srv, err := d.cfg.MCPServer("tracker")
			if err != nil {
				t.Fatal(err)
			}
			if srv.Command != exe {
				t.Errorf("command = %q, want %q", srv.Command, exe)
			}
		})
	}
	for _, exe := range []string{"", "/tmp/${HOME}/stepwise"} {
		dir := t.TempDir()
		if err := WriteProject(dir, exe); err == nil {
			t.Errorf("executable %q was accepted", exe)
		}
		if _, err := os.Stat(filepath.Join(dir, ProjectDir)); err == nil {
			t.Errorf("executable %q: a project was written", exe)
		}
	}
}

// TestPlansValidate checks every plan with both layers of validation against
// the catalog of the written-out project: a demo that does not validate is
// the first thing a new user would see.
func TestPlansValidate(t *testing.T) {
	d := loadDemo(t)
	files, err := filepath.Glob(filepath.Join(d.dir, ProjectDir, "plans", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no plans: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			p, r := plans.Load(file, src, plans.Stepwise)
			for _, prob := range r.Problems {
				t.Errorf("load: %s", prob)
			}
			if p == nil {
				t.FailNow()
			}
			rr := plans.Resolve(p, d.catalog)
			for _, prob := range rr.Problems {
				t.Errorf("resolve: %s", prob)
			}
			for _, n := range append(r.Notes, rr.Notes...) {
				t.Logf("note: %s", n)
			}
			info, ok := d.catalog.Tool("plan__" + p.Identifier.Value)
			if !ok || info.Unusable != "" {
				t.Errorf("plan__%s in the catalog: %v %q", p.Identifier.Value, ok, info.Unusable)
			}
		})
	}
	tools, err := filepath.Glob(filepath.Join(d.dir, ProjectDir, "tools", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range tools {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if _, r := plans.LoadToolFile(file, src, plans.Stepwise); !r.OK() || len(r.Notes) > 0 {
			t.Errorf("%s: %v %v", file, r.Problems, r.Notes)
		}
	}
}

// TestPlansCoverTheLanguage fails when an edit makes the demo stop showing
// one of the things it is there to show.
func TestPlansCoverTheLanguage(t *testing.T) {
	d := loadDemo(t)
	seen := map[string]bool{}
	mark := func(feature string) { seen[feature] = true }
	for _, p := range d.plans {
		mark("finish " + p.FinishMode().String())
		if s := p.InputSchema; s != nil {
			markInputSchema(s, mark)
		}
		if p.Solver != nil {
			forTemplates(p.Solver.QueryToAnswer, func(v *plans.Value) { markTemplate(v, p, mark) })
		}
		plans.WalkSteps(p, func(s *plans.Step) {
			name := s.ToolName.Value
			inBody := strings.Contains(s.Path, "/")
			switch {
			case plans.IsControl(name):
				mark("control " + name)
			case strings.HasPrefix(name, "user__"):
				if tf, ok := d.catalog.UserTool(name); ok {
					mark("user tool " + tf.Kind.Value)
				}
			case strings.HasPrefix(name, "tracker__"):
				mark("tracker tool step")
			case strings.HasPrefix(name, "plan__"):
				mark("plan call")
			case name == "builtin__infer" || name == "builtin__reshape":
				mark(name)
			}
			for _, v := range stepValues(s) {
				forTemplates(v, func(v *plans.Value) { markTemplate(v, p, mark) })
			}
			a, ok := s.Control.(*plans.AgentInput)
			if !ok {
				return
			}
			if !inBody {
				mark("agent at top level")
			}
			if inBody && strings.Contains(s.Path, "/do.*/") {
				roots := map[string]bool{}
				forTemplates(a.Prompt, func(v *plans.Value) {
					for ref := range v.Template().Refs {
						roots[ref.Root()] = true
					}
				})
				if roots["item"] && roots["index"] {
					mark("agent in a map body reading item and index")
				}
			}
			if a.Tools != nil {
				for _, pat := range a.Tools.Patterns {
					if strings.HasPrefix(pat.Value, "tracker__") {
						mark("tracker pattern in agent tools")
					}
				}
			}
			if e := a.ValidationExhaustion; e != nil && e.Mode.Value == "default" && e.DefaultOutput != nil {
				mark("validation_exhaustion default")
			}
			if a.StructuredOutput.Value == "strict" {
				mark("structured_output strict")
			}
			for control, set := range map[string]bool{
				"llm_timeout_seconds": a.LLMTimeoutSeconds.Set,
				"max_tool_calls":      a.MaxToolCalls.Set,
				"max_fan_out":         a.MaxFanOut.Set,
				"tool_timeout":        a.ToolTimeout.Set,
			} {
				if set {
					mark(control)
				}
			}
		})
	}
	want := []string{
		"finish output", "finish solver", "finish silent",
		"input schema with a required input", "input schema with a default",
		"agent at top level", "agent in a map body reading item and index", "tracker pattern in agent tools",
		"validation_exhaustion default", "structured_output strict",
		"llm_timeout_seconds", "max_tool_calls", "max_fan_out", "tool_timeout",
		"user tool exec", "user tool prompt", "user tool reshape",
		"builtin__infer", "builtin__reshape", "tracker tool step", "plan call",
		"section @first", "section @last", "typed splice of a number input",
	}
	for _, c := range plans.ControlSteps {
		want = append(want, "control "+c)
	}
	for _, f := range want {
		if !seen[f] {
			t.Errorf("no plan of the demo shows: %s", f)
		}
	}
}

func markInputSchema(s *plans.Schema, mark func(string)) {
	root, _ := s.Raw.(map[string]any)
	if req, _ := root["required"].([]any); len(req) > 0 {
		mark("input schema with a required input")
	}
	props, _ := root["properties"].(map[string]any)
	for _, p := range props {
		if m, _ := p.(map[string]any); m != nil {
			if _, ok := m["default"]; ok {
				mark("input schema with a default")
			}
		}
	}
}

// markTemplate records the template features one template string uses.
func markTemplate(v *plans.Value, p *plans.Plan, mark func(string)) {
	t := v.Template()
	for ref := range t.Refs {
		if ref.LoopVar && ref.Kind != template.RefVariable {
			mark("section " + ref.String())
		}
		// A splice has one ref; it is a number input when it reads input.<name>.
		root, field, _ := strings.Cut(ref.String(), ".")
		if t.IsSplice() && root == "input" && field != "" && !strings.Contains(field, ".") && inputType(p, field) == "integer" {
			mark("typed splice of a number input")
		}
	}
}

func inputType(p *plans.Plan, name string) string {
	if p.InputSchema == nil {
		return ""
	}
	root, _ := p.InputSchema.Raw.(map[string]any)
	props, _ := root["properties"].(map[string]any)
	prop, _ := props[name].(map[string]any)
	t, _ := prop["type"].(string)
	return t
}

// stepValues lists the values of a step that hold its own templates.
func stepValues(s *plans.Step) []*plans.Value {
	switch c := s.Control.(type) {
	case nil:
		return []*plans.Value{s.Input}
	case *plans.AgentInput:
		return []*plans.Value{c.Prompt, c.SystemPrompt}
	case *plans.AskInput:
		return []*plans.Value{c.Prompt, c.Default}
	case *plans.ExitInput:
		return []*plans.Value{c.Infer, c.Message, c.Output, gateValue(c.Gate)}
	case *plans.DecideInput:
		return []*plans.Value{c.Infer, gateValue(c.Gate)}
	case *plans.FilterInput:
		return []*plans.Value{c.Over, c.Infer, gateValue(c.Gate)}
	case *plans.MapInput:
		return []*plans.Value{c.Over}
	case *plans.ReduceInput:
		return []*plans.Value{c.Over, c.Initial}
	}
	return nil
}

func gateValue(g *plans.Gate) *plans.Value {
	if g == nil {
		return nil
	}
	return g.Value
}

// forTemplates calls fn for every template string in v.
func forTemplates(v *plans.Value, fn func(*plans.Value)) {
	if v == nil {
		return
	}
	switch v.Kind {
	case plans.String:
		if v.Template() != nil {
			fn(v)
		}
	case plans.List:
		for _, x := range v.List() {
			forTemplates(x, fn)
		}
	case plans.Map:
		for _, e := range v.Map() {
			forTemplates(e.Value, fn)
		}
	}
}

// TestKeepProject: the kept demo is written once, keeps the user's edits,
// and has its tracker pointed at the executable of each launch.
func TestKeepProject(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	if err := KeepProject(dir, "/first/stepwise"); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(dir, ProjectDir, "config.toml")
	plan := filepath.Join(dir, ProjectDir, "plans", "issue_timeline.yaml")
	if err := os.WriteFile(plan, []byte("# edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := KeepProject(dir, `/second/my "stepwise"`); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(config)
	if !strings.Contains(string(data), "[mcp.tracker]\ncommand = \"/second/my \\\"stepwise\\\"\"\nargs = [\"__demo-mcp\"]") || strings.Contains(string(data), "/first/") {
		t.Errorf("config.toml after the second launch:\n%s", data)
	}
	if edited, _ := os.ReadFile(plan); string(edited) != "# edited\n" {
		t.Errorf("the user's edit was overwritten: %q", edited)
	}
	// A tracker pointed elsewhere, with no command, is left alone.
	custom := "[mcp.tracker]\nurl = \"http://127.0.0.1:9/mcp\"\n"
	if err := os.WriteFile(config, []byte(custom), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := KeepProject(dir, "/third/stepwise"); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(config); string(data) != custom {
		t.Errorf("a tracker with no command was rewritten:\n%s", data)
	}
}
