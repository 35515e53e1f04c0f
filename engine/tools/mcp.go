package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stepwise-dev/stepwise/engine/config"
	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/plans/suggest"
)

const (
	// mcpStderrMax is how much of a stdio server's stderr is kept. Its
	// stderr is otherwise silenced; the tail says why a server died.
	mcpStderrMax = 4 << 10
	// mcpTerminate is how long a stdio server gets to exit after its stdin
	// closes, and again after SIGTERM, before the SDK kills it.
	mcpTerminate = 750 * time.Millisecond
	// mcpKillAfter is when Close stops waiting for a polite shutdown and
	// kills the server's whole process group; mcpGiveUp is when it stops
	// waiting altogether, so that Close never hangs.
	mcpKillAfter = 2 * time.Second
	mcpGiveUp    = 3 * time.Second
	// mcpConnectTimeout bounds starting a server and its handshake; a
	// first `npx -y` may download the server, so it is generous.
	mcpConnectTimeout = 30 * time.Second
	// mcpPingTimeout bounds the ping a server must answer after a call
	// to it ran out of time, before it gets another; one that does not
	// answer is restarted.
	mcpPingTimeout = 3 * time.Second
)

// mcpServer is one configured server as the runtime sees it across its
// life: at most one live connection at a time, made on first use, and made
// again when the server goes away.
type mcpServer struct {
	name string
	rt   *Runtime

	mu         sync.Mutex
	conn       *mcpConn
	connecting chan struct{} // closed when the connection attempt in progress ends
	lastErr    error         // the attempt's error, for those who waited on it
	closed     bool
}

// mcpConn is one live connection to a server and what was learnt on it.
type mcpConn struct {
	server  string
	label   string // "mcp server 'x' (stdio: cmd args)", for messages
	session *mcp.ClientSession
	cmd     *exec.Cmd   // the stdio child; nil over HTTP
	stderr  *tailBuffer // the stdio child's stderr tail
	lost    chan struct{}

	all   []string             // every tool the server lists, before filtering
	tools map[string]*mcp.Tool // the tools exposed, by the server's name
	infos []plans.ToolInfo     // the same as catalog entries, sorted by name

	calls chan struct{} // a one-slot semaphore: one call at a time per connection
	// overLimit is set when the server sent a message longer than [limits]
	// mcp_result_bytes: the read stopped there, and the connection with it.
	overLimit atomic.Bool
	// suspect is set when a call ran out of its time: the server must
	// answer a ping before it is given another.
	suspect atomic.Bool

	schemaMu sync.Mutex
	schemas  map[string]*plans.Schema // compiled input schemas; nil: not checkable
}

// ServerTools connects to the MCP server (on first use) and returns its
// tools as catalog entries: named server__tool, Source the server's name,
// include_tools/exclude_tools and tool_overrides applied, ReadOnly from the
// tool's readOnlyHint annotation (nil when it has no annotations). ctx
// bounds the connection attempt, not the connection.
func (r *Runtime) ServerTools(ctx context.Context, server string) ([]plans.ToolInfo, error) {
	s, err := r.server(server)
	if err != nil {
		return nil, err
	}
	c, err := s.connected(ctx)
	if err != nil {
		return nil, r.redacted(err)
	}
	return slices.Clone(c.infos), nil
}

// redacted is err with the secrets the configuration expanded into
// [providers.*] and [mcp.*] hidden in its message (config.Redact): a
// server's command line, url and stderr go into errors, and errors into
// the run store. What it wraps can still be told apart with errors.As.
func (r *Runtime) redacted(err error) error {
	if err == nil {
		return nil
	}
	if msg := r.cfg.Redact(err.Error()); msg != err.Error() {
		return &redactedError{msg: msg, err: err}
	}
	return err
}

