package catalog

import (
	"strconv"
	"strings"

	"github.com/stepwise-dev/stepwise/tui/common"
)

// layout is where the parts of the overlay sit, in cells from its top left
// corner: the filter line and the list on the left (or on top, when the
// overlay is narrow), the selected tool's detail on the right (or below).
type layout struct {
	wide         bool
	filter       bool // the filter line is shown above the list
	listW        int  // the list's width; it starts at x 1
	listY, listH int
	infoX, infoY int
	infoW, infoH int
}

// Below this inner width the detail goes under the list rather than beside
// it.
const wideFrom = 64

func (m Model) layout() layout {
	iw, ih := max(m.Width-2, 0), max(m.Height-2, 0)
	l := layout{filter: m.editing || m.filter.Value() != ""}
	f := 0
	if l.filter {
		f = 1
	}
	if iw >= wideFrom {
		longest := 0
		for _, t := range m.tools {
			longest = max(longest, common.TextWidth(t.Name))
		}
		l.wide = true
		l.listW = min(max(longest+4, 24), iw/2)
		l.listY, l.listH = 1+f, max(ih-f, 0)
		// A rule and a space separate the detail from the list.
		l.infoX, l.infoY = 1+l.listW+2, 1
		l.infoW, l.infoH = max(iw-l.listW-2, 0), ih
		return l
	}
	top := ih / 2
	l.listW = iw
	l.listY, l.listH = 1+f, max(top-f, 0)
	l.infoX, l.infoY = 2, 1+top+1
	l.infoW, l.infoH = max(iw-1, 0), max(ih-top-1, 0)
	return l
}

// View draws the overlay at exactly its size.
func (m Model) View() string {
	t := m.Theme
	l := m.layout()
	iw, ih := max(m.Width-2, 0), max(m.Height-2, 0)

	var left []string
	if l.filter {
		left = append(left, m.filterLine(l.listW))
	}
	left = append(left, m.listLines(l.listW, l.listH)...)
	info := m.info(l.infoW)
	info = info[min(m.detail.Offset, len(info)):]

	body := make([]string, 0, ih)
	if l.wide {
		rule := t.Border.Render("│")
		for i := range ih {
			body = append(body, common.Fit(at(left, i), l.listW)+rule+" "+common.Fit(at(info, i), l.infoW))
		}
	} else {
		body = append(body, common.Block(left, iw, l.infoY-2)...)
		body = append(body, t.Border.Render(strings.Repeat("─", iw)))
		for i := range l.infoH {
			body = append(body, " "+common.Fit(at(info, i), l.infoW))
		}
	}

	title := t.PaneTitle("Tools", true)
	switch n := len(m.shown); {
	case m.filter.Value() != "":
		title += t.Muted.Render(" · " + strconv.Itoa(n) + " of " + strconv.Itoa(len(m.tools)))
	default:
		title += t.Muted.Render(" · " + strconv.Itoa(n))
	}
	return common.Frame(t, m.Width, m.Height, title, m.footer(), true, body)
}

// at returns line i, or "" past the end.
func at(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return ""
}

// footer is the selection's place and the keys that act here.
func (m Model) footer() string {
	k := m.Keys
	add, file := k.AddStep.Help().Key+" "+m.addHint(), m.plan+"'s file"
	if m.plan == "" {
		file = "the plan's file"
	}
	if m.addRefusal != "" {
		add = m.addRefusal
	}
	hints := []string{add, k.Search.Help().Key + " filter", k.Close.Help().Key + " close"}
	switch t, ok := m.Selected(); {
	case ok && m.asked && m.addRefusal != "":
		hints = []string{m.addRefusal, k.Close.Help().Key + " close"}
	case ok && m.asked:
		hints = []string{k.AddStep.Help().Key + " adds a step calling " + t.Name + " to " + file, k.Close.Help().Key + " close"}
	}
	if m.editing {
		hints = []string{k.Jump.Help().Key + " keep the filter", k.Close.Help().Key + " clear it"}
	}
	s := strings.Join(hints, " · ")
	if pos := common.Position(m.sel, len(m.shown)); pos != "" {
		s = pos + "  " + s
	}
	return m.Theme.Muted.Render(s)
}

// filterLine is the filter box while it is open, the filter's words while
// it is closed.
func (m Model) filterLine(width int) string {
	t := m.Theme
	if m.editing {
		in := m.filter
		in.SetStyles(m.Theme.InputStyles())
		return common.Fit(in.View(), width)
	}
	return common.Fit(t.Muted.Render(m.filter.Prompt)+t.Text.Render(m.filter.Value()), width)
}

// listLines draws the visible rows of the list, each width wide.
func (m Model) listLines(width, height int) []string {
	t := m.Theme
	if len(m.rows) == 0 {
		msg := " no tools"
		if m.filter.Value() != "" {
			msg = " no tool matches the filter"
		}
		return []string{t.Muted.Render(common.Fit(msg, width))}
	}
	selected := -1
	if len(m.shown) > 0 {
		selected = m.shown[m.sel]
	}
	var out []string
	end := min(m.list.Offset+height, len(m.rows))
	for i := m.list.Offset; i < end; i++ {
		r := m.rows[i]
		if r.heading != "" {
			l := common.NewLine(width)
			l.Add(" ", common.Paint{})
			l.Add(r.heading, common.PaintOf(t.Heading))
			l.Add(" "+strconv.Itoa(r.count), common.PaintOf(t.Muted))
			out = append(out, common.Fit(l.String(), width))
			continue
		}
		out = append(out, m.toolRow(r, width, i == selected))
	}
	return out
}

// toolRow draws "▸✗ name": the selection's gutter, a mark for a tool that
// cannot run here, the name.
func (m Model) toolRow(r row, width int, selected bool) string {
	t := m.Theme
	tool := m.tools[r.tool]
	text, mark, name := t.Text, t.Problem, t.Text
	gutter := " "
	if selected {
		gutter = "▸"
		text, mark, name = t.Selected, t.Problem.Inherit(t.Selected), t.Selected
	}
	l := common.NewLine(width)
	l.Add(gutter, common.PaintOf(text))
	if tool.Unusable != "" {
		l.Add("✗", common.PaintOf(mark))
	} else {
		l.Add(" ", common.PaintOf(text))
	}
	l.Add(" "+tool.Name, common.PaintOf(name))
	// The selection's background reaches the rule.
	l.PadTo(width, common.PaintOf(text))
	return l.String()
}
