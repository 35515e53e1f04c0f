package template

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// testScope is the fixed scope most render tests read. It is rebuilt per
// call so that no test can leak a change into another.
func testScope() MapScope {
	return MapScope{
		"input": map[string]any{
			"team":  "Core",
			"max":   json.Number("50"),
			"flag":  true,
			"off":   false,
			"none":  nil,
			"blank": "",
			"zero":  0,
			"tags":  []any{"a", "b", "c"},
		},
		"E0": map[string]any{
			"values": []any{
				map[string]any{"id": json.Number("1"), "title": "One", "state": "open"},
				map[string]any{"id": json.Number("2"), "title": "Two", "state": "done", "owner": map[string]any{"name": "Ann"}},
				map[string]any{"id": json.Number("3"), "title": "Three", "state": "open", "labels": []any{"x", "y"}},
				map[string]any{"id": 4.0, "title": "Four", "state": "open"},
			},
			"count":  json.Number("4"),
			"name":   "héllo",
			"empty":  []any{},
			"meta":   map[string]any{},
			"x":      nil,
			"obj":    map[string]any{"length": 7, "b": "<&>", "a": []any{1, true, nil}},
			"f":      1.5,
			"whole":  3.0,
			"big":    1e21,
			"tiny":   1e-7,
			"f32":    float32(0.1),
			"i64":    int64(-3),
			"u8":     uint8(7),
			"yes":    true,
			"nan":    math.NaN(),
			"grid":   []any{[]any{1, 2}, []any{}, []any{3}},
			"length": "not special at the root's top level",
			"ints":   []any{int8(-8), int16(-16), int32(-32), uint(1), uint16(16), uint32(32), uint64(64)},
			"strs":   []string{"opaque"},
		},
		"E1":    map[string]any{"values": []any{}},
		"E2":    []any{"p", "q"},
		"title": "root title",
	}
}

var spliceTests = []struct {
	name string
	src  string
	want any
}{
	{"json number stays a number", "{{input.max}}", json.Number("50")},
	{"string", "{{input.team}}", "Core"},
	{"bool", "{{input.flag}}", true},
	{"null", "{{input.none}}", nil},
	{"int", "{{input.zero}}", 0},
	{"float", "{{E0.f}}", 1.5},
	{"list stays a list", "{{input.tags}}", []any{"a", "b", "c"}},
	{"object stays an object", "{{E0.values.1.owner}}", map[string]any{"name": "Ann"}},
	{"deep index", "{{E0.values.2.id}}", json.Number("3")},
	{"leading zeros index", "{{E0.values.02.title}}", "Three"},
	{"list length", "{{E0.values.length}}", 4},
	{"empty list length", "{{E0.empty.length}}", 0},
	{"string length counts runes", "{{E0.name.length}}", 5},
	{"object key named length", "{{E0.obj.length}}", 7},
	{"length key on a root object", "{{E0.length}}", "not special at the root's top level"},
	{"root list", "{{E2.1}}", "q"},
	{"whole root", "{{E1}}", map[string]any{"values": []any{}}},
	{"spaces inside braces", "{{ input.team }}", "Core"},
	{"nested list", "{{E0.grid.0.1}}", 2},
	{"loop variable alone", "{{@last}}", true},
	{"dot alone reads nothing", "{{.}}", nil},
}

func TestRenderSplice(t *testing.T) {
	s := testScope()
	for _, tt := range spliceTests {
		t.Run(tt.name, func(t *testing.T) {
			tpl, err := Parse(tt.src)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.src, err)
			}
			if !tpl.IsSplice() {
				t.Fatalf("Parse(%q) is not a splice", tt.src)
			}
			got, err := tpl.Render(s)
			if err != nil {
				t.Fatalf("Render(%q): %v", tt.src, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Render(%q) = %#v, want %#v", tt.src, got, tt.want)
			}
		})
	}
}

