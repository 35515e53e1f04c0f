//go:build unix

package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// fakeGitHub is a GitHub for one repository, acme/widgets, speaking the
// REST v3 and GraphQL JSON of GitHub's documentation for the calls the
// github pack makes. It holds its state in memory and records every call.
type fakeGitHub struct {
	t      *testing.T
	url    string
	viewer string // the login the test token belongs to

	mu             sync.Mutex
	nextID         int64
	pulls          map[int]map[string]any
	issueComments  []*fakeComment
	reviewComments []*fakeComment
	threads        []map[string]any // reviewThread nodes of pull request 7
	releases       []map[string]any // newest first, as GitHub lists them
	refuseLine     int              // an inline comment on this line is refused with 422
	unresolvable   map[string]bool  // thread ids resolveReviewThread fails for
	replies        []string         // "THREAD_ID: BODY" of each thread reply
	resolved       []string         // thread ids resolved
	calls          []string         // "METHOD PATH" of every call
}

type fakeComment struct {
	ID     int64
	PR     int
	Author string
	Body   string
	Review map[string]any // path, line, side and commit_id of a review comment
}

const fakeToken = "test-token"

// newFakeGitHub starts the fake on 127.0.0.1:0 and points the github pack
// at it through the environment: GITHUB_API_URL, a token, and
// GITHUB_REPOSITORY.
func newFakeGitHub(t *testing.T) *fakeGitHub {
	f := &fakeGitHub{t: t, viewer: "stepwise-bot", nextID: 1000, pulls: map[int]map[string]any{}, unresolvable: map[string]bool{}}
	mux := http.NewServeMux()
	repo := "/repos/acme/widgets"
	mux.HandleFunc("GET "+repo+"/pulls/{n}", f.getPull)
	mux.HandleFunc("GET "+repo+"/issues/{n}/comments", f.listComments(&f.issueComments))
	mux.HandleFunc("POST "+repo+"/issues/{n}/comments", f.postIssueComment)
	mux.HandleFunc("PATCH "+repo+"/issues/comments/{id}", f.patchIssueComment)
	mux.HandleFunc("GET "+repo+"/pulls/{n}/comments", f.listComments(&f.reviewComments))
	mux.HandleFunc("POST "+repo+"/pulls/{n}/comments", f.postReviewComment)
	mux.HandleFunc("DELETE "+repo+"/pulls/comments/{id}", f.deleteReviewComment)
	mux.HandleFunc("GET "+repo+"/releases", f.listReleases)
	mux.HandleFunc("GET "+repo+"/releases/latest", f.latestRelease)
	mux.HandleFunc("GET "+repo+"/releases/tags/{tag}", f.releaseByTag)
	mux.HandleFunc("POST /graphql", f.graphql)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.calls = append(f.calls, r.Method+" "+r.URL.Path)
		if r.Header.Get("Authorization") != "Bearer "+fakeToken {
			reply(w, http.StatusUnauthorized, map[string]any{"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest"})
			return
		}
		if r.Header.Get("User-Agent") == "" {
			reply(w, http.StatusForbidden, map[string]any{"message": "Request forbidden by administrative rules. Please make sure your request has a User-Agent header"})
			return
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	f.url = srv.URL
	for k, v := range map[string]string{
		"GITHUB_API_URL": srv.URL, "GITHUB_GRAPHQL_URL": "", "GH_HOST": "",
		"GITHUB_TOKEN": fakeToken, "GH_TOKEN": "",
		"GITHUB_REPOSITORY": "acme/widgets", "GH_REPO": "",
	} {
		t.Setenv(k, v)
	}
	return f
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func notFound(w http.ResponseWriter) {
	reply(w, http.StatusNotFound, map[string]any{"message": "Not Found", "documentation_url": "https://docs.github.com/rest"})
}

func (f *fakeGitHub) getPull(w http.ResponseWriter, r *http.Request) {
	n, _ := strconv.Atoi(r.PathValue("n"))
	p, ok := f.pulls[n]
	if !ok {
		notFound(w)
		return
	}
	reply(w, http.StatusOK, p)
}

// page answers one page of a list the way GitHub does: per_page (default
// 30) and page, with a Link header to the next and last pages.
func (f *fakeGitHub) page(w http.ResponseWriter, r *http.Request, items []any) {
	per, _ := strconv.Atoi(r.URL.Query().Get("per_page"))
	if per <= 0 {
		per = 30
	}
	pg, _ := strconv.Atoi(r.URL.Query().Get("page"))
	if pg <= 0 {
		pg = 1
	}
	last := max(1, (len(items)+per-1)/per)
	if pg < last {
		link := func(p int) string { return fmt.Sprintf("<%s%s?per_page=%d&page=%d>", f.url, r.URL.Path, per, p) }
		w.Header().Set("Link", link(pg+1)+`; rel="next", `+link(last)+`; rel="last"`)
	}
	from, to := min(len(items), (pg-1)*per), min(len(items), pg*per)
	reply(w, http.StatusOK, items[from:to])
}

func (f *fakeGitHub) commentJSON(c *fakeComment, kind string) map[string]any {
	m := map[string]any{"id": c.ID, "node_id": fmt.Sprintf("IC_%d", c.ID), "body": c.Body, "user": map[string]any{"login": c.Author},
		"html_url": fmt.Sprintf("https://github.com/acme/widgets/pull/%d#%s-%d", c.PR, kind, c.ID)}
	for k, v := range c.Review {
		m[k] = v
	}
	return m
}

func (f *fakeGitHub) listComments(list *[]*fakeComment) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.PathValue("n"))
		kind := "issuecomment"
		if list == &f.reviewComments {
			kind = "discussion_r"
		}
		items := []any{}
		for _, c := range *list {
			if c.PR == n {
				items = append(items, f.commentJSON(c, kind))
			}
		}
		f.page(w, r, items)
	}
}

