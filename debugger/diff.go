package debugger

import (
	"bytes"
	"math"
	"slices"
	"strconv"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/path"
	"github.com/stepwise-dev/stepwise/engine/record"
)

// StepDiff compares one step of two runs. A side that did not run the
// step has an empty status and no result, time or tokens.
type StepDiff struct {
	Path    string            `json:"path"`
	StatusA engine.StepStatus `json:"status_a"`
	StatusB engine.StepStatus `json:"status_b"`
	// ResultA and ResultB are the step's results as each run recorded
	// them; nil for a side without one.
	ResultA any `json:"result_a"`
	ResultB any `json:"result_b"`
	// Changes says where the results differ, key by key and index by
	// index; none when they are the same.
	Changes []ValueChange `json:"changes,omitempty"`
	// Differs says the runs ended the step otherwise: a status or a
	// result that differs (not Same), so that a reader of the JSON, which
	// lists every step, need not work it out.
	Differs bool `json:"differs"`
	// MsDelta is B's own time minus A's, in milliseconds, to a tenth of
	// one: each step's wall time less the time it was held at stops.
	MsDelta float64 `json:"ms_delta"`
	// TokensA and TokensB are the tokens of the model calls the step made
	// in each run, every input, output and cache figure counted;
	// TokensDelta is B's minus A's.
	TokensA     int `json:"tokens_a"`
	TokensB     int `json:"tokens_b"`
	TokensDelta int `json:"tokens_delta"`
	// DecidedA and DecidedB are the actions by which a person decided the
	// step in each run: gave it its result (record.StepRecord's), or
	// decided at one of its own units, a round, a tool call or a repair
	// pass of it. ReusedA and ReusedB say a replay or a fork reused a
	// recorded result there instead, or a replay made such a decision
	// again.
	DecidedA string `json:"decided_a,omitempty"`
	DecidedB string `json:"decided_b,omitempty"`
	ReusedA  string `json:"reused_a,omitempty"`
	ReusedB  string `json:"reused_b,omitempty"`
}

// ValueChange is one place where two results differ.
type ValueChange struct {
	// At is where, as a template reads into a result: keys and indices
	// joined by dots (found, items.2.v); empty for the whole result.
	At string `json:"at"`
	A  any    `json:"a"`
	B  any    `json:"b"`
	// Only names the run that alone has a value there, "a" or "b": a key
	// or an index the other result lacks, or a result the other step did
	// not give.
	Only string `json:"only,omitempty"`
}

// Same reports whether both runs ran the step to the same status and
// result. A result injected at a stop (skipped, as a fork reuses one)
// counts as the step's own.
func (d StepDiff) Same() bool {
	return endedAs(d.StatusA) == endedAs(d.StatusB) && len(d.Changes) == 0
}

// OnlyIn names the run that alone ran the step, "A" or "B"; empty when
// both ran it. Its result is then no change of a value but one run's
// alone, and the step has no time or tokens to compare.
func (d StepDiff) OnlyIn() string {
	switch {
	case d.StatusA == "" && d.StatusB != "":
		return "B"
	case d.StatusB == "" && d.StatusA != "":
		return "A"
	}
	return ""
}

// RunCounts are what one run of a diff counts: the steps it ran and the
// tokens its model calls used.
type RunCounts struct {
	Steps  int `json:"steps"`
	Tokens int `json:"tokens"`
}

// Count adds up each run's side of a diff: the steps it ran (every step
// its record shows, as the engine's steps_executed counts them) and their
// tokens (the run's usage, every figure counted). A diff's header, body
// and footer, in every front end, count with it.
func Count(steps []StepDiff) (a, b RunCounts) {
	for _, d := range steps {
		if d.StatusA != "" {
			a.Steps++
		}
		if d.StatusB != "" {
			b.Steps++
		}
		a.Tokens += d.TokensA
		b.Tokens += d.TokensB
	}
	return a, b
}

