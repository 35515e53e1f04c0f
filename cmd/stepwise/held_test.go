package main

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stepwise-dev/stepwise/debugger/workspace"
	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/tui/format"
	"github.com/stepwise-dev/stepwise/tui/live"
)

// TestDebugHeldToolCall holds an agent round's tool call at its tool stop
// through stepwise debug, the driver's next command written only after a
// measured wait: inspect (text and --json) shows the call's wall time with
// the hold in it, and its step's, never more held than wall; and the
// workbench's tree of the same run read back from the store shows every
// step and call with the figures inspect shows, and the round around the
// call held as long as the call.
func TestDebugHeldToolCall(t *testing.T) {
	marksProject(t)
	const hold = 300 * time.Millisecond
	c := startDebug(t, "probe", "--continue", "--break", "E2/agent.1/* tool")
	at := c.until(func(l map[string]any) bool { return l["reason"] != nil })
	if stop, _ := at["stop"].(map[string]any); stop == nil || !strings.HasPrefix(stop["path"].(string), "E2/agent.1/") {
		t.Fatalf("the first stop is %v, want the round's tool call", at)
	}
	time.Sleep(hold)
	c.send("continue")
	out, errOut, code := c.end()
	if code != 0 {
		t.Fatalf("debug: exit %d\n%s\n%s", code, out, errOut)
	}
	id := sessionRun(t, errOut)
	env := inspectJSONOf(t, id)
	floor := float64(hold.Milliseconds()) * 0.9
	var call toolCallJSON
	for _, c := range env.ToolCalls {
		if strings.HasPrefix(c.Path, "E2/agent.1/") {
			call = c
		}
		if c.HeldMs > c.Ms {
			t.Errorf("tool call %s took %.3fms, %.3fms of it held", c.Path, c.Ms, c.HeldMs)
		}
	}
	if call.HeldMs < floor {
		t.Fatalf("the held call %+v shows %.1fms held, want %v", call, call.HeldMs, hold)
	}
	for _, s := range env.StepList {
		if s.HeldMs > s.Ms {
			t.Errorf("step %s took %.3fms, %.3fms of it held", s.Path, s.Ms, s.HeldMs)
		}
	}
	if e2 := stepOf(t, env, "E2"); e2.HeldMs < call.HeldMs || e2.Ms < call.Ms {
		t.Errorf("E2 took %.1fms, %.1fms held; its call %.1fms, %.1fms held", e2.Ms, e2.HeldMs, call.Ms, call.HeldMs)
	}
	text := runOut(t, "inspect", id)
	line := regexp.QuoteMeta(call.Path) + ` .*` + regexp.QuoteMeta(format.Millis(call.Ms)+"  ("+format.Millis(call.HeldMs)+" of it held)")
	if !regexp.MustCompile(line).MatchString(text) {
		t.Errorf("inspect does not show the call as --json does (%s):\n%s", line, text)
	}

	ws, err := workspace.Open("", workspace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	_, events, err := ws.RunEvents(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	tree := live.New((*plans.Plan)(nil))
	for _, e := range events {
		tree.Apply(e)
	}
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	rows := map[string]live.Row{}
	for _, r := range tree.Rows(0, tree.Len()) {
		rows[r.Path] = r
		if r.Held > r.Duration {
			t.Errorf("row %s: %v, %v of it held", r.Path, r.Duration, r.Held)
		}
	}
	for _, s := range env.StepList {
		if r := rows[s.Path]; format.HeldTime(r.Duration, r.Held) != format.HeldTime(ms(s.Ms), ms(s.HeldMs)) {
			t.Errorf("step %s: the tree says %s, inspect %s", s.Path, format.HeldTime(r.Duration, r.Held), format.HeldTime(ms(s.Ms), ms(s.HeldMs)))
		}
	}
	if r := rows[call.Path]; format.HeldTime(r.Duration, r.Held) != format.HeldTime(ms(call.Ms), ms(call.HeldMs)) {
		t.Errorf("call %s: the tree says %s, inspect %s", call.Path, format.HeldTime(r.Duration, r.Held), format.HeldTime(ms(call.Ms), ms(call.HeldMs)))
	}
	if round := rows["E2/agent.1"]; round.Held < ms(call.HeldMs) || round.Held > round.Duration {
		t.Errorf("the round around the held call: %v, %v of it held; the call %.1fms held", round.Duration, round.Held, call.HeldMs)
	}
}
