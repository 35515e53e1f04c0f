package model

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/stepwise-dev/stepwise/engine/chat"
	"github.com/stepwise-dev/stepwise/engine/path"
	"github.com/stepwise-dev/stepwise/plans/strict"
	"github.com/stepwise-dev/stepwise/plans/suggest"
	"github.com/stepwise-dev/stepwise/plans/yamlpos"
)

// A script provider answers model calls from a YAML file of replies instead
// of calling an API. It is how the demo project, the tests and a user
// without an API key run plans, so its file format is part of what authors
// write by hand, and its errors say which line to change:
//
//	replies:
//	  - match: "E1"            # a path pattern over the calling step's path
//	    role: chat             # chat | repair | judge | solver | planner (default chat)
//	    reply:
//	      text: "plain text"   # or json: {any: value}, sent as compact JSON
//	      tool_calls:
//	        - {name: tracker__list_issues, arguments: {limit: 5}}
//	      reasoning: "..."
//	      usage: {input_tokens: 1200, output_tokens: 80}
//	      delay_ms: 300
//	      finish_reason: stop
//	  - match: "E1"
//	    error: {status: 429, message: "rate limited"}   # or {timeout: true}
//
// A call takes the first unused reply, in file order, whose match fits the
// request's Step and whose role fits its Role. Each reply answers once.

// Script is a loaded replies file. It is immutable: the replies a run has
// used are the state of the provider that answers from it, so one Script
// may serve several runs, each from the top.
type Script struct {
	// File is the file the replies were read from, as given to LoadScript.
	File    string
	replies []scriptReply
	// queues and byRole index the replies, so that a call finds its reply
	// by its role and step instead of trying every reply in turn.
	queues []replyQueue
	byRole map[string]*roleReplies
}

// replyQueue is the replies of one role written with one match pattern,
// as indexes into Script.replies in file order. They all fit the same
// calls, so they answer in that order: the first unused reply that fits a
// call is the first unused one of some queue.
type replyQueue struct {
	match   path.Pattern
	replies []int
}

// roleReplies are the queues of one role.
type roleReplies struct {
	// literal is the queue of each pattern without wildcards, by the one
	// path it matches.
	literal map[string]int
	// wild are the queues of the patterns with wildcards, which a call
	// tries in turn: as many as the distinct patterns, not the replies.
	wild []int
}

// index builds the queues of s's replies.
func (s *Script) index() {
	s.byRole = map[string]*roleReplies{}
	type key struct{ role, pattern string }
	queueOf := map[key]int{}
	for i, r := range s.replies {
		k := key{r.role, r.match.String()}
		q, seen := queueOf[k]
		if !seen {
			q = len(s.queues)
			queueOf[k] = q
			s.queues = append(s.queues, replyQueue{match: r.match})
			rr := s.byRole[r.role]
			if rr == nil {
				rr = &roleReplies{literal: map[string]int{}}
				s.byRole[r.role] = rr
			}
			if step, literal := r.match.Literal(); literal {
				rr.literal[step] = q
			} else {
				rr.wild = append(rr.wild, q)
			}
		}
		s.queues[q].replies = append(s.queues[q].replies, i)
	}
}

// Len returns the number of replies in the file.
func (s *Script) Len() int { return len(s.replies) }

// scriptReply is one entry of a replies file.
type scriptReply struct {
	line, col int // where the entry starts, for messages
	match     path.Pattern
	role      string
	answer    *scriptAnswer  // nil for an error reply
	failure   *scriptFailure // nil for an answer
}

// scriptAnswer is a reply's reply: what the model says.
type scriptAnswer struct {
	text      string
	toolCalls []chat.ToolCall // ids assigned at load, in file order
	reasoning string
	usage     *chat.Usage // nil: estimated per call
	delay     time.Duration
	finish    string // "" for the default
}

// scriptFailure is a reply's error: how the call fails.
type scriptFailure struct {
	status  int
	message string
	timeout bool
}

