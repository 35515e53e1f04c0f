// Package model is how the engine talks to language models: one provider
// interface, the providers that implement it (script; openai for the openai
// and openai_compat types; anthropic, over the Messages API; replay,
// answering from a recorded run) over the conversation values of
// engine/chat, role and named-model resolution with retries and failover,
// and the structured-output call that every schema-bound site shares
// (builtin__infer, prompt tools, infer gates, the solver).
package model

import (
	"context"
	"fmt"
	"time"

	"github.com/stepwise-dev/stepwise/engine/chat"
)

// The roles an inference site calls a model in. Each resolves through
// [models] in config, falling back to default.
const (
	RoleChat    = "chat"
	RoleRepair  = "repair"
	RoleJudge   = "judge"
	RoleSolver  = "solver"
	RolePlanner = "planner"
)

// Provider serves the models of one [providers.<name>] entry.
type Provider interface {
	// Complete makes one attempt at a call to the named model, streaming
	// deltas to onDelta (which may be nil) as they arrive. Errors that a
	// retry might cure are *Error with Transient set.
	Complete(ctx context.Context, model string, req chat.Request, onDelta func(chat.Delta)) (chat.Reply, error)
}

// Error is a failed model call.
type Error struct {
	Provider string
	Model    string
	Status   int // the HTTP status, 0 when there was none
	Message  string
	// Transient marks the failures a retry or a fallback may cure: 429,
	// 5xx, connection errors and timeouts.
	Transient bool
	// RetryAfter is the server's requested wait, zero when it gave none.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	where := e.Provider
	if e.Model != "" {
		where += "/" + e.Model
	}
	if e.Status != 0 {
		return fmt.Sprintf("model %s: %d %s", where, e.Status, e.Message)
	}
	return fmt.Sprintf("model %s: %s", where, e.Message)
}
