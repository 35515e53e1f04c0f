package debugger

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/stepwise-dev/stepwise/engine"
)

// BreakpointFile is where a plan's breakpoints are kept between sessions:
// .stepwise/breakpoints/<plan>.json in its project.
func BreakpointFile(projectDir, plan string) string {
	return filepath.Join(projectDir, "breakpoints", plan+".json")
}

// keptBreakpoint is a breakpoint as its file keeps it: what the user set,
// without a run's hit count.
type keptBreakpoint struct {
	ID        int               `json:"id"`
	Pattern   string            `json:"pattern"`
	Kinds     []engine.StopKind `json:"kinds,omitempty"`
	Condition *Condition        `json:"condition,omitempty"`
	Enabled   bool              `json:"enabled"`
}

func (k keptBreakpoint) spec() string {
	return Breakpoint{Pattern: k.Pattern, Kinds: k.Kinds, Condition: k.Condition}.Spec()
}

// KeepError reports that a change to a table took effect but could not be
// written to the table's file: the breakpoints hold for this session only.
type KeepError struct {
	File string
	Err  error
}

func (e *KeepError) Error() string {
	return fmt.Sprintf("the breakpoints hold for this session but could not be kept in %s: %v", e.File, e.Err)
}

func (e *KeepError) Unwrap() error { return e.Err }

// OpenBreakpoints returns the table kept in file, which a file that does
// not exist yet starts empty. A file that cannot be read is an error that
// names it; the table is then returned all the same, empty and kept
// nowhere, so that a session can go on without its kept breakpoints.
func OpenBreakpoints(file string) (*Breakpoints, error) {
	t := NewBreakpoints()
	kept, err := readKept(file)
	if err != nil {
		return t, err
	}
	t.file, t.kept = file, kept
	t.adopt(kept)
	return t, nil
}

// Refresh takes in what another writer kept in the table's file since the
// table last read or wrote it.
func (t *Breakpoints) Refresh() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.file == "" {
		return nil
	}
	disk, err := readKept(t.file)
	if err != nil {
		return err
	}
	if !slices.EqualFunc(disk, t.kept, sameKept) {
		t.adopt(mergeKept(t.kept, t.keptForm(), disk))
		t.kept = disk
	}
	return nil
}

// keepLocked writes the table to its file, merged with what another writer
// kept there since the table last read or wrote it: a breakpoint the other
// added stays, one it removed goes, and this table's own additions,
// removals and enabling win over the file's. The table then holds the
// merge. Reading, merging and renaming the new file into place take
// microseconds; two writers saving within them is the one case where the
// later still wins outright.
func (t *Breakpoints) keepLocked() error {
	if t.file == "" {
		return nil
	}
	disk, err := readKept(t.file)
	if err != nil {
		return &KeepError{File: t.file, Err: err}
	}
	merged := mergeKept(t.kept, t.keptForm(), disk)
	if err := writeKept(t.file, merged); err != nil {
		return &KeepError{File: t.file, Err: err}
	}
	t.adopt(merged)
	t.kept = merged
	return nil
}

// keptForm is the table as its file keeps it: its transient breakpoints
// left out.
func (t *Breakpoints) keptForm() []keptBreakpoint {
	out := make([]keptBreakpoint, 0, len(t.list))
	for _, b := range t.list {
		if !b.Transient {
			out = append(out, keptBreakpoint{ID: b.ID, Pattern: b.Pattern, Kinds: b.Kinds, Condition: b.Condition, Enabled: b.Enabled})
		}
	}
	return out
}

