package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stepwise-dev/stepwise/debugger/workspace"
	"github.com/stepwise-dev/stepwise/plans/examples"
)

// cliEnv makes the test binary the stepwise executable: with it set,
// TestMain runs the command line instead of the tests. A test that needs a
// real stepwise process (the demo's MCP server, which the demo's config
// starts as `<executable> __demo-mcp`; a run killed mid-way) starts
// os.Args[0] with it.
const cliEnv = "STEPWISE_TEST_CLI"

// stubbornEnv makes the test binary an MCP server that outstays its
// welcome: it serves the demo tracker, and when its client goes away it
// ignores SIGTERM and lingers, the way a server busy with a long operation
// does. Only the kernel's parent-death signal gets rid of it.
const stubbornEnv = "STEPWISE_TEST_STUBBORN_MCP"

func TestMain(m *testing.M) {
	if os.Getenv(stubbornEnv) == "1" {
		signal.Ignore(syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
		examples.ServeTracker(context.Background())
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	if os.Getenv(tokenServerEnv) == "1" {
		serveTokenTool()
		os.Exit(0)
	}
	if os.Getenv(cliEnv) == "1" {
		os.Exit(runProcess())
	}
	code := m.Run()
	removeBuiltBinary()
	os.Exit(code)
}

// demoProject writes the demo project, its tracker served by this test
// binary, and makes it the working directory.
func demoProject(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	if err := examples.WriteProject(dir, os.Args[0]); err != nil {
		t.Fatal(err)
	}
	isolate(t, dir)
	// The tracker child inherits these: it runs as stepwise, and under
	// -race it need not sleep the race detector's second before it exits.
	t.Setenv(cliEnv, "1")
	t.Setenv("GORACE", "atexit_sleep_ms=0")
}

// scratchProject writes a project whose config.toml is config and makes it
// the working directory.
func scratchProject(t *testing.T, config string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".stepwise"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".stepwise", "config.toml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	isolate(t, dir)
}

// stableOutput replaces the test binary's path, which changes per build,
// with a placeholder.
func stableOutput(s string) string {
	quoted, _ := json.Marshal(os.Args[0])
	s = strings.ReplaceAll(s, string(quoted[1:len(quoted)-1]), "<stepwise>")
	return strings.ReplaceAll(s, os.Args[0], "<stepwise>")
}

type cliCase struct {
	name     string
	args     []string
	wantCode int
}

// runGolden runs each case and compares its stdout and stderr with the
// golden files named after it.
func runGolden(t *testing.T, cases []cliCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runCLI(t, tc.args...)
			if code != tc.wantCode {
				t.Errorf("exit code %d, want %d\nstderr:\n%s", code, tc.wantCode, stderr)
			}
			name := strings.ReplaceAll(tc.name, " ", "_")
			golden(t, name+".stdout", stableOutput(stdout))
			golden(t, name+".stderr", stableOutput(stderr))
		})
	}
}

func TestMCPDemo(t *testing.T) {
	demoProject(t)
	runGolden(t, []cliCase{
		{"mcp list demo", []string{"mcp", "list", "--json"}, 0},
		{"mcp list demo text", []string{"mcp", "list"}, 0},
		{"mcp test demo", []string{"mcp", "test", "tracker", "--json"}, 0},
		{"mcp test demo text", []string{"mcp", "test", "tracker"}, 0},
		{"mcp tools demo", []string{"mcp", "tools", "--json"}, 0},
		{"mcp tools demo text", []string{"mcp", "tools", "tracker"}, 0},
		{"mcp tools unknown server", []string{"mcp", "tools", "trackr"}, 1},
		{"mcp test unknown server", []string{"mcp", "test", "trackr"}, 1},
		{"mcp without a subcommand", []string{"mcp"}, 2},
		{"tools show an MCP tool", []string{"tools", "show", "--json", "tracker__get_issue"}, 0},
		{"tools show an MCP tool the server lacks", []string{"tools", "show", "tracker__get_isue"}, 1},
	})

	// The demo's plans and tools are not this test's to pin; that the
	// tracker's tools join the catalog, in their own section, is.
	stdout, stderr, code := runCLI(t, "tools", "list", "--json")
	if code != 0 {
		t.Fatalf("tools list: exit %d: %s", code, stderr)
	}
	var env toolListJSON
	if err := json.Unmarshal([]byte(stdout), &env); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range env.Tools {
		names = append(names, tool.Name)
		if strings.HasPrefix(tool.Name, "tracker__") && (tool.Source != "tracker" || !tool.HasOutputSchema) {
			t.Errorf("%+v", tool)
		}
	}
	i := slices.Index(names, "tracker__add_comment")
	if i < 0 || !slices.Equal(names[i:i+4], []string{"tracker__add_comment", "tracker__get_issue", "tracker__list_issues", "tracker__search"}) {
		t.Errorf("the tracker's tools are not listed together: %v", names)
	}
	if !slices.Contains(env.Sources, sourceCountJSON{Source: "tracker", Count: 4}) || env.Count != len(env.Tools) || len(env.Skipped) != 0 {
		t.Errorf("sources %v, count %d, skipped %v", env.Sources, env.Count, env.Skipped)
	}
}

