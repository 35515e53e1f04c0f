package palette

import (
	"testing"

	"charm.land/bubbles/v2/key"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/tui/common"
)

// TestPressIsTheKey checks that every key the palette lists stands for a
// press the key's binding matches, so that choosing it does what the key
// does.
func TestPressIsTheKey(t *testing.T) {
	k := common.DefaultKeyMap()
	for _, g := range k.Groups() {
		for _, b := range g.Bindings {
			for _, name := range b.Keys() {
				if p := Press(name); !key.Matches(p, b) {
					t.Errorf("%s: the press %q (%s) does not match the binding %v", name, p.String(), p.Keystroke(), b.Keys())
				}
			}
		}
	}
}

// TestItemsListEveryCommand checks the palette lists every command of
// the language, and marks those that need arguments.
func TestItemsListEveryCommand(t *testing.T) {
	items := Items(common.DefaultKeyMap())
	verbs := map[debugger.Verb]Item{}
	for _, it := range items {
		if it.Verb != "" {
			verbs[it.Verb] = it
		}
	}
	for _, syn := range debugger.Grammar() {
		if _, ok := verbs[syn.Verb]; !ok {
			t.Errorf("%s is not listed", syn.Verb)
		}
	}
	for verb, args := range map[debugger.Verb]bool{debugger.VerbBreak: true, debugger.VerbGate: true, debugger.VerbStack: false, debugger.VerbRun: false, debugger.VerbFork: false} {
		if verbs[verb].Args != args {
			t.Errorf("%s needs arguments: %v, want %v", verb, verbs[verb].Args, args)
		}
	}
}

// TestFilter checks the order the filter puts entries in.
func TestFilter(t *testing.T) {
	items := Items(common.DefaultKeyMap())
	for _, tc := range []struct{ query, first, key string }{
		{"run the plan", "run the plan", "r"},
		{"STACK", ":stack", ""},
		{"break pat", ":break PATTERN [KIND...] [if VALUE OP TO]", "b"},
		// Letters in order: the tightest run wins.
		{"brkpnl", ":breakpoints", "B"},
		{"zzqx", "", ""},
	} {
		got := Filter(items, tc.query)
		switch {
		case tc.first == "" && len(got) > 0:
			t.Errorf("%q: %d entries, want none", tc.query, len(got))
		case tc.first != "" && (len(got) == 0 || got[0].Name != tc.first || got[0].Key != tc.key):
			t.Errorf("%q: first %+v, want %q (%s)", tc.query, got[0], tc.first, tc.key)
		}
	}
}
