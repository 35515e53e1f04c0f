package path

import (
	"cmp"
	"slices"
	"strings"
)

// Compare orders two paths as a person counts: a run of digits in one is
// compared with the run in the same place of the other as a number, so
// that do.2 comes before do.10 and agent.9 before agent.10; the rest is
// compared as text. It returns -1, 0 or +1 as strings.Compare does.
func Compare(a, b string) int {
	for a != "" && b != "" {
		da, db := digits(a), digits(b)
		if da == 0 || db == 0 {
			if a[0] != b[0] {
				return strings.Compare(a[:1], b[:1])
			}
			a, b = a[1:], b[1:]
			continue
		}
		na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
		// Of two numbers without leading zeros, the longer is larger.
		if len(na) != len(nb) {
			return compareInts(len(na), len(nb))
		}
		if c := strings.Compare(na, nb); c != 0 {
			return c
		}
		// The same number: the one written with fewer zeros first, so
		// that the order is total.
		if da != db {
			return compareInts(da, db)
		}
		a, b = a[da:], b[db:]
	}
	return compareInts(len(a), len(b))
}

// digits is the length of the run of ASCII digits s starts with.
func digits(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

func compareInts(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// SortPlanOrder sorts paths, listed in the order their units started, into
// the plan's order: a unit before the units inside it, the items of a map,
// filter or reduce by index (do.2 before do.10), and the steps of a body,
// or of the plan, in the order they first ran, which is their order in
// the plan since a body runs its steps one after another. Concurrent
// items that ran interleaved (do.2's steps, then do.3's, then do.2's
// last) so read item by item, each item's steps in its body's order.
func SortPlanOrder(paths []string) {
	// first is where each path, or a prefix of one, first appears.
	first := make(map[string]int, len(paths))
	for i, p := range paths {
		for q, ok := p, true; ok; q, _, ok = Parent(q) {
			if _, seen := first[q]; !seen {
				first[q] = i
			}
		}
	}
	// Each path's segments, the index of each that is an item (-1 for
	// none), and where the prefix that ends in each first appears, worked
	// out once rather than at every comparison.
	type key struct {
		path         string
		segs         []string
		items, ranks []int
	}
	keys := make([]key, len(paths))
	for j, p := range paths {
		k := key{path: p, segs: Segments(p)}
		k.items, k.ranks = make([]int, len(k.segs)), make([]int, len(k.segs))
		end := 0
		for i, seg := range k.segs {
			end += len(seg)
			k.ranks[i] = first[p[:end]]
			end++
			if n, ok := ItemIndex(seg); ok {
				k.items[i] = n
			} else {
				k.items[i] = -1
			}
		}
		keys[j] = k
	}
	slices.SortFunc(keys, func(ka, kb key) int {
		for i := range min(len(ka.segs), len(kb.segs)) {
			if ka.segs[i] == kb.segs[i] {
				continue
			}
			if ka.items[i] >= 0 && kb.items[i] >= 0 {
				return cmp.Compare(ka.items[i], kb.items[i])
			}
			if c := cmp.Compare(ka.ranks[i], kb.ranks[i]); c != 0 {
				return c
			}
			return Compare(ka.segs[i], kb.segs[i])
		}
		return cmp.Compare(len(ka.segs), len(kb.segs))
	})
	for i, k := range keys {
		paths[i] = k.path
	}
}