var textTests = []struct {
	name string
	src  string
	want string
}{
	{"literal", "no tags here", "no tags here"},
	{"empty", "", ""},
	{"string raw", "team {{input.team}}", "team Core"},
	{"json number verbatim", "max={{input.max}}", "max=50"},
	{"integral float", "n={{E0.whole}}", "n=3"},
	{"fractional float", "f={{E0.f}}", "f=1.5"},
	{"huge float uses exponent", "{{E0.big}}!", "1e+21!"},
	{"tiny float uses exponent", "{{E0.tiny}}!", "1e-7!"},
	{"float32 keeps its precision", "{{E0.f32}}!", "0.1!"},
	{"int64", "{{E0.i64}}!", "-3!"},
	{"uint8", "{{E0.u8}}!", "7!"},
	{"booleans", "{{input.flag}}/{{input.off}}", "true/false"},
	{"null", "v={{input.none}}", "v=null"},
	{"empty string", "[{{input.blank}}]", "[]"},
	{"list as compact json", "ids: {{input.tags}}", `ids: ["a","b","c"]`},
	{"object keys sorted, no html escaping", "o={{E0.obj}}", `o={"a":[1,true,null],"b":"<&>","length":7}`},
	{"empty list and object", "{{E0.empty}}{{E0.meta}}", "[]{}"},
	{"json embedding", `{"q": {{input.tags}}}`, `{"q": ["a","b","c"]}`},
	{"lone braces stay", "{ {{input.team}} }}", "{ Core }}"},
	{"list section", "{{#E0.values}}{{title}} ({{state}}){{^@last}}, {{/@last}}{{/E0.values}}", "One (open), Two (done), Three (open), Four (open)"},
	{"empty list section renders nothing", "[{{#E0.empty}}x{{/E0.empty}}]", "[]"},
	{"section over a string item", "{{#input.team}}Hi {{.}}{{/input.team}}", "Hi Core"},
	{"section over an object", "{{#E0.values.1.owner}}by {{name}}{{/E0.values.1.owner}}", "by Ann"},
	{"section over true", "{{#input.flag}}on{{/input.flag}}", "on"},
	{"zero is truthy", "{{#input.zero}}zero:{{.}}{{/input.zero}}", "zero:0"},
	{"section over false", "[{{#input.off}}x{{/input.off}}]", "[]"},
	{"section over null", "[{{#input.none}}x{{/input.none}}]", "[]"},
	{"section over empty string", "[{{#input.blank}}x{{/input.blank}}]", "[]"},
	{"section over empty object", "[{{#E0.meta}}x{{/E0.meta}}]", "[]"},
	{"section over missing root is falsy", "[{{#E9.values}}x{{/E9.values}}]", "[]"},
	{"section over bad path is falsy", "[{{#E0.count.x}}x{{/E0.count.x}}]", "[]"},
	{"section over empty data is falsy", "[{{#E0.empty.0}}x{{/E0.empty.0}}]", "[]"},
	{"inverted over empty list", "{{^E1.values}}no results found{{/E1.values}}", "no results found"},
	{"inverted over full list", "[{{^E0.values}}none{{/E0.values}}]", "[]"},
	{"inverted over missing root", "{{^E9}}none{{/E9}}", "none"},
	{"inverted over false", "{{^input.off}}off{{/input.off}}", "off"},
	{"inverted over null", "{{^input.none}}null{{/input.none}}", "null"},
	{"inverted over empty string", "{{^input.blank}}blank{{/input.blank}}", "blank"},
	{"inverted over empty object", "{{^E0.meta}}empty{{/E0.meta}}", "empty"},
	{"inverted over truthy", "[{{^input.flag}}x{{/input.flag}}]", "[]"},
	{"index and first", "{{#input.tags}}{{@index}}{{#@first}}*{{/@first}}{{.}} {{/input.tags}}", "0*a 1b 2c "},
	{"last as section", "{{#input.tags}}{{.}}{{#@last}}.{{/@last}}{{/input.tags}}", "abc."},
	{"loop variables as values", "{{#input.tags}}{{@first}}/{{@last}} {{/input.tags}}", "true/false false/false false/true "},
	{"single item list", "{{#E2}}{{.}}{{^@last}},{{/@last}}{{/E2}}", "p,q"},
	{"item shadows root", "{{#E0.values}}{{title}}|{{/E0.values}}", "One|Two|Three|Four|"},
	{"bare key falls back to root", "{{#input.tags}}{{title}}{{/input.tags}}", "root title" + "root title" + "root title"},
	{"bare key missing on an item is empty", "{{#E0.values}}[{{owner}}]{{/E0.values}}", `[][{"name":"Ann"}][][]`},
	{"bare key missing everywhere is empty", "{{#E0.values}}<{{nosuch}}>{{/E0.values}}", "<><><><>"},
	{"bare section missing on item is falsy", "{{#E0.values}}{{#labels}}{{.}}{{/labels}}{{/E0.values}}", "xy"},
	{"nested section falls back to outer item", "{{#E0.values}}{{#labels}}{{title}}:{{.}} {{/labels}}{{/E0.values}}", "Three:x Three:y "},
	{"dotted path inside section is root-anchored", "{{#input.tags}}{{input.team}}{{/input.tags}}", "CoreCoreCore"},
	{"nested lists", "{{#E0.grid}}[{{#.}}{{.}}{{^@last}},{{/@last}}{{/.}}]{{/E0.grid}}", "[1,2][][3]"},
	{"inner loop variables are the inner list's", "{{#E0.grid}}{{#.}}{{@index}}{{/.}}|{{/E0.grid}}", "01||0|"},
	{"object section is transparent to loop variables", "{{#E0.values}}{{#owner}}{{@index}}{{/owner}}{{/E0.values}}", "1"},
	{"loop variables without a list", "{{#input.flag}}{{@index}}{{@first}}{{@last}}{{/input.flag}}", "0truetrue"},
	{"loop variables outside sections", "{{@index}} {{@first}} {{@last}}", "0 true true"},
	{"inverted section keeps the item", "{{#E0.values}}{{^owner}}{{title}} {{/owner}}{{/E0.values}}", "One Three Four "},
	{"bare key in top-level inverted section reads roots", "{{^E1.values}}{{title}}{{/E1.values}}", "root title"},
	{"whitespace inside section tags", "{{# input.tags }}{{ . }}{{/ input.tags }}", "abc"},
	{"same path nested", "{{#E2}}{{#E2}}{{.}}{{/E2}}|{{/E2}}", "pq|pq|"},
	{"current item as json", "{{#E0.values}}{{#@first}}{{.}}{{/@first}}{{/E0.values}}", `{"id":1,"state":"open","title":"One"}`},
	{"dot outside sections reads nothing", "[{{.}}]", "[]"},
	{"dot section outside sections is falsy", "[{{#.}}x{{/.}}{{^.}}none{{/.}}]", "[none]"},
	{"dot under a loop variable section outside lists", "[{{#@first}}{{.}}{{/@first}}]", "[]"},
	{"every integer type", "{{#E0.ints}}{{.}} {{/E0.ints}}", "-8 -16 -32 1 16 32 64 "},
	{"opaque values serialize through encoding/json", "{{E0.strs}}!", `["opaque"]!`},
	{"opaque values are truthy and are not iterated", "{{#E0.strs}}{{.}}{{/E0.strs}}", `["opaque"]`},
	{"multiline", "Issues:\n{{#E0.values}}- {{title}}\n{{/E0.values}}", "Issues:\n- One\n- Two\n- Three\n- Four\n"},
}

