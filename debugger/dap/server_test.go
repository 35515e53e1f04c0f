package dap

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	godap "github.com/google/go-dap"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/debugger/workspace"
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/record"
	"github.com/stepwise-dev/stepwise/plans/examples"
)

// TestMain makes the test binary the demo's tracker server when the demo
// project's config starts it (as `stepwise __demo-mcp`), the way the
// stepwise binary serves it.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "__demo-mcp" {
		if err := examples.ServeTracker(context.Background()); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// demoProject writes the demo project into a fresh directory, keeps the
// machine's configuration and data out, makes it the working directory
// and returns it.
func demoProject(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if err := examples.WriteProject(dir, os.Args[0]); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "config"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, "data"))
	t.Setenv("STEPWISE_STORAGE", "")
	t.Chdir(dir)
	return dir
}

// client is an editor's side of the wire: go-dap's codec over pipes to a
// Server serving on its own goroutine.
type client struct {
	t    testing.TB
	w    *io.PipeWriter
	seq  int
	msgs chan godap.Message
	// served is closed when Serve has returned.
	served chan struct{}
	srv    *Server
	// console collects the output events read while waiting for others.
	console strings.Builder
}

func newClient(t testing.TB) *client {
	t.Helper()
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	c := &client{t: t, w: fromClient, msgs: make(chan godap.Message, 1024), served: make(chan struct{})}
	c.srv = NewServer(toServer, fromServer)
	go func() {
		defer close(c.served)
		if err := c.srv.Serve(context.Background()); err != nil {
			t.Errorf("Serve: %v", err)
		}
		fromServer.Close()
	}()
	go func() {
		r := bufio.NewReader(toClient)
		for {
			m, err := godap.ReadProtocolMessage(r)
			if err != nil {
				close(c.msgs)
				return
			}
			c.msgs <- m
		}
	}()
	t.Cleanup(func() {
		c.w.Close()
		select {
		case <-c.served:
		case <-time.After(20 * time.Second):
			t.Error("the server did not end after the client went")
		}
	})
	return c
}

// request sends a request of command with arguments.
func (c *client) request(command string, args any) int {
	c.t.Helper()
	c.seq++
	msg := map[string]any{"seq": c.seq, "type": "request", "command": command}
	if args != nil {
		msg["arguments"] = args
	}
	b, err := json.Marshal(msg)
	if err != nil {
		c.t.Fatal(err)
	}
	c.raw(b)
	return c.seq
}

// raw sends content as one framed message, whatever it holds.
func (c *client) raw(content []byte) {
	c.t.Helper()
	if err := godap.WriteBaseMessage(c.w, content); err != nil {
		c.t.Fatal(err)
	}
}

// next returns the next message that is not an output event; output goes
// to c.console.
func (c *client) next() godap.Message {
	c.t.Helper()
	for {
		select {
		case m, ok := <-c.msgs:
			if !ok {
				c.t.Fatal("the connection ended")
			}
			if o, ok := m.(*godap.OutputEvent); ok {
				c.console.WriteString(o.Body.Output)
				continue
			}
			return m
		case <-time.After(30 * time.Second):
			c.t.Fatal("no message came in 30s")
		}
	}
}

// expect reads messages until one of type T, failing on an error
// response; events of other types on the way are skipped.
func expect[T godap.Message](c *client) T {
	c.t.Helper()
	for {
		m := c.next()
		if v, ok := m.(T); ok {
			return v
		}
		if e, ok := m.(*godap.ErrorResponse); ok {
			c.t.Fatalf("want %T, got an error response to %s: %s", *new(T), e.Command, e.Message)
		}
	}
}

// expectError reads messages until an error response.
func expectError(c *client) *godap.ErrorResponse {
	c.t.Helper()
	for {
		m := c.next()
		if e, ok := m.(*godap.ErrorResponse); ok {
			return e
		}
		if r, ok := m.(godap.ResponseMessage); ok {
			c.t.Fatalf("want an error response, got %s succeeding", r.GetResponse().Command)
		}
	}
}

// start initializes the adapter and launches with args, and returns the
// capabilities.
func (c *client) start(args map[string]any) godap.Capabilities {
	c.t.Helper()
	c.request("initialize", map[string]any{"adapterID": "stepwise", "linesStartAt1": true, "columnsStartAt1": true})
	caps := expect[*godap.InitializeResponse](c).Body
	c.request("launch", args)
	expect[*godap.LaunchResponse](c)
	expect[*godap.InitializedEvent](c)
	return caps
}

// stopped reads up to the next stopped event and checks its reason.
func (c *client) stopped(reason string) godap.StoppedEventBody {
	c.t.Helper()
	ev := expect[*godap.StoppedEvent](c).Body
	if ev.Reason != reason {
		c.t.Fatalf("stopped by %q (%s), want %q", ev.Reason, ev.Description, reason)
	}
	if !ev.AllThreadsStopped {
		c.t.Error("allThreadsStopped is false; the debugger stops all threads")
	}
	return ev
}

// frames is the stack of thread.
func (c *client) frames(thread int) []godap.StackFrame {
	c.t.Helper()
	c.request("stackTrace", map[string]any{"threadId": thread})
	return expect[*godap.StackTraceResponse](c).Body.StackFrames
}

// evaluate evaluates expr in context and returns the response.
func (c *client) evaluate(expr, context string) *godap.EvaluateResponse {
	c.t.Helper()
	c.request("evaluate", map[string]any{"expression": expr, "context": context})
	return expect[*godap.EvaluateResponse](c)
}

// lineOf is the 1-based line of the first line of file holding text.
func lineOf(t testing.TB, file, text string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, text) {
			return i + 1
		}
	}
	t.Fatalf("%s has no line with %q", file, text)
	return 0
}

func planFile(dir, name string) string {
	return filepath.Join(dir, ".stepwise", "plans", name+".yaml")
}

func TestDAPInitializeCapabilities(t *testing.T) {
	c := newClient(t)
	c.request("initialize", map[string]any{"adapterID": "stepwise"})
	caps := expect[*godap.InitializeResponse](c).Body
	want := capabilities()
	if !reflect.DeepEqual(caps, want) {
		t.Errorf("capabilities %+v, want %+v", caps, want)
	}
	var filters []string
	for _, f := range caps.ExceptionBreakpointFilters {
		filters = append(filters, f.Filter)
	}
	if strings.Join(filters, ",") != "error,ask" || !caps.SupportsConfigurationDoneRequest || !caps.SupportsHitConditionalBreakpoints || !caps.SupportsSetVariable || !caps.SupportsSetExpression || caps.SupportsStepBack || caps.SupportsDataBreakpoints {
		t.Errorf("capabilities say %+v; they must say what the adapter does, and only that", caps)
	}
}

