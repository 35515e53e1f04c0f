package model

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stepwise-dev/stepwise/engine/chat"
	"github.com/stepwise-dev/stepwise/engine/config"
)

// TestRetries plays scripted failures through Call: each case is a replies
// file, what the first call should give, and what the next call gets,
// which shows how many replies the first one consumed.
func TestRetries(t *testing.T) {
	tests := []struct {
		name      string
		replies   string
		want      string // the first call's text, or "error: ..." contained in its error
		transient bool   // for an error: whether it is transient
		next      string // the second call's text
		backoffs  []int  // the attempts Backoff was asked about
	}{
		{
			name: "transient then success consumes two replies",
			replies: `replies:
  - {match: E1, error: {status: 503, message: overloaded}}
  - {match: E1, reply: {text: ok}}
  - {match: E1, reply: {text: next}}
`,
			want: "ok", next: "next", backoffs: []int{1},
		},
		{
			name: "429 and timeouts are transient too",
			replies: `replies:
  - {match: E1, error: {status: 429}}
  - {match: E1, error: {timeout: true}}
  - {match: E1, reply: {text: ok}}
  - {match: E1, reply: {text: next}}
`,
			want: "ok", next: "next", backoffs: []int{1, 2},
		},
		{
			name: "three transient failures give up",
			replies: `replies:
  - {match: E1, error: {status: 500, message: boom}}
  - {match: E1, error: {status: 502}}
  - {match: E1, error: {status: 503, message: still down}}
  - {match: E1, reply: {text: next}}
`,
			want: "error: model script/script: 503 still down (gave up after 3 attempts)", transient: true, next: "next", backoffs: []int{1, 2},
		},
		{
			name: "a permanent error is not retried",
			replies: `replies:
  - {match: E1, error: {status: 400, message: bad request}}
  - {match: E1, reply: {text: next}}
`,
			want: "error: model script/script: 400 bad request", next: "next",
		},
		{
			name: "no message takes the status text",
			replies: `replies:
  - {match: E1, error: {status: 404}}
  - {match: E1, reply: {text: next}}
`,
			want: "error: model script/script: 404 not found", next: "next",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var asked []int
			m := scriptModels(t, tt.replies, Options{Backoff: func(n int) time.Duration {
				mu.Lock()
				defer mu.Unlock()
				asked = append(asked, n)
				return 0
			}})
			r, err := m.Call(context.Background(), "chat", chat.Request{Step: "E1", Messages: user("go")}, nil)
			if want, ok := strings.CutPrefix(tt.want, "error: "); ok {
				wantError(t, err, want)
				var e *Error
				if !errors.As(err, &e) || e.Transient != tt.transient {
					t.Errorf("error %#v: want an *Error with Transient %v", err, tt.transient)
				}
			} else if err != nil || r.Text != tt.want {
				t.Errorf("reply %q, error %v; want %q", r.Text, err, tt.want)
			}
			if got := call(m, "E1", "chat"); got != tt.next {
				t.Errorf("next call got %q, want %q", got, tt.next)
			}
			if !equalInts(asked, tt.backoffs) {
				t.Errorf("backoff asked for %v, want %v", asked, tt.backoffs)
			}
		})
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestAttemptTimeout checks that req.Timeout bounds each attempt, and that
// an attempt that runs past it is retried like any transient failure.
func TestAttemptTimeout(t *testing.T) {
	m := scriptModels(t, `replies:
  - {match: E1, reply: {text: slow, delay_ms: 5000}}
  - {match: E1, reply: {text: fast}}
  - {match: E1, reply: {text: slow, delay_ms: 5000}}
  - {match: E1, reply: {text: slow, delay_ms: 5000}}
  - {match: E1, reply: {text: slow, delay_ms: 5000}}
`, Options{})
	req := chat.Request{Step: "E1", Messages: user("go"), Timeout: 30 * time.Millisecond}
	r, err := m.Call(context.Background(), "chat", req, nil)
	if err != nil || r.Text != "fast" {
		t.Fatalf("reply %q, error %v", r.Text, err)
	}
	_, err = m.Call(context.Background(), "chat", req, nil)
	wantError(t, err, "model script/script: timed out after 30ms (the step's llm_timeout_seconds) (gave up after 3 attempts)")
	if !IsTransient(err) {
		t.Error("a timeout is not transient")
	}
}

// failoverConfig is a project with two script providers: the default
// role's primary answers from a.yaml and its fallback from b.yaml.
const failoverConfig = `
[providers.a]
type = "script"
file = "a.yaml"

[providers.b]
type = "script"
file = "b.yaml"

[providers.remote]
type = "openai"
api_key = "sk-test"

[models]
default = { provider = "a", model = "big", temperature = 0.2, fallbacks = [{ provider = "b", model = "small" }] }
judge = { provider = "remote", model = "gpt-5" }

[models.named.nano]
provider = "b"
model = "tiny"
`

func TestFailover(t *testing.T) {
	const fallbackReply = "replies:\n  - {match: E1, reply: {text: from b}}\n"
	tests := []struct {
		name      string
		a         string
		onDelta   bool
		timeout   time.Duration
		want      string // text or "error: ..."
		provider  string
		failovers []string
		retries   []string // the reply's, why each failed attempt failed
	}{
		{
			name: "three transient failures fall over",
			a: `replies:
  - {match: E1, error: {status: 503}}
  - {match: E1, error: {status: 503}}
  - {match: E1, error: {status: 529, message: overloaded}}
`,
			want: "from b", provider: "b/small",
			failovers: []string{"a/big -> b/small: model a/big: 529 overloaded (gave up after 3 attempts)"},
			retries:   []string{"model a/big: 503 service unavailable", "model a/big: 503 service unavailable", "model a/big: 529 overloaded (gave up after 3 attempts)"},
		},
		{
			name: "primary answers",
			a:    "replies:\n  - {match: E1, reply: {text: from a}}\n",
			want: "from a", provider: "a/big",
		},
		{
			name: "a permanent error does not fall over",
			a:    "replies:\n  - {match: E1, error: {status: 401, message: bad key}}\n",
			want: "error: model a/big: 401 bad key",
		},
		{
			name: "no reply left does not fall over",
			a:    "replies: []\n",
			want: `error: script: no reply left for step "E1" in role chat`,
		},
		{
			name:    "a stream that times out does not fall over",
			a:       "replies:\n  - {match: E1, reply: {text: a long answer that streams in pieces, delay_ms: 1000}}\n",
			onDelta: true,
			timeout: 500 * time.Millisecond,
			want:    "error: model a/big: timed out after 500ms (the step's llm_timeout_seconds)",
		},
		{
			name: "a last attempt that had streamed says which fallback it could not try",
			a: `replies:
  - {match: E1, reply: {text: a long answer that streams in pieces, delay_ms: 1000}}
  - {match: E1, reply: {text: a long answer that streams in pieces, delay_ms: 1000}}
  - {match: E1, reply: {text: a long answer that streams in pieces, delay_ms: 1000}}
`,
			onDelta: true,
			timeout: 300 * time.Millisecond,
			want:    "error: model a/big: timed out after 300ms (the step's llm_timeout_seconds) (gave up after 3 attempts) (the fallback b/small was not tried: part of the answer had streamed)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := project(t, failoverConfig, map[string]string{"a.yaml": tt.a, "b.yaml": fallbackReply})
			var failovers []string
			m := New(cfg, Options{Backoff: noBackoff, OnFailover: func(from, to string, err error) {
				failovers = append(failovers, from+" -> "+to+": "+err.Error())
			}})
			var onDelta func(chat.Delta)
			deltas := 0
			if tt.onDelta {
				onDelta = func(chat.Delta) { deltas++ }
			}
			r, err := m.Call(context.Background(), "chat", chat.Request{Step: "E1", Messages: user("go"), Timeout: tt.timeout}, onDelta)
			if want, ok := strings.CutPrefix(tt.want, "error: "); ok {
				wantError(t, err, want)
				if strings.Contains(err.Error(), "gave up") && !strings.Contains(want, "gave up") {
					t.Errorf("retried after a delta had streamed: %v", err)
				}
			} else if err != nil || r.Text != tt.want || r.Provider+"/"+r.Model != tt.provider {
				t.Errorf("reply %q from %s/%s, error %v; want %q from %s", r.Text, r.Provider, r.Model, err, tt.want, tt.provider)
			}
			if !slices.Equal(r.Retries, tt.retries) {
				t.Errorf("retries %q, want %q", r.Retries, tt.retries)
			}
			if tt.onDelta && deltas == 0 {
				t.Error("nothing streamed before the timeout; the case tests nothing")
			}
			if strings.Join(failovers, "\n") != strings.Join(tt.failovers, "\n") {
				t.Errorf("failovers %q, want %q", failovers, tt.failovers)
			}
			if tt.want != "from b" {
				// The fallback's one reply is still there: nano answers
				// from b.
				if r, err := m.Call(context.Background(), "nano", chat.Request{Step: "E1", Messages: user("go")}, nil); err != nil || r.Text != "from b" {
					t.Errorf("the fallback's reply was used: %q, %v", r.Text, err)
				}
			}
		})
	}
}

