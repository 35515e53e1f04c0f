// Package catalog is the tool catalog overlay: every tool a step can call,
// grouped by where it comes from, beside the selected tool's description
// and schemas. Browsing writes nothing: AddStep (a), which the footer
// names with the plan it writes to, asks the root to add a step calling
// the selected tool to that plan (Insert), and enter only shows the tool,
// saying which key adds it; / opens a filter box, and while it is open
// every key is the box's, Quit included. Page up and down scroll the tool's
// description; the mouse wheel scrolls the half last clicked.
package catalog

import (
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/tui/common"
)

// Insert asks the root to append a step calling Tool to the plan on show.
type Insert struct{ Tool plans.ToolInfo }

// row is one line of the list: a group's heading, or a tool (an index into
// Model.tools).
type row struct {
	heading string
	count   int
	tool    int
}

// Model is the catalog overlay.
type Model struct {
	common.Common
	tools []plans.ToolInfo

	rows    []row // the list as drawn, after the filter
	shown   []int // the rows that are tools, in list order
	sel     int   // index into shown
	list    common.Scroll
	detail  common.Scroll
	onInfo  bool // the wheel scrolls the detail: it was clicked last
	filter  textinput.Model
	editing bool // the filter box has the keys
	// plan is the name of the plan a step is added to, for the footer;
	// asked says enter was pressed on a tool, so the footer says, in
	// full, which key adds it.
	plan  string
	asked bool
	// addRefusal says why no step can be added now (a run of the plan
	// goes or is held at a stop); the footer says it where it would
	// offer AddStep. Empty when a step can be added.
	addRefusal string
}

// New returns an empty catalog.
func New(c common.Common) Model {
	in := textinput.New()
	in.Prompt = "/ "
	in.Placeholder = "filter by name, source or description"
	// Tab and the arrows are the catalog's, not the field's.
	in.KeyMap.AcceptSuggestion = key.NewBinding()
	in.KeyMap.NextSuggestion = key.NewBinding()
	in.KeyMap.PrevSuggestion = key.NewBinding()
	m := Model{Common: c, filter: in}
	// A steady cursor: focusing the box then starts no blinking, whose
	// messages would need routing here.
	m.filter.SetStyles(m.Theme.InputStyles())
	return m
}

// SetTools shows a catalog's tools (engine/tools Catalog.Tools, or Listing
// for the control steps too, plus MCP servers' tools where the root has
// them), with no filter, keeping the selected tool when it is still there.
func (m *Model) SetTools(tools []plans.ToolInfo) {
	selected := ""
	if t, ok := m.Selected(); ok {
		selected = t.Name
	}
	m.tools = tools
	m.filter.SetValue("")
	m.filter.Blur()
	m.editing = false
	m.rebuild()
	m.selectName(selected)
	m.fitFilter()
}

// SetPlan names the plan a step calling the selected tool is added to.
func (m *Model) SetPlan(name string) { m.plan = name }

// SetAddRefusal says why no step can be added now, or, empty, that one
// can: the footer and the key bar then stop offering AddStep.
func (m *Model) SetAddRefusal(why string) { m.addRefusal = why }

// SetSize sets the overlay's size, border included.
func (m *Model) SetSize(width, height int) {
	m.Common.SetSize(width, height)
	m.fitFilter()
	m.follow()
}

// fitFilter sizes the filter box to the list, whose width follows the
// longest tool name.
func (m *Model) fitFilter() {
	m.filter.SetWidth(max(m.layout().listW-common.TextWidth(m.filter.Prompt)-1, 1))
}

// ShortHelp is the catalog's keys, as its own footer names them: the
// catalog takes every key, so the page's would mislead (a aborts a run
// there, and adds a step here).
func (m *Model) ShortHelp() []key.Binding {
	k := m.Keys
	if m.editing {
		return []key.Binding{common.Short(k.Jump, k.Jump.Help().Key, "keep the filter"), common.Short(k.Close, k.Close.Help().Key, "clear it")}
	}
	help := []key.Binding{common.Short(k.Search, k.Search.Help().Key, "filter"), common.Short(k.Close, k.Close.Help().Key, "close")}
	if m.addRefusal != "" {
		return help
	}
	return append([]key.Binding{common.Short(k.AddStep, k.AddStep.Help().Key, m.addHint())}, help...)
}

// addHint is what AddStep does, in the footer and the key bar.
func (m Model) addHint() string {
	if m.plan == "" {
		return "add a step"
	}
	return "add to " + m.plan
}

// Filter returns the words the list is filtered by.
func (m Model) Filter() string { return m.filter.Value() }

