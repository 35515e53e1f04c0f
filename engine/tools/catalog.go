// Package tools is the tool catalog of a project: the always-on builtin
// packs and the opt-in ones [tools] packs enables (github, slack), user
// tools from the tools directories, a plan__ tool for every plan on the plan
// paths, and the configured MCP servers. It is what the catalog layer of
// validation resolves against (it implements plans.Catalog) and what
// `stepwise tools` lists. A Runtime runs the tools that live outside the
// engine: exec and reshape tools, builtin__reshape, the opt-in packs' tools,
// and MCP servers' tools over stdio or streamable HTTP.
package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/stepwise-dev/stepwise/engine/config"
	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/plans/suggest"
)

// Catalog is the loaded catalog of one project. It is built once by Load
// and not changed afterwards.
type Catalog struct {
	tools   []plans.ToolInfo // builtin, user and plan tools, sorted by name
	byName  map[string]int
	servers []string
	models  []string

	userTools map[string]*plans.ToolFile // by catalog name
	packTools map[string]*packTool       // the enabled packs' tools, by catalog name
	toolNotes map[string][]plans.Problem // the notes of a loaded tool file, by catalog name
	planTools map[string]*PlanEntry      // by identifier
	planFiles []string                   // every plan file found, in load order

	// Dialect is how the project's plan and tool files are read: as graph
	// reads them in a .graph project, strictly otherwise.
	Dialect plans.Dialect

	// Skipped lists the files that could not join the catalog, with why;
	// one broken file never takes the rest down.
	Skipped []Skipped

	// resolved is the last plan Resolve was asked about and its report.
	resolved atomic.Pointer[resolution]
}

// resolution is one plan's report from the catalog layer.
type resolution struct {
	plan   *plans.Plan
	report plans.Report
}

// PlanEntry is a plan on the plan paths.
type PlanEntry struct {
	File    string
	Plan    *plans.Plan
	Report  plans.Report // the static layer's report
	Missing []string     // requires_servers that are not configured
}

// Skipped is a file left out of the catalog.
type Skipped struct {
	File       string
	Identifier string // the plan's identifier when the file got that far
	Tool       string // a tool file's catalog name (user__<name>) when the file got that far
	Reason     string // one line: the first problem, or the duplicate it lost to
}

// Load builds the catalog of the project cfg describes. Tool and plan files
// load in sorted order per directory, directories in the order configured;
// the first definition of a name wins and later ones are skipped.
func Load(cfg *config.Config) *Catalog {
	c := &Catalog{byName: map[string]int{}, userTools: map[string]*plans.ToolFile{}, toolNotes: map[string][]plans.Problem{}, planTools: map[string]*PlanEntry{}}
	if cfg.Project != nil && cfg.Project.Kind == config.KindGraph {
		c.Dialect = plans.Graph
	}
	c.servers = cfg.MCPServerNames()
	if names := cfg.ModelNames(); len(names) > 0 {
		c.models = names
	}
	tools := builtinTools()
	packs, err := enabledPackTools(cfg.Tools.Packs)
	if err != nil {
		// config.Load refuses an unknown pack with its file and line; a
		// Config built another way still must not lose the name silently.
		c.Skipped = append(c.Skipped, Skipped{Reason: err.Error()})
	}
	c.packTools = packs
	for _, t := range packs {
		tools = append(tools, t.info)
	}
	for _, file := range yamlFiles(cfg.Tools.Paths) {
		t, ok := c.loadUserTool(file)
		if ok {
			info := userToolInfo(t)
			info.Unusable = c.promptModelProblem(t)
			tools = append(tools, info)
		}
	}
	for _, file := range yamlFiles(cfg.Plans.Paths) {
		c.loadPlan(file)
	}
	for _, e := range c.planTools {
		tools = append(tools, planToolInfo(e))
	}
	// A plan or tool whose file has problems still has a name: listing it
	// as unusable lets a step calling it say why it cannot run, instead of
	// calling it unknown.
	listed := func(name string) bool {
		return slices.ContainsFunc(tools, func(t plans.ToolInfo) bool { return t.Name == name })
	}
	for _, sk := range c.Skipped {
		if _, loaded := c.planTools[sk.Identifier]; sk.Identifier != "" && !loaded && !listed("plan__"+sk.Identifier) {
			tools = append(tools, plans.ToolInfo{Name: "plan__" + sk.Identifier, Source: "plan", File: sk.File,
				Unusable: fmt.Sprintf("plan '%s' has problems (first: %s); stepwise validate %s lists them all", sk.Identifier, sk.Reason, sk.Identifier)})
		}
		if _, loaded := c.userTools[sk.Tool]; sk.Tool != "" && !loaded && !listed(sk.Tool) {
			tools = append(tools, plans.ToolInfo{Name: sk.Tool, Source: "user", File: sk.File,
				Unusable: fmt.Sprintf("its tool file has problems (first: %s)", sk.Reason)})
		}
	}
	sort.Slice(tools, func(i, j int) bool { return tools[i].Name < tools[j].Name })
	c.tools = tools
	for i, t := range tools {
		c.byName[t.Name] = i
	}
	c.markUnusablePlans()
	return c
}

