package tui

import (
	"context"
	"io"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/stepwise-dev/stepwise/tui/inspector"
)

// The run screens are pinned the way TestScreens pins the plan's: the
// workbench runs as a program under teatest, over a real project, and the
// screen is taken from the model with ANSI stripped. A run goes on in the
// background, so the test waits for the state it pins rather than for the
// program to end: a probe wrapped round the model checks a condition
// after every message and hands over the screen the first time it holds.
//
// What a screen shows of time comes from the times of the run's events
// (the model's clock is fixed, earlier than any event, so its ticks move
// nothing); those durations are normalised before comparing, as are the
// ids and start times of recorded runs.

// probe is the workbench model with a condition to watch for.
type probe struct {
	model
	s *probeState
}

type probeState struct {
	mu      sync.Mutex
	cond    func(m model, applied int64) bool
	screen  chan string
	applied int64 // events handed to trees; the program's goroutine only
	last    *run  // the run on show
	runs    int   // how many runs have been on show
}

func (p probe) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if b, ok := msg.(batchMsg); ok {
		p.s.applied += int64(len(b.batch.Events))
	}
	next, cmd := p.model.Update(msg)
	p.model = next.(model)
	if p.model.runPage.run != p.s.last {
		p.s.last = p.model.runPage.run
		p.s.runs++
	}
	p.s.mu.Lock()
	if p.s.cond != nil && p.s.cond(p.model, p.s.applied) {
		p.s.cond = nil
		p.s.screen <- ansi.Strip(p.model.render())
	}
	p.s.mu.Unlock()
	return p, cmd
}

// screenRun is one program under test.
type screenRun struct {
	t  *testing.T
	p  *testProject
	tm *teatest.TestModel
	s  *probeState
}

func startScreens(t *testing.T, w, h int) *screenRun {
	t.Helper()
	p := newTestProject(t)
	m := newModel(context.Background(), Options{Title: "test project", Documents: p.docs, Workspace: p.ws}, false)
	m.runPage.now = func() time.Time { return fixedNow }
	s := &probeState{screen: make(chan string, 1)}
	tm := teatest.NewTestModel(t, probe{m, s},
		teatest.WithInitialTermSize(w, h),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)),
	)
	return &screenRun{t: t, p: p, tm: tm, s: s}
}

// await sends msgs and waits until cond holds, returning the screen then.
func (r *screenRun) await(why string, cond func(m model) bool, msgs ...tea.Msg) string {
	r.t.Helper()
	r.s.mu.Lock()
	r.s.cond = func(m model, applied int64) bool {
		// Nothing a run emitted is still on its way to a tree.
		return applied == r.p.emitted.n.Load() && cond(m)
	}
	r.s.mu.Unlock()
	for _, msg := range flatten(msgs) {
		r.tm.Send(msg)
	}
	select {
	case screen := <-r.s.screen:
		return screen
	case <-time.After(15 * time.Second):
		r.tm.Send(keyCtrlC)
		r.tm.Send(keyCtrlC)
		final := r.tm.FinalModel(r.t, teatest.WithFinalTimeout(10*time.Second)).(probe)
		r.t.Fatalf("timed out waiting for %s; %d of %d events applied; the screen:\n%s", why, r.s.applied, r.p.emitted.n.Load(), ansi.Strip(final.render()))
		return ""
	}
}

// quit ends the program: ctrl+c twice, as a run may still be going.
func (r *screenRun) quit() {
	r.t.Helper()
	r.tm.Send(keyCtrlC)
	r.tm.Send(keyCtrlC)
	r.tm.FinalModel(r.t, teatest.WithFinalTimeout(10*time.Second))
	_, _ = io.ReadAll(r.tm.FinalOutput(r.t))
}

// The states the screens are taken in.

func ended(m model) bool {
	return m.runPage.run != nil && m.runPage.run.state.Finished && !m.runPage.run.busy && m.runPage.run.tree.Totals().RunStatus != ""
}

func heldAt(path string) func(m model) bool {
	return func(m model) bool { return m.runPage.run.held() && m.runPage.run.state.Stop.Path == path }
}

func overlayOpen(o overlay) func(m model) bool {
	return func(m model) bool { return overlayIs(m, o) }
}

func breakpointsSet(n int) func(m model) bool {
	return func(m model) bool { return len(m.panels.breakpoints.Breakpoints()) == n }
}

// breakAt sets a breakpoint at the command line and waits until it is
// set: the line is carried out through a command, so a key sent at once
// after it may be handled first (see TestKeyAfterCommandLine).
func (r *screenRun) breakAt(spec string, n int) {
	r.t.Helper()
	r.await("breakpoint "+spec, breakpointsSet(n), command("break "+spec))
}

