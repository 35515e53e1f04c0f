package tools

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzExecOutput reads what an exec tool printed as its answer: one JSON
// value, or an error whose quote of the output stays short however long
// and strange the output is. The seeds include the outputs a probe sent:
// NUL bytes, one bracket opened without end, one long string (64 KiB
// each, the probe's megabytes cut to what a fuzz budget of seconds
// can mutate).
func FuzzExecOutput(f *testing.F) {
	f.Add([]byte(`{"ok": true}`))
	f.Add([]byte(`{"id": 12345678901234567890}`))
	f.Add([]byte("[1, 2]\n[3]"))
	f.Add([]byte(""))
	f.Add(bytes.Repeat([]byte{0}, 1<<16))
	f.Add(bytes.Repeat([]byte{'['}, 1<<16))
	f.Add([]byte(`"` + strings.Repeat("é", 1<<15) + `"`))
	f.Fuzz(func(t *testing.T, out []byte) {
		v, err := parseJSON(out)
		if err == nil {
			if _, err := json.Marshal(v); err != nil {
				t.Fatalf("parsed %q into a value that does not encode: %v", out, err)
			}
		}
		quoted := quoteStart(string(out), 80)
		text, cut := strings.CutSuffix(quoted, "…")
		unquoted, err := strconv.Unquote(text)
		if err != nil {
			t.Fatalf("quoteStart gave %s: %v", quoted, err)
		}
		if n := utf8.RuneCountInString(unquoted); n > 80 || !strings.HasPrefix(string(out), unquoted) || cut != (len(unquoted) < len(out)) {
			t.Fatalf("quoteStart(%d bytes) = %d characters %s", len(out), n, quoted)
		}
	})
}
