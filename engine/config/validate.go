package config

import (
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"

	"github.com/stepwise-dev/stepwise/plans/suggest"
)

// validate checks the layered configuration. Every problem is recorded; none
// stops the others from being found.
func (b *builder) validate() {
	b.checkSettings()
	b.checkStorage()
	b.checkProviders()
	b.checkModels()
	b.checkMCP()
	b.checkPricing()
	b.checkPacks()
}

func (b *builder) checkSettings() {
	s := b.cfg.Settings
	if s.MaxAgentIterations < 1 {
		b.errorf("settings.max_agent_iterations", false, "must be at least 1, got %d", s.MaxAgentIterations)
	}
	if d := b.cfg.Storage.KeepDays; d < 0 {
		b.errorf("storage.keep_days", false, "must not be negative, got %d (0 or unset: runs are kept)", d)
	}
	l := b.cfg.Limits
	for key, n := range map[string]int64{"tool_output_bytes": l.ToolOutputBytes, "model_input_bytes": l.ModelInputBytes,
		"mcp_result_bytes": l.MCPResultBytes, "model_reply_bytes": l.ModelReplyBytes, "value_bytes": l.ValueBytes} {
		if n < 1 {
			b.errorf("limits."+key, false, "must be at least 1, got %d", n)
		}
	}
	// !(c >= 0) refuses nan with the negative; inf is no cap either, and
	// would read as one.
	if c := b.cfg.Limits.CostUSD; !(c >= 0) || math.IsInf(c, 1) {
		b.errorf("limits.cost_usd", false, "must be a cost in USD, not negative, got %g (0 or unset: no cap)", c)
	}
	if s.PlanningAttempts < 0 {
		b.errorf("settings.planning_attempts", false, "must not be negative, got %d", s.PlanningAttempts)
	}
	for key, v := range map[string]int{"llm_timeout_seconds": s.LLMTimeoutSeconds, "llm_idle_timeout_seconds": s.LLMIdleTimeoutSeconds,
		"retry_after_cap_seconds": s.RetryAfterCapSeconds} {
		if v < 1 {
			b.errorf("settings."+key, false, "must be at least 1 (seconds), got %d", v)
		}
	}
}

func (b *builder) checkStorage() {
	switch backend := b.cfg.Storage.Backend; backend {
	case BackendSQLite, BackendMemory:
	case "file":
		// The default of the tool whose .graph projects stepwise opens;
		// its role, durable storage under data_dir, is sqlite's here.
		b.warnf("storage.backend", false, `stepwise stores runs in sqlite; "file" is read as "sqlite"`)
		b.cfg.Storage.Backend = BackendSQLite
	default:
		b.errorf("storage.backend", false, "invalid storage backend %q (valid: %s, %s)", backend, BackendSQLite, BackendMemory)
	}
}

func (b *builder) checkProviders() {
	for _, name := range sortedKeys(b.cfg.Providers) {
		p := b.cfg.Providers[name]
		key := joinKey("providers", name)
		typeKey := joinKey(key, "type")
		switch {
		case p.Type == "":
			b.errorf(key, true, "type is required (valid: %s)", validTypes())
		case b.unexpanded[typeKey]:
			// Already reported: the variable it names is not set.
		case !validType(p.Type):
			b.errorf(typeKey, false, "unknown provider type %q (valid: %s)%s", p.Type, validTypes(), suggest.DidYouMean(string(p.Type), typeNames()))
		case !p.Type.Supported():
			d := b.diag(typeKey, false, fmt.Sprintf("stepwise does not support provider type %s yet (%s)", p.Type, ErrNotUsable))
			b.cfg.unusable[key] = append([]*UnusableError{{Diagnostic: d}}, b.cfg.unusable[key]...)
		}
		switch {
		case p.Type == ProviderScript && p.File == "":
			b.errorf(key, true, "a script provider needs file, the replies file it answers from")
		case p.Type != ProviderScript && p.File != "":
			b.warnf(joinKey(key, "file"), true, "file is used only by script providers; ignored for type %s", p.Type)
		}
		if p.Type == ProviderOpenAICompat && p.BaseURL == "" {
			b.errorf(key, true, "an openai_compat provider needs base_url")
		}
		if urlKey := joinKey(key, "base_url"); p.BaseURL != "" && !b.unexpanded[urlKey] {
			b.checkURL(urlKey, p.BaseURL)
		}
	}
}

func validType(t ProviderType) bool { return slices.Contains(providerTypes, t) }

func typeNames() []string {
	names := make([]string, len(providerTypes))
	for i, t := range providerTypes {
		names[i] = string(t)
	}
	return names
}

func validTypes() string { return strings.Join(typeNames(), ", ") }

func (b *builder) checkURL(key, raw string) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		b.errorf(key, false, "%q is not an http or https URL", raw)
	}
}

