package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stepwise-dev/stepwise/debugger/workspace"
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

// TestModelsTestScript checks a script provider by loading its replies
// file, without taking a reply that a run of the project is owed.
func TestModelsTestScript(t *testing.T) {
	config := "[providers.demo]\ntype = \"script\"\nfile = \".stepwise/replies.yaml\"\n[models]\ndefault = { provider = \"demo\", model = \"scripted\" }\n"
	tests := []struct {
		name    string
		replies string
		code    int
		want    string
	}{
		{"a file that loads", "replies:\n  - match: E1\n    reply: { text: hi }\n", 0, "scripted: answers from .stepwise/replies.yaml, which loads"},
		{"a file that does not", "replies:\n  - match: E1\n    reply: { txet: hi }\n", 1, "replies.yaml:3:14"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scratchProject(t, config)
			if err := os.WriteFile(filepath.Join(".stepwise", "replies.yaml"), []byte(tt.replies), 0o644); err != nil {
				t.Fatal(err)
			}
			_, errOut, code := runCLI(t, "models", "test")
			if code != tt.code || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, want %d; stderr lacks %q:\n%s", code, tt.code, tt.want, errOut)
			}
		})
	}
}

// TestModelsTestUnknownJSON checks that --json gives an envelope that says
// why nothing was called, for a name the configuration does not have.
func TestModelsTestUnknownJSON(t *testing.T) {
	scratchProject(t, "[providers.demo]\ntype = \"script\"\nfile = \"r.yaml\"\n[models]\ndefault = { provider = \"demo\", model = \"m\" }\n")
	out, _, code := runCLI(t, "models", "test", "--json", "chta")
	var env workspace.ModelTest
	if err := json.Unmarshal([]byte(out), &env); err != nil || code != 1 || env.OK || env.Error == nil || !strings.Contains(*env.Error, "did you mean 'chat'?") {
		t.Errorf("exit %d, envelope %s (%v)", code, out, err)
	}
}
