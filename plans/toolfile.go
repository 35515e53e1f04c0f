package plans

import (
	"slices"

	"github.com/stepwise-dev/stepwise/plans/suggest"
	"github.com/stepwise-dev/stepwise/plans/yamlpos"
)

// The kinds of user tool.
const (
	ToolExec    = "exec"
	ToolPrompt  = "prompt"
	ToolReshape = "reshape"
)

var (
	toolFileCommon  = []string{"name", "description", "kind", "read_only", "input_schema", "output_schema", "output_example"}
	toolFileByKind  = map[string][]string{ToolExec: {"command", "args", "env", "cwd", "timeout_secs", "output"}, ToolPrompt: {"prompt", "system", "model", "caller_output_schema", "caller_model"}, ToolReshape: {"shape", "caller_shape"}}
	toolFileAnyKind = append(append(append(append([]string{}, toolFileCommon...), toolFileByKind[ToolExec]...), toolFileByKind[ToolPrompt]...), toolFileByKind[ToolReshape]...)
)

// ToolFile is a user tool loaded from a YAML file in a tools directory. It
// becomes user__<Name> in the catalog.
type ToolFile struct {
	File          string
	Pos           Pos
	Name          Field[string]
	Description   Field[string]
	Kind          Field[string] // exec, prompt or reshape
	ReadOnly      Field[bool]
	InputSchema   *Schema
	OutputSchema  *Schema
	OutputExample *Value

	// exec
	Command     Field[string]
	Args        []*Value // templates over {{input.*}}
	Env         *Value   // string values with ${VAR}, resolved when the tool runs
	Cwd         *Value
	TimeoutSecs Field[int]    // default 60
	Output      Field[string] // json (default, as in graph) or text

	// prompt
	Prompt *Value
	System Field[string] // an extra system prompt, sent as written (graph does not render it)
	Model  Field[string]
	// CallerOutputSchema takes the output schema from the call's
	// output_schema input when the file declares none; CallerModel lets the
	// call's model input pick the model over Model. Both are how graph's
	// builtin__infer is written as a prompt tool.
	CallerOutputSchema Field[bool]
	CallerModel        Field[bool]

	// reshape
	Shape       *Value
	CallerShape Field[bool]
}

// ToolName is the catalog name of the tool.
func (t *ToolFile) ToolName() string { return "user__" + t.Name.Value }

// IsReadOnly reports the tool's read-only hint: declared, or implied, as
// graph implies it, for reshape and prompt tools, which change nothing
// outside the run.
func (t *ToolFile) IsReadOnly() (readOnly, declared bool) {
	if t.ReadOnly.Set {
		return t.ReadOnly.Value, true
	}
	implied := t.Kind.Value == ToolReshape || t.Kind.Value == ToolPrompt
	return implied, implied
}

// OutputFormat is how an exec tool's stdout is read: "json" unless the file
// says output: text. JSON is graph's default too, so its tool files run
// unchanged.
func (t *ToolFile) OutputFormat() string {
	if t.Output.Set {
		return t.Output.Value
	}
	return "json"
}

// LoadToolFile parses and checks a user tool file of the given dialect. Its
// templates may read only {{input.*}}: step results do not exist inside a
// tool.
func LoadToolFile(file string, src []byte, dialect Dialect) (*ToolFile, Report) {
	var r Report
	text := string(src) // one copy, as in Load
	root, release, ok := parseDocument(file, text, toolDocument, &r)
	if !ok {
		return nil, r
	}
	d := newDecoder(file, text, &r, dialect)
	t := d.toolFile(root)
	// The tool file holds no node: its values are copied out of them.
	release()
	r.Sort()
	return t, r
}