// TestDAPLineBreakpointInMapBody debugs triage_queue from the editor: a
// breakpoint on a line of the map body's agent step stops every item
// there, and the stop reads as the line driver's does.
func TestDAPLineBreakpointInMapBody(t *testing.T) {
	dir := demoProject(t)
	file := planFile(dir, "triage_queue")
	c := newClient(t)
	c.start(map[string]any{"program": "triage_queue", "cwd": dir, "inputs": map[string]any{"on_call": "Priya"}})

	stepLine := lineOf(t, file, "- id: verdict")
	promptLine := lineOf(t, file, "Triage tracker issue {{item.id}}")
	c.request("setBreakpoints", map[string]any{
		"source":      map[string]any{"path": file},
		"breakpoints": []map[string]any{{"line": promptLine}, {"line": 1}, {"line": 100000}},
	})
	bps := expect[*godap.SetBreakpointsResponse](c).Body.Breakpoints
	if len(bps) != 3 || !bps[0].Verified || bps[0].Line != stepLine || !strings.Contains(bps[0].Message, "assess/do.*/verdict step") {
		t.Fatalf("a line inside the verdict step: %+v, want verified at line %d, on assess/do.*/verdict", bps[0], stepLine)
	}
	if first := lineOf(t, file, "- id: open_issues"); !bps[1].Verified || bps[1].Line != first {
		t.Errorf("line 1 (before any step) gives %+v, want the first step's line %d", bps[1], first)
	}
	if bps[2].Verified || !strings.Contains(bps[2].Message, "past the end") {
		t.Errorf("a line past the plan gives %+v, want unverified with why", bps[2])
	}
	// The editor replaces its set: only the verdict's line is left.
	c.request("setBreakpoints", map[string]any{
		"source":      map[string]any{"path": file},
		"breakpoints": []map[string]any{{"line": promptLine}},
	})
	bps = expect[*godap.SetBreakpointsResponse](c).Body.Breakpoints
	// Asks take their unattended path: the run ends without a person.
	c.request("setExceptionBreakpoints", map[string]any{"filters": []string{"error"}})
	expect[*godap.SetExceptionBreakpointsResponse](c)
	c.request("configurationDone", nil)
	expect[*godap.ConfigurationDoneResponse](c)

	ev := c.stopped("breakpoint")
	if len(ev.HitBreakpointIds) != 1 || ev.HitBreakpointIds[0] != bps[0].Id {
		t.Errorf("hitBreakpointIds %v, want [%d]", ev.HitBreakpointIds, bps[0].Id)
	}
	c.request("threads", nil)
	threads := expect[*godap.ThreadsResponse](c).Body.Threads
	var names []string
	for _, th := range threads {
		names = append(names, th.Name)
	}
	if !strings.Contains(strings.Join(names, " "), "assess/do.") {
		t.Errorf("threads %v, want the map's items among them", names)
	}
	frames := c.frames(ev.ThreadId)
	if len(frames) < 3 || !strings.HasPrefix(frames[0].Name, "assess/do.") || !strings.Contains(frames[0].Name, "/verdict") {
		t.Fatalf("frames %+v, want the verdict step innermost", frames)
	}
	if frames[0].Source == nil || frames[0].Source.Path != file || frames[0].Line != stepLine {
		t.Errorf("frame 0 is at %+v line %d, want %s line %d", frames[0].Source, frames[0].Line, file, stepLine)
	}
	if mapLine := lineOf(t, file, "- id: assess"); frames[len(frames)-2].Line != mapLine && frames[1].Line != mapLine {
		t.Errorf("no frame of the item or the map is on the map's line %d: %+v", mapLine, frames)
	}

	c.request("scopes", map[string]any{"frameId": frames[0].Id})
	scopes := expect[*godap.ScopesResponse](c).Body.Scopes
	byName := map[string]godap.Scope{}
	for _, s := range scopes {
		byName[s.Name] = s
	}
	for _, name := range []string{"Stop", "Input", "Scope"} {
		if byName[name].VariablesReference == 0 {
			t.Errorf("no %s scope to expand: %+v", name, scopes)
		}
	}
	c.request("variables", map[string]any{"variablesReference": byName["Scope"].VariablesReference})
	vars := expect[*godap.VariablesResponse](c).Body.Variables
	var item godap.Variable
	for _, v := range vars {
		if v.Name == "item" {
			item = v
		}
	}
	if item.VariablesReference == 0 || item.EvaluateName != "item" {
		t.Fatalf("the scope's item %+v, want an expandable object read at item", item)
	}
	c.request("variables", map[string]any{"variablesReference": item.VariablesReference})
	var id godap.Variable
	for _, v := range expect[*godap.VariablesResponse](c).Body.Variables {
		if v.Name == "id" {
			id = v
		}
	}
	if !strings.HasPrefix(id.Value, `"CHK-`) || id.EvaluateName != "item.id" {
		t.Errorf("item.id is %+v", id)
	}

	for _, context := range []string{"hover", "watch", "repl"} {
		if got := c.evaluate("item.id", context).Body.Result; got != id.Value {
			t.Errorf("evaluate item.id in %s = %s, want %s", context, got, id.Value)
		}
	}
	if got := c.evaluate("print {{index}}", "repl").Body.Result; got != "0" && got != "1" {
		t.Errorf("print {{index}} = %s, want an item's index", got)
	}
	if got := c.evaluate("stack", "repl").Body.Result; !strings.Contains(got, "assess/do.") {
		t.Errorf("stack in the repl says %s", got)
	}
	c.request("evaluate", map[string]any{"expression": "item.nope.deeper", "context": "hover"})
	if e := expectError(c); e.Message == "" {
		t.Error("a path that cannot be read is an error with no message")
	}

	// Another item's thread, held at its own stop, shows where it is, and
	// stepping in it makes it the current one.
	var held struct {
		Threads []struct {
			ID      string `json:"id"`
			Held    bool   `json:"held"`
			Stopped bool   `json:"stopped"`
		} `json:"threads"`
	}
	json.Unmarshal([]byte(c.evaluate("threads", "repl").Body.Result), &held)
	other := 0
	for _, th := range held.Threads {
		for _, d := range threads {
			if th.Held && !th.Stopped && d.Name == th.ID && strings.HasPrefix(th.ID, "assess/do.") {
				other = d.Id
			}
		}
	}
	if other != 0 {
		if f := c.frames(other); len(f) != 1 || !strings.HasPrefix(f[0].Name, "assess/do.") {
			t.Errorf("the held thread's stack is %+v", f)
		}
		c.request("next", map[string]any{"threadId": other})
		expect[*godap.NextResponse](c)
		// Stepping in the switched thread, or another item's breakpoint
		// on the way, whichever comes first.
		ev = expect[*godap.StoppedEvent](c).Body
		if ev.Reason != "step" && ev.Reason != "breakpoint" {
			t.Errorf("next in the switched thread stopped by %s (%s)", ev.Reason, ev.Description)
		}
	} else {
		t.Log("no other item was held at the first stop; the switch is not tried")
	}

	// Every item stops there; the editor clears its breakpoint, and the
	// run goes to its end.
	c.request("continue", map[string]any{"threadId": ev.ThreadId})
	expect[*godap.ContinueResponse](c)
	ev = c.stopped("breakpoint")
	c.request("setBreakpoints", map[string]any{"source": map[string]any{"path": file}, "breakpoints": []any{}})
	expect[*godap.SetBreakpointsResponse](c)
	c.request("continue", map[string]any{"threadId": ev.ThreadId})
	expect[*godap.ContinueResponse](c)
	exited := expect[*godap.ExitedEvent](c)
	if exited.Body.ExitCode != 0 {
		t.Errorf("exit code %d, want 0; console:\n%s", exited.Body.ExitCode, c.console.String())
	}
	expect[*godap.TerminatedEvent](c)
	if !strings.Contains(c.console.String(), "▶ assess") || !strings.Contains(c.console.String(), " ok") {
		t.Errorf("the console does not show the run's progress:\n%s", c.console.String())
	}
	c.request("disconnect", nil)
	expect[*godap.DisconnectResponse](c)

	// The editor's breakpoints are the editor's: the plan's kept table has
	// none of them once the session is over.
	kept, _ := os.ReadFile(filepath.Join(dir, ".stepwise", "breakpoints", "triage_queue.json"))
	if strings.Contains(string(kept), "verdict") {
		t.Errorf("the kept table holds the editor's breakpoint after the session: %s", kept)
	}
}

