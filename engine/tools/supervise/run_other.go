//go:build !linux

package supervise

import (
	"context"
	"errors"
	"os/exec"
)

// Enable does nothing where there are no child subreapers: commands run in
// their own process group only.
func Enable() {}

// Run refuses where there are no child subreapers; Start is never used
// there, since Enable leaves it off.
func Run(args []string) error {
	return errors.New(Subcommand + " needs Linux (a child subreaper)")
}

// Process is never made where Start is never used; its methods are those
// the callers of Start use on Linux.
type Process struct{}

// Start refuses, since Enable leaves supervision off.
func Start(ctx context.Context, cmd *exec.Cmd) (*Process, error) { return nil, errNotEnabled }

func (*Process) Exited() <-chan struct{} { return nil }
func (*Process) Running() bool           { return false }
func (*Process) Stop()                   {}
func (*Process) End() error              { return errNotEnabled }
