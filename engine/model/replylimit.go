package model

import (
	"context"
	"fmt"
)

// replyLimitKey carries, in an attempt's context, the most bytes a reply
// may hold: [limits] model_reply_bytes.
type replyLimitKey struct{}

// withReplyLimit is ctx with the reply bound n for the replies streamed
// under it; n <= 0 leaves replies unbounded.
func withReplyLimit(ctx context.Context, n int64) context.Context {
	return context.WithValue(ctx, replyLimitKey{}, n)
}

// overReplyLimit returns the error of a reply of size bytes (text,
// refusal, reasoning, tool calls, counted as they stream in) that has
// passed the bound ctx carries, or nil. A streaming reader checks it after
// each piece, so that a runaway reply fails while it streams rather than
// after all of it has been held in memory. The error is permanent: the
// same request would stream the same runaway reply again.
func overReplyLimit(ctx context.Context, provider, model string, size int64) error {
	limit, _ := ctx.Value(replyLimitKey{}).(int64)
	if limit <= 0 || size <= limit {
		return nil
	}
	return &Error{Provider: provider, Model: model,
		Message: fmt.Sprintf("the reply passed %d bytes ([limits] model_reply_bytes) while it streamed, and was stopped", limit)}
}
