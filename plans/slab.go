package plans

import "github.com/stepwise-dev/stepwise/plans/template"

// slab hands out slices of T cut from blocks, so that decoding a plan makes
// one allocation per block rather than one per value, entry or list: the
// values of a plan live as long as the plan, and a separate allocation
// apiece was most of what decoding cost. Blocks grow with what was cut
// so far, so that a small file does not pay for a large block.
type slab[T any] struct {
	free []T
	made int // how many elements the blocks so far held
}

// maxBlock is the most elements a block holds, so that a value kept
// alone keeps at most one block of its neighbours alive.
const maxBlock = 256

// take returns n zeroed elements, their capacity n, so that appending to
// them copies rather than writing over the next cut.
func (s *slab[T]) take(n int) []T {
	if n > len(s.free) {
		if n > maxBlock/4 {
			return make([]T, n)
		}
		s.free = make([]T, min(max(16, s.made, n), maxBlock))
		s.made += len(s.free)
	}
	out := s.free[:n:n]
	s.free = s.free[n:]
	return out
}

// slabs are the slabs a decoder and the quiet decoders it makes cut what
// they decode from.
type slabs struct {
	values      slab[Value]
	entries     slab[Entry]
	valueRefs   slab[*Value]
	collections slab[collection]
	templated   slab[templateString]
	placings    slab[placing]
	steps       slab[Step]
	// templates parses the file's template strings into blocks of their
	// own, which live as long as its values.
	templates template.Parser
}
