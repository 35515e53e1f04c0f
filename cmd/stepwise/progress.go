package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	bar "charm.land/bubbles/v2/progress"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/tui/format"
	"github.com/stepwise-dev/stepwise/tui/progress"
)

// progressFlags are how run, replay and fork show a run as it goes.
type progressFlags struct {
	// quiet leaves stderr to errors and warnings: no progress, no
	// summary.
	quiet bool
	// every is how often, off a terminal, a running step is told: at
	// every, 2*every, ... after it started; 0 tells none.
	every time.Duration
}

func (f *progressFlags) add(cmd *cobra.Command) {
	cmd.Flags().BoolVarP(&f.quiet, "quiet", "q", false, "print only the deliverable, errors and warnings: no progress, no summary on stderr")
	f.every = 10 * time.Second
	heldFlag(cmd, durationValue{&f.every}, "progress-every", "off a terminal, write a progress line for each step once it has run this long, and again each time as long again; 0 writes none (the start and end lines stay)")
}

func (f progressFlags) check() error {
	if f.every < 0 {
		return usageError{fmt.Errorf("--progress-every takes a duration such as 10s, or 0 for no progress lines, not %s", f.every)}
	}
	return nil
}

// frameEvery is how often the live block is redrawn: at most ten times
// a second, which reads as live and costs the run nothing it would
// notice.
const frameEvery = 100 * time.Millisecond

// barWidth is the width of a list step's bar, in cells.
const barWidth = 20

// forkOrigin is where a fork starts: the recorded run it forks and the
// step it runs again from.
type forkOrigin struct {
	run, from string
}

// String is the line that tells a fork as it starts.
func (f forkOrigin) String() string {
	return fmt.Sprintf("fork of run %s from %s", format.ShortID(f.run), f.from)
}

// progressDisplay tells a person on stderr how a run goes, from its
// events. On a terminal it keeps a live block below what the run writes:
// a line for each running step (a bar for a map, filter or reduce, the
// round for an agent), the run's spend and time; when a step ends its line
// leaves a summary above the block. Off a terminal it writes lines a log
// keeps: each top-level step as it starts, how it ended when that was not
// plain success, and every so often where each long step is.
type progressDisplay struct {
	// w takes the lines; on a terminal it is a lineBatcher over block.
	w io.Writer
	// block is the live block; nil off a terminal.
	block *liveBlock
	// lines says whether steps are told as they start and end off a
	// terminal: run and fork do, a replay (every step answered from the
	// record) does not.
	lines bool
	// fork is where the run forks a recorded run from; zero for a run
	// that is no fork.
	fork  forkOrigin
	every time.Duration

	mu  sync.Mutex
	run *progress.Run
	// answered says the solver's answer is streaming to the terminal the
	// block was on, which closed it.
	answered bool
	// told counts, off a terminal, the periods each running step has
	// been told at.
	told map[*progress.Step]int
	// reusedItems are, by top-level step, the steps of its items a fork
	// reused: a map that runs one item again tells the others with its
	// end.
	reusedItems map[string][]string
	// started wakes the telling off a terminal when a step starts: its
	// first line is due a period later.
	started chan struct{}

	stop   chan struct{}
	done   chan struct{}
	closed sync.Once
}

