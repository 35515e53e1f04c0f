package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// The git tools of the github pack run the git binary in the project root
// with an argv (never through a shell), as graph's scripts do in the working
// directory. Options that a user's git config could turn on and that would
// change what the tools parse (colour, external diff drivers, signatures,
// column numbers) are turned off on the command line.

func gitTools() []packTool {
	ref := func(desc string) map[string]any { return schemaOf("string", desc) }
	integer := func(desc string) map[string]any { return schemaOf("integer", desc) }
	str := func(desc string) map[string]any { return schemaOf("string", desc) }
	return []packTool{
		{
			info: packInfo("git_changed_files", true,
				"The files that changed between two git refs (a three-dot diff from their merge base), kept to those under a path prefix (\"\" keeps all). "+
					"files and count list the paths; changes has one {path, status, old_path, additions, deletions, binary} per file, where status is added, modified, deleted, renamed, copied or type_changed and old_path is set for renames and copies. "+
					"A deleted file is listed but is absent at head: filter changes on {{item.status}} ne deleted before mapping git_file over them. Nothing changed is {files: [], count: 0, changes: []}, not an error.",
				schemaObject([]string{"base", "head", "prefix"}, map[string]any{
					"base":   ref("Base ref or commit sha"),
					"head":   ref("Head ref or commit sha"),
					"prefix": str("Path prefix filter; \"\" matches every file"),
				}),
				schemaObject(nil, map[string]any{
					"files": schemaArray(map[string]any{"type": "string"}, ""),
					"count": integer(""),
					"changes": schemaArray(schemaObject(nil, map[string]any{
						"path":      str(""),
						"status":    map[string]any{"type": "string", "enum": []any{"added", "modified", "deleted", "renamed", "copied", "type_changed"}},
						"old_path":  schemaNullable("string", "Previous path, for renamed/copied entries"),
						"additions": integer("Lines added (0 for binary)"),
						"deletions": integer("Lines deleted (0 for binary)"),
						"binary":    schemaOf("boolean", ""),
					}), ""),
				})),
			timeout: 30 * time.Second,
			run:     gitChangedFiles,
		},
		{
			info: packInfo("git_diff", true,
				"The unified diff between two git refs (a three-dot diff from their merge base), optionally limited to paths and with paths excluded, cut to a byte budget so that it fits a model's context. "+
					"A cut diff ends with a line \"[diff truncated: showing X of Y bytes]\"; without that line the diff is whole. Returns {text}.",
				schemaObject([]string{"base", "head", "paths", "exclude", "max_bytes"}, map[string]any{
					"base":      ref("Base ref or commit sha"),
					"head":      ref("Head ref or commit sha"),
					"paths":     str("Space-separated pathspecs; \".\" for everything"),
					"exclude":   str("Space-separated paths to exclude; \"\" for none"),
					"max_bytes": integer("Truncate the diff to this many bytes (a marker line flags truncation)"),
				}), nil),
			timeout: 30 * time.Second,
			run:     gitDiff,
		},
		{
			info: packInfo("git_file", true,
				"A file's contents at a git ref (git show REF:PATH), cut to a byte budget so that it fits a model's context. "+
					"A cut file ends with a line \"[file truncated: showing X of Y bytes]\"; without that line the content is whole. "+
					"Reads the file as it is at that ref (say, a pull request's head), whatever is checked out. Returns {text}.",
				schemaObject([]string{"ref", "path"}, map[string]any{
					"ref":       ref("Ref or commit sha (e.g. the PR head sha)"),
					"path":      str("File path within the repository"),
					"max_bytes": withDefault(integer("Truncate the content to this many bytes (a marker line flags truncation)"), 200000),
				}), nil),
			timeout: 30 * time.Second,
			run:     gitFile,
		},
		{
			info: packInfo("git_grep", true,
				"Search the tracked files at a git ref for a POSIX extended regular expression (git grep), optionally within pathspecs. "+
					"Returns {matches, count, truncated}, all always present: matches are {path, line, text}, at most max_matches of them, with truncated set when there were more. "+
					"No match is {matches: [], count: 0}, not an error. Searches the code as it is at that ref, whatever is checked out.",
				schemaObject([]string{"pattern"}, map[string]any{
					"pattern":     str("POSIX extended regex to search for"),
					"ref":         withDefault(ref("Ref or commit sha to search at"), "HEAD"),
					"paths":       withDefault(str("Space-separated pathspecs scoping the search; \"\" for everything"), ""),
					"max_matches": withDefault(integer("Cap on returned matches (truncated flags the cut)"), 200),
				}),
				schemaObject(nil, map[string]any{
					"matches": schemaArray(schemaObject(nil, map[string]any{
						"path": str(""), "line": integer(""), "text": str(""),
					}), ""),
					"count":     integer(""),
					"truncated": schemaOf("boolean", ""),
				})),
			timeout: 30 * time.Second,
			run:     gitGrep,
		},
		{
			info: packInfo("git_log", true,
				"The commits between two git refs (base..head: what landed since base), newest first, merges left out unless asked for. "+
					"Returns {commits, count, total, truncated}; a commit is {sha, short_sha, subject, author, date, pr}, pr being the pull request number of a trailing \"(#123)\" in the subject, or null. "+
					"Subjects say what changed without a model having to read a diff, which makes this the input for changelogs and release summaries. An empty range is no error: {commits: [], count: 0, total: 0, truncated: false}.",
				schemaObject([]string{"base"}, map[string]any{
					"base":           ref("Ref or sha the range starts after (exclusive), e.g. gh_release's previous_tag"),
					"head":           withDefault(ref("Ref or sha the range ends at (inclusive), e.g. the release tag"), "HEAD"),
					"paths":          withDefault(str("Space-separated pathspecs scoping the log; \"\" for everything"), ""),
					"max_commits":    withDefault(integer("Cap on returned commits (truncated flags the cut; total always counts the whole range)"), 200),
					"include_merges": withDefault(schemaOf("boolean", "Keep merge commits; by default they are left out, since their subjects repeat the branch they merged"), false),
				}),
				schemaObject(nil, map[string]any{
					"commits": schemaArray(schemaObject(nil, map[string]any{
						"sha":       str("Full commit sha"),
						"short_sha": str("Abbreviated sha"),
						"author":    str("Author name"),
						"date":      str("Author date, ISO 8601"),
						"subject":   str("First line of the commit message"),
						"pr":        schemaNullable("integer", "PR number from a trailing \"(#123)\", or null"),
					}), "Newest first"),
					"count":     integer("Commits returned, ready for eq/gt gates"),
					"total":     integer("Commits in the whole range, before max_commits"),
					"truncated": schemaOf("boolean", "true when max_commits cut the list"),
				})),
			timeout: 30 * time.Second,
			run:     gitLog,
		},
	}
}

