package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"
)

// debugProject is the run project with more files under .stepwise: plans,
// a tool that fails, and replies for its agents.
func debugProject(t *testing.T, files map[string]string) {
	t.Helper()
	dir := runProject(t)
	files["plans/loop.yaml"] = loopPlan
	files["tools/fail.yaml"] = `
name: fail
description: Fails.
kind: exec
command: sh
args: ["-c", "echo broken >&2; exit 3"]
output: json
input_schema: { type: object, properties: {} }
`
	for name, text := range files {
		path := filepath.Join(dir, ".stepwise", name)
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const failingPlan = `
identifier: failing
name: Failing
description: Fails at its second step.
steps:
  - id: F0
    tool_name: builtin__reshape
    input: { shape: { ok: true } }
  - id: F1
    tool_name: user__fail
    input: {}
  - id: F2
    tool_name: builtin__reshape
    input: { shape: { got: "{{F1.text}}" } }
output: { got: "{{F2.got}}" }
`

// TestDebugHeldStart checks that a session is held at its first stop with
// no breakpoint set, so that settings given there hold for the whole run,
// and that --continue runs straight to the first breakpoint or the end.
func TestDebugHeldStart(t *testing.T) {
	debugProject(t, map[string]string{"plans/failing.yaml": failingPlan})
	// errors off, given at the first stop, lets the failure through.
	out, _, code := debugTurns(t, []string{"errors off", "continue"}, "failing")
	if got := strings.Join(stopsOf(t, out), ", "); got != "stop step F0 (entry), end failed" || code == 0 {
		t.Errorf("held start, errors off: exit %d, %s", code, got)
	}
	// --continue runs to the first stop a breakpoint or an error makes.
	out, _, _ = debugTurns(t, []string{"continue"}, "failing", "--continue", "--break", "F2")
	if got := strings.Join(stopsOf(t, out), ", "); got != "breakpoint, stop error F1 (error), end failed" {
		t.Errorf("--continue: %s", got)
	}
	out, _, code = debugTurns(t, nil, "loop", "--continue")
	if got := strings.Join(stopsOf(t, out), ", "); got != "end ok" || code != 0 {
		t.Errorf("--continue with nothing to stop at: exit %d, %s", code, got)
	}
}

const napPlan = `
identifier: napping
name: Napping
description: Naps, then reshapes.
steps:
  - id: slow
    tool_name: user__nap
    input: { seconds: 2 }
  - id: after
    tool_name: builtin__reshape
    input: { shape: { slept: "{{slow.slept}}" } }
output: { slept: "{{after.slept}}" }
`

// TestDebugPauseWhileRunning drives a run that goes on: pause holds it at
// its next stop, a breakpoint set meanwhile is kept, and a command that
// wants a held run waits for that stop.
func TestDebugPauseWhileRunning(t *testing.T) {
	debugProject(t, map[string]string{"plans/napping.yaml": napPlan})
	c := startDebug(t, "napping", "--continue")
	// threads says where the run is as it goes: once past slow's step
	// stop, it naps for two seconds, and the next stop is slow's result.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		threads, _ := c.ask("threads")["threads"].([]any)
		if len(threads) > 0 {
			main := threads[0].(map[string]any)
			if main["path"] == "slow" && main["kind"] == "step" && main["held"] == false {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run never came to slow: %v", threads)
		}
	}
	if a := c.ask("pause"); a["pausing"] != true {
		t.Fatalf("pause answered %v", a)
	}
	if a := c.ask("break after step"); a["breakpoint"] == nil {
		t.Errorf("break while running answered %v", a)
	}
	// A line that wants a held run waits for the stop the pause makes,
	// and is answered there.
	c.send("where")
	held := c.next()
	if stop := held["stop"].(map[string]any); held["reason"] != "pause" || stop["path"] != "slow" || stop["kind"] != "result" {
		t.Errorf("paused at %v", held)
	}
	if where := c.next(); where["reason"] != "pause" {
		t.Errorf("where, given while the run went on, answered %v at its stop", where)
	}
	if a := c.ask("pause"); !strings.Contains(a["error"].(string), "already held at slow (result)") {
		t.Errorf("pause while held answered %v", a)
	}
	if st := c.ask("continue"); st["reason"] != "breakpoint 1 (after)" {
		t.Errorf("continue went to %v", st)
	}
	c.send("continue")
	if out, errOut, code := c.end(); code != 0 {
		t.Errorf("exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestDebugScriptEndsWithAbort: a script whose last line aborts reads
// turn by turn: the lines before it are carried out at the breakpoint
// they were written for, and the abort after them, not at whatever stop
// the run came to first.
func TestDebugScriptEndsWithAbort(t *testing.T) {
	debugProject(t, map[string]string{"plans/napping.yaml": napPlan})
	c := startDebug(t, "napping", "--break", "after")
	// The three lines come at once, as from a pipe, while the run goes.
	for _, line := range []string{"continue", "print slow", "abort"} {
		c.send(line)
	}
	out, _, _ := c.end()
	got := strings.Join(stopsOf(t, out), ", ")
	if got != "breakpoint, stop step slow (entry), stop step after (breakpoint 1 (after)), value map[slept:2], end aborted" {
		t.Errorf("stops %s", got)
	}
}

// TestDebugResultReadsItsOwnValue: at a step's result stop, the step's
// result is in scope under its id, for a breakpoint condition, print and
// a watch alike, as a later step would read it.
func TestDebugResultReadsItsOwnValue(t *testing.T) {
	debugProject(t, map[string]string{"plans/napping.yaml": napPlan})
	out, _, code := debugTurns(t, []string{"break slow result if {{slow.slept}} eq 2", "watch slow", "continue", "print slow.slept", "continue"}, "napping")
	got := strings.Join(stopsOf(t, out), ", ")
	if got != "stop step slow (entry), breakpoint, stop result slow (breakpoint 1 (slow)), value 2, end ok" || code != 0 {
		t.Errorf("exit %d, stops %s", code, got)
	}
	if !strings.Contains(out, `"watches":[{"id":1,"path":"slow","value":{"slept":2}}]`) {
		t.Errorf("the watch did not read slow at its result:\n%s", out)
	}
}

const pairPlan = `
identifier: pair
name: Pair
description: Two items side by side, one slower than the other.
steps:
  - id: E1
    tool_name: map
    input:
      over: [3, 1]
      concurrency: 2
      do:
        tool_name: user__nap
        input: { seconds: "{{item}}" }
output: { results: "{{E1.results}}" }
`

// TestDebugThreads lists the live threads of a map while one item is held
// and the other runs, refuses to switch to the running one, then switches
// to it once it is held, and decides at its stop.
func TestDebugThreads(t *testing.T) {
	debugProject(t, map[string]string{"plans/pair.yaml": pairPlan})
	c := startDebug(t, "pair", "--continue", "--break", "E1/do.1 result")
	st := c.until(func(l map[string]any) bool { return l["reason"] != nil })
	if stop := st["stop"].(map[string]any); stop["path"] != "E1/do.1" || stop["thread"] != "E1/do.1" {
		t.Fatalf("stopped at %v", st)
	}
	threads := func() string {
		var list []string
		for _, th := range c.ask("threads")["threads"].([]any) {
			m := th.(map[string]any)
			state := "running"
			if m["held"] == true {
				state = "held"
			}
			if m["stopped"] == true {
				state += "*"
			}
			list = append(list, m["id"].(string)+" "+state+" "+m["path"].(string))
		}
		// Threads come in the order they started, and the two items start
		// at once, in either order.
		slices.Sort(list)
		return strings.Join(list, ", ")
	}
	// Item 0 naps three seconds: it is past its step stop before item 1
	// has napped its one, and runs while item 1 is held.
	if got := threads(); got != "E1/do.0 running E1/do.0, E1/do.1 held* E1/do.1, main running E1" {
		t.Errorf("threads: %s", got)
	}
	if a := c.ask("thread E1/do.0"); !strings.Contains(a["error"].(string), "thread E1/do.0 is running, not held at a stop; the held threads are E1/do.1") {
		t.Errorf("thread of a running one answered %v", a)
	}
	if a := c.ask("thread E9/do.0"); !strings.Contains(a["error"].(string), "no thread of the run is named E9/do.0") {
		t.Errorf("thread of an unknown one answered %v", a)
	}
	// Once its nap is over, item 0 is held at its result stop too.
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(threads(), "E1/do.0 held"); {
		if time.Now().After(deadline) {
			t.Fatal("item 0 was never held")
		}
		time.Sleep(50 * time.Millisecond)
	}
	st = c.ask("thread E1/do.0")
	if stop := st["stop"].(map[string]any); st["reason"] != "thread" || stop["path"] != "E1/do.0" || stop["kind"] != "result" {
		t.Fatalf("thread answered %v", st)
	}
	// The next decision acts on the chosen thread; item 1 goes on from
	// its stop.
	if st := c.ask(`replace {"slept": 99}`); st["stop"].(map[string]any)["path"] != "E1" {
		t.Errorf("replace went to %v", st)
	}
	c.send("continue")
	out, errOut, code := c.end()
	lines := jsonLines(t, out)
	if b, _ := json.Marshal(lines[len(lines)-1]["output"]); code != 0 || string(b) != `{"results":[{"slept":99},{"slept":1}]}` {
		t.Errorf("exit %d, output %s\n%s", code, b, errOut)
	}
}

const followPlan = `
identifier: follow
name: Follow
description: Two items of two steps each, the first item slower.
steps:
  - id: E1
    tool_name: map
    input:
      over: [1, 0]
      concurrency: 2
      do:
        - id: A
          tool_name: user__nap
          input: { seconds: "{{item}}" }
        - id: B
          tool_name: builtin__reshape
          input: { shape: { n: "{{A.slept}}" } }
  - id: E2
    tool_name: builtin__reshape
    input: { shape: { count: "{{E1.count}}" } }
output: { count: "{{E2.count}}" }
`

// TestDebugNextKeepsItsThread: next from an item's step stays in that item
// while it lives, though the other item passes its stops meanwhile, and
// lands on the map's result once the item has ended.
func TestDebugNextKeepsItsThread(t *testing.T) {
	debugProject(t, map[string]string{"plans/follow.yaml": followPlan})
	out, errOut, code := debugTurns(t, []string{"next", "next", "next", "next", "next", "continue"}, "follow", "--continue", "--break", "E1/do.0/A step")
	want := "breakpoint, stop step E1/do.0/A (breakpoint 1 (E1/do.0/A)), stop result E1/do.0/A (next), stop step E1/do.0/B (next), " +
		"stop result E1/do.0/B (next), stop result E1 (next), stop step E2 (next), end ok"
	if got := strings.Join(stopsOf(t, out), ", "); got != want || code != 0 {
		t.Errorf("exit %d, stops\n got %s\nwant %s\n%s", code, got, want, errOut)
	}
}

const nestPlan = `
identifier: nest
name: Nest
description: An agent in a map item.
steps:
  - id: E1
    tool_name: map
    input:
      over: [x]
      do:
        - id: G
          tool_name: agent
          input:
            prompt: "count {{item}}"
            tools: ["builtin__reshape"]
            output_schema: { type: object, required: [n], properties: { n: { type: integer } } }
  - id: E2
    tool_name: builtin__reshape
    input: { shape: { n: "{{E1.results.0.output.n}}" } }
output: { n: "{{E2.n}}" }
`

const nestReplies = `
replies:
  - match: E1/do.0/G
    reply: { tool_calls: [ { name: builtin__reshape, arguments: { shape: { a: 1 } } } ] }
  - match: E1/do.0/G
    reply: { json: { n: 5 } }
`

// TestDebugOutAtEveryDepth steps out from a tool call to its round's
// parents, one level a time: the next round (a round has no stop after
// its calls), the agent step's result, the map's result (out of the
// item); then, at the top level, where nothing is shallower, to the next
// stop at that depth: the next step's, and its result.
func TestDebugOutAtEveryDepth(t *testing.T) {
	debugProject(t, map[string]string{"plans/nest.yaml": nestPlan, "replies.yaml": nestReplies})
	out, errOut, code := debugTurns(t, []string{"out", "out", "out", "out", "out", "out"}, "nest", "--continue", "--break", "E1/do.0/G/agent.1/builtin__reshape tool")
	want := "breakpoint, stop tool E1/do.0/G/agent.1/builtin__reshape (breakpoint 1 (E1/do.0/G/agent.1/builtin__reshape)), " +
		"stop round E1/do.0/G/agent.2 (step out), stop result E1/do.0/G (step out), stop result E1 (step out), " +
		"stop step E2 (step out), stop result E2 (step out), end ok"
	if got := strings.Join(stopsOf(t, out), ", "); got != want || code != 0 {
		t.Errorf("exit %d, stops\n got %s\nwant %s\n%s", code, got, want, errOut)
	}
}

// TestDebugUntil runs to a path, and forgets the path when the run stops
// elsewhere first.
func TestDebugUntil(t *testing.T) {
	debugProject(t, map[string]string{})
	out, _, _ := debugTurns(t, []string{"until E1/do.*/A", "until E2", "continue"}, "loop")
	want := "stop step E1 (entry), stop step E1/do.0/A (until), stop step E2 (until), end ok"
	if got := strings.Join(stopsOf(t, out), ", "); got != want {
		t.Errorf("stops\n got %s\nwant %s", got, want)
	}
	out, _, _ = debugTurns(t, []string{"break E1/do.1/A step", "until E2", "continue"}, "loop")
	want = "stop step E1 (entry), breakpoint, stop step E1/do.1/A (breakpoint 1 (E1/do.1/A)), end ok"
	if got := strings.Join(stopsOf(t, out), ", "); got != want {
		t.Errorf("until forgotten at another stop\n got %s\nwant %s", got, want)
	}
	// The breakpoint is kept: it is said first.
	out, _, _ = debugTurns(t, []string{"until E1//A", "abort"}, "loop")
	if got := strings.Join(stopsOf(t, out), ", "); got != "breakpoint, stop step E1 (entry), error, end aborted" || !strings.Contains(out, "segment 2 is empty") {
		t.Errorf("a bad pattern: %s", got)
	}
	// A pattern no stop can be at is warned of as break warns of one,
	// and the run goes on; one that can be is not. (The breakpoint kept
	// above is cleared first.)
	const warning = "no path of the plan matches nomatch/**, so it never stops; the nearest that would: **"
	_, errOut, _ := debugCLI(t, "clear 1\nuntil E2\nuntil nomatch/**\n", "loop")
	if !strings.Contains(errOut, "stopped at E2 (step) by until\n") || !strings.Contains(errOut, "\nwarning: "+warning+"\nrun finished: ok\n") || strings.Count(errOut, "warning:") != 1 {
		t.Errorf("until of a pattern no stop is at:\n%s", errOut)
	}
	out, _, _ = debugCLI(t, "until nomatch/**\n", "loop", "--json")
	if lines := jsonLines(t, out); len(lines) < 3 || lines[1]["until"] != "nomatch/**" || lines[1]["warning"] != warning || lines[2]["status"] != "ok" {
		t.Errorf("until of a pattern no stop is at, --json:\n%s", out)
	}
}

// TestDebugOneErrorStop: a failing call stops once, at its error stop,
// though a result breakpoint matches it, and replace there mends it.
func TestDebugOneErrorStop(t *testing.T) {
	debugProject(t, map[string]string{"plans/failing.yaml": failingPlan})
	// The breakpoint set by the first session is kept for the second.
	for i, errors := range []string{"on", "off"} {
		args := []string{"failing"}
		if i == 0 {
			args = append(args, "--break", "F1 result")
		}
		out, errOut, code := debugTurns(t, []string{"errors " + errors, "continue", `replace {"text": "mended"}`, "continue"}, args...)
		want := "breakpoint, stop step F0 (entry), stop error F1 (breakpoint 1 (F1)), stop step F2 (next), end ok"
		if got := strings.Join(stopsOf(t, out), ", "); got != want || code != 0 {
			t.Errorf("errors %s: exit %d, stops\n got %s\nwant %s\n%s", errors, code, got, want, errOut)
		}
		if !strings.Contains(out, `"output":{"got":"mended"}`) {
			t.Errorf("errors %s: the replaced failure is not what F2 read:\n%s", errors, out)
		}
	}
}

const controlPlan = `
identifier: control
name: Control
description: One of each control step, then a step that reads them.
steps:
  - id: E0
    tool_name: builtin__reshape
    input: { shape: { items: [1, 2, 3] } }
  - id: D
    tool_name: decide
    input:
      if: { value: "{{E0.items}}", op: not_empty }
      then: { tool_name: builtin__reshape, input: { shape: { went: then } } }
  - id: M
    tool_name: map
    input: { over: "{{E0.items}}", do: { tool_name: builtin__reshape, input: { shape: { v: "{{item}}" } } } }
  - id: F
    tool_name: filter
    input: { over: "{{E0.items}}", where: { value: "{{item}}", op: gt, to: 1 } }
  - id: R
    tool_name: reduce
    input: { over: "{{E0.items}}", initial: { sum: 0 }, do: { tool_name: builtin__reshape, input: { shape: { sum: "{{item}}" } } } }
  - id: X
    tool_name: exit
    input: { when: { value: "{{E0.items}}", op: empty }, status: error, message: never }
  - id: Q
    tool_name: ask
    input:
      prompt: "Ship it?"
      output_schema: { type: object, required: [ship], properties: { ship: { type: boolean } } }
  - id: G
    tool_name: agent
    input:
      prompt: "count"
      output_schema: { type: object, required: [n], properties: { n: { type: integer } } }
  - id: E9
    tool_name: builtin__reshape
    input: { shape: { m: "{{M.count}}", g: "{{G.output.n}}" } }
output: { m: "{{E9.m}}", g: "{{E9.g}}" }
`

// TestDebugControlResultStops sets a result breakpoint on each control
// step: each stops after its step with the step's value, and replace at
// the map's result is what the steps after it read.
func TestDebugControlResultStops(t *testing.T) {
	debugProject(t, map[string]string{"plans/control.yaml": controlPlan,
		"replies.yaml": "replies:\n  - match: G\n    reply: { json: { n: 7 } }\n"})
	args := []string{"control", "--continue"}
	for _, id := range []string{"D", "M", "F", "R", "X", "Q", "G"} {
		args = append(args, "--break", id+" result")
	}
	script := []string{"continue", `replace {"count": 42, "results": []}`, "continue", "continue", "continue", "continue",
		`answer {"ship": true}`, "continue", "continue"}
	out, errOut, code := debugTurns(t, script, args...)
	stops := stopsOf(t, out)
	want := "stop result D (breakpoint 1 (D)), stop result M (breakpoint 2 (M)), stop step F (next), stop result F (breakpoint 3 (F)), " +
		"stop result R (breakpoint 4 (R)), stop result X (breakpoint 5 (X)), stop ask Q (ask), stop result Q (breakpoint 6 (Q)), " +
		"stop result G (breakpoint 7 (G)), end ok"
	if got := strings.Join(stops[7:], ", "); got != want || code != 0 {
		t.Errorf("exit %d, stops\n got %s\nwant %s\n%s", code, got, want, errOut)
	}
	// Each result stop shows its step's value.
	values := map[string]string{}
	for _, l := range jsonLines(t, out) {
		if stop, ok := l["stop"].(map[string]any); ok && stop["kind"] == "result" {
			b, _ := json.Marshal(stop["output"])
			values[stop["path"].(string)] = string(b)
		}
	}
	for path, want := range map[string]string{
		"M": `{"count":3,"results":[{"v":1},{"v":2},{"v":3}]}`,
		"F": `{"count":2,"dropped":[1],"dropped_count":1,"items":[2,3]}`,
		"R": `{"count":3,"result":{"sum":3}}`,
		"Q": `{"answer":{"ship":true},"answered":true}`,
	} {
		if values[path] != want {
			t.Errorf("%s's result stop shows %s, want %s", path, values[path], want)
		}
	}
	if !strings.Contains(values["G"], `"output":{"n":7}`) || !strings.Contains(values["D"], "then") || values["X"] == "" {
		t.Errorf("result stops show %v", values)
	}
	// The map's result, replaced, is what E9 read.
	lines := jsonLines(t, out)
	if b, _ := json.Marshal(lines[len(lines)-1]["output"]); string(b) != `{"g":7,"m":42}` {
		t.Errorf("output %s", b)
	}
}

// TestDebugWatch pins paths read at every stop: a value, one that cannot
// be read at this stop, and one removed.
func TestDebugWatch(t *testing.T) {
	debugProject(t, map[string]string{})
	c := startDebug(t, "loop", "--break", "E1/do.*/A step")
	c.until(func(l map[string]any) bool { return l["reason"] != nil })
	watch := func(line string) map[string]any {
		t.Helper()
		a := c.ask(line)
		w, ok := a["watch"].(map[string]any)
		if !ok {
			t.Fatalf("%s answered %v", line, a)
		}
		return w
	}
	if w := watch("watch item"); w["id"] != 1.0 || w["path"] != "item" || w["error"] == nil {
		t.Errorf("watch item at E1's step: %v", w)
	}
	if w := watch("watch stop.path"); w["id"] != 2.0 || w["value"] != "E1" {
		t.Errorf("watch stop.path: %v", w)
	}
	watch("watch {{E0.nothing}}")
	if a := c.ask("watch item."); a["error"] == nil {
		t.Errorf("a bad path answered %v", a)
	}
	if a := c.ask("unwatch 3"); a["ok"] != true {
		t.Errorf("unwatch answered %v", a)
	}
	if a := c.ask("unwatch 9"); !strings.Contains(a["error"].(string), "there is no watch 9; the watches are 1, 2") {
		t.Errorf("unwatch of none answered %v", a)
	}
	st := c.ask("continue")
	b, _ := json.Marshal(st["watches"])
	if string(b) != `[{"id":1,"path":"item","value":"a"},{"id":2,"path":"stop.path","value":"E1/do.0/A"}]` {
		t.Errorf("the watches at E1/do.0/A: %s", b)
	}
	st = c.ask("continue")
	if b, _ := json.Marshal(st["watches"]); !strings.Contains(string(b), `"value":"b"`) {
		t.Errorf("the watches at the next stop: %s", b)
	}
	if b, _ := json.Marshal(c.ask("watches")); string(b) != `{"watches":[{"id":1,"path":"item","value":"b"},{"id":2,"path":"stop.path","value":"E1/do.1/A"}]}` {
		t.Errorf("watches: %s", b)
	}
	c.ask("abort")
	c.end()

	// In text, each stop lists its watches.
	_, errOut, _ := debugCLI(t, "watch item\ncontinue\nabort\n", "loop")
	if !strings.Contains(errOut, "  watch 1  item = \"a\"") {
		t.Errorf("text mode:\n%s", errOut)
	}
}

// TestDebugSaysTheAnswer: a solver plan's answer is said on stdout at the
// end of a text session, as an output plan's output is, and the --json
// end carries the run's id.
func TestDebugSaysTheAnswer(t *testing.T) {
	demoProject(t)
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"debug", "triage_queue", `{"on_call":"Priya"}`, "--continue"}, strings.NewReader("decline\ncontinue\n"), &out, &errOut)
	if code != 0 || !strings.HasPrefix(out.String(), "Morning. One live incident") {
		t.Errorf("exit %d, stdout %q\n%s", code, out.String(), errOut.String())
	}
	c := startDebug(t, "issue_timeline", `{"id":"CHK-107"}`, "--continue")
	end := c.until(func(l map[string]any) bool { return l["finished"] == true })
	c.end()
	if id, _ := end["run_id"].(string); len(id) < 12 {
		t.Errorf("the end has no run id: %v", end)
	}
}

// TestDebugRefusesMissingInputs: inputs that do not fit the plan's schema
// are refused as stepwise run refuses them: exit 3, the problems and the
// schema to fill in.
func TestDebugRefusesMissingInputs(t *testing.T) {
	demoProject(t)
	_, errOut, code := runCLI(t, "debug", "triage_queue", "{}")
	if code != exitNeedsInput || !strings.Contains(errOut, "missing property 'on_call'") || !strings.Contains(errOut, "input schema:") {
		t.Errorf("exit %d\n%s", code, errOut)
	}
}

// TestReplayOfAReplacedResult: a run in which a person replaced an agent
// step's result at its result stop replays without a divergence: the
// agent runs again over its recorded rounds, and the replay gives its
// result what the person gave.
func TestReplayOfAReplacedResult(t *testing.T) {
	demoProject(t)
	replaced := `{"output": {"severity": "sev2", "component": "checkout", "duplicate_of": "", "summary": "Two."}, "iterations": 1, "tools_called": [], "final": true}`
	c := startDebug(t, "triage_queue", `{"on_call":"Priya"}`, "--continue", "--break", "assess/do.1/verdict result")
	c.until(func(l map[string]any) bool { return l["reason"] != nil })
	for _, line := range []string{"replace " + replaced, "continue", "decline", "continue"} {
		c.send(line)
	}
	end := c.until(func(l map[string]any) bool { return l["finished"] == true })
	c.end()
	id, _ := end["run_id"].(string)
	if end["status"] != "ok" || id == "" {
		t.Fatalf("the debugged run ended %v", end)
	}
	out, errOut, code := runCLI(t, "replay", id)
	if code != 0 || !strings.Contains(out+errOut, "matches its record") {
		t.Errorf("replay: exit %d\n%s%s", code, out, errOut)
	}
	// The list says how each run was made, what it ran with and what a
	// replay is of.
	out, _, _ = runCLI(t, "runs", "--json")
	var listed struct {
		Runs []struct {
			ID     string         `json:"id"`
			Made   string         `json:"made"`
			Parent string         `json:"parent"`
			Inputs map[string]any `json:"inputs"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &listed); err != nil || len(listed.Runs) != 2 {
		t.Fatalf("runs --json: %v\n%s", err, out)
	}
	replay, debugged := listed.Runs[0], listed.Runs[1]
	if replay.Made != "replay" || replay.Parent != id || debugged.Made != "debug" || debugged.Inputs["on_call"] != "Priya" {
		t.Errorf("runs listed %+v", listed.Runs)
	}
}

const trioPlan = `
identifier: trio
name: Trio
description: Three items at once, napping two seconds, two and one.
steps:
  - id: E1
    tool_name: map
    input:
      over: [2, 2, 1]
      concurrency: 3
      do:
        tool_name: user__nap
        input: { seconds: "{{item}}" }
`

// TestDebugAbortNamesItsStop aborts a map at its last item's result stop,
// after its one-second nap, while the other items, which started their
// two-second naps with it, are held at their stops, or still nap and come
// to them later: the run's error, the end state's and the record's (stepwise
// inspect: the run's cause, each item aborted, with an error) name the stop the abort was
// given at, not the item that happened to be first in the map.
func TestDebugAbortNamesItsStop(t *testing.T) {
	const want = "run aborted at E1/do.2"
	for _, tc := range []struct {
		name       string
		othersHeld bool
	}{{"the others held", true}, {"the others running", false}} {
		t.Run(tc.name, func(t *testing.T) {
			debugProject(t, map[string]string{"plans/trio.yaml": trioPlan})
			c := startDebug(t, "trio", "--continue", "--break", "E1/do.2 result")
			st := c.until(func(l map[string]any) bool { return l["reason"] != nil })
			if stop := st["stop"].(map[string]any); stop["path"] != "E1/do.2" {
				t.Fatalf("stopped at %v", st)
			}
			held := func() int {
				n := 0
				for _, th := range c.ask("threads")["threads"].([]any) {
					if m := th.(map[string]any); m["held"] == true && m["id"] != "E1/do.2" {
						n++
					}
				}
				return n
			}
			if !tc.othersHeld && held() != 0 {
				t.Fatal("the other items were held before their naps were over")
			}
			for deadline := time.Now().Add(10 * time.Second); tc.othersHeld && held() < 2; {
				if time.Now().After(deadline) {
					t.Fatal("the other items were never held")
				}
				time.Sleep(50 * time.Millisecond)
			}
			c.send("abort")
			out, errOut, code := c.end()
			lines := jsonLines(t, out)
			end := lines[len(lines)-1]
			if code != exitInterrupted || end["status"] != "aborted" || end["error"] != want || !strings.Contains(errOut, "Error: "+want+"\n") {
				t.Errorf("exit %d, end %v\n%s", code, end, errOut)
			}
			out, errOut, code = runCLI(t, "runs", "--json")
			var listing struct{ Runs []struct{ ID string } }
			if json.Unmarshal([]byte(out), &listing); code != 0 || len(listing.Runs) == 0 {
				t.Fatalf("runs: exit %d: %s", code, errOut)
			}
			out, errOut, code = runCLI(t, "inspect", listing.Runs[0].ID)
			if code != 0 || !strings.Contains(out, "cause    "+want+"\n") {
				t.Errorf("inspect: exit %d\n%s%s", code, out, errOut)
			}
			for _, item := range []string{"E1/do.0", "E1/do.1"} {
				aborted := regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(item) + ` +aborted .*\n(?:      .*\n)*?      error  ` + regexp.QuoteMeta(want) + `\n`)
				if !aborted.MatchString(out) {
					t.Errorf("inspect: %s is not aborted with an error that names E1/do.2:\n%s", item, out)
				}
			}
		})
	}
}

// TestDebugPipedScriptReadsTurnByTurn pipes whole scripts to stepwise
// debug at once: the lines given before the first stop is shown are
// answered at it, the lines after a movement at the stop it comes to, and
// a pause right after continue holds the run continue started at its next
// stop. Off a terminal no prompt is written.
func TestDebugPipedScriptReadsTurnByTurn(t *testing.T) {
	demoProject(t)
	_, errOut, _ := debugCLI(t, "break issue result\nbreak issue error\nwatch input.id\nthreads\nc\nwatches\nbp\nthreads\nq\n", "issue_timeline", `{"id":"NOPE-1"}`)
	want := []string{
		"stopped at issue (step) by entry\n",
		"breakpoint 1 at issue result\n",
		"breakpoint 2 at issue error\n",
		"  watch 1  input.id = \"NOPE-1\"\n",
		"* main  held at step issue\n",
		"stopped at issue (error) by breakpoint 1 (issue)\n",
		"  watch 1  input.id = \"NOPE-1\"\n  watch 1  input.id = \"NOPE-1\"\n",
		"1  issue result  hits 1\n2  issue error  hits 1\n",
		"* main  held at error issue\n",
		"run finished: aborted\n",
	}
	at := 0
	for _, w := range want {
		i := strings.Index(errOut[at:], w)
		if i < 0 {
			t.Fatalf("%q is not where the session was at that turn:\n%s", w, errOut)
		}
		at += i + len(w)
	}
	if strings.Contains(errOut, "(stepwise)") {
		t.Errorf("a prompt was written off a terminal:\n%s", errOut)
	}
	// Every refusal of a command is spelled alike.
	_, errOut, _ = debugCLI(t, "foo\nclear 9\nq\n", "issue_timeline", `{"id":"NOPE-1"}`)
	if !strings.Contains(errOut, "\nerror: unknown command 'foo'") || !strings.Contains(errOut, "\nerror: there is no breakpoint 9") {
		t.Errorf("refusals:\n%s", errOut)
	}

	debugProject(t, map[string]string{"plans/napping.yaml": napPlan})
	out, _, _ := debugCLI(t, "continue\npause\nwhere\nabort\n", "--json", "napping")
	if got := strings.Join(stopsOf(t, out), ", "); got != "stop step slow (entry), stop result slow (pause), stop result slow (pause), end aborted" {
		t.Errorf("continue, then pause: %s", got)
	}
}

// TestDebugHelpSaysLinesWait: debug --help says what the driver does with
// a line that wants a held run while the run goes: it waits for the next
// stop, as the README says.
func TestDebugHelpSaysLinesWait(t *testing.T) {
	out, _, code := runCLI(t, "debug", "--help")
	text := strings.Join(strings.Fields(out), " ")
	if code != 0 || strings.Contains(text, "refused") || !strings.Contains(text, "the others wait for the next stop") ||
		!strings.Contains(text, "ctrl-c pauses a going run") {
		t.Errorf("exit %d\n%s", code, out)
	}
	for _, want := range []string{"SIGTERM and SIGHUP abort it", "written to stderr", "stdout gets only the plan's output",
		"every stop and every answer is one JSON object a line on stdout"} {
		if !strings.Contains(text, want) {
			t.Errorf("debug --help does not say %q", want)
		}
	}
	// Wrapped as the other commands' help is, flags and commands included.
	for _, l := range strings.Split(out, "\n") {
		if utf8.RuneCountInString(l) > helpWidth {
			t.Errorf("a line of %d characters, past %d: %s", utf8.RuneCountInString(l), helpWidth, l)
		}
	}
}

// TestReplayOfEdits replays runs in which a person edited a call's
// arguments: a plain step's at its step stop, and an agent's tool call at
// its tool stop. The replay makes each edit again, with the replay's mark,
// and matches its record; it would otherwise find the plan's own input, or
// the model's arguments, where the record has the edited ones.
func TestReplayOfEdits(t *testing.T) {
	demoProject(t)
	for _, tc := range []struct {
		name, stdin, at string
		args            []string
	}{
		{"a step's input", "edit {\"id\":\"CHK-107\"}\ncontinue\n", "issue  edit at its step stop",
			[]string{"issue_timeline", `{"id":"NOPE-1"}`}},
		{"an agent's tool call", "edit {\"id\":\"CHK-101\"}\nclear 1\ncontinue\ndecline\ncontinue\n", "assess/do.2/verdict/agent.1/tracker__get_issue  edit at its tool stop",
			[]string{"triage_queue", `{"on_call":"Priya"}`, "--continue", "--break", "assess/do.2/verdict/agent.1/tracker__get_issue tool"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut, code := debugCLI(t, tc.stdin, tc.args...)
			if code != 0 {
				t.Fatalf("debug: exit %d\n%s", code, errOut)
			}
			id := sessionRun(t, errOut)
			if out, _, _ := runCLI(t, "inspect", id); !strings.Contains(out, "✎ "+tc.at) {
				t.Fatalf("the debugged run does not record the edit:\n%s", out)
			}
			out, errOut, code := runCLI(t, "replay", id)
			if code != 0 || !strings.Contains(out+errOut, "matches its record") {
				t.Fatalf("replay: exit %d\n%s%s", code, out, errOut)
			}
			out, _, _ = runCLI(t, "runs", "--json")
			var listed struct {
				Runs []struct{ ID string } `json:"runs"`
			}
			if err := json.Unmarshal([]byte(out), &listed); err != nil || len(listed.Runs) == 0 {
				t.Fatalf("runs --json: %v\n%s", err, out)
			}
			if out, _, _ := runCLI(t, "inspect", listed.Runs[0].ID); !strings.Contains(out, "↺ "+tc.at) {
				t.Errorf("the replay does not say it made the edit again:\n%s", out)
			}
		})
	}
}

// TestDebugStopLinesFit checks that the lines of a stop in text fit the
// width of the terminal they go to, 80 columns off one, and that a step's
// stop does not show its tool's example output as what it expects.
func TestDebugStopLinesFit(t *testing.T) {
	demoProject(t)
	_, errOut, _ := debugCLI(t, "watch item\nwhere\nquit\n", "triage_queue", `{"on_call": "Priya"}`, "--break", "assess/do.2/verdict step", "--continue")
	if !strings.Contains(errOut, "  input   {") || !strings.Contains(errOut, "  read by ") || !strings.Contains(errOut, "  watch 1  item = {") {
		t.Fatalf("no input, read by or watch line at the stop:\n%s", errOut)
	}
	for _, l := range strings.Split(errOut, "\n") {
		if strings.HasPrefix(l, "  ") && utf8.RuneCountInString(l) > helpWidth {
			t.Errorf("a stop line of %d characters, past %d: %s", utf8.RuneCountInString(l), helpWidth, l)
		}
	}
	_, errOut, _ = debugCLI(t, "quit\n", "post_triage_notes", `{"findings": []}`, "--break", "stamp step", "--continue")
	if !strings.Contains(errOut, "stopped at stamp (step)") || strings.Contains(errOut, "expects") {
		t.Errorf("the stamp step's stop shows the tool's example as expected:\n%s", errOut)
	}
}

// TestHelpWrapped checks that every command's --help is wrapped at
// helpWidth, its description and its flags, as debug's is: a flag's words
// ran to 206 characters on one line, and descriptions wrapped at 93 broke
// mid-word in an 80-column terminal.
func TestHelpWrapped(t *testing.T) {
	var paths [][]string
	var walk func(cmd *cobra.Command, path []string)
	walk = func(cmd *cobra.Command, path []string) {
		if !cmd.Hidden {
			paths = append(paths, path)
		}
		for _, sub := range cmd.Commands() {
			walk(sub, append(slices.Clip(path), sub.Name()))
		}
	}
	walk(newRootCommand(&streams{}), nil)
	for _, path := range paths {
		var out, errOut bytes.Buffer
		if code := run(context.Background(), append(path, "--help"), strings.NewReader(""), &out, &errOut); code != 0 {
			t.Fatalf("%v --help: exit %d\n%s", path, code, errOut.String())
		}
		description, flags, _ := strings.Cut(out.String(), "Flags:\n")
		description, _, _ = strings.Cut(description, "Usage:\n")
		for _, l := range strings.Split(description+flags, "\n") {
			if utf8.RuneCountInString(l) > helpWidth {
				t.Errorf("stepwise %s --help: a line of %d characters, past %d: %s", strings.Join(path, " "), utf8.RuneCountInString(l), helpWidth, l)
			}
		}
	}
}
