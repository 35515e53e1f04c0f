package help

import (
	"fmt"
	"os"
	"path/filepath"
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
		if n, _ := m.columns(); n != size.columns {
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
		_, width := m.columns()
		var text []string
		for _, l := range m.lines(width) {
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
	if !strings.Contains(ansi.Strip(top), "Tree, lists and panels") {
		t.Errorf("the first page does not start with the tree's keys:\n%s", ansi.Strip(top))
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
