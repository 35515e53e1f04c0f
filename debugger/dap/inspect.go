package dap

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	godap "github.com/google/go-dap"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/chat"
	paths "github.com/stepwise-dev/stepwise/engine/path"
	"github.com/stepwise-dev/stepwise/plans"
)

// mainThread is the session's name for the plan's own steps.
const mainThread = "main"

// threadIDs numbers the session's threads (main, map items, tool calls,
// named by path) for DAP, which numbers them; a number is never reused
// within a session, so the editor never confuses an ended thread with a
// new one.
type threadIDs struct {
	ids   map[string]int
	names map[int]string
	live  map[string]bool
}

func (t *threadIDs) id(name string) int {
	if t.ids == nil {
		t.ids, t.names, t.live = map[string]int{}, map[int]string{}, map[string]bool{}
	}
	if id, ok := t.ids[name]; ok {
		return id
	}
	id := len(t.ids) + 1
	t.ids[name], t.names[id] = id, name
	return id
}

func (t *threadIDs) name(id int) (string, bool) {
	n, ok := t.names[id]
	return n, ok
}

// update takes the live threads and returns the ids of those that started
// and ended since the last update.
func (t *threadIDs) update(list []debugger.Thread) (started, exited []int) {
	t.id(mainThread)
	now := map[string]bool{mainThread: true}
	for _, th := range list {
		now[th.ID] = true
	}
	for name := range now {
		if !t.live[name] {
			started = append(started, t.id(name))
		}
	}
	for name := range t.live {
		if !now[name] {
			exited = append(exited, t.id(name))
		}
	}
	t.live = now
	slices.Sort(started)
	slices.Sort(exited)
	return started, exited
}

func (s *Server) onThreads(r *godap.ThreadsRequest) {
	s.mu.Lock()
	list := []godap.Thread{{Id: s.threads.id(mainThread), Name: mainThread}}
	if s.session != nil && s.started && !s.ended {
		for _, th := range s.session.Threads() {
			if th.ID == mainThread {
				continue
			}
			list = append(list, godap.Thread{Id: s.threads.id(th.ID), Name: th.ID})
		}
	}
	s.mu.Unlock()
	resp := &godap.ThreadsResponse{Body: godap.ThreadsResponseBody{Threads: list}}
	s.send(reply(&r.Request, resp, &resp.Response))
}

// frameID numbers a frame by its thread and its depth, so that scopes can
// tell the current stop's frames from another held thread's.
func frameID(thread, depth int) int { return thread<<16 | depth }

func (s *Server) onStackTrace(r *godap.StackTraceRequest) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.held(); err != nil {
		s.sendError(r.Seq, r.Command, err)
		return
	}
	name, _ := s.threads.name(r.Arguments.ThreadId)
	var frames []engine.Frame
	if snap := s.last.Stop; name == snap.Thread {
		// Innermost first, as editors list frames: frame 0 is the stop's.
		frames = slices.Clone(snap.Stack)
		if first, _, _ := strings.Cut(snap.Path, "/"); first == "solver" && !slices.ContainsFunc(frames, func(f engine.Frame) bool { return f.Path == "solver" }) {
			// The solver is no step, so the stack has no frame of its
			// own for it: it is one, at its line.
			frames = append(frames, engine.Frame{Path: "solver"})
		}
		slices.Reverse(frames)
	} else {
		// Another thread shows where it is held; selecting it in the
		// editor and stepping makes it current.
		for _, th := range s.session.Threads() {
			if th.ID == name {
				frames = []engine.Frame{{Path: th.Path, Tool: th.Tool}}
			}
		}
	}
	total := len(frames)
	start := min(r.Arguments.StartFrame, total)
	end := total
	if r.Arguments.Levels > 0 {
		end = min(start+r.Arguments.Levels, total)
	}
	// Each frame is in the plan whose call encloses it: from the outermost
	// in, a plan__ call's frame is the caller's step, and the frames inside
	// it are the called plan's steps, in its own file.
	in := make([]planSource, total)
	cur := planSource{plan: s.marks.plan, file: s.marks.file}
	for i := total - 1; i >= 0; i-- {
		in[i] = cur
		// The run's own frame is a plan frame too, with no path.
		if frames[i].Kind == paths.KindPlan && frames[i].Path != "" {
			if called, ok := s.calledPlan(frames[i].Tool); ok {
				called.prefix = frames[i].Path + "/"
				cur = called
			}
		}
	}
	out := make([]godap.StackFrame, 0, end-start)
	for i := start; i < end; i++ {
		f, ps := frames[i], in[i]
		sf := godap.StackFrame{Id: frameID(r.Arguments.ThreadId, i), Name: frameName(f),
			Source: &godap.Source{Name: filepath.Base(ps.file), Path: ps.file}}
		if m, ok := planLines(ps.plan).of(strings.TrimPrefix(f.Path, ps.prefix)); ok {
			sf.Line, sf.Column = m.line, m.col
		} else {
			sf.Line, sf.Column = ps.plan.Pos.Line, ps.plan.Pos.Col
		}
		sf.Column = max(sf.Column, 1)
		out = append(out, sf)
	}
	resp := &godap.StackTraceResponse{Body: godap.StackTraceResponseBody{StackFrames: out, TotalFrames: total}}
	s.send(reply(&r.Request, resp, &resp.Response))
}

