// Package inspector is the inspector pane: everything about the selected
// node of a run's live tree, in tabs (input, model call, tool call,
// result, refusals, repair, scope, usage, stop), each tab a page of lines
// that scrolls under a line cursor, folds its JSON values and can be
// searched.
//
// A page is laid out when what it shows changes, never per frame: Show
// compares the node's version and a few counts with what the page was
// built from, and a reply that is streaming in is laid out incrementally,
// so following a long reply token by token costs what the new tokens
// cost.
package inspector

import (
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/tui/common"
	"github.com/stepwise-dev/stepwise/tui/format"
	"github.com/stepwise-dev/stepwise/tui/live"
	"github.com/stepwise-dev/stepwise/tui/runtree"
)

// Model is the inspector pane.
type Model struct {
	common.Common
	common.Focusable
	p *paints

	node  live.Node
	stop  *debugger.Snapshot
	shown bool
	seen  showKey // what the node held at the last Show
	built showKey // what the page was laid out from, for its tab
	tabs  []Tab
	tab   Tab
	// chosen is the tab the user last chose (chose says they did): it
	// stays on show, by name, from node to node and stop to stop
	// wherever it applies; the tab a stop is about opens only for one
	// who has chosen none.
	chosen Tab
	chose  bool
	// at is the cursor and scroll of each tab, so that going back to a
	// tab finds it where it was; all reset when another node is shown.
	at   [numTabs]place
	page []line
	// folds holds the folds the user chose, by fold key; containers not
	// in it are as their view starts them.
	folds   map[string]bool
	streams *streams

	input     textinput.Model
	searching bool // the search box is open and takes every key
	query     string
	hits      []hit
	current   int // the hit the cursor was last moved to, -1 for none
	origin    int // the cursor line when the search box opened
}

// place is where a tab's line cursor and view are.
type place struct {
	cursor int
	scroll common.Scroll
}

// showKey is what a page depends on, compared rather than the node
// itself: the node's event count and the figures that change without an
// event of its own (its status, its spend, its children), the lengths of
// the texts streaming into it, and the stop.
type showKey struct {
	version          uint64
	status           live.Status
	calls, children  int
	reply, reasoning int
	call             *engine.ModelCalled
	stop             *debugger.Snapshot
	// soFar is the time of a unit that runs with some of it held (one
	// held now grows with the clock), to the tenth of a second the Usage
	// tab says it to.
	soFar time.Duration
}

func keyOf(n live.Node, stop *debugger.Snapshot) showKey {
	k := showKey{version: n.Version, status: n.Status, calls: n.Spend.Calls, children: n.Children,
		reply: len(n.Reply), reasoning: len(n.Reasoning), call: n.Call, stop: stop}
	if !n.Status.Done() && n.Held > 0 {
		k.soFar = n.Duration.Truncate(100 * time.Millisecond)
	}
	return k
}

// forTab keeps of k what tab's page shows, so that a reply streaming into
// a round does not lay out its scope or usage again on every frame.
func (k showKey) forTab(t Tab) showKey {
	switch t {
	case TabScope, TabStop:
		return showKey{stop: k.stop}
	case TabUsage:
		return showKey{status: k.status, calls: k.calls, call: k.call, stop: k.stop, soFar: k.soFar}
	}
	k.soFar = 0
	return k
}

// New returns an inspector showing nothing yet.
func New(c common.Common) Model {
	m := Model{Common: c, current: -1, folds: map[string]bool{}, streams: &streams{}}
	m.input = textinput.New()
	m.input.Prompt = "/"
	m.Refresh()
	return m
}

// Refresh takes up the theme again after it changed, and lays the page
// out again in it.
func (m *Model) Refresh() {
	p := newPaints(m.Theme)
	m.p = &p
	st := textinput.DefaultStyles(m.Theme.Dark)
	for _, s := range []*textinput.StyleState{&st.Focused, &st.Blurred} {
		s.Prompt, s.Text, s.Placeholder, s.Suggestion = m.Theme.Heading, m.Theme.Text, m.Theme.Muted, m.Theme.Muted
	}
	// A steady cursor, drawn in reverse video: it needs no colour and no
	// blink timer.
	st.Cursor.Color, st.Cursor.Blink = nil, false
	m.input.SetStyles(st)
	m.rebuild()
}

