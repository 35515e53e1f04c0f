package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"
)

// The GitHub tools of the github pack speak GitHub's REST and GraphQL APIs
// directly, where graph's scripts call gh. They honour what gh and GitHub
// Actions set:
//
//   - the token: GH_TOKEN, else GITHUB_TOKEN (gh's order);
//   - the API: GITHUB_API_URL (set by Actions, e.g. https://HOST/api/v3 on
//     GitHub Enterprise Server), else GH_HOST (https://HOST/api/v3), else
//     GitHub.com's; the GraphQL endpoint is GITHUB_GRAPHQL_URL, else the one
//     beside that API;
//   - the repository: GH_REPO ([HOST/]OWNER/REPO), else GITHUB_REPOSITORY
//     (OWNER/REPO, set by Actions), else the project's git remote named
//     upstream, github or origin, in gh's order of preference.

// githubPack is the github pack: the git tools and the GitHub tools.
func githubPack() []packTool {
	return append(gitTools(), ghTools()...)
}

// githubRepo is a client for one repository's API.
type githubRepo struct {
	call        *packCall
	rest        string // the REST API root, without a trailing slash
	graphqlURL  string
	token       string
	owner, name string
	client      *http.Client
}

// githubAPIDefault is GitHub.com's REST API root.
const githubAPIDefault = "https://api.github.com"

// githubAPIRoots works out the REST root and the GraphQL endpoint from the
// environment.
func githubAPIRoots() (rest, graphql string) {
	switch {
	case os.Getenv("GITHUB_API_URL") != "":
		rest = strings.TrimSuffix(os.Getenv("GITHUB_API_URL"), "/")
	case os.Getenv("GH_HOST") != "" && os.Getenv("GH_HOST") != "github.com":
		rest = "https://" + os.Getenv("GH_HOST") + "/api/v3"
	default:
		rest = githubAPIDefault
	}
	if g := os.Getenv("GITHUB_GRAPHQL_URL"); g != "" {
		return rest, g
	}
	// GitHub Enterprise Server serves REST under /api/v3 and GraphQL at
	// /api/graphql; GitHub.com serves both at the root.
	if root, ok := strings.CutSuffix(rest, "/api/v3"); ok {
		return rest, root + "/api/graphql"
	}
	return rest, rest + "/graphql"
}

// github returns the client for the repository the call is about, or a
// *ToolError that says what to set.
func (c *packCall) github(ctx context.Context) (*githubRepo, error) {
	token := os.Getenv("GH_TOKEN")
	if token == "" {
		token = os.Getenv("GITHUB_TOKEN")
	}
	if token == "" {
		return nil, c.fail("no GitHub token: set GH_TOKEN or GITHUB_TOKEN to a token that may read the repository's pull requests (and write them, for the tools that comment)")
	}
	owner, name, err := c.githubRepository(ctx)
	if err != nil {
		return nil, err
	}
	rest, graphql := githubAPIRoots()
	return &githubRepo{call: c, rest: rest, graphqlURL: graphql, token: token, owner: owner, name: name, client: http.DefaultClient}, nil
}

// pullRequest reads the call's pr input and opens the repository it is in:
// the first thing every tool about a pull request does.
func (c *packCall) pullRequest(ctx context.Context) (int64, *githubRepo, error) {
	n, err := c.number("pr")
	if err != nil {
		return 0, nil, err
	}
	g, err := c.github(ctx)
	return n, g, err
}

// githubRepository finds OWNER and REPO: from GH_REPO, GITHUB_REPOSITORY,
// or the project's git remotes.
func (c *packCall) githubRepository(ctx context.Context) (string, string, error) {
	for _, env := range []string{"GH_REPO", "GITHUB_REPOSITORY"} {
		v := os.Getenv(env)
		if v == "" {
			continue
		}
		parts := strings.Split(strings.Trim(v, "/"), "/")
		if n := len(parts); n >= 2 && n <= 3 && parts[n-2] != "" && parts[n-1] != "" {
			return parts[n-2], parts[n-1], nil
		}
		return "", "", c.fail("%s=%q is not OWNER/REPO", env, v)
	}
	for _, remote := range []string{"upstream", "github", "origin"} {
		var out bytes.Buffer
		if err := c.git(ctx, &out, "remote", "get-url", remote); err != nil {
			if ctx.Err() != nil {
				return "", "", err
			}
			continue
		}
		if owner, name, ok := parseRemoteURL(strings.TrimSpace(out.String())); ok {
			return owner, name, nil
		}
	}
	return "", "", c.fail("cannot tell which GitHub repository to use: set GH_REPO or GITHUB_REPOSITORY to OWNER/REPO, or run in a git checkout whose origin (or upstream) remote points at it")
}

// scpLikeRemote is git's user@host:path remote form.
var scpLikeRemote = regexp.MustCompile(`^(?:[^@/]+@)?[^/:]+:(.+)$`)

