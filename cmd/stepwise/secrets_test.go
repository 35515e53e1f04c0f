package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/engine/chat"
	"github.com/stepwise-dev/stepwise/engine/record"
	"github.com/stepwise-dev/stepwise/engine/store"
)

// The canaries of TestNoSecretReachesAFileOrAnOutput: a model's key and an
// MCP server's token, each read from the environment by the project's
// configuration.
const (
	canaryKey   = "sk-ant-canary-0123456789abcdef"
	canaryToken = "tracker-canary-token-fedcba9876"
)

// TestNoSecretReachesAFileOrAnOutput runs every command that shows or stores
// what a provider or a server said, in a project whose secrets would leak
// by each route a probe found: a tool that prints its environment, a model
// server that repeats the key it was sent, an MCP server whose failure
// repeats the token in its arguments. Neither secret may appear in any
// output or in any file under the data directory, the project or the home
// directory.
func TestNoSecretReachesAFileOrAnOutput(t *testing.T) {
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key %s"}}`,
			r.Header.Get("X-Api-Key")+r.Header.Get("Authorization"))
	}))
	t.Cleanup(echo.Close)
	t.Setenv("SW_CANARY_KEY", canaryKey)
	t.Setenv("SW_CANARY_TOKEN", canaryToken)
	t.Setenv("ANTHROPIC_BASE_URL", "")
	scratchProject(t, fmt.Sprintf(`[providers.claude]
type = "anthropic"
api_key = "${SW_CANARY_KEY}"
base_url = %q
strict_base_url = true

[models]
default = { provider = "claude", model = "claude-test", max_tokens = 1024 }

[mcp.tracker]
command = %q
args = ["__demo-mcp"]
env = { TRACKER_TOKEN = "${SW_CANARY_TOKEN}" }

[mcp.leaky]
command = "sh"
args = ["-c", "echo refused token $0 >&2; exit 3", "${SW_CANARY_TOKEN}"]
`, echo.URL, os.Args[0]))
	t.Setenv(cliEnv, "1")
	t.Setenv("GORACE", "atexit_sleep_ms=0")
	files := map[string]string{
		"tools/printenv.yaml": "name: printenv\ndescription: Prints its environment.\nkind: exec\ncommand: env\noutput: text\n",
		"plans/dump.yaml": "identifier: dump\nname: Dump\ndescription: Prints the environment.\nsteps:\n" +
			"  - id: E1\n    tool_name: user__printenv\n    input: {}\n",
		"plans/ask.yaml": "identifier: ask\nname: Ask\ndescription: Asks a model.\nsteps:\n" +
			"  - id: E1\n    tool_name: builtin__infer\n    input: { instruction: Say hello. }\n",
		"plans/leak.yaml": "identifier: leak\nname: Leak\ndescription: Calls the server that fails.\nsteps:\n" +
			"  - id: E1\n    tool_name: leaky__anything\n    input: {}\n",
		"plans/issues.yaml": "identifier: issues\nname: Issues\ndescription: Calls the server that works.\nsteps:\n" +
			"  - id: E1\n    tool_name: tracker__list_issues\n    input: {}\n",
	}
	writeStepwiseFiles(t, files)

	var outputs bytes.Buffer
	cli := func(args ...string) int {
		out, errOut, code := runCLI(t, args...)
		fmt.Fprintf(&outputs, "$ stepwise %s\n%s%s", strings.Join(args, " "), out, errOut)
		return code
	}
	for _, plan := range []string{"dump", "ask", "leak", "issues"} {
		cli("run", "--json", plan)
		cli("run", "--events", "jsonl", plan)
	}
	if code := cli("run", "--json", "dump"); code != 0 {
		t.Fatalf("the environment dump failed:\n%s", outputs.String())
	}
	for _, args := range [][]string{
		{"mcp", "list"}, {"mcp", "list", "--json"}, {"mcp", "test", "leaky"}, {"mcp", "test", "--json", "leaky"},
		{"mcp", "tools", "--json"}, {"tools", "list", "--json"}, {"models", "test"}, {"models", "list", "--json"},
		{"runs", "--json"},
	} {
		cli(args...)
	}
	// Every run, inspected, with its steps' payloads.
	out, _, _ := runCLI(t, "runs", "--json", "--limit", "0")
	for _, id := range runIDsIn(out) {
		cli("inspect", "--json", id)
		cli("inspect", id, "E1")
	}

	// The probe's routes were really taken: the model server's error, the
	// failing server's stderr and the environment dump all reached the
	// outputs, with the secrets behind their references.
	for _, want := range []string{"invalid x-api-key", "refused token ${SW_CANARY_TOKEN}", "PATH="} {
		if !strings.Contains(outputs.String(), want) {
			t.Errorf("no output shows %q; the test no longer takes that route:\n%s", want, outputs.String())
		}
	}
	for _, secret := range []string{canaryKey, canaryToken} {
		if strings.Contains(outputs.String(), secret) {
			t.Errorf("an output shows %s:\n%s", secret, outputs.String())
		}
	}
	home, _ := os.UserHomeDir()
	wd, _ := os.Getwd()
	for _, root := range []string{home, wd} {
		filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			content, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, secret := range []string{canaryKey, canaryToken} {
				if bytes.Contains(content, []byte(secret)) {
					t.Errorf("%s holds %s", path, secret)
				}
			}
			return nil
		})
	}
}