// newProgressDisplay starts the display of a run on s.err: a live block
// when stderr is a terminal that can redraw it, log lines otherwise; nil
// when quiet. w is the
// batcher of the run's lines (the display's own, warnings, failovers):
// on a terminal it is made to write above the block.
func newProgressDisplay(s *streams, w *lineBatcher, flags progressFlags, lines bool, fork forkOrigin) *progressDisplay {
	if flags.quiet {
		return nil
	}
	d := &progressDisplay{w: w, lines: lines, fork: fork, every: flags.every, run: progress.New(time.Now()), told: map[*progress.Step]int{},
		started: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	// A dumb terminal cannot move its cursor up to redraw the block: it
	// gets the log lines.
	if f, ok := s.err.(*os.File); ok && isTerminal(f) && os.Getenv("TERM") != "dumb" {
		d.block = &liveBlock{out: colorprofile.NewWriter(f, os.Environ()), fd: f.Fd(), bar: bar.New(bar.WithWidth(barWidth), bar.WithoutPercentage(), bar.WithFillCharacters('█', '░'))}
		w.divert(d.block)
		go d.redraw()
		return d
	}
	if d.every == 0 {
		close(d.done)
		return d
	}
	go d.tellRunningSteps()
	return d
}

// sink is the display's engine sink, reading only the kinds it shows.
func (d *progressDisplay) sink() engine.Sink {
	return engine.Selective{Kinds: append([]engine.EventKind{engine.EventWarning, engine.EventAsk}, progress.Kinds...), Sink: d}
}

// Event takes one event of the run in, and writes the lines it makes.
func (d *progressDisplay) Event(e engine.Event) {
	top := e.Path != "" && !strings.Contains(e.Path, "/")
	d.mu.Lock()
	ended := d.run.Event(e)
	if ended != nil {
		delete(d.told, ended)
	}
	if end, ok := e.Payload.(engine.StepEnded); ok && !top && end.Reused == "fork" {
		if _, _, inItem := outerItem(e.Path); inItem {
			step, _, _ := strings.Cut(e.Path, "/")
			if d.reusedItems == nil {
				d.reusedItems = map[string][]string{}
			}
			d.reusedItems[step] = append(d.reusedItems[step], e.Path)
		}
	}
	var reused []string
	if ended != nil {
		reused = d.reusedItems[ended.Path]
		delete(d.reusedItems, ended.Path)
	}
	answered := d.answered
	d.mu.Unlock()
	if line := warningLine(e); line != "" {
		fmt.Fprintln(d.w, line)
	}
	switch pl := e.Payload.(type) {
	case engine.RunStarted:
		if d.fork.run != "" {
			fmt.Fprintln(d.w, d.fork)
		}
	case engine.StepStarted:
		if top {
			select {
			case d.started <- struct{}{}:
			default:
			}
		}
		switch {
		case !top || d.block != nil || !d.lines:
		case pl.Tool == e.Path: // the solver
			fmt.Fprintf(d.w, "→ %s\n", e.Path)
		default:
			fmt.Fprintf(d.w, "→ %s %s\n", e.Path, pl.Tool)
		}
	case engine.StepEnded:
		if ended == nil || (answered && pl.Tool == "solver") {
			// The answer on the screen ends where the run left it,
			// maybe mid-line; the usage line after the run says what
			// the solver spent.
			return
		}
		if line := d.endLine(ended); line != "" {
			fmt.Fprintln(d.w, line)
		}
		if len(reused) > 0 && ended.End.Reused == "" && (d.block != nil || d.lines) {
			// Said as a step the fork reused is: its items that did not
			// run again, as the fork's summary counts them.
			fmt.Fprintf(d.w, "%s %s reused from run %s\n", format.MarkReused, stepsText(reused), format.ShortID(d.fork.run))
		}
	case engine.Asked:
		// Nobody was there to ask: the run went on with the plan's
		// default, which a person reading the log should not have to
		// guess. (A replay's answers are the record's, told by the
		// replay.)
		if d.lines && !pl.Answered && pl.Reason == engine.AskUnavailable {
			fmt.Fprintf(d.w, "? %s: no terminal to ask %q on; took the default %s\n", e.Path, pl.Prompt, engine.JSONText(pl.Answer))
		}
	}
}

// warningKinds are the kinds of the events that may warn (warningText).
var warningKinds = []engine.EventKind{engine.EventWarning, engine.EventModelCall}

// warningText is what e warns of at its path; "" for an event that warns
// of nothing. A step warns of what it did to its values (a [limits]
// model_input_bytes cut, an agent that settled with its default_output),
// and a model call that answered after failed attempts took longer than
// its reply shows, which off a terminal nothing else would say.
func warningText(e engine.Event) string {
	switch pl := e.Payload.(type) {
	case engine.Warning:
		return pl.Message
	case engine.ModelCalled:
		if len(pl.Retries) > 0 && pl.Error == "" {
			return fmt.Sprintf("%s/%s answered %s", pl.Provider, pl.Model, retriedText(pl.Retries))
		}
	}
	return ""
}

// warningLine is the line that warns on stderr of what e tells; "" for
// an event that warns of nothing.
func warningLine(e engine.Event) string {
	if text := warningText(e); text != "" {
		return fmt.Sprintf("warning: %s: %s", e.Path, text)
	}
	return ""
}

// failoverText is the warning that a model call gave up on the model
// from, failing with err, and fell over to the model to: the answer comes
// from another model than the one asked for.
func failoverText(from, to string, err error) string {
	return fmt.Sprintf("%s failed (%v); falling over to %s", from, err, to)
}

// shownBy is the sink that shows a run on stderr, w, as it goes: the
// display's, or under --quiet, where there is none, one that tells the
// run's warnings alone. --quiet leaves out progress, not warnings: they
// are rare, and each says that something is wrong with the result or
// what it cost.
func shownBy(display *progressDisplay, w io.Writer) engine.Sink {
	if display != nil {
		return display.sink()
	}
	return engine.Selective{Kinds: warningKinds, Sink: engine.SinkFunc(func(e engine.Event) {
		if line := warningLine(e); line != "" {
			fmt.Fprintln(w, line)
		}
	})}
}

// endLine is what is told of a top-level step that ended: on a terminal
// always, its summary; off one, only how it ended when that was not
// plain success. A failure deep in a body is told by its top-level step.
func (d *progressDisplay) endLine(s *progress.Step) string {
	end := s.End
	switch {
	case end.Status == engine.StepFailed && (d.block != nil || d.lines):
		return fmt.Sprintf("✗ %s failed after %s", stepName(s)+summaryTail(s), format.Millis(end.Ms)) + spendText(s.Spend, " ")
	case end.Status == engine.StepAborted && (d.block != nil || d.lines):
		// Said as the debug adapter's console says it: a person stopped
		// the run there, nothing failed.
		return fmt.Sprintf("■ %s aborted after %s", stepName(s)+summaryTail(s), format.Millis(end.Ms)) + spendText(s.Spend, " ")
	case end.Reused == "fork" && (d.block != nil || d.lines):
		// Said as inspect marks it: the step did not run, the fork took
		// its recorded result.
		return fmt.Sprintf("%s %s reused from run %s", format.MarkReused, s.Path, format.ShortID(d.fork.run))
	case end.Status == engine.StepSkipped && end.Decided == engine.BySet.String() && (d.block != nil || d.lines):
		// Said as inspect and the fork's summary say it: nobody injected
		// it at a stop.
		return fmt.Sprintf("%s %s %s", format.Mark(end.Decided, ""), s.Path, format.DecisionText(end.Decided, ""))
	case end.Status == engine.StepSkipped && (d.block != nil || d.lines):
		return fmt.Sprintf("⊘ %s skipped with an injected result", s.Path)
	case d.block != nil:
		return "✓ " + stepName(s) + summaryTail(s) + " " + format.Millis(end.Ms) + spendText(s.Spend, " ")
	}
	return ""
}

// summaryTail is what a step's summary says of its items or rounds: how
// many, when every one ended well; else how many of all ended well, and
// how the others that ended did ("2 of 4 items done (2 cancelled)").
func summaryTail(s *progress.Step) string {
	switch {
	case s.List != nil:
		l := s.List
		items := func(n int) string { return map[bool]string{true: " item", false: " items"}[n == 1] }
		done := l.Done - l.Failed - l.Cancelled
		if done == l.Done && l.Done >= l.Total {
			return " " + progress.Thousands(done) + items(done)
		}
		tail, count := " "+progress.Thousands(done), done
		if l.Total >= 0 {
			tail += " of " + progress.Thousands(l.Total)
			count = l.Total
		}
		tail += items(count) + " done"
		if notes := l.Notes(); len(notes) > 0 {
			tail += " (" + strings.Join(notes, ", ") + ")"
		}
		return tail
	case s.Agent:
		return " " + countNoun(s.Rounds, "round", "rounds") + " " + countNoun(s.Tools, "tool", "tools")
	}
	return ""
}

// stepName is a step as its lines name it: its path and tool, or the
// solver's path alone.
func stepName(s *progress.Step) string {
	if s.Tool == s.Path {
		return s.Path
	}
	return s.Path + " " + s.Tool
}

// spendText is what s cost, after sep: "1.2M tok $3.41"; "" when nothing
// was spent.
func spendText(s progress.Spend, sep string) string {
	if s.Calls == 0 {
		return ""
	}
	text := sep + format.Tokens(s.Tokens) + " tok"
	if s.Priced {
		text += sep + format.Cost(s.CostUSD)
	}
	return text
}

// stepText is where a running step is: its items, its round, its time.
// withBar draws a list step's bar.
func (d *progressDisplay) stepText(s *progress.Step, now time.Time, withBar bool, sep string) string {
	name := stepName(s)
	parts := []string{}
	elapsed := format.Duration(now.Sub(s.Started))
	switch {
	case s.List != nil:
		l := s.List
		if withBar && l.Total >= 0 {
			frac := 0.0
			if l.Total > 0 {
				frac = float64(l.Done) / float64(l.Total)
			}
			name += " " + d.block.bar.ViewAs(frac)
		}
		parts = append(parts, l.Words(now)...)
	case s.Agent:
		parts = append(parts, "round "+strconv.Itoa(s.Rounds+1), countNoun(s.Tools, "tool", "tools"))
	}
	parts = append(parts, elapsed)
	return name + " " + strings.Join(parts, sep)
}

// redraw draws the block every frame until the display closes.
func (d *progressDisplay) redraw() {
	defer close(d.done)
	t := time.NewTicker(frameEvery)
	defer t.Stop()
	for {
		select {
		case <-d.stop:
			return
		case now := <-t.C:
			d.block.draw(d.frame(now))
		}
	}
}

// tellRunningSteps writes, off a terminal, a line for each running step
// at every period of its age, until the display closes. It sleeps until
// the next line is due rather than ticking: a ticker of the period runs
// out of step with the steps, whose lines then come up to a period late,
// and a tick a hair short of a period after the last line skips one.
func (d *progressDisplay) tellRunningSteps() {
	defer close(d.done)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		d.mu.Lock()
		due, ok := d.nextDue()
		d.mu.Unlock()
		var wake <-chan time.Time
		if ok {
			timer.Reset(time.Until(due))
			wake = timer.C
		}
		select {
		case <-d.stop:
			timer.Stop()
			return
		case <-d.started:
		case <-wake:
			d.tellDue(time.Now())
		}
	}
}

