package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	godap "github.com/google/go-dap"

	"github.com/stepwise-dev/stepwise/plans/examples"
)

// dapSession initializes and launches issue_timeline in the demo project
// over r and w, runs it to its end and disconnects; it returns the exit
// code the exited event carried.
func dapSession(t *testing.T, r io.Reader, w io.Writer) int {
	t.Helper()
	in := bufio.NewReader(r)
	seq := 0
	send := func(m godap.Message) {
		seq++
		req := m.(godap.RequestMessage).GetRequest()
		req.Seq, req.Type = seq, "request"
		if err := godap.WriteProtocolMessage(w, m); err != nil {
			t.Fatal(err)
		}
	}
	exitCode := -1
	until := func(done func(godap.Message) bool) {
		t.Helper()
		for {
			m, err := godap.ReadProtocolMessage(in)
			if err != nil {
				t.Fatalf("reading the adapter: %v", err)
			}
			if e, ok := m.(*godap.ErrorResponse); ok {
				t.Fatalf("%s failed: %s", e.Command, e.Message)
			}
			if e, ok := m.(*godap.ExitedEvent); ok {
				exitCode = e.Body.ExitCode
			}
			if done(m) {
				return
			}
		}
	}
	send(&godap.InitializeRequest{Request: godap.Request{Command: "initialize"}, Arguments: godap.InitializeRequestArguments{AdapterID: "stepwise"}})
	until(func(m godap.Message) bool { _, ok := m.(*godap.InitializeResponse); return ok })
	send(&godap.LaunchRequest{Request: godap.Request{Command: "launch"}, Arguments: []byte(`{"program": "issue_timeline", "inputs": {"id": "CHK-107"}}`)})
	until(func(m godap.Message) bool { _, ok := m.(*godap.InitializedEvent); return ok })
	send(&godap.ConfigurationDoneRequest{Request: godap.Request{Command: "configurationDone"}})
	until(func(m godap.Message) bool { _, ok := m.(*godap.TerminatedEvent); return ok })
	send(&godap.DisconnectRequest{Request: godap.Request{Command: "disconnect"}})
	until(func(m godap.Message) bool { _, ok := m.(*godap.DisconnectResponse); return ok })
	return exitCode
}

