package path

import (
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	tests := []struct {
		name    string
		pattern string
		match   []string
		noMatch []string
	}{
		{
			name:    "literal matches only itself",
			pattern: "E1/do.3",
			match:   []string{"E1/do.3"},
			noMatch: []string{"E1", "E1/do.31", "E1/do.3/E10", "xE1/do.3", "e1/do.3", ""},
		},
		{
			name:    "star within a segment",
			pattern: "E1/do.*",
			match:   []string{"E1/do.3", "E1/do.12", "E1/do."},
			noMatch: []string{"E1/do.3/E10", "E1/dox", "E2/do.3", "E1"},
		},
		{
			name:    "star as a whole segment matches exactly one",
			pattern: "E1/*/agent.2",
			match:   []string{"E1/do.3/agent.2", "E1/x/agent.2"},
			noMatch: []string{"E1/agent.2", "E1/do.3/E2/agent.2"},
		},
		{
			name:    "tool name prefix",
			pattern: "E1/do.3/agent.2/tracker__*",
			match:   []string{"E1/do.3/agent.2/tracker__get_issue", "E1/do.3/agent.2/tracker__"},
			noMatch: []string{"E1/do.3/agent.2/linear__get_issue", "E1/do.3/agent.2/tracker__get_issue/x"},
		},
		{
			name:    "several stars in a segment",
			pattern: "*__*_issue*",
			match:   []string{"tracker__get_issue", "tracker__get_issue.2", "a__b_issue"},
			noMatch: []string{"tracker_get_issue", "tracker__get_issu", "a/b__c_issue"},
		},
		{
			name:    "star needs its fixed parts apart",
			pattern: "a*a",
			match:   []string{"aa", "aba"},
			noMatch: []string{"a", "ab"},
		},
		{
			name:    "globstar alone matches everything",
			pattern: "**",
			match:   []string{"E1", "E1/do.3/agent.2/tracker__get_issue", ""},
		},
		{
			name:    "trailing globstar matches zero or more",
			pattern: "E1/**",
			match:   []string{"E1", "E1/do.3", "E1/do.3/agent.2/tracker__get_issue"},
			noMatch: []string{"E10", "E10/do.3", "E2/E1"},
		},
		{
			name:    "leading globstar",
			pattern: "**/repair",
			match:   []string{"repair", "E1/agent.2/repair", "E1/do.3/agent.2/repair"},
			noMatch: []string{"E1/agent.2/repair/x", "E1/prerepair", "E1/repairs"},
		},
		{
			name:    "globstar in the middle",
			pattern: "E1/**/tracker__*",
			match:   []string{"E1/tracker__get_issue", "E1/agent.1/tracker__x", "E1/do.3/agent.2/tracker__get_issue"},
			noMatch: []string{"E1", "E2/agent.1/tracker__x", "E1/agent.1/linear__x", "E1/agent.1/tracker__x/y"},
		},
		{
			name:    "globstar needs backtracking",
			pattern: "**/a/b",
			match:   []string{"a/b", "a/a/b", "x/a/b", "a/b/a/b", "a/a/a/b"},
			noMatch: []string{"a/b/c", "a/a", "b"},
		},
		{
			name:    "two globstars",
			pattern: "**/do.*/**/judge",
			match:   []string{"do.1/judge", "E1/do.1/judge", "E1/do.1/E2/x/judge", "do.2/do.3/judge"},
			noMatch: []string{"E1/judge", "E1/do.1", "E1/do.1/judge/x"},
		},
		{
			name:    "adjacent globstars",
			pattern: "a/**/**/b",
			match:   []string{"a/b", "a/x/b", "a/x/y/z/b"},
			noMatch: []string{"a", "b", "a/x"},
		},
		{
			name:    "star segment around globstar",
			pattern: "*/**/*",
			match:   []string{"a/b", "a/b/c/d"},
			noMatch: []string{"a"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Compile(tt.pattern)
			if err != nil {
				t.Fatal(err)
			}
			if p.String() != tt.pattern {
				t.Errorf("String() = %q, want %q", p.String(), tt.pattern)
			}
			for _, s := range tt.match {
				if !p.Match(s) {
					t.Errorf("%q does not match %q", tt.pattern, s)
				}
			}
			for _, s := range tt.noMatch {
				if p.Match(s) {
					t.Errorf("%q matches %q", tt.pattern, s)
				}
			}
		})
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		name, pattern, want string
	}{
		{"empty", "", "empty path pattern"},
		{"doubled slash", "E1//x", `path pattern "E1//x": segment 2 is empty`},
		{"leading slash", "/E1", `path pattern "/E1": segment 1 is empty`},
		{"trailing slash", "E1/", `path pattern "E1/": segment 2 is empty`},
		{"globstar with text after", "a**", `path pattern "a**": segment "a**" mixes ** with other text`},
		{"globstar with text before", "E1/**x", `segment "**x" mixes ** with other text`},
		{"three stars", "E1/***", `segment "***" mixes ** with other text`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Compile(tt.pattern)
			if err == nil {
				t.Fatalf("Compile(%q) succeeded", tt.pattern)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
		})
	}
}

