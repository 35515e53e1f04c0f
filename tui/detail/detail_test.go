package detail

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/stepwise-dev/stepwise/debugger/workspace"
	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/tui/common"
	"github.com/stepwise-dev/stepwise/tui/tree"
)

func load(t *testing.T, file string) workspace.Document {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	p, r := plans.Load(file, src, plans.Stepwise)
	return workspace.Document{File: file, Plan: p, Report: r}
}

// show returns the detail of the row with path, laid out width wide, as
// plain text.
func show(t *testing.T, doc workspace.Document, path string, width int, withColor bool) (Model, string) {
	t.Helper()
	c := common.New(common.NewTheme(true, withColor), common.DefaultKeyMap())
	tr := tree.New(c, doc)
	if path != "" && !tr.SelectPath(path) {
		t.Fatalf("no row %q", path)
	}
	m := New(c)
	m.SetSize(width, 20)
	m.Show(doc, 0, tr.Selected())
	return m, ansi.Strip(strings.Join(m.Lines(), "\n"))
}

func TestDetail(t *testing.T) {
	pr := load(t, "../testdata/pr_review.yaml")
	triage := load(t, "../testdata/triage.yaml")
	cases := []struct {
		name  string
		doc   workspace.Document
		path  string
		width int
		want  []string
	}{
		{"step header", pr, "E0", 100, []string{
			"E0  github__get_pull_request",
			"path        E0",
			"tool        github__get_pull_request",
			"at          line 11:5",
			"reasoning   Fetch the pull request, its diff stats and linked issues.",
			`  repo: "{{input.repo}}"`,
		}},
		{"read downstream by", pr, "E4", 100, []string{
			"Read downstream by",
			"E5 (line 73): {{E4.output.verdict}}",
			"E5/else (line 84): {{E4.output.findings}}",
			"E6 (line 89): {{E4.output.findings}}",
			"output (line 111): {{E4.output.verdict}}",
			"output (line 112): {{E4.output.findings}}",
		}},
		{"read by the finish", pr, "E7", 100, []string{"output (line 114): {{E7.answer.post}}"}},
		{"nothing reads", pr, "E5/then/E51", 100, []string{"nothing reads E51's result"}},
		{"an item's result, read through its map's", pr, "E3/do.*", 100, []string{
			"Read downstream by", "output (line 113): {{E3.results.length}} through E3's result",
		}},
		{"agent controls with defaults", pr, "E4", 100, []string{
			"max_iterations         5",
			"model                  chat role (default)",
			"tools                  github__get_file, github__search_code",
			"structured_output      off (default)",
			"validation_exhaustion  threshold 6 (default) · mode fail (default)",
			"llm_timeout_seconds    600s (default)",
			"max_tool_calls         20 (default)",
			"max_fan_out            no limit (default)",
			"tool_timeout           30s (default)",
		}},
		{"output schema as a table", pr, "E4", 120, []string{
			"verdict     approve|comment|request_changes  required  What the reviewer should do.",
			"findings    array of object                  required  One entry per problem found in the diff.",
			"  file      string",
			"confidence  number                                     0 to 1",
		}},
		{"output schema stacked when narrow", pr, "E4", 40, []string{
			"findings  array of object  required",
			"      One entry per problem found in",
		}},
		{"ask", pr, "E7", 100, []string{
			"when_unanswered  default",
			"default          {post: false, tone: short}",
			"post  boolean         required  Post the summary comment",
			"tone  short|detailed            How much to write",
		}},
		{"map iteration", pr, "E3", 100, []string{"over        {{E0.linked_issues}}", "concurrency 4"}},
		{"filter gate and default concurrency", pr, "E2", 100, []string{
			"where       {{item.additions}} gt 0",
			"concurrency 1 (default)",
		}},
		{"exit gate", pr, "E1", 100, []string{"when        {{E0.state}} eq merged", "status      success"}},
		{"reduce", pr, "E6", 100, []string{"initial     {count: 0}"}},
		{"then head", pr, "E5/then", 100, []string{"then  body of E5 (decide)", "E50  github__approve", "if          {{E4.output.verdict}} eq approve"}},
		{"single-call else", pr, "E5/else", 100, []string{"ƒ else  plan__request_changes", "in          else of E5 (decide)"}},
		{"output finish", pr, "output", 100, []string{"Output", `verdict: "{{E4.output.verdict}}"`}},
		{"plan", pr, "", 100, []string{"pr_review  PR review", "steps       8 top-level · 13 in all", "finish      output", "number  integer  required  the pull request number", "✓ valid · 0 notes"}},
		{"problems and notes of a step", triage, "E2", 100, []string{
			"✗ 31:48 unknown op 'greater'",
			"ℹ 32:20 'concurrency' is ignored with 'where'",
		}},
		{"solver finish with its plan-level problem", triage, "solver", 100, []string{
			"✗ 53:45 references E8",
			"query_to_answer: Summarise the triage for the team leads.",
			`system_prompt: "Write in the house style: {{E8.style}}"`,
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, text := show(t, tc.doc, tc.path, tc.width, false)
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("missing %q in:\n%s", w, text)
				}
			}
			for _, l := range strings.Split(text, "\n") {
				if ansi.StringWidth(l) > tc.width-2 {
					t.Errorf("line wider than the pane: %q", l)
				}
			}
		})
	}
}

