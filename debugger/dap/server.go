// Package dap is the Debug Adapter Protocol front end of the debugger: it
// lets an editor (VS Code, Neovim's nvim-dap, Zed, Helix, JetBrains IDEs)
// debug a plan with its own debugging UI. It translates DAP requests into
// the same workspace and debugger.Session calls the line driver and the
// workbench make, as delve's service/dap does for its debugger: breakpoints
// on a plan file's lines become logical breakpoints on the step's path
// pattern, the run's threads become DAP threads, and a stop's reason
// becomes the stopped event's.
//
// One Server debugs one plan run over one connection, as one adapter
// process per debug session is how editors start an adapter.
package dap

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"

	godap "github.com/google/go-dap"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/debugger/workspace"
	"github.com/stepwise-dev/stepwise/engine"
)

// Server is one debug session over one DAP connection.
type Server struct {
	in *bufio.Reader

	// wmu keeps whole messages apart on the wire: the run's goroutines
	// send events while the read loop answers requests.
	wmu sync.Mutex
	out io.Writer
	seq int

	// mu guards everything below: the read loop and the goroutine that
	// waits on the run both change it.
	mu       sync.Mutex
	ws       *workspace.Workspace
	launch   *launch
	session  *debugger.Session
	table    *debugger.Breakpoints
	askStops bool
	// runCtx is the run's; cancelling it aborts the run wherever it is.
	runCtx    context.Context
	cancelRun context.CancelCauseFunc
	// started, going and ended say where the run is: not yet started
	// (before configurationDone), moving between stops, or over.
	started, going, ended bool
	interrupted           bool
	// restarting says the run being aborted is to be run again: its end
	// is no end of the debug session.
	restarting bool
	last       debugger.State
	// done is closed once the run's end is reported.
	done chan struct{}

	// rerunOf is the recorded run a replay or a fork reruns.
	rerunOf string
	// verdict, for a replay or a fork, says at the end how it compares
	// with its record or what it reused, and whether a replay reproduced
	// it (a replay that did not exits 1, as stepwise replay does).
	verdict func(*engine.Result) (string, bool)

	// streamed says the solver's report went to the console as it was
	// written, so the end does not repeat it.
	streamed atomic.Bool

	threads threadIDs
	values  *handles
	marks   *editorMarks
	// client is what the editor said of itself in initialize.
	client godap.InitializeRequestArguments
	// called are the plans plan__ calls run, by identifier, as stack
	// frames point into their files.
	called map[string]planSource
	// announced are the kept breakpoints the editor was last told of, by
	// id; keptErr is the last error reading the kept file, said once.
	announced map[int]debugger.Breakpoint
	keptErr   string
	// quit is closed when the session ends, which stops watchKept.
	quit chan struct{}
}

// NewServer returns a server that reads requests from r and writes
// responses and events to w.
func NewServer(r io.Reader, w io.Writer) *Server {
	return &Server{
		in:       bufio.NewReader(r),
		out:      w,
		askStops: true,
		done:     make(chan struct{}),
		values:   &handles{},
		marks:    newEditorMarks(),
		called:   map[string]planSource{},
		quit:     make(chan struct{}),
	}
}

// Listen serves one client that connects to addr (host:port; port 0 picks
// one), then returns. ready is told the address listened on, so that a
// caller can say it before the client connects.
func Listen(ctx context.Context, addr string, ready func(net.Addr)) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--listen %s: %w", addr, err)
	}
	if ready != nil {
		ready(l.Addr())
	}
	// A cancelled context stops the wait for a client.
	stop := context.AfterFunc(ctx, func() { l.Close() })
	defer stop()
	conn, err := l.Accept()
	l.Close()
	if err != nil {
		return fmt.Errorf("waiting for a DAP client on %s: %w", addr, err)
	}
	defer conn.Close()
	return NewServer(conn, conn).Serve(ctx)
}