// runIDsIn returns the run ids a `runs --json` listing names.
func runIDsIn(listing string) []string {
	var ids []string
	for _, line := range strings.Split(listing, "\n") {
		if _, rest, ok := strings.Cut(line, `"id": "`); ok {
			id, _, _ := strings.Cut(rest, `"`)
			ids = append(ids, id)
		}
	}
	return ids
}

// TestRecordedRunsHideSecrets runs tools whose env passes a provider's key
// on by name, on purpose, and which print it: as text, as JSON text, and
// into a failure. The run store must hold each key only as its ${VAR} (the
// events, the steps' payloads, the run's output and error), and inspect
// must show that. One key holds a quote and a backslash, which a payload's
// JSON escapes, once as a string and twice as JSON text in a string.
func TestRecordedRunsHideSecrets(t *testing.T) {
	const quoted = `sk-"quoted\canary-0123456789`
	t.Setenv("SW_CANARY_KEY", canaryKey)
	t.Setenv("SW_CANARY_QUOTED", quoted)
	scratchProject(t, `[providers.claude]
type = "anthropic"
api_key = "${SW_CANARY_KEY}"

[providers.other]
type = "openai"
api_key = "${SW_CANARY_QUOTED}"
`)
	t.Setenv(cliEnv, "1")
	env := "env: { SW_CANARY_KEY: \"${SW_CANARY_KEY}\", SW_CANARY_QUOTED: \"${SW_CANARY_QUOTED}\" }\n"
	files := map[string]string{
		"tools/tell.yaml": "name: tell\ndescription: Prints the keys it was passed.\nkind: exec\ncommand: sh\n" +
			`args: ["-c", "printf 'key %s quoted %s' \"$SW_CANARY_KEY\" \"$SW_CANARY_QUOTED\""]` + "\noutput: text\n" + env,
		// The key is escaped as a JSON printer would, so that the text
		// holds it as JSON text.
		"tools/json.yaml": "name: json\ndescription: Prints the quoted key as JSON text.\nkind: exec\ncommand: sh\n" +
			`args: ["-c", "printf '{\"key\": \"%s\"}' \"$(printf %s \"$SW_CANARY_QUOTED\" | sed 's/[\\\\\"]/\\\\&/g')\""]` + "\noutput: text\n" + env,
		"tools/fail.yaml": "name: fail\ndescription: Fails, telling the keys.\nkind: exec\ncommand: sh\n" +
			`args: ["-c", "printf 'refused %s %s' \"$SW_CANARY_KEY\" \"$SW_CANARY_QUOTED\" >&2; exit 3"]` + "\noutput: text\n" + env,
		"plans/tell.yaml": "identifier: tell\nname: Tell\ndescription: Prints the keys.\nsteps:\n" +
			"  - id: E1\n    tool_name: user__tell\n    input: {}\n" +
			"  - id: E2\n    tool_name: user__json\n    input: {}\n",
		"plans/fail.yaml": "identifier: fail\nname: Fail\ndescription: Fails with the keys.\nsteps:\n" +
			"  - id: E1\n    tool_name: user__fail\n    input: {}\n",
	}
	writeStepwiseFiles(t, files)
	if _, errOut, code := runCLI(t, "run", "tell"); code != 0 {
		t.Fatalf("run tell: exit %d\n%s", code, errOut)
	}
	if _, errOut, code := runCLI(t, "run", "fail"); code == 0 {
		t.Fatalf("run fail succeeded\n%s", errOut)
	}
	listing, _, _ := runCLI(t, "runs", "--json", "--limit", "0")
	ids := runIDsIn(listing)
	if len(ids) != 2 {
		t.Fatalf("runs: %d, want 2:\n%s", len(ids), listing)
	}
	var inspected strings.Builder
	for _, id := range ids {
		out, errOut, code := runCLI(t, "inspect", "--json", id)
		if code != 0 {
			t.Fatalf("inspect %s: exit %d\n%s", id, code, errOut)
		}
		inspected.WriteString(out)
	}
	quotedOnce, _ := json.Marshal(quoted)
	quotedTwice, _ := json.Marshal(`{"key": ` + string(quotedOnce) + `}`)
	forms := []string{canaryKey, quoted, string(quotedOnce[1 : len(quotedOnce)-1]), string(quotedTwice[1 : len(quotedTwice)-1])}
	for _, want := range []string{
		`key ${SW_CANARY_KEY} quoted ${SW_CANARY_QUOTED}`, // the text
		`{\"key\": \"${SW_CANARY_QUOTED}\"}`,              // the JSON text
		`refused ${SW_CANARY_KEY} ${SW_CANARY_QUOTED}`,    // the failure
	} {
		if !strings.Contains(inspected.String(), want) {
			t.Errorf("inspect --json shows no %s:\n%s", want, inspected.String())
		}
	}
	for _, form := range forms {
		if strings.Contains(inspected.String(), form) {
			t.Errorf("inspect --json shows %s", form)
		}
	}
	data := filepath.Join(os.Getenv("XDG_DATA_HOME"), "stepwise")
	stored := 0
	filepath.WalkDir(data, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		content, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		stored += len(content)
		for _, form := range forms {
			if bytes.Contains(content, []byte(form)) {
				t.Errorf("%s holds %s", path, form)
			}
		}
		return nil
	})
	if stored == 0 {
		t.Fatalf("nothing stored under %s", data)
	}
}

