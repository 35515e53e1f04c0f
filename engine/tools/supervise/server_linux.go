package supervise

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// controlFD is the supervisor's end of the control socket.
const controlFD = 3

// errNotByHand is Run's answer when it was not started by Start.
var errNotByHand = errors.New(Subcommand + " is the supervisor stepwise starts for its exec tools, with a socket on descriptor 3; it is not run by hand")

// Run is the supervisor. It returns only when it was not started by
// Start, or cannot be a child subreaper; otherwise it serves calls until
// its lifeline closes, or a signal asks it to stop as a service manager
// stopping everything would, and then kills every process below it and
// exits.
func Run(args []string) error {
	if len(args) != 0 {
		return errNotByHand
	}
	var st unix.Stat_t
	if unix.Fstat(controlFD, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return errNotByHand
	}
	// Commands must not inherit it: the lifeline would outlive stepwise.
	unix.CloseOnExec(controlFD)
	control, err := net.FileConn(os.NewFile(controlFD, "control"))
	if err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("cannot become a child subreaper: %v", err)
	}
	srv := &server{leaders: map[int]*call{}, groups: map[int]*call{}}
	childEnded := make(chan os.Signal, 1)
	signal.Notify(childEnded, syscall.SIGCHLD)
	go srv.reap(childEnded)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	lifelineClosed := make(chan struct{})
	go func() {
		srv.accept(control.(*net.UnixConn))
		close(lifelineClosed)
	}()
	select {
	case <-lifelineClosed:
	case <-stop:
	}
	srv.shutdown()
	return nil
}

// server is the supervisor's state, under mu: the calls whose command
// runs or whose process group may still have members. mu is held
// across starting a command and across reaping, so that a pid is neither
// reaped before the call it belongs to knows it, nor reaped (and reused)
// between being read and being killed.
type server struct {
	mu sync.Mutex
	// leaders are the calls whose command has not been reaped, by its pid.
	leaders map[int]*call
	// groups are the calls not yet ended, by the id of the command's
	// process group (its pid).
	groups map[int]*call
	calls  uint64
}

// call is one command the supervisor started.
type call struct {
	// number counts the supervisor's calls; value is callVar's in the
	// command's environment.
	number uint64
	value  string
	group  int
	// groupGone, under mu, says no process is left in the group: the
	// kernel gave its number to a later command, which it does only to a
	// number no process uses, or a kill found none.
	groupGone bool
	// status is the command's wait status, from the reaper.
	status chan unix.WaitStatus
}

// accept serves the calls that come on the control socket, each on a
// goroutine of its own, until the socket is closed.
func (srv *server) accept(control *net.UnixConn) {
	oob := make([]byte, unix.CmsgSpace(4*4))
	for {
		var b [1]byte
		n, oobn, _, _, err := control.ReadMsgUnix(b[:], oob)
		if err != nil || n == 0 {
			return
		}
		fds, ok := receivedFDs(oob[:oobn])
		if !ok || b[0] != 'c' {
			for _, fd := range fds {
				unix.Close(fd)
			}
			continue
		}
		go srv.serve(fds)
	}
}

// receivedFDs are the descriptors a message carried; ok when they are a
// call's four.
func receivedFDs(oob []byte) (fds []int, ok bool) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, false
	}
	for _, m := range msgs {
		got, err := unix.ParseUnixRights(&m)
		if err == nil {
			fds = append(fds, got...)
		}
	}
	return fds, len(fds) == 4
}

// serve runs one call: the call's socket and the command's stdin, stdout
// and stderr are fds. It starts the command, answers with its pid or why
// it could not start, reports its end, and once the caller has shut its
// side of the socket (or died), kills what is left of the call and
// closes the socket.
func (srv *server) serve(fds []int) {
	stdio := []*os.File{os.NewFile(uintptr(fds[1]), "stdin"), os.NewFile(uintptr(fds[2]), "stdout"), os.NewFile(uintptr(fds[3]), "stderr")}
	closeStdio := func() {
		for _, f := range stdio {
			f.Close()
		}
	}
	sock := os.NewFile(uintptr(fds[0]), "call")
	fc, err := net.FileConn(sock)
	sock.Close()
	if err != nil {
		closeStdio()
		return
	}
	conn := fc.(*net.UnixConn)
	defer conn.Close()
	in := bufio.NewReader(conn)
	path, dir, argv, env, err := decodeRequest(in)
	if err != nil {
		closeStdio()
		return
	}
	c, err := srv.start(path, dir, argv, env, stdio)
	// The command has its own copies; ours would keep its pipes from ever
	// reaching end of file.
	closeStdio()
	if err != nil {
		why := strings.ReplaceAll(err.Error(), "\n", " ")
		conn.Write(append([]byte{'e'}, why...))
		return
	}
	reply := binary.AppendUvarint([]byte{'s'}, uint64(c.group))
	reply = binary.AppendUvarint(reply, c.number)
	conn.Write(reply)

	stopped := make(chan struct{})
	go func() {
		io.Copy(io.Discard, in)
		close(stopped)
	}()
	var status unix.WaitStatus
	select {
	case status = <-c.status:
	case <-stopped:
		srv.mu.Lock()
		srv.killGroup(c)
		srv.mu.Unlock()
		status = <-c.status
	}
	conn.Write(binary.BigEndian.AppendUint32([]byte{'x'}, uint32(status)))
	<-stopped
	srv.end(c)
}

