package tui

import (
	"context"
	"image/color"
	"regexp"
	"strconv"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/stepwise-dev/stepwise/debugger/workspace"
	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/tui/common"
	"github.com/stepwise-dev/stepwise/tui/tree"
)

// fixture loads the test documents once per test binary.
type fixture struct {
	prReview, triage, large, broken workspace.Document
}

func loadFixture(t testing.TB) fixture {
	t.Helper()
	return fixture{
		prReview: loadDocument(t, prReviewFile),
		triage:   loadDocument(t, triageFile),
		large:    loadDocument(t, largeFile),
		broken:   loadDocument(t, brokenFile),
	}
}

// drive feeds messages to the model at a size, running the commands the
// model returns and feeding their messages back, the way the program
// would. It reports whether the model asked to quit.
func drive(t testing.TB, m model, w, h int, msgs ...tea.Msg) (model, bool) {
	t.Helper()
	queue := append([]tea.Msg{tea.WindowSizeMsg{Width: w, Height: h}}, msgs...)
	quit := false
	for len(queue) > 0 {
		msg := queue[0]
		queue = queue[1:]
		next, cmd := m.Update(msg)
		m = next.(model)
		if cmd == nil || background(cmd) {
			// A tick (a notice's time) waits for the wall clock.
			continue
		}
		switch out := cmd().(type) {
		case tea.QuitMsg:
			quit = true
		case nil:
		default:
			queue = append([]tea.Msg{out}, queue...)
		}
	}
	return m, quit
}

func newTestModel(docs ...workspace.Document) model {
	return newModel(context.Background(), Options{Title: "test", Documents: docs}, true)
}

// visible reports whether the tree's selection is drawn.
func selectionVisible(m model) bool {
	h := m.planPage.layout().tree.h - 2
	cur := m.planPage.tree().Selected().Index
	return cur >= m.planPage.tree().Offset() && cur < m.planPage.tree().Offset()+h
}