// The keys each mapping of a replies file may hold, in the order messages
// list them.
var (
	scriptFileKeys     = []string{"replies"}
	scriptEntryKeys    = []string{"match", "role", "reply", "error"}
	scriptReplyKeys    = []string{"text", "json", "tool_calls", "reasoning", "usage", "delay_ms", "finish_reason"}
	scriptToolCallKeys = []string{"name", "arguments"}
	scriptUsageKeys    = []string{"input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"}
	scriptErrorKeys    = []string{"status", "message", "timeout"}
	finishReasons      = []string{"stop", "length", "refusal", "tool_calls"}
)

// ScriptProblem is one thing wrong with a replies file, placed at
// file:line:col like every finding about a file.
type ScriptProblem = yamlpos.Diagnostic

// ScriptLoadError is a replies file that cannot be used. It holds every
// problem found, not only the first, so an author can fix them in one pass.
type ScriptLoadError struct {
	Problems []ScriptProblem
}

// Error lists the problems, one per line.
func (e *ScriptLoadError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// LoadScript reads and checks a replies file, so that a command can refuse
// a bad one before a run starts rather than at the first model call. Its
// errors are a *ScriptLoadError for a file that cannot be used, and the
// read error otherwise.
func LoadScript(file string) (*Script, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("script: %w", err)
	}
	return ParseScript(file, data)
}

// ParseScript checks the text of a replies file; file names it in
// messages. LoadScript reads the file and calls it; it is exported for
// replies that do not live in a file of their own (an embedded demo).
func ParseScript(file string, data []byte) (*Script, error) {
	l := &scriptLoader{file: file}
	s := l.parse(data)
	if len(l.problems) > 0 {
		// Problems are found section by section; an author reads them
		// top to bottom.
		slices.SortStableFunc(l.problems, func(a, b ScriptProblem) int {
			return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col))
		})
		return nil, &ScriptLoadError{Problems: l.problems}
	}
	s.index()
	return s, nil
}

// scriptLoader carries the state of one load: the problems found so far
// and the budget that keeps aliases from expanding a JSON value without end.
type scriptLoader struct {
	file      string
	problems  []ScriptProblem
	budget    int // values a json or arguments value may still expand to
	toolCalls int // tool calls numbered so far, for their ids
}

// maxJSONValues bounds how many values all the json and arguments values
// of one file may expand to. YAML aliases let a small file describe an
// enormous value ("billion laughs"); no hand-written reply comes near this.
const maxJSONValues = 1 << 20

func (l *scriptLoader) problem(n *yaml.Node, format string, args ...any) {
	p := ScriptProblem{Pos: yamlpos.Pos{File: l.file}, Message: fmt.Sprintf(format, args...)}
	if n != nil {
		p.Line, p.Col = n.Line, n.Column
	}
	l.problems = append(l.problems, p)
}

// parse reads the one document of a replies file and its replies,
// recording every problem; the Script is nil when the file has no usable
// shape at all.
func (l *scriptLoader) parse(data []byte) *Script {
	l.budget = maxJSONValues
	top, second, syntax := yamlpos.Parse(l.file, data)
	if syntax != nil {
		l.problems = append(l.problems, *syntax)
	}
	if second != nil {
		l.problem(second, "a replies file holds one YAML document; put every reply in the first one's replies list")
	}
	if top == nil {
		if syntax == nil {
			l.problems = append(l.problems, ScriptProblem{Pos: yamlpos.Pos{File: l.file, Line: 1, Col: 1}, Message: "the file is empty; a replies file holds a list of replies under replies:"})
		}
		return nil
	}
	root := l.object(top, "a replies file", scriptFileKeys)
	if root == nil {
		return nil
	}
	s := &Script{File: l.file}
	list := root.get("replies")
	switch {
	case list == nil:
		l.problem(root.node, "replies is missing: a replies file holds a list of replies under replies:")
		return s
	case list.Kind != yaml.SequenceNode:
		l.problem(list, "replies must be a list of replies, not %s", kindOf(list))
		return s
	}
	for _, n := range list.Content {
		if r, ok := l.reply(n); ok {
			s.replies = append(s.replies, r)
		}
	}
	return s
}