// nextDue is when the next progress line of a running step is due; ok is
// false when no step runs.
func (d *progressDisplay) nextDue() (due time.Time, ok bool) {
	for _, s := range d.run.Running() {
		at := s.Started.Add(time.Duration(d.told[s]+1) * d.every)
		if !ok || at.Before(due) {
			due, ok = at, true
		}
	}
	return due, ok
}

// tellDue writes a line for each running step whose next line is due at
// now: one line, however many periods it is behind.
func (d *progressDisplay) tellDue(now time.Time) {
	d.mu.Lock()
	var lines []string
	for _, s := range d.run.Running() {
		if periods := int(now.Sub(s.Started) / d.every); periods > d.told[s] {
			d.told[s] = periods
			lines = append(lines, "… "+d.stepText(s, now, false, ", "))
		}
	}
	d.mu.Unlock()
	for _, line := range lines {
		fmt.Fprintln(d.w, line)
	}
}

// frame is the block's lines at now, one per running step, then the
// run's spend and time; none while no step runs.
func (d *progressDisplay) frame(now time.Time) []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var lines []string
	for _, s := range d.run.Running() {
		lines = append(lines, "▸ "+d.stepText(s, now, true, " · "))
	}
	if len(lines) == 0 {
		// Between steps there is nothing to watch: a block of the run's
		// time alone would flicker in and out between each step's summary.
		return nil
	}
	return append(lines, "  run "+format.Duration(now.Sub(d.run.Started))+spendText(d.run.Spend, " · "))
}