func TestRunScreens(t *testing.T) {
	cases := []struct {
		name string
		w, h int
		// pin drives the program to the state to pin and returns its
		// screen, normalised.
		pin func(r *screenRun) string
	}{
		{"finished_160x48", 160, 48, func(r *screenRun) string {
			return normalise(r.await("the run to end", ended, keyRun, keySubmit))
		}},
		{"finished_80x24", 80, 24, func(r *screenRun) string {
			return normalise(r.await("the run to end", ended, keyRun, keySubmit))
		}},
		{"finished_agent_selected_120x40", 120, 40, func(r *screenRun) string {
			r.await("the run to end", ended, keyRun, keySubmit)
			return normalise(r.await("E2 selected", func(m model) bool { return m.runPage.selectedPath() == "E2/agent.2/repair" }, seq(keyHome, repeat(keyDown, 9))))
		}},
		{"held_stop_tab_120x40", 120, 40, func(r *screenRun) string {
			r.breakAt("E1/do.1", 1)
			r.await("the run to be held", heldAt("E1/do.1"), keyDebug, keySubmit)
			return untimedTitle(normalise(r.await("the Stop tab", func(m model) bool {
				return m.runPage.inspector.Tab() == inspector.TabStop && m.page.focused() == paneDetail
			}, keyTab, repeat(keyNextTab, int(inspector.TabStop)+1))))
		}},
		{"inject_editor_120x40", 120, 40, func(r *screenRun) string {
			r.breakAt("E1/do.0", 1)
			r.await("the run to be held", heldAt("E1/do.0"), keyDebug, keySubmit)
			return normalise(r.await("the editor", func(m model) bool {
				return overlayIs(m, overlayEditor) && m.panels.editor.Text() == `{"name": 5}`
			}, keySkip, replaceText(`{"name": 5}`)))
		}},
		{"ask_waits_80x24", 80, 24, func(r *screenRun) string {
			return normalise(r.await("the question to wait", func(m model) bool { return m.runPage.run.held() }, keyNextPlan, keyNextPlan, keyNextPlan, keyRun))
		}},
		{"answer_editor_100x30", 100, 30, func(r *screenRun) string {
			r.await("the question to wait", func(m model) bool { return m.runPage.run.held() }, keyNextPlan, keyNextPlan, keyNextPlan, keyRun)
			return normalise(r.await("the answer editor", overlayOpen(overlayEditor), keySkip))
		}},
		{"breakpoints_panel_120x30", 120, 30, func(r *screenRun) string {
			r.breakAt("E1/do.* step if {{item}} eq b", 1)
			r.breakAt("E2 round repair", 2)
			r.await("a breakpoint on E0", breakpointsSet(3), keyDown, keyBreak)
			r.await("breakpoint 2 off", func(m model) bool { return !m.panels.breakpoints.Breakpoints()[1].Enabled }, command("disable 2"))
			return normalise(r.await("the panel", func(m model) bool {
				return overlayIs(m, overlayBreakpoints) && !m.breakpoints(docFlow).BreaksOnError()
			}, keyBreakErr, keyBreakPanel))
		}},
		{"runs_panel_120x30", 120, 30, func(r *screenRun) string {
			r.await("a run to end", ended, keyNextPlan, keyRun)
			r.p.waitRecorded(r.t, "simple", 1)
			r.await("a second run to end", func(m model) bool { return ended(m) && r.s.runs == 2 }, keyRun)
			runs := r.p.waitRecorded(r.t, "simple", 2)
			// The panel keeps the selection where it was when it was last
			// filled, which depends on when the recorder wrote; home
			// takes it to the newest run.
			screen := r.await("the runs panel", func(m model) bool {
				return overlayIs(m, overlayRuns) && m.panels.runs.Len() == 2 && m.panels.runs.Cursor() == 0
			}, keyRuns, keyHome)
			return normalise(screen, runs[0].ID, runs[1].ID)
		}},
		{"catalog_120x30", 120, 30, func(r *screenRun) string {
			return normalise(r.await("the catalog", overlayOpen(overlayCatalog), keyTools))
		}},
		{"inputs_form_100x24", 100, 24, func(r *screenRun) string {
			return normalise(r.await("the form", overlayOpen(overlayForm), keyRun))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := startScreens(t, tc.w, tc.h)
			screen := tc.pin(r)
			r.quit()
			golden.RequireEqual(t, screen+"\n")
		})
	}
}

// TestEditInProgram presses e in a running program: Bubble Tea hands the
// terminal to $EDITOR (a script that appends a step), and the workbench
// reloads the file when it exits.
func TestEditInProgram(t *testing.T) {
	t.Setenv("VISUAL", "")
	t.Setenv("EDITOR", testEditor(t))
	r := startScreens(t, 120, 30)
	screen := r.await("the edited plan", func(m model) bool {
		d := m.planPage.document()
		return d.Plan != nil && d.Plan.Identifier.Value == "simple" && len(d.Plan.Steps) == 3
	}, keyNextPlan, keyEdit)
	r.quit()
	for _, want := range []string{"S9  builtin__reshape", ".stepwise/plans/simple.yaml edited: valid", "steps       3 top-level"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the screen does not show %q:\n%s", want, screen)
		}
	}
}

// heldTitleTime is the time in the inspector's title of a unit held now,
// which runs from when the workbench saw the hold: as many milliseconds
// as the events that came after the stop took, none when they came first.
var heldTitleTime = regexp.MustCompile(`(◐)( +~t)( ━)`)

// untimedTitle draws the held unit's time in the inspector's title as
// border, so that the screen does not depend on when the stop came.
func untimedTitle(screen string) string {
	return heldTitleTime.ReplaceAllStringFunc(screen, func(s string) string {
		m := heldTitleTime.FindStringSubmatch(s)
		return m[1] + " " + strings.Repeat("━", len([]rune(m[2]))-1) + m[3][len(" "):] + "━"
	})
}
