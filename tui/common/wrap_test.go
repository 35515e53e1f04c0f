package common_test

import (
	"slices"
	"testing"

	"github.com/stepwise-dev/stepwise/tui/common"
)

func TestWrap(t *testing.T) {
	for _, tc := range []struct {
		name       string
		text       string
		width      int
		breakAfter string
		want       []string
	}{
		{"fits", "a short line", 20, "", []string{"a short line"}},
		{"empty text is one empty line", "", 5, "", []string{""}},
		{"breaks at the last space that fits and drops it", "one two three", 8, "", []string{"one two", "three"}},
		{"full right before a space", "abcd efgh", 4, "", []string{"abcd", "efgh"}},
		{"a word too long breaks inside", "abcdefghij", 4, "", []string{"abcd", "efgh", "ij"}},
		{"newlines start lines, empty ones kept", "a\n\nb", 5, "", []string{"a", "", "b"}},
		{"break after a rune of breakAfter", "engine/tools/exec", 8, "/", []string{"engine/", "tools/", "exec"}},
		{"a space is still a break with breakAfter", "a/b cd/ef", 6, "/", []string{"a/b", "cd/ef"}},
		{"wide runes take two cells", "日本語です", 4, "", []string{"日本", "語で", "す"}},
		{"a wide rune wider than the line is taken anyway", "日x", 1, "", []string{"日", "x"}},
		{"width under one is one", "ab", 0, "", []string{"a", "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := common.Wrap(tc.text, tc.width, tc.breakAfter); !slices.Equal(got, tc.want) {
				t.Errorf("Wrap(%q, %d, %q) = %q, want %q", tc.text, tc.width, tc.breakAfter, got, tc.want)
			}
		})
	}
}

// TestWrapRangesRoom checks that room is asked line by line, so the first
// line can be narrower than the rest, as a label before it makes it.
func TestWrapRangesRoom(t *testing.T) {
	text := "aaa bbb ccc ddd"
	rooms := []int{3, 7}
	var got []string
	common.WrapRanges(text, "", func() int {
		r := rooms[min(len(got), len(rooms)-1)]
		return r
	}, func(from, to int) { got = append(got, text[from:to]) })
	if want := []string{"aaa", "bbb ccc", "ddd"}; !slices.Equal(got, want) {
		t.Errorf("lines %q, want %q", got, want)
	}
}
