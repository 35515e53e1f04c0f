//go:build !linux

package supervise

import (
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

// inOwnGroup is never needed where Start is never used.
func inOwnGroup(cmd *exec.Cmd) {}

// liveChildren is never needed where Start is never used.
func liveChildren(parent int) []int { return nil }