// SetSize sets the pane's outer size, laying the page out again when the
// width changed.
func (m *Model) SetSize(width, height int) {
	resized := width != m.Width
	m.Common.SetSize(width, height)
	m.input.SetWidth(max(m.Width-5, 1))
	if resized {
		m.rebuild()
		return
	}
	m.follow()
}

// Capturing reports whether the search box is open: the run page then
// sends every key here, the workbench's own included, since they are
// being typed.
func (m Model) Capturing() bool { return m.searching }

// Node returns the node on show.
func (m Model) Node() live.Node { return m.node }

// Tabs returns the tabs that apply to the node on show, in order.
func (m Model) Tabs() []Tab { return m.tabs }

// Tab returns the tab on show.
func (m Model) Tab() Tab { return m.tab }

// Cursor returns the line the cursor is on, of Len.
func (m Model) Cursor() int { return m.at[m.tab].cursor }

// Len returns how many lines the tab on show has.
func (m Model) Len() int { return len(m.page) }

// Hits returns how many matches the search has on the tab, and which one
// the cursor was last moved to (0-based, -1 for none).
func (m Model) Hits() (n, current int) { return len(m.hits), m.current }

// SelectTab shows tab t, and reports whether it applies to the node.
func (m *Model) SelectTab(t Tab) bool {
	if !m.applies(t) {
		return false
	}
	m.choose(t)
	return true
}

// choose shows tab t as the user's choice.
func (m *Model) choose(t Tab) {
	m.chosen, m.chose = t, true
	m.setTab(t)
}

// applies reports whether tab t is one of the node's.
func (m Model) applies(t Tab) bool { return slices.Contains(m.tabs, t) }

// Show makes the pane inspect node n, held at stop (nil unless the run is
// held at exactly n's path). It is called on every batch of events, so it
// does nothing but keep n when nothing the page shows has changed. For the
// same path the tab, cursor, folds and search stay as they are, and a
// cursor on the last line of the Model tab follows the reply's end as it
// grows; another
// path starts at the top of the same tab where it applies, or the first,
// except that a model call under way starts at the end of its reply.
//
// The zero Node with no stop empties the pane. A stop can come before any
// event at its path (a round is held before its call, so the tree has no
// node for it yet): given the zero Node and a stop, Show inspects the
// stop's path, its kind read from the stop's stack.
func (m *Model) Show(n live.Node, stop *debugger.Snapshot) {
	if n.Path == "" {
		if stop == nil {
			// Nothing selected: an empty pane.
			m.node, m.stop, m.shown, m.tabs, m.page, m.hits = n, nil, false, nil, nil, nil
			return
		}
		n = stopNode(stop)
	}
	k := keyOf(n, stop)
	same := m.shown && n.Path == m.node.Path
	// A run newly held here opens the tab that shows what the stop is
	// about, whatever tab the node was shown in before, unless the user
	// chose one that applies.
	newStop := stop != nil && stop != m.stop
	m.node, m.stop = n, stop
	if same && k == m.seen {
		return
	}
	m.seen = k
	m.tabs = tabsFor(n, stop)
	if !same {
		m.shown = true
		m.folds = map[string]bool{}
		if !m.searching {
			// A search is of one row's page; another row starts clean.
			m.query, m.hits = "", nil
		}
		m.at = [numTabs]place{}
		m.streams = &streams{}
		m.current = -1
		want := m.tab
		if stop != nil {
			want = stopTab(stop.Kind)
		}
		if m.chose && m.applies(m.chosen) {
			want = m.chosen
		}
		m.tab = m.pick(want)
		m.rebuild()
		if streaming(n, stop) && m.tab == TabModel {
			m.toEnd()
		}
		return
	}
	if newStop {
		want := stopTab(stop.Kind)
		if m.chose && m.applies(m.chosen) {
			want = m.chosen
		}
		if t := m.pick(want); t != m.tab {
			m.setTab(t)
			return
		}
	}
	if m.pick(m.tab) != m.tab {
		m.setTab(m.pick(m.tab))
		return
	}
	if k.forTab(m.tab) == m.built {
		return
	}
	// Only a reply streaming in is followed: a result that arrives at
	// once is read from its top.
	atEnd := m.tab == TabModel && m.Cursor() >= len(m.page)-1
	m.rebuild()
	if atEnd {
		m.toEnd()
	}
}

