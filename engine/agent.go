package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/stepwise-dev/stepwise/engine/chat"
	"github.com/stepwise-dev/stepwise/engine/model"
	paths "github.com/stepwise-dev/stepwise/engine/path"
	"github.com/stepwise-dev/stepwise/plans"
)

// The words an agent hears from the harness. They are constants so that
// the request prefix stays byte-stable from round to round and run to run.
const (
	agentSystemPrompt = "You carry out one task as a step of a plan. Use the tools you are given as the task needs; " +
		"make tool calls that do not depend on each other in the same turn. Accomplish the task in as few turns as you can. " +
		"When you have what the task needs, answer with one JSON value that matches this JSON Schema, and nothing else:\n"
	lastTurnNote = "This is your last turn: no more tools can be called. Answer now with the JSON the schema asks for, " +
		"using what you have already gathered."
	emptyReplyNote = "Your reply was empty. Call a tool, or answer with the JSON the schema asks for."
	refusalNote    = "Your reply declined the task. Answer with the JSON the schema asks for, from what you can establish."
	// toolLimitNote is seeds/002's message for a call past max_tool_calls
	// or max_fan_out.
	toolLimitNote = "You have reached the maximum number of tool calls. Produce your final JSON answer now using only what you have already gathered. No further tool calls will be executed."
)

// agentLoop is one run of an agent step: a bounded tool-calling loop that
// returns JSON conforming to the step's output_schema, or final: false.
type agentLoop struct {
	c      cursor
	rc     cursor // the current round's: c with the round's frame
	step   *plans.Step
	in     *plans.AgentInput
	path   string
	model  string
	tools  []chat.ToolDef
	allow  map[string]bool
	msgs   []chat.Message
	called []any // tools_called: {tool, round}

	toolCalls int
	fanOut    int
	refusals  int
}

// runAgent runs an agent step at path.
func (c cursor) runAgent(ctx context.Context, s *plans.Step, in *plans.AgentInput, path string) (any, error) {
	r := c.f.run
	if r.models == nil {
		return nil, errors.New("no models are configured; add [models] to the config, or pass --script FILE")
	}
	prompt, err := c.agentText(in.Prompt)
	if err != nil {
		return nil, fmt.Errorf("prompt: %w", err)
	}
	system := agentSystemPrompt
	if r.cfg != nil && r.cfg.Prompts.Agent != "" {
		system = r.cfg.Prompts.Agent + "\n"
	}
	schemaJSON, _ := json.MarshalIndent(in.OutputSchema.Raw, "", "  ")
	system += string(schemaJSON)
	if in.SystemPrompt != nil {
		extra, err := c.agentText(in.SystemPrompt)
		if err != nil {
			return nil, fmt.Errorf("system_prompt: %w", err)
		}
		system += "\n\n" + extra
	}
	tools, err := c.agentTools(ctx, in)
	if err != nil {
		return nil, err
	}
	a := &agentLoop{c: c, step: s, in: in, path: path, model: model.RoleChat, tools: tools, allow: map[string]bool{},
		msgs: []chat.Message{chat.TextMessage(chat.RoleSystem, system), chat.TextMessage(chat.RoleUser, r.forModel(path, c.unit, "the agent's prompt", prompt))}, called: []any{}}
	if in.Model.Value != "" {
		a.model = in.Model.Value
	}
	for _, t := range tools {
		a.allow[t.Name] = true
	}
	return a.run(ctx)
}

// agentText renders a prompt. Data that ran out does not fail the step:
// the agent gets the text as written and what ran out, and can say so.
func (c cursor) agentText(v *plans.Value) (string, error) {
	text, err := renderString(v, c.sc)
	if err == nil || !isEmptyData(err) {
		return text, err
	}
	return v.String + "\n\n(Data that ran out while this was written: " + err.Error() + ")", nil
}

