// Package report writes a recorded run as one HTML page to share: attached
// to a pull request or an issue, it opens in any browser, offline. The page
// holds the run's header, its errors, warnings and findings, the timeline
// and the spend charts, and its step tree (folded with <details>): every
// step's input, result and error, every model call with its messages, the
// tools it offered and its reply.
//
// The page is self-contained and fetches nothing: its one style sheet is
// inline and its charts are inline SVG, it has no script, and its content
// security policy forbids every fetch, so a value that slipped through as
// markup would still load nothing. Every value goes through html/template's
// escaping, through the redaction a front end passes (the workspace hides
// the secrets its configuration expanded), and is cut at MaxValue bytes
// with a marker that says how much was left out.
//
// It is a front end of recorded runs, as debugger/dap is one of sessions,
// and writes quantities with tui/format so that a run reads the same here
// as in stepwise inspect and the workbench.
package report

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/chat"
	"github.com/stepwise-dev/stepwise/engine/path"
	"github.com/stepwise-dev/stepwise/engine/record"
	"github.com/stepwise-dev/stepwise/tui/format"
)

// MaxValue is the most bytes of one value (an input, a result, a message)
// the page shows; the rest is cut, with a marker. A map of ten thousand
// items stays a page a browser opens.
const MaxValue = 16 << 10

//go:embed report.html.tmpl
var pageSource string

//go:embed report.css
var styleSheet string

// pageTemplate is parsed when the first page is written, not when the
// program starts: every command pays for what its start builds.
var pageTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("report").Parse(pageSource))
})

