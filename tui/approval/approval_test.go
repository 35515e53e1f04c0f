package approval

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/stepwise-dev/stepwise/debugger"
	"github.com/stepwise-dev/stepwise/tui/common"
)

// words is the prompt's text inside its frame, every line's words joined
// by one space, so that a wrapped text reads as one.
func words(view string) string {
	var out []string
	for _, l := range strings.Split(ansi.Strip(view), "\n") {
		out = append(out, strings.Fields(strings.Trim(l, "┃│╭╮╰╯━─┏┓┗┛ "))...)
	}
	return strings.Join(out, " ")
}

// TestArgumentsWhole: arguments wider than the prompt wrap, and more than
// it holds scroll, so that every word of the call is seen before it is
// approved.
func TestArgumentsWhole(t *testing.T) {
	body := "Triage for CHK-101: sev1, owned by payments-gateway. The checkout fails for every customer paying by card since the deploy of 14:02; the rollback is under way and the status page says so."
	m := New(common.New(common.NewTheme(true, false), common.DefaultKeyMap()))
	m.SetSize(76, 16)
	m.Open(&debugger.Snapshot{Tool: "tracker__add_comment", Path: "post/then/post_triage_notes", Input: map[string]any{"issue": "CHK-101", "body": body}})
	if got := words(m.View()); !strings.Contains(got, body) {
		t.Errorf("the arguments do not show whole:\n%s", m.View())
	}

	m.SetSize(76, 8)
	seen := words(m.View())
	if !strings.Contains(m.View(), "j/k scroll") {
		t.Errorf("a prompt too short for the call does not say it scrolls:\n%s", m.View())
	}
	for range 10 {
		m.Update(tea.KeyPressMsg{Code: 'j', Text: "j"})
		seen += " " + words(m.View())
	}
	for _, w := range strings.Fields(body) {
		if !strings.Contains(seen, w) {
			t.Errorf("scrolling never shows %q", w)
		}
	}
}
