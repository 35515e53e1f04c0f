package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/stepwise-dev/stepwise/engine/config"
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

func newMCPCommand(s *streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "List, test and explore the configured MCP servers",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return usageError{fmt.Errorf("mcp needs a subcommand: list, test NAME or tools [NAME]")}
		},
	}
	var listJSON, testJSON, toolsJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List the configured MCP servers and how each is reached",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			proj, err := openProject("", s.err)
			if err != nil {
				return &exitCode{code: exitFailure, msg: err.Error()}
			}
			env := mcpListJSON{Servers: []mcpServerJSON{}}
			for _, name := range proj.cfg.MCPServerNames() {
				srv := proj.cfg.MCP[name]
				args := make([]string, len(srv.Args))
				for i, a := range srv.Args {
					args[i] = proj.cfg.Redact(a)
				}
				entry := mcpServerJSON{Name: name, Transport: srv.Transport(), Command: srv.Command, Args: args, URL: proj.cfg.Redact(srv.URL),
					IncludeTools: orEmpty(srv.IncludeTools), ExcludeTools: orEmpty(srv.ExcludeTools)}
				if _, err := proj.cfg.MCPServer(name); err != nil {
					why := proj.displayText(err.Error())
					entry.Unusable = &why
				}
				env.Servers = append(env.Servers, entry)
			}
			env.Count = len(env.Servers)
			if env.Count == 0 {
				env.Note = noServersNote
			}
			if listJSON {
				return writeJSON(s.out, env)
			}
			if env.Note != "" {
				fmt.Fprintln(s.err, env.Note)
			}
			printServerList(s.out, env.Servers)
			return nil
		},
	}
	list.Flags().BoolVar(&listJSON, "json", false, "print the {servers, count} listing envelope")

	test := &cobra.Command{
		Use:   "test NAME",
		Short: "Connect to a server and count its tools and declared output schemas",
		Args:  exactArgs(1, "one server NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			proj, err := openProject("", s.err)
			if err != nil {
				return &exitCode{code: exitFailure, msg: err.Error()}
			}
			name := args[0]
			srv, err := knownServer(proj, name)
			if err != nil {
				return err
			}
			rt := tools.NewRuntime(proj.cfg, proj.catalog)
			defer rt.Close()
			ctx, cancel := context.WithTimeout(cmd.Context(), serverConnectTimeout)
			defer cancel()
			list, err := rt.ServerTools(ctx, name)
			env := mcpTestJSON{Server: name, Transport: srv.Transport(), OK: err == nil}
			if err != nil {
				why := proj.displayText(err.Error())
				env.Error = &why
				if testJSON {
					if werr := writeJSON(s.out, env); werr != nil {
						return werr
					}
				}
				return &exitCode{code: exitFailure, msg: why}
			}
			env.Tools = len(list)
			for _, t := range list {
				if t.OutputSchema != nil {
					env.WithOutputSchema++
				}
			}
			env.Warnings, _ = rt.Unmatched(ctx, name)
			if testJSON {
				return writeJSON(s.out, env)
			}
			for _, w := range env.Warnings {
				fmt.Fprintln(s.err, "warning:", w)
			}
			verb := "declare"
			if env.WithOutputSchema == 1 {
				verb = "declares"
			}
			fmt.Fprintf(s.err, "%s: connected over %s; %s, %d %s an output schema\n", name, env.Transport, countNoun(env.Tools, "tool", "tools"), env.WithOutputSchema, verb)
			return nil
		},
	}
	test.Flags().BoolVar(&testJSON, "json", false, "print the result as a JSON object")

	toolsCmd := &cobra.Command{
		Use:   "tools [NAME]",
		Short: "List the tools of every server, or of one, grouped by server",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageError{fmt.Errorf("%s takes at most one server NAME; see stepwise mcp tools --help", cmd.CommandPath())}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			proj, err := openProject("", s.err)
			if err != nil {
				return &exitCode{code: exitFailure, msg: err.Error()}
			}
			rt := tools.NewRuntime(proj.cfg, proj.catalog)
			defer rt.Close()
			var list []plans.ToolInfo
			var skipped []skippedJSON
			if len(args) == 1 {
				if _, err := knownServer(proj, args[0]); err != nil {
					return err
				}
				ctx, cancel := context.WithTimeout(cmd.Context(), serverConnectTimeout)
				defer cancel()
				if list, err = rt.ServerTools(ctx, args[0]); err != nil {
					return &exitCode{code: exitFailure, msg: proj.displayText(err.Error())}
				}
			} else {
				list, skipped = serverTools(cmd.Context(), rt, proj)
				reportSkippedServers(s.err, skipped)
			}
			note := ""
			if len(proj.cfg.MCPServerNames()) == 0 {
				note = noServersNote
			}
			if toolsJSON {
				env := toolListing(list, skipped, proj)
				env.Note = note
				return writeJSON(s.out, env)
			}
			if note != "" {
				fmt.Fprintln(s.err, note)
			}
			printToolList(s.out, list, proj, true)
			return nil
		},
	}
	toolsCmd.Flags().BoolVar(&toolsJSON, "json", false, "print the {tools, count, sources} listing envelope")
	cmd.AddCommand(list, test, toolsCmd)
	return cmd
}

