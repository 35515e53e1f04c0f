package tree

import (
	"os"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/stepwise-dev/stepwise/debugger/workspace"
	"github.com/stepwise-dev/stepwise/plans"
	"github.com/stepwise-dev/stepwise/tui/common"
)

func load(t *testing.T, file string) workspace.Document {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	p, r := plans.Load(file, src, plans.Stepwise)
	return workspace.Document{File: file, Plan: p, Report: r}
}

func newTree(doc workspace.Document) Model {
	m := New(common.New(common.NewTheme(true, false), common.DefaultKeyMap()), doc)
	m.SetSize(60, 30)
	return m
}

// TestRows pins the tree of the PR review plan: every row's path, and the
// row as drawn (without the gutter).
func TestRows(t *testing.T) {
	m := newTree(load(t, "../testdata/pr_review.yaml"))
	want := []struct{ path, drawn string }{
		{"", "pr_review  PR review"},
		{"E0", "├── E0  github__get_pull_request"},
		{"E1", "├─⎋ E1  exit"},
		{"E2", "├─▽ E2  filter"},
		{"E3", "├─⟳ ▾ E3  map"},
		{"E3/do.*", "│   └── do  linear__get_issue"},
		{"E4", "├─✻ E4  agent"},
		{"E5", "├─⑂ ▾ E5  decide"},
		{"E5/then", "│   ├── ▾ then  2 steps"},
		{"E5/then/E50", "│   │   ├── E50  github__approve"},
		{"E5/then/E51", "│   │   └── E51  slack__post_message"},
		{"E5/else", "│   └─ƒ else  plan__request_changes"},
		{"E6", "├─∑ ▾ E6  reduce"},
		{"E6/do.*", "│   └── do  builtin__reshape"},
		{"E7", "├─? E7  ask"},
		{"output", "└── output  finish"},
	}
	rows := m.Rows()
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(rows), len(want))
	}
	d := m.d
	for i, w := range want {
		r := rows[i]
		drawn := strings.TrimRight(ansi.Strip(m.renderRow(d, r, 58, m.rowStyles(false))), " ")[2:] // past the gutter
		if r.Path != w.path || drawn != w.drawn {
			t.Errorf("row %d: %q %q, want %q %q", i, r.Path, drawn, w.path, w.drawn)
		}
		if r.Index != i {
			t.Errorf("row %d has index %d", i, r.Index)
		}
	}
}

// TestProblemMarkers checks problems land on their rows, counted flush
// right, duplicate ids told apart by line.
func TestProblemMarkers(t *testing.T) {
	m := newTree(load(t, "../testdata/triage.yaml"))
	counts := map[int]int{}
	for _, r := range m.Rows() {
		if n := len(r.Problems); n > 0 {
			counts[r.Line] = n
			drawn := strings.TrimRight(ansi.Strip(m.renderRow(m.d, r, 58, m.rowStyles(false))), " ")
			if !strings.HasSuffix(drawn, "✗"+string(rune('0'+n))) || ansi.StringWidth(drawn) != 58 {
				t.Errorf("row %s: marker not flush right: %q", r.Path, drawn)
			}
		}
	}
	want := map[int]int{5: 1, 21: 1, 27: 1, 34: 2, 45: 2, 52: 1}
	for line, n := range want {
		if counts[line] != n {
			t.Errorf("line %d: %d problems, want %d (all: %v)", line, counts[line], n, counts)
		}
	}
}

func TestGlyph(t *testing.T) {
	cases := map[string]string{
		"decide": "⑂", "map": "⟳", "reduce": "∑", "agent": "✻", "filter": "▽", "ask": "?", "exit": "⎋",
		"plan__triage": "ƒ", "github__get_pr": "", "builtin__infer": "",
	}
	for tool, want := range cases {
		if got := Glyph(tool); got != want {
			t.Errorf("Glyph(%q) = %q, want %q", tool, got, want)
		}
	}
}

// TestScrollKeepsSelection checks the wheel carries the selection along.
func TestScrollKeepsSelection(t *testing.T) {
	m := newTree(load(t, "../testdata/pr_review.yaml"))
	m.SetSize(40, 7) // five rows in view
	m.Scroll(3)
	if m.Offset() != 3 || m.Selected().Index != 3 {
		t.Errorf("offset %d selection %d, want 3 3", m.Offset(), m.Selected().Index)
	}
	m.Scroll(100)
	if m.Offset() != len(m.Rows())-5 {
		t.Errorf("offset %d, want %d", m.Offset(), len(m.Rows())-5)
	}
	m.Scroll(-100)
	if m.Offset() != 0 || m.Selected().Index != 4 {
		t.Errorf("offset %d selection %d, want 0 4", m.Offset(), m.Selected().Index)
	}
}

// TestFolding: h folds a control step's rows away and marks it ▸, l and
// space open it again, h on a row under it goes to it; a path selected
// under a fold opens the fold.
func TestFolding(t *testing.T) {
	m := newTree(load(t, "../testdata/pr_review.yaml"))
	press := func(k string) { m, _ = m.Update(keyPress(k)) }
	m.SelectPath("E5")
	press("h")
	if !m.Folded("E5") || m.d.count() != len(m.Rows())-4 {
		t.Fatalf("h on E5: folded %v, %d rows shown of %d", m.Folded("E5"), m.d.count(), len(m.Rows()))
	}
	if v := ansi.Strip(m.View()); !strings.Contains(v, "├─⑂ ▸ E5  decide") || strings.Contains(v, "then  2 steps") {
		t.Errorf("the folded step is not marked, or its rows show:\n%s", v)
	}
	press("j")
	if m.Selected().Path != "E6" {
		t.Errorf("j from the folded E5 selects %q, want E6", m.Selected().Path)
	}
	press("k")
	press("space")
	if m.Folded("E5") || m.d.count() != len(m.Rows()) {
		t.Errorf("space did not unfold E5")
	}
	press("l")
	if m.Selected().Path != "E5/then" {
		t.Errorf("l on an open row selects %q, want its first child", m.Selected().Path)
	}
	press("h")
	press("h")
	if m.Selected().Path != "E5" || !m.Folded("E5/then") {
		t.Errorf("h on the folded head goes to %q (head folded %v), want E5", m.Selected().Path, m.Folded("E5/then"))
	}
	press("left")
	if !m.SelectPath("E5/then/E51") || m.Folded("E5") || m.Folded("E5/then") || m.Selected().Path != "E5/then/E51" {
		t.Errorf("selecting a row under folds does not open them: selected %q", m.Selected().Path)
	}
}

// TestNoPlan checks a file that does not load still has its root row.
func TestNoPlan(t *testing.T) {
	m := newTree(load(t, "../testdata/broken.yaml"))
	if len(m.Rows()) != 1 || len(m.Selected().Problems) != 1 {
		t.Fatalf("rows %+v", m.Rows())
	}
	if v := ansi.Strip(m.View()); !strings.Contains(v, "does not load") {
		t.Errorf("view does not say the file does not load:\n%s", v)
	}
}

// keyPress is the key press of a letter or of a named key.
func keyPress(k string) tea.KeyPressMsg {
	switch k {
	case "space":
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	case "left":
		return tea.KeyPressMsg{Code: tea.KeyLeft}
	}
	return tea.KeyPressMsg{Code: rune(k[0]), Text: k}
}
