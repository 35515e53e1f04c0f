package plans

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/stepwise-dev/stepwise/plans/yamlpos"
)

// This file writes plan text for the workbench's authoring commands: a new
// plan file, a step calling a catalog tool, and the edit that appends such
// a step to a plan file. Edits work on the text, not on a re-encoded tree,
// so that an author's comments, quoting and layout survive them.

// NewPlanSkeleton returns the text of a new plan file with the given
// identifier: a valid plan whose comments teach the format. It needs no
// network and no model: its one step calls builtin__reshape.
func NewPlanSkeleton(identifier string) []byte {
	name := strings.TrimSpace(strings.NewReplacer("_", " ", "-", " ").Replace(identifier))
	if r, size := utf8.DecodeRuneInString(name); size > 0 {
		name = strings.ToUpper(string(r)) + name[size:]
	}
	if name == "" {
		name = "New plan"
	}
	return fmt.Appendf(nil, `# A stepwise plan: steps that run in order, each calling one tool. Run it
# from the workbench, or with: stepwise run %[1]s '{"topic": "plans"}'

# identifier names the plan everywhere: stepwise run <identifier>, and
# plan__<identifier> when another plan or an agent calls this one.
identifier: %[2]s
name: %[3]s
# description is what an agent reads when it chooses between tools, so say
# what the plan does and when to use it.
description: >-
  Greets a topic. Replace this with what the plan does, in a sentence or two.

# input_schema is a JSON Schema for the plan's inputs; they are checked
# before any step runs, and steps read them as {{input.<name>}}.
input_schema:
  type: object
  required: [topic]
  properties:
    topic:
      type: string
      description: What to greet.

# Each step has an id, the tool it calls (the workbench's tool catalog lists
# them), and the tool's input. Strings in an input are templates over the plan's inputs
# and the results of earlier steps: {{input.topic}}, {{E1.message}}. Control
# steps (exit, decide, filter, map, reduce, agent, ask) go here too.
steps:
  - id: E1
    tool_name: builtin__reshape
    reasoning: builtin__reshape builds a value from templates; no model runs.
    input:
      shape:
        message: "Hello, {{input.topic}}!"

# output ends the plan with JSON built from the steps' results. A solver
# (a model writes the answer) is the alternative; with neither, the plan runs
# for its side effects alone.
output:
  message: "{{E1.message}}"
`, shellWord(identifier), yamlScalar(identifier), yamlScalar(name))
}