func TestResolve(t *testing.T) {
	cfg := project(t, failoverConfig, map[string]string{"a.yaml": "replies: []\n", "b.yaml": "replies: []\n"})
	m := New(cfg, Options{})
	tests := []struct{ name, want string }{
		{"", "a/big"},
		{"chat", "a/big"},
		{"repair", "a/big"},
		{"judge", "remote/gpt-5"},
		{"nano", "b/tiny"},
		{"huge", `error: model "huge" is not configured`},
	}
	for _, tt := range tests {
		p, mod, err := m.Resolve(tt.name)
		got := p + "/" + mod
		if err != nil {
			got = "error: " + err.Error()
		}
		if !strings.HasPrefix(got, tt.want) {
			t.Errorf("Resolve(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
	sm := New(nil, Options{ScriptFile: "replies.yaml"})
	if p, mod, err := sm.Resolve("nano"); err != nil || p != ScriptProviderName || mod != ScriptProviderName {
		t.Errorf("with a script file and no configuration: %s/%s, %v", p, mod, err)
	}
	// With a configuration, the script answers under the configured model,
	// so that its price applies.
	sm = New(cfg, Options{ScriptFile: "replies.yaml"})
	for name, want := range map[string]string{"nano": "script/tiny", "judge": "script/gpt-5", "huge": "script/script"} {
		if p, mod, err := sm.Resolve(name); err != nil || p+"/"+mod != want {
			t.Errorf("with a script file, %s: %s/%s, %v; want %s", name, p, mod, err, want)
		}
	}
}

// TestProviderNotUsable checks that a provider type the configuration
// accepts and stepwise does not implement fails the call, permanently.
func TestProviderNotUsable(t *testing.T) {
	cfg := project(t, `
[providers.aws]
type = "bedrock"
region = "us-east-1"

[models]
default = { provider = "aws", model = "claude-sonnet-5" }
`, nil)
	m := New(cfg, Options{})
	_, err := m.Call(context.Background(), "judge", chat.Request{Step: "E1", Messages: user("go")}, nil)
	wantError(t, err, "model aws/claude-sonnet-5: ", "does not support provider type bedrock")
	if !errors.Is(err, config.ErrNotUsable) || IsTransient(err) {
		t.Errorf("error %v: want config.ErrNotUsable, permanent", err)
	}
}

// TestBrokenScriptProvider checks that a replies file that does not load
// fails the call with the file's problems, and keeps failing it.
func TestBrokenScriptProvider(t *testing.T) {
	cfg := project(t, failoverConfig, map[string]string{"a.yaml": "replies:\n  - {match: E1, reply: {txt: hi}}\n", "b.yaml": "replies: []\n"})
	m := New(cfg, Options{})
	for range 2 {
		_, err := m.Call(context.Background(), "chat", chat.Request{Step: "E1"}, nil)
		wantError(t, err, "model a/big: ", `a.yaml:2:25: unknown key "txt" in reply; did you mean 'text'?`)
		var le *ScriptLoadError
		if !errors.As(err, &le) {
			t.Errorf("error %v is not a *ScriptLoadError", err)
		}
	}
}

// TestConcurrentCalls runs map items in parallel against one script: each
// reply is used exactly once.
func TestConcurrentCalls(t *testing.T) {
	var b strings.Builder
	b.WriteString("replies:\n")
	const items = 20
	for range items {
		b.WriteString("  - {match: \"E1/do.*\", reply: {text: x}}\n")
	}
	m := scriptModels(t, b.String(), Options{})
	var wg sync.WaitGroup
	errs := make(chan error, items)
	for i := range items {
		wg.Go(func() {
			_, err := m.Call(context.Background(), "chat", chat.Request{Step: "E1/do." + string(rune('a'+i))}, nil)
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if got := call(m, "E1/do.0", "chat"); !strings.HasPrefix(got, "error: script: no reply left") {
		t.Errorf("after %d calls: %q", items, got)
	}
}

func TestRetryKeepsItsCause(t *testing.T) {
	m := scriptModels(t, `replies:
  - match: E1
    error: {status: 429, message: rate limited}
`, Options{})
	_, err := m.Call(context.Background(), "chat", chat.Request{Step: "E1", Role: "chat", Messages: []chat.Message{chat.TextMessage("user", "hi")}}, nil)
	var nr *NoReplyError
	if !errors.As(err, &nr) || !strings.Contains(err.Error(), "(while retrying after: model script/script: 429 rate limited)") {
		t.Errorf("err %v", err)
	}
}

// TestTimedOutStreamStartsAgain checks that a request that runs out of
// time after it began to stream is sent again, and that the reader is told
// the streamed part is void.
func TestTimedOutStreamStartsAgain(t *testing.T) {
	m := scriptModels(t, `replies:
  - match: E1
    reply: { text: "a long answer that never ends", delay_ms: 1000 }
  - match: E1
    reply: { text: "short" }
`, Options{})
	var deltas []chat.Delta
	reply, err := m.Call(context.Background(), "chat", chat.Request{Step: "E1", Role: "chat", Messages: user("go"), Timeout: 500 * time.Millisecond},
		func(d chat.Delta) { deltas = append(deltas, d) })
	if err != nil || reply.Text != "short" {
		t.Fatalf("reply %q, err %v", reply.Text, err)
	}
	resets := 0
	for _, d := range deltas {
		if d.Reset {
			resets++
		}
	}
	if resets != 1 || deltas[len(deltas)-1].Text != "short" {
		t.Errorf("deltas %+v", deltas)
	}
}
