package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/stepwise-dev/stepwise/engine/chat"
	"github.com/stepwise-dev/stepwise/engine/model"
	paths "github.com/stepwise-dev/stepwise/engine/path"
	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/plans/template"
)

// finish ends a plan that ran its steps: the output map rendered, the
// solver's report, or nothing. emptyData is the EmptyDataError that cut a
// solver plan's steps short, nil when they all ran.
func (f *frame) finish(ctx context.Context, c cursor, res *Result, emptyData error) error {
	p := f.plan
	switch {
	case p.Output != nil:
		out, err := p.Output.Render(c.sc)
		if err != nil {
			return fmt.Errorf("plan failed rendering its output: %w", err)
		}
		res.Output = out
	case p.Solver != nil:
		answer, err := f.solve(ctx, c, emptyData)
		if err != nil {
			return err
		}
		res.Answer = answer
	}
	return nil
}

// solve asks the solver role to write the plan's report from its data.
// Data that ran out is reported to the solver as such, so that it can say
// what was not found instead of failing.
func (f *frame) solve(ctx context.Context, c cursor, emptyData error) (string, error) {
	s := f.plan.Solver
	r := f.run
	path := f.prefix + "solver"
	var missing []string
	if emptyData != nil {
		missing = append(missing, emptyData.Error())
	}
	var query string
	var err error
	if s.QueryToAnswer == nil {
		// Graph's question when a plan's solver asks none.
		query = fmt.Sprintf("Run the '%s' plan", f.plan.Name.Value)
	} else {
		query, err = renderString(s.QueryToAnswer, c.sc)
	}
	if err != nil {
		// A question about data that ran out is still a question: the
		// solver gets it as written, with what ran out, and can say that
		// nothing was found.
		if !isEmptyData(err) && !(emptyData != nil && f.notRun(err)) {
			return "", fmt.Errorf("solver: query_to_answer: %w", err)
		}
		query = s.QueryToAnswer.String
		missing = append(missing, fmt.Sprintf("query_to_answer: %v", err))
	}
	data := map[string]any{}
	if s.Data == nil || len(s.Data.Map()) == 0 {
		// Graph's solver, given no data, sees the plan's results as they
		// stand: its input and every top-level step's result, by id.
		data = c.sc.Values()
	} else {
		for _, e := range s.Data.Map() {
			v, err := e.Value.Render(c.sc)
			switch {
			case isEmptyData(err):
				missing = append(missing, fmt.Sprintf("data '%s': %v", e.Key, err))
				v = nil
			case emptyData != nil && f.notRun(err):
				missing = append(missing, fmt.Sprintf("data '%s': step %s did not run", e.Key, missingRoot(err)))
				v = nil
			case err != nil:
				return "", fmt.Errorf("solver: data '%s': %w", e.Key, err)
			}
			data[e.Key] = v
		}
	}
	system := solverPrompt
	if r.cfg != nil && r.cfg.Prompts.Solver != "" {
		system = r.cfg.Prompts.Solver
	}
	if s.SystemPrompt != nil {
		extra, err := renderString(s.SystemPrompt, c.sc)
		if err != nil {
			return "", fmt.Errorf("solver: system_prompt: %w", err)
		}
		system += "\n\n" + extra
	}
	// The finish's time runs from its stop, as a step's does; the plan's
	// clock is the finish's while it runs, nothing else of the plan going.
	start := time.Now()
	heldBefore := c.held.heldBy(start)
	times := func(end *StepEnded) {
		now := time.Now()
		end.Ms, end.HeldMs = ms(now.Sub(start)), ms(c.held.heldBy(now)-heldBefore)
	}
	d := r.stop(ctx, Stop{Kind: StopStep, Path: path, Unit: paths.KindStep, Tool: "solver", Input: data, Scope: c.sc, Stack: c.stack, held: c.held})
	switch d.Action {
	case Abort:
		// Aborted at its stop, the finish is in the record as a step
		// aborted there is.
		err := d.abortError(path, nil)
		r.startStep(path, paths.KindStep, func() any { return StepStarted{Tool: "solver", Input: data} })
		r.emit(path, paths.KindStep, EventStepEnd, func() any {
			end := StepEnded{Tool: "solver", Status: StepAborted, Error: err.Error()}
			times(&end)
			return end
		})
		return "", err
	case Inject:
		text, ok := d.Value.(string)
		if !ok {
			text = JSONText(d.Value)
		}
		// The finish did not run, and its events say with what it ended,
		// as a step's do.
		r.startStep(path, paths.KindStep, func() any { return StepStarted{Tool: "solver", Input: data} })
		r.emit(path, paths.KindStep, EventStepEnd, func() any {
			end := StepEnded{Tool: "solver", Status: StepSkipped, Result: map[string]any{"answer": text}}
			times(&end)
			end.Decided, end.Reused = d.marks()
			return end
		})
		return text, nil
	}
	req := chat.Request{Step: path, Role: model.RoleSolver, Messages: []chat.Message{
		chat.TextMessage(chat.RoleSystem, system),
		chat.TextMessage(chat.RoleUser, r.forModel(path, paths.KindStep, "the solver's message", solverMessage(query, data, missing))),
	}}
	// The finish is a unit of work like a step, with its own start and
	// end, so that a record of the run shows what the solver was given;
	// it counts as a step run, as every step the record shows does.
	r.startStep(path, paths.KindStep, func() any { return StepStarted{Tool: "solver", Input: data} })
	reply, err := r.complete(ctx, path, model.RoleSolver, req)
	r.emit(path, paths.KindStep, EventStepEnd, func() any {
		end := StepEnded{Tool: "solver", Status: StepOK, Result: map[string]any{"answer": reply.Text}}
		times(&end)
		if err != nil {
			end.Status, end.Result, end.Error = StepFailed, nil, err.Error()
			if _, aborted := errors.AsType[*AbortError](err); aborted || ctx.Err() != nil {
				end.Status, end.Error = StepAborted, stoppedText(ctx, err)
			}
		}
		return end
	})
	if err != nil {
		return "", fmt.Errorf("solver: %w", err)
	}
	return reply.Text, nil
}

