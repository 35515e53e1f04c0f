//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestValidateDeepFileStaysSmall runs `stepwise validate` as a real process
// on files nested a million levels deep (2 MB of brackets or dashes) and
// checks that it ends with an error that places the nesting and names the
// limit, having used little memory: the depth is refused before any parser
// sees the text.
func TestValidateDeepFileStaysSmall(t *testing.T) {
	const maxRSS = 200 << 20
	bin := stepwiseBinary(t)
	head := "identifier: deep\nname: Deep\ndescription: Nested too deep.\nsteps: "
	tests := []struct {
		name string
		body []byte
		want string
	}{
		{"flow", append(bytes.Repeat([]byte("["), 1_000_000), bytes.Repeat([]byte("]"), 1_000_000)...), `deep\.yaml:4:1007: YAML: values nest 1000001 levels deep here; the limit is 1000`},
		{"block", append([]byte("\n"), append(bytes.Repeat([]byte("- "), 1_000_000), "x\n"...)...), `deep\.yaml:5:2001: YAML: values nest 1000002 levels deep here; the limit is 1000`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			isolate(t, dir)
			if err := os.WriteFile("deep.yaml", append([]byte(head), tc.body...), 0o644); err != nil {
				t.Fatal(err)
			}
			m := runMeasured(t, nil, bin, "validate", "deep.yaml")
			if m.code != 1 {
				t.Fatalf("exit code %d, want 1\nstderr:\n%.2000s", m.code, m.stderr)
			}
			if !regexp.MustCompile(tc.want).MatchString(m.stderr) {
				t.Errorf("stderr does not match %q:\n%.2000s", tc.want, m.stderr)
			}
			if m.rss > maxRSS {
				t.Errorf("stepwise validate peaked at %d MiB, over %d MiB", m.rss>>20, maxRSS>>20)
			}
		})
	}
}

// TestValidateManyTagsStaysSmall runs `stepwise validate` as a real process
// on plans holding a million template tags, in one string on one line, in
// one literal block over many lines, in one folded block (whose tags are
// placed from the file rather than from the string), and over many values,
// and checks that it places the one bad reference after all of them and
// stays small: a tag costs a few dozen bytes, not hundreds.
func TestValidateManyTagsStaysSmall(t *testing.T) {
	const maxRSS = 200 << 20
	bin := stepwiseBinary(t)
	head := "identifier: tags\nname: Tags\ndescription: A million tags.\n" +
		"input_schema:\n  type: object\n  properties:\n    x: {type: string}\n" +
		"steps:\n  - id: E1\n    tool_name: builtin__reshape\n    input:\n      shape:\n"
	hundred := strings.Repeat("{{input.x}} ", 100)
	var lines, values strings.Builder
	for i := range 10_000 {
		fmt.Fprintf(&lines, "          %s\n", hundred)
		fmt.Fprintf(&values, "        k%d: \"%s\"\n", i, hundred)
	}
	tests := []struct {
		name string
		body string
	}{
		{"one line", "        text: \"" + strings.Repeat("{{input.x}} ", 1_000_000) + "{{E9.a}}\"\n"},
		{"literal block", "        text: |\n" + lines.String() + "          {{E9.a}}\n"},
		{"folded block", "        text: >\n" + lines.String() + "          {{E9.a}}\n"},
		{"many values", values.String() + "        last: \"{{E9.a}}\"\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			isolate(t, dir)
			src := head + tc.body
			if err := os.WriteFile("tags.yaml", []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			// The file is ASCII, so the bad tag's column is its byte offset
			// in its line.
			bad := strings.LastIndex(src, "{{E9.a}}")
			line, col := strings.Count(src[:bad], "\n")+1, bad-strings.LastIndexByte(src[:bad], '\n')
			want := fmt.Sprintf("tags.yaml:%d:%d: step E1: references E9, which is not `input` or an earlier step (available: input)\n", line, col)

			m := runMeasured(t, nil, bin, "validate", "tags.yaml")
			if m.code != 1 {
				t.Fatalf("exit code %d, want 1\nstderr:\n%.2000s", m.code, m.stderr)
			}
			if !strings.Contains(m.stderr, want) {
				t.Errorf("stderr lacks %q:\n%.2000s", want, m.stderr)
			}
			if m.rss > maxRSS {
				t.Errorf("stepwise validate peaked at %d MiB, over %d MiB", m.rss>>20, maxRSS>>20)
			}
			t.Logf("peak RSS %d MiB", m.rss>>20)
		})
	}
}
