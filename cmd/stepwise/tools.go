package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/stepwise-dev/stepwise/engine/tools"
	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/plans/suggest"
)

func newToolsCommand(s *streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tools",
		Short: "List and show the tool catalog, control steps included",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return usageError{fmt.Errorf("tools needs a subcommand: list or show NAME")}
		},
	}
	var listJSON, showJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List every tool and control step a plan step may name",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			proj, err := openProject("", s.err)
			if err != nil {
				return &exitCode{code: exitFailure, msg: err.Error()}
			}
			rt := tools.NewRuntime(proj.cfg, proj.catalog)
			defer rt.Close()
			serverList, skippedServers := serverTools(cmd.Context(), rt, proj)
			listing := withServerTools(proj.catalog.Listing(), serverList)
			for _, sk := range proj.catalog.Skipped {
				fmt.Fprintf(s.err, "skipped %s: %s\n", proj.displayPath(sk.File), proj.displayText(sk.Reason))
			}
			reportSkippedServers(s.err, skippedServers)
			if listJSON {
				return writeJSON(s.out, toolListing(listing, append(skippedFiles(proj), skippedServers...), proj))
			}
			printToolList(s.out, listing, proj, false)
			return nil
		},
	}
	list.Flags().BoolVar(&listJSON, "json", false, "print the {tools, count, sources} listing envelope")
	show := &cobra.Command{
		Use:   "show NAME",
		Short: "Show one tool's description and schemas",
		Args:  exactArgs(1, "one tool NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			proj, err := openProject("", s.err)
			if err != nil {
				return &exitCode{code: exitFailure, msg: err.Error()}
			}
			t, ok := proj.catalog.Tool(args[0])
			if server, _, _ := strings.Cut(args[0], "__"); !ok && slices.Contains(proj.catalog.Servers(), server) {
				if t, err = serverTool(cmd.Context(), proj, server, args[0]); err != nil {
					return err
				}
				ok = true
			}
			if !ok {
				return &exitCode{code: exitFailure, msg: unknownToolMessage(proj, args[0])}
			}
			if showJSON {
				env := toolShowJSON{Name: t.Name, Source: t.Source, Description: t.Description, ReadOnly: t.ReadOnly,
					InputSchema: t.InputSchema, OutputSchema: t.OutputSchema, OutputExample: t.OutputExample}
				if t.Unusable != "" {
					why := proj.displayText(t.Unusable)
					env.Unusable = &why
				}
				return writeJSON(s.out, env)
			}
			printTool(s.out, t, proj)
			return nil
		},
	}
	show.Flags().BoolVar(&showJSON, "json", false, "print the tool as a JSON object")
	cmd.AddCommand(list, show)
	return cmd
}

type toolListJSON struct {
	Tools   []toolEntryJSON   `json:"tools"`
	Count   int               `json:"count"`
	Sources []sourceCountJSON `json:"sources"`
	Skipped []skippedJSON     `json:"skipped"`
	Note    string            `json:"note,omitempty"`
}

type toolEntryJSON struct {
	Name            string  `json:"name"`
	Source          string  `json:"source"`
	Description     string  `json:"description"`
	ReadOnly        *bool   `json:"readOnly"`
	HasOutputSchema bool    `json:"hasOutputSchema"`
	Unusable        *string `json:"unusable"` // why the tool cannot run here; null when it can
}

type sourceCountJSON struct {
	Source string `json:"source"`
	Count  int    `json:"count"`
}

// skippedJSON is a file or an MCP server that a listing left out, with why.
type skippedJSON struct {
	File   string `json:"file,omitempty"`
	Server string `json:"server,omitempty"`
	Reason string `json:"reason"`
}

type toolShowJSON struct {
	Name          string  `json:"name"`
	Source        string  `json:"source"`
	Description   string  `json:"description"`
	ReadOnly      *bool   `json:"readOnly"`
	InputSchema   any     `json:"inputSchema"`
	OutputSchema  any     `json:"outputSchema"`
	OutputExample any     `json:"outputExample"`
	Unusable      *string `json:"unusable"` // why the tool cannot run here; null when it can
}

func toolListing(list []plans.ToolInfo, skipped []skippedJSON, proj *project) toolListJSON {
	env := toolListJSON{Tools: []toolEntryJSON{}, Sources: []sourceCountJSON{}, Skipped: []skippedJSON{}}
	for _, t := range list {
		entry := toolEntryJSON{Name: t.Name, Source: t.Source, Description: t.Description, ReadOnly: t.ReadOnly, HasOutputSchema: t.OutputSchema != nil}
		if t.Unusable != "" {
			why := proj.displayText(t.Unusable)
			entry.Unusable = &why
		}
		env.Tools = append(env.Tools, entry)
		if n := len(env.Sources); n > 0 && env.Sources[n-1].Source == t.Source {
			env.Sources[n-1].Count++
		} else {
			env.Sources = append(env.Sources, sourceCountJSON{Source: t.Source, Count: 1})
		}
	}
	env.Skipped = append(env.Skipped, skipped...)
	env.Count = len(env.Tools)
	return env
}

// skippedFiles lists the files the catalog left out.
func skippedFiles(proj *project) []skippedJSON {
	var out []skippedJSON
	for _, sk := range proj.catalog.Skipped {
		out = append(out, skippedJSON{File: proj.displayPath(sk.File), Reason: proj.displayText(sk.Reason)})
	}
	return out
}