// git runs git with args in the project root, writing its stdout to out.
// A git that fails is a *ToolError with its stderr and exit status; when
// ctx ends first, the error is ctx's and callPack says why.
func (c *packCall) git(ctx context.Context, out io.Writer, args ...string) error {
	cmd := exec.Command("git", args...)
	cmd.Dir = c.dir
	stderr := newTailBuffer(execStderrMax)
	err := runCommand(ctx, cmd, out, stderr, c.outputLimit)
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	fail := &ToolError{Tool: c.tool, Stderr: stderr.String(), ExitCode: -1}
	var over *OutputLimitError
	if errors.As(err, &over) {
		fail.Message = fmt.Sprintf("git %s %v; narrow the call (paths, a shorter range)", args[0], over)
		return fail
	}
	var exit exitStatus
	if !errors.As(err, &exit) {
		fail.Message = fmt.Sprintf("cannot run git: %v", err)
		return fail
	}
	fail.ExitCode = exit.ExitCode()
	fail.Message = fmt.Sprintf("git %s exited with status %d", args[0], fail.ExitCode)
	if line, unknown := unknownRevision(fail.Stderr); unknown {
		// git goes on to advise on its own command line, which the caller
		// of a tool has none of: what it named is what to fix.
		fail.Message = fmt.Sprintf("git %s: a ref or commit the call names is not in the repository at %s", args[0], c.dir)
		fail.Stderr = line
	}
	return fail
}

