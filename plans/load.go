package plans

import (
	"math"
	"slices"
	"strings"

	"github.com/stepwise-dev/stepwise/plans/suggest"
	"github.com/stepwise-dev/stepwise/plans/yamlpos"
)

// ReservedRoots are the template roots no step id may shadow.
var ReservedRoots = []string{"input", "item", "index", "accumulator", "length"}

var (
	planFields   = []string{"identifier", "name", "description", "exemplars", "requires_servers", "read_only", "input_schema", "steps", "solver", "output"}
	stepFields   = []string{"id", "tool_name", "input", "reasoning", "timeout_secs"}
	callFields   = []string{"tool_name", "input", "reasoning", "timeout_secs"}
	solverFields = []string{"query_to_answer", "system_prompt", "data"}
)

// Dialect is the kind of project a plan or tool file belongs to, which
// decides what a field the grammar does not have is.
type Dialect int

const (
	// Stepwise files (a .stepwise project, or none) have every unknown
	// field reported as a problem: a typo must not pass silently.
	Stepwise Dialect = iota
	// Graph files (a .graph project) open as graph opens them: graph
	// ignores unknown fields in plans, steps, the solver and tool files,
	// and needs no tool schema compiled but a prompt tool's output_schema,
	// so those are notes there.
	Graph
)

// Load parses and statically checks a plan file of the given dialect:
// everything that needs nothing but the file itself. The plan is returned
// whenever the file is YAML, even with problems, so that tools can still
// show what is there; it is nil only when the file does not parse.
func Load(file string, src []byte, dialect Dialect) (*Plan, Report) {
	var r Report
	// One copy of the text, which the plan's strings are slices of.
	text := string(src)
	root, release, ok := parseDocument(file, text, planDocument, &r)
	if !ok {
		return nil, r
	}
	d := newDecoder(file, text, &r, dialect)
	p := d.plan(root)
	// The plan holds no node: its values are copied out of them.
	release()
	if p != nil {
		check(p, &r, d.steps)
	}
	r.Sort()
	return p, r
}

// documentKind names what a file holds, for the problems about the file as
// a whole.
type documentKind struct {
	name  string // "a plan file"
	needs string // what an empty one is missing
}

var (
	planDocument = documentKind{name: "a plan file", needs: "a plan needs identifier, name, description and steps"}
	toolDocument = documentKind{name: "a tool file", needs: "a tool file needs name, description and kind"}
)

// parseDocument reads the one YAML document of a plan or tool file through
// the YAML layer, and reports what it refuses in the words of the file's
// kind. release hands the tree's memory back (see yamlpos.Read).
func parseDocument(file string, src string, kind documentKind, r *Report) (root *yamlpos.Node, release func(), ok bool) {
	root, second, syntax, release := yamlpos.Read(file, src)
	if syntax != nil {
		r.Problems = append(r.Problems, Problem{Code: CodeYAMLSyntax, Message: syntax.Message, Pos: syntax.Pos})
	}
	if second != nil {
		r.problem(CodeYAMLSyntax, nodePos(file, second), "", "%s holds one YAML document; move this one to a file of its own", kind.name)
	}
	if root == nil {
		if syntax == nil {
			r.problem(CodeYAMLSyntax, Pos{File: file, Line: 1, Col: 1}, "", "the file is empty; %s", kind.needs)
		}
		release()
		return nil, nil, false
	}
	if !checkAliases(file, root, r) {
		release()
		return nil, nil, false
	}
	return root, release, true
}

// hasAlias reports whether the tree under n holds an alias: most plans have
// none, and a plain walk is much cheaper than checkAliases's memoised one.
func hasAlias(n *yamlpos.Node) bool {
	if n.Kind == yamlpos.AliasNode {
		return true
	}
	for _, c := range n.Content() {
		if hasAlias(c) {
			return true
		}
	}
	return false
}

// maxAliasGrowth is how many values aliases may add to a document beyond
// those it spells out (and beyond as many again as it spells out), so that
// a plan with a few shared blocks loads while a file of nested aliases that
// expands exponentially ("billion laughs") is refused before decoding.
const maxAliasGrowth = 100_000

