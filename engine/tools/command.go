package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync/atomic"
	"time"

	"github.com/stepwise-dev/stepwise/engine/tools/supervise"
)

// OutputLimitError is a command that printed more than its limit to
// stdout: it was stopped, and its output is not used.
type OutputLimitError struct{ Limit int64 }

func (e *OutputLimitError) Error() string {
	return fmt.Sprintf("printed more than %d bytes to stdout ([limits] tool_output_bytes), and was stopped", e.Limit)
}

// errOutputHeld is runCommand's answer when the command exited but
// something it started kept its stdout or stderr open: its output may not
// be complete, and the process group has been killed.
var errOutputHeld = errors.New("it exited, but something it started kept its output open")

// outputHeldLimit bounds the wait for the end of a command's output once it
// has exited and nothing it started is left running within reach: only a
// descendant that left the process group of a command without a
// supervisor (or, under one, that cleared its environment as well), or a
// process that is none of its own (one forked for another call, in the
// moment before its exec), can hold a pipe then.
const outputHeldLimit = 5 * time.Second

// runCommand runs cmd, made with exec.Command, until it ends or ctx does,
// with stdout and stderr read to their end, writes them to stdout and
// stderr, and returns how it ended (startedCommand.End), errOutputHeld,
// or an *OutputLimitError when stdout passed limit bytes: everything is
// then stopped at once, so a runaway command costs no more memory than
// that. stderr is written as it is read: it is for an in-memory tail.
// startCommand says how cmd runs.
//
// A command's output is complete only when every process holding the write
// end of its pipes has closed it, which is normally the moment it exits.
// exec.Cmd's own copying gives up WaitDelay after the exit and keeps what
// it had, which on a loaded machine is part of the output of a command that
// succeeded. Here the pipes are read to EOF, into memory so that no slow
// writer downstream delays the reading. The one case that waits is a
// descendant still holding a pipe: a pipeGrace after the exit, what the
// command started is stopped and the call is errOutputHeld, never a short
// answer. Everything it started is stopped when the command ends either
// way, so that nothing it left in the background outlives the call.
func runCommand(ctx context.Context, cmd *exec.Cmd, stdout, stderr io.Writer, limit int64) error {
	return runCommandWith(ctx, startCommand, cmd, stdout, stderr, limit)
}

// runCommandWith is runCommand with cmd started by start.
func runCommandWith(ctx context.Context, start func(context.Context, *exec.Cmd) (startedCommand, error), cmd *exec.Cmd, stdout, stderr io.Writer, limit int64) error {
	// As exec.CommandContext's would, a context that has ended starts
	// nothing.
	if err := ctx.Err(); err != nil {
		return err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return err
	}
	defer outR.Close()
	errR, errW, err := os.Pipe()
	if err != nil {
		outW.Close()
		return err
	}
	defer errR.Close()
	cmd.Stdout, cmd.Stderr = outW, errW
	started, err := start(ctx, cmd)
	// The child has its own copies; ours would keep the pipes from ever
	// reaching EOF.
	outW.Close()
	errW.Close()
	if err != nil {
		return err
	}
	var outBuf bytes.Buffer
	var over atomic.Bool
	copied := make(chan struct{}, 2)
	go func() {
		if n, _ := outBuf.ReadFrom(io.LimitReader(outR, limit+1)); n > limit {
			over.Store(true)
			started.Stop()
			io.Copy(io.Discard, outR)
		}
		copied <- struct{}{}
	}()
	go func() { io.Copy(stderr, errR); copied <- struct{}{} }()
	<-started.Exited()
	held := awaitOutput(started, copied, outR, errR)
	waitErr := started.End()
	switch {
	case over.Load():
		return &OutputLimitError{Limit: limit}
	case held && waitErr == nil:
		return errOutputHeld
	}
	stdout.Write(outBuf.Bytes())
	return waitErr
}

