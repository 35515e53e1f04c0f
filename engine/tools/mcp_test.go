//go:build unix

package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/iotest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stepwise-dev/stepwise/engine/tools/supervise"
	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/plans/examples"
)

// serveEnv makes the test binary an MCP server over stdio: TestMain sees it
// and serves instead of testing, the way the stepwise binary serves the demo
// tracker as __demo-mcp. Its value picks the behaviour.
const serveEnv = "STEPWISE_TOOLS_TEST_SERVE"

func TestMain(m *testing.M) {
	// The supervisor of exec tools is this test binary, as it is the
	// stepwise binary outside tests; it runs in the tool's environment,
	// so it comes first.
	if len(os.Args) > 1 && os.Args[1] == supervise.Subcommand {
		err := supervise.Run(os.Args[2:])
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	supervise.Enable()
	switch os.Getenv(serveEnv) {
	case "":
		os.Exit(m.Run())
	case "tracker":
		if err := examples.ServeTracker(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	case "stubborn":
		// A server that ignores every polite request to stop: SIGTERM,
		// and its stdin closing. Only a kill ends it.
		signal.Ignore(syscall.SIGTERM, syscall.SIGINT)
		examples.ServeTracker(context.Background())
		select {}
	case "crashes":
		// A server that dies in the middle of a call, saying why on stderr.
		srv := mcp.NewServer(&mcp.Implementation{Name: "crashes", Version: "1"}, nil)
		mcp.AddTool(srv, &mcp.Tool{Name: "boom", Description: "Crashes."}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, struct{}, error) {
			fmt.Fprintln(os.Stderr, "panic: index out of range [3] with length 3")
			os.Exit(2)
			return nil, struct{}{}, nil
		})
		srv.Run(context.Background(), &mcp.StdioTransport{})
		os.Exit(0)
	case "slow":
		// A server whose tools take their time: one until the call is
		// cancelled, one stopping the whole process, as a server stuck in
		// a system call would be.
		srv := mcp.NewServer(&mcp.Implementation{Name: "slow", Version: "1"}, nil)
		srv.AddTool(&mcp.Tool{Name: "pid", Description: "Its process id.", InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strconv.Itoa(os.Getpid())}}}, nil
			})
		mcp.AddTool(srv, &mcp.Tool{Name: "wait", Description: "Answers when cancelled."}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, struct{}, error) {
			<-ctx.Done()
			return nil, struct{}{}, ctx.Err()
		})
		mcp.AddTool(srv, &mcp.Tool{Name: "freeze", Description: "Stops the process."}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, struct{}, error) {
			// The stop reaches every thread a moment after kill returns;
			// the handler must not answer in that moment.
			syscall.Kill(os.Getpid(), syscall.SIGSTOP)
			select {}
		})
		srv.Run(context.Background(), &mcp.StdioTransport{})
		os.Exit(0)
	case "huge":
		// A server whose tool answers with as many bytes as it is asked.
		srv := hugeServer()
		srv.Run(context.Background(), &mcp.StdioTransport{})
		os.Exit(0)
	case "escape":
		// A command that leaves a process behind in a session of its own,
		// out of its process group's reach, and prints its pid.
		sleeper := exec.Command("sleep", "1000")
		sleeper.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := sleeper.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(sleeper.Process.Pid)
		os.Exit(0)
	case "dies":
		fmt.Fprintln(os.Stderr, "loading the index")
		fmt.Fprintln(os.Stderr, "tracker: cannot open database /var/lib/tracker.db: permission denied")
		os.Exit(3)
	}
	fmt.Fprintln(os.Stderr, "unknown", serveEnv)
	os.Exit(2)
}

