package config

import (
	"fmt"
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
	if s.PlanningAttempts < 0 {
		b.errorf("settings.planning_attempts", false, "must not be negative, got %d", s.PlanningAttempts)
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
			b.checkEntry(joinKey("models", role), e.Provider, e.Model, e.Temperature, e.Fallbacks)
		}
	}
	for _, name := range sortedKeys(m.Named) {
		key := joinKey(joinKey("models", "named"), name)
		if isRole(name) {
			b.errorf(key, true, "named model %q shadows the %s role; choose another name", name, name)
		}
		e := m.Named[name]
		b.checkEntry(key, e.Provider, e.Model, e.Temperature, e.Fallbacks)
	}
}

// checkEntry checks a model entry and its fallbacks: each names a model and
// a provider that exists, so that a typo surfaces now rather than mid-outage.
func (b *builder) checkEntry(key, provider, model string, temp *float64, fallbacks []Fallback) {
	b.checkCandidate(key, provider, model, temp)
	for i, f := range fallbacks {
		b.checkCandidate(indexKey(joinKey(key, "fallbacks"), i), f.Provider, f.Model, f.Temperature)
	}
}

func (b *builder) checkCandidate(key, provider, model string, temp *float64) {
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
	if temp != nil && (*temp < 0 || *temp > 2) {
		b.errorf(joinKey(key, "temperature"), false, "temperature must be between 0 and 2, got %g", *temp)
	}
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
