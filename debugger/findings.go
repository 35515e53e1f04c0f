package debugger

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/record"
	"github.com/stepwise-dev/stepwise/plans"
)

// Findings are what a run's record shows went less well than its status
// says: steps that went without the strict output they asked for, and
// agent steps that ended without an answer. stepwise inspect and the HTML
// report list them.
func Findings(d *record.RunDetail) []string {
	var out []string
	for _, f := range []string{downgradeFinding(d.Downgrades), notFinalFinding(d.Steps)} {
		if f != "" {
			out = append(out, f)
		}
	}
	return out
}

// notFinalFinding names the agent steps that spent their rounds without a
// valid answer: they succeed, by design (seeds/000), with final: false and
// output {}, which a plan reading output.x finds empty. Empty when there
// are none.
func notFinalFinding(steps []record.StepRecord) string {
	var paths []string
	for _, s := range steps {
		if s.Tool != plans.ControlAgent || s.Status != engine.StepOK {
			continue
		}
		var result struct {
			Final *bool `json:"final"`
		}
		if json.Unmarshal(s.Result, &result) == nil && result.Final != nil && !*result.Final {
			paths = append(paths, s.Path)
		}
	}
	if len(paths) == 0 {
		return ""
	}
	return fmt.Sprintf("agent_not_final: %s spent its rounds without a valid answer and returned final: false, output {} (%s); "+
		"its refusals say why, and max_iterations or validation_exhaustion may want raising",
		countOf(len(paths), "agent step", "agent steps"), strings.Join(paths, ", "))
}

// downgradeFinding is seeds/002's structured_output_downgraded finding:
// the steps that asked for strict structured output and ran without it,
// each with its reasons. Empty when there are none.
func downgradeFinding(downgrades []record.Notice) string {
	var steps []string
	reasons := map[string][]string{}
	for _, n := range downgrades {
		// A round that offers tools is not restricted by design; the
		// answer round that lets none be called is where strict mode applies.
		if n.Message == "unsupported_context_tools" {
			continue
		}
		if _, seen := reasons[n.Path]; !seen {
			steps = append(steps, n.Path)
		}
		if !slices.Contains(reasons[n.Path], n.Message) {
			reasons[n.Path] = append(reasons[n.Path], n.Message)
		}
	}
	if len(steps) == 0 {
		return ""
	}
	var parts []string
	for _, s := range steps {
		parts = append(parts, s+": "+strings.Join(reasons[s], ", "))
	}
	return fmt.Sprintf("structured_output_downgraded: %s requested strict structured output but ran without it (%s); outputs were validated after the fact, not held to the schema as they were written",
		countOf(len(steps), "step", "steps"), strings.Join(parts, "; "))
}

// countOf is n with its noun: 1 step, 2 steps.
func countOf(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
