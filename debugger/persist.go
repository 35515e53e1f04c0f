package debugger

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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
	for _, k := range kept {
		b, err := s.breakAs(k.ID, k.Pattern, k.Kinds, k.Condition)
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
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
		bps[i].Hits = 0
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