// promptModelProblem says why a prompt tool's model cannot be called here,
// or "" when it can (or when no models are configured to check it against:
// then every model call fails alike, and says so).
func (c *Catalog) promptModelProblem(t *plans.ToolFile) string {
	if t.Kind.Value != plans.ToolPrompt || c.models == nil {
		return ""
	}
	name := t.Model.Value
	if name == "" {
		name = "chat"
	}
	if slices.Contains(c.models, name) {
		return ""
	}
	return fmt.Sprintf("its model '%s' is not configured%s (models: %s)", name, suggest.DidYouMean(name, c.models), strings.Join(c.models, ", "))
}

// yamlFiles lists the .yaml and .yml files of each directory, sorted within
// a directory, directories in order. A directory that does not exist holds
// nothing.
// Files lists the files a catalog for cfg reads: the tool files on the
// tool paths, then the plan files on the plan paths. A front end that
// notices one come, go or change loads the catalog again.
func Files(cfg *config.Config) []string {
	return append(yamlFiles(cfg.Tools.Paths), yamlFiles(cfg.Plans.Paths)...)
}

func yamlFiles(dirs []string) []string {
	var out []string
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if ext := filepath.Ext(e.Name()); !e.IsDir() && (ext == ".yaml" || ext == ".yml") {
				out = append(out, filepath.Join(dir, e.Name()))
			}
		}
	}
	return out
}

func (c *Catalog) loadUserTool(file string) (*plans.ToolFile, bool) {
	src, err := os.ReadFile(file)
	if err != nil {
		c.Skipped = append(c.Skipped, Skipped{File: file, Reason: err.Error()})
		return nil, false
	}
	t, r := plans.LoadToolFile(file, src, c.Dialect)
	if !r.OK() || t == nil {
		sk := Skipped{File: file, Reason: firstProblem(r)}
		if t != nil && t.Name.Set && plans.ValidIdentifier(t.Name.Value) {
			sk.Tool = t.ToolName()
		}
		c.Skipped = append(c.Skipped, sk)
		return nil, false
	}
	if prev, dup := c.userTools[t.ToolName()]; dup {
		c.Skipped = append(c.Skipped, Skipped{File: file, Reason: fmt.Sprintf("%s is already defined by %s", t.ToolName(), prev.File)})
		return nil, false
	}
	c.userTools[t.ToolName()] = t
	if len(r.Notes) > 0 {
		c.toolNotes[t.ToolName()] = r.Notes
	}
	return t, true
}

