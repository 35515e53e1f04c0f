package inspector

import (
	"slices"
	"strconv"
	"strings"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/chat"
	"github.com/stepwise-dev/stepwise/tui/common"
	"github.com/stepwise-dev/stepwise/tui/format"
	"github.com/stepwise-dev/stepwise/tui/live"
)

// streams are the incrementally laid-out texts of a page, kept between
// frames: a reply and its reasoning as they stream in.
type streams struct {
	reply, reasoning stream
}

// content builds the page of one tab of a node.
type content struct {
	*builder
	n       live.Node
	stop    *debugger.Snapshot // nil unless the run is held at the node
	streams *streams
}

// build lays out tab.
func (c *content) build(tab Tab) {
	switch tab {
	case TabInput:
		c.input()
	case TabModel:
		c.model()
	case TabTool:
		c.tool()
	case TabResult:
		c.result()
	case TabRefusals:
		c.refusals()
	case TabRepair:
		c.repair()
	case TabScope:
		c.scope()
	case TabUsage:
		c.usage()
	case TabStop:
		c.stopTab()
	}
}

// json lays out a value under the current section at indent.
func (c *content) json(name string, v any, indent, foldFrom int) {
	newJSONView(name, v, foldFrom).lay(c.builder, indent)
}

// keyed lays out a value as a member of an enclosing object, "key":
// value, folded from foldFrom; view names it for folding.
func (c *content) keyed(view, key string, v any, indent, foldFrom int) {
	jv := newJSONView(view, v, foldFrom)
	jv.root.key, jv.root.keyed = key, true
	jv.lay(c.builder, indent)
}

func (c *content) input() {
	v := c.n.Input
	if v == nil && c.stop != nil {
		v = c.stop.Input
	}
	c.heading("Input", seg{"  rendered", c.p.muted})
	c.json("input", v, 2, noFold)
}

// model shows a model call: who answered, the reply (streaming in while
// the call runs) and the request. The request is known once the call has
// ended, or when the run is held at the round before the call.
func (c *content) model() {
	n := c.n
	var req *chat.Request
	var reply *chat.Reply
	if s := c.stop; s != nil && (s.Kind == engine.StopRound || s.Kind == engine.StopReply) {
		req = asRequest(s.Input)
		reply = asReply(s.Output)
	}
	call := n.Call
	if req == nil && call != nil {
		req = &call.Request
	}
	if reply == nil && call != nil && call.Error == "" {
		reply = &call.Reply
	}

	if call != nil {
		segs := []seg{{"  " + call.Model, c.p.strong}, {" via " + call.Provider + " · " + call.Role, c.p.muted}}
		if call.Ms > 0 {
			segs = append(segs, seg{" · " + format.Millis(call.Ms), c.p.muted})
		}
		c.heading("Call", segs...)
	}
	switch {
	case call != nil && call.Aborted:
		c.note(2, "■ cut short by the run's abort: "+call.Error)
	case n.CallError != "":
		c.problem(2, n.CallError)
	case call != nil && call.Error != "":
		c.problem(2, call.Error)
	}

	switch {
	case reply != nil:
		c.reply(reply)
	case n.Reply != "" || n.Reasoning != "":
		c.heading("Reply", seg{"  streaming…", c.p.muted})
		c.streamed(n.Reasoning, n.Reply)
	case c.stop != nil && c.stop.Kind == engine.StopRound:
		c.heading("Reply")
		c.note(2, "not asked yet: the run is held before the call")
	case n.Status == live.Running:
		c.heading("Reply")
		c.note(2, "waiting for the model…")
	}

	if req == nil {
		c.heading("Request")
		if n.Status == live.Failed && n.Aborted {
			c.note(2, "none: the run was aborted before the call was made, or before it ended")
			return
		}
		c.note(2, "shown once the call has ended, or while the run is held before it")
		return
	}
	c.request(req, reply)
}

// streamed lays out a reply that is still streaming: its reasoning, then
// its text, each laid out incrementally.
func (c *content) streamed(reasoning, text string) {
	if reasoning != "" {
		c.note(2, "reasoning")
		c.lines = append(c.lines, c.streams.reasoning.lay(reasoning, c.width, 4, c.p.muted)...)
	}
	if text != "" {
		c.lines = append(c.lines, c.streams.reply.lay(text, c.width, 2, c.p.text)...)
	}
}