// notRun reports whether err is a reference to a step of this plan that
// did not run because the data ran out before it.
func (f *frame) notRun(err error) bool {
	root := missingRoot(err)
	return root != "" && slices.ContainsFunc(f.plan.Steps, func(s *plans.Step) bool { return s.ID.Value == root })
}

// missingRoot is the step a MissingStepError names, "" for other errors.
func missingRoot(err error) string {
	var m *template.MissingStepError
	if errors.As(err, &m) {
		return m.Root
	}
	return ""
}

const solverPrompt = "You write the final report of a plan that has already run. " +
	"Answer the request from the data you are given and nothing else; when the data says something was not found, say so plainly."

func solverMessage(query string, data map[string]any, missing []string) string {
	var b strings.Builder
	b.WriteString(query)
	if len(data) > 0 {
		js, _ := json.MarshalIndent(data, "", "  ")
		b.WriteString("\n\nData:\n")
		b.Write(js)
	}
	if len(missing) > 0 {
		b.WriteString("\n\nData that ran out (nothing was found there):\n")
		for _, m := range missing {
			b.WriteString("- " + m + "\n")
		}
	}
	return b.String()
}

// runAsk puts an ask step's question through the ask stop and returns
// {answer, answered} or, unanswered, the declared fallback.
func (c cursor) runAsk(ctx context.Context, s *plans.Step, in *plans.AskInput, path string) (any, error) {
	r := c.f.run
	prompt, err := renderString(in.Prompt, c.sc)
	if err != nil {
		return nil, fmt.Errorf("prompt: %w", err)
	}
	var def any
	if in.Default != nil {
		if def, err = in.Default.Render(c.sc); err != nil {
			return nil, fmt.Errorf("default: %w", err)
		}
	}
	// Questions are serialized: two prompts at once are unanswerable.
	r.askMu.Lock()
	d := r.stop(ctx, Stop{Kind: StopAsk, Path: path, Unit: c.unit, Tool: plans.ControlAsk, Step: s, Scope: c.sc, Stack: c.stack, held: c.held,
		Ask: &Question{Prompt: prompt, Schema: in.OutputSchema, Default: def}})
	r.askMu.Unlock()
	reason := AskUnavailable
	switch d.Action {
	case Abort:
		return nil, d.abortError(path, nil)
	case Answer, Replace, Inject:
		if vs := in.OutputSchema.Check(d.Value); len(vs) > 0 {
			return nil, fmt.Errorf("the answer does not match the output_schema: %s", joinViolations(vs))
		}
		r.emit(path, c.unit, EventAsk, func() any { return Asked{Prompt: prompt, Answered: true, Answer: d.Value} })
		return map[string]any{"answer": d.Value, "answered": true}, nil
	case Decline:
		reason = AskDeclined
	}
	if in.WhenUnanswered.Value != "default" {
		return nil, fmt.Errorf("nobody answered (%s) and when_unanswered is fail; set when_unanswered: default with a default answer to run without a person", reason)
	}
	if vs := in.OutputSchema.Check(def); len(vs) > 0 {
		return nil, fmt.Errorf("the default answer does not match the output_schema: %s", joinViolations(vs))
	}
	r.emit(path, c.unit, EventAsk, func() any { return Asked{Prompt: prompt, Answered: false, Reason: reason, Answer: def} })
	return map[string]any{"answer": def, "answered": false, "reason": reason}, nil
}