// reply reads one entry of the replies list; ok is false when it has a
// problem, so that a broken entry is never answered with.
func (l *scriptLoader) reply(n *yaml.Node) (scriptReply, bool) {
	o := l.object(n, "a reply", scriptEntryKeys)
	if o == nil {
		return scriptReply{}, false
	}
	r := scriptReply{line: o.node.Line, col: o.node.Column, role: RoleChat}
	ok := true
	// A reply without match answers any step: handy for the solver or a
	// catch-all judge, and a misspelt key is reported anyway.
	pattern := "**"
	if m := o.get("match"); m != nil {
		if s, good := l.str(m, "match"); good {
			pattern = s
		} else {
			ok = false
		}
	}
	p, err := path.Compile(pattern)
	if err != nil {
		l.problem(o.valueOr("match"), "match: %v", err)
		ok = false
	}
	r.match = p
	if rn := o.get("role"); rn != nil {
		role, good := l.str(rn, "role")
		switch {
		case !good:
			ok = false
		case !slices.Contains(modelRoles, role):
			l.problem(rn, "role %q is not a model role (valid: %s)%s", role, strings.Join(modelRoles, ", "), suggest.DidYouMean(role, modelRoles))
			ok = false
		default:
			r.role = role
		}
	}
	replyNode, errorNode := o.get("reply"), o.get("error")
	switch {
	case replyNode != nil && errorNode != nil:
		l.problem(o.keys["error"], "a reply has reply or error, not both; split it into two replies")
		return r, false
	case replyNode == nil && errorNode == nil:
		l.problem(o.node, "a reply needs reply (what the model answers) or error (how the call fails)")
		return r, false
	case replyNode != nil:
		r.answer = l.answer(replyNode)
		ok = ok && r.answer != nil
	default:
		r.failure = l.failure(errorNode)
		ok = ok && r.failure != nil
	}
	return r, ok
}

func (l *scriptLoader) answer(n *yaml.Node) *scriptAnswer {
	o := l.object(n, "reply", scriptReplyKeys)
	if o == nil {
		return nil
	}
	before := len(l.problems)
	a := &scriptAnswer{}
	textNode, jsonNode := o.get("text"), o.values["json"]
	switch {
	case textNode != nil && jsonNode != nil:
		l.problem(o.keys["json"], "reply has text and json; keep one (json is sent as its compact JSON text)")
	case textNode != nil:
		a.text, _ = l.str(textNode, "text")
	case jsonNode != nil:
		if raw, ok := l.jsonValue(jsonNode, "json"); ok {
			a.text = string(raw)
		}
	}
	if tc := o.get("tool_calls"); tc != nil {
		if tc.Kind != yaml.SequenceNode {
			l.problem(tc, "tool_calls must be a list of {name, arguments}, not %s", kindOf(tc))
		} else {
			for _, c := range tc.Content {
				if call, ok := l.toolCall(c); ok {
					a.toolCalls = append(a.toolCalls, call)
				}
			}
		}
	}
	if rn := o.get("reasoning"); rn != nil {
		a.reasoning, _ = l.str(rn, "reasoning")
	}
	if un := o.get("usage"); un != nil {
		a.usage = l.usage(un)
	}
	if dn := o.get("delay_ms"); dn != nil {
		if ms, ok := l.count(dn, "delay_ms"); ok {
			a.delay = time.Duration(ms) * time.Millisecond
		}
	}
	if fn := o.get("finish_reason"); fn != nil {
		if f, ok := l.str(fn, "finish_reason"); ok {
			if slices.Contains(finishReasons, f) {
				a.finish = f
			} else {
				l.problem(fn, "finish_reason %q is not one of %s%s", f, strings.Join(finishReasons, ", "), suggest.DidYouMean(f, finishReasons))
			}
		}
	}
	if len(l.problems) > before {
		return nil
	}
	return a
}