// awaitOutput waits until both pipes are read to EOF (copied has heard
// from both readers) after the command exited, and says whether something
// else held them: something the command started, still running a
// pipeGrace after, which is then stopped, or, past outputHeldLimit, a
// process out of reach (see outputHeldLimit), whose pipes are then closed
// under it.
func awaitOutput(c startedCommand, copied <-chan struct{}, pipes ...*os.File) (held bool) {
	pending := len(pipes)
	timer := time.NewTimer(pipeGrace)
	defer timer.Stop()
	var waited time.Duration
	for pending > 0 {
		select {
		case <-copied:
			pending--
		case <-timer.C:
			waited += pipeGrace
			switch {
			case c.Running():
				held = true
				c.Stop()
			case waited >= outputHeldLimit:
				held = true
				for _, f := range pipes {
					f.Close()
				}
			}
			timer.Reset(pipeGrace)
		}
	}
	return held
}

// startedCommand is a command as runCommand waits for it and stops it:
// a *supervise.Process or a *groupCommand.
type startedCommand interface {
	// Exited is closed when the command itself has ended.
	Exited() <-chan struct{}
	// Running reports whether something the command started may still be
	// running, for Stop to end.
	Running() bool
	// Stop kills the command, if it still runs, and what it started.
	Stop()
	// End stops what is left and returns how the command ended: nil, an
	// exitStatus, or why it could not be told.
	End() error
}

// exitStatus is how a command that did not succeed ended, as End returns
// it: an *exec.ExitError in its own process group, a
// *supervise.ExitError under the supervisor. Its text is the status or
// the signal ("exit status 3", "signal: killed").
type exitStatus interface {
	error
	// ExitCode is the exit status, or -1 when a signal ended the command.
	ExitCode() int
}

// startCommand starts cmd under the supervisor where this binary is one
// (supervise.Enable: the stepwise binary on Linux), which kills everything
// the command started, even what left its process group, and even when
// stepwise is killed. Anywhere else (another program embedding the engine,
// another system), cmd runs in its own process group, killed when the
// command ends, whose leader dies with stepwise: that reaches all but a
// descendant that called setsid, and, once stepwise is killed with
// SIGKILL, all but the leader.
func startCommand(ctx context.Context, cmd *exec.Cmd) (startedCommand, error) {
	if supervise.Enabled() {
		return startSupervised(ctx, cmd)
	}
	return startInGroup(ctx, cmd)
}

// startSupervised starts cmd under the supervisor.
func startSupervised(ctx context.Context, cmd *exec.Cmd) (startedCommand, error) {
	p, err := supervise.Start(ctx, cmd)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// groupCommand is a command running in its own process group.
type groupCommand struct {
	cmd    *exec.Cmd
	exited chan struct{}
	err    error // cmd.Wait's, set before exited closes
	// stopOnCancel kills the group when ctx ends; End undoes it.
	stopOnCancel func() bool
}

// startInGroup starts cmd in a process group of its own, which ctx ending
// kills, cmd itself dying with stepwise.
func startInGroup(ctx context.Context, cmd *exec.Cmd) (startedCommand, error) {
	inOwnGroup(cmd)
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	g := &groupCommand{cmd: cmd, exited: make(chan struct{})}
	g.stopOnCancel = context.AfterFunc(ctx, g.Stop)
	go func() {
		g.err = cmd.Wait()
		close(g.exited)
	}()
	return g, nil
}

func (g *groupCommand) Exited() <-chan struct{} { return g.exited }

// Running reports whether any process is left in the command's group.
func (g *groupCommand) Running() bool { return groupAlive(g.cmd.Process) }

// Stop kills the command's process group.
func (g *groupCommand) Stop() { killProcessGroup(g.cmd.Process) }

// End kills the process group and returns cmd.Wait's error.
func (g *groupCommand) End() error {
	<-g.exited
	g.stopOnCancel()
	g.Stop()
	return g.err
}