// TestMCPCallTimeout checks that a call gets call_timeout_secs, is
// cancelled past it, and that the next call goes to the same server when
// it heard the cancellation, and to a new one when it is stuck.
func TestMCPCallTimeout(t *testing.T) {
	rt, _ := newRuntime(t, map[string]string{".stepwise/config.toml": stdioServer("slow", "slow", "call_timeout_secs = 1\n")}, nil)
	ctx := context.Background()
	pid := func() string {
		t.Helper()
		v, err := rt.Call(ctx, "slow__pid", nil)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(v)
	}
	timesOut := func(tool string) {
		t.Helper()
		_, err := rt.Call(ctx, tool, nil)
		want := "no answer within 1s (call_timeout_secs under [mcp.slow]); the call was cancelled"
		if te := toolErr(t, err); !te.TimedOut || te.Error() != want {
			t.Errorf("%s: %v, want %s", tool, err, want)
		}
	}
	first := pid()
	timesOut("slow__wait")
	if again := pid(); again != first {
		t.Errorf("a server that heard the cancellation was restarted: %s, then %s", first, again)
	}
	timesOut("slow__freeze")
	if after := pid(); after == first {
		t.Errorf("a stuck server (%s) was given the next call", first)
	}
}

// TestMCPStepTimeout checks that a step's timeout_secs bounds an MCP call
// in place of the server's call_timeout_secs (120 s by default here), and
// says which bound it was.
func TestMCPStepTimeout(t *testing.T) {
	rt, _ := newRuntime(t, map[string]string{".stepwise/config.toml": stdioServer("slow", "slow", "")}, nil)
	start := time.Now()
	_, err := rt.Call(WithStepTimeout(context.Background(), 1), "slow__wait", nil)
	want := "no answer within 1s (the step's timeout_secs); the call was cancelled"
	if te := toolErr(t, err); !te.TimedOut || te.Error() != want {
		t.Errorf("%v, want %s", err, want)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("the call took %s", took)
	}
	if _, err := rt.Call(context.Background(), "slow__pid", nil); err != nil {
		t.Errorf("the next call: %v", err)
	}
}

func TestMCPServerCrashesMidCall(t *testing.T) {
	rt, _ := newRuntime(t, map[string]string{".stepwise/config.toml": stdioServer("crashy", "crashes", "")}, nil)
	_, err := rt.Call(context.Background(), "crashy__boom", nil)
	if err == nil || !strings.Contains(err.Error(), "the server went away during the call") || !strings.Contains(err.Error(), "index out of range") {
		t.Errorf("err %v", err)
	}
}

// stdioServer is the config.toml section of a server that is this test
// binary serving as mode. Under -race a binary sleeps a second before it
// exits, which would hide a slow shutdown; GORACE takes that away.
func stdioServer(name, mode, extra string) string {
	return fmt.Sprintf("[mcp.%s]\ncommand = %q\nargs = [\"-test.run=^$\"]\nenv = { %s = %q, GORACE = \"atexit_sleep_ms=0\" }\n%s", name, os.Args[0], serveEnv, mode, extra)
}

// trackerIDs returns the ids of a list_issues or search result.
func trackerIDs(t *testing.T, v any) []string {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("result %#v is not an object", v)
	}
	var ids []string
	issues, _ := m["issues"].([]any)
	for _, is := range issues {
		ids = append(ids, is.(map[string]any)["id"].(string))
	}
	return ids
}

func toolNames(infos []plans.ToolInfo) []string {
	var names []string
	for _, t := range infos {
		names = append(names, t.Name)
	}
	return names
}

