package common

import (
	"slices"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/stepwise-dev/stepwise/debugger"
)

// KeyMap is every key the workbench answers to. Components match against it
// rather than against literal strings, so one place says what each key does
// and the help overlay lists exactly what the code handles.
//
// The run and debug keys are global: they act from any pane, so a run held
// at a stop can be moved on while the user looks around elsewhere. A letter
// that is also a short form of a command of stepwise debug means what that
// command does, as delve's letters do (s steps in, n next, c continue, o
// out, p print, b break); Commands says which key does which command.
type KeyMap struct {
	Up       key.Binding
	Down     key.Binding
	Top      key.Binding
	Bottom   key.Binding
	PageUp   key.Binding
	PageDown key.Binding
	Collapse key.Binding // fold the selected row or value
	Expand   key.Binding // unfold it
	Toggle   key.Binding // fold or unfold
	PrevTab  key.Binding // the inspector's tabs
	NextTab  key.Binding
	Search   key.Binding // filter the tree, or search the inspector's text
	NextHit  key.Binding
	PrevHit  key.Binding

	// The run tree's own: follow the running step, jump to rows.
	Follow     key.Binding
	NextFailed key.Binding
	NextHeld   key.Binding
	Slowest    key.Binding

	NextPane key.Binding
	PrevPane key.Binding
	Jump     key.Binding
	NextPlan key.Binding
	PrevPlan key.Binding
	Narrower key.Binding // move the border between tree and detail left
	Wider    key.Binding // and right
	Zoom     key.Binding // the focused pane fills the page, or not

	Run        key.Binding
	Debug      key.Binding
	Validate   key.Binding
	Next       key.Binding
	StepIn     key.Binding
	StepOut    key.Binding
	Continue   key.Binding
	Skip       key.Binding // inject or replace a value at the stop
	Abort      key.Binding
	Pause      key.Binding
	Print      key.Binding // the command line, with print typed
	Breakpoint key.Binding // toggle a breakpoint on the selected row
	BreakError key.Binding // toggle break on error
	Command    key.Binding // the command line

	Edit        key.Binding // the plan in $EDITOR
	NewPlan     key.Binding
	Tools       key.Binding // the tool catalog
	Runs        key.Binding // the runs panel
	Breakpoints key.Binding // the breakpoints panel
	PlanView    key.Binding // back from a run to the plan
	Replay      key.Binding // replay the selected run
	Fork        key.Binding // fork the run from the selected step
	ForkDebug   key.Binding // the same, under the debugger
	ReplayDebug key.Binding // replay the run under the debugger
	Diff        key.Binding // mark a run, then diff another against it
	Timeline    key.Binding // the run as a waterfall, in the detail pane
	Spend       key.Binding // the run's spend by step and by model, there
	ZoomIn      key.Binding // the timeline's window narrower
	ZoomOut     key.Binding // and wider
	Delete      key.Binding // clear the selected row's breakpoints, or the panel's selected one

	Submit key.Binding // accept an editor or a form

	// AddStep, in the tool catalog, appends a step calling the selected
	// tool to the plan on show: the one key there that writes a file.
	AddStep key.Binding

	// The answers at a tool call a gated run holds for approval.
	Approve  key.Binding
	Deny     key.Binding
	EditArgs key.Binding

	// Output shows the output pane: the command lines typed and their
	// whole answers, which the status line has room for one line of.
	Output key.Binding
	// Palette lists every key and command, filtered as one types, and
	// does the one chosen: nothing to remember. It is ctrl+k because
	// ctrl+p is the inspector search's previous match.
	Palette key.Binding
	// Copy to the terminal's clipboard (OSC 52, which works over ssh and
	// in tmux): the selected row's value, or its path (on the command
	// line, the line).
	Copy     key.Binding
	CopyPath key.Binding

	Help  key.Binding
	Close key.Binding
	Quit  key.Binding
}