// agentTools resolves the step's tools patterns (or the whole catalog)
// into what the model is offered, sorted by name so that the request is
// the same bytes every time. A pattern that matches nothing is an error
// naming it: a typo would otherwise shrink the tools without a word.
func (c cursor) agentTools(ctx context.Context, in *plans.AgentInput) ([]chat.ToolDef, error) {
	r := c.f.run
	var patterns []paths.Pattern
	var written []string
	if in.Tools != nil {
		for _, p := range in.Tools.Patterns {
			pat, err := paths.Compile(p.Value)
			if err != nil {
				return nil, fmt.Errorf("tools pattern '%s': %w", p.Value, err)
			}
			patterns, written = append(patterns, pat), append(written, p.Value)
		}
	}
	wanted := func(name string) bool {
		if in.Tools == nil {
			return true
		}
		return slices.ContainsFunc(patterns, func(p paths.Pattern) bool { return p.Match(name) })
	}
	var infos []plans.ToolInfo
	if r.catalog != nil {
		for _, t := range r.catalog.Tools() {
			if t.Unusable == "" && wanted(t.Name) {
				infos = append(infos, t)
			}
		}
		for _, server := range r.catalog.Servers() {
			if !serverWanted(server, written, in.Tools == nil) || r.tools == nil {
				continue
			}
			list, err := r.tools.ServerTools(ctx, server)
			if err != nil {
				return nil, fmt.Errorf("tools: %w", err)
			}
			for _, t := range list {
				if wanted(t.Name) {
					infos = append(infos, t)
				}
			}
		}
	}
	// Never the planner, and never a plan on the call stack: calling it
	// would be a cycle.
	infos = slices.DeleteFunc(infos, func(t plans.ToolInfo) bool {
		id, isPlan := strings.CutPrefix(t.Name, "plan__")
		return t.Name == plans.PlannerTool || plans.IsControl(t.Name) || isPlan && slices.Contains(c.f.calls, id)
	})
	for i, p := range patterns {
		if !slices.ContainsFunc(infos, func(t plans.ToolInfo) bool { return p.Match(t.Name) }) {
			return nil, fmt.Errorf("tools pattern '%s' matches no tool here", written[i])
		}
	}
	slices.SortFunc(infos, func(a, b plans.ToolInfo) int { return strings.Compare(a.Name, b.Name) })
	defs := make([]chat.ToolDef, len(infos))
	for i, t := range infos {
		schema := t.InputSchema
		if schema == nil {
			schema = map[string]any{"type": "object"}
		}
		defs[i] = chat.ToolDef{Name: t.Name, Description: t.Description, InputSchema: schema}
	}
	return defs, nil
}

// serverWanted reports whether any pattern could name a tool of server, so
// that only the servers an agent may use are connected to.
func serverWanted(server string, patterns []string, all bool) bool {
	if all {
		return true
	}
	for _, p := range patterns {
		ns, _, found := strings.Cut(p, "__")
		if !found || strings.Contains(ns, "*") || ns == server {
			return true
		}
	}
	return false
}

