package timeview

import (
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/stepwise-dev/stepwise/debugger/timeline"
	"github.com/stepwise-dev/stepwise/tui/common"
	"github.com/stepwise-dev/stepwise/tui/format"
)

// Mode is what the pane draws of the run.
type Mode int

// The modes.
const (
	ModeTimeline Mode = iota // the waterfall
	ModeSpend                // cost and tokens by step and by model
)

// maxZoom is the deepest zoom: a fiftieth of a microsecond a column on a
// run of a second is past anything a person reads.
const maxZoom = 1 << 20

// Model is the workbench's Timeline and Spend pane for the run on show:
// the waterfall, zoomed and panned with keys and the mouse, its selected
// bar the run tree's selected row; or the run's spend as bars.
type Model struct {
	common.Common
	common.Focusable
	mode Mode
	tl   *timeline.Timeline
	// selected is the selected bar's path, which the run tree selects too.
	selected string
	scroll   common.Scroll
	// zoom is how many times the window is narrower than the run, and
	// from where it starts, from the run's start.
	zoom float64
	from time.Duration
	// spendScroll is how far the spend's lines are scrolled;
	// spendSelected is its selected row (spendEntry.key); unfolded are
	// the groups of map items listed whole, by label.
	spendScroll   common.Scroll
	spendSelected string
	unfolded      map[string]bool
	// cells is the buffer rows are drawn in, kept from frame to frame.
	cells []timeline.Cell
}

// New returns the pane, on no run.
func New(c common.Common) Model { return Model{Common: c, zoom: 1} }

// SetMode shows the waterfall or the spend.
func (m *Model) SetMode(mode Mode) { m.mode = mode }

// Mode is what the pane shows.
func (m Model) Mode() Mode { return m.mode }

// Show puts the pane on a run's timeline, the whole of it in view.
func (m *Model) Show(tl *timeline.Timeline) {
	if tl != m.tl {
		m.zoom, m.from, m.scroll, m.spendScroll, m.spendSelected, m.unfolded = 1, 0, common.Scroll{}, common.Scroll{}, "", nil
	}
	m.tl = tl
}

// Selected is the path of the selected bar.
func (m Model) Selected() string { return m.selected }

// Select selects the bar at path, and scrolls it into view; a path with no
// bar (a pending step) leaves the selection where it was.
func (m *Model) Select(path string) {
	if m.tl == nil {
		return
	}
	i := m.tl.Index(path)
	if i < 0 {
		return
	}
	moved := path != m.selected
	m.selected = path
	m.scroll = m.scroll.Follow(i, m.rowsHigh(), m.tl.Len())
	if moved {
		m.reveal()
	}
}

// reveal pans a zoomed window to the selected bar when none of it is in
// view, its middle in the window's. A bar in view, even in part, leaves
// the window where it is, and so does a selection that did not move:
// the run tree selects its row every frame, and a pan away from it holds.
func (m *Model) reveal() {
	b, ok := m.tl.Bar(m.selected)
	if !ok || m.zoom == 1 {
		return
	}
	end := b.End
	if end.IsZero() {
		end = m.tl.Now()
	}
	w := m.window()
	if end.After(w.Start) && b.Start.Before(w.Start.Add(w.Span)) || end.Equal(w.Start) {
		return
	}
	mid := b.Start.Add(end.Sub(b.Start) / 2).Sub(m.tl.Start())
	m.from = mid - w.Span/2
	m.clampPan()
}

// rowsHigh is how many bars fit: the frame and the axis line take three.
func (m Model) rowsHigh() int { return max(m.Height-3, 1) }

// window is the stretch of the run in view.
func (m Model) window() timeline.Window {
	whole := m.tl.Whole()
	span := time.Duration(float64(whole.Span) / m.zoom)
	from := min(max(m.from, 0), whole.Span-span)
	return timeline.Window{Start: whole.Start.Add(from), Span: max(span, time.Microsecond)}
}