// Selected returns the selected tool, if the list shows any.
func (m Model) Selected() (plans.ToolInfo, bool) {
	if len(m.shown) == 0 {
		return plans.ToolInfo{}, false
	}
	return m.tools[m.rows[m.shown[m.sel]].tool], true
}

// Update handles a key: movement, / to filter, AddStep to add a step and
// close (or to say why none can be added now), enter to say how a step is
// added, esc to clear the filter or
// close, Quit to close. A click selects a tool or closes the catalog when
// it falls outside; the wheel scrolls. Other messages (a paste) go to the
// filter box while it is open.
func (m *Model) Update(msg tea.Msg) (common.Component, tea.Cmd) {
	var k tea.KeyPressMsg
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		k = msg
		m.asked = false
	case tea.MouseClickMsg:
		if !common.Inside(msg.Mouse(), m.Width, m.Height) {
			return m, common.Close(m)
		}
		m.ClickAt(msg.X, msg.Y)
		return m, nil
	case tea.MouseWheelMsg:
		m.Scroll(common.WheelDelta(msg))
		return m, nil
	default:
		if m.editing {
			return m, m.edit(msg)
		}
		return m, nil
	}
	keys := m.Keys
	if m.editing {
		switch {
		case key.Matches(k, keys.Close):
			m.filter.SetValue("")
			m.stopEditing()
			return m, nil
		case key.Matches(k, keys.Jump):
			m.stopEditing()
			return m, nil
		case k.Text == "" && key.Matches(k, keys.Up, keys.Down):
			// The arrows move through what the filter leaves, without
			// leaving the box; the letters among those keys are text.
			m.move(k)
			return m, nil
		}
		return m, m.edit(k)
	}
	switch {
	case key.Matches(k, keys.Quit):
		return m, common.Close(m)
	case key.Matches(k, keys.Close):
		if m.filter.Value() != "" {
			m.filter.SetValue("")
			m.refilter()
			return m, nil
		}
		return m, common.Close(m)
	case key.Matches(k, keys.AddStep):
		t, ok := m.Selected()
		if ok && m.addRefusal != "" {
			// The catalog stays open, its footer saying why, as enter
			// makes it: closed, the refusal came too late to read beside
			// the tool it was about.
			m.asked = true
			return m, nil
		}
		if ok {
			return m, common.CloseWith(m, Insert{Tool: t})
		}
	case key.Matches(k, keys.Jump):
		// The tool is on show beside the list already; enter writes
		// nothing, and says which key would.
		_, m.asked = m.Selected()
	case key.Matches(k, keys.Search):
		m.editing = true
		m.filter.CursorEnd()
		return m, m.filter.Focus()
	case key.Matches(k, keys.PageUp):
		m.scrollDetail(-max(m.layout().infoH-1, 1))
	case key.Matches(k, keys.PageDown):
		m.scrollDetail(max(m.layout().infoH-1, 1))
	default:
		m.move(k)
	}
	return m, nil
}

// edit hands a message to the filter box and filters by what it then holds.
func (m *Model) edit(msg tea.Msg) tea.Cmd {
	before := m.filter.Value()
	var cmd tea.Cmd
	m.filter, cmd = m.filter.Update(msg)
	if m.filter.Value() != before {
		m.refilter()
	}
	return cmd
}

func (m *Model) stopEditing() {
	m.editing = false
	m.filter.Blur()
	m.refilter()
}

// move moves the selection on a movement key.
func (m *Model) move(k tea.KeyPressMsg) {
	if delta, ok := m.Keys.Movement(k, max(m.layout().listH-1, 1), len(m.shown)); ok {
		m.selectIndex(m.sel + delta)
	}
}

// selectIndex selects the i-th tool of the list, clamped, and brings it
// into view, the detail back at its top.
func (m *Model) selectIndex(i int) {
	if len(m.shown) == 0 {
		return
	}
	i = min(max(i, 0), len(m.shown)-1)
	if i != m.sel {
		m.detail = common.Scroll{}
	}
	m.sel = i
	m.follow()
}

func (m *Model) selectName(name string) {
	for i, r := range m.shown {
		if m.tools[m.rows[r].tool].Name == name {
			m.selectIndex(i)
			return
		}
	}
	m.selectIndex(0)
}

// follow scrolls the list so the selection is in view, and its group's
// heading too when there is room.
func (m *Model) follow() {
	if len(m.shown) == 0 {
		m.list = common.Scroll{}
		return
	}
	h := m.layout().listH
	r := m.shown[m.sel]
	if r > 0 && m.rows[r-1].heading != "" {
		m.list = m.list.Follow(r-1, h, len(m.rows))
	}
	m.list = m.list.Follow(r, h, len(m.rows))
}