// checkAliases walks the document the way decoding will, aliases followed,
// before decoding starts. Decoding follows every alias, so an alias inside
// the value it names would recurse until the stack overflows, and nested
// aliases would make it expand a small file exponentially. The walk
// memoises each node's expanded size, so it is linear in the file.
func checkAliases(file string, root *yamlpos.Node, r *Report) bool {
	if !hasAlias(root) {
		return true
	}
	const inProgress = -1
	sizes := map[*yamlpos.Node]int{} // expanded size of each node, or inProgress
	var cycle *yamlpos.Node
	aliases := 0
	var walk func(n *yamlpos.Node) int
	walk = func(n *yamlpos.Node) int {
		if cycle != nil || n == nil {
			return 0
		}
		target := n
		if n.Kind == yamlpos.AliasNode {
			aliases++
			if target = n.Alias(); target == nil {
				return 1
			}
		}
		switch size, seen := sizes[target]; {
		case seen && size == inProgress:
			cycle = n
			return 0
		case seen:
			return size
		}
		sizes[target] = inProgress
		total := 1
		for _, c := range target.Content() {
			total = min(total+walk(c), math.MaxInt32)
		}
		sizes[target] = total
		return total
	}
	expanded := walk(root)
	if cycle != nil {
		r.problem(CodeYAMLSyntax, nodePos(file, cycle), "", "alias *%s refers to a value that contains it; a value cannot contain itself", cycle.Value)
		return false
	}
	if written := len(sizes) + aliases; expanded-written > maxAliasGrowth+written {
		r.problem(CodeYAMLSyntax, nodePos(file, root), "", "aliases expand this file from the %d values it spells out to more than %d; write the repeated parts out instead", written, 2*written+maxAliasGrowth)
		return false
	}
	return true
}

func (d *decoder) plan(root *yamlpos.Node) *Plan {
	o, ok := d.openObject(root, "a plan", "", planFields)
	if !ok {
		return nil
	}
	p := &Plan{File: d.file, Pos: d.pos(root)}
	for _, name := range []string{"identifier", "name", "description", "steps"} {
		o.require(name)
	}
	p.Identifier = o.str("identifier")
	if p.Identifier.Set && !ValidIdentifier(p.Identifier.Value) {
		d.r.problem(CodeInvalidValue, p.Identifier.Pos, "", "identifier '%s' must be tool-name-safe: letters, digits, '_' and '-' only (it becomes plan__%s)", p.Identifier.Value, p.Identifier.Value)
	}
	p.Name = o.str("name")
	p.Description = o.str("description")
	p.Exemplars, _ = o.stringList("exemplars")
	p.RequiresServers, _ = o.stringList("requires_servers")
	p.ReadOnly = o.boolean("read_only")
	p.InputSchema = o.schema("input_schema")
	if s := p.InputSchema; s != nil && s.compiles() {
		// A boolean schema (true accepts anything) has no type to check;
		// indexing the nil map it leaves m as is safe.
		m, _ := s.Raw.(map[string]any)
		if t, ok := m["type"]; ok && t != "object" {
			d.r.problem(CodeInvalidSchema, s.Pos, "", "'input_schema' must describe an object (type: object): inputs are read as {{input.<name>}}")
		}
	}
	if n := o.get("steps"); n != nil {
		if n.Kind != yamlpos.SequenceNode {
			d.r.problem(CodeWrongType, d.pos(n), "", "'steps' must be a list of steps, not %s", kindOf(n))
		} else if len(n.Content()) == 0 {
			d.r.problem(CodeNoSteps, d.pos(n), "", "plan has no steps")
		}
		if n.Kind == yamlpos.SequenceNode {
			for _, sn := range n.Content() {
				if s := d.step(sn, topLevel); s != nil {
					p.Steps = append(p.Steps, s)
				}
			}
		}
	}
	if o.has("solver") && o.has("output") {
		d.r.problem(CodeExclusiveFields, o.keyPos("output"), "", "'solver' and 'output' are mutually exclusive: a plan finishes with a report or with structured output, not both")
	}
	if n := o.get("solver"); n != nil {
		if so, ok := d.openObject(n, "the solver", "", solverFields); ok {
			// Graph's reference marks both query_to_answer and data
			// required, but its code takes a solver without either (see
			// Solver), and so does stepwise, so its plans open unchanged.
			p.Solver = &Solver{Pos: d.pos(n), QueryToAnswer: so.stringValue("query_to_answer"), SystemPrompt: so.stringValue("system_prompt"), Data: so.mapping("data")}
		}
	}
	p.Output = o.mapping("output")
	return p
}

// container says where a step sits, which decides what it may be and what
// its templates may read.
type container struct {
	prefix string // path prefix of the steps inside: "", "E1/then/", "E2/do.*/"
	owner  *Step  // the control step whose body this is; nil at top level
	field  string // "then", "else" or "do"
}

