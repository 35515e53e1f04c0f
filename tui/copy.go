package tui

import (
	"encoding/json"

	tea "charm.land/bubbletea/v2"
)

// copyValue puts the selected run row's value on the terminal's clipboard
// (OSC 52, through Bubble Tea, which works over ssh and in tmux): its
// result as indented JSON, or while it has none the reply streamed so far
// or its error.
func (m *model) copyValue() tea.Cmd {
	path := m.page.selectedPath()
	if !m.runShown() {
		m.notify(noticeError, "a plan's step has no value: "+m.Keys.Copy.Help().Key+" copies a run row's result, "+m.Keys.CopyPath.Help().Key+" the step's path")
		return nil
	}
	n, ok := m.runPage.run.tree.Node(path)
	if !ok {
		m.notify(noticeError, "no row selected")
		return nil
	}
	var text, what string
	switch {
	case n.Result != nil:
		b, err := json.MarshalIndent(n.Result, "", "  ")
		if err != nil {
			m.notify(noticeError, "the result of "+path+" is no JSON: "+err.Error())
			return nil
		}
		text, what = string(b), "result"
	case n.Error != "":
		text, what = n.Error, "error"
	case n.Reply != "":
		text, what = n.Reply, "reply"
	default:
		m.notify(noticeError, path+" has no value yet: "+m.Keys.CopyPath.Help().Key+" copies its path")
		return nil
	}
	m.notify(noticeInfo, "copied the "+what+" of "+path+" ("+itoa(len(text))+" bytes)")
	return tea.SetClipboard(text)
}

// copyPath puts the selected row's path on the clipboard, as breakpoints,
// goto and print take it.
func (m *model) copyPath() tea.Cmd {
	path := m.page.selectedPath()
	if path == "" {
		m.notify(noticeError, "the selected row has no path: select a step")
		return nil
	}
	m.notify(noticeInfo, "copied "+path)
	return tea.SetClipboard(path)
}
