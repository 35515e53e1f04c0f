package plans

import (
	"bytes"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stepwise-dev/stepwise/plans/internal/repoyaml"
	"github.com/stepwise-dev/stepwise/plans/yamlpos"
)

// yamlv3Only is a comment that sends a text to yaml.v3 without changing
// what it says: the fast reader takes no tab anywhere, yaml.v3 takes one in
// a comment.
const yamlv3Only = "#\t\n"

// checkReadersDecodeAlike fails t when src, decoded as a plan and as a tool
// file from the fast reader's Nodes, gives other values or problems than
// the same text read by yaml.v3 and copied into Nodes. A text with a YAML
// syntax problem is left out: both of its loads went to yaml.v3, and the
// appended comment may move where it reports the end of the text. So is a
// document with nothing in it (--- alone): its value is a null placed at
// the end of the text, which the comment moves too.
func checkReadersDecodeAlike(t *testing.T, name string, src []byte) {
	t.Helper()
	if !bytes.HasSuffix(src, []byte("\n")) {
		src = append(bytes.Clone(src), '\n')
	}
	if root, _, _, _ := yamlpos.Read("plan.yaml", string(src)); root != nil && root.Kind == yamlpos.ScalarNode && root.Style == 0 && root.Value == "" {
		return
	}
	slow := append(bytes.Clone(src), yamlv3Only...)
	plan, report := Load("plan.yaml", src, Stepwise)
	if hasYAMLSyntaxProblem(report) {
		return
	}
	slowPlan, slowReport := Load("plan.yaml", slow, Stepwise)
	if !reflect.DeepEqual(report, slowReport) {
		t.Fatalf("%s: the readers' plans report differently:\nfast reader: %v\nyaml.v3:     %v\n%s", name, report, slowReport, src)
	}
	if d := decodingDifference(reflect.ValueOf(plan), reflect.ValueOf(slowPlan), "plan"); d != "" {
		t.Fatalf("%s: the readers' plans differ at %s\n%s", name, d, src)
	}
	tool, report := LoadToolFile("tool.yaml", src, Stepwise)
	slowTool, slowReport := LoadToolFile("tool.yaml", slow, Stepwise)
	if !reflect.DeepEqual(report, slowReport) {
		t.Fatalf("%s: the readers' tool files report differently:\nfast reader: %v\nyaml.v3:     %v\n%s", name, report, slowReport, src)
	}
	if d := decodingDifference(reflect.ValueOf(tool), reflect.ValueOf(slowTool), "tool"); d != "" {
		t.Fatalf("%s: the readers' tool files differ at %s\n%s", name, d, src)
	}
}

// compiledSchema is the type decodingDifference does not look into: a
// compiled schema is made from its schema's value, which it compares, and
// keys its patterns by pointer.
var compiledSchema = reflect.TypeFor[*jsonschema.Schema]()

// decodingDifference describes the first place where a and b, what two
// loads decoded, differ, or is "" when they are the same, as
// reflect.DeepEqual would have them but for compiled schemas.
func decodingDifference(a, b reflect.Value, path string) string {
	if a.Type() == compiledSchema {
		return ""
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		switch {
		case a.IsNil() && b.IsNil():
			return ""
		case a.IsNil() || b.IsNil():
			return path + ": nil against not"
		case a.Kind() == reflect.Interface && a.Elem().Type() != b.Elem().Type():
			return path + ": " + a.Elem().Type().String() + " against " + b.Elem().Type().String()
		}
		return decodingDifference(a.Elem(), b.Elem(), path)
	case reflect.Struct:
		for i := range a.NumField() {
			if d := decodingDifference(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name); d != "" {
				return d
			}
		}
	case reflect.Slice, reflect.Array:
		if a.Len() != b.Len() {
			return fmt.Sprintf("%s: %d items against %d", path, a.Len(), b.Len())
		}
		for i := range a.Len() {
			if d := decodingDifference(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i)); d != "" {
				return d
			}
		}
	case reflect.Map:
		if a.Len() != b.Len() {
			return fmt.Sprintf("%s: %d keys against %d", path, a.Len(), b.Len())
		}
		for _, k := range a.MapKeys() {
			if !b.MapIndex(k).IsValid() {
				return fmt.Sprintf("%s[%v]: missing", path, k)
			}
			if d := decodingDifference(a.MapIndex(k), b.MapIndex(k), fmt.Sprintf("%s[%v]", path, k)); d != "" {
				return d
			}
		}
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		if !a.IsNil() || !b.IsNil() {
			return path + ": a " + a.Kind().String() + ", which cannot be compared"
		}
	default:
		if !a.Equal(b) {
			return fmt.Sprintf("%s: %v against %v", path, a, b)
		}
	}
	return ""
}