var topLevel = container{}

func (c container) isBody() bool { return c.owner != nil }

// iterates reports whether the container is a map or reduce body, where
// item and index exist.
func (c container) iterates() bool { return c.field == "do" }

// describe names the container for messages: "a map body", "the then branch".
func (c container) describe() string {
	if c.iterates() {
		return "a " + c.owner.ToolName.Value + " body"
	}
	return "a decide branch"
}

// step decodes one step of a list. Ids are required here; bodies written as
// a single call go through call instead.
func (d *decoder) step(n *yamlpos.Node, c container) *Step {
	// The path comes first, so that every problem of the step, those found
	// while reading its fields included, carries it. Without an id the step
	// has no path of its own; its problems are placed by position, under the
	// body that holds it.
	path := strings.TrimSuffix(c.prefix, "/")
	if id := mappingScalar(n, "id"); id != "" {
		path = c.prefix + id
	}
	o, ok := d.openObject(n, "a step", path, stepFields)
	if !ok {
		return nil
	}
	s := d.newStep(d.pos(resolve(n)), path)
	s.ID = o.str("id")
	if !o.has("id") {
		d.r.problem(CodeMissingField, s.Pos, path, "a step needs 'id' (letters, digits and '_', not starting with a digit)")
	}
	d.stepBody(&o, s, c)
	return s
}

// newStep returns a Step at pos with the given path, cut from a slab.
func (d *decoder) newStep(pos Pos, path string) *Step {
	s := &d.slabs.steps.take(1)[0]
	s.Pos, s.Path = pos, path
	d.steps++
	return s
}

// mappingScalar returns the scalar text under key in a mapping node, or "".
func mappingScalar(n *yamlpos.Node, key string) string {
	n = resolve(n)
	if n == nil || n.Kind != yamlpos.MappingNode {
		return ""
	}
	n, _ = expandMerges(n)
	content := n.Content()
	for i := 0; i+1 < len(content); i += 2 {
		if resolve(content[i]).Value == key {
			if v := resolve(content[i+1]); v.Kind == yamlpos.ScalarNode {
				return v.Value
			}
		}
	}
	return ""
}

// call decodes the single tool call of a body written as a mapping.
func (d *decoder) call(n *yamlpos.Node, path string, c container) *Step {
	n = resolve(n)
	if n != nil && n.Kind == yamlpos.MappingNode {
		content := n.Content()
		for i := 0; i+1 < len(content); i += 2 {
			if resolve(content[i]).Value == "id" {
				d.r.problem(CodeUnknownField, d.pos(content[i]), path, "a single-call body has no id; to name its step, write the body as a list of steps")
			}
		}
	}
	o, ok := d.openObject(stripKey(n, "id"), "a body call", path, callFields)
	if !ok {
		return nil
	}
	s := d.newStep(d.pos(n), path)
	d.stepBody(&o, s, c)
	return s
}

// stripKey returns a copy of a mapping node without key, so that a problem
// already reported for it is not reported again as an unknown field; the
// node itself when it has no such key, as it mostly has not.
func stripKey(n *yamlpos.Node, key string) *yamlpos.Node {
	if n == nil || n.Kind != yamlpos.MappingNode {
		return n
	}
	content := n.Content()
	if !slices.ContainsFunc(content, func(k *yamlpos.Node) bool { return resolve(k).Value == key }) {
		return n
	}
	var kept []*yamlpos.Node
	for i := 0; i+1 < len(content); i += 2 {
		if resolve(content[i]).Value != key {
			kept = append(kept, content[i], content[i+1])
		}
	}
	cp := *n
	cp.SetContent(kept)
	return &cp
}

