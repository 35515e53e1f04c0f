package main

import (
	"github.com/spf13/cobra"

	"github.com/stepwise-dev/stepwise/plans/examples"
)

// newDemoMCPCommand serves the demo project's issue tracker as an MCP server
// over stdio. The demo's config starts it as [mcp.tracker]; it is hidden
// because nobody types it.
func newDemoMCPCommand() *cobra.Command {
	return &cobra.Command{
		Use:    "__demo-mcp",
		Short:  "Serve the demo project's issue tracker over MCP (stdio)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return examples.ServeTracker(cmd.Context())
		},
	}
}