func TestMCPProblems(t *testing.T) {
	t.Run("a server that cannot start", func(t *testing.T) {
		isolate(t, "testdata/project")
		runGolden(t, []cliCase{
			{"mcp list project", []string{"mcp", "list", "--json"}, 0},
			{"mcp test a server that is not there", []string{"mcp", "test", "tracker"}, 1},
			{"mcp test a server that is not there json", []string{"mcp", "test", "--json", "tracker"}, 1},
			{"mcp tools with a server that is not there", []string{"mcp", "tools", "--json"}, 1},
			{"mcp tools of a server that is not there", []string{"mcp", "tools", "tracker"}, 1},
		})
	})
	t.Run("no servers", func(t *testing.T) {
		scratchProject(t, "")
		runGolden(t, []cliCase{
			{"mcp list none", []string{"mcp", "list", "--json"}, 0},
			{"mcp list none text", []string{"mcp", "list"}, 0},
			{"mcp tools none", []string{"mcp", "tools", "--json"}, 0},
			{"mcp tools none text", []string{"mcp", "tools"}, 0},
			{"mcp test none", []string{"mcp", "test", "tracker"}, 1},
		})
	})
	t.Run("an unset variable", func(t *testing.T) {
		scratchProject(t, "[mcp.locked]\nurl = \"http://127.0.0.1:9/mcp\"\nheaders = { Authorization = \"Bearer ${SW_TEST_UNSET_TOKEN}\" }\ninclude_tools = [\"search\"]\n")
		runGolden(t, []cliCase{
			{"mcp list unusable", []string{"mcp", "list", "--json"}, 0},
			{"mcp list unusable text", []string{"mcp", "list"}, 0},
			{"mcp test unusable", []string{"mcp", "test", "locked"}, 1},
			{"tools list unusable", []string{"tools", "list", "--json"}, 0},
		})
	})
}

// TestMCPJSONOfABrokenServer: with --json, a command about one MCP server
// that cannot be used still prints its JSON document, carrying why, and
// exits 1: mcp tools NAME its listing with the server skipped, as the
// listing of every server does; mcp test NAME its result, not ok; tools
// show the tool, unusable. Each server is broken a real way: its command
// is nowhere, it exits at once, it answers the handshake with what is not
// JSON-RPC, or it is not configured at all.
func TestMCPJSONOfABrokenServer(t *testing.T) {
	scratchProject(t, `
[mcp.missing]
command = "stepwise-test-no-such-server"

[mcp.exits]
command = "sh"
args = ["-c", "echo starting >&2; exit 3"]

[mcp.babbles]
command = "echo"
args = ["this is not JSON-RPC"]
`)
	reached := func(server string) string {
		return "'" + server + "__search' would be a tool of MCP server '" + server + "', which cannot be reached: "
	}
	for _, tc := range []struct {
		server, why string
		// source and showWhy are what tools show SERVER__search says
		// of the tool: a server not configured has no tool.
		source, showWhy string
	}{
		{"missing", `mcp server 'missing' (stdio: stepwise-test-no-such-server): cannot connect: exec: "stepwise-test-no-such-server": executable file not found`,
			"missing", reached("missing")},
		{"exits", `mcp server 'exits' (stdio: sh -c "echo starting >&2; exit 3"): cannot connect: `, "exits", reached("exits")},
		{"babbles", `mcp server 'babbles' (stdio: echo "this is not JSON-RPC"): cannot connect: `, "babbles", reached("babbles")},
		{"absent", `mcp server "absent" is not configured (configured: babbles, exits, missing)`, "", "no tool named 'absent__search'"},
	} {
		t.Run(tc.server, func(t *testing.T) {
			// run runs a command that must fail saying why, and decodes
			// its stdout into v.
			run := func(v any, why string, args ...string) {
				t.Helper()
				out, errOut, code := runCLI(t, args...)
				if code != 1 || !strings.Contains(errOut, why) {
					t.Errorf("%s: exit %d, stderr:\n%s", strings.Join(args, " "), code, errOut)
				}
				if err := json.Unmarshal([]byte(out), v); err != nil {
					t.Errorf("%s: stdout is no JSON document (%v):\n%s", strings.Join(args, " "), err, out)
				}
			}

			var listing toolListJSON
			run(&listing, tc.why, "mcp", "tools", tc.server, "--json")
			if len(listing.Skipped) != 1 || listing.Skipped[0].Server != tc.server || !strings.Contains(listing.Skipped[0].Reason, tc.why) || listing.Count != 0 || listing.Tools == nil {
				t.Errorf("mcp tools %s --json: %+v", tc.server, listing)
			}

			var test workspace.MCPTest
			run(&test, tc.why, "mcp", "test", tc.server, "--json")
			if test.Server != tc.server || test.OK || test.Error == nil || !strings.Contains(*test.Error, tc.why) {
				t.Errorf("mcp test %s --json: %+v", tc.server, test)
			}

			var tool toolShowJSON
			run(&tool, tc.showWhy, "tools", "show", tc.server+"__search", "--json")
			if tool.Name != tc.server+"__search" || tool.Source != tc.source || tool.Unusable == nil || !strings.Contains(*tool.Unusable, tc.showWhy) {
				t.Errorf("tools show %s__search --json: %+v", tc.server, tool)
			}
		})
	}
}

