package dap

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	godap "github.com/google/go-dap"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/debugger/workspace"
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/chat"
	"github.com/stepwise-dev/stepwise/plans/suggest"
	"github.com/stepwise-dev/stepwise/tui/format"
)

// launch is the launch request's arguments, as a launch.json writes them.
type launch struct {
	// Program is a plan file (relative to Cwd) or the identifier of a plan
	// on the project's plan paths.
	Program string `json:"program"`
	// Cwd is the directory the project is found from; the adapter's own
	// when empty.
	Cwd string `json:"cwd"`
	// Inputs are the plan's inputs, an object.
	Inputs map[string]any `json:"inputs"`
	// Script answers every model call from this replies file.
	Script string `json:"script"`
	// StopOnEntry holds the run at its first stop; editors run to the
	// first breakpoint by default.
	StopOnEntry bool `json:"stopOnEntry"`
	// BreakOnError is on unless set false; the error exception filter
	// changes it later.
	BreakOnError *bool `json:"breakOnError"`
	// NoDebug runs the plan to its end with no stop, as `stepwise run`.
	NoDebug bool `json:"noDebug"`
	// Replay debugs a replay of this recorded run of the plan (its id, or
	// a prefix only it has), as `stepwise replay RUN --debug`.
	Replay string `json:"replay"`
	// Fork debugs a fork of this recorded run of the plan from the step
	// From, with the results Set gives (path pattern: value), as
	// `stepwise fork RUN --from PATH --set PATH=JSON --debug`.
	Fork string         `json:"fork"`
	From string         `json:"from"`
	Set  map[string]any `json:"set"`
}

// launchArgumentsError says which launch argument has the wrong type, in
// the launch configuration's own terms.
func launchArgumentsError(err error) error {
	var typeErr *json.UnmarshalTypeError
	if !errors.As(err, &typeErr) {
		return fmt.Errorf("launch arguments: %w; they are one JSON object", err)
	}
	switch field := typeErr.Field; field {
	case "inputs":
		return errors.New("launch.inputs must be an object of the plan's inputs (checked against its input_schema)")
	case "set":
		return errors.New("launch.set must be an object of path patterns and the values set there")
	case "stopOnEntry", "breakOnError", "noDebug":
		return fmt.Errorf("launch.%s must be true or false, not a %s", field, typeErr.Value)
	default:
		return fmt.Errorf("launch.%s must be a string, not a %s", field, typeErr.Value)
	}
}

// check refuses the arguments that do not go together, saying which.
func (l launch) check() error {
	switch {
	case l.Program == "" && l.Replay == "" && l.Fork == "":
		return errors.New("launch: program is missing: give a plan file or a plan's identifier, as `stepwise debug PLAN` takes it")
	case l.Replay != "" && l.Fork != "":
		return errors.New("launch: give replay or fork, not both")
	case (l.Replay != "" || l.Fork != "") && l.NoDebug:
		return errors.New("launch: a replay or a fork is launched to debug it; run `stepwise replay` or `stepwise fork` for a plain one, or drop noDebug")
	case (l.Replay != "" || l.Fork != "") && l.Inputs != nil:
		return errors.New("launch: a replay or a fork runs with its record's inputs; remove inputs")
	case l.Fork == "" && (l.From != "" || l.Set != nil):
		return errors.New("launch: from and set say where a fork starts and what it changes; add fork: RUN")
	case l.Fork != "" && l.From == "":
		return errors.New("launch: a fork needs from, the step it starts from (a path pattern, as --from takes it)")
	}
	return nil
}

