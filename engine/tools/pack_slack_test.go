//go:build unix

package tools

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// fakeSlack answers chat.postMessage and chat.getPermalink with the JSON
// of Slack's Web API documentation: HTTP 200 and ok true or false.
type fakeSlack struct {
	mu    sync.Mutex
	posts []map[string]any // the bodies chat.postMessage received
}

const slackToken = "xoxb-test"

func newFakeSlack(t *testing.T) *fakeSlack {
	f := &fakeSlack{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/chat.postMessage", func(w http.ResponseWriter, r *http.Request) {
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			reply(w, http.StatusOK, map[string]any{"ok": false, "error": "invalid_form_data"})
			return
		}
		var msg map[string]any
		if err := json.NewDecoder(r.Body).Decode(&msg); err != nil {
			reply(w, http.StatusOK, map[string]any{"ok": false, "error": "invalid_json"})
			return
		}
		f.mu.Lock()
		f.posts = append(f.posts, msg)
		f.mu.Unlock()
		switch msg["channel"] {
		case "#nowhere":
			reply(w, http.StatusOK, map[string]any{"ok": false, "error": "channel_not_found"})
		case "#broken":
			w.WriteHeader(http.StatusBadGateway)
			w.Write([]byte("<html>502 Bad Gateway</html>"))
		default:
			reply(w, http.StatusOK, map[string]any{"ok": true, "channel": "C0123", "ts": "1700000000.000100",
				"message": map[string]any{"text": msg["text"], "ts": "1700000000.000100"}})
		}
	})
	mux.HandleFunc("GET /api/chat.getPermalink", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("message_ts") != "1700000000.000100" || q.Get("channel") != "C0123" {
			reply(w, http.StatusOK, map[string]any{"ok": false, "error": "message_not_found"})
			return
		}
		f.mu.Lock()
		lastText, _ := f.posts[len(f.posts)-1]["text"].(string)
		f.mu.Unlock()
		if lastText == "no permalink" {
			reply(w, http.StatusOK, map[string]any{"ok": false, "error": "ratelimited"})
			return
		}
		reply(w, http.StatusOK, map[string]any{"ok": true, "channel": "C0123", "permalink": "https://acme.slack.com/archives/C0123/p1700000000000100"})
	})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+slackToken {
			reply(w, http.StatusOK, map[string]any{"ok": false, "error": "invalid_auth"})
			return
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	t.Setenv("SLACK_API_URL", srv.URL+"/api/")
	t.Setenv("SLACK_BOT_TOKEN", slackToken)
	return f
}

func TestSlackPostMessage(t *testing.T) {
	tests := []struct {
		name          string
		token         string // "" keeps the fake's token
		input         map[string]any
		want          string
		posted        string // the JSON chat.postMessage received
		errorStarting string
	}{
		{name: "a new message", input: map[string]any{"channel": "#eng", "text": `*Done*: "quotes", {braces} & <https://x|links>`},
			want:   `{"channel": "C0123", "ts": "1700000000.000100", "permalink": "https://acme.slack.com/archives/C0123/p1700000000000100"}`,
			posted: `{"channel": "#eng", "text": "*Done*: \"quotes\", {braces} & <https://x|links>"}`},
		{name: "a reply in a thread", input: map[string]any{"channel": "C0123", "text": "reply", "thread_ts": "1699999999.000001"},
			want:   `{"channel": "C0123", "ts": "1700000000.000100", "permalink": "https://acme.slack.com/archives/C0123/p1700000000000100"}`,
			posted: `{"channel": "C0123", "text": "reply", "thread_ts": "1699999999.000001"}`},
		{name: "a permalink that does not come is null", input: map[string]any{"channel": "C0123", "text": "no permalink"},
			want:   `{"channel": "C0123", "ts": "1700000000.000100", "permalink": null}`,
			posted: `{"channel": "C0123", "text": "no permalink"}`},
		{name: "a refused post fails", input: map[string]any{"channel": "#nowhere", "text": "hi"},
			errorStarting: "chat.postMessage failed: channel_not_found"},
		{name: "an answer that is not Slack's", input: map[string]any{"channel": "#broken", "text": "hi"},
			errorStarting: `chat.postMessage failed: HTTP 502 Bad Gateway, answer "<html>502 Bad Gateway</html>"`},
		{name: "a token Slack refuses", token: "xoxb-wrong", input: map[string]any{"channel": "#eng", "text": "hi"},
			errorStarting: "chat.postMessage failed: invalid_auth"},
		{name: "no token", token: "unset", input: map[string]any{"channel": "#eng", "text": "hi"},
			errorStarting: "SLACK_BOT_TOKEN is not set"},
		{name: "text is required", input: map[string]any{"channel": "#eng"},
			errorStarting: "input does not match builtin__slack_post_message's input_schema"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeSlack(t)
			switch tc.token {
			case "":
			case "unset":
				t.Setenv("SLACK_BOT_TOKEN", "")
			default:
				t.Setenv("SLACK_BOT_TOKEN", tc.token)
			}
			rt, _ := newRuntime(t, map[string]string{".stepwise/config.toml": "[tools]\npacks = [\"slack\"]\n"}, nil)
			got, ok := packResult(t, rt, "builtin__slack_post_message", tc.input, tc.errorStarting)
			if !ok {
				return
			}
			if want := jsonValue(t, tc.want); !reflect.DeepEqual(got, want) {
				t.Errorf("got  %v\nwant %v", got, want)
			}
			var want map[string]any
			json.Unmarshal([]byte(tc.posted), &want)
			if len(f.posts) != 1 || !reflect.DeepEqual(f.posts[0], want) {
				t.Errorf("posted %v, want %v", f.posts, want)
			}
		})
	}
}