func (c *content) reply(r *chat.Reply) {
	var extra []seg
	if r.FinishReason != "" {
		extra = append(extra, seg{"  finish " + r.FinishReason, c.p.muted})
	}
	c.heading("Reply", extra...)
	reasoning := r.Reasoning()
	if r.Text == "" && reasoning == "" && len(r.ToolCalls) == 0 {
		c.note(2, "empty: no text and no tool call")
	}
	if v, ok := parseJSON(r.Text); ok {
		if reasoning != "" {
			c.note(2, "reasoning")
			c.lines = append(c.lines, c.streams.reasoning.lay(reasoning, c.width, 4, c.p.muted)...)
		}
		c.json("reply", v, 2, noFold)
	} else {
		c.streamed(reasoning, r.Text)
	}
	if redacted := redactedBlocks(r.Thinking); redacted > 0 {
		c.note(2, strconv.Itoa(redacted)+" redacted thinking block(s): encrypted by the provider, sent back as they came")
	}
	if len(r.ToolCalls) > 0 {
		c.heading("Tool calls", seg{"  " + strconv.Itoa(len(r.ToolCalls)), c.p.muted})
		for i, tc := range r.ToolCalls {
			c.add(2, seg{tc.Name, c.p.strong}, seg{"  " + tc.ID, c.p.muted})
			c.json("reply.call"+strconv.Itoa(i), tc.Arguments, 4, noFold)
		}
	}
}

// request lays out what was sent: the response format, the messages with
// their roles, the tools offered. The reply, nil until there is one, says
// whether strict output that was asked for was sent.
func (c *content) request(r *chat.Request, reply *chat.Reply) {
	c.heading("Request", seg{"  role " + r.Role, c.p.muted})
	if f := r.Format; f != nil {
		c.field(2, "format", f.Name+" ("+strictMode(f, reply)+")", c.p.text)
		if f.Schema != nil {
			c.keyed("format", "schema", f.Schema, 2, 2)
		}
	}
	if r.Temperature != nil {
		c.field(2, "temperature", strconv.FormatFloat(*r.Temperature, 'g', -1, 64), c.p.literal)
	}
	c.heading("Messages", seg{"  " + strconv.Itoa(len(r.Messages)), c.p.muted})
	for i, msg := range r.Messages {
		head := []seg{{msg.Role, c.p.strong}}
		if r.CacheBreakpoint(i) {
			head = append(head, seg{"  cache breakpoint at its end", c.p.muted})
		}
		c.add(2, head...)
		for j, b := range msg.Blocks {
			c.block("msg"+strconv.Itoa(i)+"."+strconv.Itoa(j), b)
		}
	}
	if len(r.Tools) == 0 {
		c.heading("Tools", seg{"  none offered", c.p.muted})
		return
	}
	offered := []seg{{"  " + strconv.Itoa(len(r.Tools)) + " offered", c.p.muted}}
	if !r.MayCallTools() {
		offered = append(offered, seg{" · tool choice none: the model must answer", c.p.muted})
	}
	c.heading("Tools", offered...)
	for i, t := range r.Tools {
		c.add(2, seg{t.Name, c.p.strong})
		if t.Description != "" {
			c.text(4, t.Description, c.p.muted)
		}
		if t.InputSchema != nil {
			c.keyed("tool"+strconv.Itoa(i), "input_schema", t.InputSchema, 4, 0)
		}
	}
}

// strictMode says how an answer in format f is held to its schema: by the
// provider (strict output sent) or by validation after the answer, and, for
// strict output asked for and not sent, the run record's reason.
func strictMode(f *chat.ResponseFormat, reply *chat.Reply) string {
	switch {
	case !f.Strict:
		return "validated after"
	case reply == nil:
		return "strict asked for"
	case reply.StrictSent:
		return "strict, sent"
	}
	return "strict asked for, not sent: " + reply.DowngradeReason + "; validated after"
}

// block lays out one block of a request's message, in the order the
// message holds it; name keys its JSON's folds. A cache breakpoint, which
// ends a message, is shown on the message's line.
func (c *content) block(name string, b chat.Block) {
	switch b.Type {
	case chat.BlockText:
		c.text(4, b.Text, c.p.text)
	case chat.BlockThinking:
		label := "thinking"
		if b.Signature != "" {
			label += " (signed)"
		}
		c.note(4, label)
		c.text(6, b.Text, c.p.muted)
	case chat.BlockRedactedThinking:
		c.note(4, "redacted thinking: encrypted by the provider, sent back as it came")
	case chat.BlockToolUse:
		c.add(4, seg{"→ ", c.p.muted}, seg{b.Name, c.p.strong}, seg{"  " + b.ID, c.p.muted})
		c.json(name, b.Input, 6, 1)
	case chat.BlockToolResult:
		head := []seg{{"← ", c.p.muted}, {"answers " + b.ID, c.p.muted}}
		if b.IsError {
			head = append(head, seg{"  error", c.p.problem})
		}
		c.add(4, head...)
		// A tool's result is JSON more often than not; shown as a value
		// it can be folded, its nested parts starting folded.
		if v, ok := parseJSON(b.Text); ok {
			c.json(name, v, 6, 1)
		} else {
			c.text(6, b.Text, c.p.text)
		}
	}
}

