package debugger

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/path"
	"github.com/stepwise-dev/stepwise/engine/tools"
	"github.com/stepwise-dev/stepwise/plans"
)

// ForkSpec says where a fork starts and what it changes.
type ForkSpec struct {
	// From is a path pattern (* within a segment, ** across); the fork
	// starts at the first step of the recorded run, in the order steps
	// started, whose path it matches.
	From string
	// Sets give steps a result of the caller's: the first whose pattern
	// matches a step's path is that step's result, and the step does not
	// run. Each must match a step of the plan.
	Sets []ForkSet
}

// ForkSet is a result the caller gives: the result of the steps Path
// matches.
type ForkSet struct {
	Path  string
	Value any
}

// ForkResult is how a fork went.
type ForkResult struct {
	// Run is the fork's own run, as the engine reports it.
	Run *engine.Result
	// Of is the id of the recorded run.
	Of string
	// From is the recorded step the fork started from.
	From string
	// Reused lists the steps whose recorded results the fork reused, in
	// the order it reached them.
	Reused []string
	// Set lists the steps whose results a ForkSet gave, in the order the
	// fork reached them.
	Set []string
	// Unreached lists the ForkSet paths that matched no step the fork
	// reached (a branch not taken, a step after a failure).
	Unreached []string
}

// ForkSpecError is a fork that cannot start: From names no step of the
// record, or a set names no step of the plan. A front end says which of
// its own inputs that was (the command line's --from and --set).
type ForkSpecError struct {
	// Set is false for the spec's From, true for one of its Sets.
	Set bool
	// Pattern is the path pattern that does not fit.
	Pattern string
	Reason  string
}

func (e *ForkSpecError) Error() string {
	what := "the fork's start"
	if e.Set {
		what = "the result set at"
	}
	return strings.TrimSpace(what+" "+e.Pattern) + ": " + e.Reason
}

// Fork runs plan p again from a step of a recorded run: the steps that had
// finished before that step started reuse their recorded results (they do
// not run), it and everything after run live on opts's parts, and the
// steps spec.Sets names get the results given there instead. The inputs
// are the recorded run's.
//
// A recorded step is reused only where the plan still calls the same tool
// there; its input is not compared, so a fork from E3 keeps E1's recorded
// result even when E1 has been edited since. Steps that enclose the fork
// point (the map whose item it is, the plan__ step whose plan holds it)
// run live, and so do their gates. A fork from an item of a map or filter,
// or from a step inside one, reuses the recorded steps of the other items
// too, whenever they ran: items do not read one another.
//
// The error is a *ForkSpecError for a spec that does not fit, or the
// engine's when the run could not start.
func Fork(ctx context.Context, rec *Recording, p *plans.Plan, spec ForkSpec, opts engine.Options) (*ForkResult, error) {
	f, opts, err := newForker(rec, p, spec, opts)
	if err != nil {
		return nil, err
	}
	res, err := engine.New(opts).Run(ctx, p, rec.Inputs())
	if err != nil {
		return nil, err
	}
	return f.result(res), nil
}

// DebugFork returns a session that runs the fork Fork would run under the
// debugger, stopping where bps says; start it with rec.Inputs(). A stop
// the session lets go on is the fork's: a reused step takes its recorded
// result there. The session stops at a reused step only where a
// breakpoint asks: its first stop, a pause and a movement land on what
// runs again. forked tells how the fork went, given the run's result
// once the session has ended.
func DebugFork(rec *Recording, p *plans.Plan, spec ForkSpec, opts engine.Options, bps *Breakpoints) (s *Session, forked func(*engine.Result) *ForkResult, err error) {
	f, opts, err := newForker(rec, p, spec, opts)
	if err != nil {
		return nil, nil, err
	}
	s = New(p, opts, bps)
	s.reuses = f.reuses
	return s, f.result, nil
}

// reuses reports whether the fork gives the step of st its recorded
// result, as hook does, a set value aside.
func (f *forker) reuses(st *engine.Stop) bool {
	if st.Kind != engine.StopStep {
		return false
	}
	rs, ok := f.reuse[st.Path]
	return ok && rs.Tool == st.Tool
}

