// Package path matches the paths of units of work (DESIGN.md section 2:
// "E1/do.3/agent.2/tracker__get_issue") against patterns. Breakpoints,
// script replies and the tree filter all select paths the same way, so they
// share this one matcher.
//
// A pattern is a path whose segments may hold wildcards: * stands for any
// run of characters within one segment (do.* matches do.3), and a segment
// that is exactly ** stands for zero or more whole segments (E1/**/repair
// matches E1/repair and E1/do.3/agent.2/repair). Nothing else is special;
// a pattern without wildcards matches only itself.
package path

import (
	"errors"
	"fmt"
	"strings"
)

// Pattern is a compiled path pattern. It is immutable and safe for
// concurrent use. A debugger tests every enabled breakpoint at every stop,
// so Match does no allocation and rejects most paths with a prefix or
// suffix comparison before it looks at segments.
//
// The zero Pattern matches only the empty path, which names no unit of
// work.
type Pattern struct {
	// c is shared by the copies of a Pattern, which keeps a Pattern one
	// word wide: cheap to pass and to range over.
	c *compiled
}

// compiled is the parsed form of a pattern.
type compiled struct {
	src string
	// literal is set when the pattern has no wildcard: Match is then a
	// string comparison.
	literal bool
	// prefix and suffix are literal text every matching path starts and
	// ends with; minLen is the least length such a path can have.
	prefix, suffix string
	minLen         int
	segs           []segment
}

// segment is one compiled segment of a pattern.
type segment struct {
	kind segmentKind
	// lit is the text of a literal segment.
	lit string
	// head and tail are the text of a glob segment before its first * and
	// after its last; middle holds the texts between consecutive stars,
	// in order. minLen is their total length.
	head, tail string
	middle     []string
	minLen     int
}

type segmentKind uint8

const (
	segLiteral  segmentKind = iota // matches itself only
	segGlob                        // holds at least one *
	segGlobstar                    // exactly **: zero or more segments
)

// Compile parses a pattern. It fails on an empty pattern, an empty segment
// (a leading, trailing or doubled /) and a ** that shares its segment with
// other text, which would otherwise silently mean the same as *.
func Compile(pattern string) (Pattern, error) {
	if pattern == "" {
		return Pattern{}, errors.New("empty path pattern; write a path such as E1/do.*/agent.2, or ** for every path")
	}
	p := &compiled{src: pattern}
	if !strings.Contains(pattern, "*") {
		p.literal = true
	}
	rest := pattern
	for i := 0; ; i++ {
		text, after, more := strings.Cut(rest, "/")
		if text == "" {
			return Pattern{}, fmt.Errorf("path pattern %q: segment %d is empty; segments are joined by a single / with none at either end", pattern, i+1)
		}
		seg, err := compileSegment(text)
		if err != nil {
			return Pattern{}, fmt.Errorf("path pattern %q: %w", pattern, err)
		}
		p.segs = append(p.segs, seg)
		if !more {
			break
		}
		rest = after
	}
	if p.literal {
		return Pattern{p}, nil
	}
	p.prefix, p.suffix = fixedEnds(pattern)
	for i, s := range p.segs {
		if s.kind != segGlobstar {
			p.minLen += s.minLen
			if i > 0 {
				p.minLen++ // the / before it
			}
		}
	}
	// A leading ** that matches nothing takes the / after it away too; the
	// minimum must not count a / that need not be there.
	if p.segs[0].kind == segGlobstar && p.minLen > 0 {
		p.minLen--
	}
	p.minLen = max(p.minLen, len(p.prefix)+len(p.suffix))
	return Pattern{p}, nil
}

// compileSegment compiles the text of one segment.
func compileSegment(text string) (segment, error) {
	switch {
	case text == "**":
		return segment{kind: segGlobstar}, nil
	case strings.Contains(text, "**"):
		return segment{}, fmt.Errorf("segment %q mixes ** with other text; ** must be a whole segment (a/**/b), and * matches within a segment (a*)", text)
	case !strings.Contains(text, "*"):
		return segment{kind: segLiteral, lit: text, minLen: len(text)}, nil
	}
	parts := strings.Split(text, "*")
	s := segment{kind: segGlob, head: parts[0], tail: parts[len(parts)-1]}
	s.middle = parts[1 : len(parts)-1]
	for _, m := range parts {
		s.minLen += len(m)
	}
	return s, nil
}