// body decodes a JSON request body.
func body(r *http.Request) map[string]any {
	var m map[string]any
	dec := json.NewDecoder(r.Body)
	dec.UseNumber()
	dec.Decode(&m)
	return m
}

func (f *fakeGitHub) postIssueComment(w http.ResponseWriter, r *http.Request) {
	n, _ := strconv.Atoi(r.PathValue("n"))
	if _, ok := f.pulls[n]; !ok {
		notFound(w)
		return
	}
	text, _ := body(r)["body"].(string)
	f.nextID++
	c := &fakeComment{ID: f.nextID, PR: n, Author: f.viewer, Body: text}
	f.issueComments = append(f.issueComments, c)
	reply(w, http.StatusCreated, f.commentJSON(c, "issuecomment"))
}

func (f *fakeGitHub) patchIssueComment(w http.ResponseWriter, r *http.Request) {
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	for _, c := range f.issueComments {
		if c.ID == id {
			c.Body, _ = body(r)["body"].(string)
			reply(w, http.StatusOK, f.commentJSON(c, "issuecomment"))
			return
		}
	}
	notFound(w)
}

func (f *fakeGitHub) postReviewComment(w http.ResponseWriter, r *http.Request) {
	n, _ := strconv.Atoi(r.PathValue("n"))
	b := body(r)
	if line, _ := b["line"].(json.Number).Int64(); line == int64(f.refuseLine) {
		reply(w, http.StatusUnprocessableEntity, map[string]any{"message": "Validation Failed",
			"errors": []any{map[string]any{"resource": "PullRequestReviewComment", "code": "custom", "field": "pull_request_review_thread.line", "message": "could not be resolved"}}})
		return
	}
	text, _ := b["body"].(string)
	f.nextID++
	c := &fakeComment{ID: f.nextID, PR: n, Author: f.viewer, Body: text,
		Review: map[string]any{"path": b["path"], "line": b["line"], "side": b["side"], "commit_id": b["commit_id"]}}
	f.reviewComments = append(f.reviewComments, c)
	reply(w, http.StatusCreated, f.commentJSON(c, "discussion_r"))
}

func (f *fakeGitHub) deleteReviewComment(w http.ResponseWriter, r *http.Request) {
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	for i, c := range f.reviewComments {
		if c.ID == id {
			f.reviewComments = slices.Delete(f.reviewComments, i, i+1)
			w.WriteHeader(http.StatusNoContent)
			return
		}
	}
	notFound(w)
}

func (f *fakeGitHub) listReleases(w http.ResponseWriter, r *http.Request) {
	items := make([]any, len(f.releases))
	for i, rel := range f.releases {
		items[i] = rel
	}
	f.page(w, r, items)
}

func (f *fakeGitHub) latestRelease(w http.ResponseWriter, r *http.Request) {
	for _, rel := range f.releases {
		if rel["draft"] == false && rel["prerelease"] == false {
			reply(w, http.StatusOK, rel)
			return
		}
	}
	notFound(w)
}

// releaseByTag finds published releases only: a draft has no tag yet.
func (f *fakeGitHub) releaseByTag(w http.ResponseWriter, r *http.Request) {
	for _, rel := range f.releases {
		if rel["tag_name"] == r.PathValue("tag") && rel["draft"] == false {
			reply(w, http.StatusOK, rel)
			return
		}
	}
	notFound(w)
}

// threadPageSize is smaller than the 100 the query asks for, so that the
// tests go through the cursor pagination with a handful of threads.
const threadPageSize = 2

