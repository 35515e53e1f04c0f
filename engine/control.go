package engine

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	paths "github.com/stepwise-dev/stepwise/engine/path"
	"github.com/stepwise-dev/stepwise/plans"
)

// bodyError is a failure inside a body: which item or branch, and which
// of its steps. The control step that owns the body turns it into its
// message: "`do` item 3 (linear__update_issue): ...".
type bodyError struct {
	where  string // "`do` item 3", "`then` branch"
	stepID string // the failing step of an inline list; empty for a single call
	tool   string
	err    error
}

func (e *bodyError) Error() string {
	if e.stepID == "" {
		return fmt.Sprintf("%s (%s): %v", e.where, e.tool, e.err)
	}
	return fmt.Sprintf("%s, step %s (%s): %v", e.where, e.stepID, e.tool, e.err)
}

func (e *bodyError) Unwrap() error { return e.err }

// runControl evaluates a control step.
func (c cursor) runControl(ctx context.Context, s *plans.Step, path string) (any, error) {
	switch in := s.Control.(type) {
	case *plans.ExitInput:
		return c.runExit(ctx, in, path)
	case *plans.DecideInput:
		return c.runDecide(ctx, in, path)
	case *plans.FilterInput:
		return c.runFilter(ctx, in, path)
	case *plans.MapInput:
		return c.runMap(ctx, in, path)
	case *plans.ReduceInput:
		return c.runReduce(ctx, in, path)
	case *plans.AskInput:
		return c.runAsk(ctx, s, in, path)
	case *plans.AgentInput:
		return c.runAgent(ctx, s, in, path)
	}
	return nil, fmt.Errorf("the %s input is not valid; stepwise validate lists its problems", s.ToolName.Value)
}

// runExit evaluates an exit gate. A gate that does not hold passes; one that
// holds (or an exit without a gate) ends the plan through an exitSignal.
func (c cursor) runExit(ctx context.Context, in *plans.ExitInput, path string) (any, error) {
	fires, reason := true, ""
	if in.Gate != nil || in.Infer != nil {
		v, err := c.evalCondition(ctx, in.Condition, path, c.sc)
		if err != nil {
			return nil, err
		}
		fires, reason = v.verdict, v.reason
	}
	if !fires {
		result := map[string]any{"passed": true, "verdict": false}
		if in.Infer != nil {
			result["reason"] = reason
		}
		return result, nil
	}
	exit := &Exit{Status: in.Status.Value, Step: path, Reason: reason}
	if in.Message != nil {
		msg, err := renderString(in.Message, c.sc)
		if err != nil {
			return nil, fmt.Errorf("message: %w", err)
		}
		exit.Message = msg
	}
	if in.Output != nil {
		out, err := in.Output.Render(c.sc)
		if err != nil {
			return nil, fmt.Errorf("output: %w", err)
		}
		exit.Output = out
	}
	return nil, &exitSignal{exit: exit}
}

// runDecide evaluates the gate and runs the chosen branch. The other
// branch is never rendered.
func (c cursor) runDecide(ctx context.Context, in *plans.DecideInput, path string) (any, error) {
	v, err := c.evalCondition(ctx, in.Condition, path, c.sc)
	if err != nil {
		return nil, err
	}
	result := map[string]any{"branch": nil, "verdict": v.verdict, "reason": nil, "result": nil}
	if in.Infer != nil {
		result["reason"] = v.reason
	}
	name, body := "then", in.Then
	if !v.verdict {
		name, body = "else", in.Else
	}
	if body == nil {
		return result, nil
	}
	out, err := c.runBody(ctx, body, paths.Join(path, name), c.sc.branchScope(), "`"+name+"` branch")
	if err != nil {
		return nil, err
	}
	result["branch"] = name
	result["result"] = out
	return result, nil
}

// runBody runs a branch or one item of a map or reduce in sc: a single
// call at path itself, or an inline list whose steps sit under path. The
// last step's result is the body's.
func (c cursor) runBody(ctx context.Context, body *plans.Body, path string, sc *scope, where string) (any, error) {
	bc := cursor{f: c.f, sc: sc, stack: c.stack, held: c.held}
	if body.Single {
		s := body.Steps[0]
		out, err := bc.runStep(ctx, s, path, c.unit)
		if err != nil && ownFailure(err) {
			return nil, &bodyError{where: where, tool: s.ToolName.Value, err: err}
		}
		return out, err
	}
	var last any
	for _, s := range body.Steps {
		out, err := bc.runStep(ctx, s, paths.Join(path, s.ID.Value), paths.KindStep)
		if err != nil {
			if ownFailure(err) {
				return nil, &bodyError{where: where, stepID: s.ID.Value, tool: s.ToolName.Value, err: err}
			}
			return nil, err
		}
		sc.set(s.ID.Value, out)
		last = out
	}
	return last, nil
}

