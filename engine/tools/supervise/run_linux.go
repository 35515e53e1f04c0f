package supervise

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Enable makes Start available in this process: the running binary,
// re-executed through /proc/self/exe (the same file even when it was
// replaced on disk since), is the supervisor: its main must dispatch
// Subcommand to Run. Without /proc, supervision stays off and commands
// run in their own process group only.
func Enable() {
	if _, err := os.Stat("/proc/self/exe"); err == nil {
		self = "/proc/self/exe"
	}
}

// inOwnGroup starts cmd in a new process group.
func inOwnGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

// errNotByHand is Run's answer when it was not started by Start.
var errNotByHand = errors.New(Subcommand + " is the supervisor stepwise starts for each exec tool, with pipes on descriptors 3 and 4; it is not run by hand")

// Run is the supervisor: args are the command's program and argv
// (PATH ARGV0 ARG...). It returns only when it was not started by Start;
// otherwise it ends the process the way the command ended, with its exit
// status or of the signal that killed it, after every process the command
// started is gone.
func Run(args []string) error {
	if len(args) < 2 {
		return errNotByHand
	}
	lifeline, report, err := inheritedPipes()
	if err != nil {
		return err
	}
	// Stop when the caller closes the lifeline or dies, or when the
	// supervisor is asked to stop by a signal, as a service manager
	// stopping everything would.
	lifelineClosed, closeLifeline := context.WithCancel(context.Background())
	go func() {
		io.Copy(io.Discard, lifeline)
		closeLifeline()
	}()
	stop, _ := signal.NotifyContext(lifelineClosed, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)

	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fail(report, fmt.Errorf("cannot become a child subreaper: %v", err))
	}
	tool := &exec.Cmd{
		Path:   args[0],
		Args:   args[1:],
		Stdin:  os.Stdin,
		Stdout: os.Stdout,
		Stderr: os.Stderr,
		// Its own process group, which reap kills at once; and its death
		// with the supervisor's, should that be killed outright.
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL},
	}
	if err := tool.Start(); err != nil {
		fail(report, err)
	}
	releaseStdio()
	exited := make(chan struct{})
	go func() {
		tool.Wait()
		close(exited)
	}()
	group := tool.Process.Pid
	select {
	case <-exited:
	case <-stop.Done():
		unix.Kill(-group, unix.SIGKILL)
		<-exited
	}
	// Only now, with the command reaped: reap waits for any child, and
	// must not take the command's status from tool.Wait.
	report.Write([]byte{'\n'})
	<-stop.Done()
	reap(group)
	exitAs(tool.ProcessState)
	return nil
}

// inheritedPipes are the lifeline and the report Start passes on
// descriptors 3 and 4, made close-on-exec so that the command does not
// inherit them: the report would otherwise never reach EOF for a caller
// whose supervisor was killed.
func inheritedPipes() (lifeline, report *os.File, err error) {
	for _, fd := range []int{lifelineFD, reportFD} {
		var st unix.Stat_t
		if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
			return nil, nil, errNotByHand
		}
		unix.CloseOnExec(fd)
	}
	return os.NewFile(lifelineFD, "lifeline"), os.NewFile(reportFD, "report"), nil
}

// fail reports why the command could not be started and exits: nothing
// was started that needs killing.
func fail(report *os.File, err error) {
	fmt.Fprintln(report, strings.ReplaceAll(err.Error(), "\n", " "))
	unix.Exit(1)
}

// releaseStdio points the supervisor's own standard streams at /dev/null,
// once the command has its copies: the caller reads the command's output
// to its end, which must not wait for the supervisor.
func releaseStdio() {
	null, err := unix.Open("/dev/null", unix.O_RDWR, 0)
	if err != nil {
		return
	}
	for fd := range 3 {
		unix.Dup3(null, fd, 0)
	}
	unix.Close(null)
}

// reap kills every process the command left, and waits for each. The
// command's process group goes at once; what left it is found as this
// process's children: as a subreaper it inherits every orphan below it, so
// killing its children, then the children those leave orphaned, and so on,
// reaches every descendant. A child cannot fork once killed, and the pid
// of a child is not reused before it is reaped here, so none is missed or
// mistaken.
func reap(group int) {
	unix.Kill(-group, unix.SIGKILL)
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
		left := liveChildren(os.Getpid())
		if len(left) == 0 {
			return // none alive, or no /proc to find them by
		}
		for _, pid := range left {
			unix.Kill(pid, unix.SIGKILL)
		}
		if _, err := unix.Wait4(-1, &status, unix.WALL, nil); err != nil && err != unix.EINTR {
			return
		}
	}
}

// liveChildren lists the pids of the living children of process parent,
// from /proc; a child that died and waits to be reaped is not one.
func liveChildren(parent int) []int {
	dir, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, _ := dir.Readdirnames(-1)
	dir.Close()
	ppid := strconv.Itoa(parent)
	var pids []int
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + name + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold anything, even ") ".
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(fields) > 1 && fields[1] == ppid && fields[0] != "Z" {
			pids = append(pids, pid)
		}
	}
	return pids
}

// exitAs ends the process as state says the command ended: with its exit
// status, or of its signal.
func exitAs(state *os.ProcessState) {
	status := state.Sys().(syscall.WaitStatus)
	if status.Signaled() {
		dieOf(status.Signal())
	}
	unix.Exit(status.ExitStatus())
}

// dieOf ends the process by sig. The Go runtime handles most signals
// itself and may answer one with an exit status, or a panic, instead of
// the death the command had; so the signal's disposition goes back to the
// kernel's default first, then this thread raises it. No core is dumped:
// the crash was the command's, not the supervisor's. A signal whose default
// does not end a process cannot have killed the command; the exit status
// the shells give a signal's death stands in, should it ever come to that.
func dieOf(sig syscall.Signal) {
	runtime.LockOSThread()
	unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{})
	// A kernel struct sigaction of zeros: SIG_DFL, no flags, an empty
	// mask; larger than any architecture's, so it is all read. The last
	// argument is the size of the kernel's sigset, 64 signals, on every
	// architecture but mips, where the call fails and the exit status
	// below stands in.
	var dfl [8]uint64
	unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&dfl)), 0, 8, 0, 0)
	var set unix.Sigset_t
	bits := uint(unsafe.Sizeof(set.Val[0]) * 8)
	set.Val[uint(sig-1)/bits] |= 1 << (uint(sig-1) % bits)
	unix.PthreadSigmask(unix.SIG_UNBLOCK, &set, nil)
	unix.Tgkill(unix.Getpid(), unix.Gettid(), sig)
	unix.Exit(128 + int(sig))
}