func (l *scriptLoader) toolCall(n *yaml.Node) (chat.ToolCall, bool) {
	o := l.object(n, "a tool call", scriptToolCallKeys)
	if o == nil {
		return chat.ToolCall{}, false
	}
	// Every call gets its id even when it has a problem, so that ids do
	// not shift as an author fixes the file.
	l.toolCalls++
	c := chat.ToolCall{ID: "call_" + strconv.Itoa(l.toolCalls), Arguments: json.RawMessage("{}")}
	ok := true
	switch nn := o.get("name"); {
	case nn == nil:
		l.problem(o.node, "a tool call needs name, the tool it calls (such as tracker__get_issue)")
		ok = false
	default:
		name, good := l.str(nn, "name")
		if good && name == "" {
			l.problem(nn, "name is empty; write the tool the call is for (such as tracker__get_issue)")
			good = false
		}
		c.Name, ok = name, good
	}
	if an := o.values["arguments"]; an != nil {
		switch r := resolve(an); {
		case r.Kind == yaml.ScalarNode && r.ShortTag() == "!!null":
		case r.Kind != yaml.MappingNode:
			l.problem(r, "arguments must be a mapping, the tool's input object, not %s", kindOf(r))
			ok = false
		default:
			raw, good := l.jsonValue(an, "arguments")
			c.Arguments, ok = raw, ok && good
		}
	}
	return c, ok
}

func (l *scriptLoader) usage(n *yaml.Node) *chat.Usage {
	o := l.object(n, "usage", scriptUsageKeys)
	if o == nil {
		return nil
	}
	u := &chat.Usage{}
	for i, dst := range []*int{&u.InputTokens, &u.OutputTokens, &u.CacheCreationInputTokens, &u.CacheReadInputTokens} {
		key := scriptUsageKeys[i]
		if vn := o.get(key); vn != nil {
			*dst, _ = l.count(vn, key)
		}
	}
	return u
}

func (l *scriptLoader) failure(n *yaml.Node) *scriptFailure {
	o := l.object(n, "error", scriptErrorKeys)
	if o == nil {
		return nil
	}
	before := len(l.problems)
	f := &scriptFailure{}
	sn, tn := o.get("status"), o.get("timeout")
	if tn != nil {
		if tn.Kind != yaml.ScalarNode || tn.ShortTag() != "!!bool" || tn.Decode(&f.timeout) != nil {
			l.problem(tn, "timeout must be true or false, not %s", describe(tn))
		}
	}
	if sn != nil {
		if st, ok := l.count(sn, "status"); ok {
			if st < 400 || st > 599 {
				l.problem(sn, "status %d is not an error status; use 400-599 (429 and 5xx are transient and retried, others fail the call at once)", st)
			}
			f.status = st
		}
	}
	switch {
	case f.timeout && sn != nil:
		l.problem(o.keys["timeout"], "error has status and timeout; a timed-out call has no status, so keep one")
	case !f.timeout && sn == nil && len(l.problems) == before:
		l.problem(o.node, "error needs status (an HTTP status such as 429) or timeout: true")
	}
	if mn := o.get("message"); mn != nil {
		f.message, _ = l.str(mn, "message")
	}
	if len(l.problems) > before {
		return nil
	}
	return f
}

// scriptObject is a mapping of a replies file with its keys checked.
type scriptObject struct {
	node   *yaml.Node
	keys   map[string]*yaml.Node // key nodes, for positions
	values map[string]*yaml.Node // value nodes as written (aliases kept)
}