// redactedError is an error whose message had secrets in it.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// server returns the runtime's entry for a configured server, refusing one
// that is not configured or whose configuration names an unset variable.
func (r *Runtime) server(name string) (*mcpServer, error) {
	if _, err := r.cfg.MCPServer(name); err != nil {
		var nc *config.NotConfiguredError
		if errors.As(err, &nc) {
			return nil, fmt.Errorf("%w%s", err, suggest.DidYouMean(name, nc.Configured))
		}
		return nil, fmt.Errorf("mcp server '%s' refuses to connect: %w", name, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, fmt.Errorf("mcp server '%s': the tool runtime is closed", name)
	}
	s, ok := r.servers[name]
	if !ok {
		s = &mcpServer{name: name, rt: r}
		r.servers[name] = s
	}
	return s, nil
}

// responsive returns the live connection, as connected does, but one that
// let a call run out of its time must first answer a ping: a server that
// does not is stuck, and is restarted for this call.
func (s *mcpServer) responsive(ctx context.Context) (*mcpConn, error) {
	c, err := s.connected(ctx)
	if err != nil || !c.suspect.Load() {
		return c, err
	}
	pingCtx, cancel := context.WithTimeout(ctx, mcpPingTimeout)
	err = c.session.Ping(pingCtx, nil)
	cancel()
	if err == nil {
		c.suspect.Store(false)
		return c, nil
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("mcp server '%s': %w", s.name, ctx.Err())
	}
	s.drop(c)
	return s.connected(ctx)
}

// drop closes c, in the background, and makes sure the next caller gets a
// new connection.
func (s *mcpServer) drop(c *mcpConn) {
	s.mu.Lock()
	if s.conn == c {
		s.conn = nil
		go c.close()
	}
	s.mu.Unlock()
}

// connected returns the live connection, connecting when there is none. One
// attempt runs at a time; others wait for it (or for their ctx).
func (s *mcpServer) connected(ctx context.Context) (*mcpConn, error) {
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return nil, fmt.Errorf("mcp server '%s': the tool runtime is closed", s.name)
		}
		if s.conn != nil && !s.conn.isLost() {
			c := s.conn
			s.mu.Unlock()
			return c, nil
		}
		if wait := s.connecting; wait != nil {
			s.mu.Unlock()
			select {
			case <-wait:
				s.mu.Lock()
				err := s.lastErr
				s.mu.Unlock()
				// An attempt that failed because its caller gave up says
				// nothing about the server: try again for this caller.
				if err != nil && (ctx.Err() != nil || !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)) {
					return nil, err
				}
				continue
			case <-ctx.Done():
				return nil, fmt.Errorf("mcp server '%s': %w", s.name, ctx.Err())
			}
		}
		if old := s.conn; old != nil {
			// It went away (the process died, the server hung up): what
			// is left of it goes before a fresh start.
			s.conn = nil
			go old.close()
		}
		wait := make(chan struct{})
		s.connecting = wait
		s.mu.Unlock()

		c, err := s.connect(ctx)

		s.mu.Lock()
		s.connecting, s.lastErr = nil, err
		if err == nil && s.closed {
			go c.close()
			c, err = nil, fmt.Errorf("mcp server '%s': the tool runtime is closed", s.name)
		}
		if err == nil {
			s.conn = c
		}
		s.mu.Unlock()
		close(wait)
		return c, err
	}
}

