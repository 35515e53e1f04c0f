package examples

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stepwise-dev/stepwise/plans"
)

// Issue is one issue of the demo tracker as its tools return it.
type Issue struct {
	ID       string   `json:"id" jsonschema:"the issue id, e.g. CHK-104"`
	Title    string   `json:"title"`
	State    string   `json:"state" jsonschema:"open, in_progress or closed"`
	Priority int      `json:"priority" jsonschema:"1 (urgent) to 4 (low)"`
	Labels   []string `json:"labels"`
	Assignee string   `json:"assignee" jsonschema:"who owns the issue; empty when nobody does"`
	Updated  string   `json:"updated" jsonschema:"when the issue last changed, RFC 3339 in UTC"`
}

// Comment is one comment on an issue.
type Comment struct {
	ID      string `json:"id" jsonschema:"the comment id, e.g. C-3"`
	IssueID string `json:"issue_id"`
	Author  string `json:"author"`
	Body    string `json:"body"`
	Created string `json:"created" jsonschema:"RFC 3339 in UTC"`
}

// IssueDetail is an issue with its comments, oldest first: what get_issue
// returns.
type IssueDetail struct {
	Issue
	Comments []Comment `json:"comments"`
}

// IssueList is what list_issues and search return.
type IssueList struct {
	Issues []Issue `json:"issues"`
	Total  int     `json:"total" jsonschema:"how many issues matched before the limit was applied"`
}

// ListIssuesInput filters list_issues. Every filter is optional.
type ListIssuesInput struct {
	State string `json:"state,omitempty" jsonschema:"only issues in this state: open, in_progress or closed"`
	Label string `json:"label,omitempty" jsonschema:"only issues that carry this label"`
	Limit int    `json:"limit,omitempty" jsonschema:"at most this many issues; default 20, at most 50"`
}

// GetIssueInput names the issue get_issue reads.
type GetIssueInput struct {
	ID string `json:"id" jsonschema:"the issue id, e.g. CHK-104"`
}

// AddCommentInput is a comment to add.
type AddCommentInput struct {
	ID     string `json:"id" jsonschema:"the issue to comment on"`
	Body   string `json:"body" jsonschema:"the comment text"`
	Author string `json:"author,omitempty" jsonschema:"who signs the comment; default triage-desk"`
}

// SearchInput is a search over issue titles.
type SearchInput struct {
	Query string `json:"query" jsonschema:"words to look for in issue titles; an issue matches when its title holds any of them, and titles holding more of them rank first"`
	Limit int    `json:"limit,omitempty" jsonschema:"at most this many issues; default 20, at most 50"`
}

// The limits of list_issues and search.
const (
	defaultLimit = 20
	maxLimit     = 50
)

// issueStates are the states an issue can be in, in workflow order.
var issueStates = []string{"open", "in_progress", "closed"}

// tracker is the demo's in-memory issue tracker. It starts from the same
// seed every time, and its clock is fixed, so that every run of the demo,
// and every test, sees the same data.
type tracker struct {
	mu       sync.Mutex
	issues   []Issue // in id order
	comments []Comment
	now      time.Time // advances one minute per comment added
}

func newTracker() *tracker {
	return &tracker{
		issues:   seedIssues(),
		comments: seedComments(),
		now:      seedNow,
	}
}

// runsKept is how many runs' trackers a server keeps: a workbench session
// that runs the demo all day must not grow without bound, and a run older
// than the last runsKept is long finished.
const runsKept = 64

// desk is a server's trackers: one per run, so that each run starts from
// the seed even though every run of a workbench shares one server, and one
// for the calls that name no run (a client other than stepwise).
type desk struct {
	mu     sync.Mutex
	byRun  map[string]*tracker
	order  []string // run ids, oldest first
	shared *tracker
}