// planSource is a plan as frames point into it: its file, and the prefix
// its steps' paths take in the run ("" for the launched plan, the calling
// step's path and the plan's name for a called one).
type planSource struct {
	plan   *plans.Plan
	file   string
	prefix string
}

// calledPlan is the plan a plan__ call runs, by its identifier, read from
// its file once a session; false when the project has no such plan (the
// frames inside it then point at the caller).
func (s *Server) calledPlan(identifier string) (planSource, bool) {
	if ps, ok := s.called[identifier]; ok {
		return ps, ps.plan != nil
	}
	var ps planSource
	if file, err := s.ws.Locate(identifier); err == nil {
		if doc, err := s.ws.Load(file); err == nil && doc.Plan != nil {
			ps = planSource{plan: doc.Plan, file: file}
			if abs, err := filepath.Abs(file); err == nil {
				ps.file = abs
			}
		}
	}
	s.called[identifier] = ps
	return ps, ps.plan != nil
}

// frameName is a frame as the editor lists it: its path (the run's own
// frame is the plan's identifier), its kind and its tool.
func frameName(f engine.Frame) string {
	name := f.Path
	if name == "" {
		name = "plan"
	}
	if f.Kind != 0 {
		name += " (" + f.Kind.String() + ")"
	}
	if f.Tool != "" {
		name += " " + f.Tool
	}
	return name
}

func (s *Server) onScopes(r *godap.ScopesRequest) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.held(); err != nil {
		s.sendError(r.Seq, r.Command, err)
		return
	}
	var scopes []godap.Scope
	if r.Arguments.FrameId>>16 == s.threads.id(s.last.Stop.Thread) {
		for _, part := range s.scopeParts() {
			if part.value == nil {
				continue
			}
			ref, named, indexed := s.values.addScope(part.value, part.name, part.evalRoot)
			scopes = append(scopes, godap.Scope{Name: part.name, VariablesReference: ref, NamedVariables: named, IndexedVariables: indexed, Expensive: false})
		}
	}
	resp := &godap.ScopesResponse{Body: godap.ScopesResponseBody{Scopes: scopes}}
	s.send(reply(&r.Request, resp, &resp.Response))
}

// scopePart is one of a stop's scopes: its name, its value (nil: the stop
// has none) and the template path its values are read at.
type scopePart struct {
	name     string
	value    any
	evalRoot string
}

