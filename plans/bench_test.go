package plans

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// bigPlan generates a plan of n top-level steps in a repeating mix: tool
// steps whose templates read earlier steps (typed splices, mixed text and
// sections), maps with two-step bodies, decides with a single-call and a
// list branch, agents, and filters. Every reference is to an earlier step,
// so the plan is valid and Load does all of its work. Each agent's output
// schema names its step, so that no two schemas are the same text and the
// figures do not lean on Load's compiling each schema text once.
func bigPlan(n int) []byte {
	var b strings.Builder
	b.WriteString("identifier: big\nname: Big\ndescription: A generated plan for benchmarks.\n")
	b.WriteString("input_schema:\n  type: object\n  properties:\n    q: {type: string}\n    n: {type: integer}\n")
	b.WriteString("steps:\n")
	prev := func(i, back int) string { // an earlier step id, back steps before i
		return fmt.Sprintf("S%d", max(0, i-back))
	}
	for i := range n {
		id := fmt.Sprintf("S%d", i)
		if i == 0 {
			fmt.Fprintf(&b, "  - id: %s\n    tool_name: user__fetch\n    input: {q: \"{{input.q}}\", limit: \"{{input.n}}\"}\n", id)
			continue
		}
		a, c := prev(i, 1), prev(i, 7)
		switch i % 10 {
		case 6:
			fmt.Fprintf(&b, `  - id: %[1]s
    tool_name: map
    input:
      over: "{{%[2]s.items}}"
      concurrency: 4
      do:
        - id: %[1]s_get
          tool_name: github__get_issue
          input: {id: "{{item.id}}", pos: "{{index}}", repo: "{{%[3]s.repo}}"}
        - id: %[1]s_sum
          tool_name: builtin__infer
          input:
            instruction: "Summarise issue {{item.id}}: {{%[1]s_get.title}}"
            data: "{{%[1]s_get.body}}"
`, id, a, c)
		case 7:
			fmt.Fprintf(&b, `  - id: %[1]s
    tool_name: decide
    input:
      if: {value: "{{%[2]s.count}}", op: gt, to: 3}
      then:
        tool_name: user__escalate
        input: {items: "{{%[2]s.items}}"}
      else:
        - id: %[1]s_log
          tool_name: user__log
          input: {entry: "only {{%[2]s.count}} from {{%[3]s.source}}"}
`, id, a, c)
		case 8:
			fmt.Fprintf(&b, `  - id: %[1]s
    tool_name: agent
    input:
      prompt: |
        Review these and report what is blocked:
        {{%[2]s.items}}
        Context: {{%[3]s.summary}}
      tools: ["github__*", "user__log", "builtin__infer"]
      max_iterations: 4
      output_schema:
        type: object
        additionalProperties: false
        required: [blocked]
        properties:
          blocked: {type: array, items: {type: string}, description: "what %[1]s found blocked"}
`, id, a, c)
		case 9:
			fmt.Fprintf(&b, `  - id: %[1]s
    tool_name: filter
    input:
      over: "{{%[2]s.output.blocked}}"
      where: {value: "{{item}}", op: contains, to: "{{input.q}}"}
`, id, a)
		default:
			fmt.Fprintf(&b, `  - id: %[1]s
    tool_name: user__step%[4]d
    input:
      previous: "{{%[2]s}}"
      count: "{{%[2]s.count}}"
      text: "from {{%[3]s.items.0.title}} and {{input.q}}"
      list: "{{#%[2]s.items}}{{title}}{{^@last}}, {{/@last}}{{/%[2]s.items}}"
`, id, a, c, i%7)
		}
	}
	fmt.Fprintf(&b, "output:\n  last: \"{{S%d}}\"\n  first: \"{{S0.items}}\"\n", n-1)
	return []byte(b.String())
}

func loadBig(b *testing.B) (*Plan, []byte) {
	b.Helper()
	src := bigPlan(1000)
	p, r := Load("big.yaml", src, Stepwise)
	if !r.OK() {
		b.Fatalf("the generated plan has problems:%s", formatProblems(r.Problems[:min(5, len(r.Problems))]))
	}
	return p, src
}

