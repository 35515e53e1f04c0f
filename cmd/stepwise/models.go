package main

import (
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/stepwise-dev/stepwise/engine/config"
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
			proj, err := openProject("", s.err)
			if err != nil {
				return &exitCode{code: exitFailure, msg: err.Error()}
			}
			env := modelListJSON{Models: []modelJSON{}}
			for _, name := range proj.cfg.ModelNames() {
				ref, err := proj.cfg.ResolveModel(name)
				if err != nil {
					return &exitCode{code: exitFailure, msg: err.Error()}
				}
				env.Models = append(env.Models, modelEntry(proj, ref))
			}
			env.Count = len(env.Models)
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
	cmd.AddCommand(list)
	return cmd
}

// noModelsNote is why a model listing is empty when it is.
const noModelsNote = `no models are configured; add a [providers.NAME] section and [models] default = { provider = "NAME", model = "..." } to the project's config.toml, or run plans with --script FILE`

type modelListJSON struct {
	Models []modelJSON `json:"models"`
	Count  int         `json:"count"`
	Note   string      `json:"note,omitempty"`
}

// modelJSON is one name a plan may call a model by: a role or a named
// model, and the candidates that serve it. The provider's api_key is left
// out: it is a secret.
type modelJSON struct {
	Name string `json:"name"`
	// Kind is role or named.
	Kind string `json:"kind"`
	// Entry is the configuration key that answers, models.default for a
	// role that falls back to it.
	Entry       string `json:"entry"`
	Description string `json:"description,omitempty"`
	candidateJSON
	Fallbacks []candidateJSON `json:"fallbacks"`
}

// candidateJSON is a provider and model that may answer, with the
// settings it is called with.
type candidateJSON struct {
	Provider string `json:"provider"`
	// Type is the provider's type, empty when the provider is not
	// configured.
	Type config.ProviderType `json:"type"`
	// BaseURL is where the provider is reached, empty for its default
	// endpoint; any user:password part is left out.
	BaseURL string `json:"base_url"`
	Model   string `json:"model"`
	// MaxTokens is left out for provider types that do not send it.
	MaxTokens   int              `json:"max_tokens,omitempty"`
	Temperature *float64         `json:"temperature"`
	Thinking    *config.Thinking `json:"thinking"`
	Effort      string           `json:"effort,omitempty"`
	// Unusable says why the provider cannot be called (an unset
	// variable, say); null when it can.
	Unusable *string `json:"unusable"`
}

func modelEntry(proj *project, ref config.ModelRef) modelJSON {
	m := modelJSON{Name: ref.Name, Kind: "named", Entry: ref.Entry, Description: ref.Description, Fallbacks: []candidateJSON{}}
	if slices.Contains(config.Roles(), ref.Name) {
		m.Kind = "role"
	}
	m.candidateJSON = candidate(proj, ref.Provider, ref.Model, ref.MaxTokens, ref.Temperature, ref.Thinking, ref.Effort)
	for _, f := range ref.Fallbacks {
		m.Fallbacks = append(m.Fallbacks, candidate(proj, f.Provider, f.Model, f.MaxTokens, f.Temperature, f.Thinking, f.Effort))
	}
	return m
}

func candidate(proj *project, provider, model string, maxTokens int, temp *float64, thinking *config.Thinking, effort string) candidateJSON {
	c := candidateJSON{Provider: provider, Model: model, MaxTokens: maxTokens, Temperature: temp, Thinking: thinking, Effort: effort}
	p, err := proj.cfg.Provider(provider)
	if err != nil {
		why := proj.displayText(err.Error())
		c.Unusable = &why
	}
	c.Type = p.Type
	c.BaseURL = withoutUserinfo(p.BaseURL)
	if p.Type != config.ProviderAnthropic {
		c.MaxTokens = 0
	}
	return c
}

// withoutUserinfo drops the user:password part of a URL, where a gateway's
// credentials may sit.
func withoutUserinfo(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	u.User = nil
	return u.String()
}

// printModelList prints one line per name: what serves it, then its
// settings and fallbacks indented below.
func printModelList(w io.Writer, models []modelJSON) {
	for _, m := range models {
		fmt.Fprintf(w, "%s (%s, %s): %s\n", m.Name, m.Kind, m.Entry, describeCandidate(m.candidateJSON))
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
func describeCandidate(c candidateJSON) string {
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