func hasYAMLSyntaxProblem(r Report) bool {
	for _, p := range r.Problems {
		if p.Code == CodeYAMLSyntax {
			return true
		}
	}
	return false
}

// readerSources are the texts the readers are held alike on: every YAML
// file of the repository (all of which the fast reader takes, as
// yamlpos's TestFastParseMatchesYAMLv3 holds), and the plans of this
// package's tests, valid and broken.
func readerSources(t testing.TB) map[string][]byte {
	t.Helper()
	out := corpus(t)
	maps.Copy(out, repoyaml.Files(t, ".."))
	for _, tc := range invalidCases {
		out["invalid: "+tc.name] = []byte(tc.src)
	}
	for _, tc := range noteCases {
		out["note: "+tc.name] = []byte(tc.src)
	}
	for _, tc := range allowedCases {
		out["allowed: "+tc.name] = []byte(tc.src)
	}
	for _, tc := range resolveCases {
		out["resolve: "+tc.name] = []byte(tc.src)
	}
	return out
}

// TestReadersDecodeAlike holds the two readers of package yamlpos to one
// decoding: a plan or tool file decodes to the same values and problems,
// at the same file:line:col, whichever reader read it.
func TestReadersDecodeAlike(t *testing.T) {
	sources := readerSources(t)
	if len(sources) < 100 {
		t.Fatalf("only %d sources", len(sources))
	}
	for name, src := range sources {
		checkReadersDecodeAlike(t, name, src)
	}
}

// FuzzReadersDecodeAlike holds the readers to one decoding on any text.
func FuzzReadersDecodeAlike(f *testing.F) {
	for _, src := range readerSources(f) {
		f.Add(src)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		checkReadersDecodeAlike(t, "fuzz", src)
	})
}

// TestPlansOutliveTheirTrees loads every source, then compares each plan
// and tool file with a load of the same text by yaml.v3, whose tree is
// not reused: each load releases its fast reader's tree for the next load
// to reuse, so a plan or a report that pointed into its tree would have
// changed under the later loads.
func TestPlansOutliveTheirTrees(t *testing.T) {
	type loaded struct {
		plan       *Plan
		report     Report
		tool       *ToolFile
		toolReport Report
	}
	load := func(src []byte) (l loaded) {
		l.plan, l.report = Load("plan.yaml", src, Stepwise)
		l.tool, l.toolReport = LoadToolFile("tool.yaml", src, Stepwise)
		return l
	}
	sources := readerSources(t)
	names := slices.Sorted(maps.Keys(sources))
	first := map[string]loaded{}
	for _, name := range names {
		if !bytes.HasSuffix(sources[name], []byte("\n")) {
			sources[name] = append(bytes.Clone(sources[name]), '\n')
		}
		first[name] = load(sources[name])
	}
	compared := 0
	for _, name := range names {
		if hasYAMLSyntaxProblem(first[name].report) {
			continue // both loads went to yaml.v3
		}
		slow := load(append(bytes.Clone(sources[name]), yamlv3Only...))
		if d := decodingDifference(reflect.ValueOf(first[name]), reflect.ValueOf(slow), "load"); d != "" {
			t.Fatalf("%s: after later loads, the load differs from yaml.v3's at %s", name, d)
		}
		compared++
	}
	if compared < 100 {
		t.Fatalf("only %d loads compared", compared)
	}
}