func (b *builder) checkModels() {
	m := b.cfg.Models
	for _, role := range Roles() {
		if e, ok := m.Role(role); ok {
			b.checkEntry(joinKey("models", role), e.Provider, e.Model, e.settings(), e.Fallbacks)
		}
	}
	for _, name := range sortedKeys(m.Named) {
		key := joinKey(joinKey("models", "named"), name)
		if isRole(name) {
			b.errorf(key, true, "named model %q shadows the %s role; choose another name", name, name)
		}
		e := m.Named[name]
		b.checkEntry(key, e.Provider, e.Model, e.settings(), e.Fallbacks)
	}
}

// checkEntry checks a model entry and its fallbacks: each names a model and
// a provider that exists, so that a typo surfaces now rather than mid-outage.
// A fallback's settings are checked as they apply to it, the primary's
// filling in what it leaves out, but a problem of the primary's own
// settings is reported once, at the primary.
func (b *builder) checkEntry(key, provider, model string, s modelSettings, fallbacks []Fallback) {
	b.checkCandidate(key, provider, model, s, s)
	for i, f := range fallbacks {
		b.checkCandidate(indexKey(joinKey(key, "fallbacks"), i), f.Provider, f.Model, f.settings(), f.settings().over(s))
	}
}

// checkCandidate checks one candidate: own holds the settings written at
// key, applied the settings it runs with.
func (b *builder) checkCandidate(key, provider, model string, own, applied modelSettings) {
	switch {
	case provider == "":
		b.errorf(key, true, "provider is required")
	case !b.hasProvider(provider):
		names := b.cfg.ProviderNames()
		b.errorf(joinKey(key, "provider"), false, "provider %q is not configured under [providers] (%s)%s",
			provider, configuredList(names), suggest.DidYouMean(provider, names))
	}
	if model == "" {
		b.errorf(key, true, "model is required")
	}
	if t := own.temperature; t != nil && (*t < 0 || *t > 2) {
		b.errorf(joinKey(key, "temperature"), false, "temperature must be between 0 and 2, got %g", *t)
	}
	if own.maxTokens < 0 || own.maxTokens == 0 && b.isSet(joinKey(key, "max_tokens")) {
		b.errorf(joinKey(key, "max_tokens"), false, "max_tokens must be at least 1, got %d", own.maxTokens)
	}
	switch t := applied.thinking; {
	case own.thinking != nil:
		b.checkThinking(joinKey(key, "thinking"), *own.thinking, applied.effective().maxTokens)
	case own.maxTokens > 0 && t != nil && !t.Adaptive() && t.BudgetTokens >= own.maxTokens:
		b.errorf(joinKey(key, "max_tokens"), false, "max_tokens (%d) must be above the thinking budget_tokens (%d) carried over from the primary; raise max_tokens or give this fallback a thinking table of its own", own.maxTokens, t.BudgetTokens)
	}
	if own.effort != "" && !slices.Contains(Efforts, own.effort) {
		b.errorf(joinKey(key, "effort"), false, "effort must be one of %s, got %q%s",
			strings.Join(Efforts, ", "), own.effort, suggest.DidYouMean(own.effort, Efforts))
	}
	b.checkAnthropicSettings(key, provider, own, applied)
}

// checkThinking checks a thinking table against the max_tokens it runs
// under.
func (b *builder) checkThinking(key string, t Thinking, maxTokens int) {
	budgetKey := joinKey(key, "budget_tokens")
	switch t.Type {
	case "", ThinkingEnabled:
		switch {
		case !b.isSet(budgetKey):
			b.errorf(key, true, `thinking needs budget_tokens (at least %d), or type = "%s" to let the model decide`, MinThinkingBudget, ThinkingAdaptive)
		case t.BudgetTokens < MinThinkingBudget:
			b.errorf(budgetKey, false, "budget_tokens must be at least %d, got %d", MinThinkingBudget, t.BudgetTokens)
		case t.BudgetTokens >= maxTokens:
			b.errorf(budgetKey, false, "budget_tokens (%d) must be below max_tokens (%d), which bounds thinking and answer together; raise max_tokens or lower the budget", t.BudgetTokens, maxTokens)
		}
	case ThinkingAdaptive:
		if b.isSet(budgetKey) {
			b.errorf(budgetKey, false, `budget_tokens does not apply to adaptive thinking; use effort to guide it, or type = "%s"`, ThinkingEnabled)
		}
	default:
		valid := []string{ThinkingEnabled, ThinkingAdaptive}
		b.errorf(joinKey(key, "type"), false, "unknown thinking type %q (valid: %s)%s", t.Type, strings.Join(valid, ", "), suggest.DidYouMean(t.Type, valid))
	}
}