func TestMCPStdio(t *testing.T) {
	rt, _ := newRuntime(t, map[string]string{".stepwise/config.toml": stdioServer("tracker", "tracker", "")}, nil)
	ctx := context.Background()

	infos, err := rt.ServerTools(ctx, "tracker")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := toolNames(infos), []string{"tracker__add_comment", "tracker__get_issue", "tracker__list_issues", "tracker__search"}; !reflect.DeepEqual(got, want) {
		t.Errorf("tools = %v, want %v", got, want)
	}
	for _, info := range infos {
		wantRO := info.Name != "tracker__add_comment"
		if info.Source != "tracker" || info.ReadOnly == nil || *info.ReadOnly != wantRO || info.InputSchema == nil || info.OutputSchema == nil || info.Description == "" {
			t.Errorf("%s: %+v", info.Name, info)
		}
	}

	t.Run("structured content", func(t *testing.T) {
		got, err := rt.Call(ctx, "tracker__list_issues", map[string]any{"state": "closed", "limit": 2})
		if err != nil {
			t.Fatal(err)
		}
		if ids := trackerIDs(t, got); len(ids) != 2 {
			t.Errorf("ids = %v", ids)
		}
		if total := got.(map[string]any)["total"]; total != jsonValue(t, "3") {
			t.Errorf("total = %#v, want json.Number 3", total)
		}
	})
	t.Run("isError is a ToolError", func(t *testing.T) {
		_, err := rt.Call(ctx, "tracker__get_issue", map[string]any{"id": "CHK-999"})
		te := toolErr(t, err)
		if te.Input || !strings.Contains(te.Error(), `no issue "CHK-999": ids run from CHK-101`) {
			t.Errorf("ToolError = %+v", te)
		}
	})
	t.Run("input is checked against the listed schema", func(t *testing.T) {
		_, err := rt.Call(ctx, "tracker__get_issue", map[string]any{"id": 104})
		te := toolErr(t, err)
		if !te.Input || te.Error() != "input does not match tracker__get_issue's input_schema: /id: got number, want string" {
			t.Errorf("ToolError = %+v: %s", te, te.Error())
		}
	})
	t.Run("a tool the server does not have", func(t *testing.T) {
		_, err := rt.Call(ctx, "tracker__lst_issues", nil)
		if !errors.Is(err, ErrUnknownTool) || err.Error() != "mcp server 'tracker' has no tool 'lst_issues'; did you mean 'list_issues'?" {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("concurrent calls to one server", func(t *testing.T) {
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for i := range 8 {
			wg.Go(func() {
				_, err := rt.Call(ctx, "tracker__get_issue", map[string]any{"id": fmt.Sprintf("CHK-%d", 101+i)})
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
	})
	t.Run("a server that went away is started again", func(t *testing.T) {
		s, _ := rt.server("tracker")
		c, err := s.connected(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pid := c.cmd.Process.Pid
		syscall.Kill(pid, syscall.SIGKILL)
		select {
		case <-c.lost:
		case <-time.After(5 * time.Second):
			t.Fatal("the connection did not notice the server died")
		}
		if _, err := rt.Call(ctx, "tracker__get_issue", map[string]any{"id": "CHK-101"}); err != nil {
			t.Fatal(err)
		}
		c2, _ := s.connected(ctx)
		if c2 == c || c2.cmd.Process.Pid == pid {
			t.Error("no new connection")
		}
	})
	t.Run("Close stops the child", func(t *testing.T) {
		s, _ := rt.server("tracker")
		c, _ := s.connected(ctx)
		pid := c.cmd.Process.Pid
		start := time.Now()
		if err := rt.Close(); err != nil {
			t.Error(err)
		}
		if took := time.Since(start); took >= mcpTerminate {
			t.Errorf("Close took %s for a server that exits on EOF", took)
		}
		if !waitGone(pid, time.Second) {
			t.Errorf("the server (pid %d) outlived Close", pid)
		}
		if _, err := rt.Call(ctx, "tracker__get_issue", map[string]any{"id": "CHK-101"}); err == nil || !strings.Contains(err.Error(), "closed") {
			t.Errorf("a call after Close: %v", err)
		}
	})
}

func TestMCPFilteringAndOverrides(t *testing.T) {
	rt, _ := newRuntime(t, map[string]string{".stepwise/config.toml": stdioServer("tracker", "tracker", `include_tools = ["list_issues", "get_issue", "search"]
exclude_tools = ["search"]
[mcp.tracker.tool_overrides.get_issue]
description = "Read one issue."
output_example = { id = "CHK-101", comments = [] }
[mcp.tracker.tool_overrides.list_issues]
output_schema = { type = "object" }
`)}, nil)
	ctx := context.Background()
	infos, err := rt.ServerTools(ctx, "tracker")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := toolNames(infos), []string{"tracker__get_issue", "tracker__list_issues"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("tools = %v, want %v", got, want)
	}
	get, list := infos[0], infos[1]
	if get.Description != "Read one issue." || !reflect.DeepEqual(get.OutputExample, map[string]any{"id": "CHK-101", "comments": []any{}}) || get.OutputSchema == nil {
		t.Errorf("get_issue = %+v", get)
	}
	if !reflect.DeepEqual(list.OutputSchema, map[string]any{"type": "object"}) || !strings.HasPrefix(list.Description, "List issues") {
		t.Errorf("list_issues = %+v", list)
	}
	for _, tool := range []string{"add_comment", "search"} {
		_, err := rt.Call(ctx, "tracker__"+tool, map[string]any{"query": "x"})
		want := fmt.Sprintf("mcp server 'tracker' has a tool '%s', but [mcp.tracker] leaves it out (include_tools/exclude_tools)", tool)
		if !errors.Is(err, ErrUnknownTool) || err.Error() != want {
			t.Errorf("%s: %v", tool, err)
		}
	}
	if _, err := rt.Call(ctx, "tracker__get_issue", map[string]any{"id": "chk-101"}); err != nil {
		t.Error(err)
	}
}

// textServer is an MCP server whose tools answer in text, the way most
// servers without output schemas do.
func textServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "text", Version: "1"}, nil)
	schema := map[string]any{"type": "object", "properties": map[string]any{"say": map[string]any{"type": "string"}}}
	text := func(s string, isError bool) mcp.ToolHandler {
		return func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}, IsError: isError}, nil
		}
	}
	s.AddTool(&mcp.Tool{Name: "plain", Description: "Plain text.", InputSchema: schema}, text("hello, world", false))
	s.AddTool(&mcp.Tool{Name: "json_text", Description: "JSON as text.", InputSchema: schema}, text(`{"n": 7, "tags": ["a"]}`, false))
	s.AddTool(&mcp.Tool{Name: "broken", Description: "Fails.", InputSchema: schema}, text("the backend is down", true))
	s.AddTool(&mcp.Tool{Name: "two_parts", Description: "Two text blocks.", InputSchema: schema},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "first"}, &mcp.TextContent{Text: "second"}}}, nil
		})
	return s
}

