package tui

import (
	"reflect"
	"runtime"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/stepwise-dev/stepwise/tui/live"
)

func fname(c tea.Cmd) string { return runtime.FuncForPC(reflect.ValueOf(c).Pointer()).Name() }

func TestZZNames(t *testing.T) {
	r := &run{feed: live.NewFeed()}
	t.Log(fname(r.waitEvents()), fname(r.tick()), fname(watch()))
	m := newTestModel()
	t.Log(fname(m.cmdline.Open()))
	b := tea.Batch(r.waitEvents(), r.tick())
	msg := b()
	for _, c := range msg.(tea.BatchMsg) {
		t.Log(fname(c))
	}
}