// TestRunOutputsHideSecrets runs plans whose values hold a provider's key
// (an input a step reshapes) and whose model streams the key split
// between two deltas, and reads every form run prints them in: the output
// on stdout, the streamed answer, the --json envelope and the --events
// jsonl lines. Each must hold the key as ${VAR}, as the run store does,
// and the store's deltas, joined, must be the reply as llm_call keeps it.
func TestRunOutputsHideSecrets(t *testing.T) {
	const key = "sk-supersecret-12345"
	answer := sseMessage("end_turn", 10, 5, sseText("the key is sk-super", "secret-12345 ok"))
	srv := newMessagesServer(t, answer, answer, answer, answer)
	t.Setenv("SW_STREAM_KEY", key)
	t.Setenv("ANTHROPIC_BASE_URL", "")
	scratchProject(t, fmt.Sprintf(`[providers.claude]
type = "anthropic"
api_key = "${SW_STREAM_KEY}"
base_url = %q

[models]
default = { provider = "claude", model = "claude-test", max_tokens = 1024 }
`, srv.URL))
	files := map[string]string{
		"plans/echo.yaml": "identifier: echo\nname: Echo\ndescription: Echoes its note.\nsteps:\n" +
			"  - id: E0\n    tool_name: builtin__reshape\n    input: { shape: { note: \"{{input.note}}\" } }\n" +
			"output:\n  note: \"{{E0.note}}\"\n",
		"plans/answer.yaml": "identifier: answer\nname: Answer\ndescription: A solver plan.\nsteps:\n" +
			"  - id: E0\n    tool_name: builtin__reshape\n    input: { shape: { n: 1 } }\n" +
			"solver:\n  query_to_answer: \"Say the key.\"\n",
	}
	writeStepwiseFiles(t, files)
	note := `{"note": "the key is ` + key + `"}`
	tests := []struct {
		name string
		args []string
		// want is what stdout or stderr must hold, the key hidden.
		want string
	}{
		{"the output on stdout", []string{"run", "echo", note}, `"note": "the key is ${SW_STREAM_KEY}"`},
		{"the envelope", []string{"run", "--json", "echo", note}, `"note": "the key is ${SW_STREAM_KEY}"`},
		{"the events", []string{"run", "--events", "jsonl", "echo", note}, `"kind":"run_end"`},
		{"the streamed answer", []string{"run", "answer"}, "the key is ${SW_STREAM_KEY} ok\n"},
		{"the answer in the envelope", []string{"run", "--json", "answer"}, `"answer": "the key is ${SW_STREAM_KEY} ok"`},
		{"the reply in the events", []string{"run", "--events", "jsonl", "answer"}, `the key is ${SW_STREAM_KEY} ok`},
		{"the debugger's end", []string{"debug", "--json", "echo", note}, `"output":{"note":"the key is ${SW_STREAM_KEY}"}`},
		{"the debugger's output", []string{"debug", "echo", note}, `"note": "the key is ${SW_STREAM_KEY}"`},
		{"a model test's answer", []string{"models", "test", "--json"}, `"answer": "the key is ${SW_STREAM_KEY} ok"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The debugger stops at its start, and goes on.
			out, errOut, code := rerunCLI(t, "continue\n", tt.args...)
			if code != 0 {
				t.Fatalf("exit %d\n%s%s", code, out, errOut)
			}
			if tt.name == "the streamed answer" && out != tt.want {
				t.Errorf("stdout %q, want %q", out, tt.want)
			}
			if !strings.Contains(out+errOut, tt.want) {
				t.Errorf("no %q in:\n%s%s", tt.want, out, errOut)
			}
			for _, part := range []string{"sk-super", "secret-12345"} {
				if strings.Contains(out+errOut, part) {
					t.Errorf("the output shows %s:\n%s%s", part, out, errOut)
				}
			}
		})
	}

	content, err := os.ReadFile(dataStore())
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range []string{"sk-super", "secret-12345"} {
		if bytes.Contains(content, []byte(part)) {
			t.Errorf("the run store holds %s", part)
		}
	}
	// Each answer's deltas, joined, are its reply, redacted: nothing held
	// back is lost.
	st, err := store.Open(dataStore())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs(context.Background(), record.RunFilter{Plan: "answer"})
	if err != nil || len(runs) != 3 {
		t.Fatalf("runs of answer: %d, %v", len(runs), err)
	}
	for _, r := range runs {
		events, err := st.Events(context.Background(), r.ID)
		if err != nil {
			t.Fatal(err)
		}
		var joined strings.Builder
		for _, e := range events {
			if e.Kind == engine.EventModelDelta {
				var d chat.Delta
				json.Unmarshal(e.Payload, &d)
				joined.WriteString(d.Text)
			}
		}
		if joined.String() != "the key is ${SW_STREAM_KEY} ok" {
			t.Errorf("run %s: the deltas join to %q", r.ID, joined.String())
		}
	}
}

// tokenServerEnv makes the test binary an MCP server that tells the token
// it was given in $MYTOK in its one tool's description and input schema,
// as a server may that says how it is authenticated.
const tokenServerEnv = "STEPWISE_TEST_TOKEN_MCP"

func serveTokenTool() {
	s := mcp.NewServer(&mcp.Implementation{Name: "token", Version: "1.0.0"}, nil)
	token := os.Getenv("MYTOK")
	s.AddTool(&mcp.Tool{Name: "whoami", Description: "Answers as the holder of " + token + ".",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"as": map[string]any{"type": "string", "description": "defaults to " + token}}}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "you"}}}, nil
		})
	s.Run(context.Background(), &mcp.StdioTransport{})
}

// TestListingsHideSecrets lists the tools of a server that quotes its
// token in a tool's description, and tests servers whose failures quote
// theirs Go-style, in a command line and in a URL. The token holds a
// quote, a backslash and an ampersand, so that each of its quoted forms
// differs from it: none may be shown.
func TestListingsHideSecrets(t *testing.T) {
	const token = `mcp-tok&"q"\-98765`
	t.Setenv("SW_MCP_TOKEN", token)
	t.Setenv(cliEnv, "")
	t.Setenv("GORACE", "atexit_sleep_ms=0")
	scratchProject(t, fmt.Sprintf(`[mcp.teller]
command = %q
env = { MYTOK = "${SW_MCP_TOKEN}", %s = "1" }

[mcp.broken]
command = "sh"
args = ["-c", "exit 3", "${SW_MCP_TOKEN}"]

[mcp.web]
url = "http://127.0.0.1:1/mcp?token=${SW_MCP_TOKEN}"
`, os.Args[0], tokenServerEnv))
	quoted := strconv.Quote(token)
	jsonOnce, _ := json.Marshal(token)
	jsonPlain := strings.NewReplacer(`\u0026`, "&").Replace(string(jsonOnce))
	forms := []string{token, quoted[1 : len(quoted)-1], string(jsonOnce[1 : len(jsonOnce)-1]), jsonPlain[1 : len(jsonPlain)-1], url.QueryEscape(token)}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"mcp", "tools", "teller"}, "Answers as the holder of ${SW_MCP_TOKEN}."},
		{[]string{"mcp", "tools", "teller", "--json"}, "Answers as the holder of ${SW_MCP_TOKEN}."},
		{[]string{"tools", "list", "--json"}, "Answers as the holder of ${SW_MCP_TOKEN}."},
		{[]string{"tools", "show", "teller__whoami"}, "defaults to ${SW_MCP_TOKEN}"},
		{[]string{"tools", "show", "teller__whoami", "--json"}, "defaults to ${SW_MCP_TOKEN}"},
		{[]string{"mcp", "test", "broken"}, "${SW_MCP_TOKEN}"},
		{[]string{"mcp", "test", "--json", "broken"}, "${SW_MCP_TOKEN}"},
		{[]string{"mcp", "test", "web"}, "token=${SW_MCP_TOKEN}"},
		{[]string{"mcp", "test", "--json", "web"}, "token=${SW_MCP_TOKEN}"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out, errOut, _ := runCLI(t, tt.args...)
			if !strings.Contains(out+errOut, tt.want) {
				t.Errorf("no %q in:\n%s%s", tt.want, out, errOut)
			}
			for _, form := range forms {
				if strings.Contains(out+errOut, form) {
					t.Errorf("the output shows %s:\n%s%s", form, out, errOut)
				}
			}
		})
	}
}

// writeStepwiseFiles writes files, by their paths under .stepwise/, into
// the project of the current directory.
func writeStepwiseFiles(t *testing.T, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(".stepwise", name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