// rebuild groups the tools into rows under the filter.
func (m *Model) rebuild() {
	words := strings.Fields(strings.ToLower(m.filter.Value()))
	groups := map[string][]int{}
	for i, t := range m.tools {
		if matches(t, words) {
			groups[t.Source] = append(groups[t.Source], i)
		}
	}
	m.rows, m.shown = m.rows[:0:0], m.shown[:0:0]
	for _, src := range sourceOrder(groups) {
		m.rows = append(m.rows, row{heading: groupName(src), count: len(groups[src]), tool: -1})
		for _, i := range groups[src] {
			m.shown = append(m.shown, len(m.rows))
			m.rows = append(m.rows, row{tool: i})
		}
	}
	m.sel = 0
	m.list, m.detail = common.Scroll{}, common.Scroll{}
}

// refilter applies the filter, keeping the selected tool when it passes.
func (m *Model) refilter() {
	selected := ""
	if t, ok := m.Selected(); ok {
		selected = t.Name
	}
	m.rebuild()
	m.selectName(selected)
}

// matches reports whether every word occurs in the tool's name, source or
// description.
func matches(t plans.ToolInfo, words []string) bool {
	text := strings.ToLower(t.Name + " " + t.Source + " " + t.Description)
	for _, w := range words {
		if !strings.Contains(text, w) {
			return false
		}
	}
	return true
}

// The listed sources, in the order their groups are shown; MCP servers
// come between the user tools and the plans.
const (
	sourceControl = "(control)"
	sourceBuiltin = "builtin"
	sourceUser    = "user"
	sourcePlan    = "plan"
)

// sourceOrder orders the groups: control steps, builtin, user tools, the
// MCP servers by name, plans.
func sourceOrder(groups map[string][]int) []string {
	var servers []string
	for src := range groups {
		if !slices.Contains([]string{sourceControl, sourceBuiltin, sourceUser, sourcePlan}, src) {
			servers = append(servers, src)
		}
	}
	slices.Sort(servers)
	order := append([]string{sourceControl, sourceBuiltin, sourceUser}, servers...)
	order = append(order, sourcePlan)
	return slices.DeleteFunc(order, func(s string) bool { return len(groups[s]) == 0 })
}

// groupName is how the list heads a source's group.
func groupName(source string) string {
	switch source {
	case sourceControl:
		return "control steps"
	case sourceBuiltin:
		return "builtin"
	case sourceUser:
		return "user tools"
	case sourcePlan:
		return "plans"
	}
	return "MCP " + source
}

// sourceText says where a tool comes from, for the detail.
func sourceText(t plans.ToolInfo) string {
	switch t.Source {
	case sourceControl:
		return "control step, run by the engine"
	case sourceBuiltin:
		return "builtin pack"
	case sourceUser:
		return "user tool"
	case sourcePlan:
		return "plan, called as a tool"
	}
	return "MCP server " + t.Source
}

// ClickAt selects the tool drawn at x, y of the overlay (0, 0 is its top
// left corner, on the border), or marks the detail as what the wheel
// scrolls.
func (m *Model) ClickAt(x, y int) {
	l := m.layout()
	switch {
	case x >= l.infoX && x < l.infoX+l.infoW && y >= l.infoY && y < l.infoY+l.infoH:
		m.onInfo = true
	case x >= 1 && x <= l.listW && y >= l.listY && y < l.listY+l.listH:
		m.onInfo = false
		i := m.list.Offset + y - l.listY
		if i < len(m.rows) && m.rows[i].heading == "" {
			m.selectIndex(slices.Index(m.shown, i))
		}
	}
}

// Scroll moves the half last clicked by delta lines: the list at first,
// taking the selection along so that it stays in view, or the detail.
func (m *Model) Scroll(delta int) {
	if m.onInfo {
		m.scrollDetail(delta)
		return
	}
	h := m.layout().listH
	m.list.Offset += delta
	m.list = m.list.Clamp(h, len(m.rows))
	if len(m.shown) == 0 || h <= 0 {
		return
	}
	// A selection scrolled out of view moves to the nearest tool in it.
	top, bottom := m.list.Offset, m.list.Offset+h-1
	i := m.sel
	switch r := m.shown[m.sel]; {
	case r < top:
		i = slices.IndexFunc(m.shown, func(r int) bool { return r >= top })
	case r > bottom:
		i = max(slices.IndexFunc(m.shown, func(r int) bool { return r > bottom })-1, 0)
	}
	if i >= 0 && i != m.sel {
		m.sel, m.detail = i, common.Scroll{}
	}
}

func (m *Model) scrollDetail(delta int) {
	l := m.layout()
	m.detail.Offset += delta
	m.detail = m.detail.Clamp(l.infoH, len(m.info(l.infoW)))
}
