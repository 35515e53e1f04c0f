package plans

import (
	"bytes"
	"testing"

	"github.com/stepwise-dev/stepwise/plans/yamlpos"
)

// checkReport fails when a problem or note lacks what every consumer of a
// report relies on: a code, a message, and a position in the file.
func checkReport(t *testing.T, file string, r Report) {
	t.Helper()
	for _, list := range [][]Problem{r.Problems, r.Notes} {
		for _, p := range list {
			if p.Code == "" || p.Message == "" {
				t.Errorf("problem without a code or a message: %#v", p)
			}
			if p.Pos.Line < 1 || p.Pos.Col < 1 || p.Pos.File != file {
				t.Errorf("problem without a position in %s: %#v", file, p)
			}
		}
	}
}

func FuzzLoad(f *testing.F) {
	for _, src := range corpus(f) {
		f.Add(src)
	}
	for _, tc := range invalidCases {
		f.Add([]byte(tc.src))
	}
	for _, tc := range noteCases {
		f.Add([]byte(tc.src))
	}
	for _, tc := range allowedCases {
		f.Add([]byte(tc.src))
	}
	for _, tc := range resolveCases {
		f.Add([]byte(tc.src))
	}
	for _, src := range boundsSeeds() {
		f.Add(src)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		p, r := Load("fuzz.yaml", src, Stepwise)
		checkReport(t, "fuzz.yaml", r)
		if p == nil {
			if r.OK() {
				t.Fatal("Load returned no plan and no problem")
			}
			return
		}
		// Everything downstream of Load must take whatever Load returns,
		// problems and all, without panicking.
		checkReport(t, "fuzz.yaml", Resolve(p, projectCatalog))
		References(p)
		ExplainStrict(p)
		WalkSteps(p, func(s *Step) {
			// A step without an id (or with an empty one, a problem of
			// its own) has no path at the top level; any other has one.
			if s.ID.Value != "" && s.Path == "" {
				t.Errorf("step %s at %s has no path", s.ID.Value, s.Pos)
			}
		})
	})
}

func FuzzToolFile(f *testing.F) {
	f.Add([]byte("name: x\ndescription: d\nkind: exec\ncommand: ls\nargs: [\"{{input.dir}}\"]\noutput: json\ntimeout_secs: 5\n"))
	f.Add([]byte("name: p\ndescription: d\nkind: prompt\nprompt: |\n  Sum up {{input.text}}\n  {{#input.tags}}{{.}}{{/input.tags}}\nmodel: fast\n"))
	f.Add([]byte("name: r\ndescription: d\nkind: reshape\nshape: {a: \"{{input.a}}\"}\ninput_schema: {type: object}\n"))
	f.Add([]byte("name: r\ndescription: d\nkind: reshape\ncaller_shape: true\nread_only: true\n"))
	for _, tc := range invalidToolFiles {
		f.Add([]byte(tc.src))
	}
	for _, src := range boundsSeeds() {
		f.Add(src)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		tf, r := LoadToolFile("tool.yaml", src, Stepwise)
		checkReport(t, "tool.yaml", r)
		if tf == nil && r.OK() {
			t.Fatal("LoadToolFile returned no tool and no problem")
		}
	})
}

// boundsSeeds are the shapes that once cost far more than their size: text
// nested just past yamlpos.MaxDepth, in flow and block form, and a string
// of many template tags. They are generated here rather than kept as files,
// and kept small; the fuzzer grows them.
func boundsSeeds() [][]byte {
	depth := yamlpos.MaxDepth + 1
	flow := append(append([]byte("identifier: deep\nname: Deep\ndescription: d\nsteps: "), bytes.Repeat([]byte("["), depth)...), bytes.Repeat([]byte("]"), depth)...)
	block := append(append([]byte("identifier: deep\nname: Deep\ndescription: d\nsteps:\n"), bytes.Repeat([]byte("- "), depth)...), "x\n"...)
	tags := append(append([]byte("identifier: tags\nname: Tags\ndescription: d\nsteps:\n  - id: E1\n    tool_name: builtin__reshape\n    input: {shape: {text: \""), bytes.Repeat([]byte("{{input.a}} "), 1000)...), "\"}}\n"...)
	return [][]byte{flow, block, tags}
}
