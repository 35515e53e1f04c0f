package tools

import (
	"os/exec"
	"syscall"
)

// dieWithParent asks the kernel to kill cmd when stepwise dies, however it
// dies: a SIGKILL gives stepwise no chance to shut its children down, and a
// server left behind would go on running with nobody to answer to. (The
// kernel ties this to the thread that started the child; Go keeps its
// threads for the life of the process unless one is locked and abandoned,
// which this package never does.)
func dieWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
