// Package config loads stepwise's layered TOML configuration and finds the
// project a command runs in.
//
// A configuration is built from, in order, the global file
// ($XDG_CONFIG_HOME/stepwise/config.toml, or graph's when only graph's
// directory exists), the project file
// (.stepwise/config.toml, or .graph/config.toml in a project of the tool
// stepwise can open unchanged), a few environment variables and the flags the
// caller passes as Overrides. Later layers win and tables merge key by key;
// see Load for the exact rules.
//
// A loaded Config is plain data and is not changed afterwards, so it may be
// shared between goroutines.
package config

import (
	"errors"
	"iter"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"time"
)

// Config is a loaded configuration: every section of config.toml after
// layering, ${VAR} expansion, path resolution and defaults.
//
// Values in Providers and MCP that refer to an unset environment variable keep
// their literal ${VAR} text; use Provider and MCPServer to get an entry
// together with the error that says whether it can be used.
type Config struct {
	Settings  Settings             `toml:"settings"`
	Providers map[string]Provider  `toml:"providers"`
	Models    Models               `toml:"models"`
	MCP       map[string]MCPServer `toml:"mcp"`
	Plans     Plans                `toml:"plans"`
	Tools     Tools                `toml:"tools"`
	Pricing   map[string]Price     `toml:"pricing"`
	Storage   Storage              `toml:"storage"`
	User      User                 `toml:"user"`
	Prompts   Prompts              `toml:"prompts"`
	Workbench Workbench            `toml:"workbench"`
	Limits    Limits               `toml:"limits"`

	// Log is the log filter from STEPWISE_LOG (or GRAPH_LOG) or
	// Overrides.Log, as given ("" when none is set), and LogLevel the
	// level it asks for: the workbench log's. A filter is a level (trace,
	// debug, info, warn, error, off) or graph's form, a list of
	// [target=]level, whose most verbose level counts. Unset, it is debug.
	Log      string     `toml:"-"`
	LogLevel slog.Level `toml:"-"`
	// Project is the project the configuration was loaded for, nil outside
	// a project.
	Project *Project `toml:"-"`
	// Files lists the configuration files that were read, in layer order.
	Files []string `toml:"-"`

	// unusable holds, per "providers.<name>" or "mcp.<name>", why that entry
	// cannot be used; see Provider and MCPServer.
	unusable map[string][]*UnusableError
	// secretVars are the environment variables [providers.*] and [mcp.*]
	// values read: a model's key and a server's token among them.
	secretVars []string
	// secrets are the values ${VAR}s in [providers.*] and [mcp.*] expanded
	// to, longest first; see Redact.
	secrets []secret
}

// secret is a value a ${VAR} expanded to, the reference it hides behind,
// and the forms it takes in what stepwise prints and stores.
type secret struct {
	value, ref string
	// forms are the value as it is and as text that quotes it holds it: a
	// Go-quoted string (an error's %q of a URL or a command line), a JSON
	// string with and without <, > and & escaped, JSON text inside a JSON
	// string (a tool's printed JSON, in an event), and a URL's query and
	// path escaping. Each appears once, the longest first, so that a form
	// holding another is hidden whole; for a key of letters, digits and
	// dashes they are all the value itself.
	forms []string
}

// Redact hides in s every value of minSecretLen or more that a ${VAR} in
// [providers.*] or [mcp.*] expanded to, in any of the forms text quotes it
// in (see secret.forms), writing ${VAR} in its place: a token in an MCP
// server's args or url would otherwise reach its error messages, the run
// store and every listing. Whatever stepwise prints or stores about a
// provider or a server goes through it. ${VAR} needs no escaping in JSON
// or a Go-quoted string, so s stays valid JSON if it was.
func (c *Config) Redact(s string) string {
	if c == nil {
		return s
	}
	for _, sec := range c.secrets {
		for _, form := range sec.forms {
			if strings.Contains(s, form) {
				s = strings.ReplaceAll(s, form, sec.ref)
			}
		}
	}
	return s
}