func (f *fakeGitHub) graphql(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Query     string         `json:"query"`
		Variables map[string]any `json:"variables"`
	}
	dec := json.NewDecoder(r.Body)
	dec.UseNumber()
	if err := dec.Decode(&req); err != nil {
		reply(w, http.StatusBadRequest, map[string]any{"message": "Problems parsing JSON"})
		return
	}
	vars := req.Variables
	gqlError := func(msg string) {
		reply(w, http.StatusOK, map[string]any{"data": nil, "errors": []any{map[string]any{"message": msg}}})
	}
	if strings.HasPrefix(strings.TrimSpace(req.Query), "query") && (vars["owner"] != "acme" || vars["name"] != "widgets") {
		gqlError(fmt.Sprintf("Could not resolve to a Repository with the name '%v/%v'.", vars["owner"], vars["name"]))
		return
	}
	switch q := req.Query; {
	case strings.Contains(q, "viewerDidAuthor"):
		pr, _ := vars["pr"].(json.Number).Int64()
		nodes := []any{}
		for _, c := range f.issueComments {
			if c.PR == int(pr) {
				nodes = append(nodes, map[string]any{"databaseId": c.ID, "viewerDidAuthor": c.Author == f.viewer})
			}
		}
		nodes = nodes[max(0, len(nodes)-100):]
		reply(w, http.StatusOK, map[string]any{"data": map[string]any{"repository": map[string]any{"pullRequest": map[string]any{"comments": map[string]any{"nodes": nodes}}}}})
	case strings.Contains(q, "reviewThreads"):
		if pr, _ := vars["pr"].(json.Number).Int64(); pr != 7 {
			gqlError(fmt.Sprintf("Could not resolve to a PullRequest with the number of %d.", pr))
			return
		}
		from := 0
		if cursor, ok := vars["endCursor"].(string); ok {
			from, _ = strconv.Atoi(cursor)
		}
		to := min(len(f.threads), from+threadPageSize)
		nodes := f.threads[from:to]
		page := map[string]any{"pageInfo": map[string]any{"hasNextPage": to < len(f.threads), "endCursor": strconv.Itoa(to)}, "nodes": nodes}
		reply(w, http.StatusOK, map[string]any{"data": map[string]any{"repository": map[string]any{"pullRequest": map[string]any{"reviewThreads": page}}}})
	case strings.Contains(q, "addPullRequestReviewThreadReply"):
		f.replies = append(f.replies, fmt.Sprintf("%v: %v", vars["tid"], vars["body"]))
		reply(w, http.StatusOK, map[string]any{"data": map[string]any{"addPullRequestReviewThreadReply": map[string]any{"comment": map[string]any{"id": "PRRC_1"}}}})
	case strings.Contains(q, "resolveReviewThread"):
		tid, _ := vars["tid"].(string)
		if f.unresolvable[tid] {
			gqlError("Resource not accessible by integration")
			return
		}
		f.resolved = append(f.resolved, tid)
		reply(w, http.StatusOK, map[string]any{"data": map[string]any{"resolveReviewThread": map[string]any{"thread": map[string]any{"id": tid}}}})
	default:
		gqlError("the fake does not know this query")
	}
}

// callTool runs a tool and returns its result, failing the test on an error.
func callTool(t *testing.T, rt *Runtime, tool string, input map[string]any) any {
	t.Helper()
	got, err := rt.Call(context.Background(), tool, input)
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return got
}

// githubRuntime is a project with the github pack enabled, talking to a
// fresh fake GitHub.
func githubRuntime(t *testing.T) (*Runtime, *fakeGitHub) {
	t.Helper()
	f := newFakeGitHub(t)
	rt, _ := newRuntime(t, map[string]string{".stepwise/config.toml": "[tools]\npacks = [\"github\"]\n"}, nil)
	return rt, f
}

func pull(title string, body any, ref, state string, merged bool) map[string]any {
	p := map[string]any{"number": 7, "title": title, "body": body, "state": state, "merged_at": nil,
		"user": map[string]any{"login": "ada"}, "base": map[string]any{"sha": "b1", "ref": "main"}, "head": map[string]any{"sha": "h1", "ref": ref}}
	if merged {
		p["merged_at"] = "2026-01-02T00:00:00Z"
	}
	return p
}

func TestGhPRMeta(t *testing.T) {
	rt, f := githubRuntime(t)
	f.pulls[7] = pull("Add a thing", "Closes LN-1", "feature", "open", false)
	f.pulls[8] = pull("Merged one", nil, "other", "closed", true)
	f.pulls[9] = pull("Closed one", "", "gone", "closed", false)
	tests := []struct {
		name          string
		pr            any
		want          map[string]any
		errorStarting string
	}{
		{name: "an open pull request", pr: 7, want: map[string]any{"title": "Add a thing", "body": "Closes LN-1", "base_sha": "b1", "head_sha": "h1", "state": "OPEN", "author": "ada"}},
		{name: "merged reads MERGED, a null body reads empty", pr: json.Number("8"), want: map[string]any{"title": "Merged one", "body": "", "base_sha": "b1", "head_sha": "h1", "state": "MERGED", "author": "ada"}},
		{name: "closed unmerged reads CLOSED", pr: 9, want: map[string]any{"title": "Closed one", "body": "", "base_sha": "b1", "head_sha": "h1", "state": "CLOSED", "author": "ada"}},
		{name: "a missing pull request is GitHub's 404", pr: 99, errorStarting: "GitHub API: GET /repos/acme/widgets/pulls/99: 404 Not Found: Not Found"},
		{name: "no pull request 0", pr: 0, errorStarting: "input pr must be a positive number, got 0"},
		{name: "pr is a number", pr: "7", errorStarting: "input does not match builtin__gh_pr_meta's input_schema: /pr"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := packResult(t, rt, "builtin__gh_pr_meta", map[string]any{"pr": tc.pr}, tc.errorStarting)
			if !ok {
				return
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %v\nwant %v", got, tc.want)
			}
		})
	}
}