// TestDAPConditionsAndFunctionBreakpoints: a condition in the plan's gate
// grammar, a hit condition, and a function breakpoint on a path pattern
// with kinds, then next, stepIn and stepOut from it.
func TestDAPConditionsAndFunctionBreakpoints(t *testing.T) {
	dir := demoProject(t)
	file := planFile(dir, "issue_timeline")
	c := newClient(t)
	c.start(map[string]any{"program": file, "inputs": map[string]any{"id": "CHK-107"}})

	bodyLine := lineOf(t, file, "tool_name: user__append_event")
	c.request("setBreakpoints", map[string]any{
		"source":      map[string]any{"path": file},
		"breakpoints": []map[string]any{{"line": bodyLine, "condition": "{{index}} eq 1"}},
	})
	bps := expect[*godap.SetBreakpointsResponse](c).Body.Breakpoints
	if !bps[0].Verified {
		t.Fatalf("a breakpoint in the reduce's body: %+v", bps[0])
	}
	c.request("setFunctionBreakpoints", map[string]any{"breakpoints": []map[string]any{
		{"name": "issue result"}, {"name": "nowhere/at/all"}, {"name": "issue bogus"}, {"name": "timeline", "hitCondition": "x"},
		{"name": "timeline", "condition": "{{issu.title}} eq x"},
	}})
	fbs := expect[*godap.SetFunctionBreakpointsResponse](c).Body.Breakpoints
	if !fbs[0].Verified || fbs[0].Line != lineOf(t, file, "- id: issue") {
		t.Errorf("function breakpoint 'issue result': %+v", fbs[0])
	}
	if fbs[1].Verified || !strings.Contains(fbs[1].Message, "nearest") && fbs[1].Message == "" {
		t.Errorf("a pattern no path matches: %+v, want unverified with the nearest that would", fbs[1])
	}
	if fbs[2].Verified || !strings.Contains(fbs[2].Message, "bogus") {
		t.Errorf("a bad kind: %+v", fbs[2])
	}
	if fbs[3].Verified || !strings.Contains(fbs[3].Message, "hit condition") {
		t.Errorf("a bad hit condition: %+v", fbs[3])
	}
	if fbs[4].Verified || !strings.Contains(fbs[4].Message, "reads issu, which is no step") || !strings.Contains(fbs[4].Message, "did you mean 'issue'") {
		t.Errorf("a condition that could never be evaluated: %+v", fbs[4])
	}
	c.request("configurationDone", nil)
	expect[*godap.ConfigurationDoneResponse](c)

	ev := c.stopped("function breakpoint")
	if got := c.evaluate("stop.kind", "watch").Body.Result; got != `"result"` {
		t.Errorf("stop.kind = %s at the issue's result", got)
	}
	c.request("next", map[string]any{"threadId": ev.ThreadId})
	expect[*godap.NextResponse](c)
	ev = c.stopped("step")
	if frames := c.frames(ev.ThreadId); frames[0].Name != "timeline (step) reduce" {
		t.Errorf("next from the issue's result stops at %q, want the reduce step", frames[0].Name)
	}
	c.request("stepIn", map[string]any{"threadId": ev.ThreadId})
	expect[*godap.StepInResponse](c)
	ev = c.stopped("step")
	if frames := c.frames(ev.ThreadId); !strings.HasPrefix(frames[0].Name, "timeline/do.0") {
		t.Errorf("stepIn from the reduce stops at %q, want its first item", frames[0].Name)
	}
	// Continuing, the condition passes item 0 by and stops at item 1.
	c.request("continue", map[string]any{"threadId": ev.ThreadId})
	expect[*godap.ContinueResponse](c)
	ev = c.stopped("breakpoint")
	if got := c.evaluate("index", "hover").Body.Result; got != "1" {
		t.Errorf("the conditional breakpoint stopped at index %s, want 1", got)
	}
	c.request("stepOut", map[string]any{"threadId": ev.ThreadId})
	expect[*godap.StepOutResponse](c)
	ev = c.stopped("step")
	if got := c.evaluate("stop.path", "watch").Body.Result; got != `"timeline"` {
		t.Errorf("stepOut of the item stops at %s, want the reduce's result", got)
	}
	c.request("continue", map[string]any{"threadId": ev.ThreadId})
	expect[*godap.ContinueResponse](c)
	if code := expect[*godap.ExitedEvent](c).Body.ExitCode; code != 0 {
		t.Errorf("exit code %d; console:\n%s", code, c.console.String())
	}
	if !strings.Contains(c.console.String(), `"comments":2`) {
		t.Errorf("the output plan's JSON is not on the console:\n%s", c.console.String())
	}
}

// TestDAPHitCondition: a breakpoint with hit condition 2 stops the second
// time only.
func TestDAPHitCondition(t *testing.T) {
	dir := demoProject(t)
	file := planFile(dir, "issue_timeline")
	c := newClient(t)
	c.start(map[string]any{"program": "issue_timeline", "inputs": map[string]any{"id": "CHK-107"}})
	c.request("setBreakpoints", map[string]any{"source": map[string]any{"path": file},
		"breakpoints": []map[string]any{{"line": lineOf(t, file, "so_far:"), "hitCondition": "2"}}})
	expect[*godap.SetBreakpointsResponse](c)
	c.request("configurationDone", nil)
	ev := c.stopped("breakpoint")
	if got := c.evaluate("index", "watch").Body.Result; got != "1" {
		t.Errorf("hit condition 2 stopped at item %s, want item 1", got)
	}
	c.request("continue", map[string]any{"threadId": ev.ThreadId})
	expect[*godap.ExitedEvent](c)
}

// TestDAPEntryAndREPLCommands: stopOnEntry holds the run at its first stop;
// the console takes the commands of stepwise debug, and a refused one is
// said with the run still held.
func TestDAPEntryAndREPLCommands(t *testing.T) {
	dir := demoProject(t)
	c := newClient(t)
	c.start(map[string]any{"program": "issue_timeline", "cwd": dir, "stopOnEntry": true, "inputs": map[string]any{"id": "CHK-107"}})
	c.request("configurationDone", nil)
	c.stopped("entry")
	c.request("evaluate", map[string]any{"expression": "break timeline/do.* step", "context": "repl"})
	// The editor hears of the breakpoint, placed on its step's line.
	bp := expect[*godap.BreakpointEvent](c).Body
	if file := planFile(dir, "issue_timeline"); bp.Reason != "new" || bp.Breakpoint.Line != lineOf(t, file, "tool_name: user__append_event") || !bp.Breakpoint.Verified {
		t.Errorf("the breakpoint event of break in the console: %+v", bp)
	}
	if got := expect[*godap.EvaluateResponse](c).Body.Result; !strings.Contains(got, `"pattern":"timeline/do.*"`) {
		t.Errorf("break in the console answers %s", got)
	}
	if got := c.evaluate("help", "repl").Body.Result; !strings.Contains(got, "inject JSON") || strings.Contains(got, "goto") {
		t.Errorf("help in the console lists %s", got)
	}
	c.request("evaluate", map[string]any{"expression": "goto issue", "context": "repl"})
	if e := expectError(c); !strings.Contains(e.Message, "workbench") {
		t.Errorf("a workbench command in the console: %s", e.Message)
	}
	// A refused command is an error response and an error on the
	// console, the run held where it was with no stop shown again; where
	// answers with the stop, which the editor shows already. A line
	// meant as a command gets the command's error, not the template
	// evaluator's.
	for _, tc := range []struct{ line, want string }{
		{`answer {"x": 1}`, "does not take answer"},
		{"inject {oops", "JSON"},
		{"frobnicate 3", "unknown command 'frobnicate'"},
	} {
		c.request("evaluate", map[string]any{"expression": tc.line, "context": "repl"})
		if e := expectError(c); !strings.Contains(e.Message, tc.want) || strings.Contains(e.Message, "template") {
			t.Errorf("%s in the console: %q, want an error saying %q", tc.line, e.Message, tc.want)
		}
		if !strings.Contains(c.console.String(), "error: ") {
			t.Errorf("the refusal of %s is not on the console:\n%s", tc.line, c.console.String())
		}
	}
	for _, line := range []string{"where", "stop.path"} {
		c.request("evaluate", map[string]any{"expression": line, "context": "repl"})
		if m := c.next(); reflect.TypeOf(m) != reflect.TypeFor[*godap.EvaluateResponse]() {
			t.Errorf("%s in the console: %T came first, want its answer (no stop shown again)", line, m)
		}
	}
	c.evaluate("continue", "repl")
	c.stopped("breakpoint")
	c.evaluate("inject {\"so_far\": \"x\", \"text\": \"injected\"}", "repl")
	c.stopped("breakpoint")
	c.request("terminate", nil)
	expect[*godap.TerminateResponse](c)
	if code := expect[*godap.ExitedEvent](c).Body.ExitCode; code != workspace.ExitInterrupted {
		t.Errorf("a terminated run exits %d, want %d", code, workspace.ExitInterrupted)
	}
	expect[*godap.TerminatedEvent](c)
	// The step the stop cut short is aborted, not failed, and the run's
	// end says who stopped it.
	if out := c.console.String(); !strings.Contains(out, "■ timeline aborted\n") || !strings.Contains(out, "aborted at timeline") || strings.Contains(out, "context canceled") || strings.Contains(out, "timeline failed") {
		t.Errorf("the console does not say the run was aborted from the editor:\n%s", out)
	}
}

