package form

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/stepwise-dev/stepwise/debugger/workspace"
	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/plans/examples"
	"github.com/stepwise-dev/stepwise/tui/common"
	"github.com/stepwise-dev/stepwise/tui/common/commontest"
	"github.com/stepwise-dev/stepwise/tui/live/livetest"
)

// demoPlans loads the demo project's plans through the real configuration
// and catalog code, by identifier.
func demoPlans(t *testing.T) map[string]*plans.Plan {
	t.Helper()
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "desk")
	if err := examples.WriteProject(dir, "/usr/local/bin/stepwise"); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.Open(dir, workspace.Options{LookupEnv: livetest.IsolatedEnv(tmp)})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	out := map[string]*plans.Plan{}
	for _, file := range ws.PlanFiles() {
		d, err := ws.Load(file)
		if err != nil {
			t.Fatal(err)
		}
		out[d.Plan.Identifier.Value] = d.Plan
	}
	if len(out) < 4 {
		t.Fatalf("the demo has %d plans", len(out))
	}
	return out
}

// stepSchema is the output_schema of a demo plan's agent or ask step.
func stepSchema(t *testing.T, p *plans.Plan, path string) *plans.Schema {
	t.Helper()
	var s *plans.Schema
	plans.WalkSteps(p, func(st *plans.Step) {
		if st.Path != path {
			return
		}
		switch c := st.Control.(type) {
		case *plans.AgentInput:
			s = c.OutputSchema
		case *plans.AskInput:
			s = c.OutputSchema
		}
	})
	if s == nil {
		t.Fatalf("no step %s with an output_schema", path)
	}
	return s
}

// planSchema loads a plan written here and returns its input_schema.
func planSchema(t *testing.T, schemaYAML string) *plans.Schema {
	t.Helper()
	src := "identifier: form_test\nname: Form test\ndescription: Inputs of every kind.\ninput_schema:\n" + schemaYAML +
		"steps:\n  - id: E1\n    tool_name: builtin__reshape\n    input: {shape: {}}\n"
	p, r := plans.Load("form_test.yaml", []byte(src), plans.Stepwise)
	if !r.OK() {
		t.Fatalf("the test plan has problems: %v", r.Problems)
	}
	return p.InputSchema
}

func open(t *testing.T, s *plans.Schema, w, h int, color bool) Model {
	t.Helper()
	m := New(common.New(common.NewTheme(true, color), common.DefaultKeyMap()))
	m.SetSize(w, h)
	if cmd := m.Open("inputs of test", s); cmd != nil {
		t.Errorf("Open returned a command (a blinking cursor?)")
	}
	return m
}

var (
	keyTab      = tea.KeyPressMsg{Code: tea.KeyTab}
	keyShiftTab = tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	keyDown     = tea.KeyPressMsg{Code: tea.KeyDown}
	keyUp       = tea.KeyPressMsg{Code: tea.KeyUp}
	keyLeft     = tea.KeyPressMsg{Code: tea.KeyLeft}
	keyRight    = tea.KeyPressMsg{Code: tea.KeyRight}
	keySpace    = tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	keyEsc      = tea.KeyPressMsg{Code: tea.KeyEscape}
	keySubmit   = tea.KeyPressMsg{Code: 's', Mod: tea.ModCtrl}
	keyBackspce = tea.KeyPressMsg{Code: tea.KeyBackspace}
	keyJ        = tea.KeyPressMsg{Code: 'j', Text: "j"}
	keyL        = tea.KeyPressMsg{Code: 'l', Text: "l"}
)

