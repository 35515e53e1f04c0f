// Package valueedit is the editor for a value given at a stop: the result
// injected for a step or tool call, the reply, result or error replaced,
// the answer to an ask. It opens on the value the stop suggests, checks
// the text on every change (JSON syntax with line:col, then the schema
// that applies at the stop, with the place in the value each violation is
// at) and gives the value to the root only once it is valid.
package valueedit

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/tui/common"
)

// Submitted is the value the user accepted; it is valid JSON and matches
// the schema that applies at the stop.
type Submitted struct {
	Value any
}

// Refused is what the editor says when Submit is pressed while the text
// has problems.
const Refused = "fix the problems above first"

// mostProblems is how many problems show at once; the rest are counted.
const mostProblems = 4

// Model is the value editor.
type Model struct {
	common.Common
	active  bool
	title   string
	about   string // said above the value, wrapped: a question too long for a title
	area    textarea.Model
	readers []string

	schema    *plans.Schema
	schemaErr error // the stop's schema does not compile: nothing is checked

	checked  string // the text the fields below describe
	value    any
	problems []string
	refused  bool // Submit was pressed with problems, and nothing changed since

	// opened is the text the editor opened on: esc closes at once while
	// the text is that, and asks first once it was changed (discarding
	// is then armed, and the next esc discards).
	opened     string
	discarding bool
	// openedBy is the key that opened the editor, which its first press
	// here does not type: pressed again out of habit (c twice at an
	// ask), it would be text nobody meant.
	openedBy string
}

// New returns a closed editor.
func New(c common.Common) Model {
	area := textarea.New()
	area.Prompt = ""
	area.ShowLineNumbers = true
	// MaxHeight bounds the visible height (and sets the line number
	// width: three digits); MaxContentHeight lifts the cap on how many
	// lines the value may have, which MaxHeight would otherwise set.
	area.MaxHeight = 999
	area.MaxContentHeight = 100_000
	area.CharLimit = 0
	return Model{Common: c, area: area}
}

// Open starts editing the value for the stop snap, under title, with about
// (a question, what accepting does; "" for nothing) wrapped above it: the
// text is the pretty JSON of the stop's prefill, checked against its
// schema. A nil snap opens an empty editor with no schema.
func (m *Model) Open(title, about string, snap *debugger.Snapshot) tea.Cmd {
	if snap == nil {
		snap = &debugger.Snapshot{}
	}
	m.active, m.title, m.about, m.refused, m.discarding, m.openedBy = true, title, about, false, false, ""
	m.readers = m.readers[:0:0]
	for _, r := range snap.Readers {
		if from, path, ok := strings.Cut(r, ": "); ok {
			r = from + " (" + path + ")"
		}
		m.readers = append(m.readers, r)
	}
	m.schema, m.schemaErr = nil, nil
	if snap.Schema != nil {
		compiled, err := plans.CompileSchema(snap.Schema)
		if err != nil {
			m.schemaErr = err
		} else {
			m.schema = &plans.Schema{Raw: snap.Schema, Compiled: compiled}
		}
	}
	text := ""
	if snap.Prefill != nil {
		text = pretty(snap.Prefill)
	}
	m.area.SetValue(text)
	m.area.MoveToBegin()
	m.opened = text
	m.check()
	m.layout()
	return m.area.Focus()
}

