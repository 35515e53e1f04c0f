package suggest

import "testing"

func TestClosest(t *testing.T) {
	fields := []string{"id", "tool_name", "input", "reasoning"}
	tests := []struct {
		name, word string
		candidates []string
		want       string
	}{
		{"one deletion", "tol_name", fields, "tool_name"},
		{"swap counts as one edit", "inptu", fields, "input"},
		{"case is ignored", "Tool_Name", fields, "tool_name"},
		{"exact match", "input", fields, "input"},
		{"too far for a short word", "xyz", fields, ""},
		{"control step", "mapp", []string{"exit", "map", "reduce"}, "map"},
		{"no candidates", "map", nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Closest(tc.word, tc.candidates); got != tc.want {
				t.Errorf("Closest(%q) = %q, want %q", tc.word, got, tc.want)
			}
		})
	}
}

func TestDidYouMean(t *testing.T) {
	if got := DidYouMean("esle", []string{"then", "else"}); got != "; did you mean 'else'?" {
		t.Errorf("got %q", got)
	}
	if got := DidYouMean("else", []string{"then", "else"}); got != "" {
		t.Errorf("a right word gets no hint, got %q", got)
	}
}

func TestDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"abc", "", 3}, {"kitten", "sitting", 3}, {"esle", "else", 1}, {"héllo", "hello", 1},
	}
	for _, tc := range tests {
		if got := Distance(tc.a, tc.b); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
