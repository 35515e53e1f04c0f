package dap

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	godap "github.com/google/go-dap"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/engine"
	paths "github.com/stepwise-dev/stepwise/engine/path"
	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/plans/suggest"
	"github.com/stepwise-dev/stepwise/plans/template"
)

// The exception filters an editor offers as checkboxes.
const (
	filterError = "error"
	filterAsk   = "ask"
)

// functionSet is the key of the editor's function breakpoints among its
// sets; a source's set is keyed by its file.
const functionSet = ""

// editorMarks are the breakpoints the editor set, in the plan's table
// beside the kept ones but never kept in its file (transient), so that an
// editor that dies leaves none behind: DAP replaces a whole set (a file's
// lines, or the function breakpoints) on every request, so each set
// remembers the specs it added, and only those are cleared when the editor
// replaces it. A breakpoint the editor sets that the table has already (a
// kept one) stays the table's. Marks go by spec, as the table may number a
// transient breakpoint anew when another writer keeps one under its id.
type editorMarks struct {
	plan      *plans.Plan
	file      string // the launched plan's, absolute
	sets      map[string][]string
	functions map[string]bool

	// ruleMu guards rules and logs, which the run's goroutines read at
	// its stops (Server.breakpointRule) while the editor changes them.
	ruleMu sync.Mutex
	// rules are the hit conditions of the editor's breakpoints, by spec;
	// the adapter applies them, counting the stops each breakpoint made.
	rules map[string]hitRule
	// logs are the messages of the editor's logpoints, by spec: templates
	// rendered at the stop and printed, the run going on.
	logs map[string]string
}

func newEditorMarks() *editorMarks {
	return &editorMarks{sets: map[string][]string{}, rules: map[string]hitRule{}, logs: map[string]string{}, functions: map[string]bool{}}
}

// replace clears the set's breakpoints the editor added before.
func (m *editorMarks) replace(table *debugger.Breakpoints, set string) {
	m.ruleMu.Lock()
	defer m.ruleMu.Unlock()
	for _, b := range table.List() {
		if b.Transient && slices.Contains(m.sets[set], b.Spec()) {
			_ = table.Clear(b.ID)
		}
	}
	for _, spec := range m.sets[set] {
		delete(m.rules, spec)
		delete(m.logs, spec)
		delete(m.functions, spec)
	}
	delete(m.sets, set)
}

// add sets a breakpoint for the set and returns it, and whether it is
// the set's: the set's to clear, and to give a hit condition and a log
// message, only when the table did not have it already.
func (m *editorMarks) add(table *debugger.Breakpoints, set, pattern string, kinds []engine.StopKind, cond *debugger.Condition) (debugger.Breakpoint, bool, error) {
	b, err := table.SetTransient(pattern, kinds, cond)
	if err != nil || !b.Transient || m.owns(b) {
		return b, false, err
	}
	m.sets[set] = append(m.sets[set], b.Spec())
	return b, true, nil
}

// forget clears every breakpoint the editor set, as the session ends: they
// are the editor's, which sends them again next session.
func (m *editorMarks) forget(table *debugger.Breakpoints) {
	if table == nil {
		return
	}
	for set := range m.sets {
		m.replace(table, set)
	}
}

// hit counts a stop made by breakpoint b and reports whether its hit
// condition (none: always) is met, and the message it logs there when
// it is a logpoint.
func (m *editorMarks) hit(b debugger.Breakpoint) (met bool, log string) {
	m.ruleMu.Lock()
	defer m.ruleMu.Unlock()
	spec := b.Spec()
	log = m.logs[spec]
	r, ok := m.rules[spec]
	if !ok {
		return true, log
	}
	r.count++
	m.rules[spec] = r
	return r.met(), log
}

// rerun starts the hit counts again, for a restarted run.
func (m *editorMarks) rerun() {
	m.ruleMu.Lock()
	defer m.ruleMu.Unlock()
	for spec, r := range m.rules {
		r.count = 0
		m.rules[spec] = r
	}
}

// breakpointRule is the session's say on a stop one of the editor's
// breakpoints makes: one whose hit condition is not met passes by, and a
// logpoint prints its message on the debug console and passes by; the
// run goes on as it went (a step in progress still stops where it
// would).
func (s *Server) breakpointRule(b debugger.Breakpoint, at *debugger.Snapshot) bool {
	met, log := s.marks.hit(b)
	if !met {
		return false
	}
	if log == "" {
		return true
	}
	text, err := at.Render(log)
	if err != nil {
		text = fmt.Sprintf("logpoint %d at %s: %v", b.ID, at.Path, err)
	}
	s.output("console", text+"\n")
	return false
}

