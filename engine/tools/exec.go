package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/plans/template"
)

const (
	// defaultExecTimeout is an exec tool's budget when it sets no
	// timeout_secs.
	defaultExecTimeout = 60 * time.Second
	// execStderrMax is how much of an exec tool's stderr is kept: the tail,
	// which is where a failing command says why.
	execStderrMax = 8 << 10
	// pipeGrace bounds how long a finished command's output is waited for
	// when something it started still holds the pipes open.
	pipeGrace = time.Second
)

// runExec runs an exec tool: its argv directly (never through a shell),
// each argument rendered from the input, run so that its end, a timeout or
// a cancelled call kills everything it started (runCommand).
func (r *Runtime) runExec(ctx context.Context, t *plans.ToolFile, input map[string]any) (any, error) {
	name := t.ToolName()
	scope := template.LimitedScope{Scope: template.MapScope{"input": input}, Limit: r.cfg.Limits.ValueBytes}
	argv := make([]string, len(t.Args))
	for i, a := range t.Args {
		v, err := a.Render(scope)
		if err != nil {
			return nil, &ToolError{Tool: name, Message: fmt.Sprintf("argument %d: %v", i+1, err)}
		}
		argv[i] = argText(v)
	}
	env, err := toolEnv(r.cfg.SecretVars(), t.Env, scope)
	if err != nil {
		return nil, &ToolError{Tool: name, Message: err.Error()}
	}
	dir, err := r.toolDir(t.Cwd, scope)
	if err != nil {
		return nil, &ToolError{Tool: name, Message: err.Error()}
	}
	timeout, bound := defaultExecTimeout, "timeout_secs"
	if t.TimeoutSecs.Set && t.TimeoutSecs.Value > 0 {
		timeout = time.Duration(t.TimeoutSecs.Value) * time.Second
	}
	if d, ok := stepTimeout(ctx); ok {
		timeout, bound = d, "the step's timeout_secs"
	}

	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	command := t.Command.Value
	cmd := exec.Command(command, argv...)
	cmd.Dir, cmd.Env = dir, env
	var stdout bytes.Buffer
	stderr := newTailBuffer(execStderrMax)
	// Killing only the direct child would leave `sh -c 'a | b'` style
	// grandchildren running: runCommand stops all it started (startCommand).
	runErr := runCommand(runCtx, cmd, &stdout, stderr, r.cfg.Limits.ToolOutputBytes)

	fail := &ToolError{Tool: name, Stderr: stderr.String()}
	switch {
	case runErr == nil:
		// It exited cleanly, even if only just before a deadline, and its
		// output was read to the end.
	case ctx.Err() != nil:
		// The caller gave up (the step's tool_timeout, an abort): not the
		// tool's failure, so no ToolError.
		return nil, fmt.Errorf("%s: '%s' stopped: %w", name, command, context.Cause(ctx))
	case runCtx.Err() != nil:
		fail.TimedOut, fail.ExitCode = true, -1
		fail.Message = fmt.Sprintf("'%s' timed out after %ds (%s)", command, int(timeout/time.Second), bound)
		return nil, fail
	case errors.As(runErr, new(*OutputLimitError)):
		fail.ExitCode = -1
		fail.Message = fmt.Sprintf("'%s' %v", command, runErr)
		return nil, fail
	case errors.Is(runErr, errOutputHeld):
		fail.Message = fmt.Sprintf("'%s' exited with status 0, but something it started kept its output open for %s after, so what it printed may be incomplete; "+
			"it was stopped. A command left running in the background needs its output redirected (cmd >/dev/null 2>&1 &)", command, pipeGrace)
		return nil, fail
	default:
		var exit exitStatus
		if !errors.As(runErr, &exit) {
			fail.ExitCode = -1
			fail.Message = fmt.Sprintf("cannot run '%s': %v", command, runErr)
			return nil, fail
		}
		fail.ExitCode = exit.ExitCode()
		if fail.ExitCode < 0 {
			fail.Message = fmt.Sprintf("'%s' was killed (%v)", command, exit)
		} else {
			fail.Message = fmt.Sprintf("'%s' exited with status %d", command, fail.ExitCode)
		}
		if strings.TrimSpace(fail.Stderr) == "" {
			fail.Message += " and printed nothing to stderr"
		}
		return nil, fail
	}

	if t.OutputFormat() == "text" {
		// Trimmed, as graph trims it: a command's closing newline is not
		// part of its answer (git rev-parse, wc), and a gate comparing the
		// text would otherwise never match.
		return map[string]any{"text": strings.TrimSpace(stdout.String())}, nil
	}
	out, err := parseJSON(stdout.Bytes())
	if err != nil {
		says := "the tool says output: json"
		if !t.Output.Set {
			says = "an exec tool's output is json unless its file says output: text"
		}
		fail.Message = fmt.Sprintf("'%s' printed output that is not JSON (%s): %v; stdout starts %s", command, says, err, quoteStart(stdout.String(), 80))
		return nil, fail
	}
	return out, nil
}