// checkAnthropicSettings checks the settings whose meaning depends on the
// candidate's provider type. Thinking and effort are sent only by the
// anthropic type. The Messages API version that type speaks refuses
// sampling parameters, so a temperature is not sent to it: a temperature
// written for another provider is a warning, since a configuration written
// for the tool stepwise opens unchanged may carry one; together with
// thinking, which the API has always refused with a custom temperature,
// it is an error.
func (b *builder) checkAnthropicSettings(key, provider string, own, applied modelSettings) {
	p, ok := b.cfg.Providers[provider]
	// A type that is no type at all has its own error; the settings of
	// the type it was meant to be say nothing then.
	if !ok || b.unexpanded[joinKey(joinKey("providers", provider), "type")] || !slices.Contains(providerTypes, p.Type) {
		return
	}
	if p.Type != ProviderAnthropic {
		for _, f := range []struct {
			name string
			set  bool
		}{{"max_tokens", own.maxTokens != 0}, {"thinking", own.thinking != nil}, {"effort", own.effort != ""}} {
			if f.set {
				b.warnf(joinKey(key, f.name), true, "%s is used only by anthropic providers; ignored for provider %s (type %s)", f.name, provider, p.Type)
			}
		}
		return
	}
	if own.temperature == nil && own.thinking == nil {
		return
	}
	tempKey := joinKey(key, "temperature")
	switch {
	case applied.temperature != nil && applied.thinking != nil:
		where := tempKey
		if own.temperature == nil {
			where = joinKey(key, "thinking")
		}
		b.errorf(where, own.temperature == nil, "temperature cannot be set while thinking is on: the Messages API refuses a custom temperature with thinking; remove temperature or thinking")
	case own.temperature != nil:
		b.warnf(tempKey, true, "temperature is not sent to anthropic provider %s: the Messages API version it speaks refuses sampling parameters; ignored", provider)
	}
}

// isSet reports whether a source set the value at path.
func (b *builder) isSet(path string) bool {
	_, ok := b.origin[path]
	return ok
}

func (b *builder) hasProvider(name string) bool {
	_, ok := b.cfg.Providers[name]
	return ok
}

// reservedServerNames are tool namespaces stepwise itself serves; a server
// under one of these names would collide with them.
var reservedServerNames = []string{"builtin", "plan", "workbench"}

func (b *builder) checkMCP() {
	for _, name := range sortedKeys(b.cfg.MCP) {
		s := b.cfg.MCP[name]
		key := joinKey("mcp", name)
		switch {
		case !isServerName(name):
			b.errorf(key, true, "server name %q must be letters, digits, - and _, without a double underscore, since its tools are named %s__<tool>", name, name)
		case slices.Contains(reservedServerNames, name):
			b.errorf(key, true, "server name %q is reserved for stepwise's own %s__ tools", name, name)
		}
		switch {
		case s.Command != "" && s.URL != "":
			b.errorf(key, true, "set command (a stdio server) or url (an HTTP server), not both")
		case s.Command == "" && s.URL == "":
			b.errorf(key, true, "set command (a stdio server) or url (an HTTP server)")
		case s.URL != "" && !b.unexpanded[joinKey(key, "url")]:
			b.checkURL(joinKey(key, "url"), s.URL)
		}
		if s.CallTimeoutSecs < 0 {
			b.errorf(joinKey(key, "call_timeout_secs"), false, "must not be negative, got %d (0 or unset: %d)", s.CallTimeoutSecs, DefaultMCPCallTimeoutSecs)
		}
		for _, tool := range sortedKeys(s.ToolOverrides) {
			o := s.ToolOverrides[tool]
			if _, ok := o.OutputSchema.(map[string]any); o.OutputSchema != nil && !ok {
				b.errorf(joinKey(joinKey(joinKey(key, "tool_overrides"), tool), "output_schema"), false, "output_schema must be a table (a JSON Schema object)")
			}
		}
	}
}

func isServerName(name string) bool {
	if name == "" || strings.Contains(name, "__") {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func (b *builder) checkPricing() {
	for _, model := range sortedKeys(b.cfg.Pricing) {
		p := b.cfg.Pricing[model]
		key := joinKey("pricing", model)
		for _, f := range []struct {
			name     string
			value    *float64
			required bool
		}{
			{"input", &p.Input, true},
			{"output", &p.Output, true},
			{"cache_write", p.CacheWrite, false},
			{"cache_read", p.CacheRead, false},
		} {
			fkey := joinKey(key, f.name)
			if _, set := b.origin[fkey]; f.required && !set {
				b.errorf(key, true, "%s is required (USD per million tokens)", f.name)
				continue
			}
			if f.value != nil && *f.value < 0 {
				b.errorf(fkey, false, "%s must not be negative, got %g", f.name, *f.value)
			}
		}
	}
}

// ToolPacks lists the names [tools] packs accepts. llm and data are always
// on, and naming them changes nothing, as in graph; engine/tools builds the
// tools of each pack and checks that it knows exactly these names.
func ToolPacks() []string { return []string{"data", "github", "llm", "slack"} }

func (b *builder) checkPacks() {
	known := ToolPacks()
	for i, name := range b.cfg.Tools.Packs {
		if !slices.Contains(known, name) {
			b.errorf(indexKey("tools.packs", i), false, "unknown tool pack %q (known: %s)%s", name, strings.Join(known, ", "), suggest.DidYouMean(name, known))
		}
	}
}
