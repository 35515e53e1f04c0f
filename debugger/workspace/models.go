package workspace

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"time"

	"github.com/stepwise-dev/stepwise/engine/chat"
	"github.com/stepwise-dev/stepwise/engine/config"
	"github.com/stepwise-dev/stepwise/engine/model"
	"github.com/stepwise-dev/stepwise/plans/suggest"
)

// Models lists the names a plan may call a model by, roles first, each
// with the candidates that serve it.
func (w *Workspace) Models() ([]Model, error) {
	out := []Model{}
	for _, name := range w.cfg.ModelNames() {
		ref, err := w.cfg.ResolveModel(name)
		if err != nil {
			return nil, err
		}
		out = append(out, w.modelEntry(ref))
	}
	return out, nil
}

// TestModel makes one small call to the model a role or a name (the chat
// role when empty) resolves to, asking for a tiny JSON answer with strict
// output, as a run would, and reports what works; a script provider's
// check is that its replies file loads. A name the configuration does not
// know is the error, with the closest known one, and a test of that name
// that called nothing.
func (w *Workspace) TestModel(ctx context.Context, name string) (ModelTest, error) {
	if name == "" {
		name = config.RoleChat
	}
	ref, err := w.cfg.ResolveModel(name)
	if err != nil {
		return ModelTest{Name: name, Failovers: []Failover{}}, fmt.Errorf("%w%s", err, suggest.DidYouMean(name, w.cfg.ModelNames()))
	}
	return w.testModel(ctx, ref), nil
}

// modelTestTimeout bounds the one call of TestModel.
const modelTestTimeout = 2 * time.Minute

// checkSchema is the answer TestModel asks for: small, and usable for
// strict output under every provider's rules, so that whether strict was
// sent says something about the provider rather than the schema.
var checkSchema = map[string]any{
	"type": "object", "additionalProperties": false, "required": []any{"ok"},
	"properties": map[string]any{"ok": map[string]any{"type": "boolean"}},
}

// ModelTest is what TestModel found.
type ModelTest struct {
	Name  string `json:"name"`
	Entry string `json:"entry"`
	Candidate
	// OK says that the entry's own provider and model answered.
	OK bool `json:"ok"`
	// AnsweredBy is provider/model of the reply; a fallback when the
	// primary failed. Empty when nothing answered.
	AnsweredBy string         `json:"answered_by"`
	Error      *string        `json:"error"`
	Failovers  []Failover     `json:"failovers"`
	ElapsedMS  int64          `json:"elapsed_ms"`
	Answer     string         `json:"answer,omitempty"`
	Usage      *chat.Usage    `json:"usage"`
	Strict     *StrictOutput  `json:"strict"`
	Thinking   *ThinkingCheck `json:"thinking"`
	Caching    string         `json:"caching"`
	// Script is the replies file of a script provider, which is checked
	// by loading it rather than by a call.
	Script string `json:"script,omitempty"`
}

// Failover is a candidate that failed, and the one the call fell over to.
type Failover struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Error string `json:"error"`
}

// StrictOutput is the run record's account of strict output for the call.
type StrictOutput struct {
	Requested       bool   `json:"requested"`
	Sent            bool   `json:"sent"`
	DowngradeReason string `json:"downgrade_reason,omitempty"`
}

// ThinkingCheck compares the thinking configured with the reply's.
type ThinkingCheck struct {
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

// testModel makes the one call of TestModel.
func (w *Workspace) testModel(ctx context.Context, ref config.ModelRef) ModelTest {
	env := ModelTest{Name: ref.Name, Entry: ref.Entry, Failovers: []Failover{},
		Candidate: w.candidate(ref.Provider, ref.Model, ref.MaxTokens, ref.Temperature, ref.Thinking, ref.Effort)}
	env.Caching = cachingByType[env.Type]
	if env.Type == config.ProviderScript {
		// A script reaches no network, and a call would take a reply
		// that a run of the project is owed: its check is that its
		// replies file loads.
		pc, err := w.cfg.Provider(ref.Provider)
		if err == nil {
			env.Script = w.DisplayText(pc.File)
			_, err = model.LoadScript(pc.File)
		}
		if err != nil {
			why := w.DisplayText(err.Error())
			env.Error = &why
			return env
		}
		env.OK = true
		return env
	}
	models := model.New(w.cfg, model.Options{OnFailover: func(from, to string, err error) {
		env.Failovers = append(env.Failovers, Failover{From: from, To: to, Error: w.DisplayText(err.Error())})
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
		why := w.DisplayText(err.Error())
		env.Error = &why
		return env
	}
	env.AnsweredBy = reply.Provider + "/" + reply.Model
	env.OK = reply.Provider == ref.Provider && reply.Model == ref.Model
	env.Answer = w.Redact(reply.Text)
	env.Usage = &reply.Usage
	env.Strict = &StrictOutput{Requested: reply.StrictRequested, Sent: reply.StrictSent, DowngradeReason: reply.DowngradeReason}
	env.Thinking = &ThinkingCheck{Configured: ref.Thinking, Shown: len(reply.Thinking) > 0}
	return env
}

// Model is one name a plan may call a model by: a role or a named
// model, and the candidates that serve it. The provider's api_key is left
// out: it is a secret.
type Model struct {
	Name string `json:"name"`
	// Kind is role or named.
	Kind string `json:"kind"`
	// Entry is the configuration key that answers, models.default for a
	// role that falls back to it.
	Entry       string `json:"entry"`
	Description string `json:"description,omitempty"`
	Candidate
	Fallbacks []Candidate `json:"fallbacks"`
}

// Candidate is a provider and model that may answer, with the
// settings it is called with.
type Candidate struct {
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

func (w *Workspace) modelEntry(ref config.ModelRef) Model {
	m := Model{Name: ref.Name, Kind: "named", Entry: ref.Entry, Description: ref.Description, Fallbacks: []Candidate{}}
	if slices.Contains(config.Roles(), ref.Name) {
		m.Kind = "role"
	}
	m.Candidate = w.candidate(ref.Provider, ref.Model, ref.MaxTokens, ref.Temperature, ref.Thinking, ref.Effort)
	for _, f := range ref.Fallbacks {
		m.Fallbacks = append(m.Fallbacks, w.candidate(f.Provider, f.Model, f.MaxTokens, f.Temperature, f.Thinking, f.Effort))
	}
	return m
}

func (w *Workspace) candidate(provider, model string, maxTokens int, temp *float64, thinking *config.Thinking, effort string) Candidate {
	c := Candidate{Provider: provider, Model: model, MaxTokens: maxTokens, Temperature: temp, Thinking: thinking, Effort: effort}
	p, err := w.cfg.Provider(provider)
	if err != nil {
		why := w.DisplayText(err.Error())
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
