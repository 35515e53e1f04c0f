//go:build unix

package tools

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// jsonValue decodes JSON text the way tool results hold it (numbers as
// json.Number), for comparing results with reflect.DeepEqual.
func jsonValue(t *testing.T, text string) any {
	t.Helper()
	v, err := parseJSON([]byte(text))
	if err != nil {
		t.Fatalf("bad test JSON %s: %v", text, err)
	}
	return v
}

// toolErr asserts err is a *ToolError and returns it.
func toolErr(t *testing.T, err error) *ToolError {
	t.Helper()
	var te *ToolError
	if !errors.As(err, &te) {
		t.Fatalf("error %v (%T) is not a *ToolError", err, err)
	}
	return te
}

// The user tools of the exec and reshape tests.
var execTools = map[string]string{
	".stepwise/tools/args.yaml": `name: args
description: Print the arguments, templated.
kind: exec
command: printf
args: ["%s|%s|%s|%s", "{{input.word}}", "{{input.n}}", "{{input.list}}", "n={{input.n}}"]
output: text
input_schema:
  type: object
  required: [word, n]
  properties:
    word: { type: string }
    n: { type: number }
`,
	".stepwise/tools/env.yaml": `name: env
description: Print an environment variable the tool sets.
kind: exec
command: sh
args: ["-c", 'printf "%s" "$GREETING"']
output: text
env:
  GREETING: "${SW_TEST_NAME} says {{input.word}}"
  COUNT: 3
`,
	".stepwise/tools/unset.yaml": `name: unset
description: Needs a variable nobody set.
kind: exec
command: "true"
env:
  TOKEN: "${SW_TEST_UNSET_VARIABLE}"
`,
	".stepwise/tools/where.yaml": `name: where
description: Print the working directory.
kind: exec
command: sh
args: ["-c", "pwd -P"]
output: text
`,
	".stepwise/tools/where_sub.yaml": `name: where_sub
description: Print the working directory, a templated one.
kind: exec
command: sh
args: ["-c", "pwd -P"]
cwd: "{{input.dir}}"
output: text
`,
	".stepwise/tools/json.yaml": `name: json
description: Print JSON.
kind: exec
command: printf
args: ["%s", "{{input.text}}"]
output: json
`,
	".stepwise/tools/default_json.yaml": `name: default_json
description: Print JSON, or not, with no output field (json by default, as in graph).
kind: exec
command: printf
args: ["%s", "{{input.text}}"]
`,
	".stepwise/tools/fail.yaml": `name: fail
description: Fail like git outside a repository.
kind: exec
command: sh
args: ["-c", "echo some output; echo 'warning: first' >&2; echo 'fatal: not a git repository' >&2; exit 128"]
`,
	".stepwise/tools/quiet_fail.yaml": `name: quiet_fail
description: Fail without a word.
kind: exec
command: "false"
`,
	".stepwise/tools/noisy.yaml": `name: noisy
description: Write 20 KiB to stderr, then fail.
kind: exec
command: sh
args: ["-c", "i=0; while [ $i -lt 400 ]; do echo \"line $i of padding padding padding padding\" >&2; i=$((i+1)); done; echo 'the real reason' >&2; exit 2"]
`,
	".stepwise/tools/slow.yaml": `name: slow
description: Start a grandchild and wait for it.
kind: exec
command: sh
args: ["-c", "sleep 60 & echo $! > pidfile; wait"]
timeout_secs: 1
`,
	".stepwise/tools/sleeper.yaml": `name: sleeper
description: Sleep a minute.
kind: exec
command: sleep
args: ["60"]
`,
	".stepwise/tools/background.yaml": `name: background
description: Leave a background process holding stdout.
kind: exec
command: sh
args: ["-c", "sleep 3 & echo done"]
output: text
`,
	".stepwise/tools/missing.yaml": `name: missing
description: A command that is not there.
kind: exec
command: stepwise-test-no-such-command
`,
	".stepwise/tools/pr_shape.yaml": `name: pr_shape
description: Normalize PR metadata.
kind: reshape
shape:
  base_sha: "{{input.baseRefOid}}"
  pr: "{{input.number}}"
  title: "PR #{{input.number}}"
  nested: { labels: "{{input.labels}}" }
input_schema:
  type: object
  required: [number]
  properties:
    baseRefOid: { type: string }
    number: { type: integer }
`,
	".stepwise/tools/any_shape.yaml": `name: any_shape
description: Whatever shape the caller gives.
kind: reshape
caller_shape: true
`,
	".stepwise/tools/summarize.yaml": `name: summarize
description: An LLM call.
kind: prompt
prompt: "Summarize {{input.text}}"
`,
}

