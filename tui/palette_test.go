package tui

import (
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/stepwise-dev/stepwise/tui/common"
)

var (
	overlayPalette overlay = func(p *panels) common.Component { return &p.palette }
	keyPalette             = tea.KeyPressMsg{Code: 'k', Mod: tea.ModCtrl}
)

// TestPalette drives the command palette through the workbench: ctrl+k
// opens it over every key and command, typing filters, and enter does
// what the entry chosen stands for: a key's entry what the key does, a
// command's the command, or the : line with the verb typed when the
// command needs arguments.
func TestPalette(t *testing.T) {
	runCases(t, []benchCase{
		{"ctrl+k opens it over every key and command", nil, seq(keyPalette), func(t *testing.T, b *bench) {
			wantOverlay(t, b, overlayPalette)
			wantScreen(t, b, "Palette", "> ", "move down")
			if got, all := len(b.m.panels.palette.Shown()), len(b.m.panels.palette.Items()); got != all || all < 80 {
				t.Errorf("%d of %d entries shown", got, all)
			}
			b.press(keyEsc)
			wantOverlay(t, b, overlayNone)
		}},
		{"typing filters; enter on a key's entry does what the key does", func(b *bench) { b.toDoc(docSimple) },
			seq(keyPalette, typeText("run the plan")), func(t *testing.T, b *bench) {
				wantScreen(t, b, "run the plan", ":run [JSON]")
				if it, _ := b.m.panels.palette.Selected(); it.Key != "r" || it.Verb != "" {
					t.Fatalf("chosen %+v, want the key r", it)
				}
				wantNoScreen(t, b, "move down")
				b.press(keyEnter)
				wantOverlay(t, b, overlayNone)
				wantEnded(t, b, "ok")
			}},
		{"a fuzzy filter finds a key: B opens the breakpoints panel", nil, seq(keyPalette, typeText("brkpanel")), func(t *testing.T, b *bench) {
			if it, ok := b.m.panels.palette.Selected(); !ok || it.Key != "B" {
				t.Fatalf("chosen %+v, want the breakpoints panel's key", it)
			}
			b.press(keyEnter)
			wantOverlay(t, b, overlayBreakpoints)
		}},
		{"a command that needs arguments opens the : line with its verb", nil, seq(keyPalette, typeText("gate"), keyEnter), func(t *testing.T, b *bench) {
			wantOverlay(t, b, overlayNone)
			if !b.m.cmdline.Active() || b.m.cmdline.Value() != "gate " {
				t.Fatalf("command line active %v, value %q", b.m.cmdline.Active(), b.m.cmdline.Value())
			}
			b.press(typeText("E1/do.*"), keyEnter)
			wantNotice(t, b, "the next runs hold the calls of E1/do.* for approval")
		}},
		{"a command with no arguments runs, and its answer is in the output pane", func(b *bench) { b.debugTo(docFlow, "E1/do.0") },
			seq(keyPalette, typeText(":stack"), keyEnter), func(t *testing.T, b *bench) {
				wantNotice(t, b, " ← ")
				b.press(keyOutput)
				wantScreen(t, b, "› :stack", "0  step   E1/do.0")
			}},
		{"arrows choose; nothing matching says so", nil, seq(keyPalette, typeText("zzzzqq")), func(t *testing.T, b *bench) {
			wantScreen(t, b, "nothing matches")
			b.press(repeat(tea.KeyPressMsg{Code: tea.KeyBackspace}, 6)...)
			b.press(keyArrowDn, keyArrowDn)
			if it, _ := b.m.panels.palette.Selected(); it.Name != "jump to the top" {
				t.Errorf("chosen %q, want the third entry", it.Name)
			}
		}},
	})
}
