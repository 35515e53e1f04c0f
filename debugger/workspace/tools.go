package workspace

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/stepwise-dev/stepwise/engine/tools"
	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/plans/suggest"
)

const (
	// listConnectTimeout bounds each server's connection when a listing
	// connects to every configured server at once: one slow server must not
	// hold the listing of the others.
	listConnectTimeout = 10 * time.Second
	// serverConnectTimeout bounds the connection to the one server a
	// command names; a first `npx -y` start may download the server.
	serverConnectTimeout = 30 * time.Second
)

// Tools lists the tools plans can call without asking a server: the
// control steps and the built-in, user and plan tools.
func (w *Workspace) Tools() []plans.ToolInfo {
	return w.cat().Listing()
}

// Servers names the configured MCP servers.
func (w *Workspace) Servers() []string {
	return w.cat().Servers()
}

// ServerTools asks an MCP server for its tools, starting it if it is not
// running yet, with the secrets hidden in what the server says of them.
func (w *Workspace) ServerTools(ctx context.Context, server string) ([]plans.ToolInfo, error) {
	list, err := w.toolRuntime().ServerTools(ctx, server)
	return w.redactedTools(list), err
}

// redactedTools hides the configuration's secrets in what a server says
// of its tools: a server started with a token in its env or args may
// quote it in a description or a schema, and every listing shows them
// (the model requests the run store keeps are redacted as they are
// stored). Without secrets it is list itself.
func (w *Workspace) redactedTools(list []plans.ToolInfo) []plans.ToolInfo {
	if !w.cfg.HasSecrets() || len(list) == 0 {
		return list
	}
	out := make([]plans.ToolInfo, len(list))
	for i, t := range list {
		t.Description = w.cfg.Redact(t.Description)
		t.InputSchema, t.OutputSchema, t.OutputExample = w.redactedValue(t.InputSchema), w.redactedValue(t.OutputSchema), w.redactedValue(t.OutputExample)
		out[i] = t
	}
	return out
}

// redactedValue is a copy of a decoded JSON value with the configuration's secrets
// hidden in its strings and keys.
func (w *Workspace) redactedValue(v any) any {
	switch v := v.(type) {
	case string:
		return w.cfg.Redact(v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = w.redactedValue(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[w.cfg.Redact(k)] = w.redactedValue(e)
		}
		return out
	}
	return v
}

// Skipped is a file or an MCP server a listing left out, with why, as the
// user is shown them.
type Skipped struct {
	File   string `json:"file,omitempty"`
	Server string `json:"server,omitempty"`
	Reason string `json:"reason"`
}

// SkippedFiles lists the tool and plan files the catalog left out.
func (w *Workspace) SkippedFiles() []Skipped {
	var out []Skipped
	for _, sk := range w.cat().Skipped {
		out = append(out, Skipped{File: w.DisplayPath(sk.File), Reason: w.DisplayText(sk.Reason)})
	}
	return out
}

// EveryServerTools connects to every configured server at once, each
// within listConnectTimeout, and returns their tools in server order; a
// server that cannot be reached is skipped with its reason.
func (w *Workspace) EveryServerTools(ctx context.Context) ([]plans.ToolInfo, []Skipped) {
	names := w.cfg.MCPServerNames()
	lists := make([][]plans.ToolInfo, len(names))
	errs := make([]error, len(names))
	rt := w.toolRuntime()
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, listConnectTimeout)
			defer cancel()
			lists[i], errs[i] = rt.ServerTools(ctx, name)
			lists[i] = w.redactedTools(lists[i])
		})
	}
	wg.Wait()
	var all []plans.ToolInfo
	var skipped []Skipped
	for i, name := range names {
		if errs[i] != nil {
			skipped = append(skipped, Skipped{Server: name, Reason: w.DisplayText(errs[i].Error())})
			continue
		}
		all = append(all, lists[i]...)
	}
	return all, skipped
}

// AllTools lists every tool a plan step may name, the MCP servers' as
// EveryServerTools finds them: the control steps first, the others by
// name, which keeps each source's tools together since every name starts
// with its namespace.
func (w *Workspace) AllTools(ctx context.Context) ([]plans.ToolInfo, []Skipped) {
	server, skipped := w.EveryServerTools(ctx)
	control := len(tools.ControlTools())
	out := append(w.cat().Listing(), server...)
	sort.SliceStable(out[control:], func(i, j int) bool { return out[control+i].Name < out[control+j].Name })
	return out, skipped
}

// Tool finds one tool by its catalog name, asking its MCP server for a
// server's. A name nothing has says what may have been meant. With the
// error comes the tool as far as its name says: the name, and the server
// for a configured server's.
func (w *Workspace) Tool(ctx context.Context, name string) (plans.ToolInfo, error) {
	if t, ok := w.cat().Tool(name); ok {
		return t, nil
	}
	if server, _, _ := strings.Cut(name, "__"); slices.Contains(w.cat().Servers(), server) {
		return w.serverTool(ctx, server, name)
	}
	return plans.ToolInfo{Name: name}, errors.New(w.unknownToolMessage(name))
}

