package debugger

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/path"
	"github.com/stepwise-dev/stepwise/engine/tools"
	"github.com/stepwise-dev/stepwise/plans"
)

// Approvals is a tool approval policy: every tool call whose path one of
// its patterns matches is held for a person to approve, deny or edit,
// unless the tool is read-only. Patterns are the breakpoint pattern
// language; a plain step's call is matched by its path and by its path
// followed by its tool, the path it would have in an agent round, so that
// **/tracker__* holds every call of a tracker tool wherever it is made.
//
// The policy is the same whoever asks the person: `stepwise run
// --approve` installs it as an engine hook (Hook) that asks on the
// terminal; a debug session holds its calls as stops (Session.Approve).
type Approvals struct {
	patterns []path.Pattern
	lookup   toolLookup
}

// toolLookup finds the catalog entry of the tool a call names.
type toolLookup struct {
	catalog *tools.Catalog
	runtime *tools.Runtime
}

// NewApprovals compiles the patterns of a policy over the tools of
// catalog and, for an MCP server's tools, the servers runtime runs.
func NewApprovals(patterns []string, catalog *tools.Catalog, runtime *tools.Runtime) (*Approvals, error) {
	a := &Approvals{lookup: toolLookup{catalog, runtime}}
	for _, p := range patterns {
		compiled, err := path.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("approval pattern '%s': %w", p, err)
		}
		a.patterns = append(a.patterns, compiled)
	}
	return a, nil
}

// Patterns lists the policy's patterns as they were written.
func (a *Approvals) Patterns() []string {
	out := make([]string, len(a.patterns))
	for i, p := range a.patterns {
		out[i] = p.String()
	}
	return out
}

// Holds reports whether the policy holds the call at a stop for a person:
// a tool call (an agent's, or a plain step's at its step stop) whose path
// a pattern matches, of a tool that does not declare itself read-only.
func (a *Approvals) Holds(ctx context.Context, st *engine.Stop) bool {
	if a == nil || !isToolCall(st) {
		return false
	}
	info, listed := a.lookup.tool(ctx, st.Tool)
	return a.holds(st, listedInfo(info, listed))
}

// holds is Holds with the called tool's entry looked up; a tool nobody
// lists declares nothing, and is held.
func (a *Approvals) holds(st *engine.Stop, info *plans.ToolInfo) bool {
	if a == nil || !isToolCall(st) {
		return false
	}
	matched := slices.ContainsFunc(a.patterns, func(p path.Pattern) bool {
		return p.Match(st.Path) || st.Kind == engine.StopStep && p.Match(st.Path+"/"+st.Tool)
	})
	return matched && (info == nil || info.ReadOnly == nil || !*info.ReadOnly)
}

// UnheldPattern is an approval pattern that can hold no tool call of a
// plan, and why (Warning speaks of the pattern as "it"). It is a warning, not a refusal: a tool's read-only status
// and the plans a plan calls can change before the run gets there.
type UnheldPattern struct {
	Pattern string `json:"approve"`
	Warning string `json:"warning"`
}

// Unheld lists the policy's patterns that can hold no tool call of a run
// of the plan whose shapes are given: those that match no call's path
// (matched as Holds matches, a plain step by its path and by its path
// with its tool appended), named with the nearest pattern that would hold
// one, and those whose every call is of a tool the catalog lists as
// read-only. A tool not known by name (an agent offered tracker__* or the
// whole catalog, an MCP server's tool) may not be read-only, so a call of
// one counts as held. Past the bound on a plan's shapes nothing is judged.
func (a *Approvals) Unheld(shapes *Shapes) []UnheldPattern {
	if a == nil || shapes.truncated {
		return nil
	}
	var out []UnheldPattern
	var buf []bool
	for _, p := range a.patterns {
		pattern := p.String()
		pat := path.Segments(pattern)
		var readOnly []string
		holds := false
		for _, c := range shapes.calls {
			if !reaches(pat, c.segs, &buf) && (c.withTool == nil || !reaches(pat, c.withTool, &buf)) {
				continue
			}
			if !a.readOnly(c.tool) {
				holds = true
				break
			}
			if !slices.Contains(readOnly, c.tool) {
				readOnly = append(readOnly, c.tool)
			}
		}
		switch {
		case holds:
			continue
		case len(readOnly) > 0:
			slices.Sort(readOnly)
			out = append(out, UnheldPattern{pattern, "every tool call of the plan at a path it matches is of a read-only tool (" +
				strings.Join(readOnly, ", ") + "), and read-only tools are never held, so it holds none"})
		default:
			out = append(out, UnheldPattern{pattern, "no tool call of the plan is at a path it matches, so it holds none; " + a.nearestHeld(pat, shapes)})
		}
	}
	return out
}

// heldDropCost is what dropping a segment of an approval pattern costs in
// its nearest: more than replacing one with any other. The last segment
// most often names the tool, and without it ** is always nearest, which
// holds every call the plan makes.
const heldDropCost = 2 * replaceMost

