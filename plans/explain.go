package plans

import "github.com/stepwise-dev/stepwise/plans/strict"

// StrictExplanation is what --explain says about one agent step: whether it
// asks for strict structured output, and the verdict of each rule set on its
// schema.
type StrictExplanation struct {
	Path      string
	Pos       Pos
	Requested bool
	Verdicts  []RuleVerdict // Anthropic's, then OpenAI's
}

// RuleVerdict is one rule set's verdict on a step's schema.
type RuleVerdict struct {
	Rules   strict.Rules
	Verdict strict.Verdict
}

// ExplainStrict assesses every agent step's output schema under both rule
// sets, as a load would (the tools caveat included).
func ExplainStrict(p *Plan) []StrictExplanation {
	var out []StrictExplanation
	WalkSteps(p, func(s *Step) {
		a, ok := s.Control.(*AgentInput)
		if !ok {
			return
		}
		var schema any
		if a.OutputSchema != nil {
			schema = a.OutputSchema.Raw
		}
		e := StrictExplanation{Path: s.Path, Pos: s.Pos, Requested: a.StructuredOutput.Set}
		for rules, v := range strict.CheckEach(schema, strict.Context{HasTools: a.Iterations() > 1}) {
			e.Verdicts = append(e.Verdicts, RuleVerdict{Rules: strict.Rules(rules), Verdict: v})
		}
		out = append(out, e)
	})
	return out
}
