package catalog

import (
	"encoding/json"
	"slices"
	"strings"

	"charm.land/lipgloss/v2"

	"github.com/stepwise-dev/stepwise/tui/common"
)

// info lays out the selected tool for a column width wide: its name and
// where it comes from, why it cannot run (when it cannot), its description,
// and its input and output schemas as tables of properties.
func (m Model) info(width int) []string {
	tool, ok := m.Selected()
	if !ok || width <= 0 {
		return nil
	}
	t := m.Theme
	b := &infoBuilder{width: width}
	b.add(t.Strong, tool.Name, "", "")
	about := sourceText(tool)
	if tool.ReadOnly != nil {
		if *tool.ReadOnly {
			about += " · read-only"
		} else {
			about += " · has side effects"
		}
	}
	b.add(t.Muted, about, "", "")
	if tool.File != "" {
		// A long path breaks after a slash rather than at the label.
		b.addBreaking(t.Muted, "file "+tool.File, "/", "     ")
	}
	if tool.Unusable != "" {
		b.add(t.Problem, "✗ cannot run here: "+tool.Unusable, "", "  ")
	}
	if d := strings.TrimSpace(tool.Description); d != "" {
		b.blank()
		b.add(t.Text, d, "", "")
	}

	b.blank()
	b.add(t.Heading, "Input", "", "")
	m.schema(b, tool.InputSchema, "takes no input")
	if tool.OutputSchema != nil || tool.OutputExample == nil {
		b.blank()
		b.add(t.Heading, "Output", "", "")
		m.schema(b, tool.OutputSchema, "")
	}
	if tool.OutputExample != nil {
		b.blank()
		b.add(t.Heading, "Output example", "", "")
		b.json(t.Text, tool.OutputExample)
	}
	return b.lines
}

// infoBuilder collects the detail's lines.
type infoBuilder struct {
	width int
	lines []string
}

// add wraps text to the width in one style, the first line after indent,
// the rest after hang.
func (b *infoBuilder) add(st lipgloss.Style, text, indent, hang string) {
	b.wrap(st, text, "", indent, hang)
}

// addBreaking is add for text that may also break after the characters of
// breakpoints.
func (b *infoBuilder) addBreaking(st lipgloss.Style, text, breakpoints, hang string) {
	b.wrap(st, text, breakpoints, "", hang)
}

func (b *infoBuilder) wrap(st lipgloss.Style, text, breakpoints, indent, hang string) {
	room := max(b.width-max(len(indent), len(hang)), 1)
	for i, l := range common.Wrap(text, room, breakpoints) {
		lead := hang
		if i == 0 {
			lead = indent
		}
		b.lines = append(b.lines, lead+st.Render(l))
	}
}

func (b *infoBuilder) blank() { b.lines = append(b.lines, "") }

// json writes a value as indented JSON.
func (b *infoBuilder) json(st lipgloss.Style, v any) {
	data, err := json.MarshalIndent(v, "  ", "  ")
	if err != nil {
		b.add(st, err.Error(), "  ", "  ")
		return
	}
	for _, l := range strings.Split(string(data), "\n") {
		b.lines = append(b.lines, "  "+st.Render(strings.TrimPrefix(l, "  ")))
	}
}

// schema writes a JSON Schema as its properties, required ones first: name,
// type and "required" on one line, the description under them. Nested
// objects (and the objects of arrays) list their properties under their
// own. A schema without properties is shown as JSON; an object without
// any says none.
func (m Model) schema(b *infoBuilder, raw any, empty string) {
	t := m.Theme
	if raw == nil {
		b.add(t.Muted, "not declared", "  ", "  ")
		return
	}
	props := properties(raw, 0)
	if len(props) > 0 {
		for _, p := range props {
			indent := strings.Repeat("  ", p.depth+1)
			line := indent + t.Strong.Render(p.name) + "  " + t.Key.Render(p.typ)
			if p.required {
				line += "  " + t.Problem.UnsetBold().Render("required")
			}
			b.lines = append(b.lines, line)
			if p.description != "" {
				b.add(t.Muted, p.description, indent+"    ", indent+"    ")
			}
		}
		return
	}
	if obj, _ := raw.(map[string]any); obj["type"] == "object" && empty != "" {
		if _, hasProps := obj["properties"]; hasProps || len(obj) == 1 {
			b.add(t.Muted, empty, "  ", "  ")
			return
		}
	}
	b.json(t.Text, raw)
}

// property is one line of a schema's table.
type property struct {
	depth       int
	name        string
	typ         string
	required    bool
	description string
}

// properties lists an object schema's properties depth first: the
// required ones in the order the schema requires them, then the rest by
// name (plain JSON keeps no order of its own).
func properties(raw any, depth int) []property {
	obj, _ := raw.(map[string]any)
	props, _ := obj["properties"].(map[string]any)
	if len(props) == 0 {
		return nil
	}
	var required []string
	if list, ok := obj["required"].([]any); ok {
		for _, r := range list {
			if name, ok := r.(string); ok {
				if _, declared := props[name]; declared && !slices.Contains(required, name) {
					required = append(required, name)
				}
			}
		}
	}
	var rest []string
	for name := range props {
		if !slices.Contains(required, name) {
			rest = append(rest, name)
		}
	}
	slices.Sort(rest)
	var out []property
	for _, name := range append(required, rest...) {
		sub, _ := props[name].(map[string]any)
		p := property{depth: depth, name: name, typ: typeOf(sub), required: slices.Contains(required, name)}
		if d, ok := sub["description"].(string); ok {
			p.description = strings.Join(strings.Fields(d), " ")
		}
		out = append(out, p)
		inner := any(sub)
		if items, ok := sub["items"]; ok {
			inner = items
		}
		out = append(out, properties(inner, depth+1)...)
	}
	return out
}

// typeOf describes a property schema's type in a few words.
func typeOf(s map[string]any) string {
	if e, ok := s["enum"].([]any); ok {
		opts := make([]string, len(e))
		for i, x := range e {
			opts[i] = scalarText(x)
		}
		return strings.Join(opts, "|")
	}
	if c, ok := s["const"]; ok {
		return "= " + scalarText(c)
	}
	switch typ := s["type"].(type) {
	case string:
		if items, ok := s["items"].(map[string]any); ok && typ == "array" {
			return "array of " + typeOf(items)
		}
		return typ
	case []any:
		opts := make([]string, len(typ))
		for i, x := range typ {
			opts[i] = scalarText(x)
		}
		return strings.Join(opts, "|")
	}
	switch {
	case s["properties"] != nil:
		return "object"
	case s["$ref"] != nil:
		return "ref " + scalarText(s["$ref"])
	case s["anyOf"] != nil || s["oneOf"] != nil:
		return "union"
	}
	return "any"
}

// scalarText is a JSON value as short text.
func scalarText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return "null"
	}
	data, err := json.Marshal(v)
	if err != nil {
		return "…"
	}
	return string(data)
}