// onLaunch opens the project, loads and checks the plan, and prepares the
// session; the run starts at configurationDone, once the editor has set
// its breakpoints.
func (s *Server) onLaunch(ctx context.Context, r *godap.LaunchRequest) {
	if err := s.prepare(ctx, r.Arguments); err != nil {
		s.output("stderr", err.Error()+"\n")
		s.sendError(r.Seq, r.Command, err)
		return
	}
	resp := &godap.LaunchResponse{}
	s.send(reply(&r.Request, resp, &resp.Response))
	s.send(&godap.InitializedEvent{Event: event("initialized")})
	// The plan's kept breakpoints apply too: the editor is told of them,
	// so that it shows them beside its own, and of every change another
	// writer (stepwise debug, the workbench) makes to them while the
	// session lasts.
	s.mu.Lock()
	defer s.mu.Unlock()
	s.announceKept()
	if s.table != nil {
		go s.watchKept()
	}
}

// prepare carries out a launch: every problem is an error that says what
// to change in the launch configuration or the plan.
func (s *Server) prepare(ctx context.Context, raw json.RawMessage) (err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.launch != nil {
		return errors.New("a plan is launched already: one adapter debugs one run; start another debug session")
	}
	defer func() {
		// A launch that failed leaves nothing behind: the editor may
		// launch again with the configuration fixed.
		if err == nil {
			return
		}
		if s.ws != nil {
			s.ws.Close()
		}
		if s.cancelRun != nil {
			s.cancelRun(nil)
		}
		s.ws, s.launch, s.runCtx, s.cancelRun, s.table, s.session = nil, nil, nil, nil, nil, nil
		s.marks.plan, s.marks.file = nil, ""
	}()
	var l launch
	if len(raw) > 0 {
		if err = json.Unmarshal(raw, &l); err != nil {
			return launchArgumentsError(err)
		}
	}
	if err := l.check(); err != nil {
		return err
	}
	if l.Cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("launch: no cwd given and the adapter's own is unknown: %w", err)
		}
		l.Cwd = wd
	}
	if l.Program == "" {
		// A replay or a fork reruns the plan its record ran.
		if l.Program, err = recordedPlan(ctx, l); err != nil {
			return err
		}
	}
	if l.Script != "" && !filepath.IsAbs(l.Script) {
		l.Script = filepath.Join(l.Cwd, l.Script)
	}
	var warnings bytes.Buffer
	ws, file, err := openProject(l, &warnings)
	if warnings.Len() > 0 {
		s.output("console", warnings.String())
	}
	if err != nil {
		if ws != nil {
			ws.Close()
		}
		return fmt.Errorf("launch: %w", err)
	}
	// Paths in messages are shown from the launch's cwd, the editor's
	// workspace folder, so that the editor opens them.
	ws.ShowPathsFrom(l.Cwd)
	s.ws = ws
	doc, err := s.load(file)
	if err != nil {
		return err
	}
	s.launch = &l
	s.marks.file = file
	s.runCtx, s.cancelRun = context.WithCancelCause(ctx)
	if !l.NoDebug {
		table, err := ws.Breakpoints(doc)
		if err != nil {
			s.output("console", "warning: the kept breakpoints could not be read: "+err.Error()+"\n")
		}
		table.BreakOnError(l.BreakOnError == nil || *l.BreakOnError)
		s.table = table
	}
	return s.newSession(ctx, doc)
}

// load reads the launched plan's file, as it is now, and refuses a plan
// with problems, each at its file:line:col.
func (s *Server) load(file string) (workspace.Document, error) {
	doc, err := s.ws.Load(file)
	if err != nil {
		return doc, fmt.Errorf("launch %s: %w", s.ws.DisplayPath(file), err)
	}
	if !doc.Report.OK() {
		lines := make([]string, len(doc.Report.Problems))
		for i, p := range doc.Report.Problems {
			lines[i] = s.ws.DisplayText(p.String())
		}
		return doc, fmt.Errorf("%s has problems; fix them and launch again:\n%s", s.ws.DisplayPath(file), strings.Join(lines, "\n"))
	}
	return doc, nil
}