// nearestHeld names the nearest pattern to pat that would hold a call of
// the plan, one of a tool not known to be read-only. A plain step's path
// with its tool appended comes first, since a pattern that names no call
// is most often a tool's name mistyped.
func (a *Approvals) nearestHeld(pat []string, shapes *Shapes) string {
	replace := replaceCosts{}
	best, bestCost := "", 0.0
	for _, c := range shapes.calls {
		if a.readOnly(c.tool) {
			continue
		}
		for _, segs := range [][]shapeSegment{c.withTool, c.segs} {
			if segs == nil {
				continue
			}
			if cost, near := nearest(pat, segs, heldDropCost, replace); best == "" || cost < bestCost {
				best, bestCost = near, cost
			}
		}
	}
	if best == "" {
		return "the plan calls no tool that is not read-only"
	}
	return "the nearest that would: " + best
}

// readOnly reports whether the catalog lists tool, a name and not a
// pattern, as read-only.
func (a *Approvals) readOnly(tool string) bool {
	if strings.Contains(tool, "*") || a.lookup.catalog == nil {
		return false
	}
	info, ok := a.lookup.catalog.Tool(tool)
	return ok && info.ReadOnly != nil && *info.ReadOnly
}

// CheckArguments checks arguments edited at a tool call's stop against
// the called tool's input schema; the error says what does not fit.
func (a *Approvals) CheckArguments(ctx context.Context, st *engine.Stop, args any) error {
	info, listed := a.lookup.tool(ctx, st.Tool)
	return checkArguments(st, listedInfo(info, listed), args)
}

// Hook is the policy as an engine hook: at every call it holds, decide
// asks a person and returns Approve, Deny, Abort, or Edit with arguments
// CheckArguments has passed; every other stop proceeds.
func (a *Approvals) Hook(decide func(ctx context.Context, st *engine.Stop) engine.Decision) engine.Hook {
	return func(ctx context.Context, st *engine.Stop) engine.Decision {
		if !a.Holds(ctx, st) {
			return engine.Decision{}
		}
		return decide(ctx, st)
	}
}

// isToolCall reports whether a stop is before a tool call: an agent's call
// at its tool stop, or a plain step, a body call among them, at its step
// stop. A control step calls no tool itself, and the finish's solver is
// a model call.
func isToolCall(st *engine.Stop) bool {
	switch st.Kind {
	case engine.StopTool:
		return true
	case engine.StopStep:
		return st.Step != nil && !plans.IsControl(st.Tool)
	}
	return false
}

// tool finds a tool's catalog entry, asking its MCP server for one of a
// server's tools (connected already: the call is about to go to it);
// listed is false when nothing lists the tool. The entry is a value, so
// that a stop that looks one up and goes on allocates nothing.
func (l toolLookup) tool(ctx context.Context, name string) (info plans.ToolInfo, listed bool) {
	if l.catalog == nil {
		return plans.ToolInfo{}, false
	}
	if info, ok := l.catalog.Tool(name); ok {
		return info, true
	}
	server, _, ok := strings.Cut(name, "__")
	if !ok || l.runtime == nil || !slices.Contains(l.catalog.Servers(), server) {
		return plans.ToolInfo{}, false
	}
	list, err := l.runtime.ServerTools(ctx, server)
	if err != nil {
		return plans.ToolInfo{}, false
	}
	i := slices.IndexFunc(list, func(t plans.ToolInfo) bool { return t.Name == name })
	if i < 0 {
		return plans.ToolInfo{}, false
	}
	return list[i], true
}

// listedInfo is a looked-up entry as the checks take it: nil when nothing
// lists the tool.
func listedInfo(info plans.ToolInfo, listed bool) *plans.ToolInfo {
	if !listed {
		return nil
	}
	return &info
}

// errNotToolCall refuses a decision about a tool call at a stop that is
// not before one.
var errNotToolCall = errors.New("a tool stop, or the step stop of a step that calls a tool, is where a call is edited, approved or denied")

// checkArguments checks arguments for the call at st against its tool's
// input schema (info's; nil when nothing lists the tool): a JSON object,
// and what the schema asks of it.
func checkArguments(st *engine.Stop, info *plans.ToolInfo, args any) error {
	if !isToolCall(st) {
		return errNotToolCall
	}
	if _, ok := args.(map[string]any); !ok {
		return fmt.Errorf("a tool call's arguments are a JSON object, as in {\"query\": \"x\"}, not %s", cutText(engine.JSONText(args)))
	}
	if info == nil || info.InputSchema == nil {
		return nil
	}
	compiled, err := plans.CompileSchema(info.InputSchema)
	if err != nil {
		// A declared schema that does not compile checks nothing when
		// the tool runs either.
		return nil
	}
	e := expectation{schema: &plans.Schema{Raw: info.InputSchema, Compiled: compiled}}
	if problems := e.check(args); problems != "" {
		return fmt.Errorf("the arguments do not fit %s's input schema: %s", st.Tool, problems)
	}
	return nil
}

// Approve makes the session hold, as an approval stop, every call the
// policy holds, breakpoints or not. It is set before Start.
func (s *Session) Approve(a *Approvals) {
	s.approvals = a
}

// acceptsCall checks a decision about the tool call a thread is held
// before: edited arguments against the tool's input schema, and that
// edit, deny and approve are given at a tool call at all (a control
// step's step stop takes none of them).
func acceptsCall(h *held, d engine.Decision) error {
	switch d.Action {
	case engine.Edit:
		return checkArguments(h.stop, listedInfo(h.tool, h.listed), d.Value)
	case engine.Deny, engine.Approve:
		if !isToolCall(h.stop) {
			return errNotToolCall
		}
	}
	return nil
}
