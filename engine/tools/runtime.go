package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/stepwise-dev/stepwise/engine/config"
	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/plans/suggest"
	"github.com/stepwise-dev/stepwise/plans/template"
)

// Runtime dispatches calls to the tools that run outside the engine:
// builtin__reshape, the enabled packs' tools, user exec and reshape tools,
// and MCP server tools. The engine runs the rest itself (builtin__infer and
// user prompt tools call a model, plan__ tools run a plan, control steps are
// no tools at all).
//
// A Runtime is safe for concurrent use. It holds one connection per MCP
// server, made on first use and kept until Close.
type Runtime struct {
	cfg *config.Config
	// cat is the catalog whose user tools the runtime runs; a workbench
	// swaps in a new one when tool files come, go or change (SetCatalog).
	cat     atomic.Pointer[Catalog]
	builtin map[string]*plans.Schema // input schemas of the builtin tools the runtime runs

	// packSchemas are the compiled input schemas of the enabled pack
	// tools, by catalog name.
	packSchemas map[string]*plans.Schema

	// closing ends when Close is called; connection attempts in flight
	// give up then.
	closing     context.Context
	stopClosing context.CancelFunc

	mu      sync.Mutex
	servers map[string]*mcpServer // by server name, created on first use
	closed  bool
}

// ErrNotRuntimeTool marks a call the runtime does not dispatch because the
// engine runs that tool itself: builtin__infer, a user prompt tool, a
// plan__ tool or a control step. Test for it with errors.Is.
var ErrNotRuntimeTool = errors.New("not run by the tool runtime")

// ErrUnknownTool marks a call to a name that is no tool here: not in the
// catalog, or not offered by its MCP server (or filtered out by the
// server's include_tools/exclude_tools). Test for it with errors.Is.
var ErrUnknownTool = errors.New("unknown tool")

// dispatchError is a plain error that answers errors.Is for one of the
// sentinels above, so that the engine can branch on why a call was refused
// while the message stays a sentence about the tool.
type dispatchError struct {
	msg  string
	kind error
}

func (e *dispatchError) Error() string        { return e.msg }
func (e *dispatchError) Is(target error) bool { return target == e.kind }

// ToolError is a tool that ran and failed: an input that did not match the
// tool's input_schema, a process that exited non-zero, timed out or printed
// unparseable JSON, or an MCP server that answered with isError. The agent
// gets it back as an error result; a plan step fails with it.
type ToolError struct {
	Tool    string // the catalog name, e.g. user__git_log
	Message string // what went wrong, without the stderr tail

	// Stderr is the end of what an exec tool wrote to stderr (at most
	// 8 KiB, the tail kept, since that is where the reason is).
	Stderr string
	// ExitCode is the exec tool's exit status; -1 when the process did not
	// exit by itself (killed, or never started), 0 when no process ran.
	ExitCode int
	// TimedOut is set when the tool ran past its timeout_secs and was killed.
	TimedOut bool

	// Input is set when the input failed the tool's input_schema; the call
	// was never dispatched. Violations lists each failure ("/count: got
	// string, want integer").
	Input      bool
	Violations []string
}

// Error reads as the tail of "plan failed at step E2 (user__git_log): ...":
// the message, then the last lines of stderr when there are any.
func (e *ToolError) Error() string {
	if tail := lastLines(e.Stderr, 3); tail != "" {
		return e.Message + ": " + tail
	}
	return e.Message
}

// SetCatalog makes the runtime run the user tools of cat from its next
// call on: the project's tool files were read again. The configuration,
// and so the packs and MCP servers, stay as they were.
func (r *Runtime) SetCatalog(cat *Catalog) { r.cat.Store(cat) }

// NewRuntime returns the runtime for the project cfg describes, whose user
// tools cat has loaded. It connects to nothing until a call needs it.
func NewRuntime(cfg *config.Config, cat *Catalog) *Runtime {
	r := &Runtime{cfg: cfg, builtin: map[string]*plans.Schema{}, packSchemas: map[string]*plans.Schema{}, servers: map[string]*mcpServer{}}
	r.cat.Store(cat)
	r.closing, r.stopClosing = context.WithCancel(context.Background())
	// The builtin schemas are ours and known to compile; a failure here is
	// a bug that the tests catch, so it only disables checking.
	for _, t := range builtinTools() {
		if t.Name != "builtin__reshape" {
			continue
		}
		if compiled, err := plans.CompileSchema(t.InputSchema); err == nil {
			r.builtin[t.Name] = &plans.Schema{Raw: t.InputSchema, Compiled: compiled}
		}
	}
	for name, t := range cat.packTools {
		if compiled, err := plans.CompileSchema(t.info.InputSchema); err == nil {
			r.packSchemas[name] = &plans.Schema{Raw: t.info.InputSchema, Compiled: compiled}
		}
	}
	return r
}