// DefaultKeyMap returns the workbench keys.
func DefaultKeyMap() *KeyMap {
	b := func(help, desc string, keys ...string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
	}
	return &KeyMap{
		Up:       b("↑/k", "move up", "k", "up"),
		Down:     b("↓/j", "move down", "j", "down"),
		Top:      b("home", "jump to the top", "home"),
		Bottom:   b("G/end", "jump to the bottom", "G", "end"),
		PageUp:   b("pgup", "page up", "pgup", "ctrl+u"),
		PageDown: b("pgdn", "page down", "pgdown", "ctrl+d"),
		Collapse: b("←/h", "fold", "h", "left"),
		Expand:   b("→/l", "unfold", "l", "right"),
		Toggle:   b("space", "fold or unfold", "space"),
		PrevTab:  b("<", "previous inspector tab", "<", ","),
		NextTab:  b(">", "next inspector tab", ">", "."),
		Search:   b("/", "filter the tree, search the inspector", "/"),
		NextHit:  b("ctrl+n", "next match", "ctrl+n"),
		PrevHit:  b("ctrl+p", "previous match", "ctrl+p"),

		Follow:     b("L", "follow the running step again", "L"),
		NextFailed: b("E", "next failed row", "E"),
		NextHeld:   b("H", "next row held at a stop", "H"),
		Slowest:    b("T", "slowest row, then the next slowest", "T"),

		NextPane: b("tab", "next pane", "tab"),
		PrevPane: b("shift+tab", "previous pane", "shift+tab"),
		Jump:     b("enter", "go to a problem's step", "enter"),
		NextPlan: b("]", "next plan", "]"),
		PrevPlan: b("[", "previous plan", "["),
		Narrower: b("{", "narrower tree pane (or drag its border)", "{"),
		Wider:    b("}", "wider tree pane", "}"),
		Zoom:     b("Z", "zoom the focused pane, or unzoom", "Z"),

		Run:        b("r", "run the plan", "r"),
		Debug:      b("g", "debug run, to breakpoints or the first stop", "g"),
		Validate:   b("v", "validate the plan again", "v"),
		Next:       b("n/enter", "next: over the stop", "n"),
		StepIn:     b("s", "step in", "s"),
		StepOut:    b("o", "step out", "o"),
		Continue:   b("c", "continue to a breakpoint", "c"),
		Skip:       b("i", "inject or replace a value", "i"),
		Abort:      b("a", "abort the run", "a"),
		Pause:      b("z", "pause at the next stop", "z"),
		Print:      b("p", "print a value at the stop", "p"),
		Breakpoint: b("b", "breakpoint on the selected row", "b"),
		BreakError: b("x", "break on error on or off", "x"),
		Command:    b(":", "command line", ":"),

		Edit:        b("e", "edit the plan in $EDITOR", "e"),
		NewPlan:     b("N", "new plan from a skeleton", "N"),
		Tools:       b("t", "tool catalog", "t"),
		Runs:        b("R", "earlier runs", "R"),
		Breakpoints: b("B", "breakpoints panel", "B"),
		PlanView:    b("P", "plan or run in the tree", "P"),
		Replay:      b("y", "replay the run", "y"),
		Fork:        b("f", "fork the run from the selected step", "f"),
		ForkDebug:   b("F", "fork it under the debugger", "F"),
		ReplayDebug: b("Y", "replay the run under the debugger", "Y"),
		Diff:        b("d", "diff: mark a run, then compare", "d"),
		Timeline:    b("w", "timeline of the run (again: the inspector)", "w"),
		Spend:       b("$", "spend of the run by step and model (again: the inspector)", "$"),
		ZoomIn:      b("+", "zoom the timeline in (ctrl+wheel)", "+", "="),
		ZoomOut:     b("-", "zoom it out; ←/→ pan (sideways wheel)", "-"),
		Delete:      b("D", "clear the row's breakpoints (in B: the selected one)", "D"),

		Submit: b("ctrl+s", "accept the value or form", "ctrl+s"),

		AddStep: b("a", "add a step calling the selected tool to the plan", "a"),

		Approve:  b("a", "approve the held call", "a"),
		Deny:     b("d", "deny it", "d"),
		EditArgs: b("e", "edit its arguments", "e"),

		Output:   b("O", "output: command answers in full", "O"),
		Palette:  b("ctrl+k", "palette of every key and command", "ctrl+k"),
		Copy:     b("C", "copy the selected row's value", "C"),
		CopyPath: b("ctrl+y", "copy its path (on the : line, the line)", "ctrl+y"),

		Help:  b("?", "toggle help", "?"),
		Close: b("esc", "close", "esc"),
		Quit:  b("q", "quit", "q", "ctrl+c"),
	}
}

// ShortHelp is the footer line: the keys a newcomer needs first, with
// help text short enough for an 80-column terminal.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{
		Short(k.Down, "j/k", "move"),
		Short(k.NextPane, "tab", "pane"),
		Short(k.Run, "r", "run"),
		Short(k.Debug, "g", "debug"),
		Short(k.Breakpoint, "b", "break"),
		Short(k.Edit, "e", "edit"),
		Short(k.Help, "?", "help"),
		Short(k.Quit, "q", "quit"),
	}
}

