package common

import (
	"image/color"

	"charm.land/bubbles/v2/textinput"
	"charm.land/lipgloss/v2"
)

// Theme holds every style the workbench draws with. Colours adapt to the
// terminal's background (Dark) and are dropped entirely when Color is false
// (NO_COLOR): everything that matters then still shows through weight,
// reverse video and border shape, never through colour alone.
type Theme struct {
	Dark  bool
	Color bool

	App      lipgloss.Style // the application name in the header
	Title    lipgloss.Style // a pane title
	TitleOn  lipgloss.Style // the title of the focused pane
	Heading  lipgloss.Style // a section heading in the detail pane
	Muted    lipgloss.Style // secondary text: tool names, labels, hints
	Text     lipgloss.Style // plain text
	Strong   lipgloss.Style // ids and names
	Border   lipgloss.Style // the frame of an unfocused pane
	BorderOn lipgloss.Style // the frame of the focused pane

	Trunk lipgloss.Style // the tree's top-level pipes
	Then  lipgloss.Style // pipes and heads of a decide's then branch
	Else  lipgloss.Style // pipes and heads of a decide's else branch
	Do    lipgloss.Style // pipes and heads of a map or reduce body
	Glyph lipgloss.Style // a control step's glyph in its junction

	Problem lipgloss.Style // ✗ and problem counts
	Note    lipgloss.Style // ℹ
	Valid   lipgloss.Style // ✓

	Key      lipgloss.Style // a mapping key in a rendered value
	Template lipgloss.Style // a {{tag}} inside a template string
	Literal  lipgloss.Style // numbers, booleans and null

	Selected     lipgloss.Style // the selected row of the focused pane
	SelectedBlur lipgloss.Style // the selected row of an unfocused pane
	Tab          lipgloss.Style // a plan tab
	TabOn        lipgloss.Style // the current plan tab
}

// NewTheme builds the theme for a dark or light background, with or without
// colour.
func NewTheme(dark, withColor bool) *Theme {
	ld := lipgloss.LightDark(dark)
	pick := func(light, darkHex string) color.Color {
		if !withColor {
			return nil
		}
		return ld(lipgloss.Color(light), lipgloss.Color(darkHex))
	}
	fg := func(c color.Color) lipgloss.Style {
		s := lipgloss.NewStyle()
		if c != nil {
			s = s.Foreground(c)
		}
		return s
	}

	var (
		accent   = pick("#5A56E0", "#9D99FF")
		muted    = pick("#7A7A7A", "#8A8A8A")
		trunk    = pick("#A8A8A8", "#5C5C5C")
		border   = pick("#BDBDBD", "#4A4A4A")
		blue     = pick("#1F6FEB", "#58A6FF")
		magenta  = pick("#B3259D", "#E07BD8")
		cyan     = pick("#0E7C86", "#4FD1D9")
		yellow   = pick("#9A6700", "#E3B341")
		red      = pick("#CF222E", "#FF6B6B")
		green    = pick("#1A7F37", "#56D364")
		purple   = pick("#8250DF", "#D2A8FF")
		orange   = pick("#953800", "#FFA657")
		keyBlue  = pick("#0550AE", "#A5D6FF")
		selectBg = pick("#DDE3F5", "#2F3452")
	)

	t := &Theme{Dark: dark, Color: withColor}
	t.App = fg(accent).Bold(true)
	t.Title = fg(muted)
	t.TitleOn = fg(accent).Bold(true)
	t.Heading = fg(accent).Bold(true)
	t.Muted = fg(muted)
	t.Text = lipgloss.NewStyle()
	t.Strong = lipgloss.NewStyle().Bold(true)
	t.Border = fg(border)
	t.BorderOn = fg(accent)
	t.Trunk = fg(trunk)
	t.Then = fg(blue)
	t.Else = fg(magenta)
	t.Do = fg(cyan)
	t.Glyph = fg(yellow).Bold(true)
	t.Problem = fg(red).Bold(true)
	t.Note = fg(blue)
	t.Valid = fg(green).Bold(true)
	t.Key = fg(keyBlue)
	t.Template = fg(purple).Bold(true)
	t.Literal = fg(orange)
	if withColor {
		t.Selected = lipgloss.NewStyle().Background(selectBg).Bold(true)
	} else {
		t.Selected = lipgloss.NewStyle().Reverse(true)
	}
	t.SelectedBlur = lipgloss.NewStyle().Bold(true)
	t.Tab = fg(muted)
	t.TabOn = fg(accent).Bold(true).Underline(true)
	return t
}

// RowStyle is the style a row of a list is drawn on: plain, or the
// selection's, which is stronger in the focused pane than in the others.
func (t *Theme) RowStyle(selected, focused bool) lipgloss.Style {
	switch {
	case !selected:
		return lipgloss.NewStyle()
	case focused:
		return t.Selected
	}
	return t.SelectedBlur
}

// InputStyles are the styles of a one-line text field in the theme: muted
// while the field is blurred, and a cursor that does not blink (a steady
// reverse-video cell, visible without colour, in the focus colour when
// there is colour).
func (t *Theme) InputStyles() textinput.Styles {
	s := textinput.Styles{
		Focused: textinput.StyleState{Text: t.Text, Placeholder: t.Muted, Suggestion: t.Muted, Prompt: t.Strong},
		Blurred: textinput.StyleState{Text: t.Muted, Placeholder: t.Muted, Suggestion: t.Muted, Prompt: t.Muted},
	}
	s.Cursor.Blink = false
	if t.Color {
		s.Cursor.Color = t.BorderOn.GetForeground()
	}
	return s
}

// ColorEnabled reports whether colour should be used, following the NO_COLOR
// convention (https://no-color.org): any non-empty value turns colour off.
// getenv is os.Getenv in production and a map lookup in tests.
func ColorEnabled(getenv func(string) string) bool {
	return getenv("NO_COLOR") == ""
}
