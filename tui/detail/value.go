package detail

import (
	"strconv"
	"strings"

	"github.com/stepwise-dev/stepwise/plans"
)

// value writes a value as YAML-like lines at indent: a mapping as key: value
// lines, a list as "- " items, a multi-line string as a | block. Strings are
// shown as written, their template tags highlighted.
func (b *builder) value(v *plans.Value, indent int) {
	pad := strings.Repeat(" ", indent)
	switch {
	case v == nil:
		return
	case v.Kind == plans.Map && len(v.Map()) > 0:
		for _, e := range v.Map() {
			b.entry(e.Key, e.Value, indent)
		}
	case v.Kind == plans.List && len(v.List()) > 0:
		for _, item := range v.List() {
			b.item(item, indent)
		}
	case v.Kind == plans.String && strings.Contains(v.String, "\n"):
		b.block(v, indent)
	default:
		b.add(b.inline(v), pad, pad+"  ")
	}
}

// entry writes "key: value", nesting mappings and lists below the key.
func (b *builder) entry(key string, v *plans.Value, indent int) {
	pad := strings.Repeat(" ", indent)
	k := seg{key + ":", b.t.Key}
	switch {
	case v == nil:
		b.add([]seg{k}, pad, pad)
	case (v.Kind == plans.Map && len(v.Map()) > 0) || (v.Kind == plans.List && len(v.List()) > 0):
		b.add([]seg{k}, pad, pad)
		b.value(v, indent+2)
	case v.Kind == plans.String && strings.Contains(v.String, "\n"):
		b.add([]seg{k, b.text(" |")}, pad, pad)
		b.block(v, indent+2)
	default:
		b.add(append([]seg{k, b.text(" ")}, b.inline(v)...), pad, pad+"  ")
	}
}

// item writes one list item: "- scalar", or "- " and a mapping whose first
// key shares the dash's line.
func (b *builder) item(v *plans.Value, indent int) {
	pad := strings.Repeat(" ", indent)
	dash := b.muted("- ")
	if v.Kind == plans.Map && len(v.Map()) > 0 {
		first := v.Map()[0]
		sub := &builder{t: b.t, width: b.width}
		sub.entry(first.Key, first.Value, indent+2)
		if len(sub.lines) > 0 {
			// The first entry was laid out two columns in; put the dash in
			// those two columns.
			sub.lines[0] = pad + dash.style.Render("- ") + strings.TrimPrefix(sub.lines[0], pad+"  ")
		}
		b.lines = append(b.lines, sub.lines...)
		for _, e := range v.Map()[1:] {
			b.entry(e.Key, e.Value, indent+2)
		}
		return
	}
	if v.Kind == plans.List && len(v.List()) > 0 {
		b.add([]seg{dash}, pad, pad)
		b.value(v, indent+2)
		return
	}
	b.add(append([]seg{dash}, b.inline(v)...), pad, pad+"  ")
}

// block writes a multi-line string's lines at indent.
func (b *builder) block(v *plans.Value, indent int) {
	pad := strings.Repeat(" ", indent)
	text := strings.TrimSuffix(strings.ReplaceAll(v.String, "\t", "    "), "\n")
	for _, line := range strings.Split(text, "\n") {
		b.add(templateSegs(line, b.t.Text, b.t.Template), pad, pad)
	}
}

// inline renders a value on one line, flow style: {a: 1, b: [x, y]}.
func (b *builder) inline(v *plans.Value) []seg {
	if v == nil {
		return []seg{{"null", b.t.Literal}}
	}
	switch v.Kind {
	case plans.Null:
		return []seg{{"null", b.t.Literal}}
	case plans.Bool:
		return []seg{{strconv.FormatBool(v.Bool), b.t.Literal}}
	case plans.Number:
		return []seg{{v.String, b.t.Literal}}
	case plans.String:
		return b.scalar(v.String)
	case plans.List:
		out := []seg{b.muted("[")}
		for i, x := range v.List() {
			if i > 0 {
				out = append(out, b.muted(", "))
			}
			out = append(out, b.inline(x)...)
		}
		return append(out, b.muted("]"))
	case plans.Map:
		out := []seg{b.muted("{")}
		for i, e := range v.Map() {
			if i > 0 {
				out = append(out, b.muted(", "))
			}
			out = append(out, seg{e.Key + ":", b.t.Key}, b.text(" "))
			out = append(out, b.inline(e.Value)...)
		}
		return append(out, b.muted("}"))
	}
	return nil
}

// scalar renders a string as YAML would need it written: plain when it
// reads back as the same string, double-quoted otherwise. Tags stay as
// written and highlighted either way.
func (b *builder) scalar(s string) []seg {
	s = strings.ReplaceAll(s, "\t", "    ")
	if !needsQuotes(s) {
		return templateSegs(s, b.t.Text, b.t.Template)
	}
	esc := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	out := []seg{b.text(`"`)}
	for _, sg := range templateSegs(s, b.t.Text, b.t.Template) {
		out = append(out, seg{esc.Replace(sg.text), sg.style})
	}
	return append(out, b.text(`"`))
}

// needsQuotes reports whether a plain YAML scalar would not read back as the
// string s.
func needsQuotes(s string) bool {
	if s == "" || strings.TrimSpace(s) != s {
		return true
	}
	switch strings.ToLower(s) {
	case "true", "false", "yes", "no", "on", "off", "null", "~":
		return true
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return true
	}
	if strings.ContainsAny(s[:1], "{}[]&*#?|-<>=!%@`'\",") {
		return true
	}
	return strings.Contains(s, ": ") || strings.Contains(s, " #") || strings.HasSuffix(s, ":") || strings.Contains(s, "\n")
}
