package yamlpos

import (
	"testing"
	"unsafe"

	"go.yaml.in/yaml/v3"
)

// TestNodeSize holds a Node to the size its comment gives, on 64-bit
// machines: a plan's load makes some 25,000 of them.
func TestNodeSize(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("the sizes are a 64-bit machine's")
	}
	if got := unsafe.Sizeof(Node{}); got != 40 {
		t.Errorf("a Node takes %d bytes, not 40", got)
	}
	if got := unsafe.Sizeof(yaml.Node{}); got != 152 {
		t.Errorf("a yaml.Node takes %d bytes, not the 152 Node's comment compares with", got)
	}
}

// TestTagOf checks that every tag's name reads back as the tag, and that a
// name YAML does not define is OtherTag.
func TestTagOf(t *testing.T) {
	for tag := NullTag; tag <= MapTag; tag++ {
		if got := TagOf(tag.String()); got != tag {
			t.Errorf("TagOf(%q) = %d, want %d", tag.String(), got, tag)
		}
	}
	for _, name := range []string{"", "!thing", "!!set"} {
		if got := TagOf(name); got != OtherTag {
			t.Errorf("TagOf(%q) = %d, want OtherTag", name, got)
		}
	}
}