// parseRemoteURL reads OWNER and REPO from a git remote URL: a URL with a
// scheme (https, ssh, git) or the scp-like git@host:owner/repo.git. A local
// path is no GitHub repository.
func parseRemoteURL(remote string) (owner, name string, ok bool) {
	var path string
	if u, err := url.Parse(remote); err == nil && u.Scheme != "" && u.Host != "" {
		path = u.Path
	} else if m := scpLikeRemote.FindStringSubmatch(remote); m != nil && !strings.Contains(remote, "://") {
		path = m[1]
	} else {
		return "", "", false
	}
	parts := strings.Split(strings.Trim(strings.TrimSuffix(strings.TrimSuffix(path, "/"), ".git"), "/"), "/")
	if len(parts) < 2 || parts[len(parts)-2] == "" || parts[len(parts)-1] == "" {
		return "", "", false
	}
	return parts[len(parts)-2], parts[len(parts)-1], true
}

// repoPath is the REST path of something in the repository.
func (g *githubRepo) repoPath(format string, args ...any) string {
	return "/repos/" + url.PathEscape(g.owner) + "/" + url.PathEscape(g.name) + fmt.Sprintf(format, args...)
}

// apiError is the body GitHub answers a failed REST call with.
type apiError struct {
	Message string `json:"message"`
	Errors  []struct {
		Message string `json:"message"`
		Code    string `json:"code"`
		Field   string `json:"field"`
	} `json:"errors"`
}

// restCall makes one REST call: body (nil for none) sent as JSON, the answer
// decoded into out (nil to ignore it). It returns the response for its
// headers. A status outside 2xx is a *ToolError with GitHub's message and
// the HTTP status.
func (g *githubRepo) restCall(ctx context.Context, method, target string, body, out any) (*http.Response, error) {
	if !strings.HasPrefix(target, "http://") && !strings.HasPrefix(target, "https://") {
		target = g.rest + target
	}
	var reader io.Reader
	if body != nil {
		b, err := marshalText(body)
		if err != nil {
			return nil, g.call.fail("encoding the request to %s: %v", target, err)
		}
		reader = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, reader)
	if err != nil {
		return nil, g.call.fail("GitHub API: %v", err)
	}
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return g.send(req, method+" "+req.URL.Path, out)
}