func TestGhPRComment(t *testing.T) {
	const tag = "<!-- plan:summary -->"
	tests := []struct {
		name   string
		setup  func(f *fakeGitHub)
		input  map[string]any
		edited int64  // the comment id edited; 0 for a new comment
		body   string // what the comment reads afterwards
	}{
		{
			name: "without a marker, the token's latest comment is edited, not someone else's",
			setup: func(f *fakeGitHub) {
				f.issueComments = []*fakeComment{{ID: 1, PR: 7, Author: "stepwise-bot", Body: "old"}, {ID: 2, PR: 7, Author: "stepwise-bot", Body: "newer"},
					{ID: 3, PR: 7, Author: "ada", Body: "a human"}, {ID: 4, PR: 8, Author: "stepwise-bot", Body: "another PR"}}
			},
			input: map[string]any{"pr": 7, "body": "fresh"}, edited: 2, body: "fresh",
		},
		{
			name:  "without a marker and no comment of its own, a new one",
			setup: func(f *fakeGitHub) { f.issueComments = []*fakeComment{{ID: 3, PR: 7, Author: "ada", Body: "a human"}} },
			input: map[string]any{"pr": 7, "body": "first"}, body: "first",
		},
		{
			name: "with a marker, the comment carrying it is edited, found past the first page",
			setup: func(f *fakeGitHub) {
				for i := range 150 {
					f.issueComments = append(f.issueComments, &fakeComment{ID: int64(i + 1), PR: 7, Author: "stepwise-bot", Body: fmt.Sprintf("noise %d", i)})
				}
				f.issueComments[129].Body = "summary v1\n\n" + tag
			},
			input: map[string]any{"pr": 7, "body": "summary v2", "marker": "plan:summary"}, edited: 130, body: "summary v2\n\n" + tag,
		},
		{
			name: "with a marker nobody used yet, a new tagged comment",
			setup: func(f *fakeGitHub) {
				f.issueComments = []*fakeComment{{ID: 1, PR: 7, Author: "stepwise-bot", Body: "untagged"}}
			},
			input: map[string]any{"pr": 7, "body": "summary", "marker": "plan:summary"}, body: "summary\n\n" + tag,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rt, f := githubRuntime(t)
			f.pulls[7] = pull("t", "", "b", "open", false)
			tc.setup(f)
			before := len(f.issueComments)
			got := callTool(t, rt, "builtin__gh_pr_comment", tc.input)
			id := tc.edited
			wantCount := before
			if id == 0 {
				id, wantCount = f.nextID, before+1
			}
			if want := map[string]any{"text": fmt.Sprintf("https://github.com/acme/widgets/pull/7#issuecomment-%d", id)}; !reflect.DeepEqual(got, want) {
				t.Errorf("got %v, want %v", got, want)
			}
			if len(f.issueComments) != wantCount {
				t.Errorf("%d comments, want %d", len(f.issueComments), wantCount)
			}
			i := slices.IndexFunc(f.issueComments, func(c *fakeComment) bool { return c.ID == id })
			if i < 0 || f.issueComments[i].Body != tc.body {
				t.Errorf("comment %d reads %q, want %q", id, f.issueComments[min(max(i, 0), len(f.issueComments)-1)].Body, tc.body)
			}
		})
	}
}

func TestGhPRInlineComments(t *testing.T) {
	rt, f := githubRuntime(t)
	const tag = "<!-- review:inline -->"
	f.refuseLine = 99
	f.reviewComments = []*fakeComment{
		{ID: 1, PR: 7, Author: "stepwise-bot", Body: "stale\n\n" + tag},
		{ID: 2, PR: 7, Author: "ada", Body: "a human's comment"},
		{ID: 3, PR: 7, Author: "stepwise-bot", Body: "another plan's\n\n<!-- other -->"},
	}
	got := callTool(t, rt, "builtin__gh_pr_inline_comments", map[string]any{
		"pr": 7, "head_sha": "h1", "marker": "review:inline",
		"comments": []any{
			map[string]any{"path": "a.go", "line": json.Number("10"), "body": "nit", "severity": "low"},
			map[string]any{"path": "b.go", "line": 4, "side": "LEFT", "body": "old side"},
			map[string]any{"path": "c.go", "body": "no line, not posted"},
			map[string]any{"path": "d.go", "line": 99, "body": "not in the diff"},
		},
	})
	want := jsonValue(t, `{"comments": [
		{"path": "a.go", "line": 10, "body": "nit", "severity": "low", "url": "https://github.com/acme/widgets/pull/7#discussion_r-1001"},
		{"path": "b.go", "line": 4, "side": "LEFT", "body": "old side", "url": "https://github.com/acme/widgets/pull/7#discussion_r-1002"},
		{"path": "c.go", "body": "no line, not posted"},
		{"path": "d.go", "line": 99, "body": "not in the diff"}]}`)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
	var left []string
	for _, c := range f.reviewComments {
		left = append(left, fmt.Sprintf("%d %v:%v %v %v %q", c.ID, c.Review["path"], c.Review["line"], c.Review["side"], c.Review["commit_id"], c.Body))
	}
	wantLeft := []string{
		`2 <nil>:<nil> <nil> <nil> "a human's comment"`,
		`3 <nil>:<nil> <nil> <nil> "another plan's\n\n<!-- other -->"`,
		`1001 a.go:10 RIGHT h1 "nit\n\n<!-- review:inline -->"`,
		`1002 b.go:4 LEFT h1 "old side\n\n<!-- review:inline -->"`,
	}
	if !slices.Equal(left, wantLeft) {
		t.Errorf("review comments afterwards:\n%s\nwant\n%s", strings.Join(left, "\n"), strings.Join(wantLeft, "\n"))
	}
}