// Zoom narrows (factor above 1) or widens the window about the middle of
// the selected bar, so that what one zooms in on stays in view, or about
// its own middle when no bar is selected.
func (m *Model) Zoom(factor float64) {
	if m.tl == nil {
		return
	}
	w := m.window()
	mid := w.Start.Add(w.Span / 2).Sub(m.tl.Start())
	if b, ok := m.tl.Bar(m.selected); ok {
		end := b.End
		if end.IsZero() {
			end = m.tl.Now()
		}
		mid = b.Start.Add(end.Sub(b.Start) / 2).Sub(m.tl.Start())
	}
	m.zoom = min(max(m.zoom*factor, 1), maxZoom)
	span := time.Duration(float64(m.tl.Whole().Span) / m.zoom)
	m.from = mid - span/2
	m.clampPan()
}

// Pan moves the window by eighths of its width: right for positive.
func (m *Model) Pan(eighths int) {
	if m.tl == nil {
		return
	}
	m.from = m.window().Start.Sub(m.tl.Start()) + time.Duration(eighths)*m.window().Span/8
	m.clampPan()
}

func (m *Model) clampPan() {
	whole := m.tl.Whole().Span
	span := time.Duration(float64(whole) / m.zoom)
	m.from = min(max(m.from, 0), whole-span)
}

// Update answers the pane's keys: up and down select a bar, left and
// right pan, + and - zoom; on the spend, up and down select a row, right
// and left unfold and fold a map's items.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok || m.tl == nil {
		return m, nil
	}
	keys := m.Keys
	switch {
	case m.mode == ModeSpend:
		m.updateSpend(k)
	case key.Matches(k, keys.ZoomIn):
		m.Zoom(2)
	case key.Matches(k, keys.ZoomOut):
		m.Zoom(0.5)
	case key.Matches(k, keys.Collapse):
		m.Pan(-1)
	case key.Matches(k, keys.Expand):
		m.Pan(1)
	default:
		if d, ok := keys.Movement(k, m.rowsHigh(), m.tl.Len()); ok {
			i := max(m.tl.Index(m.selected), 0)
			i = min(max(i+d, 0), m.tl.Len()-1)
			if bars := m.tl.Bars(i, 1); len(bars) == 1 {
				m.Select(bars[0].Path)
			}
		}
	}
	return m, nil
}

// ClickAt selects the bar drawn at line y of the pane (0 is the top
// border), and reports whether there was one.
func (m *Model) ClickAt(y int) bool {
	if m.tl != nil && m.mode == ModeSpend {
		return m.clickSpend(y)
	}
	line := y - 2 // the border and the axis
	if m.tl == nil || line < 0 || line >= m.rowsHigh() {
		return false
	}
	bars := m.tl.Bars(m.scroll.Offset+line, 1)
	if len(bars) == 0 {
		return false
	}
	m.Select(bars[0].Path)
	return true
}

// Wheel scrolls the rows; a sideways turn pans, and with ctrl held the
// wheel zooms.
func (m *Model) Wheel(msg tea.MouseWheelMsg) {
	if m.tl == nil {
		return
	}
	switch {
	case msg.Mod.Contains(tea.ModCtrl) && msg.Button == tea.MouseWheelUp:
		m.Zoom(2)
	case msg.Mod.Contains(tea.ModCtrl) && msg.Button == tea.MouseWheelDown:
		m.Zoom(0.5)
	case msg.Button == tea.MouseWheelLeft:
		m.Pan(-1)
	case msg.Button == tea.MouseWheelRight:
		m.Pan(1)
	case m.mode == ModeSpend:
		// View clamps it to the lines there are.
		m.spendScroll.Offset = max(m.spendScroll.Offset+common.WheelDelta(msg), 0)
	default:
		m.scroll.Offset += common.WheelDelta(msg)
		m.scroll = m.scroll.Clamp(m.rowsHigh(), m.tl.Len())
	}
}

