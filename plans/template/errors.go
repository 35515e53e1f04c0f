package template

import (
	"fmt"
	"strings"
)

// SyntaxError is a template that does not parse. The caller knows where the
// template sits in its file, so the error carries only a byte offset into the
// template source and leaves file:line:col to the caller.
type SyntaxError struct {
	Offset int    // byte offset in the source where the problem starts
	Msg    string // what is wrong and what would fix it
}

// Error returns the message alone, without a position.
func (e *SyntaxError) Error() string { return e.Msg }

// MissingStepError is a root-anchored path whose first segment names no root
// of the scope: typically a step that does not exist or has not run.
type MissingStepError struct {
	Root      string   // the first segment of the path
	Path      string   // the whole dotted path
	Available []string // every root of the scope, sorted
}

// Error reads like "missing step 'E7' in 'E7.x' (available: E0, E1, input)".
func (e *MissingStepError) Error() string {
	if e.Path == e.Root {
		return fmt.Sprintf("missing step '%s' (available: %s)", e.Root, list(e.Available))
	}
	return fmt.Sprintf("missing step '%s' in '%s' (available: %s)", e.Root, e.Path, list(e.Available))
}

// BadPathError is a path that walks off data that exists: a key the object
// lacks, a segment applied to a scalar, or a non-numeric segment on a list.
type BadPathError struct {
	Path      string   // the whole dotted path
	At        string   // the longest prefix of Path that exists
	Available []string // the sorted keys of the object at At, when it is an object
	Reason    string   // why the walk stopped, when At is not an object; empty otherwise
}

// Error reads like "bad path 'E0.values.0.idd' (available: id, state, title)"
// when the walk fell off an object, and "bad path 'E0.count.x': 'E0.count' is
// a number, not an object or list" otherwise.
func (e *BadPathError) Error() string {
	if e.Reason != "" {
		return fmt.Sprintf("bad path '%s': %s", e.Path, e.Reason)
	}
	return fmt.Sprintf("bad path '%s' (available: %s)", e.Path, list(e.Available))
}

// EmptyDataError is a plausible path whose data ran out: an empty list, an
// index past the end, null, or an empty object. It means "nothing found"
// rather than "broken plan", which is why it has its own type.
type EmptyDataError struct {
	Path   string // the whole dotted path
	At     string // the prefix whose value ran out
	Reason string // what ran out, e.g. "'E0.values' is an empty list"
}

// Error reads like "empty data at 'E0.values.0.id': 'E0.values' is an empty
// list".
func (e *EmptyDataError) Error() string {
	return fmt.Sprintf("empty data at '%s': %s", e.Path, e.Reason)
}

// TooLongError is a render whose text passed the bound its scope set
// (a Limited scope): the render stopped there, without building the rest.
type TooLongError struct {
	Limit int64
}

// Error reads like "the rendered text passed 67108864 bytes ([limits]
// value_bytes)".
func (e *TooLongError) Error() string {
	return fmt.Sprintf("the rendered text passed %d bytes ([limits] value_bytes)", e.Limit)
}

// list joins names for an "available" clause, saying so when there are none
// rather than printing an empty pair of parentheses.
func list(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