func countOf(calls []string, call string) int {
	n := 0
	for _, c := range calls {
		if c == call {
			n++
		}
	}
	return n
}

// thread is a reviewThread node whose first comment is body by author.
func thread(id string, resolvedBy any, line any, author, body string, replies ...string) map[string]any {
	comments := []any{map[string]any{"url": "https://github.com/acme/widgets/pull/7#discussion_" + id, "body": body, "author": map[string]any{"login": author}}}
	for _, r := range replies {
		who, text, _ := strings.Cut(r, ": ")
		var a any = map[string]any{"login": who}
		if who == "" {
			a = nil // a deleted account
		}
		comments = append(comments, map[string]any{"url": "https://github.com/r", "body": text, "author": a})
	}
	var by any
	if resolvedBy != nil {
		by = map[string]any{"login": resolvedBy}
	}
	return map[string]any{"id": id, "isResolved": resolvedBy != nil, "isOutdated": id == "T2", "path": "src/" + id + ".go", "line": line,
		"resolvedBy": by, "comments": map[string]any{"nodes": comments}}
}

func TestGhPRReviewThreads(t *testing.T) {
	rt, f := githubRuntime(t)
	payload := func(extra string) string {
		return `Finding text` + "\n\n" + `<!-- rv:finding {"label":"L","severity":"high","invariant":"I","file":"src/x.go","line":5,"finding":"F"` + extra + `} -->`
	}
	f.threads = []map[string]any{
		thread("T1", nil, 12, "stepwise-bot", payload(`,"extra":true`), "bob: is this right?", ": from a deleted account"),
		thread("T2", "stepwise-bot", nil, "stepwise-bot", payload("")),
		thread("T3", "carol", 8, "stepwise-bot", payload("")),
		thread("T4", nil, 3, "stepwise-bot", `<!-- rv:finding {"label":"L","severity":"high"} -->`),
		thread("T5", nil, 3, "ada", "a human's thread"),
		thread("T6", nil, 3, "stepwise-bot", `<!-- other:finding {"label":"L","severity":"high","invariant":"I","file":"f","line":1,"finding":"F"} -->`),
		thread("T7", nil, 3, "stepwise-bot", `<!-- rv:finding {not json} -->`),
	}
	got := callTool(t, rt, "builtin__gh_pr_review_threads", map[string]any{"pr": 7, "marker": "rv:finding"})
	want := jsonValue(t, `{
		"findings": [
			{"label":"L","severity":"high","invariant":"I","file":"src/x.go","line":12,"finding":"F","extra":true,
			 "thread_id":"T1","state":"open","path":"src/T1.go","is_outdated":false,"url":"https://github.com/acme/widgets/pull/7#discussion_T1",
			 "replies":[{"author":"bob","body":"is this right?"},{"author":"unknown","body":"from a deleted account"}],"reply_count":2},
			{"label":"L","severity":"high","invariant":"I","file":"src/x.go","line":5,"finding":"F",
			 "thread_id":"T2","state":"resolved","path":"src/T2.go","is_outdated":true,"url":"https://github.com/acme/widgets/pull/7#discussion_T2",
			 "replies":[],"reply_count":0},
			{"label":"L","severity":"high","invariant":"I","file":"src/x.go","line":8,"finding":"F",
			 "thread_id":"T3","state":"declined","path":"src/T3.go","is_outdated":false,"url":"https://github.com/acme/widgets/pull/7#discussion_T3",
			 "replies":[],"reply_count":0}
		],
		"count": 3, "open_count": 1, "skipped": 1, "has_findings": true}`)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
	if pages := countOf(f.calls, "POST /graphql"); pages != 4 {
		t.Errorf("%d GraphQL pages read, want 4 (7 threads, 2 a page)", pages)
	}

	_, err := rt.Call(context.Background(), "builtin__gh_pr_review_threads", map[string]any{"pr": 8, "marker": "rv:finding"})
	if te := toolErr(t, err); te.Error() != "GitHub GraphQL API: Could not resolve to a PullRequest with the number of 8." {
		t.Errorf("error %q", te.Error())
	}
}