// TestDAPCommandOverStdio: stepwise dap speaks DAP on stdin and stdout,
// and nothing else goes to stdout.
func TestDAPCommandOverStdio(t *testing.T) {
	demoProject(t)
	toAdapter, fromClient := io.Pipe()
	toClient, fromAdapter := io.Pipe()
	var stderr strings.Builder
	code := make(chan int, 1)
	go func() {
		code <- run(context.Background(), []string{"dap"}, toAdapter, fromAdapter, &stderr)
		fromAdapter.Close()
	}()
	if got := dapSession(t, toClient, fromClient); got != 0 {
		t.Errorf("the run exited %d, want 0", got)
	}
	fromClient.Close()
	select {
	case c := <-code:
		if c != 0 {
			t.Errorf("stepwise dap exited %d; stderr:\n%s", c, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("stepwise dap did not exit after disconnect")
	}
}

// TestDAPCommandListen: with --listen, stepwise dap serves the one client
// that connects, and says where it listens on stderr.
func TestDAPCommandListen(t *testing.T) {
	demoProject(t)
	stderrR, stderrW := io.Pipe()
	code := make(chan int, 1)
	go func() {
		code <- run(context.Background(), []string{"dap", "--listen", "127.0.0.1:0"}, strings.NewReader(""), io.Discard, stderrW)
		stderrW.Close()
	}()
	line, err := bufio.NewReader(stderrR).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "stepwise dap: listening on ")
	if err != nil || !ok {
		t.Fatalf("stderr says %q, %v; want where it listens", line, err)
	}
	go io.Copy(io.Discard, stderrR)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if got := dapSession(t, conn, conn); got != 0 {
		t.Errorf("the run exited %d, want 0", got)
	}
	conn.Close()
	select {
	case c := <-code:
		if c != 0 {
			t.Errorf("stepwise dap --listen exited %d", c)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("stepwise dap --listen did not exit after its client went")
	}
	if _, _, c := runCLI(t, "dap", "--listen", "nonsense"); c != exitUsage {
		t.Errorf("--listen nonsense exits %d, want %d", c, exitUsage)
	}
}

// TestDAPReferenceClient debugs the demo from Microsoft's reference DAP
// client, @vscode/debugadapter-testsupport, driving the built binary's
// `stepwise dap` over stdio the way an editor does: launch, a line
// breakpoint in a map body, a function breakpoint on a round, the stack,
// variables, evaluate, setVariable, next, stepIn, stepOut, and continue
// to the exit (testdata/dap_reference_client.js). STEPWISE_DAP_TESTSUPPORT
// is the node_modules directory that holds the package; CI must set it.
func TestDAPReferenceClient(t *testing.T) {
	modules := os.Getenv("STEPWISE_DAP_TESTSUPPORT")
	node, nodeErr := exec.LookPath("node")
	if modules == "" || nodeErr != nil {
		why := "STEPWISE_DAP_TESTSUPPORT is not set (a node_modules directory holding @vscode/debugadapter-testsupport)"
		if nodeErr != nil {
			why = "node is not installed: " + nodeErr.Error()
		}
		if os.Getenv("CI") == "true" {
			t.Fatal(why + "; CI must install Node.js and @vscode/debugadapter-testsupport (.ci/run does)")
		}
		t.Skip(why)
	}
	if _, err := os.Stat(filepath.Join(modules, "@vscode", "debugadapter-testsupport")); err != nil {
		t.Fatalf("STEPWISE_DAP_TESTSUPPORT=%s holds no @vscode/debugadapter-testsupport: %v", modules, err)
	}
	exe := stepwiseBinary(t)
	driver := filepath.Join(packageDir, "testdata", "dap_reference_client.js")
	dir := t.TempDir()
	if err := examples.WriteProject(dir, exe); err != nil {
		t.Fatal(err)
	}
	isolate(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, driver, exe, dir)
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the reference client failed (%v):\n%s", err, out)
	}
}

// TestDAPEditorKilled: an editor killed while the run is held leaves the
// adapter a closed stdin and a broken stdout. The adapter, the built
// binary, aborts the run and records it aborted (not cut short by its own
// death), and the editor's breakpoint never reaches the plan's kept file.
func TestDAPEditorKilled(t *testing.T) {
	exe := stepwiseBinary(t)
	dir := t.TempDir()
	if err := examples.WriteProject(dir, exe); err != nil {
		t.Fatal(err)
	}
	isolate(t, dir)
	cmd := exec.Command(exe, "dap")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	in := bufio.NewReader(stdout)
	seq := 0
	send := func(command, args string) {
		seq++
		msg := `{"seq":` + strconv.Itoa(seq) + `,"type":"request","command":"` + command + `","arguments":` + args + `}`
		if err := godap.WriteBaseMessage(stdin, []byte(msg)); err != nil {
			t.Fatal(err)
		}
	}
	until := func(done func(godap.Message) bool) {
		t.Helper()
		for {
			m, err := godap.ReadProtocolMessage(in)
			if err != nil {
				t.Fatalf("reading the adapter: %v", err)
			}
			if e, ok := m.(*godap.ErrorResponse); ok {
				t.Fatalf("%s failed: %s", e.Command, e.Message)
			}
			if done(m) {
				return
			}
		}
	}
	send("initialize", `{"adapterID":"stepwise"}`)
	send("launch", `{"program":"triage_queue","stopOnEntry":true,"inputs":{"on_call":"Priya"}}`)
	until(func(m godap.Message) bool { _, ok := m.(*godap.InitializedEvent); return ok })
	send("setFunctionBreakpoints", `{"breakpoints":[{"name":"E1/do.*/agent.2 round"}]}`)
	send("configurationDone", `{}`)
	until(func(m godap.Message) bool { _, ok := m.(*godap.StoppedEvent); return ok })
	// The editor dies: both its ends of the pipes close at once.
	stdout.Close()
	stdin.Close()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case err := <-waited:
		if ee, ok := err.(*exec.ExitError); ok && !ee.Exited() {
			t.Errorf("stepwise dap was killed (%v) when its editor went, before it could abort the run", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("stepwise dap did not end when its editor went")
	}
	kept, _ := os.ReadFile(filepath.Join(dir, ".stepwise", "breakpoints", "triage_queue.json"))
	if strings.Contains(string(kept), "agent.2") {
		t.Errorf("the editor's breakpoint was kept in the plan's file:\n%s", kept)
	}
	out, _, _ := runCLI(t, "runs", "--json")
	if !strings.Contains(out, `"status": "aborted"`) || strings.Contains(out, "interrupted") {
		t.Errorf("the run is not recorded aborted:\n%s", out)
	}
}
