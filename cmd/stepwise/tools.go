package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/stepwise-dev/stepwise/debugger/workspace"
	"github.com/stepwise-dev/stepwise/plans"
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
			ws, err := openProject(s, jsonFlag(listJSON, jsonObject))
			if err != nil {
				return err
			}
			defer ws.Close()
			listing, skippedServers := ws.AllTools(cmd.Context())
			skippedFiles := ws.SkippedFiles()
			for _, sk := range skippedFiles {
				fmt.Fprintf(s.err, "skipped %s: %s\n", sk.File, sk.Reason)
			}
			reportSkippedServers(s.err, skippedServers)
			if listJSON {
				return writeJSON(s.out, toolListing(listing, append(skippedFiles, skippedServers...), ws))
			}
			printToolList(s.out, listing, ws, false)
			return nil
		},
	}
	list.Flags().BoolVar(&listJSON, "json", false, "print the {tools, count, sources} listing envelope")
	show := &cobra.Command{
		Use:   "show NAME",
		Short: "Show one tool's description and schemas",
		Args:  exactArgs(1, "one tool NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ws, err := openProject(s, jsonFlag(showJSON, jsonObject))
			if err != nil {
				return err
			}
			defer ws.Close()
			t, err := ws.Tool(cmd.Context(), args[0])
			if err != nil {
				if showJSON {
					// A script gets the tool on this path too, as far
					// as its name says, with why it cannot run here.
					why := err.Error()
					if werr := writeJSON(s.out, toolShowJSON{Name: t.Name, Source: t.Source, Unusable: &why}); werr != nil {
						return werr
					}
				}
				return &exitCode{code: exitFailure, msg: err.Error()}
			}
			if showJSON {
				env := toolShowJSON{Name: t.Name, Source: t.Source, Description: t.Description, ReadOnly: t.ReadOnly,
					InputSchema: t.InputSchema, OutputSchema: t.OutputSchema, OutputExample: t.OutputExample}
				if t.Unusable != "" {
					why := ws.DisplayText(t.Unusable)
					env.Unusable = &why
				}
				return writeJSON(s.out, env)
			}
			printTool(s.out, t, ws)
			return nil
		},
	}
	show.Flags().BoolVar(&showJSON, "json", false, "print the tool as a JSON object")
	cmd.AddCommand(list, show)
	return cmd
}

type toolListJSON struct {
	Tools   []toolEntryJSON     `json:"tools"`
	Count   int                 `json:"count"`
	Sources []sourceCountJSON   `json:"sources"`
	Skipped []workspace.Skipped `json:"skipped"`
	Note    string              `json:"note,omitempty"`
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

func toolListing(list []plans.ToolInfo, skipped []workspace.Skipped, ws *workspace.Workspace) toolListJSON {
	env := toolListJSON{Tools: []toolEntryJSON{}, Sources: []sourceCountJSON{}, Skipped: []workspace.Skipped{}}
	for _, t := range list {
		entry := toolEntryJSON{Name: t.Name, Source: t.Source, Description: t.Description, ReadOnly: t.ReadOnly, HasOutputSchema: t.OutputSchema != nil}
		if t.Unusable != "" {
			why := ws.DisplayText(t.Unusable)
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

// printToolList prints one section per source: a header with the count,
// then each tool's name (marked read-only where it says so) over the first
// line of its description. bare leaves the namespace off the names, for a
// listing whose sections are all MCP servers.
func printToolList(w io.Writer, tools []plans.ToolInfo, ws *workspace.Workspace, bare bool) {
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
				first = "cannot run: " + ws.DisplayText(t.Unusable)
			}
			fmt.Fprintf(w, "  %s\n  %s\n", name, first)
		}
		i = j
	}
}

func printTool(w io.Writer, t plans.ToolInfo, ws *workspace.Workspace) {
	source := t.Source
	if !strings.HasPrefix(source, "(") {
		source = "(" + source + ")"
	}
	fmt.Fprintf(w, "%s %s\n", t.Name, source)
	if t.File != "" {
		fmt.Fprintf(w, "defined in %s\n", ws.DisplayPath(t.File))
	}
	if t.Unusable != "" {
		fmt.Fprintf(w, "cannot run: %s\n", ws.DisplayText(t.Unusable))
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
