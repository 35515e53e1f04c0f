//go:build !unix

package tools

import (
	"os"
	"os/exec"
)

// inOwnGroup does nothing where there are no unix process groups.
func inOwnGroup(cmd *exec.Cmd) {}

// killProcessGroup kills just the process where there are no unix process
// groups.
func killProcessGroup(p *os.Process) error {
	if p == nil {
		return os.ErrProcessDone
	}
	return p.Kill()
}

// groupAlive reports false where there are no unix process groups: only
// the time bound of the wait for output applies there.
func groupAlive(p *os.Process) bool { return false }