func (c *Catalog) loadPlan(file string) {
	src, err := os.ReadFile(file)
	if err != nil {
		c.Skipped = append(c.Skipped, Skipped{File: file, Reason: err.Error()})
		return
	}
	c.planFiles = append(c.planFiles, file)
	p, r := plans.Load(file, src, c.Dialect)
	if p == nil || !r.OK() || !p.Identifier.Set {
		sk := Skipped{File: file, Reason: firstProblem(r)}
		if p != nil {
			sk.Identifier = p.Identifier.Value
		}
		c.Skipped = append(c.Skipped, sk)
		return
	}
	id := p.Identifier.Value
	if prev, dup := c.planTools[id]; dup {
		c.Skipped = append(c.Skipped, Skipped{File: file, Identifier: id, Reason: fmt.Sprintf("plan '%s' is already defined by %s", id, prev.File)})
		return
	}
	e := &PlanEntry{File: file, Plan: p, Report: r}
	for _, s := range p.RequiresServers {
		if !slices.Contains(c.servers, s.Value) {
			e.Missing = append(e.Missing, s.Value)
		}
	}
	c.planTools[id] = e
}

func firstProblem(r plans.Report) string {
	if len(r.Problems) == 0 {
		return "not a plan"
	}
	return r.Problems[0].String()
}

// markUnusablePlans marks the plan__ tools that cannot run: hidden by
// requires_servers, or (followed transitively) calling a tool that does not
// resolve. It repeats until nothing changes, since one plan becoming
// unusable can make its callers unusable.
func (c *Catalog) markUnusablePlans() {
	for changed := true; changed; {
		changed = false
		for id, e := range c.planTools {
			i := c.byName["plan__"+id]
			if c.tools[i].Unusable != "" {
				continue
			}
			why := ""
			if len(e.Missing) > 0 {
				why = fmt.Sprintf("plan '%s' is hidden: it requires MCP servers that are not configured: %s", id, strings.Join(e.Missing, ", "))
			} else if r := plans.Resolve(e.Plan, c); len(r.Problems) > 0 { // not c.Resolve: the catalog is still changing
				why = fmt.Sprintf("plan '%s' does not resolve: %s", id, r.Problems[0].String())
			}
			if why != "" {
				c.tools[i].Unusable = why
				changed = true
			}
		}
	}
}

func userToolInfo(t *plans.ToolFile) plans.ToolInfo {
	info := plans.ToolInfo{Name: t.ToolName(), Source: "user", Description: t.Description.Value, File: t.File, Kind: t.Kind.Value}
	if ro, declared := t.IsReadOnly(); declared {
		info.ReadOnly = &ro
	}
	if t.InputSchema != nil {
		info.InputSchema = t.InputSchema.Raw
	}
	if t.OutputSchema != nil {
		info.OutputSchema = t.OutputSchema.Raw
	}
	if t.OutputExample != nil {
		info.OutputExample = t.OutputExample.Literal()
	}
	return info
}

func planToolInfo(e *PlanEntry) plans.ToolInfo {
	p := e.Plan
	desc := p.Description.Value
	if len(p.Exemplars) > 0 {
		var ex []string
		for _, x := range p.Exemplars {
			ex = append(ex, "\""+x.Value+"\"")
		}
		desc += "\nExamples: " + strings.Join(ex, "; ")
	}
	info := plans.ToolInfo{Name: "plan__" + p.Identifier.Value, Source: "plan", Description: desc, File: e.File}
	if p.InputSchema != nil {
		info.InputSchema = p.InputSchema.Raw
	}
	if p.ReadOnly.Set {
		ro := p.ReadOnly.Value
		info.ReadOnly = &ro
	}
	return info
}

// Resolve is plans.Resolve against this catalog, worked out once per plan:
// a plan is checked and then run, or run again and again, against the same
// catalog, and a loaded plan does not change any more than the catalog
// does. Only the last plan asked about is kept, so a long-lived catalog
// holds on to no more than one. The report is the caller's to change.
func (c *Catalog) Resolve(p *plans.Plan) plans.Report {
	if last := c.resolved.Load(); last != nil && last.plan == p {
		return cloneReport(last.report)
	}
	r := plans.Resolve(p, c)
	c.resolved.Store(&resolution{plan: p, report: cloneReport(r)})
	return r
}

func cloneReport(r plans.Report) plans.Report {
	return plans.Report{Problems: slices.Clone(r.Problems), Notes: slices.Clone(r.Notes)}
}

