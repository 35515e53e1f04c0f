package debugger

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// BreakpointFile is where a plan's breakpoints are kept between sessions:
// .stepwise/breakpoints/<plan>.json in its project.
func BreakpointFile(projectDir, plan string) string {
	return filepath.Join(projectDir, "breakpoints", plan+".json")
}

// LoadBreakpoints sets the breakpoints kept in file on the session. A
// file that does not exist holds none.
func (s *Session) LoadBreakpoints(file string) error {
	data, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var kept []Breakpoint
	if err := json.Unmarshal(data, &kept); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	if err := s.Restore(kept); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return nil
}

// Restore sets breakpoints as another session or a file held them: the
// same ids, patterns, kinds, conditions and enabled state. A front end
// that runs a plan again hands the last session's breakpoints to the next.
func (s *Session) Restore(bps []Breakpoint) error {
	for _, k := range bps {
		// The condition is compiled afresh for this session; the other
		// one may still be evaluating its own.
		var cond *Condition
		if k.Condition != nil {
			c := Condition{Value: k.Condition.Value, Op: k.Condition.Op, To: k.Condition.To}
			cond = &c
		}
		b, err := s.breakAs(k.ID, k.Pattern, slices.Clone(k.Kinds), cond)
		if err != nil {
			return err
		}
		if !k.Enabled {
			s.Enable(b.ID, false)
		}
	}
	return nil
}

// SaveBreakpoints writes the session's breakpoints to file (hit counts
// are of one run, and are not kept).
func (s *Session) SaveBreakpoints(file string) error {
	bps := s.Breakpoints()
	for i := range bps {
		bps[i].Hits, bps[i].ConditionError = 0, ""
	}
	data, err := json.MarshalIndent(bps, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	tmp := file + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, file)
}