// Short is b with the shorter help a footer line has room for.
func Short(b key.Binding, keys, desc string) key.Binding {
	b.SetHelp(keys, desc)
	return b
}

// StopHelp is the footer line while a run is held at a stop.
func (k KeyMap) StopHelp() []key.Binding {
	return []key.Binding{
		Short(k.Next, "n", "next"),
		Short(k.StepIn, "s", "in"),
		Short(k.StepOut, "o", "out"),
		Short(k.Continue, "c", "continue"),
		Short(k.Skip, "i", "inject"),
		Short(k.Print, "p", "print"),
		Short(k.Abort, "a", "abort"),
		Short(k.Command, ":", "command"),
		Short(k.Help, "?", "help"),
	}
}

// AskHelp is the footer line while a run waits at a question: moving on
// opens the answer editor, and declining is a command.
func (k KeyMap) AskHelp() []key.Binding {
	return []key.Binding{
		Short(k.Jump, "enter/i", "answer"),
		Short(k.Command, ":decline", "decline"),
		Short(k.Abort, "a", "abort"),
		Short(k.Command, ":", "command"),
		Short(k.NextPane, "tab", "pane"),
		Short(k.Help, "?", "help"),
	}
}

// ReplayAskHelp is the footer line while a replay waits at a question:
// moving on gives the recorded answer, and the answer editor is for
// answering otherwise.
func (k KeyMap) ReplayAskHelp() []key.Binding {
	return []key.Binding{
		Short(k.Next, "n/c", "recorded answer"),
		Short(k.Skip, "i", "answer otherwise"),
		Short(k.Abort, "a", "abort"),
		Short(k.Command, ":", "command"),
		Short(k.NextPane, "tab", "pane"),
		Short(k.Help, "?", "help"),
	}
}

// EditHelp is the footer line while an editor or a form takes the keys.
func (k KeyMap) EditHelp() []key.Binding {
	return []key.Binding{
		Short(k.Submit, "ctrl+s", "accept"),
		Short(k.Close, "esc", "cancel"),
		Short(k.NextPane, "tab", "next field"),
	}
}

// KeyGroup is a titled group of bindings in the help overlay.
type KeyGroup struct {
	Title    string
	Bindings []key.Binding
}

// The titles of the groups whose keys the table of keys and commands
// lists.
const (
	groupRun    = "Run and debug"
	groupAuthor = "Author and look back"
)

// Groups lists every binding, grouped by the pane or overlay that
// answers it, the way the help overlay shows them. The run keys act from
// every pane.
func (k KeyMap) Groups() []KeyGroup {
	return []KeyGroup{
		{"Tree, lists and panels", []key.Binding{k.Up, k.Down, k.Top, k.Bottom, k.PageUp, k.PageDown, k.Collapse, k.Expand, k.Toggle}},
		{"Panes and plans", []key.Binding{k.NextPane, k.PrevPane, k.Jump, k.NextPlan, k.PrevPlan, k.PlanView,
			k.Narrower, k.Wider, k.Zoom}},
		{"Run tree", []key.Binding{k.Follow, k.NextFailed, k.NextHeld, k.Slowest}},
		{"Inspector", []key.Binding{k.PrevTab, k.NextTab, k.Search, k.NextHit, k.PrevHit}},
		{groupRun, []key.Binding{k.Run, k.Debug, k.Validate, k.Next, k.StepIn, k.StepOut, k.Continue,
			k.Skip, k.Print, k.Abort, k.Pause, k.Breakpoint, k.BreakError, k.Command}},
		{groupAuthor, []key.Binding{k.Edit, k.NewPlan, k.Tools, k.Runs, k.Breakpoints,
			k.Replay, k.ReplayDebug, k.Fork, k.ForkDebug, k.Diff, k.Delete, k.Timeline, k.Spend}},
		{"Timeline", []key.Binding{k.ZoomIn, k.ZoomOut}},
		{"Output and palette", []key.Binding{k.Output, k.Palette}},
		{"Tool catalog", []key.Binding{k.AddStep}},
		{"Approval prompt", []key.Binding{k.Approve, k.Deny, k.EditArgs}},
		{"Copy", []key.Binding{k.Copy, k.CopyPath}},
		{"Workbench", []key.Binding{k.Submit, k.Help, k.Close, k.Quit}},
	}
}

// CheatEntry is a line of the help's cheat sheet: one or more keys and
// one short word for what they do. Covers is the bindings it stands for,
// so a test can hold the sheet to the keymap.
type CheatEntry struct {
	Keys   string
	Word   string
	Covers []key.Binding
}