// shellWord quotes s for the shell command in a comment when it needs it.
func shellWord(s string) string {
	if ValidIdentifier(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// StepSkeleton returns the YAML of one step (a mapping, unindented) that
// calls tool, to be appended to plan p (nil for none). Its input holds the
// tool's required properties with placeholders typed by the tool's
// input_schema (the schema's default, const or first enum value when it
// has one), and the optional properties commented out with their
// descriptions. A control step gets a working input instead (see
// controlInputs), whose every placeholder line says what to replace.
func StepSkeleton(p *Plan, id string, tool ToolInfo) string {
	schema, _ := tool.InputSchema.(map[string]any)
	props, _ := schema["properties"].(map[string]any)
	filled := controlInputs(tool.Name, lastStep(p))
	var required, optional []string
	if req, ok := schema["required"].([]any); ok && filled == nil {
		for _, r := range req {
			if name, ok := r.(string); ok && !slices.Contains(required, name) {
				required = append(required, name)
			}
		}
	}
	for name := range props {
		if !slices.Contains(required, name) && !slices.ContainsFunc(filled, func(l inputLine) bool { return l.key == name }) {
			optional = append(optional, name)
		}
	}
	sort.Strings(optional)
	entry := func(name string) string {
		prop, _ := props[name].(map[string]any)
		line := yamlKey(name) + ": " + placeholder(prop)
		if d, ok := prop["description"].(string); ok && strings.TrimSpace(d) != "" {
			line += "  # " + strings.Join(strings.Fields(d), " ")
		}
		return line
	}

	var b strings.Builder
	fmt.Fprintf(&b, "id: %s\ntool_name: %s\n", yamlScalar(id), yamlScalar(tool.Name))
	switch {
	case filled != nil:
		b.WriteString("input:\n")
		for _, l := range filled {
			b.WriteString("  " + l.key + ": " + l.value + "  # replace: " + l.replace + "\n")
		}
	case len(required) == 0:
		// A mapping of comments alone would be null, which no tool takes.
		b.WriteString("input: {}\n")
		if len(optional) > 0 {
			b.WriteString("  # optional inputs; to give one, replace {} with a mapping:\n")
		}
	default:
		b.WriteString("input:\n")
		for _, name := range required {
			b.WriteString("  " + entry(name) + "\n")
		}
	}
	for _, name := range optional {
		b.WriteString("  # " + entry(name) + "\n")
	}
	return b.String()
}

// inputLine is one line of a control step's skeleton input: a value that
// validates as it is, and what the author is to replace it with.
type inputLine struct {
	key, value, replace string
}

// controlInputs is the input of a control step's skeleton, nil for any
// other tool. Empty placeholders would not do here: a map over "" or a
// decide without a gate fails validation before the author has changed
// anything. So every line is a value that validates and runs: lists and
// gates read the result of the plan's last step (prev; a literal list when
// the plan has none), and bodies call builtin__reshape, the one tool every
// project has. The replace text of each line says what belongs there.
func controlInputs(tool string, prev *Step) []inputLine {
	list, read := "[first, second]", "{{input}}"
	listWhat := "the list to go over, e.g. a list from an earlier step's result"
	if prev != nil {
		list = jsonString("{{" + prev.ID.Value + "." + listField(prev) + "}}")
		read = "{{" + prev.ID.Value + "}}"
		listWhat = "the list to go over, from " + prev.ID.Value + "'s result or another earlier step's"
	}
	value := jsonString(read)
	gate := "{value: " + value + ", op: not_empty}"
	gateWhat := "the gate: value (usually a template) op to, op one of " + strings.Join(GateOps, " ")
	switch tool {
	case ControlExit:
		return []inputLine{
			{"when", "{value: " + value + ", op: empty}", "when the plan ends here (without when, it always does)"},
			{"status", "success", "success or error"},
			{"message", jsonString("Nothing to do."), "the plan's answer, or the error; may use templates"},
		}
	case ControlAsk:
		return []inputLine{
			{"prompt", jsonString("Go ahead?"), "the question for the person running the plan"},
			{"output_schema", "{type: object, required: [go], properties: {go: {type: boolean}}}", "the answer's fields: strings, numbers, booleans or enums"},
		}
	case ControlAgent:
		return []inputLine{
			{"prompt", jsonString("Say what " + read + " is about."), "the task, with the data it needs as templates"},
			{"output_schema", "{type: object, required: [answer], properties: {answer: {type: string}}}", "the JSON Schema the agent's answer must conform to"},
		}
	case ControlDecide:
		return []inputLine{
			{"if", gate, gateWhat},
			{"then", `{tool_name: builtin__reshape, input: {shape: {branch: then}}}`, "the call (no id) or list of steps to run when the gate holds"},
			{"else", `{tool_name: builtin__reshape, input: {shape: {branch: else}}}`, "the call or steps to run otherwise, or remove it"},
		}
	case ControlFilter:
		return []inputLine{
			{"over", list, listWhat},
			{"where", `{value: "{{item}}", op: not_empty}`, "the gate each kept item passes; {{item}} is the item"},
		}
	case ControlMap:
		return []inputLine{
			{"over", list, listWhat},
			{"do", `{tool_name: builtin__reshape, input: {shape: {item: "{{item}}"}}}`, "the call (no id) or list of steps to run per item; {{item}} and {{index}} are the item and its place"},
		}
	case ControlReduce:
		return []inputLine{
			{"over", list, listWhat},
			{"do", `{tool_name: builtin__reshape, input: {shape: {last: "{{item}}", before: "{{accumulator}}"}}}`, "the call or steps that fold {{item}} into {{accumulator}}; its result is the next accumulator"},
		}
	}
	return nil
}

// listField is the field of a step's result most likely to hold a list:
// what map and filter return their lists under, and items otherwise.
func listField(s *Step) string {
	if s.ToolName.Value == ControlMap {
		return "results"
	}
	return "items"
}

// lastStep is the plan's last top-level step with an id, the one whose
// result a new step at the end most likely reads; nil when there is none.
func lastStep(p *Plan) *Step {
	if p == nil {
		return nil
	}
	for i := len(p.Steps) - 1; i >= 0; i-- {
		if p.Steps[i].ID.Set && validStepID(p.Steps[i].ID.Value) {
			return p.Steps[i]
		}
	}
	return nil
}

// placeholder is the value a skeleton gives a property: its default, const
// or first enum value, else the least value a number may take, else the
// empty value of its type.
func placeholder(prop map[string]any) string {
	if v, ok := prop["default"]; ok {
		return yamlFlow(v)
	}
	if v, ok := prop["const"]; ok {
		return yamlFlow(v)
	}
	if e, ok := prop["enum"].([]any); ok && len(e) > 0 {
		return yamlFlow(e[0])
	}
	typ, _ := prop["type"].(string)
	if list, ok := prop["type"].([]any); ok {
		for _, t := range list {
			if s, ok := t.(string); ok && s != "null" {
				typ = s
				break
			}
		}
	}
	switch typ {
	case "number", "integer":
		// An uncommented optional line should validate as it is: a
		// concurrency of 0 would not.
		if v, ok := prop["minimum"]; ok {
			return yamlFlow(v)
		}
		return "0"
	case "boolean":
		return "false"
	case "array":
		return "[]"
	case "object":
		return "{}"
	case "null":
		return "null"
	}
	return `""`
}

var (
	plainKey       = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)
	plainScalar    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_ .-]*$`)
	numberedStepID = regexp.MustCompile(`^([A-Za-z_]+?)([0-9]+)$`)
)

// yamlKey writes a mapping key, quoted when it is not a plain word.
func yamlKey(s string) string {
	if plainKey.MatchString(s) && !yamlReserved(s) {
		return s
	}
	return jsonString(s)
}

// yamlScalar writes a string value: plain when that reads back as the same
// string, double-quoted otherwise.
func yamlScalar(s string) string {
	if plainScalar.MatchString(s) && !strings.HasSuffix(s, " ") && !yamlReserved(s) {
		return s
	}
	return jsonString(s)
}

// yamlReserved reports whether a plain word would read back as something
// other than a string.
func yamlReserved(s string) bool {
	switch strings.ToLower(s) {
	case "true", "false", "null", "yes", "no", "on", "off", "y", "n":
		return true
	}
	return false
}

// jsonString writes s as a JSON string, which is also a YAML double-quoted
// scalar.
func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return `""`
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// yamlFlow writes plain JSON data as one line of YAML flow style, mapping
// keys sorted.
func yamlFlow(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return yamlScalar(x)
	case bool:
		return strconv.FormatBool(x)
	case json.Number:
		return x.String()
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = yamlFlow(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = yamlKey(k) + ": " + yamlFlow(x[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return jsonString(fmt.Sprint(v))
}

// NextStepID proposes an id for a new step that no step of the plan (bodies
// included) uses, in the plan's style: after E1, E2 comes E3, after S10
// comes S11, and a plan whose ids are words gets E1, E2 and so on.
func NextStepID(p *Plan) string {
	used := map[string]bool{}
	prefix := "E"
	if p != nil {
		WalkSteps(p, func(s *Step) { used[s.ID.Value] = true })
		for i := len(p.Steps) - 1; i >= 0; i-- {
			if m := numberedStepID.FindStringSubmatch(p.Steps[i].ID.Value); m != nil {
				prefix = m[1]
				break
			}
		}
	}
	highest := 0
	for id := range used {
		if m := numberedStepID.FindStringSubmatch(id); m != nil && m[1] == prefix {
			if n, err := strconv.Atoi(m[2]); err == nil {
				highest = max(highest, n)
			}
		}
	}
	for n := highest + 1; ; n++ {
		if id := prefix + strconv.Itoa(n); !used[id] {
			return id
		}
	}
}

// EditError says why an edit cannot be made to a plan file, and where. Pos
// has no File: the caller, who knows the file, sets it for a
// file:line:col message.
type EditError struct {
	Pos     Pos
	Message string
}

func (e *EditError) Error() string {
	if loc := e.Pos.String(); loc != "" {
		return loc + ": " + e.Message
	}
	return e.Message
}

// AppendStep returns the plan file src with step (the YAML of one step, a
// mapping, as StepSkeleton writes it) appended at the end of the top-level
// steps list. Everything else stays byte for byte, comments included: the
// step goes after the last line of the last step, at the list's indentation,
// separated by a blank line when the steps are. An empty flow list
// (steps: []) or an empty steps: becomes a block list; a flow list with
// items gets the step in flow style. The result is parsed again before it
// is returned, and an edit that would change anything but the steps list is
// refused. Its errors are *EditError.
func AppendStep(src []byte, step string) ([]byte, error) {
	var stepDoc yaml.Node
	if err := yaml.Unmarshal([]byte(step), &stepDoc); err != nil || len(stepDoc.Content) == 0 || stepDoc.Content[0].Kind != yaml.MappingNode {
		return nil, &EditError{Message: "the step to append is not a YAML mapping"}
	}
	stepNode := stepDoc.Content[0]

	root, err := editableRoot(src)
	if err != nil {
		return nil, err
	}
	key, steps, err := stepsList(root)
	if err != nil {
		return nil, err
	}
	t := newText(src)
	var candidates [][]byte
	switch {
	case steps.Kind == yaml.SequenceNode && steps.Style&yaml.FlowStyle == 0 && len(steps.Content) > 0:
		candidates = t.appendBlock(steps, step)
	case steps.Kind == yaml.SequenceNode:
		candidates, err = t.appendFlow(root, key, steps, step, stepNode)
	case root.Style&yaml.FlowStyle != 0:
		err = &EditError{Pos: Pos{Line: key.Line, Col: key.Column}, Message: "'steps' is empty inside a flow mapping; write steps: [] to append to it"}
	default: // null, as stepsList checked
		candidates, err = t.fillNull(key, steps, step)
	}
	if err != nil {
		return nil, err
	}
	for _, out := range candidates {
		if appended(root, out, len(steps.Content), stepNode) {
			return out, nil
		}
	}
	return nil, &EditError{Pos: Pos{Line: steps.Line, Col: steps.Column}, Message: "cannot append a step here without changing the rest of the file; add it by hand"}
}

// editableRoot parses a plan file the way Load does and returns its
// top-level mapping, as yaml.v3's tree, which the edit reads and compares.
func editableRoot(src []byte) (*yaml.Node, error) {
	var r Report
	checked, release, ok := parseDocument("", string(src), planDocument, &r)
	if ok {
		defer release()
	}
	if len(r.Problems) > 0 {
		p := r.Problems[0]
		return nil, &EditError{Pos: p.Pos, Message: p.Message + "; fix the YAML before adding a step"}
	}
	if !ok {
		return nil, &EditError{Message: "the file is not a plan"}
	}
	if checked.Kind != yamlpos.MappingNode {
		return nil, &EditError{Pos: nodePos("", checked), Message: "a plan file is a mapping (identifier, name, description, steps), not " + kindOf(checked)}
	}
	// The text read as Load reads it, without a problem; yaml.v3's tree
	// of it keeps the anchors the edit compares.
	root, _, _ := yamlpos.Parse("", src)
	return root, nil
}

// stepsList finds the top-level steps key and its value, a sequence or null.
func stepsList(root *yaml.Node) (key, value *yaml.Node, err error) {
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value != "steps" || root.Content[i].Kind != yaml.ScalarNode {
			continue
		}
		key, value = root.Content[i], root.Content[i+1]
		switch {
		case value.Kind == yaml.AliasNode:
			return nil, nil, &EditError{Pos: Pos{Line: value.Line, Col: value.Column}, Message: "'steps' is the alias *" + value.Value + "; write the list out to append a step to it"}
		case value.Kind == yaml.SequenceNode && value.Alias == nil:
			return key, value, nil
		case value.Kind == yaml.ScalarNode && value.ShortTag() == "!!null":
			return key, value, nil
		}
		return nil, nil, &EditError{Pos: Pos{Line: value.Line, Col: value.Column}, Message: "'steps' must be a list of steps, not " + kindName(yamlpos.Kind(value.Kind), yamlpos.TagOf(value.Tag))}
	}
	return nil, nil, &EditError{Pos: Pos{Line: root.Line, Col: root.Column}, Message: "the plan has no 'steps' list; add one (steps:) to append a step to"}
}

// text is a file's text cut into lines, for edits by line.
type text struct {
	src   []byte
	lines []string // without their line ends
	start []int    // byte offset of each line
	nl    string   // the file's line end
}

func newText(src []byte) *text {
	t := &text{src: src, nl: "\n"}
	if i := bytes.IndexByte(src, '\n'); i > 0 && src[i-1] == '\r' {
		t.nl = "\r\n"
	}
	off := 0
	for _, l := range strings.SplitAfter(string(src), "\n") {
		if l == "" {
			break
		}
		t.start = append(t.start, off)
		off += len(l)
		t.lines = append(t.lines, strings.TrimRight(l, "\r\n"))
	}
	return t
}

// offset is the byte offset of a 1-based line and rune column.
func (t *text) offset(line, col int) int {
	if line < 1 || line > len(t.lines) {
		return len(t.src)
	}
	l := t.lines[line-1]
	off := 0
	for i := 1; i < col && off < len(l); i++ {
		_, size := utf8.DecodeRuneInString(l[off:])
		off += size
	}
	return t.start[line-1] + off
}

// lineEnd is the offset just past line i's line end (0-based), or the end
// of the file.
func (t *text) lineEnd(i int) int {
	if i+1 < len(t.start) {
		return t.start[i+1]
	}
	return len(t.src)
}

// indentOf counts a line's leading spaces.
func indentOf(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }

// blank reports whether a line holds nothing but white space.
func blank(l string) bool { return strings.TrimSpace(l) == "" }

// comment reports whether a line holds only a comment.
func comment(l string) bool { return strings.HasPrefix(strings.TrimSpace(l), "#") }

// unit guesses the file's indentation step: the smallest indentation of a
// line with content, 2 when nothing is indented.
func (t *text) unit() int {
	u := 0
	for _, l := range t.lines {
		if n := indentOf(l); n > 0 && !blank(l) && (u == 0 || n < u) {
			u = n
		}
	}
	if u == 0 {
		return 2
	}
	return u
}

// blocks indents a step for a block list: the first line after the dash,
// the rest at the item's indentation. The step's own nesting is given the
// file's indentation step first; the step as written comes second, for the
// rare step (a block scalar with indented lines) that the first would
// change.
func (t *text) blocks(step string, dash, item int) []string {
	lines := strings.Split(strings.TrimRight(strings.ReplaceAll(step, "\r\n", "\n"), "\n"), "\n")
	own := 0 // the step's indentation step
	for _, l := range lines {
		if n := indentOf(l); n > 0 && !blank(l) && (own == 0 || n < own) {
			own = n
		}
	}
	render := func(unit int) string {
		var b strings.Builder
		for i, l := range lines {
			switch {
			case i == 0:
				b.WriteString(strings.Repeat(" ", dash) + "-" + strings.Repeat(" ", max(item-dash-1, 1)) + l)
			case blank(l):
			default:
				n := indentOf(l)
				if own > 0 {
					n = n/own*unit + n%own
				}
				b.WriteString(strings.Repeat(" ", item+n) + l[indentOf(l):])
			}
			b.WriteString(t.nl)
		}
		return b.String()
	}
	out := []string{render(t.unit())}
	if own > 0 && own != t.unit() {
		out = append(out, render(own))
	}
	return out
}

// splice returns the text with insert placed at offset at.
func (t *text) splice(at int, insert string) []byte {
	out := make([]byte, 0, len(t.src)+len(insert))
	out = append(out, t.src[:at]...)
	out = append(out, insert...)
	return append(out, t.src[at:]...)
}

// appendBlock places the step after the last line of a block list's last
// item. That item runs from its dash to the last line indented past the
// dash before the next line that is not (comments aside), so block scalars
// and comments inside it stay with it. Two places are offered: right after
// that line, and after the blank lines that follow it, for the rare block
// scalar that keeps its trailing blank lines (|+).
func (t *text) appendBlock(seq *yaml.Node, step string) [][]byte {
	last := seq.Content[len(seq.Content)-1]
	dash := seq.Column - 1
	item := last.Column - 1
	dashLine := last.Line - 1
	for dashLine > seq.Line-1 && !(indentOf(t.lines[dashLine]) == dash && strings.HasPrefix(t.lines[dashLine][dash:], "-")) {
		dashLine--
	}
	if last.Line-1 != dashLine || item <= dash {
		item = dash + 2
	}
	from := max(dashLine, deepestLine(last)-1)
	end := from
	for i := from + 1; i < len(t.lines); i++ {
		l := t.lines[i]
		if blank(l) {
			continue
		}
		if indentOf(l) <= dash {
			if comment(l) {
				continue
			}
			break
		}
		end = i
	}
	// Follow the list's spacing: a blank line before the new step when one
	// comes before the last.
	sep := ""
	prev := dashLine - 1
	for prev >= 0 && comment(t.lines[prev]) && indentOf(t.lines[prev]) == dash {
		prev--
	}
	if len(seq.Content) > 1 && prev >= 0 && blank(t.lines[prev]) {
		sep = t.nl
	}
	if len(seq.Content) == 1 && slices.ContainsFunc(t.lines, blank) {
		sep = t.nl
	}
	// The places: right after the item's last line, and after the blank
	// lines that follow it.
	type place struct {
		at  int
		sep string
	}
	places := []place{{t.lineEnd(end), sep}}
	after := end + 1
	for after < len(t.lines) && blank(t.lines[after]) {
		after++
	}
	if after > end+1 {
		places = append(places, place{t.lineEnd(after - 1), ""})
	}
	var out [][]byte
	for _, body := range t.blocks(step, dash, item) {
		for _, p := range places {
			lead := ""
			if p.at == len(t.src) && len(t.src) > 0 && t.src[len(t.src)-1] != '\n' {
				lead = t.nl
			}
			out = append(out, t.splice(p.at, lead+p.sep+body))
		}
	}
	return out
}

// deepestLine is the last line on which a node of the tree under n starts.
func deepestLine(n *yaml.Node) int {
	line := n.Line
	for _, c := range n.Content {
		line = max(line, deepestLine(c))
	}
	return line
}

// fillNull turns an empty steps: (or steps: null) into a block list of the
// one step.
func (t *text) fillNull(key, value *yaml.Node, step string) ([][]byte, error) {
	i := key.Line - 1
	keyLine := t.lines[i]
	colon := strings.IndexByte(keyLine[min(t.offset(key.Line, key.Column)-t.start[i], len(keyLine)):], ':')
	if colon < 0 {
		return nil, &EditError{Pos: Pos{Line: key.Line, Col: key.Column}, Message: "'steps' is empty; write steps: followed by a list to append to it"}
	}
	from := t.offset(key.Line, key.Column) - t.start[i] + colon + 1
	to := from
	if value.Value != "" {
		if value.Line != key.Line {
			return nil, &EditError{Pos: Pos{Line: value.Line, Col: value.Column}, Message: "'steps' is null; write steps: followed by a list to append to it"}
		}
		from = t.offset(value.Line, value.Column) - t.start[i]
		to = from + len(value.Value)
	}
	return t.toBlock(key, i, from, to, step), nil
}

// toBlock replaces the text from..to of line i (an empty list or a null)
// with a block list holding the step, keeping a comment after it on the
// key's line.
func (t *text) toBlock(key *yaml.Node, i, from, to int, step string) [][]byte {
	l := t.lines[i]
	head := strings.TrimRight(l[:from], " \t")
	if rest := strings.TrimSpace(l[to:]); rest != "" {
		head += " " + rest
	}
	dash := key.Column - 1 + t.unit()
	var candidates [][]byte
	for _, body := range t.blocks(step, dash, dash+2) {
		out := make([]byte, 0, len(t.src)+len(body)+len(t.nl))
		out = append(out, t.src[:t.start[i]]...)
		out = append(out, head...)
		out = append(out, t.nl...)
		out = append(out, body...)
		candidates = append(candidates, append(out, t.src[t.lineEnd(i):]...))
	}
	return candidates
}

// appendFlow adds the step to a flow list: an empty one in a block mapping
// becomes a block list, anything else gets the step in flow style.
func (t *text) appendFlow(root, key, seq *yaml.Node, step string, stepNode *yaml.Node) ([][]byte, error) {
	open := t.offset(seq.Line, seq.Column)
	closing, lastToken, ok := flowEnd(t.src, open)
	if !ok {
		return nil, &EditError{Pos: Pos{Line: seq.Line, Col: seq.Column}, Message: "cannot find where the steps list ends"}
	}
	i := seq.Line - 1
	if len(seq.Content) == 0 && root.Style&yaml.FlowStyle == 0 && closing < t.lineEnd(i) {
		return t.toBlock(key, i, open-t.start[i], closing+1-t.start[i], step), nil
	}
	flow := flowText(stepNode)
	switch t.src[lastToken-1] {
	case '[':
	case ',':
		flow = " " + flow
	default:
		flow = ", " + flow
	}
	return [][]byte{t.splice(lastToken, flow)}, nil
}

// flowEnd scans a flow collection that starts at open ('[' or '{') and
// returns the offset of its closing bracket and the offset just past the
// last character of content before it. Quoted scalars and comments are
// skipped; a quote starts a scalar only where a scalar can start.
func flowEnd(src []byte, open int) (closing, lastToken int, ok bool) {
	depth := 0
	lastToken = open + 1
	prev := byte('[') // the last significant byte
	for i := open; i < len(src); i++ {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			continue
		case c == '#' && i > 0 && (src[i-1] == ' ' || src[i-1] == '\t' || src[i-1] == '\n'):
			for i < len(src) && src[i] != '\n' {
				i++
			}
			continue
		case (c == '"' || c == '\'') && strings.IndexByte("[{,:?", prev) >= 0:
			i++
			for ; i < len(src); i++ {
				if c == '"' && src[i] == '\\' {
					i++
					continue
				}
				if src[i] == c {
					if c == '\'' && i+1 < len(src) && src[i+1] == '\'' {
						i++
						continue
					}
					break
				}
			}
			if i >= len(src) {
				return 0, 0, false
			}
		case c == '[' || c == '{':
			depth++
		case c == ']' || c == '}':
			depth--
			if depth == 0 {
				return i, lastToken, true
			}
		}
		prev = c
		lastToken = i + 1
	}
	return 0, 0, false
}

// flowText writes a parsed value as one line of YAML flow style.
func flowText(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		parts := make([]string, 0, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			parts = append(parts, flowText(n.Content[i])+": "+flowText(n.Content[i+1]))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case yaml.SequenceNode:
		parts := make([]string, len(n.Content))
		for i, c := range n.Content {
			parts[i] = flowText(c)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case yaml.ScalarNode:
		if n.ShortTag() == "!!str" {
			return yamlScalar(n.Value)
		}
		return n.Value
	}
	return "null"
}

// appended reports whether out is the plan file whose root was given with
// exactly one step added after its n steps, and nothing else changed.
func appended(root *yaml.Node, out []byte, n int, step *yaml.Node) bool {
	got, err := editableRoot(out)
	if err != nil || len(got.Content) != len(root.Content) {
		return false
	}
	seen := false // only the first steps key is the list appended to
	for i := 0; i+1 < len(root.Content); i += 2 {
		if !sameNode(root.Content[i], got.Content[i]) {
			return false
		}
		before, after := root.Content[i+1], got.Content[i+1]
		if seen || root.Content[i].Value != "steps" || root.Content[i].Kind != yaml.ScalarNode {
			if !sameNode(before, after) {
				return false
			}
			continue
		}
		seen = true
		if after.Kind != yaml.SequenceNode || len(after.Content) != n+1 || !sameNode(step, after.Content[n]) {
			return false
		}
		for j := range n {
			if !sameNode(before.Content[j], after.Content[j]) {
				return false
			}
		}
	}
	return true
}

// sameNode compares two YAML trees by what they mean: kinds, tags, values,
// anchors and aliases, not layout or comments.
func sameNode(a, b *yaml.Node) bool {
	if a.Kind != b.Kind || a.ShortTag() != b.ShortTag() || a.Value != b.Value || a.Anchor != b.Anchor || len(a.Content) != len(b.Content) {
		return false
	}
	for i := range a.Content {
		if !sameNode(a.Content[i], b.Content[i]) {
			return false
		}
	}
	return true
}