// HasSecrets reports whether Redact has anything to hide: without secrets
// a caller can skip the work of giving it text.
func (c *Config) HasSecrets() bool { return c != nil && len(c.secrets) > 0 }

// SecretStream hides the secrets Redact hides in a text that arrives in
// pieces, a model's streamed reply: a key split between two pieces is in
// neither, and each piece redacted alone would let the whole key be
// rebuilt from the two. It holds back the end of the text so far that
// could start a secret, until the next piece says whether it does. Not
// safe for concurrent use; one stream's pieces arrive in order.
type SecretStream struct {
	cfg *Config
	// held is the redacted end of the text so far that a secret's form
	// begins with, not let out yet.
	held string
}

// SecretStream returns a new stream's redaction; nil when there is nothing
// to hide, which lets every piece out as it is.
func (c *Config) SecretStream() *SecretStream {
	if !c.HasSecrets() {
		return nil
	}
	return &SecretStream{cfg: c}
}

// Next takes the stream's next piece and returns what can be let out now:
// the text held before and the piece, redacted, less the longest end of it
// that a secret's form begins with, which is held for the next piece or
// End. Together the texts Next and End return are the whole text,
// redacted.
func (s *SecretStream) Next(piece string) string {
	if s == nil {
		return piece
	}
	text := s.cfg.Redact(s.held + piece)
	cut := len(text) - s.cfg.secretStart(text)
	s.held = text[cut:]
	return text[:cut]
}

// End returns the text held back when the stream ends (and starts the
// stream again).
func (s *SecretStream) End() string {
	if s == nil {
		return ""
	}
	held := s.held
	s.held = ""
	return held
}

// secretStart is the length of the longest end of text that is the
// beginning, not the whole, of a secret's form.
func (c *Config) secretStart(text string) int {
	longest := 0
	for _, sec := range c.secrets {
		for _, form := range sec.forms {
			// Only the last len(form)-1 bytes can begin it, and only
			// before the longest end found so far can a longer one; the
			// leftmost beginning is the longest end.
			for i, to := max(0, len(text)-len(form)+1), len(text)-longest; i < to; i++ {
				j := strings.IndexByte(text[i:to], form[0])
				if j < 0 {
					break
				}
				if i += j; strings.HasPrefix(form, text[i:]) {
					longest = len(text) - i
					break
				}
			}
		}
	}
	return longest
}

// Secrets yields each value Redact hides and the ${VAR} it hides behind,
// the longest first, for what hides them in encoded forms of its own (the
// run store searches its payloads' JSON for them).
func (c *Config) Secrets() iter.Seq2[string, string] {
	return func(yield func(value, ref string) bool) {
		if c == nil {
			return
		}
		for _, sec := range c.secrets {
			if !yield(sec.value, sec.ref) {
				return
			}
		}
	}
}

// SecretVars names the environment variables the [providers.*] and [mcp.*]
// entries read (api_key = "${ANTHROPIC_API_KEY}", args = ["${TOKEN}"]).
// Tool processes do not inherit them, unless a tool's own env passes one
// on: a tool that printed its environment would put a model's key or a
// server's token in the record and in the next model request.
func (c *Config) SecretVars() []string { return slices.Clone(c.secretVars) }

// Settings is the [settings] section.
type Settings struct {
	// DataDir holds the run store and other state. Default:
	// $XDG_DATA_HOME/stepwise.
	DataDir string `toml:"data_dir"`
	// MaxAgentIterations bounds the rounds of an agent loop. Default 15.
	MaxAgentIterations int `toml:"max_agent_iterations"`
	// PlanningAttempts is the replanning budget of the planner. Default 2.
	PlanningAttempts int `toml:"planning_attempts"`
	// LLMTimeoutSeconds bounds each attempt of a model call that sets no
	// bound of its own (an agent step's llm_timeout_seconds does).
	// Default 600, seeds/002's.
	LLMTimeoutSeconds int `toml:"llm_timeout_seconds"`
	// LLMIdleTimeoutSeconds bounds the silence of a model's stream: no
	// byte for that long fails the attempt, transiently. Default 60.
	LLMIdleTimeoutSeconds int `toml:"llm_idle_timeout_seconds"`
	// RetryAfterCapSeconds is the longest Retry-After a model call waits
	// for; a server asking for more fails the call with what it asked.
	// Default 60.
	RetryAfterCapSeconds int `toml:"retry_after_cap_seconds"`
}

