package plans

import (
	"slices"
	"strings"

	"github.com/stepwise-dev/stepwise/plans/suggest"
)

// declaredInputs is what a plan's input_schema says about the names
// {{input.<name>}} may read.
type declaredInputs struct {
	checked bool     // the schema declares its inputs in a way a name can be checked against
	closed  bool     // additionalProperties: false: a run can pass no other input
	names   []string // the declared properties, sorted
}

// openEndedKeywords are the schema keywords that admit inputs beyond those
// named under properties, or name them elsewhere: with any of them, which
// names a run may pass cannot be read off properties, so no name is
// checked.
var openEndedKeywords = []string{"patternProperties", "allOf", "anyOf", "oneOf", "$ref", "$dynamicRef", "if", "dependentSchemas", "unevaluatedProperties"}

// inputsOf reads the declared inputs of a plan. A plan without an
// input_schema, or with one that declares nothing and forbids nothing,
// declares nothing to check against: graph plans read inputs their schema
// never names, and keep validating.
func inputsOf(p *Plan) declaredInputs {
	s := p.InputSchema
	if s == nil || !s.compiles() {
		return declaredInputs{}
	}
	m, ok := s.Raw.(map[string]any)
	if !ok {
		return declaredInputs{}
	}
	for _, k := range openEndedKeywords {
		if _, ok := m[k]; ok {
			return declaredInputs{}
		}
	}
	props, _ := m["properties"].(map[string]any)
	d := declaredInputs{closed: m["additionalProperties"] == false}
	for name := range props {
		d.names = append(d.names, name)
	}
	slices.Sort(d.names)
	d.checked = d.closed || len(d.names) > 0
	return d
}

// inputRef checks a read of the plan's input against what its input_schema
// declares. Only the first name after input is checked: what lies below a
// declared input is the input's own business (its schema may be anything).
// A name the schema forbids (additionalProperties: false) is a problem,
// since no run can pass it; otherwise it is a note, since a run may pass an
// input the schema does not name.
func (c *checker) inputRef(path string, read string, pos func() Pos) {
	if !c.inputs.checked {
		return
	}
	rest, ok := strings.CutPrefix(read, "input.")
	if !ok {
		return
	}
	name, below, _ := strings.Cut(rest, ".")
	if slices.Contains(c.inputs.names, name) {
		return
	}
	hint := "; declare it under input_schema's properties (declared: " + strings.Join(c.inputs.names, ", ") + ")"
	switch s := suggest.Closest(name, c.inputs.names); {
	case s != "" && below != "":
		hint = "; did you mean input." + s + "." + below + "?"
	case s != "":
		hint = "; did you mean input." + s + "?"
	case len(c.inputs.names) == 0:
		hint = "; declare it under input_schema's properties (it declares none)"
	}
	if c.inputs.closed {
		c.r.problem(CodeUndeclaredInput, pos(), path, "reads %s, but input_schema does not declare '%s' and forbids other inputs (additionalProperties: false)%s", read, name, hint)
		return
	}
	c.r.note(CodeUndeclaredInput, pos(), path, "reads %s, which input_schema does not declare, so a run may pass it unchecked%s", read, hint)
}
