package plans

import (
	"path"
	"slices"
	"strings"

	"github.com/stepwise-dev/stepwise/plans/suggest"
)

// RunIDMeta is the key under which an MCP tool call's _meta carries the id
// of the run making it, so that a server can tell one run's calls from
// another's over a connection that every run of a workbench shares.
const RunIDMeta = "dev.stepwise/run_id"

// ToolInfo describes one tool of the catalog as validation and listings see
// it. Schemas are plain JSON data; nil when the tool declares none.
type ToolInfo struct {
	Name          string // the namespaced name a step uses: user__git_log
	Source        string // builtin, user, plan, an MCP server's name, (control) or (core)
	Description   string
	ReadOnly      *bool // nil when the tool declares no hint
	InputSchema   any
	OutputSchema  any
	OutputExample any
	File          string // the file that defines it, for user tools and plans
	// Kind is a user tool's kind (ToolExec, ToolPrompt, ToolReshape), for
	// the checks that depend on how it runs; empty for every other tool.
	Kind string

	// Unusable says why a listed tool cannot run here (a plan that failed
	// to load, or is hidden by requires_servers); empty when it can.
	Unusable string
}

// Catalog is what the catalog layer of validation resolves names against.
// The engine fills it from the configured project; nothing here connects to
// a server, so MCP names resolve at the server level only.
type Catalog interface {
	// Tools lists every tool known without connecting to anything:
	// builtin__, user__ and plan__ tools.
	Tools() []ToolInfo
	// Servers lists the configured MCP servers.
	Servers() []string
	// Models lists the model names that resolve (roles and named models),
	// or nil when the configuration defines no models to check against.
	Models() []string
}

// ToolHinter is a Catalog that can say more of a name it does not list: a
// tool of a pack that is not enabled, say. The hint follows the name in the
// problem, so it reads "belongs to ...".
type ToolHinter interface {
	UnlistedToolHint(name string) string
}

// Namespaces whose tools the catalog lists exactly; any other namespace is
// an MCP server.
var listedNamespaces = []string{"builtin", "user", "plan"}

// Resolve is the catalog layer: it resolves every step's tool and every
// agent tools pattern against cat. Servers the plan declares in
// requires_servers but this machine lacks are notes, not problems: the plan
// is portable, just not runnable here.
func Resolve(p *Plan, cat Catalog) Report {
	res := &resolver{p: p, cat: cat, tools: map[string]ToolInfo{}}
	for _, t := range cat.Tools() {
		res.tools[t.Name] = t
	}
	res.servers = cat.Servers()
	for _, s := range p.RequiresServers {
		if !slices.Contains(res.servers, s.Value) {
			res.r.note(CodeMissingServer, s.Pos, "", "requires MCP server '%s', which is not configured under [mcp.%s]", s.Value, s.Value)
		}
	}
	WalkSteps(p, res.step)
	res.r.Sort()
	return res.r
}

type resolver struct {
	p       *Plan
	cat     Catalog
	tools   map[string]ToolInfo
	servers []string
	r       Report
}

func (res *resolver) declared(server string) bool {
	return slices.ContainsFunc(res.p.RequiresServers, func(f Field[string]) bool { return f.Value == server })
}

func (res *resolver) step(s *Step) {
	name := s.ToolName.Value
	if s.ToolName.Set && !IsControl(name) && validToolName(name) && !strings.HasPrefix(name, "workbench__") {
		res.tool(name, s.ToolName.Pos, s.Path)
		if t, ok := res.tools[name]; ok && t.Unusable == "" {
			res.inputKeys(t, s)
			res.timeout(t, s)
		}
	}
	switch c := s.Control.(type) {
	case *AgentInput:
		if c.Tools != nil {
			for _, pat := range c.Tools.Patterns {
				res.pattern(pat, s.Path)
			}
		}
		if c.Model.Set {
			res.model(c.Model.Value, c.Model.Pos, s.Path)
		}
	case *ExitInput:
		res.conditionModel(c.Condition, s.Path)
	case *DecideInput:
		res.conditionModel(c.Condition, s.Path)
	case *FilterInput:
		res.conditionModel(c.Condition, s.Path)
	}
}