// send sends req with the token, decodes a 2xx answer into out, and turns
// any other into a *ToolError naming what (the call, e.g. "GET /repos/...").
func (g *githubRepo) send(req *http.Request, what string, out any) (*http.Response, error) {
	req.Header.Set("Authorization", "Bearer "+g.token)
	req.Header.Set("User-Agent", "stepwise")
	resp, err := g.client.Do(req)
	if err != nil {
		if req.Context().Err() != nil {
			return nil, req.Context().Err()
		}
		return nil, g.call.fail("GitHub API: %s: %v", what, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return nil, g.call.fail("GitHub API: %s: reading the answer: %v", what, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp, g.call.fail("GitHub API: %s: %s%s", what, resp.Status, apiMessage(data))
	}
	if out != nil && len(bytes.TrimSpace(data)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		if err := dec.Decode(out); err != nil {
			return resp, g.call.fail("GitHub API: %s: the answer is not the JSON expected: %v", what, err)
		}
	}
	return resp, nil
}

// apiMessage is GitHub's explanation of a failed call, ": ..." or "".
func apiMessage(data []byte) string {
	var e apiError
	if json.Unmarshal(data, &e) != nil || e.Message == "" {
		return ""
	}
	msg := ": " + e.Message
	for _, d := range e.Errors {
		switch {
		case d.Message != "":
			msg += "; " + d.Message
		case d.Field != "":
			msg += fmt.Sprintf("; %s %s", d.Field, d.Code)
		}
	}
	return msg
}

// restStatus is the HTTP status of a failed call, 0 when there was no
// answer.
func restStatus(resp *http.Response) int {
	if resp == nil {
		return 0
	}
	return resp.StatusCode
}

// nextLink is the rel="next" URL of a Link header, "" on the last page.
func nextLink(h http.Header) string {
	for _, link := range h.Values("Link") {
		for _, part := range strings.Split(link, ",") {
			target, params, ok := strings.Cut(strings.TrimSpace(part), ";")
			if ok && strings.Contains(params, `rel="next"`) {
				return strings.Trim(strings.TrimSpace(target), "<>")
			}
		}
	}
	return ""
}

// restList gets every page of a REST list, following Link headers as gh
// api --paginate does.
func restList[T any](ctx context.Context, g *githubRepo, path string) ([]T, error) {
	var all []T
	target := path + "?per_page=100"
	for target != "" {
		var page []T
		resp, err := g.restCall(ctx, http.MethodGet, target, nil, &page)
		if err != nil {
			return nil, err
		}
		all = append(all, page...)
		target = nextLink(resp.Header)
	}
	return all, nil
}

// graphql runs one GraphQL operation and decodes its data into out. An
// answer with errors is a *ToolError listing them, as gh api graphql fails
// on one.
func (g *githubRepo) graphql(ctx context.Context, query string, vars map[string]any, out any) error {
	body, err := marshalText(map[string]any{"query": query, "variables": vars})
	if err != nil {
		return g.call.fail("encoding a GraphQL request: %v", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.graphqlURL, bytes.NewReader(body))
	if err != nil {
		return g.call.fail("GitHub GraphQL API: %v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	var answer struct {
		Data   json.RawMessage `json:"data"`
		Errors []struct {
			Message string `json:"message"`
		} `json:"errors"`
	}
	if _, err := g.send(req, "GraphQL", &answer); err != nil {
		return err
	}
	if len(answer.Errors) > 0 {
		msgs := make([]string, len(answer.Errors))
		for i, e := range answer.Errors {
			msgs[i] = e.Message
		}
		return g.call.fail("GitHub GraphQL API: %s", strings.Join(msgs, "; "))
	}
	dec := json.NewDecoder(bytes.NewReader(answer.Data))
	dec.UseNumber()
	if err := dec.Decode(out); err != nil {
		return g.call.fail("GitHub GraphQL API: the answer is not the data expected: %v", err)
	}
	return nil
}

// ghLogin is a user as the REST API embeds one.
type ghLogin struct {
	Login string `json:"login"`
}

// ghPull is the part of a REST pull request the tools read.
type ghPull struct {
	Title    string  `json:"title"`
	Body     *string `json:"body"`
	State    string  `json:"state"`
	MergedAt *string `json:"merged_at"`
	User     ghLogin `json:"user"`
	Base     struct {
		SHA string `json:"sha"`
	} `json:"base"`
	Head struct {
		SHA string `json:"sha"`
		Ref string `json:"ref"`
	} `json:"head"`
}

// ghComment is an issue or review comment.
type ghComment struct {
	ID      int64  `json:"id"`
	Body    string `json:"body"`
	HTMLURL string `json:"html_url"`
}

func ghTools() []packTool {
	integer := func(desc string) map[string]any { return schemaOf("integer", desc) }
	str := func(desc string) map[string]any { return schemaOf("string", desc) }
	boolean := func(desc string) map[string]any { return schemaOf("boolean", desc) }
	pr := integer("Pull request number")
	side := map[string]any{"type": "string", "enum": []any{"LEFT", "RIGHT"}, "description": "Diff side; defaults to RIGHT"}
	line := integer("Line in the new file; it must be part of the diff. Leave it out when unknown: the entry then passes through unposted.")
	return []packTool{
		{
			info: packInfo("gh_pr_meta", true,
				"A GitHub pull request's metadata: title, body, base and head commit shas, state (OPEN, CLOSED or MERGED) and author. The first call before diffing or reviewing a pull request.",
				schemaObject([]string{"pr"}, map[string]any{"pr": pr}),
				schemaObject(nil, map[string]any{
					"title": str(""), "body": str(""), "base_sha": str(""), "head_sha": str(""), "state": str(""), "author": str(""),
				})),
			timeout: 30 * time.Second,
			run:     ghPRMeta,
		},
		{
			info: packInfo("gh_pr_comment", false,
				"Post a comment on a GitHub pull request, or update the one an earlier run posted. "+
					"With a marker, the comment carries it as a hidden HTML tag and later runs with the same marker edit that comment, so several plans can each keep their own comment on one pull request. "+
					"Without one, the token's own most recent comment on the pull request is edited (or a first one posted), so repeated runs keep one comment. Returns {text: the comment's URL}. Side-effecting.",
				schemaObject([]string{"pr", "body"}, map[string]any{
					"pr":   pr,
					"body": str("Markdown comment body"),
					"marker": withDefault(str("A stable identifier hidden in the comment; the next run with the same marker edits that comment. "+
						"Use one marker per plan (e.g. \"graph:pr_review:summary\") when several plans comment on one pull request; leave it out to edit the token's latest comment instead."), ""),
				}), nil),
			timeout: 30 * time.Second,
			run:     ghPRComment,
		},
		{
			info: packInfo("gh_pr_inline_comments", false,
				"Post inline review comments on a pull request's diff, one per entry. "+
					"An entry with a line is anchored to the diff and comes back with its comment's url; one without a line, or whose anchor GitHub refuses, comes back unchanged. "+
					"Comments an earlier run posted with the same marker are deleted first, so repeated runs replace rather than pile up. Keys of an entry beyond path, line, side and body pass through. Side-effecting.",
				schemaObject([]string{"pr", "head_sha", "marker", "comments"}, map[string]any{
					"pr":       pr,
					"head_sha": str("The commit the comments anchor to: the pull request's head sha"),
					"marker": str("A stable identifier hidden in every comment; the next run with the same marker deletes those comments before posting. " +
						"Use one marker per plan, e.g. \"graph:pr_review\"."),
					"comments": schemaArray(schemaObject([]string{"path", "body"}, map[string]any{
						"path": str("File path within the diff"),
						"line": line,
						"side": side,
						"body": str("Markdown comment body"),
					}), "Comment entries. Keys beyond path/line/side/body are not posted but come back in the output."),
				}),
				schemaObject(nil, map[string]any{
					"comments": schemaArray(nil, "The entries in input order, each with url added when its comment was posted; entries without a line, or refused by GitHub, come back without one."),
				})),
			timeout: 60 * time.Second,
			run:     ghPRInlineComments,
		},
		{
			info: packInfo("gh_pr_review_threads", true,
				"Read back, as structured findings, the review threads a plan posted on a pull request with gh_pr_thread_sync. "+
					"A thread whose first comment carries the marker's hidden JSON payload comes back as that payload merged with the thread's state (open; resolved, when the poster resolved it; declined, when someone else did), "+
					"thread id, anchor, url and human replies. Threads whose payload is missing keys are skipped and counted. Read-only.",
				schemaObject([]string{"pr", "marker"}, map[string]any{
					"pr": pr,
					"marker": str("The payload tag prefix to look for: the marker the findings were posted with through gh_pr_thread_sync (e.g. \"graph:pr_review:finding\"). " +
						"Only threads whose first comment holds `<!-- <marker> {json} -->` come back."),
				}),
				schemaObject(nil, map[string]any{
					"findings": schemaArray(nil, "One per recognized thread: the payload's keys (label, severity, invariant, file, line, finding, ...) together with thread_id, "+
						"state (open|resolved|declined), path, line, is_outdated, url, replies ([{author, body}]) and reply_count."),
					"count":        integer("Recognized threads returned"),
					"open_count":   integer("Findings currently open"),
					"skipped":      integer("Marker-tagged threads left out because their payload lacked a required key"),
					"has_findings": boolean("True when findings is non-empty"),
				})),
			timeout: 60 * time.Second,
			run:     ghPRReviewThreads,
		},
		{
			info: packInfo("gh_pr_thread_sync", false,
				"Keep a plan's inline review threads on a pull request in step with its findings. "+
					"Each new finding is posted as an inline comment holding the marker's hidden JSON payload (which gh_pr_review_threads reads back), and each existing thread gets its transition: "+
					"resolve and decline reply on the thread and resolve it, none leaves it alone. Open threads and human replies are never deleted. "+
					"Returns the entries with their urls and applied flags, and counts of what changed. Side-effecting.",
				schemaObject([]string{"pr", "head_sha", "marker", "creates", "threads"}, map[string]any{
					"pr":       pr,
					"head_sha": str("The commit new comments anchor to: the pull request's head sha"),
					"marker": str("The payload tag prefix hidden in every new comment as `<!-- <marker> {json} -->`; pass the same marker to gh_pr_review_threads to read the findings back. " +
						"Use one marker per plan, e.g. \"graph:pr_review:finding\"."),
					"creates": schemaArray(schemaObject([]string{"path", "body", "payload"}, map[string]any{
						"path":    str("File path within the diff"),
						"line":    line,
						"side":    side,
						"body":    str("Markdown comment body"),
						"payload": schemaOf("object", "The structured finding hidden in the comment, which gh_pr_review_threads returns on later runs. Keep it small and flat (label, severity, file, line, finding, ...)."),
					}), "New findings to post as inline comments. Keys beyond path/line/side/body/payload are not posted but come back in the output."),
					"threads": schemaArray(schemaObject([]string{"thread_id", "transition"}, map[string]any{
						"thread_id":  str("GraphQL review-thread node id"),
						"transition": map[string]any{"type": "string", "enum": []any{"none", "resolve", "decline"}, "description": "none leaves the thread alone; resolve and decline both reply with the note and resolve the thread."},
						"note":       str("The one-sentence reply posted before resolving; a default is used when it is empty."),
					}), "Existing findings with the transitions decided for them (from gh_pr_review_threads and a step that audits them). Other keys pass through to the output."),
					"sweep_marker": withDefault(str("A migration aid: the marker of an earlier delete-and-repost scheme (such as one used with gh_pr_inline_comments) whose comments are deleted before syncing. Leave it out normally."), ""),
				}),
				schemaObject(nil, map[string]any{
					"creates":            schemaArray(nil, "The creates entries in order, each with url added when its comment was posted; entries without a line, or refused by GitHub, come back without one."),
					"threads":            schemaArray(nil, "The threads entries in order, each with applied (the transition's API calls succeeded) and transitioned (a transition other than none was applied) added."),
					"created_count":      integer("New comments actually posted"),
					"resolved_now_count": integer("Threads resolved this run"),
					"declined_now_count": integer("Threads declined (and resolved) this run"),
					"still_open_count":   integer("Threads left open, failed transitions included"),
					"transitions_count":  integer("Threads whose transition applied"),
					"has_creates":        boolean("True when creates is non-empty"),
					"has_transitions":    boolean("True when any transition applied"),
				})),
			timeout: 120 * time.Second,
			run:     ghPRThreadSync,
		},
		{
			info: packInfo("gh_pr_ticket", true,
				"Find a ticket identifier (such as LN-1234) in a pull request's head branch name, title or body, looked at in that order; the first match wins and is normalized to upper case with a dash. "+
					"A regular expression does it, no model. Returns {found, ticket, source}, every field always present; a pull request without a ticket is {found: false, ticket: null, source: null}, not an error.",
				schemaObject([]string{"pr"}, map[string]any{
					"pr": pr,
					"pattern": withDefault(str("The extended regular expression a ticket matches, tried line by line. The default matches forms like LN-1234 and \"LN 1234\" and needs the dash or space, "+
						"so that words like arm64, utf8 and sha256 are no tickets. Use a project prefix (e.g. \"PROJ-[0-9]+\") to match more tightly."), `\b[A-Za-z]{2,6}[- ][0-9]+\b`),
				}),
				schemaObject(nil, map[string]any{
					"found":  boolean(""),
					"ticket": schemaNullable("string", "The normalized identifier; null when none was found"),
					"source": schemaNullable("string", "Where it was found: branch, title or body; null when none was"),
				})),
			timeout: 30 * time.Second,
			run:     ghPRTicket,
		},
		{
			info: packInfo("gh_release", true,
				"A GitHub release's metadata (tag, title, notes, url, publication date) and previous_tag, the tag of the release published before it. Leave tag out for the latest release. "+
					"previous_tag is the base ref for a git_log or git_diff over what the release shipped; it is null for a repository's first release, so gate on it before diffing.",
				schemaObject(nil, map[string]any{
					"tag": withDefault(str("The release tag to read (e.g. \"v1.4.0\"); \"\" for the latest release. In a workflow a release triggered, the tag that triggered it."), ""),
					"include_prereleases": withDefault(boolean("Whether prereleases count when finding previous_tag. By default they do not, so a stable release's previous_tag is the last stable release. "+
						"It never changes which release tag names."), false),
				}),
				schemaObject(nil, map[string]any{
					"tag":           str("The release's tag"),
					"name":          str("Release title; \"\" when untitled"),
					"body":          str("Release notes in markdown; \"\" when empty"),
					"url":           str("The release page"),
					"published_at":  schemaNullable("string", "ISO 8601 publication time; null for a draft"),
					"author":        schemaNullable("string", "Login of the release's author"),
					"is_prerelease": boolean(""),
					"is_draft":      boolean(""),
					"target":        schemaNullable("string", "The branch or sha the tag was cut from"),
					"previous_tag":  schemaNullable("string", "Tag of the release published before this one, the base ref for what shipped; null for the first release (or a draft)"),
				})),
			timeout: 30 * time.Second,
			run:     ghRelease,
		},
	}
}

func ghPRMeta(ctx context.Context, c *packCall) (any, error) {
	n, g, err := c.pullRequest(ctx)
	if err != nil {
		return nil, err
	}
	var p ghPull
	if _, err := g.restCall(ctx, http.MethodGet, g.repoPath("/pulls/%d", n), nil, &p); err != nil {
		return nil, err
	}
	// gh reports the GraphQL state, where a merged pull request is MERGED
	// rather than REST's closed.
	state := strings.ToUpper(p.State)
	if p.MergedAt != nil {
		state = "MERGED"
	}
	return map[string]any{"title": p.Title, "body": deref(p.Body), "base_sha": p.Base.SHA, "head_sha": p.Head.SHA, "state": state, "author": p.User.Login}, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// hiddenTag is the HTML comment a marker is embedded as.
func hiddenTag(marker string) string { return "<!-- " + marker + " -->" }

func ghPRComment(ctx context.Context, c *packCall) (any, error) {
	n, g, err := c.pullRequest(ctx)
	if err != nil {
		return nil, err
	}
	body, marker := c.str("body"), c.str("marker")
	var id int64
	if marker == "" {
		if id, err = g.lastOwnComment(ctx, n); err != nil {
			return nil, err
		}
	} else {
		tag := hiddenTag(marker)
		body += "\n\n" + tag
		comments, err := restList[ghComment](ctx, g, g.repoPath("/issues/%d/comments", n))
		if err != nil {
			return nil, err
		}
		if i := slices.IndexFunc(comments, func(cm ghComment) bool { return strings.Contains(cm.Body, tag) }); i >= 0 {
			id = comments[i].ID
		}
	}
	var posted ghComment
	if id != 0 {
		_, err = g.restCall(ctx, http.MethodPatch, g.repoPath("/issues/comments/%d", id), map[string]any{"body": body}, &posted)
	} else {
		_, err = g.restCall(ctx, http.MethodPost, g.repoPath("/issues/%d/comments", n), map[string]any{"body": body}, &posted)
	}
	if err != nil {
		return nil, err
	}
	return map[string]any{"text": posted.HTMLURL}, nil
}

// lastOwnComment is the id of the token identity's most recent comment
// among the pull request's last 100, 0 when there is none: what gh pr
// comment --edit-last edits. GraphQL's viewerDidAuthor answers "mine" for
// the bot tokens of Actions too, which the REST /user call does not.
func (g *githubRepo) lastOwnComment(ctx context.Context, pr int64) (int64, error) {
	const query = `query($owner:String!,$name:String!,$pr:Int!){
  repository(owner:$owner,name:$name){pullRequest(number:$pr){comments(last:100){nodes{databaseId viewerDidAuthor}}}}}`
	var data struct {
		Repository struct {
			PullRequest *struct {
				Comments struct {
					Nodes []struct {
						DatabaseID      int64 `json:"databaseId"`
						ViewerDidAuthor bool  `json:"viewerDidAuthor"`
					} `json:"nodes"`
				} `json:"comments"`
			} `json:"pullRequest"`
		} `json:"repository"`
	}
	if err := g.graphql(ctx, query, map[string]any{"owner": g.owner, "name": g.name, "pr": pr}, &data); err != nil {
		return 0, err
	}
	if data.Repository.PullRequest == nil {
		return 0, g.call.fail("GitHub GraphQL API: %s/%s has no pull request %d", g.owner, g.name, pr)
	}
	nodes := data.Repository.PullRequest.Comments.Nodes
	for i := len(nodes) - 1; i >= 0; i-- {
		if nodes[i].ViewerDidAuthor {
			return nodes[i].DatabaseID, nil
		}
	}
	return 0, nil
}

// deleteMarked deletes the pull request's review comments that carry tag,
// best effort: one that cannot be deleted, or a listing that fails, leaves
// comments behind, which is no reason to fail the posting that follows.
func (g *githubRepo) deleteMarked(ctx context.Context, pr int64, tag string) {
	comments, err := restList[ghComment](ctx, g, g.repoPath("/pulls/%d/comments", pr))
	if err != nil {
		return
	}
	for _, cm := range comments {
		if strings.Contains(cm.Body, tag) {
			g.restCall(ctx, http.MethodDelete, g.repoPath("/pulls/comments/%d", cm.ID), nil, nil)
		}
	}
}

// postInline posts one entry as an inline review comment with body and
// returns the entry with the comment's url added, or unchanged when it has
// no line or GitHub refuses it (one bad anchor must not sink the rest).
func (g *githubRepo) postInline(ctx context.Context, pr int64, sha string, entry map[string]any, body string) map[string]any {
	out := maps.Clone(entry)
	if entry["line"] == nil {
		return out
	}
	side := entry["side"]
	if side == nil {
		side = "RIGHT"
	}
	var posted ghComment
	req := map[string]any{"commit_id": sha, "path": entry["path"], "line": entry["line"], "side": side, "body": body}
	if _, err := g.restCall(ctx, http.MethodPost, g.repoPath("/pulls/%d/comments", pr), req, &posted); err == nil && posted.HTMLURL != "" {
		out["url"] = posted.HTMLURL
	}
	return out
}

func ghPRInlineComments(ctx context.Context, c *packCall) (any, error) {
	n, g, err := c.pullRequest(ctx)
	if err != nil {
		return nil, err
	}
	tag := hiddenTag(c.str("marker"))
	g.deleteMarked(ctx, n, tag)
	out := []map[string]any{}
	for _, entry := range c.objects("comments") {
		body, _ := entry["body"].(string)
		out = append(out, g.postInline(ctx, n, c.str("head_sha"), entry, body+"\n\n"+tag))
	}
	return map[string]any{"comments": out}, nil
}

// reviewThread is a pull request review thread as the query below reads it.
type reviewThread struct {
	ID         string   `json:"id"`
	IsResolved bool     `json:"isResolved"`
	IsOutdated bool     `json:"isOutdated"`
	Path       any      `json:"path"`
	Line       any      `json:"line"`
	ResolvedBy *ghLogin `json:"resolvedBy"`
	Comments   struct {
		Nodes []struct {
			URL    string   `json:"url"`
			Body   string   `json:"body"`
			Author *ghLogin `json:"author"`
		} `json:"nodes"`
	} `json:"comments"`
}

const reviewThreadsQuery = `query($owner:String!,$name:String!,$pr:Int!,$endCursor:String){
  repository(owner:$owner,name:$name){
    pullRequest(number:$pr){
      reviewThreads(first:100, after:$endCursor){
        pageInfo{hasNextPage endCursor}
        nodes{id isResolved isOutdated path line
          resolvedBy{login}
          comments(first:100){nodes{url body author{login}}}}}}}}`

// reviewThreads reads every review thread of a pull request, page by page.
func (g *githubRepo) reviewThreads(ctx context.Context, pr int64) ([]reviewThread, error) {
	var all []reviewThread
	var cursor any
	for {
		var data struct {
			Repository struct {
				PullRequest *struct {
					ReviewThreads struct {
						PageInfo struct {
							HasNextPage bool   `json:"hasNextPage"`
							EndCursor   string `json:"endCursor"`
						} `json:"pageInfo"`
						Nodes []reviewThread `json:"nodes"`
					} `json:"reviewThreads"`
				} `json:"pullRequest"`
			} `json:"repository"`
		}
		vars := map[string]any{"owner": g.owner, "name": g.name, "pr": pr, "endCursor": cursor}
		if err := g.graphql(ctx, reviewThreadsQuery, vars, &data); err != nil {
			return nil, err
		}
		p := data.Repository.PullRequest
		if p == nil {
			return nil, g.call.fail("GitHub GraphQL API: %s/%s has no pull request %d", g.owner, g.name, pr)
		}
		all = append(all, p.ReviewThreads.Nodes...)
		if !p.ReviewThreads.PageInfo.HasNextPage {
			return all, nil
		}
		cursor = p.ReviewThreads.PageInfo.EndCursor
	}
}

// findingKeys are the payload keys a thread needs to come back as a
// finding: what gh_pr_thread_sync's callers embed.
var findingKeys = []string{"label", "severity", "invariant", "file", "line", "finding"}

// threadPayload reads the JSON object hidden in body as
// "<!-- MARKER {json} -->", or nil when there is none or it does not parse.
func threadPayload(body, marker string) map[string]any {
	_, rest, ok := strings.Cut(body, "<!-- "+marker+" ")
	if !ok {
		return nil
	}
	// What follows the first tag, up to a second one if any, as graph's
	// split does.
	rest, _, _ = strings.Cut(rest, "<!-- "+marker+" ")
	text, _, _ := strings.Cut(rest, " -->")
	v, err := parseJSON([]byte(text))
	if err != nil {
		return nil
	}
	obj, _ := v.(map[string]any)
	return obj
}

// orNull is jq's a // b: b when a is null or false.
func orNull(a, b any) any {
	if a == nil || a == false {
		return b
	}
	return a
}

func ghPRReviewThreads(ctx context.Context, c *packCall) (any, error) {
	n, g, err := c.pullRequest(ctx)
	if err != nil {
		return nil, err
	}
	threads, err := g.reviewThreads(ctx, n)
	if err != nil {
		return nil, err
	}
	marker := c.str("marker")
	findings := []map[string]any{}
	tagged, open := 0, 0
	for _, t := range threads {
		if len(t.Comments.Nodes) == 0 {
			continue
		}
		first := t.Comments.Nodes[0]
		payload := threadPayload(first.Body, marker)
		if payload == nil {
			continue
		}
		tagged++
		if slices.ContainsFunc(findingKeys, func(k string) bool { _, has := payload[k]; return !has }) {
			continue
		}
		// Resolution by the login that posted the finding is this
		// automation's doing; by anyone else, a person declined it.
		state := "open"
		if t.IsResolved {
			resolver, poster := "", "?"
			if t.ResolvedBy != nil {
				resolver = t.ResolvedBy.Login
			}
			if first.Author != nil {
				poster = first.Author.Login
			}
			state = "declined"
			if resolver == poster {
				state = "resolved"
			}
		}
		if state == "open" {
			open++
		}
		replies := []map[string]any{}
		for _, r := range t.Comments.Nodes[1:] {
			author := "unknown"
			if r.Author != nil && r.Author.Login != "" {
				author = r.Author.Login
			}
			replies = append(replies, map[string]any{"author": author, "body": r.Body})
		}
		f := maps.Clone(payload)
		f["thread_id"] = t.ID
		f["state"] = state
		f["path"] = t.Path
		f["line"] = orNull(t.Line, payload["line"])
		f["is_outdated"] = t.IsOutdated
		f["url"] = first.URL
		f["replies"] = replies
		f["reply_count"] = len(t.Comments.Nodes) - 1
		findings = append(findings, f)
	}
	return map[string]any{"findings": findings, "count": len(findings), "open_count": open,
		"skipped": tagged - len(findings), "has_findings": len(findings) > 0}, nil
}

// The replies posted on a thread that is resolved or declined without a
// note of its own.
const (
	resolveNote = "No longer found at head, so this is resolved."
	declineNote = "Acknowledged: treated as declined, and it will not be raised again."
)

func ghPRThreadSync(ctx context.Context, c *packCall) (any, error) {
	n, g, err := c.pullRequest(ctx)
	if err != nil {
		return nil, err
	}
	if sweep := c.str("sweep_marker"); sweep != "" {
		g.deleteMarked(ctx, n, hiddenTag(sweep))
	}

	// Each thread is its own pair of calls, so one failure leaves only that
	// thread open (applied: false) rather than failing the rest.
	const replyMutation = `mutation($tid:ID!,$body:String!){
  addPullRequestReviewThreadReply(input:{pullRequestReviewThreadId:$tid,body:$body}){comment{id}}}`
	const resolveMutation = `mutation($tid:ID!){resolveReviewThread(input:{threadId:$tid}){thread{id}}}`
	threads := []map[string]any{}
	resolvedNow, declinedNow, stillOpen, transitions := 0, 0, 0, 0
	for _, t := range c.objects("threads") {
		transition, _ := t["transition"].(string)
		applied := false
		if transition == "resolve" || transition == "decline" {
			tid, _ := t["thread_id"].(string)
			note, _ := t["note"].(string)
			if note == "" {
				note = resolveNote
				if transition == "decline" {
					note = declineNote
				}
			}
			var ignored any
			// The reply is a courtesy; whether the thread resolved is what
			// applied reports.
			g.graphql(ctx, replyMutation, map[string]any{"tid": tid, "body": "🤖 " + note}, &ignored)
			applied = g.graphql(ctx, resolveMutation, map[string]any{"tid": tid}, &ignored) == nil
		}
		transitioned := transition != "none" && applied
		out := maps.Clone(t)
		out["applied"], out["transitioned"] = applied, transitioned
		threads = append(threads, out)
		if transitioned {
			transitions++
			switch transition {
			case "resolve":
				resolvedNow++
			case "decline":
				declinedNow++
			}
		}
		// state is the caller's: the thread's state after the transition
		// it decided, as graph's audit step reports it.
		if t["state"] == "open" || (transition != "none" && !applied) {
			stillOpen++
		}
	}

	marker := c.str("marker")
	creates := []map[string]any{}
	created := 0
	for _, entry := range c.objects("creates") {
		payload, err := marshalText(orNull(entry["payload"], map[string]any{}))
		if err != nil {
			return nil, c.fail("creates: encoding a payload: %v", err)
		}
		body, _ := entry["body"].(string)
		out := g.postInline(ctx, n, c.str("head_sha"), entry, body+"\n\n<!-- "+marker+" "+string(payload)+" -->")
		if out["url"] != nil {
			created++
		}
		creates = append(creates, out)
	}
	return map[string]any{
		"creates":            creates,
		"threads":            threads,
		"created_count":      created,
		"resolved_now_count": resolvedNow,
		"declined_now_count": declinedNow,
		"still_open_count":   stillOpen,
		"transitions_count":  transitions,
		"has_creates":        len(creates) > 0,
		"has_transitions":    transitions > 0,
	}, nil
}

// ticketForm is a match made of letters, an optional dash or space, and
// digits: the form normalized to LETTERS-DIGITS.
var ticketForm = regexp.MustCompile(`^([A-Z]+)[- ]?([0-9]+)$`)

func ghPRTicket(ctx context.Context, c *packCall) (any, error) {
	n, err := c.number("pr")
	if err != nil {
		return nil, err
	}
	pattern, err := regexp.Compile(c.str("pattern"))
	if err != nil {
		return nil, c.fail("input pattern is not a regular expression: %v", err)
	}
	// grep -o, which graph's script uses, takes the longest match at the
	// leftmost place.
	pattern.Longest()
	g, err := c.github(ctx)
	if err != nil {
		return nil, err
	}
	var p ghPull
	if _, err := g.restCall(ctx, http.MethodGet, g.repoPath("/pulls/%d", n), nil, &p); err != nil {
		return nil, err
	}
	for _, src := range []struct{ name, text string }{{"branch", p.Head.Ref}, {"title", p.Title}, {"body", deref(p.Body)}} {
		// Line by line, as grep matches: no ticket spans a line break.
		for _, line := range strings.Split(src.text, "\n") {
			m := pattern.FindString(line)
			if m == "" {
				continue
			}
			ticket := ticketForm.ReplaceAllString(strings.ToUpper(m), "$1-$2")
			return map[string]any{"found": true, "ticket": ticket, "source": src.name}, nil
		}
	}
	return map[string]any{"found": false, "ticket": nil, "source": nil}, nil
}

// ghRelease is the part of a REST release the tool reads.
type ghReleaseInfo struct {
	TagName         string   `json:"tag_name"`
	Name            *string  `json:"name"`
	Body            *string  `json:"body"`
	HTMLURL         string   `json:"html_url"`
	PublishedAt     *string  `json:"published_at"`
	Author          *ghLogin `json:"author"`
	Prerelease      bool     `json:"prerelease"`
	Draft           bool     `json:"draft"`
	TargetCommitish *string  `json:"target_commitish"`
}

func ghRelease(ctx context.Context, c *packCall) (any, error) {
	g, err := c.github(ctx)
	if err != nil {
		return nil, err
	}
	// The 100 most recent releases, as graph reads: they cover any current
	// release, and a tag older than that can only leave previous_tag null.
	var list []ghReleaseInfo
	if _, err := g.restCall(ctx, http.MethodGet, g.repoPath("/releases")+"?per_page=100", nil, &list); err != nil {
		return nil, err
	}
	var rel ghReleaseInfo
	tag := c.str("tag")
	if tag == "" {
		resp, err := g.restCall(ctx, http.MethodGet, g.repoPath("/releases/latest"), nil, &rel)
		if restStatus(resp) == http.StatusNotFound {
			return nil, c.fail("%s/%s has no published release (only drafts and prereleases, or none at all); name one with tag", g.owner, g.name)
		}
		if err != nil {
			return nil, err
		}
	} else {
		resp, err := g.restCall(ctx, http.MethodGet, g.repoPath("/releases/tags/%s", url.PathEscape(tag)), nil, &rel)
		if restStatus(resp) == http.StatusNotFound {
			// A draft has no tag yet, so GitHub finds it only in the list;
			// gh looks there too.
			i := slices.IndexFunc(list, func(r ghReleaseInfo) bool { return r.TagName == tag })
			if i < 0 {
				return nil, c.fail("%s/%s has no release tagged %q", g.owner, g.name, tag)
			}
			rel = list[i]
		} else if err != nil {
			return nil, err
		}
	}

	// The previous release is the latest one published before this one,
	// by date rather than list position, so that a prerelease still finds
	// the stable release before it. Drafts shipped nothing and never count.
	// GitHub's timestamps are all UTC in one format, so they order as text.
	var previous any
	if rel.PublishedAt != nil && *rel.PublishedAt != "" {
		best := ""
		for _, r := range list {
			if r.Draft || (r.Prerelease && !c.boolean("include_prereleases")) || r.TagName == rel.TagName ||
				r.PublishedAt == nil || *r.PublishedAt >= *rel.PublishedAt {
				continue
			}
			if *r.PublishedAt >= best {
				best, previous = *r.PublishedAt, r.TagName
			}
		}
	}
	var author any
	if rel.Author != nil {
		author = rel.Author.Login
	}
	return map[string]any{
		"tag":           rel.TagName,
		"name":          deref(rel.Name),
		"body":          deref(rel.Body),
		"url":           rel.HTMLURL,
		"published_at":  nullable(rel.PublishedAt),
		"author":        author,
		"is_prerelease": rel.Prerelease,
		"is_draft":      rel.Draft,
		"target":        nullable(rel.TargetCommitish),
		"previous_tag":  previous,
	}, nil
}

// nullable is s, or nil for JSON null when it is missing or empty.
func nullable(s *string) any {
	if s == nil || *s == "" {
		return nil
	}
	return *s
}
