package common

import (
	"slices"
	"testing"

	"charm.land/bubbles/v2/key"

	"github.com/stepwise-dev/stepwise/debugger"
)

// TestLettersMeanTheSameInBothFrontEnds checks that a key of the
// workbench that is also a short form of a command of stepwise debug (s,
// n, c, o, p, b, q) does that command, and that delve's letters are
// among them.
func TestLettersMeanTheSameInBothFrontEnds(t *testing.T) {
	k := DefaultKeyMap()
	var bindings []key.Binding
	for _, g := range k.Groups() {
		bindings = append(bindings, g.Bindings...)
	}
	does := func(b key.Binding) []debugger.Verb {
		for _, p := range k.Commands() {
			if slices.Equal(p.Key.Keys(), b.Keys()) {
				return p.Verbs
			}
		}
		return nil
	}
	shared := map[string]debugger.Verb{}
	for _, syn := range debugger.Grammar() {
		for _, alias := range syn.Aliases {
			for _, b := range bindings {
				if slices.Contains(b.Keys(), alias) {
					shared[alias] = syn.Verb
					if !slices.Contains(does(b), syn.Verb) {
						t.Errorf("the key %s does %v in the workbench, but %s is %s in stepwise debug", alias, does(b), alias, syn.Verb)
					}
				}
			}
		}
	}
	for letter, verb := range map[string]debugger.Verb{"s": debugger.VerbStep, "n": debugger.VerbNext, "c": debugger.VerbContinue,
		"o": debugger.VerbOut, "p": debugger.VerbPrint} {
		if shared[letter] != verb {
			t.Errorf("%s is %q in both front ends, want %s as in delve", letter, shared[letter], verb)
		}
	}
}

// TestTableListsEveryCommand checks the table of keys and commands has
// a row for every command, in the grammar's order, and one for every run
// and authoring key no command does.
func TestTableListsEveryCommand(t *testing.T) {
	k := DefaultKeyMap()
	rows := k.Table()
	grammar := debugger.Grammar()
	for i, syn := range grammar {
		if rows[i].Usage != syn.Usage() || rows[i].Does != syn.Does {
			t.Errorf("row %d is %+v, want %s", i, rows[i], syn.Usage())
		}
	}
	keys := map[string]bool{}
	for _, r := range rows {
		keys[r.Key] = true
	}
	for _, g := range k.Groups() {
		for _, b := range g.Bindings {
			if k.InTable(g) && !keys[b.Help().Key] {
				t.Errorf("the key %s (%s) is in no row", b.Help().Key, b.Help().Desc)
			}
		}
	}
}
