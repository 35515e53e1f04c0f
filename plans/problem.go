package plans

import (
	"cmp"
	"fmt"
	"slices"
)

// Problem is one thing wrong with a plan (or, in Report.Notes, one thing
// worth knowing about it). Message never repeats the step path or the
// position: String puts them in front, compiler style.
type Problem struct {
	Code    string // stable identifier a program can branch on, one of the Code constants
	Message string // what is wrong and what would fix it
	Path    string // step path (DESIGN.md section 2), empty for plan-level problems
	Pos     Pos
}

// String renders the problem as a compiler-style line:
// plans/report.yaml:12:7: step E2: references E5, which ...
func (p Problem) String() string { return p.line("") }

// NoteString renders a note the way String renders a problem, marked as a
// note: plans/report.yaml:3:1: note: step E2: ...
func (p Problem) NoteString() string { return p.line("note: ") }

func (p Problem) line(label string) string {
	s := label + p.Message
	if p.Path != "" {
		s = label + "step " + p.Path + ": " + p.Message
	}
	if loc := p.Pos.String(); loc != "" {
		s = loc + ": " + s
	}
	return s
}

// Problem codes. They are part of the scripting contract (validate --json),
// so they only ever gain members. The strict-output findings of a step
// asking for structured_output: strict carry the codes of package strict
// instead (missing_additional_properties, unenforced_pattern, ...), the
// codes seeds/002 documents.
const (
	CodeUnreadable         = "unreadable"           // the file cannot be read (gone, or not allowed)
	CodeYAMLSyntax         = "yaml_syntax"          // the file is not well-formed YAML
	CodeWrongType          = "wrong_type"           // a field holds the wrong kind of value
	CodeUnknownField       = "unknown_field"        // a field the grammar does not have
	CodeDuplicateField     = "duplicate_field"      // a key written twice, or in both spellings
	CodeCamelCase          = "camel_case"           // note: a camelCase spelling was accepted
	CodeMissingField       = "missing_field"        // a required field is absent
	CodeExclusiveFields    = "exclusive_fields"     // fields that may not appear together
	CodeInvalidValue       = "invalid_value"        // a value outside the allowed set or range
	CodeIgnoredField       = "ignored_field"        // note: a field that has no effect where it is
	CodeInvalidID          = "invalid_id"           // a step id that is not an identifier
	CodeDuplicateID        = "duplicate_id"         // a step id used twice in the plan
	CodeReservedID         = "reserved_id"          // a step id that shadows a template root
	CodeNoSteps            = "no_steps"             // the plan has no steps
	CodeTemplateSyntax     = "template_syntax"      // a template that does not parse
	CodeUnknownReference   = "unknown_reference"    // a template reads a root that does not exist
	CodeForwardReference   = "forward_reference"    // a template reads a step that runs later
	CodeBodyScope          = "body_scope"           // a template reads a step hidden inside a body
	CodePseudoRootScope    = "pseudo_root_scope"    // item/index/accumulator where they do not exist
	CodeLoopVariableScope  = "loop_variable_scope"  // @index/@first/@last outside a section
	CodeNestedControl      = "nested_control"       // a control step a body may not contain
	CodeMalformedToolName  = "malformed_tool_name"  // a tool name that is no catalog name
	CodeWorkbenchTool      = "workbench_tool"       // workbench__* tools exist only in the workbench
	CodeUnsupportedTool    = "unsupported_tool"     // note: a tool Stepwise cannot run yet
	CodeInvalidSchema      = "invalid_schema"       // a JSON Schema that does not compile or has the wrong shape
	CodeDefaultMismatch    = "default_mismatch"     // a default that does not conform to its schema
	CodeStrictEligible     = "strict_eligible"      // note: steps that could ask for strict output
	CodeUnresolvedTool     = "unresolved_tool"      // a tool name the catalog cannot resolve
	CodeUnresolvedPattern  = "unresolved_pattern"   // an agent tools pattern that matches nothing
	CodeMissingServer      = "missing_server"       // note: a required MCP server this machine lacks
	CodeUnknownModel       = "unknown_model"        // note: a model name the configuration does not define
	CodeNoEffect           = "no_effect"            // note: a setting that cannot take effect
	CodeInvalidToolFile    = "invalid_tool_file"    // a user tool file that cannot be used
	CodeUnavailableToAgent = "unavailable_to_agent" // plan_and_execute or a control step in an agent's tools
	CodePlanCycle          = "plan_cycle"           // note: plan__ calls that lead back to the plan
	CodeShadowedPlan       = "shadowed_plan"        // note: another file defines the same identifier first
	CodeUndeclaredInput    = "undeclared_input"     // a template reads an input the input_schema does not declare (a note unless it forbids others)
)

// Report is the outcome of checking a plan: problems make it invalid, notes
// never do.
type Report struct {
	Problems []Problem
	Notes    []Problem
}

// OK reports whether the plan has no problems.
func (r *Report) OK() bool { return len(r.Problems) == 0 }

func (r *Report) problem(code string, pos Pos, path, format string, args ...any) {
	r.Problems = append(r.Problems, Problem{Code: code, Message: fmt.Sprintf(format, args...), Path: path, Pos: pos})
}

func (r *Report) note(code string, pos Pos, path, format string, args ...any) {
	r.Notes = append(r.Notes, Problem{Code: code, Message: fmt.Sprintf(format, args...), Path: path, Pos: pos})
}

// Merge appends other's problems and notes to r.
func (r *Report) Merge(other Report) {
	r.Problems = append(r.Problems, other.Problems...)
	r.Notes = append(r.Notes, other.Notes...)
}

// Sort orders problems and notes by position, so output follows the file.
func (r *Report) Sort() {
	byPos := func(a, b Problem) int {
		return cmp.Or(cmp.Compare(a.Pos.File, b.Pos.File), cmp.Compare(a.Pos.Line, b.Pos.Line), cmp.Compare(a.Pos.Col, b.Pos.Col))
	}
	slices.SortStableFunc(r.Problems, byPos)
	slices.SortStableFunc(r.Notes, byPos)
}
