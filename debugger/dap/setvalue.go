package dap

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	godap "github.com/google/go-dap"

	"github.com/stepwise-dev/stepwise/engine"
)

// The template paths of the stop's own values, the only ones an editor
// sets: what is about to be used there (the result, reply, error or
// answer) and a tool call's arguments.
const (
	outputPath = "stop.output"
	inputPath  = "stop.input"
)

func (s *Server) onSetVariable(r *godap.SetVariableRequest) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.values.get(r.Arguments.VariablesReference)
	if !ok {
		s.sendError(r.Seq, r.Command, fmt.Errorf("no variables %d: the run has moved on since; they are read at the stop", r.Arguments.VariablesReference))
		return
	}
	value, err := s.setValue(childPath(n.path, r.Arguments.Name), r.Arguments.Value)
	if err != nil {
		s.sendError(r.Seq, r.Command, err)
		return
	}
	ref, named, indexed := s.values.add(value, childPath(n.path, r.Arguments.Name))
	resp := &godap.SetVariableResponse{Body: godap.SetVariableResponseBody{Value: summarize(value), Type: typeOf(value),
		VariablesReference: ref, NamedVariables: named, IndexedVariables: indexed}}
	s.send(reply(&r.Request, resp, &resp.Response))
	s.invalidated()
}

func (s *Server) onSetExpression(r *godap.SetExpressionRequest) {
	s.mu.Lock()
	defer s.mu.Unlock()
	expr := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(r.Arguments.Expression), "{{"), "}}"))
	value, err := s.setValue(expr, r.Arguments.Value)
	if err != nil {
		s.sendError(r.Seq, r.Command, err)
		return
	}
	ref, named, indexed := s.values.add(value, expr)
	resp := &godap.SetExpressionResponse{Body: godap.SetExpressionResponseBody{Value: summarize(value), Type: typeOf(value),
		VariablesReference: ref, NamedVariables: named, IndexedVariables: indexed}}
	s.send(reply(&r.Request, resp, &resp.Response))
	s.invalidated()
}

// setValue sets the value at template path p of the stop to text (JSON):
// under stop.output it is the stop's value decision (an inject before a
// step or call, a replace of a reply, result or error, an answer at an
// ask), under stop.input an edit of a tool call's arguments. The session
// checks it against the schema that applies there, and the run stays
// held; the next movement carries it out. It returns the value set. It
// is called with mu held.
func (s *Server) setValue(p, text string) (any, error) {
	if err := s.held(); err != nil {
		return nil, err
	}
	var value any
	if err := json.Unmarshal([]byte(text), &value); err != nil {
		return nil, fmt.Errorf("%s: the value %s is not JSON (%v); a string goes in double quotes", p, text, err)
	}
	snap := s.last.Stop
	var root string
	var base any
	var action engine.Action
	switch {
	case p == outputPath || strings.HasPrefix(p, outputPath+"."):
		root, base, action = outputPath, snap.Output, snap.Kind.ValueAction()
	case p == inputPath || strings.HasPrefix(p, inputPath+"."):
		root, base, action = inputPath, snap.Input, engine.Edit
	default:
		what := p
		if what == "" {
			what = "this value (it has no template path)"
		}
		return nil, fmt.Errorf("%s cannot be set: only the stop's own values can, %s (the result, reply, error or answer about to be used) and %s (a tool call's arguments); the scope's are what earlier steps made", what, outputPath, inputPath)
	}
	whole := value
	if keys := strings.TrimPrefix(strings.TrimPrefix(p, root), "."); keys != "" {
		var err error
		if whole, err = setAt(plainCopy(base), strings.Split(keys, "."), value); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
	}
	st, err := s.session.Set(engine.Decision{Action: action, Value: whole})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	s.last = st
	s.reread()
	return value, nil
}

// plainCopy is a copy of a JSON value the engine holds, which a set must
// not change in place: the engine uses it when no decision replaces it.
func plainCopy(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return nil
	}
	return out
}

// setAt returns v with the value at keys (object keys, array indices) set
// to value.
func setAt(v any, keys []string, value any) (any, error) {
	if len(keys) == 0 {
		return value, nil
	}
	k := keys[0]
	switch c := v.(type) {
	case map[string]any:
		child, err := setAt(c[k], keys[1:], value)
		if err != nil {
			return nil, err
		}
		c[k] = child
		return c, nil
	case []any:
		i, err := strconv.Atoi(k)
		if err != nil || i < 0 || i >= len(c) {
			return nil, fmt.Errorf("no item %s in an array of %d", k, len(c))
		}
		child, err := setAt(c[i], keys[1:], value)
		if err != nil {
			return nil, err
		}
		c[i] = child
		return c, nil
	case nil:
		if len(keys) == 1 {
			return map[string]any{k: value}, nil
		}
		return nil, fmt.Errorf("no value at %s to set a part of", k)
	}
	return nil, fmt.Errorf("%s is inside a %s, which has no parts to set", k, typeOf(v))
}

// invalidated tells an editor that asked for it that the stop's values
// changed, so that it reads them again.
func (s *Server) invalidated() {
	if !s.client.SupportsInvalidatedEvent {
		return
	}
	s.send(&godap.InvalidatedEvent{Event: event("invalidated"), Body: godap.InvalidatedEventBody{Areas: []godap.InvalidatedAreas{"variables"}}})
}
