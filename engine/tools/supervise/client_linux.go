package supervise

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// Enable makes Start available in this process: the running binary,
// re-executed through /proc/self/exe (the same file even when it was
// replaced on disk since), is the supervisor: its main must dispatch
// Subcommand to Run. The supervisor finds what a call left through the
// children files of /proc, which a kernel built without
// CONFIG_PROC_CHILDREN lacks; without them, or without /proc, supervision
// stays off and commands run in their own process group only.
func Enable() {
	if _, err := os.Stat("/proc/self/exe"); err != nil {
		return
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/self/task/%d/children", os.Getpid())); err != nil {
		return
	}
	self = "/proc/self/exe"
}

// supervisor is the supervisor process as its callers see it.
type supervisor struct {
	pid     int
	control *net.UnixConn
	// exited is closed when the process has ended.
	exited chan struct{}
}

var (
	// current is the supervisor later calls go to, once started.
	current   *supervisor
	currentMu sync.Mutex
)

// theSupervisor is the running supervisor, started now if there is none
// or the last one has died.
func theSupervisor() (*supervisor, error) {
	currentMu.Lock()
	defer currentMu.Unlock()
	if current != nil {
		select {
		case <-current.exited:
		default:
			return current, nil
		}
	}
	s, err := startSupervisor()
	current = s
	return s, err
}

// forget drops s as the current supervisor, if it still is: a call found
// its control socket closed.
func forget(s *supervisor) {
	currentMu.Lock()
	defer currentMu.Unlock()
	if current == s {
		current = nil
	}
}

// startSupervisor starts the supervisor with its end of the control socket
// as fd 3, in a process group of its own, which keeps a ctrl-c at the
// terminal from reaching it: stepwise stops its commands itself. Its
// standard streams are /dev/null, so that no reader of stepwise's waits
// for it.
func startSupervisor() (*supervisor, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("cannot start the supervisor of exec tools: %w", err)
	}
	ours := os.NewFile(uintptr(fds[0]), "supervisor control")
	theirs := os.NewFile(uintptr(fds[1]), "control")
	cmd := exec.Command(self, Subcommand)
	cmd.ExtraFiles = []*os.File{theirs}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	theirs.Close()
	if err != nil {
		ours.Close()
		return nil, fmt.Errorf("cannot start the supervisor of exec tools: %w", err)
	}
	s := &supervisor{pid: cmd.Process.Pid, exited: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(s.exited)
	}()
	conn, err := net.FileConn(ours)
	// Closing ours, when FileConn failed, is the supervisor's end.
	ours.Close()
	if err != nil {
		return nil, fmt.Errorf("cannot start the supervisor of exec tools: %w", err)
	}
	s.control = conn.(*net.UnixConn)
	return s, nil
}

// errControlClosed is a call refused at once because the supervisor is
// gone: nothing was started, and a new supervisor may take it.
var errControlClosed = errors.New("the supervisor's control socket is closed")

// Process is a command started under the supervisor.
type Process struct {
	conn    *net.UnixConn
	replies *bufio.Reader
	// supervisorPid and call are the supervisor and the value of callVar
	// in the command's environment, for Running.
	supervisorPid int
	call          string
	group         int
	stopOnce      sync.Once
	stopped       atomic.Bool
	// stopOnCancel stops the call when its context ends; End undoes it.
	stopOnCancel func() bool
	// exited is closed when the command has ended; status, or endErr when
	// the supervisor ended before the command did, is set before that.
	exited chan struct{}
	status unix.WaitStatus
	endErr error
	// done is closed when the supervisor closed the call's socket: it
	// has killed all of the call there was left, or has ended.
	done chan struct{}
}

// Start starts cmd, made with exec.Command, under the supervisor: cmd's
// program with its arguments, environment and directory, and its standard
// streams, each nil (/dev/null) or an *os.File. The command runs in a
// process group of its own. ctx ending is Stop; one that has ended starts
// the command only to stop it.
func Start(ctx context.Context, cmd *exec.Cmd) (*Process, error) {
	if !Enabled() {
		return nil, errNotEnabled
	}
	if cmd.Err != nil {
		return nil, cmd.Err
	}
	request, err := encodeRequest(cmd)
	if err != nil {
		return nil, err
	}
	stdio, opened, err := stdioFiles(cmd)
	defer func() {
		for _, f := range opened {
			f.Close()
		}
	}()
	if err != nil {
		return nil, err
	}
	s, err := theSupervisor()
	if err != nil {
		return nil, err
	}
	p, err := s.start(request, stdio)
	if errors.Is(err, errControlClosed) {
		// The supervisor died since it was last asked: a new one takes
		// the call, which the dead one never saw.
		forget(s)
		if s, err = theSupervisor(); err != nil {
			return nil, err
		}
		p, err = s.start(request, stdio)
	}
	if err != nil {
		return nil, err
	}
	p.stopOnCancel = context.AfterFunc(ctx, p.Stop)
	return p, nil
}

// encodeRequest is what the supervisor needs of cmd besides its streams,
// as the call's socket carries it: a length, then the program, the
// directory, the arguments and the environment, each a count or a string
// after its length. An empty directory is this process's, as exec's is.
func encodeRequest(cmd *exec.Cmd) ([]byte, error) {
	for _, kv := range cmd.Env {
		if strings.IndexByte(kv, 0) >= 0 {
			// As exec.Cmd.Start refuses it.
			return nil, errors.New("exec: environment variable contains NUL")
		}
	}
	dir := cmd.Dir
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		dir = wd
	}
	args := cmd.Args
	if len(args) == 0 {
		args = []string{cmd.Path}
	}
	env := cmd.Environ()
	b := make([]byte, 4, 256)
	putString := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	putString(cmd.Path)
	putString(dir)
	for _, list := range [][]string{args, env} {
		b = binary.AppendUvarint(b, uint64(len(list)))
		for _, s := range list {
			putString(s)
		}
	}
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b, nil
}

