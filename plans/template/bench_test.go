package template

import "testing"

// benchRender parses src once and renders it b.N times, the way the engine
// renders a loaded plan.
func benchRender(b *testing.B, src string) {
	tpl, err := Parse(src)
	if err != nil {
		b.Fatal(err)
	}
	s := testScope()
	if _, err := tpl.Render(s); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tpl.Render(s); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRenderSplice(b *testing.B) {
	benchRender(b, "{{E0.values.3.id}}")
}

func BenchmarkRenderMixed(b *testing.B) {
	benchRender(b, "issue {{E0.values.3.id}} ({{E0.values.3.state}}) for team {{input.team}}: {{E0.count}} open, limit {{input.max}}")
}

func BenchmarkRenderSection(b *testing.B) {
	benchRender(b, "{{#E0.values}}{{title}} ({{state}}){{^@last}}, {{/@last}}{{/E0.values}}{{^E0.values}}no results found{{/E0.values}}")
}

func BenchmarkParse(b *testing.B) {
	const src = "Summarize for {{input.team}}:\n{{#E0.values}}- {{@index}} {{title}} ({{state}}){{^@last}},{{/@last}}\n{{/E0.values}}{{^E0.values}}no results found{{/E0.values}}\nTotal: {{E0.values.length}}"
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(src); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseShort parses a template of two tags, the size of most of a
// plan's templates.
func BenchmarkParseShort(b *testing.B) {
	const src = "Summarise issue {{item.id}}: {{S5_get.title}}"
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(src); err != nil {
			b.Fatal(err)
		}
	}
}