// noServersNote is why an MCP listing is empty when it is.
const noServersNote = "no MCP servers are configured; add an [mcp.NAME] section with a command or a url to the project's config.toml"

type mcpListJSON struct {
	Servers []mcpServerJSON `json:"servers"`
	Count   int             `json:"count"`
	Note    string          `json:"note,omitempty"`
}

// mcpServerJSON is one configured server. Env and headers are left out:
// they are where secrets live.
type mcpServerJSON struct {
	Name         string   `json:"name"`
	Transport    string   `json:"transport"`
	Command      string   `json:"command,omitempty"`
	Args         []string `json:"args,omitempty"`
	URL          string   `json:"url,omitempty"`
	IncludeTools []string `json:"include_tools"`
	ExcludeTools []string `json:"exclude_tools"`
	Unusable     *string  `json:"unusable"` // why it cannot connect; null when it can try
}

type mcpTestJSON struct {
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

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// knownServer returns a configured server's settings, or the exit-1 error
// for a name that is not configured, with the closest configured name.
func knownServer(proj *project, name string) (config.MCPServer, error) {
	srv, ok := proj.cfg.MCP[name]
	if !ok {
		_, err := proj.cfg.MCPServer(name)
		return srv, &exitCode{code: exitFailure, msg: err.Error() + suggest.DidYouMean(name, proj.cfg.MCPServerNames())}
	}
	return srv, nil
}

// printServerList prints one line per server: its name, transport and how
// it is reached, and why it cannot be used when it cannot.
func printServerList(w io.Writer, servers []mcpServerJSON) {
	for _, srv := range servers {
		how := srv.URL
		if srv.Transport == "stdio" {
			how = strings.Join(append([]string{srv.Command}, srv.Args...), " ")
		}
		fmt.Fprintf(w, "%s (%s) %s\n", srv.Name, srv.Transport, how)
		if len(srv.IncludeTools) > 0 {
			fmt.Fprintf(w, "  include_tools: %s\n", strings.Join(srv.IncludeTools, ", "))
		}
		if len(srv.ExcludeTools) > 0 {
			fmt.Fprintf(w, "  exclude_tools: %s\n", strings.Join(srv.ExcludeTools, ", "))
		}
		if srv.Unusable != nil {
			fmt.Fprintf(w, "  cannot connect: %s\n", *srv.Unusable)
		}
	}
}

// serverTools connects to every configured server at once, each within
// listConnectTimeout, and returns their tools in server order; a server
// that cannot be reached is skipped with its reason.
func serverTools(ctx context.Context, rt *tools.Runtime, proj *project) ([]plans.ToolInfo, []skippedJSON) {
	names := proj.cfg.MCPServerNames()
	lists := make([][]plans.ToolInfo, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, listConnectTimeout)
			defer cancel()
			lists[i], errs[i] = rt.ServerTools(ctx, name)
		})
	}
	wg.Wait()
	var all []plans.ToolInfo
	var skipped []skippedJSON
	for i, name := range names {
		if errs[i] != nil {
			skipped = append(skipped, skippedJSON{Server: name, Reason: proj.displayText(errs[i].Error())})
			continue
		}
		all = append(all, lists[i]...)
	}
	return all, skipped
}

// reportSkippedServers notes on stderr each server a listing left out.
func reportSkippedServers(w io.Writer, skipped []skippedJSON) {
	for _, sk := range skipped {
		if sk.Server != "" {
			fmt.Fprintf(w, "skipped MCP server %s: %s\n", sk.Server, sk.Reason)
		}
	}
}