// Write writes the page of run d, whose events are events (as
// workspace.RunEvents reads them), to w. redact hides secrets in every text
// the page shows; nil shows the text as recorded.
func Write(w io.Writer, d *record.RunDetail, events []engine.Event, redact func(string) string) error {
	if redact == nil {
		redact = func(s string) string { return s }
	}
	b := builder{redact: redact}
	p := b.page(d, events)
	var buf bytes.Buffer
	if err := pageTemplate().Execute(&buf, p); err != nil {
		return fmt.Errorf("report of run %s: %w", d.ID, err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// page is everything the template shows.
type page struct {
	Title string
	// Policy is the content security policy: no fetch of any kind, the
	// one inline style sheet allowed by its hash.
	Policy string
	Style  template.CSS
	Run    header
	Notes  []notice
	// Findings are what went less well than the status says
	// (debugger.Findings).
	Findings []*text
	Tree     []*node
	// Count is how many units the tree holds.
	Count    int
	Timeline waterfall
	Spend    spend
}

// header is the run as its first lines show it.
type header struct {
	ID, Plan, File, Project, Parent, Made string
	Status, Cause                         string
	Started, Took                         string
	Steps, Calls                          int
	Tokens, Cost                          string
	// UsageSoFar says the run has no end: its usage is that of the model
	// calls recorded.
	UsageSoFar             bool
	Inputs, Output, Answer *text
}

// notice is an error or a warning the run reported, and the tree node it
// belongs to.
type notice struct {
	Kind, Path, Anchor string
	Message            *text
}

// text is a value as the page shows it: redacted, then cut to MaxValue
// bytes; Cut counts the bytes left out.
type text struct {
	Shown string
	Cut   int
}

// node is one unit of work in the tree: a step, a body call, an item, an
// agent round, a tool call, a repair pass or a verdict.
type node struct {
	Anchor string
	Path   string
	// Label is the path below the node's parent (agent.2 under E1), which
	// the tree shows; the whole path is its tooltip.
	Label string
	// Kind is what the path names (path.Kind's words: step, item, round,
	// tool, repair, judge, plan).
	Kind string
	Tool string
	// Status is ok, failed, skipped or running for a step, ok or error for
	// a tool call or a model call.
	Status string
	Took   string
	Mark   string
	Input  *text
	Result *text
	Error  *text
	Calls  []*call
	// Open unfolds the node: it failed, or holds what failed.
	Open     bool
	Children []*node

	// seq is the sequence number of the unit's first event, which
	// orders siblings.
	seq uint64
}

// call is one model call as the page shows it.
type call struct {
	Role, Model, Took, Tokens, Cost, Strict string
	Error                                   *text
	// Earlier counts the leading messages that are the previous call's of
	// the same step and role, shown there and not again.
	Earlier  int
	Messages []message
	Tools    []offered
	// MustAnswer says the tools were offered with tool choice none.
	MustAnswer bool
	Format     *text
	Reply      reply
}

type message struct {
	Role   string
	Blocks []block
}

// block is one block of a message or a reply: text, thinking, a tool call
// (Name, ID, Input) or a tool's result (ID, IsError).
type block struct {
	Kind    string
	Text    *text
	Name    string
	ID      string
	Input   *text
	IsError bool
}

type offered struct {
	Name        string
	Description *text
	Schema      *text
}

type reply struct {
	Thinking  []block
	Text      *text
	ToolCalls []block
	Finish    string
}

// builder makes the page of one run.
type builder struct {
	redact func(string) string
}

func (b *builder) page(d *record.RunDetail, events []engine.Event) page {
	p := page{
		Title:  fmt.Sprintf("%s · run %s", d.Plan, format.ShortID(d.ID)),
		Policy: "default-src 'none'; style-src '" + styleHash() + "'; img-src data:; base-uri 'none'; form-action 'none'",
		Style:  template.CSS(styleSheet),
		Run:    b.header(d),
	}
	nodes := b.nodes(d, events)
	p.Tree, p.Count = tree(nodes), len(nodes)
	byPath := map[string]*node{}
	for _, n := range nodes {
		byPath[n.Path] = n
	}
	anchor := func(p string) string {
		if n, ok := byPath[p]; ok {
			return n.Anchor
		}
		if n := ancestor(byPath, p); n != nil {
			return n.Anchor
		}
		return ""
	}
	for _, list := range []struct {
		kind    string
		notices []record.Notice
	}{{"error", d.Errors}, {"warning", d.Warnings}} {
		for _, n := range list.notices {
			p.Notes = append(p.Notes, notice{Kind: list.kind, Path: n.Path, Anchor: anchor(n.Path), Message: b.text(n.Message)})
		}
	}
	for _, f := range debugger.Findings(d) {
		p.Findings = append(p.Findings, b.text(f))
	}
	p.Timeline = drawTimeline(events, anchor)
	p.Spend = drawSpend(d.UsageReport, anchor)
	return p
}

// styleHash is the CSP source that allows the page's style sheet.
func styleHash() string {
	sum := sha256.Sum256([]byte(styleSheet))
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}

func (b *builder) header(d *record.RunDetail) header {
	h := header{ID: d.ID, Plan: b.redact(d.Plan), File: b.redact(d.File), Project: b.redact(d.Project), Parent: d.Parent,
		Made: string(d.Made), Status: d.Status.String(), Started: d.StartedAt.UTC().Format("2006-01-02 15:04:05 UTC"),
		Took: format.HeldTime(d.Duration, d.Held), Steps: d.StepsExecuted, Calls: d.UsageReport.Calls,
		Tokens: format.Tokens(d.UsageReport.Total()), Cost: format.Spend(d.UsageReport.Calls, d.UsageReport.CostUSD),
		UsageSoFar: d.UsageFromCalls, Inputs: b.json(d.Inputs), Output: b.json(d.Output)}
	if d.Interrupted {
		h.Status = "interrupted"
	}
	switch {
	case d.Exit != nil:
		h.Cause = fmt.Sprintf("exit gate %s fired with status %s: %s", d.Exit.Step, d.Exit.Status, d.Exit.Message)
		if d.Exit.Reason != "" {
			h.Cause += " (" + d.Exit.Reason + ")"
		}
		h.Cause = b.redact(h.Cause)
	case d.Error != "":
		h.Cause = b.redact(d.Error)
	}
	if d.Answer != "" {
		h.Answer = b.text(d.Answer)
	}
	return h
}

// nodes are the run's units in the order they began: its steps, the tool
// calls that are not a step's own, and its model calls, each by its path.
func (b *builder) nodes(d *record.RunDetail, events []engine.Event) []*node {
	first := map[string]uint64{}
	for _, e := range events {
		switch e.Kind {
		case engine.EventStepStart, engine.EventToolStart, engine.EventModelCall:
			if _, seen := first[e.Path]; !seen {
				first[e.Path] = e.Seq
			}
		}
	}
	byPath := map[string]*node{}
	var nodes []*node
	add := func(n *node) {
		n.Anchor = fmt.Sprintf("u%d", len(nodes))
		n.Kind = path.KindOf(n.Path).String()
		seq, ok := first[n.Path]
		if !ok {
			seq = ^uint64(0)
		}
		n.seq = seq
		byPath[n.Path] = n
		nodes = append(nodes, n)
	}
	for _, s := range d.Steps {
		n := &node{Path: s.Path, Tool: s.Tool, Status: s.Status.String(), Mark: format.MarkText(s.Decided, s.Reused),
			Input: b.json(s.Input), Result: b.json(s.Result)}
		if s.Status != engine.StepRunning {
			n.Took = format.HeldTime(millis(s.Ms), millis(s.HeldMs))
		}
		if s.Error != "" {
			n.Error = b.text(s.Error)
		}
		add(n)
	}
	for _, c := range d.ToolCalls {
		if _, isStep := byPath[c.Path]; isStep {
			// A step's own dispatch: the step shows its input, result
			// and error.
			continue
		}
		n := &node{Path: c.Path, Tool: c.Tool, Status: "ok", Mark: format.MarkText(c.Decided, c.Reused),
			Input: b.json(c.Args), Result: b.json(c.Result)}
		switch {
		case !c.Ended:
			n.Status = "running"
		case c.IsError:
			n.Status = "error"
		}
		if c.Ended {
			n.Took = format.HeldTime(millis(c.Ms), millis(c.HeldMs))
		}
		if c.Error != "" {
			n.Error = b.text(c.Error)
		}
		add(n)
	}
	// Consecutive calls of one step and role share their leading
	// messages (an agent's prefix is byte-stable): each call shows what
	// it adds.
	previous := map[string][]chat.Message{}
	for _, e := range events {
		mc, ok := e.Payload.(engine.ModelCalled)
		if e.Kind != engine.EventModelCall || !ok {
			continue
		}
		key := mc.Site + "\x00" + mc.Role
		c := b.call(mc, previous[key])
		previous[key] = mc.Request.Messages
		n, ok := byPath[e.Path]
		if !ok {
			// A round, a repair pass or a verdict: the unit is its call.
			n = &node{Path: e.Path, Tool: path.KindOf(e.Path).String(), Status: "ok", Took: format.Millis(mc.Ms)}
			add(n)
		}
		switch {
		case mc.Aborted && n.Status == "ok":
			// Cut short by the run's abort: no error of the call's.
			n.Status = "aborted"
		case mc.Error != "" && n.Status == "ok":
			n.Status = "error"
		}
		n.Calls = append(n.Calls, c)
	}
	return nodes
}

func (b *builder) call(mc engine.ModelCalled, earlier []chat.Message) *call {
	c := &call{Role: mc.Role, Model: mc.Provider + "/" + mc.Model, Took: format.Millis(mc.Ms),
		Tokens: fmt.Sprintf("%s in, %s out", format.Tokens(mc.Usage.InputTokens), format.Tokens(mc.Usage.OutputTokens)),
		Cost:   format.Spend(1, mc.CostUSD), MustAnswer: len(mc.Request.Tools) > 0 && !mc.Request.MayCallTools()}
	if cached := mc.Usage.Cached(); cached > 0 {
		c.Tokens += ", " + format.Tokens(cached) + " cached"
	}
	if mc.Error != "" {
		c.Error = b.text(mc.Error)
	}
	if s := mc.StructuredOutput; s != nil && s.Requested {
		c.Strict = "strict output sent"
		if !s.Sent {
			c.Strict = "strict output not sent: " + s.DowngradeReason
		}
	}
	msgs := mc.Request.Messages
	if len(earlier) > 0 && len(earlier) <= len(msgs) && reflect.DeepEqual(earlier, msgs[:len(earlier)]) {
		c.Earlier, msgs = len(earlier), msgs[len(earlier):]
	}
	for _, m := range msgs {
		shown := message{Role: m.Role}
		for _, bl := range m.Blocks {
			shown.Blocks = append(shown.Blocks, b.block(bl))
		}
		c.Messages = append(c.Messages, shown)
	}
	for _, t := range mc.Request.Tools {
		o := offered{Name: t.Name, Schema: b.value(t.InputSchema)}
		if t.Description != "" {
			o.Description = b.text(t.Description)
		}
		c.Tools = append(c.Tools, o)
	}
	if f := mc.Request.Format; f != nil {
		c.Format = b.value(f.Schema)
	}
	r := mc.Reply
	for _, th := range r.Thinking {
		c.Reply.Thinking = append(c.Reply.Thinking, b.block(th))
	}
	if r.Text != "" {
		c.Reply.Text = b.text(r.Text)
	}
	for _, tc := range r.ToolCalls {
		c.Reply.ToolCalls = append(c.Reply.ToolCalls, block{Kind: "tool_use", Name: tc.Name, ID: tc.ID, Input: b.json(tc.Arguments)})
	}
	c.Reply.Finish = r.FinishReason
	return c
}

func (b *builder) block(bl chat.Block) block {
	out := block{Kind: string(bl.Type), Name: bl.Name, ID: bl.ID, IsError: bl.IsError}
	switch bl.Type {
	case chat.BlockRedactedThinking:
		out.Text = &text{Shown: "encrypted by the provider, sent back as it came"}
	case chat.BlockToolUse:
		out.Input = b.json(bl.Input)
	case chat.BlockToolResult:
		// A tool's result is JSON more often than not: indented, it
		// reads as the other values do.
		if json.Valid([]byte(bl.Text)) {
			out.Text = b.json(json.RawMessage(bl.Text))
		} else {
			out.Text = b.text(bl.Text)
		}
	default:
		out.Text = b.text(bl.Text)
	}
	return out
}

// tree places each node under the nearest node whose path is a prefix of
// its own, in the order they began, but a map's items in the order of
// their index (the units of do.0 before those of do.1, whichever began
// first), and unfolds the failed ones and what holds them.
func tree(nodes []*node) []*node {
	ordered := slices.Clone(nodes)
	slices.SortStableFunc(ordered, func(a, b *node) int { return cmp.Compare(a.seq, b.seq) })
	byPath := map[string]*node{}
	for _, n := range ordered {
		byPath[n.Path] = n
	}
	var top []*node
	for _, n := range ordered {
		parent := ancestor(byPath, n.Path)
		if parent == nil {
			n.Label = n.Path
			top = append(top, n)
			continue
		}
		n.Label = strings.TrimPrefix(n.Path, parent.Path+"/")
		parent.Children = append(parent.Children, n)
	}
	for _, n := range ordered {
		inItemOrder(n.Children)
	}
	for _, n := range ordered {
		if n.Status == "failed" || n.Status == "aborted" || n.Status == "error" {
			for at := n; at != nil; at = ancestor(byPath, at.Path) {
				at.Open = true
			}
		}
	}
	return top
}

// inItemOrder puts children that are all units of a map's items (their
// labels begin with an item, do.3/verdict) in the order of the items'
// indexes, each item's units in the order they began.
func inItemOrder(children []*node) {
	index := func(n *node) int {
		seg, _, _ := strings.Cut(n.Label, "/")
		i, ok := path.ItemIndex(seg)
		if !ok {
			return -1
		}
		return i
	}
	for _, c := range children {
		if index(c) < 0 {
			return
		}
	}
	slices.SortStableFunc(children, func(a, b *node) int { return cmp.Compare(index(a), index(b)) })
}

// ancestor is the nearest node above p: E1/do.3/agent.2 is under
// E1/do.3, and a called plan's step E4/triage/E0 under E4.
func ancestor(byPath map[string]*node, p string) *node {
	for {
		parent, _, ok := path.Parent(p)
		if !ok {
			return nil
		}
		if n, ok := byPath[parent]; ok {
			return n
		}
		p = parent
	}
}

// text is s redacted and cut.
func (b *builder) text(s string) *text {
	s = b.redact(s)
	if len(s) <= MaxValue {
		return &text{Shown: s}
	}
	end := MaxValue
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return &text{Shown: s[:end], Cut: len(s) - end}
}

// json is a recorded JSON value indented, redacted and cut; nil when
// nothing was recorded.
func (b *builder) json(raw json.RawMessage) *text {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var out bytes.Buffer
	if err := json.Indent(&out, raw, "", "  "); err != nil {
		return b.text(string(raw))
	}
	return b.text(unescapeMarkup(out.String()))
}

// unescapeMarkup writes back the <, > and & that Go's encoding/json
// escapes in strings (\u003c): the page escapes them itself, and a value
// reads as it was.
func unescapeMarkup(s string) string {
	if !strings.Contains(s, `\u00`) {
		return s
	}
	var out strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			out.WriteByte(s[i])
			continue
		}
		// An escape: \u003c, \u003e and \u0026 are written back, any
		// other (\\ among them) is kept whole.
		switch esc := s[i:min(i+6, len(s))]; esc {
		case `\u003c`:
			out.WriteByte('<')
		case `\u003e`:
			out.WriteByte('>')
		case `\u0026`:
			out.WriteByte('&')
		default:
			out.WriteString(s[i : i+2])
			i++
			continue
		}
		i += 5
	}
	return out.String()
}

// value is a decoded value as json shows it.
func (b *builder) value(v any) *text {
	if v == nil {
		return nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return b.text(fmt.Sprint(v))
	}
	return b.json(raw)
}

func millis(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

// Marker is the note that ends a value cut short.
func (t *text) Marker() string {
	return fmt.Sprintf("… %s bytes cut (the page shows %s of a value)", groupDigits(t.Cut), groupDigits(MaxValue))
}

// groupDigits writes n with thousands separated: 283,616.
func groupDigits(n int) string {
	s := fmt.Sprint(n)
	var out strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			out.WriteByte(',')
		}
		out.WriteRune(r)
	}
	return out.String()
}