// ProviderType says which client serves a provider's models.
type ProviderType string

// The provider types a configuration may name.
const (
	ProviderOpenAI       ProviderType = "openai"
	ProviderOpenAICompat ProviderType = "openai_compat"
	ProviderAnthropic    ProviderType = "anthropic"
	ProviderBedrock      ProviderType = "bedrock"
	ProviderScript       ProviderType = "script"
)

// providerTypes lists the valid types in the order error messages show them.
var providerTypes = []ProviderType{ProviderOpenAI, ProviderOpenAICompat, ProviderAnthropic, ProviderBedrock, ProviderScript}

// Supported reports whether stepwise implements the provider type. The
// others load, so that a configuration written for them stays valid, but
// Provider refuses them.
func (t ProviderType) Supported() bool {
	return t == ProviderOpenAI || t == ProviderOpenAICompat || t == ProviderAnthropic || t == ProviderScript
}

// Provider is one [providers.<name>] entry.
type Provider struct {
	Type    ProviderType `toml:"type"`
	APIKey  string       `toml:"api_key"`
	BaseURL string       `toml:"base_url"`
	// StrictBaseURL states that the server at BaseURL enforces strict
	// structured output, so strict mode may be sent to it.
	StrictBaseURL bool `toml:"strict_base_url"`
	// File is the replies file of a script provider, an absolute path after
	// loading.
	File string `toml:"file"`
	// Region and Profile belong to bedrock, which is accepted but not
	// implemented.
	Region  string `toml:"region"`
	Profile string `toml:"profile"`
}

// DefaultMaxTokens is the most tokens a reply may have when a model entry
// does not set max_tokens. The Messages API requires a limit on every
// request.
const DefaultMaxTokens = 8192

// MinThinkingBudget is the smallest thinking budget the Messages API
// accepts.
const MinThinkingBudget = 1024

// The thinking types a model entry's thinking table may name.
const (
	// ThinkingEnabled thinks up to budget_tokens before answering. It is
	// the type of a table that gives only budget_tokens.
	ThinkingEnabled = "enabled"
	// ThinkingAdaptive lets the model decide how much to think, guided by
	// effort.
	ThinkingAdaptive = "adaptive"
)

// Efforts are the values effort may take, lowest first, as the Messages
// API names them.
var Efforts = []string{"low", "medium", "high", "xhigh", "max"}

// Thinking is a model entry's thinking table: extended thinking, which the
// anthropic provider type sends and the others ignore.
type Thinking struct {
	// Type is ThinkingEnabled or ThinkingAdaptive; empty reads as
	// ThinkingEnabled.
	Type string `toml:"type" json:"type"`
	// BudgetTokens bounds the thinking of type enabled: at least
	// MinThinkingBudget and below max_tokens.
	BudgetTokens int `toml:"budget_tokens" json:"budget_tokens,omitempty"`
}

// Adaptive reports whether the model decides how much to think.
func (t Thinking) Adaptive() bool { return t.Type == ThinkingAdaptive }

// Fallback is one failover candidate of a model entry. A setting left out
// (nil, zero or empty) carries the primary's over.
type Fallback struct {
	Provider    string    `toml:"provider"`
	Model       string    `toml:"model"`
	Temperature *float64  `toml:"temperature"`
	MaxTokens   int       `toml:"max_tokens"`
	Thinking    *Thinking `toml:"thinking"`
	Effort      string    `toml:"effort"`
}

