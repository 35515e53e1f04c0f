package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

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
			proj, err := openProject("", s.err)
			if err != nil {
				return &exitCode{code: exitFailure, msg: err.Error()}
			}
			listing := proj.catalog.Listing()
			for _, sk := range proj.catalog.Skipped {
				fmt.Fprintf(s.err, "skipped %s: %s\n", proj.displayPath(sk.File), proj.displayText(sk.Reason))
			}
			note := ""
			if servers := proj.catalog.Servers(); len(servers) > 0 {
				note = fmt.Sprintf("not listed: the tools of MCP servers %s (listing them needs a connection)", strings.Join(servers, ", "))
			}
			if listJSON {
				env := toolListing(listing, proj)
				env.Note = note
				return writeJSON(s.out, env)
			}
			if note != "" {
				fmt.Fprintln(s.err, note)
			}
			printToolList(s.out, listing, proj)
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
				return &exitCode{code: exitFailure, msg: fmt.Sprintf("'%s' would be a tool of MCP server '%s', whose tools are known only once connected; stepwise does not connect to MCP servers yet", args[0], server)}
			}
			if !ok {
				return &exitCode{code: exitFailure, msg: fmt.Sprintf("no tool named '%s' (stepwise tools list shows the catalog)", args[0])}
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

type skippedJSON struct {
	File   string `json:"file"`
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

func toolListing(list []plans.ToolInfo, proj *project) toolListJSON {
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
	for _, sk := range proj.catalog.Skipped {
		env.Skipped = append(env.Skipped, skippedJSON{File: proj.displayPath(sk.File), Reason: proj.displayText(sk.Reason)})
	}
	env.Count = len(env.Tools)
	return env
}

// printToolList prints one section per source: a header with the count,
// then each tool's name (marked read-only where it says so) over the first
// line of its description.
func printToolList(w io.Writer, tools []plans.ToolInfo, proj *project) {
	for i := 0; i < len(tools); {
		j := i
		for j < len(tools) && tools[j].Source == tools[i].Source {
			j++
		}
		fmt.Fprintf(w, "%s — %s\n", tools[i].Source, countNoun(j-i, "tool", "tools"))
		for _, t := range tools[i:j] {
			name := t.Name
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
	fmt.Fprintf(w, "%s (%s)\n", t.Name, t.Source)
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

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
