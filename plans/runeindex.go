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
// the checkpoint. A runeIndex without checkpoints ({s: s}) counts from the
// start each time, which is what a short string is worth.
type runeIndex struct {
	s      string
	counts []runeCounts // the counts before each checkpoint
	tags   []int32      // the "{{" of s, non-overlapping, as strings.Count finds them
}

// runeCounts are the counts of a string before one checkpoint.
type runeCounts struct {
	runes, newlines, quotes int32
	lastNewline             int32 // the last '\n', -1 for none
}

const runeIndexStep = 64

// indexedLength is the length from which the decoder indexes a string with
// a template: below it, counting from the start costs little, and an index
// would cost more memory than the string itself.
const indexedLength = 256

func newRuneIndex(s string) *runeIndex {
	x := &runeIndex{s: s, counts: make([]runeCounts, len(s)/runeIndexStep+1)}
	c := runeCounts{lastNewline: -1}
	for i := 0; i < len(s); i++ {
		if i%runeIndexStep == 0 {
			x.counts[i/runeIndexStep] = c
		}
		switch s[i] {
		case '\n':
			c.newlines, c.lastNewline = c.newlines+1, int32(i)
		case '\'':
			c.quotes++
		}
		if utf8.RuneStart(s[i]) {
			c.runes++
		}
	}
	if len(s)%runeIndexStep == 0 {
		x.counts[len(s)/runeIndexStep] = c
	}
	x.tags = make([]int32, 0, strings.Count(s, "{{"))
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

// checkpoint is the counts at the checkpoint at or before offset, and the
// bytes from it to offset.
func (x *runeIndex) checkpoint(offset int) (runeCounts, int, string) {
	if x.counts == nil {
		return runeCounts{lastNewline: -1}, 0, x.s[:offset]
	}
	k := offset / runeIndexStep
	return x.counts[k], k * runeIndexStep, x.s[k*runeIndexStep : offset]
}

// runesBefore is utf8.RuneCountInString(s[:offset]), offset being at a
// character's start. A checkpoint may fall inside a character, so the
// rest counts the bytes that start one, as the checkpoints do.
func (x *runeIndex) runesBefore(offset int) int {
	c, _, rest := x.checkpoint(offset)
	n := int(c.runes)
	for i := 0; i < len(rest); i++ {
		if utf8.RuneStart(rest[i]) {
			n++
		}
	}
	return n
}

// newlinesBefore is strings.Count(s[:offset], "\n").
func (x *runeIndex) newlinesBefore(offset int) int {
	c, _, rest := x.checkpoint(offset)
	return int(c.newlines) + strings.Count(rest, "\n")
}

// quotesBefore is strings.Count(s[:offset], "'").
func (x *runeIndex) quotesBefore(offset int) int {
	c, _, rest := x.checkpoint(offset)
	return int(c.quotes) + strings.Count(rest, "'")
}

// lastNewlineBefore is strings.LastIndexByte(s[:offset], '\n').
func (x *runeIndex) lastNewlineBefore(offset int) int {
	c, at, rest := x.checkpoint(offset)
	if i := strings.LastIndexByte(rest, '\n'); i >= 0 {
		return at + i
	}
	return int(c.lastNewline)
}

// tagsBefore is strings.Count(s[:offset], "{{").
func (x *runeIndex) tagsBefore(offset int) int {
	if x.counts == nil {
		return strings.Count(x.s[:offset], "{{")
	}
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
	if x.counts == nil {
		last := -1
		for i := 0; ; {
			j := strings.Index(x.s[i:offset], "{{")
			if j < 0 {
				return last
			}
			last, i = i+j, i+j+2
		}
	}
	if n := x.tagsBefore(offset); n > 0 {
		return int(x.tags[n-1])
	}
	return -1
}
