package debugger

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/path"
	"github.com/stepwise-dev/stepwise/engine/tools"
	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/plans/suggest"
	"github.com/stepwise-dev/stepwise/plans/template"
)

// Breakpoint is a logical breakpoint: a pattern over paths, optionally
// narrowed to some stop kinds and to a condition. It fires at every stop
// whose path it matches. A Breakpoint is a value a table hands out; Hits
// and ConditionError are a run's, filled in by the session that counts
// them, and Unmatched is filled in by whoever lists it against the plan.
type Breakpoint struct {
	ID      int               `json:"id"`
	Pattern string            `json:"pattern"`
	Kinds   []engine.StopKind `json:"kinds,omitempty"` // none: every kind
	// Condition is a gate in the plan's own grammar, evaluated against the
	// scope at the stop plus a stop root ({{stop.round}}, {{stop.tool}},
	// {{stop.kind}}, {{stop.hits}}); nil fires always.
	Condition *Condition `json:"condition,omitempty"`
	// Hits counts the stops of the run whose path and kind the breakpoint
	// matched, its condition aside.
	Hits    int  `json:"hits"`
	Enabled bool `json:"enabled"`
	// ConditionError is why the condition could not be evaluated at the
	// last stop it was tried at; empty once it evaluates.
	ConditionError string `json:"condition_error,omitempty"`
	// Unmatched says why no path of the plan can match the breakpoint, and
	// names the nearest pattern that would (Shapes.Unmatched); empty when
	// one can, or when it was listed without the plan.
	Unmatched string `json:"unmatched,omitempty"`
	// UnknownSteps says which steps the condition reads that no stop of
	// the plan has in its scope, so that it never holds; filled in, as
	// Unmatched is, by whoever lists it against the plan.
	UnknownSteps string `json:"unknown_steps,omitempty"`
	// Transient says the breakpoint lives in this table alone and is never
	// kept in its file: an editor's, which the editor sends again in its
	// next session, so that one that dies leaves none of its own behind.
	Transient bool `json:"transient,omitempty"`

	compiled path.Pattern
}

// Condition is value op to, as a plan's exit, decide and filter gates write
// it.
type Condition struct {
	Value string `json:"value"` // usually a template
	Op    string `json:"op"`
	To    any    `json:"to"` // JSON null included; absent for empty and not_empty

	value *template.Template
	// toMissing says the JSON it was read from had no to for an op that
	// compares with one: a kept file from before such conditions were
	// refused, which compile refuses now.
	toMissing bool
}

// conditionJSON is a Condition as JSON writes it: to is a member exactly
// when the op compares VALUE with it, so that "eq null" is kept as such and
// a condition written without its TO is told apart from it.
type conditionJSON struct {
	Value string          `json:"value"`
	Op    string          `json:"op"`
	To    json.RawMessage `json:"to,omitempty"` // read: empty when absent, null as null
}

func (c Condition) MarshalJSON() ([]byte, error) {
	out := conditionJSON{Value: c.Value, Op: c.Op}
	if !plans.GateOpTestsValueAlone(c.Op) {
		to, err := json.Marshal(c.To)
		if err != nil {
			return nil, err
		}
		out.To = to
	}
	return json.Marshal(out)
}

func (c *Condition) UnmarshalJSON(data []byte) error {
	var in conditionJSON
	if err := json.Unmarshal(data, &in); err != nil {
		return err
	}
	*c = Condition{Value: in.Value, Op: in.Op, toMissing: in.To == nil && !plans.GateOpTestsValueAlone(in.Op)}
	if in.To != nil {
		return json.Unmarshal(in.To, &c.To)
	}
	return nil
}

// StopKinds are the kinds a breakpoint may name.
var StopKinds = []engine.StopKind{engine.StopStep, engine.StopRound, engine.StopReply, engine.StopTool,
	engine.StopResult, engine.StopRepair, engine.StopError, engine.StopAsk}

// newBreakpoint checks and compiles a breakpoint.
func newBreakpoint(id int, pattern string, kinds []engine.StopKind, cond *Condition) (*Breakpoint, error) {
	compiled, err := path.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("breakpoint pattern '%s': %w", pattern, err)
	}
	for _, k := range kinds {
		if !slices.Contains(StopKinds, k) {
			return nil, fmt.Errorf("'%s' is not a stop kind (kinds: %s)", k, kindList())
		}
	}
	if cond != nil {
		if err := cond.compile(); err != nil {
			return nil, err
		}
	}
	return &Breakpoint{ID: id, Pattern: pattern, Kinds: kinds, Condition: cond, Enabled: true, compiled: compiled}, nil
}

