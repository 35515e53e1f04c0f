package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"testing"
)

func TestVariableExpansion(t *testing.T) {
	vars := map[string]string{"SW_A": "alpha", "SW_KEY": "sk-123", "SW_HOST": "api.example.com", "SW_EMPTY": ""}
	tests := []struct {
		name     string
		global   string
		project  string
		check    func(t *testing.T, s *sandbox, cfg *Config)
		errs     []string // {file} is the project file, {global} the global one
		warnings []string
	}{
		{
			name: "set variables are replaced in every section",
			project: `[settings]
data_dir = "/d/${SW_A}"
[providers.o]
type = "openai"
api_key = "${SW_KEY}"
base_url = "https://${SW_HOST}/v1"
[mcp.m]
url = "https://x/mcp"
headers = { Authorization = "Bearer ${SW_KEY}" }
[mcp.m.tool_overrides.t]
output_schema = { type = "object", description = "${SW_A}", enum = ["${SW_A}"] }
[prompts]
chat = "Hi ${SW_A}, ${SW_A}."
`,
			check: func(t *testing.T, s *sandbox, cfg *Config) {
				if cfg.Settings.DataDir != "/d/alpha" {
					t.Errorf("data_dir = %s", cfg.Settings.DataDir)
				}
				p, err := cfg.Provider("o")
				if err != nil || p.APIKey != "sk-123" || p.BaseURL != "https://api.example.com/v1" {
					t.Errorf("provider = %+v, %v", p, err)
				}
				m, err := cfg.MCPServer("m")
				if err != nil || m.Headers["Authorization"] != "Bearer sk-123" {
					t.Errorf("server = %+v, %v", m, err)
				}
				want := map[string]any{"type": "object", "description": "alpha", "enum": []any{"alpha"}}
				if got := m.ToolOverrides["t"].OutputSchema; !reflect.DeepEqual(got, want) {
					t.Errorf("output_schema = %#v, want %#v", got, want)
				}
				if cfg.Prompts.Chat != "Hi alpha, alpha." {
					t.Errorf("prompts.chat = %q", cfg.Prompts.Chat)
				}
			},
		},
		{
			name:    "a variable set to empty is empty",
			project: "[providers.o]\ntype = \"openai\"\napi_key = \"${SW_EMPTY}\"\n",
			check: func(t *testing.T, s *sandbox, cfg *Config) {
				if p, err := cfg.Provider("o"); err != nil || p.APIKey != "" {
					t.Errorf("provider = %+v, %v", p, err)
				}
			},
		},
		{
			name: "unset in a provider is deferred to its use",
			project: `[providers.openai]
type = "openai"
api_key = "${SW_UNSET_KEY}"
[providers.other]
type = "openai"
`,
			check: func(t *testing.T, s *sandbox, cfg *Config) {
				if got := cfg.Providers["openai"].APIKey; got != "${SW_UNSET_KEY}" {
					t.Errorf("api_key = %q, want the literal text", got)
				}
				_, err := cfg.Provider("openai")
				want := s.projectFile() + ":3:11: providers.openai.api_key: environment variable SW_UNSET_KEY is not set"
				if err == nil || err.Error() != want {
					t.Fatalf("Provider error = %v, want %s", err, want)
				}
				if !errors.Is(err, ErrNotUsable) {
					t.Error("error does not wrap ErrNotUsable")
				}
				var ue *UnusableError
				if !errors.As(err, &ue) || ue.Var != "SW_UNSET_KEY" || ue.Key != "providers.openai.api_key" {
					t.Errorf("UnusableError = %+v", ue)
				}
				if _, err := cfg.Provider("other"); err != nil {
					t.Errorf("other provider: %v", err)
				}
			},
		},
		{
			name: "unset in an MCP server is deferred to its use",
			project: `[mcp.linear]
url = "https://mcp.linear.app/mcp"
headers = { Authorization = "Bearer ${SW_UNSET_TOKEN}", X-Org = "${SW_UNSET_ORG}" }
[mcp.ok]
command = "ok-mcp"
`,
			check: func(t *testing.T, s *sandbox, cfg *Config) {
				_, err := cfg.MCPServer("linear")
				want := s.projectFile() + ":3:29: mcp.linear.headers.Authorization: environment variable SW_UNSET_TOKEN is not set\n" +
					s.projectFile() + ":3:65: mcp.linear.headers.X-Org: environment variable SW_UNSET_ORG is not set"
				if err == nil || err.Error() != want {
					t.Fatalf("MCPServer error =\n%v\nwant\n%s", err, want)
				}
				if !errors.Is(err, ErrNotUsable) {
					t.Error("error does not wrap ErrNotUsable")
				}
				if _, err := cfg.MCPServer("ok"); err != nil {
					t.Errorf("ok server: %v", err)
				}
			},
		},
		{
			name: "unset anywhere else fails the load",
			project: `[settings]
data_dir = "${SW_UNSET_DIR}/x"
[plans]
paths = ["a", "${SW_UNSET_P}"]
[prompts]
chat = """
Hello ${SW_UNSET_NAME}"""
`,
			errs: []string{
				"{file}:2:12: settings.data_dir: environment variable SW_UNSET_DIR is not set",
				"{file}:4:15: plans.paths[1]: environment variable SW_UNSET_P is not set",
				"{file}:6:8: prompts.chat: environment variable SW_UNSET_NAME is not set",
			},
		},
		{
			name:    "a provider's type is needed at load",
			project: "[providers.o]\ntype = \"${SW_UNSET_T}\"\n",
			errs: []string{
				"{file}:2:8: providers.o.type: environment variable SW_UNSET_T is not set",
			},
		},
		{
			name:    "dollars that are not references stay literal",
			project: "[prompts]\nchat = \"costs $5, $$HOME, $HOME, $SW_A, $, $${SW_A}, and ${SW_A\"\n",
			check: func(t *testing.T, s *sandbox, cfg *Config) {
				want := "costs $5, $$HOME, $HOME, $SW_A, $, $alpha, and ${SW_A"
				if cfg.Prompts.Chat != want {
					t.Errorf("prompts.chat = %q, want %q", cfg.Prompts.Chat, want)
				}
			},
		},
		{
			name:    "a malformed reference is kept with a warning",
			project: "[prompts]\nsolver = \"use ${not-a-name} and ${}\"\n",
			check: func(t *testing.T, s *sandbox, cfg *Config) {
				if cfg.Prompts.Solver != "use ${not-a-name} and ${}" {
					t.Errorf("prompts.solver = %q", cfg.Prompts.Solver)
				}
			},
			warnings: []string{
				"{file}:2:10: prompts.solver: ${not-a-name} is not a variable reference (a name is letters, digits and _, not starting with a digit); it is kept as written",
				"{file}:2:10: prompts.solver: ${} is not a variable reference (a name is letters, digits and _, not starting with a digit); it is kept as written",
			},
		},
		{
			name:    "a key pasted into ${...} makes the provider unusable and is never shown",
			project: "[providers.claude]\ntype = \"anthropic\"\napi_key = \"${sk-ant-api03-PASTED}\"\n",
			check: func(t *testing.T, s *sandbox, cfg *Config) {
				_, err := cfg.Provider("claude")
				want := s.projectFile() + ":3:11: providers.claude.api_key: holds a ${...} that is not a variable reference (its text is not shown: it may be the key itself); " +
					`write the name of the environment variable that holds the key, as api_key = "${ANTHROPIC_API_KEY}"`
				if err == nil || err.Error() != want || !errors.Is(err, ErrNotUsable) {
					t.Errorf("Provider error = %v, want %s", err, want)
				}
			},
		},
		{
			name:    "an api_key reference without braces is sent as written, with a warning",
			project: "[providers.claude]\ntype = \"anthropic\"\napi_key = \"$ANTHROPIC_API_KEY\"\n",
			check: func(t *testing.T, s *sandbox, cfg *Config) {
				if p, err := cfg.Provider("claude"); err != nil || p.APIKey != "$ANTHROPIC_API_KEY" {
					t.Errorf("provider = %+v, %v", p, err)
				}
			},
			warnings: []string{"{file}:3:11: providers.claude.api_key: $ANTHROPIC_API_KEY is sent as written, not read from the environment: write ${ANTHROPIC_API_KEY} to read the variable"},
		},
		{
			name:    "keys are not expanded",
			project: "[mcp.m]\ncommand = \"m\"\nenv = { \"${SW_A}\" = \"${SW_A}\" }\n",
			check: func(t *testing.T, s *sandbox, cfg *Config) {
				want := map[string]string{"${SW_A}": "alpha"}
				if got := cfg.MCP["m"].Env; !reflect.DeepEqual(got, want) {
					t.Errorf("env = %v, want %v", got, want)
				}
			},
		},
		{
			name:    "a value a later layer replaces is never expanded",
			global:  "[settings]\ndata_dir = \"${SW_UNSET_DIR}\"\n[providers.o]\ntype = \"openai\"\napi_key = \"${SW_UNSET_KEY}\"\n",
			project: "[settings]\ndata_dir = \"/data\"\n[providers.o]\napi_key = \"${SW_KEY}\"\n",
			check: func(t *testing.T, s *sandbox, cfg *Config) {
				if cfg.Settings.DataDir != "/data" {
					t.Errorf("data_dir = %s", cfg.Settings.DataDir)
				}
				if p, err := cfg.Provider("o"); err != nil || p.APIKey != "sk-123" {
					t.Errorf("provider = %+v, %v", p, err)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSandbox(t)
			s.writeGlobal(t, tt.global)
			s.writeProject(t, tt.project)
			fill := func(list []string) []string {
				out := make([]string, len(list))
				for i, e := range list {
					e = strings.ReplaceAll(e, "{file}", s.projectFile())
					out[i] = strings.ReplaceAll(e, "{global}", s.globalFile())
				}
				return out
			}
			cfg, warnings, err := s.load(t, Options{LookupEnv: withVars(vars)})
			if got, want := diagStrings(warnings), fill(tt.warnings); !sameStrings(got, want) {
				t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if tt.errs != nil {
				got, want := loadErrors(t, err), fill(tt.errs)
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

func TestExpandVars(t *testing.T) {
	env := lookupFrom(map[string]string{"A": "1", "B_2": "two", "E": ""})
	tests := []struct {
		in, out            string
		missing, malformed []string
	}{
		{in: "plain", out: "plain"},
		{in: "${A}${B_2}", out: "1two"},
		{in: "x${E}y", out: "xy"},
		{in: "${NOPE} and ${NOPE}", out: "${NOPE} and ${NOPE}", missing: []string{"NOPE"}},
		{in: "$A $$ $ ${", out: "$A $$ $ ${"},
		{in: "${1A}", out: "${1A}", malformed: []string{"${1A}"}},
		{in: "${A", out: "${A"},
		{in: "}${A}{", out: "}1{"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			out, missing, malformed := expandVars(tt.in, env)
			if out != tt.out || !reflect.DeepEqual(missing, tt.missing) || !reflect.DeepEqual(malformed, tt.malformed) {
				t.Errorf("expandVars(%q) = %q, %v, %v; want %q, %v, %v", tt.in, out, missing, malformed, tt.out, tt.missing, tt.malformed)
			}
		})
	}
}

// TestRedact hides the values ${VAR}s in [providers.*] and [mcp.*]
// expanded to, long enough to be keys, and nothing else.
func TestRedact(t *testing.T) {
	s := newSandbox(t)
	s.writeProject(t, `[providers.o]
type = "openai"
api_key = "${SW_KEY}"
base_url = "https://gw.example/v1?token=${SW_TOKEN}"
[mcp.m]
command = "m"
args = ["--port", "${SW_PORT}", "--auth", "${SW_AUTH}"]
[prompts]
chat = "${SW_PROMPT}"
`)
	vars := map[string]string{"SW_KEY": "sk-1234567890", "SW_TOKEN": "tok-abcdefgh", "SW_PORT": "8080", "SW_AUTH": "sk-1234567890-extra", "SW_PROMPT": "be brief, always"}
	cfg, _, err := s.load(t, Options{LookupEnv: withVars(vars)})
	if err != nil {
		t.Fatal(err)
	}
	got := cfg.Redact("key sk-1234567890, auth sk-1234567890-extra, url https://gw.example/v1?token=tok-abcdefgh, port 8080, be brief, always")
	want := "key ${SW_KEY}, auth ${SW_AUTH}, url https://gw.example/v1?token=${SW_TOKEN}, port 8080, be brief, always"
	if got != want {
		t.Errorf("Redact:\n%s\nwant\n%s", got, want)
	}
}

// TestRedactQuotedForms hides a secret that holds a quote, a backslash and
// an ampersand in each form a message quotes it in: Go-quoted (an error's
// %q of a command line or a URL), in a JSON string, as JSON text inside a
// JSON string, and URL-escaped.
func TestRedactQuotedForms(t *testing.T) {
	const token = `tok&"q"\-98765`
	s := newSandbox(t)
	s.writeProject(t, "[mcp.m]\ncommand = \"m\"\nargs = [\"${SW_TOKEN}\"]\n")
	cfg, _, err := s.load(t, Options{LookupEnv: withVars(map[string]string{"SW_TOKEN": token})})
	if err != nil {
		t.Fatal(err)
	}
	once, _ := json.Marshal(token)
	twice, _ := json.Marshal(string(once))
	tests := map[string]string{
		"as it is":      "refused " + token,
		"Go-quoted":     fmt.Sprintf("(stdio: m %q)", token),
		"a URL":         fmt.Sprintf("Post %q", "http://127.0.0.1:1/mcp?token="+token),
		"JSON":          `{"args": ` + string(once) + `}`,
		"JSON in JSON":  `{"stdout": ` + string(twice) + `}`,
		"query-escaped": "http://127.0.0.1:1/mcp?token=" + url.QueryEscape(token),
		"path-escaped":  "http://127.0.0.1:1/" + url.PathEscape(token) + "/mcp",
	}
	for name, msg := range tests {
		t.Run(name, func(t *testing.T) {
			got := cfg.Redact(msg)
			if !strings.Contains(got, "${SW_TOKEN}") || strings.Contains(got, "98765") {
				t.Errorf("Redact(%s) = %s", msg, got)
			}
		})
	}
}

// TestSecretStream streams a reply that splits a key between pieces, in
// every place it can be split: the pieces let out, joined, are the reply
// redacted, and none of them holds a part of the key that could be joined
// with another's.
func TestSecretStream(t *testing.T) {
	const key = "sk-supersecret-12345"
	s := newSandbox(t)
	s.writeProject(t, "[providers.o]\ntype = \"openai\"\napi_key = \"${SW_KEY}\"\n")
	cfg, _, err := s.load(t, Options{LookupEnv: withVars(map[string]string{"SW_KEY": key})})
	if err != nil {
		t.Fatal(err)
	}
	reply := "the key is " + key + " ok, sk- is how keys start, and so does s"
	want := "the key is ${SW_KEY} ok, sk- is how keys start, and so does s"
	for cut := range len(reply) {
		stream := cfg.SecretStream()
		var joined strings.Builder
		for _, piece := range []string{reply[:cut], reply[cut:]} {
			out := stream.Next(piece)
			if strings.Contains(out, "secret") {
				t.Errorf("cut at %d: a piece lets out %q", cut, out)
			}
			joined.WriteString(out)
		}
		joined.WriteString(stream.End())
		if joined.String() != want {
			t.Errorf("cut at %d: the pieces join to %q", cut, joined.String())
		}
	}
	// Without secrets there is no stream, and a piece goes out as it is.
	var none *SecretStream
	if (*Config)(nil).SecretStream() != nil || none.Next("sk-") != "sk-" || none.End() != "" {
		t.Error("a nil stream holds text back")
	}
}
