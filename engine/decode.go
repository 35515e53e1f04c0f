package engine

import (
	"encoding/json"
	"fmt"

	"github.com/stepwise-dev/stepwise/engine/chat"
)

// DecodePayload reads an event's payload back from the JSON it was written
// as (the run store's payload column, a line of --events jsonl) into the
// value the engine emitted for kind: a RunStarted for run_start, a
// chat.Delta for model_delta, and so on, by value as the engine emits
// them. A front end that shows an earlier run can then take the same
// switch over payload types it takes for a live one.
//
// What JSON does not carry comes back as JSON reads it: a value held in an
// any field (a step's input or result, a tool's arguments) as plain data
// (map[string]any, []any, float64, ...), and fields written without JSON
// (Exit.Output, chat.Request.Timeout) empty. An empty payload, which the
// store keeps as NULL, is the kind's zero value. An unknown kind is an
// error that names it.
func DecodePayload(kind EventKind, raw json.RawMessage) (any, error) {
	switch kind {
	case EventRunStart:
		return decodeAs[RunStarted](kind, raw)
	case EventRunEnd:
		return decodeAs[RunEnded](kind, raw)
	case EventStepStart:
		return decodeAs[StepStarted](kind, raw)
	case EventStepEnd:
		return decodeAs[StepEnded](kind, raw)
	case EventToolStart:
		return decodeAs[ToolStarted](kind, raw)
	case EventToolEnd:
		return decodeAs[ToolEnded](kind, raw)
	case EventModelCall:
		return decodeAs[ModelCalled](kind, raw)
	case EventModelDelta:
		return decodeAs[chat.Delta](kind, raw)
	case EventRepair:
		return decodeAs[Repairing](kind, raw)
	case EventGate:
		return decodeAs[GateEvaluated](kind, raw)
	case EventAsk:
		return decodeAs[Asked](kind, raw)
	case EventWarning:
		return decodeAs[Warning](kind, raw)
	case EventUsage:
		return decodeAs[UsageReport](kind, raw)
	case EventDecided:
		return decodeAs[Decided](kind, raw)
	case EventItems:
		return decodeAs[ItemsListed](kind, raw)
	case EventHeld:
		return decodeAs[Held](kind, raw)
	}
	return nil, fmt.Errorf("event kind %q is not one the engine emits", kind)
}

func decodeAs[T any](kind EventKind, raw json.RawMessage) (any, error) {
	var v T
	if len(raw) == 0 {
		return v, nil
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("%s payload: %w", kind, err)
	}
	return v, nil
}