// run is the loop of DESIGN.md section 4.
func (a *agentLoop) run(ctx context.Context) (any, error) {
	r := a.c.f.run
	in := a.in
	rounds := in.Iterations()
	threshold := plans.DefaultExhaustionThreshold
	if ve := in.ValidationExhaustion; ve != nil && ve.Threshold.Set {
		threshold = ve.Threshold.Value
	}
	// The step's own llm_timeout_seconds bounds each attempt of its
	// calls; without it, the call takes [settings]', and its error names
	// the key that applied.
	var timeout time.Duration
	if in.LLMTimeoutSeconds.Set {
		timeout = time.Duration(in.LLMTimeoutSeconds.Value) * time.Second
	}
	// Every round asks for the same answer; the request's format is never
	// changed, so the rounds share one.
	format := &chat.ResponseFormat{Name: "answer", Schema: in.OutputSchema.Raw, Strict: in.StructuredOutput.Value == "strict"}
	for round := 1; round <= rounds; round++ {
		last := round == rounds
		roundPath := paths.Round(a.path, round)
		a.rc = a.c.push(Frame{Path: roundPath, Kind: paths.KindRound})
		// The history the earlier rounds built is the prefix this
		// round's request shares with the last one: it ends in a cache
		// breakpoint, before anything only this round says.
		history := len(a.msgs)
		if last {
			a.msgs = append(a.msgs, chat.TextMessage(chat.RoleUser, lastTurnNote))
		}
		// The request holds the history itself, not a copy: later rounds
		// only append to it, past what this request sees, and its
		// capacity ends where it does, so that whoever appends to the
		// request's messages (a record is written after the round that
		// made it) gets a copy rather than a later round's slots.
		req := chat.Request{Step: a.path, Role: model.RoleChat, Messages: a.msgs[:len(a.msgs):len(a.msgs)], CacheAt: []int{0, history - 1}, Timeout: timeout, Format: format}
		if len(a.tools) > 0 && rounds > 1 {
			// Tools stay in every round's request, so that the cached
			// prefix (which they begin) still matches; when no call may
			// be made, the model is told so by the tool choice. A step
			// of one round has no prefix to share and is offered none.
			req.Tools = a.tools
			if last || a.spent() {
				req.ToolChoice = chat.ToolChoiceNone
			}
		}
		reply, err := a.ask(ctx, roundPath, req)
		if err != nil {
			return nil, err
		}
		if reply.StrictToolsRefused {
			// The provider refused the strict tool schemas and went on
			// without them, for the rest of the step. The thinking of the
			// turns made while they were on was made with another tool
			// list, so it leaves the conversation (seeds/002).
			a.msgs = chat.WithoutThinking(a.msgs)
		}
		if len(reply.ToolCalls) > 0 && req.MayCallTools() {
			a.msgs = append(a.msgs, chat.AssistantMessage(reply))
			results, err := a.callTools(ctx, round, roundPath, reply.ToolCalls)
			if err != nil {
				return nil, err
			}
			a.msgs = append(a.msgs, results)
			continue
		}
		// Tool calls that could not be made are no part of the
		// conversation: a call must be followed by its result.
		said := chat.AssistantMessage(chat.Reply{Text: reply.Text, Thinking: reply.Thinking})
		if strings.TrimSpace(reply.Text) == "" {
			// A message without content is refused by some providers
			// (Anthropic's); an empty reply that showed no thinking
			// leaves none, and the note says what happened.
			if len(said.Blocks) > 0 {
				a.msgs = append(a.msgs, said)
			}
			a.msgs = append(a.msgs, chat.TextMessage(chat.RoleUser, emptyReplyNote))
			continue
		}
		if reply.FinishReason == "refusal" {
			// A refusal is no answer to repair; it costs its round, and
			// the model hears that the task still wants one.
			a.msgs = append(a.msgs, said, chat.TextMessage(chat.RoleUser, refusalNote))
			continue
		}
		value, problems := model.CheckAnswer(reply.Text, in.OutputSchema)
		if problems != nil {
			value, err = r.models.Repair(ctx, req, in.OutputSchema, reply.Text, problems, a.rc.modelHooks(ctx, a.path, roundPath, paths.KindRound))
			var refused *model.StructuredError
			switch {
			case errors.As(err, &refused):
				problems = refused.Violations
			case err != nil:
				return nil, fmt.Errorf("round %d: repair: %w", round, err)
			default:
				problems = nil
			}
		}
		if problems == nil {
			return a.result(value, round, true, false), nil
		}
		if out, done, err := a.refused(ctx, round, threshold, problems); done || err != nil {
			return out, err
		}
		a.msgs = append(a.msgs, said, chat.TextMessage(chat.RoleUser, refusalMessage(problems, a.refusals, threshold)))
	}
	return a.result(map[string]any{}, rounds, false, false), nil
}

// ask makes one round's model call between the round and reply stops.
func (a *agentLoop) ask(ctx context.Context, roundPath string, req chat.Request) (chat.Reply, error) {
	r := a.c.f.run
	c := a.rc
	// The stops box the request and the reply, a copy each, so they are
	// made only when a hook is there to read them.
	hooked := r.hook != nil
	// Past the spend cap the round stop carries the error, so that a
	// debugger holds there and a reply given by hand spends nothing.
	overBudget := r.ledger.overBudget()
	if hooked {
		d := r.stop(ctx, Stop{Kind: StopRound, Path: roundPath, Unit: c.unit, Tool: plans.ControlAgent, Step: a.step, Input: req, Err: overBudget, Scope: c.sc, Stack: c.stack, held: c.held})
		switch d.Action {
		case Abort:
			return chat.Reply{}, d.abortError(roundPath, nil)
		case Replace, Inject:
			return ReplyFrom(d.Value)
		}
	}
	if overBudget != nil {
		return chat.Reply{}, overBudget
	}
	onCall, onDelta := r.callHooks(ctx, a.path, roundPath, paths.KindRound)
	start := time.Now()
	reply, err := r.models.Call(ctx, a.model, req, onDelta)
	onCall(model.CallRecord{Name: a.model, Role: req.Role, Request: req, Reply: reply, Err: err, Elapsed: time.Since(start)})
	if err != nil {
		round, _ := paths.RoundNumber(paths.Last(roundPath))
		return chat.Reply{}, fmt.Errorf("round %d: %w", round, err)
	}
	if !hooked {
		return reply, nil
	}
	d := r.stop(ctx, Stop{Kind: StopReply, Path: roundPath, Unit: c.unit, Tool: plans.ControlAgent, Step: a.step, Input: req, Output: reply, Scope: c.sc, Stack: c.stack, held: c.held})
	switch d.Action {
	case Abort:
		return chat.Reply{}, d.abortError(roundPath, nil)
	case Replace, Inject:
		return ReplyFrom(d.Value)
	}
	return reply, nil
}