func TestExecTools(t *testing.T) {
	t.Setenv("SW_TEST_NAME", "Ada")
	rt, root := newRuntime(t, execTools, nil)
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		tool  string
		input map[string]any
		want  any
	}{
		{"templated args, numbers as JSON text", "user__args",
			map[string]any{"word": "hi there", "n": float64(5), "list": []any{"a", json.Number("2")}},
			map[string]any{"text": `hi there|5|["a",2]|n=5`}},
		{"a json.Number argument", "user__args", map[string]any{"word": "x", "n": json.Number("2.50"), "list": true},
			map[string]any{"text": "x|2.50|true|n=2.50"}},
		{"env expands ${VAR} as written, never in the input", "user__env", map[string]any{"word": "${SW_TEST_NAME}"},
			map[string]any{"text": "Ada says ${SW_TEST_NAME}"}},
		{"no cwd runs in the project root", "user__where", nil, map[string]any{"text": realRoot}},
		{"a relative cwd is under the project root", "user__where_sub", map[string]any{"dir": "sub"},
			map[string]any{"text": filepath.Join(realRoot, "sub")}},
		{"an absolute cwd", "user__where_sub", map[string]any{"dir": realRoot},
			map[string]any{"text": realRoot}},
		{"json output", "user__json", map[string]any{"text": ` {"a": 1, "b": [true, null], "big": 12345678901234567890} `},
			jsonValue(t, `{"a": 1, "b": [true, null], "big": 12345678901234567890}`)},
		{"json output may be any value", "user__json", map[string]any{"text": `[1, "two"]`}, jsonValue(t, `[1, "two"]`)},
		{"text is trimmed, as graph trims it", "user__args", map[string]any{"word": "\n  padded", "n": 1, "list": "x"},
			map[string]any{"text": "padded|1|x|n=1"}},
		{"output is json when the file does not say", "user__default_json", map[string]any{"text": `{"files": ["a.go"]}`},
			jsonValue(t, `{"files": ["a.go"]}`)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := rt.Call(context.Background(), tc.tool, tc.input)
			if err != nil {
				t.Fatalf("Call: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %#v\nwant %#v", got, tc.want)
			}
		})
	}
}

