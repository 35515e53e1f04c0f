package debugger

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/path"
	"github.com/stepwise-dev/stepwise/engine/tools"
	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/plans/suggest"
)

// Shape is a path a run of a plan can stop at, with * where a run puts a
// number: an item's index (do.*), a round's (agent.*), a repeated tool
// call's occurrence (tracker__search.*). An agent's tool written as a
// pattern stays a pattern (tracker__*), and an agent offered the whole
// catalog calls * tools. Kinds are the stops that happen there.
type Shape struct {
	Path  string
	Kinds []engine.StopKind

	segs []shapeSegment
}

// shapeSegment is one segment of a shape: literal text, a glob, or a
// numbered segment (its prefix, then digits).
type shapeSegment struct {
	text   string
	prefix string // set for a numbered segment: "do.", "agent.", "tracker__search."
	// most bounds a numbered segment's number (an agent's rounds run from
	// 1 to its max_iterations); 0: unbounded.
	most int
}

// maxShapes bounds the shapes of one plan. Called plans nest under every
// step and agent that calls them, so a catalog whose plans all call each
// other could multiply past any use; past the bound a pattern is not
// judged, rather than judged against part of the plan.
const maxShapes = 20000

// Shapes are the paths a plan's runs can stop at, in plan order, with the
// plans it calls (from the catalog) nested under the steps and tool calls
// that call them.
type Shapes struct {
	list      []Shape
	calls     []callShape
	truncated bool
	// rounds bounds the round segment of each agent's shapes: the round
	// shape's path (…/agent.*), its step's round budget.
	rounds map[string]int

	// plan and catalog are those the shapes are of: a breakpoint's
	// condition is checked against their steps.
	plan    *plans.Plan
	catalog *tools.Catalog

	mu   sync.Mutex
	said map[string]string // Unmatched's answers, by pattern and kinds
}

// The stops of each kind of unit.
var (
	stepStops   = []engine.StopKind{engine.StopStep, engine.StopResult, engine.StopError}
	askStops    = []engine.StopKind{engine.StopStep, engine.StopResult, engine.StopError, engine.StopAsk}
	roundStops  = []engine.StopKind{engine.StopRound, engine.StopReply}
	callStops   = []engine.StopKind{engine.StopTool, engine.StopResult, engine.StopError}
	repairStops = []engine.StopKind{engine.StopRepair}
	solverStops = []engine.StopKind{engine.StopStep}
)

// PlanShapes lists the shapes of plan p; catalog (nil: none) supplies the
// plans it calls and the tools an agent may be offered.
func PlanShapes(p *plans.Plan, catalog *tools.Catalog) *Shapes {
	s := &Shapes{rounds: map[string]int{}, plan: p, catalog: catalog}
	s.walkPlan(p, catalog, "", nil)
	for i := range s.list {
		s.list[i].segs = s.bound(parseShape(s.list[i].Path))
	}
	return s
}

// bound sets the most of each round segment of segs whose agent's round
// budget is known.
func (s *Shapes) bound(segs []shapeSegment) []shapeSegment {
	at := ""
	for i := range segs {
		at = path.Join(at, segs[i].text)
		if segs[i].text == path.AnyRound {
			segs[i].most = s.rounds[at]
		}
	}
	return segs
}

// List returns the shapes in plan order.
func (s *Shapes) List() []Shape { return s.list }

func (s *Shapes) add(p string, kinds []engine.StopKind) {
	if len(s.list) >= maxShapes {
		s.truncated = true
		return
	}
	s.list = append(s.list, Shape{Path: p, Kinds: kinds})
}

// callShape is a shape at which a run calls a tool, which an approval
// can hold: an agent's call (its tool stop), or a plain step (its step
// stop), which is matched by its path with its tool appended too.
type callShape struct {
	tool string // as written: a name, or an agent's pattern (tracker__*, *)
	segs []shapeSegment
	// withTool is a plain step's path with its tool appended; nil for an
	// agent's call, whose path ends in its tool already.
	withTool []shapeSegment
}

// addCall adds a tool call's shape at at, a plain step's when step is set.
func (s *Shapes) addCall(at, tool string, step bool) {
	if len(s.list) >= maxShapes {
		s.truncated = true
		return
	}
	c := callShape{tool: tool, segs: s.bound(parseShape(at))}
	if step {
		c.withTool = s.bound(parseShape(path.Join(at, tool)))
	}
	s.calls = append(s.calls, c)
}