// CheatGroup is a titled group of the cheat sheet: the keys one pane, or
// the whole workbench, answers to.
type CheatGroup struct {
	Title   string
	Entries []CheatEntry
}

// CheatSheet is the help's first page: every key of Groups with one word
// each, by the pane that answers it, short enough to fit 80x24 at once.
// The pages after it say the same at length.
func (k KeyMap) CheatSheet() []CheatGroup {
	e := func(keys, word string, covers ...key.Binding) CheatEntry {
		return CheatEntry{Keys: keys, Word: word, Covers: covers}
	}
	return []CheatGroup{
		{"Tree", []CheatEntry{
			e("j/k", "move", k.Up, k.Down),
			e("pgup/pgdn", "page", k.PageUp, k.PageDown),
			e("home/G", "ends", k.Top, k.Bottom),
			e("h/l", "fold", k.Collapse, k.Expand),
			e("space", "toggle", k.Toggle),
			e("/", "filter", k.Search),
			e("b", "break", k.Breakpoint),
			e("L", "follow", k.Follow),
			e("E", "failed", k.NextFailed),
			e("H", "held", k.NextHeld),
			e("T", "slowest", k.Slowest),
		}},
		{"Inspector", []CheatEntry{
			e("</>", "tab", k.PrevTab, k.NextTab),
			e("/", "search", k.Search),
			e("ctrl+n/p", "match", k.NextHit, k.PrevHit),
			e("C", "copy", k.Copy),
			e("ctrl+y", "path", k.CopyPath),
		}},
		{"Run", []CheatEntry{
			e("r", "run", k.Run),
			e("g", "debug", k.Debug),
			e("v", "validate", k.Validate),
			e("a", "abort", k.Abort),
			e("R", "runs", k.Runs),
			e("y/Y", "replay", k.Replay, k.ReplayDebug),
			e("f/F", "fork", k.Fork, k.ForkDebug),
			e("d", "diff", k.Diff),
			e("w", "timeline", k.Timeline),
			e("$", "spend", k.Spend),
			e("+/-", "zoom", k.ZoomIn, k.ZoomOut),
		}},
		{"Debug", []CheatEntry{
			e("n", "next", k.Next),
			e("s", "in", k.StepIn),
			e("o", "out", k.StepOut),
			e("c", "continue", k.Continue),
			e("i", "inject", k.Skip),
			e("p", "print", k.Print),
			e("z", "pause", k.Pause),
			e("x", "errors", k.BreakError),
			e("B", "breakpoints", k.Breakpoints),
			e("D", "clear", k.Delete),
		}},
		{"Held call", []CheatEntry{
			e("a", "approve", k.Approve),
			e("d", "deny", k.Deny),
			e("e", "arguments", k.EditArgs),
		}},
		{"Global", []CheatEntry{
			e("tab", "pane", k.NextPane),
			e("shift+tab", "back", k.PrevPane),
			e("[/]", "plan", k.PrevPlan, k.NextPlan),
			e("P", "view", k.PlanView),
			e("enter", "go", k.Jump),
			e("{/}", "split", k.Narrower, k.Wider),
			e("Z", "zoom", k.Zoom),
			e("e", "edit", k.Edit),
			e("N", "new", k.NewPlan),
			e("t", "tools", k.Tools, k.AddStep),
			e(":", "command", k.Command),
			e("O", "output", k.Output),
			e("ctrl+k", "palette", k.Palette),
			e("ctrl+s", "accept", k.Submit),
			e("?", "help", k.Help),
			e("esc", "close", k.Close),
			e("q", "quit", k.Quit),
		}},
	}
}

// CommandLineHelp is the keys of the : command line, which are the
// workbench's keys meaning what they mean on a line.
func (k KeyMap) CommandLineHelp() []key.Binding {
	return []key.Binding{
		Short(k.Jump, k.Jump.Help().Key, "carry the line out"),
		Short(k.NextPane, k.NextPane.Help().Key, "complete a command or a path"),
		Short(k.Up, "↑/↓", "earlier and later lines"),
		Short(k.Close, k.Close.Help().Key, "close the line"),
	}
}

// KeyCommand is a key that does what commands of stepwise debug's
// language do: pressing it means what typing one of them means at the
// same point (b on a row breaks at its path; i opens the editor whose
// value inject, replace or answer take).
type KeyCommand struct {
	Key   key.Binding
	Verbs []debugger.Verb
}

