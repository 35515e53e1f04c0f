package config

import (
	"log/slog"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestLayering(t *testing.T) {
	tests := []struct {
		name    string
		global  string
		project string
		check   func(t *testing.T, s *sandbox, cfg *Config)
	}{
		{
			name: "no files gives the defaults",
			check: func(t *testing.T, s *sandbox, cfg *Config) {
				want := Settings{
					DataDir:               filepath.Join(s.dataHome, "stepwise"),
					MaxAgentIterations:    15,
					PlanningAttempts:      2,
					LLMTimeoutSeconds:     600,
					LLMIdleTimeoutSeconds: 60,
					RetryAfterCapSeconds:  60,
				}
				if cfg.Settings != want {
					t.Errorf("settings = %+v, want %+v", cfg.Settings, want)
				}
				if cfg.Storage.Backend != BackendSQLite {
					t.Errorf("backend = %q, want sqlite", cfg.Storage.Backend)
				}
				if len(cfg.Files) != 0 {
					t.Errorf("files = %v, want none", cfg.Files)
				}
			},
		},
		{
			name:    "project scalar beats global",
			global:  "[settings]\nmax_agent_iterations = 9\nplanning_attempts = 4\n",
			project: "[settings]\nmax_agent_iterations = 3\n",
			check: func(t *testing.T, s *sandbox, cfg *Config) {
				if cfg.Settings.MaxAgentIterations != 3 || cfg.Settings.PlanningAttempts != 4 {
					t.Errorf("settings = %+v, want iterations 3 from the project, attempts 4 from global", cfg.Settings)
				}
				if !reflect.DeepEqual(cfg.Files, []string{s.globalFile(), s.projectFile()}) {
					t.Errorf("files = %v", cfg.Files)
				}
			},
		},
		{
			name: "project role replaces only that role, whole",
			global: `[providers.a]
type = "openai"
[providers.b]
type = "openai"
[models]
default = { provider = "a", model = "big" }
chat = { provider = "a", model = "mid", temperature = 0.7, fallbacks = [{ provider = "b", model = "x" }] }
`,
			project: `[models.chat]
provider = "b"
model = "small"
`,
			check: func(t *testing.T, s *sandbox, cfg *Config) {
				if d := cfg.Models.Default; d == nil || d.Model != "big" {
					t.Errorf("default = %+v, want the global entry", d)
				}
				want := &ModelEntry{Provider: "b", Model: "small"}
				if !reflect.DeepEqual(cfg.Models.Chat, want) {
					t.Errorf("chat = %+v, want %+v (no temperature or fallbacks carried over)", cfg.Models.Chat, want)
				}
			},
		},
		{
			name:    "named models merge by name and replace whole",
			global:  "[providers.a]\ntype = \"openai\"\n[models.named.nano]\nprovider = \"a\"\nmodel = \"n1\"\ndescription = \"cheap\"\n[models.named.mini]\nprovider = \"a\"\nmodel = \"m1\"\n",
			project: "[models.named.nano]\nprovider = \"a\"\nmodel = \"n2\"\n",
			check: func(t *testing.T, s *sandbox, cfg *Config) {
				if got := cfg.Models.Named["nano"]; got.Model != "n2" || got.Description != "" {
					t.Errorf("nano = %+v, want the project entry alone", got)
				}
				if got := cfg.Models.Named["mini"]; got.Model != "m1" {
					t.Errorf("mini = %+v, want the global entry", got)
				}
			},
		},
		{
			name:    "providers merge key by key",
			global:  "[providers.local]\ntype = \"openai_compat\"\nbase_url = \"http://a:1/v1\"\napi_key = \"k\"\n",
			project: "[providers.local]\nbase_url = \"http://b:2/v1\"\nstrict_base_url = true\n",
			check: func(t *testing.T, s *sandbox, cfg *Config) {
				want := Provider{Type: ProviderOpenAICompat, BaseURL: "http://b:2/v1", APIKey: "k", StrictBaseURL: true}
				if got := cfg.Providers["local"]; got != want {
					t.Errorf("local = %+v, want %+v", got, want)
				}
			},
		},
		{
			name:    "mcp servers merge key by key",
			global:  "[mcp.gh]\ncommand = \"gh-mcp\"\nargs = [\"serve\"]\nenv = { A = \"1\", B = \"2\" }\n",
			project: "[mcp.gh]\nenv = { B = \"3\" }\ninclude_tools = [\"get_issue\"]\n[mcp.gh.tool_overrides.get_issue]\ndescription = \"Fetch one issue.\"\n",
			check: func(t *testing.T, s *sandbox, cfg *Config) {
				got := cfg.MCP["gh"]
				want := MCPServer{
					Command: "gh-mcp", Args: []string{"serve"},
					Env:          map[string]string{"A": "1", "B": "3"},
					IncludeTools: []string{"get_issue"},
					ToolOverrides: map[string]ToolOverride{
						"get_issue": {Description: "Fetch one issue."},
					},
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("gh = %+v, want %+v", got, want)
				}
				if got.Transport() != "stdio" {
					t.Errorf("transport = %s, want stdio", got.Transport())
				}
			},
		},
		{
			name:    "a later url replaces an earlier command",
			global:  "[mcp.linear]\ncommand = \"linear-mcp\"\nargs = [\"x\"]\nenv = { K = \"v\" }\ninclude_tools = [\"a\"]\n",
			project: "[mcp.linear]\nurl = \"https://mcp.linear.app/mcp\"\n",
			check: func(t *testing.T, s *sandbox, cfg *Config) {
				got := cfg.MCP["linear"]
				want := MCPServer{URL: "https://mcp.linear.app/mcp", IncludeTools: []string{"a"}}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("linear = %+v, want %+v", got, want)
				}
				if got.Transport() != "http" {
					t.Errorf("transport = %s, want http", got.Transport())
				}
			},
		},
		{
			name:    "arrays are replaced, not appended",
			global:  "[tools]\npacks = [\"github\", \"slack\"]\n",
			project: "[tools]\npacks = [\"slack\"]\n",
			check: func(t *testing.T, s *sandbox, cfg *Config) {
				if !reflect.DeepEqual(cfg.Tools.Packs, []string{"slack"}) {
					t.Errorf("packs = %v", cfg.Tools.Packs)
				}
			},
		},
		{
			name:    "a price is replaced whole",
			global:  "[pricing.\"m\"]\ninput = 2.0\noutput = 8.0\ncache_read = 0.5\n[pricing.other]\ninput = 1\noutput = 1\n",
			project: "[pricing.m]\ninput = 3.0\noutput = 15.0\n",
			check: func(t *testing.T, s *sandbox, cfg *Config) {
				want := Price{Input: 3, Output: 15}
				if got := cfg.Pricing["m"]; !reflect.DeepEqual(got, want) {
					t.Errorf("m = %+v, want %+v", got, want)
				}
				if _, ok := cfg.Pricing["other"]; !ok {
					t.Error("global price for other is gone")
				}
			},
		},
		{
			name:    "sections the project leaves out keep the global values",
			global:  "[user]\nname = \"Ada\"\ntimezone = \"Europe/London\"\n[prompts]\nchat = \"Be brief.\"\n",
			project: "[user]\ncontext = \"Runs the release train.\"\n",
			check: func(t *testing.T, s *sandbox, cfg *Config) {
				want := User{Name: "Ada", Context: "Runs the release train.", Timezone: "Europe/London"}
				if cfg.User != want {
					t.Errorf("user = %+v, want %+v", cfg.User, want)
				}
				if cfg.Prompts.Chat != "Be brief." {
					t.Errorf("prompts.chat = %q", cfg.Prompts.Chat)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSandbox(t)
			s.writeGlobal(t, tt.global)
			s.writeProject(t, tt.project)
			cfg, warnings := s.mustLoad(t, Options{})
			if len(warnings) > 0 {
				t.Errorf("warnings: %v", diagStrings(warnings))
			}
			tt.check(t, s, cfg)
		})
	}
}

func TestPaths(t *testing.T) {
	tests := []struct {
		name    string
		global  string
		project string
		env     map[string]string // set with t.Setenv
		noProj  bool
		check   func(t *testing.T, s *sandbox, cfg *Config)
	}{
		{
			name: "defaults inside a project",
			check: func(t *testing.T, s *sandbox, cfg *Config) {
				proj := filepath.Join(s.work, ".stepwise")
				global := filepath.Join(s.configHome, "stepwise")
				wantPlans := []string{filepath.Join(proj, "plans"), filepath.Join(global, "plans")}
				wantTools := []string{filepath.Join(proj, "tools"), filepath.Join(global, "tools")}
				if !reflect.DeepEqual(cfg.Plans.Paths, wantPlans) {
					t.Errorf("plans.paths = %v, want %v", cfg.Plans.Paths, wantPlans)
				}
				if !reflect.DeepEqual(cfg.Tools.Paths, wantTools) {
					t.Errorf("tools.paths = %v, want %v", cfg.Tools.Paths, wantTools)
				}
				data := filepath.Join(s.dataHome, "stepwise")
				if cfg.Settings.DataDir != data {
					t.Errorf("data_dir = %s, want %s", cfg.Settings.DataDir, data)
				}
				if want := filepath.Join(data, "workbench.log"); cfg.Workbench.LogPath != want {
					t.Errorf("log_path = %s, want %s", cfg.Workbench.LogPath, want)
				}
				if cfg.Project == nil || cfg.Project.Root != s.work {
					t.Errorf("project = %+v, want root %s", cfg.Project, s.work)
				}
			},
		},
		{
			name:   "defaults outside a project",
			noProj: true,
			check: func(t *testing.T, s *sandbox, cfg *Config) {
				want := []string{filepath.Join(s.configHome, "stepwise", "plans")}
				if !reflect.DeepEqual(cfg.Plans.Paths, want) {
					t.Errorf("plans.paths = %v, want %v", cfg.Plans.Paths, want)
				}
				if cfg.Project != nil {
					t.Errorf("project = %+v, want nil", cfg.Project)
				}
			},
		},
		{
			name:    "project paths resolve against the project root",
			project: "[settings]\ndata_dir = \"state\"\n[plans]\npaths = [\"./.stepwise/plans\", \"/abs/plans\"]\n[workbench]\nlog_path = \"logs/wb.log\"\n[providers.demo]\ntype = \"script\"\nfile = \"replies/demo.yaml\"\n",
			check: func(t *testing.T, s *sandbox, cfg *Config) {
				if want := filepath.Join(s.work, "state"); cfg.Settings.DataDir != want {
					t.Errorf("data_dir = %s, want %s", cfg.Settings.DataDir, want)
				}
				want := []string{filepath.Join(s.work, ".stepwise", "plans"), "/abs/plans"}
				if !reflect.DeepEqual(cfg.Plans.Paths, want) {
					t.Errorf("plans.paths = %v, want %v", cfg.Plans.Paths, want)
				}
				if want := filepath.Join(s.work, "logs", "wb.log"); cfg.Workbench.LogPath != want {
					t.Errorf("log_path = %s, want %s", cfg.Workbench.LogPath, want)
				}
				if want := filepath.Join(s.work, "replies", "demo.yaml"); cfg.Providers["demo"].File != want {
					t.Errorf("file = %s, want %s", cfg.Providers["demo"].File, want)
				}
			},
		},
		{
			name:   "global paths resolve against the global directory",
			global: "[settings]\ndata_dir = \"data\"\n[tools]\npaths = [\"tools\"]\n",
			check: func(t *testing.T, s *sandbox, cfg *Config) {
				dir := filepath.Join(s.configHome, "stepwise")
				if want := filepath.Join(dir, "data"); cfg.Settings.DataDir != want {
					t.Errorf("data_dir = %s, want %s", cfg.Settings.DataDir, want)
				}
				if want := []string{filepath.Join(dir, "tools")}; !reflect.DeepEqual(cfg.Tools.Paths, want) {
					t.Errorf("tools.paths = %v, want %v", cfg.Tools.Paths, want)
				}
				// The log follows data_dir when it is not set.
				if want := filepath.Join(dir, "data", "workbench.log"); cfg.Workbench.LogPath != want {
					t.Errorf("log_path = %s, want %s", cfg.Workbench.LogPath, want)
				}
			},
		},
		{
			name:    "tilde is the home directory",
			project: "[settings]\ndata_dir = \"~/.local/share/sw\"\n[plans]\npaths = [\"~\"]\n",
			check: func(t *testing.T, s *sandbox, cfg *Config) {
				if want := filepath.Join(s.home, ".local", "share", "sw"); cfg.Settings.DataDir != want {
					t.Errorf("data_dir = %s, want %s", cfg.Settings.DataDir, want)
				}
				if want := []string{s.home}; !reflect.DeepEqual(cfg.Plans.Paths, want) {
					t.Errorf("plans.paths = %v, want %v", cfg.Plans.Paths, want)
				}
			},
		},
		{
			name: "unset XDG variables default under the home directory",
			env:  map[string]string{"XDG_CONFIG_HOME": "", "XDG_DATA_HOME": "relative/is/ignored"},
			check: func(t *testing.T, s *sandbox, cfg *Config) {
				if want := filepath.Join(s.home, ".local", "share", "stepwise"); cfg.Settings.DataDir != want {
					t.Errorf("data_dir = %s, want %s", cfg.Settings.DataDir, want)
				}
				want := filepath.Join(s.home, ".config", "stepwise", "plans")
				if got := cfg.Plans.Paths[len(cfg.Plans.Paths)-1]; got != want {
					t.Errorf("global plans path = %s, want %s", got, want)
				}
			},
		},
		{
			name:    "a variable in a path expands before it resolves",
			project: "[settings]\ndata_dir = \"${SW_STATE}/sw\"\n",
			env:     map[string]string{"SW_STATE": "rel"},
			check: func(t *testing.T, s *sandbox, cfg *Config) {
				if want := filepath.Join(s.work, "rel", "sw"); cfg.Settings.DataDir != want {
					t.Errorf("data_dir = %s, want %s", cfg.Settings.DataDir, want)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSandbox(t)
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			s.writeGlobal(t, tt.global)
			if !tt.noProj {
				s.writeProject(t, tt.project)
			}
			cfg, _ := s.mustLoad(t, Options{})
			tt.check(t, s, cfg)
		})
	}
}

func TestGlobalConfigFile(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"XDG_CONFIG_HOME", map[string]string{"XDG_CONFIG_HOME": "/x", "HOME": "/h"}, "/x/stepwise/config.toml"},
		{"home fallback", map[string]string{"HOME": "/h"}, "/h/.config/stepwise/config.toml"},
		{"relative XDG_CONFIG_HOME is ignored", map[string]string{"XDG_CONFIG_HOME": "x", "HOME": "/h"}, "/h/.config/stepwise/config.toml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := GlobalConfigFile(lookupFrom(tt.env)); got != tt.want {
				t.Errorf("GlobalConfigFile = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestEnvironmentAndOverrides(t *testing.T) {
	tests := []struct {
		name    string
		project string
		env     map[string]string
		ov      Overrides
		check   func(t *testing.T, s *sandbox, cfg *Config)
		errs    []string // with {file} for the project file
	}{
		{
			name:    "STEPWISE_STORAGE beats the file",
			project: "[storage]\nbackend = \"sqlite\"\n",
			env:     map[string]string{EnvStorage: "memory"},
			check: func(t *testing.T, s *sandbox, cfg *Config) {
				if cfg.Storage.Backend != BackendMemory {
					t.Errorf("backend = %s, want memory", cfg.Storage.Backend)
				}
			},
		},
		{
			name: "an invalid STEPWISE_STORAGE fails the load",
			env:  map[string]string{EnvStorage: "postgres"},
			errs: []string{`STEPWISE_STORAGE: invalid storage backend "postgres" (valid: sqlite, memory)`},
		},
		{
			name:    "an invalid backend in the file fails the load",
			project: "[storage]\nbackend = \"redis\"\n",
			errs:    []string{`{file}:2:11: storage.backend: invalid storage backend "redis" (valid: sqlite, memory)`},
		},
		{
			name:    "STEPWISE_WORKBENCH_LOG beats log_path and resolves against the working directory",
			project: "[workbench]\nlog_path = \"/var/log/wb.log\"\n",
			env:     map[string]string{EnvWorkbenchLog: "wb.log", EnvLog: "debug"},
			check: func(t *testing.T, s *sandbox, cfg *Config) {
				if want := filepath.Join(s.work, "wb.log"); cfg.Workbench.LogPath != want {
					t.Errorf("log_path = %s, want %s", cfg.Workbench.LogPath, want)
				}
				if cfg.Log != "debug" {
					t.Errorf("log = %q, want debug", cfg.Log)
				}
			},
		},
		{
			name:    "GRAPH_STORAGE=memory where STEPWISE_STORAGE is unset",
			project: "[storage]\nbackend = \"sqlite\"\n",
			env:     map[string]string{EnvGraphStorage: "memory"},
			check: func(t *testing.T, s *sandbox, cfg *Config) {
				if cfg.Storage.Backend != BackendMemory {
					t.Errorf("backend = %s, want memory", cfg.Storage.Backend)
				}
			},
		},
		{
			name:    "GRAPH_STORAGE=file is the sqlite store",
			project: "[storage]\nbackend = \"memory\"\n",
			env:     map[string]string{EnvGraphStorage: "file"},
			check: func(t *testing.T, s *sandbox, cfg *Config) {
				if cfg.Storage.Backend != BackendSQLite {
					t.Errorf("backend = %s, want sqlite", cfg.Storage.Backend)
				}
			},
		},
		{
			name: "STEPWISE_* beat GRAPH_*",
			env: map[string]string{EnvStorage: "sqlite", EnvGraphStorage: "memory", EnvLog: "info", EnvGraphLog: "debug",
				EnvWorkbenchLog: "/stepwise.log", EnvGraphWorkbenchLog: "/graph.log"},
			check: func(t *testing.T, s *sandbox, cfg *Config) {
				if cfg.Storage.Backend != BackendSQLite || cfg.Log != "info" || cfg.Workbench.LogPath != "/stepwise.log" {
					t.Errorf("storage %s, log %q, log_path %s: want stepwise's", cfg.Storage.Backend, cfg.Log, cfg.Workbench.LogPath)
				}
			},
		},
		{
			name:    "GRAPH_LOG and GRAPH_WORKBENCH_LOG where stepwise's are unset",
			project: "[workbench]\nlog_path = \"/var/log/wb.log\"\n",
			env:     map[string]string{EnvGraphWorkbenchLog: "graph.log", EnvGraphLog: "graph_core=debug"},
			check: func(t *testing.T, s *sandbox, cfg *Config) {
				if want := filepath.Join(s.work, "graph.log"); cfg.Workbench.LogPath != want {
					t.Errorf("log_path = %s, want %s", cfg.Workbench.LogPath, want)
				}
				if cfg.Log != "graph_core=debug" {
					t.Errorf("log = %q, want graph_core=debug", cfg.Log)
				}
			},
		},
		{
			name: "an invalid GRAPH_STORAGE fails the load with graph's values",
			env:  map[string]string{EnvGraphStorage: "sqlite"},
			errs: []string{`GRAPH_STORAGE: invalid storage backend "sqlite" (valid: file, memory)`},
		},
		{
			name: "flags beat the environment",
			env:  map[string]string{EnvStorage: "memory", EnvWorkbenchLog: "/env.log", EnvLog: "info"},
			ov: Overrides{
				Storage: BackendSQLite, WorkbenchLog: "/flag.log", Log: "trace",
				DataDir: "d", MaxAgentIterations: 4,
			},
			check: func(t *testing.T, s *sandbox, cfg *Config) {
				if cfg.Storage.Backend != BackendSQLite || cfg.Workbench.LogPath != "/flag.log" || cfg.Log != "trace" {
					t.Errorf("storage %s, log_path %s, log %s: want the flags", cfg.Storage.Backend, cfg.Workbench.LogPath, cfg.Log)
				}
				if want := filepath.Join(s.work, "d"); cfg.Settings.DataDir != want {
					t.Errorf("data_dir = %s, want %s", cfg.Settings.DataDir, want)
				}
				if cfg.Settings.MaxAgentIterations != 4 {
					t.Errorf("iterations = %d, want 4", cfg.Settings.MaxAgentIterations)
				}
			},
		},
		{
			name:    "override providers and roles replace whole entries",
			project: "[providers.openai]\ntype = \"openai\"\napi_key = \"${NOT_SET_ANYWHERE}\"\n[models]\ndefault = { provider = \"openai\", model = \"gpt-5\" }\n",
			ov: Overrides{
				Providers: map[string]Provider{"openai": {Type: ProviderScript, File: "replies.yaml"}},
				Models:    map[string]ModelEntry{RoleChat: {Provider: "openai", Model: "scripted"}},
			},
			check: func(t *testing.T, s *sandbox, cfg *Config) {
				p, err := cfg.Provider("openai")
				if err != nil {
					t.Fatalf("Provider: %v (the overridden entry should not keep the old deferred error)", err)
				}
				if want := filepath.Join(s.work, "replies.yaml"); p.File != want || p.APIKey != "" {
					t.Errorf("provider = %+v, want the override with file %s", p, want)
				}
				if cfg.Models.Chat == nil || cfg.Models.Chat.Model != "scripted" {
					t.Errorf("chat = %+v", cfg.Models.Chat)
				}
			},
		},
		{
			name: "an override role must be a role and name a provider",
			ov:   Overrides{Models: map[string]ModelEntry{"fast": {Provider: "x", Model: "y"}, RoleJudge: {Provider: "nope", Model: "y"}}},
			errs: []string{
				`command line: models.fast: "fast" is not a model role (roles: default, chat, planner, solver, repair, judge)`,
				`command line: models.judge.provider: provider "nope" is not configured under [providers] (none are configured)`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSandbox(t)
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			s.writeProject(t, tt.project)
			cfg, _, err := s.load(t, Options{Overrides: tt.ov})
			if tt.errs != nil {
				got := loadErrors(t, err)
				want := make([]string, len(tt.errs))
				for i, e := range tt.errs {
					want[i] = strings.ReplaceAll(e, "{file}", s.projectFile())
				}
				if !sameStrings(got, want) {
					t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
				return
			}
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			tt.check(t, s, cfg)
		})
	}
}

func TestMissingFilesAndReadErrors(t *testing.T) {
	s := newSandbox(t)
	// A directory where the global file should be cannot be read.
	mkdir(t, s.globalFile())
	_, _, err := s.load(t, Options{})
	got := loadErrors(t, err)
	if len(got) != 1 || !strings.HasPrefix(got[0], s.globalFile()+": ") {
		t.Errorf("errors = %v, want one read error for %s", got, s.globalFile())
	}
}

// TestLogLevel reads log filters as stepwise and graph write them: the
// most verbose level named counts.
func TestLogLevel(t *testing.T) {
	tests := []struct {
		filter string
		want   slog.Level
		ok     bool
	}{
		{"debug", slog.LevelDebug, true},
		{"INFO", slog.LevelInfo, true},
		{"trace", slog.LevelDebug, true},
		{"warn", slog.LevelWarn, true},
		{"error", slog.LevelError, true},
		{"off", levelOff, true},
		{"graph_core=debug,info", slog.LevelDebug, true},
		{"graph=warn, graph_cli=error", slog.LevelWarn, true},
		{"verbose", 0, false},
		{"graph_core=loud", 0, false},
	}
	for _, tt := range tests {
		got, ok := logLevel(tt.filter)
		if ok != tt.ok || ok && got != tt.want {
			t.Errorf("logLevel(%q) = %v, %v; want %v, %v", tt.filter, got, ok, tt.want, tt.ok)
		}
	}
}

// TestLogLevelWarning checks that a filter naming no level is a warning
// that says what set it, and that the workbench then logs at debug.
func TestLogLevelWarning(t *testing.T) {
	s := newSandbox(t)
	cfg, warnings, err := s.load(t, Options{LookupEnv: withVars(map[string]string{EnvGraphLog: "loud"})})
	if err != nil {
		t.Fatal(err)
	}
	want := `$GRAPH_LOG: log filter "loud" names no level (trace, debug, info, warn, error or off, as LEVEL or TARGET=LEVEL, comma-separated); logging at debug`
	if got := diagStrings(warnings); len(got) != 1 || got[0] != want || cfg.LogLevel != slog.LevelDebug {
		t.Errorf("warnings %q, level %v; want %q at debug", got, cfg.LogLevel, want)
	}
}

// TestUserOnly: a load that leaves projects out reads the global layer
// only, though it starts inside a project whose config sets the same keys.
func TestUserOnly(t *testing.T) {
	s := newSandbox(t)
	s.writeGlobal(t, "[settings]\ndata_dir = \"data\"\n")
	s.writeProject(t, "[settings]\ndata_dir = \"state\"\n")
	cfg, _ := s.mustLoad(t, Options{UserOnly: true})
	if want := filepath.Join(s.configHome, "stepwise", "data"); cfg.Settings.DataDir != want {
		t.Errorf("data_dir = %s, want the global %s", cfg.Settings.DataDir, want)
	}
	if cfg.Project != nil {
		t.Errorf("project = %+v, want none", cfg.Project)
	}
}
