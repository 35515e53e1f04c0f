package yamlpos

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stepwise-dev/stepwise/plans/internal/repoyaml"
	"go.yaml.in/yaml/v3"
)

// yamlv3Tree is what yaml.v3 reads from src, comments dropped: the top of
// its first document, or an error when it refuses the text or the text
// holds more than one document.
func yamlv3Tree(src []byte) (*yaml.Node, error) {
	first, second, err := decodeDocuments(src)
	if err != nil {
		return nil, err
	}
	if second != nil {
		return nil, errors.New("a second document")
	}
	if len(first.Content) == 0 {
		return nil, io.EOF
	}
	dropComments(first.Content[0])
	return first.Content[0], nil
}

// treeDifference describes the first place where trees a and b differ,
// field by field, or is "" when they are the same.
func treeDifference(a, b *yaml.Node, path string) string {
	switch {
	case a == nil && b == nil:
		return ""
	case a == nil || b == nil:
		return fmt.Sprintf("%s: %v against %v", path, a, b)
	}
	type fields struct {
		Kind                                               yaml.Kind
		Style                                              yaml.Style
		Tag, Value, Anchor, HeadComment, LineComment, Foot string
		Line, Column                                       int
		Alias                                              bool
		Children                                           int
	}
	fa := fields{a.Kind, a.Style, a.Tag, a.Value, a.Anchor, a.HeadComment, a.LineComment, a.FootComment, a.Line, a.Column, a.Alias != nil, len(a.Content)}
	fb := fields{b.Kind, b.Style, b.Tag, b.Value, b.Anchor, b.HeadComment, b.LineComment, b.FootComment, b.Line, b.Column, b.Alias != nil, len(b.Content)}
	if fa != fb {
		return fmt.Sprintf("%s: %+v against %+v", path, fa, fb)
	}
	for i := range a.Content {
		if d := treeDifference(a.Content[i], b.Content[i], path+"/"+strconv.Itoa(i)); d != "" {
			return d
		}
	}
	return ""
}

// checkAgainstYAMLv3 fails t when the fast reader accepts src and yaml.v3
// refuses it or reads another tree. It reports whether the fast reader
// accepted it.
func checkAgainstYAMLv3(t *testing.T, name string, src []byte) bool {
	t.Helper()
	fast, ok := fastParse(string(src))
	if !ok {
		return false
	}
	want, err := yamlv3Tree(src)
	if err != nil {
		t.Fatalf("%s: the fast reader accepts what yaml.v3 refuses (%v):\n%s", name, err, src)
	}
	if d := treeDifference(toYAML(fast), want, ""); d != "" {
		t.Fatalf("%s: the fast reader's tree differs from yaml.v3's at %s\n%s", name, d, src)
	}
	// The same text left to yaml.v3 gives the decoder the same Nodes.
	if d := treeDifference(toYAML(fromYAML(want)), want, ""); d != "" {
		t.Fatalf("%s: yaml.v3's tree copied into Nodes differs from it at %s\n%s", name, d, src)
	}
	return true
}

// goTestStrings is every string constant of more than one line in the Go
// tests of the plans package and the command: the plans, tool files and
// broken files the tests are made of.
func goTestStrings(t testing.TB) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	var files []string
	for _, dir := range []string{"..", "../../cmd/stepwise", "../../engine/model"} {
		found, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
		files = append(files, found...)
	}
	fset := token.NewFileSet()
	for _, file := range files {
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil && strings.Contains(s, "\n") {
					out[fset.Position(lit.Pos()).String()] = []byte(s)
				}
			}
			return true
		})
	}
	if len(out) < 200 {
		t.Fatalf("found only %d strings", len(out))
	}
	return out
}

// TestFastParseMatchesYAMLv3 reads every YAML file of the repository and
// every multi-line string of the plan tests with both readers: where the
// fast one accepts a text, yaml.v3 must read the same tree from it. The
// fast reader must also accept every YAML file of the repository that
// yaml.v3 reads, or it would speed nothing up.
func TestFastParseMatchesYAMLv3(t *testing.T) {
	for path, src := range repoyaml.Files(t, "../..") {
		if _, err := yamlv3Tree(src); !checkAgainstYAMLv3(t, path, src) && err == nil {
			t.Errorf("%s: the fast reader refuses it", path)
		}
	}
	accepted := 0
	strs := goTestStrings(t)
	for at, src := range strs {
		if checkAgainstYAMLv3(t, at, src) {
			accepted++
		}
	}
	t.Logf("the fast reader accepted %d of %d test strings", accepted, len(strs))
}