// adopt makes the table hold kept and its transient breakpoints, reusing
// the compiled breakpoints that did not change. A transient one another
// writer has kept since is the kept one now; one whose id another writer
// gave a kept one is numbered anew (its holder finds it by its spec).
func (t *Breakpoints) adopt(kept []keptBreakpoint) {
	list := make([]*Breakpoint, 0, len(kept))
	for _, k := range kept {
		i := slices.IndexFunc(t.list, func(b *Breakpoint) bool {
			return !b.Transient && b.ID == k.ID && b.Enabled == k.Enabled && b.Spec() == k.spec()
		})
		if i >= 0 {
			list = append(list, t.list[i])
			continue
		}
		// readKept compiled every breakpoint of the file, and the others
		// come from the table: this cannot fail.
		b, _ := newBreakpoint(k.ID, k.Pattern, k.Kinds, k.Condition)
		b.Enabled = k.Enabled
		list = append(list, b)
	}
	for _, b := range list {
		t.nextID = max(t.nextID, b.ID)
	}
	for _, b := range t.list {
		if !b.Transient || slices.ContainsFunc(list, func(k *Breakpoint) bool { return k.Spec() == b.Spec() }) {
			continue
		}
		if slices.ContainsFunc(list, func(k *Breakpoint) bool { return k.ID == b.ID }) {
			// Handed out by value: renumbered as a copy.
			moved := *b
			moved.ID = t.nextID + 1
			b = &moved
		}
		t.nextID = max(t.nextID, b.ID)
		list = append(list, b)
	}
	slices.SortStableFunc(list, func(a, b *Breakpoint) int { return a.ID - b.ID })
	t.list = list
}

// mergeKept merges two writers' changes: mine changed base into mine; the
// other writer changed it into disk. Breakpoints are the same breakpoint
// when their specs are; an id two writers gave to different breakpoints
// stays with the one in disk, and the other is numbered anew.
func mergeKept(base, mine, disk []keptBreakpoint) []keptBreakpoint {
	bySpec := func(list []keptBreakpoint) map[string]keptBreakpoint {
		m := make(map[string]keptBreakpoint, len(list))
		for _, k := range list {
			m[k.spec()] = k
		}
		return m
	}
	inBase, inMine, inDisk := bySpec(base), bySpec(mine), bySpec(disk)
	var merged []keptBreakpoint
	used := map[int]bool{}
	for _, d := range disk {
		spec := d.spec()
		b, wasThere := inBase[spec]
		m, stillMine := inMine[spec]
		switch {
		case wasThere && !stillMine:
			continue // this writer removed it
		case wasThere && m.Enabled != b.Enabled:
			d.Enabled = m.Enabled // this writer turned it on or off
		}
		merged = append(merged, d)
		used[d.ID] = true
	}
	next := 0
	for _, k := range disk {
		next = max(next, k.ID)
	}
	for _, m := range mine {
		spec := m.spec()
		if _, wasThere := inBase[spec]; wasThere {
			continue // kept or removed on disk, as decided above
		}
		if _, there := inDisk[spec]; there {
			continue // both writers added it
		}
		if used[m.ID] {
			next = max(next, m.ID)
			m.ID = next + 1
		}
		next = max(next, m.ID)
		used[m.ID] = true
		merged = append(merged, m)
	}
	// A breakpoint whose condition changed is a removal and an addition
	// to the merge; the table still lists by id.
	slices.SortFunc(merged, func(a, b keptBreakpoint) int { return a.ID - b.ID })
	return merged
}

func sameKept(a, b keptBreakpoint) bool {
	return a.ID == b.ID && a.Enabled == b.Enabled && a.spec() == b.spec()
}

// readKept reads the breakpoints kept in file, each checked as break
// checks it; a file that does not exist keeps none.
func readKept(file string) ([]keptBreakpoint, error) {
	data, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var kept []keptBreakpoint
	if err := json.Unmarshal(data, &kept); err != nil {
		return nil, fmt.Errorf("%s: %w (remove the file to start without kept breakpoints)", file, err)
	}
	for i, k := range kept {
		if k.Condition != nil {
			// A condition is compiled afresh for this table: the one read
			// carries only its text.
			c := Condition{Value: k.Condition.Value, Op: k.Condition.Op, To: k.Condition.To, toMissing: k.Condition.toMissing}
			kept[i].Condition = &c
		}
		if _, err := newBreakpoint(k.ID, k.Pattern, k.Kinds, kept[i].Condition); err != nil {
			return nil, fmt.Errorf("%s: breakpoint %d: %w", file, k.ID, err)
		}
	}
	return kept, nil
}

// writeKept writes the file whole, through a temporary file renamed into
// place, so that a reader never sees half of it.
func writeKept(file string, kept []keptBreakpoint) error {
	if kept == nil {
		kept = []keptBreakpoint{}
	}
	data, err := json.MarshalIndent(kept, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), filepath.Base(file)+".*.tmp")
	if err != nil {
		return err
	}
	_, err = tmp.Write(append(data, '\n'))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), file)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}
