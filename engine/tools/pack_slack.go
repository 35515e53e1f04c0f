package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// The slack pack posts through Slack's Web API with the bot token in
// SLACK_BOT_TOKEN. SLACK_API_URL replaces the API root (Slack's own, below),
// for a proxy or a test server.

// slackAPIDefault is the root of Slack's Web API methods.
const slackAPIDefault = "https://slack.com/api"

func slackPack() []packTool {
	str := func(desc string) map[string]any { return schemaOf("string", desc) }
	return []packTool{{
		info: packInfo("slack_post_message", false,
			"Post a message to a Slack channel (chat.postMessage). Returns {channel, ts, permalink}: ts is the message's timestamp, which a later call passes as thread_ts to reply in its thread. "+
				"With thread_ts, the message is a reply in that thread. A post Slack refuses (unknown channel, bot not in the channel, missing scope) is an error, never a delivery. "+
				"Needs SLACK_BOT_TOKEN. Side-effecting.",
			schemaObject([]string{"channel", "text"}, map[string]any{
				"channel": str("Where to post: a channel ID (C…, G… or D…, from the channel's \"Copy link\"), or \"#name\" for a public channel the bot has joined. IDs are the reliable form."),
				"text":    str("The message in Slack mrkdwn (*bold*, _italic_, `code`, <https://url|label>), not GitHub markdown; also the notification text."),
				"thread_ts": withDefault(str("To reply in a thread: the parent message's ts (as an earlier slack_post_message returned it). "+
					"Leave it out for a new top-level message."), ""),
			}),
			schemaObject(nil, map[string]any{
				"channel":   str("The channel's ID; pass it back when replying in the thread"),
				"ts":        str("The message's timestamp: the thread_ts of replies to it"),
				"permalink": schemaNullable("string", "Link to the message; null when looking it up failed"),
			})),
		timeout: 30 * time.Second,
		run:     slackPostMessage,
	}}
}

// slackAnswer is the envelope of every Slack Web API answer: HTTP 200 with
// ok false is a refusal, so ok is what counts.
type slackAnswer struct {
	OK        bool   `json:"ok"`
	Error     string `json:"error"`
	Channel   string `json:"channel"`
	TS        string `json:"ts"`
	Permalink string `json:"permalink"`
}

func slackPostMessage(ctx context.Context, c *packCall) (any, error) {
	token := os.Getenv("SLACK_BOT_TOKEN")
	if token == "" {
		return nil, c.fail("SLACK_BOT_TOKEN is not set: it needs a Slack bot token with the chat:write scope")
	}
	root := strings.TrimSuffix(os.Getenv("SLACK_API_URL"), "/")
	if root == "" {
		root = slackAPIDefault
	}
	msg := map[string]any{"channel": c.str("channel"), "text": c.str("text")}
	if ts := c.str("thread_ts"); ts != "" {
		msg["thread_ts"] = ts
	}
	body, err := marshalText(msg)
	if err != nil {
		return nil, c.fail("encoding the message: %v", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, root+"/chat.postMessage", bytes.NewReader(body))
	if err != nil {
		return nil, c.fail("chat.postMessage: %v", err)
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	posted, err := slackCall(c, req, token)
	if err != nil {
		return nil, err
	}

	// The permalink is a second call, and a best-effort one: the message
	// is delivered by now, so a lookup that fails is a null, not an error.
	var permalink any
	q := url.Values{"channel": {posted.Channel}, "message_ts": {posted.TS}}
	if req, err := http.NewRequestWithContext(ctx, http.MethodGet, root+"/chat.getPermalink?"+q.Encode(), nil); err == nil {
		if link, err := slackCall(c, req, token); err == nil && link.Permalink != "" {
			permalink = link.Permalink
		}
	}
	return map[string]any{"channel": posted.Channel, "ts": posted.TS, "permalink": permalink}, nil
}

// slackCall sends one Web API request with the token and returns the
// answer when Slack says ok, else a *ToolError with Slack's error code (or
// the start of whatever it answered instead).
func slackCall(c *packCall, req *http.Request, token string) (*slackAnswer, error) {
	method := req.URL.Path[strings.LastIndex(req.URL.Path, "/")+1:]
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		if req.Context().Err() != nil {
			return nil, req.Context().Err()
		}
		return nil, c.fail("%s: %v", method, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, c.fail("%s: reading the answer: %v", method, err)
	}
	var a slackAnswer
	if err := json.Unmarshal(data, &a); err != nil {
		return nil, c.fail("%s failed: HTTP %s, answer %s", method, resp.Status, quoteStart(string(data), 500))
	}
	if !a.OK {
		if a.Error == "" {
			a.Error = "ok is false and no error given (HTTP " + resp.Status + ")"
		}
		return nil, c.fail("%s failed: %s", method, a.Error)
	}
	return &a, nil
}