// stepAside clears the block while a prompt reads the terminal, leaving a
// line that says what the run waits for, and stops redrawing it until
// resume.
func (d *progressDisplay) stepAside(path, waitsFor string) {
	if d == nil || d.block == nil {
		return
	}
	d.block.setAside(true, fmt.Sprintf("⏸ %s waits for %s", path, waitsFor))
}

// answerStreams closes the block for good: the solver's answer is
// streaming to the terminal it is on, and the two cannot share it.
func (d *progressDisplay) answerStreams() {
	if d == nil {
		return
	}
	d.mu.Lock()
	d.answered = true
	d.mu.Unlock()
	d.close()
}

// resume draws the block again after a prompt.
func (d *progressDisplay) resume() {
	if d == nil || d.block == nil {
		return
	}
	d.block.setAside(false, "")
}

// close stops the display and clears the block; what the run writes
// afterwards goes straight to stderr. It may be called more than once.
func (d *progressDisplay) close() {
	if d == nil {
		return
	}
	d.closed.Do(func() {
		close(d.stop)
		<-d.done
		if d.block != nil {
			d.block.setAside(true, "")
		}
	})
}

// liveBlock is a few lines at the bottom of a terminal, redrawn in place,
// with what is written to it printed above them. It reads nothing from
// the terminal: ctrl-c stays the terminal's, and stdin the run's.
type liveBlock struct {
	out io.Writer
	fd  uintptr
	bar bar.Model

	mu sync.Mutex
	// drawn is how many lines of the block are on the screen, above the
	// cursor.
	drawn int
	aside bool
	buf   []byte
}

