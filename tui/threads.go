package tui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/engine/path"
	"github.com/stepwise-dev/stepwise/tui/common"
)

// The run page's bottom panes: the threads of a debug run (every live
// one, running or held, the one the commands act on marked) and its watch
// expressions as read at the last stop. The threads pane takes the focus
// (enter makes a held thread the current one, or shows a running one's
// step); the watch pane only shows.

// threads are the run's live threads as last read.
func (p *runPage) threads() []debugger.Thread { return p.threadList.Items() }

// watches are the workbench's watch expressions, by the workbench's
// numbers: as the live run read them at its last stop, or with no run
// going, as the last run read them, if it had them.
func (p *runPage) watches() []debugger.WatchValue {
	r := p.run
	live := r.active() && r.session != nil
	out := slices.Clone(p.watchList)
	for i := range out {
		switch {
		case live && i < len(r.watches):
			// The session's list is in the same order as the workbench's.
			read := r.watches[i]
			out[i].Value, out[i].Error, out[i].Read = read.Value, read.Error, read.Read
		case !live && r != nil:
			for _, read := range r.watches {
				if read.Path == out[i].Path {
					out[i].Value, out[i].Error, out[i].Read = read.Value, read.Error, read.Read
					break
				}
			}
		}
	}
	return out
}

// threadsShown reports whether the threads pane is laid out: while a run
// under the debugger has more than one live thread, or has one and the
// watch pane is shown beside it. One thread alone, the plan's own, is
// what every run has; a pane of it by itself says nothing.
func (p *runPage) threadsShown() bool {
	n := len(p.threads())
	return n > 1 || n == 1 && p.watchesShown()
}

// watchesShown reports whether the watch pane is laid out: while a run
// under the debugger has watch expressions.
func (p *runPage) watchesShown() bool { return len(p.watchList) > 0 }

// bottomPanes splits the bottom of l between the threads pane, on the
// left, and the watch pane; a pane not shown gets no width.
func (p *runPage) bottomPanes(l paneLayout) (threads, watches rect) {
	b := l.bottom
	switch {
	case !p.watchesShown():
		return b, rect{b.x, b.y, 0, b.h}
	case !p.threadsShown():
		return rect{b.x, b.y, 0, b.h}, b
	}
	// Each pane asks for its widest line; a watch pane that needs more
	// than its share takes what the threads leave unused.
	need := max(p.watchesWidth()+2, minWatchesWidth)
	ww := min(need, b.w*maxWatchesShare/100)
	if spare := b.w - p.threadsWidth() - 2; need > ww && spare > ww {
		ww = min(need, spare)
	}
	tw := b.w - ww
	return rect{b.x, b.y, tw, b.h}, rect{b.x + tw, b.y, ww, b.h}
}

// The watch pane beside the threads is as wide as its widest line, its
// border included, but no narrower than its title needs and no wider than
// a share of the page, so that the threads keep the room to say where
// each is, unless the threads' lines leave it more.
const (
	minWatchesWidth = 16
	maxWatchesShare = 45
)

// watchesWidth is the cells the widest line of the watch pane takes.
func (p *runPage) watchesWidth() int {
	w := 0
	for _, wv := range p.watches() {
		w = max(w, common.TextWidth(watchLine(wv)))
	}
	return w
}

// threadsWidth is the cells the widest line of the threads pane takes
// uncut, as threadsView draws it: the mark, the name, where the thread
// is and the kind of its stop.
func (p *runPage) threadsWidth() int {
	ths := p.threads()
	ids := make([]string, len(ths))
	for i, th := range ths {
		ids[i] = th.ID
	}
	w := 0
	for _, th := range ths {
		name, where := threadPlace(th, ids)
		line := 2 + common.TextWidth(name) + 2 + common.TextWidth(string(th.Kind))
		if where != "" {
			line += 1 + common.TextWidth(where)
		}
		w = max(w, line)
	}
	return w
}

// refreshThreads reads the run's live threads again, the selection kept
// on the thread it was on, and lays the page out again when the bottom
// panes come, go or change height. It returns the paths of the held ones.
func (p *runPage) refreshThreads() (held []string) {
	r := p.run
	var ths []debugger.Thread
	if r != nil && r.session != nil && (r.debug || r.held()) && !r.state.Finished {
		ths = r.session.Threads()
	}
	for _, th := range ths {
		if th.Held {
			// A thread held before its step's first event has a row
			// to show it by, as the current one does.
			r.tree.Expect(th.Path, th.Tool)
			held = append(held, th.Path)
		}
	}
	p.tree.SetHeld(held)
	before := p.layout()
	selected, had := p.threadList.Selected()
	p.threadList.SetItems(ths)
	if had {
		p.selectThread(selected.ID)
	}
	if p.layout() != before {
		p.SetSize(p.Width, p.Height)
	}
	if p.focus == paneBottom && !p.threadsShown() {
		p.setFocus(paneTree)
	}
	return held
}

