package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"

	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/plans/examples"
)

// printedSchema compiles the schema stepwise schema prints for kind.
func printedSchema(t *testing.T, kind string) *jsonschema.Schema {
	t.Helper()
	out, errOut, code := runCLI(t, "schema", kind)
	if code != 0 {
		t.Fatalf("stepwise schema %s exits %d: %s", kind, code, errOut)
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(out))
	if err != nil {
		t.Fatalf("stepwise schema %s prints no JSON: %v", kind, err)
	}
	if m, _ := doc.(map[string]any); m["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("stepwise schema %s is not draft 2020-12: %v", kind, m["$schema"])
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(kind+".json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(kind + ".json")
	if err != nil {
		t.Fatalf("stepwise schema %s does not compile: %v", kind, err)
	}
	return s
}

// asJSONValue reads a YAML or TOML file's text into the values a JSON
// Schema validates.
func asJSONValue(t *testing.T, name, text string) any {
	t.Helper()
	var v any
	var err error
	if strings.HasSuffix(name, ".toml") {
		err = toml.Unmarshal([]byte(text), &v)
	} else {
		err = yaml.Unmarshal([]byte(text), &v)
	}
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	out, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSchemaValidatesTheDemo: the demo project's plans, tools and
// config.toml, and the loader's valid plans, fit the schemas stepwise
// schema prints, and a file the loader refuses for its shape (a misspelt
// field, a kind's missing field, a wrong type, an unknown key) does not.
func TestSchemaValidatesTheDemo(t *testing.T) {
	dir := t.TempDir()
	if err := examples.WriteProject(dir, "stepwise"); err != nil {
		t.Fatal(err)
	}
	schemas := map[string]*jsonschema.Schema{}
	for _, kind := range []string{"plan", "tool", "config"} {
		schemas[kind] = printedSchema(t, kind)
	}
	files := map[string]string{"config": filepath.Join(dir, ".stepwise", "config.toml")}
	seen := map[string]int{}
	for kind, glob := range map[string]string{"plan": "plans/*.yaml", "tool": "tools/*.yaml"} {
		found, _ := filepath.Glob(filepath.Join(dir, ".stepwise", glob))
		for _, f := range found {
			files[kind+" "+filepath.Base(f)] = f
		}
		seen[kind] = len(found)
	}
	if seen["plan"] < 3 || seen["tool"] < 3 {
		t.Fatalf("the demo project has %v files; the test reads it wrong", seen)
	}
	for name, file := range files {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		kind, _, _ := strings.Cut(name, " ")
		if err := schemas[kind].Validate(asJSONValue(t, file, string(text))); err != nil {
			t.Errorf("%s does not fit stepwise schema %s:\n%v", file, kind, err)
		}
	}

	// The loader's corpus of valid plans fits too, but for the camelCase
	// spellings it takes with a note, which the schema flags.
	corpus, _ := filepath.Glob(filepath.Join(packageDir, "..", "..", "plans", "testdata", "valid", "*.yaml"))
	if len(corpus) < 10 {
		t.Fatalf("found %d plans in plans/testdata/valid", len(corpus))
	}
	for _, file := range corpus {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		_, report := plans.Load(file, text, plans.Stepwise)
		camel := slices.ContainsFunc(report.Notes, func(p plans.Problem) bool { return p.Code == plans.CodeCamelCase })
		err = schemas["plan"].Validate(asJSONValue(t, file, string(text)))
		if report.OK() && !camel && err != nil {
			t.Errorf("%s loads, but stepwise schema plan refuses it:\n%v", file, err)
		}
	}

	refused := []struct {
		name, kind, file, text, says string
	}{
		{"a misspelt plan field", "plan", "p.yaml", "identifier: p\nname: p\ndescription: p\nstepz: []\n", "stepz"},
		{"a map without its body", "plan", "p.yaml", "identifier: p\nname: p\ndescription: p\nsteps:\n  - id: m\n    tool_name: map\n    input: { over: [1] }\n", "do"},
		{"a misspelt agent field", "plan", "p.yaml", "identifier: p\nname: p\ndescription: p\nsteps:\n  - id: a\n    tool_name: agent\n    input: { prompt: hi, output_schema: {type: object}, max_iteration: 3 }\n", "max_iteration"},
		{"an unknown gate op", "plan", "p.yaml", "identifier: p\nname: p\ndescription: p\nsteps:\n  - id: x\n    tool_name: exit\n    input: { when: { value: 1, op: equals }, status: success }\n", "/when/op"},
		{"an exec tool without a command", "tool", "t.yaml", "name: t\ndescription: t\nkind: exec\n", "command"},
		{"a reshape tool with an exec field", "tool", "t.yaml", "name: t\ndescription: t\nkind: reshape\nshape: {}\ncommand: ls\n", "command"},
		{"an unknown config key", "config", "c.toml", "[settings]\nmax_agent_iteration = 3\n", "max_agent_iteration"},
		{"a config value of the wrong type", "config", "c.toml", "[storage]\nbackend = \"postgres\"\n", "/storage/backend"},
	}
	for _, tc := range refused {
		err := schemas[tc.kind].Validate(asJSONValue(t, tc.file, tc.text))
		if err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: the schema says %v, want a refusal naming %q", tc.name, err, tc.says)
		}
	}
	if _, _, code := runCLI(t, "schema", "plans"); code != exitUsage {
		t.Errorf("stepwise schema plans exits %d, want %d", code, exitUsage)
	}
}
