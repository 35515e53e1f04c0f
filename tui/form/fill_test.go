package form

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/tui/common"
	"github.com/stepwise-dev/stepwise/tui/common/commontest"
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

// TestPrefillIsSelected: a field holding the last run's value (or a
// default) shows it selected when it takes the focus, says where it came
// from, and the first character typed replaces it instead of appending;
// a movement key keeps it for editing.
func TestPrefillIsSelected(t *testing.T) {
	p, r := plans.Load("p.yaml", []byte(`identifier: p
name: P
description: d
input_schema:
  type: object
  properties:
    on_call: { type: string }
    topic: { type: string, default: bugs }
steps:
  - id: E1
    tool_name: builtin__reshape
    input: { shape: { t: "{{input.topic}}", o: "{{input.on_call}}" } }
output: { t: "{{E1}}" }
`), plans.Stepwise)
	if p == nil || !r.OK() {
		t.Fatalf("%v", r.Problems)
	}
	m := New(common.New(common.NewTheme(true, false), common.DefaultKeyMap()))
	m.SetSize(80, 20)
	focus := m.Open("inputs", p.InputSchema)
	m.Fill(map[string]any{"on_call": "Priya"})
	// What the focus starts (the cursor's blink) and what the terminal
	// says of itself are no keys: the value stays selected.
	for _, msg := range append(commontest.Messages(focus), tea.FocusMsg{}, tea.BackgroundColorMsg{}) {
		m.Update(msg)
	}
	if !strings.Contains(ansi.Strip(m.View()), "Priya  last run's value: typing replaces it") {
		t.Errorf("the prefilled value is not shown selected:\n%s", ansi.Strip(m.View()))
	}
	for _, r := range "Lena" {
		m.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	if got := m.Inputs()["on_call"]; got != "Lena" {
		t.Errorf("typing over the last run's value gave %q, want Lena", got)
	}
	// The default of the next field is selected in its turn; a movement
	// key keeps it and edits from its end.
	m.Update(tea.KeyPressMsg{Code: tea.KeyTab})
	if !strings.Contains(ansi.Strip(m.View()), "bugs  default: typing replaces it") {
		t.Errorf("the default is not shown selected:\n%s", ansi.Strip(m.View()))
	}
	m.Update(tea.KeyPressMsg{Code: tea.KeyEnd})
	m.Update(tea.KeyPressMsg{Code: 's', Text: "s"})
	if got := m.Inputs()["topic"]; got != "bugss" {
		t.Errorf("editing after a movement key gave %q, want bugss", got)
	}
	m.Update(tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift})
	m.Update(tea.KeyPressMsg{Code: tea.KeyBackspace})
	if _, given := m.Inputs()["on_call"]; given {
		t.Errorf("backspace on a selected value left %v", m.Inputs()["on_call"])
	}
}