// Diff compares two runs step by step: every path either run has, in
// plan order (path.SortPlanOrder: items by index, the steps of a body in
// its order), a step only B ran placed where B ran it.
func Diff(a, b *record.RunDetail) []StepDiff {
	stepsA, stepsB := stepsByPath(a), stepsByPath(b)
	tokensA, tokensB := tokensByStep(a), tokensByStep(b)
	unitsA, unitsB := decidedUnits(a, stepsA), decidedUnits(b, stepsB)
	paths := ranOrder(a, b, stepsA, stepsB)
	path.SortPlanOrder(paths)
	out := make([]StepDiff, 0, len(paths))
	for _, p := range paths {
		d := StepDiff{Path: p, TokensA: tokensA[p], TokensB: tokensB[p], TokensDelta: tokensB[p] - tokensA[p]}
		var ms float64
		sa, inA := stepsA[p]
		if inA {
			d.StatusA, d.ResultA, ms = sa.Status, resultOf(sa), -ownMs(sa)
			d.DecidedA, d.ReusedA = marks(sa, unitsA)
		}
		sb, inB := stepsB[p]
		sameText := inA && inB && bytes.Equal(sa.Result, sb.Result)
		if inB {
			d.StatusB, ms = sb.Status, ms+ownMs(sb)
			d.DecidedB, d.ReusedB = marks(sb, unitsB)
			if d.ResultB = d.ResultA; !sameText {
				d.ResultB = resultOf(sb)
			}
		}
		// Recorded times are floats of milliseconds; their difference
		// carries binary noise (0.30000000000000004) below a tenth.
		d.MsDelta = math.Round(ms*10) / 10
		if !sameText {
			d.Changes = valueChanges("", d.ResultA, d.ResultB, inA && d.ResultA != nil, inB && d.ResultB != nil)
		}
		d.Differs = !d.Same()
		out = append(out, d)
	}
	return out
}

// ownMs is a step's own time: its wall time less the time its threads
// were held at stops, so that a step a person held does not read as slower.
func ownMs(s record.StepRecord) float64 { return max(s.Ms-s.HeldMs, 0) }

// ranOrder lists every step path either run has, once, in the order the
// steps first ran: A's order, each step only B ran placed where B ran it.
func ranOrder(a, b *record.RunDetail, stepsA, stepsB map[string]record.StepRecord) []string {
	var out []string
	done := map[string]bool{}
	add := func(p string) {
		if !done[p] {
			done[p] = true
			out = append(out, p)
		}
	}
	i, j := 0, 0
	for i < len(a.Steps) || j < len(b.Steps) {
		switch {
		case i < len(a.Steps) && done[a.Steps[i].Path]:
			i++
		case j < len(b.Steps) && done[b.Steps[j].Path]:
			j++
		case i >= len(a.Steps):
			add(b.Steps[j].Path)
		case j >= len(b.Steps):
			add(a.Steps[i].Path)
		default:
			pa, pb := a.Steps[i].Path, b.Steps[j].Path
			_, aHasB := stepsA[pb]
			_, bHasA := stepsB[pa]
			// A step only one run has goes in where that run ran it;
			// otherwise A's order leads.
			if !aHasB && bHasA {
				add(pb)
			} else {
				add(pa)
			}
		}
	}
	return out
}

