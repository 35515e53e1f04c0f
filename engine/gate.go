package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"

	"github.com/stepwise-dev/stepwise/engine/chat"
	"github.com/stepwise-dev/stepwise/engine/internal/jsonenc"
	"github.com/stepwise-dev/stepwise/engine/model"
	paths "github.com/stepwise-dev/stepwise/engine/path"
	"github.com/stepwise-dev/stepwise/plans"
)

// verdict is the outcome of a gate.
type verdict struct {
	verdict bool
	reason  string // the judge's, for an infer gate
}

// evalCondition evaluates a control step's gate in sc: a logical
// comparison, or an infer question put to the judge role (or the gate's
// model). path is the unit of work the gate belongs to: the step, or a
// filter's item.
func (c cursor) evalCondition(ctx context.Context, cond plans.Condition, path string, sc *scope) (verdict, error) {
	r := c.f.run
	var v verdict
	var err error
	if cond.Gate != nil {
		v.verdict, err = evalGate(cond.Gate, sc)
	} else {
		v, err = c.infer(ctx, cond, path, sc)
	}
	if err != nil {
		return verdict{}, err
	}
	r.emit(path, c.unit, EventGate, func() any { return GateEvaluated{Verdict: v.verdict, Reason: v.reason} })
	return v, nil
}

// infer asks the judge for a yes/no verdict on the gate's question.
func (c cursor) infer(ctx context.Context, cond plans.Condition, path string, sc *scope) (verdict, error) {
	question, err := renderString(cond.Infer, sc)
	if err != nil {
		return verdict{}, fmt.Errorf("infer: %w", err)
	}
	name := model.RoleJudge
	if cond.Model != nil {
		if name, err = renderString(cond.Model, sc); err != nil {
			return verdict{}, fmt.Errorf("model: %w", err)
		}
	}
	req := chat.Request{
		Step: path,
		Role: model.RoleJudge,
		Messages: []chat.Message{
			chat.TextMessage(chat.RoleSystem, judgePrompt),
			chat.TextMessage(chat.RoleUser, c.f.run.forModel(path, c.unit, "the judge's question", question)),
		},
	}
	if err := c.f.run.ledger.overBudget(); err != nil {
		return verdict{}, err
	}
	yes, reason, err := c.f.run.models.Verdict(ctx, name, req, c.modelHooks(ctx, path, paths.Judge(path), paths.KindJudge))
	if err != nil {
		return verdict{}, fmt.Errorf("infer verdict: %w", err)
	}
	return verdict{verdict: yes, reason: reason}, nil
}

const judgePrompt = "You judge one yes/no question about the data in the user's message. " +
	"Answer with verdict true for yes and false for no, and give a one-sentence reason grounded in the data."

// evalGate evaluates value op to.
func evalGate(g *plans.Gate, sc *scope) (bool, error) {
	value, err := g.Value.Render(sc)
	if err != nil {
		return false, fmt.Errorf("value: %w", err)
	}
	var to any
	if g.To != nil {
		if to, err = g.To.Render(sc); err != nil {
			return false, fmt.Errorf("to: %w", err)
		}
	}
	return Compare(g.Op.Value, value, to)
}

// Compare applies a gate operator (eq, ne, gt, lt, gte, lte, empty,
// not_empty, contains) to JSON values the way plan gates do: what a
// debugger's breakpoint conditions evaluate with too.
func Compare(op string, value, to any) (bool, error) {
	switch op {
	case "eq":
		return jsonEqual(value, to), nil
	case "ne":
		return !jsonEqual(value, to), nil
	case "gt", "lt", "gte", "lte":
		a, okA := toFloat(value)
		b, okB := toFloat(to)
		switch {
		case !okA:
			return false, fmt.Errorf("op %s orders numbers, but 'value' is %s (%s)", op, jsonKind(value), short(value))
		case !okB:
			return false, fmt.Errorf("op %s orders numbers, but 'to' is %s (%s)", op, jsonKind(to), short(to))
		}
		switch op {
		case "gt":
			return a > b, nil
		case "lt":
			return a < b, nil
		case "gte":
			return a >= b, nil
		}
		return a <= b, nil
	case "empty", "not_empty":
		empty, err := isEmpty(value)
		if err != nil {
			return false, fmt.Errorf("op %s: %w", op, err)
		}
		return empty == (op == "empty"), nil
	case "contains":
		switch v := value.(type) {
		case string:
			s, ok := to.(string)
			if !ok {
				s = JSONText(to)
			}
			return strings.Contains(v, s), nil
		case []any:
			for _, x := range v {
				if jsonEqual(x, to) {
					return true, nil
				}
			}
			return false, nil
		}
		return false, fmt.Errorf("op contains looks in a string or a list, but 'value' is %s (%s)", jsonKind(value), short(value))
	}
	return false, fmt.Errorf("unknown op '%s'", op)
}

func isEmpty(v any) (bool, error) {
	switch x := v.(type) {
	case nil:
		return true, nil
	case string:
		return x == "", nil
	case []any:
		return len(x) == 0, nil
	case map[string]any:
		return len(x) == 0, nil
	}
	return false, fmt.Errorf("tests lists, strings, objects and null, but 'value' is %s (%s)", jsonKind(v), short(v))
}

// toFloat reads any JSON number: json.Number from plan files, float64 from
// decoded tool results, Go integers from the engine's own results.
func toFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case float64:
		return n, true
	case float32:
		return float64(n), true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case int32:
		return float64(n), true
	case uint64:
		return float64(n), true
	case uint32:
		return float64(n), true
	}
	return 0, false
}

// jsonEqual compares two JSON values the way JSON means them: numbers by
// value whatever their Go type, lists element-wise, objects key-wise.
func jsonEqual(a, b any) bool {
	if fa, ok := toFloat(a); ok {
		fb, ok := toFloat(b)
		return ok && (fa == fb || math.IsNaN(fa) && math.IsNaN(fb))
	}
	switch x := a.(type) {
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !jsonEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !jsonEqual(xv, yv) {
				return false
			}
		}
		return true
	case nil, bool, string:
		return a == b
	}
	return reflect.DeepEqual(a, b)
}

// JSONText is a value as compact JSON, for messages and text contexts;
// <, > and & stay as they are, since nothing here is HTML. It is written
// by hand, for an agent writes every tool result it reads with it.
func JSONText(v any) string {
	enc := jsonenc.Encoder{LeaveHTML: true}
	b, err := enc.AppendValue(nil, v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// short is a value's JSON cut to a length fit for an error message.
func short(v any) string {
	s := JSONText(v)
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}
