package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/stepwise-dev/stepwise/debugger/workspace"
)

func newModelsCommand(s *streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "models",
		Short: "List the configured models and test that one answers",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return usageError{fmt.Errorf("models needs a subcommand: list or test [ROLE|NAME]")}
		},
	}
	var listJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List the model roles and named models, and what serves each",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ws, err := openProject(s, jsonFlag(listJSON, jsonObject))
			if err != nil {
				return err
			}
			defer ws.Close()
			models, err := ws.Models()
			if err != nil {
				return &exitCode{code: exitFailure, msg: err.Error()}
			}
			env := modelListJSON{Models: models, Count: len(models)}
			if env.Count == 0 {
				env.Note = noModelsNote
			}
			if listJSON {
				return writeJSON(s.out, env)
			}
			if env.Note != "" {
				fmt.Fprintln(s.err, env.Note)
			}
			printModelList(s.out, env.Models)
			return nil
		},
	}
	list.Flags().BoolVar(&listJSON, "json", false, "print the {models, count} listing envelope")

	var testJSON bool
	test := &cobra.Command{
		Use:   "test [ROLE|NAME]",
		Short: "Make one small call to a model (default: the chat role) and say what works",
		Long: "Make one small call through the configured provider, asking for a tiny JSON answer with strict\n" +
			"output, and say whether the key, the endpoint and the model work, whether strict output was\n" +
			"sent, whether thinking came back, and how the provider caches prompts. It costs one call.",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageError{fmt.Errorf("%s takes at most one ROLE or NAME; see stepwise models test --help", cmd.CommandPath())}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ws, err := openProject(s, jsonFlag(testJSON, jsonObject))
			if err != nil {
				return err
			}
			defer ws.Close()
			name := ""
			if len(args) == 1 {
				name = args[0]
			}
			env, err := ws.TestModel(cmd.Context(), name)
			if err != nil {
				msg := err.Error()
				if testJSON {
					// A script reading the envelope gets one on this path
					// too, saying why nothing was called.
					env.Error = &msg
					if err := writeJSON(s.out, env); err != nil {
						return err
					}
				}
				return &exitCode{code: exitFailure, msg: msg}
			}
			if testJSON {
				if err := writeJSON(s.out, env); err != nil {
					return err
				}
			} else {
				printModelTest(s.err, env)
			}
			if !env.OK {
				return &exitCode{code: exitFailure, msg: fmt.Sprintf("%s: %s/%s does not work", env.Name, env.Provider, env.Model)}
			}
			return nil
		},
	}
	test.Flags().BoolVar(&testJSON, "json", false, "print the result as a JSON object")
	cmd.AddCommand(list, test)
	return cmd
}

// printModelTest says what models test found, one finding a line.
func printModelTest(w io.Writer, env workspace.ModelTest) {
	fmt.Fprintf(w, "%s (%s): %s\n", env.Name, env.Entry, describeCandidate(env.Candidate))
	for _, f := range env.Failovers {
		fmt.Fprintf(w, "  %s failed, fell over to %s: %s\n", f.From, f.To, f.Error)
	}
	if env.Error != nil {
		fmt.Fprintf(w, "  failed after %dms: %s\n", env.ElapsedMS, *env.Error)
		return
	}
	if env.Script != "" {
		fmt.Fprintf(w, "  scripted: answers from %s, which loads; there is no key or endpoint to test\n", env.Script)
		return
	}
	verdict := "key, endpoint and model work"
	if !env.OK {
		verdict = "the entry's own model did not answer; a fallback did"
	}
	fmt.Fprintf(w, "  answered by %s in %dms: %s\n", env.AnsweredBy, env.ElapsedMS, verdict)
	switch st := env.Strict; {
	case st.Sent:
		fmt.Fprintln(w, "  strict output: sent")
	default:
		fmt.Fprintf(w, "  strict output: not sent (%s); answers are validated after the fact\n", st.DowngradeReason)
	}
	switch th := env.Thinking; {
	case th.Configured == nil && th.Shown:
		fmt.Fprintln(w, "  thinking: not configured, but the reply showed some")
	case th.Configured == nil:
		fmt.Fprintln(w, "  thinking: not configured")
	case th.Shown:
		fmt.Fprintln(w, "  thinking: configured, and the reply showed it")
	default:
		fmt.Fprintln(w, "  thinking: configured, but this reply showed none (a model may not think about a question this small)")
	}
	if env.Caching != "" {
		fmt.Fprintf(w, "  caching: %s\n", env.Caching)
	}
}

// noModelsNote is why a model listing is empty when it is.
const noModelsNote = `no models are configured; add a [providers.NAME] section and [models] default = { provider = "NAME", model = "..." } to the project's config.toml, or run plans with --script FILE`

type modelListJSON struct {
	Models []workspace.Model `json:"models"`
	Count  int               `json:"count"`
	Note   string            `json:"note,omitempty"`
}

// printModelList prints one line per name: what serves it, then its
// settings and fallbacks indented below.
func printModelList(w io.Writer, models []workspace.Model) {
	for _, m := range models {
		fmt.Fprintf(w, "%s (%s, %s): %s\n", m.Name, m.Kind, m.Entry, describeCandidate(m.Candidate))
		if m.Description != "" {
			fmt.Fprintf(w, "  %s\n", m.Description)
		}
		if m.Unusable != nil {
			fmt.Fprintf(w, "  cannot be called: %s\n", *m.Unusable)
		}
		for i, f := range m.Fallbacks {
			fmt.Fprintf(w, "  fallback %d: %s\n", i+1, describeCandidate(f))
			if f.Unusable != nil {
				fmt.Fprintf(w, "    cannot be called: %s\n", *f.Unusable)
			}
		}
	}
}

// describeCandidate is a candidate on one line: provider/model, type,
// where it is reached and its settings.
func describeCandidate(c workspace.Candidate) string {
	parts := []string{string(c.Type)}
	if c.Type == "" {
		parts[0] = "not configured"
	}
	if c.BaseURL != "" {
		parts = append(parts, c.BaseURL)
	}
	if c.MaxTokens != 0 {
		parts = append(parts, fmt.Sprintf("max_tokens %d", c.MaxTokens))
	}
	if c.Temperature != nil {
		parts = append(parts, fmt.Sprintf("temperature %g", *c.Temperature))
	}
	switch t := c.Thinking; {
	case t == nil:
	case t.Adaptive():
		parts = append(parts, "thinking adaptive")
	default:
		parts = append(parts, fmt.Sprintf("thinking %d tokens", t.BudgetTokens))
	}
	if c.Effort != "" {
		parts = append(parts, "effort "+c.Effort)
	}
	return fmt.Sprintf("%s/%s [%s]", c.Provider, c.Model, strings.Join(parts, ", "))
}
