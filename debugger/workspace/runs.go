package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/config"
	"github.com/stepwise-dev/stepwise/engine/path"
	"github.com/stepwise-dev/stepwise/engine/record"
	"github.com/stepwise-dev/stepwise/engine/store"
)

// NoStoreError says why there are no recorded runs to read: the storage
// backend is memory, or nothing was recorded yet. Listing runs meets it
// as no runs and a note; asking for one run, as the reason it is unknown.
type NoStoreError struct{ Reason string }

func (e *NoStoreError) Error() string { return e.Reason }

// readStore is the run store to read recorded runs from, opened on first
// use; it is not created for reading.
func (w *Workspace) readStore() (*store.Store, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.store != nil {
		return w.store, nil
	}
	if w.cfg.Storage.Backend == config.BackendMemory {
		return nil, &NoStoreError{"runs are not recorded: the storage backend is memory (set by " + w.cfg.Storage.BackendFrom + ")"}
	}
	file := store.DefaultPath(w.cfg.Settings.DataDir)
	if _, err := os.Stat(file); errors.Is(err, os.ErrNotExist) {
		return nil, &NoStoreError{fmt.Sprintf("no runs are recorded yet (no run store at %s)", file)}
	}
	st, err := store.Open(file)
	if err != nil {
		return nil, err
	}
	w.store = st
	return st, nil
}

// Runs lists recorded runs, newest first. Runs of this project only
// unless the filter names another or AllProjects is set.
func (w *Workspace) Runs(ctx context.Context, f record.RunFilter) ([]record.RunSummary, error) {
	st, err := w.readStore()
	if err != nil {
		return nil, err
	}
	return st.Runs(ctx, f)
}

// OpenRun reads the record of the run id names (its id, or a prefix only
// it has): an unknown id is a *record.NotFoundError, an ambiguous prefix a
// *record.AmbiguousError.
func (w *Workspace) OpenRun(ctx context.Context, id string) (*record.RunDetail, error) {
	st, err := w.readStore()
	if err != nil {
		return nil, noRun(id, err)
	}
	return st.Run(ctx, id)
}

// RunEvents reads a run's record and its events, in order, as the engine
// emitted them. A run still being recorded is read as far as its events
// go.
func (w *Workspace) RunEvents(ctx context.Context, id string) (*record.RunDetail, []engine.Event, error) {
	d, err := w.OpenRun(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	st, _ := w.readStore()
	stored, err := st.Events(ctx, d.ID)
	if err != nil {
		return nil, nil, err
	}
	events := make([]engine.Event, len(stored))
	for i, e := range stored {
		p, err := engine.DecodePayload(e.Kind, e.Payload)
		if err != nil {
			return nil, nil, fmt.Errorf("run %s: event %d at %q: %w", d.ID, e.Seq, e.Path, err)
		}
		events[i] = engine.Event{Seq: e.Seq, Time: e.Time, RunID: d.ID, Path: e.Path, Unit: path.KindOf(e.Path), Kind: e.Kind, Payload: p}
	}
	return d, events, nil
}

// Recording reads a run's record and events for a replay or a fork.
func (w *Workspace) Recording(ctx context.Context, id string) (*debugger.Recording, error) {
	st, err := w.readStore()
	if err != nil {
		return nil, noRun(id, err)
	}
	return debugger.LoadRecording(ctx, st, id)
}

// Diff reads two runs and compares them step by step.
func (w *Workspace) Diff(ctx context.Context, a, b string) (*record.RunDetail, *record.RunDetail, []debugger.StepDiff, error) {
	ra, err := w.OpenRun(ctx, a)
	if err != nil {
		return nil, nil, nil, err
	}
	rb, err := w.OpenRun(ctx, b)
	if err != nil {
		return nil, nil, nil, err
	}
	return ra, rb, debugger.Diff(ra, rb), nil
}

// RemoveRuns deletes the runs ids name, with everything recorded about
// them; nothing when one is unknown, ambiguous or still being recorded.
func (w *Workspace) RemoveRuns(ctx context.Context, ids ...string) (store.Removed, error) {
	st, err := w.readStore()
	if err != nil {
		return store.Removed{}, err
	}
	return st.Remove(ctx, ids...)
}

// PruneRuns deletes the runs of this project (of every project, with
// allProjects or outside a project) that started before olderThan, but for
// the keep newest of each project and any still being recorded, which it
// counts.
func (w *Workspace) PruneRuns(ctx context.Context, olderThan time.Time, keep int, allProjects bool) (store.Removed, error) {
	st, err := w.readStore()
	if err != nil {
		return store.Removed{}, err
	}
	project := ""
	if !allProjects && w.cfg.Project != nil {
		project = w.cfg.Project.Root
	}
	return st.Prune(ctx, olderThan, keep, project)
}

// noRun says a run cannot be read because there is no store.
func noRun(id string, err error) error {
	var none *NoStoreError
	if errors.As(err, &none) {
		return &NoStoreError{fmt.Sprintf("no run '%s': %s", id, none.Reason)}
	}
	return err
}