func TestNotLoaded(t *testing.T) {
	_, text := show(t, load(t, "../testdata/broken.yaml"), "", 80, false)
	for _, w := range []string{"does not load", "✗ 5:3 YAML: value is not allowed in this context"} {
		if !strings.Contains(text, w) {
			t.Errorf("missing %q in:\n%s", w, text)
		}
	}
}

// TestTemplateHighlight checks tags are styled apart from the text around
// them, and that no style runs past the end of a line.
func TestTemplateHighlight(t *testing.T) {
	m, _ := show(t, load(t, "../testdata/pr_review.yaml"), "E4", 80, true)
	var found bool
	for _, l := range m.Lines() {
		if i := strings.Index(l, "{{input.number}}"); i > 0 {
			found = true
			if !strings.HasSuffix(l[:i], "m") {
				t.Errorf("tag not styled: %q", l)
			}
		}
		if i := strings.LastIndex(l, "\x1b["); i >= 0 && !strings.HasPrefix(l[i:], "\x1b[m") && !strings.HasPrefix(l[i:], "\x1b[0m") {
			t.Errorf("a style runs past the end of the line: %q", l)
		}
	}
	if !found {
		t.Error("no line holds {{input.number}}")
	}
}

func TestScroll(t *testing.T) {
	m, _ := show(t, load(t, "../testdata/pr_review.yaml"), "E4", 60, false)
	h := 18
	m.Scroll(5)
	if m.Offset() != 5 {
		t.Errorf("offset %d, want 5", m.Offset())
	}
	m.Scroll(1000)
	if m.Offset() != len(m.Lines())-h {
		t.Errorf("offset %d, want %d", m.Offset(), len(m.Lines())-h)
	}
	m.Scroll(-1000)
	if m.Offset() != 0 {
		t.Errorf("offset %d, want 0", m.Offset())
	}
	if v := ansi.Strip(m.View()); !strings.Contains(v, "/"+strconv.Itoa(len(m.Lines()))) {
		t.Errorf("no scroll position in the footer:\n%s", v)
	}
}

func TestWrap(t *testing.T) {
	st := common.NewTheme(true, false).Text
	cases := []struct {
		in    string
		width int
		want  []string
	}{
		{"short", 10, []string{"short"}},
		{"two words here", 9, []string{"two words", "here"}},
		{"averyveryverylongword x", 8, []string{"averyver", "yverylon", "gword x"}},
		{"line one\nline two", 20, []string{"line one", "line two"}},
		{"", 5, []string{""}},
	}
	for _, tc := range cases {
		got := wrap([]seg{{tc.in, st}}, tc.width, "", "")
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("wrap(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
		}
	}
	got := wrap([]seg{{"key: a b c d", st}}, 8, "", "  ")
	if strings.Join(got, "|") != "key: a b|  c d" {
		t.Errorf("hanging indent: %q", got)
	}
}

// TestNarrowWrapsAtSeparators lays the demo's agent step out as the
// detail pane shows it at 60 columns: paths, templates and tool names,
// which have no spaces, break after their separators, never inside a
// word, and a path stays beside its label.
func TestNarrowWrapsAtSeparators(t *testing.T) {
	doc := load(t, "../../plans/examples/project/plans/incident_brief.yaml")
	_, plan := show(t, doc, "", 31, false)
	_, step := show(t, doc, "investigate", 31, false)
	text := plan + "\n" + step
	for _, want := range []string{
		"file        ../../plans/",
		"incident_brief.\n",
		"{{investigate.output.\n",
		"customer_impact}}",
		"primary|duplicate|\n",
	} {
		if !strings.Contains(strings.ReplaceAll(text, " \n", "\n"), want) {
			t.Errorf("the narrow detail does not show %q:\n%s", want, text)
		}
	}
	for _, l := range strings.Split(text, "\n") {
		if ansi.StringWidth(l) > 31 {
			t.Errorf("a line wider than the pane: %q", l)
		}
	}
}
