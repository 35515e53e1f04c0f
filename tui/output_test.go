package tui

import (
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/stepwise-dev/stepwise/engine"
	"github.com/stepwise-dev/stepwise/tui/common"
)

var (
	overlayOutput overlay = func(p *panels) common.Component { return &p.output }
	keyOutput             = tea.KeyPressMsg{Code: 'o', Mod: tea.ModShift, Text: "O"}
)

// TestOutputPane checks the answers of the : commands that read a held
// run, which the status line can show one line of, in the output pane
// whole, at 80x24 and on both pages: the pane opens by itself for an
// answer the status line cuts, points to it for any other notice cut, and
// keeps the history of the lines typed.
func TestOutputPane(t *testing.T) {
	cases := []struct {
		name  string
		w, h  int
		setup func(b *bench)
		check func(t *testing.T, b *bench)
	}{
		{"stack opens the pane at 80x24, a frame a line", 80, 24, func(b *bench) { b.debugTo(docFlow, "E1/do.0") }, func(t *testing.T, b *bench) {
			b.press(command("stack")...)
			wantOverlay(t, b, overlayOutput)
			wantScreen(t, b, "Output", "› :stack", "0  step   E1/do.0", "1  item   E1/do.0", "2  step   E1", "3  plan")
			// The status line keeps the short form.
			wantNotice(t, b, " ← ")
		}},
		{"print pretty-prints a value, the status line has it on one line", 80, 24, func(b *bench) { b.debugTo(docFlow, "E1/do.0") }, func(t *testing.T, b *bench) {
			b.press(command("print E0")...)
			wantNotice(t, b, `E0 = {"items":["a","b","c"],"topic":"bugs"}`)
			// Cut on the status line at 80 columns: the pane opened.
			wantOverlay(t, b, overlayOutput)
			wantScreen(t, b, `      "c"`, `    "topic": "bugs"`)
			b.press(keyPgUp)
			wantScreen(t, b, "› :print E0", `  E0 = {`, `    "items": [`)
		}},
		{"threads and where list a thread a line", 200, 60, func(b *bench) { b.debugTo(docFlow, "E1/do.0") }, func(t *testing.T, b *bench) {
			b.press(command("threads")...)
			b.press(command("where")...)
			// A wide status line shows them whole: the pane stays shut.
			wantOverlay(t, b, overlayNone)
			b.press(keyOutput)
			wantScreen(t, b, "› :threads", "  2 live, 1 held", "  ● main at E1 (step)", "  ▶ E1/do.0 at E1/do.0 (step)", "› :where", "  held at E1/do.0 (step)")
		}},
		{"a cut notice points to the pane; the plan page has it too", 80, 24, nil, func(t *testing.T, b *bench) {
			b.press(command("thread E1/do.7")...)
			wantNotice(t, b, "thread chooses among the threads of a held run")
			wantScreen(t, b, "(O shows all)")
			b.press(keyOutput)
			wantOverlay(t, b, overlayOutput)
			wantScreen(t, b, "› :thread E1/do.7", "(z pauses", "one going on)")
			wantNoScreen(t, b, "(O shows all)")
			b.press(keyOutput)
			wantOverlay(t, b, overlayNone)
		}},
		{"a cut notice leaves the run's figures on the status line", 80, 24, func(b *bench) { b.runToEnd(docFlow) }, func(t *testing.T, b *bench) {
			b.press(command("thread E1/do.7")...)
			wantNotice(t, b, "thread chooses among the threads of a held run")
			wantScreen(t, b, "✓ ok  ·  thread chooses", "(O shows all)", "3 calls · 290 tok · $0.0003")
		}},
		{"the pane scrolls, and the run's keys and : work with it open", 80, 24, func(b *bench) { b.debugTo(docFlow, "E1/do.0") }, func(t *testing.T, b *bench) {
			for range 3 {
				b.press(command("print E0")...)
			}
			// Followed to the end: the first command has scrolled away.
			wantOverlay(t, b, overlayOutput)
			wantNoScreen(t, b, "› :break E1/do.0")
			b.press(keyHome)
			wantScreen(t, b, "› :break E1/do.0", "breakpoint 1 at E1/do.0")
			b.press(keyNext)
			wantHeld(t, b, "E1/do.0", engine.StopResult, "breakpoint 1")
			wantOverlay(t, b, overlayOutput)
			b.press(command("print stop.path")...)
			wantScreen(t, b, `stop.path = "E1/do.0"`)
			b.press(keyEsc)
			wantOverlay(t, b, overlayNone)
		}},
		{"breakpoints and watches are listed whole", 80, 24, nil, func(t *testing.T, b *bench) {
			b.press(command("break E1/do.* result")...)
			b.press(command("break E2")...)
			b.press(command("breakpoints")...)
			wantNotice(t, b, "2 breakpoints: 1 E1/do.* result, 2 E2")
			b.press(command("watch E0.topic")...)
			b.press(command("watch input.limit")...)
			b.press(command("watches")...)
			b.press(keyOutput)
			wantScreen(t, b, "  ● 2 E2 (0 hits)", "› :watches", "  1 E0.topic", "  2 input.limit")
			b.press(keyPgUp)
			wantScreen(t, b, "› :breakpoints", "  ● 1 E1/do.* result (0 hits)")
		}},
		{"a : typed on a refused line starts a fresh one; up recalls the refused one", 120, 40, nil, func(t *testing.T, b *bench) {
			b.press(command("cond 1 {{item}} eq")...)
			if !b.m.cmdline.Active() || b.m.cmdline.Err() == nil {
				t.Fatal("the refused line did not stay open with its error")
			}
			b.press(command("break E2")...)
			wantNotice(t, b, "breakpoint 1 at E2")
			if b.m.cmdline.Active() {
				t.Fatalf("the line stayed open with %q", b.m.cmdline.Value())
			}
			b.press(keyColon, keyArrowUp, keyArrowUp)
			if got := b.m.cmdline.Value(); got != "cond 1 {{item}} eq" {
				t.Errorf("up twice recalls %q, want the refused line", got)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := newBench(t, tc.w, tc.h)
			if tc.setup != nil {
				tc.setup(b)
			}
			tc.check(t, b)
			checkScreen(t, b.m, b.w, b.h)
		})
	}
}

// TestNoticeExpires: a notice leaves the status line after a while (the
// output pane keeps it); a newer one stays when the old one's time is up.
func TestNoticeExpires(t *testing.T) {
	b := newBench(t, 120, 40)
	b.press(command("watch E0.topic")...)
	first := b.m.notice.seq
	b.press(command("watch input.limit")...)
	b.update(noticeExpired{first})
	wantNotice(t, b, "watch 2")
	b.update(noticeExpired{b.m.notice.seq})
	if b.m.notice.text != "" {
		t.Errorf("the notice %q outlived its time", b.m.notice.text)
	}
}
