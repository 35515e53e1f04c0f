package inspector

import (
	"github.com/charmbracelet/x/ansi"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/tui/live"
)

// Tab is one of the inspector's views of a node.
type Tab int

// The tabs, in the order they show.
const (
	TabInput    Tab = iota // a step's rendered input
	TabModel               // a model call: the request and the reply
	TabTool                // a tool call: its arguments and result
	TabResult              // a step's result or error
	TabRefusals            // the schema violations of a refused answer
	TabRepair              // a repair pass: the answer before and after
	TabScope               // what the step's templates can read, when held
	TabUsage               // calls, tokens, cost and time
	TabStop                // the stop the run is held at
	numTabs
)

var tabNames = [numTabs]string{"Input", "Model", "Tool", "Result", "Refusals", "Repair", "Scope", "Usage", "Stop"}

// String returns the tab's name as its label shows it.
func (t Tab) String() string {
	if t >= 0 && t < numTabs {
		return tabNames[t]
	}
	return "tab?"
}

// tabsFor lists the tabs that apply to a node, held at stop or not.
func tabsFor(n live.Node, stop *debugger.Snapshot) []Tab {
	var out []Tab
	add := func(t Tab, ok bool) {
		if ok {
			out = append(out, t)
		}
	}
	k := n.Kind
	stopAt := func(kinds ...engine.StopKind) bool {
		if stop == nil {
			return false
		}
		for _, s := range kinds {
			if stop.Kind == s {
				return true
			}
		}
		return false
	}
	stepLike := k == live.KindStep || k == live.KindItem
	add(TabInput, stepLike && (n.Input != nil || stopAt(engine.StopStep, engine.StopError) && stop.Input != nil))
	add(TabModel, k == live.KindRound || k == live.KindRepair || k == live.KindCall || n.Call != nil ||
		n.Reply != "" || n.Reasoning != "" || stopAt(engine.StopRound, engine.StopReply))
	add(TabTool, k == live.KindTool)
	add(TabResult, stepLike || k == live.KindPlan || k == live.KindHead)
	add(TabRefusals, len(n.Violations) > 0 || len(n.Refusals) > 0)
	add(TabRepair, k == live.KindRepair)
	add(TabScope, stop != nil || (k != live.KindPlan && k != live.KindHead))
	// Usage says a unit's time too: how much of it was held (an ask
	// waits for nothing else), and who gave its result.
	add(TabUsage, n.Spend.Calls > 0 || n.Call != nil || n.Held > 0 || n.Decided != "" || n.Reused != "")
	add(TabStop, stop != nil)
	return out
}

// tabCell is where one tab's label is drawn on the tab line, in cells
// from the line's start.
type tabCell struct {
	tab      Tab
	from, to int
	label    string
	active   bool
}

// tabLine lays the labels out in width cells after a one-cell margin: the
// active one in brackets, so it shows without colour, the others padded
// to the same width so the line does not shift as the tab changes. When
// they do not all fit, the line starts at the first tab that keeps the
// active one in view, and the margin shows ‹ for those cut off.
func tabLine(tabs []Tab, active Tab, width int) (cells []tabCell, cutLeft bool) {
	if len(tabs) == 0 {
		return nil, false
	}
	widths := make([]int, len(tabs))
	at := 0
	for i, t := range tabs {
		widths[i] = ansi.StringWidth(t.String()) + 2
		if t == active {
			at = i
		}
	}
	first, span := 0, 0
	for i := 0; i <= at; i++ {
		span += widths[i]
	}
	for span > width-1 && first < at {
		span -= widths[first]
		first++
	}
	x := 1
	for i := first; i < len(tabs); i++ {
		t := tabs[i]
		label := " " + t.String() + " "
		if t == active {
			label = "[" + t.String() + "]"
		}
		c := tabCell{tab: t, from: x, to: x + widths[i], label: label, active: t == active}
		cells = append(cells, c)
		x = c.to
		if x >= width {
			break
		}
	}
	return cells, first > 0
}