// redactedBlocks counts the redacted thinking among blocks.
func redactedBlocks(blocks []chat.Block) int {
	n := 0
	for _, b := range blocks {
		if b.Type == chat.BlockRedactedThinking {
			n++
		}
	}
	return n
}

func (c *content) tool() {
	n := c.n
	args := n.Input
	if args == nil && c.stop != nil {
		args = c.stop.Input
	}
	c.heading("Tool", seg{"  " + n.Tool, c.p.strong})
	c.heading("Arguments")
	if args == nil {
		c.note(2, "none yet")
	} else {
		c.json("args", args, 2, noFold)
	}
	switch {
	case n.Error != "":
		c.heading("Error")
		c.problem(2, n.Error)
	case n.Result != nil:
		c.heading("Result")
		c.json("result", n.Result, 2, noFold)
	case c.stop != nil && c.stop.Kind == engine.StopTool:
		c.heading("Result")
		c.note(2, "not called yet: the run is held before the call")
	case n.Status == live.Running:
		c.heading("Result")
		c.note(2, "running…")
	default:
		c.heading("Result")
		c.note(2, statusWords(n))
	}
}

func (c *content) result() {
	n := c.n
	atResult := c.stop != nil && c.stop.Kind == engine.StopResult && n.Result == nil
	switch {
	case atResult:
		// Held at its result stop, the step has its value, which its
		// end event, after the stop, has yet to bring.
		c.heading("Result", seg{"  held at its result stop", c.p.muted})
		c.json("result", c.stop.Output, 2, noFold)
	case c.stop != nil && c.stop.Kind == engine.StopStep && n.Result == nil && n.Error == "":
		// Held at its step stop, the step has not begun, though the tree
		// shows it running for the time it is held.
		c.heading("Result", seg{"  not run yet: held at its step stop", c.p.muted})
	default:
		c.heading("Result", seg{"  " + statusWords(n), c.p.muted})
	}
	switch {
	case atResult:
	case n.Result != nil:
		c.json("result", n.Result, 2, noFold)
	case n.Error == "" && n.Status.Done():
		c.note(2, "no value recorded here")
	}
	if n.Error != "" {
		c.heading("Error")
		c.problem(2, n.Error)
	}
	if x := n.Exit; x != nil {
		// What the exit said ends the run: it is the run's last word.
		c.heading("Exit", seg{"  " + x.Status, c.p.muted})
		c.text(2, x.Message, c.p.text)
		if x.Reason != "" {
			c.text(2, x.Reason, c.p.muted)
		}
	}
	if g := n.Gate; g != nil {
		c.heading("Gate", seg{"  verdict " + strconv.FormatBool(g.Verdict), c.p.literal})
		if g.Reason != "" {
			c.text(2, g.Reason, c.p.text)
		}
	}
	if a := n.Ask; a != nil {
		c.heading("Ask")
		c.text(2, a.Prompt, c.p.text)
		if a.Answered {
			c.keyed("answer", "answer", a.Answer, 2, noFold)
		} else {
			c.field(2, "not answered:", a.Reason.String(), c.p.text)
		}
	}
	if len(n.Warnings) > 0 {
		c.heading("Warnings")
		for _, w := range n.Warnings {
			c.add(2, seg{"! ", c.p.problem}, seg{w, c.p.text})
		}
	}
}

// refusals lists the schema violations of a refused answer, each under
// the location in the answer that failed.
func (c *content) refusals() {
	n := c.n
	vs, what := n.Violations, "the answer failed its schema; this pass was asked to fix it"
	if n.Kind == live.KindRound {
		vs, what = n.Refusals, "the answer failed its schema and went to a repair pass"
	}
	c.heading("Refusals", seg{"  " + common.Count(len(vs), "violation"), c.p.muted})
	c.note(2, what)
	for _, v := range vs {
		loc, msg, ok := strings.Cut(v, ": ")
		if !ok || !strings.HasPrefix(loc, "/") {
			loc, msg = "(the answer)", v
		}
		c.add(2, seg{"✗ ", c.p.problem}, seg{loc, c.p.key})
		c.text(4, msg, c.p.text)
	}
}

