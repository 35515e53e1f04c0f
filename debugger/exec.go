package debugger

import (
	"errors"
	"fmt"
	"slices"

	"github.com/stepwise-dev/stepwise/engine"
)

// Answer is what carrying out an instruction found, as data: a front end
// renders it (the line driver as text or JSON, the workbench on its status
// line and panes) and adds nothing of its own to what a verb does.
type Answer struct {
	Verb Verb
	// State is where the run is after a movement or a decision, or, for
	// where, where it is held.
	State *State
	// Breakpoint is the breakpoint break set or clear, cond, enable and
	// disable acted on, as it is now (as it was, for clear).
	Breakpoint *Breakpoint
	// Breakpoints lists the table, for breakpoints.
	Breakpoints []Breakpoint
	// BreakOnError is errors' setting, as it is now.
	BreakOnError bool
	// Path and Value are what print read.
	Path  string
	Value any
	// Stack is the stop's, for stack; Threads are the run's live
	// threads, for threads.
	Stack   []engine.Frame
	Threads []Thread
	// Watch is the watch watch set, read at the stop if the run is held;
	// Watches lists them, for watches.
	Watch   *WatchValue
	Watches []WatchValue
	// Warnings say what the user may not have meant: a breakpoint that no
	// stop of the plan can reach (its Unmatched), a change that holds but
	// was not kept.
	Warnings []string
}

// ErrNotSessionVerb is Exec's answer to a verb only a front end carries
// out: help, quit, and the workbench's own (run, goto, open...).
var ErrNotSessionVerb = errors.New("not a verb of the session")

// breakpointVerbs are the verbs a breakpoint table carries out.
var breakpointVerbs = []Verb{VerbBreak, VerbClear, VerbCond, VerbEnable, VerbDisable, VerbBreakpoints, VerbErrors}

// runningVerbs are the session's verbs that need no stop: they act while
// the run goes on as much as while it is held.
var runningVerbs = []Verb{VerbPause, VerbThreads, VerbWatch, VerbUnwatch, VerbWatches}

// ActsWhileRunning reports whether a session carries in out while its
// run goes on: the breakpoint verbs and those that need no stop. The
// others want a held run, and are refused with ErrRunning while it goes.
func (in Instruction) ActsWhileRunning() bool {
	return slices.Contains(breakpointVerbs, in.Verb) || slices.Contains(runningVerbs, in.Verb)
}

// Exec carries out one instruction on a session: every verb that edits
// its breakpoints, moves or decides at the stop, or reads the stop. A
// verb a front end carries out itself is refused with ErrNotSessionVerb.
func (s *Session) Exec(in Instruction) (Answer, error) {
	if slices.Contains(breakpointVerbs, in.Verb) {
		a, err := s.bps.Exec(in, s.shapes)
		if err != nil {
			return a, err
		}
		// The table's breakpoints, with this run's hits.
		hits := s.Breakpoints()
		withHits := func(b *Breakpoint) {
			if i := slices.IndexFunc(hits, func(h Breakpoint) bool { return h.ID == b.ID }); i >= 0 {
				*b = hits[i]
			}
		}
		if a.Breakpoint != nil && in.Verb != VerbClear {
			withHits(a.Breakpoint)
		}
		for i := range a.Breakpoints {
			withHits(&a.Breakpoints[i])
		}
		return a, nil
	}
	a := Answer{Verb: in.Verb}
	if cmd, ok := in.Command(); ok {
		st, err := s.Do(cmd)
		if err != nil {
			return a, err
		}
		a.State = &st
		return a, nil
	}
	// The verbs that need no stop: they act while the run goes on too.
	switch in.Verb {
	case VerbPause:
		return a, s.Pause()
	case VerbThreads:
		a.Threads = s.Threads()
		return a, nil
	case VerbThread:
		st, err := s.SwitchThread(in.Path)
		if err != nil {
			return a, err
		}
		a.State = &st
		return a, nil
	case VerbWatch:
		w, err := s.Watch(in.Path)
		if err != nil {
			return a, err
		}
		a.Watch = &w
		return a, nil
	case VerbUnwatch:
		return a, s.Unwatch(in.ID)
	case VerbWatches:
		a.Watches = s.Watches()
		return a, nil
	}
	st, err := s.held()
	switch {
	case in.Verb != VerbPrint && in.Verb != VerbStack && in.Verb != VerbWhere:
		return a, ErrNotSessionVerb
	case err != nil:
		return a, err
	}
	switch in.Verb {
	case VerbPrint:
		a.Path = in.Path
		a.Value, err = st.Stop.Eval(in.Path)
	case VerbStack:
		a.Stack = st.Stop.Stack
	case VerbWhere:
		a.State = &st
	}
	return a, err
}

