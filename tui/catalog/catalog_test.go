package catalog

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/stepwise-dev/stepwise/debugger/workspace"
	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/plans/examples"
	"github.com/stepwise-dev/stepwise/tui/common"
	"github.com/stepwise-dev/stepwise/tui/common/commontest"
	"github.com/stepwise-dev/stepwise/tui/live/livetest"
)

// serveEnv makes the test binary the demo's tracker: the demo project's
// [mcp.tracker] runs the executable it was written with, here this one.
const serveEnv = "STEPWISE_CATALOG_TEST_SERVE_TRACKER"

func TestMain(m *testing.M) {
	if os.Getenv(serveEnv) == "1" {
		if err := examples.ServeTracker(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// demoTools is the demo project's whole vocabulary, loaded the way the
// workbench loads it: the control steps, the builtin, user and plan tools
// of its catalog, and the tools its tracker server lists when asked.
// Without the tracker configured its plans cannot run here, which the
// catalog marks.
func demoTools(t *testing.T, withTracker bool) []plans.ToolInfo {
	t.Helper()
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "desk")
	if err := examples.WriteProject(dir, os.Args[0]); err != nil {
		t.Fatal(err)
	}
	if !withTracker {
		file := filepath.Join(dir, examples.ProjectDir, "config.toml")
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		cut := strings.Index(string(src), "[mcp.tracker]")
		rest := strings.Index(string(src), "# The demo's own plans")
		if cut < 0 || rest < cut {
			t.Fatal("the demo's config.toml has no [mcp.tracker] to remove")
		}
		if err := os.WriteFile(file, append(src[:cut:cut], src[rest:]...), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := workspace.Open(dir, workspace.Options{LookupEnv: livetest.IsolatedEnv(tmp)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	list := ws.Tools()
	if withTracker {
		t.Setenv(serveEnv, "1")
		t.Setenv("GORACE", "atexit_sleep_ms=0")
		server, err := ws.ServerTools(context.Background(), "tracker")
		if err != nil {
			t.Fatal(err)
		}
		list = append(list, server...)
	}
	return list
}

func newCatalog(t *testing.T, list []plans.ToolInfo, w, h int, color bool) Model {
	t.Helper()
	m := New(common.New(common.NewTheme(true, color), common.DefaultKeyMap()))
	m.SetTools(list)
	m.SetSize(w, h)
	return m
}

var (
	keyDown     = tea.KeyPressMsg{Code: tea.KeyDown}
	keyUp       = tea.KeyPressMsg{Code: tea.KeyUp}
	keyJ        = tea.KeyPressMsg{Code: 'j', Text: "j"}
	keyK        = tea.KeyPressMsg{Code: 'k', Text: "k"}
	keyTop      = tea.KeyPressMsg{Code: tea.KeyHome}
	keyBottom   = tea.KeyPressMsg{Code: 'g', Mod: tea.ModShift, Text: "G"}
	keyPgDown   = tea.KeyPressMsg{Code: tea.KeyPgDown}
	keyPgUp     = tea.KeyPressMsg{Code: tea.KeyPgUp}
	keyEnter    = tea.KeyPressMsg{Code: tea.KeyEnter}
	keyAdd      = tea.KeyPressMsg{Code: 'a', Text: "a"}
	keyEsc      = tea.KeyPressMsg{Code: tea.KeyEscape}
	keySlash    = tea.KeyPressMsg{Code: '/', Text: "/"}
	keyBackspce = tea.KeyPressMsg{Code: tea.KeyBackspace}
)

// typed presses the keys of text.
func typed(text string) []tea.KeyPressMsg {
	var out []tea.KeyPressMsg
	for _, r := range text {
		out = append(out, tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	return out
}

// press sends keys and returns the messages their commands produce, but
// for the common.CloseOverlay that comes with an insert.
func press(m *Model, keys ...tea.KeyPressMsg) []tea.Msg {
	var msgs []tea.Msg
	for _, k := range keys {
		_, cmd := m.Update(k)
		for _, msg := range commontest.Messages(cmd) {
			if _, closed := msg.(common.CloseOverlay); !closed {
				msgs = append(msgs, msg)
			}
		}
	}
	return msgs
}

func selected(t *testing.T, m Model) string {
	t.Helper()
	tool, ok := m.Selected()
	if !ok {
		return ""
	}
	return tool.Name
}

// headings lists the group headings in the order drawn.
func headings(m Model) []string {
	var out []string
	for _, r := range m.rows {
		if r.heading != "" {
			out = append(out, r.heading)
		}
	}
	return out
}

func TestGroups(t *testing.T) {
	list := demoTools(t, true)
	m := newCatalog(t, list, 120, 40, false)
	want := []string{"control steps", "builtin", "user tools", "MCP tracker", "plans"}
	if got := headings(m); !slices.Equal(got, want) {
		t.Errorf("groups %v, want %v", got, want)
	}
	if len(m.shown) != len(list) {
		t.Errorf("%d tools listed of %d", len(m.shown), len(list))
	}
	// Every tool sits under its source's heading.
	group := ""
	for _, r := range m.rows {
		if r.heading != "" {
			group = r.heading
			continue
		}
		if tool := m.tools[r.tool]; groupName(tool.Source) != group {
			t.Errorf("%s (%s) is listed under %s", tool.Name, tool.Source, group)
		}
	}
	if got := selected(t, m); got != "exit" {
		t.Errorf("first selected %q, want the first control step, exit", got)
	}
}

func TestMovement(t *testing.T) {
	m := newCatalog(t, demoTools(t, true), 120, 40, false)
	order := make([]string, len(m.shown))
	for i, r := range m.shown {
		order[i] = m.tools[m.rows[r].tool].Name
	}
	cases := []struct {
		name string
		keys []tea.KeyPressMsg
		want string
	}{
		{"down skips headings", slices.Repeat([]tea.KeyPressMsg{keyDown}, 7), order[7]},
		{"j and k", []tea.KeyPressMsg{keyJ, keyJ, keyK}, order[1]},
		{"up at the top stays", []tea.KeyPressMsg{keyUp}, order[0]},
		{"bottom", []tea.KeyPressMsg{keyBottom}, order[len(order)-1]},
		{"bottom then top", []tea.KeyPressMsg{keyBottom, keyTop}, order[0]},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := m
			if msgs := press(&m, tc.keys...); len(msgs) > 0 {
				t.Errorf("movement emitted %v", msgs)
			}
			if got := selected(t, m); got != tc.want {
				t.Errorf("selected %s, want %s", got, tc.want)
			}
		})
	}
	// Seven control steps, two builtins, then the user tools.
	if order[7] != "builtin__infer" || order[9] != "user__append_event" {
		t.Errorf("the eighth and tenth tools are %s and %s; the groups are out of order", order[7], order[9])
	}
}

// TestInsertAndClose: enter on a tool writes nothing and says which key
// adds a step, naming the plan; that key (a) asks for the step and closes,
// or, while a run of the plan goes, stays open and says why it cannot.
func TestInsertAndClose(t *testing.T) {
	m := newCatalog(t, demoTools(t, true), 120, 40, false)
	m.SetPlan("triage_queue")
	if !strings.Contains(ansi.Strip(m.View()), "a add to triage_queue · / filter · esc close") {
		t.Errorf("the footer does not name the key that adds a step, and the plan:\n%s", ansi.Strip(m.View()))
	}
	if msgs := press(&m, keyBottom, keyEnter); len(msgs) != 0 {
		t.Fatalf("enter emitted %v, want nothing", msgs)
	}
	if !strings.Contains(ansi.Strip(m.View()), "a adds a step calling plan__triage_queue to triage_queue's file") {
		t.Errorf("enter does not say how a step is added:\n%s", ansi.Strip(m.View()))
	}
	msgs := press(&m, keyAdd)
	ins, ok := msgs[0].(Insert)
	if len(msgs) != 1 || !ok {
		t.Fatalf("a emitted %v, want one Insert", msgs)
	}
	if ins.Tool.Name != "plan__triage_queue" || ins.Tool.Source != "plan" || ins.Tool.InputSchema == nil {
		t.Errorf("Insert %+v, want plan__triage_queue with its schema", ins.Tool)
	}
	if _, cmd := m.Update(keyEsc); !reflect.DeepEqual(commontest.Messages(cmd), []tea.Msg{common.CloseOverlay{Overlay: &m}}) {
		t.Errorf("esc emitted %v, want the catalog closed", commontest.Messages(cmd))
	}

	const refusal = "a run of triage_queue is held at a stop: steps are added once it ends"
	m.SetAddRefusal(refusal)
	if _, cmd := m.Update(keyAdd); len(commontest.Messages(cmd)) != 0 {
		t.Errorf("a during a run emitted %v, want the catalog left open", commontest.Messages(cmd))
	}
	if !strings.Contains(ansi.Strip(m.View()), refusal) {
		t.Errorf("a during a run does not say why no step is added:\n%s", ansi.Strip(m.View()))
	}

	empty := newCatalog(t, nil, 120, 40, false)
	if msgs := press(&empty, keyEnter, keyAdd, keyDown); len(msgs) != 0 {
		t.Errorf("enter and a on an empty catalog emitted %v", msgs)
	}
	if !strings.Contains(ansi.Strip(empty.View()), "no tools") {
		t.Error("an empty catalog does not say so")
	}
}

func TestFilter(t *testing.T) {
	m := newCatalog(t, demoTools(t, true), 120, 40, false)
	press(&m, keySlash)
	if !m.editing {
		t.Fatal("/ did not open the filter box")
	}
	// Letters that are movement keys elsewhere are text here; the arrows
	// still move.
	press(&m, typed("issue")...)
	if m.Filter() != "issue" {
		t.Fatalf("filter %q after typing", m.Filter())
	}
	var names []string
	for _, r := range m.shown {
		names = append(names, m.tools[m.rows[r].tool].Name)
	}
	want := []string{"user__triage_note", "tracker__add_comment", "tracker__get_issue", "tracker__list_issues", "tracker__search", "plan__incident_brief", "plan__issue_timeline", "plan__post_triage_notes", "plan__triage_queue"}
	if !slices.Equal(names, want) {
		t.Errorf("issue matches %v, want %v", names, want)
	}
	press(&m, keyDown)
	if got := selected(t, m); got != "tracker__add_comment" || !m.editing {
		t.Errorf("down while filtering: %s, capturing %v", got, m.editing)
	}
	press(&m, typed(" time")...)
	if got := selected(t, m); got != "plan__issue_timeline" || len(m.shown) != 1 {
		t.Errorf("two words: %d shown, %s selected", len(m.shown), got)
	}
	view := ansi.Strip(m.View())
	if !strings.Contains(view, "/ issue time") || !strings.Contains(view, "Tools · 1 of") {
		t.Errorf("the filter does not show:\n%s", view)
	}
	// Enter keeps the filter and hands the keys back; esc then clears it
	// before it closes anything.
	if msgs := press(&m, keyEnter); len(msgs) != 0 || m.editing || m.Filter() != "issue time" {
		t.Errorf("enter in the box: %v, capturing %v, filter %q", msgs, m.editing, m.Filter())
	}
	if msgs := press(&m, keyAdd); len(msgs) != 1 || msgs[0].(Insert).Tool.Name != "plan__issue_timeline" {
		t.Errorf("a on the filtered list emitted %v", msgs)
	}
	if msgs := press(&m, keyEsc); len(msgs) != 0 || m.Filter() != "" || len(m.shown) != len(m.tools) {
		t.Errorf("esc with a filter: %v, filter %q, %d shown", msgs, m.Filter(), len(m.shown))
	}
	if got := selected(t, m); got != "plan__issue_timeline" {
		t.Errorf("clearing the filter lost the selection: %s", got)
	}

	// Esc in the box clears what was typed; backspace edits it.
	press(&m, keySlash)
	press(&m, typed("zzz")...)
	if !strings.Contains(ansi.Strip(m.View()), "no tool matches the filter") || len(m.shown) != 0 {
		t.Errorf("a filter that matches nothing:\n%s", ansi.Strip(m.View()))
	}
	if msgs := press(&m, keyEnter); len(msgs) != 0 {
		t.Errorf("enter with nothing listed emitted %v", msgs)
	}
	if got := m.Filter(); got != "zzz" {
		t.Errorf("the filter is %q after enter, want zzz", got)
	}
	if msgs := press(&m, keyAdd); len(msgs) != 0 {
		t.Errorf("a with nothing listed emitted %v", msgs)
	}
	press(&m, keySlash, keyBackspce, keyBackspce)
	if m.Filter() != "z" {
		t.Errorf("backspace: filter %q", m.Filter())
	}
	if msgs := press(&m, keyEsc); len(msgs) != 0 || m.editing || m.Filter() != "" {
		t.Errorf("esc in the box: %v, capturing %v, filter %q", msgs, m.editing, m.Filter())
	}

	// A paste goes into the box.
	press(&m, keySlash)
	m.Update(tea.PasteMsg{Content: "reshape"})
	if m.Filter() != "reshape" || selected(t, m) != "builtin__reshape" {
		t.Errorf("paste: filter %q, selected %s", m.Filter(), selected(t, m))
	}

	// New tools start unfiltered.
	m.SetTools(m.tools)
	if m.editing || m.Filter() != "" || selected(t, m) != "builtin__reshape" {
		t.Errorf("SetTools: capturing %v, filter %q, selected %s", m.editing, m.Filter(), selected(t, m))
	}
}

// info returns the detail lines without styling.
func infoText(m Model) string {
	return ansi.Strip(strings.Join(m.info(60), "\n"))
}

func TestDetail(t *testing.T) {
	list := demoTools(t, true)
	m := newCatalog(t, list, 120, 40, false)
	show := func(name string) string {
		t.Helper()
		m.filter.SetValue(name)
		m.refilter()
		if got := selected(t, m); got != name {
			t.Fatalf("selected %s, want %s", got, name)
		}
		return infoText(m)
	}
	cases := []struct {
		tool string
		want []string
	}{
		{"builtin__infer", []string{
			"builtin__infer\nbuiltin pack · read-only\n\nGeneric LLM inference",
			"Input\n  instruction  string  required\n      complete, self-contained instruction\n  model  string\n",
			"Output\n  not declared",
		}},
		{"user__utc_now", []string{
			"user tool · read-only\nfile /",
			"Input\n  takes no input\n",
			"Output\n  now  string  required\n      RFC 3339 time in UTC\n",
			"Output example\n  {\n    \"now\": \"2026-03-02T09:14:05Z\"\n  }",
		}},
		{"plan__post_triage_notes", []string{
			"plan, called as a tool",
			"  findings  array of object  required\n",
			"    id  string  required\n",
			"  author  string\n      Who signs the comments.",
		}},
		{"tracker__list_issues", []string{"MCP server tracker"}},
		{"agent", []string{"control step, run by the engine", "  prompt  string  required", "  structured_output  strict\n"}},
	}
	for _, tc := range cases {
		t.Run(tc.tool, func(t *testing.T) {
			text := show(tc.tool)
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("the detail lacks %q:\n%s", w, text)
				}
			}
		})
	}

	// Without the tracker the plans cannot run here: marked in the list,
	// said in the detail, in words and a glyph rather than colour alone.
	m = newCatalog(t, demoTools(t, false), 120, 40, false)
	press(&m, keyBottom)
	text := strings.Join(strings.Fields(infoText(m)), " ")
	if !strings.Contains(text, "✗ cannot run here: plan 'triage_queue' is hidden: it requires MCP servers that are not configured: tracker") {
		t.Errorf("the detail of an unusable plan:\n%s", text)
	}
	if v := ansi.Strip(m.View()); !strings.Contains(v, "▸✗ plan__triage_queue") || !strings.Contains(v, " ✗ plan__issue_timeline") || !strings.Contains(v, "   builtin__infer") {
		t.Errorf("the list does not mark unusable tools:\n%s", v)
	}
}

func TestViewSize(t *testing.T) {
	list := demoTools(t, true)
	for _, color := range []bool{true, false} {
		for _, size := range [][2]int{{120, 40}, {80, 24}, {64, 20}, {63, 20}, {40, 12}, {20, 6}, {3, 3}, {0, 0}} {
			t.Run(fmt.Sprintf("%dx%d color %v", size[0], size[1], color), func(t *testing.T) {
				m := newCatalog(t, list, size[0], size[1], color)
				for _, keys := range [][]tea.KeyPressMsg{nil, {keyBottom}, append([]tea.KeyPressMsg{keySlash}, typed("trac")...)} {
					press(&m, keys...)
					checkSize(t, m.View(), size[0], size[1])
				}
			})
		}
	}
}

func checkSize(t *testing.T, view string, w, h int) {
	t.Helper()
	lines := strings.Split(view, "\n")
	if h == 0 {
		if view != "" {
			t.Errorf("a zero-height view is %q", view)
		}
		return
	}
	if len(lines) != h {
		t.Errorf("%d lines, want %d", len(lines), h)
	}
	for i, l := range lines {
		if got := ansi.StringWidth(l); got != w {
			t.Errorf("line %d is %d wide, want %d: %q", i, got, w, ansi.Strip(l))
		}
	}
}

// TestLayout pins the two layouts: the detail beside the list when there is
// room, under it otherwise.
func TestLayout(t *testing.T) {
	list := demoTools(t, true)
	wide := ansi.Strip(newCatalog(t, list, 100, 12, false).View())
	wantWide := []string{
		"┃ control steps 7           │ exit                                                                 ┃",
		"┃▸  exit                    │ control step, run by the engine                                      ┃",
		"┃   ask                     │                                                                      ┃",
	}
	lines := strings.Split(wide, "\n")
	for i, w := range wantWide {
		if lines[i+1] != w {
			t.Errorf("wide line %d:\n got %q\nwant %q", i+1, lines[i+1], w)
		}
	}
	if !strings.HasPrefix(lines[0], "┏━ Tools · 21 ") || !strings.Contains(lines[11], "1/21  a add a step · / filter · esc close") {
		t.Errorf("wide frame:\n%s", wide)
	}

	narrow := strings.Split(ansi.Strip(newCatalog(t, list, 40, 12, false).View()), "\n")
	wantNarrow := []string{
		"┏━ Tools · 21 ━━━━━━━━━━━━━━━━━━━━━━━━━┓",
		"┃ control steps 7                      ┃",
		"┃▸  exit                               ┃",
		"┃   ask                                ┃",
		"┃   agent                              ┃",
		"┃   decide                             ┃",
		"┃──────────────────────────────────────┃",
		"┃ exit                                 ┃",
	}
	for i, w := range wantNarrow {
		if narrow[i] != w {
			t.Errorf("narrow line %d:\n got %q\nwant %q", i, narrow[i], w)
		}
	}
}

func TestMouseAndScrolling(t *testing.T) {
	list := demoTools(t, true)
	m := newCatalog(t, list, 100, 12, false) // ten lines of list
	// Row 1 is the control steps heading; row 3 the second tool.
	m.ClickAt(5, 1)
	if got := selected(t, m); got != "exit" {
		t.Errorf("a click on a heading moved the selection to %s", got)
	}
	m.ClickAt(5, 3)
	if got := selected(t, m); got != "ask" {
		t.Errorf("click on row 3 selected %s, want ask", got)
	}
	// The wheel scrolls the list, taking the selection along.
	m.Scroll(12)
	if m.list.Offset != 12 {
		t.Errorf("list offset %d after scrolling 12", m.list.Offset)
	}
	if r := m.shown[m.sel]; r < m.list.Offset || r >= m.list.Offset+10 {
		t.Errorf("the selection (row %d) was left out of view", r)
	}
	m.Scroll(-100)
	if m.list.Offset != 0 {
		t.Errorf("list offset %d after scrolling back", m.list.Offset)
	}

	// A click in the detail makes the wheel scroll it instead.
	press(&m, keyBottom) // plan__triage_queue, a long detail
	long := len(m.info(m.layout().infoW))
	if long <= 10 {
		t.Fatalf("the detail has %d lines; the test needs more than fit", long)
	}
	before := m.list.Offset
	m.ClickAt(50, 5)
	m.Scroll(3)
	if m.detail.Offset != 3 || m.list.Offset != before {
		t.Errorf("after a click in the detail the wheel moved list %d→%d, detail to %d", before, m.list.Offset, m.detail.Offset)
	}
	m.Scroll(1000)
	if m.detail.Offset != long-10 {
		t.Errorf("detail offset %d, want the last page at %d", m.detail.Offset, long-10)
	}
	// Page keys scroll the detail; moving starts the next tool's at its top.
	press(&m, keyPgUp)
	if m.detail.Offset != max(long-19, 0) {
		t.Errorf("page up: detail offset %d", m.detail.Offset)
	}
	press(&m, keyPgDown, keyUp)
	if m.detail.Offset != 0 {
		t.Errorf("a new selection kept detail offset %d", m.detail.Offset)
	}
	if !strings.Contains(ansi.Strip(m.View()), "plan__post_triage_notes") {
		t.Error("the detail does not show the selected tool")
	}
}
