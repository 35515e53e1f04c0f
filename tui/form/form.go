// Package form is the overlay that asks for a plan's inputs before a run:
// one field per top-level property of the plan's input_schema, in the order
// the schema writes them. Text and numbers are typed (numbers are checked
// as they are typed), a boolean is toggled with space, an enum is chosen
// with left and right, and arrays, objects and untyped values are entered
// as JSON. Submit checks the assembled inputs against the schema and either
// emits Submitted or shows each violation under its field.
//
// A plan without an input_schema needs no form: the root skips it and runs
// the plan with no inputs.
package form

import (
	"bytes"
	"encoding/json"
	"math"
	"regexp"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/tui/common"
)

// Submitted carries the inputs the form assembled, which conform to the
// schema it was opened with. Numbers are json.Number, as in plan files.
type Submitted struct{ Inputs map[string]any }

// kind is how a field is entered.
type kind int

const (
	kindText    kind = iota // a string, typed
	kindNumber              // a number, typed and checked
	kindInteger             // a whole number, typed and checked
	kindBool                // toggled: not set, true, false
	kindEnum                // chosen from the enum: not set, then each value
	kindJSON                // an array or an object, typed as JSON
	kindAny                 // anything: JSON when it parses, text otherwise
)

// field is one input of the form.
type field struct {
	name        string
	required    bool
	description string
	kind        kind
	jsonType    string // array or object, for kindJSON
	choices     []any  // the enum's values
	input       textinput.Model

	// choice is the chosen enum value's index, or the boolean (0 not set,
	// 1 true, 2 false); -1 means not set for an enum.
	choice int

	entryErr string // what is wrong with the text as typed
	problems []string

	// lastRun says the value is the last run's, filled in (Fill), not
	// the default; selected says the whole text is selected, as it is
	// when a field with text takes the focus: the first key typed
	// replaces it, as in a browser's form, so that typing never appends
	// to a value the person did not see was there.
	lastRun  bool
	selected bool
}

// Model is the inputs form.
type Model struct {
	common.Common
	active  bool
	title   string
	schema  *plans.Schema
	fields  []field
	focus   int
	general []string // violations that belong to no field
	scroll  common.Scroll
	// starts is what submitting starts, "run" or "debug", as the footer
	// says it.
	starts string
}

// New returns a closed form.
func New(c common.Common) Model { return Model{Common: c} }

// SetStarts says what submitting the open form starts: "run" (the
// default) or "debug".
func (m *Model) SetStarts(what string) { m.starts = what }

// startWord is what submitting starts.
func (m Model) startWord() string {
	if m.starts == "" {
		return "run"
	}
	return m.starts
}

// Open shows the form for schema (a plan's input_schema) under title, each
// field prefilled with its default, an example as its placeholder. The
// command it returns is the focused field's.
func (m *Model) Open(title string, schema *plans.Schema) tea.Cmd {
	*m = Model{Common: m.Common, active: true, title: title, schema: schema}
	if schema == nil || schema.Value == nil {
		return nil
	}
	raw, _ := schema.Raw.(map[string]any)
	props, _ := raw["properties"].(map[string]any)
	var required []string
	if list, ok := raw["required"].([]any); ok {
		for _, r := range list {
			if s, ok := r.(string); ok {
				required = append(required, s)
			}
		}
	}
	// The order written in the file: plain JSON data keeps none.
	if p := schema.Value.Get("properties"); p != nil && p.Kind == plans.Map {
		for _, e := range p.Map() {
			prop, _ := props[e.Key].(map[string]any)
			m.fields = append(m.fields, m.newField(e.Key, prop, slices.Contains(required, e.Key)))
		}
	}
	m.layout()
	return m.setFocus(0)
}

// Fill sets the fields named in values to them, leaving the others as
// they are: the root fills in the inputs of the plan's last run.
func (m *Model) Fill(values map[string]any) {
	for i := range m.fields {
		if v, ok := values[m.fields[i].name]; ok {
			m.fields[i].set(v)
			m.fields[i].lastRun = true
		}
	}
	m.layout()
	m.fields[m.focus].selectAll()
}

// selectAll selects a text field's whole text, if it has any.
func (f *field) selectAll() {
	f.selected = f.kind != kindBool && f.kind != kindEnum && f.input.Value() != ""
}