func TestFastParse(t *testing.T) {
	tests := []struct {
		name, src string
		accepted  bool
	}{
		{"block mapping and sequence", "a: 1\nb:\n  - x\n  - y: 2\n    z: [3, 4]\n", true},
		{"indentless sequence", "a:\n- x\n- y\nb: 1\n", true},
		{"flow over lines", "a: {x: 1,\n  y: [2,\n 3]\n}\nb: 1\n", true},
		{"JSON", `{"a":[1,-2.5,"x\u00e9\n",true,null,{"b":{}}]}`, true},
		{"quotes", "a: 'it''s'\nb: \"say \\\"hi\\\"\"\n'c d': e\n", true},
		{"block scalars", "a: |\n  x\n\n   y\n  z\nb: >-\n  p\n  q\n\n  r\nc: |+\n  k\n\n", true},
		{"comments", "# head\na: 1 # line\n# between\nb: [x, # in flow\n  y]\n", true},
		{"non-ASCII columns", "é: {ü: 1, ç: 'ñ'}\n", true},
		{"tags by value", "a: [1, 0x1F, 0o17, 1e3, .5, .inf, ~, yes, 2001-12-14, \"1\", <<]\n", true},
		{"an anchor", "a: &x 1\nb: *x\n", false},
		{"a tag", "a: !!str 1\n", false},
		{"a multi-line plain scalar", "a: x\n  y\n", false},
		{"a multi-line plain scalar in flow", "a: [x\n  y]\n", false},
		{"a multi-line quoted scalar", "a: 'x\n  y'\n", false},
		{"an empty value", "a:\nb: 1\n", false},
		{"a tab", "a:\n\tb: 1\n", false},
		{"a carriage return", "a: 1\r\n", false},
		{"two documents", "a: 1\n---\nb: 2\n", false},
		{"a directive", "%YAML 1.1\n---\na: 1\n", false},
		{"a question mark in flow", "a: {d: Why?}\n", false},
		{"a complex key", "? a\n: b\n", false},
		{"an unknown escape", "a: \"\\/\"\n", false},
		{"a mapping value in a value", "a: b: c\n", false},
		{"empty", "", false},
		{"only comments", "# x\n", false},
		// The first collection of a file has more children than the
		// first slab of lists holds.
		{"40 items first", "a: [" + strings.Repeat("1, ", 39) + "1]\n", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := checkAgainstYAMLv3(t, tc.name, []byte(tc.src)); got != tc.accepted {
				t.Errorf("accepted = %v, want %v", got, tc.accepted)
			}
		})
	}
}

// TestParseDropsComments checks that a tree comes out of Parse without
// comments whichever reader read it.
func TestParseDropsComments(t *testing.T) {
	for _, src := range []string{"# c\na: 1 # d\n", "# c\na: &x 1 # d\nb: *x\n"} {
		root, _, problem := Parse("f.yaml", []byte(src))
		if problem != nil {
			t.Fatal(problem)
		}
		var walk func(n *yaml.Node)
		walk = func(n *yaml.Node) {
			if n.HeadComment != "" || n.LineComment != "" || n.FootComment != "" {
				t.Errorf("%q: a comment at %d:%d", src, n.Line, n.Column)
			}
			for _, c := range n.Content {
				walk(c)
			}
		}
		walk(root)
	}
}

