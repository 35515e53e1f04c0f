package plans

import (
	"strconv"
	"testing"
	"unsafe"
)

// TestPosAtPlacedTags checks PosAt on a string whose characters cannot be
// placed one by one, only its tags: offsets in, after and just before a tag.
func TestPosAtPlacedTags(t *testing.T) {
	src := head + "  - id: E0\n    tool_name: user__x\n    input:\n      q: >\n        one {{a}}\n        two {{b}} end\n"
	p, _ := Load("plan.yaml", []byte(src), Stepwise)
	v := p.Steps[0].Input.Get("q") // "one {{a}} two {{b}} end\n"
	at := func(line, col int) Pos { return Pos{File: "plan.yaml", Line: line, Col: col} }
	tests := []struct {
		offset int
		want   Pos
	}{
		{0, at(8, 10)},   // before the first tag: the start of the string
		{3, at(8, 10)},   // just before the first "{{"
		{4, at(9, 13)},   // the first "{{"
		{6, at(9, 15)},   // inside it
		{14, at(10, 13)}, // the second "{{"
		{18, at(10, 17)}, // after it, on its line
	}
	for _, tc := range tests {
		if got := v.PosAt(tc.offset); got != tc.want {
			t.Errorf("PosAt(%d) = %v, want %v", tc.offset, got, tc.want)
		}
	}
}

// TestPlainDecimal checks that an integer read as written is one strconv
// would write the same way, and that every other form is left to yaml.v3.
func TestPlainDecimal(t *testing.T) {
	for _, s := range []string{"0", "7", "-7", "120", "-999999999999999999"} {
		i, err := strconv.ParseInt(s, 10, 64)
		if !plainDecimal(s) || err != nil || strconv.FormatInt(i, 10) != s {
			t.Errorf("%q: plainDecimal %v, ParseInt %d %v", s, plainDecimal(s), i, err)
		}
	}
	for _, s := range []string{"", "-", "-0", "007", "+7", "1_000", "0x1F", "0o17", "1e3", "9999999999999999999", "1.0"} {
		if plainDecimal(s) {
			t.Errorf("plainDecimal(%q) = true, want false", s)
		}
	}
}

// TestValueSize holds a Value to the size its fields add up to on 64-bit
// machines: a 1,000-step plan's load makes some 10,000 of them, and a
// number's text in String, a template and its layout behind one pointer,
// a collection's items or entries behind another, and its position as a
// pointer to its file's name and two int32s are what keep it there.
func TestValueSize(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("the sizes are a 64-bit machine's")
	}
	if got := unsafe.Sizeof(Value{}); got != 56 {
		t.Errorf("a Value takes %d bytes, not 56", got)
	}
	if got := unsafe.Sizeof(Entry{}); got != 32 {
		t.Errorf("an Entry takes %d bytes, not 32", got)
	}
	// A plan's template strings are as many as half its values.
	if got := unsafe.Sizeof(templateString{}); got != 24 {
		t.Errorf("a template string's template and layout take %d bytes, not 24", got)
	}
}
