package report

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestText checks that a value is redacted before it is cut, so that no
// part of a secret survives the cut, and cut on a character's boundary.
func TestText(t *testing.T) {
	secret := "s3cr3t-value-123"
	b := builder{redact: func(s string) string { return strings.ReplaceAll(s, secret, "${TOKEN}") }}
	tests := []struct {
		name      string
		in        string
		wantShown string
		wantCut   int
	}{
		{"short", "hello", "hello", 0},
		{"exactly the most", strings.Repeat("a", MaxValue), strings.Repeat("a", MaxValue), 0},
		{"one byte over", strings.Repeat("a", MaxValue+1), strings.Repeat("a", MaxValue), 1},
		// é is two bytes: the cut falls in its middle and moves before it.
		{"a character across the cut", strings.Repeat("a", MaxValue-1) + "é" + "bc", strings.Repeat("a", MaxValue-1), 4},
		{"a secret across the cut", strings.Repeat("a", MaxValue-4) + secret, strings.Repeat("a", MaxValue-4) + "${TO", 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := b.text(tt.in)
			if got.Shown != tt.wantShown || got.Cut != tt.wantCut {
				t.Errorf("text cut %d bytes, shows %d ending %q; want %d cut, %d shown ending %q", got.Cut, len(got.Shown),
					got.Shown[max(0, len(got.Shown)-8):], tt.wantCut, len(tt.wantShown), tt.wantShown[max(0, len(tt.wantShown)-8):])
			}
		})
	}
}

// TestUnescapeMarkup checks that the escapes Go's JSON writes for <, > and
// & are written back, and no other escape is touched.
func TestUnescapeMarkup(t *testing.T) {
	tests := []struct{ name, value string }{
		{"markup", "</script><img src=x onerror=alert(1)> & more"},
		{"a backslash before u003c", `\u003c is how JSON writes <`},
		{"quotes and newlines", "say \"hi\"\nthen\tgo"},
		{"other characters", "é \u2028 \x01"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := json.Marshal(tt.value)
			if err != nil {
				t.Fatal(err)
			}
			shown := unescapeMarkup(string(raw))
			var back string
			if err := json.Unmarshal([]byte(shown), &back); err != nil || back != tt.value {
				t.Errorf("%s shows as %s, which reads back as %q (%v)", raw, shown, back, err)
			}
			for _, c := range []string{"<", ">", "&"} {
				if strings.Count(shown, c) != strings.Count(tt.value, c) {
					t.Errorf("%s still escapes %s", shown, c)
				}
			}
		})
	}
}
