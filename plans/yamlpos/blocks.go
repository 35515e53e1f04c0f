package yamlpos

import (
	"slices"
	"sync"
)

// blocks are the blocks one kind of the fast reader's slabs is cut from.
// A tree that its reader releases, once nothing points into it, leaves its
// blocks to the next text read: a plan's loader copies what it keeps out
// of the tree, whose nodes and lists were a third of the bytes a load
// allocated, and a new tree cut from the old blocks allocates none.
type blocks[T any] struct {
	all  [][]T // every block made, those handed out to the text being read first
	out  int   // how many of all are handed out
	held int   // how many elements those hold
}

// next returns a block of at least n elements for a slab to cut from: the
// next block kept from an earlier text when it is large enough, else a new
// one of size(held) elements, or n when that is more. The blocks grow with
// the text read, so a small file does not pay for a large block.
func (b *blocks[T]) next(n int, size func(held int) int) []T {
	if b.out < len(b.all) && len(b.all[b.out]) >= n {
		block := b.all[b.out]
		b.out++
		b.held += len(block)
		return block
	}
	block := make([]T, max(size(b.held), n))
	// A new block goes before the kept ones not handed out yet, so that
	// it counts as handed out and the next call still finds those.
	b.all = slices.Insert(b.all, b.out, block)
	b.out++
	b.held += len(block)
	return block
}

// release clears the blocks handed out, so that they keep no strings of
// the text they held alive, and makes them the next text's.
func (b *blocks[T]) release() {
	for _, block := range b.all[:b.out] {
		clear(block)
	}
	b.out, b.held = 0, 0
}

// parsers are fast readers whose trees were released, kept with their
// blocks for the next text. The pool drops them when memory is collected,
// so a large file's blocks outlive its load by a collection at most.
var parsers = sync.Pool{New: func() any { return new(fastParser) }}

// readReleasable reads src as fastParse does, with a reader from parsers;
// release hands the reader and its blocks back once nothing points into
// the tree. A text the reader gives up on hands them back at once.
func readReleasable(src string) (root *Node, release func(), ok bool) {
	p := parsers.Get().(*fastParser)
	root, ok = p.parse(src)
	if !ok {
		p.release()
		return nil, nil, false
	}
	return root, p.release, true
}

// release clears what the reader read and puts it back in parsers.
func (p *fastParser) release() {
	p.nodeBlocks.release()
	p.listBlocks.release()
	p.headerBlocks.release()
	clear(p.open[:cap(p.open)])
	*p = fastParser{nodeBlocks: p.nodeBlocks, listBlocks: p.listBlocks, headerBlocks: p.headerBlocks, open: p.open[:0], blockText: p.blockText[:0]}
	parsers.Put(p)
}
