package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/stepwise-dev/stepwise/plans/examples"
)

// newDemoCommand writes the embedded demo project to a directory of the
// user's, to keep and edit: `stepwise` alone opens the copy it keeps under
// the data directory.
func newDemoCommand(s *streams) *cobra.Command {
	return &cobra.Command{
		Use:   "demo DIR",
		Short: "Write the embedded demo project to DIR to keep and edit it",
		Args:  exactArgs(1, "one DIR"),
		RunE: func(cmd *cobra.Command, args []string) error {
			exe, err := os.Executable()
			if err != nil {
				return err
			}
			// The demo's config starts this executable as its MCP server; a
			// binary that `go run` built is deleted when it exits.
			if strings.Contains(exe, string(filepath.Separator)+"go-build") {
				return &exitCode{code: exitFailure, msg: "this stepwise was built by `go run` and disappears when it exits, so the demo could not start its MCP server later; build it first (go build ./cmd/stepwise) and run ./stepwise demo " + args[0]}
			}
			if err := os.MkdirAll(args[0], 0o755); err != nil {
				return err
			}
			if err := examples.WriteProject(args[0], exe); err != nil {
				return err
			}
			fmt.Fprintf(s.err, "wrote the demo project to %s; open it with: stepwise %s\n", args[0], workbenchArg(args[0]))
			return nil
		},
	}
}

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

// workbenchArg is dir as the workbench's argument: a bare name may be a
// command's ("demo"), and ./ makes it a directory.
func workbenchArg(dir string) string {
	if strings.ContainsRune(dir, filepath.Separator) {
		return dir
	}
	return "." + string(filepath.Separator) + dir
}
