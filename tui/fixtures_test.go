package tui

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stepwise-dev/stepwise/debugger/workspace"
	"github.com/stepwise-dev/stepwise/plans"
)

// The test plans under testdata/.
const (
	prReviewFile = "testdata/pr_review.yaml" // valid, every kind of step
	triageFile   = "testdata/triage.yaml"    // problems and notes
	brokenFile   = "testdata/broken.yaml"    // not YAML at all
	largeFile    = "testdata/large.yaml"     // generated: 2,000 top-level steps
)

// largeSteps is how many top-level steps the large plan has.
const largeSteps = 2000

// updating reports whether the tests run with -update (the flag the golden
// package defines), which regenerates goldens and the large plan.
func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// loadDocument reads and loads a plan file the way the CLI will.
func loadDocument(tb testing.TB, file string) workspace.Document {
	tb.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		tb.Fatal(err)
	}
	p, r := plans.Load(file, src, plans.Stepwise)
	return workspace.Document{File: file, Plan: p, Report: r}
}

// largePlanYAML generates a plan of n top-level steps that cycles through
// every kind of step, each reading the one before it, so the tree has
// bodies and glyphs all the way down.
func largePlanYAML(n int) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "identifier: large\nname: Large generated plan\ndescription: %d steps, for rendering benchmarks and scrolling tests.\nsteps:\n", n)
	prev := "input.seed"
	for i := range n {
		id := fmt.Sprintf("S%d", i)
		switch i % 20 {
		case 5:
			fmt.Fprintf(&b, "  - id: %s\n    tool_name: map\n    input:\n      over: \"{{%s.items}}\"\n      concurrency: 4\n      do:\n        tool_name: github__get_issue\n        input: { id: \"{{item.id}}\" }\n", id, prev)
		case 10:
			fmt.Fprintf(&b, "  - id: %s\n    tool_name: decide\n    input:\n      if: { value: \"{{%s.count}}\", op: gt, to: 3 }\n      then:\n        - id: %s_a\n          tool_name: slack__post_message\n          input: { text: \"{{%s.count}} items\" }\n        - id: %s_b\n          tool_name: builtin__reshape\n          input: { ok: true }\n      else:\n        tool_name: plan__escalate\n        input: { reason: \"{{%s.count}}\" }\n", id, prev, id, prev, id, prev)
		case 15:
			fmt.Fprintf(&b, "  - id: %s\n    tool_name: agent\n    input:\n      prompt: \"Summarise {{%s}}\"\n      max_iterations: 3\n      output_schema:\n        type: object\n        required: [summary]\n        properties:\n          summary: { type: string, description: A short summary. }\n", id, prev)
		case 19:
			fmt.Fprintf(&b, "  - id: %s\n    tool_name: filter\n    input:\n      over: \"{{%s.output.items}}\"\n      where: { value: \"{{item.score}}\", op: gte, to: 0.5 }\n", id, prev)
		default:
			fmt.Fprintf(&b, "  - id: %s\n    tool_name: github__step_%d\n    input: { from: \"{{%s}}\", n: %d }\n    reasoning: Step %d of the generated plan.\n", id, i%7, prev, i, i)
		}
		prev = id
	}
	fmt.Fprintf(&b, "output:\n  last: \"{{%s}}\"\n", prev)
	return b.Bytes()
}

// TestLargePlanFixture keeps testdata/large.yaml what the generator makes,
// and checks it is what it claims: a valid plan of 2,000 top-level steps.
func TestLargePlanFixture(t *testing.T) {
	want := largePlanYAML(largeSteps)
	if updating() {
		if err := os.WriteFile(filepath.FromSlash(largeFile), want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(largeFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is not what largePlanYAML generates; run go test ./tui -run TestLargePlanFixture -update", largeFile)
	}
	doc := loadDocument(t, largeFile)
	if doc.Plan == nil || len(doc.Plan.Steps) != largeSteps {
		t.Fatalf("large plan: want %d top-level steps, report %+v", largeSteps, doc.Report)
	}
	if !doc.Report.OK() {
		t.Fatalf("large plan has problems: %v", doc.Report.Problems)
	}
}