// heldThreadAt is the thread held at path now, if one is.
func (p *runPage) heldThreadAt(path string) (debugger.Thread, bool) {
	i := slices.IndexFunc(p.threads(), func(th debugger.Thread) bool { return th.Held && th.Path == path })
	if i < 0 {
		return debugger.Thread{}, false
	}
	return p.threads()[i], true
}

// selectCurrentThread moves the threads pane's selection to the thread
// the commands act on.
func (p *runPage) selectCurrentThread() {
	p.selectThreadWhere(func(th debugger.Thread) bool { return th.Stopped })
}

// selectThread moves the threads pane's selection to thread id, if it
// is still live.
func (p *runPage) selectThread(id string) {
	p.selectThreadWhere(func(th debugger.Thread) bool { return th.ID == id })
}

func (p *runPage) selectThreadWhere(match func(debugger.Thread) bool) {
	if i := slices.IndexFunc(p.threads(), match); i >= 0 {
		p.threadList.Select(i)
	}
}

// threadKey moves through the threads; enter on a held thread makes it
// the one the commands act on (:thread ID), on a running one shows where
// it is in the tree.
func (p *runPage) threadKey(k tea.KeyPressMsg) tea.Cmd {
	if p.threadList.Move(p.Keys, k) || !key.Matches(k, p.Keys.Jump) {
		return nil
	}
	th, ok := p.threadList.Selected()
	if !ok {
		return nil
	}
	if th.Held && !th.Stopped && p.run.held() {
		return p.switchThread(th.ID)
	}
	if th.Path != "" {
		p.tree.SelectPath(th.Path)
	}
	p.setFocus(paneTree)
	return nil
}

// bottomView draws the threads and watch panes l has room for.
func (p *runPage) bottomView(l paneLayout) string {
	if l.bottom.h == 0 {
		return ""
	}
	threads, watches := p.bottomPanes(l)
	switch {
	case watches.w == 0:
		return p.threadsView(threads.w, threads.h)
	case threads.w == 0:
		return p.watchesView(watches.w, watches.h)
	}
	var b strings.Builder
	writeColumns(&b, p.threadsView(threads.w, threads.h), p.watchesView(watches.w, watches.h))
	return b.String()
}

// threadsView lists the live threads: ▶ the one the commands act on, ⏸
// those held at a stop, ● those running, each with where it is, as
// threadPlace names it, and the kind of its stop, which a narrow pane
// never cuts: the names lose their middles first.
func (p *runPage) threadsView(width, height int) string {
	t := p.Theme
	focused := p.focus == paneBottom
	ths := p.threads()
	ids := make([]string, len(ths))
	held := 0
	for i, th := range ths {
		ids[i] = th.ID
		if th.Held {
			held++
		}
	}
	first, end := p.threadList.Visible()
	lines := make([]string, 0, end-first)
	inner := max(width-2, 0)
	for i := first; i < end; i++ {
		th := ths[i]
		var mark string
		switch {
		case th.Stopped:
			mark = t.Glyph.Render("▶ ")
		case th.Held:
			mark = t.Glyph.Render("⏸ ")
		default:
			mark = t.Valid.Render("● ")
		}
		name, where := threadPlace(th, ids)
		// The kind follows the place, or the name two cells off as the
		// place would be.
		kind := ""
		switch {
		case th.Kind == "":
		case where == "":
			kind = "  " + string(th.Kind)
		default:
			kind = " " + string(th.Kind)
		}
		name, where = fitThreadPlace(name, where, inner-2-common.TextWidth(kind))
		line := mark + name
		if where != "" {
			line += "  " + where
		}
		line += t.Muted.Render(kind)
		if i == p.threadList.Cursor() && focused {
			line = t.Selected.Render(common.Fit(ansi.Strip(line), inner))
		}
		lines = append(lines, line)
	}
	title := t.PaneTitle("Threads", focused)
	info := fmt.Sprintf("%d live, %d held", len(ths), held)
	if hidden := len(ths) - (end - first); hidden > 0 {
		// The pane is shorter than the list: say how many more there
		// are, and which way they lie.
		arrow := "↓"
		switch {
		case first > 0 && end < len(ths):
			arrow = "↕"
		case first > 0:
			arrow = "↑"
		}
		info += fmt.Sprintf(" · %s +%d more", arrow, hidden)
	}
	return common.Frame(t, width, height, title, info, focused, lines)
}