// inputKeys checks a step's input against the keys its tool's input_schema
// names: every required key present, and no key the schema does not have
// when it allows no others. Values are templates until the run, so their
// types wait for dispatch; the keys are written out and checkable now.
func (res *resolver) inputKeys(t ToolInfo, s *Step) {
	schema, _ := t.InputSchema.(map[string]any)
	if schema == nil || s.Input == nil || s.Input.Kind != Map {
		return
	}
	props, _ := schema["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	slices.Sort(names)
	required, _ := schema["required"].([]any)
	for _, r := range required {
		if key, ok := r.(string); ok && s.Input.Get(key) == nil {
			res.r.problem(CodeMissingField, s.Input.Pos(), s.Path, "tool '%s' needs input '%s' (its input_schema requires it)", t.Name, key)
		}
	}
	if closed, _ := schema["additionalProperties"].(bool); schema["additionalProperties"] != nil && !closed {
		for _, e := range s.Input.Map() {
			if _, known := props[e.Key]; !known {
				res.r.problem(CodeUnknownField, e.KeyPos(), s.Path, "tool '%s' takes no input '%s'%s (inputs: %s)", t.Name, e.Key, suggest.DidYouMean(e.Key, names), strings.Join(names, ", "))
			}
		}
	}
}

// timeout refuses a step's timeout_secs on a user tool it would not bound:
// only an exec tool honours it (control steps, builtin__ and plan__ tools
// are refused at load, by name alone). The message names the bounds that
// do apply to the tool.
func (res *resolver) timeout(t ToolInfo, s *Step) {
	if !s.TimeoutSecs.Set {
		return
	}
	var bounds string
	switch t.Kind {
	case ToolPrompt:
		bounds = "its model call is bounded by [settings] llm_timeout_seconds and llm_idle_timeout_seconds"
	case ToolReshape:
		bounds = "it builds its value in process, bounded in size by [limits] value_bytes"
	default:
		return
	}
	res.r.problem(CodeInvalidValue, s.TimeoutSecs.Pos, s.Path,
		"'timeout_secs' bounds the call of an exec or MCP tool, and %s is a %s tool: remove it (%s)", t.Name, t.Kind, bounds)
}

func (res *resolver) conditionModel(c Condition, path string) {
	if m := c.Model; m != nil && m.Kind == String && m.Template() == nil && c.Infer != nil {
		res.model(m.String, m.Pos(), path)
	}
}

// tool resolves a step's catalog tool.
func (res *resolver) tool(name string, pos Pos, path string) {
	ns, _, _ := strings.Cut(name, "__")
	if slices.Contains(listedNamespaces, ns) {
		t, ok := res.tools[name]
		switch {
		case !ok:
			res.r.problem(CodeUnresolvedTool, pos, path, "unknown tool '%s'%s", name, res.toolHint(name, ns))
		case t.Unusable != "":
			res.r.problem(CodeUnresolvedTool, pos, path, "tool '%s' cannot run: %s", name, t.Unusable)
		}
		return
	}
	if slices.Contains(res.servers, ns) {
		return
	}
	if res.declared(ns) {
		res.r.note(CodeMissingServer, pos, path, "tool '%s' needs MCP server '%s', which is not configured under [mcp.%s] (declared in requires_servers)", name, ns, ns)
		return
	}
	res.r.problem(CodeUnresolvedTool, pos, path, "tool '%s' needs MCP server '%s', which is not configured under [mcp.%s]%s", name, ns, ns, res.serverHint(ns))
}

func (res *resolver) toolHint(name, ns string) string {
	if h, ok := res.cat.(ToolHinter); ok {
		if hint := h.UnlistedToolHint(name); hint != "" {
			return ": it " + hint
		}
	}
	var same []string
	for n := range res.tools {
		if strings.HasPrefix(n, ns+"__") {
			same = append(same, n)
		}
	}
	slices.Sort(same)
	if s := suggest.Closest(name, same); s != "" {
		return "; did you mean '" + s + "'?"
	}
	if len(same) == 0 {
		return " (there are no " + ns + "__ tools)"
	}
	if len(same) > 12 {
		same = append(same[:12], "…")
	}
	return " (" + ns + "__ tools: " + strings.Join(same, ", ") + ")"
}

func (res *resolver) serverHint(ns string) string {
	if s := suggest.Closest(ns, res.servers); s != "" {
		return "; did you mean '" + s + "'?"
	}
	return ""
}

// pattern resolves an agent tools pattern: builtin__, user__ and plan__
// patterns against the listed tools, others at the MCP server level.
func (res *resolver) pattern(pat Field[string], stepPath string) {
	p := pat.Value
	if code, _ := patternProblem(p); code != "" {
		return // reported by the static layer
	}
	ns, _, hasNS := strings.Cut(p, "__")
	if !hasNS {
		ns = p
	}
	matchesTool := false
	for n := range res.tools {
		if ok, _ := path.Match(p, n); ok {
			matchesTool = true
			break
		}
	}
	switch {
	case !strings.Contains(ns, "*") && slices.Contains(listedNamespaces, ns):
		if !matchesTool {
			res.r.problem(CodeUnresolvedPattern, pat.Pos, stepPath, "`tools` pattern '%s' matches no tool%s", p, res.toolHint(p, ns))
			return
		}
		if t, ok := res.tools[p]; ok && t.Unusable != "" {
			res.r.problem(CodeUnresolvedTool, pat.Pos, stepPath, "`tools` names '%s', which cannot run: %s", p, t.Unusable)
		}
	case !strings.Contains(ns, "*"):
		if slices.Contains(res.servers, ns) {
			return
		}
		if res.declared(ns) {
			res.r.note(CodeMissingServer, pat.Pos, stepPath, "`tools` pattern '%s' needs MCP server '%s', which is not configured under [mcp.%s] (declared in requires_servers)", p, ns, ns)
			return
		}
		res.r.problem(CodeUnresolvedPattern, pat.Pos, stepPath, "`tools` pattern '%s' needs MCP server '%s', which is not configured under [mcp.%s]%s", p, ns, ns, res.serverHint(ns))
	default:
		if matchesTool || slices.ContainsFunc(res.servers, func(s string) bool { ok, _ := path.Match(ns, s); return ok }) {
			return
		}
		res.r.problem(CodeUnresolvedPattern, pat.Pos, stepPath, "`tools` pattern '%s' matches no tool and no configured MCP server", p)
	}
}

// model notes a model name the configuration does not define. It is a note,
// not a problem: the name may be configured where the plan runs.
func (res *resolver) model(name string, pos Pos, path string) {
	models := res.cat.Models()
	if models == nil || slices.Contains(models, name) {
		return
	}
	res.r.note(CodeUnknownModel, pos, path, "model '%s' is not a role or a named model in this configuration (configured: %s), so the call would fail here%s", name, strings.Join(models, ", "), suggest.DidYouMean(name, models))
}
