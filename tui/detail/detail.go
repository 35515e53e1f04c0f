// Package detail is the detail pane: everything about the selected row of
// the tree, from where it is written to who reads its result, scrollable
// when it is longer than the pane.
package detail

import (
	tea "charm.land/bubbletea/v2"

	"github.com/stepwise-dev/stepwise/debugger/workspace"
	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/tui/common"
	"github.com/stepwise-dev/stepwise/tui/tree"
)

// Model is the detail pane.
type Model struct {
	common.Common
	common.Focusable

	doc      workspace.Document
	docIndex int
	row      tree.Row
	shown    bool

	// readers holds plans.StepReaders of each document, computed once rather
	// than walking the whole plan on every move of the selection.
	readers map[int]map[string][]plans.Reference

	lines  []string // the rendered content, rebuilt when what it shows changes
	scroll common.Scroll
}

// New returns an empty detail pane.
func New(c common.Common) Model {
	return Model{Common: c, readers: map[int]map[string][]plans.Reference{}}
}

// Show makes the pane describe row of document doc (index docIndex). It does
// nothing when that row is already shown, so the scroll position survives
// messages that leave the selection where it is.
func (m *Model) Show(doc workspace.Document, docIndex int, row tree.Row) {
	if m.shown && m.docIndex == docIndex && m.row.Index == row.Index {
		return
	}
	m.doc, m.docIndex, m.row, m.shown = doc, docIndex, row, true
	if _, ok := m.readers[docIndex]; !ok && doc.Plan != nil {
		m.readers[docIndex] = plans.StepReaders(doc.Plan)
	}
	m.scroll = common.Scroll{}
	m.rebuild()
}

// Forget makes the next Show lay the row out again, after the document it
// came from was read again.
func (m *Model) Forget() {
	m.shown = false
	delete(m.readers, m.docIndex)
}

// Row returns the row on show.
func (m Model) Row() tree.Row { return m.row }

// SetSize sets the pane's outer size and lays the content out again for
// the new width.
func (m *Model) SetSize(width, height int) {
	resized := width != m.Width
	m.Common.SetSize(width, height)
	if resized {
		m.rebuild()
	}
	m.scroll = m.scroll.Clamp(m.bodyHeight(), len(m.lines))
}

// Refresh lays the content out again, after the theme changed.
func (m *Model) Refresh() { m.rebuild() }

// Lines returns the laid-out content, all of it, styled.
func (m Model) Lines() []string { return m.lines }

// Offset returns the first line in view.
func (m Model) Offset() int { return m.scroll.Offset }

// Scroll moves the view by delta lines.
func (m *Model) Scroll(delta int) {
	m.scroll.Offset += delta
	m.scroll = m.scroll.Clamp(m.bodyHeight(), len(m.lines))
}

func (m Model) bodyHeight() int { return max(m.Height-2, 0) }

func (m *Model) rebuild() {
	if !m.shown || m.Width < 4 {
		m.lines = nil
		return
	}
	// One column of margin inside the border on the left.
	b := &builder{t: m.Theme, width: m.Width - 3}
	b.describe(m.doc, m.row, m.readers[m.docIndex])
	for i, l := range b.lines {
		b.lines[i] = " " + l
	}
	m.lines = b.lines
}

// Update scrolls on the movement keys; the page sends it keys only while
// the pane has focus.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return m, nil
	}
	if delta, ok := m.Keys.Movement(k, max(m.bodyHeight()-1, 1), len(m.lines)); ok {
		m.Scroll(delta)
	}
	return m, nil
}

// View draws the pane, border included, at exactly its size.
func (m Model) View() string {
	h := m.bodyHeight()
	end := min(m.scroll.Offset+h, len(m.lines))
	var body []string
	if m.scroll.Offset < end {
		body = m.lines[m.scroll.Offset:end]
	}
	footer := ""
	if len(m.lines) > h && h > 0 {
		// Overflowing content says where the view is: the last line in view
		// of all of them.
		footer = common.Position(end-1, len(m.lines))
	}
	title := m.Theme.PaneTitle("Detail", m.Focused())
	return common.Frame(m.Theme, m.Width, m.Height, title, footer, m.Focused(), body)
}
