package config

import (
	"errors"
	"fmt"
	"strings"
)

// Diagnostic is one finding about a configuration: an error that fails the
// load, a warning that does not, or the reason a provider or MCP server cannot
// be used. File is empty and Line is zero when the finding has no place in a
// file (an environment variable, a flag, a default).
type Diagnostic struct {
	File    string
	Line    int
	Col     int
	Key     string // dotted key path, e.g. providers.openai.api_key
	Message string
}

// String renders the diagnostic in compiler style, path:line:col: key: message,
// leaving out the parts it does not have.
func (d Diagnostic) String() string {
	var b strings.Builder
	if d.File != "" {
		b.WriteString(d.File)
		if d.Line > 0 {
			fmt.Fprintf(&b, ":%d:%d", d.Line, d.Col)
		}
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

// suggest returns the candidate closest to word, or "" when none is close
// enough to be a plausible typo. Closeness is the optimal-string-alignment
// distance (Levenshtein plus adjacent transpositions), compared without case.
func suggest(word string, candidates []string) string {
	w := strings.ToLower(word)
	limit := min(2, (len(w)+1)/2)
	best, bestDist := "", limit+1
	for _, c := range candidates {
		if d := editDistance(w, strings.ToLower(c)); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance between a and b,
// counted in bytes.
func editDistance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// didYouMean formats a suggestion as a message suffix, or "" for none.
func didYouMean(word string, candidates []string) string {
	if s := suggest(word, candidates); s != "" {
		return fmt.Sprintf("; did you mean %q?", s)
	}
	return ""
}
