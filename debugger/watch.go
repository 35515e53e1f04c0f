package debugger

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

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
		if err != nil {
			out[i].Value, out[i].Error = nil, err.Error()
		}
	}
	return out
}