// stepBody decodes what steps and body calls share: tool_name, input,
// reasoning, and the control grammar.
func (d *decoder) stepBody(o *object, s *Step, c container) {
	o.require("tool_name")
	s.ToolName = o.str("tool_name")
	s.Reasoning = o.str("reasoning")
	s.TimeoutSecs = o.wholeNumber("timeout_secs")
	if s.ToolName.Set {
		d.checkToolName(s, c)
	}
	if name := s.ToolName.Value; s.TimeoutSecs.Set && (IsControl(name) || strings.HasPrefix(name, "builtin__") || strings.HasPrefix(name, "plan__")) {
		d.r.problem(CodeInvalidValue, s.TimeoutSecs.Pos, s.Path,
			"'timeout_secs' bounds the call of an exec or MCP tool, and %s is neither: remove it (an agent step bounds its calls with tool_timeout and llm_timeout_seconds in its input)", name)
	}
	o.require("input")
	in := o.get("input")
	if in == nil {
		return
	}
	if !IsControl(s.ToolName.Value) {
		if in.Kind != yamlpos.MappingNode {
			d.r.problem(CodeWrongType, d.pos(in), s.Path, "'input' must be a mapping of the tool's arguments, not %s", kindOf(in))
		}
		s.Input = d.value(in, s.Path, true)
		return
	}
	// The grammar decodes the input's parts first, and the input as
	// written, kept for showing, takes their values; its problems are the
	// grammar's to report, once.
	outermost := !d.parts.recording
	if outermost {
		d.parts.recording = true
		if d.parts.byNode == nil {
			d.parts.byNode = map[*yamlpos.Node]*Value{}
		}
	}
	s.Control = d.control(in, s, c)
	s.Input = d.asWrittenDecoder().value(in, s.Path, false)
	if outermost {
		d.parts.recording = false
		d.parts.reset()
	}
}

// checkToolName checks the form of a tool name and where control steps may
// appear; whether a catalog tool exists is the catalog layer's business.
func (d *decoder) checkToolName(s *Step, c container) {
	name, pos := s.ToolName.Value, s.ToolName.Pos
	switch {
	case IsControl(name):
		if !c.isBody() {
			return
		}
		switch name {
		case ControlDecide, ControlMap, ControlReduce:
			d.r.problem(CodeNestedControl, pos, s.Path, "%s cannot appear inside %s; for nested control flow, put it in a plan and call it as plan__<identifier>", name, c.describe())
		case ControlExit:
			if c.iterates() {
				d.r.problem(CodeNestedControl, pos, s.Path, "exit cannot appear inside %s (it may appear in a decide branch); to stop on a condition, filter first or exit after the %s", c.describe(), c.owner.ToolName.Value)
			}
		}
	case name == PlannerTool:
		d.r.note(CodeUnsupportedTool, pos, s.Path, "plan_and_execute (the LLM planner) is not available in stepwise yet; this step fails if it runs")
	case strings.HasPrefix(name, "workbench__"):
		d.r.problem(CodeWorkbenchTool, pos, s.Path, "'%s' is a workbench tool: workbench__* tools exist only inside the workbench's chat agent, never in a plan", name)
	case !validToolName(name):
		hint := suggest.DidYouMean(name, ControlSteps)
		if hint == "" {
			hint = "; catalog tools are namespaced (server__tool, user__name, builtin__name, plan__identifier), control steps are " + strings.Join(ControlSteps, ", ")
		}
		d.r.problem(CodeMalformedToolName, pos, s.Path, "'%s' is not a tool name%s", name, hint)
	}
}

// body decodes then, else or do: a single call (a mapping) or a list of
// steps.
func (d *decoder) body(n *yamlpos.Node, owner *Step, field string) *Body {
	n = resolve(n)
	c := container{owner: owner, field: field}
	// The path is the prefix without its '/', one string for both.
	c.prefix = owner.Path + "/" + bodySegment(field) + "/"
	path := c.prefix[:len(c.prefix)-1]
	b := &Body{Pos: d.pos(n)}
	switch {
	case n == nil:
		return nil
	case n.Kind == yamlpos.MappingNode:
		b.Single = true
		if s := d.call(n, path, c); s != nil {
			b.Steps = []*Step{s}
		}
	case n.Kind == yamlpos.SequenceNode:
		if len(n.Content()) == 0 {
			d.r.problem(CodeMissingField, d.pos(n), owner.Path, "'%s' is an empty list; a body needs a tool call or at least one step", field)
		}
		if len(n.Content()) > 0 {
			b.Steps = make([]*Step, 0, len(n.Content()))
		}
		for _, sn := range n.Content() {
			if s := d.step(sn, c); s != nil {
				b.Steps = append(b.Steps, s)
			}
		}
	default:
		d.r.problem(CodeWrongType, d.pos(n), owner.Path, "'%s' must be a tool call ({tool_name, input}) or a list of steps, not %s", field, kindOf(n))
		return nil
	}
	return b
}

// ValidIdentifier reports whether s may be a plan's identifier: it becomes
// the tool name plan__<identifier>, so letters, digits, '_' and '-' only.
func ValidIdentifier(s string) bool { return madeOf(s, identifierByte) }