func typed(text string) []tea.KeyPressMsg {
	var out []tea.KeyPressMsg
	for _, r := range text {
		out = append(out, tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	return out
}

// press sends keys and returns the messages their commands produce, but
// for the common.CloseOverlay that comes with a submit.
func press(m *Model, keys ...tea.KeyPressMsg) []tea.Msg {
	var msgs []tea.Msg
	for _, k := range keys {
		_, cmd := m.Update(k)
		for _, msg := range commontest.Messages(cmd) {
			if _, closed := msg.(common.CloseOverlay); !closed {
				msgs = append(msgs, msg)
			}
		}
	}
	return msgs
}

func focused(m Model) string { return m.fields[m.focus].name }

func view(m Model) string { return ansi.Strip(m.View()) }

func TestTriageQueue(t *testing.T) {
	p := demoPlans(t)["triage_queue"]
	m := open(t, p.InputSchema, 80, 20, false)
	if !m.Active() || len(m.fields) != 2 || m.fields[0].name != "on_call" || m.fields[1].name != "limit" {
		t.Fatalf("fields %+v", m.fields)
	}
	v := view(m)
	for _, want := range []string{
		"inputs of test",
		"▸ on_call *  text",
		"  Who is on call today; the handover is written for them.",
		"  limit  whole number",
		"    6 ",
		"ctrl+s run · tab next field · esc cancel",
	} {
		if !strings.Contains(v, want) {
			t.Errorf("the form lacks %q:\n%s", want, v)
		}
	}

	// Submitting without the required input says so under it.
	press(&m, keyTab)
	if msgs := press(&m, keySubmit); len(msgs) != 0 || !m.Active() {
		t.Fatalf("submit without on_call emitted %v", msgs)
	}
	if focused(m) != "on_call" || !strings.Contains(view(m), "┃    ✗ required ") {
		t.Errorf("the missing input is not shown, focus on %s:\n%s", focused(m), view(m))
	}

	// j is a letter in a text field; typing clears the problem.
	press(&m, typed("Priya j")...)
	press(&m, keyBackspce, keyBackspce)
	if strings.Contains(view(m), "✗ required") || m.fields[0].input.Value() != "Priya" {
		t.Errorf("after typing: %q\n%s", m.fields[0].input.Value(), view(m))
	}
	msgs := press(&m, keySubmit)
	want := Submitted{Inputs: map[string]any{"on_call": "Priya", "limit": json.Number("6")}}
	if len(msgs) != 1 || !reflect.DeepEqual(msgs[0], want) || m.Active() {
		t.Errorf("submit emitted %#v, want %#v (active %v)", msgs, want, m.Active())
	}
	// A closed form takes no keys.
	if msgs := press(&m, keySubmit, keyEsc); len(msgs) != 0 {
		t.Errorf("a closed form emitted %v", msgs)
	}
}

func TestNumbers(t *testing.T) {
	p := demoPlans(t)["incident_brief"]
	m := open(t, p.InputSchema, 80, 20, false)
	press(&m, typed("checkout timeouts")...)
	press(&m, keyDown)
	if focused(m) != "max_related" || m.fields[1].input.Value() != "5" {
		t.Fatalf("focus %s, max_related %q", focused(m), m.fields[1].input.Value())
	}
	cases := []struct {
		text, err string
	}{
		{"5.5", "not a whole number"},
		{"five", "not a number"},
		{"5 5", "not a number"},
		{"1e2", ""},
		{"-3", ""},
		{"", ""},
	}
	for _, tc := range cases {
		m.fields[1].input.SetValue("")
		press(&m, typed(tc.text)...)
		if got := m.fields[1].entryErr; got != tc.err {
			t.Errorf("%q: error %q, want %q", tc.text, got, tc.err)
		}
		if tc.err != "" && !strings.Contains(view(m), "✗ "+tc.err) {
			t.Errorf("%q: the error is not shown:\n%s", tc.text, view(m))
		}
	}
	// Text that is not a number stops the submission at its field.
	m.fields[1].input.SetValue("")
	press(&m, typed("lots")...)
	press(&m, keyUp)
	if msgs := press(&m, keySubmit); len(msgs) != 0 || focused(m) != "max_related" {
		t.Errorf("submit with a bad number emitted %v, focus %s", msgs, focused(m))
	}
	for range 4 {
		press(&m, keyBackspce)
	}
	press(&m, typed("100")...)
	msgs := press(&m, keySubmit)
	want := Submitted{Inputs: map[string]any{"symptom": "checkout timeouts", "max_related": json.Number("100")}}
	if len(msgs) != 1 || !reflect.DeepEqual(msgs[0], want) {
		t.Errorf("submit emitted %#v, want %#v", msgs, want)
	}
	// An emptied optional input is left out: the engine applies its
	// default.
	m = open(t, p.InputSchema, 80, 20, false)
	press(&m, typed("x")...)
	press(&m, keyTab, keyBackspce)
	msgs = press(&m, keySubmit)
	want = Submitted{Inputs: map[string]any{"symptom": "x"}}
	if len(msgs) != 1 || !reflect.DeepEqual(msgs[0], want) {
		t.Errorf("submit emitted %#v, want %#v", msgs, want)
	}
}

func TestJSONArray(t *testing.T) {
	p := demoPlans(t)["post_triage_notes"]
	m := open(t, p.InputSchema, 80, 30, false)
	if focused(m) != "findings" || m.fields[1].input.Value() != "triage-desk" || !strings.Contains(view(m), "findings *  a JSON list") {
		t.Fatalf("fields:\n%s", view(m))
	}
	for _, tc := range []struct{ text, err string }{
		{"[", "not JSON: unexpected EOF"},
		{"{}", "not a JSON list ([…])"},
		{"[] []", "not JSON: more follows the value"},
		{"[]", ""},
	} {
		m.fields[0].input.SetValue("")
		press(&m, typed(tc.text)...)
		if got := m.fields[0].entryErr; got != tc.err {
			t.Errorf("%q: error %q, want %q", tc.text, got, tc.err)
		}
	}
	// The schema's own verdict on an item lands under the field, with
	// where in the value it is.
	m.fields[0].input.SetValue("")
	press(&m, typed(`[{"id": "CHK-1"}]`)...)
	if msgs := press(&m, keySubmit); len(msgs) != 0 {
		t.Fatalf("an incomplete finding was submitted: %v", msgs)
	}
	if got := m.fields[0].problems; len(got) != 1 || !strings.HasPrefix(got[0], "/0: missing properties 'severity', 'component', 'duplicate_of', 'summary'") {
		t.Errorf("findings problems %q", got)
	}
	if !strings.Contains(view(m), "    ✗ /0: missing properties") {
		t.Errorf("the problem is not under its field:\n%s", view(m))
	}
	m.fields[0].input.SetValue("")
	press(&m, typed(`[{"id": "CHK-1", "severity": "sev2", "component": "ci", "duplicate_of": "", "summary": "Flaky."}]`)...)
	msgs := press(&m, keySubmit)
	if len(msgs) != 1 {
		t.Fatalf("submit emitted %v:\n%s", msgs, view(m))
	}
	in := msgs[0].(Submitted).Inputs
	if list, ok := in["findings"].([]any); !ok || len(list) != 1 || in["author"] != "triage-desk" {
		t.Errorf("inputs %#v", in)
	}
}

func TestBoolean(t *testing.T) {
	ask := stepSchema(t, demoPlans(t)["triage_queue"], "confirm")
	m := open(t, ask, 80, 20, false)
	if !strings.Contains(view(m), "post *  yes or no") || !strings.Contains(view(m), "    [ ] not set  space changes it") {
		t.Fatalf("the boolean:\n%s", view(m))
	}
	// j and k move off a field that takes no text; there is only one here.
	press(&m, keyJ)
	for _, want := range []string{"[x] true", "[ ] false", "[ ] not set", "[x] true"} {
		press(&m, keySpace)
		if !strings.Contains(view(m), "    "+want) {
			t.Errorf("after space, want %q:\n%s", want, view(m))
		}
	}
	msgs := press(&m, keySubmit)
	if want := (Submitted{Inputs: map[string]any{"post": true}}); len(msgs) != 1 || !reflect.DeepEqual(msgs[0], want) {
		t.Errorf("submit emitted %#v, want %#v", msgs, want)
	}
	m = open(t, ask, 80, 20, false)
	if msgs := press(&m, keySubmit); len(msgs) != 0 || !strings.Contains(view(m), "✗ required") {
		t.Errorf("an unset required boolean: %v\n%s", msgs, view(m))
	}
}

func TestEnum(t *testing.T) {
	verdict := stepSchema(t, demoPlans(t)["triage_queue"], "assess/do.*/verdict")
	m := open(t, verdict, 80, 40, false)
	if focused(m) != "severity" || !strings.Contains(view(m), "severity *  one of sev1, sev2, sev3, sev4") {
		t.Fatalf("fields:\n%s", view(m))
	}
	for _, tc := range []struct {
		key  tea.KeyPressMsg
		want string
	}{
		{keyRight, "sev1"}, {keyRight, "sev2"}, {keyL, "sev3"}, {keyLeft, "sev2"}, {keyLeft, "sev1"}, {keyLeft, "not set"}, {keyLeft, "sev4"}, {keyRight, "not set"},
	} {
		press(&m, tc.key)
		if !strings.Contains(view(m), "    ‹ "+tc.want+" ›") {
			t.Errorf("after %s, want %s:\n%s", tc.key, tc.want, view(m))
		}
	}
	press(&m, keyRight, keyRight)
	press(&m, keyTab)
	press(&m, typed("payments")...)
	press(&m, keyTab, keyTab)
	press(&m, typed("Checkout fails.")...)
	msgs := press(&m, keySubmit)
	want := Submitted{Inputs: map[string]any{"severity": "sev2", "component": "payments", "summary": "Checkout fails."}}
	// duplicate_of is required, and an empty text is no value: the form
	// says so rather than guessing "".
	if len(msgs) != 0 || focused(m) != "duplicate_of" || !strings.Contains(view(m), "✗ required") {
		t.Fatalf("submit with duplicate_of empty: %v, focus %s\n%s", msgs, focused(m), view(m))
	}
	press(&m, typed("CHK-3")...)
	msgs = press(&m, keySubmit)
	want.Inputs["duplicate_of"] = "CHK-3"
	if len(msgs) != 1 || !reflect.DeepEqual(msgs[0], want) {
		t.Errorf("submit emitted %#v, want %#v", msgs, want)
	}
}

const everyKind = `  type: object
  required: [ghost]
  maxProperties: 2
  properties:
    ratio: { type: number, examples: [0.25] }
    anything: { description: "Any JSON value, or text." }
    tags: { type: [array, "null"], default: [a, b] }
    ghost_free: { type: object }
`

func TestEveryKind(t *testing.T) {
	m := open(t, planSchema(t, everyKind), 80, 30, false)
	v := view(m)
	for _, want := range []string{"▸ ratio  number", "    e.g. 0.25", "  anything  JSON or text", "┃  Any JSON value, or text. ", "  tags  a JSON list", `    ["a","b"]`, "  ghost_free  a JSON object"} {
		if !strings.Contains(v, want) {
			t.Errorf("the form lacks %q:\n%s", want, v)
		}
	}
	press(&m, typed("0.5")...)
	press(&m, keyTab)
	press(&m, typed("plain words")...)
	// Three inputs break maxProperties, and ghost has no field: both are
	// the form's own problems, shown above the fields.
	if msgs := press(&m, keySubmit); len(msgs) != 0 {
		t.Fatalf("submitted %v", msgs)
	}
	v = view(m)
	if !strings.Contains(v, "✗ /: missing property 'ghost'") || !strings.Contains(v, "✗ /: maxProperties") {
		t.Errorf("the form's own problems:\n%s", v)
	}
	if got := m.Inputs(); !reflect.DeepEqual(got, map[string]any{"ratio": json.Number("0.5"), "anything": "plain words", "tags": []any{"a", "b"}}) {
		t.Errorf("inputs %#v", got)
	}
	press(&m, keyBackspce)
	m.fields[1].input.SetValue("")
	press(&m, typed(`{"n": 1}`)...)
	if got := m.Inputs()["anything"]; !reflect.DeepEqual(got, map[string]any{"n": json.Number("1")}) {
		t.Errorf("JSON in an untyped field reads as %#v", got)
	}
}

func TestMovementAndCancel(t *testing.T) {
	m := open(t, stepSchema(t, demoPlans(t)["triage_queue"], "assess/do.*/verdict"), 80, 40, false)
	steps := []struct {
		key  tea.KeyPressMsg
		want string
	}{
		{keyTab, "component"}, {keyDown, "duplicate_of"}, {keyTab, "summary"}, {keyTab, "summary"},
		{keyShiftTab, "duplicate_of"}, {keyUp, "component"}, {keyUp, "severity"}, {keyUp, "severity"},
	}
	for _, s := range steps {
		press(&m, s.key)
		if focused(m) != s.want {
			t.Errorf("after %s focus on %s, want %s", s.key, focused(m), s.want)
		}
	}
	if _, cmd := m.Update(keyEsc); !reflect.DeepEqual(commontest.Messages(cmd), []tea.Msg{common.CloseOverlay{Overlay: &m}}) || m.Active() {
		t.Errorf("esc emitted %v, active %v", commontest.Messages(cmd), m.Active())
	}

	// A paste goes into the focused text field.
	m = open(t, demoPlans(t)["issue_timeline"].InputSchema, 80, 20, false)
	m.Update(tea.PasteMsg{Content: "CHK-107"})
	if got := m.Inputs(); !reflect.DeepEqual(got, map[string]any{"id": "CHK-107"}) {
		t.Errorf("after a paste: %#v", got)
	}

	// A schema without properties is a form with nothing to fill in.
	m = open(t, planSchema(t, "  type: object\n"), 60, 10, false)
	if !strings.Contains(strings.Join(strings.Fields(view(m)), " "), "names no inputs; ctrl+s runs it ┃ ┃ with none.") {
		t.Errorf("an empty form:\n%s", view(m))
	}
	press(&m, keyTab, keySpace)
	msgs := press(&m, keySubmit)
	if want := (Submitted{Inputs: map[string]any{}}); len(msgs) != 1 || !reflect.DeepEqual(msgs[0], want) {
		t.Errorf("submit emitted %#v", msgs)
	}
}

func TestViewSize(t *testing.T) {
	ps := demoPlans(t)
	schemas := []*plans.Schema{ps["triage_queue"].InputSchema, ps["post_triage_notes"].InputSchema, stepSchema(t, ps["triage_queue"], "assess/do.*/verdict"), planSchema(t, everyKind), nil}
	for i, s := range schemas {
		for _, color := range []bool{true, false} {
			for _, size := range [][2]int{{120, 40}, {80, 24}, {40, 10}, {20, 5}, {3, 3}, {0, 0}} {
				t.Run(fmt.Sprintf("schema %d %dx%d color %v", i, size[0], size[1], color), func(t *testing.T) {
					m := open(t, s, size[0], size[1], color)
					for _, keys := range [][]tea.KeyPressMsg{nil, {keyTab, keyTab}, {keySubmit}, typed("x1")} {
						press(&m, keys...)
						// A short form draws in a short box.
						checkSize(t, m.View(), size[0], min(size[1], m.NeededHeight(size[0])))
					}
				})
			}
		}
	}
}

func checkSize(t *testing.T, view string, w, h int) {
	t.Helper()
	if h == 0 {
		if view != "" {
			t.Errorf("a zero-height view is %q", view)
		}
		return
	}
	lines := strings.Split(view, "\n")
	if len(lines) != h {
		t.Errorf("%d lines, want %d", len(lines), h)
	}
	for i, l := range lines {
		if got := ansi.StringWidth(l); got != w {
			t.Errorf("line %d is %d wide, want %d: %q", i, got, w, ansi.Strip(l))
		}
	}
}

// TestScrolling keeps the focused field in view of a form taller than its
// box, and marks focus without colour.
func TestScrolling(t *testing.T) {
	m := open(t, stepSchema(t, demoPlans(t)["triage_queue"], "assess/do.*/verdict"), 50, 8, false)
	for _, name := range []string{"component", "duplicate_of", "summary"} {
		press(&m, keyTab)
		if !strings.Contains(view(m), "▸ "+name+" *") {
			t.Errorf("focused %s is out of view:\n%s", name, view(m))
		}
	}
	press(&m, keyShiftTab, keyShiftTab, keyShiftTab)
	if v := view(m); !strings.Contains(v, "▸ severity *") || !strings.Contains(v, "\x20‹ not set ›") {
		t.Errorf("back at the top:\n%s", v)
	}
	// Without colour the focused choice is in reverse video.
	if raw := m.View(); !strings.Contains(raw, "\x1b[7m‹ not set ›") {
		t.Errorf("the focused choice is not reversed: %q", raw)
	}
}
