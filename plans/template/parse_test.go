package template

import (
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"testing"
)

var parseErrorTests = []struct {
	name   string
	src    string
	offset int
	msg    string
}{
	{"unclosed tag", "hi {{E0.x", 3, "unclosed tag '{{': add '}}' after the path"},
	{"unclosed tag at end", "hi {{", 3, "unclosed tag '{{': add '}}' after the path"},
	{"unclosed tag before another", "a {{E0.x {{E1.y}}", 2, "unclosed tag '{{': add '}}' after the path, before the next '{{'"},
	{"single closing brace", "{{E0.x}", 0, "unclosed tag '{{': add '}}' after the path"},
	{"empty tag", "x{{}}", 1, "empty tag '{{}}': put a path between the braces, e.g. {{input.name}}"},
	{"blank tag", "{{  \t }}", 0, "empty tag '{{}}': put a path between the braces, e.g. {{input.name}}"},
	{"comment", "a {{! note }}", 2, "comments ({{! … }}) are not supported: the template language is logic-less"},
	{"comment after space", "{{ !note}}", 0, "comments ({{! … }}) are not supported: the template language is logic-less"},
	{"partial", "{{> header}}", 0, "partials ({{> … }}) are not supported: the template language is logic-less; put shared text in a step"},
	{"parent", "{{<base}}{{/base}}", 0, "inheritance ({{< … }}, {{$ … }}) is not supported: the template language is logic-less"},
	{"block", "{{$title}}x{{/title}}", 0, "inheritance ({{< … }}, {{$ … }}) is not supported: the template language is logic-less"},
	{"triple mustache", "v={{{E0.x}}}", 2, "triple braces ({{{ … }}}) are not supported: values are never HTML-escaped, so write {{path}}"},
	{"ampersand", "{{&E0.x}}", 0, "'{{&' is not supported: values are never HTML-escaped, so write {{path}}"},
	{"delimiter change", "{{=<% %>=}}", 0, "delimiter changes ({{= … =}}) are not supported: tags are always {{ and }}"},
	{"close without opener", "ab{{/E0.x}}", 2, "'{{/E0.x}}' closes no open section: remove it, or open the section with {{#E0.x}}"},
	{"mismatched close", "{{#a}}x{{/b}}", 7, "'{{/b}}' does not match the open section 'a': close that section first with {{/a}}"},
	{"crossed sections", "{{#a}}{{#b}}{{/a}}{{/b}}", 12, "'{{/a}}' does not match the open section 'b': close that section first with {{/b}}"},
	{"unclosed section", "x {{#E1.values}}{{title}}", 2, "unclosed section 'E1.values': add {{/E1.values}}"},
	{"unclosed inner section", "{{#a}}{{^b}}{{/a}}", 12, "'{{/a}}' does not match the open section 'b': close that section first with {{/b}}"},
	{"unclosed inverted section", "{{#a}}{{/a}}{{^b}}", 12, "unclosed section 'b': add {{/b}}"},
	{"section without path", "{{#}}{{/}}", 0, "section tag '{{#}}' needs a path, e.g. {{#E0.values}}…{{/E0.values}}"},
	{"inverted without path", "{{^ }}", 0, "section tag '{{^}}' needs a path, e.g. {{^E0.values}}…{{/E0.values}}"},
	{"close without path", "{{#a}}{{/}}", 6, "closing tag '{{/}}' needs the path of the section it closes, e.g. {{/E0.values}}"},
	{"double dot", "{{a..b}}", 4, "empty segment in path 'a..b': separate keys with exactly one dot, e.g. E0.values.0"},
	{"leading dot", "{{ .a }}", 3, "empty segment in path '.a': separate keys with exactly one dot, e.g. E0.values.0"},
	{"trailing dot", "{{a.}}", 3, "empty segment in path 'a.': remove the trailing dot"},
	{"dot dot", "{{#x}}{{..}}{{/x}}", 8, "empty segment in path '..': separate keys with exactly one dot, e.g. E0.values.0"},
	{"space in path", "{{E0. x}}", 5, "space inside path 'E0. x': a tag holds one path, and the template language has no functions or arguments"},
	{"helper call", "{{upper input.name}}", 7, "space inside path 'upper input.name': a tag holds one path, and the template language has no functions or arguments"},
	{"space in section path", "{{# a b}}{{/a b}}", 5, "space inside path 'a b': a tag holds one path, and the template language has no functions or arguments"},
	{"bracket index", "{{E0.values[0]}}", 11, "unexpected character '[' in path 'E0.values[0]': index lists with a dot, e.g. E0.values.0"},
	{"filter", "{{E0.x|upper}}", 6, "unexpected character '|' in path 'E0.x|upper': filters are not supported: the template language is logic-less"},
	{"function", "{{len(E0.x)}}", 5, "unexpected character '(' in path 'len(E0.x)': functions are not supported: the template language is logic-less"},
	{"string literal", `{{"x"}}`, 2, `unexpected character '"' in path '"x"': literals are not supported: a tag holds one path`},
	{"brace inside tag", "{{a}b}}", 3, "unexpected character '}' in path 'a}b': a tag is one path between {{ and }}"},
	{"other punctuation", "{{a+b}}", 3, "unexpected character '+' in path 'a+b': path segments are letters, digits, '_', '-' and '$', separated by dots"},
	{"invalid utf8", "{{a\xffb}}", 3, "unexpected invalid UTF-8 byte in path 'a\xffb': path segments are letters, digits, '_', '-' and '$', separated by dots"},
	{"unknown loop variable", "{{#x}}{{@count}}{{/x}}", 8, "unknown loop variable '@count': use @index, @first or @last"},
	{"bare at sign", "{{#x}}{{@}}{{/x}}", 8, "unknown loop variable '@': use @index, @first or @last"},
	{"loop variable with fields", "{{#x}}{{@index.y}}{{/x}}", 8, "loop variable '@index' has no fields: write {{@index}} alone"},
	{"at sign inside path", "{{E0.@index}}", 5, "'@' in path 'E0.@index': loop variables (@index, @first, @last) stand alone in their tag"},
	{"error after good tags", "{{a}} and {{b}} and {{!c}}", 20, "comments ({{! … }}) are not supported: the template language is logic-less"},
	{"offset counts bytes", "é{{a..b}}", 6, "empty segment in path 'a..b': separate keys with exactly one dot, e.g. E0.values.0"},
}