func TestRenderText(t *testing.T) {
	s := testScope()
	for _, tt := range textTests {
		t.Run(tt.name, func(t *testing.T) {
			tpl, err := Parse(tt.src)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.src, err)
			}
			got, err := tpl.RenderString(s)
			if err != nil {
				t.Fatalf("RenderString(%q): %v", tt.src, err)
			}
			if got != tt.want {
				t.Errorf("RenderString(%q) = %q, want %q", tt.src, got, tt.want)
			}
			if tpl.IsSplice() {
				return
			}
			// Render of a non-splice template is the same text.
			v, err := tpl.Render(s)
			if err != nil {
				t.Fatalf("Render(%q): %v", tt.src, err)
			}
			if v != any(tt.want) {
				t.Errorf("Render(%q) = %#v, want %q", tt.src, v, tt.want)
			}
		})
	}
}

var spliceTextTests = []struct {
	name string
	src  string
	want string
}{
	{"string", "{{input.team}}", "Core"},
	{"number", "{{input.max}}", "50"},
	{"float", "{{E0.whole}}", "3"},
	{"bool", "{{input.flag}}", "true"},
	{"null", "{{input.none}}", "null"},
	{"list", "{{input.tags}}", `["a","b","c"]`},
	{"object", "{{E0.values.0}}", `{"id":1,"state":"open","title":"One"}`},
	{"length", "{{E0.values.length}}", "4"},
	{"loop variable alone", "{{@index}}", "0"},
	{"dot alone", "{{.}}", ""},
}

func TestRenderStringOfSplice(t *testing.T) {
	s := testScope()
	for _, tt := range spliceTextTests {
		t.Run(tt.name, func(t *testing.T) {
			tpl, err := Parse(tt.src)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.src, err)
			}
			got, err := tpl.RenderString(s)
			if err != nil {
				t.Fatalf("RenderString(%q): %v", tt.src, err)
			}
			if got != tt.want {
				t.Errorf("RenderString(%q) = %q, want %q", tt.src, got, tt.want)
			}
		})
	}
}