func (m *editorMarks) isFunction(b debugger.Breakpoint) bool { return m.functions[b.Spec()] }

// owns reports whether breakpoint b is one the editor set.
func (m *editorMarks) owns(b debugger.Breakpoint) bool {
	if !b.Transient {
		return false
	}
	for _, specs := range m.sets {
		if slices.Contains(specs, b.Spec()) {
			return true
		}
	}
	return false
}

// hitRule is a DAP hit condition: N (the Nth stop), >= N (from the Nth on)
// or % N (every Nth).
type hitRule struct {
	op    string
	n     int
	count int
}

func parseHitCondition(text string) (hitRule, error) {
	text = strings.TrimSpace(text)
	r := hitRule{op: "=="}
	for _, op := range []string{">=", "%", "=="} {
		if rest, ok := strings.CutPrefix(text, op); ok {
			r.op, text = op, strings.TrimSpace(rest)
			break
		}
	}
	n, err := strconv.Atoi(text)
	if err != nil || n < 1 {
		return r, fmt.Errorf("hit condition '%s': write N (the Nth hit), >= N (from the Nth on) or %% N (every Nth), N a whole number from 1", text)
	}
	r.n = n
	return r, nil
}

func (r hitRule) met() bool {
	switch r.op {
	case ">=":
		return r.count >= r.n
	case "%":
		return r.count%r.n == 0
	}
	return r.count == r.n
}

func (s *Server) onSetBreakpoints(r *godap.SetBreakpointsRequest) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.table == nil {
		s.sendError(r.Seq, r.Command, errors.New("launch a plan (not noDebug) before setting breakpoints"))
		return
	}
	src := r.Arguments.Source
	file, err := filepath.Abs(src.Path)
	if err != nil || src.Path == "" {
		s.sendError(r.Seq, r.Command, fmt.Errorf("setBreakpoints: the source has no file path (%q); breakpoints go on a plan file's lines", src.Path))
		return
	}
	s.marks.replace(s.table, file)
	plan, prefix, why := s.planOf(file)
	var lines stepLines
	if plan != nil {
		lines = planLines(plan)
	}
	length := fileLines(file)
	out := make([]godap.Breakpoint, len(r.Arguments.Breakpoints))
	lineOfID := map[int]int{}
	for i, sb := range r.Arguments.Breakpoints {
		out[i] = godap.Breakpoint{Source: &src, Line: sb.Line}
		if why != "" {
			out[i].Message = why
			continue
		}
		if sb.Line > length {
			out[i].Message = fmt.Sprintf("line %d is past the end of %s (%d lines)", sb.Line, s.ws.DisplayPath(file), length)
			continue
		}
		target, ok := lines.at(sb.Line)
		if !ok {
			out[i].Message = fmt.Sprintf("no step at or after line %d; put the breakpoint on a step's lines", sb.Line)
			continue
		}
		if kept, ok := s.keptAt(file, sb); ok {
			// The editor shows a kept breakpoint on its step's line and
			// sends it back as one of its own: it is the kept one.
			out[i] = kept
			continue
		}
		b, err := s.setEditor(plan, file, prefix+target.pattern, []engine.StopKind{engine.StopStep}, sb.Condition, sb.HitCondition, sb.LogMessage)
		if err != nil {
			out[i].Message = err.Error()
			continue
		}
		out[i] = s.dapBreakpoint(b, &src, target.line)
		if first, ok := lineOfID[b.ID]; ok {
			// An editor takes one id for one breakpoint of its own.
			out[i] = godap.Breakpoint{Source: &src, Line: sb.Line, Message: fmt.Sprintf("line %d is in the step of line %d, whose breakpoint stops there already", sb.Line, first)}
			continue
		}
		lineOfID[b.ID] = sb.Line
	}
	resp := &godap.SetBreakpointsResponse{Body: godap.SetBreakpointsResponseBody{Breakpoints: out}}
	s.send(reply(&r.Request, resp, &resp.Response))
}

