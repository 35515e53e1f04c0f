package form

import (
	"fmt"
	"testing"

	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/tui/common"
)

// TestFill fills a form with the inputs of a last run: the named fields
// take them, the others keep their defaults, and the form gives them back.
func TestFill(t *testing.T) {
	p, r := plans.Load("p.yaml", []byte(`identifier: p
name: P
description: d
input_schema:
  type: object
  properties:
    topic: { type: string, default: bugs }
    limit: { type: integer, default: 3 }
    urgent: { type: boolean }
steps:
  - id: E1
    tool_name: builtin__reshape
    input: { shape: { t: "{{input.topic}}" } }
output: { t: "{{E1}}" }
`), plans.Stepwise)
	if p == nil || !r.OK() {
		t.Fatalf("%v", r.Problems)
	}
	m := New(common.New(common.NewTheme(true, false), common.DefaultKeyMap()))
	m.SetSize(80, 20)
	m.Open("inputs", p.InputSchema)
	m.Fill(map[string]any{"limit": 7, "urgent": true, "gone": "x"})
	got := m.Inputs()
	if got["topic"] != "bugs" || got["urgent"] != true || fmt.Sprint(got["limit"]) != "7" || len(got) != 3 {
		t.Errorf("inputs %v", got)
	}
}