// result is how the fork went, its run having ended with res.
func (f *forker) result(res *engine.Result) *ForkResult {
	out := &ForkResult{Run: res, Of: f.rec.Run.ID, From: f.from}
	f.mu.Lock()
	defer f.mu.Unlock()
	out.Reused, out.Set = slices.Clone(f.reused), slices.Clone(f.set)
	for i, s := range f.sets {
		if !f.hit[i] {
			out.Unreached = append(out.Unreached, s.Path)
		}
	}
	return out
}

// newForker checks spec against the record and the plan, and returns the
// fork's hook and opts with it installed, its run the record's child.
func newForker(rec *Recording, p *plans.Plan, spec ForkSpec, opts engine.Options) (*forker, engine.Options, error) {
	from, err := rec.ForkPoint(spec.From)
	if err != nil {
		return nil, opts, err
	}
	f := &forker{rec: rec, from: from, reuse: rec.reusable(from)}
	f.itemwise = rec.reusedItemwise(f.reuse)
	for _, s := range spec.Sets {
		pat, err := path.Compile(s.Path)
		if err != nil {
			return nil, opts, &ForkSpecError{Set: true, Pattern: s.Path, Reason: err.Error()}
		}
		if !HasStep(p, opts.Catalog, s.Path) {
			return nil, opts, &ForkSpecError{Set: true, Pattern: s.Path, Reason: "the plan has no step there"}
		}
		if why := rec.setMisfit(p, opts.Catalog, s, pat); why != "" {
			return nil, opts, &ForkSpecError{Set: true, Pattern: s.Path, Reason: why}
		}
		f.sets = append(f.sets, compiledSet{ForkSet: s, pattern: pat})
	}
	opts.Hook = engine.Hooks(f.hook, opts.Hook)
	opts.Parent, opts.Made = rec.Run.ID, engine.MadeFork
	return f, opts, nil
}

// setMisfit says why a set's value cannot stand for what the steps it
// names give, "" when it can: it must fit the step's result schema (an
// agent's whole result, a tool's declared output) where one applies, and
// else, for a step, have every field it gave in the record, since the
// steps after it read them.
func (rec *Recording) setMisfit(p *plans.Plan, catalog *tools.Catalog, s ForkSet, pat path.Pattern) string {
	for _, q := range rec.order {
		st := rec.steps[q]
		if !pat.Match(q) || st == nil {
			continue
		}
		if raw := ResultSchema(p, catalog, q); raw != nil {
			compiled, err := plans.CompileSchema(raw)
			if err != nil {
				return ""
			}
			var problems []string
			for _, v := range (&plans.Schema{Raw: raw, Compiled: compiled}).Check(s.Value) {
				problems = append(problems, v.String())
			}
			if len(problems) > 0 {
				return fmt.Sprintf("the value does not fit the result schema of %s: %s", q, strings.Join(problems, "; "))
			}
			return ""
		}
		var gave map[string]any
		if path.KindOf(q) == path.KindItem || json.Unmarshal(st.Result, &gave) != nil || gave == nil {
			// A map item's result is an element of the map's, which no
			// step reads by its fields.
			continue
		}
		set, _ := s.Value.(map[string]any)
		var missing []string
		for _, k := range slices.Sorted(maps.Keys(gave)) {
			if _, ok := set[k]; !ok {
				missing = append(missing, k)
			}
		}
		if len(missing) > 0 {
			return fmt.Sprintf("%s gave an object with %s (run %s's: %s); the value set lacks %s", q, strings.Join(slices.Sorted(maps.Keys(gave)), ", "), rec.Run.ID, string(st.Result), strings.Join(missing, ", "))
		}
		return ""
	}
	return ""
}