// walkPlan adds the shapes of plan p under prefix ("" or a path ending in /);
// chain is the plans calling it, which it may not call again, as a run
// may not.
func (s *Shapes) walkPlan(p *plans.Plan, catalog *tools.Catalog, prefix string, chain []string) {
	if len(chain) > engine.MaxPlanDepth || slices.Contains(chain, p.Identifier.Value) {
		return
	}
	chain = append(slices.Clip(chain), p.Identifier.Value)
	plans.WalkSteps(p, func(st *plans.Step) { s.step(st, catalog, prefix+st.Path, chain) })
	if p.Solver != nil {
		s.add(prefix+"solver", solverStops)
	}
}

// step adds the shapes of one step at at: the step's own, and those of
// its gate's verdict, its rounds and their calls, its repair pass and the
// plan it calls. Its bodies' steps are WalkSteps' to visit.
func (s *Shapes) step(st *plans.Step, catalog *tools.Catalog, at string, chain []string) {
	tool := st.ToolName.Value
	if tool == plans.ControlAsk {
		s.add(at, askStops)
	} else {
		s.add(at, stepStops)
	}
	if !plans.IsControl(tool) {
		s.addCall(at, tool, true)
	}
	switch c := st.Control.(type) {
	case *plans.ExitInput:
		s.verdict(c.Condition, at)
	case *plans.DecideInput:
		s.verdict(c.Condition, at)
	case *plans.FilterInput:
		s.verdict(c.Condition, path.Join(at, path.AnyItem))
	case *plans.AgentInput:
		round := path.Join(at, path.AnyRound)
		s.rounds[round] = c.Iterations()
		s.add(round, roundStops)
		s.add(path.Repair(round), repairStops)
		for _, t := range agentTools(c) {
			for _, call := range []string{t, t + ".*"} {
				s.add(path.Join(round, call), callStops)
				s.addCall(path.Join(round, call), t, false)
			}
		}
		if catalog == nil {
			return
		}
		for _, e := range catalog.PlanEntries() {
			name := "plan__" + e.Plan.Identifier.Value
			if !slices.ContainsFunc(agentTools(c), func(t string) bool { return globsMeet(t, name) }) {
				continue
			}
			for _, call := range []string{name, name + ".*"} {
				s.walkPlan(e.Plan, catalog, path.Join(path.Join(round, call), e.Plan.Identifier.Value)+"/", chain)
			}
		}
	}
	if tool == "builtin__infer" || isPromptTool(catalog, tool) {
		s.add(path.Repair(at), repairStops)
	}
	if id, ok := strings.CutPrefix(tool, "plan__"); ok && catalog != nil {
		if e, ok := catalog.Plan(id); ok {
			s.walkPlan(e.Plan, catalog, path.Join(at, id)+"/", chain)
		}
	}
}

// verdict adds the repair pass of an infer gate's verdict call, the one
// stop the call has.
func (s *Shapes) verdict(c plans.Condition, at string) {
	if c.Infer != nil {
		s.add(path.Repair(path.Judge(at)), repairStops)
	}
}

// agentTools are the tools an agent may call, as written: names or
// patterns, or * for the whole catalog.
func agentTools(c *plans.AgentInput) []string {
	if c.Tools == nil {
		return []string{"*"}
	}
	out := make([]string, len(c.Tools.Patterns))
	for i, p := range c.Tools.Patterns {
		out[i] = p.Value
	}
	return out
}

func isPromptTool(catalog *tools.Catalog, tool string) bool {
	if catalog == nil {
		return false
	}
	t, ok := catalog.UserTool(tool)
	return ok && t.Kind.Value == plans.ToolPrompt
}

// parseShape splits a shape into segments: do.* and agent.* and a
// repeated call's name.* are numbered, any other * is a glob.
func parseShape(p string) []shapeSegment {
	segs := path.Segments(p)
	out := make([]shapeSegment, len(segs))
	for i, seg := range segs {
		out[i] = shapeSegment{text: seg}
		if base, ok := strings.CutSuffix(seg, ".*"); ok && !strings.Contains(base, "*") {
			out[i].prefix = base + "."
		}
	}
	return out
}

// meets reports whether some path segment matches both the pattern
// segment pat (not **) and the shape segment.
func (seg shapeSegment) meets(pat string) bool {
	if seg.prefix != "" && !strings.Contains(pat, "*") {
		digits, ok := strings.CutPrefix(pat, seg.prefix)
		if !ok || digits == "" || strings.Trim(digits, "0123456789") != "" {
			return false
		}
		if seg.most > 0 {
			n, err := strconv.Atoi(digits)
			return err == nil && n >= 1 && n <= seg.most
		}
		return true
	}
	return globsMeet(pat, seg.text)
}