// TestDAPNoDebug runs the plan to its end with no stop.
func TestDAPNoDebug(t *testing.T) {
	dir := demoProject(t)
	c := newClient(t)
	c.start(map[string]any{"program": "issue_timeline", "cwd": dir, "noDebug": true, "inputs": map[string]any{"id": "CHK-107"}})
	c.request("configurationDone", nil)
	if code := expect[*godap.ExitedEvent](c).Body.ExitCode; code != 0 {
		t.Errorf("exit code %d; console:\n%s", code, c.console.String())
	}
	// Missing inputs exit as stepwise run does.
	c2 := newClient(t)
	c2.start(map[string]any{"program": "issue_timeline", "cwd": dir, "noDebug": true})
	c2.request("configurationDone", nil)
	if code := expect[*godap.ExitedEvent](c2).Body.ExitCode; code != workspace.ExitNeedsInput {
		t.Errorf("a run without its required input exits %d, want %d", code, workspace.ExitNeedsInput)
	}
}

// TestDAPBadInput: what an editor or a person can get wrong is an error
// response that says what and where, and the session goes on.
func TestDAPBadInput(t *testing.T) {
	dir := demoProject(t)
	bad := filepath.Join(dir, ".stepwise", "plans", "broken.yaml")
	os.WriteFile(bad, []byte("identifier: broken\nsteps:\n  - id: a\n    tool_name: no_such_tool\n    input: {}\n"), 0o644)
	// The adapter runs elsewhere than the launch's cwd, as an editor
	// starts it: paths in messages are the cwd's, which the editor opens.
	t.Chdir(t.TempDir())

	c := newClient(t)
	c.request("initialize", map[string]any{"adapterID": "stepwise"})
	expect[*godap.InitializeResponse](c)

	seq := c.request("readMemory", map[string]any{"memoryReference": "0"})
	e := expectError(c)
	if e.RequestSeq != seq || !strings.Contains(e.Message, "'readMemory' is not supported") {
		t.Errorf("a request the adapter does not support: %+v", e)
	}
	seq = c.request("flyToTheMoon", nil)
	e = expectError(c)
	if e.RequestSeq != seq || !strings.Contains(e.Message, "unknown request 'flyToTheMoon'") {
		t.Errorf("an unknown request: %+v", e)
	}
	c.raw([]byte(`{"seq": 40, "type": "request", "command": "threads"`))
	if e := expectError(c); !strings.Contains(e.Message, "not a DAP request") {
		t.Errorf("malformed JSON: %+v", e)
	}
	c.request("threads", nil)
	expect[*godap.ThreadsResponse](c)

	for _, tc := range []struct {
		name string
		args map[string]any
		want []string
	}{
		{"no program", map[string]any{"cwd": dir}, []string{"program is missing"}},
		{"a missing plan", map[string]any{"program": "issue_timelin", "cwd": dir}, []string{"no plan issue_timelin: not a file under cwd (" + dir + "), and no plan has that identifier; did you mean 'issue_timeline'? (plans: ", "triage_queue"}},
		{"an invalid plan", map[string]any{"program": bad, "cwd": dir}, []string{"\n" + filepath.Join(".stepwise", "plans", "broken.yaml") + ":4:", "no_such_tool", "fix them"}},
		{"inputs not an object", map[string]any{"program": "issue_timeline", "cwd": dir, "inputs": "CHK-107"}, []string{"launch.inputs must be an object of the plan's inputs"}},
	} {
		c.request("launch", tc.args)
		e := expectError(c)
		for _, w := range tc.want {
			if !strings.Contains(e.Message, w) || strings.Contains(e.Message, "Go struct") || strings.Contains(e.Message, "..") {
				t.Errorf("%s: the error %q does not say %q", tc.name, e.Message, w)
			}
		}
	}
	if !strings.Contains(c.console.String(), filepath.Join(".stepwise", "plans", "broken.yaml")+":4:") {
		t.Errorf("the plan's problems are not on the console:\n%s", c.console.String())
	}
	c.request("continue", map[string]any{"threadId": 1})
	if e := expectError(c); !strings.Contains(e.Message, "launch") {
		t.Errorf("continue before launch: %s", e.Message)
	}
	c.request("setExceptionBreakpoints", map[string]any{"filters": []string{"uncaught"}})
	if e := expectError(c); !strings.Contains(e.Message, "error and ask") {
		t.Errorf("an unknown exception filter: %s", e.Message)
	}
	// The failed launches left nothing behind: the fixed one launches.
	c.request("launch", map[string]any{"program": "issue_timeline", "cwd": dir, "inputs": map[string]any{"id": "CHK-107"}})
	expect[*godap.LaunchResponse](c)
}

// TestDAPClientGoneMidRun: a client that goes, or disconnects, while the
// run is held or going leaves the run aborted and recorded, and the server
// returns.
func TestDAPClientGoneMidRun(t *testing.T) {
	for _, tc := range []struct {
		name  string
		entry bool
		leave func(c *client)
	}{
		{"the connection ends at a stop", true, func(c *client) { c.w.Close() }},
		{"disconnect while the run goes", false, func(c *client) {
			c.request("disconnect", map[string]any{"terminateDebuggee": true})
			expect[*godap.DisconnectResponse](c)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := demoProject(t)
			c := newClient(t)
			c.start(map[string]any{"program": "triage_queue", "cwd": dir, "stopOnEntry": tc.entry, "inputs": map[string]any{"on_call": "Priya"}})
			c.request("setFunctionBreakpoints", map[string]any{"breakpoints": []map[string]any{{"name": "E1/do.*/agent.2 round"}}})
			expect[*godap.SetFunctionBreakpointsResponse](c)
			c.request("configurationDone", nil)
			if tc.entry {
				c.stopped("entry")
			} else {
				expect[*godap.ConfigurationDoneResponse](c)
			}
			// The run has its tracker server once it has called it.
			for deadline := time.Now().Add(10 * time.Second); len(trackerChildren(t)) == 0 && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond)
			}
			if len(trackerChildren(t)) == 0 && runtime.GOOS == "linux" {
				t.Fatal("no tracker server runs: the check that none is left behind would prove nothing")
			}
			// The editor's breakpoints are its own: the plan's kept file
			// never holds them, so that an editor that dies leaves none.
			kept := filepath.Join(dir, ".stepwise", "breakpoints", "triage_queue.json")
			if b, _ := os.ReadFile(kept); strings.Contains(string(b), "agent.2") {
				t.Errorf("the editor's breakpoint is kept in %s:\n%s", kept, b)
			}
			tc.leave(c)
			select {
			case <-c.served:
			case <-time.After(20 * time.Second):
				t.Fatal("the server did not end when its client went")
			}
			if left := trackerChildren(t); len(left) > 0 {
				t.Errorf("processes left behind: %v", left)
			}
			ws, err := workspace.Open(dir, workspace.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer ws.Close()
			runs, err := ws.Runs(context.Background(), record.RunFilter{})
			if err != nil || len(runs) != 1 {
				t.Fatalf("runs %+v, %v; want the one aborted run", runs, err)
			}
			if got := fmt.Sprint(runs[0].Status); got != "aborted" {
				t.Errorf("the run is recorded %s, want aborted", got)
			}
		})
	}
}

// trackerChildren lists the demo tracker servers this process still has
// as children (Linux only: elsewhere the test skips the check).
func trackerChildren(t *testing.T) []string {
	t.Helper()
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", os.Getpid()))
	var left []string
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, pid := range strings.Fields(string(b)) {
			cmd, _ := os.ReadFile("/proc/" + pid + "/cmdline")
			if strings.Contains(string(cmd), "__demo-mcp") {
				left = append(left, pid)
			}
		}
	}
	return left
}