// ReplyFrom reads a hook's replacement for a model reply as the engine
// takes it: a chat.Reply, data in its form ({"text": ...}, {"tool_calls":
// [...]}), a string (the reply's text), or any other value, taken as the
// answer itself.
func ReplyFrom(v any) (chat.Reply, error) {
	switch x := v.(type) {
	case chat.Reply:
		return x, nil
	case *chat.Reply:
		return *x, nil
	case string:
		return chat.Reply{Text: x}, nil
	case map[string]any:
		_, text := x["text"]
		_, calls := x["tool_calls"]
		_, reasoning := x["reasoning"]
		if !text && !calls && !reasoning {
			return chat.Reply{Text: JSONText(x), FinishReason: "stop"}, nil
		}
	default:
		return chat.Reply{Text: JSONText(x), FinishReason: "stop"}, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return chat.Reply{}, fmt.Errorf("a replacement reply must be a model reply: %w", err)
	}
	var reply chat.Reply
	if err := json.Unmarshal(b, &reply); err != nil {
		return chat.Reply{}, fmt.Errorf("a replacement reply must be a model reply: %w", err)
	}
	return reply, nil
}

// refused counts an answer that failed its schema after the repair pass.
// At the threshold, validation_exhaustion ends the step: failed, or
// settled with default_output.
func (a *agentLoop) refused(ctx context.Context, round, threshold int, problems []string) (any, bool, error) {
	a.refusals++
	if a.refusals < threshold {
		return nil, false, nil
	}
	ve := a.in.ValidationExhaustion
	if ve == nil || ve.Mode.Value != "default" {
		return nil, true, fmt.Errorf("VALIDATION_EXHAUSTED: Step '%s' exhausted its validation-rejection budget (%d/%d): %s",
			a.stepName(), a.refusals, threshold, strings.Join(problems, "; "))
	}
	out, err := ve.DefaultOutput.Render(a.c.sc)
	if err != nil {
		return nil, true, fmt.Errorf("validation_exhaustion.default_output: %w", err)
	}
	msg := fmt.Sprintf("Step '%s' settled with its declared default_output after %d schema rejection(s) (validation_exhaustion.mode: 'default')", a.stepName(), a.refusals)
	a.c.f.run.emit(a.path, a.c.unit, EventWarning, func() any { return Warning{Message: msg} })
	return a.result(out, round, true, true), true, nil
}

// spent reports whether max_tool_calls is used up: later rounds are then
// offered no tools, since every call would be refused.
func (a *agentLoop) spent() bool {
	limit := plans.DefaultMaxToolCalls
	if a.in.MaxToolCalls.Set {
		limit = a.in.MaxToolCalls.Value
	}
	return a.toolCalls >= limit
}

func (a *agentLoop) stepName() string {
	if a.step.ID.Value != "" {
		return a.step.ID.Value
	}
	return a.path
}

// refusalMessage tells the model what was wrong with its answer, with the
// count so far and the limit, as seeds/002's refusals carry them.
func refusalMessage(problems []string, count, threshold int) string {
	var b strings.Builder
	b.WriteString("Your answer does not match the JSON Schema:\n")
	for _, p := range problems {
		b.WriteString("- " + p + "\n")
	}
	fmt.Fprintf(&b, "Answer again with JSON that matches it. (rejections: %d, threshold: %d)", count, threshold)
	return b.String()
}

func (a *agentLoop) result(output any, rounds int, final, defaulted bool) map[string]any {
	out := map[string]any{"output": output, "iterations": rounds, "tools_called": a.called, "final": final}
	if defaulted {
		out["settled_by_default"] = true
	}
	return out
}