// Call validates input against the tool's input_schema, then dispatches.
// A tool that ran and failed returns *ToolError; a name the engine runs
// itself is an error wrapping ErrNotRuntimeTool, and a name that is no tool
// here one wrapping ErrUnknownTool. When ctx ends, a running process is
// killed and the error wraps ctx's error.
func (r *Runtime) Call(ctx context.Context, name string, input map[string]any) (any, error) {
	if input == nil {
		input = map[string]any{}
	}
	switch {
	case name == "builtin__reshape":
		if !isReshapeInput(input) {
			// The schema check says what is wrong, in the words every
			// other tool's refusal uses.
			if err := checkInput(name, r.builtin[name], input); err != nil {
				return nil, err
			}
		}
		// The engine rendered the shape as part of the step's input; it is
		// returned as it came, so that text holding {{ }} is never read as
		// a template a second time.
		return input["shape"], nil
	case name == "builtin__infer":
		return nil, &dispatchError{fmt.Sprintf("%s is an LLM call, which the engine makes itself", name), ErrNotRuntimeTool}
	case r.cat.Load().packTools[name] != nil:
		return r.callPack(ctx, r.cat.Load().packTools[name], input)
	case strings.HasPrefix(name, "user__"):
		return r.callUser(ctx, name, input)
	case strings.HasPrefix(name, "plan__"):
		return nil, &dispatchError{fmt.Sprintf("%s runs a plan, which the engine does itself", name), ErrNotRuntimeTool}
	case plans.IsControl(name):
		return nil, &dispatchError{fmt.Sprintf("'%s' is a control step, which the engine evaluates; it is not a tool", name), ErrNotRuntimeTool}
	}
	if server, tool, ok := strings.Cut(name, "__"); ok && server != "" && tool != "" {
		if _, configured := r.cfg.MCP[server]; configured {
			v, err := r.callMCP(ctx, server, tool, input)
			return v, r.redacted(err)
		}
	}
	return nil, r.unknown(name)
}

// unknown explains a name that is no tool here, offering the closest
// catalog name or MCP server.
func (r *Runtime) unknown(name string) error {
	var names []string
	for _, t := range r.cat.Load().Tools() {
		names = append(names, t.Name)
	}
	if server, _, ok := strings.Cut(name, "__"); ok && !slices.Contains([]string{"builtin", "user", "plan"}, server) {
		servers := r.cfg.MCPServerNames()
		return &dispatchError{fmt.Sprintf("no tool named '%s': there is no MCP server '%s' (%s)%s", name, server, serverList(servers), suggest.DidYouMean(server, servers)), ErrUnknownTool}
	}
	if hint := r.cat.Load().UnlistedToolHint(name); hint != "" {
		return &dispatchError{name + " " + hint, ErrUnknownTool}
	}
	return &dispatchError{fmt.Sprintf("no tool named '%s'%s", name, suggest.DidYouMean(name, names)), ErrUnknownTool}
}

func serverList(names []string) string {
	if len(names) == 0 {
		return "none are configured"
	}
	return "configured: " + strings.Join(names, ", ")
}

func (r *Runtime) callUser(ctx context.Context, name string, input map[string]any) (any, error) {
	t, ok := r.cat.Load().UserTool(name)
	if !ok {
		return nil, r.unknown(name)
	}
	if err := checkInput(name, t.InputSchema, input); err != nil {
		return nil, err
	}
	switch t.Kind.Value {
	case plans.ToolExec:
		return r.runExec(ctx, t, input)
	case plans.ToolReshape:
		if t.CallerShape.Value {
			// Like builtin__reshape: the caller's shape was rendered by
			// the engine and comes back verbatim.
			return input["shape"], nil
		}
		out, err := t.Shape.Render(template.LimitedScope{Scope: template.MapScope{"input": input}, Limit: r.cfg.Limits.ValueBytes})
		if err != nil {
			return nil, &ToolError{Tool: name, Message: "rendering the shape: " + err.Error()}
		}
		return out, nil
	case plans.ToolPrompt:
		return nil, &dispatchError{fmt.Sprintf("%s is a prompt tool: an LLM call, which the engine makes itself", name), ErrNotRuntimeTool}
	}
	return nil, fmt.Errorf("%s: unknown tool kind '%s'", name, t.Kind.Value)
}

// isReshapeInput reports whether input is what builtin__reshape's
// input_schema accepts in the only form a step writes it: a shape object
// and nothing else. It is the schema's answer without the generic
// validator, which would otherwise be most of what a reshape step costs.
func isReshapeInput(input map[string]any) bool {
	if len(input) != 1 {
		return false
	}
	_, isObject := input["shape"].(map[string]any)
	return isObject
}

// checkInput validates input against schema (nil: anything goes) and
// returns the *ToolError that refuses the call, or nil.
func checkInput(tool string, schema *plans.Schema, input map[string]any) error {
	vs := schema.Check(input)
	if len(vs) == 0 {
		return nil
	}
	texts := make([]string, len(vs))
	for i, v := range vs {
		texts[i] = v.String()
	}
	return &ToolError{Tool: tool, Input: true, Violations: texts,
		Message: fmt.Sprintf("input does not match %s's input_schema: %s", tool, strings.Join(texts, "; "))}
}

// Close shuts every MCP connection down: stdio children are asked to exit
// and killed when they do not within about two seconds. Close never hangs,
// and calls made after it fail.
func (r *Runtime) Close() error {
	r.stopClosing()
	r.mu.Lock()
	r.closed = true
	servers := make([]*mcpServer, 0, len(r.servers))
	for _, s := range r.servers {
		servers = append(servers, s)
	}
	r.servers = map[string]*mcpServer{}
	r.mu.Unlock()
	var wg sync.WaitGroup
	errs := make([]error, len(servers))
	for i, s := range servers {
		wg.Go(func() { errs[i] = s.close() })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// projectDir is the directory relative paths in tool files resolve
// against: the project root, or the working directory outside a project.
func (r *Runtime) projectDir() (string, error) {
	if r.cfg.Project != nil && r.cfg.Project.Root != "" {
		return r.cfg.Project.Root, nil
	}
	return os.Getwd()
}