// TestDAPLinesToSteps: which step a breakpoint on each kind of line of a
// plan file stops before.
func TestDAPLinesToSteps(t *testing.T) {
	dir := demoProject(t)
	ws, err := workspace.Open(dir, workspace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	load := func(name string) (string, stepLines) {
		file := planFile(dir, name)
		doc, err := ws.Load(file)
		if err != nil || doc.Plan == nil {
			t.Fatalf("load %s: %v", name, err)
		}
		return file, planLines(doc.Plan)
	}
	triage, triageLines := load("triage_queue")
	timeline, timelineLines := load("issue_timeline")
	for _, tc := range []struct {
		name  string
		lines stepLines
		line  int
		want  string // the pattern; "" for none
	}{
		{"the header moves to the first step", triageLines, 1, "open_issues"},
		{"the input schema moves to the first step", triageLines, lineOf(t, triage, "How many of the most urgent"), "open_issues"},
		{"a step's own line", triageLines, lineOf(t, triage, "- id: unowned"), "unowned"},
		{"a line deep in a step", triageLines, lineOf(t, triage, "where: { value:"), "unowned"},
		{"a map's own lines", triageLines, lineOf(t, triage, "concurrency: 2"), "assess"},
		{"a map body's step", triageLines, lineOf(t, triage, "enum: [sev1"), "assess/do.*/verdict"},
		{"the next body step", triageLines, lineOf(t, triage, "Pair the verdict"), "assess/do.*/card"},
		{"a decide's branch", triageLines, lineOf(t, triage, "findings:"), "post/then"},
		{"the solver", triageLines, lineOf(t, triage, "Lead with anything at sev1"), "solver"},
		{"a single-call body", timelineLines, lineOf(t, timeline, "so_far:"), "timeline/do.*"},
		{"the output, after every step", timelineLines, lineOf(t, timeline, "timeline: \"{{timeline.result.text}}\""), ""},
	} {
		got, ok := tc.lines.at(tc.line)
		if !ok {
			got.pattern = ""
		}
		if got.pattern != tc.want {
			t.Errorf("%s (line %d): %q, want %q", tc.name, tc.line, got.pattern, tc.want)
		}
	}
}

// TestDAPAsk: with the ask filter on (the default) an ask stops the run as
// an exception, and the debug console answers it; the solver's report
// comes to the console once.
func TestDAPAsk(t *testing.T) {
	dir := demoProject(t)
	c := newClient(t)
	c.start(map[string]any{"program": "triage_queue", "cwd": dir, "inputs": map[string]any{"on_call": "Priya"}})
	c.request("configurationDone", nil)
	ev := c.stopped("exception")
	if !strings.Contains(ev.Text, "Post the verdicts") || !strings.Contains(ev.Description, "confirm") {
		t.Errorf("the ask's stop says %q / %q", ev.Description, ev.Text)
	}
	// An answer goes on as next does.
	c.evaluate(`answer {"post": false}`, "repl")
	ev = c.stopped("step")
	c.request("continue", map[string]any{"threadId": ev.ThreadId})
	code := expect[*godap.ExitedEvent](c).Body.ExitCode
	if code != 0 || !strings.Contains(c.console.String(), "■ confirm ok") || strings.Count(c.console.String(), "Morning. One live incident") != 1 {
		t.Errorf("exit %d; console:\n%s", code, c.console.String())
	}
	c.request("disconnect", nil)
	expect[*godap.DisconnectResponse](c)

	// A replay's ask stop shows the answer its record gave.
	ws, err := workspace.Open(dir, workspace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	runs, err := ws.Runs(context.Background(), record.RunFilter{})
	ws.Close()
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %+v, %v", runs, err)
	}
	replay := newClient(t)
	replay.start(map[string]any{"cwd": dir, "replay": runs[0].ID})
	replay.request("configurationDone", nil)
	ev = replay.stopped("exception")
	if !strings.Contains(ev.Text, `the record answered {"post":false}`) {
		t.Errorf("the replay's ask stop says %q, want the recorded answer", ev.Text)
	}
	stop := replay.variablesOf(replay.scopesOf(ev.ThreadId)["Stop"].VariablesReference)
	if got := replay.variablesOf(stop["recorded_answer"].VariablesReference)["post"].Value; got != "false" {
		t.Errorf("the Stop scope's recorded answer reads post %s", got)
	}
	replay.request("continue", map[string]any{"threadId": ev.ThreadId})
	if code := expect[*godap.ExitedEvent](replay).Body.ExitCode; code != 0 {
		t.Errorf("the replay exits %d; console:\n%s", code, replay.console.String())
	}
}

// TestDAPReplayAndFork: a recorded run is replayed, and forked, under the
// debugger from the editor, and the end says how each compares with the
// record.
func TestDAPReplayAndFork(t *testing.T) {
	dir := demoProject(t)
	first := newClient(t)
	first.start(map[string]any{"program": "issue_timeline", "cwd": dir, "noDebug": true, "inputs": map[string]any{"id": "CHK-107"}})
	first.request("configurationDone", nil)
	expect[*godap.ExitedEvent](first)
	first.request("disconnect", nil)
	expect[*godap.DisconnectResponse](first)
	ws, err := workspace.Open(dir, workspace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	runs, err := ws.Runs(context.Background(), record.RunFilter{})
	ws.Close()
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %+v, %v", runs, err)
	}
	id := runs[0].ID

	replay := newClient(t)
	// The run decides the plan: program may be left out.
	replay.start(map[string]any{"cwd": dir, "replay": id, "stopOnEntry": true})
	replay.request("configurationDone", nil)
	ev := replay.stopped("entry")
	replay.request("continue", map[string]any{"threadId": ev.ThreadId})
	if code := expect[*godap.ExitedEvent](replay).Body.ExitCode; code != 0 || !strings.Contains(replay.console.String(), "matches its record") || !strings.Contains(replay.console.String(), "⇢ issue reused from run "+id[:12]+"\n") {
		t.Errorf("the replay exits %d; console:\n%s", code, replay.console.String())
	}

	fork := newClient(t)
	fork.start(map[string]any{"program": "issue_timeline", "cwd": dir, "fork": id, "from": "timeline"})
	fork.request("configurationDone", nil)
	if code := expect[*godap.ExitedEvent](fork).Body.ExitCode; code != 0 || !strings.Contains(fork.console.String(), "reused issue") || !strings.Contains(fork.console.String(), "⇢ issue reused from run "+id[:12]+"\n") || strings.Contains(fork.console.String(), "skipped") {
		t.Errorf("the fork exits %d; console:\n%s", code, fork.console.String())
	}

	// A breakpoint on a step the fork reuses stops there, and the stop
	// says that going on reuses it.
	reusing := newClient(t)
	reusing.start(map[string]any{"program": "issue_timeline", "cwd": dir, "fork": id, "from": "timeline"})
	reusing.request("setFunctionBreakpoints", map[string]any{"breakpoints": []map[string]any{{"name": "issue step"}}})
	expect[*godap.SetFunctionBreakpointsResponse](reusing)
	reusing.request("configurationDone", nil)
	if ev := reusing.stopped("function breakpoint"); !strings.Contains(ev.Text, "the fork reuses this step's recorded result") {
		t.Errorf("the stop at a reused step says %q", ev.Text)
	} else {
		reusing.request("continue", map[string]any{"threadId": ev.ThreadId})
	}
	expect[*godap.ExitedEvent](reusing)

	bad := newClient(t)
	bad.request("initialize", map[string]any{"adapterID": "stepwise"})
	expect[*godap.InitializeResponse](bad)
	for _, tc := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"an unknown run", map[string]any{"program": "issue_timeline", "cwd": dir, "replay": "ffffffffffff"}, "ffffffffffff"},
		{"another plan's run", map[string]any{"program": "triage_queue", "cwd": dir, "replay": id}, "is a run of issue_timeline, not of triage_queue; launch issue_timeline as program"},
		{"a fork from nowhere", map[string]any{"program": "issue_timeline", "cwd": dir, "fork": id, "from": "nowhere"}, "from nowhere"},
		{"a fork without from", map[string]any{"program": "issue_timeline", "cwd": dir, "fork": id}, "a fork needs from"},
		{"a fork's set off what the step gives", map[string]any{"program": "issue_timeline", "cwd": dir, "fork": id, "from": "timeline", "set": map[string]any{"issue": map[string]any{"post": "yes"}}}, "set issue: issue gave an object with assignee, comments"},
		{"inputs with a replay", map[string]any{"program": "issue_timeline", "cwd": dir, "replay": id, "inputs": map[string]any{}}, "record's inputs"},
	} {
		bad.request("launch", tc.args)
		if e := expectError(bad); !strings.Contains(e.Message, tc.want) {
			t.Errorf("%s: %q does not say %q", tc.name, e.Message, tc.want)
		}
	}
}