// scopeParts are the scopes of the current stop, in the order the editor
// lists them. It is called with mu held.
func (s *Server) scopeParts() []scopePart {
	snap := s.last.Stop
	stop, _ := snap.Eval("stop")
	if m, ok := stop.(map[string]any); ok {
		// The stop's input and output are scopes of their own.
		delete(m, "input")
		delete(m, "output")
		m["thread"] = snap.Thread
		m["reason"] = string(s.last.Reason)
		if snap.Error != "" {
			m["error"] = snap.Error
		}
		if snap.Ask != nil {
			m["ask"] = snap.Ask.Prompt
		}
		if answer, ok := s.recordedAnswer(snap); ok {
			m["recorded_answer"] = answer
		}
	}
	return []scopePart{{"Stop", stop, "stop"}, {"Model", modelValues(snap), inputPath}, {"Input", snap.Input, inputPath}, {"Scope", scopeValues(snap), "."}, {"Result", snap.Output, outputPath}}
}

// reread reads every value the editor holds a reference to again from the
// stop as it is now, after a set changed it: the references stay valid,
// as the run is at the same stop, and show what the next movement uses.
// It is called with mu held.
func (s *Server) reread() {
	parts := s.scopeParts()
	s.values.reread(func(n node) any {
		if n.scope != "" {
			for _, p := range parts {
				if p.name == n.scope {
					return p.value
				}
			}
			return nil
		}
		v, err := s.last.Stop.Eval(n.path)
		if err != nil {
			return nil
		}
		return v
	})
}

// modelValues is what a round's model call is made of, at its round and
// reply stops: the request's messages, the tools offered (and whether
// the model may call them), and the reply once it came (or the value set
// in its place); nil at every other stop.
func modelValues(snap *debugger.Snapshot) any {
	req, ok := snap.Input.(chat.Request)
	if !ok || (snap.Kind != engine.StopRound && snap.Kind != engine.StopReply) {
		return nil
	}
	m := map[string]any{"role": req.Role, "messages": req.Messages, "tools": []any{}}
	if len(req.Tools) > 0 {
		m["tools"] = req.Tools
	}
	if req.ToolChoice != "" {
		m["tool_choice"] = req.ToolChoice
	}
	if snap.Output != nil {
		m["reply"] = snap.Output
	}
	return m
}

// scopeValues is what the stop's templates can read, as one object.
func scopeValues(snap *debugger.Snapshot) any {
	if len(snap.Scope) == 0 {
		return nil
	}
	return snap.Scope
}

func (s *Server) onVariables(r *godap.VariablesRequest) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.values.get(r.Arguments.VariablesReference); !ok {
		s.sendError(r.Seq, r.Command, fmt.Errorf("no variables %d: the run has moved on since; they are read at the stop", r.Arguments.VariablesReference))
		return
	}
	vars := s.values.children(r.Arguments.VariablesReference, r.Arguments.Filter, r.Arguments.Start, r.Arguments.Count)
	resp := &godap.VariablesResponse{Body: godap.VariablesResponseBody{Variables: vars}}
	s.send(reply(&r.Request, resp, &resp.Response))
}

func (s *Server) onEvaluate(r *godap.EvaluateRequest) {
	s.mu.Lock()
	defer s.mu.Unlock()
	expr := strings.TrimSpace(r.Arguments.Expression)
	if r.Arguments.Context == "repl" {
		in, err := debugger.ParseCommand(expr)
		if err == nil {
			s.evaluateCommand(r, in)
			return
		}
		// A line whose first word is a command, or that goes on after an
		// unknown first word, was meant as a command: its error says
		// what is wrong with it. The rest is a template to evaluate.
		word, rest, _ := strings.Cut(expr, " ")
		if isVerb(word) || strings.TrimSpace(rest) != "" && !strings.HasPrefix(expr, "{{") {
			s.refuseCommand(r, err)
			return
		}
	}
	if err := s.held(); err != nil {
		s.sendError(r.Seq, r.Command, err)
		return
	}
	value, err := s.last.Stop.Eval(strings.TrimSuffix(strings.TrimPrefix(expr, "{{"), "}}"))
	if err != nil {
		s.sendError(r.Seq, r.Command, err)
		return
	}
	s.sendValue(r, value, expr)
}

