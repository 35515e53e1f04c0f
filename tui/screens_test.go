package tui

import (
	"context"
	"io"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest/v2"
	"github.com/stepwise-dev/stepwise/debugger/workspace"
)

// Keys as the terminal sends them.
var (
	keyDown     = tea.KeyPressMsg{Code: 'j', Text: "j"}
	keyUp       = tea.KeyPressMsg{Code: 'k', Text: "k"}
	keyBottom   = tea.KeyPressMsg{Code: 'g', Mod: tea.ModShift, Text: "G"}
	keyHome     = tea.KeyPressMsg{Code: tea.KeyHome}
	keyEnd      = tea.KeyPressMsg{Code: tea.KeyEnd}
	keyArrowDn  = tea.KeyPressMsg{Code: tea.KeyDown}
	keyArrowUp  = tea.KeyPressMsg{Code: tea.KeyUp}
	keyPgDown   = tea.KeyPressMsg{Code: tea.KeyPgDown}
	keyPgUp     = tea.KeyPressMsg{Code: tea.KeyPgUp}
	keyTab      = tea.KeyPressMsg{Code: tea.KeyTab}
	keyShiftTab = tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	keyEnter    = tea.KeyPressMsg{Code: tea.KeyEnter}
	keyEsc      = tea.KeyPressMsg{Code: tea.KeyEscape}
	keyHelp     = tea.KeyPressMsg{Code: '?', Text: "?"}
	keyNextPlan = tea.KeyPressMsg{Code: ']', Text: "]"}
	keyPrevPlan = tea.KeyPressMsg{Code: '[', Text: "["}
	keyQuit     = tea.KeyPressMsg{Code: 'q', Text: "q"}
	keyCtrlC    = tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
)

func repeat(msg tea.Msg, n int) []tea.Msg {
	out := make([]tea.Msg, n)
	for i := range out {
		out[i] = msg
	}
	return out
}

func seq(parts ...any) []tea.Msg {
	var out []tea.Msg
	for _, p := range parts {
		switch p := p.(type) {
		case []tea.Msg:
			out = append(out, p...)
		case tea.Msg:
			out = append(out, p)
		}
	}
	return out
}

// TestScreens runs the workbench as a program (teatest) through a sequence
// of messages, quits it, and pins the final screen. The screen is taken
// from the final model's view with ANSI stripped, so the goldens hold what
// a user reads and do not depend on the colour profile; the program is also
// forced to the ASCII profile so its own output is the same everywhere.
func TestScreens(t *testing.T) {
	demo := func(t *testing.T) Options {
		return Options{Title: "demo project", Documents: []workspace.Document{
			loadDocument(t, prReviewFile),
			loadDocument(t, triageFile),
			loadDocument(t, largeFile),
			loadDocument(t, brokenFile),
		}}
	}
	cases := []struct {
		name string
		w, h int
		msgs []tea.Msg
	}{
		{"main_80x24", 80, 24, repeat(keyDown, 6)},
		{"main_200x60", 200, 60, repeat(keyDown, 6)},
		{"resize_80x24_to_200x60", 80, 24, seq(repeat(keyDown, 6), tea.WindowSizeMsg{Width: 200, Height: 60})},
		{"resize_200x60_to_80x24", 200, 60, seq(repeat(keyDown, 13), tea.WindowSizeMsg{Width: 80, Height: 24})},
		{"problems_jump_80x24", 80, 24, seq(keyNextPlan, keyTab, keyTab, keyDown, keyDown, keyDown, keyEnter)},
		{"problems_200x60", 200, 60, seq(keyNextPlan, keyDown)},
		{"large_scrolled_80x24", 80, 24, seq(keyNextPlan, keyNextPlan, keyPgDown, keyPgDown, repeat(keyDown, 5))},
		{"large_bottom_200x60", 200, 60, seq(keyPrevPlan, keyPrevPlan, keyBottom, keyUp)},
		{"broken_80x24", 80, 24, seq(keyPrevPlan)},
		{"help_80x24", 80, 24, seq(keyHelp)},
		{"help_200x60", 200, 60, seq(keyHelp)},
		{"help_160x48", 160, 48, seq(keyHelp)},
		{"help_full_80x24", 80, 24, seq(keyHelp, keyPgDown)},
		{"detail_scrolled_80x24", 80, 24, seq(repeat(keyDown, 6), keyTab, keyPgDown, keyDown)},
		{"narrow_50x30", 50, 30, seq(repeat(keyDown, 8))},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tm := teatest.NewTestModel(t, New(context.Background(), demo(t)),
				teatest.WithInitialTermSize(tc.w, tc.h),
				teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)),
			)
			for _, msg := range tc.msgs {
				tm.Send(msg)
			}
			tm.Send(keyCtrlC)
			final := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second))
			// Drain the program's output so nothing blocks on it.
			_, _ = io.ReadAll(tm.FinalOutput(t))
			golden.RequireEqual(t, ansi.Strip(final.View().Content)+"\n")
		})
	}
}