// ModelEntry assigns a model to a role.
type ModelEntry struct {
	Provider    string   `toml:"provider"`
	Model       string   `toml:"model"`
	Temperature *float64 `toml:"temperature"`
	// MaxTokens bounds each reply; 0 means DefaultMaxTokens.
	MaxTokens int `toml:"max_tokens"`
	// Thinking turns on extended thinking; nil leaves it off.
	Thinking *Thinking `toml:"thinking"`
	// Effort is one of Efforts, or empty to leave it to the model.
	Effort    string     `toml:"effort"`
	Fallbacks []Fallback `toml:"fallbacks"`
}

// NamedModel is one [models.named.<name>] entry: a model that plans and tools
// select by name. Its settings mean what ModelEntry's do.
type NamedModel struct {
	Provider    string    `toml:"provider"`
	Model       string    `toml:"model"`
	Temperature *float64  `toml:"temperature"`
	MaxTokens   int       `toml:"max_tokens"`
	Thinking    *Thinking `toml:"thinking"`
	Effort      string    `toml:"effort"`
	// Description tells a planner when this model is the right choice.
	Description string     `toml:"description"`
	Fallbacks   []Fallback `toml:"fallbacks"`
}

// settings are the per-model settings that an entry and its fallbacks
// share.
func (e ModelEntry) settings() modelSettings {
	return modelSettings{e.Temperature, e.MaxTokens, e.Thinking, e.Effort}
}

func (e NamedModel) settings() modelSettings {
	return modelSettings{e.Temperature, e.MaxTokens, e.Thinking, e.Effort}
}

func (f Fallback) settings() modelSettings {
	return modelSettings{f.Temperature, f.MaxTokens, f.Thinking, f.Effort}
}

// modelSettings are a candidate's settings as written: zero values are
// left out.
type modelSettings struct {
	temperature *float64
	maxTokens   int
	thinking    *Thinking
	effort      string
}

// over fills in what s leaves out from the primary's settings p.
func (s modelSettings) over(p modelSettings) modelSettings {
	if s.temperature == nil {
		s.temperature = p.temperature
	}
	if s.maxTokens == 0 {
		s.maxTokens = p.maxTokens
	}
	if s.thinking == nil {
		s.thinking = p.thinking
	}
	if s.effort == "" {
		s.effort = p.effort
	}
	return s
}

// effective applies the defaults, copying what is behind pointers so that
// a ModelRef never shares memory with the Config.
func (s modelSettings) effective() modelSettings {
	if s.maxTokens == 0 {
		s.maxTokens = DefaultMaxTokens
	}
	s.temperature = copyFloat(s.temperature)
	if s.thinking != nil {
		t := *s.thinking
		if t.Type == "" {
			t.Type = ThinkingEnabled
		}
		s.thinking = &t
	}
	return s
}

// The model roles. Every role but default falls back to default when it is
// not configured.
const (
	RoleDefault = "default"
	RoleChat    = "chat"
	RolePlanner = "planner"
	RoleSolver  = "solver"
	RoleRepair  = "repair"
	RoleJudge   = "judge"
)

// Roles returns the role names in their canonical order.
func Roles() []string {
	return []string{RoleDefault, RoleChat, RolePlanner, RoleSolver, RoleRepair, RoleJudge}
}

// Models is the [models] section: one optional entry per role, and the named
// models.
type Models struct {
	Default *ModelEntry           `toml:"default"`
	Chat    *ModelEntry           `toml:"chat"`
	Planner *ModelEntry           `toml:"planner"`
	Solver  *ModelEntry           `toml:"solver"`
	Repair  *ModelEntry           `toml:"repair"`
	Judge   *ModelEntry           `toml:"judge"`
	Named   map[string]NamedModel `toml:"named"`
}

// Role returns the entry configured for a role, and false when the role is
// unknown or not configured. It does not fall back to default; ResolveModel
// does.
func (m Models) Role(name string) (*ModelEntry, bool) {
	var e *ModelEntry
	switch name {
	case RoleDefault:
		e = m.Default
	case RoleChat:
		e = m.Chat
	case RolePlanner:
		e = m.Planner
	case RoleSolver:
		e = m.Solver
	case RoleRepair:
		e = m.Repair
	case RoleJudge:
		e = m.Judge
	}
	return e, e != nil
}