// connect makes a connection and lists the server's tools.
func (s *mcpServer) connect(ctx context.Context) (*mcpConn, error) {
	cfg, err := s.rt.cfg.MCPServer(s.name)
	if err != nil {
		return nil, fmt.Errorf("mcp server '%s' refuses to connect: %w", s.name, err)
	}
	// A server that never finishes the handshake must not hold a run
	// forever; and Close cancels attempts in flight, so that it never
	// waits for a slow server to finish starting.
	parent, started := ctx, time.Now()
	ctx, cancel := context.WithTimeout(ctx, mcpConnectTimeout)
	defer cancel()
	stop := context.AfterFunc(s.rt.closing, cancel)
	defer stop()

	c := &mcpConn{server: s.name, lost: make(chan struct{}), calls: make(chan struct{}, 1), schemas: map[string]*plans.Schema{}}
	var transport mcp.Transport
	if cfg.URL != "" {
		c.label = fmt.Sprintf("mcp server '%s' (http: %s)", s.name, cfg.URL)
		transport = &mcp.StreamableClientTransport{
			Endpoint: cfg.URL,
			HTTPClient: &http.Client{Transport: &headerTransport{headers: cfg.Headers, base: http.DefaultTransport,
				limit: s.rt.cfg.Limits.MCPResultBytes, over: func() { c.overLimit.Store(true) }}},
			// Stepwise asks and the server answers; it subscribes to
			// nothing the server could push.
			DisableStandaloneSSE: true,
		}
	} else {
		c.label = fmt.Sprintf("mcp server '%s' (stdio: %s)", s.name, commandLine(cfg.Command, cfg.Args))
		cmd := exec.Command(cfg.Command, cfg.Args...)
		cmd.Env = environWithout(s.rt.cfg.SecretVars())
		for _, k := range sortedKeys(cfg.Env) {
			cmd.Env = append(cmd.Env, k+"="+cfg.Env[k])
		}
		if dir, err := s.rt.projectDir(); err == nil {
			cmd.Dir = dir
		}
		c.stderr = newTailBuffer(mcpStderrMax)
		cmd.Stderr = c.stderr
		cmd.WaitDelay = pipeGrace
		inOwnGroup(cmd)
		dieWithParent(cmd)
		c.cmd = cmd
		transport = &stdioTransport{cmd: cmd, limit: s.rt.cfg.Limits.MCPResultBytes, over: func() {
			c.overLimit.Store(true)
			// It may still be writing the rest; nothing reads it now.
			c.killChild()
		}}
	}

	client := mcp.NewClient(&mcp.Implementation{Name: "stepwise", Version: clientVersion()},
		// No roots, sampling or elicitation: a server must not wait on a
		// request stepwise would never answer.
		&mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	session, err := client.Connect(ctx, transport, nil)
	if err != nil {
		c.killChild()
		if c.overLimit.Load() {
			return nil, c.failure("cannot connect", errors.New(s.rt.tooLong("answer to initialize")+anyMessageHint))
		}
		if errors.Is(err, context.DeadlineExceeded) && !errors.Is(parent.Err(), context.Canceled) {
			return nil, c.failure("cannot connect", fmt.Errorf("the server did not finish the MCP handshake within %s", time.Since(started).Round(time.Second)))
		}
		return nil, c.failure("cannot connect", err)
	}
	c.session = session
	go func() {
		session.Wait()
		close(c.lost)
	}()

	c.tools = map[string]*mcp.Tool{}
	for t, err := range session.Tools(ctx, nil) {
		if err != nil {
			c.close()
			if c.overLimit.Load() {
				err = errors.New(s.rt.tooLong("tool list") + anyMessageHint)
			}
			return nil, c.failure("cannot list its tools", err)
		}
		c.all = append(c.all, t.Name)
		if exposed(cfg, t.Name) {
			c.tools[t.Name] = t
			c.infos = append(c.infos, toolInfo(s.name, t, cfg.ToolOverrides[t.Name]))
		}
	}
	sort.Slice(c.infos, func(i, j int) bool { return c.infos[i].Name < c.infos[j].Name })
	return c, nil
}

// failure explains a connection that failed: the server and how it was
// reached, what failed, and the end of its stderr when it wrote any.
func (c *mcpConn) failure(what string, err error) error {
	tail := ""
	if c.stderr != nil {
		// A child that just died may still be flushing stderr.
		time.Sleep(50 * time.Millisecond)
		if t := lastLines(c.stderr.String(), 3); t != "" {
			tail = "; its stderr ends: " + t
		}
	}
	return fmt.Errorf("%s: %s: %w%s", c.label, what, err, tail)
}

// exposed applies include_tools (when set, only those) and exclude_tools.
// Unmatched lists the entries of a server's include_tools, exclude_tools
// and tool_overrides that name no tool the server has: a typo there would
// otherwise hide a tool, or patch nothing, without a word.
func (r *Runtime) Unmatched(ctx context.Context, server string) ([]string, error) {
	s, err := r.server(server)
	if err != nil {
		return nil, err
	}
	c, err := s.connected(ctx)
	if err != nil {
		return nil, r.redacted(err)
	}
	cfg := r.cfg.MCP[server]
	var out []string
	check := func(key, name string) {
		if !slices.Contains(c.all, name) {
			out = append(out, fmt.Sprintf("[mcp.%s] %s names '%s', which the server does not have%s", server, key, name, suggest.DidYouMean(name, c.all)))
		}
	}
	for _, name := range cfg.IncludeTools {
		check("include_tools", name)
	}
	for _, name := range cfg.ExcludeTools {
		check("exclude_tools", name)
	}
	for _, name := range sortedKeys(cfg.ToolOverrides) {
		check("tool_overrides", name)
	}
	return out, nil
}

func exposed(cfg config.MCPServer, tool string) bool {
	if len(cfg.IncludeTools) > 0 && !slices.Contains(cfg.IncludeTools, tool) {
		return false
	}
	return !slices.Contains(cfg.ExcludeTools, tool)
}

// toolInfo is a server's tool as a catalog entry, with its override on top.
func toolInfo(server string, t *mcp.Tool, o config.ToolOverride) plans.ToolInfo {
	info := plans.ToolInfo{Name: server + "__" + t.Name, Source: server, Description: t.Description,
		InputSchema: t.InputSchema, OutputSchema: t.OutputSchema}
	if info.Description == "" {
		info.Description = t.Title
	}
	if t.Annotations != nil {
		// readOnlyHint defaults to false once a tool has annotations at
		// all; only a tool without them declares nothing.
		ro := t.Annotations.ReadOnlyHint
		info.ReadOnly = &ro
	}
	if o.Description != "" {
		info.Description = o.Description
	}
	if o.OutputSchema != nil {
		info.OutputSchema = o.OutputSchema
	}
	if o.OutputExample != nil {
		info.OutputExample = o.OutputExample
	}
	return info
}

// callTimeoutKey carries, in a call's context, the timeout_secs of the
// step that makes it.
type callTimeoutKey struct{}

// WithStepTimeout is ctx for the calls of a step with timeout_secs: an MCP
// or exec call under it gets that long, in place of its server's
// call_timeout_secs or its tool file's timeout_secs.
func WithStepTimeout(ctx context.Context, secs int) context.Context {
	return context.WithValue(ctx, callTimeoutKey{}, secs)
}

// runIDKey carries, in a call's context, the id of the run making it.
type runIDKey struct{}

// WithRunID is ctx for the calls of run id: each MCP call under it says
// which run it belongs to in its _meta (plans.RunIDMeta).
func WithRunID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, runIDKey{}, id)
}