// serveHTTP serves an MCP server over streamable HTTP on 127.0.0.1, only to
// requests that carry the header want (name: value).
func serveHTTP(t *testing.T, srv *mcp.Server, header, want string) string {
	t.Helper()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(header) != want {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

func TestMCPHTTP(t *testing.T) {
	trackerURL := serveHTTP(t, examples.TrackerServer(), "Authorization", "Bearer sekrit")
	textURL := serveHTTP(t, textServer(), "X-Team", "core")
	config := fmt.Sprintf(`[mcp.tracker]
url = %q
headers = { Authorization = "Bearer ${SW_TOKEN}" }

[mcp.text]
url = %q
headers = { X-Team = "core" }

[mcp.wrongkey]
url = %q
headers = { Authorization = "Bearer nope" }

[mcp.locked]
url = %q
headers = { Authorization = "Bearer ${SW_UNSET_TOKEN}" }
`, trackerURL, textURL, trackerURL, trackerURL)
	rt, _ := newRuntime(t, map[string]string{".stepwise/config.toml": config}, map[string]string{"SW_TOKEN": "sekrit"})
	ctx := context.Background()

	got, err := rt.Call(ctx, "tracker__search", map[string]any{"query": "checkout timeouts", "limit": 1})
	if err != nil {
		t.Fatal(err)
	}
	if ids := trackerIDs(t, got); !reflect.DeepEqual(ids, []string{"CHK-104"}) {
		t.Errorf("search ids = %v", ids)
	}

	tests := []struct {
		tool string
		want any
	}{
		{"text__plain", map[string]any{"text": "hello, world"}},
		{"text__json_text", jsonValue(t, `{"n": 7, "tags": ["a"]}`)},
		{"text__two_parts", map[string]any{"text": "first\nsecond"}},
	}
	for _, tc := range tests {
		t.Run(tc.tool, func(t *testing.T) {
			got, err := rt.Call(ctx, tc.tool, map[string]any{"say": "x"})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %#v, want %#v", got, tc.want)
			}
		})
	}
	t.Run("isError", func(t *testing.T) {
		_, err := rt.Call(ctx, "text__broken", nil)
		if te := toolErr(t, err); te.Error() != "the backend is down" || te.Tool != "text__broken" {
			t.Errorf("ToolError = %+v", te)
		}
	})
	t.Run("wrong header", func(t *testing.T) {
		_, err := rt.ServerTools(ctx, "wrongkey")
		if err == nil || !strings.HasPrefix(err.Error(), fmt.Sprintf("mcp server 'wrongkey' (http: %s): cannot connect: ", trackerURL)) || !strings.Contains(err.Error(), "nauthorized") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("an unset variable refuses to connect", func(t *testing.T) {
		for _, call := range []func() error{
			func() error { _, err := rt.ServerTools(ctx, "locked"); return err },
			func() error { _, err := rt.Call(ctx, "locked__search", map[string]any{"query": "x"}); return err },
		} {
			err := call()
			if err == nil || !strings.HasPrefix(err.Error(), "mcp server 'locked' refuses to connect: ") || !strings.Contains(err.Error(), "environment variable SW_UNSET_TOKEN is not set") {
				t.Errorf("err = %v", err)
			}
		}
	})
	t.Run("a server that is not configured", func(t *testing.T) {
		_, err := rt.ServerTools(ctx, "trakcer")
		if err == nil || err.Error() != `mcp server "trakcer" is not configured (configured: locked, text, tracker, wrongkey); did you mean 'tracker'?` {
			t.Errorf("err = %v", err)
		}
	})
}

func TestMCPStartFailures(t *testing.T) {
	rt, _ := newRuntime(t, map[string]string{".stepwise/config.toml": stdioServer("dies", "dies", "") + `
[mcp.absent]
command = "stepwise-test-no-such-server"
args = ["--flag", "two words"]
`}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := rt.ServerTools(ctx, "dies")
	if err == nil || !strings.HasPrefix(err.Error(), fmt.Sprintf("mcp server 'dies' (stdio: %s \"-test.run=^$\"): cannot connect: ", os.Args[0])) ||
		!strings.HasSuffix(err.Error(), "; its stderr ends: loading the index; tracker: cannot open database /var/lib/tracker.db: permission denied") {
		t.Errorf("a server that dies on start: %v", err)
	}
	_, err = rt.ServerTools(ctx, "absent")
	if err == nil || err.Error() != `mcp server 'absent' (stdio: stepwise-test-no-such-server --flag "two words"): cannot connect: exec: "stepwise-test-no-such-server": executable file not found in $PATH` {
		t.Errorf("a server that is not there: %v", err)
	}
}

func TestMCPCloseKillsAStubbornServer(t *testing.T) {
	rt, _ := newRuntime(t, map[string]string{".stepwise/config.toml": stdioServer("stubborn", "stubborn", "")}, nil)
	ctx := context.Background()
	if _, err := rt.Call(ctx, "stubborn__get_issue", map[string]any{"id": "CHK-101"}); err != nil {
		t.Fatal(err)
	}
	s, _ := rt.server("stubborn")
	c, _ := s.connected(ctx)
	pid := c.cmd.Process.Pid
	start := time.Now()
	rt.Close()
	// Close gives up at mcpGiveUp; the margin is for a loaded machine, not
	// for Close, which without its bound would wait on the server forever.
	if took := time.Since(start); took > 2*mcpGiveUp {
		t.Errorf("Close took %s", took)
	}
	if !waitGone(pid, time.Second) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("the stubborn server (pid %d) outlived Close", pid)
	}
}

// TestMCPEverything runs against the reference server of the MCP project,
// @modelcontextprotocol/server-everything (pinned 2026.8.31): a server in
// another language and SDK. STEPWISE_MCP_EVERYTHING is the path of its
// mcp-server-everything executable; CI must set it.
func TestMCPEverything(t *testing.T) {
	exe := os.Getenv("STEPWISE_MCP_EVERYTHING")
	if exe == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("STEPWISE_MCP_EVERYTHING is not set; CI must install @modelcontextprotocol/server-everything and point it at mcp-server-everything")
		}
		t.Skip("STEPWISE_MCP_EVERYTHING is not set (the path of @modelcontextprotocol/server-everything's mcp-server-everything)")
	}
	rt, _ := newRuntime(t, map[string]string{".stepwise/config.toml": fmt.Sprintf(`[mcp.everything]
command = %q
args = ["stdio"]
env = { SW_EVERYTHING_MARK = "${SW_MARK}" }
exclude_tools = ["trigger-long-running-operation"]
[mcp.everything.tool_overrides.get-sum]
description = "Adds two numbers."
output_example = { text = "The sum of 2 and 3 is 5." }
`, exe)}, map[string]string{"SW_MARK": "marked"})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	infos, err := rt.ServerTools(ctx, "everything")
	if err != nil {
		t.Fatal(err)
	}
	names := toolNames(infos)
	for _, want := range []string{"everything__echo", "everything__get-sum", "everything__get-structured-content", "everything__get-env"} {
		if !slices.Contains(names, want) {
			t.Errorf("%s is not listed: %v", want, names)
		}
	}
	if slices.Contains(names, "everything__trigger-long-running-operation") {
		t.Error("an excluded tool is listed")
	}
	for _, info := range infos {
		if info.Name == "everything__get-sum" && (info.Description != "Adds two numbers." || info.ReadOnly == nil || !*info.ReadOnly) {
			t.Errorf("get-sum = %+v", info)
		}
		if info.Name == "everything__get-structured-content" && info.OutputSchema == nil {
			t.Errorf("get-structured-content declares no output schema: %+v", info)
		}
	}

	tests := []struct {
		tool  string
		input map[string]any
		want  any
	}{
		{"everything__echo", map[string]any{"message": "hi {{there}}"}, map[string]any{"text": "Echo: hi {{there}}"}},
		{"everything__get-sum", map[string]any{"a": 2, "b": 3}, map[string]any{"text": "The sum of 2 and 3 is 5."}},
		{"everything__get-structured-content", map[string]any{"location": "Chicago"},
			jsonValue(t, `{"temperature": 36, "conditions": "Light rain / drizzle", "humidity": 82}`)},
	}
	for _, tc := range tests {
		t.Run(tc.tool, func(t *testing.T) {
			got, err := rt.Call(ctx, tc.tool, tc.input)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %#v, want %#v", got, tc.want)
			}
		})
	}
	t.Run("content that is not text is kept", func(t *testing.T) {
		got, err := rt.Call(ctx, "everything__get-resource-links", map[string]any{"count": 2})
		if err != nil {
			t.Fatal(err)
		}
		content, _ := got.(map[string]any)["content"].([]any)
		if len(content) != 2 {
			t.Fatalf("content %#v", got)
		}
		link, _ := content[0].(map[string]any)
		if link["type"] != "resource_link" || link["uri"] == nil {
			t.Errorf("first link %#v", link)
		}
		got, err = rt.Call(ctx, "everything__get-tiny-image", nil)
		if err != nil {
			t.Fatal(err)
		}
		content, _ = got.(map[string]any)["content"].([]any)
		if len(content) != 1 || content[0].(map[string]any)["type"] != "image" || content[0].(map[string]any)["mimeType"] != "image/png" {
			t.Errorf("image %#v", got)
		}
	})
	t.Run("the configured env rides on the parent's", func(t *testing.T) {
		got, err := rt.Call(ctx, "everything__get-env", nil)
		if err != nil {
			t.Fatal(err)
		}
		env, _ := got.(map[string]any)
		if env["SW_EVERYTHING_MARK"] != "marked" || env["PATH"] != os.Getenv("PATH") {
			t.Errorf("server env: mark %v, PATH %v", env["SW_EVERYTHING_MARK"], env["PATH"])
		}
	})
	t.Run("input is checked before the call", func(t *testing.T) {
		_, err := rt.Call(ctx, "everything__get-sum", map[string]any{"a": "two", "b": 3})
		if te := toolErr(t, err); !te.Input || !strings.Contains(te.Error(), "/a: got string, want number") {
			t.Errorf("ToolError = %+v: %v", te, te)
		}
	})
	t.Run("a structured content tool's enum", func(t *testing.T) {
		_, err := rt.Call(ctx, "everything__get-structured-content", map[string]any{"location": "Paris"})
		if te := toolErr(t, err); !te.Input {
			t.Errorf("ToolError = %+v", te)
		}
	})

	s, _ := rt.server("everything")
	c, _ := s.connected(ctx)
	pid := c.cmd.Process.Pid
	start := time.Now()
	if err := rt.Close(); err != nil {
		t.Error(err)
	}
	// Close gives up at mcpGiveUp; the margin is for a loaded machine, not
	// for Close, which without its bound would wait on the server forever.
	if took := time.Since(start); took > 2*mcpGiveUp {
		t.Errorf("Close took %s", took)
	}
	if !waitGone(pid, time.Second) {
		t.Errorf("the server (pid %d) outlived Close", pid)
	}
}