func TestKeys(t *testing.T) {
	fx := loadFixture(t)
	rowsOf := func(d workspace.Document) []tree.Row { return newTestModel(d).planPage.tree().Rows() }
	prRows := rowsOf(fx.prReview)
	largeRows := rowsOf(fx.large)

	cases := []struct {
		name  string
		docs  []workspace.Document
		w, h  int
		msgs  []tea.Msg
		check func(t *testing.T, m model, quit bool)
	}{
		{"j moves down", []workspace.Document{fx.prReview}, 80, 24, seq(keyDown), func(t *testing.T, m model, _ bool) {
			wantRow(t, m, 1, "E0")
		}},
		{"down arrow moves down", []workspace.Document{fx.prReview}, 80, 24, seq(keyArrowDn, keyArrowDn), func(t *testing.T, m model, _ bool) {
			wantRow(t, m, 2, "E1")
		}},
		{"k moves up", []workspace.Document{fx.prReview}, 80, 24, seq(keyDown, keyDown, keyUp), func(t *testing.T, m model, _ bool) {
			wantRow(t, m, 1, "E0")
		}},
		{"up arrow moves up", []workspace.Document{fx.prReview}, 80, 24, seq(keyDown, keyArrowUp), func(t *testing.T, m model, _ bool) {
			wantRow(t, m, 0, "")
		}},
		{"k stops at the top", []workspace.Document{fx.prReview}, 80, 24, seq(keyUp, keyUp), func(t *testing.T, m model, _ bool) {
			wantRow(t, m, 0, "")
		}},
		{"j stops at the bottom", []workspace.Document{fx.prReview}, 80, 24, repeat(keyDown, 40), func(t *testing.T, m model, _ bool) {
			wantRow(t, m, len(prRows)-1, "output")
		}},
		{"G jumps to the end", []workspace.Document{fx.prReview}, 80, 24, seq(keyBottom), func(t *testing.T, m model, _ bool) {
			wantRow(t, m, len(prRows)-1, "output")
		}},
		{"end jumps to the end", []workspace.Document{fx.large}, 80, 24, seq(keyEnd), func(t *testing.T, m model, _ bool) {
			wantRow(t, m, len(largeRows)-1, "output")
			if !selectionVisible(m) {
				t.Error("selection out of view after end")
			}
		}},
		{"home jumps to the top", []workspace.Document{fx.large}, 80, 24, seq(keyBottom, keyHome), func(t *testing.T, m model, _ bool) {
			wantRow(t, m, 0, "")
			if m.planPage.tree().Offset() != 0 {
				t.Errorf("offset %d after g, want 0", m.planPage.tree().Offset())
			}
		}},
		{"home jumps to the top", []workspace.Document{fx.large}, 80, 24, seq(keyBottom, keyHome), func(t *testing.T, m model, _ bool) {
			wantRow(t, m, 0, "")
		}},
		{"pgdown pages and keeps the selection in view", []workspace.Document{fx.large}, 80, 24, seq(keyPgDown, keyPgDown), func(t *testing.T, m model, _ bool) {
			page := m.planPage.layout().tree.h - 3
			wantRow(t, m, 2*page, largeRows[2*page].Path)
			if !selectionVisible(m) {
				t.Error("selection out of view after pgdown")
			}
		}},
		{"pgup pages back", []workspace.Document{fx.large}, 80, 24, seq(keyPgDown, keyPgDown, keyPgUp), func(t *testing.T, m model, _ bool) {
			page := m.planPage.layout().tree.h - 3
			wantRow(t, m, page, largeRows[page].Path)
			if !selectionVisible(m) {
				t.Error("selection out of view after pgup")
			}
		}},
		{"j past the view scrolls it", []workspace.Document{fx.large}, 80, 24, repeat(keyDown, 100), func(t *testing.T, m model, _ bool) {
			wantRow(t, m, 100, largeRows[100].Path)
			if !selectionVisible(m) || m.planPage.tree().Offset() == 0 {
				t.Errorf("offset %d: selection not followed", m.planPage.tree().Offset())
			}
		}},
		{"tab focuses the detail pane", []workspace.Document{fx.prReview}, 80, 24, seq(keyTab), func(t *testing.T, m model, _ bool) {
			wantFocus(t, m, paneDetail)
		}},
		{"tab twice focuses problems", []workspace.Document{fx.prReview}, 80, 24, seq(keyTab, keyTab), func(t *testing.T, m model, _ bool) {
			wantFocus(t, m, paneBottom)
		}},
		{"tab cycles back to the tree", []workspace.Document{fx.prReview}, 80, 24, seq(keyTab, keyTab, keyTab), func(t *testing.T, m model, _ bool) {
			wantFocus(t, m, paneTree)
		}},
		{"shift+tab goes backwards", []workspace.Document{fx.prReview}, 80, 24, seq(keyShiftTab), func(t *testing.T, m model, _ bool) {
			wantFocus(t, m, paneBottom)
		}},
		{"keys go to the focused pane", []workspace.Document{fx.prReview}, 80, 24, seq(repeat(keyDown, 6), keyTab, keyDown, keyDown), func(t *testing.T, m model, _ bool) {
			wantRow(t, m, 6, "E4") // the tree kept its selection
			if m.planPage.detail.Offset() != 2 {
				t.Errorf("detail offset %d, want 2", m.planPage.detail.Offset())
			}
		}},
		{"detail pages and jumps", []workspace.Document{fx.prReview}, 80, 24, seq(repeat(keyDown, 6), keyTab, keyPgDown, keyBottom, keyPgUp), func(t *testing.T, m model, _ bool) {
			h := m.planPage.layout().detail.h - 2
			want := len(m.planPage.detail.Lines()) - h - (h - 1)
			if m.planPage.detail.Offset() != want {
				t.Errorf("detail offset %d, want %d", m.planPage.detail.Offset(), want)
			}
		}},
		{"] shows the next plan", []workspace.Document{fx.prReview, fx.triage}, 80, 24, seq(keyNextPlan), func(t *testing.T, m model, _ bool) {
			wantDocument(t, m, 1)
			if m.planPage.problems.Len() != len(fx.triage.Report.Problems)+len(fx.triage.Report.Notes) {
				t.Errorf("problems pane lists %d, want the triage report", m.planPage.problems.Len())
			}
		}},
		{"[ wraps to the last plan", []workspace.Document{fx.prReview, fx.triage, fx.large}, 80, 24, seq(keyPrevPlan), func(t *testing.T, m model, _ bool) {
			wantDocument(t, m, 2)
		}},
		{"switching plans keeps each plan's selection", []workspace.Document{fx.prReview, fx.triage}, 80, 24, seq(keyDown, keyDown, keyNextPlan, keyDown, keyPrevPlan), func(t *testing.T, m model, _ bool) {
			wantDocument(t, m, 0)
			wantRow(t, m, 2, "E1")
		}},
		{"? opens help", []workspace.Document{fx.prReview}, 80, 24, seq(keyHelp), func(t *testing.T, m model, _ bool) {
			if !overlayIs(m, overlayHelp) || !strings.Contains(ansi.Strip(m.render()), "Keys") {
				t.Error("help not shown")
			}
		}},
		{"? again closes help", []workspace.Document{fx.prReview}, 80, 24, seq(keyHelp, keyHelp), func(t *testing.T, m model, _ bool) {
			if overlayIs(m, overlayHelp) {
				t.Error("help still shown")
			}
		}},
		{"esc closes help", []workspace.Document{fx.prReview}, 80, 24, seq(keyHelp, keyEsc), func(t *testing.T, m model, _ bool) {
			if overlayIs(m, overlayHelp) {
				t.Error("help still shown")
			}
		}},
		{"help swallows movement", []workspace.Document{fx.prReview}, 80, 24, seq(keyHelp, keyDown, keyTab), func(t *testing.T, m model, _ bool) {
			wantRow(t, m, 0, "")
			wantFocus(t, m, paneTree)
		}},
		{"q quits", []workspace.Document{fx.prReview}, 80, 24, seq(keyQuit), func(t *testing.T, _ model, quit bool) {
			if !quit {
				t.Error("q did not quit")
			}
		}},
		{"ctrl+c quits", []workspace.Document{fx.prReview}, 80, 24, seq(keyCtrlC), func(t *testing.T, _ model, quit bool) {
			if !quit {
				t.Error("ctrl+c did not quit")
			}
		}},
		{"q closes the help overlay", []workspace.Document{fx.prReview}, 80, 24, seq(keyHelp, keyQuit), func(t *testing.T, m model, quit bool) {
			if quit || !overlayIs(m, overlayNone) {
				t.Errorf("q quit (%v) or left the overlay open (%v)", quit, m.overlays)
			}
		}},
		{"enter then j moves from the jumped-to step", []workspace.Document{fx.triage}, 80, 24, seq(keyShiftTab, keyDown, keyEnter, keyDown), func(t *testing.T, m model, _ bool) {
			wantFocus(t, m, paneTree)
			wantRow(t, m, 6, "E1/do.*/E11/then")
		}},
		{"enter in the tree does nothing", []workspace.Document{fx.prReview}, 80, 24, seq(keyDown, keyEnter), func(t *testing.T, m model, quit bool) {
			wantRow(t, m, 1, "E0")
			wantFocus(t, m, paneTree)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, quit := drive(t, newTestModel(tc.docs...), tc.w, tc.h, tc.msgs...)
			tc.check(t, m, quit)
			if !quit {
				checkScreen(t, m, tc.w, tc.h)
			}
		})
	}
}

