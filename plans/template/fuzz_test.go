package template

import (
	"errors"
	"testing"
)

// maxFuzzSections bounds the sections of a fuzzed template that gets
// rendered: nested sections over lists multiply, and a few dozen of them
// would render for longer than a fuzz run lasts without finding anything new.
const maxFuzzSections = 6

func FuzzParse(f *testing.F) {
	for _, tt := range parseErrorTests {
		f.Add(tt.src)
	}
	for _, tt := range parseShapeTests {
		f.Add(tt.src)
	}
	for _, tt := range spliceTests {
		f.Add(tt.src)
	}
	for _, tt := range textTests {
		f.Add(tt.src)
	}
	for _, tt := range spliceTextTests {
		f.Add(tt.src)
	}
	for _, tt := range renderErrorTests {
		f.Add(tt.src)
	}
	for _, tt := range refTests {
		f.Add(tt.src)
	}
	s := testScope()
	f.Fuzz(func(t *testing.T, src string) {
		tpl, err := Parse(src)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse(%q) error %T is not a *SyntaxError", src, err)
			}
			if se.Offset < 0 || se.Offset >= len(src) || se.Msg == "" {
				t.Fatalf("Parse(%q) = offset %d %q: offset outside the source or no message", src, se.Offset, se.Msg)
			}
			return
		}
		if tpl.Source() != src {
			t.Fatalf("Source() = %q, want %q", tpl.Source(), src)
		}
		sections := 0
		for r := range tpl.Refs {
			if r.Offset < 0 || r.Offset+2 > len(src) || src[r.Offset:r.Offset+2] != "{{" {
				t.Fatalf("Parse(%q): ref %+v does not point at a tag", src, r)
			}
			if r.Kind != RefVariable {
				sections++
			}
		}
		if tpl.IsLiteral() {
			if got, err := tpl.RenderString(s); err != nil || got != src {
				t.Fatalf("literal %q renders as %q, %v", src, got, err)
			}
		}
		if sections > maxFuzzSections {
			return
		}
		v, err := tpl.Render(s)
		text, textErr := tpl.RenderString(s)
		if (err == nil) != (textErr == nil) && !tpl.IsSplice() {
			t.Fatalf("Render(%q) error %v but RenderString error %v", src, err, textErr)
		}
		if err == nil && !tpl.IsSplice() && v != any(text) {
			t.Fatalf("Render(%q) = %#v but RenderString = %q", src, v, text)
		}
		if again, _ := tpl.RenderString(s); again != text {
			t.Fatalf("RenderString(%q) is not deterministic: %q then %q", src, text, again)
		}
	})
}