// newSession prepares the run of doc's plan that the launch asks for: a
// debugged run, or a replay or a fork of a recorded one, stopping by the
// table; none for noDebug, which configurationDone runs plainly.
func (s *Server) newSession(ctx context.Context, doc workspace.Document) error {
	s.marks.plan = doc.Plan
	l := s.launch
	if l.NoDebug {
		return nil
	}
	opts := workspace.RunOptions{Script: l.Script, Held: l.StopOnEntry, Sinks: []engine.Sink{progress{s}}}
	var session *debugger.Session
	var err error
	switch {
	case l.Replay != "" || l.Fork != "":
		session, err = s.rerun(ctx, doc, s.table, opts)
	default:
		session, err = s.ws.Debug(doc.Plan, s.table, opts)
	}
	if err != nil {
		return fmt.Errorf("launch %s: %w", l.Program, err)
	}
	session.SetBreakpointRule(s.breakpointRule)
	s.session = session
	return nil
}

// rerun prepares the session of a replay or a fork of a recorded run of
// the launched plan, its inputs the record's, and what says at the end
// how it compares with its record, or what it reused.
func (s *Server) rerun(ctx context.Context, doc workspace.Document, table *debugger.Breakpoints, opts workspace.RunOptions) (*debugger.Session, error) {
	l := s.launch
	id := l.Replay + l.Fork
	rec, err := s.ws.Recording(ctx, id)
	if err != nil {
		return nil, err
	}
	if want := doc.Plan.Identifier.Value; rec.Run.Plan != want {
		return nil, fmt.Errorf("run %s is a run of %s, not of %s; launch %s as program, or leave program out to rerun the plan the run ran", id, rec.Run.Plan, want, rec.Run.Plan)
	}
	l.Inputs = rec.Inputs()
	s.rerunOf = rec.Run.ID
	if l.Replay != "" {
		session, ended, err := s.ws.DebugReplay(rec, doc.Plan, table, opts)
		if err != nil {
			return nil, err
		}
		s.verdict = func(res *engine.Result) (string, bool) { return replayVerdict(ended(res)) }
		return session, nil
	}
	spec := debugger.ForkSpec{From: l.From}
	for _, p := range slices.Sorted(maps.Keys(l.Set)) {
		spec.Sets = append(spec.Sets, debugger.ForkSet{Path: p, Value: l.Set[p]})
	}
	session, forked, err := s.ws.DebugFork(rec, doc.Plan, spec, table, opts)
	var specErr *debugger.ForkSpecError
	if errors.As(err, &specErr) {
		field := "from"
		if specErr.Set {
			field = "set"
		}
		return nil, fmt.Errorf("%s %s: %s", field, specErr.Pattern, specErr.Reason)
	}
	if err != nil {
		return nil, err
	}
	s.verdict = func(res *engine.Result) (string, bool) { return forkVerdict(forked(res)), true }
	return session, nil
}

// recordedPlan is the identifier of the plan the run a replay or a fork
// names ran, read from cwd's project.
func recordedPlan(ctx context.Context, l launch) (string, error) {
	ws, err := workspace.Open(l.Cwd, workspace.Options{})
	if err != nil {
		return "", fmt.Errorf("launch: %w", err)
	}
	defer ws.Close()
	rec, err := ws.Recording(ctx, l.Replay+l.Fork)
	if err != nil {
		return "", fmt.Errorf("launch: %w", err)
	}
	return rec.Run.Plan, nil
}

// replayVerdict says how a replay compares with its record, and whether
// it reproduced it.
func replayVerdict(out *debugger.ReplayResult) (string, bool) {
	d := out.Divergence
	switch {
	case d == nil && out.AbortedAt != "":
		return fmt.Sprintf("✓ the replay of run %s reproduced the run up to where it was aborted, at %s, and aborted there too", out.Of, out.AbortedAt), true
	case d == nil && out.FailedAt != "":
		return fmt.Sprintf("✓ the replay of run %s reproduced the run up to its failure at %s", out.Of, out.FailedAt), true
	case d == nil:
		return fmt.Sprintf("✓ the replay of run %s matches its record: %d steps reproduced, %d model calls answered from the record", out.Of, out.Steps, out.ModelCalls), true
	}
	return fmt.Sprintf("✗ the replay of run %s diverges: %s", out.Of, d), false
}