// tracker is the tracker of the run that made the call, by the run id the
// call's _meta carries (plans.RunIDMeta), made fresh on the run's first
// call.
func (d *desk) tracker(req *mcp.CallToolRequest) *tracker {
	id, _ := req.Params.GetMeta()[plans.RunIDMeta].(string)
	d.mu.Lock()
	defer d.mu.Unlock()
	if id == "" {
		return d.shared
	}
	if t, ok := d.byRun[id]; ok {
		return t
	}
	if len(d.order) == runsKept {
		delete(d.byRun, d.order[0])
		d.order = d.order[1:]
	}
	t := newTracker()
	d.byRun[id] = t
	d.order = append(d.order, id)
	return t
}

// perRun is a tool handler that calls method on the tracker of the
// calling run.
func perRun[In, Out any](d *desk, method func(*tracker, context.Context, *mcp.CallToolRequest, In) (*mcp.CallToolResult, Out, error)) mcp.ToolHandlerFor[In, Out] {
	return func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		return method(d.tracker(req), ctx, req, in)
	}
}

// ServeTracker serves the demo issue tracker as an MCP server over stdin and
// stdout until the client disconnects or ctx ends. The stepwise executable
// runs it as its hidden __demo-mcp subcommand: the [mcp.tracker] server of
// the demo project.
func ServeTracker(ctx context.Context) error {
	return TrackerServer().Run(ctx, &mcp.StdioTransport{})
}

// TrackerServer builds the demo tracker's MCP server, for serving over any
// transport: ServeTracker serves it over stdio, tests over streamable HTTP
// too. Each run that calls it (named in the call's _meta) gets a freshly
// seeded tracker of its own; calls that name no run share one.
func TrackerServer() *mcp.Server {
	d := &desk{byRun: map[string]*tracker{}, shared: newTracker()}
	s := mcp.NewServer(&mcp.Implementation{Name: "stepwise-demo-tracker", Title: "Checkout team issue tracker (demo)", Version: "1.0.0"},
		&mcp.ServerOptions{Instructions: "The checkout team's issue tracker. Issue ids look like CHK-104. " +
			"Use search to find issues by words in their titles and get_issue to read one with its comments."})
	closedWorld := false
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &closedWorld}
	mcp.AddTool(s, &mcp.Tool{
		Name:        "list_issues",
		Title:       "List issues",
		Description: "List issues, most urgent first (priority 1 first, then the most recently updated). Filter by state and label.",
		Annotations: readOnly,
	}, perRun(d, (*tracker).listIssues))
	mcp.AddTool(s, &mcp.Tool{
		Name:        "get_issue",
		Title:       "Get issue",
		Description: "Read one issue with all its comments, oldest comment first.",
		Annotations: readOnly,
	}, perRun(d, (*tracker).getIssue))
	mcp.AddTool(s, &mcp.Tool{
		Name:        "search",
		Title:       "Search issues",
		Description: "Find issues whose titles contain any of the query's words (case-insensitive); titles that contain more of the words rank first.",
		Annotations: readOnly,
	}, perRun(d, (*tracker).search))
	notDestructive := false
	mcp.AddTool(s, &mcp.Tool{
		Name:        "add_comment",
		Title:       "Add comment",
		Description: "Add a comment to an issue and return it. Comments are never edited or deleted.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &notDestructive, OpenWorldHint: &closedWorld},
	}, perRun(d, (*tracker).addComment))
	return s
}