// object checks that n is a mapping whose keys are among fields, each
// written once, and reports every other key with a did-you-mean.
func (l *scriptLoader) object(n *yaml.Node, what string, fields []string) *scriptObject {
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		l.problem(n, "%s must be a mapping, not %s", what, kindOf(n))
		return nil
	}
	o := &scriptObject{node: n, keys: map[string]*yaml.Node{}, values: map[string]*yaml.Node{}}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			l.problem(k, "a key in %s must be a string, not %s", what, kindOf(k))
			continue
		}
		if !slices.Contains(fields, k.Value) {
			hint := suggest.DidYouMean(k.Value, fields)
			if hint == "" {
				hint = " (keys: " + strings.Join(fields, ", ") + ")"
			}
			l.problem(k, "unknown key %q in %s%s", k.Value, what, hint)
			continue
		}
		if prev, dup := o.keys[k.Value]; dup {
			l.problem(k, "%s is already set at line %d; keep one", k.Value, prev.Line)
			continue
		}
		o.keys[k.Value], o.values[k.Value] = k, v
	}
	return o
}

// get returns a key's value with aliases resolved, or nil when the key is
// absent. A value written as null counts as absent, the way YAML authors
// read "key:" with nothing after it.
func (o *scriptObject) get(key string) *yaml.Node {
	v, ok := o.values[key]
	if !ok {
		return nil
	}
	v = resolve(v)
	if v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null" {
		return nil
	}
	return v
}

// valueOr returns the node of a key's value, or the mapping's own node when
// the key is absent: the best place to point at.
func (o *scriptObject) valueOr(key string) *yaml.Node {
	if v, ok := o.values[key]; ok {
		return v
	}
	return o.node
}

// resolve follows an alias to the value it names. An alias yaml.v3 could
// not resolve is itself, and is reported as what it is. YAML cannot anchor
// an alias, so one hop is all there is; the bound only guards the loop.
func resolve(n *yaml.Node) *yaml.Node {
	for range 8 {
		if n.Kind != yaml.AliasNode || n.Alias == nil {
			break
		}
		n = n.Alias
	}
	return n
}

// str reads a string. Any scalar but null is taken as its text, so that
// text: 42 means "42" rather than an error.
func (l *scriptLoader) str(n *yaml.Node, key string) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" {
		l.problem(n, "%s must be a string, not %s", key, describe(n))
		return "", false
	}
	return n.Value, true
}

// count reads a whole number that is not negative.
func (l *scriptLoader) count(n *yaml.Node, key string) (int, bool) {
	var v int
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" || n.Decode(&v) != nil {
		l.problem(n, "%s must be a whole number, not %s", key, describe(n))
		return 0, false
	}
	if v < 0 {
		l.problem(n, "%s must not be negative, got %d", key, v)
		return 0, false
	}
	return v, true
}

// jsonValue writes a YAML value as compact JSON, keys in the order they
// are written so that a reply reads in the TUI as its author wrote it.
func (l *scriptLoader) jsonValue(n *yaml.Node, key string) (json.RawMessage, bool) {
	var b bytes.Buffer
	w := jsonWriter{l: l, key: key, active: map[*yaml.Node]bool{}}
	if !w.write(&b, n) {
		return nil, false
	}
	return json.RawMessage(b.Bytes()), true
}

// jsonWriter writes one json or arguments value.
type jsonWriter struct {
	l      *scriptLoader
	key    string
	active map[*yaml.Node]bool // alias targets being written, to catch a cycle
}

