// Package supervise runs a command under a small supervisor process that
// outlives it just long enough to kill everything it started.
//
// A process group reaches most of what a command starts, but not a
// descendant that called setsid, and nothing at all once stepwise itself
// is killed with SIGKILL: the kernel's parent-death signal reaches the
// direct child only, and an in-process subreaper dies with stepwise. So
// the command runs under the stepwise binary itself, re-executed as
// `stepwise __supervise PATH ARGV...` (Run): a child subreaper, which
// inherits every orphan of the command, and which, when the command has
// ended and its caller is done with it, or when its caller dies, kills
// and reaps every descendant left before it exits the way the command
// did.
//
// The supervisor and its caller share two pipes besides the command's
// standard streams, which pass straight through to the command:
//
//   - the lifeline (the supervisor's fd 3), which the caller holds open
//     and never writes: its end of file, when the caller closes it (Stop,
//     a cancelled context) or when the kernel closes it for a caller that
//     died however it died, tells the supervisor to kill everything;
//   - the report (fd 4), on which the supervisor writes one line when the
//     command has ended: empty, or why it could not be started. The
//     caller learns of the end there, not from the supervisor's exit,
//     because the supervisor must stay to kill what is left until the
//     caller has read the command's output to its end: a background
//     child may still be writing it.
//
// A pipe's end of file was chosen over the parent-death signal to notice
// the caller's death: the kernel sends that signal when the thread that
// started the child ends, not the process, and a SIGKILL would leave the
// supervisor no time to clean up, while a handled signal races with its
// installation. The lifeline closes exactly when the caller is gone.
//
// Only Linux has child subreapers; elsewhere Enable does nothing and
// commands run in their own process group as before.
package supervise

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
)

// Subcommand is the first argument that makes a binary the supervisor. A
// program that calls Enable dispatches `Subcommand PATH ARGV...` to Run.
const Subcommand = "__supervise"

// The supervisor's inherited descriptors, after stdin, stdout and stderr.
const (
	lifelineFD = 3
	reportFD   = 4
)

// self is how this process re-executes its own binary as the supervisor;
// empty until Enable.
var self string

// Enabled reports whether Start may be used: this binary called Enable and
// supervision works here.
func Enabled() bool { return self != "" }

// errNotEnabled is Start's answer in a binary that did not call Enable.
var errNotEnabled = errors.New("supervise: this binary does not dispatch " + Subcommand + " (supervise.Enable was not called)")

// Process is a command started under the supervisor.
type Process struct {
	cmd *exec.Cmd
	// lifeline is the write end of the supervisor's lifeline; closing it
	// is Stop.
	lifeline *os.File
	stopOnce sync.Once
	stopped  atomic.Bool
	// exited is closed when the supervisor reported the command's end
	// (or ended without a report); startErr is set before that.
	exited   chan struct{}
	startErr error
}

// Start starts cmd, made with exec.Command, under the supervisor: the
// supervisor runs in cmd's directory and environment with cmd's standard
// streams, and starts cmd's program, with cmd's arguments, in a process
// group of its own. The supervisor is in a process group of its own too,
// which keeps a ctrl-c at the terminal from reaching it: stepwise stops
// its commands itself. A cancelled context (exec.CommandContext) is Stop.
// cmd must not have ExtraFiles or Cancel set.
func Start(cmd *exec.Cmd) (*Process, error) {
	if !Enabled() {
		return nil, errNotEnabled
	}
	if cmd.Err != nil {
		return nil, cmd.Err
	}
	lifeR, lifeW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	reportR, reportW, err := os.Pipe()
	if err != nil {
		lifeR.Close()
		lifeW.Close()
		return nil, err
	}
	p := &Process{cmd: cmd, lifeline: lifeW, exited: make(chan struct{})}
	cmd.Args = append([]string{self, Subcommand, cmd.Path}, cmd.Args...)
	cmd.Path = self
	cmd.ExtraFiles = []*os.File{lifelineFD - 3: lifeR, reportFD - 3: reportW}
	inOwnGroup(cmd)
	cmd.Cancel = func() error { p.Stop(); return nil }
	err = cmd.Start()
	// The supervisor has its own copies; ours would keep the pipes from
	// ever reaching EOF.
	lifeR.Close()
	reportW.Close()
	if err != nil {
		lifeW.Close()
		reportR.Close()
		return nil, err
	}
	go p.awaitReport(reportR)
	return p, nil
}

// awaitReport reads the supervisor's report of the command's end. A
// supervisor that ended without one (killed from outside) has its exit
// status say what happened.
func (p *Process) awaitReport(report *os.File) {
	defer close(p.exited)
	defer report.Close()
	line, err := bufio.NewReader(report).ReadString('\n')
	if err == nil && line != "\n" {
		p.startErr = errors.New(strings.TrimSuffix(line, "\n"))
	}
}

// Exited is closed when the command itself has ended, or could not start.
// What it started may still be running, and the supervisor with it,
// until Stop.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Running reports whether anything the command started is still running,
// for Stop to end: once the command has ended, every process it started
// that is still alive is a child of the supervisor, or below one, since
// orphans are re-parented to it. After Stop, the supervisor kills them.
func (p *Process) Running() bool {
	return !p.stopped.Load() && len(liveChildren(p.cmd.Process.Pid)) > 0
}

// Stop tells the supervisor to kill the command, if it still runs, and
// everything it started, and then to exit. It returns at once.
func (p *Process) Stop() {
	p.stopOnce.Do(func() {
		p.stopped.Store(true)
		p.lifeline.Close()
	})
}

// End stops what is left (Stop), waits for the supervisor to exit, and
// returns what exec.Cmd.Wait would have for the command itself: the
// supervisor exits with the command's status, or of its signal. A command
// that could not start is the error that said why.
func (p *Process) End() error {
	p.Stop()
	err := p.cmd.Wait()
	<-p.exited
	if p.startErr != nil {
		return p.startErr
	}
	return err
}
