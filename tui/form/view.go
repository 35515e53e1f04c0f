package form

import (
	"strings"

	"charm.land/lipgloss/v2"

	"github.com/stepwise-dev/stepwise/tui/common"
)

// lines lays the form out for an inner width: the violations that belong
// to no field, then each field as its label, description, entry and
// problems, a blank line between fields. spans holds each field's first
// line and the line after its last.
func (m Model) lines(width int) (lines []string, spans [][2]int) {
	t := m.Theme
	wrapped := func(st lipgloss.Style, text, indent string) {
		room := max(width-len(indent), 1)
		for _, l := range common.Wrap(text, room, "") {
			lines = append(lines, indent+st.Render(l))
		}
	}
	if len(m.fields) == 0 {
		wrapped(t.Muted, "This plan's input_schema names no inputs; "+m.Keys.Submit.Help().Key+" "+m.startWord()+"s it with none.", " ")
	}
	for _, g := range m.general {
		wrapped(t.Problem, "✗ "+g, " ")
	}
	if len(m.general) > 0 || len(m.fields) == 0 {
		lines = append(lines, "")
	}
	for i, f := range m.fields {
		start := len(lines)
		focused := i == m.focus
		l := common.NewLine(width)
		if focused {
			l.Add("▸ ", common.PaintOf(t.Strong))
		} else {
			l.Add("  ", common.Paint{})
		}
		l.Add(f.name, common.PaintOf(t.Strong))
		if f.required {
			l.Add(" *", common.PaintOf(t.Problem))
		}
		l.Add("  "+f.typeHint(), common.PaintOf(t.Muted))
		lines = append(lines, l.String())
		if f.description != "" {
			wrapped(t.Muted, f.description, "  ")
		}
		lines = append(lines, strings.Repeat(" ", entryIndent)+m.entry(f, focused, width-entryIndent))
		if f.entryErr != "" {
			wrapped(t.Problem, "✗ "+f.entryErr, strings.Repeat(" ", entryIndent))
		}
		for _, p := range f.problems {
			wrapped(t.Problem, "✗ "+p, strings.Repeat(" ", entryIndent))
		}
		spans = append(spans, [2]int{start, len(lines)})
		lines = append(lines, "")
	}
	return lines, spans
}

// entry draws a field's value: the text field, a check box for a boolean,
// the chosen value between arrows for an enum.
func (m Model) entry(f field, focused bool, width int) string {
	t := m.Theme
	var text, hint string
	switch f.kind {
	case kindBool:
		text = [3]string{"[ ] not set", "[x] true", "[ ] false"}[f.choice]
		hint = m.Keys.Toggle.Help().Key + " changes it"
	case kindEnum:
		text = "‹ not set ›"
		if f.choice >= 0 {
			text = "‹ " + valueText(f.choices[f.choice], kindAny) + " ›"
		}
		hint = m.Keys.Collapse.Help().Key + " " + m.Keys.Expand.Help().Key + " choose"
	default:
		if f.selected && focused {
			// Selected, the text is drawn as a selection, and where it
			// came from said beside it.
			from := "default"
			if f.lastRun {
				from = "last run's value"
			}
			return common.Clip(t.Selected.Render(f.input.Value())+"  "+t.Muted.Render(from+": typing replaces it"), width)
		}
		in := f.input
		in.SetStyles(m.inputStyles())
		return common.Fit(in.View(), width)
	}
	if focused {
		// Reverse video marks the focused choice without colour.
		return common.Clip(t.Selected.Render(text)+"  "+t.Muted.Render(hint), width)
	}
	return common.Clip(t.Text.Render(text), width)
}

// NeededHeight is how many lines the form needs at width, its frame
// included: a short form draws in a short box.
func (m Model) NeededHeight(width int) int {
	lines, _ := m.lines(max(width-2, 0))
	return len(lines) + 2
}

// View draws the form at its width and the height its fields need, up to
// its size: the fields, scrolled to keep the focused one in view, in a
// frame titled with the form's title and the keys that act here at its
// foot.
func (m Model) View() string {
	if need := m.NeededHeight(m.Width); need < m.Height {
		m.SetSize(m.Width, need)
	}
	t := m.Theme
	lines, _ := m.lines(m.innerWidth())
	lines = lines[min(m.scroll.Offset, len(lines)):]
	k := m.Keys
	footer := t.Muted.Render(k.Submit.Help().Key + " " + m.startWord() + " · " + k.NextPane.Help().Key + " next field · " + k.Close.Help().Key + " cancel")
	return common.Frame(t, m.Width, m.Height, t.PaneTitle(m.title, true), footer, true, lines)
}