// View draws the pane at its size.
func (m *Model) View() string {
	title := "Timeline"
	if m.mode == ModeSpend {
		title = "Spend"
	}
	var body []string
	footer := ""
	switch {
	case m.tl == nil || m.tl.Start().IsZero():
		body = []string{m.Theme.Muted.Render("no run yet: r runs the plan")}
	case m.mode == ModeSpend:
		body, footer = m.spendView(m.Width - 2)
	default:
		body = m.timelineLines(m.Width - 2)
		footer = m.Theme.Muted.Render(m.zoomWords())
	}
	return common.Frame(m.Theme, m.Width, m.Height, m.Theme.PaneTitle(title, m.Focused()), footer, m.Focused(), body)
}

// zoomWords says how much of the run is in view.
func (m Model) zoomWords() string {
	w := m.window()
	from := w.Start.Sub(m.tl.Start())
	words := format.Duration(from) + "–" + format.Duration(from+w.Span) + " · +/- zoom"
	if m.zoom == 1 {
		words = "whole run · +/- zoom"
	}
	if m.Focused() {
		// The arrows pan only here: in the tree they fold.
		words += " · ←/→ pan"
	}
	return words
}

// paint is a style's escape sequences around a line of text, taken once a
// frame: a row's runs of cells are painted with them rather than each
// rendered through lipgloss, which measures and pads what it renders.
type paint struct{ open, close string }

func paintOf(s lipgloss.Style) paint {
	r := s.Render("x")
	i := strings.IndexByte(r, 'x')
	return paint{r[:i], r[i+1:]}
}

// cellPaints are the paints of each kind of cell, of a bar that ran and
// of one that failed.
type cellPaints [2][len(Glyphs)]paint

func paintsOf(t *common.Theme) *cellPaints {
	var p cellPaints
	for c := range Glyphs {
		p[0][c] = paintOf(cellStyle(t, timeline.Cell(c), false))
		p[1][c] = paintOf(cellStyle(t, timeline.Cell(c), true))
	}
	return &p
}

// row writes a row's cells, painted. Runs of one cell kind are painted
// at once: a frame paints a few dozen runs, not a few thousand cells.
func (p *cellPaints) row(sb *strings.Builder, cells []timeline.Cell, failed bool) {
	f := 0
	if failed {
		f = 1
	}
	for i := 0; i < len(cells); {
		j := i
		for j < len(cells) && cells[j] == cells[i] {
			j++
		}
		pt := p[f][cells[i]]
		sb.WriteString(pt.open)
		for range j - i {
			sb.WriteRune(Glyphs[cells[i]])
		}
		sb.WriteString(pt.close)
		i = j
	}
}

// cellStyle is the style of a row's cells of a kind.
func cellStyle(t *common.Theme, c timeline.Cell, failed bool) lipgloss.Style {
	switch {
	case failed && c != timeline.CellNone:
		return t.Problem
	case c == timeline.CellModel:
		return t.Key
	case c == timeline.CellTool:
		return t.Literal
	case c == timeline.CellHeld:
		return t.Glyph
	}
	return t.Muted
}

func (m *Model) timelineLines(width int) []string {
	w := m.window()
	rows := m.rowsHigh()
	m.scroll = m.scroll.Clamp(rows, m.tl.Len())
	bars := m.tl.Bars(m.scroll.Offset, rows)
	lw := labelWidth(bars, width)
	bw := max(width-lw, 1)
	lines := make([]string, 0, len(bars)+1)
	lines = append(lines, m.Theme.Muted.Render(strings.Repeat(" ", lw)+Axis(w, m.tl.Start(), bw)))
	paints := paintsOf(m.Theme)
	var sb strings.Builder
	for _, b := range bars {
		m.cells = w.Cells(m.cells, b, m.tl.Now(), bw)
		sb.Reset()
		label := Label(b, lw)
		style := m.Theme.RowStyle(b.Path == m.selected, m.Focused())
		if b.Failed {
			label = m.Theme.Problem.Inherit(style).Render(label)
		} else {
			label = style.Render(label)
		}
		sb.WriteString(label)
		paints.row(&sb, m.cells, b.Failed)
		lines = append(lines, sb.String())
	}
	return lines
}