// TestJumpToProblem presses Enter on every problem and note of the triage
// plan and checks where the tree lands and that it gets the focus.
func TestJumpToProblem(t *testing.T) {
	fx := loadFixture(t)
	type want struct {
		path string
		line int
	}
	cases := []struct {
		name string
		at   int // index in the problems pane: problems, then notes
		want want
	}{
		{"forward reference on a top-level step", 0, want{"E0", 5}},
		{"nested control in a body step", 1, want{"E1/do.*/E11", 21}},
		{"bad op on the first of two E2s", 2, want{"E2", 27}},
		{"duplicate id lands on the second E2", 3, want{"E2", 34}},
		{"empty tools on the second E2", 4, want{"E2", 34}},
		{"malformed tool name", 5, want{"E4", 45}},
		{"unknown reference", 6, want{"E4", 45}},
		{"solver template has no path: nearest line", 7, want{"solver", 52}},
		{"note: ignored concurrency", 8, want{"E2", 27}},
		{"note: tools without rounds", 9, want{"E2", 34}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			msgs := seq(keyTab, keyTab, repeat(keyDown, tc.at), keyEnter)
			m, _ := drive(t, newTestModel(fx.triage), 80, 24, msgs...)
			wantFocus(t, m, paneTree)
			got := m.planPage.tree().Selected()
			if got.Path != tc.want.path || got.Line != tc.want.line {
				t.Errorf("jumped to %s (line %d), want %s (line %d)", got.Path, got.Line, tc.want.path, tc.want.line)
			}
			if m.planPage.detail.Row().Index != got.Index {
				t.Error("detail pane does not show the selected row")
			}
		})
	}
}