func TestMCPUnmatchedConfig(t *testing.T) {
	rt, _ := newRuntime(t, map[string]string{".stepwise/config.toml": stdioServer("tracker", "tracker", `include_tools = ["list_issues", "get_isue"]
exclude_tools = ["search"]
[mcp.tracker.tool_overrides.ghost]
description = "Nothing."
`)}, nil)
	got, err := rt.Unmatched(context.Background(), "tracker")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"[mcp.tracker] include_tools names 'get_isue', which the server does not have; did you mean 'get_issue'?",
		"[mcp.tracker] tool_overrides names 'ghost', which the server does not have",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

// TestMCPErrorsHideSecrets checks that a secret expanded into a server's
// args, which its label and its stderr repeat, is shown as the variable
// that holds it.
func TestMCPErrorsHideSecrets(t *testing.T) {
	const token = "tok-canary-12345"
	config := "[mcp.leaky]\ncommand = \"sh\"\nargs = [\"-c\", \"echo token is $0 >&2; exit 3\", \"${SW_TEST_TOKEN}\"]\n"
	rt, _ := newRuntime(t, map[string]string{".stepwise/config.toml": config}, map[string]string{"SW_TEST_TOKEN": token})
	_, err := rt.Call(context.Background(), "leaky__anything", nil)
	if err == nil || strings.Contains(err.Error(), token) || !strings.Contains(err.Error(), "token is ${SW_TEST_TOKEN}") {
		t.Errorf("error %v", err)
	}
}

// hugeServer has a tool that answers with a text of the size asked for,
// one that answers with its process id, and one whose description makes
// the tool list some 2 KiB, longer than the answer to initialize.
func hugeServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "huge", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "wordy", Description: strings.Repeat("Says little. ", 160), InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "little"}}}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "pid", Description: "Its process id.", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strconv.Itoa(os.Getpid())}}}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "text", Description: "A text of the size asked for.", InputSchema: map[string]any{"type": "object"}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct{ Bytes int }
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("x", in.Bytes)}}}, nil
		})
	return srv
}

