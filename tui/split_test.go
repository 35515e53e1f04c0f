package tui

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

var (
	keyNarrower = tea.KeyPressMsg{Code: '{', Text: "{"}
	keyWider    = tea.KeyPressMsg{Code: '}', Text: "}"}
	keyZoom     = tea.KeyPressMsg{Code: 'z', Mod: tea.ModShift, Text: "Z"}
)

// TestSplit moves the border between the tree and the detail pane with
// the keys and the mouse, and zooms the focused pane: the layout both
// pages draw and take clicks by follows, and the run page keeps it.
func TestSplit(t *testing.T) {
	fx := loadFixture(t)
	click := func(x, y int) tea.Msg { return tea.MouseClickMsg{X: x, Y: y, Button: tea.MouseLeft} }
	motion := func(x, y int) tea.Msg { return tea.MouseMotionMsg{X: x, Y: y, Button: tea.MouseLeft} }
	release := func(x, y int) tea.Msg { return tea.MouseReleaseMsg{X: x, Y: y, Button: tea.MouseLeft} }
	// At 120x36 the tree is 54 columns wide by default: its right border
	// on column 53, the detail pane's left one on 54.
	cases := []struct {
		name       string
		w          int
		msgs       []tea.Msg
		tree       int // the tree pane's width on both pages
		zoom       bool
		wantNotice string
	}{
		{"default", 120, nil, 54, false, ""},
		{"} widens the tree", 120, seq(keyWider, keyWider), 62, false, ""},
		{"{ narrows it", 120, seq(keyNarrower), 50, false, ""},
		{"the detail pane keeps its minimum", 120, repeat(keyWider, 30), 120 - minPaneWidth, false, ""},
		{"the tree keeps its minimum", 120, repeat(keyNarrower, 30), minPaneWidth, false, ""},
		{"dragging the tree's border moves it", 120, seq(click(53, 10), motion(60, 11), motion(70, 12), release(70, 12)), 71, false, ""},
		{"dragging the detail pane's border moves it", 120, seq(click(54, 10), motion(40, 10), release(40, 10)), 41, false, ""},
		{"motion after the release moves nothing", 120, seq(click(53, 10), motion(60, 10), release(60, 10), motion(90, 10)), 61, false, ""},
		{"motion without a click on the border moves nothing", 120, seq(click(30, 10), motion(60, 10)), 54, false, ""},
		{"Z zooms the focused pane", 120, seq(keyZoom), 120, true, "zoomed"},
		{"Z again shows every pane", 120, seq(keyZoom, keyZoom), 54, false, ""},
		{"a resize key unzooms", 120, seq(keyZoom, keyWider), 58, false, ""},
		{"stacked panes do not resize", 50, seq(keyWider), 50, false, "the panes are stacked below 60 columns: widen the window to resize them"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := drive(t, newTestModel(fx.prReview), tc.w, 36, tc.msgs...)
			for name, p := range map[string]page{"plan": m.planPage, "run": m.runPage} {
				l := p.layout()
				if l.tree.w != tc.tree || l.zoomed != tc.zoom {
					t.Errorf("%s page: tree %d wide, zoomed %v; want %d, %v", name, l.tree.w, l.zoomed, tc.tree, tc.zoom)
				}
			}
			if !strings.Contains(m.notice.text, tc.wantNotice) || tc.wantNotice == "" && m.notice.text != "" {
				t.Errorf("notice %q, want %q", m.notice.text, tc.wantNotice)
			}
			checkScreen(t, m, tc.w, 36)
		})
	}
}

// TestSplitKeepsItsShare widens the tree, then resizes the window: the
// tree keeps its share of the width, not its columns.
func TestSplitKeepsItsShare(t *testing.T) {
	fx := loadFixture(t)
	m, _ := drive(t, newTestModel(fx.prReview), 120, 36, keyWider, keyWider) // 62 of 120
	for _, tc := range []struct{ w, tree int }{{240, 124}, {90, 47}, {120, 62}} {
		m, _ = drive(t, m, tc.w, 36, tea.WindowSizeMsg{Width: tc.w, Height: 36})
		if l := m.planPage.layout(); l.tree.w != tc.tree {
			t.Errorf("at %d columns the tree is %d wide, want %d", tc.w, l.tree.w, tc.tree)
		}
	}
}

// TestZoomFollowsFocus zooms the tree, then tabs: the detail pane takes
// the page, and the tree's rows are not drawn.
func TestZoomFollowsFocus(t *testing.T) {
	fx := loadFixture(t)
	m, _ := drive(t, newTestModel(fx.prReview), 120, 36, keyZoom)
	screen := ansi.Strip(m.render())
	if !strings.Contains(screen, "Steps") || strings.Contains(screen, "Detail") {
		t.Errorf("zoomed on the tree, the screen shows:\n%s", screen)
	}
	m, _ = drive(t, m, 120, 36, keyTab)
	if l := m.planPage.layout(); l.zoom != paneDetail || l.detail.w != 120 {
		t.Errorf("after tab the layout is %+v, want the detail pane zoomed", l)
	}
	if w := m.planPage.detail.Width; w != 120 {
		t.Errorf("the detail pane is %d wide, want 120", w)
	}
}

// TestOverlayCoversPaneEdges opens each panel at sizes where it leaves
// the page a sliver on each side: no piece of a pane's border shows in
// the sliver, beside the panel or above and below it.
func TestOverlayCoversPaneEdges(t *testing.T) {
	for _, size := range [][2]int{{60, 16}, {80, 24}, {120, 36}} {
		for _, open := range []struct {
			name string
			keys []tea.Msg
		}{
			{"runs", seq(keyRuns)},
			{"breakpoints", seq(keyBreakPanel)},
			{"tools", seq(keyTools)},
			{"palette", seq(keyPalette)},
		} {
			t.Run(fmt.Sprintf("%s_%dx%d", open.name, size[0], size[1]), func(t *testing.T) {
				b := newBench(t, size[0], size[1])
				b.press(open.keys...)
				if _, ok := b.m.overlays.top(); !ok {
					t.Fatal("no panel open")
				}
				lines := strings.Split(b.screen(), "\n")
				body := b.m.layout().body
				ow, oh := overlaySize(size[0], size[1])
				x0, y0 := (size[0]-ow)/2, (size[1]-oh)/2
				for y := body.y; y < body.y+body.h; y++ {
					// The screen's lines lose their trailing blanks.
					row := []rune(lines[y] + strings.Repeat(" ", size[0]))
					sliver := string(row[:x0]) + string(row[x0+ow:])
					if y < y0 || y >= y0+oh {
						sliver = string(row)
					}
					if strings.ContainsAny(sliver, "╭╮╰╯┃━┏┓┗┛│─") {
						t.Errorf("line %d shows a pane's border beside the panel: %q\n%s", y, lines[y], b.screen())
						return
					}
				}
			})
		}
	}
}

// TestOverlayKeepsPanesAround opens the value editor on a window wide
// enough for the panes to show beside it: the lines of the panes above it
// stay whole, as they do around the approval prompt, not blanked across
// the editor's width.
func TestOverlayKeepsPanesAround(t *testing.T) {
	b := newBench(t, 160, 48)
	b.debugTo(docFlow, "E1/do.0")
	b.press(keySkip)
	wantOverlay(t, b, overlayEditor)
	wantScreen(t, b, "┏━ Run flow ⏸ held ━━━━━━━━", "E0  builtin__reshape", "E1  map  0/3", "Inspector E1/do.0")
}