// pretty is v as indented JSON, with <, > and & left as they are.
func pretty(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// OpenedBy says which key opened the editor (as tea.KeyPressMsg.String
// writes it; "" for none, a command typed on a line): the first press of
// that key in the editor is not typed, and the editor says so until a key
// is pressed.
func (m *Model) OpenedBy(k string) {
	m.openedBy = k
	m.layout()
}

// Close closes the editor.
func (m *Model) Close() {
	m.active = false
	m.area.Blur()
}

// Active reports whether the editor is open.
func (m Model) Active() bool { return m.active }

// ShortHelp is the editing keys: the stop's keys would type. Once an esc
// has armed the discard, esc reads as what it does now.
func (m *Model) ShortHelp() []key.Binding {
	help := m.Keys.EditHelp()
	for i, b := range help {
		if slices.Equal(b.Keys(), m.Keys.Close.Keys()) {
			help[i] = common.Short(b, b.Help().Key, m.closes())
		}
	}
	return help
}

// closes is what Close does now: cancel, or discard the changes once a
// first esc asked.
func (m Model) closes() string {
	if m.discarding {
		return "discard changes"
	}
	return "cancel"
}

// Text returns the text being edited.
func (m Model) Text() string { return m.area.Value() }

// Problems returns what is wrong with the text: JSON syntax, then schema
// violations. None means Submit will accept it.
func (m Model) Problems() []string { return m.problems }

// SetSize sets the editor's outer size, border included.
func (m *Model) SetSize(width, height int) {
	m.Common.SetSize(width, height)
	m.layout()
}

// Update handles a key, a paste or the cursor's own messages while the
// editor is open. Submit (ctrl+s) accepts a valid value and closes the
// overlay; Close (esc) closes it, asking first when the text was changed
// (a second esc discards the changes); every other key edits the text,
// but for a first press of the key that opened the editor. The mouse
// does nothing here: a stray click must not lose the value.
func (m *Model) Update(msg tea.Msg) (common.Component, tea.Cmd) {
	if !m.active {
		return m, nil
	}
	switch msg := msg.(type) {
	case tea.MouseClickMsg, tea.MouseWheelMsg:
		return m, nil
	case tea.KeyPressMsg:
		discarding, opener := m.discarding, m.openedBy
		m.discarding, m.openedBy = false, ""
		if discarding != m.discarding || opener != "" {
			m.layout()
		}
		switch {
		case msg.String() == opener:
			return m, nil
		case key.Matches(msg, m.Keys.Close) && !discarding && m.area.Value() != m.opened:
			m.discarding = true
			m.layout()
			return m, nil
		case key.Matches(msg, m.Keys.Submit):
			if len(m.problems) > 0 {
				m.refused = true
				m.layout()
				return m, nil
			}
			m.Close()
			return m, common.CloseWith(m, Submitted{Value: m.value})
		case key.Matches(msg, m.Keys.Close):
			m.Close()
			return m, common.Close(m)
		}
	}
	var cmd tea.Cmd
	m.area, cmd = m.area.Update(msg)
	if m.area.Value() != m.checked {
		m.refused = false
		m.check()
		m.layout()
	}
	return m, cmd
}

// check reads the text as JSON and checks it against the schema.
func (m *Model) check() {
	text := m.area.Value()
	m.checked, m.value, m.problems = text, nil, nil
	if strings.TrimSpace(text) == "" {
		m.problems = []string{"empty: type a JSON value"}
		return
	}
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		m.problems = []string{syntaxProblem(text, err)}
		return
	}
	m.value = v
	for _, viol := range m.schema.Check(v) {
		m.problems = append(m.problems, viol.String())
	}
}

// syntaxProblem says where the JSON breaks, as line:col (both from 1, the
// column in characters).
func syntaxProblem(text string, err error) string {
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return err.Error()
	}
	// Offset counts the bad character itself; when the text ended too
	// soon, there was none to count.
	at := int(se.Offset)
	if !strings.HasPrefix(se.Error(), "unexpected end") {
		at--
	}
	at = min(max(at, 0), len(text))
	before := text[:at]
	line := strings.Count(before, "\n") + 1
	col := len([]rune(before[strings.LastIndex(before, "\n")+1:])) + 1
	return strconv.Itoa(line) + ":" + strconv.Itoa(col) + " " + err.Error()
}