// held is the State of the stop the run is held at, or an error saying
// why there is none.
func (s *Session) held() (State, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.current != nil:
		return s.stateLocked(), nil
	case s.finished:
		return State{}, errors.New("the run has finished")
	default:
		return State{}, ErrRunning
	}
}

// Exec carries out a breakpoint verb on the table (break, clear, cond,
// enable, disable, breakpoints, errors) for the plan of shapes (nil: none
// known), which say whether a pattern can match: a breakpoint that cannot
// is set, and flagged with a warning naming the nearest pattern that
// would. A change that holds but could not be kept in the table's file is
// answered with a warning, not an error.
func (t *Breakpoints) Exec(in Instruction, shapes *Shapes) (Answer, error) {
	a := Answer{Verb: in.Verb}
	// Another session of the plan may have kept changes since: the
	// command acts on the table as it stands, ids included. A file that
	// cannot be read is said once, by keeping when the command keeps.
	refreshErr := t.Refresh()
	var err error
	switch in.Verb {
	case VerbBreak:
		var b Breakpoint
		b, err = t.Set(in.Pattern, in.Kinds, in.Condition)
		if b.ID != 0 {
			a.Breakpoint = &b
		}
	case VerbClear:
		if b := t.get(in.ID); b != nil {
			a.Breakpoint = b
		}
		err = t.Clear(in.ID)
	case VerbCond:
		err = t.SetCondition(in.ID, in.Condition)
		a.Breakpoint = t.get(in.ID)
	case VerbEnable, VerbDisable:
		err = t.Enable(in.ID, in.Verb == VerbEnable)
		a.Breakpoint = t.get(in.ID)
	case VerbBreakpoints:
		a.Breakpoints = t.List()
	case VerbErrors:
		t.BreakOnError(in.On)
	default:
		return a, ErrNotSessionVerb
	}
	if shapes != nil {
		// A breakpoint answered carries its flags whatever the verb, as
		// the list does; the verbs that make it say them as warnings too.
		shapes.Flag(a.Breakpoints)
		if a.Breakpoint != nil {
			flagged := []Breakpoint{*a.Breakpoint}
			shapes.Flag(flagged)
			a.Breakpoint = &flagged[0]
		}
		if in.Verb == VerbBreak && a.Breakpoint != nil && a.Breakpoint.Unmatched != "" {
			a.Warnings = append(a.Warnings, a.Breakpoint.Unmatched)
		}
		if (in.Verb == VerbBreak || in.Verb == VerbCond) && err == nil {
			a.Warnings = append(a.Warnings, unknownSteps(in.Condition, shapes.plan, shapes.catalog)...)
		}
	}
	a.BreakOnError = t.BreaksOnError()
	if keep := (*KeepError)(nil); errors.As(err, &keep) {
		a.Warnings = append(a.Warnings, keep.Error())
		err = nil
	} else if refreshErr != nil {
		a.Warnings = append(a.Warnings, fmt.Sprintf("the breakpoints kept in %s could not be read again: %v", t.file, refreshErr))
	}
	return a, err
}

// get returns a copy of breakpoint id, or nil.
func (t *Breakpoints) get(id int) *Breakpoint {
	t.mu.Lock()
	defer t.mu.Unlock()
	if b := t.find(id); b != nil {
		c := *b
		return &c
	}
	return nil
}