// testRoots are the roots of testScope, sorted.
var testRoots = []string{"E0", "E1", "E2", "input", "title"}

var renderErrorTests = []struct {
	name string
	src  string
	want error
	msg  string
}{
	{
		"missing step", "{{E7.x}}",
		&MissingStepError{Root: "E7", Path: "E7.x", Available: testRoots},
		"missing step 'E7' in 'E7.x' (available: E0, E1, E2, input, title)",
	},
	{
		"missing bare root", "value: {{E7}}",
		&MissingStepError{Root: "E7", Path: "E7", Available: testRoots},
		"missing step 'E7' (available: E0, E1, E2, input, title)",
	},
	{
		"missing step inside a section", "{{#input.tags}}{{E9.summary}}{{/input.tags}}",
		&MissingStepError{Root: "E9", Path: "E9.summary", Available: testRoots},
		"missing step 'E9' in 'E9.summary' (available: E0, E1, E2, input, title)",
	},
	{
		"bad key lists available keys", "{{E0.values.0.idd}}",
		&BadPathError{Path: "E0.values.0.idd", At: "E0.values.0", Available: []string{"id", "state", "title"}},
		"bad path 'E0.values.0.idd' (available: id, state, title)",
	},
	{
		"length on an object without that key", "{{E0.values.1.owner.length}}",
		&BadPathError{Path: "E0.values.1.owner.length", At: "E0.values.1.owner", Available: []string{"name"}},
		"bad path 'E0.values.1.owner.length' (available: name)",
	},
	{
		"segment on a number", "x {{E0.count.x}}",
		&BadPathError{Path: "E0.count.x", At: "E0.count", Reason: "'E0.count' is a number, not an object or list"},
		"bad path 'E0.count.x': 'E0.count' is a number, not an object or list",
	},
	{
		"segment on a string", "{{E0.name.first}}",
		&BadPathError{Path: "E0.name.first", At: "E0.name", Reason: "'E0.name' is a string, not an object or list"},
		"bad path 'E0.name.first': 'E0.name' is a string, not an object or list",
	},
	{
		"index on a string", "{{E0.name.0}}",
		&BadPathError{Path: "E0.name.0", At: "E0.name", Reason: "'E0.name' is a string, not an object or list"},
		"bad path 'E0.name.0': 'E0.name' is a string, not an object or list",
	},
	{
		"segment on a boolean", "{{E0.yes.no}}",
		&BadPathError{Path: "E0.yes.no", At: "E0.yes", Reason: "'E0.yes' is a boolean, not an object or list"},
		"bad path 'E0.yes.no': 'E0.yes' is a boolean, not an object or list",
	},
	{
		"walking past length", "{{E0.values.length.x}}",
		&BadPathError{Path: "E0.values.length.x", At: "E0.values.length", Reason: "'E0.values.length' is a number, not an object or list"},
		"bad path 'E0.values.length.x': 'E0.values.length' is a number, not an object or list",
	},
	{
		"key on a list", "{{E0.values.x}}",
		&BadPathError{Path: "E0.values.x", At: "E0.values", Reason: "'E0.values' is a list; use a numeric index or 'length'"},
		"bad path 'E0.values.x': 'E0.values' is a list; use a numeric index or 'length'",
	},
	{
		"negative index on a list", "{{E2.-1}}",
		&BadPathError{Path: "E2.-1", At: "E2", Reason: "'E2' is a list; use a numeric index or 'length'"},
		"bad path 'E2.-1': 'E2' is a list; use a numeric index or 'length'",
	},
	{
		"empty list", "{{E1.values.0.id}}",
		&EmptyDataError{Path: "E1.values.0.id", At: "E1.values", Reason: "'E1.values' is an empty list"},
		"empty data at 'E1.values.0.id': 'E1.values' is an empty list",
	},
	{
		"index out of range", "{{E0.values.4.id}}",
		&EmptyDataError{Path: "E0.values.4.id", At: "E0.values", Reason: "index 4 is out of range for 'E0.values' (length 4)"},
		"empty data at 'E0.values.4.id': index 4 is out of range for 'E0.values' (length 4)",
	},
	{
		"huge index", "{{E2.99999999999999999999999}}",
		&EmptyDataError{Path: "E2.99999999999999999999999", At: "E2", Reason: "index 99999999999999999999999 is out of range for 'E2' (length 2)"},
		"empty data at 'E2.99999999999999999999999': index 99999999999999999999999 is out of range for 'E2' (length 2)",
	},
	{
		"walking into null", "{{E0.x.y}}",
		&EmptyDataError{Path: "E0.x.y", At: "E0.x", Reason: "'E0.x' is null"},
		"empty data at 'E0.x.y': 'E0.x' is null",
	},
	{
		"walking into an empty object", "{{E0.meta.id}}",
		&EmptyDataError{Path: "E0.meta.id", At: "E0.meta", Reason: "'E0.meta' is an empty object"},
		"empty data at 'E0.meta.id': 'E0.meta' is an empty object",
	},
	{
		"segment on an opaque value", "{{E0.strs.0}}",
		&BadPathError{Path: "E0.strs.0", At: "E0.strs", Reason: "'E0.strs' is a []string value, not an object or list"},
		"bad path 'E0.strs.0': 'E0.strs' is a []string value, not an object or list",
	},
	{
		"error inside an inverted section body", "{{^E1.values}}{{E7.x}}{{/E1.values}}",
		&MissingStepError{Root: "E7", Path: "E7.x", Available: testRoots},
		"missing step 'E7' in 'E7.x' (available: E0, E1, E2, input, title)",
	},
	{
		"error inside a section body", "{{#E0.values}}{{E0.values.0.nope}}{{/E0.values}}",
		&BadPathError{Path: "E0.values.0.nope", At: "E0.values.0", Available: []string{"id", "state", "title"}},
		"bad path 'E0.values.0.nope' (available: id, state, title)",
	},
}