// TestMCPResultLimit checks that an answer longer than [limits]
// mcp_result_bytes fails the call naming the key, over stdio and over HTTP,
// and that the server answers the next call (a stdio server restarted).
func TestMCPResultLimit(t *testing.T) {
	const limit = 1 << 20
	httpURL := serveHTTP(t, hugeServer(), "X-Team", "core")
	config := fmt.Sprintf("[limits]\nmcp_result_bytes = %d\n%s\n[mcp.web]\nurl = %q\nheaders = { X-Team = \"core\" }\n", limit, stdioServer("stdio", "huge", ""), httpURL)
	rt, _ := newRuntime(t, map[string]string{".stepwise/config.toml": config}, nil)
	ctx := context.Background()
	for _, server := range []string{"stdio", "web"} {
		t.Run(server, func(t *testing.T) {
			pid := func() string {
				t.Helper()
				v, err := rt.Call(ctx, server+"__pid", nil)
				if err != nil {
					t.Fatalf("pid: %v", err)
				}
				return fmt.Sprint(v)
			}
			first := pid()
			if v, err := rt.Call(ctx, server+"__text", map[string]any{"bytes": limit / 2}); err != nil || len(fmt.Sprint(v)) < limit/2 {
				t.Fatalf("an answer within the limit: %.80v, %v", v, err)
			}
			_, err := rt.Call(ctx, server+"__text", map[string]any{"bytes": 8 * limit})
			want := "the server's answer passed 1048576 bytes ([limits] mcp_result_bytes) and was not read further; raise the limit if the tool's results are meant to be that large"
			if te := toolErr(t, err); te.Error() != want || te.Tool != server+"__text" {
				t.Errorf("error %v\nwant  %s", err, want)
			}
			if again := pid(); server == "stdio" && again == first {
				t.Errorf("the stdio server (%s) that was cut off was given the next call", first)
			}
		})
	}
}