// streaming reports whether a model call is under way at n: a reader
// wants its newest tokens, at the end of the page.
func streaming(n live.Node, stop *debugger.Snapshot) bool {
	return n.Status == live.Running && n.Call == nil && stop == nil
}

// stopNode is what a stop says of the node it is held at.
func stopNode(s *debugger.Snapshot) live.Node {
	n := live.Node{Path: s.Path, Tool: s.Tool, Status: live.Pending, Kind: live.KindStep}
	if len(s.Stack) > 0 {
		if k, ok := live.KindOfUnit(s.Stack[len(s.Stack)-1].Kind); ok {
			n.Kind = k
		}
	}
	return n
}

// stopTab is the tab that shows what a stop is about: the input about to
// be sent before a step or tool call, the model's request or reply around
// a round or repair, the stop itself after a step, at an error or at a
// question.
func stopTab(kind engine.StopKind) Tab {
	switch kind {
	case engine.StopStep:
		return TabInput
	case engine.StopTool:
		return TabTool
	case engine.StopRound, engine.StopReply, engine.StopRepair:
		return TabModel
	}
	// After a step, at a failure and at a question, the Stop tab has the
	// value, the error or the question, with what a replacement must be.
	return TabStop
}

// pick returns want when it applies to the node, else the first tab that
// does.
func (m Model) pick(want Tab) Tab {
	for _, t := range m.tabs {
		if t == want {
			return want
		}
	}
	if len(m.tabs) == 0 {
		return TabResult
	}
	return m.tabs[0]
}

func (m *Model) setTab(t Tab) {
	if t == m.tab {
		return
	}
	m.tab = t
	m.current = -1
	m.rebuild()
}

// rebuild lays out the page of the tab on show.
func (m *Model) rebuild() {
	width := m.Width - 3 // the border, and a margin for the cursor mark
	if !m.shown || width < 1 {
		m.page, m.hits = nil, nil
		return
	}
	b := &builder{p: m.p, width: width, folded: m.isFolded}
	c := content{builder: b, n: m.node, stop: m.stop, streams: m.streams}
	c.build(m.tab)
	m.page = b.lines
	m.built = m.seen.forTab(m.tab)
	m.hits = findHits(m.page, m.query)
	if m.current >= len(m.hits) {
		m.current = -1
	}
	m.follow()
}

func (m *Model) isFolded(key string, def bool) bool {
	if f, ok := m.folds[key]; ok {
		return f
	}
	return def
}

func (m Model) bodyHeight() int { return max(m.Height-2, 0) }

// pageHeight is how many page lines show: the body less the tab line and
// the search box.
func (m Model) pageHeight() int {
	h := m.bodyHeight() - 1
	if m.searching {
		h--
	}
	return max(h, 0)
}

// follow keeps the cursor on the page and in view.
func (m *Model) follow() {
	at := &m.at[m.tab]
	at.cursor = max(min(at.cursor, len(m.page)-1), 0)
	at.scroll = at.scroll.Follow(at.cursor, m.pageHeight(), len(m.page))
}

func (m *Model) moveTo(line int) {
	m.at[m.tab].cursor = line
	m.follow()
}

func (m *Model) toEnd() { m.moveTo(len(m.page) - 1) }

// Scroll moves the view by delta lines (the mouse wheel), taking the
// cursor along when it would leave the view.
func (m *Model) Scroll(delta int) {
	at := &m.at[m.tab]
	h := m.pageHeight()
	at.scroll.Offset += delta
	at.scroll = at.scroll.Clamp(h, len(m.page))
	if h > 0 {
		at.cursor = max(min(at.cursor, at.scroll.Offset+h-1, len(m.page)-1), at.scroll.Offset, 0)
	}
}

