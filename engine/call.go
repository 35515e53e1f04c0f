package engine

import (
	"context"
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

// call dispatches one tool call made at path. Plans, model-backed tools
// (builtin__infer and prompt tools) run here; everything else goes to the
// tools runtime.
func (c cursor) call(ctx context.Context, path, tool string, input map[string]any) (any, error) {
	r := c.f.run
	if id, ok := strings.CutPrefix(tool, "plan__"); ok {
		return c.callPlan(ctx, path, id, input)
	}
	switch tool {
	case "builtin__infer":
		return c.callInfer(ctx, path, input)
	case plans.PlannerTool:
		return nil, errors.New("plan_and_execute (the LLM planner) is not available in stepwise; write the steps out, or call a plan__ tool")
	}
	if r.catalog != nil {
		if t, ok := r.catalog.UserTool(tool); ok && t.Kind.Value == plans.ToolPrompt {
			return c.callPrompt(ctx, path, t, input)
		}
	}
	if r.tools == nil {
		return nil, fmt.Errorf("no tool runtime to call %s", tool)
	}
	return r.tools.Call(ctx, tool, input)
}

// callPlan runs plan id as a tool: in its own scope, under path, with the
// plan call stack checked for cycles and depth.
func (c cursor) callPlan(ctx context.Context, path, id string, input map[string]any) (any, error) {
	r := c.f.run
	if r.catalog == nil {
		return nil, fmt.Errorf("no plan catalog to find plan '%s' in", id)
	}
	e, ok := r.catalog.Plan(id)
	if !ok {
		return nil, fmt.Errorf("there is no plan '%s' on the plan paths", id)
	}
	if info, ok := r.catalog.Tool("plan__" + id); ok && info.Unusable != "" {
		return nil, errors.New(info.Unusable)
	}
	chain := append(slices.Clone(c.f.calls), id)
	if slices.Contains(c.f.calls, id) {
		return nil, fmt.Errorf("plan cycle: %s", strings.Join(chain, " → "))
	}
	if len(c.f.calls) >= MaxPlanDepth {
		return nil, fmt.Errorf("plan calls nest deeper than %d: %s", MaxPlanDepth, strings.Join(chain, " → "))
	}
	input = withDefaults(e.Plan.InputSchema, input)
	if vs := e.Plan.InputSchema.Check(input); len(vs) > 0 {
		return nil, &InputError{Plan: id, Violations: vs, Schema: schemaRaw(e.Plan.InputSchema)}
	}
	sub := &frame{run: r, plan: e.Plan, prefix: paths.Join(path, id) + "/", calls: chain, stack: c.stack, held: c.held}
	res := sub.execute(ctx, input)
	switch res.Status {
	case StatusOK:
		switch e.Plan.FinishMode() {
		case plans.FinishOutput:
			return res.Output, nil
		case plans.FinishSolver:
			return map[string]any{"answer": res.Answer}, nil
		}
		return map[string]any{"completed": true}, nil
	case StatusExited:
		out := map[string]any{"exited": true, "status": res.Exit.Status, "message": res.Exit.Message}
		if res.Exit.Output != nil {
			out["output"] = res.Exit.Output
		}
		return out, nil
	}
	if res.Exit != nil {
		return nil, fmt.Errorf("plan '%s' exited with an error at %s: %s", id, res.Exit.Step, res.Exit.Message)
	}
	if re, ok := res.Err.(*RunError); ok {
		return nil, &subPlanError{failure: re}
	}
	return nil, res.Err
}

// callInfer is builtin__infer: one instruction to a model, plain text out
// or JSON validated against output_schema.
func (c cursor) callInfer(ctx context.Context, path string, input map[string]any) (any, error) {
	instruction, ok := input["instruction"].(string)
	if !ok || instruction == "" {
		return nil, errors.New("builtin__infer needs 'instruction', a non-empty string")
	}
	name := model.RoleChat
	if m, ok := input["model"]; ok && m != nil {
		if name, ok = m.(string); !ok {
			return nil, fmt.Errorf("builtin__infer's 'model' must be a string, not %s", jsonKind(m))
		}
	}
	var schema *plans.Schema
	if raw, ok := input["output_schema"]; ok && raw != nil {
		var err error
		if schema, err = objectSchema(raw); err != nil {
			return nil, fmt.Errorf("builtin__infer's output_schema: %w", err)
		}
	}
	return c.structured(ctx, path, name, model.RoleChat, []chat.Message{
		chat.TextMessage(chat.RoleSystem, inferPrompt),
		chat.TextMessage(chat.RoleUser, c.f.run.forModel(path, c.unit, "builtin__infer's instruction", instruction)),
	}, schema)
}

const inferPrompt = "You complete one self-contained task. Everything you need is in the user's message. " +
	"Answer the task directly, without preamble."

// objectSchema compiles a schema given as data, as an object schema: a
// bare {properties, required} without a type is read as type object.
func objectSchema(raw any) (*plans.Schema, error) {
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("must be an object JSON Schema, not %s", jsonKind(raw))
	}
	if _, typed := m["type"]; !typed {
		if _, props := m["properties"]; props {
			m = cloneMap(m)
			m["type"] = "object"
		}
	}
	compiled, err := plans.CompileSchema(m)
	if err != nil {
		return nil, err
	}
	return &plans.Schema{Raw: m, Compiled: compiled}, nil
}

func cloneMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

// callPrompt runs a user prompt tool: its prompt rendered against the
// call's input, after the file's system prompt when it has one, to its
// model (default chat), structured when it has an output schema. As in
// graph, a tool with caller_model runs on the call's model input when it
// gives one, and a tool with caller_output_schema and no output_schema of
// its own is structured by the call's output_schema input.
func (c cursor) callPrompt(ctx context.Context, path string, t *plans.ToolFile, input map[string]any) (any, error) {
	if vs := t.InputSchema.Check(input); len(vs) > 0 {
		return nil, fmt.Errorf("input does not match %s's input_schema: %s", t.ToolName(), joinViolations(vs))
	}
	prompt, err := t.Prompt.Render(template.LimitedScope{Scope: template.MapScope{"input": input}, Limit: c.sc.valueLimit})
	if err != nil {
		return nil, fmt.Errorf("%s's prompt: %w", t.ToolName(), err)
	}
	text, ok := prompt.(string)
	if !ok {
		text = JSONText(prompt)
	}
	name := model.RoleChat
	if t.Model.Value != "" {
		name = t.Model.Value
	}
	if t.CallerModel.Value {
		if m, ok := input["model"]; ok && m != nil {
			if name, ok = m.(string); !ok {
				return nil, fmt.Errorf("%s's 'model' input must be a string, not %s", t.ToolName(), jsonKind(m))
			}
		}
	}
	schema := t.OutputSchema
	if raw, ok := input["output_schema"]; ok && raw != nil && schema == nil && t.CallerOutputSchema.Value {
		if schema, err = objectSchema(raw); err != nil {
			return nil, fmt.Errorf("%s's 'output_schema' input: %w", t.ToolName(), err)
		}
	}
	var msgs []chat.Message
	if t.System.Value != "" {
		msgs = append(msgs, chat.TextMessage(chat.RoleSystem, t.System.Value))
	}
	msgs = append(msgs, chat.TextMessage(chat.RoleUser, c.f.run.forModel(path, c.unit, t.ToolName()+"'s prompt", text)))
	return c.structured(ctx, path, name, model.RoleChat, msgs, schema)
}

func joinViolations(vs []plans.Violation) string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.String()
	}
	return strings.Join(out, "; ")
}

// structured makes the shared structured-output call for a step at path:
// validated JSON with one repair pass, or {"text": ...} without a schema.
func (c cursor) structured(ctx context.Context, path, name, role string, msgs []chat.Message, schema *plans.Schema) (any, error) {
	r := c.f.run
	if r.models == nil {
		return nil, errors.New("no models are configured; add [models] to the config, or pass --script FILE")
	}
	if err := r.ledger.overBudget(); err != nil {
		return nil, err
	}
	return r.models.Structured(ctx, name, chat.Request{Step: path, Role: role, Messages: msgs}, schema, c.modelHooks(ctx, path, path, c.unit))
}

// modelHooks returns the hooks of a step's structured calls: each call goes
// on the ledger (under site, the step's path) and into events (under
// callPath, with a repair pass one level below it), and a repair pass is a
// stop.
func (c cursor) modelHooks(ctx context.Context, site, callPath string, unit paths.Kind) model.Hooks {
	r := c.f.run
	onCall, onDelta := r.callHooks(ctx, site, callPath, unit)
	return model.Hooks{OnCall: onCall, OnDelta: onDelta, BeforeRepair: func(answer string, problems []string) (any, bool, error) {
		if err := r.ledger.overBudget(); err != nil {
			return nil, false, err
		}
		path := paths.Repair(callPath)
		r.emit(path, paths.KindRepair, EventRepair, func() any { return Repairing{Answer: answer, Violations: problems} })
		rc := c.push(Frame{Path: path, Kind: paths.KindRepair})
		d := r.stop(ctx, Stop{Kind: StopRepair, Path: path, Unit: rc.unit, Input: answer, Err: &model.StructuredError{Answer: answer, Violations: problems}, Scope: rc.sc, Stack: rc.stack, held: rc.held})
		switch d.Action {
		case Abort:
			return nil, false, d.abortError(path, nil)
		case Replace, Inject:
			return d.Value, true, nil
		}
		return nil, false, nil
	}}
}

