package help

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/stepwise-dev/stepwise/tui/common"
)

// TestListsEveryKey checks the overlay lists every binding of the keymap
// and every row of the table of keys and commands, nothing cut, at any
// size: in as many columns as fit (two at 80 columns), a page at a time
// where the window is too short to show them all, inside the window.
func TestListsEveryKey(t *testing.T) {
	keys := common.DefaultKeyMap()
	for _, size := range []struct{ w, h, columns int }{{80, 24, 2}, {200, 60, 5}, {60, 40, 1}, {120, 40, 3}} {
		m := New(common.New(common.NewTheme(true, false), keys), "/var/log/stepwise.log")
		m.SetSize(size.w, size.h)
		m.Open()
		if n, _ := m.columns(minColumn, maxColumn, gap); n != size.columns {
			t.Errorf("%dx%d: %d columns, want %d", size.w, size.h, n, size.columns)
		}
		// Page through: every line of the columns shows on some page,
		// whole.
		var seen strings.Builder
		for last := ""; ; {
			view := ansi.Strip(m.View())
			if view == last {
				break
			}
			seen.WriteString(view)
			last = view
			lines := strings.Split(view, "\n")
			if len(lines) > size.h {
				t.Errorf("%dx%d: %d lines", size.w, size.h, len(lines))
			}
			for _, l := range lines {
				if ansi.StringWidth(l) > size.w {
					t.Errorf("%dx%d: line too wide: %q", size.w, size.h, l)
				}
				if strings.Contains(l, common.Ellipsis) {
					t.Errorf("%dx%d: a line is cut: %q", size.w, size.h, l)
				}
			}
			m.Scroll(m.band())
		}
		_, width := m.columns(minColumn, maxColumn, gap)
		var text []string
		for _, l := range lines(m.blocks(width)) {
			l = strings.TrimSpace(ansi.Strip(l))
			if !strings.Contains(seen.String(), l) {
				t.Errorf("%dx%d: %q never shows", size.w, size.h, l)
			}
			text = append(text, strings.Fields(l)...)
		}
		// The columns' text, wrapped lines joined again, says every key
		// and what it does, and every command of the table.
		all := strings.Join(text, " ")
		for _, g := range keys.Groups() {
			for _, b := range g.Bindings {
				if !strings.Contains(all, b.Help().Key) || !keys.InTable(g) && !strings.Contains(all, b.Help().Desc) {
					t.Errorf("%dx%d: %q %q missing:\n%s", size.w, size.h, b.Help().Key, b.Help().Desc, all)
				}
			}
		}
		for _, r := range keys.Table() {
			for _, w := range []string{r.Does, ":" + r.Usage} {
				if w != ":" && !strings.Contains(all, strings.Join(strings.Fields(w), " ")) {
					t.Errorf("%dx%d: the table's %q misses %q", size.w, size.h, r.Usage+r.Key, w)
				}
			}
		}
		if !strings.Contains(seen.String(), "/var/log/stepwise.log") {
			t.Errorf("%dx%d: the log file is not said", size.w, size.h)
		}
	}
}

// TestCheatSheetFits checks the first page is a cheat sheet that fits
// 80x24 at once: every key of the keymap, with one word each, grouped by
// the pane that answers it, nothing cut and nothing scrolled out of sight.
func TestCheatSheetFits(t *testing.T) {
	keys := common.DefaultKeyMap()
	m := New(common.New(common.NewTheme(true, false), keys), "/home/someone/.local/share/stepwise/workbench.log")
	m.SetSize(80, 24)
	m.Open()
	view := ansi.Strip(m.View())
	lines := strings.Split(view, "\n")
	if len(lines) > 24 {
		t.Errorf("%d lines", len(lines))
	}
	for _, l := range lines {
		if ansi.StringWidth(l) > 80 || strings.Contains(l, common.Ellipsis) {
			t.Errorf("a line is cut: %q", l)
		}
	}
	covered := map[string]bool{}
	for _, g := range keys.CheatSheet() {
		if !strings.Contains(view, g.Title) {
			t.Errorf("the group %q does not show", g.Title)
		}
		for _, e := range g.Entries {
			if len(strings.Fields(e.Word)) != 1 {
				t.Errorf("%s: %q is not one word", e.Keys, e.Word)
			}
			if !regexp.MustCompile(`(^|\s)` + regexp.QuoteMeta(e.Keys) + `\s+` + regexp.QuoteMeta(e.Word) + `(\s|$)`).MatchString(view) {
				t.Errorf("%q %q does not show on the first page:\n%s", e.Keys, e.Word, view)
			}
			for _, b := range e.Covers {
				covered[b.Help().Key+" "+b.Help().Desc] = true
			}
		}
	}
	for _, g := range keys.Groups() {
		for _, b := range g.Bindings {
			if !covered[b.Help().Key+" "+b.Help().Desc] {
				t.Errorf("the cheat sheet leaves out %q (%s)", b.Help().Key, b.Help().Desc)
			}
		}
	}
	// Page down leaves the cheat sheet for the keys at length.
	m.Scroll(m.band())
	if !strings.Contains(ansi.Strip(m.View()), "Tree, lists and panels") {
		t.Errorf("the second page does not start with the tree's keys at length:\n%s", ansi.Strip(m.View()))
	}
}

