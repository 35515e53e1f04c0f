package plans

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// runeIndex answers, for a long string, the counts Value.PosAt needs at a
// byte offset (characters, newlines, single quotes before it, the last
// newline before it, the "{{" before it) without counting from the start
// each time: a string of n tags would otherwise cost n² to place them all.
// Counts are kept every runeIndexStep bytes, and the rest is counted from
// the checkpoint.
type runeIndex struct {
	s                       string
	runes, newlines, quotes []int32 // before each checkpoint
	lastNewline             []int32 // the last '\n' before each checkpoint, -1 for none
	tags                    []int32 // the "{{" of s, non-overlapping, as strings.Count finds them
}

const runeIndexStep = 64

func newRuneIndex(s string) *runeIndex {
	n := len(s)/runeIndexStep + 1
	x := &runeIndex{s: s, runes: make([]int32, n), newlines: make([]int32, n), quotes: make([]int32, n), lastNewline: make([]int32, n)}
	var runes, newlines, quotes, last int32 = 0, 0, 0, -1
	for i := 0; i < len(s); i++ {
		if i%runeIndexStep == 0 {
			k := i / runeIndexStep
			x.runes[k], x.newlines[k], x.quotes[k], x.lastNewline[k] = runes, newlines, quotes, last
		}
		switch c := s[i]; {
		case c == '\n':
			newlines, last = newlines+1, int32(i)
		case c == '\'':
			quotes++
		}
		if utf8.RuneStart(s[i]) {
			runes++
		}
	}
	if len(s)%runeIndexStep == 0 {
		k := len(s) / runeIndexStep
		x.runes[k], x.newlines[k], x.quotes[k], x.lastNewline[k] = runes, newlines, quotes, last
	}
	for i := 0; ; {
		j := strings.Index(s[i:], "{{")
		if j < 0 {
			break
		}
		x.tags = append(x.tags, int32(i+j))
		i += j + 2
	}
	return x
}

// checkpoint is the checkpoint at or before offset, and the bytes from it
// to offset.
func (x *runeIndex) checkpoint(offset int) (int, string) {
	k := offset / runeIndexStep
	return k, x.s[k*runeIndexStep : offset]
}

// runesBefore is utf8.RuneCountInString(s[:offset]), offset being at a
// character's start. A checkpoint may fall inside a character, so the
// rest counts the bytes that start one, as the checkpoints do.
func (x *runeIndex) runesBefore(offset int) int {
	k, rest := x.checkpoint(offset)
	n := int(x.runes[k])
	for i := 0; i < len(rest); i++ {
		if utf8.RuneStart(rest[i]) {
			n++
		}
	}
	return n
}

// newlinesBefore is strings.Count(s[:offset], "\n").
func (x *runeIndex) newlinesBefore(offset int) int {
	k, rest := x.checkpoint(offset)
	return int(x.newlines[k]) + strings.Count(rest, "\n")
}

// quotesBefore is strings.Count(s[:offset], "'").
func (x *runeIndex) quotesBefore(offset int) int {
	k, rest := x.checkpoint(offset)
	return int(x.quotes[k]) + strings.Count(rest, "'")
}

// lastNewlineBefore is strings.LastIndexByte(s[:offset], '\n').
func (x *runeIndex) lastNewlineBefore(offset int) int {
	k, rest := x.checkpoint(offset)
	if i := strings.LastIndexByte(rest, '\n'); i >= 0 {
		return k*runeIndexStep + i
	}
	return int(x.lastNewline[k])
}

// tagsBefore is strings.Count(s[:offset], "{{").
func (x *runeIndex) tagsBefore(offset int) int {
	n, _ := slices.BinarySearchFunc(x.tags, offset, func(tag int32, off int) int {
		if int(tag)+2 <= off {
			return -1
		}
		return 1
	})
	return n
}

// lastTagBefore is the last "{{" that ends by offset, as the tags are
// found, or -1.
func (x *runeIndex) lastTagBefore(offset int) int {
	if n := x.tagsBefore(offset); n > 0 {
		return int(x.tags[n-1])
	}
	return -1
}