func kindList() string {
	names := make([]string, len(StopKinds))
	for i, k := range StopKinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

// ParseCondition reads a condition written "VALUE OP [TO]", VALUE a
// template and TO JSON (or a bare word, taken as a string):
// "{{stop.round}} gte 2", "{{item.id}} eq CHK-103", "{{E0.issues}} empty".
func ParseCondition(text string) (*Condition, error) {
	fields := strings.Fields(text)
	opAt := slices.IndexFunc(fields, func(f string) bool { return slices.Contains(plans.GateOps, f) })
	if opAt < 1 {
		return nil, fmt.Errorf("a condition is VALUE OP [TO] with OP one of %s, as in {{stop.round}} gte 2", strings.Join(plans.GateOps, ", "))
	}
	c := &Condition{Value: strings.Join(fields[:opAt], " "), Op: fields[opAt]}
	rest := strings.Join(fields[opAt+1:], " ")
	c.toMissing = rest == "" && !plans.GateOpTestsValueAlone(c.Op)
	if rest != "" {
		if err := json.Unmarshal([]byte(rest), &c.To); err != nil {
			c.To = rest
		}
	}
	return c, c.compile()
}

func (c *Condition) compile() error {
	if !slices.Contains(plans.GateOps, c.Op) {
		return fmt.Errorf("unknown op '%s' (ops: %s)", c.Op, strings.Join(plans.GateOps, ", "))
	}
	if c.toMissing {
		// Compared with nothing, the condition would never hold, and
		// nothing would say why.
		return fmt.Errorf("a condition is VALUE OP [TO] and %s compares VALUE with TO, which is missing, as in %s %s 1 (only empty and not_empty take none; write null to compare with null)", c.Op, c.Value, c.Op)
	}
	t, err := template.Parse(c.Value)
	if err != nil {
		return fmt.Errorf("condition value: %w", err)
	}
	c.value = t
	return nil
}

// unknownSteps says, one warning each, which roots a condition reads that
// no stop of plan has in its scope: not a step of the plan or of a plan of
// the catalog it may call, nor input, item, index, accumulator or stop.
// Such a condition never holds; it is set all the same, as a pattern
// that matches no path is, and the warning says so when it is set. A nil
// condition reads none.
func unknownSteps(c *Condition, plan *plans.Plan, catalog *tools.Catalog) []string {
	if c == nil || c.value == nil || plan == nil {
		return nil
	}
	known := append([]string{"stop"}, plans.ReservedRoots...)
	ids := func(p *plans.Plan) {
		plans.WalkSteps(p, func(st *plans.Step) {
			if st.ID.Value != "" {
				known = append(known, st.ID.Value)
			}
		})
	}
	ids(plan)
	if catalog != nil {
		for _, e := range catalog.PlanEntries() {
			ids(e.Plan)
		}
	}
	var out []string
	for ref := range c.value.Refs {
		root := ref.Root()
		if ref.ItemRead || ref.LoopVar || root == "" || slices.Contains(known, root) {
			continue
		}
		out = append(out, fmt.Sprintf("the condition reads '%s', so it never holds: the plan has no step '%s'%s",
			ref, root, suggest.DidYouMean(root, known)))
	}
	return out
}

// holds evaluates the condition at a stop. A condition that cannot be
// evaluated (a path the scope lacks) does not hold, and says why: a
// breakpoint on a map body item whose field is missing must not stop
// every other item, but its user should learn the condition never held.
func (c *Condition) holds(st *engine.Stop, hits int) (bool, error) {
	scope := stopScope{Stop: st, hits: hits}
	v, err := c.value.Render(scope)
	if err != nil {
		return false, outOfBody(err)
	}
	return engine.Compare(c.Op, v, c.To)
}

// matches reports whether the breakpoint fires at a stop, before its
// condition. A result breakpoint fires at the error stop of a step that
// failed: the failure is its result, and the error stop is the one stop a
// failed step has.
func (b *Breakpoint) matches(st *engine.Stop) bool {
	if !b.Enabled || !b.compiled.Match(st.Path) {
		return false
	}
	return len(b.Kinds) == 0 || slices.Contains(b.Kinds, st.Kind) ||
		st.Kind == engine.StopError && slices.Contains(b.Kinds, engine.StopResult)
}

// stopScope is the scope a condition reads: the stop's own scope, and a
// stop root describing the stop.
type stopScope struct {
	*engine.Stop
	hits int
}

func (s stopScope) Lookup(root string) (any, bool) {
	if root == "stop" {
		return stopRoot(s.Kind, s.Path, s.Tool, s.hits), true
	}
	if own := ownResult(s.Stop); own != "" && root == own {
		return s.Output, true
	}
	if s.Scope == nil {
		return nil, false
	}
	return s.Scope.Lookup(root)
}

func (s stopScope) Roots() []string {
	roots := []string{"stop"}
	if own := ownResult(s.Stop); own != "" {
		roots = append(roots, own)
	}
	if s.Scope != nil {
		roots = append(roots, s.Scope.Roots()...)
	}
	return roots
}

// stopRoot is the stop root of a breakpoint condition and of print: the
// stop's kind, path and tool, the agent round it is in, and the hits of
// the breakpoint (that stopped the run, for print).
func stopRoot(kind engine.StopKind, p, tool string, hits int) map[string]any {
	return map[string]any{"kind": string(kind), "path": p, "tool": tool, "round": roundOf(p), "hits": hits}
}

// roundOf is the agent round a path is in (E1/agent.2/tool: 2), 0 outside
// one.
func roundOf(p string) int {
	round := 0
	for _, seg := range path.Segments(p) {
		if n, ok := path.RoundNumber(seg); ok {
			round = n
		}
	}
	return round
}