func TestExecToolErrors(t *testing.T) {
	rt, _ := newRuntime(t, execTools, nil)
	tests := []struct {
		name     string
		tool     string
		input    map[string]any
		want     string // the whole Error()
		exitCode int
	}{
		{"non-zero exit carries the end of stderr", "user__fail", nil,
			"'sh' exited with status 128: warning: first; fatal: not a git repository", 128},
		{"non-zero exit without stderr", "user__quiet_fail", nil, "'false' exited with status 1 and printed nothing to stderr", 1},
		{"stderr is kept to its tail", "user__noisy", nil,
			"'sh' exited with status 2: line 398 of padding padding padding padding; line 399 of padding padding padding padding; the real reason", 2},
		{"unparseable json", "user__json", map[string]any{"text": "hello, world"},
			`'printf' printed output that is not JSON (the tool says output: json): invalid character 'h' looking for beginning of value; stdout starts "hello, world"`, 0},
		{"json with more after it", "user__json", map[string]any{"text": `{"a":1} {"b":2}`},
			`'printf' printed output that is not JSON (the tool says output: json): more after the first JSON value; stdout starts "{\"a\":1} {\"b\":2}"`, 0},
		{"empty json output", "user__json", map[string]any{"text": ""},
			`'printf' printed output that is not JSON (the tool says output: json): it is empty; stdout starts ""`, 0},
		{"text from a tool without output", "user__default_json", map[string]any{"text": "hello"},
			`'printf' printed output that is not JSON (an exec tool's output is json unless its file says output: text): invalid character 'h' looking for beginning of value; stdout starts "hello"`, 0},
		{"a background child holding stdout fails the call, a second after the tool exits", "user__background", nil,
			"'sh' exited with status 0, but something it started kept its output open for 1s after, so what it printed may be incomplete; " +
				"it was stopped. A command left running in the background needs its output redirected (cmd >/dev/null 2>&1 &)", 0},
		{"an unset variable in env", "user__unset", nil, "env.TOKEN: environment variable SW_TEST_UNSET_VARIABLE is not set", 0},
		{"a missing command", "user__missing", nil,
			`cannot run 'stepwise-test-no-such-command': exec: "stepwise-test-no-such-command": executable file not found in $PATH`, -1},
		{"a cwd that is not there", "user__where_sub", map[string]any{"dir": "nowhere"}, "", 0},
		{"an argument whose path is missing", "user__args", map[string]any{"word": "x", "n": 1}, "", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rt.Call(context.Background(), tc.tool, tc.input)
			te := toolErr(t, err)
			if tc.want != "" && te.Error() != tc.want {
				t.Errorf("Error() = %q\nwant      %q", te.Error(), tc.want)
			}
			if te.ExitCode != tc.exitCode || te.Tool != tc.tool || te.Input || te.TimedOut {
				t.Errorf("ToolError = %+v", te)
			}
		})
	}
	t.Run("the missing cwd is named", func(t *testing.T) {
		_, err := rt.Call(context.Background(), "user__where_sub", map[string]any{"dir": "nowhere"})
		if te := toolErr(t, err); !strings.HasPrefix(te.Error(), "cwd: /") || !strings.HasSuffix(te.Error(), "/nowhere does not exist") {
			t.Errorf("Error() = %q", te.Error())
		}
	})
	t.Run("the stored stderr is capped", func(t *testing.T) {
		_, err := rt.Call(context.Background(), "user__noisy", nil)
		te := toolErr(t, err)
		if len(te.Stderr) > execStderrMax || !strings.HasPrefix(te.Stderr, "line ") || !strings.HasSuffix(te.Stderr, "the real reason\n") {
			t.Errorf("Stderr is %d bytes: %.60q ... %q", len(te.Stderr), te.Stderr, te.Stderr[max(0, len(te.Stderr)-40):])
		}
	})
}

// alive reports whether a process exists (a zombie counts as gone: it
// holds no resources and waits only for its reaper).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true // no procfs: trust kill
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) == 0 || fields[0] != "Z"
}

// waitGone polls until the process is gone or the deadline passes.
func waitGone(pid int, within time.Duration) bool {
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if !alive(pid) {
			return true
		}
	}
	return !alive(pid)
}

func TestExecTimeoutKillsTheProcessGroup(t *testing.T) {
	rt, root := newRuntime(t, execTools, nil)
	start := time.Now()
	_, err := rt.Call(context.Background(), "user__slow", nil)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the call took %s with timeout_secs 1", took)
	}
	te := toolErr(t, err)
	if !te.TimedOut || te.Error() != "'sh' timed out after 1s (timeout_secs)" {
		t.Errorf("ToolError = %+v, Error() = %q", te, te.Error())
	}
	data, err := os.ReadFile(filepath.Join(root, "pidfile"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	if !waitGone(pid, 2*time.Second) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("the grandchild (pid %d) outlived the timeout", pid)
	}
}

func TestExecCancellation(t *testing.T) {
	rt, _ := newRuntime(t, execTools, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := rt.Call(ctx, "user__sleeper", nil)
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("the call took %s after its context ended", took)
	}
	var te *ToolError
	if !errors.Is(err, context.DeadlineExceeded) || errors.As(err, &te) {
		t.Errorf("err = %v; want one wrapping context.DeadlineExceeded, not a ToolError", err)
	}
}

func TestInputSchema(t *testing.T) {
	rt, _ := newRuntime(t, execTools, nil)
	tests := []struct {
		name  string
		tool  string
		input map[string]any
		want  string
	}{
		{"wrong type", "user__args", map[string]any{"word": "x", "n": "five"},
			"input does not match user__args's input_schema: /n: got string, want number"},
		{"missing field", "user__args", map[string]any{"n": 1},
			"input does not match user__args's input_schema: /: missing property 'word'"},
		{"reshape input", "user__pr_shape", map[string]any{"number": 1.5},
			"input does not match user__pr_shape's input_schema: /number: got number, want integer"},
		{"builtin__reshape without a shape", "builtin__reshape", map[string]any{},
			"input does not match builtin__reshape's input_schema: /: missing property 'shape'"},
		{"builtin__reshape with a stray key", "builtin__reshape", map[string]any{"shape": map[string]any{}, "extra": 1},
			"input does not match builtin__reshape's input_schema: /: additional properties 'extra' not allowed"},
		{"builtin__reshape with a shape that is no object", "builtin__reshape", map[string]any{"shape": "text"},
			"input does not match builtin__reshape's input_schema: /shape: got string, want object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rt.Call(context.Background(), tc.tool, tc.input)
			te := toolErr(t, err)
			if !te.Input || len(te.Violations) == 0 || te.Error() != tc.want {
				t.Errorf("got %+v\nError() = %q\nwant      %q", te, te.Error(), tc.want)
			}
		})
	}
}