// stepTimeout is the timeout_secs of the step making a call under ctx.
func stepTimeout(ctx context.Context) (time.Duration, bool) {
	secs, ok := ctx.Value(callTimeoutKey{}).(int)
	return time.Duration(secs) * time.Second, ok && secs > 0
}

// callMCP calls one tool of a server. Calls to one server wait for each
// other: a connection handles one call at a time.
func (r *Runtime) callMCP(ctx context.Context, server, tool string, input map[string]any) (any, error) {
	name := server + "__" + tool
	s, err := r.server(server)
	if err != nil {
		return nil, err
	}
	c, err := s.responsive(ctx)
	if err != nil {
		return nil, err
	}
	if _, ok := c.tools[tool]; !ok {
		return nil, c.unknownTool(tool)
	}
	if err := checkInput(name, c.inputSchema(tool), input); err != nil {
		return nil, err
	}
	select {
	case c.calls <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: waiting for the server: %w", name, context.Cause(ctx))
	}
	c.overLimit.Store(false)
	cfg, _ := r.cfg.MCPServer(server)
	timeout, bound := cfg.CallTimeout(), fmt.Sprintf("call_timeout_secs under [mcp.%s]", server)
	if d, ok := stepTimeout(ctx); ok {
		timeout, bound = d, "the step's timeout_secs"
	}
	callCtx, cancel := context.WithTimeout(ctx, timeout)
	params := &mcp.CallToolParams{Name: tool, Arguments: input}
	if id, _ := ctx.Value(runIDKey{}).(string); id != "" {
		params.Meta = mcp.Meta{plans.RunIDMeta: id}
	}
	res, err := c.session.CallTool(callCtx, params)
	cancel()
	<-c.calls
	if err != nil {
		var rpc *jsonrpc.Error
		switch {
		case c.overLimit.Load():
			// The rest of the answer is unread: the connection cannot be
			// trusted with another call.
			s.drop(c)
			return nil, &ToolError{Tool: name, Message: r.tooLong("answer") + "; raise the limit if the tool's results are meant to be that large"}
		case ctx.Err() != nil:
			return nil, fmt.Errorf("%s: %w", name, context.Cause(ctx))
		case errors.Is(callCtx.Err(), context.DeadlineExceeded):
			// The SDK has told the server the call is cancelled; whether
			// the server heard is for the next call's ping to find out.
			c.suspect.Store(true)
			return nil, &ToolError{Tool: name, TimedOut: true, ExitCode: -1,
				Message: fmt.Sprintf("no answer within %s (%s); the call was cancelled", timeout, bound)}
		case errors.As(err, &rpc):
			// The server answered, with a protocol error rather than an
			// error result (invalid arguments, often): still the tool
			// failing, and something the agent can correct.
			return nil, &ToolError{Tool: name, Message: rpc.Message}
		}
		// A server that crashed mid-call shows first as a broken read; the
		// session notices the loss a moment later, and then the server's
		// last words say why.
		select {
		case <-c.lost:
			return nil, c.failure("the server went away during the call", err)
		case <-time.After(200 * time.Millisecond):
		}
		return nil, fmt.Errorf("%s: %w", c.label, err)
	}
	return mcpResult(name, res)
}