// newField builds the field for one property, its default filled in.
func (m *Model) newField(name string, prop map[string]any, required bool) field {
	f := field{name: name, required: required, choice: -1}
	if d, ok := prop["description"].(string); ok {
		f.description = strings.Join(strings.Fields(d), " ")
	}
	typ := schemaType(prop)
	switch e, _ := prop["enum"].([]any); {
	case len(e) > 0:
		f.kind, f.choices = kindEnum, e
	case typ == "string":
		f.kind = kindText
	case typ == "number":
		f.kind = kindNumber
	case typ == "integer":
		f.kind = kindInteger
	case typ == "boolean":
		f.kind, f.choice = kindBool, 0
	case typ == "array" || typ == "object":
		f.kind, f.jsonType = kindJSON, typ
	default:
		f.kind = kindAny
	}
	in := textinput.New()
	in.Prompt = ""
	// Tab and the arrows move between fields.
	in.KeyMap.AcceptSuggestion = key.NewBinding()
	in.KeyMap.NextSuggestion = key.NewBinding()
	in.KeyMap.PrevSuggestion = key.NewBinding()
	in.SetStyles(m.inputStyles())
	if ex, ok := prop["examples"].([]any); ok && len(ex) > 0 {
		in.Placeholder = "e.g. " + valueText(ex[0], f.kind)
	}
	f.input = in
	if d, ok := prop["default"]; ok {
		f.set(d)
	}
	return f
}

// set fills the field with a value.
func (f *field) set(v any) {
	switch f.kind {
	case kindBool:
		if b, ok := v.(bool); ok {
			f.choice = 2
			if b {
				f.choice = 1
			}
		}
	case kindEnum:
		f.choice = slices.IndexFunc(f.choices, func(c any) bool { return sameJSON(c, v) })
	default:
		f.input.SetValue(valueText(v, f.kind))
		f.check()
	}
}

// schemaType is a property's type: the first that is not null when it
// lists several.
func schemaType(prop map[string]any) string {
	switch t := prop["type"].(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok && s != "null" {
				return s
			}
		}
	}
	return ""
}

// valueText is a value as a field shows it: strings as they are, anything
// else as JSON.
func valueText(v any, k kind) string {
	if s, ok := v.(string); ok && k != kindJSON {
		return s
	}
	data, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(data)
}

// sameJSON reports whether two JSON values are equal, numbers by value.
func sameJSON(a, b any) bool {
	x, errA := json.Marshal(a)
	y, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(x, y)
}

// decodeJSON reads one JSON value, numbers as json.Number.
func decodeJSON(text string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errTrailing
	}
	return v, nil
}

type formError string

func (e formError) Error() string { return string(e) }

const errTrailing = formError("more follows the value")

// value is what the field holds; ok is false when it holds nothing (the
// input is then left out) or something it cannot read (entryErr says
// what).
func (f *field) value() (any, bool) {
	switch f.kind {
	case kindBool:
		return f.choice == 1, f.choice != 0
	case kindEnum:
		if f.choice < 0 {
			return nil, false
		}
		return f.choices[f.choice], true
	}
	text := f.input.Value()
	if strings.TrimSpace(text) == "" || f.entryErr != "" {
		return nil, false
	}
	switch f.kind {
	case kindNumber, kindInteger:
		return json.Number(strings.TrimSpace(text)), true
	case kindJSON:
		v, _ := decodeJSON(text)
		return v, true
	case kindAny:
		if v, err := decodeJSON(text); err == nil {
			return v, true
		}
	}
	return text, true
}

// check reads the text as typed and says what is wrong with it, if
// anything: numbers must be numbers, JSON must parse to the right kind.
func (f *field) check() {
	f.entryErr = ""
	text := strings.TrimSpace(f.input.Value())
	if text == "" {
		return
	}
	switch f.kind {
	case kindNumber, kindInteger:
		v, err := decodeJSON(text)
		n, isNumber := v.(json.Number)
		if err != nil || !isNumber {
			f.entryErr = "not a number"
			return
		}
		if f.kind == kindInteger {
			if x, err := n.Float64(); err != nil || x != math.Trunc(x) {
				f.entryErr = "not a whole number"
			}
		}
	case kindJSON:
		v, err := decodeJSON(text)
		if err != nil {
			f.entryErr = "not JSON: " + err.Error()
			return
		}
		if _, isList := v.([]any); f.jsonType == "array" && !isList {
			f.entryErr = "not a JSON list ([…])"
		}
		if _, isObject := v.(map[string]any); f.jsonType == "object" && !isObject {
			f.entryErr = "not a JSON object ({…})"
		}
	}
}

