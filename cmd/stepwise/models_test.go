package main

import (
	"strings"
	"testing"
)

// modelsConfig has a role that falls back to default, a named model behind
// a gateway whose key is unset, and a literal key that must never be shown.
const modelsConfig = `[providers.claude]
type = "anthropic"
api_key = "sk-ant-never-shown"
[providers.gw]
type = "anthropic"
base_url = "https://user:gw-password@gw.example/anthropic"
api_key = "${SW_TEST_UNSET_GW_KEY}"
[providers.oa]
type = "openai"
api_key = "sk-openai-never-shown"

[models]
default = { provider = "claude", model = "claude-sonnet-5", max_tokens = 16000, thinking = { budget_tokens = 4000 }, effort = "high" }
judge = { provider = "oa", model = "gpt-5", temperature = 0.0 }

[models.named.fast]
provider = "gw"
model = "claude-haiku-5"
description = "cheap and quick"
thinking = { type = "adaptive" }
fallbacks = [{ provider = "claude", model = "claude-sonnet-5", max_tokens = 4000 }]
`

func TestModelsList(t *testing.T) {
	scratchProject(t, modelsConfig)
	t.Setenv("ANTHROPIC_BASE_URL", "")
	runGolden(t, []cliCase{
		{"models list", []string{"models", "list", "--json"}, 0},
		{"models list text", []string{"models", "list"}, 0},
		{"models without a subcommand", []string{"models"}, 2},
	})
	for _, args := range [][]string{{"models", "list", "--json"}, {"models", "list"}} {
		stdout, stderr, _ := runCLI(t, args...)
		for _, secret := range []string{"never-shown", "gw-password"} {
			if strings.Contains(stdout+stderr, secret) {
				t.Errorf("%v shows a secret (%s):\n%s%s", args, secret, stdout, stderr)
			}
		}
	}

	t.Run("none configured", func(t *testing.T) {
		scratchProject(t, "")
		runGolden(t, []cliCase{
			{"models list none", []string{"models", "list", "--json"}, 0},
			{"models list none text", []string{"models", "list"}, 0},
		})
	})
}
