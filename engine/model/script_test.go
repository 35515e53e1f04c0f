package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stepwise-dev/stepwise/engine/chat"
)

// TestScriptMatching plays calls against replies files: each call is a
// step and a role, and each wants the reply's text or an error.
func TestScriptMatching(t *testing.T) {
	type turn struct{ step, role, want string }
	tests := []struct {
		name    string
		replies string
		calls   []turn
	}{
		{
			name: "file order, each reply once",
			replies: `replies:
  - {match: E1, reply: {text: one}}
  - {match: E2, reply: {text: other}}
  - {match: E1, reply: {text: two}}
`,
			calls: []turn{
				{"E1", "chat", "one"},
				{"E1", "chat", "two"},
				{"E2", "chat", "other"},
				{"E1", "chat", `error: script: no reply left for step "E1" in role chat (last message: "go")`},
			},
		},
		{
			name: "file order across exact and wildcard patterns",
			replies: `replies:
  - {match: E2, reply: {text: a}}
  - {match: "**", reply: {text: b}}
  - {match: E1, reply: {text: c}}
  - {match: "E*", reply: {text: d}}
  - {match: E1, reply: {text: e}}
  - {match: "**", reply: {text: f}}
  - {match: E1, role: judge, reply: {text: g}}
`,
			calls: []turn{
				{"E1", "chat", "b"},
				{"E1", "chat", "c"},
				{"E2", "chat", "a"},
				{"E1", "chat", "d"},
				{"E1", "chat", "e"},
				{"E2", "chat", "f"},
				{"E1", "chat", `error: script: no reply left for step "E1" in role chat`},
				{"E1", "judge", "g"},
			},
		},
		{
			name: "role defaults to chat and filters",
			replies: `replies:
  - {match: E1, role: judge, reply: {json: {verdict: true, reason: ok}}}
  - {match: E1, reply: {text: chatting}}
  - {match: E1, role: repair, reply: {text: fixed}}
`,
			calls: []turn{
				{"E1", "chat", "chatting"},
				{"E1", "repair", "fixed"},
				{"E1", "judge", `{"verdict":true,"reason":"ok"}`},
				{"E1", "solver", `error: script: no reply left for step "E1" in role solver`},
			},
		},
		{
			name: "an empty role is chat",
			replies: `replies:
  - {match: E1, reply: {text: hi}}
`,
			calls: []turn{{"E1", "", "hi"}},
		},
		{
			name: "star within a segment",
			replies: `replies:
  - {match: "E1/do.*/agent.1", reply: {text: round one}}
  - {match: "E1/do.*/agent.*", reply: {text: any round}}
`,
			calls: []turn{
				{"E1/do.3/agent.2", "chat", "any round"},
				{"E1/do.7/agent.1", "chat", "round one"},
				{"E1/do.7/agent.1/x", "chat", `error: script: no reply left for step "E1/do.7/agent.1/x"`},
			},
		},
		{
			name: "globstar and a reply without match",
			replies: `replies:
  - {match: "**/repair", role: repair, reply: {text: deep}}
  - {match: "E4/**", reply: {text: under E4}}
  - {reply: {text: anywhere}}
`,
			calls: []turn{
				{"E1/do.3/agent.2/repair", "repair", "deep"},
				{"E4", "chat", "under E4"},
				{"solver", "chat", "anywhere"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := scriptModels(t, tt.replies, Options{})
			for i, c := range tt.calls {
				got := call(m, c.step, c.role)
				if !strings.HasPrefix(got, c.want) {
					t.Errorf("call %d (%s in %s) = %q, want %q", i+1, c.step, c.role, got, c.want)
				}
			}
		})
	}
}

// TestScriptFreshModels checks that the replies are consumed per Models: a
// second run starts from the top.
func TestScriptFreshModels(t *testing.T) {
	file := writeFile(t, t.TempDir(), "r.yaml", "replies:\n  - {match: E1, reply: {text: once}}\n")
	for run := range 2 {
		m := New(nil, Options{ScriptFile: file})
		if got := call(m, "E1", "chat"); got != "once" {
			t.Errorf("run %d: %q", run+1, got)
		}
	}
}

// TestLoadedScripts: a replies file handed over already loaded is not read
// again, whether --script or a configured script provider names it.
func TestLoadedScripts(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "replies.yaml", "replies:\n  - {match: E1, reply: {text: loaded}}\n")
	loaded, err := LoadScript(file)
	if err != nil {
		t.Fatal(err)
	}
	// The file changes after it was loaded; the run must answer from what
	// was loaded and checked.
	writeFile(t, dir, "replies.yaml", "replies:\n  - {match: E1, reply: {text: reread}}\n")
	scripts := map[string]*Script{file: loaded}
	if got := call(New(nil, Options{ScriptFile: file, Scripts: scripts}), "E1", "chat"); got != "loaded" {
		t.Errorf("--script: %q, want the loaded reply", got)
	}
	cfg := project(t, fmt.Sprintf("[providers.s]\ntype = \"script\"\nfile = %q\n[models]\ndefault = { provider = \"s\", model = \"m\" }\n", file), nil)
	if got := call(New(cfg, Options{Scripts: scripts}), "E1", "chat"); got != "loaded" {
		t.Errorf("a configured script provider: %q, want the loaded reply", got)
	}
	if got := call(New(cfg, Options{}), "E1", "chat"); got != "reread" {
		t.Errorf("without loaded scripts: %q, want the file as it is now", got)
	}
}