// TestNoEntrySplitAcrossPages checks a key whose description wraps, and a
// command with what it does, show whole on one page at every size.
func TestNoEntrySplitAcrossPages(t *testing.T) {
	for _, size := range []struct{ w, h int }{{80, 24}, {60, 16}, {100, 20}, {120, 30}, {60, 40}} {
		m := New(common.New(common.NewTheme(true, false), common.DefaultKeyMap()), "")
		m.SetSize(size.w, size.h)
		m.Open()
		var pages []string
		for last := ""; ; {
			view := ansi.Strip(m.View())
			if view == last {
				break
			}
			pages, last = append(pages, view), view
			m.Scroll(m.band())
		}
		_, width := m.columns(minColumn, maxColumn, gap)
		for _, b := range m.blocks(width) {
			if len(b.lines) < 2 {
				continue
			}
			whole := false
			for _, p := range pages {
				all := true
				for _, l := range b.lines {
					all = all && strings.Contains(p, strings.TrimSpace(ansi.Strip(l)))
				}
				whole = whole || all
			}
			if !whole {
				t.Errorf("%dx%d: %q is split across pages", size.w, size.h, ansi.Strip(strings.Join(b.lines, " / ")))
			}
		}
	}
}

// TestOpensAtTheTop checks the overlay opens on its first page however
// far it was scrolled when it closed.
func TestOpensAtTheTop(t *testing.T) {
	m := New(common.New(common.NewTheme(true, false), common.DefaultKeyMap()), "")
	m.SetSize(80, 24)
	m.Open()
	top := m.View()
	m.Scroll(1000)
	if m.View() == top {
		t.Fatal("the help does not scroll at 80x24; the test needs a smaller window")
	}
	m.Open()
	if m.View() != top {
		t.Errorf("the help opened at\n%s\nwant its top\n%s", ansi.Strip(m.View()), ansi.Strip(top))
	}
	if !strings.Contains(ansi.Strip(top), "Tree") || !strings.Contains(ansi.Strip(top), "Global") {
		t.Errorf("the first page is not the cheat sheet:\n%s", ansi.Strip(top))
	}
}

// readmeFile is the README the table of keys and commands is in.
var readmeFile = filepath.Join("..", "..", "README.md")

// The lines the README's table of keys and commands sits between.
const (
	tableStart = "<!-- The table of keys and commands: the keymap's Table, checked by TestReadmeTable in tui/help. -->"
	tableEnd   = "<!-- End of the table of keys and commands. -->"
)

// markdownTable renders the table of keys and commands as the README
// shows it.
func markdownTable(rows []common.TableRow) string {
	cell := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	code := func(s string) string {
		if s == "" {
			return ""
		}
		return "`" + cell(s) + "`"
	}
	var b strings.Builder
	b.WriteString("| Key | Command | Short | What it does |\n|---|---|---|---|\n")
	for _, r := range rows {
		short := make([]string, len(r.Aliases))
		for i, a := range r.Aliases {
			short[i] = code(a)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", code(r.Key), code(r.Usage), strings.Join(short, " "), cell(r.Does))
	}
	return b.String()
}

// TestReadmeTable checks that the README's table of keys and commands is
// the one the help overlay shows: the keymap's Table, every command of
// stepwise debug beside the key that does the same.
func TestReadmeTable(t *testing.T) {
	raw, err := os.ReadFile(readmeFile)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	want := markdownTable(common.DefaultKeyMap().Table())
	_, rest, ok1 := strings.Cut(readme, tableStart+"\n")
	got, _, ok2 := strings.Cut(rest, tableEnd)
	if !ok1 || !ok2 {
		t.Fatalf("README.md has no table of keys and commands; put these lines in its Debugging section:\n%s\n%s%s", tableStart, want, tableEnd)
	}
	if got != want {
		t.Errorf("README.md's table of keys and commands is not the keymap's; replace the lines between\n%s\nand\n%s\nwith:\n%s", tableStart, tableEnd, want)
	}
}