func (t *tracker) listIssues(_ context.Context, _ *mcp.CallToolRequest, in ListIssuesInput) (*mcp.CallToolResult, IssueList, error) {
	limit, err := checkLimit(in.Limit)
	if err != nil {
		return nil, IssueList{}, err
	}
	if in.State != "" && !slices.Contains(issueStates, in.State) {
		return nil, IssueList{}, fmt.Errorf("unknown state %q (states: %s)", in.State, strings.Join(issueStates, ", "))
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	var matched []Issue
	for _, is := range t.issues {
		if (in.State == "" || is.State == in.State) && (in.Label == "" || slices.Contains(is.Labels, in.Label)) {
			matched = append(matched, is)
		}
	}
	slices.SortStableFunc(matched, byUrgency)
	return nil, page(matched, limit), nil
}

func (t *tracker) getIssue(_ context.Context, _ *mcp.CallToolRequest, in GetIssueInput) (*mcp.CallToolResult, IssueDetail, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	i, err := t.find(in.ID)
	if err != nil {
		return nil, IssueDetail{}, err
	}
	d := IssueDetail{Issue: clone(t.issues[i]), Comments: []Comment{}}
	for _, c := range t.comments {
		if c.IssueID == d.ID {
			d.Comments = append(d.Comments, c)
		}
	}
	return nil, d, nil
}

func (t *tracker) search(_ context.Context, _ *mcp.CallToolRequest, in SearchInput) (*mcp.CallToolResult, IssueList, error) {
	limit, err := checkLimit(in.Limit)
	if err != nil {
		return nil, IssueList{}, err
	}
	words := strings.Fields(strings.ToLower(in.Query))
	if len(words) == 0 {
		return nil, IssueList{}, errors.New("query is empty; give one or more words to look for in issue titles")
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	type hit struct {
		issue Issue
		score int
	}
	var hits []hit
	for _, is := range t.issues {
		title := strings.ToLower(is.Title)
		score := 0
		for _, w := range words {
			if strings.Contains(title, w) {
				score++
			}
		}
		if score > 0 {
			hits = append(hits, hit{is, score})
		}
	}
	slices.SortStableFunc(hits, func(a, b hit) int {
		if a.score != b.score {
			return b.score - a.score
		}
		return byUrgency(a.issue, b.issue)
	})
	matched := make([]Issue, len(hits))
	for i, h := range hits {
		matched[i] = h.issue
	}
	return nil, page(matched, limit), nil
}

func (t *tracker) addComment(_ context.Context, _ *mcp.CallToolRequest, in AddCommentInput) (*mcp.CallToolResult, Comment, error) {
	body := strings.TrimSpace(in.Body)
	if body == "" {
		return nil, Comment{}, errors.New("body is empty; a comment needs text")
	}
	author := strings.TrimSpace(in.Author)
	if author == "" {
		author = "triage-desk"
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	i, err := t.find(in.ID)
	if err != nil {
		return nil, Comment{}, err
	}
	t.now = t.now.Add(time.Minute)
	c := Comment{
		ID:      fmt.Sprintf("C-%d", len(t.comments)+1),
		IssueID: t.issues[i].ID,
		Author:  author,
		Body:    body,
		Created: t.now.Format(time.RFC3339),
	}
	t.comments = append(t.comments, c)
	t.issues[i].Updated = c.Created
	return nil, c, nil
}

// find returns the index of the issue with the given id, case-insensitively;
// an unknown id is an error that lists the ids there are, so that a model
// that guessed wrong can recover.
func (t *tracker) find(id string) (int, error) {
	want := strings.ToUpper(strings.TrimSpace(id))
	for i, is := range t.issues {
		if is.ID == want {
			return i, nil
		}
	}
	return 0, fmt.Errorf("no issue %q: ids run from %s to %s", id, t.issues[0].ID, t.issues[len(t.issues)-1].ID)
}

func checkLimit(limit int) (int, error) {
	switch {
	case limit < 0:
		return 0, fmt.Errorf("limit must not be negative, got %d", limit)
	case limit == 0:
		return defaultLimit, nil
	case limit > maxLimit:
		return maxLimit, nil
	}
	return limit, nil
}

// byUrgency orders issues the way a triage desk reads them: priority 1
// first, then the most recently updated, then by id.
func byUrgency(a, b Issue) int {
	switch {
	case a.Priority != b.Priority:
		return a.Priority - b.Priority
	case a.Updated != b.Updated:
		return strings.Compare(b.Updated, a.Updated) // RFC 3339 in UTC sorts as text
	}
	return strings.Compare(a.ID, b.ID)
}

// page cuts a sorted match list to limit, copying the issues so that no
// caller shares a slice with the tracker's state.
func page(matched []Issue, limit int) IssueList {
	out := IssueList{Issues: []Issue{}, Total: len(matched)}
	for _, is := range matched[:min(limit, len(matched))] {
		out.Issues = append(out.Issues, clone(is))
	}
	return out
}

func clone(is Issue) Issue {
	is.Labels = slices.Clone(is.Labels)
	if is.Labels == nil {
		is.Labels = []string{}
	}
	return is
}
