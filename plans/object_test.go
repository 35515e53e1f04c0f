package plans

import "testing"

// TestObjectHoldsEveryGrammar checks that an object has room for the
// fields of every grammar it decodes: it keeps them in an array on its
// decoding function's stack rather than in a list it allocates.
func TestObjectHoldsEveryGrammar(t *testing.T) {
	grammars := map[string][]string{
		"plan": planFields, "step": stepFields, "body call": callFields, "solver": solverFields,
		"agent": agentFields, "validation_exhaustion": exhaustionFields, "ask": askFields,
		"gate": gateFields, "exit": exitFields, "decide": decideFields, "filter": filterFields,
		"map": mapFields, "reduce": reduceFields, "tool file": toolFileAnyKind,
	}
	for name, fields := range grammars {
		if len(fields) > maxObjectFields {
			t.Errorf("the %s grammar has %d fields, and an object holds %d: raise maxObjectFields", name, len(fields), maxObjectFields)
		}
	}
}