// decodeRequest reads what encodeRequest wrote.
func decodeRequest(in *bufio.Reader) (path, dir string, argv, env []string, err error) {
	var size [4]byte
	if _, err := io.ReadFull(in, size[:]); err != nil {
		return "", "", nil, nil, err
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(in, body); err != nil {
		return "", "", nil, nil, err
	}
	errShort := errors.New("a request cut short")
	next := func() (uint64, bool) {
		n, used := binary.Uvarint(body)
		if used <= 0 {
			return 0, false
		}
		body = body[used:]
		return n, true
	}
	str := func() (string, bool) {
		n, ok := next()
		if !ok || n > uint64(len(body)) {
			return "", false
		}
		s := string(body[:n])
		body = body[n:]
		return s, true
	}
	list := func() ([]string, bool) {
		n, ok := next()
		if !ok || n > uint64(len(body)) {
			return nil, false
		}
		l := make([]string, n)
		for i := range l {
			if l[i], ok = str(); !ok {
				return nil, false
			}
		}
		return l, true
	}
	var ok1, ok2, ok3, ok4 bool
	path, ok1 = str()
	dir, ok2 = str()
	argv, ok3 = list()
	env, ok4 = list()
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return "", "", nil, nil, errShort
	}
	return path, dir, argv, env, nil
}

// start starts a call's command, in a process group of its own, with the
// call's variable in its environment, and its death with the supervisor's
// should that be killed outright.
func (srv *server) start(path, dir string, argv, env []string, stdio []*os.File) (*call, error) {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	srv.calls++
	c := &call{number: srv.calls, value: callValue(os.Getpid(), srv.calls), status: make(chan unix.WaitStatus, 1)}
	// A stepwise run by a supervised command passes on its own call's
	// variable, which this call's replaces.
	env = slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, callVar+"=") })
	env = append(env, callVar+"="+c.value)
	proc, err := os.StartProcess(path, argv, &os.ProcAttr{
		Dir:   dir,
		Env:   env,
		Files: stdio,
		Sys:   &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		return nil, err
	}
	c.group = proc.Pid
	// The reaper, not proc, waits for it. (Release forgets the pid.)
	proc.Release()
	if earlier, ok := srv.groups[c.group]; ok {
		earlier.groupGone = true
	}
	srv.leaders[c.group] = c
	srv.groups[c.group] = c
	return c, nil
}

// reap waits for every child that ends, commands and the orphans the
// supervisor inherited alike, and hands each command's status to its
// call.
func (srv *server) reap(childEnded <-chan os.Signal) {
	for range childEnded {
		srv.mu.Lock()
		for {
			var status unix.WaitStatus
			pid, err := unix.Wait4(-1, &status, unix.WNOHANG|unix.WALL, nil)
			if err == unix.EINTR {
				continue
			}
			if err != nil || pid <= 0 {
				break
			}
			if c, ok := srv.leaders[pid]; ok {
				delete(srv.leaders, pid)
				c.status <- status
			}
		}
		srv.mu.Unlock()
	}
}

// killGroup kills the call's process group, under mu.
func (srv *server) killGroup(c *call) {
	if !c.groupGone && unix.Kill(-c.group, unix.SIGKILL) == unix.ESRCH {
		c.groupGone = true
	}
}

// groupWait bounds how long end waits for a call's process group to be
// empty. A member killed there is gone at once, unless it waits to be
// reaped by a parent that left the call unmarked, which nothing here can
// make reap it.
const groupWait = time.Second

// end kills all that is left of the call: its process group, and each
// orphan the supervisor inherited that carries the call's variable. An
// orphan's children become orphans in turn when it dies, and the members
// of the group that die leave theirs, so end goes on until the group is
// empty and no orphan of the call is left alive. A killed orphan loses its
// environment on its way out, before it is dead: killed remembers it.
func (srv *server) end(c *call) {
	deadline := time.Now().Add(groupWait)
	killed := map[int]bool{}
	for {
		srv.mu.Lock()
		srv.killGroup(c)
		left := 0
		for _, pid := range children(os.Getpid()) {
			if _, running := srv.leaders[pid]; running {
				continue
			}
			if killed[pid] && !dead(pid) || !killed[pid] && carries(pid, c.value) {
				unix.Kill(pid, unix.SIGKILL)
				killed[pid] = true
				left++
			}
		}
		over := left == 0 && (c.groupGone || time.Now().After(deadline))
		if over && srv.groups[c.group] == c {
			delete(srv.groups, c.group)
		}
		srv.mu.Unlock()
		if over {
			return
		}
		// What was killed takes a moment to die and be reaped.
		time.Sleep(time.Millisecond)
	}
}

// shutdown kills every process below the supervisor and exits. mu stays
// held: no command starts, and the reaping is done here.
func (srv *server) shutdown() {
	srv.mu.Lock()
	for _, c := range srv.groups {
		srv.killGroup(c)
	}
	killAll()
	os.Exit(0)
}

// killAll kills every process below this one, and waits for each: as a
// subreaper it inherits every orphan below it, so killing its children,
// then the children those leave orphaned, and so on, reaches every
// descendant. A child cannot fork once killed, and the pid of a child is
// not reused before it is reaped here, so none is missed or mistaken.
func killAll() {
	var status unix.WaitStatus
	for {
		pid, err := unix.Wait4(-1, &status, unix.WNOHANG|unix.WALL, nil)
		switch {
		case err == unix.EINTR || pid > 0:
			continue
		case err != nil:
			return // ECHILD: none is left
		}
		// Children are left, alive: kill them and wait for one.
		for _, pid := range children(os.Getpid()) {
			unix.Kill(pid, unix.SIGKILL)
		}
		if _, err := unix.Wait4(-1, &status, unix.WALL, nil); err != nil && err != unix.EINTR {
			return
		}
	}
}