// fitThreadPlace fits a thread's name and where it is, two cells apart,
// in room cells. Where it is stays whole and the name loses its middle:
// the place (posted, verdict/agent.2) is what tells held threads apart,
// and the name's two ends (post/then/…/comments/do.0) still say which
// thread it is. Only a pane too narrow for the place beside the shortest
// name cuts the place too.
func fitThreadPlace(name, where string, room int) (string, string) {
	if where == "" {
		return common.ElideMiddle(name, room), ""
	}
	nameRoom := room - 2 - common.TextWidth(where)
	if short := min(common.TextWidth(name), minThreadName); nameRoom < short {
		nameRoom = short
		where = common.ElideMiddle(where, room-2-nameRoom)
	}
	return common.ElideMiddle(name, nameRoom), where
}

// minThreadName is the fewest cells a thread's name is cut to beside its
// place: do.12 whole, or the two ends of a longer one.
const minThreadName = 8

// threadPlace is how the threads pane names a thread and says where it
// is. A thread's id is the path it started at, so its stop's path repeats
// it: the name is the id below the thread that started it (the longest
// other live id above it: an item's tool call under its item), or, with
// none, below its top-level step where the thread is that step's own item
// or round (assess/do.0 is do.0, E2/agent.1/x is agent.1/x): deeper, below
// a branch or in a called plan, the whole id, as then/… alone would not
// say where it is. Where is the stop's path below the id
// (verdict/agent.2), empty while the thread is at its own path. The plan's
// own thread, main, is no path: it is named so, and is where its stop is.
func threadPlace(th debugger.Thread, ids []string) (name, where string) {
	name = th.ID
	parent := ""
	for _, id := range ids {
		if len(id) > len(parent) && strings.HasPrefix(th.ID, id+"/") {
			parent = id
		}
	}
	if parent != "" {
		name = th.ID[len(parent)+1:]
	} else if _, below, ok := strings.Cut(th.ID, "/"); ok && unitOfStep(below) {
		name = below
	}
	switch {
	case th.Path == th.ID:
	case strings.HasPrefix(th.Path, th.ID+"/"):
		where = th.Path[len(th.ID)+1:]
	default:
		where = th.Path
	}
	return name, where
}

// unitOfStep reports whether a path below a step starts at one of the
// step's own items or rounds (do.0, agent.1), not at a branch or a body
// step.
func unitOfStep(below string) bool {
	first, _, _ := strings.Cut(below, "/")
	_, item := path.ItemIndex(first)
	_, round := path.RoundNumber(first)
	return item || round
}

// watchesView lists the watch expressions with what each read at the
// last stop.
func (p *runPage) watchesView(width, height int) string {
	t := p.Theme
	var lines []string
	for _, w := range p.watches() {
		text := watchText(w)
		if w.Error != "" {
			text = t.Problem.Render(text)
		}
		lines = append(lines, t.Muted.Render(watchID(w))+text)
	}
	return common.Frame(t, width, height, t.PaneTitle("Watches", false), "", false, lines)
}

// watchLine is a line of the watch pane, unstyled: the watch's number,
// then watchText.
func watchLine(w debugger.WatchValue) string { return watchID(w) + watchText(w) }

func watchID(w debugger.WatchValue) string { return strconv.Itoa(w.ID) + " " }

// watch carries out watch and unwatch on the workbench's list and, while
// a run goes on, on its session; watches changes nothing. The watch pane
// comes, goes or grows with the list.
func (p *runPage) watch(in debugger.Instruction) error {
	r := p.run
	live := r.active() && r.session != nil
	switch in.Verb {
	case debugger.VerbWatch:
		if live {
			if _, err := r.session.Watch(in.Path); err != nil {
				return err
			}
		}
		p.lastWatch++
		p.watchList = append(p.watchList, debugger.WatchValue{ID: p.lastWatch, Path: in.Path})
	case debugger.VerbUnwatch:
		i := slices.IndexFunc(p.watchList, func(w debugger.WatchValue) bool { return w.ID == in.ID })
		if i < 0 {
			return fmt.Errorf("there is no watch %d; watches lists them", in.ID)
		}
		if live && i < len(r.watches) {
			if err := r.session.Unwatch(r.watches[i].ID); err != nil {
				return err
			}
		}
		p.watchList = slices.Delete(p.watchList, i, i+1)
	}
	if live {
		r.watches = r.session.Watches()
	}
	p.SetSize(p.Width, p.Height)
	return nil
}
