package config

import (
	"errors"
	"reflect"
	"testing"
)

const modelsConfig = `[providers.a]
type = "openai"
[providers.b]
type = "openai_compat"
base_url = "http://localhost:11434/v1"

[models]
default = { provider = "a", model = "big", temperature = 0.5 }
solver = { provider = "b", model = "small", fallbacks = [{ provider = "a", model = "big2" }, { provider = "b", model = "x", temperature = 0.1 }] }

[models.repair]
provider = "b"
model = "fixer"
temperature = 0.0
fallbacks = [{ provider = "a", model = "big" }]

[providers.claude]
type = "anthropic"
[models.named.deep]
provider = "claude"
model = "opus"
max_tokens = 32000
thinking = { budget_tokens = 16000 }
effort = "high"
fallbacks = [{ provider = "claude", model = "sonnet", max_tokens = 20000 }, { provider = "claude", model = "haiku", thinking = { type = "adaptive" }, effort = "low" }]

[models.named.nano]
provider = "b"
model = "tiny"
description = "fast and cheap; per-item map bodies"
fallbacks = [{ provider = "a", model = "t2" }]
`

func TestResolveModel(t *testing.T) {
	s := newSandbox(t)
	s.writeProject(t, modelsConfig)
	cfg, _ := s.mustLoad(t, Options{})
	tests := []struct {
		name    string
		want    ModelRef
		wantErr string
	}{
		{
			name: "chat",
			want: ModelRef{Name: "chat", Entry: "models.default", Provider: "a", Model: "big", Temperature: ptr(0.5), MaxTokens: 8192},
		},
		{
			name: "default",
			want: ModelRef{Name: "default", Entry: "models.default", Provider: "a", Model: "big", Temperature: ptr(0.5), MaxTokens: 8192},
		},
		{
			name: "solver",
			want: ModelRef{Name: "solver", Entry: "models.solver", Provider: "b", Model: "small", MaxTokens: 8192, Fallbacks: []Fallback{
				{Provider: "a", Model: "big2", MaxTokens: 8192},
				{Provider: "b", Model: "x", Temperature: ptr(0.1), MaxTokens: 8192},
			}},
		},
		{
			name: "repair",
			want: ModelRef{Name: "repair", Entry: "models.repair", Provider: "b", Model: "fixer", Temperature: ptr(0.0), MaxTokens: 8192, Fallbacks: []Fallback{
				{Provider: "a", Model: "big", Temperature: ptr(0.0), MaxTokens: 8192}, // the primary's temperature carries over
			}},
		},
		{
			name: "nano",
			want: ModelRef{Name: "nano", Entry: "models.named.nano", Provider: "b", Model: "tiny", MaxTokens: 8192,
				Description: "fast and cheap; per-item map bodies", Fallbacks: []Fallback{{Provider: "a", Model: "t2", MaxTokens: 8192}}},
		},
		{
			name: "deep",
			want: ModelRef{Name: "deep", Entry: "models.named.deep", Provider: "claude", Model: "opus",
				MaxTokens: 32000, Thinking: &Thinking{Type: "enabled", BudgetTokens: 16000}, Effort: "high",
				Fallbacks: []Fallback{
					// What a fallback leaves out carries over from the primary.
					{Provider: "claude", Model: "sonnet", MaxTokens: 20000, Thinking: &Thinking{Type: "enabled", BudgetTokens: 16000}, Effort: "high"},
					{Provider: "claude", Model: "haiku", MaxTokens: 32000, Thinking: &Thinking{Type: "adaptive"}, Effort: "low"},
				}},
		},
		{
			name:    "huge",
			wantErr: `model "huge" is not configured (configured: default, chat, planner, solver, repair, judge, deep, nano)`,
		},
		{
			name:    "",
			wantErr: `model "" is not configured (configured: default, chat, planner, solver, repair, judge, deep, nano)`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := cfg.ResolveModel(tt.name)
			if tt.wantErr != "" {
				var nc *NotConfiguredError
				if err == nil || err.Error() != tt.wantErr || !errors.As(err, &nc) {
					t.Fatalf("error = %v, want %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ResolveModel: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ResolveModel(%q) =\n%+v\nwant\n%+v", tt.name, got, tt.want)
			}
		})
	}

	t.Run("the result is a copy", func(t *testing.T) {
		ref, _ := cfg.ResolveModel("repair")
		*ref.Temperature = 1.5
		*ref.Fallbacks[0].Temperature = 1.5
		deep, _ := cfg.ResolveModel("deep")
		deep.Thinking.BudgetTokens = 1
		deep.Fallbacks[0].Thinking.BudgetTokens = 1
		ref.Fallbacks[0].Model = "changed"
		again, _ := cfg.ResolveModel("repair")
		deepAgain, _ := cfg.ResolveModel("deep")
		if deepAgain.Thinking.BudgetTokens != 16000 || deepAgain.Fallbacks[0].Thinking.BudgetTokens != 16000 {
			t.Errorf("changing a thinking table of a result changed the config: %+v", deepAgain)
		}
		if *again.Temperature != 0 || *again.Fallbacks[0].Temperature != 0 || again.Fallbacks[0].Model != "big" {
			t.Errorf("changing a result changed the config: %+v", again)
		}
	})
}

func TestResolveModelWithoutDefault(t *testing.T) {
	s := newSandbox(t)
	s.writeProject(t, `[providers.a]
type = "openai"
[models.chat]
provider = "a"
model = "m"
[models.named.zeta]
provider = "a"
model = "z"
[models.named.alpha]
provider = "a"
model = "y"
`)
	cfg, _ := s.mustLoad(t, Options{})
	if got, want := cfg.ModelNames(), []string{"chat", "alpha", "zeta"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ModelNames = %v, want %v", got, want)
	}
	if _, err := cfg.ResolveModel("chat"); err != nil {
		t.Errorf("chat: %v", err)
	}
	_, err := cfg.ResolveModel("judge")
	if want := `model "judge" is not configured (configured: chat, alpha, zeta)`; err == nil || err.Error() != want {
		t.Errorf("judge: error = %v, want %s", err, want)
	}
}

func TestModelNamesEmpty(t *testing.T) {
	s := newSandbox(t)
	cfg, _ := s.mustLoad(t, Options{})
	if got := cfg.ModelNames(); len(got) != 0 {
		t.Errorf("ModelNames = %v, want none", got)
	}
	_, err := cfg.ResolveModel("chat")
	if want := `model "chat" is not configured (none are configured)`; err == nil || err.Error() != want {
		t.Errorf("error = %v, want %s", err, want)
	}
}