// Active reports whether the form is open.
func (m Model) Active() bool { return m.active }

// Inputs returns what the form would submit now, leaving out the fields
// that hold nothing.
func (m Model) Inputs() map[string]any {
	out := map[string]any{}
	for i := range m.fields {
		if v, ok := m.fields[i].value(); ok {
			out[m.fields[i].name] = v
		}
	}
	return out
}

// ShortHelp is the keys of the form (the stop's keys would type), ctrl+s
// named by what it starts, as the form's own footer names it.
func (m *Model) ShortHelp() []key.Binding {
	help := m.Keys.EditHelp()
	help[0] = common.Short(m.Keys.Submit, m.Keys.Submit.Help().Key, m.startWord())
	return help
}

// SetSize sets the most the overlay may take, border included; the form
// draws at the height its fields need within it.
func (m *Model) SetSize(width, height int) {
	m.Common.SetSize(width, height)
	m.layout()
}

// layout sizes the text fields to the width and keeps the focused field in
// view.
func (m *Model) layout() {
	for i := range m.fields {
		m.fields[i].input.SetWidth(max(m.Width-2-entryIndent-1, 1))
	}
	m.follow()
}

// setFocus moves the focus to field i.
func (m *Model) setFocus(i int) tea.Cmd {
	if len(m.fields) == 0 {
		return nil
	}
	m.focus = min(max(i, 0), len(m.fields)-1)
	var cmd tea.Cmd
	for j := range m.fields {
		if j == m.focus {
			cmd = m.fields[j].input.Focus()
			m.fields[j].selectAll()
		} else {
			m.fields[j].input.Blur()
			m.fields[j].selected = false
		}
	}
	m.follow()
	return cmd
}

// Update handles a key (and, for the focused text field, a paste): moving
// between fields, typing, toggling, choosing, submitting and cancelling.
func (m *Model) Update(msg tea.Msg) (common.Component, tea.Cmd) {
	if !m.active {
		return m, nil
	}
	var k tea.KeyPressMsg
	switch msg := msg.(type) {
	case tea.MouseClickMsg, tea.MouseWheelMsg:
		// A stray click must not lose what was typed.
		return m, nil
	case tea.KeyPressMsg:
		k = msg
	default:
		return m, m.enter(msg)
	}
	keys := m.Keys
	switch {
	case key.Matches(k, keys.Close):
		m.active = false
		return m, common.Close(m)
	case key.Matches(k, keys.Submit):
		return m, m.submit()
	case key.Matches(k, keys.NextPane):
		return m, m.setFocus(m.focus + 1)
	case key.Matches(k, keys.PrevPane):
		return m, m.setFocus(m.focus - 1)
	}
	if len(m.fields) == 0 {
		return m, nil
	}
	f := &m.fields[m.focus]
	typed := f.kind != kindBool && f.kind != kindEnum
	// The letters among the movement keys (j, k) are text in a text
	// field; the arrows move everywhere.
	if key.Matches(k, keys.Up, keys.Down) && (k.Text == "" || !typed) {
		if key.Matches(k, keys.Up) {
			return m, m.setFocus(m.focus - 1)
		}
		return m, m.setFocus(m.focus + 1)
	}
	switch {
	case f.kind == kindBool && key.Matches(k, keys.Toggle):
		f.choice = (f.choice + 1) % 3
		f.problems = nil
	case f.kind == kindEnum && key.Matches(k, keys.Expand, keys.Collapse):
		// Not set, then each value in turn, and round again.
		n := len(f.choices) + 1
		step := 1
		if key.Matches(k, keys.Collapse) {
			step = n - 1
		}
		f.choice = (f.choice+1+step)%n - 1
		f.problems = nil
	case typed:
		return m, m.enter(k)
	}
	m.follow()
	return m, nil
}

// enter hands a message to the focused text field and checks what it then
// holds.
func (m *Model) enter(msg tea.Msg) tea.Cmd {
	if len(m.fields) == 0 {
		return nil
	}
	f := &m.fields[m.focus]
	if f.kind == kindBool || f.kind == kindEnum {
		return nil
	}
	_, isKey := msg.(tea.KeyPressMsg)
	_, isPaste := msg.(tea.PasteMsg)
	if f.selected && (isKey || isPaste) {
		// The first character typed or pasted replaces the selected
		// text, and a deletion deletes it; any other key just ends the
		// selection. What is not the user's (the cursor's blink) leaves
		// it.
		f.selected = false
		switch msg := msg.(type) {
		case tea.PasteMsg:
			f.input.SetValue("")
		case tea.KeyPressMsg:
			switch {
			case msg.Text != "" && msg.Mod&(tea.ModCtrl|tea.ModAlt) == 0:
				f.input.SetValue("")
			case msg.Code == tea.KeyBackspace || msg.Code == tea.KeyDelete:
				f.input.SetValue("")
				f.check()
				f.problems = nil
				m.follow()
				return nil
			}
		}
	}
	before := f.input.Value()
	var cmd tea.Cmd
	f.input, cmd = f.input.Update(msg)
	if f.input.Value() != before {
		f.check()
		f.problems = nil
	}
	m.follow()
	return cmd
}

