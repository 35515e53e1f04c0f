package tui

import (
	"slices"
	"testing"

	tea "charm.land/bubbletea/v2"
)

var (
	keyCopy     = tea.KeyPressMsg{Code: 'c', Mod: tea.ModShift, Text: "C"}
	keyCopyPath = tea.KeyPressMsg{Code: 'y', Mod: tea.ModCtrl}
)

// TestCopy checks what C and ctrl+y ask the terminal to copy (OSC 52):
// the selected run row's result as JSON, its path, the command line.
func TestCopy(t *testing.T) {
	wantCopied := func(t *testing.T, b *bench, want ...string) {
		t.Helper()
		if !slices.Equal(b.clipboard, want) {
			t.Errorf("copied %q, want %q", b.clipboard, want)
		}
	}
	runCases(t, []benchCase{
		{"C copies the selected row's result", func(b *bench) { b.runToEnd(docSimple) }, seq(keyHome, keyCopy), func(t *testing.T, b *bench) {
			wantCopied(t, b, "{\n  \"greeting\": \"hello\"\n}")
			wantNotice(t, b, "copied the result of S0 (")
		}},
		{"C copies a failed row's error", func(b *bench) { b.runToEnd(docFailing) }, seq(keyHome, keyNextFailed, keyCopy), func(t *testing.T, b *bench) {
			if len(b.clipboard) != 1 || b.clipboard[0] != node(t, b, "F1").Error {
				t.Errorf("copied %q, want F1's error %q", b.clipboard, node(t, b, "F1").Error)
			}
		}},
		{"ctrl+y copies the row's path", func(b *bench) { b.runToEnd(docFlow) }, seq(keyHome, keyDown, keyDown, keyCopyPath), func(t *testing.T, b *bench) {
			wantCopied(t, b, "E1/do.0")
			wantNotice(t, b, "copied E1/do.0")
		}},
		{"ctrl+y copies a plan step's path", nil, seq(keyDown, keyCopyPath), func(t *testing.T, b *bench) {
			wantCopied(t, b, b.m.planPage.selectedPath())
		}},
		{"C on the plan says what it copies", nil, seq(keyDown, keyCopy), func(t *testing.T, b *bench) {
			wantCopied(t, b)
			wantNotice(t, b, "a plan's step has no value: C copies a run row's result, ctrl+y the step's path")
		}},
		{"ctrl+y on the : line copies the line", nil, seq(keyColon, typeText("break E1/do.*"), keyCopyPath), func(t *testing.T, b *bench) {
			wantCopied(t, b, "break E1/do.*")
			if !b.m.cmdline.Active() {
				t.Error("copying closed the command line")
			}
		}},
	})
}

// pairsPlan maps over two names with a body of two steps, so that its
// items have no step of their own.
const pairsPlan = `identifier: pairs
name: Pairs
description: Greets two names in two steps each.
steps:
  - id: P0
    tool_name: map
    input:
      over: ["ada", "bob"]
      do:
        - id: P1
          tool_name: builtin__reshape
          input: { shape: { name: "{{item}}" } }
        - id: P2
          tool_name: builtin__reshape
          input: { shape: { greeting: "hello {{P1.name}}" } }
`

// TestCopyMapItem checks C on a finished item of a map whose body has
// several steps copies the item's result, what its body gave, which the
// inspector shows too.
func TestCopyMapItem(t *testing.T) {
	b := newBenchWithPlan(t, "pairs", pairsPlan)
	b.press(keyRun)
	wantEnded(t, b, "ok")
	if !b.m.runPage.tree.SelectPath("P0/do.1") {
		t.Fatal("no row for P0/do.1")
	}
	b.press(keyCopy)
	if want := "{\n  \"greeting\": \"hello bob\"\n}"; !slices.Equal(b.clipboard, []string{want}) {
		t.Errorf("copied %q, want the item's result %q (notice %q)", b.clipboard, want, b.m.notice.text)
	}
	wantNotice(t, b, "copied the result of P0/do.1")
	jsonEqual(t, node(t, b, "P0/do.1").Result, `{"greeting": "hello bob"}`)
}
