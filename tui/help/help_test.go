package help

import (
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
		seen := view
		for range 100 {
			m.Scroll(1)
			seen += ansi.Strip(m.View())
		}
		for _, g := range keys.Groups() {
			for _, b := range g.Bindings {
				if !strings.Contains(seen, b.Help().Key) || !strings.Contains(seen, b.Help().Desc) {
					t.Errorf("%dx%d: %q %q missing:\n%s", size[0], size[1], b.Help().Key, b.Help().Desc, seen)
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