// keptAt is the kept breakpoint the editor was told of on the line of
// file that sb names, as the editor sends it back: with no condition, hit
// condition or log message of its own.
func (s *Server) keptAt(file string, sb godap.SourceBreakpoint) (godap.Breakpoint, bool) {
	if file != s.marks.file || sb.Condition != "" || sb.HitCondition != "" || sb.LogMessage != "" {
		return godap.Breakpoint{}, false
	}
	for _, id := range slices.Sorted(maps.Keys(s.announced)) {
		if kept := s.keptBreakpoint(s.announced[id]); kept.Line == sb.Line && kept.Source != nil {
			return kept, true
		}
	}
	return godap.Breakpoint{}, false
}

// planOf is the plan of a file breakpoints are set in, and the prefix its
// steps' patterns take: none for the launched plan, and for another plan
// of the project "**/<identifier>/", which stops in every call of it. why
// says why no line of the file can take a breakpoint.
func (s *Server) planOf(file string) (*plans.Plan, string, string) {
	if file == s.marks.file {
		return s.marks.plan, "", ""
	}
	doc, err := s.ws.Load(file)
	if err != nil || doc.Plan == nil || doc.Plan.Identifier.Value == "" {
		return nil, "", fmt.Sprintf("%s is not a plan this run can call: breakpoints go in the launched plan (%s) or a plan it calls", s.ws.DisplayPath(file), s.ws.DisplayPath(s.marks.file))
	}
	return doc.Plan, "**/" + doc.Plan.Identifier.Value + "/", ""
}

// fileLines counts the lines of file; 0 when it cannot be read.
func fileLines(file string) int {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	return bytes.Count(b, []byte("\n")) + 1
}

// setEditor sets one of the editor's breakpoints with its DAP condition
// (a gate in the plan's grammar, over plan's steps), hit condition and
// log message (a template; "" for a breakpoint that stops).
func (s *Server) setEditor(plan *plans.Plan, set, pattern string, kinds []engine.StopKind, condition, hitCondition, logMessage string) (debugger.Breakpoint, error) {
	var cond *debugger.Condition
	if strings.TrimSpace(condition) != "" {
		c, err := debugger.ParseCondition(condition)
		if err != nil {
			return debugger.Breakpoint{}, fmt.Errorf("condition: %w", err)
		}
		if err := unknownRoot(plan, c.Value); plan != nil && err != nil {
			return debugger.Breakpoint{}, fmt.Errorf("condition: %w", err)
		}
		cond = c
	}
	var rule *hitRule
	if strings.TrimSpace(hitCondition) != "" {
		r, err := parseHitCondition(hitCondition)
		if err != nil {
			return debugger.Breakpoint{}, err
		}
		rule = &r
	}
	if strings.TrimSpace(logMessage) != "" {
		if _, err := template.Parse(logMessage); err != nil {
			return debugger.Breakpoint{}, fmt.Errorf("log message: %w", err)
		}
	}
	b, own, err := s.marks.add(s.table, set, pattern, kinds, cond)
	if err != nil {
		return b, err
	}
	if !own && (rule != nil || strings.TrimSpace(logMessage) != "") {
		return b, fmt.Errorf("a breakpoint on %s is set already (%s); its hit condition and log message stay as they are: give them on one line of the step", pattern, b.Spec())
	}
	s.marks.ruleMu.Lock()
	defer s.marks.ruleMu.Unlock()
	if rule != nil {
		s.marks.rules[b.Spec()] = *rule
	}
	if strings.TrimSpace(logMessage) != "" {
		s.marks.logs[b.Spec()] = logMessage
	}
	return b, nil
}

// conditionRoots are the roots a condition reads besides the plan's
// steps: the run's inputs, a map's item, index and accumulator, and the
// stop.
var conditionRoots = []string{"input", "item", "index", "accumulator", "stop"}

// unknownRoot refuses a condition that reads a root no stop of plan has,
// which could never be evaluated: it names the root and the nearest one.
func unknownRoot(plan *plans.Plan, value string) error {
	t, err := template.Parse(value)
	if err != nil {
		return err
	}
	known := slices.Clone(conditionRoots)
	plans.WalkSteps(plan, func(st *plans.Step) {
		if st.ID.Value != "" {
			known = append(known, st.ID.Value)
		}
	})
	for ref := range t.Refs {
		if root := ref.Root(); !ref.ItemRead && !ref.LoopVar && !slices.Contains(known, root) {
			return fmt.Errorf("%s reads %s, which is no step of the plan and none of %s, so it could never be evaluated%s", value, root, strings.Join(conditionRoots, ", "), suggest.DidYouMean(root, known))
		}
	}
	return nil
}