// sendValue answers an evaluate with a value, expandable when it holds
// others.
func (s *Server) sendValue(r *godap.EvaluateRequest, value any, evalPath string) {
	ref, named, indexed := s.values.add(value, evalPath)
	resp := &godap.EvaluateResponse{Body: godap.EvaluateResponseBody{Result: summarize(value), Type: typeOf(value),
		VariablesReference: ref, NamedVariables: named, IndexedVariables: indexed}}
	s.send(reply(&r.Request, resp, &resp.Response))
}

// workbenchOnly are the verbs of the command language only the workbench
// carries out: they open screens an editor has its own ways to show.
var workbenchOnly = []debugger.Verb{debugger.VerbRun, debugger.VerbDebug, debugger.VerbGate, debugger.VerbGoto,
	debugger.VerbOpen, debugger.VerbFork, debugger.VerbDiff, debugger.VerbTools, debugger.VerbRuns, debugger.VerbNew}

// evaluateCommand carries out a `stepwise debug` command typed in the
// debug console. A command that moves the run (a movement, or a decision
// that goes on as next does) is answered at once; where it took the run
// comes as a stopped event, and a refusal as an error on the console with
// the stop shown again.
func (s *Server) evaluateCommand(r *godap.EvaluateRequest, in debugger.Instruction) {
	if slices.Contains(workbenchOnly, in.Verb) {
		s.refuseCommand(r, fmt.Errorf("%s is a workbench command; the debug console takes the commands of stepwise debug", in.Verb))
		return
	}
	if in.Verb == debugger.VerbHelp {
		s.sendText(r, consoleHelp(in.Topic))
		return
	}
	if in.Verb == debugger.VerbQuit {
		in = debugger.Instruction{Verb: debugger.VerbAbort}
	}
	if s.session == nil || !s.started {
		s.refuseCommand(r, errors.New("no run is being debugged yet: launch one, and the console takes commands at its stops"))
		return
	}
	if in.Verb == debugger.VerbPause {
		if err := s.session.Pause(); err != nil {
			s.refuseCommand(r, err)
			return
		}
		s.sendText(r, "pausing at the next stop")
		return
	}
	if cmd, moves := in.Command(); moves {
		err := s.held()
		if err == nil {
			// Refused before the run moves, so that the editor, told it
			// goes on, never waits on a run held where it was.
			err = s.session.Check(cmd)
		}
		if err != nil {
			s.refuseCommand(r, err)
			return
		}
		s.sendText(r, "")
		s.goOn(func() (debugger.State, error) {
			a, err := s.session.Exec(in)
			if err != nil {
				return debugger.State{}, err
			}
			return *a.State, nil
		})
		return
	}
	a, err := s.session.Exec(in)
	if err != nil {
		s.refuseCommand(r, err)
		return
	}
	for _, w := range a.Warnings {
		s.output("console", "warning: "+w+"\n")
	}
	s.announceKept()
	switch {
	case in.Verb == debugger.VerbPrint:
		s.sendValue(r, a.Value, a.Path)
	case a.State != nil:
		// thread and where answer with the stop they came to; the
		// editor is told of a stop only when it is another one (a
		// thread command's).
		moved := s.last.Stop == nil || a.State.Stop.Thread != s.last.Stop.Thread || a.State.Stop.Path != s.last.Stop.Path || a.State.Stop.Kind != s.last.Stop.Kind
		s.sendText(r, fmt.Sprintf("%s at %s (%s)", a.State.Reason, a.State.Stop.Path, a.State.Stop.Kind))
		if moved {
			s.last = *a.State
			s.values.reset()
			s.stopped(*a.State)
		}
	default:
		s.sendText(r, answerText(in, a))
	}
}