// Commands pairs the keys with the commands they do, the one place that
// says so: the help overlay and the README's table of keys and commands
// read it (Table).
func (k KeyMap) Commands() []KeyCommand {
	return []KeyCommand{
		{k.Breakpoint, []debugger.Verb{debugger.VerbBreak}},
		{k.Delete, []debugger.Verb{debugger.VerbClear}},
		{k.Breakpoints, []debugger.Verb{debugger.VerbBreakpoints}},
		{k.BreakError, []debugger.Verb{debugger.VerbErrors}},
		{k.Continue, []debugger.Verb{debugger.VerbContinue}},
		{k.Next, []debugger.Verb{debugger.VerbNext}},
		{k.StepIn, []debugger.Verb{debugger.VerbStep}},
		{k.StepOut, []debugger.Verb{debugger.VerbOut}},
		{k.Pause, []debugger.Verb{debugger.VerbPause}},
		{k.Skip, []debugger.Verb{debugger.VerbInject, debugger.VerbReplace, debugger.VerbAnswer}},
		{k.Abort, []debugger.Verb{debugger.VerbAbort}},
		{k.Print, []debugger.Verb{debugger.VerbPrint}},
		{k.Run, []debugger.Verb{debugger.VerbRun}},
		{k.Debug, []debugger.Verb{debugger.VerbDebug}},
		{k.Runs, []debugger.Verb{debugger.VerbRuns}},
		{k.Fork, []debugger.Verb{debugger.VerbFork}},
		{k.Diff, []debugger.Verb{debugger.VerbDiff}},
		{k.Tools, []debugger.Verb{debugger.VerbTools}},
		{k.NewPlan, []debugger.Verb{debugger.VerbNew}},
		{k.Help, []debugger.Verb{debugger.VerbHelp}},
		{k.Quit, []debugger.Verb{debugger.VerbQuit}},
	}
}

// TableRow is a row of the table of keys and commands: a command of the
// shared language (Usage, with its short forms in stepwise debug) and the
// workbench key that does it, or a workbench key that no command does
// (Usage empty).
type TableRow struct {
	Usage   string
	Aliases []string
	Key     string
	Does    string
}

// Table is the table of keys and commands: every command of
// debugger.Grammar in its order, with the key that does it, then the run,
// debug and authoring keys that no command does. The help overlay shows
// it, and the README's table is it (a test holds the two together).
func (k KeyMap) Table() []TableRow {
	pairs := k.Commands()
	var rows []TableRow
	for _, syn := range debugger.Grammar() {
		row := TableRow{Usage: syn.Usage(), Aliases: syn.Aliases, Does: syn.Does}
		for _, p := range pairs {
			if slices.Contains(p.Verbs, syn.Verb) {
				row.Key = p.Key.Help().Key
			}
		}
		rows = append(rows, row)
	}
	for _, g := range k.Groups() {
		if g.Title != groupRun && g.Title != groupAuthor {
			continue
		}
		for _, b := range g.Bindings {
			paired := slices.ContainsFunc(pairs, func(p KeyCommand) bool { return p.Key.Help().Key == b.Help().Key })
			if !paired && b.Enabled() {
				rows = append(rows, TableRow{Key: b.Help().Key, Does: b.Help().Desc})
			}
		}
	}
	return rows
}

// InTable reports whether the table of keys and commands lists a group's
// keys, so that the help overlay shows them there and not twice.
func (k KeyMap) InTable(g KeyGroup) bool {
	return g.Title == groupRun || g.Title == groupAuthor
}

// FullHelp satisfies bubbles' help.KeyMap: every binding, by group.
func (k KeyMap) FullHelp() [][]key.Binding {
	var out [][]key.Binding
	for _, g := range k.Groups() {
		out = append(out, g.Bindings)
	}
	return out
}

// Movement is how far a movement key moves a cursor or a scroll position
// through total lines, a page being page lines: -1 or 1 for up and down,
// a page for page up and down, all the way for top and bottom. ok is false
// for any other key. Every list and scrolling pane moves by it, so they all
// answer the same keys the same way.
func (k *KeyMap) Movement(msg tea.KeyPressMsg, page, total int) (delta int, ok bool) {
	switch {
	case key.Matches(msg, k.Up):
		return -1, true
	case key.Matches(msg, k.Down):
		return 1, true
	case key.Matches(msg, k.Top):
		return -total, true
	case key.Matches(msg, k.Bottom):
		return total, true
	case key.Matches(msg, k.PageUp):
		return -page, true
	case key.Matches(msg, k.PageDown):
		return page, true
	}
	return 0, false
}