// nearText is the segment nearest's answer puts for seg in the place of
// the pattern's pat: a round out of the agent's budget becomes the
// nearest round in it (past the last, the last), any other segment its
// shape's text.
func (seg shapeSegment) nearText(pat string) string {
	digits, ok := strings.CutPrefix(pat, seg.prefix)
	if n, err := strconv.Atoi(digits); ok && seg.most > 0 && err == nil {
		return seg.prefix + strconv.Itoa(min(max(n, 1), seg.most))
	}
	return seg.text
}

// globsMeet reports whether some text matches both globs a and b, in
// which * stands for any run of characters.
func globsMeet(a, b string) bool {
	switch {
	case !strings.Contains(b, "*"):
		return globMatch(a, b)
	case !strings.Contains(a, "*"):
		return globMatch(b, a)
	}
	// seen[i][j] marks the pair of rests already found not to meet.
	seen := make([][]bool, len(a)+1)
	for i := range seen {
		seen[i] = make([]bool, len(b)+1)
	}
	var meet func(i, j int) bool
	meet = func(i, j int) bool {
		if seen[i][j] {
			return false
		}
		var ok bool
		switch {
		case i == len(a) && j == len(b):
			return true
		case i < len(a) && a[i] == '*':
			ok = meet(i+1, j) || (j < len(b) && meet(i, j+1))
		case j < len(b) && b[j] == '*':
			ok = meet(i, j+1) || (i < len(a) && meet(i+1, j))
		case i < len(a) && j < len(b) && a[i] == b[j]:
			ok = meet(i+1, j+1)
		}
		seen[i][j] = !ok
		return ok
	}
	return meet(0, 0)
}

// globMatch reports whether text matches glob, in which * stands for any
// run of characters.
func globMatch(glob, text string) bool {
	head, rest, starred := strings.Cut(glob, "*")
	if !starred {
		return glob == text
	}
	if !strings.HasPrefix(text, head) {
		return false
	}
	text = text[len(head):]
	parts := strings.Split(rest, "*")
	tail := parts[len(parts)-1]
	for _, part := range parts[:len(parts)-1] {
		i := strings.Index(text, part)
		if i < 0 {
			return false
		}
		text = text[i+len(part):]
	}
	return len(text) >= len(tail) && strings.HasSuffix(text, tail)
}

// Unmatched says why a breakpoint on pattern, for kinds (none: every
// kind), can never stop a run of the plan, and names the nearest pattern
// that would; it is "" when some shape of the plan matches. The pattern
// must compile. Answers are kept: a session flags its breakpoints each
// time it lists them.
func (s *Shapes) Unmatched(pattern string, kinds []engine.StopKind) string {
	if s.truncated {
		return ""
	}
	key := pattern + "\x00" + kindWords(kinds)
	s.mu.Lock()
	defer s.mu.Unlock()
	if said, ok := s.said[key]; ok {
		return said
	}
	said := s.unmatched(pattern, kinds)
	if s.said == nil {
		s.said = map[string]string{}
	}
	s.said[key] = said
	return said
}

func (s *Shapes) unmatched(pattern string, kinds []engine.StopKind) string {
	pat := path.Segments(pattern)
	var candidates []Shape
	var buf []bool
	for _, sh := range s.list {
		if len(kinds) > 0 && !slices.ContainsFunc(kinds, func(k engine.StopKind) bool { return slices.Contains(sh.Kinds, k) }) {
			continue
		}
		if reaches(pat, sh.segs, &buf) {
			return ""
		}
		candidates = append(candidates, sh)
	}
	where := "no path of the plan matches " + pattern
	if len(kinds) > 0 {
		where = fmt.Sprintf("no %s stop of the plan is at a path %s matches", kindWords(kinds), pattern)
	}
	if len(candidates) == 0 {
		return where + ", so it never stops; the plan has no such stop anywhere"
	}
	replace := replaceCosts{}
	best, bestCost := "", 0.0
	for _, sh := range candidates {
		if cost, near := nearest(pat, sh.segs, dropCost, replace); best == "" || cost < bestCost {
			best, bestCost = near, cost
		}
	}
	return where + ", so it never stops; the nearest that would: " + best
}

// Flag fills in the Unmatched of each breakpoint of list, and its
// UnknownSteps: what its condition reads that no step of the plan has.
func (s *Shapes) Flag(list []Breakpoint) {
	for i := range list {
		list[i].Unmatched = s.Unmatched(list[i].Pattern, list[i].Kinds)
		list[i].UnknownSteps = strings.Join(unknownSteps(list[i].Condition, s.plan, s.catalog), "; ")
	}
}