func TestGhPRThreadSync(t *testing.T) {
	t.Run("nothing to do touches nothing and reports zeros", func(t *testing.T) {
		rt, f := githubRuntime(t)
		got := callTool(t, rt, "builtin__gh_pr_thread_sync", map[string]any{"pr": 1, "head_sha": "deadbeef", "marker": "test:finding", "creates": []any{}, "threads": []any{}})
		want := jsonValue(t, `{"creates": [], "threads": [], "created_count": 0, "resolved_now_count": 0, "declined_now_count": 0,
			"still_open_count": 0, "transitions_count": 0, "has_creates": false, "has_transitions": false}`)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("got  %v\nwant %v", got, want)
		}
		if len(f.calls) > 0 {
			t.Errorf("calls made: %v", f.calls)
		}
	})

	t.Run("transitions, creates and a sweep", func(t *testing.T) {
		rt, f := githubRuntime(t)
		f.unresolvable["TD"] = true
		f.reviewComments = []*fakeComment{
			{ID: 1, PR: 7, Author: "stepwise-bot", Body: "legacy\n\n<!-- rv:inline -->"},
			{ID: 2, PR: 7, Author: "stepwise-bot", Body: "current\n\n<!-- rv:finding {} -->"},
		}
		payload := map[string]any{"label": "L", "severity": "high", "invariant": "I", "file": "a.go", "line": json.Number("3"), "finding": "x < y & z"}
		got := callTool(t, rt, "builtin__gh_pr_thread_sync", map[string]any{
			"pr": 7, "head_sha": "h1", "marker": "rv:finding", "sweep_marker": "rv:inline",
			"threads": []any{
				map[string]any{"thread_id": "TA", "transition": "resolve", "state": "resolved"},
				map[string]any{"thread_id": "TB", "transition": "decline", "state": "declined", "note": "Dismissed by ada."},
				map[string]any{"thread_id": "TC", "transition": "none", "state": "open", "label": "kept"},
				map[string]any{"thread_id": "TD", "transition": "resolve", "state": "resolved"},
			},
			"creates": []any{
				map[string]any{"path": "a.go", "line": 3, "body": "New finding", "payload": payload},
				map[string]any{"path": "b.go", "body": "No anchor", "payload": map[string]any{}},
			},
		})
		want := jsonValue(t, `{
			"threads": [
				{"thread_id": "TA", "transition": "resolve", "state": "resolved", "applied": true, "transitioned": true},
				{"thread_id": "TB", "transition": "decline", "state": "declined", "note": "Dismissed by ada.", "applied": true, "transitioned": true},
				{"thread_id": "TC", "transition": "none", "state": "open", "label": "kept", "applied": false, "transitioned": false},
				{"thread_id": "TD", "transition": "resolve", "state": "resolved", "applied": false, "transitioned": false}],
			"creates": [
				{"path": "a.go", "line": 3, "body": "New finding", "url": "https://github.com/acme/widgets/pull/7#discussion_r-1001",
				 "payload": {"label": "L", "severity": "high", "invariant": "I", "file": "a.go", "line": 3, "finding": "x < y & z"}},
				{"path": "b.go", "body": "No anchor", "payload": {}}],
			"created_count": 1, "resolved_now_count": 1, "declined_now_count": 1, "still_open_count": 2,
			"transitions_count": 2, "has_creates": true, "has_transitions": true}`)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("got  %v\nwant %v", got, want)
		}
		wantReplies := []string{"TA: 🤖 " + resolveNote, "TB: 🤖 Dismissed by ada.", "TD: 🤖 " + resolveNote}
		if !slices.Equal(f.replies, wantReplies) {
			t.Errorf("replies %q\nwant %q", f.replies, wantReplies)
		}
		if want := []string{"TA", "TB"}; !slices.Equal(f.resolved, want) {
			t.Errorf("resolved %v, want %v", f.resolved, want)
		}
		// The legacy comment is swept; the current scheme's comment stays,
		// and the new one carries a payload that reads back as given.
		var ids []int64
		for _, c := range f.reviewComments {
			ids = append(ids, c.ID)
		}
		if want := []int64{2, 1001}; !slices.Equal(ids, want) {
			t.Fatalf("review comments %v, want %v", ids, want)
		}
		posted := f.reviewComments[1].Body
		if !strings.HasPrefix(posted, "New finding\n\n<!-- rv:finding {") || !strings.Contains(posted, `"x < y & z"`) {
			t.Errorf("posted body %q", posted)
		}
		if back := threadPayload(posted, "rv:finding"); !reflect.DeepEqual(back, payload) {
			t.Errorf("payload reads back as %v, want %v", back, payload)
		}
	})
}

