// Package storetest synthesizes the events of runs, numbered and timed the
// way the engine emits them, so that the store and its front ends can be
// tested on real store files before (and without) running plans.
package storetest

import (
	"sync"
	"time"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/chat"
	"github.com/stepwise-dev/stepwise/engine/model"
	paths "github.com/stepwise-dev/stepwise/engine/path"
)

// Run emits the events of one run into Sink. Each event is stamped Tick
// after the one before it, starting at Start. It is safe for concurrent
// use; like the engine, it hands events to the sink in sequence order.
type Run struct {
	ID   string
	Sink engine.Sink
	// Project is the root directory of the project the run belongs to,
	// which run_start carries; empty is a run outside any project.
	Project string
	Start   time.Time
	// Tick is the time between two events; 0 means a millisecond.
	Tick time.Duration

	mu  sync.Mutex
	seq uint64
	now time.Time
}

// Emit sends one event and returns it.
func (r *Run) Emit(path string, kind engine.EventKind, payload any) engine.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.now.IsZero() {
		r.now = r.Start
	}
	tick := r.Tick
	if tick == 0 {
		tick = time.Millisecond
	}
	r.seq++
	e := engine.Event{Seq: r.seq, Time: r.now, RunID: r.ID, Path: path, Unit: paths.KindOf(path), Kind: kind, Payload: payload}
	r.now = r.now.Add(tick)
	// Sinks are called under the lock, so that they see the sequence in
	// order, as the engine guarantees.
	r.Sink.Event(e)
	return e
}

// Begin emits run_start.
func (r *Run) Begin(plan, file string, inputs map[string]any) {
	r.Emit("", engine.EventRunStart, engine.RunStarted{Plan: plan, File: file, Project: r.Project,
		Hash: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", Inputs: inputs})
}

// StepStart emits step_start.
func (r *Run) StepStart(path, tool string, input any) {
	r.Emit(path, engine.EventStepStart, engine.StepStarted{Tool: tool, Input: input})
}

// StepEnd emits step_end with status ok and the result, or failed with
// errMsg when errMsg is not empty.
func (r *Run) StepEnd(path, tool string, result any, errMsg string, ms float64) {
	status := engine.StepOK
	if errMsg != "" {
		status = engine.StepFailed
	}
	r.Emit(path, engine.EventStepEnd, engine.StepEnded{Tool: tool, Status: status, Result: result, Error: errMsg, Ms: ms})
}

// Step emits a step that ran and returned result.
func (r *Run) Step(path, tool string, input, result any, ms float64) {
	r.StepStart(path, tool, input)
	r.StepEnd(path, tool, result, "", ms)
}

// ToolCall emits a tool dispatch and its end.
func (r *Run) ToolCall(path, tool string, args, result any, errMsg string, ms float64) {
	r.Emit(path, engine.EventToolStart, engine.ToolStarted{Tool: tool, Args: args})
	r.Emit(path, engine.EventToolEnd, engine.ToolEnded{Tool: tool, Ms: ms, IsError: errMsg != "", Result: result, Error: errMsg})
}

// ModelCall emits one billable model call made at site; cost nil is an
// unpriced model.
func (r *Run) ModelCall(site, provider, modelID string, u chat.Usage, cost *float64) {
	r.Emit(site, engine.EventModelCall, engine.ModelCalled{Site: site, Role: model.RoleChat, Provider: provider, Model: modelID,
		Usage: u, CostUSD: cost, Ms: 120,
		Request: chat.Request{Step: site, Role: model.RoleChat, Messages: []chat.Message{chat.TextMessage(chat.RoleUser, "go")}},
		Reply:   chat.Reply{Text: `{"ok":true}`, Usage: u, Provider: provider, Model: modelID, FinishReason: "stop"}})
}

// End emits the usage event and run_end.
func (r *Run) End(end engine.RunEnded) {
	r.Emit("", engine.EventUsage, end.Usage)
	r.Emit("", engine.EventRunEnd, end)
}

// Usage is a report of calls model calls at one site, with a cost when
// cost is not nil.
func Usage(site, provider, modelID string, calls int, u chat.Usage, cost *float64) engine.UsageReport {
	line := engine.UsageLine{Calls: calls, Usage: u, CostUSD: cost}
	step, byModel := line, line
	step.Path = site
	byModel.Provider, byModel.Model = provider, modelID
	return engine.UsageReport{Calls: calls, Usage: u, CostUSD: cost, ByStep: []engine.UsageLine{step}, ByModel: []engine.UsageLine{byModel}}
}

// Cost returns a pointer to c, for the *float64 costs.
func Cost(c float64) *float64 { return &c }