// dapBreakpoint is a table breakpoint as the editor shows it: verified
// when a path of the plan can match it, else with the nearest pattern
// that would.
func (s *Server) dapBreakpoint(b debugger.Breakpoint, src *godap.Source, line int) godap.Breakpoint {
	for _, listed := range s.session.Breakpoints() {
		if listed.ID == b.ID {
			b = listed
		}
	}
	out := godap.Breakpoint{Id: b.ID, Verified: b.Unmatched == "", Message: b.Unmatched, Source: src, Line: line}
	if out.Message == "" {
		out.Message = b.Spec()
	}
	return out
}

// keptWatchEvery is how often the kept table's file is read again while a
// session lasts, so that another writer's change applies to the run and
// shows in the editor within about that long.
const keptWatchEvery = time.Second

// watchKept reads the kept table's file again every keptWatchEvery until
// the session ends, announcing what changed.
func (s *Server) watchKept() {
	tick := time.NewTicker(keptWatchEvery)
	defer tick.Stop()
	for {
		select {
		case <-s.quit:
			return
		case <-tick.C:
			s.mu.Lock()
			s.announceKept()
			s.mu.Unlock()
		}
	}
}

// announceKept takes in what another writer changed in the kept table's
// file, and tells the editor of each kept breakpoint that came, changed
// or went since it was last told (the debug console's break, clear,
// cond, enable and disable among them), so that its breakpoint list
// shows the table as it is. The editor's own are its to know. It is
// called with mu held.
func (s *Server) announceKept() {
	if s.table == nil || s.session == nil {
		return
	}
	if err := s.table.Refresh(); err != nil && s.keptErr != err.Error() {
		// Said once, not every second: the table goes on as it was.
		s.keptErr = err.Error()
		s.output("console", "warning: the kept breakpoints could not be read again: "+err.Error()+"\n")
	}
	now := map[int]debugger.Breakpoint{}
	for _, b := range s.session.Breakpoints() {
		if !s.marks.owns(b) {
			now[b.ID] = b
		}
	}
	for _, id := range slices.Sorted(maps.Keys(now)) {
		b := now[id]
		was, told := s.announced[id]
		switch {
		case !told:
			s.sendBreakpointEvent("new", s.keptBreakpoint(b))
		case was.Spec() != b.Spec() || was.Enabled != b.Enabled:
			s.sendBreakpointEvent("changed", s.keptBreakpoint(b))
		}
	}
	for _, id := range slices.Sorted(maps.Keys(s.announced)) {
		if _, ok := now[id]; !ok {
			s.sendBreakpointEvent("removed", godap.Breakpoint{Id: id})
		}
	}
	s.announced = now
}

func (s *Server) sendBreakpointEvent(reason string, b godap.Breakpoint) {
	s.send(&godap.BreakpointEvent{Event: event("breakpoint"), Body: godap.BreakpointEventBody{Reason: reason, Breakpoint: b}})
}

// keptBreakpoint is a kept breakpoint as the editor is told of it, placed
// on the line of the step its pattern names when it names one.
func (s *Server) keptBreakpoint(b debugger.Breakpoint) godap.Breakpoint {
	var src *godap.Source
	line := 0
	if m, ok := planLines(s.marks.plan).of(b.Pattern); ok {
		src = &godap.Source{Name: filepath.Base(s.marks.file), Path: s.marks.file}
		line = m.line
	}
	out := s.dapBreakpoint(b, src, line)
	out.Message = "kept: " + out.Message
	return out
}