// withServerTools adds the MCP servers' tools to the catalog listing: the
// control steps stay first, and the tools follow by name, which keeps each
// source's tools together since every name starts with its namespace.
func withServerTools(listing, server []plans.ToolInfo) []plans.ToolInfo {
	control := len(tools.ControlTools())
	out := append(slices.Clone(listing), server...)
	sort.SliceStable(out[control:], func(i, j int) bool { return out[control+i].Name < out[control+j].Name })
	return out
}

// serverTool connects to one MCP server and returns one of its tools by
// catalog name.
func serverTool(ctx context.Context, proj *project, server, name string) (plans.ToolInfo, error) {
	rt := tools.NewRuntime(proj.cfg, proj.catalog)
	defer rt.Close()
	ctx, cancel := context.WithTimeout(ctx, serverConnectTimeout)
	defer cancel()
	list, err := rt.ServerTools(ctx, server)
	if err != nil {
		return plans.ToolInfo{}, &exitCode{code: exitFailure, msg: fmt.Sprintf("'%s' would be a tool of MCP server '%s', which cannot be reached: %s", name, server, proj.displayText(err.Error()))}
	}
	var names []string
	for _, t := range list {
		if t.Name == name {
			return t, nil
		}
		names = append(names, t.Name)
	}
	cfg, tool := proj.cfg.MCP[server], strings.TrimPrefix(name, server+"__")
	if slices.Contains(cfg.ExcludeTools, tool) || len(cfg.IncludeTools) > 0 && !slices.Contains(cfg.IncludeTools, tool) {
		return plans.ToolInfo{}, &exitCode{code: exitFailure, msg: fmt.Sprintf("[mcp.%s] leaves '%s' out (include_tools/exclude_tools)", server, tool)}
	}
	return plans.ToolInfo{}, &exitCode{code: exitFailure, msg: fmt.Sprintf("mcp server '%s' has no tool '%s' (stepwise mcp tools %s lists its tools)%s", server, name, server, suggest.DidYouMean(name, names))}
}

// printToolList prints one section per source: a header with the count,
// then each tool's name (marked read-only where it says so) over the first
// line of its description. bare leaves the namespace off the names, for a
// listing whose sections are all MCP servers.
func printToolList(w io.Writer, tools []plans.ToolInfo, proj *project, bare bool) {
	for i := 0; i < len(tools); {
		j := i
		for j < len(tools) && tools[j].Source == tools[i].Source {
			j++
		}
		fmt.Fprintf(w, "%s — %s\n", tools[i].Source, countNoun(j-i, "tool", "tools"))
		for _, t := range tools[i:j] {
			name := t.Name
			if bare {
				name = strings.TrimPrefix(name, t.Source+"__")
			}
			if t.ReadOnly != nil && *t.ReadOnly {
				name += " [read-only]"
			}
			if t.Unusable != "" {
				name += " [unusable]"
			}
			first, _, _ := strings.Cut(t.Description, "\n")
			if first == "" && t.Unusable != "" {
				first = "cannot run: " + proj.displayText(t.Unusable)
			}
			fmt.Fprintf(w, "  %s\n  %s\n", name, first)
		}
		i = j
	}
}

func printTool(w io.Writer, t plans.ToolInfo, proj *project) {
	source := t.Source
	if !strings.HasPrefix(source, "(") {
		source = "(" + source + ")"
	}
	fmt.Fprintf(w, "%s %s\n", t.Name, source)
	if t.File != "" {
		fmt.Fprintf(w, "defined in %s\n", proj.displayPath(t.File))
	}
	if t.Unusable != "" {
		fmt.Fprintf(w, "cannot run: %s\n", proj.displayText(t.Unusable))
	}
	fmt.Fprintf(w, "\n%s\n", t.Description)
	for _, s := range []struct {
		label string
		v     any
	}{{"input schema", t.InputSchema}, {"output schema", t.OutputSchema}, {"output example", t.OutputExample}} {
		if s.v == nil {
			continue
		}
		b, _ := json.MarshalIndent(s.v, "", "  ")
		fmt.Fprintf(w, "\n%s:\n%s\n", s.label, b)
	}
}

func countNoun(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// writeJSON writes v as indented JSON and a newline, with <, > and & as
// they are: what stepwise prints is read by people and programs, never put
// into HTML.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// writeJSONLine writes v as one line of JSON, the way writeJSON does.
func writeJSONLine(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// unknownToolMessage says that the catalog has no tool name, and what may
// have been meant: a tool of a pack that is not enabled, a close name, or a
// tool that name is the short form of (git_log for builtin__git_log).
func unknownToolMessage(proj *project, name string) string {
	msg := fmt.Sprintf("no tool named '%s'", name)
	if hint := proj.catalog.UnlistedToolHint(name); hint != "" {
		return msg + ": it " + hint
	}
	if !strings.Contains(name, "__") {
		for _, prefix := range []string{"builtin__", "user__", "plan__"} {
			if _, ok := proj.catalog.Tool(prefix + name); ok {
				return msg + "; did you mean '" + prefix + name + "'?"
			}
			if hint := proj.catalog.UnlistedToolHint(prefix + name); hint != "" {
				return msg + ": " + prefix + name + " " + hint
			}
		}
	}
	var names []string
	for _, t := range proj.catalog.Tools() {
		names = append(names, t.Name)
	}
	if hint := suggest.DidYouMean(name, names); hint != "" {
		return msg + hint
	}
	return msg + " (stepwise tools list shows the catalog)"
}
