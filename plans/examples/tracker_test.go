package examples

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stepwise-dev/stepwise/plans"
)

// serveEnv makes the test binary a tracker server: TestMain sees it and runs
// ServeTracker instead of the tests, the way the stepwise binary runs it as
// __demo-mcp.
const serveEnv = "STEPWISE_EXAMPLES_SERVE_TRACKER"

func TestMain(m *testing.M) {
	if os.Getenv(serveEnv) == "1" {
		if err := ServeTracker(context.Background()); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// connectInMemory connects a client to a fresh tracker over an in-memory
// transport pair.
func connectInMemory(t *testing.T) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	serverSide, clientSide := mcp.NewInMemoryTransports()
	ss, err := TrackerServer().Connect(ctx, serverSide, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "examples-test", Version: "0"}, nil).Connect(ctx, clientSide, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

// connectSubprocess starts the test binary as a tracker server, a real stdio
// child like the one stepwise starts for [mcp.tracker], and connects to it.
func connectSubprocess(t *testing.T) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), serveEnv+"=1")
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "examples-test", Version: "0"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls a tool and decodes its structured result into out (when not
// nil). It returns the result's text and whether it is an error result.
func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, out any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", name, err)
	}
	var text strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	if res.IsError || out == nil {
		return text.String(), res.IsError
	}
	if res.StructuredContent == nil {
		t.Fatalf("%s: no structured content in %q", name, text.String())
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatalf("%s: structured content %s: %v", name, raw, err)
	}
	return text.String(), false
}

func ids(issues []Issue) []string {
	out := make([]string, len(issues))
	for i, is := range issues {
		out[i] = is.ID
	}
	return out
}

func TestTrackerToolList(t *testing.T) {
	cs := connectInMemory(t)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	readOnly := map[string]bool{"list_issues": true, "get_issue": true, "search": true, "add_comment": false}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		want, known := readOnly[tool.Name]
		if !known {
			t.Errorf("unexpected tool %s", tool.Name)
			continue
		}
		if tool.Description == "" {
			t.Errorf("%s: no description", tool.Name)
		}
		for kind, schema := range map[string]any{"input": tool.InputSchema, "output": tool.OutputSchema} {
			m, ok := schema.(map[string]any)
			if !ok || m["type"] != "object" {
				t.Errorf("%s: %s schema is %v, want an object schema", tool.Name, kind, schema)
			}
		}
		if tool.Annotations == nil {
			t.Errorf("%s: no annotations", tool.Name)
			continue
		}
		if got := tool.Annotations.ReadOnlyHint; got != want {
			t.Errorf("%s: readOnlyHint = %v, want %v", tool.Name, got, want)
		}
	}
	slices.Sort(names)
	if want := []string{"add_comment", "get_issue", "list_issues", "search"}; !slices.Equal(names, want) {
		t.Errorf("tools = %v, want %v", names, want)
	}
}

func TestTrackerLists(t *testing.T) {
	cs := connectInMemory(t)
	tests := []struct {
		name      string
		tool      string
		args      map[string]any
		wantIDs   []string
		wantTotal int
	}{
		{"everything, most urgent first", "list_issues", map[string]any{},
			[]string{"CHK-104", "CHK-101", "CHK-107", "CHK-110", "CHK-103", "CHK-102", "CHK-108", "CHK-112", "CHK-109", "CHK-106", "CHK-105", "CHK-111"}, 12},
		{"open with a limit", "list_issues", map[string]any{"state": "open", "limit": 6},
			[]string{"CHK-104", "CHK-101", "CHK-103", "CHK-102", "CHK-109", "CHK-106"}, 8},
		{"closed incidents", "list_issues", map[string]any{"state": "closed", "label": "incident"},
			[]string{"CHK-107", "CHK-110", "CHK-112"}, 3},
		{"no match", "list_issues", map[string]any{"label": "nonexistent"}, []string{}, 0},
		{"search ranks titles holding more words first", "search", map[string]any{"query": "Checkout TIMEOUTS"},
			[]string{"CHK-104", "CHK-101", "CHK-110", "CHK-106"}, 4},
		{"search with a limit", "search", map[string]any{"query": "gateway", "limit": 1},
			[]string{"CHK-107"}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got IssueList
			if text, isErr := call(t, cs, tt.tool, tt.args, &got); isErr {
				t.Fatalf("error result: %s", text)
			}
			if !slices.Equal(ids(got.Issues), tt.wantIDs) || got.Total != tt.wantTotal {
				t.Errorf("got %v (total %d), want %v (total %d)", ids(got.Issues), got.Total, tt.wantIDs, tt.wantTotal)
			}
		})
	}
}

func TestTrackerGetIssue(t *testing.T) {
	cs := connectInMemory(t)
	var got IssueDetail
	if text, isErr := call(t, cs, "get_issue", map[string]any{"id": "chk-107"}, &got); isErr {
		t.Fatalf("error result: %s", text)
	}
	if got.ID != "CHK-107" || got.State != "closed" || got.Assignee != "priya" || !slices.Equal(got.Labels, []string{"incident", "payments"}) {
		t.Errorf("issue = %+v", got.Issue)
	}
	var commentIDs []string
	for _, c := range got.Comments {
		commentIDs = append(commentIDs, c.ID)
	}
	if !slices.Equal(commentIDs, []string{"C-3", "C-4"}) {
		t.Errorf("comments = %v, want [C-3 C-4]", commentIDs)
	}
}

