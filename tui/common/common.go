// Package common is the context every TUI component shares: its size, the
// theme and the keymap, plus the few drawing helpers that keep every pane
// inside its box. It is the soft-serve common.Common shape: each component
// embeds a Common holding its own size and pointers to the shared theme and
// keymap, so a theme change (the terminal reporting a light background)
// reaches every pane at once.
package common

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