// listItems renders the over of the map, filter or reduce at path, which
// must be a list, and tells how many items it has (EventItems).
func (c cursor) listItems(v *plans.Value, path string) ([]any, error) {
	out, err := v.Render(c.sc)
	if err != nil {
		return nil, fmt.Errorf("over: %w", err)
	}
	list, ok := out.([]any)
	if !ok {
		return nil, fmt.Errorf("'over' must render to a list, but it rendered to %s", jsonKind(out))
	}
	c.f.run.emit(path, c.unit, EventItems, func() any { return ItemsListed{Count: len(list)} })
	return list, nil
}

// forEach runs fn for every index of n items, at most limit at once. Items
// run in order at limit 1. When one fails, items in flight finish (a call
// cancelled halfway would leave server-side work orphaned), items not yet
// started are skipped, and the lowest-index failure is returned.
func forEach(ctx context.Context, n, limit int, fn func(i int) error) error {
	if limit < 1 {
		limit = 1
	}
	if limit > n {
		limit = n
	}
	if limit <= 1 {
		for i := 0; i < n; i++ {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("cancelled before item %d: %w", i, context.Cause(ctx))
			}
			if err := fn(i); err != nil {
				return err
			}
		}
		return nil
	}
	var (
		next     atomic.Int64
		failed   atomic.Bool
		mu       sync.Mutex
		firstIdx = n
		firstErr error
		wg       sync.WaitGroup
	)
	for w := 0; w < limit; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || failed.Load() {
					return
				}
				err := ctx.Err()
				if err != nil {
					err = fmt.Errorf("cancelled before item %d: %w", i, context.Cause(ctx))
				} else {
					err = fn(i)
				}
				if err != nil {
					failed.Store(true)
					mu.Lock()
					if i < firstIdx {
						firstIdx, firstErr = i, err
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return firstErr
}

// runMap runs the body once per item, concurrency at a time, and returns
// {count, results} with results in input order.
func (c cursor) runMap(ctx context.Context, in *plans.MapInput, path string) (any, error) {
	items, err := c.listItems(in.Over, path)
	if err != nil {
		return nil, err
	}
	results := make([]any, len(items))
	err = forEach(ctx, len(items), in.Concurrency.Value, func(i int) error {
		itemPath := paths.Item(path, i)
		defer c.f.run.thread(itemPath)()
		ic := c.push(Frame{Path: itemPath, Kind: paths.KindItem})
		out, err := ic.runBody(ctx, in.Do, itemPath, c.sc.itemScope(items[i], i), "`do` item "+strconv.Itoa(i))
		results[i] = out
		return err
	})
	if err != nil {
		return nil, err
	}
	return map[string]any{"count": len(items), "results": results}, nil
}

// runReduce folds the items through the body: each item's result is the
// next item's accumulator. It returns {count, result}.
func (c cursor) runReduce(ctx context.Context, in *plans.ReduceInput, path string) (any, error) {
	items, err := c.listItems(in.Over, path)
	if err != nil {
		return nil, err
	}
	var acc any
	if in.Initial != nil {
		if acc, err = in.Initial.Render(c.sc); err != nil {
			return nil, fmt.Errorf("initial: %w", err)
		}
	}
	for i, item := range items {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("cancelled before item %d: %w", i, context.Cause(ctx))
		}
		itemPath := paths.Item(path, i)
		sc := c.sc.itemScope(item, i)
		sc.hasAcc, sc.accumulator = true, acc
		ended := c.f.run.thread(itemPath)
		out, err := c.push(Frame{Path: itemPath, Kind: paths.KindItem}).runBody(ctx, in.Do, itemPath, sc, "`do` item "+strconv.Itoa(i))
		ended()
		if err != nil {
			return nil, err
		}
		acc = out
	}
	return map[string]any{"count": len(items), "result": acc}, nil
}

// runFilter partitions the items by a per-item gate into
// {count, items, dropped, dropped_count}, both halves in input order.
func (c cursor) runFilter(ctx context.Context, in *plans.FilterInput, path string) (any, error) {
	items, err := c.listItems(in.Over, path)
	if err != nil {
		return nil, err
	}
	keep := make([]bool, len(items))
	limit := 1
	if in.Infer != nil {
		limit = in.Concurrency.Value
	}
	err = forEach(ctx, len(items), limit, func(i int) error {
		itemPath := paths.Item(path, i)
		defer c.f.run.thread(itemPath)()
		v, err := c.push(Frame{Path: itemPath, Kind: paths.KindItem}).evalCondition(ctx, in.Condition, itemPath, c.sc.itemScope(items[i], i))
		if err != nil {
			return fmt.Errorf("item %d: %w", i, err)
		}
		keep[i] = v.verdict
		return nil
	})
	if err != nil {
		return nil, err
	}
	kept, dropped := []any{}, []any{}
	for i, item := range items {
		if keep[i] {
			kept = append(kept, item)
		} else {
			dropped = append(dropped, item)
		}
	}
	return map[string]any{"count": len(kept), "items": kept, "dropped": dropped, "dropped_count": len(dropped)}, nil
}

// renderString renders a template that must give text; a whole-tag
// template that splices a non-string gives its JSON text.
func renderString(v *plans.Value, sc *scope) (string, error) {
	out, err := v.Render(sc)
	if err != nil {
		return "", err
	}
	if s, ok := out.(string); ok {
		return s, nil
	}
	return JSONText(out), nil
}