// callTools runs the tool calls of one turn, concurrently, and returns the
// tool message with their results in the order the model made the calls. A
// tool that fails, is refused or runs out of time answers with an error
// the model reads; it never fails the step. Only an abort does.
func (a *agentLoop) callTools(ctx context.Context, round int, roundPath string, calls []chat.ToolCall) (chat.Message, error) {
	results := make([]chat.Block, len(calls))
	if len(calls) == 1 {
		// A lone call has nothing to run beside; a goroutine (and the
		// closure and error list it would share) would only add to the
		// round.
		call := calls[0]
		a.called = append(a.called, map[string]any{"tool": call.Name, "round": round})
		block, err := a.callTool(ctx, paths.Call(roundPath, call.Name, 1), call, a.admit(call.Name))
		if err != nil {
			return chat.Message{}, err
		}
		block.Text = a.forModel(round, call.Name, block.Text)
		results[0] = block
		return chat.Message{Role: chat.RoleTool, Blocks: results}, nil
	}
	callPaths := paths.Calls(roundPath, len(calls), func(i int) string { return calls[i].Name })
	errs := make([]error, len(calls))
	var wg sync.WaitGroup
	for i, call := range calls {
		a.called = append(a.called, map[string]any{"tool": call.Name, "round": round})
		// Admitted in the order the model made the calls, so that the
		// limits cut the same calls every run; run concurrently after.
		refusal := a.admit(call.Name)
		wg.Go(func() {
			results[i], errs[i] = a.callTool(ctx, callPaths[i], calls[i], refusal)
			results[i].Text = a.forModel(round, calls[i].Name, results[i].Text)
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return chat.Message{}, err
		}
	}
	return chat.Message{Role: chat.RoleTool, Blocks: results}, nil
}

// forModel is run.forModel for the result of a tool the agent called in
// round, said in the warning by the round and the tool.
func (a *agentLoop) forModel(round int, tool, text string) string {
	return a.c.f.run.forModel(a.path, a.c.unit, fmt.Sprintf("round %d: %s's result", round, tool), text)
}

// forModel cuts a text longer than [limits] model_input_bytes (a tool
// result an agent reads, a rendered prompt) at a character's start, and
// says so where it is cut: a text of megabytes would otherwise go whole
// into the request (and, in an agent, every one after), past what the
// model can read. The record keeps the whole text. A cut is also a
// warning of the unit at path, naming what (the prompt, a tool's result)
// was cut: the marker is seen only by the model, and whoever reads the
// run should not have to find it in the request to learn the model read
// less than the run had.
func (r *run) forModel(path string, unit paths.Kind, what, text string) string {
	cfg := r.cfg
	if cfg == nil || cfg.Limits.ModelInputBytes <= 0 || int64(len(text)) <= cfg.Limits.ModelInputBytes {
		return text
	}
	cut := int(cfg.Limits.ModelInputBytes)
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	r.emit(path, unit, EventWarning, func() any {
		return Warning{Message: fmt.Sprintf("%s was cut to %d of its %d bytes for the model ([limits] model_input_bytes); the record keeps it whole", what, cut, len(text))}
	})
	return text[:cut] + fmt.Sprintf("\n[truncated: showing %d of %d bytes]", cut, len(text))
}

// callTool dispatches one call through the path every step's tool takes,
// between the tool and result stops, or, for a call admit refused, tells
// the model why. It returns what the model reads: the result as JSON, or
// "Error: ..." marked as an error.
func (a *agentLoop) callTool(ctx context.Context, callPath string, call chat.ToolCall, refusal string) (chat.Block, error) {
	r := a.c.f.run
	args, problem := toolArguments(call.Arguments)
	if refusal == "" && problem != "" {
		refusal = "Error: " + problem
	}
	if refusal != "" {
		r.emit(callPath, paths.KindCall, EventToolStart, func() any { return ToolStarted{Tool: call.Name, Args: args} })
		r.emit(callPath, paths.KindCall, EventToolEnd, func() any { return ToolEnded{Tool: call.Name, IsError: true, Error: refusal} })
		return chat.ToolResultBlock(call.ID, refusal, true), nil
	}
	defer r.thread(callPath)()
	c := a.rc.push(Frame{Path: callPath, Kind: paths.KindCall, Tool: call.Name})
	// A call's time runs from its tool stop, as a step's from its step
	// stop: a hold there is the call's.
	start := r.now()
	d := r.stop(ctx, Stop{Kind: StopTool, Path: callPath, Unit: c.unit, Tool: call.Name, Step: a.step, Input: args, Scope: c.sc, Stack: c.stack, held: c.held})
	switch d.Action {
	case Abort:
		return chat.Block{}, d.abortError(callPath, nil)
	case Inject:
		// The call is not made; its events say so, so that the record
		// (and a replay of it) has the value the model was given.
		r.emit(callPath, paths.KindCall, EventToolStart, func() any { return ToolStarted{Tool: call.Name, Args: args} })
		r.emitTimed(callPath, paths.KindCall, EventToolEnd, func() (any, time.Time) {
			end := ToolEnded{Tool: call.Name, Result: d.Value, Injected: true}
			now := r.now()
			end.Ms, end.HeldMs = c.times(start, now)
			end.Decided, end.Reused = d.marks()
			return end, now
		})
		return chat.ToolResultBlock(call.ID, JSONText(d.Value), false), nil
	case Deny:
		// Not made either; the model reads why, as it reads a call that
		// failed, and may go on without it.
		r.emit(callPath, paths.KindCall, EventToolStart, func() any { return ToolStarted{Tool: call.Name, Args: args} })
		r.emitTimed(callPath, paths.KindCall, EventToolEnd, func() (any, time.Time) {
			end := ToolEnded{Tool: call.Name, IsError: true, Error: ErrDenied.Error()}
			now := r.now()
			end.Ms, end.HeldMs = c.times(start, now)
			return end, now
		})
		return chat.ToolResultBlock(call.ID, "Error: "+ErrDenied.Error(), true), nil
	case Edit:
		if edited, ok := d.Value.(map[string]any); ok {
			args = edited
		}
	}
	limit := time.Duration(plans.DefaultToolTimeoutSeconds) * time.Second
	if a.in.ToolTimeout.Set {
		limit = time.Duration(a.in.ToolTimeout.Value) * time.Second
	}
	tctx, cancel := context.WithTimeout(ctx, limit)
	r.emit(callPath, paths.KindCall, EventToolStart, func() any { return ToolStarted{Tool: call.Name, Args: args} })
	result, err := c.call(tctx, callPath, call.Name, args)
	timedOut := err != nil && ctx.Err() == nil && tctx.Err() != nil
	cancel()
	if timedOut {
		err = fmt.Errorf("tool call timed out after %dms", limit.Milliseconds())
	}
	r.emitTimed(callPath, paths.KindCall, EventToolEnd, func() (any, time.Time) {
		end := ToolEnded{Tool: call.Name, IsError: err != nil, Result: result}
		now := r.now()
		end.Ms, end.HeldMs = c.times(start, now)
		if err != nil {
			end.Error = stoppedText(ctx, err)
		}
		return end, now
	})
	var abort *AbortError
	if errors.As(err, &abort) {
		return chat.Block{}, err
	}
	d = r.stop(ctx, Stop{Kind: StopResult, Path: callPath, Unit: c.unit, Tool: call.Name, Step: a.step, Input: args, Output: result, Err: err, Scope: c.sc, Stack: c.stack, held: c.held})
	switch d.Action {
	case Abort:
		return chat.Block{}, d.abortError(callPath, err)
	case Replace:
		return chat.ToolResultBlock(call.ID, JSONText(d.Value), false), nil
	}
	if err != nil {
		return chat.ToolResultBlock(call.ID, "Error: "+err.Error(), true), nil
	}
	return chat.ToolResultBlock(call.ID, JSONText(result), false), nil
}

// toolArguments reads a tool call's arguments, which must be one JSON
// object; problem says what is wrong with them otherwise, in words the
// model can act on.
func toolArguments(raw json.RawMessage) (args map[string]any, problem string) {
	if len(raw) == 0 {
		return map[string]any{}, ""
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return map[string]any{"arguments": string(raw)}, "the arguments are not valid JSON; send one JSON object"
	}
	switch x := v.(type) {
	case map[string]any:
		return x, ""
	case nil:
		return map[string]any{}, ""
	}
	return map[string]any{"arguments": v}, fmt.Sprintf("the arguments are %s, not a JSON object", jsonKind(v))
}

// admit checks a call against the step's tools and its limits, and counts
// it. It returns what the model is told when the call is not run.
func (a *agentLoop) admit(name string) string {
	if name == plans.PlannerTool {
		return "Error: plan_and_execute is not available inside an agent step; call a plan__ tool instead"
	}
	if !a.allow[name] {
		names := make([]string, len(a.tools))
		for i, t := range a.tools {
			names[i] = t.Name
		}
		return fmt.Sprintf("Error: there is no tool '%s' here; the tools are: %s", name, strings.Join(names, ", "))
	}
	if a.spent() {
		return toolLimitNote
	}
	if strings.HasPrefix(name, "plan__") && a.in.MaxFanOut.Set {
		if a.fanOut >= a.in.MaxFanOut.Value {
			return toolLimitNote
		}
		a.fanOut++
	}
	a.toolCalls++
	return ""
}
