package debugger

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/config"
	"github.com/stepwise-dev/stepwise/engine/tools"
	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/plans/examples"
)

// demoCatalog writes the demo project and returns its catalog.
func demoCatalog(t *testing.T) *tools.Catalog {
	t.Helper()
	dir := t.TempDir()
	if err := examples.WriteProject(dir, os.Args[0]); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := config.Load(config.Options{Dir: dir, LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	return tools.Load(cfg)
}

// demoShapes returns the shapes of one of the demo's plans.
func demoShapes(t *testing.T, plan string) *Shapes {
	t.Helper()
	cat := demoCatalog(t)
	e, ok := cat.Plan(plan)
	if !ok {
		t.Fatalf("the demo has no plan %s", plan)
	}
	return PlanShapes(e.Plan, cat)
}

// readmeExample is a unit path or breakpoint the README shows: the text
// after break or --break, or a path alone, and where it is.
type readmeExample struct {
	spec string
	at   int // byte offset in the README
}

var (
	fence       = regexp.MustCompile("(?ms)^```.*?^```")
	codeSpan    = regexp.MustCompile("`([^`\n]+)`")
	quotedBreak = regexp.MustCompile(`--break '([^']+)'`)
	fencedMatch = regexp.MustCompile(`match: "([^"]+)"`)
	pathLike    = regexp.MustCompile(`^[A-Za-z0-9_.*]+(/[A-Za-z0-9_.*]+)+$`)
	// fileName is a path that ends in a file's extension (launch.json):
	// a unit path's segments end in an id, a number or a wildcard.
	fileName = regexp.MustCompile(`\.[A-Za-z]+$`)
)

// readme is a README that shows the demo's paths, and the directory the
// files it names are in (the demo's README names .stepwise/config.toml,
// which is config.toml in the embedded project).
type readme struct {
	file, filesIn, trim string
}

var readmes = []readme{
	{file: filepath.Join("..", "README.md"), filesIn: ".."},
	{file: filepath.Join("..", "plans", "examples", "project", "README.md"), filesIn: filepath.Join("..", "plans", "examples", "project"), trim: ".stepwise/"},
}

// find finds the README's examples: in its prose (not its tables),
// every code span that is a break, a --break or a path of two segments or
// more that is no file (engine/path is a package, not a unit); anywhere,
// every quoted --break; in its code blocks, every replies match.
func (r readme) find(text string) []readmeExample {
	var out []readmeExample
	blocks := fence.FindAllStringIndex(text, -1)
	inBlock := func(at int) bool {
		return slices.ContainsFunc(blocks, func(b []int) bool { return at >= b[0] && at < b[1] })
	}
	for _, m := range codeSpan.FindAllStringSubmatchIndex(text, -1) {
		lineStart := strings.LastIndexByte(text[:m[0]], '\n') + 1
		if inBlock(m[0]) || strings.HasPrefix(text[lineStart:], "| ") {
			// A table's cells are keys and commands (n/enter), not
			// paths.
			continue
		}
		fields := strings.Fields(text[m[2]:m[3]])
		spec := strings.Join(fields, " ")
		if fields[0] == "break" || fields[0] == "--break" {
			spec = strings.Trim(strings.Join(fields[1:], " "), "'")
		} else if len(fields) > 1 {
			continue
		}
		p, _, _ := strings.Cut(spec, " ")
		if !pathLike.MatchString(p) || fileName.MatchString(p) {
			continue
		}
		if _, err := os.Stat(filepath.Join(r.filesIn, strings.TrimPrefix(p, r.trim))); err == nil {
			continue
		}
		out = append(out, readmeExample{spec: spec, at: m[0]})
	}
	for _, m := range quotedBreak.FindAllStringSubmatchIndex(text, -1) {
		out = append(out, readmeExample{spec: text[m[2]:m[3]], at: m[0]})
	}
	for _, b := range blocks {
		for _, m := range fencedMatch.FindAllStringSubmatchIndex(text[b[0]:b[1]], -1) {
			out = append(out, readmeExample{spec: text[b[0]+m[2] : b[0]+m[3]], at: b[0] + m[0]})
		}
	}
	return out
}

// TestReadmePathsMatchTheDemo checks every unit path and breakpoint the
// READMEs (the repository's and the demo's) show against the demo
// project's plans: each must match a path one of them can stop at, or the
// README must show, right after it, the nearest pattern the debugger's
// warning names. A README edit that shows a path the demo cannot produce
// fails here.
func TestReadmePathsMatchTheDemo(t *testing.T) {
	cat := demoCatalog(t)
	var all []*Shapes
	for _, e := range cat.PlanEntries() {
		all = append(all, PlanShapes(e.Plan, cat))
	}
	// The READMEs show more than a dozen and one; finding fewer means the
	// extraction broke, not that they got shorter.
	for r, least := range map[readme]int{readmes[0]: 12, readmes[1]: 1} {
		raw, err := os.ReadFile(r.file)
		if err != nil {
			t.Fatal(err)
		}
		text := string(raw)
		found := r.find(text)
		if len(found) < least {
			t.Fatalf("found %d examples in %s: %v", len(found), r.file, found)
		}
		for _, ex := range found {
			line := strings.Count(text[:ex.at], "\n") + 1
			in, err := ParseCommand("break " + ex.spec)
			if err != nil {
				t.Errorf("%s:%d: `%s` does not parse as a breakpoint: %v", r.file, line, ex.spec, err)
				continue
			}
			var flags []string
			for _, s := range all {
				flags = append(flags, s.Unmatched(in.Pattern, in.Kinds))
			}
			if slices.Contains(flags, "") {
				continue
			}
			shown := false
			for _, f := range flags {
				_, nearest, _ := strings.Cut(f, "the nearest that would: ")
				shown = shown || strings.Contains(text[ex.at:min(ex.at+160, len(text))], "`"+nearest+"`")
			}
			if !shown {
				t.Errorf("%s:%d: `%s` matches no path of the demo's plans, and the README does not show the nearest that would: %s", r.file, line, ex.spec, strings.Join(flags, "; "))
			}
		}
	}
}

func TestShapesOfTheDemo(t *testing.T) {
	s := demoShapes(t, "triage_queue")
	var got []string
	for _, sh := range s.List() {
		got = append(got, sh.Path)
	}
	for _, want := range []string{"open_issues", "assess", "assess/do.*/verdict", "assess/do.*/verdict/agent.*",
		"assess/do.*/verdict/agent.*/tracker__search", "assess/do.*/verdict/agent.*/tracker__get_issue.*",
		"assess/do.*/verdict/agent.*/repair", "assess/do.*/card", "confirm", "post", "post/then",
		"post/then/post_triage_notes/comments/do.*/posted", "solver"} {
		if !slices.Contains(got, want) {
			t.Errorf("no shape %s in %s", want, strings.Join(got, " "))
		}
	}
	for _, tc := range []struct {
		pattern string
		kinds   []engine.StopKind
		nearest string // "" when the pattern can match
	}{
		{"assess/do.3/agent.2", nil, "assess/do.3/verdict/agent.2"},
		{"assess/do.*/verdict/agent.2", nil, ""},
		// verdict's max_iterations is 3: it has rounds 1 to 3.
		{"assess/do.1/verdict/agent.3", nil, ""},
		{"assess/do.1/verdict/agent.5", nil, "assess/do.1/verdict/agent.3"},
		{"assess/do.1/verdict/agent.0", nil, "assess/do.1/verdict/agent.1"},
		{"assess/do.1/verdict/agent.4/tracker__search", nil, "assess/do.1/verdict/agent.3/tracker__search"},
		{"assess/do.3/verdict", []engine.StopKind{engine.StopRound}, "assess/do.3/verdict/agent.*"},
		{"assess/do.3/verdict", []engine.StopKind{engine.StopStep}, ""},
		{"assess/do.x/verdict", nil, "assess/do.*/verdict"},
		{"assess/do.3/verdcit", nil, "assess/do.3/verdict"},
		{"**/tracker__search", nil, ""},
		{"**/tracker__search.2", []engine.StopKind{engine.StopTool}, ""},
		{"**/tracker__search", []engine.StopKind{engine.StopRound}, "**"},
		{"**/posted", nil, ""},
		{"post/then/post_triage_notes/comments/do.0/posted", []engine.StopKind{engine.StopResult}, ""},
		{"post/post_triage_notes/comments/do.0/posted", nil, "post/then/post_triage_notes/comments/do.0/posted"},
		{"assess/*/verdict", nil, ""},
		{"assess/do.*", nil, "assess/do.*/verdict"},
		{"confirm", []engine.StopKind{engine.StopAsk}, ""},
		{"open_issues", []engine.StopKind{engine.StopAsk}, "confirm"},
		{"**", nil, ""},
	} {
		got := s.Unmatched(tc.pattern, tc.kinds)
		switch {
		case tc.nearest == "" && got != "":
			t.Errorf("%s %v: flagged: %s", tc.pattern, tc.kinds, got)
		case tc.nearest != "" && !strings.HasSuffix(got, "the nearest that would: "+tc.nearest):
			t.Errorf("%s %v: %q, want the nearest %s", tc.pattern, tc.kinds, got, tc.nearest)
		}
	}
}

// projectShapes writes a project of plans (by identifier) and returns the
// shapes of the first, with the project's catalog.
func projectShapes(t *testing.T, first string, planFiles map[string]string) *Shapes {
	t.Helper()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, ".stepwise"), 0o755)
	if err := os.WriteFile(filepath.Join(dir, ".stepwise", "config.toml"), []byte("[storage]\nbackend = \"memory\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for id, text := range planFiles {
		file := filepath.Join(dir, ".stepwise", "plans", id+".yaml")
		os.MkdirAll(filepath.Dir(file), 0o755)
		if err := os.WriteFile(file, []byte("identifier: "+id+"\nname: "+id+"\ndescription: "+id+"\n"+text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg, _, err := config.Load(config.Options{Dir: dir, LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	cat := tools.Load(cfg)
	e, ok := cat.Plan(first)
	if !ok {
		t.Fatalf("no plan %s in the catalog: %+v", first, cat.Skipped)
	}
	if r := plans.Resolve(e.Plan, cat); !r.OK() {
		t.Fatal(r.Problems)
	}
	return PlanShapes(e.Plan, cat)
}

// TestShapesOfEveryBody lists the shapes of a plan with a body of every
// kind: a decide's single call and inline list, a map's single call, a
// reduce's list, an infer gate on an exit and a filter, builtin__infer, an
// agent offered tools by pattern and one offered the catalog (a called
// plan's steps among them), and a solver.
func TestShapesOfEveryBody(t *testing.T) {
	s := projectShapes(t, "main", map[string]string{
		"main": `steps:
  - id: d
    tool_name: decide
    input:
      if: { value: "{{input.x}}", op: eq, to: 1 }
      then: { tool_name: builtin__reshape, input: { shape: { v: 1 } } }
      else:
        - { id: e1, tool_name: builtin__reshape, input: { shape: { v: 2 } } }
  - id: m
    tool_name: map
    input:
      over: [1, 2]
      do: { tool_name: plan__sub, input: {} }
  - id: r
    tool_name: reduce
    input:
      over: [1, 2]
      do:
        - { id: r1, tool_name: builtin__reshape, input: { shape: { v: 3 } } }
  - id: g
    tool_name: exit
    input: { infer: "is it done?", status: success }
  - id: f
    tool_name: filter
    input: { over: [1, 2], infer: "keep {{item}}?" }
  - id: i
    tool_name: builtin__infer
    input: { instruction: say hi }
  - id: a
    tool_name: agent
    input: { prompt: go, tools: ["builtin__r*"], output_schema: { type: object } }
  - id: b
    tool_name: agent
    input: { prompt: go, output_schema: { type: object } }
solver:
  query_to_answer: sum it up
`,
		"sub": `steps:
  - { id: s1, tool_name: builtin__reshape, input: { shape: { v: 4 } } }
`,
	})
	var got []string
	for _, sh := range s.List() {
		got = append(got, sh.Path+" "+kindWords(sh.Kinds))
	}
	want := []string{
		"d step or result or error", "d/then step or result or error", "d/else/e1 step or result or error",
		"m step or result or error", "m/do.* step or result or error", "m/do.*/sub/s1 step or result or error",
		"r step or result or error", "r/do.*/r1 step or result or error",
		"g step or result or error", "g/judge/repair repair",
		"f step or result or error", "f/do.*/judge/repair repair",
		"i step or result or error", "i/repair repair",
		"a step or result or error", "a/agent.* round or reply", "a/agent.*/repair repair",
		"a/agent.*/builtin__r* tool or result or error", "a/agent.*/builtin__r*.* tool or result or error",
		"b step or result or error", "b/agent.* round or reply", "b/agent.*/repair repair",
		"b/agent.*/* tool or result or error", "b/agent.*/*.* tool or result or error",
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("no shape %q in\n%s", w, strings.Join(got, "\n"))
		}
	}
	// The agent offered the catalog may call sub, but not main, which it
	// is in: a run refuses the cycle.
	if !slices.Contains(got, "b/agent.*/plan__sub/sub/s1 step or result or error") || slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, "plan__main") }) {
		t.Errorf("the catalog's plans nested under the agent offered the catalog:\n%s", strings.Join(got, "\n"))
	}
	if got[len(got)-1] != "solver step" {
		t.Errorf("last shape %q, want the solver", got[len(got)-1])
	}
	for _, tc := range []struct {
		pattern string
		kinds   []engine.StopKind
		nearest string
	}{
		{"d/then", nil, ""},
		{"d/then/e1", nil, "d/then"},
		{"m/do.1/sub/s1", []engine.StopKind{engine.StopStep}, ""},
		{"m/do.1/s1", nil, "m/do.1/sub/s1"},
		{"r/do.0/r1", nil, ""},
		{"g/judge/repair", []engine.StopKind{engine.StopRepair}, ""},
		{"g/judge", nil, "g/judge/repair"},
		{"a/agent.1/builtin__reshape.2", []engine.StopKind{engine.StopTool}, ""},
		{"a/agent.1/user__x", nil, "a/agent.1"},
		{"b/agent.2/anything", []engine.StopKind{engine.StopResult}, ""},
		{"b/agent.2/anything", []engine.StopKind{engine.StopRound}, "b/agent.2"},
		{"b/agent.1/plan__sub/sub/s1", nil, ""},
		{"solver", []engine.StopKind{engine.StopStep}, ""},
		{"solver", []engine.StopKind{engine.StopError}, "b/agent.*/solver"},
		{"m", []engine.StopKind{engine.StopAsk}, "-"},
	} {
		got := s.Unmatched(tc.pattern, tc.kinds)
		switch {
		case tc.nearest == "-":
			if !strings.HasSuffix(got, "the plan has no such stop anywhere") {
				t.Errorf("%s %v: %q, want no such stop anywhere", tc.pattern, tc.kinds, got)
			}
		case tc.nearest == "" && got != "":
			t.Errorf("%s %v: flagged: %s", tc.pattern, tc.kinds, got)
		case tc.nearest != "" && !strings.HasSuffix(got, "the nearest that would: "+tc.nearest):
			t.Errorf("%s %v: %q, want the nearest %s", tc.pattern, tc.kinds, got, tc.nearest)
		}
	}
}

// BenchmarkShapes measures what flagging costs on the demo's
// triage_queue: its shapes, built once per session and per break; one
// breakpoint checked against them, one that matches late in the plan and
// one that matches nothing (the nearest is then sought); and a check
// asked again, as a session's listing asks it, which is kept.
func BenchmarkShapes(b *testing.B) {
	cat := demoCatalog(&testing.T{})
	e, _ := cat.Plan("triage_queue")
	b.Run("build", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			PlanShapes(e.Plan, cat)
		}
	})
	s := PlanShapes(e.Plan, cat)
	for _, pattern := range []string{"post/then/post_triage_notes/comments/do.*/posted", "assess/do.3/agent.2"} {
		b.Run(pattern, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				s.unmatched(pattern, nil)
			}
		})
	}
	b.Run("asked again", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s.Unmatched("assess/do.3/agent.2", nil)
		}
	})
}

// BenchmarkApprovalsUnheld measures what judging approval patterns costs
// as a run starts, on the demo's triage_queue: one that holds the
// tracker's calls, one that matches only read-only calls, and one that
// matches none (the nearest that would hold one is then sought).
func BenchmarkApprovalsUnheld(b *testing.B) {
	cat := demoCatalog(&testing.T{})
	e, _ := cat.Plan("triage_queue")
	s := PlanShapes(e.Plan, cat)
	for _, pattern := range []string{"**/tracker__*", "**/card", "**/nomatch__*"} {
		a, err := NewApprovals([]string{pattern}, cat, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(pattern, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				a.Unheld(s)
			}
		})
	}
}