// TestProblemFallsBackToLine checks the line fallback for problems whose
// path names no row.
func TestProblemFallsBackToLine(t *testing.T) {
	fx := loadFixture(t)
	cases := []struct {
		name string
		p    plans.Problem
		want string
	}{
		{"no path, in a body call", plans.Problem{Pos: plans.Pos{Line: 40}}, "E3/do.*"},
		{"no path, inside a step", plans.Problem{Pos: plans.Pos{Line: 45}}, "E4"},
		{"unknown path", plans.Problem{Path: "E99", Pos: plans.Pos{Line: 72}}, "E5"},
		{"before every step", plans.Problem{Pos: plans.Pos{Line: 3}}, ""},
		{"no position", plans.Problem{Path: "E99"}, ""},
		{"exact path wins over line", plans.Problem{Path: "E7", Pos: plans.Pos{Line: 2}}, "E7"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			doc := fx.prReview
			doc.Report = plans.Report{Problems: []plans.Problem{tc.p}}
			m, _ := drive(t, newTestModel(doc), 80, 24, keyShiftTab, keyEnter)
			if got := m.planPage.tree().Selected().Path; got != tc.want {
				t.Errorf("selected %q, want %q", got, tc.want)
			}
		})
	}
}

func TestMouse(t *testing.T) {
	fx := loadFixture(t)
	click := func(x, y int) tea.Msg { return tea.MouseClickMsg{X: x, Y: y, Button: tea.MouseLeft} }
	wheel := func(x, y int, b tea.MouseButton) tea.Msg { return tea.MouseWheelMsg{X: x, Y: y, Button: b} }
	// At 80x24: header on line 0, panes from line 1, the tree's first row
	// on line 2; the tree is 36 columns wide, the detail pane right of it.
	cases := []struct {
		name  string
		docs  []workspace.Document
		msgs  []tea.Msg
		check func(t *testing.T, m model)
	}{
		{"click a tree row selects it", []workspace.Document{fx.prReview}, seq(click(10, 2+4)), func(t *testing.T, m model) {
			wantRow(t, m, 4, "E3")
			wantFocus(t, m, paneTree)
		}},
		{"click a tree row from another pane focuses the tree", []workspace.Document{fx.prReview}, seq(keyTab, click(5, 2+7)), func(t *testing.T, m model) {
			wantRow(t, m, 7, "E5")
			wantFocus(t, m, paneTree)
		}},
		{"click below the last row changes nothing", []workspace.Document{fx.prReview}, seq(keyDown, click(5, 2+17)), func(t *testing.T, m model) {
			wantRow(t, m, 1, "E0")
		}},
		{"click the border changes nothing", []workspace.Document{fx.prReview}, seq(keyDown, click(5, 1)), func(t *testing.T, m model) {
			wantRow(t, m, 1, "E0")
		}},
		{"click the detail pane focuses it", []workspace.Document{fx.prReview}, seq(click(50, 5)), func(t *testing.T, m model) {
			wantFocus(t, m, paneDetail)
		}},
		{"click a problem selects it", []workspace.Document{fx.triage}, seq(click(20, 19)), func(t *testing.T, m model) {
			wantFocus(t, m, paneBottom)
			if m.planPage.problems.Cursor() != 1 {
				t.Errorf("problem %d selected, want 1", m.planPage.problems.Cursor())
			}
		}},
		{"click a plan tab shows it", []workspace.Document{fx.prReview, fx.triage}, seq(click(33, 0)), func(t *testing.T, m model) {
			wantDocument(t, m, 1)
		}},
		{"wheel scrolls the tree and keeps the selection visible", []workspace.Document{fx.large}, seq(repeat(wheel(10, 5, tea.MouseWheelDown), 4)), func(t *testing.T, m model) {
			if m.planPage.tree().Offset() != 4*common.WheelStep {
				t.Errorf("offset %d, want %d", m.planPage.tree().Offset(), 4*common.WheelStep)
			}
			if !selectionVisible(m) {
				t.Error("selection scrolled out of view")
			}
		}},
		{"wheel up stops at the top", []workspace.Document{fx.large}, seq(wheel(10, 5, tea.MouseWheelDown), repeat(wheel(10, 5, tea.MouseWheelUp), 3)), func(t *testing.T, m model) {
			if m.planPage.tree().Offset() != 0 {
				t.Errorf("offset %d, want 0", m.planPage.tree().Offset())
			}
		}},
		{"wheel scrolls the pane under the pointer, not the focused one", []workspace.Document{fx.prReview}, seq(repeat(keyDown, 6), wheel(50, 5, tea.MouseWheelDown)), func(t *testing.T, m model) {
			wantFocus(t, m, paneTree)
			wantRow(t, m, 6, "E4")
			if m.planPage.detail.Offset() != common.WheelStep {
				t.Errorf("detail offset %d, want %d", m.planPage.detail.Offset(), common.WheelStep)
			}
		}},
		{"a click closes help", []workspace.Document{fx.prReview}, seq(keyHelp, click(10, 6)), func(t *testing.T, m model) {
			if overlayIs(m, overlayHelp) {
				t.Error("help still shown")
			}
			wantRow(t, m, 0, "")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := drive(t, newTestModel(tc.docs...), 80, 24, tc.msgs...)
			tc.check(t, m)
			checkScreen(t, m, 80, 24)
		})
	}
}