// forkVerdict says what a fork reused and set.
func forkVerdict(out *debugger.ForkResult) string {
	line := fmt.Sprintf("fork of run %s from %s", out.Of, out.From)
	if len(out.Reused) > 0 {
		line += "; reused " + strings.Join(out.Reused, ", ")
	}
	if len(out.Set) > 0 {
		line += "; set " + strings.Join(out.Set, ", ")
	}
	for _, p := range out.Unreached {
		line += fmt.Sprintf("\nwarning: set %s: the fork ran no step there", p)
	}
	return line
}

// openProject opens the workspace of the project the plan belongs to and
// finds its file: a plan file belongs to the project it sits in (cwd's
// when it sits in none), an identifier to cwd's, as the command line
// finds them.
func openProject(l launch, warnings *bytes.Buffer) (*workspace.Workspace, string, error) {
	file := l.Program
	if !filepath.IsAbs(file) {
		file = filepath.Join(l.Cwd, file)
	}
	info, statErr := os.Stat(file)
	if statErr == nil && info.IsDir() {
		return nil, "", fmt.Errorf("%s is a directory; program is one plan file in it, or a plan's identifier", l.Program)
	}
	dir := l.Cwd
	if statErr == nil {
		if d := workspace.ProjectDirOf(file); d != "" {
			dir = d
		}
	}
	ws, err := workspace.Open(dir, workspace.Options{Warnings: workspace.PrintWarnings(warnings)})
	if err != nil {
		return nil, "", err
	}
	if statErr == nil {
		abs, err := filepath.Abs(file)
		return ws, abs, err
	}
	found, err := ws.Locate(l.Program)
	if err != nil {
		var names []string
		for _, t := range ws.Tools() {
			if id, ok := strings.CutPrefix(t.Name, "plan__"); ok {
				names = append(names, id)
			}
		}
		slices.Sort(names)
		return ws, "", fmt.Errorf("no plan %s: not a file under cwd (%s), and no plan has that identifier%s (plans: %s)", l.Program, l.Cwd, suggest.DidYouMean(l.Program, names), strings.Join(names, ", "))
	}
	abs, err := filepath.Abs(found)
	return ws, abs, err
}

// onConfigurationDone starts the run, the editor's breakpoints set.
func (s *Server) onConfigurationDone(r *godap.ConfigurationDoneRequest) {
	s.mu.Lock()
	var err error
	switch {
	case s.launch == nil:
		err = errors.New("launch a plan before configurationDone")
	case s.started:
		err = errors.New("the run has started already")
	}
	if err != nil {
		s.mu.Unlock()
		s.sendError(r.Seq, r.Command, err)
		return
	}
	s.mu.Unlock()
	resp := &godap.ConfigurationDoneResponse{}
	s.send(reply(&r.Request, resp, &resp.Response))

	s.mu.Lock()
	defer s.mu.Unlock()
	s.begin()
}

// begin starts the prepared run. It is called with mu held.
func (s *Server) begin() {
	s.started = true
	ctx, inputs := s.runCtx, s.launch.Inputs
	if s.launch.NoDebug {
		ws, plan, script := s.ws, s.marks.plan, s.launch.Script
		s.going = true
		go func() {
			res, err := ws.Run(ctx, plan, inputs, workspace.RunOptions{Script: script, Sinks: []engine.Sink{progress{s}}})
			s.mu.Lock()
			defer s.mu.Unlock()
			s.end(debugger.State{Finished: true, Result: res, Err: err})
		}()
		return
	}
	// The plan's own thread is there from the start.
	s.announceThreads(nil)
	s.goOn(func() (debugger.State, error) { return s.session.Start(ctx, inputs), nil })
}