// kindWords joins stop kinds as "round or reply".
func kindWords(kinds []engine.StopKind) string {
	words := make([]string, len(kinds))
	for i, k := range kinds {
		words[i] = string(k)
	}
	return strings.Join(words, " or ")
}

// reaches reports whether some path of the shape matches the pattern's
// segments. buf is scratch space, reused from call to call.
func reaches(pat []string, shape []shapeSegment, buf *[]bool) bool {
	n, m := len(pat), len(shape)
	w := m + 1
	if cap(*buf) < (n+1)*w {
		*buf = make([]bool, (n+1)*w)
	}
	// ok[i*w+j]: pat[i:] matches some path of shape[j:].
	ok := (*buf)[:(n+1)*w]
	for i := n; i >= 0; i-- {
		for j := m; j >= 0; j-- {
			switch {
			case i == n:
				ok[i*w+j] = j == m
			case pat[i] == "**":
				ok[i*w+j] = ok[(i+1)*w+j] || (j < m && ok[i*w+j+1])
			default:
				ok[i*w+j] = j < m && ok[(i+1)*w+j+1] && shape[j].meets(pat[i])
			}
		}
	}
	return ok[0]
}

// The costs of nearest's edits. A segment written is the user's word for
// where to stop, so dropping one costs more than adding one; replacing
// one costs less than either only when it is a typo of the other.
const (
	addCost     = 1.0
	dropCost    = 1.25
	replaceMost = addCost + dropCost
)

// nearest aligns the pattern's segments with the shape's at the least
// cost (a segment added, dropped or replaced, at the costs above, a drop
// at drop; one that meets the shape's costs nothing, and ** takes any run of segments
// for nothing) and returns the cost and the pattern the alignment makes:
// the pattern's own segment where it meets the shape's, so that the
// numbers written stay (do.3), the shape's where it is added or replaced.
func nearest(pat []string, shape []shapeSegment, drop float64, replace replaceCosts) (float64, string) {
	n, m := len(pat), len(shape)
	// cost[i][j] is the least cost of aligning pat[i:] with shape[j:].
	cost := make([][]float64, n+1)
	for i := range cost {
		cost[i] = make([]float64, m+1)
	}
	for i := n; i >= 0; i-- {
		for j := m; j >= 0; j-- {
			switch {
			case i == n:
				cost[i][j] = addCost * float64(m-j)
			case pat[i] == "**":
				cost[i][j] = cost[i+1][j]
				if j < m {
					cost[i][j] = min(cost[i][j], cost[i][j+1])
				}
			case j == m:
				cost[i][j] = drop + cost[i+1][j]
			default:
				cost[i][j] = min(drop+cost[i+1][j], addCost+cost[i][j+1], replace.cost(pat[i], shape[j])+cost[i+1][j+1])
			}
		}
	}
	var out []string
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i == n:
			out = append(out, shape[j].text)
			j++
		case pat[i] == "**":
			if j < m && cost[i][j] == cost[i][j+1] {
				j++
				continue
			}
			out = append(out, "**")
			i++
		case j < m && cost[i][j] == replace.cost(pat[i], shape[j])+cost[i+1][j+1]:
			if shape[j].meets(pat[i]) {
				out = append(out, pat[i])
			} else {
				out = append(out, shape[j].nearText(pat[i]))
			}
			i, j = i+1, j+1
		case j < m && cost[i][j] == addCost+cost[i][j+1]:
			out = append(out, shape[j].text)
			j++
		default:
			i++
		}
	}
	return cost[0][0], strings.Join(out, "/")
}

// replaceCosts keeps what replacing one pattern segment with one shape
// segment costs, for one search of the nearest: the same few segments
// meet again in every shape.
type replaceCosts map[[2]string]float64

// cost is what putting the shape's segment in the place of the pattern's
// costs: nothing when they meet; for a typo (suggest's measure), their
// edit distance over the longer one's length, less than adding a
// segment; and otherwise as much as dropping one and adding the other.
func (r replaceCosts) cost(pat string, seg shapeSegment) float64 {
	key := [2]string{pat, seg.text}
	if c, ok := r[key]; ok {
		return c
	}
	var c float64
	switch {
	case seg.meets(pat):
	case suggest.Closest(pat, []string{seg.text}) == "":
		c = replaceMost
	default:
		c = float64(suggest.Distance(pat, seg.text)) / float64(max(len(pat), len(seg.text)))
	}
	r[key] = c
	return c
}