// TestResize sends window sizes one after another, from tiny to huge, and
// checks every screen fits its window exactly and keeps the selection in
// view.
func TestResize(t *testing.T) {
	fx := loadFixture(t)
	sizes := [][2]int{{80, 24}, {200, 60}, {1, 1}, {10, 5}, {24, 8}, {59, 20}, {60, 20}, {80, 24}, {120, 40}, {300, 100}, {33, 9}, {80, 24}}
	for _, docs := range [][]workspace.Document{{fx.prReview, fx.triage, fx.large, fx.broken}, {fx.large}} {
		m := newTestModel(docs...)
		m, _ = drive(t, m, 80, 24, repeat(keyDown, 30)...)
		for _, s := range sizes {
			m, _ = drive(t, m, s[0], s[1])
			checkScreen(t, m, s[0], s[1])
			if l := m.layout(); !l.tooSmall && !selectionVisible(m) {
				t.Errorf("%dx%d: selection out of view", s[0], s[1])
			}
		}
	}
}

// TestNoColor checks NO_COLOR drops every colour, and that the focused pane
// and the selection still show.
func TestNoColor(t *testing.T) {
	fx := loadFixture(t)
	m := newModel(context.Background(), Options{Title: "test", Documents: []workspace.Document{fx.triage}}, false)
	m, _ = drive(t, m, 80, 24, keyDown)
	screen := m.render()
	if c := colourParams(screen); len(c) > 0 {
		t.Errorf("colour in a NO_COLOR screen: SGR parameters %v", c)
	}
	if !strings.Contains(screen, "\x1b[7m") {
		t.Error("the selection is not in reverse video")
	}
	if !strings.Contains(ansi.Strip(screen), "┏━ Steps") {
		t.Error("the focused pane has no heavy border")
	}

	colored, _ := drive(t, newTestModel(fx.triage), 80, 24, keyDown)
	if len(colourParams(colored.render())) == 0 {
		t.Error("no colour in a colour screen")
	}
	if ansi.Strip(colored.render()) != ansi.Strip(screen) {
		t.Error("colour changes the text of the screen")
	}
}