// serverTool connects to one MCP server and returns one of its tools by
// catalog name; with an error, the tool as far as its name says.
func (w *Workspace) serverTool(ctx context.Context, server, name string) (plans.ToolInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, serverConnectTimeout)
	defer cancel()
	named := plans.ToolInfo{Name: name, Source: server}
	list, err := w.ServerTools(ctx, server)
	if err != nil {
		return named, fmt.Errorf("'%s' would be a tool of MCP server '%s', which cannot be reached: %s", name, server, w.DisplayText(err.Error()))
	}
	var names []string
	for _, t := range list {
		if t.Name == name {
			return t, nil
		}
		names = append(names, t.Name)
	}
	cfg, tool := w.cfg.MCP[server], strings.TrimPrefix(name, server+"__")
	if slices.Contains(cfg.ExcludeTools, tool) || len(cfg.IncludeTools) > 0 && !slices.Contains(cfg.IncludeTools, tool) {
		return named, fmt.Errorf("[mcp.%s] leaves '%s' out (include_tools/exclude_tools)", server, tool)
	}
	return named, fmt.Errorf("mcp server '%s' has no tool '%s' (stepwise mcp tools %s lists its tools)%s", server, name, server, suggest.DidYouMean(name, names))
}

// unknownToolMessage says that the catalog has no tool name, and what may
// have been meant: a tool of a pack that is not enabled, a close name, or a
// tool that name is the short form of (git_log for builtin__git_log).
func (w *Workspace) unknownToolMessage(name string) string {
	msg := fmt.Sprintf("no tool named '%s'", name)
	if hint := w.cat().UnlistedToolHint(name); hint != "" {
		return msg + ": it " + hint
	}
	if !strings.Contains(name, "__") {
		for _, prefix := range []string{"builtin__", "user__", "plan__"} {
			if _, ok := w.cat().Tool(prefix + name); ok {
				return msg + "; did you mean '" + prefix + name + "'?"
			}
			if hint := w.cat().UnlistedToolHint(prefix + name); hint != "" {
				return msg + ": " + prefix + name + " " + hint
			}
		}
	}
	var names []string
	for _, t := range w.cat().Tools() {
		names = append(names, t.Name)
	}
	if hint := suggest.DidYouMean(name, names); hint != "" {
		return msg + hint
	}
	return msg + " (stepwise tools list shows the catalog)"
}

// MCPServer is one configured server, as the user is shown it. Env and
// headers are left out: they are where secrets live.
type MCPServer struct {
	Name         string   `json:"name"`
	Transport    string   `json:"transport"`
	Command      string   `json:"command,omitempty"`
	Args         []string `json:"args,omitempty"`
	URL          string   `json:"url,omitempty"`
	IncludeTools []string `json:"include_tools"`
	ExcludeTools []string `json:"exclude_tools"`
	Unusable     *string  `json:"unusable"` // why it cannot connect; null when it can try
}

// MCPServers lists the configured servers, by name.
func (w *Workspace) MCPServers() []MCPServer {
	out := []MCPServer{}
	for _, name := range w.cfg.MCPServerNames() {
		srv := w.cfg.MCP[name]
		args := make([]string, len(srv.Args))
		for i, a := range srv.Args {
			args[i] = w.cfg.Redact(a)
		}
		entry := MCPServer{Name: name, Transport: srv.Transport(), Command: srv.Command, Args: args, URL: w.cfg.Redact(srv.URL),
			IncludeTools: orEmpty(srv.IncludeTools), ExcludeTools: orEmpty(srv.ExcludeTools)}
		if _, err := w.cfg.MCPServer(name); err != nil {
			why := w.DisplayText(err.Error())
			entry.Unusable = &why
		}
		out = append(out, entry)
	}
	return out
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// MCPTest is what TestMCPServer found.
type MCPTest struct {
	Server           string  `json:"server"`
	Transport        string  `json:"transport"`
	OK               bool    `json:"ok"`
	Tools            int     `json:"tools"`
	WithOutputSchema int     `json:"withOutputSchema"`
	Error            *string `json:"error"`
	// Warnings name the include_tools, exclude_tools and tool_overrides
	// entries that match no tool of the server.
	Warnings []string `json:"warnings,omitempty"`
}

// TestMCPServer connects to a configured server and counts its tools and
// the output schemas they declare; a server it cannot reach is a test
// that failed, with why. A name not configured is the error, with a test
// of that name that is not OK.
func (w *Workspace) TestMCPServer(ctx context.Context, name string) (MCPTest, error) {
	if err := w.knownServer(name); err != nil {
		return MCPTest{Server: name}, err
	}
	ctx, cancel := context.WithTimeout(ctx, serverConnectTimeout)
	defer cancel()
	list, err := w.ServerTools(ctx, name)
	test := MCPTest{Server: name, Transport: w.cfg.MCP[name].Transport(), OK: err == nil}
	if err != nil {
		why := w.DisplayText(err.Error())
		test.Error = &why
		return test, nil
	}
	test.Tools = len(list)
	for _, t := range list {
		if t.OutputSchema != nil {
			test.WithOutputSchema++
		}
	}
	test.Warnings, _ = w.toolRuntime().Unmatched(ctx, name)
	return test, nil
}

// MCPTools connects to one configured server and lists its tools.
func (w *Workspace) MCPTools(ctx context.Context, name string) ([]plans.ToolInfo, error) {
	if err := w.knownServer(name); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, serverConnectTimeout)
	defer cancel()
	list, err := w.ServerTools(ctx, name)
	if err != nil {
		return nil, errors.New(w.DisplayText(err.Error()))
	}
	return list, nil
}

// knownServer is nil for a configured server, and for another name the
// configuration's error with the closest configured name.
func (w *Workspace) knownServer(name string) error {
	if _, ok := w.cfg.MCP[name]; ok {
		return nil
	}
	_, err := w.cfg.MCPServer(name)
	return fmt.Errorf("%w%s", err, suggest.DidYouMean(name, w.cfg.MCPServerNames()))
}