// unknownTool explains a tool the server does not offer, or that the
// configuration filters out.
func (c *mcpConn) unknownTool(tool string) error {
	if slices.Contains(c.all, tool) {
		return &dispatchError{fmt.Sprintf("mcp server '%s' has a tool '%s', but [mcp.%s] leaves it out (include_tools/exclude_tools)", c.server, tool, c.server), ErrUnknownTool}
	}
	names := make([]string, 0, len(c.tools))
	for n := range c.tools {
		names = append(names, n)
	}
	sort.Strings(names)
	return &dispatchError{fmt.Sprintf("mcp server '%s' has no tool '%s'%s", c.server, tool, suggest.DidYouMean(tool, names)), ErrUnknownTool}
}

// inputSchema compiles a tool's input schema once. A schema that does not
// compile here is left to the server to enforce.
func (c *mcpConn) inputSchema(tool string) *plans.Schema {
	c.schemaMu.Lock()
	defer c.schemaMu.Unlock()
	if s, ok := c.schemas[tool]; ok {
		return s
	}
	var s *plans.Schema
	if raw := c.tools[tool].InputSchema; raw != nil {
		if compiled, err := plans.CompileSchema(raw); err == nil {
			s = &plans.Schema{Raw: raw, Compiled: compiled}
		}
	}
	c.schemas[tool] = s
	return s
}

// mcpResult turns a tool result into the value a step sees: structured
// content when the server gives it, else the text as JSON when it parses,
// else {"text": ...}. An error result is a *ToolError carrying its text.
func mcpResult(name string, res *mcp.CallToolResult) (any, error) {
	var texts []string
	var others []any // images, audio, resources and links, as the protocol writes them
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, t.Text)
			continue
		}
		if b, err := json.Marshal(c); err == nil {
			if v, err := parseJSON(b); err == nil {
				others = append(others, v)
			}
		}
	}
	text := strings.Join(texts, "\n")
	if res.IsError {
		if strings.TrimSpace(text) == "" {
			text = "the server reported an error without saying what"
		}
		return nil, &ToolError{Tool: name, Message: text}
	}
	if res.StructuredContent != nil {
		// Through JSON once more, so that numbers are json.Number as in
		// every other tool result.
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			if v, err := parseJSON(b); err == nil {
				return v, nil
			}
		}
		return res.StructuredContent, nil
	}
	if strings.TrimSpace(text) != "" {
		if v, err := parseJSON([]byte(text)); err == nil {
			return v, nil
		}
	}
	out := map[string]any{"text": text}
	if len(others) > 0 {
		// Content that is not text is not dropped: a plan can read a
		// resource link's uri as {{E1.content.0.uri}}.
		out["content"] = others
	}
	return out, nil
}

func (c *mcpConn) isLost() bool {
	select {
	case <-c.lost:
		return true
	default:
		return false
	}
}

// killChild kills the stdio child's process group, if it started.
func (c *mcpConn) killChild() {
	if c.cmd != nil && c.cmd.Process != nil {
		killProcessGroup(c.cmd.Process)
	}
}

// close shuts the connection down: the session closes (which, over stdio,
// closes the child's stdin and waits for it to exit), and whatever is left
// of the child's process group is killed; a child that ignores all that is
// killed after mcpKillAfter, and close returns by mcpGiveUp regardless.
func (c *mcpConn) close() error {
	if c.session == nil {
		c.killChild()
		return nil
	}
	done := make(chan struct{})
	go func() {
		// A server that exits non-zero on shutdown is not worth a message.
		c.session.Close()
		close(done)
	}()
	select {
	case <-done:
		// Children the server started in its group (npx starts node, say)
		// go too.
		c.killChild()
		return nil
	case <-time.After(mcpKillAfter):
	}
	c.killChild()
	select {
	case <-done:
		return nil
	case <-time.After(mcpGiveUp - mcpKillAfter):
		return fmt.Errorf("%s did not shut down", c.label)
	}
}

// close closes the server's connection for good.
func (s *mcpServer) close() error {
	s.mu.Lock()
	s.closed = true
	c := s.conn
	s.conn = nil
	s.mu.Unlock()
	if c == nil {
		return nil
	}
	return c.close()
}