// scopesOf lists the scopes of the thread's innermost frame by name.
func (c *client) scopesOf(thread int) map[string]godap.Scope {
	c.t.Helper()
	frames := c.frames(thread)
	c.request("scopes", map[string]any{"frameId": frames[0].Id})
	out := map[string]godap.Scope{}
	for _, s := range expect[*godap.ScopesResponse](c).Body.Scopes {
		out[s.Name] = s
	}
	return out
}

// TestDAPSetVariableAndExpression: at a result stop the editor sets a
// field of the result, which the run then uses; before a call it edits
// the arguments and injects the result, each checked against the
// schema, a refusal an error response with the schema's message; the
// scope's values, which earlier steps made, cannot be set.
func TestDAPSetVariableAndExpression(t *testing.T) {
	dir := demoProject(t)
	c := newClient(t)
	caps := c.start(map[string]any{"program": planFile(dir, "issue_timeline"), "inputs": map[string]any{"id": "CHK-107"}})
	if !caps.SupportsSetVariable || !caps.SupportsSetExpression {
		t.Fatalf("capabilities do not claim setVariable and setExpression: %+v", caps)
	}
	c.request("setFunctionBreakpoints", map[string]any{"breakpoints": []map[string]any{{"name": "issue result"}, {"name": "timeline/do.0 step"}}})
	expect[*godap.SetFunctionBreakpointsResponse](c)
	c.request("configurationDone", nil)
	ev := c.stopped("function breakpoint")

	scopes := c.scopesOf(ev.ThreadId)
	result := scopes["Result"]
	if result.VariablesReference == 0 {
		t.Fatalf("no Result scope at the issue's result: %+v", scopes)
	}
	// The editor has the result's comments and the scope's input
	// expanded as it sets the result's title.
	comments := c.variablesOf(result.VariablesReference)["comments"].VariablesReference
	input := c.variablesOf(scopes["Scope"].VariablesReference)["input"].VariablesReference
	c.request("setVariable", map[string]any{"variablesReference": result.VariablesReference, "name": "title", "value": `"Renamed"`})
	if got := expect[*godap.SetVariableResponse](c).Body.Value; got != `"Renamed"` {
		t.Errorf("setVariable answered %s", got)
	}
	// The references the editor holds stay valid at the same stop, and
	// show the value set.
	if got := c.variablesOf(result.VariablesReference)["title"].Value; got != `"Renamed"` {
		t.Errorf("the Result scope's title after the set reads %s", got)
	}
	if n := len(c.variablesOf(comments)); n != 2 {
		t.Errorf("the expanded comments list %d after the set, want 2", n)
	}
	if got := c.variablesOf(input)["id"].Value; got != `"CHK-107"` {
		t.Errorf("the expanded input's id after the set reads %s", got)
	}
	for _, expr := range []string{"stop.output.title", "issue.title"} {
		if got := c.evaluate(expr, "watch").Body.Result; got != `"Renamed"` {
			t.Errorf("%s after the set reads %s", expr, got)
		}
	}
	refusals := []struct {
		command string
		args    map[string]any
		want    string
	}{
		{"setVariable", map[string]any{"variablesReference": c.scopesOf(ev.ThreadId)["Result"].VariablesReference, "name": "title", "value": "Renamed"}, "not JSON"},
		{"setVariable", map[string]any{"variablesReference": c.scopesOf(ev.ThreadId)["Stop"].VariablesReference, "name": "kind", "value": `"step"`}, "stop.kind cannot be set"},
		{"setExpression", map[string]any{"expression": "input.id", "value": `"CHK-1"`}, "earlier steps"},
		{"setVariable", map[string]any{"variablesReference": 9999, "name": "x", "value": "1"}, "moved on"},
	}
	for _, r := range refusals {
		c.request(r.command, r.args)
		if e := expectError(c); !strings.Contains(e.Message, r.want) || e.Body.Error == nil || e.Body.Error.Format != e.Message {
			t.Errorf("%s %v: %q, want an error saying %q", r.command, r.args, e.Message, r.want)
		}
	}

	c.request("continue", map[string]any{"threadId": ev.ThreadId})
	expect[*godap.ContinueResponse](c)
	ev = c.stopped("function breakpoint")
	if _, ok := c.scopesOf(ev.ThreadId)["Result"]; ok {
		t.Error("a Result scope before the call has run")
	}
	c.request("setExpression", map[string]any{"expression": "stop.output", "value": `{"text": 5}`})
	if e := expectError(c); !strings.Contains(e.Message, "schema") || !strings.Contains(e.Message, "/text") {
		t.Errorf("an inject off the output schema: %s", e.Message)
	}
	c.request("setExpression", map[string]any{"expression": "stop.input.body", "value": `"edited"`})
	expect[*godap.SetExpressionResponse](c)
	if got := c.evaluate("stop.input.body", "watch").Body.Result; got != `"edited"` {
		t.Errorf("the edited argument reads %s", got)
	}
	c.request("setExpression", map[string]any{"expression": "{{stop.output}}", "value": `{"text": "injected\n"}`})
	injected := expect[*godap.SetExpressionResponse](c).Body
	c.request("setExpression", map[string]any{"expression": "stop.output.text", "value": `"injected again\n"`})
	expect[*godap.SetExpressionResponse](c)
	if got := c.variablesOf(injected.VariablesReference)["text"].Value; got != `"injected again\n"` {
		t.Errorf("the reference setExpression answered reads %s after another set", got)
	}
	if _, ok := c.scopesOf(ev.ThreadId)["Result"]; !ok {
		t.Error("no Result scope for the injected result")
	}
	c.request("continue", map[string]any{"threadId": ev.ThreadId})
	expect[*godap.ContinueResponse](c)
	if code := expect[*godap.ExitedEvent](c).Body.ExitCode; code != 0 {
		t.Fatalf("exit code %d; console:\n%s", code, c.console.String())
	}
	out := c.console.String()
	if !strings.Contains(out, `"title":"Renamed"`) || !strings.Contains(out, `"timeline":"injected again\n`) || strings.Contains(out, "edited") {
		t.Errorf("the run did not use the values set (the inject replaces the edit):\n%s", out)
	}
}

