package storetest

import (
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/chat"
)

// The example runs below are one of each way a run ends, with the steps,
// tool calls and model calls a triage plan would make. Each emits into r
// from run_start on.

// Finished is a run that finished ok: a tool step, an agent step with two
// rounds and a tool call, and a map of two items; every call priced.
func Finished(r *Run) {
	r.Begin("triage", ".stepwise/plans/triage.yaml", map[string]any{"topic": "flaky tests", "limit": 2})
	r.Step("E1", "tracker__list_issues", map[string]any{"limit": 2},
		map[string]any{"issues": []any{map[string]any{"id": 7, "title": "TestUpload times out on CI"}, map[string]any{"id": 9, "title": "Race in the cache warmer"}}}, 12)
	r.StepStart("E2", "agent", map[string]any{"task": "Pick the issue most likely to be a flaky test and say why."})
	u := chat.Usage{InputTokens: 900, OutputTokens: 60, CacheReadInputTokens: 400}
	r.ModelCall("E2", "openai", "gpt-5-mini", u, Cost(0.00031))
	r.ToolCall("E2/agent.1/tracker__get_issue", "tracker__get_issue", map[string]any{"id": 7}, map[string]any{"id": 7, "body": "Times out about one run in ten since the retry change."}, "", 8)
	r.ModelCall("E2", "openai", "gpt-5-mini", u, Cost(0.00031))
	result := map[string]any{"output": map[string]any{"issue": 7, "why": "it fails one run in ten, without a code change"}, "iterations": 2, "final": true}
	r.StepEnd("E2", "agent", result, "", 2210)
	r.StepStart("E3", "map", map[string]any{"over": []any{7, 9}})
	for i, id := range []int{7, 9} {
		path := "E3/do." + string(rune('0'+i))
		r.Step(path, "builtin__reshape", map[string]any{"id": id}, map[string]any{"label": "flaky"}, 1.5)
	}
	r.StepEnd("E3", "map", []any{map[string]any{"label": "flaky"}, map[string]any{"label": "flaky"}}, "", 4)
	total := chat.Usage{InputTokens: 1800, OutputTokens: 120, CacheReadInputTokens: 800}
	r.End(engine.RunEnded{Status: "ok", StepsExecuted: 3, Output: map[string]any{"issue": 7, "labels": []any{"flaky", "flaky"}},
		Usage: Usage("E2", "openai", "gpt-5-mini", 2, total, Cost(0.00062))})
}

// Exited is a run that an exit gate ended with status success after its
// first step.
func Exited(r *Run) {
	r.Begin("triage", ".stepwise/plans/triage.yaml", map[string]any{"topic": "typos", "limit": 2})
	r.Step("E1", "tracker__list_issues", map[string]any{"limit": 2}, map[string]any{"issues": []any{}}, 9)
	r.StepStart("E2", "exit", map[string]any{"over": []any{}})
	r.Emit("E2", engine.EventGate, engine.GateEvaluated{Verdict: true})
	r.StepEnd("E2", "exit", nil, "", 0.2)
	r.End(engine.RunEnded{Status: "exited", StepsExecuted: 2, Answer: "nothing to triage",
		Exit:  &engine.Exit{Status: "success", Message: "nothing to triage", Step: "E2"},
		Usage: engine.UsageReport{ByStep: []engine.UsageLine{}, ByModel: []engine.UsageLine{}}})
}

// Failed is a run whose map item 1 failed in its body step, which failed
// the item, the map and the run; its model is unpriced.
func Failed(r *Run) {
	r.Begin("summarize_all", ".stepwise/plans/summarize_all.yaml", map[string]any{"ids": []any{3, 4}})
	r.StepStart("E1", "map", map[string]any{"over": []any{3, 4}})
	u := chat.Usage{InputTokens: 300, OutputTokens: 40}
	for i, id := range []int{3, 4} {
		item := "E1/do." + string(rune('0'+i))
		r.StepStart(item, "map", map[string]any{"id": id})
		r.StepStart(item+"/E10", "user__summarize", map[string]any{"text": "issue body"})
		if i == 0 {
			r.ModelCall(item+"/E10", "local", "llama-3.1-8b", u, nil)
			r.StepEnd(item+"/E10", "user__summarize", map[string]any{"summary": "Uploads time out."}, "", 840)
			r.StepEnd(item, "map", map[string]any{"summary": "Uploads time out."}, "", 841)
			continue
		}
		r.Emit(item+"/E10", engine.EventWarning, engine.Warning{Message: "tool user__summarize wrote to stderr: model not loaded"})
		msg := "tool user__summarize: exit status 1: model not loaded"
		r.StepEnd(item+"/E10", "user__summarize", nil, msg, 35)
		r.StepEnd(item, "map", nil, "step "+item+"/E10: "+msg, 36)
	}
	msg := "step E1/do.1/E10: tool user__summarize: exit status 1: model not loaded"
	r.StepEnd("E1", "map", nil, msg, 880)
	r.End(engine.RunEnded{Status: "failed", Error: msg, StepsExecuted: 1,
		Usage: Usage("E1/do.0/E10", "local", "llama-3.1-8b", 1, u, nil)})
}

// Unfinished is a run whose events stop in the middle of an agent step:
// one model call made, one tool call dispatched and not returned.
func Unfinished(r *Run) {
	r.Begin("triage", ".stepwise/plans/triage.yaml", map[string]any{"topic": "timeouts", "limit": 5})
	r.Step("E1", "tracker__list_issues", map[string]any{"limit": 5}, map[string]any{"issues": []any{map[string]any{"id": 11, "title": "Deploy hangs"}}}, 10)
	r.StepStart("E2", "agent", map[string]any{"task": "Pick the issue most likely to be a flaky test and say why."})
	r.ModelCall("E2", "openai", "gpt-5-mini", chat.Usage{InputTokens: 700, OutputTokens: 30}, Cost(0.0002))
	r.Emit("E2/agent.1/tracker__get_issue", engine.EventToolStart, engine.ToolStarted{Tool: "tracker__get_issue", Args: map[string]any{"id": 11}})
}