func (d *decoder) toolFile(root *yamlpos.Node) *ToolFile {
	o, ok := d.openObject(root, "a tool file", "", toolFileAnyKind)
	if !ok {
		return nil
	}
	t := &ToolFile{File: d.file, Pos: d.pos(root)}
	o.require("name")
	o.require("description")
	o.require("kind")
	t.Name = o.str("name")
	if t.Name.Set && !madeOf(t.Name.Value, identifierByte) {
		d.r.problem(CodeInvalidValue, t.Name.Pos, "", "tool name '%s' must use letters, digits, '_' and '-' only (it becomes user__%s)", t.Name.Value, t.Name.Value)
	}
	t.Description = o.str("description")
	t.Kind = o.str("kind")
	kind := t.Kind.Value
	fields, known := toolFileByKind[kind]
	if t.Kind.Set && !known {
		d.r.problem(CodeInvalidValue, t.Kind.Pos, "", "'kind' must be exec, prompt or reshape, not '%s'%s", kind, suggest.DidYouMean(kind, []string{ToolExec, ToolPrompt, ToolReshape}))
	}
	if known {
		for other, otherFields := range toolFileByKind {
			if other == kind {
				continue
			}
			for _, f := range otherFields {
				if o.has(f) && !slices.Contains(fields, f) {
					d.unknownField(true, o.keyPos(f), "", "'%s' belongs to %s tools, not %s tools", f, other, kind)
				}
			}
		}
	}
	t.ReadOnly = o.boolean("read_only")
	// Graph skips input checks when a tool's input_schema does not compile,
	// and compiles an output_schema only to structure a prompt tool's
	// answer; so only that one must compile for a graph project's file.
	t.InputSchema = o.uncheckedSchema("input_schema", "graph skips a tool's input checks when its input_schema does not compile, and so does stepwise")
	if kind == ToolPrompt {
		t.OutputSchema = o.schema("output_schema")
	} else {
		t.OutputSchema = o.uncheckedSchema("output_schema", "graph never compiles an exec or reshape tool's output_schema, so stepwise leaves this one uncompiled")
	}
	if n := o.get("output_example"); n != nil {
		t.OutputExample = d.value(n, "", false)
	}
	switch kind {
	case ToolExec:
		o.require("command")
		t.Command = o.str("command")
		if n := o.get("args"); n != nil {
			if n.Kind != yamlpos.SequenceNode {
				d.r.problem(CodeWrongType, d.pos(n), "", "'args' must be a list, not %s", kindOf(n))
			} else {
				for _, a := range n.Content() {
					t.Args = append(t.Args, d.value(a, "", true))
				}
			}
		}
		t.Env = o.mapping("env")
		t.Cwd = o.stringValue("cwd")
		t.TimeoutSecs = o.wholeNumber("timeout_secs")
		t.Output = o.str("output")
		if f := t.Output; f.Set && f.Value != "text" && f.Value != "json" {
			d.r.problem(CodeInvalidValue, f.Pos, "", "'output' must be text or json, not '%s'", f.Value)
		}
	case ToolPrompt:
		o.require("prompt")
		t.Prompt = o.stringValue("prompt")
		t.System = o.str("system")
		t.Model = o.str("model")
		t.CallerOutputSchema = o.boolean("caller_output_schema")
		t.CallerModel = o.boolean("caller_model")
	case ToolReshape:
		t.Shape = o.value("shape")
		t.CallerShape = o.boolean("caller_shape")
		hasShape, caller := o.has("shape"), t.CallerShape.Value
		switch {
		case hasShape && caller:
			d.r.problem(CodeExclusiveFields, o.keyPos("caller_shape"), "", "'shape' and 'caller_shape: true' are mutually exclusive: the shape is fixed in the file or given by each call")
		case !hasShape && !caller:
			d.r.problem(CodeMissingField, t.Pos, "", "a reshape tool needs 'shape', or 'caller_shape: true' to take the shape from each call")
		}
	}
	for _, v := range append(append([]*Value{t.Cwd, t.Prompt, t.Shape}, t.Args...), t.Env) {
		d.inputOnly(v)
	}
	return t
}

// uncheckedSchema decodes a tool file's schema that graph does not need to
// compile (see toolFile). In a graph project one that does not compile is a
// note, saying why, and is left uncompiled, so that it checks nothing; in a
// stepwise project it is a problem, as every schema is.
func (o *object) uncheckedSchema(name, why string) *Schema {
	if o.d.dialect != Graph {
		return o.schema(name)
	}
	q := *o
	q.d = o.d.quiet()
	s := q.schema(name)
	for _, p := range q.d.r.Problems {
		if p.Code == CodeInvalidSchema {
			p.Message += "; " + why
			o.d.r.Notes = append(o.d.r.Notes, p)
		} else {
			o.d.r.Problems = append(o.d.r.Problems, p)
		}
	}
	o.d.r.Notes = append(o.d.r.Notes, q.d.r.Notes...)
	return s
}

// inputOnly reports templates in a tool file that read anything but input.
func (d *decoder) inputOnly(v *Value) {
	v.walkTemplates(func(tv *Value) {
		for ref := range tv.Template().Refs {
			if ref.ItemRead || ref.LoopVar || ref.Root() == "input" {
				continue
			}
			d.r.problem(CodeUnknownReference, tv.PosAt(ref.Offset), "", "'%s' cannot be read in a tool file: a tool sees only its own input, as {{input.<name>}}", ref.String())
		}
	})
}

// boolean decodes a boolean field.
func (o *object) boolean(name string) Field[bool] {
	n := o.get(name)
	if n == nil {
		return Field[bool]{}
	}
	var b bool
	if n.Kind != yamlpos.ScalarNode || n.Tag != yamlpos.BoolTag || n.Decode(&b) != nil {
		o.d.r.problem(CodeWrongType, o.d.pos(n), o.path, "'%s' must be true or false, not %s", name, describeScalar(n))
		return Field[bool]{Pos: o.d.pos(n)}
	}
	return Field[bool]{Value: b, Pos: o.d.pos(n), Set: true}
}