// unknownRevision finds, in git's stderr, the line saying that a revision
// it was given does not exist.
func unknownRevision(stderr string) (string, bool) {
	for line := range strings.Lines(stderr) {
		line = strings.TrimSpace(line)
		for _, words := range []string{"unknown revision", "bad revision", "invalid object name", "not a valid object name"} {
			if strings.Contains(line, words) {
				return line, true
			}
		}
	}
	return "", false
}

// ref reads a ref input. One that starts with "-" would reach git as an
// option (--output=FILE writes a file), so it is refused.
func (c *packCall) ref(key string) (string, error) {
	r := c.str(key)
	switch {
	case r == "":
		return "", c.fail("input %s must name a ref or commit, got \"\"", key)
	case strings.HasPrefix(r, "-"):
		return "", c.fail("input %s: %q is not a ref (it starts with -)", key, r)
	}
	return r, nil
}

// refRange reads base and head, the two ends of a range.
func (c *packCall) refRange() (base, head string, err error) {
	if base, err = c.ref("base"); err != nil {
		return "", "", err
	}
	head, err = c.ref("head")
	return base, head, err
}

// pathspecs splits a space-separated pathspec input, as graph's scripts
// word-split it, and puts the excludes after it as :(exclude) pathspecs.
// Globs are left to git's pathspec matching, not expanded here.
func pathspecs(paths, exclude string) []string {
	spec := strings.Fields(paths)
	for _, e := range strings.Fields(exclude) {
		spec = append(spec, ":(exclude)"+e)
	}
	return spec
}

func gitDiff(ctx context.Context, c *packCall) (any, error) {
	base, head, err := c.refRange()
	if err != nil {
		return nil, err
	}
	max, err := c.count("max_bytes")
	if err != nil {
		return nil, err
	}
	out := &headWriter{max: max}
	args := append([]string{"diff", "--no-color", "--no-ext-diff", base + "..." + head, "--"}, pathspecs(c.str("paths"), c.str("exclude"))...)
	if err := c.git(ctx, out, args...); err != nil {
		return nil, err
	}
	return map[string]any{"text": out.text("diff")}, nil
}

func gitFile(ctx context.Context, c *packCall) (any, error) {
	ref, err := c.ref("ref")
	if err != nil {
		return nil, err
	}
	path := c.str("path")
	if path == "" {
		return nil, c.fail("input path must name a file, got \"\"")
	}
	max, err := c.count("max_bytes")
	if err != nil {
		return nil, err
	}
	out := &headWriter{max: max}
	if err := c.git(ctx, out, "show", "--no-color", ref+":"+path); err != nil {
		return nil, err
	}
	return map[string]any{"text": out.text("file")}, nil
}

// headWriter keeps the first max bytes written to it and counts all of
// them, so that a diff of any size costs only its budget in memory.
type headWriter struct {
	max   int64
	head  []byte
	total int64
}

func (w *headWriter) Write(p []byte) (int, error) {
	if room := w.max - int64(len(w.head)); room > 0 {
		w.head = append(w.head, p[:min(int64(len(p)), room)]...)
	}
	w.total += int64(len(p))
	return len(p), nil
}

// text is what was kept, with the marker graph's tools print when there was
// more. The cut backs off to a character boundary so that the text stays
// UTF-8; the marker says how many bytes are shown.
func (w *headWriter) text(what string) string {
	if w.total <= w.max {
		return string(w.head)
	}
	shown := cutToRune(w.head)
	return fmt.Sprintf("%s\n\n[%s truncated: showing %d of %d bytes]\n", shown, what, len(shown), w.total)
}

// cutToRune drops a character that the end of b cuts in two.
func cutToRune(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}

// changedFile is one entry of git_changed_files' changes.
type changedFile struct {
	Path      string  `json:"path"`
	Status    string  `json:"status"`
	OldPath   *string `json:"old_path"`
	Additions int64   `json:"additions"`
	Deletions int64   `json:"deletions"`
	Binary    bool    `json:"binary"`
}

// changeStatus names git's --name-status letters the way graph does; a
// letter it has no name for (U, X) is passed through.
func changeStatus(code string) string {
	switch {
	case code == "A":
		return "added"
	case code == "M":
		return "modified"
	case code == "D":
		return "deleted"
	case strings.HasPrefix(code, "R"):
		return "renamed"
	case strings.HasPrefix(code, "C"):
		return "copied"
	case code == "T":
		return "type_changed"
	}
	return code
}