func TestZeroPattern(t *testing.T) {
	var p Pattern
	if p.Match("E1") {
		t.Error("the zero Pattern matches E1")
	}
}

// TestMatchAllocs pins the promise the debugger relies on: testing a path
// allocates nothing.
func TestMatchAllocs(t *testing.T) {
	pats := compileAll(t, "E1/**/tracker__*", "**/repair", "E1/do.*/agent.2", "E1")
	allocs := testing.AllocsPerRun(100, func() {
		for _, p := range pats {
			p.Match("E1/do.3/agent.2/tracker__get_issue")
		}
	})
	if allocs != 0 {
		t.Errorf("Match allocates %v times per run", allocs)
	}
}

func compileAll(tb testing.TB, patterns ...string) []Pattern {
	tb.Helper()
	out := make([]Pattern, len(patterns))
	for i, s := range patterns {
		p, err := Compile(s)
		if err != nil {
			tb.Fatal(err)
		}
		out[i] = p
	}
	return out
}

// reference is a slow, obviously right matcher the fuzz test compares
// Match with: recursion over split segments.
func reference(pattern, path string) bool {
	var segs func(ps, ss []string) bool
	segs = func(ps, ss []string) bool {
		if len(ps) == 0 {
			return len(ss) == 0
		}
		if ps[0] == "**" {
			for i := 0; i <= len(ss); i++ {
				if segs(ps[1:], ss[i:]) {
					return true
				}
			}
			return false
		}
		return len(ss) > 0 && globRef(ps[0], ss[0]) && segs(ps[1:], ss[1:])
	}
	return segs(strings.Split(pattern, "/"), strings.Split(path, "/"))
}

func globRef(g, s string) bool {
	if g == "" {
		return s == ""
	}
	if g[0] == '*' {
		for i := 0; i <= len(s); i++ {
			if globRef(g[1:], s[i:]) {
				return true
			}
		}
		return false
	}
	return s != "" && s[0] == g[0] && globRef(g[1:], s[1:])
}

func FuzzMatch(f *testing.F) {
	for _, seed := range [][2]string{
		{"E1/**/tracker__*", "E1/do.3/agent.2/tracker__get_issue"},
		{"**/a/b", "a/a/b"},
		{"a*a", "a"},
		{"**", ""},
		{"E1//x", "E1//x"},
		{"a**", "a"},
		{"*/**/*", "a/b/c"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, pattern, path string) {
		if len(pattern) > 64 || len(path) > 64 {
			return // keeps the exponential reference matcher quick
		}
		p, err := Compile(pattern)
		if err != nil {
			return
		}
		got := p.Match(path)
		if want := reference(pattern, path); got != want {
			t.Errorf("Compile(%q).Match(%q) = %v, reference says %v", pattern, path, got, want)
		}
		// A path is a pattern that matches itself.
		if !strings.Contains(path, "*") {
			if lp, err := Compile(path); err == nil && !lp.Match(path) {
				t.Errorf("literal pattern %q does not match itself", path)
			}
		}
	})
}

// BenchmarkStop is what a debugger does at each stop: test 100 breakpoint
// patterns, none of which matches.
func BenchmarkStop(b *testing.B) {
	var patterns []string
	for i := range 25 {
		id := "E" + string(rune('2'+i%8))
		patterns = append(patterns,
			id+"/do.*/agent.2/tracker__get_issue",
			"E1/do.*/agent."+string(rune('3'+i%6))+"/**",
			"**/"+id+"/repair",
			"E1/do.3/agent.2/linear__*",
		)
	}
	pats := compileAll(b, patterns...)
	const path = "E1/do.3/agent.2/tracker__get_issue"
	for _, p := range pats {
		if p.Match(path) {
			b.Fatalf("%s matches %s", p, path)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, p := range pats {
			p.Match(path)
		}
	}
}

func TestLiteral(t *testing.T) {
	tests := []struct {
		pattern string
		path    string
		ok      bool
	}{
		{"E1", "E1", true},
		{"E1/do.3/agent.2", "E1/do.3/agent.2", true},
		{"E1/do.*", "", false},
		{"**", "", false},
		{"E*/x", "", false},
	}
	for _, tc := range tests {
		p, err := Compile(tc.pattern)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := p.Literal(); got != tc.path || ok != tc.ok {
			t.Errorf("Literal(%q) = %q, %v; want %q, %v", tc.pattern, got, ok, tc.path, tc.ok)
		}
	}
	if got, ok := (Pattern{}).Literal(); got != "" || ok {
		t.Errorf("the zero Pattern: Literal() = %q, %v", got, ok)
	}
}