// headerTransport adds the configured headers to every request to a
// streamable HTTP server (headers the SDK sets itself win), and bounds each
// response body by limit, [limits] mcp_result_bytes: a body is one answer
// (and any notifications before it), the standalone stream being off.
type headerTransport struct {
	headers map[string]string
	base    http.RoundTripper
	limit   int64
	over    func() // told when a body passes limit
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, v := range t.headers {
		if req.Header.Get(k) == "" {
			req.Header.Set(k, v)
		}
	}
	resp, err := t.base.RoundTrip(req)
	if err == nil && t.limit > 0 {
		resp.Body = limitedBody{&messageLimit{r: resp.Body, limit: t.limit, over: t.over}, resp.Body}
	}
	return resp, err
}

// tooLong says that the server's message, what, passed [limits]
// mcp_result_bytes.
func (r *Runtime) tooLong(what string) string {
	return fmt.Sprintf("the server's %s passed %d bytes ([limits] mcp_result_bytes) and was not read further", what, r.cfg.Limits.MCPResultBytes)
}

// anyMessageHint ends the message of a handshake message past [limits]
// mcp_result_bytes: a person who knows it as a bound on tool results
// would not think of it when the connection fails.
const anyMessageHint = "; the limit bounds every message from the server, not only a tool's results: raise it if the server's messages are meant to be that large"

// errMessageTooLong is what a read past a message's limit returns.
var errMessageTooLong = errors.New("a message passed [limits] mcp_result_bytes")

// messageLimit passes reads through while each message is within limit
// bytes. A message is a whole HTTP body, or, with perLine, a line (stdio's
// messages are newline-delimited JSON). At the first byte past the limit
// it tells over, once, and fails every read from then on, handing on what
// came before the long message: a message is never buffered whole.
type messageLimit struct {
	r       io.Reader
	limit   int64
	perLine bool
	over    func()
	n       int64 // bytes of the current message so far
	failed  bool
}

func (m *messageLimit) Read(p []byte) (int, error) {
	if m.failed {
		return 0, errMessageTooLong
	}
	n, err := m.r.Read(p)
	rest, whole := p[:n], 0 // whole: the bytes of the messages that ended within the limit
	for m.perLine {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 || m.n+int64(i) > m.limit {
			break
		}
		whole += i + 1
		m.n, rest = 0, rest[i+1:]
	}
	if m.n += int64(len(rest)); m.n > m.limit {
		m.failed = true
		m.over()
		if whole > 0 {
			return whole, nil
		}
		return 0, errMessageTooLong
	}
	return n, err
}

// limitedBody is an HTTP response body read through a messageLimit.
type limitedBody struct {
	*messageLimit
	io.Closer
}

// stdioTransport starts a stdio server, as mcp.CommandTransport does, but
// reads its stdout through a messageLimit, which CommandTransport has no
// place for.
type stdioTransport struct {
	cmd   *exec.Cmd
	limit int64
	over  func()
}

func (t *stdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	stdout, err := t.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := t.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := t.cmd.Start(); err != nil {
		return nil, err
	}
	var r io.Reader = stdout
	if t.limit > 0 {
		r = &messageLimit{r: stdout, limit: t.limit, perLine: true, over: t.over}
	}
	// The connection closes by closing the server's stdin, not its stdout.
	return (&mcp.IOTransport{Reader: io.NopCloser(r), Writer: &serverStdin{WriteCloser: stdin, cmd: t.cmd},
		MaxLineLength: -1}).Connect(ctx)
}

// serverStdin is a stdio server's stdin, whose closing ends the server the
// way the MCP spec asks: stdin closed, then SIGTERM, then SIGKILL, each
// after mcpTerminate without an exit.
type serverStdin struct {
	io.WriteCloser
	cmd *exec.Cmd
}

func (s *serverStdin) Close() error {
	err := s.WriteCloser.Close()
	exited := make(chan error, 1)
	go func() { exited <- s.cmd.Wait() }()
	for _, stop := range []func(){func() {}, func() { s.cmd.Process.Signal(syscall.SIGTERM) }, func() { s.cmd.Process.Kill() }} {
		stop()
		select {
		case <-exited:
			return err
		case <-time.After(mcpTerminate):
		}
	}
	return fmt.Errorf("%s did not exit", s.cmd.Path)
}

// commandLine shows a command and its arguments as a shell would take
// them, quoting the arguments that need it.
func commandLine(command string, args []string) string {
	parts := []string{command}
	for _, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n\"'\\$`") {
			a = fmt.Sprintf("%q", a)
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// clientVersion is the version stepwise introduces itself with.
func clientVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
		return info.Main.Version
	}
	return "(devel)"
}