func TestGhPRTicket(t *testing.T) {
	rt, f := githubRuntime(t)
	f.pulls[1] = pull("Fix the build", "", "feature/ln-1234-fix", "open", false)
	f.pulls[2] = pull("LN 77: title ticket", "Body has AB-1", "fix-arm64", "open", false)
	f.pulls[3] = pull("No ticket here", "Intro line\nCloses abc-9 and XY-2", "main", "open", false)
	f.pulls[4] = pull("Bump arm64 and utf8", "sha256 sums", "deps", "open", false)
	f.pulls[5] = pull("PROJ-12 and LN-4", nil, "x", "open", false)
	tests := []struct {
		name          string
		input         map[string]any
		want          string
		errorStarting string
	}{
		{name: "the branch comes first", input: map[string]any{"pr": 1}, want: `{"found": true, "ticket": "LN-1234", "source": "branch"}`},
		{name: "then the title, a space normalized to a dash", input: map[string]any{"pr": 2}, want: `{"found": true, "ticket": "LN-77", "source": "title"}`},
		{name: "then the body, line by line", input: map[string]any{"pr": 3}, want: `{"found": true, "ticket": "ABC-9", "source": "body"}`},
		{name: "glued words are no tickets", input: map[string]any{"pr": 4}, want: `{"found": false, "ticket": null, "source": null}`},
		{name: "a project pattern", input: map[string]any{"pr": 5, "pattern": "PROJ-[0-9]+"}, want: `{"found": true, "ticket": "PROJ-12", "source": "title"}`},
		{name: "a pattern that does not compile", input: map[string]any{"pr": 5, "pattern": "(PROJ"}, errorStarting: "input pattern is not a regular expression: error parsing regexp: missing closing )"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := packResult(t, rt, "builtin__gh_pr_ticket", tc.input, tc.errorStarting)
			if !ok {
				return
			}
			if want := jsonValue(t, tc.want); !reflect.DeepEqual(got, want) {
				t.Errorf("got  %v\nwant %v", got, want)
			}
		})
	}
}

func release(tag, published string, prerelease, draft bool) map[string]any {
	r := map[string]any{"tag_name": tag, "name": "Release " + tag, "body": "notes for " + tag, "html_url": "https://github.com/acme/widgets/releases/tag/" + tag,
		"published_at": published, "author": map[string]any{"login": "ada"}, "prerelease": prerelease, "draft": draft, "target_commitish": "main"}
	if published == "" {
		r["published_at"] = nil
	}
	return r
}