func gitChangedFiles(ctx context.Context, c *packCall) (any, error) {
	base, head, err := c.refRange()
	if err != nil {
		return nil, err
	}
	// -M makes rename detection independent of the user's diff.renames, and
	// -z keeps paths verbatim (no quoting of unusual names). --name-status
	// and --numstat list the same files in the same order, so the two join
	// by position, as in graph.
	var status, numstat bytes.Buffer
	rng := base + "..." + head
	if err := c.git(ctx, &status, "diff", "--no-ext-diff", "-M", "-z", "--name-status", rng); err != nil {
		return nil, err
	}
	if err := c.git(ctx, &numstat, "diff", "--no-ext-diff", "-M", "-z", "--numstat", rng); err != nil {
		return nil, err
	}
	counts := parseNumstat(numstat.String())
	fields := strings.Split(strings.TrimSuffix(status.String(), "\x00"), "\x00")
	changes := []changedFile{}
	for i := 0; i+1 < len(fields); {
		code := fields[i]
		ch := changedFile{Status: changeStatus(code), Path: fields[i+1]}
		i += 2
		if (strings.HasPrefix(code, "R") || strings.HasPrefix(code, "C")) && i < len(fields) {
			old := ch.Path
			ch.OldPath, ch.Path = &old, fields[i]
			i++
		}
		if n := len(changes); n < len(counts) {
			ch.Additions, ch.Deletions, ch.Binary = counts[n].additions, counts[n].deletions, counts[n].binary
		}
		changes = append(changes, ch)
	}
	prefix := c.str("prefix")
	kept := []changedFile{}
	files := []string{}
	for _, ch := range changes {
		if strings.HasPrefix(ch.Path, prefix) {
			kept = append(kept, ch)
			files = append(files, ch.Path)
		}
	}
	return map[string]any{"files": files, "count": len(kept), "changes": kept}, nil
}

type lineCounts struct {
	additions, deletions int64
	binary               bool
}

// parseNumstat reads `git diff --numstat -z`: "ADD\tDEL\tPATH\0" per file,
// or "ADD\tDEL\t\0OLD\0NEW\0" for a rename or copy, with "-" for both
// counts of a binary file.
func parseNumstat(out string) []lineCounts {
	fields := strings.Split(strings.TrimSuffix(out, "\x00"), "\x00")
	var counts []lineCounts
	for i := 0; i < len(fields); i++ {
		parts := strings.SplitN(fields[i], "\t", 3)
		if len(parts) < 3 {
			continue
		}
		if parts[2] == "" {
			i += 2 // the old and new paths of a rename
		}
		var lc lineCounts
		if parts[0] == "-" {
			lc.binary = true
		} else {
			lc.additions, _ = strconv.ParseInt(parts[0], 10, 64)
			lc.deletions, _ = strconv.ParseInt(parts[1], 10, 64)
		}
		counts = append(counts, lc)
	}
	return counts
}

// grepMatch is one entry of git_grep's matches.
type grepMatch struct {
	Path string `json:"path"`
	Line int64  `json:"line"`
	Text string `json:"text"`
}

func gitGrep(ctx context.Context, c *packCall) (any, error) {
	ref, err := c.ref("ref")
	if err != nil {
		return nil, err
	}
	max, err := c.count("max_matches")
	if err != nil {
		return nil, err
	}
	pattern := c.str("pattern")
	if pattern == "" {
		return nil, c.fail("input pattern must not be empty")
	}
	args := []string{"grep", "--no-color", "--no-column", "-z", "-n", "-I", "-E", "-e", pattern, ref}
	if spec := pathspecs(c.str("paths"), ""); len(spec) > 0 {
		args = append(append(args, "--"), spec...)
	}
	lines := &lineWriter{max: max}
	if err := c.git(ctx, lines, args...); err != nil {
		// Status 1 is git grep's "nothing matched", an answer, not a failure.
		var te *ToolError
		if !errors.As(err, &te) || te.ExitCode != 1 {
			return nil, err
		}
	}
	matches := []grepMatch{}
	for _, l := range lines.finish() {
		// With -z a match is "REF:PATH\0LINE\0TEXT".
		parts := strings.SplitN(l, "\x00", 3)
		if len(parts) < 3 {
			continue
		}
		n, err := strconv.ParseInt(parts[1], 10, 64)
		if err != nil {
			continue
		}
		matches = append(matches, grepMatch{Path: strings.TrimPrefix(parts[0], ref+":"), Line: n, Text: parts[2]})
	}
	return map[string]any{"matches": matches, "count": len(matches), "truncated": lines.total > max}, nil
}

