// Package help is the help overlay: every key the workbench answers to,
// read from the keymap itself so it can never list a key the code does not
// handle, plus what the mouse does.
package help

import (
	"strings"

	"charm.land/bubbles/v2/key"
	"github.com/charmbracelet/x/ansi"

	"github.com/stepwise-dev/stepwise/tui/common"
)

// Model is the help overlay. Its size is the space it may take: the window.
type Model struct {
	common.Common
}

// New returns the overlay.
func New(c common.Common) Model { return Model{Common: c} }

// SetSize sets the space the overlay may take.
func (m *Model) SetSize(width, height int) { m.Common.SetSize(width, height) }

// group is a titled column section: key and description pairs.
type group struct {
	title string
	pairs [][2]string
}

func (m Model) groups() []group {
	var out []group
	for _, g := range m.Keys.Groups() {
		out = append(out, group{g.Title, pairs(g.Bindings)})
	}
	out = append(out, group{"Mouse", [][2]string{
		{"click", "select a row, pane or tab"},
		{"wheel", "scroll the pane under it"},
	}})
	return out
}

func pairs(bs []key.Binding) [][2]string {
	var out [][2]string
	for _, b := range bs {
		if b.Enabled() {
			out = append(out, [2]string{b.Help().Key, b.Help().Desc})
		}
	}
	return out
}

// column lays groups out one under another, keys aligned.
func (m Model) column(groups []group, keyW int) []string {
	t := m.Theme
	var lines []string
	for i, g := range groups {
		if i > 0 {
			lines = append(lines, "")
		}
		lines = append(lines, t.Heading.Render(g.title))
		for _, p := range g.pairs {
			lines = append(lines, t.Key.Render(common.Fit(p[0], keyW))+"  "+t.Text.Render(p[1]))
		}
	}
	return lines
}

func width(lines []string) int {
	w := 0
	for _, l := range lines {
		w = max(w, ansi.StringWidth(l))
	}
	return w
}

// View draws the overlay box, no larger than the overlay's size: two
// columns when they fit, one otherwise.
func (m Model) View() string {
	gs := m.groups()
	keyW := 0
	for _, g := range gs {
		for _, p := range g.pairs {
			keyW = max(keyW, ansi.StringWidth(p[0]))
		}
	}
	// Two columns of about the same height: moving and the mouse on the
	// left, everything else on the right.
	n := len(gs)
	leftGroups := []group{gs[0], gs[n-1]}
	rightGroups := gs[1 : n-1]
	left, right := m.column(leftGroups, keyW), m.column(rightGroups, keyW)
	const gap = "    "
	var body []string
	if lw, rw := width(left), width(right); lw+len(gap)+rw+4 <= m.Width {
		for i := 0; i < max(len(left), len(right)); i++ {
			var l, r string
			if i < len(left) {
				l = left[i]
			}
			if i < len(right) {
				r = right[i]
			}
			body = append(body, " "+common.Fit(l, lw)+gap+r)
		}
	} else {
		for _, l := range m.column(gs, keyW) {
			body = append(body, " "+l)
		}
	}
	body = append(body, "", " "+m.Theme.Muted.Render("? or esc closes this help"))

	w := min(width(body)+3, m.Width)
	h := min(len(body)+2, m.Height)
	title := m.Theme.PaneTitle("Keys", true)
	return strings.TrimRight(common.Frame(m.Theme, w, h, title, "", true, body), "\n")
}