// submit checks the inputs and emits them, or shows what is wrong and
// focuses the first field at fault; the form closes with them.
func (m *Model) submit() tea.Cmd {
	m.general = nil
	for i := range m.fields {
		m.fields[i].problems = nil
	}
	inputs := m.Inputs()
	for i := range m.fields {
		f := &m.fields[i]
		if _, given := inputs[f.name]; !given && f.required && f.entryErr == "" {
			f.problems = append(f.problems, "required")
		}
	}
	for _, v := range m.schema.Check(inputs) {
		m.place(v)
	}
	if i := slices.IndexFunc(m.fields, func(f field) bool { return f.entryErr != "" || len(f.problems) > 0 }); i >= 0 {
		return m.setFocus(i)
	}
	if len(m.general) > 0 {
		m.scroll = common.Scroll{}
		return nil
	}
	m.active = false
	return common.CloseWith(m, Submitted{Inputs: inputs})
}

// quoted finds the property names a violation's message quotes.
var quoted = regexp.MustCompile(`'((?:[^'\\]|\\.)*)'`)

// place puts a violation under the field its location points into, or
// with the form's own when it points at no field. A missing property that
// has a field is already marked required there (or holds text that cannot
// be read, which its field says).
func (m *Model) place(v plans.Violation) {
	if v.Location == "" && strings.HasPrefix(v.Message, "missing propert") {
		names := quoted.FindAllStringSubmatch(v.Message, -1)
		if len(names) > 0 && !slices.ContainsFunc(names, func(n []string) bool { return !m.hasField(n[1]) }) {
			return
		}
	}
	seg, rest, _ := strings.Cut(strings.TrimPrefix(v.Location, "/"), "/")
	seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
	if v.Location != "" {
		if i := slices.IndexFunc(m.fields, func(f field) bool { return f.name == seg }); i >= 0 {
			msg := v.Message
			if rest != "" {
				msg = "/" + rest + ": " + msg
			}
			m.fields[i].problems = append(m.fields[i].problems, msg)
			return
		}
	}
	m.general = append(m.general, v.String())
}

func (m *Model) hasField(name string) bool {
	return slices.ContainsFunc(m.fields, func(f field) bool { return f.name == name })
}

// follow keeps the focused field, its label to its last problem, in view.
func (m *Model) follow() {
	lines, spans := m.lines(m.innerWidth())
	h := m.bodyHeight()
	if len(spans) > 0 {
		s := spans[m.focus]
		m.scroll = m.scroll.Follow(s[1]-1, h, len(lines))
		m.scroll = m.scroll.Follow(s[0], h, len(lines))
	}
	m.scroll = m.scroll.Clamp(h, len(lines))
}

func (m Model) innerWidth() int { return max(m.Width-2, 0) }

func (m Model) bodyHeight() int { return max(m.Height-2, 0) }

// entryIndent is where a field's entry starts, under its label.
const entryIndent = 4

// inputStyles are the text fields' styles: the theme's, except that the
// fields without the focus keep their text unmuted.
func (m Model) inputStyles() textinput.Styles {
	s := m.Theme.InputStyles()
	s.Blurred.Text = m.Theme.Text
	return s
}

// typeHint says how a field is entered, for its label.
func (f field) typeHint() string {
	switch f.kind {
	case kindText:
		return "text"
	case kindNumber:
		return "number"
	case kindInteger:
		return "whole number"
	case kindBool:
		return "yes or no"
	case kindEnum:
		opts := make([]string, len(f.choices))
		for i, c := range f.choices {
			opts[i] = valueText(c, kindAny)
		}
		return "one of " + strings.Join(opts, ", ")
	case kindJSON:
		if f.jsonType == "array" {
			return "a JSON list"
		}
		return "a JSON object"
	}
	return "JSON or text"
}