// setRole replaces a role's entry; name must be a role.
func (m *Models) setRole(name string, e *ModelEntry) {
	switch name {
	case RoleDefault:
		m.Default = e
	case RoleChat:
		m.Chat = e
	case RolePlanner:
		m.Planner = e
	case RoleSolver:
		m.Solver = e
	case RoleRepair:
		m.Repair = e
	case RoleJudge:
		m.Judge = e
	}
}

func isRole(name string) bool { return slices.Contains(Roles(), name) }

// MCPServer is one [mcp.<name>] entry. Exactly one of Command (stdio) and URL
// (streamable HTTP) is set.
type MCPServer struct {
	// CallTimeoutSecs bounds one tool call; 0 is DefaultMCPCallTimeoutSecs.
	CallTimeoutSecs int                     `toml:"call_timeout_secs"`
	Command         string                  `toml:"command"`
	Args            []string                `toml:"args"`
	Env             map[string]string       `toml:"env"`
	URL             string                  `toml:"url"`
	Headers         map[string]string       `toml:"headers"`
	IncludeTools    []string                `toml:"include_tools"`
	ExcludeTools    []string                `toml:"exclude_tools"`
	ToolOverrides   map[string]ToolOverride `toml:"tool_overrides"`
}

// DefaultMCPCallTimeoutSecs is how long a call to an MCP server's tool may
// take when [mcp.NAME] sets no call_timeout_secs.
const DefaultMCPCallTimeoutSecs = 120

// CallTimeout is how long one tool call may take.
func (s MCPServer) CallTimeout() time.Duration {
	if s.CallTimeoutSecs > 0 {
		return time.Duration(s.CallTimeoutSecs) * time.Second
	}
	return DefaultMCPCallTimeoutSecs * time.Second
}

// Transport returns "stdio" for a server started from Command and "http" for
// one reached at URL.
func (s MCPServer) Transport() string {
	if s.URL != "" {
		return "http"
	}
	return "stdio"
}

// ToolOverride patches the metadata of one tool of an MCP server.
type ToolOverride struct {
	Description string `toml:"description"`
	// OutputSchema and OutputExample are JSON-shaped values (maps, slices,
	// strings, numbers, booleans) as TOML decoded them; nil when unset.
	OutputSchema  any `toml:"output_schema"`
	OutputExample any `toml:"output_example"`
}

// Plans is the [plans] section.
type Plans struct {
	// Paths are the directories searched for plans, absolute after loading.
	Paths []string `toml:"paths"`
}

// Tools is the [tools] section.
type Tools struct {
	// Paths are the directories searched for user tools, absolute after
	// loading.
	Paths []string `toml:"paths"`
	// Packs names the opt-in built-in tool packs to enable.
	Packs []string `toml:"packs"`
}

// Price is one [pricing."<model id>"] entry, in USD per million tokens.
type Price struct {
	Input  float64 `toml:"input"`
	Output float64 `toml:"output"`
	// CacheWrite and CacheRead are nil when the file leaves them out; Rates
	// fills in the defaults.
	CacheWrite *float64 `toml:"cache_write"`
	CacheRead  *float64 `toml:"cache_read"`
}

// Rates are the four token prices of a model with the defaults applied, in
// USD per million tokens.
type Rates struct {
	Input, Output, CacheWrite, CacheRead float64
}

// Rates applies the defaults for the prices left out: cache writes cost
// 1.25 times the input price and cache reads 0.10 times.
func (p Price) Rates() Rates {
	r := Rates{Input: p.Input, Output: p.Output, CacheWrite: p.Input * 1.25, CacheRead: p.Input * 0.10}
	if p.CacheWrite != nil {
		r.CacheWrite = *p.CacheWrite
	}
	if p.CacheRead != nil {
		r.CacheRead = *p.CacheRead
	}
	return r
}

// Backend selects the run store.
type Backend string

