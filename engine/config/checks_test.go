package config

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/stepwise-dev/stepwise/plans/suggest"
	"github.com/stepwise-dev/stepwise/plans/yamlpos"
)

// TestChecks loads one project file per case and compares the warnings and
// errors, rendered, with {file} standing for the file's path.
func TestChecks(t *testing.T) {
	tests := []struct {
		name     string
		project  string
		warnings []string
		errs     []string
		check    func(t *testing.T, cfg *Config) // when the load succeeds
	}{
		// Unknown keys warn, with a suggestion when one is close.
		{
			name: "unknown keys warn with a suggestion",
			project: `[settings]
max_agent_iteration = 3
[providers.local]
tpye = "openai_compat"
type = "openai_compat"
base_url = "http://localhost:11434/v1"
[modles.chat]
provider = "local"
[models]
chta = { provider = "local", model = "m" }
[mcp.gh]
command = "gh"
Args = ["x"]
[mcp.gh.tool_overrides.t]
output_schema = { anything = { goes = "here" } }
descripton = "d"
colour = "red"
`,
			warnings: []string{
				`{file}:2:1: settings.max_agent_iteration: unknown key; did you mean 'max_agent_iterations'?`,
				`{file}:4:1: providers.local.tpye: unknown key; did you mean 'type'?`,
				`{file}:7:2: modles: unknown key; did you mean 'models'?`,
				`{file}:10:1: models.chta: unknown key; did you mean 'chat'?`,
				`{file}:13:1: mcp.gh.Args: unknown key; did you mean 'args'? (keys are case-sensitive)`,
				`{file}:16:1: mcp.gh.tool_overrides.t.descripton: unknown key; did you mean 'description'?`,
				`{file}:17:1: mcp.gh.tool_overrides.t.colour: unknown key`,
			},
			check: func(t *testing.T, cfg *Config) {
				// Unknown keys are not used, even when they differ from a
				// known key only in case.
				if got := cfg.MCP["gh"].Args; got != nil {
					t.Errorf("args = %v, want nil", got)
				}
				if got := cfg.Settings.MaxAgentIterations; got != 15 {
					t.Errorf("max_agent_iterations = %d, want the default", got)
				}
			},
		},

		{
			name: "unknown keys inside inline tables are named whole",
			project: `[providers.c]
type = "anthropic"
api_key = "k"
[models]
default = { provider = "c", model = "m", max_token = 2000, thinking = { budget_tokens = 2000, foo = 1 } }
`,
			warnings: []string{
				`{file}:5:42: models.default.max_token: unknown key; did you mean 'max_tokens'?`,
				`{file}:5:95: models.default.thinking.foo: unknown key`,
			},
		},
		{
			name:    "a wrong type inside an inline table is named whole",
			project: "[providers.c]\ntype = \"anthropic\"\napi_key = \"k\"\n[models]\ndefault = { provider = \"c\", model = \"m\", thinking = true }\n",
			errs:    []string{`{file}:5:53: models.default.thinking: expected a table, found a boolean`},
		},

		{
			name:    "a negative MCP call timeout",
			project: "[mcp.m]\ncommand = \"m\"\ncall_timeout_secs = -1\n",
			errs:    []string{`{file}:3:21: mcp.m.call_timeout_secs: must not be negative, got -1 (0 or unset: 120)`},
		},
		{
			name:    "a model call bound of zero",
			project: "[settings]\nllm_idle_timeout_seconds = 0\n",
			errs:    []string{`{file}:2:28: settings.llm_idle_timeout_seconds: must be at least 1 (seconds), got 0`},
		},

		{
			name:    "a negative spend cap",
			project: "[limits]\ncost_usd = -1.5\n",
			errs:    []string{`{file}:2:12: limits.cost_usd: must be a cost in USD, not negative, got -1.5 (0 or unset: no cap)`},
		},
		{
			name:    "a spend cap that is no number",
			project: "[limits]\ncost_usd = nan\n",
			errs:    []string{`{file}:2:12: limits.cost_usd: must be a cost in USD, not negative, got NaN (0 or unset: no cap)`},
		},
		{
			name:    "an infinite spend cap",
			project: "[limits]\ncost_usd = inf\n",
			errs:    []string{`{file}:2:12: limits.cost_usd: must be a cost in USD, not negative, got +Inf (0 or unset: no cap)`},
		},

		{
			name:    "a size limit below one byte",
			project: "[limits]\nmcp_result_bytes = -1\nmodel_reply_bytes = 0\nvalue_bytes = -5\n",
			errs: []string{
				`{file}:2:20: limits.mcp_result_bytes: must be at least 1, got -1`,
				`{file}:3:21: limits.model_reply_bytes: must be at least 1, got 0`,
				`{file}:4:15: limits.value_bytes: must be at least 1, got -5`,
			},
		},

		// Wrong types are errors at the value.
		{
			name:    "integer expected",
			project: "[settings]\nmax_agent_iterations = \"ten\"\n",
			errs:    []string{`{file}:2:24: settings.max_agent_iterations: expected an integer, found a string`},
		},
		{
			name:    "every wrong type of a file",
			project: "[limits]\ntool_output_bytes = \"big\"\nmodel_input_bytes = \"small\"\n[settings]\nllm_timeout_seconds = \"x\"\n",
			errs: []string{
				`{file}:2:21: limits.tool_output_bytes: expected an integer, found a string`,
				`{file}:3:21: limits.model_input_bytes: expected an integer, found a string`,
				`{file}:5:23: settings.llm_timeout_seconds: expected an integer, found a string`,
			},
		},
		{
			// A value over several lines ends the reading at its error:
			// what follows it is not read for more.
			name:    "a wrong type over several lines",
			project: "[tools]\npacks = [\n  1,\n]\n[limits]\nvalue_bytes = \"big\"\n",
			errs:    []string{`{file}:3:3: tools.packs: expected a string, found an integer`},
		},
		{
			// A syntax error after a wrong type is not told as well: the
			// file is mended one error at a time from there.
			name:    "a wrong type, then a syntax error",
			project: "[limits]\nvalue_bytes = \"big\"\n[settings\n",
			errs:    []string{`{file}:2:15: limits.value_bytes: expected an integer, found a string`},
		},
		{
			name:    "array expected",
			project: "[tools]\npacks = \"github\"\n",
			errs:    []string{`{file}:2:9: tools.packs: expected an array, found a string`},
		},
		{
			name:    "unknown tool pack",
			project: "[tools]\npacks = [\"github\", \"slak\"]\n",
			errs:    []string{`{file}:2:20: tools.packs[1]: unknown tool pack "slak" (known: data, github, llm, slack); did you mean 'slack'?`},
		},
		{
			name:    "boolean expected",
			project: "[providers.x]\nstrict_base_url = \"yes\"\n",
			errs:    []string{`{file}:2:19: providers.x.strict_base_url: expected a boolean, found a string`},
		},
		{
			name:    "table expected",
			project: "[models]\ndefault = \"gpt-5\"\n",
			errs:    []string{`{file}:2:11: models.default: expected a table, found a string`},
		},
		{
			name:    "number expected",
			project: "[pricing.m]\ninput = \"3\"\n",
			errs:    []string{`{file}:2:9: pricing.m.input: expected a number, found a string`},
		},
		{
			name:    "string expected for a provider type",
			project: "[providers.x]\ntype = 1\n",
			errs:    []string{`{file}:2:8: providers.x.type: expected a string, found an integer`},
		},
		{
			name:    "syntax error",
			project: "[settings]\ndata_dir = \"unterminated\n",
			errs:    []string{`{file}:2:25: basic strings cannot have new lines`},
		},

		// MCP servers.
		{
			name:    "mcp command and url together",
			project: "[mcp.x]\ncommand = \"a\"\nurl = \"https://b/mcp\"\n",
			errs:    []string{`{file}:1:6: mcp.x: set command (a stdio server) or url (an HTTP server), not both`},
		},
		{
			name:    "mcp with neither command nor url",
			project: "[mcp.x]\nargs = [\"a\"]\n",
			errs:    []string{`{file}:1:6: mcp.x: set command (a stdio server) or url (an HTTP server)`},
		},
		{
			name:    "mcp url must be http",
			project: "[mcp.x]\nurl = \"ftp://b\"\n",
			errs:    []string{`{file}:2:7: mcp.x.url: "ftp://b" is not an http or https URL`},
		},
		{
			name:    "mcp server names",
			project: "[mcp.plan]\ncommand = \"a\"\n[mcp.\"a b\"]\ncommand = \"a\"\n[mcp.x__y]\ncommand = \"a\"\n",
			errs: []string{
				`{file}:1:6: mcp.plan: server name "plan" is reserved for stepwise's own plan__ tools`,
				`{file}:3:6: mcp."a b": server name "a b" must be letters, digits, - and _, without a double underscore, since its tools are named a b__<tool>`,
				`{file}:5:6: mcp.x__y: server name "x__y" must be letters, digits, - and _, without a double underscore, since its tools are named x__y__<tool>`,
			},
		},
		{
			name:    "mcp output_schema must be a table",
			project: "[mcp.x]\ncommand = \"a\"\n[mcp.x.tool_overrides.t]\noutput_schema = \"object\"\n",
			errs:    []string{`{file}:4:17: mcp.x.tool_overrides.t.output_schema: output_schema must be a table (a JSON Schema object)`},
		},

		// Provider references.
		{
			name: "every referenced provider exists",
			project: `[providers.anthropic]
type = "anthropic"
[providers.local]
type = "openai_compat"
base_url = "http://localhost:11434/v1"
[models]
default = { provider = "antropic", model = "m" }
[models.chat]
provider = "local"
model = "llama3"
fallbacks = [{ provider = "openai", model = "gpt-5" }]
[models.named.nano]
provider = "nope"
model = "x"
`,
			errs: []string{
				`{file}:7:24: models.default.provider: provider "antropic" is not configured under [providers] (configured: anthropic, local); did you mean 'anthropic'?`,
				`{file}:11:27: models.chat.fallbacks[0].provider: provider "openai" is not configured under [providers] (configured: anthropic, local)`,
				`{file}:13:12: models.named.nano.provider: provider "nope" is not configured under [providers] (configured: anthropic, local)`,
			},
		},
		{
			name:    "fallbacks written as an array of tables",
			project: "[providers.a]\ntype = \"openai\"\n[models.chat]\nprovider = \"a\"\nmodel = \"m\"\n[[models.chat.fallbacks]]\nprovider = \"a\"\nmodel = \"x\"\n[[models.chat.fallbacks]]\nprovider = \"zz\"\nmodel = \"y\"\n",
			errs:    []string{`{file}:10:12: models.chat.fallbacks[1].provider: provider "zz" is not configured under [providers] (configured: a)`},
		},
		{
			name:    "a model entry needs a provider and a model",
			project: "[providers.p]\ntype = \"openai\"\n[models.solver]\nmodel = \"x\"\n[models.judge]\nprovider = \"p\"\ntemperature = 3.5\n",
			errs: []string{
				`{file}:3:9: models.solver: provider is required`,
				`{file}:5:9: models.judge: model is required`,
				`{file}:7:15: models.judge.temperature: temperature must be between 0 and 2, got 3.5`,
			},
		},
		{
			name:    "named models may not shadow roles",
			project: "[providers.p]\ntype = \"openai\"\n[models.named.chat]\nprovider = \"p\"\nmodel = \"m\"\n[models.named]\ndefault = { provider = \"p\", model = \"m\" }\nok = { provider = \"p\", model = \"m\" }\n",
			errs: []string{
				`{file}:3:15: models.named.chat: named model "chat" shadows the chat role; choose another name`,
				`{file}:7:1: models.named.default: named model "default" shadows the default role; choose another name`,
			},
		},

		// Provider types.
		{
			name:    "unknown provider type",
			project: "[providers.x]\ntype = \"gemini\"\n[providers.y]\ntype = \"opnai\"\n[providers.z]\napi_key = \"k\"\n",
			errs: []string{
				`{file}:2:8: providers.x.type: unknown provider type "gemini" (valid: openai, openai_compat, anthropic, bedrock, script)`,
				`{file}:4:8: providers.y.type: unknown provider type "opnai" (valid: openai, openai_compat, anthropic, bedrock, script); did you mean 'openai'?`,
				`{file}:5:12: providers.z: type is required (valid: openai, openai_compat, anthropic, bedrock, script)`,
			},
		},
		{
			// The settings of the type it was meant to be are not warned
			// about: the type's own error says what is wrong.
			name:    "a misspelt anthropic type",
			project: "[providers.c]\ntype = \"antropic\"\n[models]\ndefault = { provider = \"c\", model = \"m\", max_tokens = 9000, effort = \"low\" }\n",
			errs: []string{
				`{file}:2:8: providers.c.type: unknown provider type "antropic" (valid: openai, openai_compat, anthropic, bedrock, script); did you mean 'anthropic'?`,
			},
		},
		{
			name:    "script needs a file and openai_compat a base_url",
			project: "[providers.s]\ntype = \"script\"\n[providers.c]\ntype = \"openai_compat\"\n[providers.o]\ntype = \"openai\"\nbase_url = \"localhost\"\nfile = \"x.yaml\"\n",
			errs: []string{
				`{file}:1:12: providers.s: a script provider needs file, the replies file it answers from`,
				`{file}:3:12: providers.c: an openai_compat provider needs base_url`,
				`{file}:7:12: providers.o.base_url: "localhost" is not an http or https URL`,
			},
			warnings: []string{
				`{file}:8:1: providers.o.file: file is used only by script providers; ignored for type openai`,
			},
		},

		// Settings of a model that the anthropic provider type reads.
		{
			name: "max_tokens, thinking and effort",
			project: `[providers.claude]
type = "anthropic"
[models]
default = { provider = "claude", model = "m", max_tokens = 0 }
chat = { provider = "claude", model = "m", thinking = { budget_tokens = 512 } }
solver = { provider = "claude", model = "m", max_tokens = 4000, thinking = { budget_tokens = 4000 } }
repair = { provider = "claude", model = "m", thinking = { type = "adaptive", budget_tokens = 2048 } }
judge = { provider = "claude", model = "m", thinking = { type = "deep" }, effort = "hgih" }
planner = { provider = "claude", model = "m", thinking = {} }
[models.named.ok]
provider = "claude"
model = "m"
max_tokens = 16000
thinking = { budget_tokens = 8000 }
effort = "xhigh"
fallbacks = [{ provider = "claude", model = "small", max_tokens = 8000 }]
`,
			errs: []string{
				`{file}:4:60: models.default.max_tokens: max_tokens must be at least 1, got 0`,
				`{file}:5:73: models.chat.thinking.budget_tokens: budget_tokens must be at least 1024, got 512`,
				`{file}:6:94: models.solver.thinking.budget_tokens: budget_tokens (4000) must be below max_tokens (4000), which bounds thinking and answer together; raise max_tokens or lower the budget`,
				`{file}:7:94: models.repair.thinking.budget_tokens: budget_tokens does not apply to adaptive thinking; use effort to guide it, or type = "enabled"`,
				`{file}:8:65: models.judge.thinking.type: unknown thinking type "deep" (valid: enabled, adaptive)`,
				`{file}:8:84: models.judge.effort: effort must be one of low, medium, high, xhigh, max, got "hgih"; did you mean 'high'?`,
				`{file}:9:47: models.planner.thinking: thinking needs budget_tokens (at least 1024), or type = "adaptive" to let the model decide`,
				// The fallback carries the primary's budget over, under a
				// max_tokens of its own that is too small for it.
				`{file}:16:67: models.named.ok.fallbacks[0].max_tokens: max_tokens (8000) must be above the thinking budget_tokens (8000) carried over from the primary; raise max_tokens or give this fallback a thinking table of its own`,
			},
		},
		{
			name: "temperature with an anthropic provider",
			project: `[providers.claude]
type = "anthropic"
[providers.oa]
type = "openai"
[models]
default = { provider = "claude", model = "m", temperature = 0.2 }
chat = { provider = "claude", model = "m", temperature = 0.2, thinking = { type = "adaptive" } }
solver = { provider = "oa", model = "g", max_tokens = 100, thinking = { type = "adaptive" }, effort = "low" }
[models.named.t]
provider = "claude"
model = "m"
thinking = { budget_tokens = 2000 }
fallbacks = [{ provider = "claude", model = "x", temperature = 0.5 }, { provider = "oa", model = "g", temperature = 0.5 }]
`,
			errs: []string{
				`{file}:7:58: models.chat.temperature: temperature cannot be set while thinking is on: the Messages API refuses a custom temperature with thinking; remove temperature or thinking`,
				`{file}:13:64: models.named.t.fallbacks[0].temperature: temperature cannot be set while thinking is on: the Messages API refuses a custom temperature with thinking; remove temperature or thinking`,
			},
			warnings: []string{
				`{file}:6:47: models.default.temperature: temperature is not sent to anthropic provider claude: the Messages API version it speaks refuses sampling parameters; ignored`,
				`{file}:8:42: models.solver.max_tokens: max_tokens is used only by anthropic providers; ignored for provider oa (type openai)`,
				`{file}:8:60: models.solver.thinking: thinking is used only by anthropic providers; ignored for provider oa (type openai)`,
				`{file}:8:94: models.solver.effort: effort is used only by anthropic providers; ignored for provider oa (type openai)`,
			},
		},

		// Pricing and settings.
		{
			name:    "a price needs input and output, not negative",
			project: "[pricing.m]\ninput = 1.0\n[pricing.\"gpt-4.1\"]\ninput = -1\noutput = 2\ncache_read = -0.5\n",
			errs: []string{
				`{file}:1:10: pricing.m: output is required (USD per million tokens)`,
				`{file}:4:9: pricing."gpt-4.1".input: input must not be negative, got -1`,
				`{file}:6:14: pricing."gpt-4.1".cache_read: cache_read must not be negative, got -0.5`,
			},
		},
		{
			name:    "settings bounds",
			project: "[settings]\nmax_agent_iterations = 0\nplanning_attempts = -1\n",
			errs: []string{
				`{file}:2:24: settings.max_agent_iterations: must be at least 1, got 0`,
				`{file}:3:21: settings.planning_attempts: must not be negative, got -1`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSandbox(t)
			s.writeProject(t, tt.project)
			fill := func(list []string) []string {
				out := make([]string, len(list))
				for i, e := range list {
					out[i] = strings.ReplaceAll(e, "{file}", s.projectFile())
				}
				return out
			}
			cfg, warnings, err := s.load(t, Options{})
			if got, want := diagStrings(warnings), fill(tt.warnings); !sameStrings(got, want) {
				t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if tt.errs == nil {
				if err != nil {
					t.Fatalf("Load: %v", err)
				}
				if tt.check != nil {
					tt.check(t, cfg)
				}
				return
			}
			if got, want := loadErrors(t, err), fill(tt.errs); !sameStrings(got, want) {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

func TestProviderAccess(t *testing.T) {
	s := newSandbox(t)
	s.writeProject(t, `[providers.claude]
type = "anthropic"
api_key = "${SW_UNSET_ANTHROPIC}"
[providers.aws]
type = "bedrock"
region = "us-east-1"
profile = "default"
[providers.demo]
type = "script"
file = "replies.yaml"
`)
	cfg, warnings := s.mustLoad(t, Options{})
	if len(warnings) > 0 {
		t.Errorf("warnings: %v", diagStrings(warnings))
	}
	tests := []struct {
		name      string
		provider  string
		want      string // the error; "" for none
		notUsable bool
	}{
		{
			name:      "anthropic is usable once its key is set",
			provider:  "claude",
			want:      s.projectFile() + ":3:11: providers.claude.api_key: environment variable SW_UNSET_ANTHROPIC is not set",
			notUsable: true,
		},
		{
			name:      "bedrock loads but is not usable",
			provider:  "aws",
			want:      s.projectFile() + ":5:8: providers.aws.type: stepwise does not support provider type bedrock yet (configured but not usable)",
			notUsable: true,
		},
		{
			name:     "script is usable",
			provider: "demo",
		},
		{
			name:     "an unknown name lists the configured ones",
			provider: "openai",
			want:     `provider "openai" is not configured (configured: aws, claude, demo)`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := cfg.Provider(tt.provider)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Provider: %v", err)
				}
				return
			}
			if err == nil || err.Error() != tt.want {
				t.Fatalf("error =\n%v\nwant\n%s", err, tt.want)
			}
			if errors.Is(err, ErrNotUsable) != tt.notUsable {
				t.Errorf("errors.Is(err, ErrNotUsable) = %v, want %v", !tt.notUsable, tt.notUsable)
			}
			var nc *NotConfiguredError
			if errors.As(err, &nc) == tt.notUsable {
				t.Errorf("NotConfiguredError = %v, want %v", !tt.notUsable, !tt.notUsable)
			}
		})
	}
	if _, err := cfg.MCPServer("none"); err == nil || err.Error() != `mcp server "none" is not configured (none are configured)` {
		t.Errorf("MCPServer(none) = %v", err)
	}
}

func TestPricing(t *testing.T) {
	s := newSandbox(t)
	s.writeProject(t, `[pricing."claude-sonnet-5"]
input = 3.00
output = 15.00
[pricing."custom"]
input = 2
output = 4
cache_write = 1
cache_read = 0
`)
	cfg, _ := s.mustLoad(t, Options{})
	tests := []struct {
		model string
		want  Rates
		ok    bool
	}{
		{"claude-sonnet-5", Rates{Input: 3, Output: 15, CacheWrite: 3.75, CacheRead: 0.3}, true},
		{"custom", Rates{Input: 2, Output: 4, CacheWrite: 1, CacheRead: 0}, true},
		{"unpriced", Rates{}, false},
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			got, ok := cfg.Price(tt.model)
			if ok != tt.ok || !near(got.Input, tt.want.Input) || !near(got.Output, tt.want.Output) ||
				!near(got.CacheWrite, tt.want.CacheWrite) || !near(got.CacheRead, tt.want.CacheRead) {
				t.Errorf("Price(%s) = %+v, %v; want %+v, %v", tt.model, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestDiagnosticString(t *testing.T) {
	tests := []struct {
		name string
		d    Diagnostic
		want string
	}{
		{"full", Diagnostic{Pos: yamlpos.Pos{File: "a.toml", Line: 3, Col: 7}, Key: "models.chat", Message: "bad"}, "a.toml:3:7: models.chat: bad"},
		{"no position", Diagnostic{Pos: yamlpos.Pos{File: "command line"}, Key: "storage.backend", Message: "bad"}, "command line: storage.backend: bad"},
		{"no file", Diagnostic{Key: "STEPWISE_STORAGE", Message: "bad"}, "STEPWISE_STORAGE: bad"},
		{"no key", Diagnostic{Pos: yamlpos.Pos{File: "a.toml", Line: 1, Col: 2}, Message: "syntax"}, "a.toml:1:2: syntax"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.d.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestSuggest(t *testing.T) {
	known := []string{"type", "api_key", "base_url", "strict_base_url", "file"}
	tests := []struct{ word, want string }{
		{"tpye", "type"},
		{"Type", "type"},
		{"apikey", "api_key"},
		{"base-url", "base_url"},
		{"fil", "file"},
		{"region2", ""},
		{"x", ""},
		{"", ""},
	}
	for _, tt := range tests {
		t.Run(tt.word, func(t *testing.T) {
			if got := suggest.Closest(tt.word, known); got != tt.want {
				t.Errorf("suggest(%q) = %q, want %q", tt.word, got, tt.want)
			}
		})
	}
}

func TestAncestors(t *testing.T) {
	tests := []struct {
		path string
		want []string
	}{
		{"a", []string{}},
		{"a.b[2].c", []string{"a.b[2]", "a.b", "a"}},
		{`pricing."gpt-4.1".input`, []string{`pricing."gpt-4.1"`, "pricing"}},
		{`mcp."a\"[b".url`, []string{`mcp."a\"[b"`, "mcp"}},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			if got := ancestors(tt.path); !sameStrings(got, tt.want) || len(got) != len(tt.want) {
				t.Errorf("ancestors(%s) = %q, want %q", tt.path, got, tt.want)
			}
		})
	}
}

// TestAnthropicBaseURL checks that ANTHROPIC_BASE_URL points the anthropic
// providers without a base_url of their own at a gateway, and only those.
func TestAnthropicBaseURL(t *testing.T) {
	project := `[providers.claude]
type = "anthropic"
api_key = "${SW_TEST_ANTHROPIC_KEY}"
[providers.pinned]
type = "anthropic"
base_url = "https://pinned.example/anthropic"
[providers.oa]
type = "openai"
`
	t.Run("set", func(t *testing.T) {
		s := newSandbox(t)
		s.writeProject(t, project)
		cfg, _ := s.mustLoad(t, Options{LookupEnv: withVars(map[string]string{
			EnvAnthropicBaseURL: "http://127.0.0.1:9/gw", "SW_TEST_ANTHROPIC_KEY": "k-123",
		})})
		for name, want := range map[string]string{"claude": "http://127.0.0.1:9/gw", "pinned": "https://pinned.example/anthropic", "oa": ""} {
			p, err := cfg.Provider(name)
			if err != nil {
				t.Fatalf("Provider(%s): %v", name, err)
			}
			if p.BaseURL != want {
				t.Errorf("%s base_url = %q, want %q", name, p.BaseURL, want)
			}
		}
		if p, _ := cfg.Provider("claude"); p.APIKey != "k-123" {
			t.Errorf("api_key = %q, want the variable's value", p.APIKey)
		}
	})
	t.Run("not a URL", func(t *testing.T) {
		s := newSandbox(t)
		s.writeProject(t, project)
		_, _, err := s.load(t, Options{LookupEnv: withVars(map[string]string{EnvAnthropicBaseURL: "gateway:8080"})})
		want := []string{`$ANTHROPIC_BASE_URL: providers.claude.base_url: "gateway:8080" is not an http or https URL`}
		if got := loadErrors(t, err); !sameStrings(got, want) {
			t.Errorf("errors = %q, want %q", got, want)
		}
	})
	t.Run("unset key is deferred until the provider is used", func(t *testing.T) {
		s := newSandbox(t)
		s.writeProject(t, project)
		cfg, _ := s.mustLoad(t, Options{LookupEnv: withVars(map[string]string{})})
		if _, err := cfg.Provider("pinned"); err != nil {
			t.Errorf("pinned: %v", err)
		}
		_, err := cfg.Provider("claude")
		if !errors.Is(err, ErrNotUsable) || !strings.Contains(err.Error(), "SW_TEST_ANTHROPIC_KEY is not set") {
			t.Errorf("claude: error = %v, want the unset variable", err)
		}
	})
}
