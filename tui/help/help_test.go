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

// TestListsEveryKey checks the overlay lists every binding of the keymap,
// at any size, in as many columns as fit, scrolling through them where the
// window is too short to show them all.
func TestListsEveryKey(t *testing.T) {
	keys := common.DefaultKeyMap()
	for _, size := range [][2]int{{80, 24}, {200, 60}, {60, 40}} {
		m := New(common.New(common.NewTheme(true, false), keys), "/var/log/stepwise.log")
		m.SetSize(size[0], size[1])
		view := ansi.Strip(m.View())
		// Scroll to the end: a view that no longer changes is the last.
		seen := view
		for last := view; ; {
			m.Scroll(1)
			next := ansi.Strip(m.View())
			if next == last {
				break
			}
			seen, last = seen+next, next
		}
		for _, g := range keys.Groups() {
			for _, b := range g.Bindings {
				if !strings.Contains(seen, b.Help().Key) || !keys.InTable(g) && !strings.Contains(seen, b.Help().Desc) {
					t.Errorf("%dx%d: %q %q missing:\n%s", size[0], size[1], b.Help().Key, b.Help().Desc, seen)
				}
			}
		}
		// The run and authoring keys are in the table of keys and
		// commands, each beside the command that does the same.
		for _, r := range keys.Table() {
			want := common.Wrap(r.Does, tableWidth, "")
			if r.Usage != "" {
				want = append(want, ":"+r.Usage)
			}
			for _, w := range want {
				if !strings.Contains(seen, w) {
					t.Errorf("%dx%d: the table's %q misses %q:\n%s", size[0], size[1], r.Usage+r.Key, w, seen)
				}
			}
		}
		if !strings.Contains(seen, "/var/log/stepwise.log") {
			t.Errorf("%dx%d: the log file is not said", size[0], size[1])
		}
		lines := strings.Split(view, "\n")
		if len(lines) > size[1] {
			t.Errorf("%dx%d: %d lines", size[0], size[1], len(lines))
		}
		for _, l := range lines {
			if ansi.StringWidth(l) > size[0] {
				t.Errorf("%dx%d: line too wide: %q", size[0], size[1], l)
			}
		}
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