// ClickAt acts on a click at column x of line y of the pane (0, 0 is the
// top-left corner of its border): on the tab line it shows the tab
// clicked, on the page it moves the cursor to the line clicked.
func (m *Model) ClickAt(x, y int) {
	switch {
	case y == 1:
		cells, _ := tabLine(m.tabs, m.tab, max(m.Width-2, 0))
		for _, c := range cells {
			if x-1 >= c.from && x-1 < c.to {
				m.choose(c.tab)
				return
			}
		}
	case y >= 2 && y < 2+m.pageHeight():
		if i := m.at[m.tab].scroll.Offset + y - 2; i < len(m.page) {
			m.moveTo(i)
		}
	}
}

// Update answers a key; the run page sends keys only while the pane has
// focus, and every key while Capturing. Other messages do nothing.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return m, nil
	}
	return m.key(k)
}

func (m Model) key(msg tea.KeyPressMsg) (Model, tea.Cmd) {
	if m.searching {
		return m.updateSearch(msg)
	}
	k := m.Keys
	switch {
	case key.Matches(msg, k.Search):
		m.searching = true
		m.origin = m.Cursor()
		m.input.Reset()
		m.follow()
		return m, m.input.Focus()
	case key.Matches(msg, k.NextHit):
		m.nextHit(1)
	case key.Matches(msg, k.PrevHit):
		m.nextHit(-1)
	case key.Matches(msg, k.NextTab):
		m.cycleTab(1)
	case key.Matches(msg, k.PrevTab):
		m.cycleTab(-1)
	case key.Matches(msg, k.Toggle):
		m.fold(foldToggle)
	case key.Matches(msg, k.Collapse):
		m.fold(foldShut)
	case key.Matches(msg, k.Expand):
		m.fold(foldOpen)
	default:
		if delta, ok := k.Movement(msg, max(m.pageHeight()-1, 1), len(m.page)); ok {
			m.moveTo(m.Cursor() + delta)
		}
	}
	return m, nil
}

