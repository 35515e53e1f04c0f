package model

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/stepwise-dev/stepwise/engine/chat"
)

// TestReplayAnswersFromTheRecord plays calls against recorded calls: each
// call takes the next recorded reply of its step and role, whatever the
// configuration says, and a call the record has no reply left for fails
// for good, naming the step and the role.
func TestReplayAnswersFromTheRecord(t *testing.T) {
	recorded := []RecordedCall{
		{Step: "E1", Role: RoleChat, Reply: chat.Reply{Text: "one", Model: "gpt-x", Provider: "openai", Usage: chat.Usage{InputTokens: 100, OutputTokens: 10}}},
		{Step: "E2", Role: RoleJudge, Reply: chat.Reply{Text: `{"verdict":true,"reason":"yes"}`, Model: "judge-y"}},
		{Step: "E1", Role: RoleChat, Reply: chat.Reply{Text: "two", Model: "gpt-x"}},
		{Step: "E1", Role: RoleRepair, Err: "model openai/gpt-x: 400 bad request"},
		{Step: "solver", Role: RoleSolver, Reply: chat.Reply{Text: "report", Model: "gpt-x"}},
	}
	type call struct{ name, step, role, want string }
	tests := []struct {
		name  string
		calls []call
	}{
		{
			name: "in recorded order per step and role",
			calls: []call{
				{"", "E1", RoleChat, "one"},
				{"judge", "E2", RoleJudge, `{"verdict":true,"reason":"yes"}`},
				{"some-named-model", "E1", RoleChat, "two"},
				{"", "E1", RoleChat, `error: model replay/recorded: no recorded reply for step "E1" in role chat: the plan asks for a call the recorded run did not make`},
			},
		},
		{
			name: "a recorded failure fails again, as it read",
			calls: []call{
				{"repair", "E1", RoleRepair, "error: model openai/gpt-x: 400 bad request"},
				{"repair", "E1", RoleRepair, `error: model replay/recorded: no recorded reply for step "E1" in role repair`},
			},
		},
		{
			name: "a step the record does not have",
			calls: []call{
				{"", "E9", RoleChat, `error: model replay/recorded: no recorded reply for step "E9" in role chat`},
				{"solver", "solver", RoleSolver, "report"},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// A configured provider that would fail every call: none is
			// made while Replay is set.
			cfg := project(t, `
[providers.script]
type = "script"
file = "replies.yaml"
[models]
default = { provider = "script", model = "scripted" }
`, map[string]string{"replies.yaml": "replies: []\n"})
			m := New(cfg, Options{Replay: recorded, Backoff: noBackoff})
			for i, c := range tc.calls {
				reply, err := m.Call(context.Background(), c.name, chat.Request{Step: c.step, Role: c.role, Messages: []chat.Message{chat.TextMessage("user", "go")}}, nil)
				if want, isErr := strings.CutPrefix(c.want, "error: "); isErr {
					if err == nil || !strings.Contains(err.Error(), want) {
						t.Fatalf("call %d: err = %v, want one containing %q", i, err, want)
					}
					if IsTransient(err) {
						t.Errorf("call %d: %v is transient; a replay has nothing to retry", i, err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
				if reply.Text != c.want {
					t.Errorf("call %d: text %q, want %q", i, reply.Text, c.want)
				}
				if reply.Provider != ReplayProviderName || reply.Model == "" || reply.Model == replayModel {
					t.Errorf("call %d: answered by %s/%s, want replay and the recorded model", i, reply.Provider, reply.Model)
				}
				if reply.Usage != (chat.Usage{}) {
					t.Errorf("call %d: usage %+v; a replayed call spends nothing", i, reply.Usage)
				}
			}
		})
	}
}

// TestReplayWithNothingRecorded: an empty record still replays (every
// call fails as unrecorded), rather than falling back to the
// configuration.
func TestReplayWithNothingRecorded(t *testing.T) {
	m := New(nil, Options{Replay: []RecordedCall{}})
	provider, model, err := m.Resolve("judge")
	if err != nil || provider != ReplayProviderName || model != replayModel {
		t.Fatalf("Resolve = %s/%s, %v; want replay/recorded", provider, model, err)
	}
	_, err = m.Call(context.Background(), "", chat.Request{Step: "E1", Role: RoleChat}, nil)
	var me *Error
	if !errors.As(err, &me) || me.Provider != ReplayProviderName || me.Transient {
		t.Fatalf("err = %#v, want a permanent *Error from the replay provider", err)
	}
}

// TestReplayStructured: a structured call with a recorded repair pass is
// answered call by call, the refused answer and then the repaired one.
func TestReplayStructured(t *testing.T) {
	schema := schemaOf(t, `{"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}}}`)
	m := New(nil, Options{Replay: []RecordedCall{
		{Step: "E1", Role: RoleChat, Reply: chat.Reply{Text: "not json", Model: "m"}},
		{Step: "E1", Role: RoleRepair, Reply: chat.Reply{Text: `{"n": 3}`, Model: "m"}},
	}})
	var calls []string
	v, err := m.Structured(context.Background(), RoleChat, chat.Request{Step: "E1", Messages: []chat.Message{chat.TextMessage("user", "count")}}, schema,
		Hooks{OnCall: func(r CallRecord) { calls = append(calls, r.Role+"/"+r.Reply.Provider) }})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := json.Marshal(v); string(got) != `{"n":3}` {
		t.Errorf("value %s, want {\"n\":3}", got)
	}
	if strings.Join(calls, " ") != "chat/replay repair/replay" {
		t.Errorf("calls %v", calls)
	}
}

// TestReplayConcurrent: map items replaying at once each get their own
// step's replies.
func TestReplayConcurrent(t *testing.T) {
	var recorded []RecordedCall
	for i := range 20 {
		step := "E1/do." + string(rune('a'+i))
		recorded = append(recorded, RecordedCall{Step: step, Reply: chat.Reply{Text: step + " 1"}}, RecordedCall{Step: step, Reply: chat.Reply{Text: step + " 2"}})
	}
	m := New(nil, Options{Replay: recorded})
	var wg sync.WaitGroup
	for i := range 20 {
		step := "E1/do." + string(rune('a'+i))
		wg.Go(func() {
			for n := 1; n <= 2; n++ {
				reply, err := m.Call(context.Background(), "", chat.Request{Step: step}, nil)
				if err != nil || reply.Text != step+" "+string(rune('0'+n)) {
					t.Errorf("%s call %d: %q, %v", step, n, reply.Text, err)
				}
			}
		})
	}
	wg.Wait()
}