// Write prints p above the block: the block is cleared and drawn again
// at the next frame.
func (b *liveBlock) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.clear(b.buf[:0]), p...)
	_, err := b.out.Write(b.buf)
	return len(p), err
}

// clear appends to buf what takes the block off the screen: each of its
// lines erased, from the bottom up. Erasing to the end of the screen from
// its first line would be shorter, but where the block starts at the top
// of the screen that clears the whole screen, which tmux (scroll-on-clear)
// keeps in its history: the block would be left in the scrollback.
func (b *liveBlock) clear(buf []byte) []byte {
	if b.drawn > 0 {
		buf = append(buf, '\r')
		for range b.drawn {
			buf = append(buf, "\x1b[A\x1b[2K"...)
		}
		b.drawn = 0
	}
	return buf
}

// draw puts lines on the screen in place of the block, each cut to the
// terminal's width and no more of them than its height leaves room for.
func (b *liveBlock) draw(lines []string) {
	width, height, err := term.GetSize(b.fd)
	if err != nil || width < 10 || height < 2 {
		width, height = 80, 24
	}
	if room := height - 1; len(lines) > room {
		more := len(lines) - room + 1
		lines = append(lines[:room-1:room-1], fmt.Sprintf("  … and %d more", more))
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.aside {
		return
	}
	buf := b.clear(b.buf[:0])
	for _, line := range lines {
		buf = append(buf, ansi.Truncate(line, width-1, "…")...)
		buf = append(buf, '\n')
	}
	b.drawn = len(lines)
	b.buf = buf
	b.out.Write(buf)
}

// setAside clears the block and stops drawing it (aside), leaving note
// in its place when there is one, or lets it be drawn again.
func (b *liveBlock) setAside(aside bool, note string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.aside = aside
	if !aside {
		return
	}
	buf := b.clear(b.buf[:0])
	if note != "" {
		buf = append(buf, note+"\n"...)
	}
	b.buf = buf
	b.out.Write(buf)
}