func TestTrackerAddComment(t *testing.T) {
	cs := connectInMemory(t)
	var c Comment
	if text, isErr := call(t, cs, "add_comment", map[string]any{"id": "CHK-103", "body": "  Triage: sev3.  "}, &c); isErr {
		t.Fatalf("error result: %s", text)
	}
	want := Comment{ID: "C-11", IssueID: "CHK-103", Author: "triage-desk", Body: "Triage: sev3.", Created: "2026-03-02T09:01:00Z"}
	if c != want {
		t.Errorf("comment = %+v, want %+v", c, want)
	}
	var second Comment
	call(t, cs, "add_comment", map[string]any{"id": "CHK-103", "body": "Taking it.", "author": "lena"}, &second)
	if second.ID != "C-12" || second.Author != "lena" || second.Created != "2026-03-02T09:02:00Z" {
		t.Errorf("second comment = %+v", second)
	}
	var d IssueDetail
	call(t, cs, "get_issue", map[string]any{"id": "CHK-103"}, &d)
	if n := len(d.Comments); n != 3 || d.Comments[n-1].ID != "C-12" || d.Updated != second.Created {
		t.Errorf("after two comments: updated %s, comments %+v", d.Updated, d.Comments)
	}
}

func TestTrackerErrors(t *testing.T) {
	cs := connectInMemory(t)
	tests := []struct {
		name string
		tool string
		args map[string]any
		want string // in the error text
	}{
		{"unknown id", "get_issue", map[string]any{"id": "CHK-999"}, `no issue "CHK-999"`},
		{"comment on an unknown id", "add_comment", map[string]any{"id": "OPS-1", "body": "hello"}, `no issue "OPS-1"`},
		{"empty comment", "add_comment", map[string]any{"id": "CHK-101", "body": "  "}, "body is empty"},
		{"unknown state", "list_issues", map[string]any{"state": "done"}, `unknown state "done"`},
		{"negative limit", "list_issues", map[string]any{"limit": -1}, "limit must not be negative"},
		{"empty query", "search", map[string]any{"query": ""}, "query is empty"},
		{"missing argument", "get_issue", map[string]any{}, "id"},
		{"wrong type", "list_issues", map[string]any{"limit": "6"}, "limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, isErr := call(t, cs, tt.tool, tt.args, nil)
			if !isErr {
				t.Fatalf("want an error result, got %q", text)
			}
			if !strings.Contains(text, tt.want) {
				t.Errorf("error %q does not mention %q", text, tt.want)
			}
		})
	}
}

// TestTrackerSubprocess runs the server the way stepwise does: a child
// process speaking MCP over its stdin and stdout.
func TestTrackerSubprocess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a subprocess")
	}
	cs := connectSubprocess(t)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != 4 {
		t.Errorf("got %d tools, want 4", len(res.Tools))
	}
	var d IssueDetail
	if text, isErr := call(t, cs, "get_issue", map[string]any{"id": "CHK-101"}, &d); isErr {
		t.Fatalf("error result: %s", text)
	}
	if d.Title != "Card payments time out at checkout for EU customers" || len(d.Comments) != 2 {
		t.Errorf("got %+v", d)
	}
	if text, isErr := call(t, cs, "get_issue", map[string]any{"id": "CHK-0"}, nil); !isErr {
		t.Errorf("unknown id: want an error result, got %q", text)
	}
}

// TestTrackerRunsApart: each run named in a call's _meta has a tracker of
// its own, seeded afresh; calls that name no run share another.
func TestTrackerRunsApart(t *testing.T) {
	cs := connectInMemory(t)
	comments := func(run string) int {
		t.Helper()
		params := &mcp.CallToolParams{Name: "get_issue", Arguments: map[string]any{"id": "CHK-103"}}
		if run != "" {
			params.Meta = mcp.Meta{plans.RunIDMeta: run}
		}
		res, err := cs.CallTool(context.Background(), params)
		if err != nil || res.IsError {
			t.Fatalf("get_issue in run %q: %v %+v", run, err, res)
		}
		raw, _ := json.Marshal(res.StructuredContent)
		var d IssueDetail
		if err := json.Unmarshal(raw, &d); err != nil {
			t.Fatal(err)
		}
		return len(d.Comments)
	}
	seed := comments("")
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "add_comment", Arguments: map[string]any{"id": "CHK-103", "body": "Run A was here."},
		Meta: mcp.Meta{plans.RunIDMeta: "run-a"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := comments("run-a"); got != seed+1 {
		t.Errorf("run A sees %d comments after posting one, want %d", got, seed+1)
	}
	if got := comments("run-b"); got != seed {
		t.Errorf("run B sees %d comments, want the seed's %d", got, seed)
	}
	if got := comments(""); got != seed {
		t.Errorf("a call naming no run sees %d comments, want the seed's %d", got, seed)
	}
}