// TestMCPHandshakeLimit checks that [limits] mcp_result_bytes bounds the
// answers to initialize and tools/list too, and that a connection it
// fails says so as clearly as a call it fails: the size, the key, and
// that it bounds every message, over stdio and over HTTP.
func TestMCPHandshakeLimit(t *testing.T) {
	httpURL := serveHTTP(t, hugeServer(), "X-Team", "core")
	servers := stdioServer("stdio", "huge", "") + fmt.Sprintf("\n[mcp.web]\nurl = %q\nheaders = { X-Team = \"core\" }\n", httpURL)
	const hint = "the limit bounds every message from the server, not only a tool's results: raise it if the server's messages are meant to be that large"
	tests := []struct {
		name  string
		limit int
		want  string
	}{
		// The answer to initialize is some 300 to 400 bytes, the tool
		// list over 2,000.
		{"initialize", 100, "cannot connect: the server's answer to initialize passed 100 bytes ([limits] mcp_result_bytes) and was not read further; " + hint},
		{"tools/list", 1000, "cannot list its tools: the server's tool list passed 1000 bytes ([limits] mcp_result_bytes) and was not read further; " + hint},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt, _ := newRuntime(t, map[string]string{".stepwise/config.toml": fmt.Sprintf("[limits]\nmcp_result_bytes = %d\n%s", tt.limit, servers)}, nil)
			for _, server := range []string{"stdio", "web"} {
				_, err := rt.ServerTools(context.Background(), server)
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("%s: error %v\nwant it to hold %s", server, err, tt.want)
				}
			}
		})
	}
}

