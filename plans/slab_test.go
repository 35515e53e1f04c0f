package plans

import "testing"

// TestSlabTakesWhatItIsAskedFor cuts every size a block serves, first from
// a fresh slab (whose first block is the smallest), then after others: a
// cut larger than the block the slab would make next gets a block that
// holds it.
func TestSlabTakesWhatItIsAskedFor(t *testing.T) {
	for n := 0; n <= maxBlock; n++ {
		var s slab[int]
		for range 3 {
			got := s.take(n)
			if len(got) != n || cap(got) != n {
				t.Fatalf("take(%d) gave len %d cap %d", n, len(got), cap(got))
			}
			for i := range got {
				got[i] = n // the cuts must not overlap
			}
		}
	}
}

// TestLoadListOfSeventeen loads a plan whose first list has more items than
// a fresh slab's first block, which made take cut past the block's end.
func TestLoadListOfSeventeen(t *testing.T) {
	src := "identifier: p\nname: P\ndescription: A list of seventeen.\nsteps:\n  - id: E1\n    tool_name: builtin__reshape\n    input: { shape: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17] }\n"
	p, r := Load("p.yaml", []byte(src), Stepwise)
	if p == nil || !r.OK() {
		t.Fatalf("the plan does not load: %v", r.Problems)
	}
}