// ForkPoint is where a fork from pattern starts (ForkResult.From): the
// first recorded step whose path the pattern matches, or else the first
// map, filter or reduce item it matches (an item whose body is a list of
// steps is no step itself): the fork starts at the item's first step. A
// front end tells it as the fork starts. The error is a *ForkSpecError.
func (rec *Recording) ForkPoint(pattern string) (string, error) {
	if pattern == "" {
		return "", &ForkSpecError{Reason: "give the path of a step of the recorded run"}
	}
	pat, err := path.Compile(pattern)
	if err != nil {
		return "", &ForkSpecError{Pattern: pattern, Reason: err.Error()}
	}
	for _, p := range rec.order {
		if pat.Match(p) {
			return p, nil
		}
	}
	for _, p := range rec.order {
		for q := p; q != ""; q, _, _ = path.Parent(q) {
			if path.KindOf(q) == path.KindItem && pat.Match(q) {
				return q, nil
			}
		}
	}
	var top []string
	for _, p := range rec.order {
		if !strings.Contains(p, "/") {
			top = append(top, p)
		}
	}
	return "", &ForkSpecError{Pattern: pattern, Reason: fmt.Sprintf("no step of run %s matches it; its steps: %s", rec.Run.ID, strings.Join(top, ", "))}
}

// startOf is the sequence number at which the recorded unit at p started:
// its own start for a step, its first step's for an item.
func (rec *Recording) startOf(p string) uint64 {
	if s, ok := rec.steps[p]; ok {
		return s.startSeq
	}
	var first uint64
	for _, q := range rec.order {
		if s := rec.steps[q]; strings.HasPrefix(q, p+"/") && s.startSeq != 0 && (first == 0 || s.startSeq < first) {
			first = s.startSeq
		}
	}
	return first
}

// reusable lists the recorded steps the fork reuses: those that
// ended well before step from started, and every step of the sibling
// items of a map or filter item that holds from (its items do not depend
// on one another, so a sibling's record stands whenever it ran), leaving
// out the steps that enclose from.
func (rec *Recording) reusable(from string) map[string]*recordedStep {
	start := rec.startOf(from)
	siblings := rec.independentItems(from)
	out := map[string]*recordedStep{}
	for _, p := range rec.order {
		s := rec.steps[p]
		// Only a value the step ended with is reused: a failed or aborted
		// step has none, and runs again.
		ok := s.Status == engine.StepOK || s.Status == engine.StepSkipped
		if !ok || s.endSeq == 0 || strings.HasPrefix(from, p+"/") {
			continue
		}
		if s.endSeq < start || slices.ContainsFunc(siblings, func(item string) bool { return siblingOf(item, p) }) {
			out[p] = s
		}
	}
	return out
}

// reusedItemwise lists the reused steps with steps of their own (a map's
// or a reduce's items, a decide's branch, a called plan's steps) that are
// all reused too: such a step runs, over their recorded results, so that
// the fork's record has each inner step, reused, as the recorded run's
// has it, and a diff compares them step by step. Reused whole, its inner
// steps would be no steps of the fork. A decide whose gate asks a model
// is reused whole (forker.runsOver), so that the fork asks none.
func (rec *Recording) reusedItemwise(reuse map[string]*recordedStep) map[string]bool {
	out := map[string]bool{}
	for p, s := range reuse {
		switch {
		case s.Tool == plans.ControlMap, s.Tool == plans.ControlReduce, s.Tool == plans.ControlDecide, strings.HasPrefix(s.Tool, "plan__"):
		default:
			continue
		}
		inner, all := 0, true
		for _, q := range rec.order {
			if strings.HasPrefix(q, p+"/") {
				inner++
				_, reused := reuse[q]
				all = all && reused
			}
		}
		if inner > 0 && all {
			out[p] = true
		}
	}
	return out
}

// independentItems lists the items at or above from whose map or filter
// runs each item on its own: the items of a reduce read the one before
// them, so a reduce's are left out.
func (rec *Recording) independentItems(from string) []string {
	var out []string
	for q := from; q != ""; q, _, _ = path.Parent(q) {
		if path.KindOf(q) != path.KindItem {
			continue
		}
		parent, _, _ := path.Parent(q)
		if s, ok := rec.steps[parent]; ok && (s.Tool == "map" || s.Tool == "filter") {
			out = append(out, q)
		}
	}
	return out
}