// BenchmarkLoad1000Steps times Load (parse, decode and every static check)
// on a 1,000-step plan. The project's target is under 10 ms, written in
// blocks as here or on one line (BenchmarkLoadOneLine), and ten times the
// steps within twelve times the time (BenchmarkLoad10000Steps).
func BenchmarkLoad1000Steps(b *testing.B) {
	_, src := loadBig(b)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		Load("big.yaml", src, Stepwise)
	}
}

// BenchmarkLoad10000Steps times Load on a plan ten times the size of
// BenchmarkLoad1000Steps's, which should take ten times as long: Load is
// linear in the plan.
func BenchmarkLoad10000Steps(b *testing.B) {
	src := bigPlan(10000)
	if _, r := Load("big.yaml", src, Stepwise); !r.OK() {
		b.Fatalf("the generated plan has problems:%s", formatProblems(r.Problems[:min(5, len(r.Problems))]))
	}
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		Load("big.yaml", src, Stepwise)
	}
}

// BenchmarkParse1000Steps times the YAML parse alone (what Load spends
// before any of its own work), the floor under BenchmarkLoad1000Steps.
func BenchmarkParse1000Steps(b *testing.B) {
	_, src := loadBig(b)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		var r Report
		if _, release, ok := parseDocument("big.yaml", string(src), planDocument, &r); ok {
			release()
		}
	}
}

// BenchmarkCompileSchema times compiling one agent output schema, which
// Load does for every schema in the file.
func BenchmarkCompileSchema(b *testing.B) {
	raw := map[string]any{
		"type": "object", "additionalProperties": false, "required": []any{"blocked"},
		"properties": map[string]any{"blocked": map[string]any{"type": "array", "items": map[string]any{"type": "string"}}},
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := CompileSchema(raw); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkResolve1000Steps times the catalog layer on the same plan.
func BenchmarkResolve1000Steps(b *testing.B) {
	p, _ := loadBig(b)
	b.ReportAllocs()
	for b.Loop() {
		Resolve(p, projectCatalog)
	}
}

// BenchmarkReferences times listing every template read of the plan, what
// the workbench and the debugger ask for on every selection.
func BenchmarkReferences(b *testing.B) {
	p, _ := loadBig(b)
	b.ReportAllocs()
	for b.Loop() {
		References(p)
	}
}

// BenchmarkReaders times indexing every template read of the plan by root.
func BenchmarkReaders(b *testing.B) {
	p, _ := loadBig(b)
	b.ReportAllocs()
	for b.Loop() {
		Readers(p)
	}
}

// oneLine is a plan written on one line, as generated plans are: its YAML
// as JSON, which YAML reads as it is.
func oneLine(b *testing.B, src []byte) []byte {
	b.Helper()
	var doc any
	if err := yaml.Unmarshal(src, &doc); err != nil {
		b.Fatal(err)
	}
	out, err := json.Marshal(doc)
	if err != nil {
		b.Fatal(err)
	}
	return out
}

// BenchmarkLoadOneLine times Load on plans written on one line, 1,000 and
// 10,000 steps: positions are found without counting from the start of
// the line for every value, so the time grows with the plan's size alone.
func BenchmarkLoadOneLine(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			src := oneLine(b, bigPlan(n))
			if _, r := Load("big.yaml", src, Stepwise); !r.OK() {
				b.Fatalf("the generated plan has problems:%s", formatProblems(r.Problems[:min(5, len(r.Problems))]))
			}
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				Load("big.yaml", src, Stepwise)
			}
		})
	}
}

// BenchmarkManyTags times Load on one string holding n template tags, each
// placed at its line and column.
func BenchmarkManyTags(b *testing.B) {
	for _, n := range []int{10000, 80000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			var s strings.Builder
			s.WriteString("identifier: tags\nname: Tags\ndescription: Many tags.\nsteps:\n  - id: E1\n    tool_name: builtin__reshape\n    input: {shape: {a: 1}}\n")
			s.WriteString("  - id: E2\n    tool_name: builtin__reshape\n    input: {shape: {text: \"")
			for range n {
				s.WriteString("{{E1.a}} ")
			}
			s.WriteString("\"}}\n")
			src := []byte(s.String())
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				Load("tags.yaml", src, Stepwise)
			}
		})
	}
}