func (s *Server) onSetFunctionBreakpoints(r *godap.SetFunctionBreakpointsRequest) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.table == nil {
		s.sendError(r.Seq, r.Command, errors.New("launch a plan (not noDebug) before setting breakpoints"))
		return
	}
	s.marks.replace(s.table, functionSet)
	out := make([]godap.Breakpoint, len(r.Arguments.Breakpoints))
	for i, fb := range r.Arguments.Breakpoints {
		in, err := debugger.ParseCommand("break " + fb.Name)
		if err == nil && in.Condition != nil && fb.Condition != "" {
			err = errors.New("give the condition once: in the name (if VALUE OP TO) or in the condition field")
		}
		if err != nil {
			out[i] = godap.Breakpoint{Message: fmt.Sprintf("%s: %v (a function breakpoint is PATTERN [KIND...], as break takes it)", fb.Name, err)}
			continue
		}
		condition := fb.Condition
		if in.Condition != nil {
			condition = in.Condition.String()
		}
		// A pattern that reaches into called plans (**/...) may read
		// their steps, which the launched plan's do not name.
		plan := s.marks.plan
		if strings.HasPrefix(in.Pattern, "**") {
			plan = nil
		}
		b, err := s.setEditor(plan, functionSet, in.Pattern, in.Kinds, condition, fb.HitCondition, "")
		if err != nil {
			out[i] = godap.Breakpoint{Message: err.Error()}
			continue
		}
		s.marks.functions[b.Spec()] = true
		var src *godap.Source
		m, ok := planLines(s.marks.plan).of(in.Pattern)
		if ok {
			src = &godap.Source{Name: filepath.Base(s.marks.file), Path: s.marks.file}
		}
		out[i] = s.dapBreakpoint(b, src, m.line)
	}
	resp := &godap.SetFunctionBreakpointsResponse{Body: godap.SetFunctionBreakpointsResponseBody{Breakpoints: out}}
	s.send(reply(&r.Request, resp, &resp.Response))
}

func (s *Server) onSetExceptionBreakpoints(r *godap.SetExceptionBreakpointsRequest) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range r.Arguments.Filters {
		if f != filterError && f != filterAsk {
			s.sendError(r.Seq, r.Command, fmt.Errorf("no exception filter '%s': the filters are %s and %s", f, filterError, filterAsk))
			return
		}
	}
	if s.table != nil {
		s.table.BreakOnError(slices.Contains(r.Arguments.Filters, filterError))
	}
	s.askStops = slices.Contains(r.Arguments.Filters, filterAsk)
	out := make([]godap.Breakpoint, len(r.Arguments.Filters))
	for i := range out {
		out[i] = godap.Breakpoint{Verified: true}
	}
	resp := &godap.SetExceptionBreakpointsResponse{Body: godap.SetExceptionBreakpointsResponseBody{Breakpoints: out}}
	s.send(reply(&r.Request, resp, &resp.Response))
}

// stepLines maps a plan file's lines to its steps: each entry is where a
// step (or the solver) starts, or where a part of the file that is no step
// (the input schema, the output) starts, in line order.
type stepLines []lineMark

type lineMark struct {
	line, col int
	// pattern is the step's static path, the breakpoint pattern every run
	// of it matches; "" for a part that is no step.
	pattern string
}

func planLines(p *plans.Plan) stepLines {
	var marks stepLines
	plans.WalkSteps(p, func(st *plans.Step) {
		marks = append(marks, lineMark{line: st.Pos.Line, col: st.Pos.Col, pattern: st.Path})
	})
	if p.Solver != nil {
		marks = append(marks, lineMark{line: p.Solver.Pos.Line, col: p.Solver.Pos.Col, pattern: "solver"})
	}
	if p.InputSchema != nil {
		marks = append(marks, lineMark{line: p.InputSchema.Pos.Line})
	}
	if p.Output != nil {
		marks = append(marks, lineMark{line: p.Output.Pos().Line})
	}
	sort.SliceStable(marks, func(i, j int) bool { return marks[i].line < marks[j].line })
	return marks
}

// at is the step a breakpoint on line stops before: the step whose lines
// hold it, or else the next step after it.
func (ls stepLines) at(line int) (lineMark, bool) {
	i := sort.Search(len(ls), func(i int) bool { return ls[i].line > line })
	if i > 0 && ls[i-1].pattern != "" {
		return ls[i-1], true
	}
	for _, m := range ls[i:] {
		if m.pattern != "" {
			return m, true
		}
	}
	return lineMark{}, false
}

// of is the place of the step a path or pattern names (a run-time path's
// items are the static path's do.*): the innermost step of the plan whose
// path is a prefix of it.
func (ls stepLines) of(p string) (lineMark, bool) {
	segs := strings.Split(paths.Static(p), "/")
	for n := len(segs); n > 0; n-- {
		prefix := strings.Join(segs[:n], "/")
		for _, m := range ls {
			if m.pattern != "" && m.pattern == prefix {
				return m, true
			}
		}
	}
	return lineMark{}, false
}