// onRestart runs the launched plan again, with the same inputs and
// breakpoints, from its file as it is now: a plan edited into one with
// problems is refused with them, and the run on show is left as it is.
// The run on show is aborted (and recorded so); the editor is told of
// no end, since the debug session goes on.
func (s *Server) onRestart(ctx context.Context, r *godap.RestartRequest) {
	s.mu.Lock()
	if s.launch == nil {
		s.mu.Unlock()
		s.sendError(r.Seq, r.Command, errors.New("launch a plan before restarting it"))
		return
	}
	doc, err := s.load(s.marks.file)
	if err != nil {
		s.mu.Unlock()
		s.output("stderr", err.Error()+"\n")
		s.sendError(r.Seq, r.Command, err)
		return
	}
	started := s.started
	s.restarting = true
	s.mu.Unlock()
	s.abort()

	s.mu.Lock()
	defer s.mu.Unlock()
	s.restarting = false
	s.started, s.going, s.ended, s.interrupted = false, false, false, false
	s.done = make(chan struct{})
	s.streamed.Store(false)
	s.values.reset()
	s.last = debugger.State{}
	s.runCtx, s.cancelRun = context.WithCancelCause(ctx)
	s.marks.rerun()
	s.called = map[string]planSource{}
	if err := s.newSession(ctx, doc); err != nil {
		s.output("stderr", err.Error()+"\n")
		s.sendError(r.Seq, r.Command, err)
		s.send(&godap.TerminatedEvent{Event: event("terminated")})
		return
	}
	resp := &godap.RestartResponse{}
	s.send(reply(&r.Request, resp, &resp.Response))
	s.output("console", "restarting "+s.ws.DisplayPath(s.marks.file)+"\n")
	if started {
		// Before configurationDone, the run starts there, as launched.
		s.begin()
	}
}

// progress puts the run's progress on the debug console: each top-level
// step as it starts and ends, a deeper one when it fails, and the engine's
// warnings; and the top-level solver's report as it streams, as the
// program's output.
type progress struct{ s *Server }

// Event is called on the engine's goroutines; it only writes, which the
// write lock serializes.
func (p progress) Event(e engine.Event) {
	topLevel := !strings.Contains(e.Path, "/")
	switch e.Kind {
	case engine.EventStepStart:
		if topLevel {
			p.s.output("console", "▶ "+e.Path+"\n")
		}
	case engine.EventStepEnd:
		end, ok := e.Payload.(engine.StepEnded)
		switch {
		case !ok || !topLevel && end.Error == "":
		case end.Reused != "":
			// Said as stepwise fork and replay say it: the step did not
			// run, its result is the record's.
			p.s.output("console", fmt.Sprintf("%s %s reused from run %s\n", format.MarkReused, e.Path, format.ShortID(p.s.rerunOf)))
		case end.Status == engine.StepAborted:
			// Cut short by an abort or the editor's stop, which is no
			// failure of its own.
			p.s.output("console", fmt.Sprintf("■ %s aborted\n", e.Path))
		default:
			line := fmt.Sprintf("■ %s %s", e.Path, end.Status)
			if end.Error != "" {
				line += ": " + end.Error
			}
			p.s.output("console", line+"\n")
		}
	case engine.EventWarning:
		if w, ok := e.Payload.(engine.Warning); ok {
			p.s.output("console", "warning: "+w.Message+"\n")
		}
	case engine.EventModelDelta:
		d, ok := e.Payload.(chat.Delta)
		if !ok || e.Path != "solver" {
			return
		}
		if d.Reset {
			p.s.output("console", "\nwarning: "+debugger.AbandonedAnswer(d)+"\n")
			return
		}
		p.s.streamed.Store(true)
		p.s.output("stdout", d.Text)
	}
}