// The run store backends.
const (
	BackendSQLite Backend = "sqlite"
	BackendMemory Backend = "memory"
)

// Storage is the [storage] section.
type Storage struct {
	Backend Backend `toml:"backend"` // default sqlite
	// KeepDays, when above 0, is how long runs are kept: each command
	// that records a run first deletes those of every project older than
	// that (stepwise runs prune does it on demand).
	KeepDays int `toml:"keep_days"`
	// BackendFrom says what set Backend: a file's position
	// (config.toml:12:11), an environment variable ($GRAPH_STORAGE) or
	// the command line; empty for the default. A command that finds no
	// runs recorded says it, so the user knows what to change.
	BackendFrom string `toml:"-"`
}

// Limits is the [limits] section: the bounds a run is held to.
type Limits struct {
	// CostUSD, when above 0, is the most a run may spend on priced model
	// calls: past it, the run stops before its next model call. The
	// --max-cost of stepwise run, debug and fork sets it for one run.
	CostUSD float64 `toml:"cost_usd"`
	// ToolOutputBytes bounds what an exec tool (or a pack's git) may
	// print to stdout: past it, the command is stopped and the call fails.
	// Default 16 MiB.
	ToolOutputBytes int64 `toml:"tool_output_bytes"`
	// ModelInputBytes bounds one tool result as an agent's model reads
	// it: past it, the result is cut, with a marker saying so. Default
	// 1 MiB.
	ModelInputBytes int64 `toml:"model_input_bytes"`
	// MCPResultBytes bounds one message an MCP server sends, counted as it
	// is read: past it, the call fails. Default 16 MiB.
	MCPResultBytes int64 `toml:"mcp_result_bytes"`
	// ModelReplyBytes bounds one model reply, counted as it streams: past
	// it, the call fails, without a retry. Default 4 MiB.
	ModelReplyBytes int64 `toml:"model_reply_bytes"`
	// ValueBytes bounds any value a step renders or produces, counted as
	// it is built: past it, the step fails. Default 64 MiB.
	ValueBytes int64 `toml:"value_bytes"`
}

// User is the [user] section, context given to agents about who they work
// for.
type User struct {
	Name     string `toml:"name"`
	Context  string `toml:"context"`
	Timezone string `toml:"timezone"`
}

// Prompts is the [prompts] section. A non-empty field replaces the built-in
// prompt of that name wholesale.
type Prompts struct {
	Chat      string `toml:"chat"`
	Workbench string `toml:"workbench"`
	Agent     string `toml:"agent"`
	Solver    string `toml:"solver"`
}

// Workbench is the [workbench] section.
type Workbench struct {
	// LogPath is the workbench debug log, absolute after loading. Default:
	// <data_dir>/workbench.log; STEPWISE_WORKBENCH_LOG overrides it.
	LogPath string `toml:"log_path"`
}

// Provider returns the provider configured under name. The error is a
// *NotConfiguredError when there is none, and wraps ErrNotUsable when the
// provider's type is not implemented or one of its values refers to an unset
// environment variable (an *UnusableError naming the variable and the key).
func (c *Config) Provider(name string) (Provider, error) {
	p, ok := c.Providers[name]
	if !ok {
		return Provider{}, &NotConfiguredError{Kind: "provider", Name: name, Configured: c.ProviderNames()}
	}
	return p, c.unusableErr("providers." + formatKeyPart(name))
}

// MCPServer returns the MCP server configured under name. The error is a
// *NotConfiguredError when there is none, and an *UnusableError (wrapping
// ErrNotUsable) for each of its values that refers to an unset environment
// variable.
func (c *Config) MCPServer(name string) (MCPServer, error) {
	s, ok := c.MCP[name]
	if !ok {
		return MCPServer{}, &NotConfiguredError{Kind: "mcp server", Name: name, Configured: c.MCPServerNames()}
	}
	return s, c.unusableErr("mcp." + formatKeyPart(name))
}

