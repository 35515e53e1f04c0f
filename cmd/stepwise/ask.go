package main

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/plans"
)

// askField is one property of an ask step's answer schema, as the terminal
// prompt walks it.
type askField struct {
	name, label, typ string
	enum             []any
	required         bool
}

// askFields lists the answer schema's properties in the order written.
func askFields(s *plans.Schema) []askField {
	if s == nil || s.Value == nil {
		return nil
	}
	var required []string
	if req := s.Value.Get("required"); req != nil {
		for _, r := range req.List() {
			if r.Kind == plans.String {
				required = append(required, r.String)
			}
		}
	}
	var out []askField
	props := s.Value.Get("properties")
	if props == nil {
		return nil
	}
	for _, e := range props.Map() {
		f := askField{name: e.Key, label: e.Key, required: slices.Contains(required, e.Key)}
		if d := e.Value.Get("description"); d != nil && d.Kind == plans.String && d.String != "" {
			f.label = e.Key + " — " + d.String
		}
		if t := e.Value.Get("type"); t != nil && t.Kind == plans.String {
			f.typ = t.String
		}
		if en := e.Value.Get("enum"); en != nil {
			f.enum, _ = en.Literal().([]any)
		}
		out = append(out, f)
	}
	return out
}

// askOnTerminal puts the question on w and reads the answer field by field
// from lines. A blank line on a required field, or three answers that do
// not fit a field, decline the question.
func askOnTerminal(lines *bufio.Scanner, w io.Writer, path string, q *engine.Question) (map[string]any, bool) {
	fmt.Fprintf(w, "? %s [%s]\n  (blank cancels)\n", q.Prompt, path)
	answer := map[string]any{}
	for _, f := range askFields(q.Schema) {
		hint := ""
		switch {
		case len(f.enum) > 0:
			var opts []string
			for _, o := range f.enum {
				opts = append(opts, fmt.Sprint(o))
			}
			hint = " [" + strings.Join(opts, " | ") + "]"
		case f.typ == "boolean":
			hint = " [y/n]"
		}
		got := false
		for try := 0; try < 3 && !got; try++ {
			fmt.Fprintf(w, "  %s%s: ", f.label, hint)
			if !lines.Scan() {
				return nil, false
			}
			text := strings.TrimSpace(lines.Text())
			if text == "" {
				if f.required {
					return nil, false
				}
				got = true
				continue
			}
			v, err := coerceAnswer(f, text)
			if err != nil {
				fmt.Fprintf(w, "  %v\n", err)
				continue
			}
			answer[f.name], got = v, true
		}
		if !got {
			return nil, false
		}
	}
	return answer, true
}

// coerceAnswer reads a typed line as the field's type: numbers for integer
// and number fields, y/yes/true and n/no/false for booleans, enum values
// case-insensitively.
func coerceAnswer(f askField, text string) (any, error) {
	if len(f.enum) > 0 {
		for _, o := range f.enum {
			if strings.EqualFold(fmt.Sprint(o), text) {
				return o, nil
			}
		}
		return nil, fmt.Errorf("'%s' is not one of the choices", text)
	}
	switch f.typ {
	case "integer":
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("'%s' is not a whole number", text)
		}
		return n, nil
	case "number":
		n, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return nil, fmt.Errorf("'%s' is not a number", text)
		}
		return n, nil
	case "boolean":
		switch strings.ToLower(text) {
		case "y", "yes", "true":
			return true, nil
		case "n", "no", "false":
			return false, nil
		}
		return nil, fmt.Errorf("answer y or n, not '%s'", text)
	}
	return text, nil
}