// status are the lines under the text: the problems (or that there are
// none), the refusal, and who reads the value.
func (m Model) status() []string {
	t := m.Theme
	var lines []string
	switch {
	case len(m.problems) > 0:
		for i, p := range m.problems {
			if i == mostProblems-1 && len(m.problems) > mostProblems {
				lines = append(lines, t.Problem.Render(fmt.Sprintf(" ✗ …and %d more", len(m.problems)-i)))
				break
			}
			lines = append(lines, t.Problem.Render(" ✗ ")+t.Text.Render(p))
		}
		if m.refused {
			lines = append(lines, t.Problem.Render(" "+Refused))
		}
	case m.schemaErr != nil:
		lines = append(lines, t.Note.Render(" ℹ ")+t.Text.Render("valid JSON; the schema here does not compile, so nothing more is checked: "+m.schemaErr.Error()))
	case m.schema != nil:
		lines = append(lines, t.Valid.Render(" ✓ matches the schema"))
	default:
		lines = append(lines, t.Valid.Render(" ✓ valid JSON")+t.Muted.Render(" (no schema applies here)"))
	}
	if len(m.readers) > 0 {
		// Wrapped, never cut: a reader past the box's edge would read as
		// none.
		const label = "read by: "
		for i, l := range common.Wrap(label+strings.Join(m.readers, ", "), max(m.Width-4, 1), ",") {
			if i == 0 {
				l = t.Muted.Render(label) + t.Text.Render(strings.TrimPrefix(l, label))
			} else {
				l = t.Text.Render(l)
			}
			lines = append(lines, " "+l)
		}
	}
	switch {
	case m.discarding:
		lines = append(lines, t.Problem.Render(" "+m.Keys.Close.Help().Key+" again discards your changes")+t.Muted.Render(" · "+m.Keys.Submit.Help().Key+" accepts · any other key goes on editing"))
	case m.openedBy != "":
		lines = append(lines, t.Muted.Render(" "+m.openedBy+" opened the editor: pressed again here, it is not typed"))
	}
	return lines
}

// layout styles the text area and gives it the inside of the frame less
// the status lines.
func (m *Model) layout() {
	m.area.SetStyles(m.styles())
	inner := max(m.Width-2, 1)
	m.area.SetWidth(inner)
	m.area.SetHeight(max(m.Height-2-len(m.head())-len(m.status()), 1))
}

// head is the lines above the value: about, wrapped to the box, never cut.
func (m Model) head() []string {
	if m.about == "" {
		return nil
	}
	var lines []string
	for _, l := range common.Wrap(m.about, max(m.Width-4, 1), "") {
		lines = append(lines, " "+m.Theme.Strong.Render(l))
	}
	return lines
}

// styles are the text area's styles in the theme, with a cursor that does
// not blink (a steady reverse-video cell, visible without colour).
func (m Model) styles() textarea.Styles {
	t := m.Theme
	state := textarea.StyleState{Text: t.Text, LineNumber: t.Muted, CursorLineNumber: t.Strong,
		EndOfBuffer: t.Muted, Placeholder: t.Muted, Prompt: t.Muted}
	s := textarea.Styles{Focused: state, Blurred: state}
	s.Cursor.Blink = false
	if t.Color {
		s.Cursor.Color = t.BorderOn.GetForeground()
	}
	return s
}

// View draws the editor, border included, at exactly its size: the text
// with line numbers, then the status lines.
func (m Model) View() string {
	t := m.Theme
	inner, height := max(m.Width-2, 0), max(m.Height-2, 0)
	head, status := m.head(), m.status()
	area := m.area
	area.SetStyles(m.styles())
	textHeight := max(height-len(head)-len(status), 0)
	lines := append(head, common.Block(strings.Split(area.View(), "\n"), inner, textHeight)...)
	lines = append(lines, status...)
	footer := t.Muted.Render(m.Keys.Submit.Help().Key + " accept · " + m.Keys.Close.Help().Key + " " + m.closes())
	return common.Frame(t, m.Width, m.Height, t.PaneTitle(m.title, true), footer, true, lines)
}
