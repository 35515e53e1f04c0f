// Package supervise runs commands under a supervisor process that kills
// everything each of them started.
//
// A process group reaches most of what a command starts, but not a
// descendant that called setsid, and nothing at all once stepwise itself
// is killed with SIGKILL: the kernel's parent-death signal reaches the
// direct child only, and an in-process subreaper dies with stepwise. So
// commands run under the stepwise binary itself, re-executed once per
// stepwise process as `stepwise __supervise` (Run) the first time a
// command is started, and again should that one have died: a child
// subreaper, which inherits every orphan of the commands it starts.
// Starting it once, not once per command, saves every command the start
// of a large Go binary (some 15ms of CPU).
//
// The supervisor and stepwise share a socket pair, the control socket
// (the supervisor's fd 3), on which stepwise asks for each command with
// one message carrying four descriptors (SCM_RIGHTS): the call's own
// socket, and the command's stdin, stdout and stderr. On the call's
// socket stepwise sends the command's program, arguments, environment
// and directory; the supervisor starts the command in a process group of
// its own and answers with its pid, or why it could not start; then with
// its wait status, once the command itself has ended. What the command
// started may still be writing its output: stepwise reads that to its
// end, and then shuts down its side of the call's socket (Stop). The
// supervisor then kills the call's process group and every descendant of
// the call that left it, and closes the call's socket, which tells
// stepwise that nothing of the call is left.
//
// A descendant that left the group (setsid) is told apart from the
// other calls' by its environment: the supervisor gives each command a
// variable naming the call (callVar), which everything it starts
// inherits, and reads /proc/PID/environ of its orphans. A process that
// cleared its environment, or made itself unreadable there (undumpable,
// as setuid programs and some agents are), and left the group cannot be
// told apart: it lives on until the supervisor ends, which kills it.
//
// The control socket is also the supervisor's lifeline: its end of file,
// when the kernel closes it for a stepwise that died however it died,
// tells the supervisor to kill every process below it, each call's and
// whatever could not be told apart, and to exit. A socket's end of file
// was chosen over the parent-death signal: the kernel sends that signal
// when the thread that started the child ends, not the process, and a
// SIGKILL would leave the supervisor no time to clean up, while a handled
// signal races with its installation. The lifeline closes exactly when
// stepwise is gone. A call's socket closes then too, so a call that
// stepwise can no longer stop is stopped.
//
// Only Linux has child subreapers; elsewhere Enable does nothing and
// commands run in their own process group as before.
package supervise

import (
	"errors"
	"fmt"
	"syscall"
)

// Subcommand is the first argument that makes a binary the supervisor. A
// program that calls Enable dispatches `Subcommand` to Run.
const Subcommand = "__supervise"

// callVar is the variable of a command's environment that names its call,
// and so tells which call a process that left the call's process group
// belongs to.
const callVar = "STEPWISE_SUPERVISED_CALL"

// self is how this process re-executes its own binary as the supervisor;
// empty until Enable.
var self string

// Enabled reports whether Start may be used: this binary called Enable and
// supervision works here.
func Enabled() bool { return self != "" }

// errNotEnabled is Start's answer in a binary that did not call Enable.
var errNotEnabled = errors.New("supervise: this binary does not dispatch " + Subcommand + " (supervise.Enable was not called)")

// ExitError is a supervised command that did not succeed: its exit status
// or the signal that ended it. Its text is that of the *exec.ExitError the
// command would have ended with in a process of stepwise's own.
type ExitError struct {
	// Code is the exit status, or -1 when a signal ended the command.
	Code       int
	Signal     syscall.Signal
	CoreDumped bool
}

func (e *ExitError) Error() string {
	text := fmt.Sprintf("exit status %d", e.Code)
	if e.Code < 0 {
		text = "signal: " + e.Signal.String()
	}
	if e.CoreDumped {
		text += " (core dumped)"
	}
	return text
}

// ExitCode is the command's exit status, or -1 when a signal ended it, as
// exec.ExitError's is.
func (e *ExitError) ExitCode() int { return e.Code }