// Tools lists the builtin, user and plan tools (plans.Catalog).
func (c *Catalog) Tools() []plans.ToolInfo { return c.tools }

// Servers lists the configured MCP servers (plans.Catalog).
func (c *Catalog) Servers() []string { return c.servers }

// Models lists the model names that resolve, nil when none are configured
// (plans.Catalog).
func (c *Catalog) Models() []string { return c.models }

// Tool returns a listed tool or a control step by name.
func (c *Catalog) Tool(name string) (plans.ToolInfo, bool) {
	if i, ok := c.byName[name]; ok {
		return c.tools[i], true
	}
	for _, t := range ControlTools() {
		if t.Name == name {
			return t, true
		}
	}
	return plans.ToolInfo{}, false
}

// Plan returns the plan with the given identifier.
func (c *Catalog) Plan(identifier string) (*PlanEntry, bool) {
	e, ok := c.planTools[identifier]
	return e, ok
}

// PlanEntries lists the plans of the catalog sorted by identifier.
func (c *Catalog) PlanEntries() []*PlanEntry {
	out := make([]*PlanEntry, 0, len(c.planTools))
	for _, e := range c.planTools {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Plan.Identifier.Value < out[j].Plan.Identifier.Value })
	return out
}

// SkippedPlan returns the file of a plan that was left out of the catalog,
// by identifier: validate and the workbench open it all the same, since it
// is exactly the plan that needs looking at.
func (c *Catalog) SkippedPlan(identifier string) (string, bool) {
	for _, sk := range c.Skipped {
		if sk.Identifier == identifier {
			return sk.File, true
		}
	}
	// A file that does not parse has no identifier to go by; its name is
	// the next best thing.
	for _, file := range c.planFiles {
		if strings.TrimSuffix(filepath.Base(file), filepath.Ext(file)) == identifier {
			if _, loaded := c.planTools[identifier]; !loaded {
				return file, true
			}
		}
	}
	return "", false
}

// PlanFiles lists every plan file on the plan paths in load order, the
// skipped ones included.
func (c *Catalog) PlanFiles() []string { return c.planFiles }

// UserTool returns a user tool by catalog name.
func (c *Catalog) UserTool(name string) (*plans.ToolFile, bool) {
	t, ok := c.userTools[name]
	return t, ok
}

// ToolNotes returns the notes of a user tool's file (in a graph project,
// the fields graph ignores), so that a plan calling the tool can show them.
func (c *Catalog) ToolNotes(name string) []plans.Problem { return c.toolNotes[name] }

// Listing is the step vocabulary for `stepwise tools list` that is known
// without connecting: control steps first, then every listed tool by name.
// MCP servers' own tools need a connection; Runtime.ServerTools has them.
func (c *Catalog) Listing() []plans.ToolInfo {
	return append(ControlTools(), c.tools...)
}

// CallCycle follows the plan__ calls of p through the catalog's plans and
// returns the first chain of calls that leads back to p, as identifiers
// ("a", "b", "a"), or nil. A cycle fails when the run reaches it; one
// behind a branch may never be reached, so it is for a note, not a problem.
func (c *Catalog) CallCycle(p *plans.Plan) []string {
	start := p.Identifier.Value
	var chain []string
	visited := map[string]bool{}
	var visit func(*plans.Plan) bool
	visit = func(q *plans.Plan) bool {
		chain = append(chain, q.Identifier.Value)
		found := false
		plans.WalkSteps(q, func(s *plans.Step) {
			callee, ok := strings.CutPrefix(s.ToolName.Value, "plan__")
			if found || !ok {
				return
			}
			if callee == start {
				chain = append(chain, callee)
				found = true
				return
			}
			if e, known := c.planTools[callee]; known && !visited[callee] {
				visited[callee] = true
				found = visit(e.Plan)
			}
		})
		if !found {
			chain = chain[:len(chain)-1]
		}
		return found
	}
	if visit(p) {
		return chain
	}
	return nil
}