// TestDAPLogpointsAndHitConditionsKeepTheStep: a logpoint prints its
// template at each stop it makes and never stops, and a breakpoint whose
// hit condition is not met passes by; a next in progress over them still
// stops where it would, not at the run's end.
func TestDAPLogpointsAndHitConditionsKeepTheStep(t *testing.T) {
	dir := demoProject(t)
	file := planFile(dir, "issue_timeline")
	c := newClient(t)
	caps := c.start(map[string]any{"program": file, "inputs": map[string]any{"id": "CHK-107"}})
	if !caps.SupportsLogPoints {
		t.Error("capabilities do not claim logpoints")
	}
	c.request("setBreakpoints", map[string]any{"source": map[string]any{"path": file}, "breakpoints": []map[string]any{
		{"line": lineOf(t, file, "tool_name: user__append_event"), "logMessage": "appending {{item.author}} at {{index}}"},
		{"line": lineOf(t, file, "- id: issue"), "logMessage": "{{#broken}"},
	}})
	bps := expect[*godap.SetBreakpointsResponse](c).Body.Breakpoints
	if !bps[0].Verified {
		t.Errorf("the logpoint: %+v", bps[0])
	}
	if bps[1].Verified || !strings.Contains(bps[1].Message, "log message") {
		t.Errorf("a log message that is no template: %+v, want unverified with why", bps[1])
	}
	c.request("setFunctionBreakpoints", map[string]any{"breakpoints": []map[string]any{
		{"name": "issue result"}, {"name": "timeline/do.* result", "hitCondition": "5"},
	}})
	expect[*godap.SetFunctionBreakpointsResponse](c)
	c.request("configurationDone", nil)
	ev := c.stopped("function breakpoint")
	c.request("next", map[string]any{"threadId": ev.ThreadId})
	ev = c.stopped("step")
	if got := c.evaluate("stop.path", "watch").Body.Result; got != `"timeline"` {
		t.Fatalf("next from the issue's result stops at %s", got)
	}
	c.request("next", map[string]any{"threadId": ev.ThreadId})
	ev = c.stopped("step")
	if got := c.evaluate("stop.kind", "watch").Body.Result + " " + c.evaluate("stop.path", "watch").Body.Result; got != `"result" "timeline"` {
		t.Errorf("next over the reduce, past a logpoint and an unmet hit condition in it, stops at %s, want the reduce's result", got)
	}
	for _, line := range []string{"appending ", " at 0\n", " at 1\n"} {
		if !strings.Contains(c.console.String(), line) {
			t.Errorf("the console has no %q from the logpoint:\n%s", line, c.console.String())
		}
	}
	c.request("continue", map[string]any{"threadId": ev.ThreadId})
	if code := expect[*godap.ExitedEvent](c).Body.ExitCode; code != 0 {
		t.Errorf("exit code %d", code)
	}
}

// TestDAPRestart: restart aborts the run on show and runs the plan again
// with the same inputs and breakpoints, hit counts started again, and the
// editor is told of no end until the last run's.
func TestDAPRestart(t *testing.T) {
	dir := demoProject(t)
	file := planFile(dir, "issue_timeline")
	c := newClient(t)
	caps := c.start(map[string]any{"program": file, "inputs": map[string]any{"id": "CHK-107"}})
	if !caps.SupportsRestartRequest {
		t.Error("capabilities do not claim restart")
	}
	c.request("setFunctionBreakpoints", map[string]any{"breakpoints": []map[string]any{{"name": "issue result"}, {"name": "timeline/do.* step", "hitCondition": "2"}}})
	expect[*godap.SetFunctionBreakpointsResponse](c)
	c.request("configurationDone", nil)
	ev := c.stopped("function breakpoint")
	c.request("continue", map[string]any{"threadId": ev.ThreadId})
	c.stopped("function breakpoint")
	if got := c.evaluate("stop.path", "watch").Body.Result; got != `"timeline/do.1"` {
		t.Fatalf("hit condition 2 stopped at %s", got)
	}

	c.request("restart", map[string]any{"arguments": map[string]any{"program": file}})
	for restarted, again := false, false; !again; {
		m := c.next()
		switch m := m.(type) {
		case *godap.ExitedEvent, *godap.TerminatedEvent:
			t.Fatalf("a restart told the editor the session ended: %T", m)
		case *godap.ErrorResponse:
			t.Fatalf("restart refused: %s", m.Message)
		case *godap.RestartResponse:
			restarted = true
		case *godap.StoppedEvent:
			if !restarted {
				t.Fatal("stopped before the restart was answered")
			}
			ev, again = m.Body, true
		}
	}
	if ev.Reason != "function breakpoint" {
		t.Fatalf("the restarted run stopped by %s", ev.Reason)
	}
	if got := c.evaluate("stop.path", "watch").Body.Result + " " + c.evaluate("input.id", "watch").Body.Result; got != `"issue" "CHK-107"` {
		t.Errorf("the restarted run stops first at %s, want the issue's result with the same input", got)
	}
	c.request("continue", map[string]any{"threadId": ev.ThreadId})
	c.stopped("function breakpoint")
	if got := c.evaluate("stop.path", "watch").Body.Result; got != `"timeline/do.1"` {
		t.Errorf("the hit count did not start again: the restarted run stopped at %s", got)
	}
	c.request("continue", map[string]any{"threadId": ev.ThreadId})
	if code := expect[*godap.ExitedEvent](c).Body.ExitCode; code != 0 {
		t.Errorf("exit code %d", code)
	}
	expect[*godap.TerminatedEvent](c)
	if n := strings.Count(c.console.String(), "run "); n < 2 || !strings.Contains(c.console.String(), "aborted") {
		t.Errorf("the console does not show the aborted run and the new one's end:\n%s", c.console.String())
	}
}

// variablesOf lists the children of ref by name.
func (c *client) variablesOf(ref int) map[string]godap.Variable {
	c.t.Helper()
	c.request("variables", map[string]any{"variablesReference": ref})
	out := map[string]godap.Variable{}
	for _, v := range expect[*godap.VariablesResponse](c).Body.Variables {
		out[v.Name] = v
	}
	return out
}

// TestDAPModelScope: at a round stop the Model scope holds the request's
// messages and the tools offered; at the reply stop, the reply too.
func TestDAPModelScope(t *testing.T) {
	dir := demoProject(t)
	c := newClient(t)
	c.start(map[string]any{"program": "triage_queue", "cwd": dir, "inputs": map[string]any{"on_call": "Priya"}})
	c.request("setFunctionBreakpoints", map[string]any{"breakpoints": []map[string]any{{"name": "assess/do.0/verdict/agent.1 round"}}})
	expect[*godap.SetFunctionBreakpointsResponse](c)
	c.request("configurationDone", nil)
	ev := c.stopped("function breakpoint")

	model := c.scopesOf(ev.ThreadId)["Model"]
	if model.VariablesReference == 0 {
		t.Fatal("no Model scope at a round stop")
	}
	vars := c.variablesOf(model.VariablesReference)
	if vars["messages"].IndexedVariables < 2 || vars["tools"].IndexedVariables != 2 {
		t.Fatalf("the Model scope at the first round: %+v, want the system and user messages and the two tools offered", vars)
	}
	if _, ok := vars["reply"]; ok {
		t.Error("a reply before the call")
	}
	tools := c.variablesOf(vars["tools"].VariablesReference)
	if name := c.variablesOf(tools["0"].VariablesReference)["name"].Value; name != `"tracker__get_issue"` {
		t.Errorf("the first tool offered is %s", name)
	}
	// Each value says the template path it is read at, which reads it.
	if got := tools["1"].EvaluateName; got != "stop.input.tools.1" {
		t.Errorf("the Model scope's second tool has evaluateName %q, want stop.input.tools.1", got)
	}
	if _, ok := c.scopesOf(ev.ThreadId)["Stop"]; !ok {
		t.Error("no Stop scope beside Model")
	}
	// The request is a typed value; its paths read as its JSON does.
	if got := c.evaluate("stop.input.tools.1.name", "hover").Body.Result; got != `"tracker__search"` {
		t.Errorf("stop.input.tools.1.name at the round reads %s", got)
	}

	c.request("next", map[string]any{"threadId": ev.ThreadId})
	ev = c.stopped("step")
	if got := c.evaluate("stop.kind", "watch").Body.Result; got != `"reply"` {
		t.Fatalf("next from the round stops at a %s stop", got)
	}
	vars = c.variablesOf(c.scopesOf(ev.ThreadId)["Model"].VariablesReference)
	if vars["reply"].VariablesReference == 0 || vars["reply"].EvaluateName != outputPath {
		t.Errorf("no reply read at %s in the Model scope at the reply stop: %+v", outputPath, vars)
	}
	if got := c.evaluate("stop.output.model", "watch").Body.Result; got != `"scripted-mini"` && got != `"scripted"` {
		t.Errorf("stop.output.model at the reply reads %s", got)
	}
	// A reply set in the model's place is checked as it is set: its shape
	// as a reply, and an answer against the agent's output_schema.
	for _, tc := range []struct{ expr, value, want string }{
		{"stop.output", `{"text": 5}`, "a model reply's text must be a string, not number"},
		{"stop.output.output.severity", `"sev9"`, "a model reply has no field output"},
		{"stop.output", `{"severity": "sev9"}`, "output_schema"},
		{"stop.output", `{"text": "{\"severity\": \"sev9\"}"}`, "output_schema"},
	} {
		c.request("setExpression", map[string]any{"expression": tc.expr, "value": tc.value})
		if e := expectError(c); !strings.Contains(e.Message, tc.want) {
			t.Errorf("setExpression %s = %s: %q, want a refusal saying %q", tc.expr, tc.value, e.Message, tc.want)
		}
	}
	c.request("disconnect", nil)
	expect[*godap.DisconnectResponse](c)
}