// argText is how a rendered argument goes on a command line: a string as
// it is, anything else as its JSON text (5, true, ["a","b"]), so that a
// whole-tag argument such as "{{input.count}}" passes the number 5, not 5.0.
func argText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// toolEnv is the parent environment, less the variables withheld (a
// model provider's key), plus the tool's env, which may pass one on by
// name. ${VAR} in a value is expanded from the parent environment where
// the value is written, before its templates render, so that text coming
// from the input is never expanded; an unset variable is an error naming
// it.
func toolEnv(withheld []string, env *plans.Value, scope template.Scope) ([]string, error) {
	out := environWithout(withheld)
	if env == nil || env.Kind != plans.Map {
		return out, nil
	}
	for _, e := range env.Map() {
		v := e.Value
		var text string
		switch {
		case v.Kind == plans.String && v.Template() != nil:
			src, err := expandEnv(v.Template().Source(), "env."+e.Key)
			if err != nil {
				return nil, err
			}
			tpl, err := template.Parse(src)
			if err != nil {
				return nil, fmt.Errorf("env.%s: after expanding ${...}: %v", e.Key, err)
			}
			rendered, err := tpl.Render(scope)
			if err != nil {
				return nil, fmt.Errorf("env.%s: %v", e.Key, err)
			}
			text = argText(rendered)
		case v.Kind == plans.String:
			expanded, err := expandEnv(v.String, "env."+e.Key)
			if err != nil {
				return nil, err
			}
			text = expanded
		default:
			text = argText(v.Literal())
		}
		// exec uses the last of duplicate keys, so this overrides the
		// parent's value.
		out = append(out, e.Key+"="+text)
	}
	return out, nil
}

// expandEnv replaces each ${NAME} in s with the parent environment's value.
// Only the braced form is a reference, as in config.toml; "$x" stays as it
// is. An unset variable is an error naming it and where it is used.
func expandEnv(s, where string) (string, error) {
	var b strings.Builder
	var missing []string
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			break
		}
		end := strings.IndexByte(s[i+2:], '}')
		if end < 0 {
			break
		}
		name := s[i+2 : i+2+end]
		b.WriteString(s[:i])
		if v, ok := os.LookupEnv(name); ok && isVarName(name) {
			b.WriteString(v)
		} else {
			if isVarName(name) {
				missing = append(missing, name)
			}
			b.WriteString(s[i : i+3+end])
		}
		s = s[i+3+end:]
	}
	b.WriteString(s)
	switch len(missing) {
	case 0:
		return b.String(), nil
	case 1:
		return "", fmt.Errorf("%s: environment variable %s is not set", where, missing[0])
	}
	return "", fmt.Errorf("%s: environment variables %s are not set", where, strings.Join(missing, ", "))
}

func isVarName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// toolDir is the working directory of an exec tool: its cwd rendered from
// the input, a relative one taken from the project root; without a cwd,
// the project root itself, so that a tool behaves the same wherever in the
// project stepwise was started.
func (r *Runtime) toolDir(cwd *plans.Value, scope template.Scope) (string, error) {
	root, err := r.projectDir()
	if err != nil {
		return "", err
	}
	if cwd == nil {
		return root, nil
	}
	v, err := cwd.Render(scope)
	if err != nil {
		return "", fmt.Errorf("cwd: %v", err)
	}
	dir := argText(v)
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(root, dir)
	}
	if info, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("cwd: %s does not exist", dir)
	} else if err != nil {
		return "", fmt.Errorf("cwd: %v", err)
	} else if !info.IsDir() {
		return "", fmt.Errorf("cwd: %s is not a directory", dir)
	}
	return dir, nil
}

// parseJSON parses data as exactly one JSON value, numbers kept as
// json.Number so that large integers (ids) survive.
func parseJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("it is empty")
		}
		return nil, err
	}
	var extra any
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, errors.New("more after the first JSON value")
	}
	return v, nil
}

// quoteStart quotes the first n characters of s, marking a cut. It reads
// no further than those: s may be a tool's whole stdout.
func quoteStart(s string, n int) string {
	for i := range s {
		if n == 0 {
			return fmt.Sprintf("%q…", s[:i])
		}
		n--
	}
	return fmt.Sprintf("%q", s)
}

// environWithout is the process's environment less the variables named.
func environWithout(names []string) []string {
	env := os.Environ()
	if len(names) == 0 {
		return env
	}
	return slices.DeleteFunc(env, func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.Contains(names, name)
	})
}