// consoleHelp lists the commands the debug console takes, one a line, or
// explains topic.
func consoleHelp(topic debugger.Verb) string {
	var b strings.Builder
	for _, syn := range debugger.Grammar() {
		if slices.Contains(workbenchOnly, syn.Verb) || topic != "" && syn.Verb != topic {
			continue
		}
		fmt.Fprintf(&b, "%s  %s\n", syn.Usage(), syn.Does)
	}
	return b.String()
}

// answerText is what a command that neither moves nor reads one value
// answered, in one line of JSON: its answer's fields that say something.
func answerText(in debugger.Instruction, a debugger.Answer) string {
	out := map[string]any{}
	switch {
	case a.Breakpoint != nil:
		out["breakpoint"] = a.Breakpoint
	case in.Verb == debugger.VerbBreakpoints:
		out["breakpoints"] = a.Breakpoints
	case in.Verb == debugger.VerbErrors:
		out["break_on_error"] = a.BreakOnError
	case in.Verb == debugger.VerbStack:
		out["stack"] = a.Stack
	case in.Verb == debugger.VerbThreads:
		out["threads"] = a.Threads
	case a.Watch != nil:
		out["watch"] = a.Watch
	case in.Verb == debugger.VerbWatches:
		out["watches"] = a.Watches
	default:
		out["ok"] = true
	}
	b, _ := json.Marshal(out)
	return string(b)
}

// refuseCommand answers a debug console command with why it was refused,
// as an error response and on the console, where the user typed it.
func (s *Server) refuseCommand(r *godap.EvaluateRequest, err error) {
	s.output("stderr", "error: "+err.Error()+"\n")
	s.sendError(r.Seq, r.Command, err)
}

// isVerb reports whether word is a command of the debug console, or one
// of its aliases.
func isVerb(word string) bool {
	for _, syn := range debugger.Grammar() {
		if string(syn.Verb) == word || slices.Contains(syn.Aliases, word) {
			return true
		}
	}
	return false
}

func (s *Server) sendText(r *godap.EvaluateRequest, text string) {
	resp := &godap.EvaluateResponse{Body: godap.EvaluateResponseBody{Result: text}}
	s.send(reply(&r.Request, resp, &resp.Response))
}

// handles are the variablesReferences of one stop: each names a value
// that holds others, with the template path it is read at (for the
// editor's "copy as expression" and watches). They are dropped when the
// run moves on, and read again when a set changes the stop's values.
type handles struct {
	nodes []node
}

type node struct {
	value any
	// path is the template path of value, "" when it has none; "." for the
	// scope itself, whose children are its roots.
	path string
	// Where value is read again from: the child key of the node parent
	// (its reference), else the stop's scope named scope, else path.
	parent int
	key    string
	scope  string
}

func (h *handles) reset() { h.nodes = h.nodes[:0] }

// add registers value, read at template path p, and returns its
// reference (0 for a value that holds nothing) and how many children it
// has, named and indexed.
func (h *handles) add(value any, p string) (ref, named, indexed int) {
	return h.addNode(node{value: value, path: p})
}

// addScope registers a stop's scope, read again by its name.
func (h *handles) addScope(value any, scope, p string) (ref, named, indexed int) {
	return h.addNode(node{value: value, path: p, scope: scope})
}

func (h *handles) addNode(n node) (ref, named, indexed int) {
	n.value = plain(n.value)
	switch v := n.value.(type) {
	case map[string]any:
		named = len(v)
	case []any:
		indexed = len(v)
	default:
		return 0, 0, 0
	}
	h.nodes = append(h.nodes, n)
	return len(h.nodes), named, indexed
}

func (h *handles) get(ref int) (node, bool) {
	if ref < 1 || ref > len(h.nodes) {
		return node{}, false
	}
	return h.nodes[ref-1], true
}

// reread reads every node's value again: a child from its parent's (read
// before it, as a parent is registered first), a root by root.
func (h *handles) reread(root func(node) any) {
	for i, n := range h.nodes {
		if n.parent > 0 {
			n.value = childOf(h.nodes[n.parent-1].value, n.key)
		} else {
			n.value = plain(root(n))
		}
		h.nodes[i] = n
	}
}