// columnOf is the 1-based column of text on the first line of file holding
// it.
func columnOf(t testing.TB, file, text string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Split(string(b), "\n")[lineOf(t, file, text)-1]
	return strings.Index(line, text) + 1
}

// TestDAPSolverFrame: a stop at the solver has a frame of its own, at the
// solver's line, above the plan's.
func TestDAPSolverFrame(t *testing.T) {
	dir := demoProject(t)
	c := newClient(t)
	c.start(map[string]any{"program": "triage_queue", "cwd": dir, "inputs": map[string]any{"on_call": "Priya", "limit": 1}})
	c.request("setFunctionBreakpoints", map[string]any{"breakpoints": []map[string]any{{"name": "solver"}}})
	expect[*godap.SetFunctionBreakpointsResponse](c)
	c.request("configurationDone", nil)
	c.stopped("exception")
	c.evaluate(`answer {"post": false}`, "repl")
	ev := c.stopped("step")
	c.request("continue", map[string]any{"threadId": ev.ThreadId})
	ev = c.stopped("function breakpoint")
	plan := planFile(dir, "triage_queue")
	frames := c.frames(ev.ThreadId)
	from, to := lineOf(t, plan, "solver:"), lineOf(t, plan, "Lead with anything at sev1")
	if len(frames) != 2 || frames[0].Name != "solver" || frames[0].Line < from || frames[0].Line > to {
		t.Errorf("the solver's stop has frames %+v, want the solver's first, on its lines %d-%d", frames, from, to)
	}
	c.request("disconnect", nil)
	expect[*godap.DisconnectResponse](c)
}

// TestDAPFramesInACalledPlan: a stop in a plan a plan__ call runs points
// at the called plan's file and step, and the call's frame at the
// caller's step.
func TestDAPFramesInACalledPlan(t *testing.T) {
	dir := demoProject(t)
	c := newClient(t)
	c.start(map[string]any{"program": "triage_queue", "cwd": dir, "inputs": map[string]any{"on_call": "Priya", "limit": 1}})
	c.request("setFunctionBreakpoints", map[string]any{"breakpoints": []map[string]any{{"name": "**/stamp step"}}})
	expect[*godap.SetFunctionBreakpointsResponse](c)
	c.request("configurationDone", nil)
	c.stopped("exception")
	c.evaluate(`answer {"post": true}`, "repl")
	ev := c.stopped("step")
	c.request("continue", map[string]any{"threadId": ev.ThreadId})
	ev = c.stopped("function breakpoint")

	called, caller := planFile(dir, "post_triage_notes"), planFile(dir, "triage_queue")
	frames := c.frames(ev.ThreadId)
	if f := frames[0]; f.Source == nil || f.Source.Path != called || f.Line != lineOf(t, called, "- id: stamp") {
		t.Errorf("the stamp step's frame is %s at %+v line %d, want %s line %d", f.Name, f.Source, f.Line, called, lineOf(t, called, "- id: stamp"))
	}
	if want := columnOf(t, called, "id: stamp"); frames[0].Column != want {
		t.Errorf("the stamp step's frame is at column %d, want %d, where the step starts", frames[0].Column, want)
	}
	var call *godap.StackFrame
	for i := range frames {
		if strings.HasSuffix(frames[i].Name, "post_triage_notes (plan) post_triage_notes") {
			call = &frames[i]
		}
	}
	if call == nil || call.Source.Path != caller || call.Line != lineOf(t, caller, "tool_name: plan__post_triage_notes") {
		t.Errorf("the plan__ call's frame is %+v, want %s at the call's line; frames %+v", call, caller, frames)
	}
	c.request("disconnect", nil)
	expect[*godap.DisconnectResponse](c)
}

// TestDAPKeptBreakpointsFromAnotherWriter: a kept breakpoint another
// writer (stepwise debug in a terminal, the workbench) sets while the
// session runs is announced to the editor and stops the run; one it
// clears is announced gone.
func TestDAPKeptBreakpointsFromAnotherWriter(t *testing.T) {
	dir := demoProject(t)
	file := planFile(dir, "issue_timeline")
	c := newClient(t)
	c.start(map[string]any{"program": file, "inputs": map[string]any{"id": "CHK-107"}})
	c.request("setFunctionBreakpoints", map[string]any{"breakpoints": []map[string]any{{"name": "issue result"}}})
	expect[*godap.SetFunctionBreakpointsResponse](c)
	c.request("configurationDone", nil)
	ev := c.stopped("function breakpoint")

	other, err := debugger.OpenBreakpoints(filepath.Join(dir, ".stepwise", "breakpoints", "issue_timeline.json"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := other.Set("timeline", []engine.StopKind{engine.StopResult}, nil)
	if err != nil {
		t.Fatal(err)
	}
	news := expect[*godap.BreakpointEvent](c).Body
	if news.Reason != "new" || news.Breakpoint.Id != b.ID || !news.Breakpoint.Verified || news.Breakpoint.Line != lineOf(t, file, "- id: timeline") {
		t.Errorf("the other writer's breakpoint is announced as %+v, want new, verified, at the timeline step", news)
	}
	// The editor sends the kept breakpoint back as a line breakpoint of
	// its own, beside another on the same step: it stays the kept one,
	// and no id comes twice.
	keptLine, issueLine := lineOf(t, file, "- id: timeline"), lineOf(t, file, "- id: issue")
	c.request("setBreakpoints", map[string]any{"source": map[string]any{"path": file}, "breakpoints": []map[string]any{{"line": keptLine}, {"line": issueLine}, {"line": issueLine + 1}}})
	echo := expect[*godap.SetBreakpointsResponse](c).Body.Breakpoints
	if echo[0].Id != b.ID || !strings.HasPrefix(echo[0].Message, "kept: ") {
		t.Errorf("the kept breakpoint sent back is %+v, want kept breakpoint %d", echo[0], b.ID)
	}
	if echo[1].Id == 0 || echo[2].Id == echo[1].Id || echo[2].Verified {
		t.Errorf("two lines of one step answer %+v and %+v, want the second unverified with no id of its own", echo[1], echo[2])
	}
	c.srv.mu.Lock()
	held := c.srv.table.List()
	c.srv.mu.Unlock()
	for _, k := range held {
		if k.Pattern == "timeline" && len(k.Kinds) == 1 && k.Kinds[0] == engine.StopStep {
			t.Errorf("the kept breakpoint sent back made a step breakpoint of the editor's: %+v", k)
		}
	}
	c.request("setBreakpoints", map[string]any{"source": map[string]any{"path": file}, "breakpoints": []map[string]any{}})
	expect[*godap.SetBreakpointsResponse](c)
	c.request("continue", map[string]any{"threadId": ev.ThreadId})
	ev = c.stopped("breakpoint")
	if got := c.evaluate("stop.path", "watch").Body.Result + " " + c.evaluate("stop.kind", "watch").Body.Result; got != `"timeline" "result"` {
		t.Errorf("the other writer's breakpoint stopped the run at %s", got)
	}
	if err := other.Refresh(); err != nil {
		t.Fatal(err)
	}
	if err := other.Clear(b.ID); err != nil {
		t.Fatal(err)
	}
	if gone := expect[*godap.BreakpointEvent](c).Body; gone.Reason != "removed" || gone.Breakpoint.Id != b.ID {
		t.Errorf("the cleared breakpoint is announced as %+v", gone)
	}
	c.request("continue", map[string]any{"threadId": ev.ThreadId})
	expect[*godap.ExitedEvent](c)
}