// fixedEnds returns the literal text before the first * and after the last
// one. A ** segment may match no segment at all, and the / beside it then
// disappears with it, so that / is not part of the fixed text.
func fixedEnds(pattern string) (prefix, suffix string) {
	first := strings.IndexByte(pattern, '*')
	prefix = pattern[:first]
	if strings.HasPrefix(pattern[first:], "**") {
		prefix = strings.TrimSuffix(prefix, "/")
	}
	last := strings.LastIndexByte(pattern, '*')
	suffix = pattern[last+1:]
	if last > 0 && pattern[last-1] == '*' {
		suffix = strings.TrimPrefix(suffix, "/")
	}
	return prefix, suffix
}

// String returns the pattern as it was written.
func (p Pattern) String() string {
	if p.c == nil {
		return ""
	}
	return p.c.src
}

// Literal returns the one path a pattern without wildcards matches, so
// that a caller can look such a pattern up by the path instead of trying
// it; ok is false for a pattern with wildcards.
func (p Pattern) Literal() (path string, ok bool) {
	if p.c == nil || !p.c.literal {
		return "", false
	}
	return p.c.src, true
}

// Match reports whether path matches the pattern.
func (p Pattern) Match(path string) bool {
	c := p.c
	if c == nil {
		return path == ""
	}
	if c.literal {
		return path == c.src
	}
	if len(path) < c.minLen || !strings.HasPrefix(path, c.prefix) || !strings.HasSuffix(path, c.suffix) {
		return false
	}
	return c.matchSegments(path)
}

// matchSegments walks the pattern's segments against the path's with the
// classic wildcard algorithm, where ** plays the part of * and a path
// segment that of a character: on a mismatch it backtracks only to the
// last **, letting it take one more segment. Each other pattern segment
// matches exactly one path segment, which is what makes the single
// backtrack point enough. Positions are byte offsets into path, so no
// segment is ever copied; an offset past the end means no segment is left.
func (p *compiled) matchSegments(path string) bool {
	segs := p.segs
	end := len(path) + 1
	si, pos := 0, 0 // next pattern segment, start of next path segment
	star, starPos := -1, 0
	for pos < end {
		if si < len(segs) {
			s := &segs[si]
			switch s.kind {
			case segGlobstar:
				star, starPos = si, pos
				si++
				continue
			case segLiteral:
				// Compared in place, without finding the segment's end.
				rest, n := path[pos:], len(s.lit)
				if len(rest) >= n && rest[:n] == s.lit && (len(rest) == n || rest[n] == '/') {
					si++
					pos += n + 1
					continue
				}
			default:
				if seg, next := segmentAt(path, pos); s.globMatch(seg) {
					si++
					pos = next
					continue
				}
			}
		}
		if star < 0 {
			return false
		}
		// Let the last ** take one more segment and retry after it.
		_, starPos = segmentAt(path, starPos)
		si, pos = star+1, starPos
	}
	for si < len(segs) && segs[si].kind == segGlobstar {
		si++
	}
	return si == len(segs)
}

// segmentAt returns the path segment starting at pos and the start of the
// one after it (len(path)+1 when it is the last). Segments are short, so a
// plain loop beats a call to strings.IndexByte.
func segmentAt(path string, pos int) (seg string, next int) {
	for i := pos; i < len(path); i++ {
		if path[i] == '/' {
			return path[pos:i], i + 1
		}
	}
	return path[pos:], len(path) + 1
}

// globMatch reports whether one path segment matches a glob segment. Its
// head and tail are fixed; its middle parts are found leftmost-first, which
// is enough because * may take anything between them.
func (s *segment) globMatch(seg string) bool {
	if len(seg) < s.minLen || !strings.HasPrefix(seg, s.head) || !strings.HasSuffix(seg, s.tail) {
		return false
	}
	rest := seg[len(s.head) : len(seg)-len(s.tail)]
	for _, m := range s.middle {
		i := strings.Index(rest, m)
		if i < 0 {
			return false
		}
		rest = rest[i+len(m):]
	}
	return true
}