func TestRenderErrors(t *testing.T) {
	s := testScope()
	for _, tt := range renderErrorTests {
		t.Run(tt.name, func(t *testing.T) {
			tpl, err := Parse(tt.src)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.src, err)
			}
			for _, render := range []func(Scope) (any, error){
				tpl.Render,
				func(s Scope) (any, error) { return tpl.RenderString(s) },
			} {
				_, err := render(s)
				if err == nil {
					t.Fatalf("render %q: no error, want %q", tt.src, tt.msg)
				}
				if err.Error() != tt.msg {
					t.Errorf("render %q: error %q, want %q", tt.src, err.Error(), tt.msg)
				}
				// errors.As must find the typed error even through wrapping.
				wrapped := errors.Join(errors.New("step E3"), err)
				target := reflect.New(reflect.TypeOf(tt.want))
				if !errors.As(wrapped, target.Interface()) {
					t.Fatalf("render %q: errors.As cannot find %T in %T", tt.src, tt.want, err)
				}
				if got := target.Elem().Interface(); !reflect.DeepEqual(got, tt.want) {
					t.Errorf("render %q: error %#v, want %#v", tt.src, got, tt.want)
				}
			}
		})
	}
}

func TestRenderUnwritable(t *testing.T) {
	s := testScope()
	tests := []struct {
		name string
		src  string
		msg  string
	}{
		{"NaN in text", "v={{E0.nan}}", "cannot write 'E0.nan' as text: NaN has no JSON form"},
		{"NaN spliced as text", "{{E0.nan}}", "cannot write 'E0.nan' as text: NaN has no JSON form"},
		{"unencodable value", "v={{input.ch}}", "cannot write 'input.ch' as text: json: unsupported type: chan int"},
	}
	s["input"].(map[string]any)["ch"] = make(chan int)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tpl, err := Parse(tt.src)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.src, err)
			}
			_, err = tpl.RenderString(s)
			if err == nil || err.Error() != tt.msg {
				t.Errorf("RenderString(%q) error = %v, want %q", tt.src, err, tt.msg)
			}
		})
	}
	// A splice hands the value over as is: only text needs a JSON form.
	tpl, err := Parse("{{E0.nan}}")
	if err != nil {
		t.Fatal(err)
	}
	if v, err := tpl.Render(s); err != nil || !math.IsNaN(v.(float64)) {
		t.Errorf("Render({{E0.nan}}) = %v, %v; want NaN", v, err)
	}
}