// valueChanges lists where a and b differ, under the place at: the keys
// of two objects one by one (in order), the indices of two lists, and
// otherwise the two values whole. hasA and hasB say whether each side has
// a value at all.
func valueChanges(at string, a, b any, hasA, hasB bool) []ValueChange {
	switch {
	case !hasA && !hasB:
		return nil
	case !hasA:
		return []ValueChange{{At: at, B: b, Only: "b"}}
	case !hasB:
		return []ValueChange{{At: at, A: a, Only: "a"}}
	}
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok {
			break
		}
		keys := make([]string, 0, len(a)+len(b))
		for k := range a {
			keys = append(keys, k)
		}
		for k := range b {
			if _, ok := a[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		var out []ValueChange
		for _, k := range keys {
			va, inA := a[k]
			vb, inB := b[k]
			out = append(out, valueChanges(join(at, k), va, vb, inA, inB)...)
		}
		return out
	case []any:
		b, ok := b.([]any)
		if !ok {
			break
		}
		var out []ValueChange
		for i := range max(len(a), len(b)) {
			var va, vb any
			if i < len(a) {
				va = a[i]
			}
			if i < len(b) {
				vb = b[i]
			}
			out = append(out, valueChanges(join(at, strconv.Itoa(i)), va, vb, i < len(a), i < len(b))...)
		}
		return out
	}
	// Both are plain JSON data, read back from the record: a number, a
	// string, a bool or null, or an object or a list the other is not,
	// which compare by ==.
	if a == b {
		return nil
	}
	return []ValueChange{{At: at, A: a, B: b}}
}

func join(at, key string) string {
	if at == "" {
		return key
	}
	return at + "." + key
}

func stepsByPath(d *record.RunDetail) map[string]record.StepRecord {
	out := make(map[string]record.StepRecord, len(d.Steps))
	for _, s := range d.Steps {
		out[s.Path] = s
	}
	return out
}

// decidedUnits maps each step of d to a decision made on it or on one of
// its own units (a round, a tool call, a repair pass: the paths under it
// that are no step of their own), the first one the record lists. A
// decision at a step inside an item or a branch marks that step, not the
// map or decide around it, whose own row would otherwise mark every body
// it runs.
func decidedUnits(d *record.RunDetail, steps map[string]record.StepRecord) map[string]record.Decision {
	out := map[string]record.Decision{}
	for _, dec := range d.Decisions {
		// The nearest step at or above the decision's path owns it.
		for p, ok := dec.Path, true; ok; p, _, ok = path.Parent(p) {
			if _, isStep := steps[p]; isStep {
				if _, seen := out[p]; !seen {
					out[p] = dec
				}
				break
			}
		}
	}
	return out
}

// marks are the decided and reused marks of a step in a diff: its own,
// or else those of a decision on one of its units.
func marks(s record.StepRecord, units map[string]record.Decision) (decided, reused string) {
	if s.Decided != "" || s.Reused != "" {
		return s.Decided, s.Reused
	}
	dec, ok := units[s.Path]
	switch {
	case !ok:
		return "", ""
	case dec.Origin != "":
		return "", dec.Origin
	}
	return dec.Action, ""
}

// tokensByStep reads the tokens of each step off the run's usage by_step.
func tokensByStep(d *record.RunDetail) map[string]int {
	out := map[string]int{}
	for _, l := range d.UsageReport.ByStep {
		out[l.Path] += l.Total()
	}
	return out
}

// resultOf is a recorded step's result as plain JSON data; nil for none,
// or for one the record cannot read back.
func resultOf(s record.StepRecord) any {
	v, err := recordedValue(s.Result)
	if err != nil {
		return nil
	}
	return v
}

// InPlanOrder puts d's steps, tool calls and model calls in plan order
// (path.SortPlanOrder), as inspect lists them: the record keeps them in
// the order they started, in which concurrent items interleave.
func InPlanOrder(d *record.RunDetail) {
	d.Steps = inPlanOrder(d.Steps, func(s record.StepRecord) string { return s.Path })
	d.ToolCalls = inPlanOrder(d.ToolCalls, func(c record.ToolCall) string { return c.Path })
	d.ModelCalls = inPlanOrder(d.ModelCalls, func(c record.ModelCall) string { return c.Path })
}

// inPlanOrder returns units in plan order, each named by its path; units
// of one path (a model call tried again, a run recorded before paths were
// unique) keep the order they ran in.
func inPlanOrder[T any](units []T, pathOf func(T) string) []T {
	byPath := make(map[string][]T, len(units))
	var paths []string
	for _, u := range units {
		p := pathOf(u)
		if _, seen := byPath[p]; !seen {
			paths = append(paths, p)
		}
		byPath[p] = append(byPath[p], u)
	}
	path.SortPlanOrder(paths)
	out := make([]T, 0, len(units))
	for _, p := range paths {
		out = append(out, byPath[p]...)
	}
	return out
}

// MarkSteps gives each step of d that has no mark of its own the mark of
// a decision made on one of its own units (a round's reply replaced, a
// tool call injected, a repair answered), as Diff marks it: inspect marks
// the agent step whose reply a person replaced, not only the reply.
func MarkSteps(d *record.RunDetail) {
	units := decidedUnits(d, stepsByPath(d))
	for i := range d.Steps {
		d.Steps[i].Decided, d.Steps[i].Reused = marks(d.Steps[i], units)
	}
}
