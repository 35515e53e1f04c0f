package plans

import (
	"slices"
	"strings"

	"github.com/stepwise-dev/stepwise/plans/suggest"
	"github.com/stepwise-dev/stepwise/plans/yamlpos"
)

var (
	gateFields   = []string{"value", "op", "to"}
	exitFields   = []string{"when", "infer", "model", "status", "message", "output"}
	decideFields = []string{"if", "infer", "model", "then", "else"}
	filterFields = []string{"over", "where", "infer", "model", "concurrency"}
	mapFields    = []string{"over", "do", "concurrency"}
	reduceFields = []string{"over", "do", "initial"}
)

// controlInputNames names the input of each control step for messages.
var controlInputNames = map[string]string{
	ControlExit: "the exit input", ControlDecide: "the decide input", ControlFilter: "the filter input",
	ControlMap: "the map input", ControlReduce: "the reduce input", ControlAgent: "the agent input", ControlAsk: "the ask input",
}

// control decodes the input of a control step into its typed form.
func (d *decoder) control(in *yamlpos.Node, s *Step, c container) any {
	what := controlInputNames[s.ToolName.Value]
	switch s.ToolName.Value {
	case ControlExit:
		o, ok := d.object(in, what, s.Path, exitFields)
		if !ok {
			return nil
		}
		x := &ExitInput{Condition: d.condition(&o, "when", false)}
		if o.require("status") {
			x.Status = o.str("status")
			if x.Status.Set && x.Status.Value != "success" && x.Status.Value != "error" {
				d.r.problem(CodeInvalidValue, x.Status.Pos, s.Path, "'status' must be success or error, not '%s'%s", x.Status.Value, suggest.DidYouMean(x.Status.Value, []string{"success", "error"}))
			}
		}
		x.Message = o.stringValue("message")
		x.Output = o.mapping("output")
		return x
	case ControlDecide:
		o, ok := d.object(in, what, s.Path, decideFields)
		if !ok {
			return nil
		}
		x := &DecideInput{Condition: d.condition(&o, "if", true)}
		if o.require("then") {
			x.Then = d.body(o.get("then"), s, "then")
		}
		if o.has("else") {
			x.Else = d.body(o.get("else"), s, "else")
		}
		return x
	case ControlFilter:
		o, ok := d.object(in, what, s.Path, filterFields)
		if !ok {
			return nil
		}
		x := &FilterInput{Condition: d.condition(&o, "where", true)}
		if o.require("over") {
			x.Over = o.value("over")
		}
		x.Concurrency = o.wholeNumber("concurrency")
		if x.Concurrency.Set && x.Gate != nil {
			d.r.note(CodeIgnoredField, x.Concurrency.Pos, s.Path, "'concurrency' is ignored with 'where': it bounds infer verdicts in flight, and a where gate makes none")
		}
		return x
	case ControlMap:
		o, ok := d.object(in, what, s.Path, mapFields)
		if !ok {
			return nil
		}
		x := &MapInput{}
		if o.require("over") {
			x.Over = o.value("over")
		}
		if o.require("do") {
			x.Do = d.body(o.get("do"), s, "do")
		}
		x.Concurrency = o.wholeNumber("concurrency")
		return x
	case ControlReduce:
		if in.Kind == yamlpos.MappingNode {
			content := in.Content()
			for i := 0; i+1 < len(content); i += 2 {
				if k := resolve(content[i]); k.Value == "concurrency" {
					d.r.problem(CodeUnknownField, d.pos(k), s.Path, "reduce has no 'concurrency': every item reads the accumulator the previous one produced, so a fold is sequential; map concurrently first, then reduce over its results")
				}
			}
		}
		o, ok := d.object(stripKey(in, "concurrency"), what, s.Path, reduceFields)
		if !ok {
			return nil
		}
		x := &ReduceInput{}
		if o.require("over") {
			x.Over = o.value("over")
		}
		if o.require("do") {
			x.Do = d.body(o.get("do"), s, "do")
		}
		x.Initial = o.value("initial")
		return x
	// agent and ask return nil pointers for an input that is not a mapping;
	// stored in Step.Control as they are, they would be typed nils that
	// every type switch over Control matches.
	case ControlAgent:
		if a := d.agent(in, s); a != nil {
			return a
		}
	case ControlAsk:
		if a := d.ask(in, s); a != nil {
			return a
		}
	}
	return nil
}

// condition decodes the gate of a control step: the logical gate under
// gateName, or infer, with an optional model. With required set exactly one
// of the two must be present; exit requires neither.
func (d *decoder) condition(o *object, gateName string, required bool) Condition {
	var c Condition
	hasGate, hasInfer := o.has(gateName), o.has("infer")
	switch {
	case hasGate && hasInfer:
		d.r.problem(CodeExclusiveFields, o.keyPos("infer"), o.path, "'%s' and 'infer' are mutually exclusive: a gate is a comparison or a question, not both", gateName)
	case required && !hasGate && !hasInfer:
		d.r.problem(CodeMissingField, o.d.pos(o.node), o.path, "%s needs exactly one of '%s' (a comparison) or 'infer' (a yes/no question for the judge role)", o.what, gateName)
	}
	if hasGate {
		c.Gate = d.gate(o.get(gateName), gateName, o.path)
	}
	if hasInfer {
		c.Infer = o.stringValue("infer")
	}
	if o.has("model") {
		c.Model = o.stringValue("model")
		if !hasInfer {
			d.r.note(CodeIgnoredField, o.keyPos("model"), o.path, "'model' is ignored without 'infer': it picks the model for the infer verdict")
		}
	}
	return c
}

// gateNames names each control step's gate for messages, by the field
// that holds it.
var gateNames = map[string]string{
	"when": "the 'when' gate ({value, op, to})", "if": "the 'if' gate ({value, op, to})", "where": "the 'where' gate ({value, op, to})",
}

// gate decodes {value, op, to}.
func (d *decoder) gate(n *yamlpos.Node, name, path string) *Gate {
	o, ok := d.object(n, gateNames[name], path, gateFields)
	if !ok {
		return nil
	}
	g := &Gate{Pos: d.pos(n)}
	if o.require("value") {
		g.Value = o.value("value")
	}
	if o.require("op") {
		g.Op = o.str("op")
	}
	op := g.Op.Value
	if g.Op.Set && !slices.Contains(GateOps, op) {
		d.r.problem(CodeInvalidValue, g.Op.Pos, path, "unknown op '%s'%s (ops: %s)", op, suggest.DidYouMean(op, GateOps), strings.Join(GateOps, ", "))
		return g
	}
	unary := GateOpTestsValueAlone(op)
	switch {
	case unary && o.has("to"):
		d.r.note(CodeIgnoredField, o.keyPos("to"), path, "'to' is ignored with op %s, which tests 'value' alone", op)
	case !unary && g.Op.Set:
		if o.require("to") {
			g.To = o.value("to")
		}
	}
	if op == "gt" || op == "lt" || op == "gte" || op == "lte" {
		for _, side := range []struct {
			name string
			v    *Value
		}{{"value", g.Value}, {"to", g.To}} {
			if v := side.v; v != nil && v.Template() == nil && v.Kind != Number {
				d.r.problem(CodeWrongType, v.Pos(), path, "op %s orders numbers, but '%s' is %s", op, side.name, v.Kind)
			}
		}
	}
	return g
}