// repair shows the refused answer and the repaired one, each pretty-printed
// when it is JSON, the lines that differ marked - and +.
func (c *content) repair() {
	n := c.n
	before, _ := n.Input.(string)
	after, state := "", ""
	switch {
	case n.Call != nil && n.Call.Error == "":
		after = n.Call.Reply.Text
	case n.Reply != "":
		after, state = n.Reply, " · streaming…"
	case c.stop != nil && c.stop.Kind == engine.StopRepair:
		state = "not asked yet: the run is held before the pass"
	case n.Status == live.Running:
		state = "waiting for the model…"
	default:
		state = "none: the pass gave no answer"
	}
	was := answerLines(before)
	if after == "" {
		c.heading("Refused answer")
		for _, l := range was {
			c.diffLine(diffOp{diffSame, l})
		}
		c.heading("Repaired answer")
		c.note(2, state)
		return
	}
	ops := diffLines(was, answerLines(after))
	c.heading("Refused answer", seg{"  - removed", c.p.muted})
	for _, op := range ops {
		if op.kind != diffAdd {
			c.diffLine(op)
		}
	}
	c.heading("Repaired answer", seg{"  + added" + state, c.p.muted})
	for _, op := range ops {
		if op.kind != diffDel {
			c.diffLine(op)
		}
	}
}

func (c *content) diffLine(op diffOp) {
	mark, p := "  ", c.p.text
	switch op.kind {
	case diffDel:
		mark, p = "- ", c.p.problem
	case diffAdd:
		mark, p = "+ ", c.p.valid
	}
	c.lines = wrap(c.lines, []seg{{mark, p}, {op.text, p}}, c.width, "  ", "      ")
}

// answerLines is an answer as the diff compares it: pretty-printed JSON
// when it parses, its own lines otherwise.
func answerLines(text string) []string {
	if v, ok := parseJSON(text); ok {
		return plainLines(v)
	}
	if text == "" {
		return nil
	}
	return strings.Split(clean(text), "\n")
}

func (c *content) scope() {
	s := c.stop
	c.heading("Scope")
	if s == nil {
		c.note(2, "scope is shown while the run is held here")
		return
	}
	if len(s.Scope) == 0 {
		c.note(2, "nothing to read")
		return
	}
	// Each root starts folded: the roots are the overview, and a result
	// can be large.
	c.json("scope", s.Scope, 2, 1)
}

func (c *content) usage() {
	n := c.n
	sp := n.Spend
	u := sp.Usage
	c.heading("Usage", seg{"  this node and everything below it", c.p.muted})
	c.field(2, "calls      ", strconv.Itoa(sp.Calls), c.p.literal)
	c.field(2, "tokens in  ", strconv.Itoa(u.InputTokens), c.p.literal)
	c.field(2, "cache read ", strconv.Itoa(u.CacheReadInputTokens), c.p.literal)
	c.field(2, "cache write", strconv.Itoa(u.CacheCreationInputTokens), c.p.literal)
	c.field(2, "tokens out ", strconv.Itoa(u.OutputTokens), c.p.literal)
	if cost := sp.Cost(); cost != nil {
		c.field(2, "cost       ", format.Cost(*cost), c.p.literal)
	} else if sp.Calls > 0 {
		c.field(2, "cost       ", "unknown: a call had no price", c.p.muted)
	}
	if n.Status.Done() {
		c.field(2, "duration   ", format.HeldTime(n.Duration, n.Held), c.p.literal)
		if m := format.MarkText(n.Decided, n.Reused); m != "" {
			c.field(2, "given      ", m, c.p.literal)
		}
	} else if n.Held > 0 {
		// A unit held now, or held before, runs on: its time so far,
		// and how much of it was held.
		c.field(2, "duration   ", format.HeldTime(n.Duration, n.Held)+" so far, running", c.p.muted)
	} else {
		c.field(2, "duration   ", "running", c.p.muted)
	}
	call := n.Call
	if call == nil {
		return
	}
	c.heading("Last call", seg{"  " + call.Model + " via " + call.Provider, c.p.muted})
	c.field(2, "role       ", call.Role, c.p.text)
	c.field(2, "took       ", format.Millis(call.Ms), c.p.literal)
	if call.Error != "" {
		c.problem(2, call.Error)
		return
	}
	c.field(2, "tokens     ", "in "+strconv.Itoa(call.Usage.InputTokens)+" · out "+strconv.Itoa(call.Usage.OutputTokens), c.p.literal)
	if call.CostUSD != nil {
		c.field(2, "cost       ", format.Cost(*call.CostUSD), c.p.literal)
	}
	if r := call.Reply.FinishReason; r != "" {
		c.field(2, "finish     ", r, c.p.text)
	}
	if so := call.StructuredOutput; so != nil {
		c.heading("Strict structured output")
		c.field(2, "requested  ", strconv.FormatBool(so.Requested), c.p.literal)
		c.field(2, "sent       ", strconv.FormatBool(so.Sent), c.p.literal)
		if so.Provider != "" {
			c.field(2, "provider   ", so.Provider, c.p.text)
		}
		if so.DowngradeReason != "" {
			c.field(2, "not sent   ", so.DowngradeReason, c.p.text)
		}
	}
}

