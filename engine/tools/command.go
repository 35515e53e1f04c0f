package tools

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync/atomic"
	"time"
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
// has exited and nothing in its process group is left: only a descendant
// that left the group (setsid) can hold a pipe then.
const outputHeldLimit = 5 * time.Second

// runCommand runs cmd, made with exec.CommandContext, in its own process
// group with stdout and stderr read to their end, writes them to stdout
// and stderr, and returns cmd.Wait's error, errOutputHeld, or an
// *OutputLimitError when stdout passed limit bytes: the group is then
// stopped at once, so a runaway command costs no more memory than that.
// stderr is written as it is read: it is for an in-memory tail.
//
// A command's output is complete only when every process holding the write
// end of its pipes has closed it, which is normally the moment it exits.
// exec.Cmd's own copying gives up WaitDelay after the exit and keeps what
// it had, which on a loaded machine is part of the output of a command that
// succeeded. Here the pipes are read to EOF, into memory so that no slow
// writer downstream delays the reading. The one case that waits is a
// descendant still holding a pipe: a pipeGrace after the exit, a process
// group with members left is killed and the call is errOutputHeld, never a
// short answer. The group is killed when the command ends either way, so
// that nothing it started in the background outlives the call.
func runCommand(cmd *exec.Cmd, stdout, stderr io.Writer, limit int64) error {
	ownProcessGroup(cmd)
	dieWithParent(cmd)
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
	err = cmd.Start()
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
			killProcessGroup(cmd.Process)
			io.Copy(io.Discard, outR)
		}
		copied <- struct{}{}
	}()
	go func() { io.Copy(stderr, errR); copied <- struct{}{} }()
	waitErr := cmd.Wait()
	held := awaitOutput(cmd.Process, copied, outR, errR)
	killProcessGroup(cmd.Process)
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
// else held them: a member of its process group still alive a pipeGrace
// after, which is then killed, or, past outputHeldLimit, a descendant
// that left the group, whose pipes are then closed under it.
func awaitOutput(p *os.Process, copied <-chan struct{}, pipes ...*os.File) (held bool) {
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
			case groupAlive(p):
				held = true
				killProcessGroup(p)
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
