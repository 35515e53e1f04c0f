package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/stepwise-dev/stepwise/engine/chat"
	"github.com/stepwise-dev/stepwise/engine/config"
	"github.com/stepwise-dev/stepwise/engine/model"
	"github.com/stepwise-dev/stepwise/plans/suggest"
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
			proj, err := openProject("", s.err)
			if err != nil {
				return &exitCode{code: exitFailure, msg: err.Error()}
			}
			name := config.RoleChat
			if len(args) == 1 {
				name = args[0]
			}
			ref, err := proj.cfg.ResolveModel(name)
			if err != nil {
				msg := err.Error() + suggest.DidYouMean(name, proj.cfg.ModelNames())
				if testJSON {
					// A script reading the envelope gets one on this path
					// too, saying why nothing was called.
					if err := writeJSON(s.out, modelTestJSON{Name: name, Error: &msg, Failovers: []failoverJSON{}}); err != nil {
						return err
					}
				}
				return &exitCode{code: exitFailure, msg: msg}
			}
			env := testModel(cmd.Context(), proj, ref)
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

// modelTestTimeout bounds the one call of stepwise models test.
const modelTestTimeout = 2 * time.Minute

// checkSchema is the answer models test asks for: small, and usable for
// strict output under every provider's rules, so that whether strict was
// sent says something about the provider rather than the schema.
var checkSchema = map[string]any{
	"type": "object", "additionalProperties": false, "required": []any{"ok"},
	"properties": map[string]any{"ok": map[string]any{"type": "boolean"}},
}

type modelTestJSON struct {
	Name  string `json:"name"`
	Entry string `json:"entry"`
	candidateJSON
	// OK says that the entry's own provider and model answered.
	OK bool `json:"ok"`
	// AnsweredBy is provider/model of the reply; a fallback when the
	// primary failed. Empty when nothing answered.
	AnsweredBy string         `json:"answered_by"`
	Error      *string        `json:"error"`
	Failovers  []failoverJSON `json:"failovers"`
	ElapsedMS  int64          `json:"elapsed_ms"`
	Answer     string         `json:"answer,omitempty"`
	Usage      *chat.Usage    `json:"usage"`
	Strict     *strictJSON    `json:"strict"`
	Thinking   *thinkingJSON  `json:"thinking"`
	Caching    string         `json:"caching"`
	// Script is the replies file of a script provider, which is checked
	// by loading it rather than by a call.
	Script string `json:"script,omitempty"`
}

type failoverJSON struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Error string `json:"error"`
}

// strictJSON is the run record's account of strict output for the call.
type strictJSON struct {
	Requested       bool   `json:"requested"`
	Sent            bool   `json:"sent"`
	DowngradeReason string `json:"downgrade_reason,omitempty"`
}

type thinkingJSON struct {
	// Configured is the entry's thinking, null when it is off.
	Configured *config.Thinking `json:"configured"`
	// Shown says whether the reply came with thinking.
	Shown bool `json:"shown"`
}

// cachingByType says how each provider type caches prompts. A check of
// a few tokens is below every provider's cacheable minimum, so the call
// itself cannot show a cache hit.
var cachingByType = map[config.ProviderType]string{
	config.ProviderAnthropic:    "cache breakpoints are sent on the system prompt and each round's history; hits show as cache_read_input_tokens once a prefix passes the model's minimum",
	config.ProviderOpenAI:       "automatic for prompts past the API's minimum; hits show as cache_read_input_tokens",
	config.ProviderOpenAICompat: "up to the server; hits show as cache_read_input_tokens when it reports cached tokens",
	config.ProviderScript:       "none: scripted replies",
}

// testModel makes the one call of stepwise models test through the
// configured models, as a run would, and reports on it.
func testModel(ctx context.Context, proj *project, ref config.ModelRef) modelTestJSON {
	env := modelTestJSON{Name: ref.Name, Entry: ref.Entry, Failovers: []failoverJSON{},
		candidateJSON: candidate(proj, ref.Provider, ref.Model, ref.MaxTokens, ref.Temperature, ref.Thinking, ref.Effort)}
	env.Caching = cachingByType[env.Type]
	if env.Type == config.ProviderScript {
		// A script reaches no network, and a call would take a reply
		// that a run of the project is owed: its check is that its
		// replies file loads.
		pc, err := proj.cfg.Provider(ref.Provider)
		if err == nil {
			env.Script = proj.displayText(pc.File)
			_, err = model.LoadScript(pc.File)
		}
		if err != nil {
			why := proj.displayText(err.Error())
			env.Error = &why
			return env
		}
		env.OK = true
		return env
	}
	models := model.New(proj.cfg, model.Options{OnFailover: func(from, to string, err error) {
		env.Failovers = append(env.Failovers, failoverJSON{From: from, To: to, Error: proj.displayText(err.Error())})
	}})
	ctx, cancel := context.WithTimeout(ctx, modelTestTimeout)
	defer cancel()
	req := chat.Request{Step: "models test", Format: &chat.ResponseFormat{Name: "check", Schema: checkSchema, Strict: true},
		Messages: []chat.Message{
			chat.TextMessage(chat.RoleSystem, `You check that a connection works. Answer with the JSON object {"ok": true} and nothing else.`),
			chat.TextMessage(chat.RoleUser, "Is this connection working?"),
		}}
	start := time.Now()
	reply, err := models.Call(ctx, ref.Name, req, nil)
	env.ElapsedMS = time.Since(start).Milliseconds()
	if err != nil {
		why := proj.displayText(err.Error())
		env.Error = &why
		return env
	}
	env.AnsweredBy = reply.Provider + "/" + reply.Model
	env.OK = reply.Provider == ref.Provider && reply.Model == ref.Model
	env.Answer = reply.Text
	env.Usage = &reply.Usage
	env.Strict = &strictJSON{Requested: reply.StrictRequested, Sent: reply.StrictSent, DowngradeReason: reply.DowngradeReason}
	env.Thinking = &thinkingJSON{Configured: ref.Thinking, Shown: len(reply.Thinking) > 0}
	return env
}

// printModelTest says what models test found, one finding a line.
func printModelTest(w io.Writer, env modelTestJSON) {
	fmt.Fprintf(w, "%s (%s): %s\n", env.Name, env.Entry, describeCandidate(env.candidateJSON))
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
		// Only anthropic providers send these; the configuration warns
		// about them elsewhere, and a listing must not suggest they apply.
		c.MaxTokens, c.Thinking, c.Effort = 0, nil, ""
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