func (w *jsonWriter) write(b *bytes.Buffer, n *yaml.Node) bool {
	if w.l.budget--; w.l.budget < 0 {
		w.l.problem(n, "%s: aliases expand the replies to more than %d values; write the repeated parts out instead", w.key, maxJSONValues)
		return false
	}
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			w.l.problem(n, "%s: alias *%s names no anchor", w.key, n.Value)
			return false
		}
		if w.active[n.Alias] {
			w.l.problem(n, "%s: alias *%s refers to a value that contains it; a value cannot contain itself", w.key, n.Value)
			return false
		}
		w.active[n.Alias] = true
		ok := w.write(b, n.Alias)
		delete(w.active, n.Alias)
		return ok
	}
	switch n.Kind {
	case yaml.MappingNode:
		b.WriteByte('{')
		seen := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := resolve(n.Content[i])
			if k.Kind != yaml.ScalarNode {
				w.l.problem(k, "%s: a key must be a string, not %s", w.key, kindOf(k))
				return false
			}
			if k.ShortTag() == "!!merge" {
				w.l.problem(k, "%s: merge keys (<<) are not supported here; write the keys out", w.key)
				return false
			}
			if line, dup := seen[k.Value]; dup {
				w.l.problem(k, "%s: key %q is already set at line %d; keep one", w.key, k.Value, line)
				return false
			}
			seen[k.Value] = k.Line
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSONString(b, k.Value)
			b.WriteByte(':')
			if !w.write(b, n.Content[i+1]) {
				return false
			}
		}
		b.WriteByte('}')
	case yaml.SequenceNode:
		b.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				b.WriteByte(',')
			}
			if !w.write(b, c) {
				return false
			}
		}
		b.WriteByte(']')
	case yaml.ScalarNode:
		return w.scalar(b, n)
	default:
		w.l.problem(n, "%s: %s cannot be written as JSON", w.key, kindOf(n))
		return false
	}
	return true
}

func (w *jsonWriter) scalar(b *bytes.Buffer, n *yaml.Node) bool {
	switch n.ShortTag() {
	case "!!null":
		b.WriteString("null")
	case "!!bool", "!!int":
		var v any
		if err := n.Decode(&v); err != nil {
			w.l.problem(n, "%s: %v", w.key, err)
			return false
		}
		raw, _ := json.Marshal(v)
		b.Write(raw)
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			w.l.problem(n, "%s: %v", w.key, err)
			return false
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			w.l.problem(n, "%s: JSON has no %s; quote it to send a string", w.key, n.Value)
			return false
		}
		raw, _ := json.Marshal(f)
		b.Write(raw)
	default:
		// Strings, and the scalars YAML would read as something JSON does
		// not have (a timestamp, binary), are sent as the text written.
		writeJSONString(b, n.Value)
	}
	return true
}

func writeJSONString(b *bytes.Buffer, s string) {
	raw, _ := json.Marshal(s)
	b.Write(raw)
}

// kindOf names a node's kind for messages.
func kindOf(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	case yaml.ScalarNode:
		if n.ShortTag() == "!!null" {
			return "null"
		}
		return "a scalar"
	}
	return "nothing"
}

// describe names a scalar by its value and anything else by its kind.
func describe(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode && n.ShortTag() != "!!null" {
		return strconv.Quote(n.Value)
	}
	return kindOf(n)
}

// scriptStrict decides, the way a provider enforcing OpenAI's rules would,
// whether strict structured output is sent for req, so that the record of
// strict mode and its downgrades can be tried offline.
func scriptStrict(req chat.Request) (sent bool, downgrade string) {
	v := strict.Check(req.Format.Schema, strict.OpenAI, strict.Context{HasTools: req.MayCallTools(), Runtime: true})
	switch {
	case v.Usable:
		return true, ""
	case req.MayCallTools():
		return false, "unsupported_context_tools"
	}
	return false, "gate_ineligible"
}

// NoReplyError is a call that a script has no reply left for. It names the
// step, the role and the conversation's last message, so that the author
// knows which reply to add.
type NoReplyError struct {
	File        string
	Step        string
	Role        string
	LastMessage string // cut to about 200 characters
}

// Error names the step, the role and the last message, and where to add
// the missing reply.
func (e *NoReplyError) Error() string {
	return fmt.Sprintf("script: no reply left for step %q in role %s (last message: %q); add one to %s", e.Step, e.Role, e.LastMessage, e.File)
}

// scriptProvider answers from a Script and holds the state of one run: the
// replies used so far. Concurrent map items call it in parallel.
type scriptProvider struct {
	name   string
	script *Script
	mu     sync.Mutex
	// next is, for each of the script's queues, how many of its replies
	// are used: they are used in order.
	next []int
}

