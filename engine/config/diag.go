package config

import (
	"errors"
	"fmt"
	"strings"

	"github.com/stepwise-dev/stepwise/plans/yamlpos"
)

// Diagnostic is one finding about a configuration: an error that fails the
// load, a warning that does not, or the reason a provider or MCP server cannot
// be used. Its position is the one every finding about a file carries
// (yamlpos.Pos); File is empty and Line is zero when the finding has no place
// in a file (an environment variable, a flag, a default).
type Diagnostic struct {
	yamlpos.Pos
	Key     string // dotted key path, e.g. providers.openai.api_key
	Message string
}

// String renders the diagnostic in compiler style, path:line:col: key: message,
// leaving out the parts it does not have.
func (d Diagnostic) String() string {
	var b strings.Builder
	if d.File != "" {
		b.WriteString(d.Pos.String())
		b.WriteString(": ")
	}
	if d.Key != "" {
		b.WriteString(d.Key)
		b.WriteString(": ")
	}
	b.WriteString(d.Message)
	return b.String()
}

// LoadError is the error Load returns when a configuration cannot be used. It
// carries every error found, not only the first, so a user can fix them in
// one pass.
type LoadError struct {
	Diagnostics []Diagnostic
}

// Error lists the diagnostics, one per line.
func (e *LoadError) Error() string {
	lines := make([]string, len(e.Diagnostics))
	for i, d := range e.Diagnostics {
		lines[i] = d.String()
	}
	return strings.Join(lines, "\n")
}

// ErrNotUsable marks a provider or MCP server that is configured but cannot
// be used: an unset ${VAR} in its settings, or a provider type stepwise does
// not implement yet. Test for it with errors.Is.
var ErrNotUsable = errors.New("configured but not usable")

// UnusableError says why a configured provider or MCP server cannot be used.
// Its Diagnostic points at the value responsible.
type UnusableError struct {
	Diagnostic
	// Var is the unset environment variable, when that is the reason.
	Var string
}

// Error renders the diagnostic in compiler style.
func (e *UnusableError) Error() string { return e.Diagnostic.String() }

// Is reports whether target is ErrNotUsable.
func (e *UnusableError) Is(target error) bool { return target == ErrNotUsable }

// NotConfiguredError is returned when a name (a provider, an MCP server, a
// model) is asked for that the configuration does not define. Configured lists
// what is defined, so the message can offer it.
type NotConfiguredError struct {
	Kind       string // "provider", "mcp server" or "model"
	Name       string
	Configured []string
}

// Error names the missing entry and lists the configured ones.
func (e *NotConfiguredError) Error() string {
	return fmt.Sprintf("%s %q is not configured (%s)", e.Kind, e.Name, configuredList(e.Configured))
}

func configuredList(names []string) string {
	if len(names) == 0 {
		return "none are configured"
	}
	return "configured: " + strings.Join(names, ", ")
}
