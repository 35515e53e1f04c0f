package debugger

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/chat"
	"github.com/stepwise-dev/stepwise/plans"
)

// replyFields are the fields of a model reply as data, the ones a value
// set in a reply's place may have: chat.Reply's, and the reasoning string
// older records wrote.
var replyFields = func() []string {
	out := []string{"reasoning"}
	t := reflect.TypeFor[chat.Reply]()
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}()

// checkReply refuses a value given in a model reply's place (at a round
// or a reply stop) that the run could not take: a reply as data
// ({"text": ..., "tool_calls": [...]}) with a field a reply has not or of
// the wrong type, or an answer (the reply's text as JSON, or a value
// given as the answer itself) off the agent's output_schema. The engine
// reads the value as its ReplyFrom does: a string is the reply's text, an
// object with none of text, tool_calls and reasoning is the answer.
func checkReply(st *engine.Stop, v any) error {
	var schema *plans.Schema
	if st.Step != nil {
		if a, ok := st.Step.Control.(*plans.AgentInput); ok {
			schema = a.OutputSchema
		}
	}
	answer := v
	switch x := v.(type) {
	case string:
		if json.Unmarshal([]byte(x), &answer) != nil {
			// Text that is no JSON answer goes to the model's repair, as
			// a model's own would.
			return nil
		}
	case map[string]any:
		_, text := x["text"]
		_, calls := x["tool_calls"]
		_, reasoning := x["reasoning"]
		if !text && !calls && !reasoning {
			break
		}
		reply, err := replyOf(x)
		if err != nil {
			return err
		}
		if len(reply.ToolCalls) > 0 || json.Unmarshal([]byte(reply.Text), &answer) != nil {
			return nil
		}
	}
	if problems := (expectation{schema: schema}).check(answer); problems != "" {
		return fmt.Errorf("the answer does not fit the agent's output_schema: %s", problems)
	}
	return nil
}

// replyOf reads a reply given as data, saying which field is wrong.
func replyOf(x map[string]any) (chat.Reply, error) {
	var reply chat.Reply
	for k := range x {
		if !slices.Contains(replyFields, k) {
			return reply, fmt.Errorf("a model reply has no field %s (its fields: %s); to give the answer itself, give it without text and tool_calls", k, strings.Join(replyFields, ", "))
		}
	}
	b, err := json.Marshal(x)
	if err == nil {
		err = json.Unmarshal(b, &reply)
	}
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		// chat.Reply reads itself through an inner type, plain, which the
		// field's name starts with.
		field := strings.TrimPrefix(typeErr.Field, "plain.")
		return reply, fmt.Errorf("a model reply's %s must be %s, not %s", field, jsonKind(typeErr.Type), typeErr.Value)
	}
	if err != nil {
		return reply, fmt.Errorf("not a model reply: %w", err)
	}
	return reply, nil
}

// jsonKind names the JSON a Go type is read from.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "a number"
}

// AbandonedAnswer is what a front end that shows the solver's answer where
// streamed text cannot be taken back (a terminal, a debug console) says
// when a Reset delta voids it: the text above is abandoned, why, and that
// the answer starts again.
func AbandonedAnswer(d chat.Delta) string {
	failed := "the attempt failed"
	if d.Failure != "" {
		failed += " (" + d.Failure + ")"
	}
	return "the solver's answer above is abandoned: " + failed + " and is retried; the answer starts again below"
}