// updateSearch answers a key while the search box is open: enter goes to
// the next match, esc closes the box with the matches still marked, the
// hit keys move between matches, and the rest edit the query, whose
// matches are found as it is typed, the cursor going to the first at or
// after where it was when the box opened.
func (m Model) updateSearch(msg tea.KeyPressMsg) (Model, tea.Cmd) {
	k := m.Keys
	switch {
	case key.Matches(msg, k.Close):
		m.searching = false
		m.input.Blur()
		m.follow()
		return m, nil
	case key.Matches(msg, k.Jump): // enter
		m.nextHit(1)
		return m, nil
	case key.Matches(msg, k.NextHit):
		m.nextHit(1)
		return m, nil
	case key.Matches(msg, k.PrevHit):
		m.nextHit(-1)
		return m, nil
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	if q := m.input.Value(); q != m.query {
		m.query = q
		m.hits = findHits(m.page, q)
		m.current = -1
		m.moveTo(m.origin)
		if i := m.hitFrom(m.origin, 1); i >= 0 {
			m.current = i
			m.moveTo(m.hits[i].line)
		}
	}
	return m, cmd
}

// hitFrom returns the first hit at or after line going forward (dir 1),
// or at or before it going back (dir -1), wrapping around; -1 when there
// are none.
func (m Model) hitFrom(line, dir int) int {
	if len(m.hits) == 0 {
		return -1
	}
	i := sort.Search(len(m.hits), func(i int) bool { return m.hits[i].line >= line })
	if dir > 0 {
		return i % len(m.hits)
	}
	j := sort.Search(len(m.hits), func(i int) bool { return m.hits[i].line > line }) - 1
	if j < 0 {
		j = len(m.hits) - 1
	}
	return j
}

// nextHit moves the cursor to the next match (dir 1) or the previous one
// (dir -1): after the current match when the cursor is still on its line,
// else after the cursor's line.
func (m *Model) nextHit(dir int) {
	if len(m.hits) == 0 {
		return
	}
	cur := m.Cursor()
	var i int
	if m.current >= 0 && m.current < len(m.hits) && m.hits[m.current].line == cur {
		i = (m.current + dir + len(m.hits)) % len(m.hits)
	} else {
		i = m.hitFrom(cur+dir, dir)
	}
	m.current = i
	m.moveTo(m.hits[i].line)
}

func (m *Model) cycleTab(dir int) {
	if len(m.tabs) == 0 {
		return
	}
	i := 0
	for j, t := range m.tabs {
		if t == m.tab {
			i = j
		}
	}
	m.choose(m.tabs[(i+dir+len(m.tabs))%len(m.tabs)])
}

type foldAction uint8

const (
	foldToggle foldAction = iota
	foldShut
	foldOpen
)

// fold folds or unfolds the JSON object or array at the cursor: the one
// that opens on the cursor's line, or, to fold, the one the line is in,
// the cursor then moving to its first line.
func (m *Model) fold(a foldAction) {
	cur := m.Cursor()
	if cur >= len(m.page) {
		return
	}
	l := m.page[cur]
	target, shut := "", false
	switch {
	case l.open != "":
		target = l.open
		shut = !l.shut
		if a == foldShut {
			if l.shut {
				target, shut = l.in, true // folded already: fold the enclosing one
			} else {
				shut = true
			}
		}
		if a == foldOpen {
			shut = false
		}
	case a != foldOpen:
		target, shut = l.in, true
	}
	if target == "" {
		return
	}
	m.folds[target] = shut
	m.rebuild()
	for i, x := range m.page {
		if x.open == target {
			m.moveTo(i)
			return
		}
	}
}

// View draws the pane, border included, at exactly its size.
func (m Model) View() string {
	inner := max(m.Width-2, 0)
	bh := m.bodyHeight()
	body := make([]string, 0, bh)
	if bh > 0 {
		body = append(body, m.tabsView(inner))
	}
	if !m.shown && bh > 1 {
		body = append(body, m.p.muted.Render(" nothing selected"))
	}
	at := m.at[m.tab]
	ph := m.pageHeight()
	end := min(at.scroll.Offset+ph, len(m.page))
	h := sort.Search(len(m.hits), func(i int) bool { return m.hits[i].line >= at.scroll.Offset })
	var marks [][2]int
	for i := at.scroll.Offset; i < end; i++ {
		marks = marks[:0]
		for ; h < len(m.hits) && m.hits[h].line == i; h++ {
			marks = append(marks, [2]int{m.hits[h].from, m.hits[h].to})
		}
		margin := " "
		if i == at.cursor && m.Focused() {
			margin = m.p.marker.Render("›")
		}
		body = append(body, margin+m.page[i].render(marks, m.p.hit))
	}
	if m.searching {
		for len(body) < bh-1 {
			body = append(body, "")
		}
		body = append(body, " "+m.input.View())
	}
	return common.Frame(m.Theme, m.Width, m.Height, m.title(), m.footer(), m.Focused(), body)
}

// title names the pane and the node: its path, status and time.
func (m Model) title() string {
	t := m.Theme.PaneTitle("Inspector", m.Focused())
	if !m.shown {
		return t
	}
	rest := " " + runtree.StatusGlyph(m.node.Status, m.node.Aborted)
	if m.node.Duration > 0 {
		rest += " " + format.Duration(m.node.Duration)
	}
	// The frame keeps five cells of the top edge for its corners and
	// spaces; a path too long for the rest loses its middle, not the end
	// that names the row.
	room := m.Width - 5 - common.TextWidth("Inspector") - 1 - common.TextWidth(rest)
	return t + m.p.muted.Render(" "+common.ElideMiddle(m.node.Path, room)+rest)
}

// footer says where the cursor is, and how the search went.
func (m Model) footer() string {
	var parts []string
	if m.query != "" {
		s := "/" + m.query + " "
		switch {
		case len(m.hits) == 0:
			s += "no match"
		case m.current >= 0:
			s += common.Position(m.current, len(m.hits))
		default:
			s += strconv.Itoa(len(m.hits)) + " matches"
		}
		parts = append(parts, s)
	}
	if len(m.page) > m.pageHeight() {
		parts = append(parts, common.Position(m.Cursor(), len(m.page)))
	}
	return strings.Join(parts, " · ")
}

// tabsView draws the tab line, inner cells wide.
func (m Model) tabsView(inner int) string {
	cells, cutLeft := tabLine(m.tabs, m.tab, inner)
	var b strings.Builder
	if cutLeft {
		b.WriteString(m.p.muted.Render("‹"))
	} else {
		b.WriteByte(' ')
	}
	for _, c := range cells {
		p := m.p.tab
		if c.active {
			p = m.p.tabOn
		}
		b.WriteString(p.Render(c.label))
	}
	return b.String()
}
