package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/stepwise-dev/stepwise/debugger/workspace"
	"github.com/stepwise-dev/stepwise/plans"
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
			ws, err := openProject(s, jsonFlag(listJSON, jsonObject))
			if err != nil {
				return err
			}
			defer ws.Close()
			servers := ws.MCPServers()
			env := mcpListJSON{Servers: servers, Count: len(servers)}
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
			ws, err := openProject(s, jsonFlag(testJSON, jsonObject))
			if err != nil {
				return err
			}
			defer ws.Close()
			name := args[0]
			env, err := ws.TestMCPServer(cmd.Context(), name)
			if err != nil {
				// A name not configured is a test that failed too, and a
				// script reading the result gets one saying why.
				msg := err.Error()
				env.Error = &msg
			}
			if !env.OK {
				if testJSON {
					if werr := writeJSON(s.out, env); werr != nil {
						return werr
					}
				}
				return &exitCode{code: exitFailure, msg: *env.Error}
			}
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
			ws, err := openProject(s, jsonFlag(toolsJSON, jsonObject))
			if err != nil {
				return err
			}
			defer ws.Close()
			note := ""
			if len(ws.Servers()) == 0 {
				note = noServersNote
			}
			var list []plans.ToolInfo
			var skipped []workspace.Skipped
			if len(args) == 1 {
				if list, err = ws.MCPTools(cmd.Context(), args[0]); err != nil {
					if toolsJSON {
						// A script gets the listing on this path too: the
						// server skipped, with why, as the listing of
						// every server skips one it cannot list.
						env := toolListing(nil, []workspace.Skipped{{Server: args[0], Reason: err.Error()}}, ws)
						env.Note = note
						if werr := writeJSON(s.out, env); werr != nil {
							return werr
						}
					}
					return &exitCode{code: exitFailure, msg: err.Error()}
				}
			} else {
				list, skipped = ws.EveryServerTools(cmd.Context())
				reportSkippedServers(s.err, skipped)
			}
			if toolsJSON {
				env := toolListing(list, skipped, ws)
				env.Note = note
				if err := writeJSON(s.out, env); err != nil {
					return err
				}
			} else {
				if note != "" {
					fmt.Fprintln(s.err, note)
				}
				printToolList(s.out, list, ws, true)
			}
			// A listing that left a server out is not the one asked for,
			// as mcp tools NAME of that server is not: a script learns it
			// from the exit, whatever it makes of the tools listed.
			if len(skipped) > 0 {
				return &exitCode{code: exitFailure, msg: fmt.Sprintf("%d of %s could not be listed", len(skipped), countNoun(len(ws.Servers()), "MCP server", "MCP servers"))}
			}
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
	Servers []workspace.MCPServer `json:"servers"`
	Count   int                   `json:"count"`
	Note    string                `json:"note,omitempty"`
}

// printServerList prints one line per server: its name, transport and how
// it is reached, and why it cannot be used when it cannot.
func printServerList(w io.Writer, servers []workspace.MCPServer) {
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

// reportSkippedServers notes on stderr each server a listing left out.
func reportSkippedServers(w io.Writer, skipped []workspace.Skipped) {
	for _, sk := range skipped {
		if sk.Server != "" {
			fmt.Fprintf(w, "skipped MCP server %s: %s\n", sk.Server, sk.Reason)
		}
	}
}
