package detail

import (
	"slices"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/tui/common"
)

// property is one line of a schema table.
type property struct {
	depth       int
	name        string
	typ         string
	required    bool
	description string
}

// schema writes an object schema as a table of its properties, in the order
// written: name, type, whether it is required, description. Nested objects'
// properties follow their parent, indented. A schema that is not a plain
// object is shown as written.
func (b *builder) schema(s *plans.Schema) {
	props := properties(s.Value, 0)
	if len(props) == 0 {
		b.value(s.Value, 2)
		return
	}
	const (
		indent  = 2
		reqText = "required"
	)
	nameW, typeW := 0, 0
	for _, p := range props {
		nameW = max(nameW, p.depth*2+ansi.StringWidth(p.name))
		typeW = max(typeW, ansi.StringWidth(p.typ))
	}
	nameW, typeW = min(nameW, 24), min(typeW, 40)
	descCol := indent + nameW + 2 + typeW + 2 + len(reqText) + 2
	table := b.width-descCol >= 20

	for _, p := range props {
		name := strings.Repeat(" ", p.depth*2) + p.name
		req := ""
		if p.required {
			req = reqText
		}
		if table {
			line := strings.Repeat(" ", indent) +
				b.t.Strong.Render(common.Fit(name, nameW)) + "  " +
				b.t.Key.Render(common.Fit(p.typ, typeW)) + "  " +
				b.t.Problem.UnsetBold().Render(common.Fit(req, len(reqText))) + "  "
			if p.description == "" {
				b.lines = append(b.lines, strings.TrimRight(line, " "))
				continue
			}
			desc := wrap([]seg{b.muted(p.description)}, b.width-descCol, "", "")
			b.lines = append(b.lines, line+desc[0])
			for _, d := range desc[1:] {
				b.lines = append(b.lines, strings.Repeat(" ", descCol)+d)
			}
			continue
		}
		pad := strings.Repeat(" ", indent)
		segs := []seg{b.strong(name), b.text("  "), {p.typ, b.t.Key}}
		if p.required {
			segs = append(segs, b.text("  "), seg{reqText, b.t.Problem.UnsetBold()})
		}
		b.add(segs, pad, pad+"    ")
		if p.description != "" {
			deeper := pad + strings.Repeat(" ", p.depth*2+4)
			b.add([]seg{b.muted(p.description)}, deeper, deeper)
		}
	}
}

// properties lists an object schema's properties, depth first.
func properties(v *plans.Value, depth int) []property {
	props := v.Get("properties")
	if props == nil || props.Kind != plans.Map {
		return nil
	}
	var required []string
	if r := v.Get("required"); r != nil && r.Kind == plans.List {
		for _, x := range r.List() {
			if x.Kind == plans.String {
				required = append(required, x.String)
			}
		}
	}
	var out []property
	for _, e := range props.Map() {
		p := property{depth: depth, name: e.Key, typ: typeOf(e.Value), required: slices.Contains(required, e.Key)}
		if d := e.Value.Get("description"); d != nil && d.Kind == plans.String {
			p.description = d.String
		}
		out = append(out, p)
		// Nested objects, and the objects of an array, list their own
		// properties under them.
		inner := e.Value
		if items := e.Value.Get("items"); items != nil {
			inner = items
		}
		out = append(out, properties(inner, depth+1)...)
	}
	return out
}

// typeOf describes a property schema's type in a few words.
func typeOf(v *plans.Value) string {
	if v == nil || v.Kind != plans.Map {
		return "any"
	}
	if e := v.Get("enum"); e != nil && e.Kind == plans.List {
		var opts []string
		for _, x := range e.List() {
			opts = append(opts, scalarText(x))
		}
		return strings.Join(opts, "|")
	}
	if c := v.Get("const"); c != nil {
		return "= " + scalarText(c)
	}
	t := v.Get("type")
	switch {
	case t != nil && t.Kind == plans.String:
		if t.String == "array" {
			if items := v.Get("items"); items != nil {
				return "array of " + typeOf(items)
			}
		}
		return t.String
	case t != nil && t.Kind == plans.List:
		var ts []string
		for _, x := range t.List() {
			ts = append(ts, scalarText(x))
		}
		return strings.Join(ts, "|")
	case v.Get("properties") != nil:
		return "object"
	case v.Get("$ref") != nil:
		return "ref " + scalarText(v.Get("$ref"))
	case v.Get("anyOf") != nil || v.Get("oneOf") != nil:
		return "union"
	}
	return "any"
}

// scalarText is a scalar's text, for type descriptions.
func scalarText(v *plans.Value) string {
	switch v.Kind {
	case plans.String:
		return v.String
	case plans.Number:
		return v.String
	case plans.Bool:
		if v.Bool {
			return "true"
		}
		return "false"
	case plans.Null:
		return "null"
	}
	return "…"
}
