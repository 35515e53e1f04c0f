package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/stepwise-dev/stepwise/engine/config"
	"github.com/stepwise-dev/stepwise/plans"
)

// fileSchemas are the JSON Schemas stepwise schema prints, by the kind of
// file they describe.
var fileSchemas = map[string]func() map[string]any{
	"plan":   plans.PlanJSONSchema,
	"tool":   plans.ToolFileJSONSchema,
	"config": config.JSONSchema,
}

func newSchemaCommand(s *streams) *cobra.Command {
	return &cobra.Command{
		Use:   "schema plan|tool|config",
		Short: "Print the JSON Schema of a plan file, a tool file or config.toml, for editors",
		Long: "Print the JSON Schema (draft 2020-12) of a plan file, a user tool file or config.toml, made\n" +
			"from the definitions the loaders check files against, so that an editor completes and checks\n" +
			"the file while it is typed: yaml-language-server for plans and tools, Taplo for config.toml.\n" +
			"The schema checks a file's shape; stepwise validate checks the rest (templates, references,\n" +
			"the catalog). The README shows the editors' settings.",
		Args: exactArgs(1, "one kind of file: plan, tool or config"),
		RunE: func(cmd *cobra.Command, args []string) error {
			schema, ok := fileSchemas[args[0]]
			if !ok {
				return usageError{fmt.Errorf("no schema of '%s': the kinds are plan, tool and config", args[0])}
			}
			b, err := json.MarshalIndent(schema(), "", "  ")
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(s.out, "%s\n", b)
			return err
		},
	}
}