// TestReshapeInputAgreesWithSchema holds the shortcut that spares a
// reshape step the generic validator to builtin__reshape's input_schema:
// what it accepts, the schema accepts, and it accepts every input a plan's
// step renders.
func TestReshapeInputAgreesWithSchema(t *testing.T) {
	rt, _ := newRuntime(t, execTools, nil)
	schema := rt.builtin["builtin__reshape"]
	if schema == nil {
		t.Fatal("builtin__reshape has no compiled input schema")
	}
	tests := []struct {
		name  string
		input map[string]any
		fast  bool
	}{
		{"a shape", map[string]any{"shape": map[string]any{"n": 1}}, true},
		{"an empty shape", map[string]any{"shape": map[string]any{}}, true},
		{"no shape", map[string]any{}, false},
		{"a stray key", map[string]any{"shape": map[string]any{}, "extra": 1}, false},
		{"a list for a shape", map[string]any{"shape": []any{1}}, false},
		{"a null shape", map[string]any{"shape": nil}, false},
		{"another key alone", map[string]any{"shapes": map[string]any{}}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fast := isReshapeInput(tc.input)
			if fast != tc.fast {
				t.Errorf("isReshapeInput = %v, want %v", fast, tc.fast)
			}
			if vs := schema.Check(tc.input); fast && len(vs) > 0 {
				t.Errorf("accepted an input the schema refuses: %v", vs)
			}
		})
	}
}

func TestReshape(t *testing.T) {
	rt, _ := newRuntime(t, execTools, nil)
	shape := map[string]any{"x": "{{ left alone }}", "n": json.Number("3"), "list": []any{"a"}}
	tests := []struct {
		name  string
		tool  string
		input map[string]any
		want  any
	}{
		{"a fixed shape renders with typed splice", "user__pr_shape",
			map[string]any{"baseRefOid": "abc123", "number": json.Number("42"), "labels": []any{"bug"}},
			map[string]any{"base_sha": "abc123", "pr": json.Number("42"), "title": "PR #42", "nested": map[string]any{"labels": []any{"bug"}}}},
		{"caller_shape returns the shape verbatim", "user__any_shape", map[string]any{"shape": shape}, shape},
		{"builtin__reshape returns the shape verbatim", "builtin__reshape", map[string]any{"shape": shape}, shape},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := rt.Call(context.Background(), tc.tool, tc.input)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %#v\nwant %#v", got, tc.want)
			}
		})
	}
	_, err := rt.Call(context.Background(), "user__pr_shape", map[string]any{"number": 1})
	if te := toolErr(t, err); !strings.HasPrefix(te.Error(), "rendering the shape: ") || !strings.Contains(te.Error(), "baseRefOid") {
		t.Errorf("a shape reading a missing field: %q", te.Error())
	}
}

func TestNotRuntimeTools(t *testing.T) {
	rt, _ := newRuntime(t, execTools, nil)
	tests := []struct {
		tool string
		kind error
		want string
	}{
		{"builtin__infer", ErrNotRuntimeTool, "builtin__infer is an LLM call, which the engine makes itself"},
		{"user__summarize", ErrNotRuntimeTool, "user__summarize is a prompt tool: an LLM call, which the engine makes itself"},
		{"plan__triage", ErrNotRuntimeTool, "plan__triage runs a plan, which the engine does itself"},
		{"map", ErrNotRuntimeTool, "'map' is a control step, which the engine evaluates; it is not a tool"},
		{"user__sumarize", ErrUnknownTool, "no tool named 'user__sumarize'; did you mean 'user__summarize'?"},
		{"builtin__nothing", ErrUnknownTool, "no tool named 'builtin__nothing'"},
		{"linear__list_issues", ErrUnknownTool, "no tool named 'linear__list_issues': there is no MCP server 'linear' (none are configured)"},
		{"nonsense", ErrUnknownTool, "no tool named 'nonsense'"},
	}
	for _, tc := range tests {
		t.Run(tc.tool, func(t *testing.T) {
			_, err := rt.Call(context.Background(), tc.tool, nil)
			var te *ToolError
			if !errors.Is(err, tc.kind) || errors.As(err, &te) || err.Error() != tc.want {
				t.Errorf("err = %v\nwant  %s (%v)", err, tc.want, tc.kind)
			}
		})
	}
}