// FuzzFastParse checks the fast reader against yaml.v3 on any text: where
// it accepts one, yaml.v3 must accept it too and read the same tree, and
// the depth scan, which the fast reader's texts skip, must pass it. The
// seeds are the repository's YAML files, the plan tests' strings, and text
// nested as deep as the fast reader goes, and a level deeper.
func FuzzFastParse(f *testing.F) {
	for _, src := range repoyaml.Files(f, "../..") {
		f.Add(src)
	}
	for _, src := range goTestStrings(f) {
		f.Add(src)
	}
	f.Add(deepFlow(fastMaxDepth))
	f.Add(deepFlow(fastMaxDepth + 1))
	f.Fuzz(func(t *testing.T, src []byte) {
		if checkAgainstYAMLv3(t, "fuzz", src) && scanDepth(src, MaxDepth).over >= 0 {
			t.Fatalf("the fast reader accepts what the depth scan refuses:\n%s", src)
		}
	})
}

// TestFastParseDepth checks that the fast reader takes text nested as deep
// as fastMaxDepth and leaves deeper text to the depth scan.
func TestFastParseDepth(t *testing.T) {
	if _, ok := fastParse("a: " + string(deepFlow(fastMaxDepth-1))); !ok {
		t.Errorf("refused %d levels", fastMaxDepth)
	}
	if _, ok := fastParse("a: " + string(deepFlow(fastMaxDepth))); ok {
		t.Errorf("accepted %d levels", fastMaxDepth+1)
	}
	if _, ok := fastParse(string(deepBlock(fastMaxDepth + 1))); ok {
		t.Errorf("accepted %d block levels", fastMaxDepth+1)
	}
}

// TestPlainTagMatchesYAML holds plainTag to yaml.v3's resolution on every
// word it knows by its text, on near misses of them, and on numbers and
// timestamps of each form: the fast reader's tags must be yaml.v3's.
func TestPlainTagMatchesYAML(t *testing.T) {
	words := []string{
		"true", "True", "TRUE", "false", "False", "FALSE", "tRue", "truE", "fals", "yes", "on", "Y",
		"~", "null", "Null", "NULL", "nulL", "nul", "~~",
		".nan", ".NaN", ".NAN", ".nAn", ".inf", ".Inf", ".INF", ".iNf", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF", "-.inF", ".nan1",
		"<<", "<", "<<<",
		"0", "-0", "+1", "0777", "1_000", "0x1F", "0b101", "-0b1", "0o17", "-0o17", "1e3", "-.5", ".5", "1.", "9223372036854775808", "2001-12-14", "2001-12-14 21:59:43.10",
		"S1", "tool_name", "a b",
	}
	for _, w := range words {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte("k: "+w), &doc); err != nil {
			t.Fatalf("yaml.v3 reads %q: %v", w, err)
		}
		if got, want := plainTag(w), TagOf(doc.Content[0].Content[1].Tag); got != want {
			t.Errorf("plainTag(%q) = %v, yaml.v3 says %v", w, got, want)
		}
	}
	if got := plainTag(""); got != NullTag {
		t.Errorf("plainTag(\"\") = %v, want !!null", got)
	}
}

// TestReadReusesReleasedTrees reads the repository's YAML files and the
// test strings one after another, each tree released before the next read,
// so that each is cut from blocks an earlier one held: every tree must be
// the one a reader of fresh memory reads, and a released tree's nodes must
// be cleared, keeping no text they held alive.
func TestReadReusesReleasedTrees(t *testing.T) {
	texts := repoyaml.Files(t, "../..")
	maps.Copy(texts, goTestStrings(t))
	names := slices.Sorted(maps.Keys(texts))
	// Twice over, large and small texts in turn, so that blocks of one
	// text's sizes serve another's.
	read := 0
	for range 2 {
		for _, name := range names {
			src := string(texts[name])
			want, ok := fastParse(src)
			if !ok {
				continue
			}
			root, second, problem, release := Read(name, src)
			if second != nil || problem != nil {
				t.Fatalf("%s: Read finds a second document or a problem (%v) where the fast reader reads one", name, problem)
			}
			if d := treeDifference(toYAML(root), toYAML(want), ""); d != "" {
				t.Fatalf("%s: read after other trees were released, the tree differs from a fresh read at %s", name, d)
			}
			kept := root
			release()
			if kept.Kind != 0 || kept.Value != "" || kept.Content() != nil {
				t.Fatalf("%s: the released tree's top node still holds %+v", name, *kept)
			}
			read++
		}
	}
	if read < 100 {
		t.Fatalf("only %d texts were read", read)
	}
}
