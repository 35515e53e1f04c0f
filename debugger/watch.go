package debugger

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/plans/template"
)

// watch is a template path the session evaluates at every stop, for as
// long as the session lasts.
type watch struct {
	id   int
	path string
	tmpl *template.Template
}

// WatchValue is a watch expression and what it read at the stop: a value,
// or why it could not be read. Away from a stop it has neither, and Read
// is false.
type WatchValue struct {
	ID    int
	Path  string
	Value any
	Error string
	Read  bool
}

// MarshalJSON writes {id, path} and, at a stop, the value (null included)
// or the error.
func (w WatchValue) MarshalJSON() ([]byte, error) {
	out := map[string]any{"id": w.ID, "path": w.Path}
	switch {
	case w.Error != "":
		out["error"] = w.Error
	case w.Read:
		out["value"] = w.Value
	}
	return json.Marshal(out)
}

// Watch pins a template path (item.id, E0.issues.0, stop.round), read at
// every stop from now on; the answer has it read at the stop the run is
// held at, if it is.
func (s *Session) Watch(p string) (WatchValue, error) {
	t, err := parsePath(p)
	if err != nil {
		return WatchValue{}, fmt.Errorf("watch %s: %w", p, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastWatch++
	w := watch{id: s.lastWatch, path: p, tmpl: t}
	s.watches = append(s.watches, w)
	if s.current == nil {
		return WatchValue{ID: w.id, Path: p}, nil
	}
	return s.stateLocked().Watches[len(s.watches)-1], nil
}

// Unwatch removes watch id.
func (s *Session) Unwatch(id int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.watches, func(w watch) bool { return w.id == id })
	if i < 0 {
		return fmt.Errorf("there is no watch %d; %s", id, s.watchList())
	}
	s.watches = slices.Delete(s.watches, i, i+1)
	return nil
}

// watchList says which watches there are, for an error.
func (s *Session) watchList() string {
	if len(s.watches) == 0 {
		return "none is set (watch PATH sets one)"
	}
	ids := make([]string, len(s.watches))
	for i, w := range s.watches {
		ids[i] = strconv.Itoa(w.id)
	}
	return "the watches are " + strings.Join(ids, ", ")
}

// Watches lists the watch expressions, read at the stop when the run is
// held.
func (s *Session) Watches() []WatchValue {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.current != nil {
		return s.stateLocked().Watches
	}
	out := make([]WatchValue, len(s.watches))
	for i, w := range s.watches {
		out[i] = WatchValue{ID: w.id, Path: w.path}
	}
	return out
}

// evalWatches reads every watch at the stop snap shows; s.mu is held.
func (s *Session) evalWatches(snap *Snapshot) []WatchValue {
	if len(s.watches) == 0 {
		return nil
	}
	scope := snap.evalScope()
	out := make([]WatchValue, len(s.watches))
	for i, w := range s.watches {
		v, err := w.tmpl.Render(scope)
		out[i] = WatchValue{ID: w.id, Path: w.path, Value: v, Read: true}
		if err = outOfBody(err); err != nil {
			out[i].Value, out[i].Error = nil, err.Error()
		}
	}
	return out
}

// bodyRoots are the roots a map, filter or reduce body has in scope, by
// where they are.
var bodyRoots = map[string]string{
	"item":        "a map, filter or reduce body",
	"index":       "a map, filter or reduce body",
	"accumulator": "a reduce body",
}

// outOfBody says why a path read at a stop outside a body found nothing
// under item, index or accumulator: they are roots of a body's scope, not
// steps, so the template's "missing step" would mislead. Other errors go
// through as they are.
func outOfBody(err error) error {
	var missing *template.MissingStepError
	if errors.As(err, &missing) {
		if where, ok := bodyRoots[missing.Root]; ok {
			return fmt.Errorf("%s is only in scope inside %s", missing.Root, where)
		}
	}
	return err
}

// scopeRoots are the roots a stop's scope may hold besides the plan's
// step ids: the inputs, an item's (item, index, accumulator) and the
// stop's own.
var scopeRoots = []string{"input", "item", "index", "accumulator", "stop"}

// UnknownRoot says why a path to print or watch reads nothing at any stop
// of plan: its first segment names no step of the plan nor a root of the
// scope (input, item, index, accumulator, stop). It is "" when the segment
// names one, or when p is no path, which Watch and print refuse with
// their own error.
func UnknownRoot(plan *plans.Plan, p string) string {
	if _, err := parsePath(p); err != nil || plan == nil {
		return ""
	}
	root, _, _ := strings.Cut(strings.Trim(p, "{} "), ".")
	if slices.Contains(scopeRoots, root) {
		return ""
	}
	known := false
	plans.WalkSteps(plan, func(s *plans.Step) { known = known || s.ID.Value == root })
	if known {
		return ""
	}
	return fmt.Sprintf("no step of the plan is named %s, nor is it a root of the scope (%s), so it reads an error at every stop", root, strings.Join(scopeRoots, ", "))
}