func TestGhRelease(t *testing.T) {
	rt, f := githubRuntime(t)
	f.releases = []map[string]any{
		release("v3.0.0", "", false, true),
		release("v2.0.0", "2026-03-01T00:00:00Z", false, false),
		release("v2.0.0-rc1", "2026-02-20T00:00:00Z", true, false),
		release("v1.1.0", "2026-02-01T00:00:00Z", false, false),
		release("v1.0.0", "2026-01-01T00:00:00Z", false, false),
	}
	got := callTool(t, rt, "builtin__gh_release", nil)
	want := jsonValue(t, `{"tag": "v2.0.0", "name": "Release v2.0.0", "body": "notes for v2.0.0", "url": "https://github.com/acme/widgets/releases/tag/v2.0.0",
		"published_at": "2026-03-01T00:00:00Z", "author": "ada", "is_prerelease": false, "is_draft": false, "target": "main", "previous_tag": "v1.1.0"}`)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("latest: got  %v\nwant %v", got, want)
	}

	tests := []struct {
		name          string
		input         map[string]any
		tag, previous any
		errorStarting string
	}{
		{name: "prereleases count when asked", input: map[string]any{"include_prereleases": true}, tag: "v2.0.0", previous: "v2.0.0-rc1"},
		{name: "a prerelease finds the stable release before it", input: map[string]any{"tag": "v2.0.0-rc1"}, tag: "v2.0.0-rc1", previous: "v1.1.0"},
		{name: "the first release has none", input: map[string]any{"tag": "v1.0.0"}, tag: "v1.0.0", previous: nil},
		{name: "a draft is found in the list and has none", input: map[string]any{"tag": "v3.0.0"}, tag: "v3.0.0", previous: nil},
		{name: "an unknown tag", input: map[string]any{"tag": "v9"}, errorStarting: `acme/widgets has no release tagged "v9"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := packResult(t, rt, "builtin__gh_release", tc.input, tc.errorStarting)
			if !ok {
				return
			}
			m := got.(map[string]any)
			if m["tag"] != tc.tag || m["previous_tag"] != tc.previous {
				t.Errorf("tag %v, previous_tag %v; want %v, %v", m["tag"], m["previous_tag"], tc.tag, tc.previous)
			}
		})
	}

	f.releases = []map[string]any{release("v0.1.0", "2026-01-01T00:00:00Z", true, false)}
	_, err := rt.Call(context.Background(), "builtin__gh_release", nil)
	if te := toolErr(t, err); !strings.HasPrefix(te.Error(), "acme/widgets has no published release") {
		t.Errorf("no latest release: %q", te.Error())
	}
}

// The token, the API and the repository come from the environment, or the
// repository from the project's git remotes, and what is missing is named.
func TestGitHubAccess(t *testing.T) {
	tests := []struct {
		name          string
		env           map[string]string
		remotes       map[string]string // name -> URL, in a git repository at the project root
		errorStarting string
	}{
		{name: "GITHUB_TOKEN and GITHUB_REPOSITORY"},
		{name: "GH_TOKEN wins over GITHUB_TOKEN", env: map[string]string{"GH_TOKEN": fakeToken, "GITHUB_TOKEN": "stale"}},
		{name: "GH_REPO wins, with a host", env: map[string]string{"GH_REPO": "github.example.com/acme/widgets", "GITHUB_REPOSITORY": "other/repo"}},
		{name: "no token", env: map[string]string{"GITHUB_TOKEN": ""}, errorStarting: "no GitHub token: set GH_TOKEN or GITHUB_TOKEN"},
		{name: "a token GitHub refuses", env: map[string]string{"GITHUB_TOKEN": "wrong"}, errorStarting: "GitHub API: GET /repos/acme/widgets/pulls/7: 401 Unauthorized: Bad credentials"},
		{name: "a malformed repository", env: map[string]string{"GITHUB_REPOSITORY": "widgets"}, errorStarting: `GITHUB_REPOSITORY="widgets" is not OWNER/REPO`},
		{name: "the origin remote", env: map[string]string{"GITHUB_REPOSITORY": ""}, remotes: map[string]string{"origin": "git@github.com:acme/widgets.git"}},
		{name: "upstream before origin", env: map[string]string{"GITHUB_REPOSITORY": ""},
			remotes: map[string]string{"origin": "https://github.com/ada/widgets-fork.git", "upstream": "https://github.com/acme/widgets"}},
		{name: "no repository anywhere", env: map[string]string{"GITHUB_REPOSITORY": ""}, remotes: map[string]string{},
			errorStarting: "cannot tell which GitHub repository to use: set GH_REPO or GITHUB_REPOSITORY to OWNER/REPO"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			isolateGit(t)
			rt, f := githubRuntime(t)
			f.pulls[7] = pull("t", "", "b", "open", false)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			if tc.remotes != nil {
				root, _ := rt.projectDir()
				gitRun(t, root, "init", "-q")
				for name, u := range tc.remotes {
					gitRun(t, root, "remote", "add", name, u)
				}
			}
			got, ok := packResult(t, rt, "builtin__gh_pr_meta", map[string]any{"pr": 7}, tc.errorStarting)
			if !ok {
				return
			}
			if got.(map[string]any)["title"] != "t" {
				t.Errorf("got %v", got)
			}
		})
	}
}

func TestGitHubAPIRoots(t *testing.T) {
	tests := []struct {
		name          string
		env           map[string]string
		rest, graphql string
	}{
		{"GitHub.com by default", nil, "https://api.github.com", "https://api.github.com/graphql"},
		{"GITHUB_API_URL, GraphQL beside it", map[string]string{"GITHUB_API_URL": "http://127.0.0.1:9/"}, "http://127.0.0.1:9", "http://127.0.0.1:9/graphql"},
		{"an Enterprise Server API", map[string]string{"GITHUB_API_URL": "https://ghe.example.com/api/v3"}, "https://ghe.example.com/api/v3", "https://ghe.example.com/api/graphql"},
		{"GITHUB_GRAPHQL_URL as given", map[string]string{"GITHUB_API_URL": "https://a.example.com", "GITHUB_GRAPHQL_URL": "https://b.example.com/gql"}, "https://a.example.com", "https://b.example.com/gql"},
		{"GH_HOST", map[string]string{"GH_HOST": "ghe.example.com"}, "https://ghe.example.com/api/v3", "https://ghe.example.com/api/graphql"},
		{"GH_HOST github.com is GitHub.com", map[string]string{"GH_HOST": "github.com"}, "https://api.github.com", "https://api.github.com/graphql"},
		{"GITHUB_API_URL wins over GH_HOST", map[string]string{"GH_HOST": "ghe.example.com", "GITHUB_API_URL": "http://127.0.0.1:9"}, "http://127.0.0.1:9", "http://127.0.0.1:9/graphql"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"GITHUB_API_URL", "GITHUB_GRAPHQL_URL", "GH_HOST"} {
				t.Setenv(k, tc.env[k])
			}
			if rest, graphql := githubAPIRoots(); rest != tc.rest || graphql != tc.graphql {
				t.Errorf("got %s, %s; want %s, %s", rest, graphql, tc.rest, tc.graphql)
			}
		})
	}
}

func TestParseRemoteURL(t *testing.T) {
	tests := []struct {
		remote      string
		owner, name string
		ok          bool
	}{
		{"https://github.com/acme/widgets.git", "acme", "widgets", true},
		{"https://github.com/acme/widgets", "acme", "widgets", true},
		{"https://ada:token@github.com/acme/widgets.git/", "acme", "widgets", true},
		{"git@github.com:acme/widgets.git", "acme", "widgets", true},
		{"github.com:acme/widgets", "acme", "widgets", true},
		{"ssh://git@github.com:22/acme/widgets.git", "acme", "widgets", true},
		{"git://github.com/acme/widgets", "acme", "widgets", true},
		{"https://ghe.example.com/org/team/widgets.git", "team", "widgets", true},
		{"/srv/git/widgets.git", "", "", false},
		{"../widgets", "", "", false},
		{"https://github.com/widgets", "", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.remote, func(t *testing.T) {
			owner, name, ok := parseRemoteURL(tc.remote)
			if owner != tc.owner || name != tc.name || ok != tc.ok {
				t.Errorf("got %q, %q, %v; want %q, %q, %v", owner, name, ok, tc.owner, tc.name, tc.ok)
			}
		})
	}
}
