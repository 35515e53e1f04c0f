// Package common is the context every TUI component shares: its size, the
// theme and the keymap, plus the few drawing helpers that keep every pane
// inside its box. It is the soft-serve common.Common shape: each component
// embeds a Common holding its own size and pointers to the shared theme and
// keymap, so a theme change (the terminal reporting a light background)
// reaches every pane at once.
package common

import (
	"github.com/stepwise-dev/stepwise/plans"
)

// Document is one plan file as the workbench shows it: the loaded plan and
// the report of checking it. Plan is nil when the file does not parse; the
// report then says why.
type Document struct {
	// File is the path as the workbench shows it; Path is where the file
	// is, for reading it again and for the run store (empty for a document
	// that has no file of its own).
	File   string
	Path   string
	Plan   *plans.Plan
	Report plans.Report
}

// Name is how the workbench names the document: the plan identifier, or the
// file when there is no identifier to show.
func (d Document) Name() string {
	if d.Plan != nil && d.Plan.Identifier.Value != "" {
		return d.Plan.Identifier.Value
	}
	return d.File
}

// Common is the shared context of a component: the size of the box it draws
// in, the theme and the keymap.
type Common struct {
	Width, Height int
	Theme         *Theme
	Keys          *KeyMap
}

// New returns a context with no size yet.
func New(theme *Theme, keys *KeyMap) Common {
	return Common{Theme: theme, Keys: keys}
}

// SetSize records the size of the component's box.
func (c *Common) SetSize(width, height int) {
	c.Width, c.Height = max(width, 0), max(height, 0)
}