func (c *Config) unusableErr(owner string) error {
	list := c.unusable[owner]
	switch len(list) {
	case 0:
		return nil
	case 1:
		return list[0]
	}
	errs := make([]error, len(list))
	for i, e := range list {
		errs[i] = e
	}
	return errors.Join(errs...)
}

// ProviderNames returns the configured provider names, sorted.
func (c *Config) ProviderNames() []string { return sortedKeys(c.Providers) }

// MCPServerNames returns the configured MCP server names, sorted.
func (c *Config) MCPServerNames() []string { return sortedKeys(c.MCP) }

// Price returns the rates for a model id, and false when the model is not
// priced.
func (c *Config) Price(model string) (Rates, bool) {
	p, ok := c.Pricing[model]
	if !ok {
		return Rates{}, false
	}
	return p.Rates(), true
}

// PricingKey is the configuration key that prices a model id:
// pricing."gpt-4.1", pricing.scripted.
func PricingKey(model string) string { return "pricing." + formatKeyPart(model) }

// ModelRef is a model name resolved to the entry that serves it.
type ModelRef struct {
	// Name is the name that was resolved: a role or a named model.
	Name string
	// Entry is the configuration key that answered, such as models.default
	// for a role that fell back, or models.named.nano.
	Entry       string
	Provider    string
	Model       string
	Temperature *float64
	// MaxTokens is the entry's max_tokens, DefaultMaxTokens when unset.
	MaxTokens int
	// Thinking is nil when thinking is off; its Type is always set.
	Thinking    *Thinking
	Effort      string
	Description string
	// Fallbacks are the failover candidates in order. A setting a
	// candidate leaves out carries the primary's over, and MaxTokens is
	// always set.
	Fallbacks []Fallback
}

// ResolveModel resolves a role name (falling back to the default role when
// that role is not configured), "default" itself, or the name of a named
// model. An unknown or unconfigured name is a *NotConfiguredError listing the
// names that do resolve; there is never a silent fallback for a named model.
func (c *Config) ResolveModel(name string) (ModelRef, error) {
	if isRole(name) {
		if e, ok := c.Models.Role(name); ok {
			return refFromEntry(name, "models."+name, e.Provider, e.Model, e.settings(), "", e.Fallbacks), nil
		}
		if e, ok := c.Models.Role(RoleDefault); ok {
			return refFromEntry(name, "models."+RoleDefault, e.Provider, e.Model, e.settings(), "", e.Fallbacks), nil
		}
	} else if m, ok := c.Models.Named[name]; ok {
		return refFromEntry(name, "models.named."+formatKeyPart(name), m.Provider, m.Model, m.settings(), m.Description, m.Fallbacks), nil
	}
	return ModelRef{}, &NotConfiguredError{Kind: "model", Name: name, Configured: c.ModelNames()}
}

func refFromEntry(name, entry, provider, model string, primary modelSettings, desc string, fbs []Fallback) ModelRef {
	s := primary.effective()
	ref := ModelRef{
		Name: name, Entry: entry, Provider: provider, Model: model,
		Temperature: s.temperature, MaxTokens: s.maxTokens, Thinking: s.thinking, Effort: s.effort,
		Description: desc,
	}
	for _, f := range fbs {
		fs := f.settings().over(primary).effective()
		ref.Fallbacks = append(ref.Fallbacks, Fallback{
			Provider: f.Provider, Model: f.Model,
			Temperature: fs.temperature, MaxTokens: fs.maxTokens, Thinking: fs.thinking, Effort: fs.effort,
		})
	}
	return ref
}

func copyFloat(f *float64) *float64 {
	if f == nil {
		return nil
	}
	v := *f
	return &v
}

// ModelNames returns every name ResolveModel accepts: the roles that resolve
// (all of them once default is configured), in canonical order, then the
// named models, sorted.
func (c *Config) ModelNames() []string {
	var names []string
	_, haveDefault := c.Models.Role(RoleDefault)
	for _, r := range Roles() {
		if _, ok := c.Models.Role(r); ok || haveDefault {
			names = append(names, r)
		}
	}
	return append(names, sortedKeys(c.Models.Named)...)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