func newScriptProvider(name string, s *Script) *scriptProvider {
	return &scriptProvider{name: name, script: s, next: make([]int, len(s.queues))}
}

// Complete answers with the first unused reply that fits the call.
func (p *scriptProvider) Complete(ctx context.Context, model string, req chat.Request, onDelta func(chat.Delta)) (chat.Reply, error) {
	if err := ctx.Err(); err != nil {
		return chat.Reply{}, err
	}
	role := req.Role
	if role == "" {
		role = RoleChat
	}
	r, ok := p.take(req.Step, role)
	if !ok {
		return chat.Reply{}, &NoReplyError{File: p.script.File, Step: req.Step, Role: role, LastMessage: lastMessage(req.Messages)}
	}
	if f := r.failure; f != nil {
		return chat.Reply{}, f.err(p.name, model)
	}
	a := r.answer
	reply := chat.Reply{Text: a.text, ToolCalls: slices.Clone(a.toolCalls), FinishReason: a.finish}
	if a.reasoning != "" {
		reply.Thinking = []chat.Block{{Type: chat.BlockThinking, Text: a.reasoning}}
	}
	if reply.FinishReason == "" {
		reply.FinishReason = "stop"
		if len(reply.ToolCalls) > 0 {
			reply.FinishReason = "tool_calls"
		}
	}
	if a.usage != nil {
		reply.Usage = *a.usage
	} else {
		reply.Usage = estimateUsage(req, reply)
	}
	if req.Format != nil && req.Format.Strict {
		reply.StrictRequested = true
		reply.StrictSent, reply.DowngradeReason = scriptStrict(req)
	}
	if err := p.stream(ctx, model, a.delay, reply, onDelta); err != nil {
		return chat.Reply{}, err
	}
	return reply, nil
}

