package yamlpos

import (
	"cmp"
	"slices"
	"strings"

	goccylexer "github.com/goccy/go-yaml/lexer"
	goccytoken "github.com/goccy/go-yaml/token"
	"go.yaml.in/yaml/v3"
)

// yaml.v3 follows YAML 1.1 in one place that plan files trip over: inside a
// flow collection ({…} or […]) it ends an unquoted value at a '?' and reads
// the '?' as a key indicator, so `{type: boolean, description: Keep this
// one?}` does not parse, though YAML 1.2 and the parsers other tools use
// accept it. Rather than carry a second YAML parser, the loader quotes such
// values in a copy of the text, parses the copy with yaml.v3, and puts every
// column on those lines back where it is in the file as written.

// flowQuote is one value quoted in the copy: its line and rune column in
// the file as written, and how many runes the quoting added.
type flowQuote struct {
	line, col, added int
}

// quoteFlowQuestionMarks returns a copy of src in which every unquoted
// single-line value inside a flow collection that holds a '?' is written in
// double quotes, and the quotes it added in file order; ok is false when
// there is no such value, or the text is not as the lexer described it.
func quoteFlowQuestionMarks(src []byte) (fixed []byte, quotes []flowQuote, ok bool) {
	text := string(src)
	lines := strings.Split(text, "\n")
	depth := 0
	values := map[flowQuote]string{}
	for _, tk := range goccylexer.Tokenize(text) {
		switch tk.Type {
		case goccytoken.MappingStartType, goccytoken.SequenceStartType:
			depth++
		case goccytoken.MappingEndType, goccytoken.SequenceEndType:
			depth = max(0, depth-1)
		case goccytoken.StringType:
			if depth == 0 || !strings.Contains(tk.Value, "?") || tk.Position == nil {
				continue
			}
			q := flowQuote{line: tk.Position.Line, col: tk.Position.Column}
			if q.line < 1 || q.line > len(lines) || q.col < 1 || !strings.HasPrefix(SkipRunes(lines[q.line-1], q.col-1), tk.Value) {
				return nil, nil, false
			}
			q.added = 2 + strings.Count(tk.Value, `"`) + strings.Count(tk.Value, `\`)
			quotes = append(quotes, q)
			values[q] = tk.Value
		}
	}
	if len(quotes) == 0 {
		return nil, nil, false
	}
	slices.SortFunc(quotes, func(a, b flowQuote) int { return cmp.Or(cmp.Compare(a.line, b.line), cmp.Compare(a.col, b.col)) })
	escape := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	// Rewrite from the last value to the first, so the columns of the ones
	// still to do are not moved by the ones done.
	for i := len(quotes) - 1; i >= 0; i-- {
		q := quotes[i]
		runes := []rune(lines[q.line-1])
		value := values[q]
		end := q.col - 1 + len([]rune(value))
		lines[q.line-1] = string(runes[:q.col-1]) + `"` + escape.Replace(value) + `"` + string(runes[end:])
	}
	return []byte(strings.Join(lines, "\n")), quotes, true
}

// unquote puts the nodes parsed from the quoted copy back where they are in
// the file as written: the quoted values become plain again, and what
// follows them on their line moves left by the quotes added before it.
func unquote(n *yaml.Node, quotes []flowQuote) {
	if n == nil {
		return
	}
	added, shift := 0, 0 // runes added on n's line before the quote at hand, and n's shift
	for _, q := range quotes {
		if q.line != n.Line {
			continue
		}
		start := q.col + added // where the quoted value starts in the copy
		switch {
		case n.Column == start && n.Kind == yaml.ScalarNode && n.Style == yaml.DoubleQuotedStyle:
			n.Style = 0
			shift = added
		case n.Column > start:
			shift = added + q.added
		}
		added += q.added
	}
	n.Column -= shift
	for _, c := range n.Content {
		unquote(c, quotes)
	}
}

// SkipRunes returns s without its first n runes, or "" when it has fewer:
// the text from a 1-based column on, as col-1 runes skipped.
func SkipRunes(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[i:]
		}
		n--
	}
	return ""
}
