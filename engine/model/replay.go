package model

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/stepwise-dev/stepwise/engine/chat"
)

// ReplayProviderName is the provider that answers every call when
// Options.Replay is set. Resolve names it with the model replayModel; each
// reply it gives names the model that made the recorded reply.
const ReplayProviderName = "replay"

// replayModel is what Resolve says a replayed call is made to: the model
// is only known per reply.
const replayModel = "recorded"

// RecordedCall is one model call of a recorded run, as a replay answers
// it: the call's step (Request.Step) and role, and what came back.
type RecordedCall struct {
	Step string
	Role string
	// Reply is what the model answered; its Model names the model that
	// did.
	Reply chat.Reply
	// Err is why the call failed, empty when it answered. A replay fails
	// the call again with this message.
	Err string
}

// replayedFailure is a recorded call that failed, failing again in a
// replay. It is not an *Error, so that it is never retried and reads
// exactly as the recorded failure did.
type replayedFailure struct{ msg string }

func (e *replayedFailure) Error() string { return e.msg }

// replayProvider answers every call from the calls a run recorded: each
// call takes the next unused recorded call of its step and role, in the
// order they were made. It never reaches a model, and a replayed reply
// spends nothing: its usage is zero.
type replayProvider struct {
	mu    sync.Mutex
	calls map[replayKey][]RecordedCall
}

type replayKey struct{ step, role string }

func newReplayProvider(calls []RecordedCall) *replayProvider {
	p := &replayProvider{calls: map[replayKey][]RecordedCall{}}
	for _, c := range calls {
		role := c.Role
		if role == "" {
			role = RoleChat
		}
		k := replayKey{c.Step, role}
		p.calls[k] = append(p.calls[k], c)
	}
	return p
}

// Complete answers with the next recorded call of the request's step and
// role. A call the record has no reply left for is a permanent *Error: the
// plan asks for something the recorded run never did.
func (p *replayProvider) Complete(ctx context.Context, model string, req chat.Request, onDelta func(chat.Delta)) (chat.Reply, error) {
	if err := ctx.Err(); err != nil {
		return chat.Reply{}, err
	}
	role := req.Role
	if role == "" {
		role = RoleChat
	}
	k := replayKey{req.Step, role}
	p.mu.Lock()
	queue := p.calls[k]
	if len(queue) == 0 {
		p.mu.Unlock()
		return chat.Reply{}, &Error{Provider: ReplayProviderName, Model: model,
			Message: fmt.Sprintf("no recorded reply for step %q in role %s: the plan asks for a call the recorded run did not make", req.Step, role)}
	}
	rec := queue[0]
	p.calls[k] = queue[1:]
	p.mu.Unlock()
	if rec.Err != "" {
		return chat.Reply{}, &replayedFailure{msg: rec.Err}
	}
	reply := rec.Reply
	reply.ToolCalls = slices.Clone(rec.Reply.ToolCalls)
	reply.Thinking = slices.Clone(rec.Reply.Thinking)
	reply.Usage = chat.Usage{}
	if reasoning := reply.Reasoning(); onDelta != nil && (reply.Text != "" || reasoning != "") {
		onDelta(chat.Delta{Text: reply.Text, Reasoning: reasoning})
	}
	return reply, nil
}
