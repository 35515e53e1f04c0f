// Package tui is the Stepwise workbench in the terminal. Its root model
// routes messages and lays out what is on screen, nothing more: the header
// with the plan tabs, one of two pages, the overlay on top of a stack, and
// the status line with the key hints or the command line.
//
// The plan page holds the open plans and shows one: its step tree, the
// detail of the selected step and the problems list. The run page shows
// the run on show: its live tree, the inspector and the threads held; it
// starts, drives and aborts runs, and opens, replays, forks and compares
// earlier ones, posting what the root must do (a notice, the page to
// show, an overlay to open) as messages the root routes. A
// page lays out its panes, routes keys to the focused one and the mouse to
// the one under the pointer. The overlays (help, the value editor, the
// inputs form, the tool catalog, the runs panel, the runs diff and the
// breakpoints panel) are pushed on a stack; the top one takes the keys and
// the mouse, and each closes itself with a message (common.CloseOverlay).
// Pages and overlays are common.Components, as crush builds its screens.
//
// Each pane and overlay lives in its own package, sharing the context of
// tui/common (size, theme, keymap), the way soft-serve and gh-dash are
// built. Every view is a pure function of the model's state, so screens can
// be pinned by golden tests.
package tui

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	tea "charm.land/bubbletea/v2"

	"github.com/stepwise-dev/stepwise/debugger/workspace"
	"github.com/stepwise-dev/stepwise/tui/common"
)

// Options says what the workbench opens.
type Options struct {
	// Title names what is open, in the header: "demo project", a directory.
	Title string
	// Documents are the plans to show, in tab order.
	Documents []workspace.Document
	// Workspace is the project the plans belong to, which runs, debugs,
	// reloads and records them; without one the workbench only shows
	// them.
	Workspace *workspace.Workspace
	// Log receives the workbench's own diagnostics; LogPath says where
	// they go, for the help overlay. Nil discards them.
	Log     *slog.Logger
	LogPath string
	// Notice is said on the status line as the workbench opens: where
	// the demo project is kept, say.
	Notice string
	// FollowPlanFiles makes the tabs follow the plan files on the plan
	// paths: a file added opens as a tab, one removed closes. A workbench
	// opened on one plan file shows that file only.
	FollowPlanFiles bool
}

// New returns the workbench as a Bubble Tea model. Colour follows NO_COLOR;
// the theme starts dark and turns light if the terminal reports a light
// background.
func New(ctx context.Context, opts Options) tea.Model {
	return newModel(ctx, opts, common.ColorEnabled(os.Getenv))
}

// Run runs the workbench on the terminal, in the alternate screen with mouse
// reporting, until the user quits or ctx is done.
func Run(ctx context.Context, opts Options) error {
	p := tea.NewProgram(New(ctx, opts), tea.WithContext(ctx))
	if _, err := p.Run(); err != nil {
		return fmt.Errorf("workbench: %w", err)
	}
	return nil
}
