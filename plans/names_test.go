package plans

import (
	"regexp"
	"testing"
)

// TestNamesMatchPatterns holds the byte-by-byte name checks to the
// regular expressions that say what each name is, on every string of up
// to five bytes drawn from the bytes that matter to them.
func TestNamesMatchPatterns(t *testing.T) {
	checks := []struct {
		pattern *regexp.Regexp
		check   func(string) bool
	}{
		{regexp.MustCompile(`^[a-zA-Z0-9_-]+$`), ValidIdentifier},
		{regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`), validStepID},
		{regexp.MustCompile(`^[A-Za-z0-9_-]+__[A-Za-z0-9_.-]+$`), validToolName},
		{regexp.MustCompile(`^[A-Za-z0-9_.*-]+$`), func(s string) bool { return madeOf(s, toolPatternByte) }},
	}
	const alphabet = "aZ9_-.*/"
	var all func(prefix string, n int)
	all = func(prefix string, n int) {
		for _, c := range checks {
			if got, want := c.check(prefix), c.pattern.MatchString(prefix); got != want {
				t.Errorf("%q: check says %v, %s says %v", prefix, got, c.pattern, want)
			}
		}
		if n == 0 {
			return
		}
		for i := range len(alphabet) {
			all(prefix+alphabet[i:i+1], n-1)
		}
	}
	all("", 5)
	all("a__", 3) // names past the shortest tool name
}