// TestFloatTextMatchesJSON checks that the hand-written float formatting is
// byte for byte what encoding/json prints.
func TestFloatTextMatchesJSON(t *testing.T) {
	floats := []float64{0, math.Copysign(0, -1), 1, -1, 3, 1.5, 0.1, 1e-6, 9.99e-7, 1e-7, 123456789, 1e20, 1e21, -1e21, 1.7976931348623157e308, 5e-324, 2.5e-10, 100.25, 1e15, 12345678.125}
	for _, f := range floats {
		for _, v := range []any{f, float32(f)} {
			want, err := json.Marshal(v)
			if err != nil {
				continue // a float32 overflow; encoding/json refuses it too
			}
			var b strings.Builder
			if err := write(&b, v, &path{segs: []string{"f"}}); err != nil {
				t.Fatalf("write(%v): %v", v, err)
			}
			if b.String() != string(want) {
				t.Errorf("write(%T %v) = %s, want %s", v, v, b.String(), want)
			}
		}
	}
}

func TestMapScopeRoots(t *testing.T) {
	got := MapScope{"b": 1, "a": 2, "input": nil}.Roots()
	if want := []string{"a", "b", "input"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Roots() = %v, want %v", got, want)
	}
}

// unsortedScope returns its roots out of order, to show that the error
// sorts them rather than trusting the scope.
type unsortedScope struct{}

func (unsortedScope) Lookup(string) (any, bool) { return nil, false }
func (unsortedScope) Roots() []string           { return []string{"input", "E1", "E0"} }

func TestMissingStepSortsRoots(t *testing.T) {
	tpl, err := Parse("{{E7.x}}")
	if err != nil {
		t.Fatal(err)
	}
	_, err = tpl.Render(unsortedScope{})
	if want := "missing step 'E7' in 'E7.x' (available: E0, E1, input)"; err == nil || err.Error() != want {
		t.Errorf("Render = %v, want %q", err, want)
	}
	empty := MapScope{}
	_, err = tpl.Render(empty)
	if want := "missing step 'E7' in 'E7.x' (available: none)"; err == nil || err.Error() != want {
		t.Errorf("Render = %v, want %q", err, want)
	}
}

func TestRenderConcurrently(t *testing.T) {
	tpl, err := Parse("{{#E0.values}}{{title}}{{^@last}}, {{/@last}}{{/E0.values}} / {{input.team}}")
	if err != nil {
		t.Fatal(err)
	}
	const want = "One, Two, Three, Four / Core"
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for range 16 {
		wg.Go(func() {
			s := testScope()
			for range 200 {
				got, err := tpl.RenderString(s)
				if err != nil || got != want {
					errs <- got
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for got := range errs {
		t.Errorf("concurrent render = %q, want %q", got, want)
	}
}

func TestSpliceDoesNotAllocate(t *testing.T) {
	s := testScope()
	tests := []struct {
		name string
		src  string
	}{
		{"deep path", "{{E0.values.3.id}}"},
		{"bare root", "{{E2}}"},
		{"literal", "plain"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tpl, err := Parse(tt.src)
			if err != nil {
				t.Fatal(err)
			}
			allocs := testing.AllocsPerRun(100, func() {
				if _, err := tpl.Render(s); err != nil {
					t.Fatal(err)
				}
			})
			if allocs != 0 {
				t.Errorf("Render(%q) allocates %v times, want 0", tt.src, allocs)
			}
		})
	}
}

// TestRenderLimit checks that a Limited scope bounds the text a render
// builds, counting literal text, strings and serialized values alike, and
// that a render at the limit is whole.
func TestRenderLimit(t *testing.T) {
	scope := LimitedScope{Scope: MapScope{"s": "abcd", "list": []any{"ab", "cd"}}, Limit: 8}
	tests := []struct {
		src, want string
		tooLong   bool
	}{
		{src: "{{s}}{{s}}", want: "abcdabcd"},
		{src: "{{s}}{{s}}!", tooLong: true},
		{src: "12345{{s}}", tooLong: true},
		{src: "{{#list}}{{.}}{{/list}}{{s}}{{s}}", tooLong: true},
		{src: "x{{list}}", tooLong: true},
		{src: "{{list}}", want: `["ab","cd"]`}, // a typed splice builds no text
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			tpl, err := Parse(tt.src)
			if err != nil {
				t.Fatal(err)
			}
			got, err := tpl.Render(scope)
			var tooLong *TooLongError
			if tt.tooLong != errors.As(err, &tooLong) || tt.tooLong && err.Error() != "the rendered text passed 8 bytes ([limits] value_bytes)" {
				t.Fatalf("render %q, error %v; want too long: %v", got, err, tt.tooLong)
			}
			if !tt.tooLong {
				if s, ok := got.(string); ok && s != tt.want || !ok && fmt.Sprint(got) != "[ab cd]" {
					t.Errorf("render %#v, want %s", got, tt.want)
				}
			}
		})
	}
}
