package tui

import (
	"slices"

	"github.com/stepwise-dev/stepwise/tui/approval"
	"github.com/stepwise-dev/stepwise/tui/breakpoints"
	"github.com/stepwise-dev/stepwise/tui/catalog"
	"github.com/stepwise-dev/stepwise/tui/common"
	"github.com/stepwise-dev/stepwise/tui/form"
	"github.com/stepwise-dev/stepwise/tui/help"
	"github.com/stepwise-dev/stepwise/tui/output"
	"github.com/stepwise-dev/stepwise/tui/palette"
	"github.com/stepwise-dev/stepwise/tui/runs"
	"github.com/stepwise-dev/stepwise/tui/valueedit"
)

// layer is an overlay on the stack.
type layer struct {
	common.Component
	// panel says the overlay lists things beside a run (the runs, the
	// breakpoints, a diff): it takes every key but :, which opens the
	// command line over it, so a held run can be moved on by command with
	// it open. The others (help, editors, forms, the catalog) take every
	// key, : as text.
	panel bool
	// docked says the overlay is the output pane, drawn at the foot of
	// the page, full width, rather than centred over it: the page stays
	// in view and keeps the keys and the mouse the pane does not take.
	docked bool
}

// overlays is the stack of what is drawn over the page. The top one is
// drawn and takes the keys and the mouse; each closes itself with a
// common.CloseOverlay, which takes it off wherever it stands.
type overlays []layer

// top returns the overlay on top, if any is open.
func (s overlays) top() (layer, bool) {
	if len(s) == 0 {
		return layer{}, false
	}
	return s[len(s)-1], true
}

// push puts an overlay on top; one already open moves there.
func (s *overlays) push(c common.Component, panel bool) {
	s.remove(c)
	*s = append(*s, layer{Component: c, panel: panel})
}

// dock puts the output pane on top, docked at the foot of the page.
func (s *overlays) dock(c common.Component) {
	s.remove(c)
	*s = append(*s, layer{Component: c, docked: true})
}

// isOpen reports whether c is on the stack.
func (s overlays) isOpen(c common.Component) bool {
	return slices.ContainsFunc(s, func(l layer) bool { return l.Component == c })
}

// remove takes an overlay off the stack, wherever it stands.
func (s *overlays) remove(c common.Component) {
	*s = slices.DeleteFunc(*s, func(l layer) bool { return l.Component == c })
}

// panels are the overlays the workbench opens, kept while they are
// closed: the runs panel keeps its list and its diff mark, the
// breakpoints panel follows the plan's table, the catalog its filter.
// They are held by pointer, as the stack holds them.
type panels struct {
	help   help.Model
	editor valueedit.Model // the value to inject, replace or answer
	// approval is the prompt at a tool call a gated run holds.
	approval approval.Model
	form     form.Model // the plan's inputs before a run
	// formDebug says the form's inputs start a debug run.
	formDebug   bool
	catalog     catalog.Model
	runs        runs.Model // earlier runs
	diff        runs.DiffModel
	breakpoints breakpoints.Model
	// output is the history of command lines and answers, kept while
	// it is closed.
	output output.Model
	// palette lists every key and command; it keeps nothing while
	// closed, and opens unfiltered.
	palette palette.Model
}

func newPanels(c common.Common, logPath string) *panels {
	return &panels{
		help:        help.New(c, logPath),
		editor:      valueedit.New(c),
		approval:    approval.New(c),
		form:        form.New(c),
		catalog:     catalog.New(c),
		runs:        runs.New(c),
		diff:        runs.NewDiff(c),
		breakpoints: breakpoints.New(c),
		output:      output.New(c),
		palette:     palette.New(c),
	}
}

// setSize sizes the overlays for a window: the help may take it all; the
// others take most of it, leaving the header and the status line in
// view.
func (p *panels) setSize(width, height int) {
	p.help.SetSize(width, height)
	ow, oh := overlaySize(width, height)
	p.editor.SetSize(ow, oh)
	p.approval.SetSize(ow, min(oh, approvalHeight))
	p.form.SetSize(ow, oh)
	p.catalog.SetSize(ow, oh)
	// The runs panel's columns (inputs, how each run was made) use
	// every cell the window has.
	p.runs.SetSize(max(width-4, 0), oh)
	p.diff.SetSize(ow, oh)
	p.breakpoints.SetSize(ow, oh)
	p.palette.SetSize(ow, oh)
	p.output.SetSize(width, outputHeight(height))
}

// outputHeight is the height of the output pane in a window of height
// lines: half the page, so that the page's top half stays in view above
// it, at least 8 lines where the page has them, at most 24.
func outputHeight(height int) int {
	page := max(height-3, 0)
	return min(max(page/2, min(8, page)), 24)
}

// approvalHeight is the most lines the approval prompt takes: a call's
// arguments are usually short, and the run stays in view under it.
const approvalHeight = 16

// overlaySize is the box of a panel drawn over the panes: nearly the whole
// window on a small terminal, at most 120 by 40 on a large one.
func overlaySize(width, height int) (int, int) {
	return min(max(width-4, 0), 120), min(max(height-4, 0), 40)
}