// TestBackgroundColor checks the theme follows a light terminal.
func TestBackgroundColor(t *testing.T) {
	fx := loadFixture(t)
	m, _ := drive(t, newTestModel(fx.prReview), 80, 24, tea.BackgroundColorMsg{Color: color.White})
	if m.Theme.Dark {
		t.Error("theme still dark on a white background")
	}
	if m.planPage.tree().Theme != m.Theme || m.planPage.detail.Theme != m.Theme {
		t.Error("components do not share the root's theme")
	}
	m, _ = drive(t, m, 80, 24, tea.BackgroundColorMsg{Color: color.Black})
	if !m.Theme.Dark {
		t.Error("theme not dark on a black background")
	}
}

// TestView checks the view asks for the alternate screen and mouse
// reporting.
func TestView(t *testing.T) {
	fx := loadFixture(t)
	m, _ := drive(t, newTestModel(fx.prReview), 80, 24)
	v := m.View()
	if !v.AltScreen || v.MouseMode != tea.MouseModeCellMotion {
		t.Errorf("view: alt screen %v, mouse %v", v.AltScreen, v.MouseMode)
	}
	if m.Init() == nil {
		t.Error("Init does not ask for the background colour")
	}
}

// TestEmpty checks a workbench with no documents still draws.
func TestEmpty(t *testing.T) {
	m, _ := drive(t, newTestModel(), 80, 24, keyDown, keyNextPlan, keyTab, keyTab, keyEnter)
	checkScreen(t, m, 80, 24)
}

var sgrPattern = regexp.MustCompile(`\x1b\[([0-9;:]*)m`)

// colourParams returns the SGR parameters in s that set a colour.
func colourParams(s string) []string {
	var out []string
	for _, m := range sgrPattern.FindAllStringSubmatch(s, -1) {
		for _, p := range strings.FieldsFunc(m[1], func(r rune) bool { return r == ';' || r == ':' }) {
			n, _ := strconv.Atoi(p)
			if (n >= 30 && n <= 49) || (n >= 90 && n <= 107) {
				out = append(out, m[1])
				break
			}
		}
	}
	return out
}

func wantRow(t *testing.T, m model, index int, path string) {
	t.Helper()
	got := m.planPage.tree().Selected()
	if got.Index != index || got.Path != path {
		t.Errorf("selected row %d %q, want %d %q", got.Index, got.Path, index, path)
	}
	if m.planPage.detail.Row().Index != got.Index {
		t.Errorf("detail shows row %d, tree selects %d", m.planPage.detail.Row().Index, got.Index)
	}
}

func wantFocus(t *testing.T, m model, p pane) {
	t.Helper()
	if m.page.focused() != p {
		t.Errorf("focus on pane %d, want %d", m.page.focused(), p)
	}
	if m.planPage.tree().Focused() != (p == paneTree) || m.planPage.detail.Focused() != (p == paneDetail) || m.planPage.problems.Focused() != (p == paneBottom) {
		t.Error("components disagree about focus")
	}
}

func wantDocument(t *testing.T, m model, i int) {
	t.Helper()
	if m.planPage.current != i {
		t.Errorf("document %d shown, want %d", m.planPage.current, i)
	}
}

// checkScreen checks the screen is exactly the window: never wider, never
// taller.
func checkScreen(t *testing.T, m model, w, h int) {
	t.Helper()
	lines := strings.Split(m.render(), "\n")
	if len(lines) != h {
		t.Errorf("%dx%d: screen has %d lines", w, h, len(lines))
	}
	for i, l := range lines {
		if lw := ansi.StringWidth(l); lw > w {
			t.Errorf("%dx%d: line %d is %d wide: %q", w, h, i, lw, ansi.Strip(l))
		}
	}
}