// stdioFiles are cmd's standard streams as files: /dev/null, opened here
// and to be closed by the caller, for a nil one.
func stdioFiles(cmd *exec.Cmd) (files [3]*os.File, opened []*os.File, err error) {
	for i, stream := range [3]any{cmd.Stdin, cmd.Stdout, cmd.Stderr} {
		switch f := stream.(type) {
		case nil:
			null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
			if err != nil {
				return files, opened, err
			}
			files[i] = null
			opened = append(opened, null)
		case *os.File:
			files[i] = f
		default:
			return files, opened, fmt.Errorf("supervise: the command's %s is a %T; a supervised command's streams are files or nil", [3]string{"stdin", "stdout", "stderr"}[i], f)
		}
	}
	return files, opened, nil
}

// start asks s for a command: the call's socket and streams go in one
// message on the control socket, the request on the call's socket, and
// the supervisor answers there with the command's pid and its call, or
// why it could not start it.
func (s *supervisor) start(request []byte, stdio [3]*os.File) (*Process, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	ours := os.NewFile(uintptr(fds[0]), "supervised call")
	defer ours.Close()
	rights := unix.UnixRights(fds[1], int(stdio[0].Fd()), int(stdio[1].Fd()), int(stdio[2].Fd()))
	_, _, err = s.control.WriteMsgUnix([]byte{'c'}, rights, nil)
	unix.Close(fds[1])
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errControlClosed, err)
	}
	conn, err := net.FileConn(ours)
	if err != nil {
		return nil, err
	}
	p := &Process{conn: conn.(*net.UnixConn), supervisorPid: s.pid, exited: make(chan struct{}), done: make(chan struct{})}
	p.replies = bufio.NewReader(p.conn)
	if err := p.begin(request); err != nil {
		p.conn.Close()
		return nil, err
	}
	go p.awaitEnd()
	return p, nil
}

// errSupervisorEnded is a call whose supervisor ended before it could
// answer: killed from outside, since it outlives stepwise's every call.
var errSupervisorEnded = errors.New("the supervisor of exec tools ended before the command did (was it killed?); the next call starts a new one")

// begin sends the request and reads the supervisor's first answer: 's',
// the pid and the call's number; or 'e' and why the command could not
// start.
func (p *Process) begin(request []byte) error {
	if _, err := p.conn.Write(request); err != nil {
		return errSupervisorEnded
	}
	kind, err := p.replies.ReadByte()
	if err != nil {
		return errSupervisorEnded
	}
	switch kind {
	case 's':
		pid, err := binary.ReadUvarint(p.replies)
		if err != nil {
			return errSupervisorEnded
		}
		number, err := binary.ReadUvarint(p.replies)
		if err != nil || pid <= 1 || pid > math.MaxInt32 {
			// A pid out of range would make the group's kill another's.
			return errSupervisorEnded
		}
		p.group = int(pid)
		p.call = callValue(p.supervisorPid, number)
		return nil
	case 'e':
		why, err := io.ReadAll(p.replies)
		if err != nil || len(why) == 0 {
			return errSupervisorEnded
		}
		return errors.New(string(why))
	}
	return fmt.Errorf("the supervisor of exec tools answered %q", kind)
}

// callValue is the value of callVar for call number of supervisor pid:
// no other process's supervisor has the pid while this one runs.
func callValue(pid int, number uint64) string {
	return strconv.Itoa(pid) + "." + strconv.FormatUint(number, 10)
}

// awaitEnd reads the supervisor's report of the command's end, 'x' and
// the wait status, and then waits for it to close the call's socket.
func (p *Process) awaitEnd() {
	defer close(p.done)
	var reply [5]byte
	if _, err := io.ReadFull(p.replies, reply[:]); err != nil || reply[0] != 'x' {
		p.endErr = errSupervisorEnded
		close(p.exited)
		return
	}
	p.status = unix.WaitStatus(binary.BigEndian.Uint32(reply[1:]))
	close(p.exited)
	io.Copy(io.Discard, p.replies)
}

// Exited is closed when the command itself has ended. What it started may
// still be running until Stop.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Running reports whether anything the command started may still be
// running, for Stop to end: a process in its group, or an orphan the
// supervisor inherited that carries the call's variable. After Stop,
// the supervisor kills them.
func (p *Process) Running() bool {
	if p.stopped.Load() {
		return false
	}
	if unix.Kill(-p.group, 0) == nil {
		return true
	}
	for _, pid := range children(p.supervisorPid) {
		if carries(pid, p.call) {
			return true
		}
	}
	return false
}

// Stop tells the supervisor to kill the command, if it still runs, and
// everything it started. It returns at once.
func (p *Process) Stop() {
	p.stopOnce.Do(func() {
		p.stopped.Store(true)
		p.conn.CloseWrite()
	})
}

// End stops what is left (Stop), waits until the supervisor has killed
// it, and returns how the command ended: nil, an *ExitError, or why the
// supervisor could not tell.
func (p *Process) End() error {
	p.stopOnCancel()
	p.Stop()
	<-p.done
	p.conn.Close()
	switch {
	case p.endErr != nil:
		return p.endErr
	case p.status.Exited() && p.status.ExitStatus() == 0:
		return nil
	case p.status.Signaled():
		return &ExitError{Code: -1, Signal: p.status.Signal(), CoreDumped: p.status.CoreDump()}
	}
	return &ExitError{Code: p.status.ExitStatus()}
}