// Serve reads requests until the client disconnects or the connection
// ends. A run still going is then aborted and recorded, and the project's
// tool servers are shut down, so that no process outlives the session.
func (s *Server) Serve(ctx context.Context) error {
	defer s.shutdown()
	// Messages are read on their own goroutine, so that a cancelled
	// context (the adapter told to stop) is heard while stdin stays open.
	type read struct {
		content []byte
		err     error
	}
	reads := make(chan read)
	over := make(chan struct{})
	defer close(over)
	go func() {
		for {
			content, err := godap.ReadBaseMessage(s.in)
			select {
			case reads <- read{content, err}:
			case <-over:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	for {
		var r read
		select {
		case <-ctx.Done():
			return nil
		case r = <-reads:
		}
		if r.err != nil {
			if errors.Is(r.err, io.EOF) || errors.Is(r.err, io.ErrUnexpectedEOF) || errors.Is(r.err, net.ErrClosed) {
				return nil
			}
			// A frame that cannot be read leaves no way to find the next
			// one: the session ends.
			return fmt.Errorf("reading a DAP message: %w", r.err)
		}
		msg, err := godap.DecodeProtocolMessage(r.content)
		if err != nil {
			s.refuseUndecodable(r.content, err)
			continue
		}
		if s.dispatch(ctx, msg) {
			return nil
		}
	}
}

// refuseUndecodable answers a message that is not a request this adapter
// knows, or not JSON at all, with an error response that says why; the
// session goes on, since the frame was read whole.
func (s *Server) refuseUndecodable(content []byte, err error) {
	var field *godap.DecodeProtocolMessageFieldError
	if errors.As(err, &field) {
		if field.FieldName == "command" {
			s.sendError(field.Seq, field.FieldValue, fmt.Errorf("unknown request '%s': this adapter answers initialize, launch, configurationDone, setBreakpoints, setFunctionBreakpoints, setExceptionBreakpoints, threads, stackTrace, scopes, variables, evaluate, setVariable, setExpression, continue, next, stepIn, stepOut, pause, restart, terminate and disconnect", field.FieldValue))
			return
		}
		s.sendError(field.Seq, "", fmt.Errorf("a message with %s '%s' cannot be taken: a client sends requests (type 'request')", field.FieldName, field.FieldValue))
		return
	}
	// The seq of a message that is not JSON is unknown; 0 says so.
	var head struct {
		Seq     int    `json:"seq"`
		Command string `json:"command"`
	}
	_ = json.Unmarshal(content, &head)
	s.sendError(head.Seq, head.Command, fmt.Errorf("the message is not a DAP request: %v; each message is a JSON object with seq, type and command", err))
}

// dispatch carries out one request and reports whether the session is
// over (disconnect).
func (s *Server) dispatch(ctx context.Context, msg godap.Message) bool {
	switch r := msg.(type) {
	case *godap.InitializeRequest:
		s.onInitialize(r)
	case *godap.LaunchRequest:
		s.onLaunch(ctx, r)
	case *godap.ConfigurationDoneRequest:
		s.onConfigurationDone(r)
	case *godap.SetBreakpointsRequest:
		s.onSetBreakpoints(r)
	case *godap.SetFunctionBreakpointsRequest:
		s.onSetFunctionBreakpoints(r)
	case *godap.SetExceptionBreakpointsRequest:
		s.onSetExceptionBreakpoints(r)
	case *godap.ThreadsRequest:
		s.onThreads(r)
	case *godap.StackTraceRequest:
		s.onStackTrace(r)
	case *godap.ScopesRequest:
		s.onScopes(r)
	case *godap.VariablesRequest:
		s.onVariables(r)
	case *godap.EvaluateRequest:
		s.onEvaluate(r)
	case *godap.SetVariableRequest:
		s.onSetVariable(r)
	case *godap.SetExpressionRequest:
		s.onSetExpression(r)
	case *godap.ContinueRequest:
		s.onMove(&r.Request, r.Arguments.ThreadId, debugger.Continue, &godap.ContinueResponse{Body: godap.ContinueResponseBody{AllThreadsContinued: true}})
	case *godap.NextRequest:
		s.onMove(&r.Request, r.Arguments.ThreadId, debugger.Next, &godap.NextResponse{})
	case *godap.StepInRequest:
		s.onMove(&r.Request, r.Arguments.ThreadId, debugger.StepIn, &godap.StepInResponse{})
	case *godap.StepOutRequest:
		s.onMove(&r.Request, r.Arguments.ThreadId, debugger.StepOut, &godap.StepOutResponse{})
	case *godap.PauseRequest:
		s.onPause(r)
	case *godap.TerminateRequest:
		s.onTerminate(r)
	case *godap.RestartRequest:
		s.onRestart(ctx, r)
	case *godap.DisconnectRequest:
		s.onDisconnect(r)
		return true
	case godap.RequestMessage:
		req := r.GetRequest()
		s.sendError(req.Seq, req.Command, fmt.Errorf("'%s' is not supported by this adapter (its capabilities say what is)", req.Command))
	default:
		s.sendError(msg.GetSeq(), "", errors.New("a client sends requests; this message is not one"))
	}
	return false
}

func (s *Server) onInitialize(r *godap.InitializeRequest) {
	s.mu.Lock()
	s.client = r.Arguments
	s.mu.Unlock()
	resp := &godap.InitializeResponse{Body: capabilities()}
	s.send(reply(&r.Request, resp, &resp.Response))
}

// capabilities says what this adapter does, and only that: the requests
// dispatch carries out.
func capabilities() godap.Capabilities {
	return godap.Capabilities{
		SupportsConfigurationDoneRequest:  true,
		SupportsFunctionBreakpoints:       true,
		SupportsConditionalBreakpoints:    true,
		SupportsHitConditionalBreakpoints: true,
		SupportsEvaluateForHovers:         true,
		SupportsTerminateRequest:          true,
		SupportsSetVariable:               true,
		SupportsSetExpression:             true,
		SupportsLogPoints:                 true,
		SupportsRestartRequest:            true,
		ExceptionBreakpointFilters: []godap.ExceptionBreakpointsFilter{
			{Filter: filterError, Label: "Errors", Description: "Stop where a failure is about to propagate, to replace it with a value or abort", Default: true},
			{Filter: filterAsk, Label: "Asks", Description: "Stop at an ask step, to answer it in the debug console (answer JSON, decline); off, the ask takes its unattended path", Default: true},
		},
	}
}

// onMove carries out continue, next, stepIn and stepOut: next, stepIn
// and stepOut in the thread the editor names, made current first when
// another one is.
func (s *Server) onMove(req *godap.Request, thread int, move debugger.Movement, resp godap.ResponseMessage) {
	s.mu.Lock()
	err := s.held()
	if err == nil && move != debugger.Continue {
		// Continue resumes every thread wherever it is asked from; the
		// others act in the thread the editor names.
		err = s.switchTo(thread)
	}
	if err != nil {
		s.mu.Unlock()
		s.sendError(req.Seq, req.Command, err)
		return
	}
	s.mu.Unlock()
	s.send(reply(req, resp, resp.GetResponse()))
	s.mu.Lock()
	defer s.mu.Unlock()
	s.goOn(func() (debugger.State, error) { return s.session.Do(debugger.Command{Move: move}) })
}

// held says why the run cannot take a command that wants it held, or nil
// when it is.
func (s *Server) held() error {
	switch {
	case s.session == nil:
		return errors.New("no run is being debugged: launch one first")
	case !s.started:
		return errors.New("the run has not started: send configurationDone first")
	case s.ended:
		return errors.New("the run has ended")
	case s.going:
		return debugger.ErrRunning
	}
	return nil
}

// switchTo makes the held thread the editor acts on the session's current
// one, so that next, stepIn and the decisions act on its stop.
func (s *Server) switchTo(thread int) error {
	id, ok := s.threads.name(thread)
	if !ok || s.last.Stop == nil || id == s.last.Stop.Thread {
		return nil
	}
	st, err := s.session.SwitchThread(id)
	if err != nil {
		return err
	}
	s.last = st
	s.values.reset()
	return nil
}

// goOn moves the run on the background, then reports where it came to.
// It is called with mu held.
func (s *Server) goOn(move func() (debugger.State, error)) {
	s.going = true
	s.values.reset()
	go func() {
		st, err := move()
		s.arrive(st, err)
	}()
}

// arrive reports where a movement took the run: a stop (as a stopped
// event), or its end. An ask with the ask filter off is gone on from at
// once (the editor's hit conditions and logpoints are the session's
// breakpoint rule, which passes their stops by before they are made).
func (s *Server) arrive(st debugger.State, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		// The command was refused and the run is held where it was: say
		// why, and show the stop again, since the editor took the run for
		// going.
		s.going = false
		s.output("stderr", "error: "+err.Error()+"\n")
		if s.last.Stop != nil {
			s.stopped(s.last)
		}
		return
	}
	if st.Finished || st.Stop == nil {
		s.end(st)
		return
	}
	if s.interrupted {
		// A stop the run came to as it was being aborted (the error stop
		// of a call the cancel cut short) hears the cancel and ends the
		// run; Wait delivers the end.
		s.goOn(func() (debugger.State, error) { return s.session.Wait(), nil })
		return
	}
	if st.Reason == debugger.ReasonAsk && !s.askStops {
		// Going on without an answer is the ask's unattended path.
		s.goOn(func() (debugger.State, error) { return s.session.Do(debugger.Command{Move: debugger.Continue}) })
		return
	}
	s.going = false
	s.last = st
	s.stopped(st)
}

// stopped sends the thread events of the threads that came or went since
// the last stop, then the stopped event of st. It is called with mu held.
func (s *Server) stopped(st debugger.State) {
	s.announceThreads(s.session.Threads())
	snap := st.Stop
	body := godap.StoppedEventBody{
		Reason:            s.reason(st),
		Description:       fmt.Sprintf("%s at %s (%s)", st.Reason, snap.Path, snap.Kind),
		ThreadId:          s.threads.id(snap.Thread),
		Text:              snap.Error,
		AllThreadsStopped: true,
	}
	switch {
	case snap.Ask != nil:
		body.Text = snap.Ask.Prompt + " (answer JSON or decline in the debug console)"
		switch answer, ok := s.recordedAnswer(snap); {
		case snap.Recorded == "decline":
			body.Text += "; the record declined it, which continue does again"
		case ok:
			body.Text += "; the record answered " + engine.JSONText(answer) + ", which continue gives again"
		}
	case snap.Recorded != "":
		// A replay makes a person's decision here again: what continue
		// gives is theirs, not what the run gave now.
		body.Text = "the recorded run's " + snap.Recorded + " here is made again: continue gives the value in the Result scope"
	case snap.Reused:
		body.Text = "the fork reuses this step's recorded result: continue gives it, and nothing runs here"
	}
	if snap.Breakpoint != nil {
		body.HitBreakpointIds = []int{snap.Breakpoint.ID}
	}
	s.send(&godap.StoppedEvent{Event: event("stopped"), Body: body})
}

// recordedAnswer is the answer a replay's record gave the ask at snap,
// which the replay gives again when it is let go on.
func (s *Server) recordedAnswer(snap *debugger.Snapshot) (any, bool) {
	if s.launch == nil || s.launch.Replay == "" || snap.Ask == nil || snap.Prefill == nil {
		return nil, false
	}
	return snap.Prefill, true
}

// announceThreads sends a thread event for each thread that started or
// ended since the last announcement, live listing the threads now.
func (s *Server) announceThreads(live []debugger.Thread) {
	started, exited := s.threads.update(live)
	for _, id := range exited {
		s.send(&godap.ThreadEvent{Event: event("thread"), Body: godap.ThreadEventBody{Reason: "exited", ThreadId: id}})
	}
	for _, id := range started {
		s.send(&godap.ThreadEvent{Event: event("thread"), Body: godap.ThreadEventBody{Reason: "started", ThreadId: id}})
	}
}

// reason is the stopped event's reason for a session's stop reason.
func (s *Server) reason(st debugger.State) string {
	switch r := st.Reason; {
	case st.Stop.Breakpoint != nil && strings.HasPrefix(string(r), "breakpoint"):
		if s.marks.isFunction(*st.Stop.Breakpoint) {
			return "function breakpoint"
		}
		return "breakpoint"
	case r == debugger.ReasonEntry:
		return "entry"
	case r == debugger.ReasonPause:
		return "pause"
	case r == debugger.ReasonError, r == debugger.ReasonAsk, r == debugger.ReasonSpendCap:
		// The stops the exception filters (and the spend cap) make.
		return "exception"
	}
	return "step"
}

// end reports the run's end: its outcome on the debug console, then the
// exited event with the CLI's exit code, then terminated. It is called
// with mu held.
func (s *Server) end(st debugger.State) {
	if s.ended {
		return
	}
	s.going, s.ended, s.last = false, true, st
	s.ws.Flush()
	s.output("console", summary(st))
	if res := st.Result; res != nil {
		switch {
		case res.Output != nil:
			s.output("stdout", engine.JSONText(res.Output)+"\n")
		case s.streamed.Load():
			s.output("stdout", "\n")
		case res.Answer != "":
			s.output("stdout", res.Answer+"\n")
		}
	}
	if s.restarting {
		close(s.done)
		return
	}
	code := s.exitCode(st)
	if s.verdict != nil && st.Result != nil {
		line, ok := s.verdict(st.Result)
		s.output("console", line+"\n")
		if !ok && code == workspace.ExitOK {
			code = workspace.ExitFailure
		}
	}
	s.send(&godap.ExitedEvent{Event: event("exited"), Body: godap.ExitedEventBody{ExitCode: code}})
	s.send(&godap.TerminatedEvent{Event: event("terminated")})
	close(s.done)
}

// summary says how the run ended, in one line.
func summary(st debugger.State) string {
	switch {
	case st.Err != nil:
		return fmt.Sprintf("the run was refused: %v\n", st.Err)
	case st.Result == nil:
		return "the run ended: " + st.Error + "\n"
	}
	res := st.Result
	line := fmt.Sprintf("run %s %s", res.RunID, res.Status)
	switch {
	case res.Exit != nil:
		line += fmt.Sprintf(": exit %s at %s: %s", res.Exit.Status, res.Exit.Step, res.Exit.Message)
	case res.Err != nil:
		line += ": " + res.Err.Error()
	}
	return line + "\n"
}

// exitCode is the code `stepwise run` exits with for the same end, the
// exited event's: ctrl-c's for a run the editor stopped.
func (s *Server) exitCode(st debugger.State) int {
	if s.interrupted && st.Err == nil && st.Result != nil {
		return workspace.ExitInterrupted
	}
	return workspace.ExitCode(st.Result, st.Err)
}

func (s *Server) onPause(r *godap.PauseRequest) {
	s.mu.Lock()
	var err error
	if s.going {
		err = s.session.Pause()
	}
	s.mu.Unlock()
	// Pausing a held run has nothing to do; the editor shows it held.
	if err != nil && !errors.Is(err, debugger.ErrRunning) {
		s.output("console", "pause: "+err.Error()+"\n")
	}
	resp := &godap.PauseResponse{}
	s.send(reply(&r.Request, resp, &resp.Response))
}

func (s *Server) onTerminate(r *godap.TerminateRequest) {
	resp := &godap.TerminateResponse{}
	s.send(reply(&r.Request, resp, &resp.Response))
	go s.abort()
}

func (s *Server) onDisconnect(r *godap.DisconnectRequest) {
	s.abort()
	resp := &godap.DisconnectResponse{}
	s.send(reply(&r.Request, resp, &resp.Response))
}

// errEditorStopped is why a run the editor stopped was aborted, as the
// run's record and the console say it.
var errEditorStopped = errors.New("stopped from the editor")

// abort ends a run that has started and waits until its end is reported:
// the run is cancelled wherever it is (held or going), which the engine
// records as an aborted run.
func (s *Server) abort() {
	s.mu.Lock()
	if !s.started || s.ended {
		s.mu.Unlock()
		return
	}
	s.interrupted = true
	s.cancelRun(errEditorStopped)
	if !s.going {
		// A held run hears the cancel and ends; Wait delivers its end.
		s.goOn(func() (debugger.State, error) { return s.session.Wait(), nil })
	}
	// This run's end: a restart makes another done for the next run.
	done := s.done
	s.mu.Unlock()
	<-done
}

// shutdown aborts what runs and closes the workspace, which writes the
// run's record and stops the tool servers it started.
func (s *Server) shutdown() {
	close(s.quit)
	s.abort()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.marks.forget(s.table)
	if s.ws != nil {
		s.ws.Close()
	}
	if s.cancelRun != nil {
		s.cancelRun(errEditorStopped)
	}
}

// output sends text to the editor's debug console.
func (s *Server) output(category, text string) {
	s.send(&godap.OutputEvent{Event: event("output"), Body: godap.OutputEventBody{Category: category, Output: text}})
}

func event(name string) godap.Event {
	return godap.Event{ProtocolMessage: godap.ProtocolMessage{Type: "event"}, Event: name}
}

// reply fills in the response part of resp for req, successful, and
// returns resp.
func reply(req *godap.Request, resp godap.Message, r *godap.Response) godap.Message {
	r.Type = "response"
	r.RequestSeq = req.Seq
	r.Command = req.Command
	r.Success = true
	return resp
}

// sendError answers request seq (command) with err's message, which is
// shown to the user. The message is the ErrorMessage's format as it is,
// with no variables: a client fills in a {name} of the format only from
// the variables and leaves any other braces as written (VS Code's
// formatPII, nvim-dap's), so a template in the message ({{item.id}}) reads
// as the user wrote it.
func (s *Server) sendError(seq int, command string, err error) {
	resp := &godap.ErrorResponse{
		Response: godap.Response{ProtocolMessage: godap.ProtocolMessage{Type: "response"}, RequestSeq: seq, Command: command, Message: err.Error()},
		Body:     godap.ErrorResponseBody{Error: &godap.ErrorMessage{Id: 1, Format: err.Error(), ShowUser: true}},
	}
	s.send(resp)
}

// send writes one message, numbered in the order messages go out.
func (s *Server) send(m godap.Message) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.seq++
	switch v := m.(type) {
	case godap.ResponseMessage:
		v.GetResponse().Seq = s.seq
	case godap.EventMessage:
		v.GetEvent().Seq = s.seq
	}
	// A client that has gone cannot be told; the read loop sees the
	// connection end and shuts the session down.
	_ = godap.WriteProtocolMessage(s.out, m)
}
