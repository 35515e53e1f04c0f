package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/tui/common"
)

var (
	overlayApproval overlay = func(p *panels) common.Component { return &p.approval }

	keyApprove  = tea.KeyPressMsg{Code: 'a', Text: "a"}
	keyDeny     = tea.KeyPressMsg{Code: 'd', Text: "d"}
	keyEditArgs = tea.KeyPressMsg{Code: 'e', Text: "e"}
)

// TestGatedRun gates a plain run with :gate: the flow plan's map calls
// user__lookup, which is not read-only, once per item, and its other steps
// call read-only builtins. Each lookup is held with the approval prompt,
// which approves one, edits the arguments of the next (an edit that does
// not fit the input schema is refused first) and denies the last, which
// fails the run.
func TestGatedRun(t *testing.T) {
	b := newBench(t, 120, 40)
	b.press(command("gate **/user__lookup")...)
	wantNotice(t, b, "the next runs hold the calls of **/user__lookup for approval, read-only tools excepted")
	b.runToEnd(docFlow)

	wantOverlay(t, b, overlayApproval)
	wantScreen(t, b, "approve this tool call?", "run user__lookup at E1/do.0 with:", `"name": "a"`, "a approve the held call · d deny it · e edit its arguments")
	if st := b.m.runPage.run.state; !st.Stop.Approval || st.Reason != "approval" || st.Stop.Kind != engine.StopStep {
		t.Fatalf("held at %s (%s) for %q, approval %v", st.Stop.Path, st.Stop.Kind, st.Reason, st.Stop.Approval)
	}
	b.press(keyApprove)

	wantOverlay(t, b, overlayApproval)
	wantScreen(t, b, "run user__lookup at E1/do.1 with:")
	b.press(keyEditArgs)
	wantOverlay(t, b, overlayEditor)
	wantScreen(t, b, "edit the arguments of user__lookup at E1/do.1", "it runs with them", `"name": "b"`)
	b.press(replaceText(`{"name": 5}`)...)
	b.press(keySubmit)
	wantScreen(t, b, "fix the problems above first", "/name")
	b.press(replaceText(`{"name": "zed"}`)...)
	b.press(keySubmit)

	wantOverlay(t, b, overlayApproval)
	wantScreen(t, b, "run user__lookup at E1/do.2 with:")
	b.press(keyDeny)
	wantEnded(t, b, "failed")
	if st := b.m.runPage.run.state; !strings.Contains(st.Error, "denied by the user") {
		t.Errorf("the run failed with %q, not the denial", st.Error)
	}
	jsonEqual(t, node(t, b, "E1/do.0").Result, `{"name": "a", "count": 1}`)
	jsonEqual(t, node(t, b, "E1/do.1").Result, `{"name": "zed", "count": 1}`)

	// gate off: the next run holds nothing.
	b.press(command("gate off")...)
	wantNotice(t, b, "the next runs hold no tool call for approval")
	b.runToEnd(docFlow)
	wantEnded(t, b, "ok")
}

// TestApprovalPromptComesBack: esc leaves a gated call held with the
// prompt closed; moving on does not approve it without a word but opens
// the prompt again, and abort asks for a second press.
func TestApprovalPromptComesBack(t *testing.T) {
	b := newBench(t, 120, 40)
	b.press(command("gate **/user__lookup")...)
	b.runToEnd(docFlow)
	wantOverlay(t, b, overlayApproval)
	b.press(keyEsc)
	wantOverlay(t, b, overlayNone)
	b.press(keyNext)
	wantOverlay(t, b, overlayApproval)
	wantScreen(t, b, "run user__lookup at E1/do.0 with:")
	b.press(keyEsc, keyAbort)
	wantNotice(t, b, "a again aborts the run")
	if st := b.m.runPage.run.state; st.Finished || st.Stop.Path != "E1/do.0" {
		t.Fatalf("one a ended the run or moved it: %+v", st)
	}
	b.press(keyContinue)
	wantOverlay(t, b, overlayApproval)
	b.press(keyApprove)
	wantOverlay(t, b, overlayApproval)
	wantScreen(t, b, "run user__lookup at E1/do.1 with:")
}

// TestGateUnheld: :gate says, on the status line, a pattern that can hold
// no call of the current plan: one no call's path matches, with the
// nearest that would hold one, and one whose every call is of a read-only
// tool. The gate is set all the same, and its other patterns hold.
func TestGateUnheld(t *testing.T) {
	b := newBench(t, 120, 40)
	b.press(command("gate **/builtin__reshape")...)
	wantNotice(t, b, "gate **/builtin__reshape: every tool call of the plan at a path it matches is of a read-only tool (builtin__reshape), and read-only tools are never held, so it holds none")
	b.press(command("gate **/user__lokup **/user__lookup")...)
	wantNotice(t, b, "gate **/user__lokup: no tool call of the plan is at a path it matches, so it holds none; the nearest that would: **/user__lookup")
	wantScreen(t, b, "gate **/user__lokup: no tool call of the plan")
	b.runToEnd(docFlow)
	wantOverlay(t, b, overlayApproval)
	wantScreen(t, b, "run user__lookup at E1/do.0 with:")
}

// TestApproveInDebugRun: in a debug run, a at the approval prompt lets
// the call run and continues, as :approve does (the next stop is the next
// call held), and d denies it and continues likewise (to the error stop
// of the step it failed).
func TestApproveInDebugRun(t *testing.T) {
	b := newBench(t, 120, 40)
	b.press(command("gate **/user__lookup")...)
	b.debugTo(docFlow, "")
	wantHeld(t, b, "E0", engine.StopStep, "entry")
	b.press(keyContinue)
	wantOverlay(t, b, overlayApproval)
	wantScreen(t, b, "run user__lookup at E1/do.0 with:")
	b.press(keyApprove)
	wantOverlay(t, b, overlayApproval)
	wantScreen(t, b, "run user__lookup at E1/do.1 with:")
	jsonEqual(t, node(t, b, "E1/do.0").Result, `{"name": "a", "count": 1}`)
	// Denied, the step fails: the run breaks on the error.
	b.press(keyDeny)
	wantHeld(t, b, "E1/do.1", engine.StopError, "error")
}