// lineWriter keeps the first max lines written to it and counts them all,
// so that a pattern matching everywhere costs only its cap in memory.
type lineWriter struct {
	max     int64
	lines   []string
	total   int64
	partial []byte // the start of the line being written, while it is kept
	pending bool   // a line has begun and not ended
}

func (w *lineWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if int64(len(w.lines)) < w.max {
				w.partial = append(w.partial, p...)
			}
			w.pending = true
			break
		}
		w.line(p[:i])
		p = p[i+1:]
	}
	return n, nil
}

func (w *lineWriter) line(end []byte) {
	if int64(len(w.lines)) < w.max {
		w.lines = append(w.lines, string(append(w.partial, end...)))
	}
	w.partial, w.pending = w.partial[:0], false
	w.total++
}

// finish counts a last line that had no newline and returns the kept lines.
func (w *lineWriter) finish() []string {
	if w.pending {
		w.line(nil)
	}
	return w.lines
}

// logCommit is one entry of git_log's commits.
type logCommit struct {
	SHA      string `json:"sha"`
	ShortSHA string `json:"short_sha"`
	Author   string `json:"author"`
	Date     string `json:"date"`
	Subject  string `json:"subject"`
	PR       *int64 `json:"pr"`
}

// prSuffix is the "(#123)" GitHub's squash merges end a subject with.
var prSuffix = regexp.MustCompile(`\(#([0-9]+)\)\s*$`)

func gitLog(ctx context.Context, c *packCall) (any, error) {
	base, head, err := c.refRange()
	if err != nil {
		return nil, err
	}
	max, err := c.count("max_commits")
	if err != nil {
		return nil, err
	}
	var filter []string
	if !c.boolean("include_merges") {
		filter = []string{"--no-merges"}
	}
	rng := base + ".." + head
	spec := append([]string{"--"}, pathspecs(c.str("paths"), "")...)

	// The total comes from the whole range; --max-count only caps what is
	// returned, so truncated is known rather than guessed.
	var count bytes.Buffer
	if err := c.git(ctx, &count, append(append(append([]string{"rev-list", "--count"}, filter...), rng), spec...)...); err != nil {
		return nil, err
	}
	total, err := strconv.ParseInt(strings.TrimSpace(count.String()), 10, 64)
	if err != nil {
		return nil, c.fail("git rev-list --count printed %q, not a count", count.String())
	}
	// Fields end in \x1f and records in \x1e, so that no subject can shift
	// a field.
	var log bytes.Buffer
	args := append([]string{"log", "--no-color", "--no-show-signature", "--max-count=" + itoa(max),
		"--pretty=format:%H%x1f%h%x1f%an%x1f%aI%x1f%s%x1e"}, filter...)
	if err := c.git(ctx, &log, append(append(args, rng), spec...)...); err != nil {
		return nil, err
	}
	commits := []logCommit{}
	for _, rec := range strings.Split(log.String(), "\x1e") {
		f := strings.Split(strings.TrimPrefix(rec, "\n"), "\x1f")
		if len(f) != 5 {
			continue
		}
		lc := logCommit{SHA: f[0], ShortSHA: f[1], Author: f[2], Date: f[3], Subject: f[4]}
		if m := prSuffix.FindStringSubmatch(lc.Subject); m != nil {
			if n, err := strconv.ParseInt(m[1], 10, 64); err == nil {
				lc.PR = &n
			}
		}
		commits = append(commits, lc)
	}
	return map[string]any{"commits": commits, "count": len(commits), "total": total, "truncated": total > max}, nil
}