func TestParseErrors(t *testing.T) {
	for _, tt := range parseErrorTests {
		t.Run(tt.name, func(t *testing.T) {
			tpl, err := Parse(tt.src)
			if err == nil {
				t.Fatalf("Parse(%q) = %v, want an error", tt.src, tpl)
			}
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse(%q) error %T is not a *SyntaxError", tt.src, err)
			}
			if se.Offset != tt.offset || se.Msg != tt.msg || err.Error() != tt.msg {
				t.Errorf("Parse(%q) = offset %d %q, want offset %d %q", tt.src, se.Offset, se.Msg, tt.offset, tt.msg)
			}
		})
	}
}

var parseShapeTests = []struct {
	name    string
	src     string
	literal bool
	splice  bool
}{
	{"empty", "", true, false},
	{"plain text", "just text", true, false},
	{"lone braces are text", "{ a } }} b {", true, false},
	{"json text", `{"a": 1}}`, true, false},
	{"splice", "{{E0.x}}", false, true},
	{"splice with inner spaces", "{{ E0.x }}", false, true},
	{"splice of a bare root", "{{input}}", false, true},
	{"splice with newlines inside", "{{\n\tE0.x\n}}", false, true},
	{"outer space is text", " {{E0.x}}", false, false},
	{"trailing text", "{{E0.x}}!", false, false},
	{"two tags", "{{a}}{{b}}", false, false},
	{"section only", "{{#a}}{{/a}}", false, false},
	{"inverted only", "{{^a}}x{{/a}}", false, false},
	{"brace before tag", "{ {{a}} }", false, false},
	{"brace after tag", "{{a}}}", false, false},
}

func TestParseShape(t *testing.T) {
	for _, tt := range parseShapeTests {
		t.Run(tt.name, func(t *testing.T) {
			tpl, err := Parse(tt.src)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.src, err)
			}
			if tpl.IsLiteral() != tt.literal || tpl.IsSplice() != tt.splice {
				t.Errorf("Parse(%q): literal %v splice %v, want %v %v", tt.src, tpl.IsLiteral(), tpl.IsSplice(), tt.literal, tt.splice)
			}
			if tpl.Source() != tt.src {
				t.Errorf("Source() = %q, want %q", tpl.Source(), tt.src)
			}
		})
	}
}

// TestParserMatchesParse parses every test source through one Parser, enough
// times that its blocks fill and new ones start, with a template of more
// tags than a block's quarter among them, and then, once every template is
// cut, holds each to what Parse makes of its source: the same error, refs
// and rendering. A template cut over its neighbour's lists would differ.
func TestParserMatchesParse(t *testing.T) {
	var sources []string
	for _, tt := range parseErrorTests {
		sources = append(sources, tt.src)
	}
	for _, tt := range parseShapeTests {
		sources = append(sources, tt.src)
	}
	for _, tt := range spliceTests {
		sources = append(sources, tt.src)
	}
	for _, tt := range textTests {
		sources = append(sources, tt.src)
	}
	for _, tt := range refTests {
		sources = append(sources, tt.src)
	}
	sources = append(sources, "plain text", strings.Repeat("{{input.team}} and {{E0.count}}, ", 300))
	var p Parser
	type parsed struct {
		src string
		tpl *Template
		err error
	}
	var all []parsed
	for range 20 {
		for _, src := range sources {
			tpl, err := p.Parse(src)
			all = append(all, parsed{src, tpl, err})
		}
	}
	s := testScope()
	for _, got := range all {
		want, wantErr := Parse(got.src)
		if fmt.Sprint(got.err) != fmt.Sprint(wantErr) {
			t.Fatalf("Parser.Parse(%q) error %v, Parse's %v", got.src, got.err, wantErr)
		}
		if wantErr != nil {
			continue
		}
		if got.tpl.Source() != got.src || got.tpl.IsLiteral() != want.IsLiteral() || got.tpl.IsSplice() != want.IsSplice() {
			t.Fatalf("Parser.Parse(%q) = source %q, literal %v, splice %v; Parse's literal %v, splice %v",
				got.src, got.tpl.Source(), got.tpl.IsLiteral(), got.tpl.IsSplice(), want.IsLiteral(), want.IsSplice())
		}
		if g, w := slices.Collect(seqOf(got.tpl.Refs)), slices.Collect(seqOf(want.Refs)); !slices.Equal(g, w) {
			t.Fatalf("Parser.Parse(%q) refs %+v, Parse's %+v", got.src, g, w)
		}
		gv, gerr := got.tpl.Render(s)
		wv, werr := want.Render(s)
		if fmt.Sprint(gv, gerr) != fmt.Sprint(wv, werr) {
			t.Fatalf("Parser.Parse(%q) renders %v, %v; Parse's %v, %v", got.src, gv, gerr, wv, werr)
		}
	}
}

// seqOf turns a Template's Refs method into an iter.Seq for slices.Collect.
func seqOf(refs func(func(Ref) bool)) iter.Seq[Ref] { return refs }
