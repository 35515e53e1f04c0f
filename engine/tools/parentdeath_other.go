//go:build !linux

package tools

import "os/exec"

// dieWithParent does nothing where the kernel cannot kill a child when its
// parent dies; Close and the kill backstop cover every exit stepwise sees.
func dieWithParent(cmd *exec.Cmd) {}