// TestMessageLimit checks the reader that bounds each message: whatever
// the reads' sizes, the messages before a long one are handed on, and no
// more than the limit of the long one (want: the most that may be).
func TestMessageLimit(t *testing.T) {
	tests := []struct {
		name, in string
		perLine  bool
		want     string
		over     bool
	}{
		{name: "lines within the limit", in: "abcd\nabcd\n\nab", perLine: true, want: "abcd\nabcd\n\nab"},
		{name: "a long line after short ones", in: "ab\nabcd\nabcde\nab\n", perLine: true, want: "ab\nabcd\nabcd", over: true},
		{name: "a long last line with no newline", in: "ab\nabcdefgh", perLine: true, want: "ab\nabcd", over: true},
		{name: "a body within the limit", in: "a\nb\n", want: "a\nb\n"},
		{name: "a body past the limit, however it is split into lines", in: "a\nb\nc", want: "a\nb\n", over: true},
	}
	for _, tt := range tests {
		for _, oneByte := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/one byte a read: %v", tt.name, oneByte), func(t *testing.T) {
				var r io.Reader = strings.NewReader(tt.in)
				if oneByte {
					r = iotest.OneByteReader(r)
				}
				told := 0
				got, err := io.ReadAll(&messageLimit{r: r, limit: 4, perLine: tt.perLine, over: func() { told++ }})
				if tt.over != errors.Is(err, errMessageTooLong) || tt.over != (told == 1) {
					t.Errorf("error %v, over told %d times; want over: %v", err, told, tt.over)
				}
				if tt.over && !strings.HasPrefix(tt.want, string(got)) || !tt.over && string(got) != tt.in {
					t.Errorf("read %q, want %q or less of it", got, tt.want)
				}
				if whole := tt.want[:strings.LastIndex(tt.want, "\n")+1]; tt.perLine && !strings.HasPrefix(string(got), whole) {
					t.Errorf("read %q, want the whole lines before the long one, %q", got, whole)
				}
			})
		}
	}
}