// TestMCPToolsOfEveryServerSkipped: mcp tools (every server) exits 1 when
// a configured server could not be listed, as mcp tools NAME does for that
// server: when none could be, and when the listing is partial, the tools
// of the servers that answered still listed. The JSON is printed either
// way, the skipped servers in it with why, and stderr names them.
func TestMCPToolsOfEveryServerSkipped(t *testing.T) {
	broken := "[mcp.missing]\ncommand = \"stepwise-test-no-such-server\"\n\n[mcp.exits]\ncommand = \"sh\"\nargs = [\"-c\", \"exit 3\"]\n"
	tracker := fmt.Sprintf("[mcp.tracker]\ncommand = %q\nargs = [\"__demo-mcp\"]\n", os.Args[0])
	for _, tc := range []struct {
		name, config string
		tools        int
		stderr       string
	}{
		{"none listed", broken, 0, "2 of 2 MCP servers could not be listed"},
		{"some listed", broken + tracker, 4, "2 of 3 MCP servers could not be listed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			scratchProject(t, tc.config)
			t.Setenv(cliEnv, "1")
			t.Setenv("GORACE", "atexit_sleep_ms=0")
			for _, asJSON := range []bool{true, false} {
				args := []string{"mcp", "tools"}
				if asJSON {
					args = append(args, "--json")
				}
				stdout, stderr, code := runCLI(t, args...)
				name := strings.Join(args, " ")
				if code != exitFailure || !strings.Contains(stderr, "skipped MCP server missing: ") || !strings.Contains(stderr, "skipped MCP server exits: ") || !strings.HasSuffix(stderr, "stepwise: "+tc.stderr+"\n") {
					t.Errorf("%s: exit %d, stderr:\n%s", name, code, stderr)
				}
				if !asJSON {
					continue
				}
				var listing toolListJSON
				if err := json.Unmarshal([]byte(stdout), &listing); err != nil {
					t.Fatalf("%s: stdout is no JSON document (%v):\n%s", name, err, stdout)
				}
				if listing.Count != tc.tools || len(listing.Skipped) != 2 || listing.Skipped[0].Server != "exits" || listing.Skipped[1].Server != "missing" {
					t.Errorf("%s: count %d, skipped %+v", name, listing.Count, listing.Skipped)
				}
			}
		})
	}
}

func TestToolsShowAnExcludedTool(t *testing.T) {
	scratchProject(t, fmt.Sprintf("[mcp.tracker]\ncommand = %q\nargs = [\"__demo-mcp\"]\nexclude_tools = [\"search\"]\n", os.Args[0]))
	t.Setenv(cliEnv, "1")
	t.Setenv("GORACE", "atexit_sleep_ms=0")
	_, errOut, code := runCLI(t, "tools", "show", "tracker__search")
	if code != 1 || !strings.Contains(errOut, "[mcp.tracker] leaves 'search' out (include_tools/exclude_tools)") {
		t.Errorf("exit %d: %s", code, errOut)
	}
}