// take marks and returns the first unused reply, in file order, that fits:
// the earliest of the next replies of the queues whose pattern matches.
func (p *scriptProvider) take(step, role string) (scriptReply, bool) {
	rr := p.script.byRole[role]
	if rr == nil {
		return scriptReply{}, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	best, first := -1, len(p.script.replies)
	consider := func(q int) {
		if n := p.next[q]; n < len(p.script.queues[q].replies) && p.script.queues[q].replies[n] < first {
			best, first = q, p.script.queues[q].replies[n]
		}
	}
	if q, ok := rr.literal[step]; ok {
		consider(q)
	}
	for _, q := range rr.wild {
		if p.next[q] < len(p.script.queues[q].replies) && p.script.queues[q].match.Match(step) {
			consider(q)
		}
	}
	if best < 0 {
		return scriptReply{}, false
	}
	p.next[best]++
	return p.script.replies[first], true
}

// err is the error a scripted failure makes the call fail with, classed
// the way a real provider's would be.
func (f *scriptFailure) err(provider, model string) *Error {
	e := &Error{Provider: provider, Model: model, Status: f.status, Message: f.message}
	switch {
	case f.timeout:
		e.Transient = true
		if e.Message == "" {
			e.Message = "timed out (scripted)"
		}
	default:
		e.Transient = f.status == http.StatusTooManyRequests || f.status >= 500
		if e.Message == "" {
			e.Message = strings.ToLower(http.StatusText(f.status))
		}
		if e.Message == "" {
			e.Message = "scripted error"
		}
	}
	return e
}

// lastMessage is the content of a conversation's last message, cut short
// for an error message.
func lastMessage(msgs []chat.Message) string {
	if len(msgs) == 0 {
		return ""
	}
	m := msgs[len(msgs)-1]
	s := m.Text()
	if s == "" {
		var names []string
		for _, b := range m.Blocks {
			switch b.Type {
			case chat.BlockToolUse:
				names = append(names, b.Name)
			case chat.BlockToolResult:
				names = append(names, "result of "+b.ID)
			}
		}
		s = strings.Join(names, ", ")
		if m.Role == chat.RoleAssistant {
			s = "tool calls: " + s
		}
	}
	const limit = 200
	if utf8.RuneCountInString(s) > limit {
		s = string([]rune(s)[:limit]) + "…"
	}
	return s
}

// estimateUsage guesses the tokens of a call whose reply gives none, at
// the usual four characters a token, so that usage reports and budgets see
// plausible figures in a scripted run.
func estimateUsage(req chat.Request, reply chat.Reply) chat.Usage {
	in := 0
	for _, m := range req.Messages {
		for _, b := range m.Blocks {
			in += utf8.RuneCountInString(b.Text) + utf8.RuneCountInString(b.Name) + utf8.RuneCount(b.Input)
		}
	}
	if len(req.Tools) > 0 {
		if raw, err := json.Marshal(req.Tools); err == nil {
			in += utf8.RuneCount(raw)
		}
	}
	out := utf8.RuneCountInString(reply.Text)
	for _, c := range reply.ToolCalls {
		out += utf8.RuneCount(c.Arguments)
	}
	return chat.Usage{InputTokens: max(1, in/4), OutputTokens: max(1, out/4)}
}

// streamChunks is how many pieces a delayed reply's text (and, apart, its
// reasoning) streams in: enough for a front end to show it arriving.
const streamChunks = 5

// stream sends a reply to onDelta. Without a delay it goes in one delta;
// with one, the reasoning and then the text go in pieces spread over it,
// the way a real model's tokens trickle in. The delay passes even without
// onDelta, so that a scripted slow reply can run into a timeout.
//
// The reply counts against [limits] model_reply_bytes as a server's does
// while it streams (reasoning, text, then the tool calls' ids, names and
// arguments): the piece that passes the bound is not sent, and the call
// fails as an HTTP provider's would, so that the limit can be tried
// offline.
func (p *scriptProvider) stream(ctx context.Context, model string, delay time.Duration, reply chat.Reply, onDelta func(chat.Delta)) error {
	var size int64
	send := func(d chat.Delta) error {
		size += int64(len(d.Text) + len(d.Reasoning))
		if err := overReplyLimit(ctx, p.name, model, size); err != nil {
			return err
		}
		if onDelta != nil {
			onDelta(d)
		}
		return nil
	}
	reasoning := reply.Reasoning()
	switch {
	case delay <= 0:
		if reply.Text != "" || reasoning != "" {
			if err := send(chat.Delta{Text: reply.Text, Reasoning: reasoning}); err != nil {
				return err
			}
		}
	case reply.Text == "" && reasoning == "":
		if err := sleep(ctx, delay); err != nil {
			return err
		}
	default:
		var deltas []chat.Delta
		for _, s := range chunks(reasoning, streamChunks) {
			deltas = append(deltas, chat.Delta{Reasoning: s})
		}
		for _, s := range chunks(reply.Text, streamChunks) {
			deltas = append(deltas, chat.Delta{Text: s})
		}
		step := delay / time.Duration(len(deltas))
		for _, d := range deltas {
			if err := sleep(ctx, step); err != nil {
				return err
			}
			if err := send(d); err != nil {
				return err
			}
		}
	}
	for _, c := range reply.ToolCalls {
		size += int64(len(c.ID) + len(c.Name) + len(c.Arguments))
	}
	return overReplyLimit(ctx, p.name, model, size)
}

// chunks cuts s into at most n pieces of about the same number of runes.
func chunks(s string, n int) []string {
	runes := utf8.RuneCountInString(s)
	if runes == 0 {
		return nil
	}
	n = min(n, runes)
	out := make([]string, 0, n)
	for i := range n {
		size := runes / n
		if i < runes%n {
			size++
		}
		end := 0
		for range size {
			_, w := utf8.DecodeRuneInString(s[end:])
			end += w
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	return out
}

// sleep waits for d or until ctx is done, whichever comes first.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