// childOf is the child of a JSON value at an object key or array index;
// nil when it has none.
func childOf(v any, key string) any {
	switch c := v.(type) {
	case map[string]any:
		return plain(c[key])
	case []any:
		if i, err := strconv.Atoi(key); err == nil && i >= 0 && i < len(c) {
			return plain(c[i])
		}
	}
	return nil
}

// children lists a value's children: an object's keys in order, or the
// page of an array's items start..start+count (count 0: to the end), as
// editors page large arrays.
func (h *handles) children(ref int, filter string, start, count int) []godap.Variable {
	n, _ := h.get(ref)
	switch v := n.value.(type) {
	case map[string]any:
		if filter == "indexed" {
			return []godap.Variable{}
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := make([]godap.Variable, len(keys))
		for i, k := range keys {
			p := childPath(n.path, k)
			if n.scope == "Model" && k == "reply" {
				// The Model scope is the request (stop.input) with the
				// reply (stop.output) beside it.
				p = outputPath
			}
			out[i] = h.variable(ref, k, v[k], p)
		}
		return out
	case []any:
		if filter == "named" {
			return []godap.Variable{}
		}
		start = min(max(start, 0), len(v))
		end := len(v)
		if count > 0 {
			end = min(start+count, end)
		}
		out := make([]godap.Variable, 0, end-start)
		for i := start; i < end; i++ {
			idx := indexName(i)
			out = append(out, h.variable(ref, idx, v[i], childPath(n.path, idx)))
		}
		return out
	}
	return []godap.Variable{}
}

func (h *handles) variable(parent int, name string, value any, path string) godap.Variable {
	value = plain(value)
	ref, named, indexed := h.addNode(node{value: value, path: path, parent: parent, key: name})
	return godap.Variable{Name: name, Value: summarize(value), Type: typeOf(value), EvaluateName: path,
		VariablesReference: ref, NamedVariables: named, IndexedVariables: indexed}
}

// childPath is the template path of a child: template paths join keys and
// indices with dots (E0.issues.3.id).
func childPath(parent, key string) string {
	switch parent {
	case "":
		return ""
	case ".":
		return key
	}
	return parent + "." + key
}

// plain is value as JSON data (maps, slices, scalars): a stop's values are
// that already, but for a typed value the engine hands over.
func plain(value any) any {
	switch value.(type) {
	case nil, map[string]any, []any, string, bool, float64, int, int64, json.Number:
		return value
	}
	b, err := json.Marshal(value)
	if err != nil {
		return fmt.Sprint(value)
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return string(b)
	}
	return out
}

// indexNames and objectSummaries are made once: a page of a large array
// names each item by its index and summarizes each object by its size,
// and making those strings anew was a third of a page's time.
var (
	indexNames      = numbered(1024, "", "")
	objectSummaries = numbered(64, "{…} ", " keys")
)

// numbered lists prefix+N+suffix for N from 0 to n-1.
func numbered(n int, prefix, suffix string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = prefix + strconv.Itoa(i) + suffix
	}
	return out
}

// indexName is an array item's name, its index.
func indexName(i int) string {
	if i < len(indexNames) {
		return indexNames[i]
	}
	return strconv.Itoa(i)
}

// summarize is a value in one short line: a scalar as JSON, an object or
// an array by its size, which the editor expands.
func summarize(value any) string {
	switch v := plain(value).(type) {
	case map[string]any:
		if len(v) < len(objectSummaries) {
			return objectSummaries[len(v)]
		}
		return "{…} " + strconv.Itoa(len(v)) + " keys"
	case []any:
		return "[…] " + strconv.Itoa(len(v)) + " items"
	default:
		return engine.JSONText(v)
	}
}

func typeOf(value any) string {
	switch plain(value).(type) {
	case nil:
		return "null"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	}
	return "number"
}
