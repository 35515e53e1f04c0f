package valueedit

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/debugger/workspace"
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/tui/common"
	"github.com/stepwise-dev/stepwise/tui/common/commontest"
	"github.com/stepwise-dev/stepwise/tui/live/livetest"
)

// The project: a user tool declaring its output schema, a step running it
// and two templates downstream reading its result.
var project = map[string]string{
	"tools/card.yaml": `
name: card
description: A card.
kind: reshape
shape: { id: "{{input.id}}", severity: sev3 }
input_schema: { type: object, required: [id], properties: { id: { type: string } } }
output_schema:
  type: object
  required: [id, severity]
  properties:
    id: { type: string }
    severity: { enum: [sev1, sev2, sev3] }
`,
	"plans/p.yaml": `
name: cards
description: A card, then a step that reads it.
identifier: cards
steps:
  - id: E0
    tool_name: user__card
    input: { id: X-1 }
  - id: E1
    tool_name: builtin__reshape
    input: { shape: { id: "{{E0.id}}" } }
output: { card: "{{E0}}", id: "{{E1.id}}" }
`,
}

// stopAt starts a real session over the project, held at the first stop
// the break line names.
func stopAt(t *testing.T, breakLine string) (*debugger.Session, debugger.State) {
	t.Helper()
	dir, ws := livetest.Project(t, project)
	s, err := ws.Debug(livetest.Plan(t, dir, "plans/p.yaml"), debugger.NewBreakpoints(), workspace.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	in, err := debugger.ParseCommand(breakLine)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Table().Set(in.Pattern, in.Kinds, in.Condition); err != nil {
		t.Fatal(err)
	}
	// The run ends with the test, held or not.
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	st := s.Start(ctx, nil)
	if st.Finished {
		t.Fatalf("the run did not stop at %s: %s", breakLine, st.Error)
	}
	return s, st
}

func newEditor(w, h int) Model {
	m := New(common.New(common.NewTheme(true, false), common.DefaultKeyMap()))
	m.SetSize(w, h)
	return m
}

var (
	ctrlS   = tea.KeyPressMsg{Code: 's', Mod: tea.ModCtrl}
	esc     = tea.KeyPressMsg{Code: tea.KeyEscape}
	back    = tea.KeyPressMsg{Code: tea.KeyBackspace}
	toEnd   = tea.KeyPressMsg{Code: tea.KeyEnd, Mod: tea.ModCtrl}
	toBegin = tea.KeyPressMsg{Code: tea.KeyHome, Mod: tea.ModCtrl}
)

// send hands the editor a message and returns the message its command
// produced, if any.
// A submit also closes the overlay; the value is what matters then.
func send(m Model, msg tea.Msg) (Model, tea.Msg) {
	_, cmd := m.Update(msg)
	var closed tea.Msg
	for _, out := range commontest.Messages(cmd) {
		switch out.(type) {
		case Submitted:
			return m, out
		case common.CloseOverlay:
			closed = out
		}
	}
	return m, closed // nil for the cursor's own messages
}

// replaceText clears the text with keys and pastes text in its place.
func replaceText(m Model, text string) Model {
	m, _ = send(m, toEnd)
	for range len([]rune(m.Text())) {
		m, _ = send(m, back)
	}
	m, _ = send(m, tea.PasteMsg{Content: text})
	return m
}

// view is the editor without styling, checked to be exactly its size.
func view(t *testing.T, m Model) string {
	t.Helper()
	v := m.View()
	lines := strings.Split(v, "\n")
	if len(lines) != m.Height {
		t.Fatalf("%d lines, not %d:\n%s", len(lines), m.Height, ansi.Strip(v))
	}
	for _, l := range lines {
		if ansi.StringWidth(l) != m.Width {
			t.Fatalf("a line is %d wide, not %d: %q", ansi.StringWidth(l), m.Width, ansi.Strip(l))
		}
	}
	return ansi.Strip(v)
}

// TestInjectAtAStep edits the value to inject at a real step stop: the
// prefill is the stop's, a syntax error and a schema violation are shown
// as they are typed and refused, and the value accepted is one the session
// takes and the run's output carries.
func TestInjectAtAStep(t *testing.T) {
	s, st := stopAt(t, "break E0 step")
	m := newEditor(60, 14)
	m.Open("inject at E0 (step)", "", st.Stop)
	if !m.Active() {
		t.Fatal("not open")
	}
	if want := "{\n  \"id\": \"\",\n  \"severity\": \"sev1\"\n}"; m.Text() != want {
		t.Errorf("prefill\n%s\nwant\n%s", m.Text(), want)
	}
	v := view(t, m)
	for _, want := range []string{"inject at E0 (step)", "1 {", `2   "id": "",`, "✓ matches the schema",
		"read by: E1 (E0.id), output (E0)", "ctrl+s accept · esc cancel"} {
		if !strings.Contains(v, want) {
			t.Errorf("the editor does not show %q:\n%s", want, v)
		}
	}

	// A character typed at the start breaks the JSON there.
	m, _ = send(m, toBegin)
	m, _ = send(m, tea.KeyPressMsg{Code: 'x', Text: "x"})
	if p := m.Problems(); len(p) != 1 || p[0] != "1:1 invalid character 'x' looking for beginning of value" {
		t.Errorf("problems %q", p)
	}
	m, msg := send(m, ctrlS)
	if msg != nil || !m.Active() {
		t.Fatalf("submit with a problem: %v, active %v", msg, m.Active())
	}
	if v := view(t, m); !strings.Contains(v, "✗ 1:1 invalid character 'x'") || !strings.Contains(v, Refused) {
		t.Errorf("the refusal does not show:\n%s", v)
	}
	m, _ = send(m, back)
	if len(m.Problems()) != 0 || strings.Contains(view(t, m), Refused) {
		t.Errorf("after deleting the x: %q", m.Problems())
	}

	m = replaceText(m, "{\n  \"id\": \"X-9\",\n  \"severity\": \"loud\"\n}")
	if p := m.Problems(); len(p) != 1 || !strings.HasPrefix(p[0], "/severity: ") {
		t.Errorf("schema problems %q", p)
	}
	if v := view(t, m); !strings.Contains(v, "✗ /severity: ") {
		t.Errorf("the violation does not show:\n%s", v)
	}
	m = replaceText(m, `{"id": "X-9"}`)
	if p := m.Problems(); len(p) != 1 || !strings.Contains(p[0], "severity") {
		t.Errorf("a missing property: %q", p)
	}

	m = replaceText(m, `{"id": "X-9", "severity": "sev2"}`)
	m, msg = send(m, ctrlS)
	sub, ok := msg.(Submitted)
	if !ok || m.Active() {
		t.Fatalf("submit: %#v, active %v", msg, m.Active())
	}
	end, err := s.Do(debugger.Command{Decision: engine.Decision{Action: engine.Inject, Value: sub.Value}, Move: debugger.Continue})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(end.Output); string(b) != `{"card":{"id":"X-9","severity":"sev2"},"id":"X-9"}` {
		t.Errorf("the run's output %s", b)
	}
}

// TestSyntaxPositions checks line:col of JSON errors across lines.
func TestSyntaxPositions(t *testing.T) {
	_, st := stopAt(t, "break E0 step")
	m := newEditor(60, 14)
	m.Open("inject", "", st.Stop)
	for _, tc := range []struct{ text, want string }{
		{"{\n  \"id\": 1,\n}", "3:1 invalid character '}' looking for beginning of object key string"},
		{"[1,\n 2 3]", "2:4 invalid character '3' after array element"},
		{"{\"é\": x}", "1:7 invalid character 'x' looking for beginning of value"},
		{"{\"id\":\n", "2:1 unexpected end of JSON input"},
		{"  ", "empty: type a JSON value"},
		{"{} {}", "1:4 invalid character '{' after top-level value"},
	} {
		m = replaceText(m, tc.text)
		if p := m.Problems(); len(p) != 1 || p[0] != tc.want {
			t.Errorf("%q: %q, want %q", tc.text, p, tc.want)
		}
	}
}

// TestNoSchema edits at a stop where no schema applies: a tool's result
// whose tool declares none, prefilled with what the tool returned.
func TestNoSchema(t *testing.T) {
	_, st := stopAt(t, "break E1 result")
	m := newEditor(50, 10)
	m.Open("replace at E1 (result)", "", st.Stop)
	if m.Text() != "{\n  \"id\": \"X-1\"\n}" {
		t.Errorf("prefill %q", m.Text())
	}
	if v := view(t, m); !strings.Contains(v, "✓ valid JSON (no schema applies here)") || !strings.Contains(v, "read by: output (E1.id)") {
		t.Errorf("without a schema:\n%s", v)
	}
	m, msg := send(m, esc)
	if _, ok := msg.(common.CloseOverlay); !ok || m.Active() {
		t.Errorf("esc: %#v, active %v", msg, m.Active())
	}
	// A closed editor takes nothing.
	if _, msg := send(m, ctrlS); msg != nil {
		t.Errorf("a closed editor sent %#v", msg)
	}
}

// TestSizes checks the editor is exactly its box at every size, with many
// problems and without, in colour and without.
func TestSizes(t *testing.T) {
	_, st := stopAt(t, "break E0 step")
	for _, color := range []bool{false, true} {
		for _, size := range [][2]int{{20, 6}, {40, 8}, {80, 24}, {120, 40}} {
			m := New(common.New(common.NewTheme(true, color), common.DefaultKeyMap()))
			m.SetSize(size[0], size[1])
			m.Open("inject at E0 (step): a title longer than the narrow box", "", st.Stop)
			view(t, m)
			// Six violations: more than show at once.
			m = replaceText(m, `{"a": 1, "b": 2, "c": 3, "id": 4, "severity": 5, "x": [`+strings.Repeat(`"long line", `, 20)+`0]}`)
			m = replaceText(m, `{"id": 4, "severity": 5}`)
			v := view(t, m)
			if size[1] >= 24 && (!strings.Contains(v, "✗ /id: ") || !strings.Contains(v, "✗ /severity: ")) {
				t.Errorf("%v: the violations do not show:\n%s", size, v)
			}
		}
	}
	// Without a stop it is an empty editor asking for a value.
	m := newEditor(40, 8)
	m.Open("value", "", nil)
	if v := view(t, m); !strings.Contains(v, "✗ empty: type a JSON value") {
		t.Errorf("an editor without a stop:\n%s", v)
	}
	// More problems than fit are counted.
	m = newEditor(80, 24)
	str := map[string]any{"type": "string"}
	m.Open("answer", "", &debugger.Snapshot{Schema: map[string]any{"type": "object",
		"properties": map[string]any{"a": str, "b": str, "c": str, "d": str, "e": str, "f": str}}})
	m = replaceText(m, `{"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 6}`)
	v := view(t, m)
	if len(m.Problems()) != 6 || strings.Count(v, "✗ /") != 3 || !strings.Contains(v, "✗ …and 3 more") {
		t.Errorf("problems %q:\n%s", m.Problems(), v)
	}
}

// TestReadersWrap: an editor narrower than its readers wraps them onto
// more lines rather than cutting the ones past its edge.
func TestReadersWrap(t *testing.T) {
	m := newEditor(40, 14)
	m.Open("replace at timeline/do.0 (result)", "", &debugger.Snapshot{Readers: []string{
		"output: timeline.count through timeline's result",
		"output: timeline.result.text through timeline's result",
	}})
	v := strings.Join(strings.Fields(strings.ReplaceAll(view(t, m), "│", " ")), " ")
	for _, want := range []string{"read by: output (timeline.count", "(timeline.result.text through"} {
		if !strings.Contains(v, want) {
			t.Errorf("the editor does not show %q:\n%s", want, view(t, m))
		}
	}
}