// siblingOf reports whether p lies in another item of the body item
// belongs to (E1/do.2/A is a sibling's step of E1/do.3).
func siblingOf(item, p string) bool {
	body, _, _ := path.Parent(item)
	rest, ok := strings.CutPrefix(p, body+"/")
	if !ok {
		return false
	}
	seg, _, _ := strings.Cut(rest, "/")
	return path.KindOf(body+"/"+seg) == path.KindItem && body+"/"+seg != item
}

type compiledSet struct {
	ForkSet
	pattern path.Pattern
}

// forker is the hook of one fork.
type forker struct {
	rec   *Recording
	from  string
	reuse map[string]*recordedStep
	// itemwise are the reused steps that run over their inner steps'
	// recorded results (Recording.reusedItemwise).
	itemwise map[string]bool
	sets     []compiledSet

	mu     sync.Mutex
	hit    map[int]bool
	reused []string
	set    []string
}

// hook skips a step with a set value or its recorded result, and lets
// every other stop run live.
func (f *forker) hook(ctx context.Context, st *engine.Stop) engine.Decision {
	if st.Kind != engine.StopStep {
		return engine.Decision{}
	}
	for i, s := range f.sets {
		if s.pattern.Match(st.Path) {
			f.mu.Lock()
			if f.hit == nil {
				f.hit = map[int]bool{}
			}
			f.hit[i] = true
			f.set = append(f.set, st.Path)
			f.mu.Unlock()
			return engine.Decision{Action: engine.Inject, Value: s.Value, Origin: engine.BySet}
		}
	}
	rs, ok := f.reuse[st.Path]
	if !ok || rs.Tool != st.Tool || f.runsOver(st) {
		return engine.Decision{}
	}
	result, err := recordedValue(rs.Result)
	if err != nil {
		return engine.Decision{}
	}
	if m, isMap := result.(map[string]any); st.Step == nil && isMap {
		// A solver finish (a called plan's, whose caller runs over its
		// steps) is recorded as {"answer": text} and takes its text.
		if text, ok := m["answer"].(string); ok {
			result = text
		}
	}
	f.mu.Lock()
	f.reused = append(f.reused, st.Path)
	f.mu.Unlock()
	return engine.Decision{Action: engine.Inject, Value: result, Origin: engine.FromFork}
}

// runsOver reports whether the reused step at st runs over the recorded
// results of its inner steps (Recording.reusedItemwise) rather than take
// its own: not a decide whose gate would ask a model again.
func (f *forker) runsOver(st *engine.Stop) bool {
	if !f.itemwise[st.Path] {
		return false
	}
	d, isDecide := st.Step.Control.(*plans.DecideInput)
	return !isDecide || d.Infer == nil
}

// HasStep reports whether pattern names a step of plan p, or of a plan it
// calls through plan__ steps (found in catalog), or its solver. A run-time
// path (E2/do.3/E20) names the body step its static path (E2/do.*/E20)
// does.
func HasStep(p *plans.Plan, catalog *tools.Catalog, pattern string) bool {
	pat, err := path.Compile(path.Static(pattern))
	if err != nil {
		return false
	}
	return slices.ContainsFunc(stepPaths(p, catalog, "", nil), pat.Match)
}

// stepPaths lists the static paths of a plan's steps under prefix, the
// steps of the plans it calls included (each plan once per call chain, as
// deep as a run may nest).
func stepPaths(p *plans.Plan, catalog *tools.Catalog, prefix string, chain []string) []string {
	if len(chain) > engine.MaxPlanDepth || slices.Contains(chain, p.Identifier.Value) {
		return nil
	}
	chain = append(chain, p.Identifier.Value)
	var out []string
	if p.Solver != nil {
		out = append(out, prefix+"solver")
	}
	plans.WalkSteps(p, func(s *plans.Step) {
		out = append(out, prefix+s.Path)
		id, isPlan := strings.CutPrefix(s.ToolName.Value, "plan__")
		if !isPlan || catalog == nil {
			return
		}
		if e, ok := catalog.Plan(id); ok {
			out = append(out, stepPaths(e.Plan, catalog, path.Join(prefix+s.Path, id)+"/", slices.Clip(chain))...)
		}
	})
	return out
}
