package common

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// Component is a part of the workbench that the root routes messages to
// and lays out: a page (the plan, the run) or an overlay (a panel, a form,
// an editor, the help). Components are pointers: the text fields some of
// them hold are kilobytes, and the root model is copied on every message,
// so Update changes the component in place and returns it.
type Component interface {
	// Update handles a message: a key, a click or wheel turn at
	// coordinates relative to the component's box, or one of the
	// messages its own commands send.
	Update(tea.Msg) (Component, tea.Cmd)
	// View draws the component at exactly its size.
	View() string
	// SetSize gives the component its box.
	SetSize(width, height int)
	// ShortHelp is the keys the footer shows while the component has the
	// keys; nil leaves the footer to what is under it.
	ShortHelp() []key.Binding
}

// CloseOverlay is the message an overlay sends to be taken off the
// screen: the root takes Overlay off its stack, wherever it stands, so
// that a close arriving after another overlay was pushed closes the right
// one. Then, when set, is what the overlay answered (a value, a choice):
// the root takes it right after the close, in the same update, so that
// what the answer opens (the next stop's prompt, the same overlay again)
// is never taken off by a close that arrived after it.
type CloseOverlay struct {
	Overlay Component
	Then    tea.Msg
}

// Close is the command an overlay returns to close itself.
func Close(overlay Component) tea.Cmd {
	return func() tea.Msg { return CloseOverlay{Overlay: overlay} }
}

// CloseWith is the command an overlay returns to close itself with an
// answer.
func CloseWith(overlay Component, answer tea.Msg) tea.Cmd {
	return func() tea.Msg { return CloseOverlay{Overlay: overlay, Then: answer} }
}

// Send is a command that delivers msg as it is.
func Send(msg tea.Msg) tea.Cmd { return func() tea.Msg { return msg } }

// Focusable is whether a pane has the keys. Panes embed it, so that each
// draws its focused border and selection the same way and the page that
// holds them moves the focus with the same three methods. (It cannot be
// called Focus: the embedded field would hide the method of that name.)
type Focusable struct{ focused bool }

// Focus gives the pane the keys.
func (f *Focusable) Focus() { f.focused = true }

// Blur takes the keys from the pane.
func (f *Focusable) Blur() { f.focused = false }

// Focused reports whether the pane has the keys.
func (f Focusable) Focused() bool { return f.focused }

// WheelStep is how many lines one notch of the mouse wheel scrolls.
const WheelStep = 3

// WheelDelta is how many lines a turn of the wheel scrolls: up is
// negative; a sideways turn scrolls nothing.
func WheelDelta(msg tea.MouseWheelMsg) int {
	switch msg.Button {
	case tea.MouseWheelUp:
		return -WheelStep
	case tea.MouseWheelDown:
		return WheelStep
	}
	return 0
}

// Inside reports whether the pointer is within a box of width by height
// at the origin: the root hands a component the mouse at coordinates
// relative to the component's box.
func Inside(ms tea.Mouse, width, height int) bool {
	return ms.X >= 0 && ms.X < width && ms.Y >= 0 && ms.Y < height
}