// callHooks returns the callbacks that put model calls on the ledger and
// into events.
func (r *run) callHooks(ctx context.Context, site, callPath string, unit paths.Kind) (func(model.CallRecord), func(chat.Delta)) {
	onCall := func(rec model.CallRecord) {
		path, pathUnit := callPath, unit
		if rec.Repair {
			path, pathUnit = paths.Repair(callPath), paths.KindRepair
		}
		var cost *float64
		if rec.Err == nil {
			cost = r.ledger.add(site, rec.Reply.Provider, rec.Reply.Model, rec.Reply.Usage)
		} else if rec.Reply.Provider == "" {
			// A failed call has no reply to say who answered; name the
			// model it was made to.
			rec.Reply.Provider, rec.Reply.Model, _ = r.models.Resolve(rec.Name)
		}
		r.emit(path, pathUnit, EventModelCall, func() any {
			ev := ModelCalled{Site: site, Role: rec.Role, Provider: rec.Reply.Provider, Model: rec.Reply.Model,
				Usage: rec.Reply.Usage, CostUSD: cost, Ms: ms(rec.Elapsed), Retries: rec.Reply.Retries, Request: rec.Request, Reply: rec.Reply}
			if rec.Err != nil {
				ev.Error, ev.Aborted = stoppedText(ctx, rec.Err), ctx.Err() != nil
			}
			if f := rec.Request.Format; f != nil && f.Strict && rec.Err == nil {
				ev.StructuredOutput = &StrictRecord{Requested: true, Sent: rec.Reply.StrictSent, Provider: rec.Reply.Provider, DowngradeReason: rec.Reply.DowngradeReason}
			}
			return ev
		})
	}
	var onDelta func(chat.Delta)
	if r.reads(EventModelDelta) {
		onDelta = func(d chat.Delta) { r.emit(callPath, unit, EventModelDelta, func() any { return d }) }
		if r.cfg.HasSecrets() {
			onCall, onDelta = r.redactedDeltas(onCall, onDelta)
		}
	}
	return onCall, onDelta
}

// redactedDeltas wraps a call site's hooks so that the deltas every sink
// hears (the run store, the answer on stdout, the workbench) hide the
// configuration's secrets: each call's text and reasoning stream through
// a SecretStream, so that a key split between two deltas is hidden whole.
// What a stream holds back goes out as a delta of its own before the call
// is recorded (its reply is redacted where it is shown and stored), and
// before a Reset voids an attempt's text, so that the deltas of a call,
// joined, are its reply, redacted.
func (r *run) redactedDeltas(onCall func(model.CallRecord), onDelta func(chat.Delta)) (func(model.CallRecord), func(chat.Delta)) {
	text, reasoning := r.cfg.SecretStream(), r.cfg.SecretStream()
	release := func() {
		if d := (chat.Delta{Text: text.End(), Reasoning: reasoning.End()}); d.Text != "" || d.Reasoning != "" {
			onDelta(d)
		}
	}
	redactedCall := func(rec model.CallRecord) {
		release()
		onCall(rec)
	}
	redactedDelta := func(d chat.Delta) {
		if d.Reset {
			release()
			onDelta(d)
			return
		}
		if d.Text, d.Reasoning = text.Next(d.Text), reasoning.Next(d.Reasoning); d.Text != "" || d.Reasoning != "" {
			onDelta(d)
		}
	}
	return redactedCall, redactedDelta
}

// complete makes one plain model call for a step at path (the solver).
func (r *run) complete(ctx context.Context, path, name string, req chat.Request) (chat.Reply, error) {
	if r.models == nil {
		return chat.Reply{}, errors.New("no models are configured; add [models] to the config, or pass --script FILE")
	}
	if err := r.ledger.overBudget(); err != nil {
		return chat.Reply{}, err
	}
	onCall, onDelta := r.callHooks(ctx, path, path, paths.KindStep)
	start := time.Now()
	reply, err := r.models.Call(ctx, name, req, onDelta)
	onCall(model.CallRecord{Name: name, Role: req.Role, Request: req, Reply: reply, Err: err, Elapsed: time.Since(start)})
	return reply, err
}