// TestToolsDoNotInheritSecrets checks that the variables a model
// provider's or an MCP server's configuration reads are withheld from exec
// tools, unless a tool's env passes one on by name.
func TestToolsDoNotInheritSecrets(t *testing.T) {
	const key, token = "SW_TEST_PROVIDER_KEY", "SW_TEST_SERVER_TOKEN"
	secrets := map[string]string{key: "sk-canary-do-not-leak", token: "tok-canary-do-not-leak"}
	for name, value := range secrets {
		t.Setenv(name, value)
	}
	printBoth := "args: [\"-c\", \"printf '%s|%s' \\\"$" + key + "\\\" \\\"$" + token + "\\\"\"]\noutput: text\n"
	files := map[string]string{
		".stepwise/config.toml": "[providers.claude]\ntype = \"anthropic\"\napi_key = \"${" + key + "}\"\n" +
			"[mcp.tracker]\ncommand = \"tracker\"\nargs = [\"--token\", \"${" + token + "}\"]\n",
		".stepwise/tools/printenv.yaml": "name: printenv\ndescription: Prints the secrets it sees.\nkind: exec\ncommand: sh\n" + printBoth,
		".stepwise/tools/passes.yaml": "name: passes\ndescription: Passes the key on.\nkind: exec\ncommand: sh\n" + printBoth +
			"env: { " + key + ": \"${" + key + "}\" }\n",
	}
	rt, _ := newRuntime(t, files, secrets)
	for tool, want := range map[string]string{"user__printenv": "|", "user__passes": secrets[key] + "|"} {
		got, err := rt.Call(context.Background(), tool, nil)
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		if text := got.(map[string]any)["text"]; text != want {
			t.Errorf("%s saw %q, want %q", tool, text, want)
		}
	}
}

// TestExecOutputLimit stops an exec tool that prints more than [limits]
// tool_output_bytes, and says which limit.
func TestExecOutputLimit(t *testing.T) {
	files := map[string]string{
		".stepwise/config.toml":      "[limits]\ntool_output_bytes = 1000\n",
		".stepwise/tools/flood.yaml": "name: flood\ndescription: Prints without end.\nkind: exec\ncommand: yes\noutput: text\n",
	}
	rt, _ := newRuntime(t, files, nil)
	_, err := rt.Call(context.Background(), "user__flood", nil)
	want := "'yes' printed more than 1000 bytes to stdout ([limits] tool_output_bytes), and was stopped"
	if te := toolErr(t, err); te.Error() != want {
		t.Errorf("Error() = %q\nwant      %q", te.Error(), want)
	}
}

// TestExecArgumentLimit refuses an exec tool's argument whose rendered
// text would pass [limits] value_bytes, before anything runs.
func TestExecArgumentLimit(t *testing.T) {
	files := map[string]string{
		".stepwise/config.toml": "[limits]\nvalue_bytes = 1000\n",
		".stepwise/tools/echo.yaml": "name: echo\ndescription: Echoes twice.\nkind: exec\ncommand: echo\nargs: [\"{{input.s}}{{input.s}}\"]\noutput: text\n" +
			"input_schema: { type: object, properties: { s: { type: string } } }\n",
	}
	rt, _ := newRuntime(t, files, nil)
	_, err := rt.Call(context.Background(), "user__echo", map[string]any{"s": strings.Repeat("x", 600)})
	if te := toolErr(t, err); !strings.Contains(te.Error(), "argument 1: ") || !strings.Contains(te.Error(), "[limits] value_bytes") {
		t.Errorf("Error() = %q", te.Error())
	}
	got, err := rt.Call(context.Background(), "user__echo", map[string]any{"s": "ab"})
	if err != nil || got.(map[string]any)["text"] != "abab" {
		t.Errorf("a short argument: %v, %v", got, err)
	}
}