func TestNoReplyError(t *testing.T) {
	m := scriptModels(t, "replies: []\n", Options{})
	long := strings.Repeat("é", 300)
	_, err := m.Call(context.Background(), "judge", chat.Request{Step: "E3", Messages: []chat.Message{
		chat.TextMessage("system", "be brief"),
		chat.TextMessage("user", long),
	}}, nil)
	var nr *NoReplyError
	if !errors.As(err, &nr) {
		t.Fatalf("error %v is not a *NoReplyError", err)
	}
	if nr.Step != "E3" || nr.Role != "judge" {
		t.Errorf("step %q role %q", nr.Step, nr.Role)
	}
	if want := strings.Repeat("é", 200) + "…"; nr.LastMessage != want {
		t.Errorf("last message has %d runes", len([]rune(nr.LastMessage)))
	}
	if IsTransient(err) {
		t.Error("no reply left is transient; a retry would fail the same way")
	}
	wantError(t, err, `script: no reply left for step "E3" in role judge (last message: "ééé`, `…"); add one to `)
}

func TestScriptReplyContents(t *testing.T) {
	m := scriptModels(t, `replies:
  - match: E1
    reply:
      reasoning: look first
      tool_calls:
        - {name: tracker__list_issues, arguments: {limit: 5, state: open}}
        - {name: tracker__get_issue, arguments: {id: CHK-1}}
      usage: {input_tokens: 1200, output_tokens: 80, cache_read_input_tokens: 1000}
  - match: E1
    reply:
      json: {b: 1, a: [true, null, 2.5, "x"], c: {z: 0x10}}
      finish_reason: length
  - match: E1
    reply:
      tool_calls:
        - {name: tracker__search}
`, Options{})
	ctx := context.Background()
	req := chat.Request{Step: "E1", Messages: user("go")}

	r, err := m.Call(ctx, "chat", req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Reasoning() != "look first" || r.FinishReason != "tool_calls" || r.Provider != ScriptProviderName {
		t.Errorf("reply %+v", r)
	}
	if len(r.ToolCalls) != 2 || r.ToolCalls[0].ID != "call_1" || r.ToolCalls[1].ID != "call_2" ||
		string(r.ToolCalls[0].Arguments) != `{"limit":5,"state":"open"}` || r.ToolCalls[1].Name != "tracker__get_issue" {
		t.Errorf("tool calls %+v", r.ToolCalls)
	}
	if want := (chat.Usage{InputTokens: 1200, OutputTokens: 80, CacheReadInputTokens: 1000}); r.Usage != want {
		t.Errorf("usage %+v, want %+v", r.Usage, want)
	}

	r, err = m.Call(ctx, "chat", req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"b":1,"a":[true,null,2.5,"x"],"c":{"z":16}}`; r.Text != want {
		t.Errorf("json text %s, want %s (key order kept)", r.Text, want)
	}
	if r.FinishReason != "length" {
		t.Errorf("finish reason %q", r.FinishReason)
	}

	r, err = m.Call(ctx, "chat", req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.ToolCalls) != 1 || r.ToolCalls[0].ID != "call_3" || string(r.ToolCalls[0].Arguments) != "{}" {
		t.Errorf("tool calls %+v", r.ToolCalls)
	}
}

// TestUsageEstimate checks the four-characters-a-token guess made when a
// reply gives no usage.
func TestUsageEstimate(t *testing.T) {
	m := scriptModels(t, `replies:
  - {match: E1, reply: {text: "`+strings.Repeat("o", 40)+`"}}
  - {match: E1, reply: {tool_calls: [{name: t__x, arguments: {k: "`+strings.Repeat("v", 30)+`"}}]}}
  - {match: E1, reply: {text: ""}}
`, Options{})
	tools := []chat.ToolDef{{Name: "t__x", InputSchema: map[string]any{"type": "object"}}}
	toolsJSON, _ := json.Marshal(tools)
	req := chat.Request{Step: "E1", Messages: []chat.Message{
		chat.TextMessage("system", strings.Repeat("s", 100)),
		chat.TextMessage("user", strings.Repeat("u", 300)),
	}, Tools: tools}
	in := (400 + len(toolsJSON)) / 4
	tests := []struct {
		name string
		want chat.Usage
	}{
		{"text", chat.Usage{InputTokens: in, OutputTokens: 10}},
		{"arguments", chat.Usage{InputTokens: in, OutputTokens: (len(`{"k":""}`) + 30) / 4}},
		{"nothing said is still a token", chat.Usage{InputTokens: in, OutputTokens: 1}},
	}
	for _, tt := range tests {
		r, err := m.Call(context.Background(), "chat", req, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.Usage != tt.want {
			t.Errorf("%s: usage %+v, want %+v", tt.name, r.Usage, tt.want)
		}
	}
}

func TestScriptStreaming(t *testing.T) {
	const text = "The checkout service times out on confirm."
	replies := `replies:
  - {match: E1, reply: {text: "` + text + `", reasoning: "thinking hard", delay_ms: 100}}
  - {match: E1, reply: {text: "` + text + `", delay_ms: 2000}}
  - {match: E1, reply: {text: quick}}
`
	m := scriptModels(t, replies, Options{})
	req := chat.Request{Step: "E1", Messages: user("go")}

	t.Run("delay spreads deltas over it", func(t *testing.T) {
		var deltas []chat.Delta
		start := time.Now()
		r, err := m.Call(context.Background(), "chat", req, func(d chat.Delta) { deltas = append(deltas, d) })
		if err != nil {
			t.Fatal(err)
		}
		if elapsed := time.Since(start); elapsed < 90*time.Millisecond {
			t.Errorf("answered after %v; the reply asks for 100ms", elapsed)
		}
		var gotText, gotReasoning strings.Builder
		textDeltas := 0
		for _, d := range deltas {
			gotText.WriteString(d.Text)
			gotReasoning.WriteString(d.Reasoning)
			if d.Text != "" {
				textDeltas++
			}
		}
		if textDeltas < 3 {
			t.Errorf("text came in %d deltas; want several", textDeltas)
		}
		if gotText.String() != text || gotReasoning.String() != "thinking hard" || r.Text != text {
			t.Errorf("streamed %q / %q", gotText.String(), gotReasoning.String())
		}
		if deltas[0].Reasoning == "" {
			t.Error("reasoning does not stream first")
		}
	})

	t.Run("cancel stops the stream", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		got := 0
		start := time.Now()
		_, err := m.Call(ctx, "chat", req, func(chat.Delta) { got++; cancel() })
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("error %v, want context.Canceled", err)
		}
		if got != 1 || time.Since(start) > time.Second {
			t.Errorf("%d deltas in %v after cancelling", got, time.Since(start))
		}
	})

	t.Run("no delay, one delta", func(t *testing.T) {
		var deltas []chat.Delta
		if _, err := m.Call(context.Background(), "chat", req, func(d chat.Delta) { deltas = append(deltas, d) }); err != nil {
			t.Fatal(err)
		}
		if len(deltas) != 1 || deltas[0].Text != "quick" {
			t.Errorf("deltas %+v", deltas)
		}
	})
}

// TestLoadScriptErrors pins the messages an author sees for a broken
// replies file: each names file:line:col and what would fix it.
func TestLoadScriptErrors(t *testing.T) {
	tests := []struct {
		name, text string
		want       []string // lines of the error, {file} standing for the file
	}{
		{
			name: "empty file",
			text: "",
			want: []string{"{file}:1:1: the file is empty; a replies file holds a list of replies under replies:"},
		},
		{
			name: "yaml syntax",
			text: "replies:\n  - match: [E1\n",
			want: []string{"{file}:2:12: YAML: sequence end token ']' not found"},
		},
		{
			name: "not a mapping",
			text: "- match: E1\n",
			want: []string{"{file}:1:1: a replies file must be a mapping, not a list"},
		},
		{
			name: "misspelt keys",
			text: "replys:\n  - {mach: E1, reply: {txt: hi}}\n",
			want: []string{
				`{file}:1:1: unknown key "replys" in a replies file; did you mean 'replies'?`,
				`{file}:1:1: replies is missing: a replies file holds a list of replies under replies:`,
			},
		},
		{
			name: "misspelt keys inside replies",
			text: "replies:\n  - mach: E1\n    reply:\n      txt: hi\n      usage: {input: 3}\n",
			want: []string{
				`{file}:2:5: unknown key "mach" in a reply; did you mean 'match'?`,
				`{file}:4:7: unknown key "txt" in reply; did you mean 'text'?`,
				`{file}:5:15: unknown key "input" in usage (keys: input_tokens, output_tokens, cache_creation_input_tokens, cache_read_input_tokens)`,
			},
		},
		{
			name: "bad role",
			text: "replies:\n  - match: E1\n    role: jugde\n    reply: {text: hi}\n",
			want: []string{`{file}:3:11: role "jugde" is not a model role (valid: chat, repair, judge, solver, planner); did you mean 'judge'?`},
		},
		{
			name: "text and json",
			text: "replies:\n  - match: E1\n    reply:\n      text: hi\n      json: {a: 1}\n",
			want: []string{`{file}:5:7: reply has text and json; keep one (json is sent as its compact JSON text)`},
		},
		{
			name: "reply and error",
			text: "replies:\n  - match: E1\n    reply: {text: hi}\n    error: {status: 500}\n",
			want: []string{`{file}:4:5: a reply has reply or error, not both; split it into two replies`},
		},
		{
			name: "neither reply nor error",
			text: "replies:\n  - match: E1\n    role: chat\n",
			want: []string{`{file}:2:5: a reply needs reply (what the model answers) or error (how the call fails)`},
		},
		{
			name: "bad pattern",
			text: "replies:\n  - match: E1//do.*\n    reply: {text: hi}\n  - match: \"E1/a**\"\n    reply: {text: hi}\n",
			want: []string{
				`{file}:2:12: match: path pattern "E1//do.*": segment 2 is empty; segments are joined by a single / with none at either end`,
				`{file}:4:12: match: path pattern "E1/a**": segment "a**" mixes ** with other text; ** must be a whole segment (a/**/b), and * matches within a segment (a*)`,
			},
		},
		{
			name: "bad error replies",
			text: "replies:\n  - error: {status: 200}\n  - error: {status: 500, timeout: true}\n  - error: {message: down}\n  - error: {timeout: maybe}\n",
			want: []string{
				`{file}:2:21: status 200 is not an error status; use 400-599 (429 and 5xx are transient and retried, others fail the call at once)`,
				`{file}:3:26: error has status and timeout; a timed-out call has no status, so keep one`,
				`{file}:4:12: error needs status (an HTTP status such as 429) or timeout: true`,
				`{file}:5:22: timeout must be true or false, not "maybe"`,
			},
		},
		{
			name: "bad values",
			text: "replies:\n  - reply:\n      delay_ms: -5\n      finish_reason: done\n      tool_calls:\n        - {arguments: [1]}\n      usage: {input_tokens: lots}\n",
			want: []string{
				`{file}:3:17: delay_ms must not be negative, got -5`,
				`{file}:4:22: finish_reason "done" is not one of stop, length, refusal, tool_calls`,
				`{file}:6:11: a tool call needs name, the tool it calls (such as tracker__get_issue)`,
				`{file}:6:23: arguments must be a mapping, the tool's input object, not a list`,
				`{file}:7:29: input_tokens must be a whole number, not "lots"`,
			},
		},
		{
			name: "duplicate key and json that is no JSON",
			text: "replies:\n  - match: E1\n    match: E2\n    reply: {json: {a: .inf}}\n",
			want: []string{
				`{file}:3:5: match is already set at line 2; keep one`,
				`{file}:4:23: json: JSON has no .inf; quote it to send a string`,
			},
		},
		{
			name: "an alias inside itself",
			text: "replies:\n  - reply:\n      tool_calls:\n        - name: t__x\n          arguments: &a {self: *a}\n",
			want: []string{`{file}:5:32: arguments: alias *a refers to a value that contains it; a value cannot contain itself`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := writeFile(t, t.TempDir(), "replies.yaml", tt.text)
			_, err := LoadScript(file)
			var le *ScriptLoadError
			if !errors.As(err, &le) {
				t.Fatalf("error %v is not a *ScriptLoadError", err)
			}
			got := strings.ReplaceAll(err.Error(), file, "{file}")
			if want := strings.Join(tt.want, "\n"); got != want {
				t.Errorf("got:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

func TestLoadScriptMissingFile(t *testing.T) {
	_, err := LoadScript(filepath.Join(t.TempDir(), "nope.yaml"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("error %v", err)
	}
}

// TestLoadScriptAnchors checks that a reply body shared through an anchor
// loads, since authors reuse long answers that way.
func TestLoadScriptAnchors(t *testing.T) {
	m := scriptModels(t, `replies:
  - match: E1
    reply: &answer
      json: {severity: sev2, tags: [a, b]}
  - match: E2
    reply: *answer
`, Options{})
	for _, step := range []string{"E1", "E2"} {
		if got := call(m, step, "chat"); got != `{"severity":"sev2","tags":["a","b"]}` {
			t.Errorf("%s: %q", step, got)
		}
	}
}

// TestDemoReplies loads the demo project's replies file, the largest one
// there is.
func TestDemoReplies(t *testing.T) {
	s, err := LoadScript(filepath.Join("..", "..", "plans", "examples", "project", "replies", "demo.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Len() < 10 {
		t.Errorf("only %d replies", s.Len())
	}
}

func FuzzParseScript(f *testing.F) {
	for _, seed := range []string{
		"replies:\n  - {match: E1, reply: {text: hi}}\n",
		"replies:\n  - match: \"**\"\n    role: judge\n    reply:\n      json: {verdict: true, reason: x}\n      tool_calls: [{name: a__b, arguments: {x: [1, 2.5, null]}}]\n      usage: {input_tokens: 3}\n      delay_ms: 0\n",
		"replies:\n  - error: {status: 429, message: slow}\n  - error: {timeout: true}\n",
		"replies: &r [*r]\n",
		"a: &a [*a, *a]\nreplies: [{reply: {json: *a}}]\n",
		"replies:\n  - reply: {json: {<<: {a: 1}}}\n",
		"--- \n...\n---\nreplies: []\n",
		"",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseScript("fuzz.yaml", data)
		if err == nil && s == nil {
			t.Fatal("no script and no error")
		}
		var le *ScriptLoadError
		if err != nil && (!errors.As(err, &le) || len(le.Problems) == 0) {
			t.Fatalf("error %v is not a *ScriptLoadError with problems", err)
		}
	})
}
