package debugger

import (
	"fmt"
	"slices"
	"sync"

	"github.com/stepwise-dev/stepwise/engine"
)

// Breakpoints is one plan's table of logical breakpoints, as delve keeps
// them: each numbered, enabled or not, with its pattern, kinds and
// condition, and whether a failure stops the run (break on error). A
// workspace keeps one table per plan: the workbench edits it while no run
// goes on, and every session that debugs the plan matches its stops
// against it, so that a breakpoint set mid-run takes effect at once. Hit
// counts are a run's, and each session keeps its own.
//
// A table with a file (OpenBreakpoints) keeps itself there on every change,
// merged with what another writer (a workbench and a stepwise debug of the
// same plan) kept meanwhile. It is safe for concurrent use.
type Breakpoints struct {
	mu           sync.Mutex
	list         []*Breakpoint
	nextID       int
	breakOnError bool

	// file is where the table is kept, "" for none; kept is what the file
	// held when the table last read or wrote it, the base of a merge.
	file string
	kept []keptBreakpoint
}

// NewBreakpoints returns an empty table that is kept nowhere, with break on
// error on.
func NewBreakpoints() *Breakpoints {
	return &Breakpoints{breakOnError: true}
}

// Set adds a breakpoint and returns it. Setting one that is already set
// (the same pattern, kinds and condition) returns that one.
func (t *Breakpoints) Set(pattern string, kinds []engine.StopKind, cond *Condition) (Breakpoint, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	b, err := t.setLocked(0, pattern, kinds, cond)
	if err != nil {
		return Breakpoint{}, err
	}
	err = t.keepLocked()
	// Keeping merges in what another writer kept meanwhile, which may
	// have numbered the new breakpoint anew: answer with it as kept.
	spec := b.Spec()
	for _, kept := range t.list {
		if kept.Spec() == spec {
			b = kept
		}
	}
	return *b, err
}

// SetTransient adds a breakpoint that the table holds but never keeps in
// its file (Breakpoint.Transient), and returns it. Setting one that is
// already set, kept or not, returns that one.
func (t *Breakpoints) SetTransient(pattern string, kinds []engine.StopKind, cond *Condition) (Breakpoint, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	spec := Breakpoint{Pattern: pattern, Kinds: kinds, Condition: cond}.Spec()
	had := slices.ContainsFunc(t.list, func(b *Breakpoint) bool { return b.Spec() == spec })
	b, err := t.setLocked(0, pattern, kinds, cond)
	if err != nil {
		return Breakpoint{}, err
	}
	if !had {
		b.Transient = true
	}
	return *b, nil
}

// setLocked adds a breakpoint under id, or the next free id when id is 0
// or taken.
func (t *Breakpoints) setLocked(id int, pattern string, kinds []engine.StopKind, cond *Condition) (*Breakpoint, error) {
	spec := Breakpoint{Pattern: pattern, Kinds: kinds, Condition: cond}.Spec()
	for _, b := range t.list {
		if b.Spec() == spec {
			return b, nil
		}
	}
	if id <= 0 || t.find(id) != nil {
		id = t.nextID + 1
	}
	b, err := newBreakpoint(id, pattern, kinds, cond)
	if err != nil {
		return nil, err
	}
	t.nextID = max(t.nextID, id)
	t.list = append(t.list, b)
	return b, nil
}

// Clear removes a breakpoint.
func (t *Breakpoints) Clear(id int) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	i := slices.IndexFunc(t.list, func(b *Breakpoint) bool { return b.ID == id })
	if i < 0 {
		return noBreakpoint(id)
	}
	t.list = slices.Delete(t.list, i, i+1)
	return t.keepLocked()
}

// SetCondition changes a breakpoint's condition; nil removes it.
func (t *Breakpoints) SetCondition(id int, cond *Condition) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.find(id)
	if b == nil {
		return noBreakpoint(id)
	}
	if cond != nil {
		if err := cond.compile(); err != nil {
			return err
		}
	}
	// A breakpoint is handed out by value and read by sessions as it is
	// matched: it is replaced, not changed in place.
	changed := *b
	changed.Condition = cond
	t.replace(b, &changed)
	return t.keepLocked()
}

// Enable turns a breakpoint on or off.
func (t *Breakpoints) Enable(id int, on bool) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.find(id)
	if b == nil {
		return noBreakpoint(id)
	}
	changed := *b
	changed.Enabled = on
	t.replace(b, &changed)
	return t.keepLocked()
}

func (t *Breakpoints) replace(old, b *Breakpoint) {
	t.list[slices.Index(t.list, old)] = b
}

func noBreakpoint(id int) error {
	return fmt.Errorf("there is no breakpoint %d (breakpoints lists them)", id)
}

func (t *Breakpoints) find(id int) *Breakpoint {
	for _, b := range t.list {
		if b.ID == id {
			return b
		}
	}
	return nil
}

// List returns the breakpoints, in the order they were set.
func (t *Breakpoints) List() []Breakpoint {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]Breakpoint, len(t.list))
	for i, b := range t.list {
		out[i] = *b
	}
	return out
}

// BreakOnError sets whether a failure about to propagate stops the run. It
// is on in a new table, and is not kept in the file: it is a choice of the
// session at hand.
func (t *Breakpoints) BreakOnError(on bool) {
	t.mu.Lock()
	t.breakOnError = on
	t.mu.Unlock()
}

// BreaksOnError reports whether break on error is on.
func (t *Breakpoints) BreaksOnError() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.breakOnError
}

// match calls fire with each enabled breakpoint whose pattern and kinds
// match st, in order, all of them, so that each counts its hit; it
// returns the first that fire says stops the run there, or nil. fire runs with the table locked and must not call
// back into it.
func (t *Breakpoints) match(st *engine.Stop, fire func(*Breakpoint) bool) *Breakpoint {
	t.mu.Lock()
	defer t.mu.Unlock()
	var fired *Breakpoint
	for _, b := range t.list {
		if b.matches(st) && fire(b) && fired == nil {
			fired = b
		}
	}
	return fired
}