func (c *content) stopTab() {
	s := c.stop
	c.heading("Held", seg{"  " + string(s.Kind) + " stop", c.p.strong}, seg{" at " + s.Path, c.p.muted})
	if s.Tool != "" {
		c.field(2, "tool  ", s.Tool, c.p.text)
	}
	if s.Thread != "" {
		c.field(2, "thread", s.Thread, c.p.text)
	}
	if bp := s.Breakpoint; bp != nil {
		c.field(2, "break ", "#"+strconv.Itoa(bp.ID)+" "+bp.Pattern+" · hit "+strconv.Itoa(bp.Hits), c.p.text)
	}
	if s.Recorded != "" {
		// A replay's stop shows what going on gives, the record's value,
		// not what happened now: say where it comes from.
		c.field(2, "record", "the recorded run's "+s.Recorded+" here is made again: going on gives the output shown", c.p.text)
	}
	if s.Error != "" {
		c.heading("Error")
		c.problem(2, s.Error)
	}
	if len(s.Stack) > 0 {
		// Innermost first, frame 0 the stop's own, as :stack and delve's
		// bt list them.
		c.heading("Stack", seg{"  innermost first", c.p.muted})
		for _, f := range slices.Backward(s.Stack) {
			where := f.Path
			if where == "" {
				where = "(plan)"
			}
			segs := []seg{{where, c.p.text}, {"  " + f.Kind.String(), c.p.muted}}
			if f.Tool != "" {
				segs = append(segs, seg{" " + f.Tool, c.p.muted})
			}
			c.add(2, segs...)
		}
	}
	c.heading("Readers")
	if len(s.Readers) == 0 {
		c.note(2, "no template downstream reads this value")
	}
	for _, r := range s.Readers {
		c.text(2, r, c.p.text)
	}
	if q := s.Ask; q != nil {
		c.heading("Ask")
		c.text(2, q.Prompt, c.p.text)
		if q.Default != nil {
			c.keyed("default", "default", q.Default, 2, noFold)
		}
	}
	if s.Schema != nil {
		c.heading("A value given here must match")
		c.json("stop.schema", s.Schema, 2, noFold)
	}
	if s.Prefill != nil {
		c.heading("Prefill", seg{"  what an edit starts from", c.p.muted})
		c.json("stop.prefill", s.Prefill, 2, noFold)
	}
}

// asRequest reads a stop's model request, which the engine passes as a
// value.
func asRequest(v any) *chat.Request {
	switch r := v.(type) {
	case chat.Request:
		return &r
	case *chat.Request:
		return r
	}
	return nil
}

// asReply reads a stop's model reply.
func asReply(v any) *chat.Reply {
	switch r := v.(type) {
	case chat.Reply:
		return &r
	case *chat.Reply:
		return r
	}
	return nil
}

// statusWords says where a node stands, in words.
func statusWords(n live.Node) string {
	switch n.Status {
	case live.Pending:
		return "not run yet"
	case live.Running:
		return "running…"
	case live.OK:
		return "✓ ok"
	case live.Failed:
		if n.Aborted {
			// Aborted where it was held, inside it, or at another
			// thread's stop while it ran: its error names the stop.
			return "■ aborted: the run was aborted before it ended"
		}
		return "✗ failed"
	case live.Skipped:
		if n.CutOff {
			return "skipped: an exit ended the run before it"
		}
		return "skipped: a value was injected at a stop"
	case live.Exited:
		return "exited: an exit gate ended the run"
	}
	return string(n.Status)
}
