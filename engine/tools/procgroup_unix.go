//go:build unix

package tools

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// inOwnGroup starts cmd in a new process group. Besides making the group
// killable as one, it keeps a ctrl-c at the terminal from reaching the
// child directly: stepwise shuts its children down itself.
func inOwnGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

// killProcessGroup sends SIGKILL to the process group p leads. A group
// that is already gone is os.ErrProcessDone, which exec.Cmd ignores.
func killProcessGroup(p *os.Process) error {
	if p == nil {
		return os.ErrProcessDone
	}
	err := syscall.Kill(-p.Pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}

// groupAlive reports whether any process is left in the process group p
// led.
func groupAlive(p *os.Process) bool {
	return p != nil && syscall.Kill(-p.Pid, 0) == nil
}
